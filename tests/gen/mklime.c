// SPDX-License-Identifier: MIT
// mklime: LiME / AVML image builder for tests (see mklime.h).
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <snappy-c.h>

#include "mklime.h"

struct mklime {
	uint8_t *buf;
	size_t len, cap;
};

static void die(const char *what)
{
	fprintf(stderr, "mklime: %s\n", what);
	abort();
}

struct mklime *mklime_create(void)
{
	struct mklime *ml = calloc(1, sizeof(*ml));
	if (!ml)
		die("out of memory");
	return ml;
}

void mklime_destroy(struct mklime *ml)
{
	if (!ml)
		return;
	free(ml->buf);
	free(ml);
}

static uint8_t *grow(struct mklime *ml, size_t len)
{
	if (ml->len + len > ml->cap) {
		size_t cap = ml->cap ? ml->cap : 4096;
		while (cap < ml->len + len)
			cap *= 2;
		uint8_t *n = realloc(ml->buf, cap);
		if (!n)
			die("out of memory");
		ml->buf = n;
		ml->cap = cap;
	}
	uint8_t *p = ml->buf + ml->len;
	ml->len += len;
	return p;
}

void mklime_add_bytes(struct mklime *ml, const void *data, size_t len)
{
	uint8_t *p = grow(ml, len);
	if (data)
		memcpy(p, data, len);
	else
		memset(p, 0, len);
}

static void put_u32(uint8_t *p, uint32_t v)
{
	memcpy(p, &v, 4);
}

static void put_u64(uint8_t *p, uint64_t v)
{
	memcpy(p, &v, 8);
}

void mklime_add_header(struct mklime *ml, uint32_t magic, uint32_t version,
		       uint64_t start, uint64_t end)
{
	uint8_t h[32] = {0};
	put_u32(h, magic);
	put_u32(h + 4, version);
	put_u64(h + 8, start);
	put_u64(h + 16, end);
	mklime_add_bytes(ml, h, sizeof(h));
}

void mklime_add(struct mklime *ml, uint64_t start, const void *data, uint64_t size)
{
	mklime_add_header(ml, 0x4C694D45, 1, start, start + size - 1);
	mklime_add_bytes(ml, data, size);
}

static uint32_t masked_crc32c(const uint8_t *p, size_t len)
{
	uint32_t c = 0xffffffffU;
	for (size_t i = 0; i < len; i++) {
		c ^= p[i];
		for (int k = 0; k < 8; k++)
			c = c & 1 ? (c >> 1) ^ 0x82F63B78U : c >> 1;
	}
	c = ~c;
	return ((c >> 15) | (c << 17)) + 0xa282ead8U;
}

static void chunk_header(struct mklime *ml, uint8_t type, size_t len)
{
	uint8_t h[4] = {type, (uint8_t)len, (uint8_t)(len >> 8), (uint8_t)(len >> 16)};
	mklime_add_bytes(ml, h, 4);
}

void mklime_add_avml(struct mklime *ml, uint64_t start, const void *data, uint64_t size,
		     const struct mklime_avml *o)
{
	static const struct mklime_avml defaults;
	if (!o)
		o = &defaults;
	size_t chunk = o->chunk && o->chunk <= 65536 ? o->chunk : 65536;
	mklime_add_header(ml, 0x4C4D5641, 2, start, start + size - 1);
	size_t begin = ml->len;
	chunk_header(ml, 0xff, 6);
	mklime_add_bytes(ml, "sNaPpY", 6);
	if (o->padding) {
		chunk_header(ml, 0xfe, 3);
		mklime_add_bytes(ml, "\0\0\0", 3);
	}
	uint8_t *zeros = NULL;
	if (!data) {
		zeros = calloc(1, chunk);
		if (!zeros)
			die("out of memory");
	}
	char *comp = malloc(snappy_max_compressed_length(chunk));
	if (!comp)
		die("out of memory");
	bool first = true;
	for (uint64_t off = 0; off < size; off += chunk) {
		size_t n = size - off < chunk ? (size_t)(size - off) : chunk;
		const uint8_t *p = data ? (const uint8_t *)data + off : zeros;
		uint32_t crc = masked_crc32c(p, n);
		if (first && o->bad_crc)
			crc ^= 1;
		first = false;
		uint8_t c4[4];
		put_u32(c4, crc);
		if (o->uncompressed) {
			chunk_header(ml, 0x01, n + 4);
			mklime_add_bytes(ml, c4, 4);
			mklime_add_bytes(ml, p, n);
		} else {
			size_t clen = snappy_max_compressed_length(chunk);
			if (snappy_compress((const char *)p, n, comp, &clen) != SNAPPY_OK)
				die("snappy_compress");
			chunk_header(ml, 0x00, clen + 4);
			mklime_add_bytes(ml, c4, 4);
			mklime_add_bytes(ml, comp, clen);
		}
	}
	free(comp);
	free(zeros);
	uint8_t s[8];
	put_u64(s, (uint64_t)(ml->len - begin) + (int64_t)o->size_delta);
	mklime_add_bytes(ml, s, 8);
}

void mklime_to_buffer(struct mklime *ml, uint8_t **buf_ret, size_t *len_ret)
{
	uint8_t *b = malloc(ml->len ? ml->len : 1);
	if (!b)
		die("out of memory");
	memcpy(b, ml->buf, ml->len);
	*buf_ret = b;
	*len_ret = ml->len;
}
