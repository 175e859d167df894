// SPDX-License-Identifier: MIT
// The page machinery of the kdump-compressed reader (kdump.c), in
// kdump_cache.c: decompression of one page (zlib, lzo, snappy, zstd) and the
// cache of decompressed pages.
#ifndef KP_KDUMP_CACHE_H
#define KP_KDUMP_CACHE_H

#include <libdeflate.h>
#include <zlib.h>
#include <zstd.h>

#include <kpeek/kpeek.h>

// Compression bits of disk_dump_header.status and page_desc.flags.
#define DUMP_DH_COMPRESSED_ZLIB 0x1
#define DUMP_DH_COMPRESSED_LZO 0x2
#define DUMP_DH_COMPRESSED_SNAPPY 0x4
#define DUMP_DH_COMPRESSED_INCOMPLETE 0x8	// header only: writer ran out of space
#define DUMP_DH_COMPRESSED_ZSTD 0x20
#define COMPRESSION_MASK (DUMP_DH_COMPRESSED_ZLIB | DUMP_DH_COMPRESSED_LZO | \
			  DUMP_DH_COMPRESSED_SNAPPY | DUMP_DH_COMPRESSED_ZSTD)

// Decompressor state kept across pages. All zeros is the state to start
// with, and a valid one to deinit.
struct kp_kdump_decomp {
	// zlib pages: libdeflate's decompressor where it can be loaded
	// (deflate_tried), else zlib's stream; zlib_only (tests) asks for zlib.
	struct libdeflate_decompressor *deflate;
	const struct kp_deflate *deflate_fns;
	bool deflate_tried, zlib_only;
	z_stream zs;
	bool zs_ready;
	ZSTD_DCtx *zstd;		// created with ...
	const struct kp_zstd *zstd_fns;	// ... these, on the first zstd page
};

void kp_kdump_decomp_deinit(struct kp_kdump_decomp *d);
// Decompresses in_len bytes of in, compressed as flags (one DUMP_DH_COMPRESSED_*
// bit), into the cap bytes at out. *out_len is the decompressed size, SIZE_MAX
// when it is more than cap (for snappy, the size the data claims when it is not
// cap). Corrupt data fails with KP_ERR_FORMAT naming the compression.
struct kp_error *kp_kdump_decompress(struct kp_kdump_decomp *d, uint32_t flags,
				     const uint8_t *in, size_t in_len, uint8_t *out,
				     size_t cap, size_t *out_len);

// 4 MiB of decompressed pages (64 to 1024 of them, by the block size):
// what a first answer reads more than once (kallsyms offsets and names,
// ~2 MB on Debian's kernels) stays decompressed. Bulk reads bypass it.
#define KP_KDUMP_CACHE_BYTES (4u << 20)
#define KP_KDUMP_CACHE_MIN_SLOTS 64
#define KP_KDUMP_CACHE_MAX_SLOTS 1024
#define KP_KDUMP_CACHE_BUCKET_BITS 10
#define KP_KDUMP_CACHE_BUCKETS (1 << KP_KDUMP_CACHE_BUCKET_BITS)
#define KP_KDUMP_NO_SLOT (-1)

struct kp_kdump_slot {
	uint64_t pfn;
	int32_t hnext;		// hash chain
	int32_t prev, next;	// LRU list, most recent first
	bool used;
};

// nslots decompressed pages by pfn, least recently used reused first. All
// zeros is a valid state to deinit.
struct kp_kdump_cache {
	uint32_t block_size;
	int32_t nslots;
	struct kp_kdump_slot slots[KP_KDUMP_CACHE_MAX_SLOTS];
	int32_t buckets[KP_KDUMP_CACHE_BUCKETS];
	int32_t lru_head, lru_tail;
	uint8_t *data;			// nslots * block_size
};

struct kp_error *kp_kdump_cache_init(struct kp_kdump_cache *c, uint32_t block_size);
void kp_kdump_cache_deinit(struct kp_kdump_cache *c);
// The cached page pfn, now the most recently used; NULL if it is not cached.
const uint8_t *kp_kdump_cache_lookup(struct kp_kdump_cache *c, uint64_t pfn);
// Takes the least recently used slot for a page not yet cached: *data_ret is
// its block_size bytes. kp_kdump_cache_insert() names it pfn once filled;
// kp_kdump_cache_discard() gives it back when filling failed.
int32_t kp_kdump_cache_take(struct kp_kdump_cache *c, uint8_t **data_ret);
void kp_kdump_cache_insert(struct kp_kdump_cache *c, int32_t slot, uint64_t pfn);
void kp_kdump_cache_discard(struct kp_kdump_cache *c, int32_t slot);

#endif
