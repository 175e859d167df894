// SPDX-License-Identifier: MIT
// mklime: builds LiME (version 1, "EMiL") and AVML (version 2, "AVML", framed
// snappy) memory images in memory for tests.
//
//   struct mklime *ml = mklime_create();
//   mklime_add(ml, 0x1000, data, 0x2000);		// LiME range 0x1000-0x2fff
//   mklime_add_avml(ml, 0x100000, data, 0x30000, &(struct mklime_avml){0});
//   uint8_t *img; size_t len; mklime_to_buffer(ml, &img, &len);
//
// Every function aborts on out-of-memory: this is test code.
#ifndef MKLIME_H
#define MKLIME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct mklime;

struct mklime *mklime_create(void);
void mklime_destroy(struct mklime *ml);

// A raw 32-byte range header: any magic/version/start/end (end inclusive).
void mklime_add_header(struct mklime *ml, uint32_t magic, uint32_t version,
		       uint64_t start, uint64_t end);
// Appends bytes as they are (range data, garbage).
void mklime_add_bytes(struct mklime *ml, const void *data, size_t len);
// A LiME version 1 range: header then size bytes of data (NULL = zeros).
void mklime_add(struct mklime *ml, uint64_t start, const void *data, uint64_t size);

struct mklime_avml {
	size_t chunk;		// data bytes per snappy chunk (default and max 65536)
	bool uncompressed;	// type 0x01 chunks instead of compressed 0x00
	bool padding;		// a padding chunk (0xfe) after the stream identifier
	int32_t size_delta;	// added to the trailing stream length (corruption)
	bool bad_crc;		// flip the first chunk's CRC
};
// An AVML version 2 block: header, framed snappy stream, u64 stream length.
void mklime_add_avml(struct mklime *ml, uint64_t start, const void *data, uint64_t size,
		     const struct mklime_avml *opts);

// The image so far; *buf_ret is malloc'ed.
void mklime_to_buffer(struct mklime *ml, uint8_t **buf_ret, size_t *len_ret);

#endif
