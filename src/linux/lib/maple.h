// SPDX-License-Identifier: MIT
// The maple tree walker (maple.c; 6.1+).
#ifndef KP_LINUX_LIB_MAPLE_H
#define KP_LINUX_LIB_MAPLE_H

#include <kpeek/kpeek.h>

// One entry of the indexes [first, last]; an error ends the walk.
typedef struct kp_error *kp_lx_mt_fn(uint64_t first, uint64_t last, uint64_t entry, void *arg);
// Calls fn for every non-NULL entry of the maple tree at tree (struct
// maple_tree *), in index order. Bounded: 31 levels, and nodes by what
// max_entries entries can need (the caller's bound: map_count for VMAs).
struct kp_error *kp_lx_mt_walk(struct kp_kernel *kernel, uint64_t tree, uint64_t max_entries,
			       kp_lx_mt_fn *fn, void *arg);

#endif
