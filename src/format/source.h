// SPDX-License-Identifier: MIT
// Memory sources (dump formats) behind one ops table chosen by probe(). The
// list of formats is formats.c's.
#ifndef KP_SOURCE_H
#define KP_SOURCE_H

#include <kpeek/kpeek.h>
#include "io/file.h"
#include "io/memory.h"

// The CPU notes of one CPU, as the dump has them: the desc bytes of its
// "CORE" NT_PRSTATUS note and of the "QEMU" note with QEMU's own CPU state
// (control registers included). Their layouts are the architecture's
// (arch/NAME/); kpeek keeps the bytes so that snapshots copy them verbatim.
struct kp_cpu_notes {
	uint8_t *prstatus;	// owned, NULL if none
	size_t prstatus_len;
	uint64_t prstatus_at;	// file offset of the note, for messages
	uint8_t *qemu;		// owned, NULL if none
	size_t qemu_len;
	uint64_t qemu_at;
};

struct kp_source {
	const char *kind;		// static string, e.g. "ELF vmcore (physical only)"
	bool live;			// /proc/kcore
	char *vmcoreinfo;		// owned, NUL-terminated, NULL if absent
	size_t vmcoreinfo_size;
	char *vmcoreinfo_other;		// a second, different VMCOREINFO note (owned)
	size_t vmcoreinfo_other_size;
	struct kp_cpu_notes *cpus;	// owned; the i-th PRSTATUS and QEMU notes
	size_t ncpus;			// are CPU i's
	// What the file says the architecture is: the ELF e_machine (0 if not
	// an ELF core), the kdump header's utsname.machine ("" if none).
	unsigned elf_machine;
	char machine[65];
	bool has_phys_base;		// kdump sub-header phys_base
	uint64_t phys_base;
	// Physical ranges a kpeek snapshot could not read from its source and
	// recorded as lost ("KPEEK" note KP_NT_LOST): holes, never data.
	struct kp_range *lost;		// owned
	size_t nlost;
	// One file of a split dump (makedumpfile --split): the page frames it
	// holds, [split_start, split_end) of split_max in all (kdump.c). Its
	// segments hold those frames only; kp_source_add_elsewhere() adds the
	// rest of its RAM as errors that name the part.
	bool split;
	uint64_t split_start, split_end, split_max, split_page_size;
	void *priv;			// format private state
	void (*destroy)(void *priv);
};

struct kp_source_ops {
	const char *name;
	// head holds the first len bytes of the file (len may be short).
	bool (*probe)(const uint8_t *head, size_t len);
	// Adds the source's segments to mem and fills src. On failure, leaves
	// nothing to free in src.
	struct kp_error *(*open)(struct kp_file *file, struct kp_memory *mem,
				 struct kp_source *src);
};

// Opens file as the first format of the list (formats.c) whose probe()
// accepts its head: adds its segments to mem and fills src. KP_ERR_FORMAT
// naming the first bytes when no format does.
struct kp_error *kp_source_probe_open(struct kp_file *file, struct kp_memory *mem,
				      struct kp_source *src);

extern const struct kp_source_ops kp_elf_core_ops;	// elf_core.c
extern const struct kp_source_ops kp_kdump_ops;		// kdump.c (incl. flattened)
extern const struct kp_source_ops kp_lime_ops;		// lime.c (LiME, AVML)
// raw.c: the whole file is physical memory from base (no probe: --raw).
struct kp_error *kp_raw_open(struct kp_file *file, uint64_t base, struct kp_memory *mem,
			     struct kp_source *src);

// The note kpeek's snapshots write when pages of their source could not be
// read: name "KPEEK", desc the lost physical ranges as (start, end) pairs
// of little-endian u64.
#define KP_NOTE_NAME "KPEEK"
#define KP_NT_LOST 1
#define KP_MAX_LOST (1u << 20)	// ranges a note may list

// Parses an ELF note area (as in PT_NOTE or a kdump notes region): collects
// VMCOREINFO and the CPU notes (NT_PRSTATUS, QEMU) into src. Malformed notes
// fail with KP_ERR_FORMAT naming what (at 'where' + offset) was wrong.
// Also kpeek's own lost-ranges note (src->lost).
struct kp_error *kp_notes_parse(const uint8_t *buf, size_t len, const char *where,
				uint64_t file_offset, struct kp_source *src);
// A page a kpeek snapshot could not read from its source: a read of the
// segment fails naming it (a kp_read_fn; arg the file's path, offset the
// physical address). Added before the dump's own segments, it wins over
// what the file has there.
struct kp_error *kp_source_read_lost(void *buf, uint64_t address, size_t count, uint64_t offset,
				     void *arg);
// A split dump's part (src->split): its RAM outside its own frames, as
// segments whose reads fail saying the frames are in another part. Added
// after every part's own segments, they are what no part given holds.
// Nothing for other sources.
struct kp_error *kp_source_add_elsewhere(struct kp_source *src, struct kp_memory *mem);
// A segment of kp_source_read_lost() per lost range, physical.
struct kp_error *kp_source_add_lost(const struct kp_source *src, struct kp_memory *mem, const char *path);
void kp_source_deinit(struct kp_source *src);
// Frees the CPU notes (kcore's NT_PRSTATUS is a placeholder, not CPU state).
void kp_source_drop_cpus(struct kp_source *src);
// Test hook: decompressed-page cache hits and misses of a kdump source.
void kp_kdump_cache_stats(const struct kp_source *src, uint64_t *hits_ret,
			  uint64_t *misses_ret);

#endif
