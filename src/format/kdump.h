// SPDX-License-Identifier: MIT
// The state of one opened kdump-compressed dump, shared by kdump.c (the
// headers and bitmaps, read at open) and kdump_read.c (pages, read on
// demand). The format itself is described in kdump.c.
#ifndef KP_FORMAT_KDUMP_H
#define KP_FORMAT_KDUMP_H

#include "format/kdump_cache.h"
#include "format/kdump_flat.h"
#include "io/memory.h"

#define PAGE_DESC_SIZE 24	// {i64 offset; u32 size; u32 flags; u64 page_flags}

#define RANK_SHIFT 9		// one rank entry per 512 pfns (8 bitmap words)

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
};

// Reads len bytes at logical offset off: the file offset, except in a
// flattened file (kdump_read.c).
struct kp_error *kp_kdump_view_read(struct kdump *kd, uint64_t off, void *buf, size_t len);
// The number of dumped pages below pfn, by the rank table (kdump_read.c).
uint64_t kp_kdump_dumped_below(const struct kdump *kd, uint64_t pfn);
// One physical segment of mem per run of RAM in bitmap 1, read through the
// page descriptors (kdump_read.c).
// Only the runs' parts within page frames [lo, hi).
struct kp_error *kp_kdump_add_segments(struct kdump *kd, struct kp_memory *mem, uint64_t lo, uint64_t hi);

#endif
