// SPDX-License-Identifier: MIT
// Hash finalizer shared by the tables that pick slots from a hash's low bits.
#ifndef KP_UTIL_HASH_H
#define KP_UTIL_HASH_H

#include <stdint.h>

// murmur3's fmix32: every input bit affects the low bits that pick a slot
// and the high ones kept as tags (FNV's and polynomial hashes' low bits
// barely change between names that differ at their ends).
static inline uint32_t kp_hash_fmix32(uint32_t h)
{
	h ^= h >> 16;
	h *= 0x85ebca6bu;
	h ^= h >> 13;
	h *= 0xc2b2ae35u;
	h ^= h >> 16;
	return h;
}

#endif
