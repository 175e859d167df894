// SPDX-License-Identifier: MIT
// Growing arrays: one helper instead of a hand-written doubling loop per
// array. The array is (void **ptr, size_t *cap) of elements of elem bytes.
#ifndef KP_UTIL_VEC_H
#define KP_UTIL_VEC_H

#include <stdbool.h>
#include <stddef.h>

// Makes room for at least need elements (capacity doubles from 16), checking
// every multiplication for overflow. False on out-of-memory or overflow; the
// array is unchanged then.
bool kp_vec_reserve(void **ptr, size_t *cap, size_t need, size_t elem);

// kp_vec_reserve() for a typed pointer: KP_VEC_RESERVE(items, cap, n + 1).
#define KP_VEC_RESERVE(p, cap, need) \
	kp_vec_reserve((void **)&(p), &(cap), (need), sizeof(*(p)))

#endif
