// SPDX-License-Identifier: MIT
// Address-range -> reader segment maps, one per address space (virtual,
// physical), plus an optional virtual->physical translator for virtual
// addresses that no virtual segment covers (physical-only dumps).
#ifndef KP_MEMORY_H
#define KP_MEMORY_H

#include <kpeek/kpeek.h>

// Reads count bytes at address; offset is the source offset for address
// (segment offset + distance into the segment).
typedef struct kp_error *kp_read_fn(void *buf, uint64_t address, size_t count,
				    uint64_t offset, void *arg);

// Translates vaddr. On success *paddr_ret is the physical address and
// *size_ret the bytes that stay contiguous from vaddr (to the end of its page).
// An address that does not translate returns an error (KP_ERR_FAULT naming
// vaddr for an unmapped one) whose span may say how many bytes from vaddr
// the same failure covers.
typedef struct kp_error *kp_translate_fn(void *arg, uint64_t vaddr,
					 uint64_t *paddr_ret, uint64_t *size_ret);

struct kp_memory;

struct kp_error *kp_memory_create(struct kp_memory **ret);
void kp_memory_destroy(struct kp_memory *mem);

// Maps [start, start + size) of space to fn(arg) with source offset 'offset' at
// start. Where the new range overlaps ranges already added, the earlier ones win
// and only the gaps are mapped (kdump vmcores map kernel text twice).
struct kp_error *kp_memory_add(struct kp_memory *mem, enum kp_space space,
			       uint64_t start, uint64_t size, kp_read_fn *fn,
			       void *arg, uint64_t offset);
// Places the ranges added out of address order (done by the first lookup
// otherwise): call it once the source is mapped, so that running out of
// memory is an error of the open, not a lookup that finds nothing.
struct kp_error *kp_memory_settle(struct kp_memory *mem);
void kp_memory_set_translator(struct kp_memory *mem, kp_translate_fn *fn, void *arg);
// The bytes from virtual vaddr on that cannot be translated, for the same
// reason as vaddr (an absent page-table entry, a table that cannot be
// read), for scans to step over at once: 0 where vaddr translates, where
// the source has virtual segments of its own, or where the translator
// cannot say.
uint64_t kp_memory_fault_span(struct kp_memory *mem, uint64_t vaddr);
// For a scan reading page bytes at a time whose read at vaddr failed: how
// far to go on, the whole pages of the fault's span, at least page and at
// most left.
uint64_t kp_memory_fault_step(struct kp_memory *mem, uint64_t vaddr, uint64_t page, uint64_t left);

// Reads exactly count bytes, across segment edges; on a hole, fails with
// KP_ERR_FAULT naming the first missing address. Allocates nothing on success.
struct kp_error *kp_memory_read(struct kp_memory *mem, enum kp_space space,
				uint64_t address, void *buf, size_t count);

// A little-endian u64 at address.
struct kp_error *kp_memory_read_u64(struct kp_memory *mem, enum kp_space space,
				    uint64_t address, uint64_t *ret);
// Up to size bytes from address, stopping at the first byte that cannot be
// read or (if stop_at_nul) after a NUL; returns the count read. Reads never
// cross a 4 KiB boundary (the smallest page of every architecture), so a
// string that ends before an unmapped page is read whole.
size_t kp_memory_read_partial(struct kp_memory *mem, enum kp_space space, uint64_t address,
			      void *buf, size_t size, bool stop_at_nul);
// A NUL-terminated string of at most size-1 bytes into buf (always
// terminated); false if its first byte cannot be read.
bool kp_memory_read_cstr(struct kp_memory *mem, enum kp_space space, uint64_t address,
			 char *buf, size_t size);

// Sorted, merged-where-adjacent ranges of a space; owned by mem, valid until
// the next kp_memory_add.
size_t kp_memory_ranges(struct kp_memory *mem, enum kp_space space,
			const struct kp_range **ret);
bool kp_memory_has_segments(struct kp_memory *mem, enum kp_space space);

// The segment of space that contains address, else the first one above it
// (false if none): its range (last inclusive), reader and source offset of
// its start. Lets scans skip memory that cannot hold data (kp_read_zero
// tails, holes in sparse files) without reading it. (Added for locate.c.)
struct kp_segment_info {
	uint64_t start, last;
	kp_read_fn *fn;
	void *arg;
	uint64_t offset;
};
bool kp_memory_segment_at(struct kp_memory *mem, enum kp_space space, uint64_t address,
			  struct kp_segment_info *ret);

// Reader for memsz > filesz tails: fills with zeros.
kp_read_fn kp_read_zero;
// Reader over a caller-owned buffer: arg points at the bytes, offset indexes them.
kp_read_fn kp_read_buffer;

#endif
