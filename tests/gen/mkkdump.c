// SPDX-License-Identifier: MIT
// Synthetic kdump-compressed dumps for tests; see mkkdump.h.
#include <lzo/lzo1x.h>
#include <snappy-c.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include <zstd.h>

#include "mkkdump.h"

// disk_dump_header / kdump_sub_header offsets (64-bit, makedumpfile
// diskdump_mod.h); kept independent of src/kdump.c on purpose.
#define DH_VERSION 8
#define DH_UTSNAME 12
#define DH_STATUS 424
#define DH_BLOCK_SIZE 428
#define DH_SUB_HDR_SIZE 432
#define DH_BITMAP_BLOCKS 436
#define DH_MAX_MAPNR 440
#define DH_NR_CPUS 460
#define SH_SIZE 104

struct buf {
	uint8_t *p;
	size_t len, cap;
};

static void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p)
		abort();
	return p;
}

static void reserve(struct buf *b, size_t len)
{
	if (len <= b->cap)
		return;
	size_t cap = b->cap ? b->cap : 65536;
	while (cap < len)
		cap *= 2;
	b->p = realloc(b->p, cap);
	if (!b->p)
		abort();
	memset(b->p + b->cap, 0, cap - b->cap);
	b->cap = cap;
}

static void put(struct buf *b, uint64_t off, const void *data, size_t len)
{
	reserve(b, off + len);
	memcpy(b->p + off, data, len);
	if (off + len > b->len)
		b->len = off + len;
}

static void put32(struct buf *b, uint64_t off, uint32_t v)
{
	uint8_t x[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24)};
	put(b, off, x, 4);
}

static void put64(struct buf *b, uint64_t off, uint64_t v)
{
	put32(b, off, (uint32_t)v);
	put32(b, off + 4, (uint32_t)(v >> 32));
}

static void putbe64(struct buf *b, uint64_t off, uint64_t v)
{
	uint8_t x[8];
	for (int i = 0; i < 8; i++)
		x[i] = (uint8_t)(v >> (56 - 8 * i));
	put(b, off, x, 8);
}

static uint32_t comp_flag(enum mkkdump_comp c)
{
	static const uint32_t flags[] = {0, 0x1, 0x2, 0x4, 0x20};
	return flags[c];
}

// Compresses one block into out (capacity 2 * bs + 64); returns the size,
// or 0 when the result would not be smaller than the block.
static size_t compress_block(enum mkkdump_comp c, const uint8_t *in, size_t bs, uint8_t *out)
{
	size_t cap = 2 * bs + 64, n = 0;
	switch (c) {
	case MKK_RAW:
		return 0;
	case MKK_ZLIB: {
		uLongf len = cap;
		if (compress2(out, &len, in, bs, Z_DEFAULT_COMPRESSION) != Z_OK)
			abort();
		n = len;
		break;
	}
	case MKK_LZO: {
		static uint8_t wrk[LZO1X_1_MEM_COMPRESS];
		lzo_uint len = cap;
		if (lzo_init() != LZO_E_OK || lzo1x_1_compress(in, bs, out, &len, wrk) != LZO_E_OK)
			abort();
		n = len;
		break;
	}
	case MKK_SNAPPY: {
		size_t len = cap;
		if (snappy_compress((const char *)in, bs, (char *)out, &len) != SNAPPY_OK)
			abort();
		n = len;
		break;
	}
	case MKK_ZSTD:
		n = ZSTD_compress(out, cap, in, bs, 1);
		if (ZSTD_isError(n))
			abort();
		break;
	}
	return n < bs ? n : 0;
}

static bool is_zero(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return false;
	return true;
}

void mkkdump_build(const struct mkkdump_opts *o, uint8_t **buf_ret, size_t *len_ret,
		   struct mkkdump_layout *layout_ret)
{
	uint32_t bs = o->block_size ? o->block_size : 4096;
	int version = o->header_version ? o->header_version : 6;
	struct mkkdump_layout l = {0};
	struct buf b = {0};

	uint64_t sub_len = SH_SIZE;
	l.sub_header = bs;
	l.notes = o->notes ? l.sub_header + sub_len : 0;
	sub_len += o->notes ? o->notes_size : 0;
	l.vmcoreinfo = o->vmcoreinfo ? l.sub_header + sub_len : 0;
	sub_len += o->vmcoreinfo ? strlen(o->vmcoreinfo) : 0;
	uint64_t sub_blocks = (sub_len + bs - 1) / bs;
	uint64_t bitmap_blocks = (o->npages / 8 + bs) / bs;	// per bitmap, >= 1
	l.bitmap_len = bitmap_blocks * bs;
	l.bitmap1 = (1 + sub_blocks) * bs;
	l.bitmap2 = l.bitmap1 + l.bitmap_len;
	l.page_desc = l.bitmap2 + l.bitmap_len;

	put(&b, 0, "KDUMP   ", 8);
	put32(&b, DH_VERSION, (uint32_t)version);
	if (!o->qemu_utsname) {
		put(&b, DH_UTSNAME, "Linux", 5);			// sysname
		put(&b, DH_UTSNAME + 2 * 65, "6.1.0-test", 10);	// release
	}
	put(&b, DH_UTSNAME + 4 * 65, "x86_64", 6);		// machine
	put32(&b, DH_STATUS, comp_flag(o->comp));
	put32(&b, DH_BLOCK_SIZE, bs);
	put32(&b, DH_SUB_HDR_SIZE, (uint32_t)sub_blocks);
	put32(&b, DH_BITMAP_BLOCKS, (uint32_t)(2 * bitmap_blocks));
	put32(&b, DH_MAX_MAPNR, (uint32_t)o->npages);
	put32(&b, DH_NR_CPUS, 1);

	uint64_t sh = l.sub_header;
	put64(&b, sh + 0, o->phys_base);
	put32(&b, sh + 8, (uint32_t)o->dump_level);
	put32(&b, sh + 12, o->split);
	put64(&b, sh + 16, o->start_pfn);
	put64(&b, sh + 24, o->end_pfn);
	if (o->vmcoreinfo) {
		put64(&b, sh + 32, l.vmcoreinfo);
		put64(&b, sh + 40, strlen(o->vmcoreinfo));
		put(&b, l.vmcoreinfo, o->vmcoreinfo, strlen(o->vmcoreinfo));
	}
	if (o->notes) {
		put64(&b, sh + 48, l.notes);
		put64(&b, sh + 56, o->notes_size);
		put(&b, l.notes, o->notes, o->notes_size);
	}
	if (version >= 6) {
		put64(&b, sh + 80, o->start_pfn);
		put64(&b, sh + 88, o->end_pfn);
		put64(&b, sh + 96, o->npages);
	}

	// Bitmaps; a split file's second bitmap has only its own pages.
	uint8_t *b1 = calloc(1, l.bitmap_len), *b2 = calloc(1, l.bitmap_len);
	if (!b1 || !b2)
		abort();
	for (uint64_t pfn = 0; pfn < o->npages; pfn++) {
		int st = o->state ? o->state[pfn] : MKK_DUMPED;
		if (st != MKK_HOLE)
			b1[pfn / 8] |= (uint8_t)(1 << (pfn % 8));
		if (st == MKK_DUMPED &&
		    (!o->split || (pfn >= o->start_pfn && pfn < o->end_pfn))) {
			b2[pfn / 8] |= (uint8_t)(1 << (pfn % 8));
			l.ndumped++;
		}
	}
	put(&b, l.bitmap1, b1, l.bitmap_len);
	put(&b, l.bitmap2, b2, l.bitmap_len);

	l.data = l.page_desc + l.ndumped * 24;
	uint64_t data = l.data, zero_off = 0;
	if (o->share_zero_pages) {
		uint8_t *z = calloc(1, bs);
		if (!z)
			abort();
		zero_off = data;
		put(&b, data, z, bs);
		data += bs;
		free(z);
	}
	uint8_t *out = xmalloc(2 * (size_t)bs + 64);
	uint64_t idx = 0;
	for (uint64_t pfn = 0; pfn < o->npages; pfn++) {
		if (!(b2[pfn / 8] & (1 << (pfn % 8))))
			continue;
		const uint8_t *page = o->mem + pfn * bs;
		uint64_t pd = l.page_desc + idx++ * 24;
		if (o->share_zero_pages && is_zero(page, bs)) {
			put64(&b, pd, zero_off);
			put32(&b, pd + 8, bs);
			continue;
		}
		enum mkkdump_comp c = o->page_comp ? (enum mkkdump_comp)o->page_comp[pfn] : o->comp;
		size_t n = compress_block(c, page, bs, out);
		put64(&b, pd, data);
		if (n) {
			put32(&b, pd + 8, (uint32_t)n);
			put32(&b, pd + 12, comp_flag(c));
			put(&b, data, out, n);
			data += n;
		} else {
			put32(&b, pd + 8, bs);
			put(&b, data, page, bs);
			data += bs;
		}
	}
	// Reserve the page_desc area even if nothing was dumped.
	reserve(&b, data);
	if (b.len < data)
		b.len = data;
	free(out);
	free(b1);
	free(b2);
	l.size = b.len;
	*buf_ret = b.p;
	*len_ret = b.len;
	if (layout_ret)
		*layout_ret = l;
}

struct rec {
	uint64_t off, len;
	const uint8_t *data;
};

static void emit(struct buf *b, uint64_t off, uint64_t len, const uint8_t *data)
{
	uint64_t at = b->len;
	putbe64(b, at, off);
	putbe64(b, at + 8, len);
	put(b, at + 16, data, len);
}

void mkkdump_flatten(const uint8_t *img, size_t len, const struct mkkdump_flat_opts *fo,
		     uint8_t **buf_ret, size_t *len_ret)
{
	size_t rmax = fo->record_max ? fo->record_max : 16384;
	struct buf b = {0};
	put(&b, 0, "makedumpfile", 12);
	putbe64(&b, 16, 1);	// TYPE_FLAT_HEADER
	putbe64(&b, 24, 1);	// VERSION_FLAT_HEADER
	reserve(&b, 4096);
	b.len = 4096;

	size_t n = 0, cap = len / 1024 + 16;
	struct rec *r = xmalloc(cap * sizeof(*r));
	for (uint64_t off = 0; off < len;) {
		uint64_t l = len - off < rmax ? len - off : rmax;
		if (fo->skip_zero_blocks) {
			// Cut at 4 KiB boundaries; drop aligned all-zero blocks.
			uint64_t end = (off / 4096 + 1) * 4096;
			if (l > end - off)
				l = end - off;
			if (l == 4096 && is_zero(img + off, 4096)) {
				off += l;
				continue;
			}
		}
		if (n == cap) {
			cap *= 2;
			r = realloc(r, cap * sizeof(*r));
			if (!r)
				abort();
		}
		r[n++] = (struct rec){off, l, img + off};
		off += l;
	}
	if (fo->shuffle) {
		uint64_t s = 12345;
		for (size_t i = n; i > 1; i--) {
			s = s * 6364136223846793005ULL + 1442695040888963407ULL;
			size_t j = (size_t)((s >> 33) % i);
			struct rec t = r[i - 1];
			r[i - 1] = r[j];
			r[j] = t;
		}
	}
	for (size_t i = 0; i < n; i++)
		emit(&b, r[i].off, r[i].len, r[i].data);
	if (fo->rewrite_header) {
		// Garbage over the header and across a record edge, then the
		// real bytes again: only "later records win" reassembles it.
		uint8_t junk[512];
		memset(junk, 0xa5, sizeof(junk));
		uint64_t mid = len > rmax + 256 ? rmax - 256 : 0;
		emit(&b, 0, len < 464 ? len : 464, junk);
		if (mid)
			emit(&b, mid, 512, junk);
		emit(&b, 0, len < 464 ? len : 464, img);
		if (mid)
			emit(&b, mid, 512, img + mid);
	}
	if (!fo->no_end_marker) {
		uint64_t at = b.len;
		putbe64(&b, at, UINT64_MAX);	// END_FLAG_FLAT_HEADER (-1)
		putbe64(&b, at + 8, UINT64_MAX);
	}
	free(r);
	*buf_ret = b.p;
	*len_ret = b.len;
}
