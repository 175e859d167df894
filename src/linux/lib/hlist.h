// SPDX-License-Identifier: MIT
// Walker of the kernel's hlist and hlist_nulls chains (hlist.c).
#ifndef KP_LINUX_LIB_HLIST_H
#define KP_LINUX_LIB_HLIST_H

#include <kpeek/kpeek.h>

// One node (struct hlist_node * or hlist_nulls_node *); an error ends the walk.
typedef struct kp_error *kp_lx_hlist_fn(uint64_t node, void *arg);
// Calls fn for every node of the chain whose head is at head (its first
// pointer), following each node's next (its first member). The chain ends
// at NULL or, for hlist_nulls, at a "nulls" marker (an odd value). More
// than max nodes, or a cycle, is KP_ERR_LOOP naming what (a hash table).
struct kp_error *kp_lx_hlist_walk(struct kp_kernel *kernel, uint64_t head, uint64_t max,
				  const char *what, kp_lx_hlist_fn *fn, void *arg);

#endif
