// SPDX-License-Identifier: MIT
// Reading the pages of a kdump-compressed dump (kdump.c opens it): a
// physical address is a pfn of the bitmaps; a dumped pfn's page_desc is the
// rank of its bit among the dumped ones; its data is read raw or
// decompressed (kdump_cache.c, which also caches decompressed pages). A
// page left out of the dump is zeros when makedumpfile only excluded zero
// pages (-d 1), else a fault that says which -d left it out.
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format/kdump.h"
#include "util/error.h"
#include "util/le.h"

// makedumpfile -d: bit 0 excludes zero pages; the others cache, private
// cache, user and free pages.
#define DL_EXCLUDE_ZERO 1
#define MAX_RAM_RUNS (1U << 20)	// kp_kdump_add_segments() says why

struct kp_error *kp_kdump_view_read(struct kdump *kd, uint64_t off, void *buf, size_t len)
{
	if (!kd->flat)
		return kp_file_read(kd->file, off, buf, len);
	return kp_flat_read(&kd->flat_index, off, buf, len);
}

static bool test_bit(const uint64_t *map, uint64_t bit)
{
	return map[bit >> 6] >> (bit & 63) & 1;
}

uint64_t kp_kdump_dumped_below(const struct kdump *kd, uint64_t pfn)
{
	uint64_t r = kd->rank[pfn >> RANK_SHIFT];
	uint64_t w = (pfn >> RANK_SHIFT) << (RANK_SHIFT - 6), wend = pfn >> 6;
	for (; w < wend; w++)
		r += (uint64_t)__builtin_popcountll(kd->dumped[w]);
	if (pfn & 63)
		r += (uint64_t)__builtin_popcountll(kd->dumped[wend] &
						    ((1ULL << (pfn & 63)) - 1));
	return r;
}

static struct kp_error *bad_page(struct kdump *kd, uint64_t pfn, uint64_t pd_off,
				 uint64_t data_off, const char *what)
{
	return kp_error_create(KP_ERR_FORMAT,
			       "%s: pfn 0x%" PRIx64 " (page_desc at %s0x%" PRIx64
			       ", data at 0x%" PRIx64 "): %s", kd->path, pfn,
			       kd->flat ? "logical offset " : "", pd_off, data_off, what);
}

// A dumped page's descriptor, checked against the block size and the file.
struct page_desc {
	uint64_t at;		// where the descriptor is
	uint64_t offset;	// where the page's data is
	uint32_t size;		// of the data
	uint32_t comp;		// its DUMP_DH_COMPRESSED_* bit, 0 if raw
};

static struct kp_error *read_page_desc(struct kdump *kd, uint64_t pfn, struct page_desc *ret)
{
	uint64_t idx = kp_kdump_dumped_below(kd, pfn) - kd->rank_base;
	uint64_t pd_off = kd->pd_offset + idx * PAGE_DESC_SIZE;
	uint8_t pd[PAGE_DESC_SIZE];
	struct kp_error *err = kp_kdump_view_read(kd, pd_off, pd, sizeof(pd));
	if (err)
		return kp_error_prefix(err, "page_desc of pfn 0x%" PRIx64, pfn);
	uint64_t off = kp_le64(pd);
	uint32_t size = kp_le32(pd + 8), flags = kp_le32(pd + 12);
	uint32_t comp = flags & COMPRESSION_MASK;
	if (off == 0 && (kd->status & DUMP_DH_COMPRESSED_INCOMPLETE))
		return kp_error_fault(pfn << kd->block_shift,
				      "page 0x%" PRIx64 " was not written: the dump is "
				      "incomplete (writer ran out of space)",
				      pfn << kd->block_shift);
	if (size == 0 || size > kd->block_size)
		return bad_page(kd, pfn, pd_off, off,
				size == 0 ? "data size 0" : "data size exceeds the block size");
	if (comp == 0 && size != kd->block_size)
		return bad_page(kd, pfn, pd_off, off,
				"uncompressed data size differs from the block size");
	if (comp & (comp - 1))
		return bad_page(kd, pfn, pd_off, off, "more than one compression flag");
	if (off > kd->size || size > kd->size - off)
		return bad_page(kd, pfn, pd_off, off, "data is past the end of the file");
	*ret = (struct page_desc){ pd_off, off, size, comp };
	return NULL;
}

// Points *ret at the block_size bytes of page pfn, which is dumped. dst, if
// not NULL, is a block_size buffer the caller wants the page in anyway: a
// compressed page not in the cache is decompressed there, bypassing the cache.
static struct kp_error *get_page(struct kdump *kd, uint64_t pfn, uint8_t *dst,
				 const uint8_t **ret)
{
	const uint8_t *cached = kp_kdump_cache_lookup(&kd->cache, pfn);
	if (cached) {
		kd->hits++;
		*ret = cached;
		return NULL;
	}
	struct page_desc pd = { 0 };	// gcc -O2 cannot see read_page_desc() sets it
	struct kp_error *err = read_page_desc(kd, pfn, &pd);
	if (err)
		return err;
	// Uncompressed pages are not cached here: the file's block cache
	// (io/file.c) keeps what was read recently.
	const uint8_t *data = kd->scratch;
	err = kp_kdump_view_read(kd, pd.offset, kd->scratch, pd.size);
	if (err)
		return kp_error_prefix(err, "data of pfn 0x%" PRIx64, pfn);
	if (pd.comp == 0) {
		*ret = data;
		return NULL;
	}
	kd->misses++;
	int32_t slot = KP_KDUMP_NO_SLOT;
	uint8_t *out = dst;
	if (!out)
		slot = kp_kdump_cache_take(&kd->cache, &out);
	size_t out_len = 0;
	err = kp_kdump_decompress(&kd->decomp, pd.comp, data, pd.size, out, kd->block_size,
				  &out_len);
	if (!err && out_len != kd->block_size) {
		char what[96];
		if (out_len == SIZE_MAX)
			snprintf(what, sizeof(what), "decompresses to more than the block "
				 "size %" PRIu32, kd->block_size);
		else
			snprintf(what, sizeof(what), "decompresses to %zu bytes, not the block "
				 "size %" PRIu32, out_len, kd->block_size);
		err = bad_page(kd, pfn, pd.at, pd.offset, what);
	} else if (err && err != &kp_enomem) {
		err = kp_error_prefix(err, "%s: pfn 0x%" PRIx64 " (data at 0x%" PRIx64 ")",
				      kd->path, pfn, pd.offset);
	}
	if (err) {
		// The slot holds garbage: make it the next one reused.
		if (slot != KP_KDUMP_NO_SLOT)
			kp_kdump_cache_discard(&kd->cache, slot);
		return err;
	}
	if (slot != KP_KDUMP_NO_SLOT)
		kp_kdump_cache_insert(&kd->cache, slot, pfn);
	*ret = out;
	return NULL;
}

// kp_read_fn for the physical segments (RAM runs of bitmap 1): offset == address.
static struct kp_error *kdump_read(void *buf, uint64_t address, size_t count,
				   uint64_t offset, void *arg)
{
	struct kdump *kd = arg;
	uint8_t *out = buf;
	while (count > 0) {
		uint64_t pfn = address >> kd->block_shift;
		size_t in_page = (size_t)(address & (kd->block_size - 1));
		size_t n = kd->block_size - in_page;
		if (n > count)
			n = count;
		uint64_t page = pfn << kd->block_shift;
		if (pfn >= kd->max_pfn || !test_bit(kd->ram, pfn))
			return kp_error_fault(address, "%s: physical address 0x%" PRIx64
					      " is not in the dump's RAM", kd->path, address);
		if (pfn < kd->start_pfn || pfn >= kd->end_pfn)
			return kp_error_fault(address, "%s: physical page 0x%" PRIx64 " is in "
					      "another file of the split dump (this one has pfns 0x%"
					      PRIx64 "-0x%" PRIx64 ")", kd->path, page,
					      kd->start_pfn, kd->end_pfn);
		const uint8_t *src = NULL;
		if (!test_bit(kd->dumped, pfn)) {
			// Only zero pages excluded: the page was all zeros.
			if (kd->dump_level != DL_EXCLUDE_ZERO)
				return kp_error_fault(address, "%s: physical page 0x%" PRIx64
						      " was excluded from the dump (makedumpfile -d %"
						      PRId32 ")", kd->path, page, kd->dump_level);
			src = kd->zero;
		} else {
			struct kp_error *err = get_page(kd, pfn, n == kd->block_size ? out : NULL,
							&src);
			if (err)
				return err;
		}
		if (src != out)
			memcpy(out, src + in_page, n);
		out += n;
		address += n;
		count -= n;
	}
	return NULL;
}

struct kp_error *kp_kdump_add_segments(struct kdump *kd, struct kp_memory *mem, uint64_t lo, uint64_t hi)
{
	uint64_t pfn = 0, runs = 0;
	size_t nwords = (size_t)((kd->max_pfn + 63) / 64);
	while (pfn < kd->max_pfn) {
		// Next set bit at or after pfn.
		size_t w = (size_t)(pfn >> 6);
		uint64_t bits = kd->ram[w] & (~0ULL << (pfn & 63));
		while (!bits && ++w < nwords)
			bits = kd->ram[w];
		if (!bits)
			break;
		uint64_t start = (uint64_t)w * 64 + (uint64_t)__builtin_ctzll(bits);
		// Next clear bit after start.
		w = (size_t)(start >> 6);
		bits = ~kd->ram[w] & (~0ULL << (start & 63));
		while (!bits && ++w < nwords)
			bits = ~kd->ram[w];
		uint64_t end = bits ? (uint64_t)w * 64 + (uint64_t)__builtin_ctzll(bits)
				    : (uint64_t)nwords * 64;
		if (end > kd->max_pfn)
			end = kd->max_pfn;
		if (start >= end)
			break;
		// The first bitmap marks the dumped machine's memory ranges (its
		// PT_LOADs or RAM blocks): a few hundred at most. Bound what a
		// hostile bitmap can make us allocate.
		if (++runs > MAX_RAM_RUNS)
			return kp_error_create(KP_ERR_FORMAT,
					       "%s: the RAM bitmap has more than %u separate "
					       "ranges (corrupt?)", kd->path, MAX_RAM_RUNS);
		pfn = end;
		start = start > lo ? start : lo;
		end = end < hi ? end : hi;
		if (start >= end)
			continue;
		uint64_t a = start << kd->block_shift;
		struct kp_error *err = kp_memory_add(mem, KP_PHYS, a,
						     (end - start) << kd->block_shift,
						     kdump_read, kd, a);
		if (err)
			return err;
	}
	return NULL;
}
