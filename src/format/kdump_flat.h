// SPDX-License-Identifier: MIT
// makedumpfile's flattened format (makedumpfile -F; QEMU 7.2 writes it), for
// kdump.c: an index of the records that lets the standard kdump-compressed
// layout be read at logical offsets without reassembling the file.
#ifndef KP_KDUMP_FLAT_H
#define KP_KDUMP_FLAT_H

#include <kpeek/kpeek.h>
#include "io/file.h"

#define KP_FLAT_SIGNATURE "makedumpfile"

// A logical range of a flattened file and where its bytes are.
struct kp_flat_piece {
	uint64_t start, end;	// logical [start, end)
	uint64_t foff;		// file offset of start
};

struct kp_flat {
	struct kp_file *file;
	struct kp_flat_piece *pieces;	// sorted, disjoint
	size_t npieces;
	uint64_t size;			// logical file size: the end of the last piece
};

// Indexes the records of file, which starts with KP_FLAT_SIGNATURE: reads only
// the record headers. KP_ERR_FORMAT names the bad header or record.
struct kp_error *kp_flat_index(struct kp_file *file, struct kp_flat *ret);
void kp_flat_deinit(struct kp_flat *flat);
// Reads len bytes at logical offset off. Bytes no record wrote read as zeros,
// as in the file makedumpfile -R would reassemble.
struct kp_error *kp_flat_read(const struct kp_flat *flat, uint64_t off, void *buf,
			      size_t len);
// The file offset of logical [off, off + len) when one piece holds all of it.
bool kp_flat_file_offset(const struct kp_flat *flat, uint64_t off, size_t len,
			 uint64_t *ret);

#endif
