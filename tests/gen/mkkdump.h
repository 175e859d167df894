// SPDX-License-Identifier: MIT
// mkkdump: builds synthetic kdump-compressed dumps (makedumpfile's standard
// "KDUMP   " layout, header versions 1-6, 64-bit little-endian) and their
// flattened form (makedumpfile -F, QEMU 7.2 dump-guest-memory -z) for tests.
//
//   struct mkkdump_opts o = {.mem = mem, .npages = 64, .comp = MKK_ZLIB};
//   uint8_t *img; size_t len; struct mkkdump_layout lay;
//   mkkdump_build(&o, &img, &len, &lay);
//   mkcore_write_bytes(path, img, len);
//
// Layout: block 0 header, block 1 sub-header followed by the notes and the
// VMCOREINFO text (sub_hdr_size covers them, as makedumpfile and QEMU do), the
// two bitmaps, page_desc[] for every dumped page, then page data (the shared
// zero page first when share_zero_pages). A page whose compressed form is not
// smaller than a block is stored raw (flags 0), as makedumpfile does.
// Every function aborts on out-of-memory: this is test code.
#ifndef MKKDUMP_H
#define MKKDUMP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum mkkdump_comp { MKK_RAW, MKK_ZLIB, MKK_LZO, MKK_SNAPPY, MKK_ZSTD };

enum mkkdump_page {
	MKK_DUMPED,	// in both bitmaps, with a page_desc
	MKK_HOLE,	// not RAM: in neither bitmap
	MKK_EXCLUDED,	// RAM filtered out (makedumpfile -d): first bitmap only
};

struct mkkdump_opts {
	const uint8_t *mem;		// npages * block_size bytes, pfn 0 first
	uint64_t npages;		// max_mapnr
	uint32_t block_size;		// 0: 4096
	const uint8_t *state;		// per pfn enum mkkdump_page; NULL: all dumped
	const uint8_t *page_comp;	// per pfn enum mkkdump_comp; NULL: comp
	enum mkkdump_comp comp;		// default compression, and the header status
	int header_version;		// 0: 6
	int dump_level;			// sub-header dump_level
	uint64_t phys_base;
	const char *vmcoreinfo;		// raw text at offset_vmcoreinfo; NULL: none
	const void *notes;		// ELF note bytes at offset_note; NULL: none
	size_t notes_size;
	bool share_zero_pages;		// all-zero pages share one page_desc (QEMU)
	bool qemu_utsname;		// utsname empty but machine, as QEMU writes;
					// else sysname "Linux", release "6.1.0-test"
	bool split;			// split dump holding pfns [start_pfn, end_pfn)
	uint64_t start_pfn, end_pfn;
};

// Byte offsets of the standard layout, for corrupting images in tests.
struct mkkdump_layout {
	uint64_t sub_header, notes, vmcoreinfo;
	uint64_t bitmap1, bitmap2, bitmap_len;	// bitmap_len: bytes of each
	uint64_t page_desc;			// page_desc[0]
	uint64_t ndumped;
	uint64_t data;				// first page data byte
	uint64_t size;				// whole image
};

// Builds the standard layout. Caller frees *buf_ret.
void mkkdump_build(const struct mkkdump_opts *o, uint8_t **buf_ret, size_t *len_ret,
		   struct mkkdump_layout *layout_ret);

struct mkkdump_flat_opts {
	size_t record_max;	// data bytes per record; 0: 16 KiB (QEMU's size)
	bool shuffle;		// records out of logical order
	bool rewrite_header;	// garbage header first, the real one last (overlap)
	bool skip_zero_blocks;	// do not write 4 KiB-aligned all-zero blocks (gaps)
	bool no_end_marker;
};

// Turns a standard-layout image into makedumpfile's flattened stream.
void mkkdump_flatten(const uint8_t *img, size_t len, const struct mkkdump_flat_opts *fo,
		     uint8_t **buf_ret, size_t *len_ret);

// Offset of the page_desc of the i-th dumped page.
static inline uint64_t mkkdump_pd(const struct mkkdump_layout *l, uint64_t i)
{
	return l->page_desc + i * 24;
}

#endif
