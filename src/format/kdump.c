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

#include "format/kdump.h"
#include "format/kdump_layout.h"
#include "format/source.h"
#include "util/error.h"
#include "util/le.h"

// Bounds on what we allocate from header fields.
#define MAX_BLOCK_SIZE (1U << 20)
#define MAX_NOTES_SIZE (64U << 20)

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
	struct kp_error *err = kp_kdump_view_read(kd, off, map, (size_t)len);
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
			err = kp_kdump_view_read(kd, off, buf, (size_t)size);
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
			err = kp_kdump_view_read(kd, off, text, (size_t)size);
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

static struct kp_error *bad_header(struct kdump *kd, unsigned off, const char *fmt,
				   uint64_t value)
{
	char what[128];
	snprintf(what, sizeof(what), fmt, value);
	return kp_error_create(KP_ERR_FORMAT, "%s: kdump header at %s0x%x: %s", kd->path,
			       kd->flat ? "logical offset " : "offset ", off, what);
}

// What the headers say about where the rest is.
struct layout {
	int32_t version;
	int32_t sub_blocks;		// sub-header size in blocks
	uint32_t bitmap_blocks;		// both bitmaps
	uint64_t max_mapnr;
	uint64_t bitmap_off;
	uint64_t bitmap_len;		// one bitmap
};

// disk_dump_header: the signature, the header version, the block size and
// the status (compression, incomplete).
static struct kp_error *read_header(struct kdump *kd, uint8_t dh[DH_SIZE], struct layout *l)
{
	struct kp_error *err = kp_kdump_view_read(kd, 0, dh, DH_SIZE);
	if (err)
		return kp_error_prefix(err, "kdump header");
	if (memcmp(dh, DISKDUMP_SIGNATURE, 8) == 0)
		return kp_error_create(KP_ERR_UNSUPPORTED,
				       "%s: old diskdump format (DISKDUMP signature) is not "
				       "supported; only kdump-compressed (KDUMP)", kd->path);
	if (memcmp(dh, KDUMP_SIGNATURE, 8) != 0)
		return kp_error_create(KP_ERR_FORMAT, "%s: no KDUMP signature at %s0",
				       kd->path, kd->flat ? "logical offset " : "offset ");
	l->version = (int32_t)kp_le32(dh + DH_VERSION);
	if (l->version <= 0 || l->version > 0xffff)
		return bad_header(kd, DH_VERSION, "header version %" PRId64 " (a big-endian "
				  "or corrupt dump?)", (uint64_t)(int64_t)l->version);
	uint32_t bs = kp_le32(dh + DH_BLOCK_SIZE);
	if (bs < 512 || bs > MAX_BLOCK_SIZE || (bs & (bs - 1)))
		return bad_header(kd, DH_BLOCK_SIZE, "block size %" PRIu64 " is not a power "
				  "of two between 512 and 1 MiB", bs);
	kd->block_size = bs;
	kd->block_shift = (unsigned)__builtin_ctz(bs);
	kd->status = kp_le32(dh + DH_STATUS);
	l->sub_blocks = (int32_t)kp_le32(dh + DH_SUB_HDR_SIZE);
	l->bitmap_blocks = kp_le32(dh + DH_BITMAP_BLOCKS);
	return NULL;
}

// kdump_sub_header, as much of it as its version has: the dump level,
// whether the dump is split, the number of pfns.
static struct kp_error *read_sub_header(struct kdump *kd, const uint8_t dh[DH_SIZE],
					uint8_t sh[SH_SIZE], struct layout *l)
{
	static const unsigned sh_need[] = {0, 12, 32, 48, 64, 80, SH_SIZE};
	uint32_t bs = kd->block_size;
	unsigned need = l->version >= 6 ? SH_SIZE : sh_need[l->version];
	if (l->sub_blocks < 0 || (uint64_t)l->sub_blocks * bs < need)
		return bad_header(kd, DH_SUB_HDR_SIZE, "sub-header size %" PRId64 " blocks is "
				  "too small for its version", (uint64_t)(int64_t)l->sub_blocks);
	struct kp_error *err = kp_kdump_view_read(kd, bs, sh, need);
	if (err)
		return kp_error_prefix(err, "kdump sub-header");
	kd->dump_level = (int32_t)kp_le32(sh + SH_DUMP_LEVEL);
	kd->split = l->version >= 2 && kp_le32(sh + SH_SPLIT) != 0;
	l->max_mapnr = l->version >= 6 ? kp_le64(sh + SH_MAX_MAPNR_64)
				       : kp_le32(dh + DH_MAX_MAPNR);
	return NULL;
}

// Both bitmaps, cut at max_pfn, and the rank table of the dumped one (the
// number of dumped pages below each block of 512 pfns).
static struct kp_error *read_bitmaps(struct kdump *kd, struct layout *l)
{
	uint32_t bs = kd->block_size;
	l->bitmap_off = (1 + (uint64_t)l->sub_blocks) * bs;
	l->bitmap_len = (uint64_t)l->bitmap_blocks * bs / 2;
	uint64_t limit = kd->file->size ? kd->file->size : (1ULL << 30);
	if (l->bitmap_blocks == 0 || l->bitmap_len > limit / 2)
		return bad_header(kd, DH_BITMAP_BLOCKS, "bitmap of %" PRIu64 " blocks does "
				  "not fit in the file", l->bitmap_blocks);
	kd->max_pfn = l->max_mapnr < l->bitmap_len * 8 ? l->max_mapnr : l->bitmap_len * 8;
	// Words for max_pfn bits, rounded to whole rank blocks for
	// kp_kdump_dumped_below().
	uint64_t nwords = ((kd->max_pfn >> RANK_SHIFT) + 1) << (RANK_SHIFT - 6);
	uint64_t read_len = l->bitmap_len < nwords * 8 ? l->bitmap_len : nwords * 8;
	struct kp_error *err = read_bitmap(kd, l->bitmap_off, read_len, (size_t)nwords, &kd->ram);
	if (!err)
		err = read_bitmap(kd, l->bitmap_off + l->bitmap_len, read_len, (size_t)nwords,
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
	return NULL;
}

// The pfns this file holds (a split dump's part), and where their page
// descriptors are, which must be in the file unless the dump says it is
// incomplete.
static struct kp_error *find_page_descs(struct kdump *kd, const uint8_t sh[SH_SIZE],
					const struct layout *l)
{
	kd->start_pfn = 0;
	kd->end_pfn = kd->max_pfn;
	if (kd->split) {
		uint64_t s = kp_le64(sh + (l->version >= 6 ? SH_START_PFN_64 : SH_START_PFN));
		uint64_t e = kp_le64(sh + (l->version >= 6 ? SH_END_PFN_64 : SH_END_PFN));
		if (s > e || e > kd->max_pfn)
			return kp_error_create(KP_ERR_FORMAT,
					       "%s: kdump sub-header: split pfn range 0x%" PRIx64
					       "-0x%" PRIx64 " is outside the bitmap (0x%" PRIx64
					       " pfns)", kd->path, s, e, kd->max_pfn);
		kd->start_pfn = s;
		kd->end_pfn = e;
	}
	kd->rank_base = kp_kdump_dumped_below(kd, kd->start_pfn);
	kd->ndumped = kp_kdump_dumped_below(kd, kd->end_pfn) - kd->rank_base;
	kd->pd_offset = l->bitmap_off + (uint64_t)l->bitmap_blocks * kd->block_size;
	uint64_t pd_end = kd->pd_offset + kd->ndumped * PAGE_DESC_SIZE;
	if (!kd->flat)
		kd->size = kd->file->size ? kd->file->size : UINT64_MAX;
	if (pd_end > kd->size && !(kd->status & DUMP_DH_COMPRESSED_INCOMPLETE))
		return kp_error_create(KP_ERR_FORMAT,
				       "%s: truncated: page descriptors of %" PRIu64 " pages "
				       "at 0x%" PRIx64 "-0x%" PRIx64 " are past the end of the "
				       "file (0x%" PRIx64 ")", kd->path, kd->ndumped,
				       kd->pd_offset, pd_end, kd->size);
	return NULL;
}

static struct kp_error *open_kdump(struct kdump *kd, struct kp_source *src)
{
	uint8_t dh[DH_SIZE], sh[SH_SIZE] = {0};
	struct layout l = {0};
	struct kp_error *err;
	if ((err = read_header(kd, dh, &l)) || (err = read_sub_header(kd, dh, sh, &l)) ||
	    (err = read_bitmaps(kd, &l)) || (err = find_page_descs(kd, sh, &l)) ||
	    (err = read_metadata(kd, src, l.version, sh)))
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

	kd->scratch = malloc(kd->block_size);
	kd->zero = calloc(1, kd->block_size);
	if (!kd->scratch || !kd->zero)
		return &kp_enomem;
	return kp_kdump_cache_init(&kd->cache, kd->block_size);
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
	// kpeek's snapshots in this format list the pages they could not read.
	if (!err)
		err = kp_source_add_lost(src, mem, kd->path);
	if (!err)
		err = kp_kdump_add_segments(kd, mem, kd->start_pfn, kd->end_pfn);
	if (err) {
		kdump_destroy(kd);
		free(src->vmcoreinfo);
		src->vmcoreinfo = NULL;
		src->vmcoreinfo_size = 0;
		free(src->vmcoreinfo_other);
		src->vmcoreinfo_other = NULL;
		kp_source_drop_cpus(src);
		src->has_phys_base = false;
		src->phys_base = 0;
		return err;
	}
	src->kind = kind_name(kd->flat, kd->status);
	if (kd->split) {
		src->split = true;
		src->split_start = kd->start_pfn;
		src->split_end = kd->end_pfn;
		src->split_max = kd->max_pfn;
		src->split_page_size = kd->block_size;
	}
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

struct kp_error *kp_source_add_elsewhere(struct kp_source *src, struct kp_memory *mem)
{
	// Only kdump.c sets split; its reads outside the part's frames say so.
	return src->split ? kp_kdump_add_segments(src->priv, mem, 0, src->split_max) : NULL;
}

const struct kp_source_ops kp_kdump_ops = {
	.name = "kdump",
	.probe = kdump_probe,
	.open = kdump_open,
};
