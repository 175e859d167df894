// SPDX-License-Identifier: MIT
// The kernel's doubly linked lists (list.c) and what every walker of kernel
// objects shares: bounds and Brent's cycle detector.
#ifndef KP_LINUX_LIB_LIST_H
#define KP_LINUX_LIB_LIST_H

#include <kpeek/kpeek.h>

// Bounds of the list walkers: no real kernel has this many tasks or
// modules; a list longer than this is corrupt or cyclic.
#define KP_LX_MAX_LIST (4u << 20)
#define KP_LX_MAX_TASKS (4u << 20)
#define KP_LX_MAX_MODULES 65536u

// Brent's cycle detector over a linked list: O(1) memory, finds a cycle that
// does not pass through the head within about twice its length.
struct kp_lx_loop {
	uint64_t saved;
	uint64_t power, steps;
};

static inline void kp_lx_loop_init(struct kp_lx_loop *l, uint64_t first)
{
	l->saved = first;
	l->power = 1;
	l->steps = 0;
}

// Call with each node address after the first; true if node was seen before.
static inline bool kp_lx_loop_step(struct kp_lx_loop *l, uint64_t node)
{
	if (node == l->saved)
		return true;
	if (++l->steps == l->power) {
		l->saved = node;
		l->power *= 2;
		l->steps = 0;
	}
	return false;
}

// kp_list_iter_create() with the list's name for messages ("task list").
struct kp_error *kp_lx_list_iter_create(struct kp_kernel *kernel, uint64_t head, unsigned flags,
					const char *what, struct kp_list_iter **ret);

#endif
