// SPDX-License-Identifier: MIT
// The red-black tree walker (rbtree.c).
#ifndef KP_LINUX_LIB_RBTREE_H
#define KP_LINUX_LIB_RBTREE_H

#include <kpeek/kpeek.h>

// One node (struct rb_node *); an error ends the walk.
typedef struct kp_error *kp_lx_rb_fn(uint64_t node, void *arg);
// Calls fn for every node of the tree at root (struct rb_root *), in order
// (leftmost first). Bounded: a red-black tree of n nodes is at most
// 2 log2(n + 1) deep, so 64 levels; more than max_nodes nodes is corrupt.
struct kp_error *kp_lx_rb_walk(struct kp_kernel *kernel, uint64_t root, uint64_t max_nodes,
			       kp_lx_rb_fn *fn, void *arg);

#endif
