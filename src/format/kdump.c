// SPDX-License-Identifier: MIT
// kdump-compressed dumps (makedumpfile -c/-l/-p/-z, QEMU dump-guest-memory
// -z/-l/-s), in the standard "KDUMP   " layout and in makedumpfile's flattened
// stream format (makedumpfile -F; QEMU 7.2 writes this one).
//
// Standard layout, in blocks of block_size bytes (makedumpfile diskdump_mod.h):
//   block 0                 disk_dump_header
//   block 1                 kdump_sub_header (sub_hdr_size blocks)
//   bitmap_blocks blocks    two bitmaps of equal size: pages that are RAM, then
//                           pages that were dumped (bit pfn, LSB first)
//   page_desc[]             one 24-byte descriptor per dumped page, pfn order
//   page data
// The flattened format is a 4 KiB header followed by {offset, size} records
// (big-endian) that, replayed in order, write the standard layout; kdump_flat.c
// indexes the records instead of reassembling, and view_read() below reads the
// standard layout through that index. Decompression and the cache of
// decompressed pages are in kdump_cache.c.
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format/kdump_cache.h"
#include "format/kdump_flat.h"
#include "format/source.h"
#include "util/error.h"
#include "util/le.h"

#define KDUMP_SIGNATURE "KDUMP   "
#define DISKDUMP_SIGNATURE "DISKDUMP"

// disk_dump_header offsets for 64-bit targets (utsname is 6 x 65 bytes; the
// timeval after it is 8-aligned).
#define DH_VERSION 8
#define DH_UTSNAME 12		// struct new_utsname: sysname first
#define DH_MACHINE (DH_UTSNAME + 4 * 65)	// utsname.machine
#define DH_STATUS 424
#define DH_BLOCK_SIZE 428
#define DH_SUB_HDR_SIZE 432
#define DH_BITMAP_BLOCKS 436
#define DH_MAX_MAPNR 440
#define DH_NR_CPUS 460
#define DH_SIZE 464

// kdump_sub_header offsets (64-bit); the header version says which exist.
#define SH_PHYS_BASE 0
#define SH_DUMP_LEVEL 8		// version >= 1
#define SH_SPLIT 12		// version >= 2
#define SH_START_PFN 16
#define SH_END_PFN 24
#define SH_OFFSET_VMCOREINFO 32	// version >= 3
#define SH_SIZE_VMCOREINFO 40
#define SH_OFFSET_NOTE 48	// version >= 4
#define SH_SIZE_NOTE 56
#define SH_START_PFN_64 80	// version >= 6
#define SH_END_PFN_64 88
#define SH_MAX_MAPNR_64 96
#define SH_SIZE 104

#define PAGE_DESC_SIZE 24	// {i64 offset; u32 size; u32 flags; u64 page_flags}

// makedumpfile -d: bit 0 excludes zero pages; the others cache, private
// cache, user and free pages.
#define DL_EXCLUDE_ZERO 1

#define RANK_SHIFT 9		// one rank entry per 512 pfns (8 bitmap words)
// Bounds on what we allocate from header fields.
#define MAX_BLOCK_SIZE (1U << 20)
#define MAX_NOTES_SIZE (64U << 20)
#define MAX_RAM_RUNS (1U << 20)

struct kdump {
	struct kp_file *file;
	const char *path;
	bool flat;
	struct kp_flat flat_index;	// flattened only
	uint64_t size;		// logical file size

	uint32_t block_size;
	unsigned block_shift;
	uint32_t status;
	int32_t dump_level;
	bool split;
	uint64_t start_pfn, end_pfn;	// pfns this file holds
	uint64_t max_pfn;		// bitmap pfns, exclusive
	uint64_t *ram;			// bitmap 1, as words
	uint64_t *dumped;		// bitmap 2, as words
	uint64_t *rank;			// dumped bits below pfn i << RANK_SHIFT
	uint64_t rank_base;		// dumped bits below start_pfn
	uint64_t ndumped;
	uint64_t pd_offset;		// logical offset of page_desc[0]

	uint8_t *scratch;		// block_size bytes: compressed input
	uint8_t *zero;			// block_size zero bytes
	struct kp_kdump_decomp decomp;
	struct kp_kdump_cache cache;
	uint64_t hits, misses;
	// The last raw page read straight from the mapping (stable pointer):
	// small sequential reads of uncompressed pages skip the page_desc.
};

// ---------------------------------------------------------------- logical file

// Reads len bytes at logical offset off: the file offset, except in a
// flattened file.
static struct kp_error *view_read(struct kdump *kd, uint64_t off, void *buf, size_t len)
{
	if (!kd->flat)
		return kp_file_read(kd->file, off, buf, len);
	return kp_flat_read(&kd->flat_index, off, buf, len);
}

// ---------------------------------------------------------------- pages

static bool test_bit(const uint64_t *map, uint64_t bit)
{
	return map[bit >> 6] >> (bit & 63) & 1;
}

// Number of dumped pages below pfn.
static uint64_t dumped_below(const struct kdump *kd, uint64_t pfn)
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
	uint64_t idx = dumped_below(kd, pfn) - kd->rank_base;
	uint64_t pd_off = kd->pd_offset + idx * PAGE_DESC_SIZE;
	uint8_t pd[PAGE_DESC_SIZE];
	struct kp_error *err = view_read(kd, pd_off, pd, sizeof(pd));
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
	// Uncompressed pages are not cached here: the file's block cache
	// (io/file.c) keeps what was read recently.
	const uint8_t *data = kd->scratch;
	err = view_read(kd, off, kd->scratch, size);
	if (err)
		return kp_error_prefix(err, "data of pfn 0x%" PRIx64, pfn);
	if (comp == 0) {
		*ret = data;
		return NULL;
	}
	kd->misses++;
	int32_t slot = KP_KDUMP_NO_SLOT;
	uint8_t *out = dst;
	if (!out)
		slot = kp_kdump_cache_take(&kd->cache, &out);
	size_t out_len = 0;
	err = kp_kdump_decompress(&kd->decomp, comp, data, size, out, kd->block_size, &out_len);
	if (!err && out_len != kd->block_size) {
		char what[96];
		if (out_len == SIZE_MAX)
			snprintf(what, sizeof(what), "decompresses to more than the block "
				 "size %" PRIu32, kd->block_size);
		else
			snprintf(what, sizeof(what), "decompresses to %zu bytes, not the block "
				 "size %" PRIu32, out_len, kd->block_size);
		err = bad_page(kd, pfn, pd_off, off, what);
	} else if (err && err != &kp_enomem) {
		err = kp_error_prefix(err, "%s: pfn 0x%" PRIx64 " (data at 0x%" PRIx64 ")",
				      kd->path, pfn, off);
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

// ---------------------------------------------------------------- open

static void kdump_destroy(void *priv)
{
	struct kdump *kd = priv;
	if (!kd)
		return;
	kp_flat_deinit(&kd->flat_index);
	free(kd->ram);
	free(kd->dumped);
	free(kd->rank);
	free(kd->scratch);
	free(kd->zero);
	kp_kdump_cache_deinit(&kd->cache);
	kp_kdump_decomp_deinit(&kd->decomp);
	free(kd);
}

static bool kdump_probe(const uint8_t *head, size_t len)
{
	return (len >= 8 && (memcmp(head, KDUMP_SIGNATURE, 8) == 0 ||
			     memcmp(head, DISKDUMP_SIGNATURE, 8) == 0)) ||
	       (len >= sizeof(KP_FLAT_SIGNATURE) &&
		memcmp(head, KP_FLAT_SIGNATURE, sizeof(KP_FLAT_SIGNATURE)) == 0);
}

static const char *kind_name(bool flat, uint32_t status)
{
	static const char *const names[2][5] = {
		{"kdump-compressed (uncompressed)", "kdump-compressed (zlib)",
		 "kdump-compressed (lzo)", "kdump-compressed (snappy)",
		 "kdump-compressed (zstd)"},
		{"kdump-compressed (flattened, uncompressed)",
		 "kdump-compressed (flattened, zlib)", "kdump-compressed (flattened, lzo)",
		 "kdump-compressed (flattened, snappy)",
		 "kdump-compressed (flattened, zstd)"},
	};
	int i = 0;
	if (status & DUMP_DH_COMPRESSED_ZLIB)
		i = 1;
	else if (status & DUMP_DH_COMPRESSED_LZO)
		i = 2;
	else if (status & DUMP_DH_COMPRESSED_SNAPPY)
		i = 3;
	else if (status & DUMP_DH_COMPRESSED_ZSTD)
		i = 4;
	return names[flat][i];
}

// Reads a bitmap half into a zero-padded word array covering nwords words.
static struct kp_error *read_bitmap(struct kdump *kd, uint64_t off, uint64_t len,
				    size_t nwords, uint64_t **ret)
{
	uint64_t *map = calloc(nwords, sizeof(*map));
	if (!map)
		return &kp_enomem;
	struct kp_error *err = view_read(kd, off, map, (size_t)len);
	if (err) {
		free(map);
		return err;
	}
	// Bit i of byte i/8 is pfn i: little-endian words match on x86-64; convert
	// elsewhere.
	if (__BYTE_ORDER__ == __ORDER_BIG_ENDIAN__) {
		for (size_t i = 0; i < nwords; i++)
			map[i] = __builtin_bswap64(map[i]);
	}
	*ret = map;
	return NULL;
}

static struct kp_error *read_metadata(struct kdump *kd, struct kp_source *src,
				      int32_t version, const uint8_t *sh)
{
	struct kp_error *err;
	if (version >= 4) {
		uint64_t off = kp_le64(sh + SH_OFFSET_NOTE), size = kp_le64(sh + SH_SIZE_NOTE);
		if (size > 0) {
			if (size > MAX_NOTES_SIZE || off > kd->size || size > kd->size - off)
				return kp_error_create(KP_ERR_FORMAT,
						       "%s: kdump sub-header: notes at 0x%" PRIx64
						       " size 0x%" PRIx64 " are past the end of "
						       "the file (0x%" PRIx64 ")", kd->path, off,
						       size, kd->size);
			uint8_t *buf = malloc((size_t)size);
			if (!buf)
				return &kp_enomem;
			err = view_read(kd, off, buf, (size_t)size);
			if (!err)
				err = kp_notes_parse(buf, (size_t)size, kd->path, off, src);
			free(buf);
			if (err)
				return err;
		}
	}
	if (version >= 3 && !src->vmcoreinfo) {
		uint64_t off = kp_le64(sh + SH_OFFSET_VMCOREINFO);
		uint64_t size = kp_le64(sh + SH_SIZE_VMCOREINFO);
		if (size > 0) {
			if (size > MAX_NOTES_SIZE || off > kd->size || size > kd->size - off)
				return kp_error_create(KP_ERR_FORMAT,
						       "%s: kdump sub-header: VMCOREINFO at 0x%"
						       PRIx64 " size 0x%" PRIx64 " is past the end "
						       "of the file (0x%" PRIx64 ")", kd->path,
						       off, size, kd->size);
			char *text = malloc((size_t)size + 1);
			if (!text)
				return &kp_enomem;
			err = view_read(kd, off, text, (size_t)size);
			if (err) {
				free(text);
				return err;
			}
			text[size] = '\0';
			src->vmcoreinfo = text;
			src->vmcoreinfo_size = strlen(text);
		}
	}
	return NULL;
}

static struct kp_error *add_segments(struct kdump *kd, struct kp_memory *mem)
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
		uint64_t a = start << kd->block_shift;
		struct kp_error *err = kp_memory_add(mem, KP_PHYS, a,
						     (end - start) << kd->block_shift,
						     kdump_read, kd, a);
		if (err)
			return err;
		pfn = end;
	}
	return NULL;
}

static struct kp_error *bad_header(struct kdump *kd, unsigned off, const char *fmt,
				   uint64_t value)
{
	char what[128];
	snprintf(what, sizeof(what), fmt, value);
	return kp_error_create(KP_ERR_FORMAT, "%s: kdump header at %s0x%x: %s", kd->path,
			       kd->flat ? "logical offset " : "offset ", off, what);
}

static struct kp_error *open_kdump(struct kdump *kd, struct kp_source *src)
{
	uint8_t dh[DH_SIZE];
	struct kp_error *err = view_read(kd, 0, dh, sizeof(dh));
	if (err)
		return kp_error_prefix(err, "kdump header");
	if (memcmp(dh, DISKDUMP_SIGNATURE, 8) == 0)
		return kp_error_create(KP_ERR_UNSUPPORTED,
				       "%s: old diskdump format (DISKDUMP signature) is not "
				       "supported; only kdump-compressed (KDUMP)", kd->path);
	if (memcmp(dh, KDUMP_SIGNATURE, 8) != 0)
		return kp_error_create(KP_ERR_FORMAT, "%s: no KDUMP signature at %s0",
				       kd->path, kd->flat ? "logical offset " : "offset ");
	int32_t version = (int32_t)kp_le32(dh + DH_VERSION);
	if (version <= 0 || version > 0xffff)
		return bad_header(kd, DH_VERSION, "header version %" PRId64 " (a big-endian "
				  "or corrupt dump?)", (uint64_t)(int64_t)version);
	uint32_t bs = kp_le32(dh + DH_BLOCK_SIZE);
	if (bs < 512 || bs > MAX_BLOCK_SIZE || (bs & (bs - 1)))
		return bad_header(kd, DH_BLOCK_SIZE, "block size %" PRIu64 " is not a power "
				  "of two between 512 and 1 MiB", bs);
	kd->block_size = bs;
	kd->block_shift = (unsigned)__builtin_ctz(bs);
	kd->status = kp_le32(dh + DH_STATUS);
	int32_t sub_blocks = (int32_t)kp_le32(dh + DH_SUB_HDR_SIZE);
	uint32_t bitmap_blocks = kp_le32(dh + DH_BITMAP_BLOCKS);

	// Sub-header: its size depends on the version.
	static const unsigned sh_need[] = {0, 12, 32, 48, 64, 80, SH_SIZE};
	unsigned need = version >= 6 ? SH_SIZE : sh_need[version];
	if (sub_blocks < 0 || (uint64_t)sub_blocks * bs < need)
		return bad_header(kd, DH_SUB_HDR_SIZE, "sub-header size %" PRId64 " blocks is "
				  "too small for its version", (uint64_t)(int64_t)sub_blocks);
	uint8_t sh[SH_SIZE] = {0};
	err = view_read(kd, bs, sh, need);
	if (err)
		return kp_error_prefix(err, "kdump sub-header");
	kd->dump_level = (int32_t)kp_le32(sh + SH_DUMP_LEVEL);
	kd->split = version >= 2 && kp_le32(sh + SH_SPLIT) != 0;
	uint64_t max_mapnr = version >= 6 ? kp_le64(sh + SH_MAX_MAPNR_64)
					  : kp_le32(dh + DH_MAX_MAPNR);

	// Bitmaps.
	uint64_t bitmap_off = (1 + (uint64_t)sub_blocks) * bs;
	uint64_t bitmap_len = (uint64_t)bitmap_blocks * bs / 2;
	uint64_t limit = kd->file->size ? kd->file->size : (1ULL << 30);
	if (bitmap_blocks == 0 || bitmap_len > limit / 2)
		return bad_header(kd, DH_BITMAP_BLOCKS, "bitmap of %" PRIu64 " blocks does "
				  "not fit in the file", bitmap_blocks);
	kd->max_pfn = max_mapnr < bitmap_len * 8 ? max_mapnr : bitmap_len * 8;
	// Words for max_pfn bits, rounded to whole rank blocks for dumped_below().
	uint64_t nwords = ((kd->max_pfn >> RANK_SHIFT) + 1) << (RANK_SHIFT - 6);
	uint64_t read_len = bitmap_len < nwords * 8 ? bitmap_len : nwords * 8;
	err = read_bitmap(kd, bitmap_off, read_len, (size_t)nwords, &kd->ram);
	if (!err)
		err = read_bitmap(kd, bitmap_off + bitmap_len, read_len, (size_t)nwords,
				  &kd->dumped);
	if (err)
		return kp_error_prefix(err, "kdump bitmap");
	// Bits past max_pfn are not pages.
	for (uint64_t w = kd->max_pfn >> 6; w < nwords; w++) {
		uint64_t keep = w == kd->max_pfn >> 6 ? (1ULL << (kd->max_pfn & 63)) - 1 : 0;
		kd->ram[w] &= keep;
		kd->dumped[w] &= keep;
	}
	size_t nrank = (size_t)(nwords >> (RANK_SHIFT - 6));
	kd->rank = malloc(nrank * sizeof(*kd->rank));
	if (!kd->rank)
		return &kp_enomem;
	uint64_t total = 0;
	for (size_t r = 0; r < nrank; r++) {
		kd->rank[r] = total;
		for (size_t w = r << (RANK_SHIFT - 6); w < (r + 1) << (RANK_SHIFT - 6); w++)
			total += (uint64_t)__builtin_popcountll(kd->dumped[w]);
	}

	kd->start_pfn = 0;
	kd->end_pfn = kd->max_pfn;
	if (kd->split) {
		uint64_t s = kp_le64(sh + (version >= 6 ? SH_START_PFN_64 : SH_START_PFN));
		uint64_t e = kp_le64(sh + (version >= 6 ? SH_END_PFN_64 : SH_END_PFN));
		if (s > e || e > kd->max_pfn)
			return kp_error_create(KP_ERR_FORMAT,
					       "%s: kdump sub-header: split pfn range 0x%" PRIx64
					       "-0x%" PRIx64 " is outside the bitmap (0x%" PRIx64
					       " pfns)", kd->path, s, e, kd->max_pfn);
		kd->start_pfn = s;
		kd->end_pfn = e;
	}
	kd->rank_base = dumped_below(kd, kd->start_pfn);
	kd->ndumped = dumped_below(kd, kd->end_pfn) - kd->rank_base;
	kd->pd_offset = bitmap_off + (uint64_t)bitmap_blocks * bs;
	uint64_t pd_end = kd->pd_offset + kd->ndumped * PAGE_DESC_SIZE;
	if (!kd->flat)
		kd->size = kd->file->size ? kd->file->size : UINT64_MAX;
	if (pd_end > kd->size && !(kd->status & DUMP_DH_COMPRESSED_INCOMPLETE))
		return kp_error_create(KP_ERR_FORMAT,
				       "%s: truncated: page descriptors of %" PRIu64 " pages "
				       "at 0x%" PRIx64 "-0x%" PRIx64 " are past the end of the "
				       "file (0x%" PRIx64 ")", kd->path, kd->ndumped,
				       kd->pd_offset, pd_end, kd->size);

	err = read_metadata(kd, src, version, sh);
	if (err)
		return err;
	// QEMU (7.2) leaves utsname empty but for the machine, and its phys_base
	// is wrong: 0 without VMCOREINFO, else NUMBER(phys_base), which the kernel
	// prints in decimal, parsed as hex (-717225984 became 0xfffffff8e8dda67c).
	// makedumpfile fills utsname from the kernel and phys_base from the vmcore.
	// The machine ("x86_64", "aarch64"; QEMU 7.2 writes "Unknown" for
	// aarch64) is the architecture's hint.
	memcpy(src->machine, dh + DH_MACHINE, 64);
	src->machine[64] = '\0';
	if (dh[DH_UTSNAME] != '\0') {
		src->has_phys_base = true;
		src->phys_base = kp_le64(sh + SH_PHYS_BASE);
	}

	kd->scratch = malloc(bs);
	kd->zero = calloc(1, bs);
	if (!kd->scratch || !kd->zero)
		return &kp_enomem;
	err = kp_kdump_cache_init(&kd->cache, bs);
	if (err)
		return err;
	return kp_kdump_decomp_init(&kd->decomp);
}

static struct kp_error *kdump_open(struct kp_file *file, struct kp_memory *mem,
				   struct kp_source *src)
{
	struct kdump *kd = calloc(1, sizeof(*kd));
	if (!kd)
		return &kp_enomem;
	kd->file = file;
	kd->path = file->path;
	uint8_t sig[sizeof(KP_FLAT_SIGNATURE)];
	struct kp_error *err = kp_file_read(file, 0, sig, sizeof(sig));
	if (!err && memcmp(sig, KP_FLAT_SIGNATURE, sizeof(sig)) == 0) {
		kd->flat = true;
		err = kp_flat_index(file, &kd->flat_index);
		if (!err)
			kd->size = kd->flat_index.size;
	}
	if (!err)
		err = open_kdump(kd, src);
	if (!err)
		err = add_segments(kd, mem);
	if (err) {
		kdump_destroy(kd);
		free(src->vmcoreinfo);
		src->vmcoreinfo = NULL;
		src->vmcoreinfo_size = 0;
		kp_source_drop_cpus(src);
		src->has_phys_base = false;
		src->phys_base = 0;
		return err;
	}
	src->kind = kind_name(kd->flat, kd->status);
	src->live = false;
	src->priv = kd;
	src->destroy = kdump_destroy;
	return NULL;
}

void kp_kdump_cache_stats(const struct kp_source *src, uint64_t *hits_ret,
			  uint64_t *misses_ret)
{
	const struct kdump *kd = src->priv;
	*hits_ret = kd->hits;
	*misses_ret = kd->misses;
}

const struct kp_source_ops kp_kdump_ops = {
	.name = "kdump",
	.probe = kdump_probe,
	.open = kdump_open,
};
