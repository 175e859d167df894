// SPDX-License-Identifier: MIT
// What kp_snapshot_write's formats share (snapshot_io.c): the output, a
// file written at offsets or a flattened stream of {offset, size} records,
// and the copy of the source's physical memory chunk by chunk, with the
// pages it cannot give recorded as lost.
#ifndef KP_CORE_SNAPSHOT_H
#define KP_CORE_SNAPSHOT_H

#include <stdbool.h>
#include <stdint.h>

#include "io/memory.h"
#include <kpeek/kpeek.h>

#define SNAP_PAGE 4096ULL		// file alignment; every page size is a multiple
#define SNAP_CHUNK (4U << 20)		// bytes read from the source at a time

struct snap_out {
	int fd;
	const char *path;	// the final name ("-": standard output), for messages
	// makedumpfile's flattened format: every write is a record appended
	// to the stream (header first), never a seek.
	bool flat;
	uint64_t pos;		// bytes written to a stream
};

// Writes len bytes at logical offset off: pwrite() to a file, a record to
// a flattened stream.
struct kp_error *snap_write_at(struct snap_out *o, const void *buf, size_t len, uint64_t off);
// The flattened stream's 4 KiB header, and its end marker.
struct kp_error *snap_flat_begin(struct snap_out *o);
struct kp_error *snap_flat_end(struct snap_out *o);

struct snap_copy {
	struct kp_memory *mem;
	struct snap_out *out;
	const struct kp_snapshot_options *opts;
	uint8_t *buf;			// SNAP_CHUNK bytes
	bool lost_page[SNAP_CHUNK / SNAP_PAGE];	// of the last chunk read
	uint64_t done, total;
	struct kp_snapshot_stats st;
	struct kp_range *lost;		// pages the source could not give, merged
	size_t nlost, lost_cap;
};

// Reads [pa, pa + len) into c->buf (len <= SNAP_CHUNK, pa page-aligned):
// pages the source cannot give are zeros there, marked in c->lost_page and
// added to c->lost.
struct kp_error *snap_read_chunk(struct snap_copy *c, uint64_t pa, size_t len);
bool snap_page_is_zero(const uint8_t *p, size_t len);
// Progress and cancellation after a chunk of len bytes at pa.
struct kp_error *snap_chunk_done(struct snap_copy *c, uint64_t pa, size_t len);

struct kp_kernel;
// The kdump formats (snapshot_kdump.c): out->flat for the flattened one.
struct kp_error *snap_write_kdump(struct kp_kernel *k, struct snap_out *out,
				  const struct kp_snapshot_options *opts, struct kp_snapshot_stats *ret);

struct snap_notes {
	uint8_t *buf;
	size_t len, cap;
};

struct kp_source;
// Appends an ELF note (4-byte aligned name and desc); false if out of memory.
bool snap_note_add(struct snap_notes *nb, const char *name, uint32_t type, const void *desc,
		   size_t descsz);
// The notes the source had, as it had them: VMCOREINFO text and every
// CPU's PRSTATUS and QEMU state notes.
struct kp_error *snap_build_notes(const struct kp_source *src, struct snap_notes *nb);

#endif
