// SPDX-License-Identifier: MIT
// The page machinery of the kdump-compressed reader (kdump.c): the
// decompressors of page data (zlib pages by libdeflate, or zlib; lzo,
// snappy, zstd; their state lives across pages) and the cache of
// decompressed pages, a hash by pfn over a fixed set of block-sized slots
// reused least recently used first. Uncompressed
// pages are not cached here: the file's block cache (io/file.c) holds them.
#include <stdlib.h>
#include <string.h>

#include "format/codecs.h"
#include "format/kdump_cache.h"
#include "util/error.h"

// ---------------------------------------------------------------- decompression

void kp_kdump_decomp_deinit(struct kp_kdump_decomp *d)
{
	if (d->deflate)
		d->deflate_fns->free(d->deflate);
	if (d->zs_ready)
		inflateEnd(&d->zs);
	if (d->zstd)
		d->zstd_fns->free(d->zstd);
}

// Each decompressor below: *out_len is SIZE_MAX when the data holds more
// than cap bytes.

// libdeflate: a whole zlib stream into a buffer, checked with its Adler-32
// as zlib's inflate() checks it; bytes after the stream are left, as there.
static struct kp_error *deflate_page(struct kp_kdump_decomp *d, const uint8_t *in, size_t in_len,
				     uint8_t *out, size_t cap, size_t *out_len)
{
	size_t n;
	switch (d->deflate_fns->zlib_decompress(d->deflate, in, in_len, out, cap, &n)) {
	case LIBDEFLATE_SUCCESS:
		*out_len = n;
		return NULL;
	case LIBDEFLATE_INSUFFICIENT_SPACE:
		*out_len = SIZE_MAX;	// more than cap
		return NULL;
	default:
		return kp_error_create(KP_ERR_FORMAT, "zlib data is corrupt (libdeflate: not a zlib "
				       "stream, or its checksum differs)");
	}
}

static struct kp_error *inflate_page(struct kp_kdump_decomp *d, const uint8_t *in,
				     size_t in_len, uint8_t *out, size_t cap, size_t *out_len)
{
	if (!d->deflate_tried && !d->zlib_only) {
		d->deflate_tried = true;
		struct kp_error *err = kp_codec_deflate(&d->deflate_fns);
		if (!err && !(d->deflate = d->deflate_fns->alloc()))
			return &kp_enomem;
		kp_error_destroy(err);	// no libdeflate: zlib does it
	}
	if (d->deflate && !d->zlib_only)
		return deflate_page(d, in, in_len, out, cap, out_len);
	if (!d->zs_ready) {
		memset(&d->zs, 0, sizeof(d->zs));
		if (inflateInit(&d->zs) != Z_OK)
			return &kp_enomem;
		d->zs_ready = true;
	} else if (inflateReset(&d->zs) != Z_OK) {
		return kp_error_create(KP_ERR_FORMAT, "zlib: inflateReset failed");
	}
	d->zs.next_in = (Bytef *)in;
	d->zs.avail_in = (uInt)in_len;
	d->zs.next_out = out;
	d->zs.avail_out = (uInt)cap;
	int ret = inflate(&d->zs, Z_FINISH);
	if (ret != Z_STREAM_END) {
		if (ret == Z_BUF_ERROR && d->zs.avail_out == 0 && d->zs.avail_in > 0) {
			*out_len = SIZE_MAX;	// more than cap
			return NULL;
		}
		return kp_error_create(KP_ERR_FORMAT, "zlib data is corrupt (%s)",
				       d->zs.msg ? d->zs.msg
				       : ret == Z_BUF_ERROR ? "truncated stream"
				       : zError(ret));
	}
	*out_len = cap - d->zs.avail_out;
	return NULL;
}

static struct kp_error *lzo_page(const uint8_t *in, size_t in_len, uint8_t *out, size_t cap,
				 size_t *out_len)
{
	const struct kp_lzo *lzo;
	struct kp_error *err = kp_codec_lzo(&lzo);
	if (err)
		return err;
	lzo_uint n = cap;
	int ret = lzo->decompress_safe(in, in_len, out, &n, NULL);
	if (ret == LZO_E_OUTPUT_OVERRUN) {
		*out_len = SIZE_MAX;
		return NULL;
	}
	if (ret != LZO_E_OK)
		return kp_error_create(KP_ERR_FORMAT, "lzo data is corrupt (error %d)", ret);
	*out_len = n;
	return NULL;
}

// Snappy says its size first: a size other than cap is not decompressed
// (*out_len is that size).
static struct kp_error *snappy_page(const uint8_t *in, size_t in_len, uint8_t *out,
				    size_t cap, size_t *out_len)
{
	const struct kp_snappy *snappy;
	struct kp_error *err = kp_codec_snappy(&snappy);
	if (err)
		return err;
	size_t n;
	if (snappy->uncompressed_length((const char *)in, in_len, &n) != SNAPPY_OK)
		return kp_error_create(KP_ERR_FORMAT, "snappy data is corrupt "
				       "(no valid length)");
	if (n != cap) {
		*out_len = n;
		return NULL;
	}
	if (snappy->uncompress((const char *)in, in_len, (char *)out, &n) != SNAPPY_OK)
		return kp_error_create(KP_ERR_FORMAT, "snappy data is corrupt");
	*out_len = n;
	return NULL;
}

static struct kp_error *zstd_page(struct kp_kdump_decomp *d, const uint8_t *in, size_t in_len,
				  uint8_t *out, size_t cap, size_t *out_len)
{
	if (!d->zstd) {
		struct kp_error *err = kp_codec_zstd(&d->zstd_fns);
		if (err)
			return err;
		if (!(d->zstd = d->zstd_fns->create()))
			return &kp_enomem;
	}
	const struct kp_zstd *z = d->zstd_fns;
	size_t n = z->decompress(d->zstd, out, cap, in, in_len);
	if (z->is_error(n)) {
		if (z->error_code(n) == ZSTD_error_dstSize_tooSmall) {
			*out_len = SIZE_MAX;
			return NULL;
		}
		return kp_error_create(KP_ERR_FORMAT, "zstd data is corrupt (%s)", z->error_name(n));
	}
	*out_len = n;
	return NULL;
}

struct kp_error *kp_kdump_decompress(struct kp_kdump_decomp *d, uint32_t flags,
				     const uint8_t *in, size_t in_len, uint8_t *out,
				     size_t cap, size_t *out_len)
{
	switch (flags) {
	case DUMP_DH_COMPRESSED_ZLIB:
		return inflate_page(d, in, in_len, out, cap, out_len);
	case DUMP_DH_COMPRESSED_LZO:
		return lzo_page(in, in_len, out, cap, out_len);
	case DUMP_DH_COMPRESSED_SNAPPY:
		return snappy_page(in, in_len, out, cap, out_len);
	case DUMP_DH_COMPRESSED_ZSTD:
		return zstd_page(d, in, in_len, out, cap, out_len);
	default:
		return kp_error_create(KP_ERR_FORMAT, "unknown compression flags 0x%x",
				       flags);
	}
}

// ---------------------------------------------------------------- cache

static uint8_t *slot_data(struct kp_kdump_cache *c, int32_t i)
{
	return c->data + (size_t)i * c->block_size;
}

static uint32_t bucket_of(uint64_t pfn)
{
	return (uint32_t)((pfn * 0x9e3779b97f4a7c15ULL) >> (64 - KP_KDUMP_CACHE_BUCKET_BITS));
}

static void lru_unlink(struct kp_kdump_cache *c, int32_t i)
{
	struct kp_kdump_slot *s = &c->slots[i];
	if (s->prev != KP_KDUMP_NO_SLOT)
		c->slots[s->prev].next = s->next;
	else
		c->lru_head = s->next;
	if (s->next != KP_KDUMP_NO_SLOT)
		c->slots[s->next].prev = s->prev;
	else
		c->lru_tail = s->prev;
}

static void lru_push_front(struct kp_kdump_cache *c, int32_t i)
{
	struct kp_kdump_slot *s = &c->slots[i];
	s->prev = KP_KDUMP_NO_SLOT;
	s->next = c->lru_head;
	if (c->lru_head != KP_KDUMP_NO_SLOT)
		c->slots[c->lru_head].prev = i;
	c->lru_head = i;
	if (c->lru_tail == KP_KDUMP_NO_SLOT)
		c->lru_tail = i;
}

static void lru_push_back(struct kp_kdump_cache *c, int32_t i)
{
	struct kp_kdump_slot *s = &c->slots[i];
	s->next = KP_KDUMP_NO_SLOT;
	s->prev = c->lru_tail;
	if (c->lru_tail != KP_KDUMP_NO_SLOT)
		c->slots[c->lru_tail].next = i;
	c->lru_tail = i;
	if (c->lru_head == KP_KDUMP_NO_SLOT)
		c->lru_head = i;
}

static void hash_remove(struct kp_kdump_cache *c, int32_t i)
{
	int32_t *link = &c->buckets[bucket_of(c->slots[i].pfn)];
	while (*link != KP_KDUMP_NO_SLOT && *link != i)
		link = &c->slots[*link].hnext;
	if (*link == i)
		*link = c->slots[i].hnext;
	c->slots[i].used = false;
}

struct kp_error *kp_kdump_cache_init(struct kp_kdump_cache *c, uint32_t block_size)
{
	uint32_t n = KP_KDUMP_CACHE_BYTES / block_size;
	if (n < KP_KDUMP_CACHE_MIN_SLOTS)
		n = KP_KDUMP_CACHE_MIN_SLOTS;
	if (n > KP_KDUMP_CACHE_MAX_SLOTS)
		n = KP_KDUMP_CACHE_MAX_SLOTS;
	c->data = malloc((size_t)n * block_size);
	if (!c->data)
		return &kp_enomem;
	c->nslots = (int32_t)n;
	c->block_size = block_size;
	for (int32_t i = 0; i < KP_KDUMP_CACHE_BUCKETS; i++)
		c->buckets[i] = KP_KDUMP_NO_SLOT;
	c->lru_head = c->lru_tail = KP_KDUMP_NO_SLOT;
	for (int32_t i = 0; i < c->nslots; i++)
		lru_push_back(c, i);
	return NULL;
}

void kp_kdump_cache_deinit(struct kp_kdump_cache *c)
{
	free(c->data);
}

const uint8_t *kp_kdump_cache_lookup(struct kp_kdump_cache *c, uint64_t pfn)
{
	for (int32_t i = c->buckets[bucket_of(pfn)]; i != KP_KDUMP_NO_SLOT;
	     i = c->slots[i].hnext) {
		if (c->slots[i].pfn == pfn) {
			if (c->lru_head != i) {
				lru_unlink(c, i);
				lru_push_front(c, i);
			}
			return slot_data(c, i);
		}
	}
	return NULL;
}

int32_t kp_kdump_cache_take(struct kp_kdump_cache *c, uint8_t **data_ret)
{
	int32_t i = c->lru_tail;
	if (c->slots[i].used)
		hash_remove(c, i);
	lru_unlink(c, i);
	lru_push_front(c, i);
	*data_ret = slot_data(c, i);
	return i;
}

void kp_kdump_cache_insert(struct kp_kdump_cache *c, int32_t i, uint64_t pfn)
{
	struct kp_kdump_slot *s = &c->slots[i];
	s->pfn = pfn;
	s->used = true;
	uint32_t b = bucket_of(pfn);
	s->hnext = c->buckets[b];
	c->buckets[b] = i;
}

void kp_kdump_cache_discard(struct kp_kdump_cache *c, int32_t i)
{
	lru_unlink(c, i);
	lru_push_back(c, i);
}
