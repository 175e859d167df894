// SPDX-License-Identifier: MIT
// ELF note areas (PT_NOTE segments of ELF cores, the notes region of kdump
// files): VMCOREINFO text and the CPU notes, kept as the dump has them.
#include <elf.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "format/source.h"
#include "util/error.h"
#include "util/le.h"
#include "util/vec.h"

// Bounds against hostile notes: a CPU note is a few hundred bytes (arm64
// PRSTATUS 392, QEMU's x86 state 440); CPUs are at most CONFIG_NR_CPUS.
#define MAX_CPUS 65536
#define MAX_CPU_NOTE (64u << 10)

// The i-th PRSTATUS and the i-th QEMU note describe the same CPU. Slots are
// filled in order, so "first slot without a PRSTATUS" is a binary search.
static size_t first_without(const struct kp_source *src, bool qemu)
{
	size_t lo = 0, hi = src->ncpus;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		bool has = qemu ? src->cpus[mid].qemu != NULL : src->cpus[mid].prstatus != NULL;
		if (has)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static struct kp_error *add_cpu_note(struct kp_source *src, bool qemu, const uint8_t *desc,
				     size_t len, const char *where, uint64_t offset,
				     size_t *cap)
{
	if (len == 0 || len > MAX_CPU_NOTE)
		return kp_error_create(KP_ERR_FORMAT,
				       "%s: %s note at offset 0x%" PRIx64 " has %zu bytes",
				       where, qemu ? "QEMU CPU" : "CORE NT_PRSTATUS", offset, len);
	size_t i = first_without(src, qemu);
	if (i == src->ncpus) {
		if (src->ncpus >= MAX_CPUS)
			return kp_error_create(KP_ERR_FORMAT,
					       "%s: note at offset 0x%" PRIx64
					       ": more than %d CPU notes", where, offset, MAX_CPUS);
		if (!KP_VEC_RESERVE(src->cpus, *cap, src->ncpus + 1))
			return &kp_enomem;
		memset(&src->cpus[src->ncpus], 0, sizeof(*src->cpus));
		src->ncpus++;
	}
	uint8_t *copy = malloc(len);
	if (!copy)
		return &kp_enomem;
	memcpy(copy, desc, len);
	struct kp_cpu_notes *c = &src->cpus[i];
	if (qemu) {
		c->qemu = copy;
		c->qemu_len = len;
		c->qemu_at = offset;
	} else {
		c->prstatus = copy;
		c->prstatus_len = len;
		c->prstatus_at = offset;
	}
	return NULL;
}

// kpeek's lost ranges: (start, end) pairs, each non-empty.
static struct kp_error *add_lost(struct kp_source *src, const uint8_t *desc, size_t len,
				 const char *where, uint64_t at)
{
	size_t n = len / 16;
	if (len % 16 || n > KP_MAX_LOST || src->nlost + n > KP_MAX_LOST)
		return kp_error_create(KP_ERR_FORMAT, "%s: kpeek lost-ranges note at offset 0x%" PRIx64
				       " of %zu bytes (pairs of 16 bytes, at most %u)",
				       where, at, len, KP_MAX_LOST);
	struct kp_range *r = realloc(src->lost, (src->nlost + n + 1) * sizeof(*r));
	if (!r)
		return &kp_enomem;
	src->lost = r;
	for (size_t i = 0; i < n; i++) {
		uint64_t start = kp_le64(desc + 16 * i), end = kp_le64(desc + 16 * i + 8);
		if (end <= start)
			return kp_error_create(KP_ERR_FORMAT, "%s: kpeek lost-ranges note at offset 0x%" PRIx64
					       ": range %zu is 0x%" PRIx64 "-0x%" PRIx64, where, at, i, start, end);
		r[src->nlost++] = (struct kp_range){ .start = start, .end = end };
	}
	return NULL;
}

static bool name_is(const uint8_t *name, uint32_t namesz, const char *want)
{
	size_t n = strnlen((const char *)name, namesz);
	return n == strlen(want) && memcmp(name, want, n) == 0;
}

struct kp_error *kp_notes_parse(const uint8_t *buf, size_t len, const char *where,
				uint64_t file_offset, struct kp_source *src)
{
	size_t off = 0;
	// The capacity of src->cpus, which grows one slot at a time.
	size_t cap = src->ncpus;
	// Fewer than a header's worth of trailing bytes is padding, not a note.
	while (len - off >= 12) {
		uint64_t at = file_offset + off;
		uint32_t namesz = kp_le32(buf + off), descsz = kp_le32(buf + off + 4);
		uint32_t type = kp_le32(buf + off + 8);
		// 64-bit arithmetic: neither sum can overflow.
		uint64_t name_off = off + 12;
		uint64_t desc_off = name_off + (((uint64_t)namesz + 3) & ~3ULL);
		uint64_t end = desc_off + descsz;
		if (desc_off > len || end > len)
			return kp_error_create(KP_ERR_FORMAT,
					       "%s: note at offset 0x%" PRIx64
					       " (namesz %" PRIu32 ", descsz %" PRIu32
					       ") runs past the end of the note segment (0x%zx bytes)",
					       where, at, namesz, descsz, len);
		const uint8_t *name = buf + name_off, *desc = buf + desc_off;
		struct kp_error *err = NULL;
		if (name_is(name, namesz, "VMCOREINFO") && type == 0) {
			// The first is used; a second that differs is kept to be
			// compared (core/facts.c), never silently dropped.
			size_t n = strnlen((const char *)desc, descsz);
			bool same = src->vmcoreinfo && n == src->vmcoreinfo_size &&
				    !memcmp(desc, src->vmcoreinfo, n);
			if (!same && !src->vmcoreinfo_other) {
				char *text = malloc(n + 1);
				if (!text)
					return &kp_enomem;
				memcpy(text, desc, n);
				text[n] = '\0';
				if (!src->vmcoreinfo) {
					src->vmcoreinfo = text;
					src->vmcoreinfo_size = n;
				} else {
					src->vmcoreinfo_other = text;
					src->vmcoreinfo_other_size = n;
				}
			}
		} else if (name_is(name, namesz, "CORE") && type == NT_PRSTATUS) {
			err = add_cpu_note(src, false, desc, descsz, where, at, &cap);
		} else if (name_is(name, namesz, "QEMU")) {
			err = add_cpu_note(src, true, desc, descsz, where, at, &cap);
		} else if (name_is(name, namesz, KP_NOTE_NAME) && type == KP_NT_LOST) {
			err = add_lost(src, desc, descsz, where, at);
		}
		if (err)
			return err;
		// The last note's padding may be missing.
		uint64_t next = (end + 3) & ~3ULL;
		off = next < len ? (size_t)next : len;
	}
	return NULL;
}

void kp_source_drop_cpus(struct kp_source *src)
{
	for (size_t i = 0; i < src->ncpus; i++) {
		free(src->cpus[i].prstatus);
		free(src->cpus[i].qemu);
	}
	free(src->cpus);
	src->cpus = NULL;
	src->ncpus = 0;
}

void kp_source_deinit(struct kp_source *src)
{
	if (!src)
		return;
	free(src->vmcoreinfo);
	free(src->vmcoreinfo_other);
	free(src->lost);
	kp_source_drop_cpus(src);
	if (src->destroy)
		src->destroy(src->priv);
	memset(src, 0, sizeof(*src));
}

struct kp_error *kp_source_read_lost(void *buf, uint64_t address, size_t count, uint64_t offset, void *arg)
{
	(void)buf, (void)count;
	// offset is the physical address (the segment is added so).
	return kp_error_fault(address,
		"physical address 0x%" PRIx64 " was lost: it could not be read from the source of "
		"the snapshot %s (its kpeek note lists it)", offset, (const char *)arg);
}

struct kp_error *kp_source_add_lost(const struct kp_source *src, struct kp_memory *mem, const char *path)
{
	for (size_t i = 0; i < src->nlost; i++) {
		uint64_t start = src->lost[i].start, end = src->lost[i].end;
		struct kp_error *err = kp_memory_add(mem, KP_PHYS, start, end - start, kp_source_read_lost,
						     (void *)path, start);
		if (err)
			return err;
	}
	return NULL;
}
