// SPDX-License-Identifier: MIT
// Little-endian fields of dump headers, notes and kernel memory. Every
// format kpeek reads (ELF cores of x86-64 and arm64, kdump, LiME, the
// kernel's own tables) is little-endian; these read unaligned bytes with
// memcpy and byte-swap only on a big-endian host.
#ifndef KP_UTIL_LE_H
#define KP_UTIL_LE_H

#include <stdint.h>
#include <string.h>

static inline uint16_t kp_le16(const void *p)
{
	uint16_t v;
	memcpy(&v, p, sizeof(v));
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	v = __builtin_bswap16(v);
#endif
	return v;
}

static inline uint32_t kp_le32(const void *p)
{
	uint32_t v;
	memcpy(&v, p, sizeof(v));
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	v = __builtin_bswap32(v);
#endif
	return v;
}

static inline uint64_t kp_le64(const void *p)
{
	uint64_t v;
	memcpy(&v, p, sizeof(v));
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	v = __builtin_bswap64(v);
#endif
	return v;
}

// An unsigned field of size 1, 2, 4 or 8 bytes (other sizes read 0).
static inline uint64_t kp_le(const void *p, size_t size)
{
	switch (size) {
	case 1: return *(const uint8_t *)p;
	case 2: return kp_le16(p);
	case 4: return kp_le32(p);
	case 8: return kp_le64(p);
	}
	return 0;
}

static inline void kp_put_le32(void *p, uint32_t v)
{
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	v = __builtin_bswap32(v);
#endif
	memcpy(p, &v, sizeof(v));
}

static inline void kp_put_le64(void *p, uint64_t v)
{
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	v = __builtin_bswap64(v);
#endif
	memcpy(p, &v, sizeof(v));
}

#endif
