// Memory sources (dump formats) behind one ops table chosen by probe().
#ifndef KP_SOURCE_H
#define KP_SOURCE_H

#include <kpeek/kpeek.h>
#include "io/file.h"
#include "io/memory.h"

// Register state of one CPU from NT_PRSTATUS / QEMU notes.
struct kp_cpu_state {
	bool has_prstatus;
	uint64_t rip, rsp, cs;
	bool has_control;	// from a QEMU note
	uint64_t cr0, cr3, cr4;
	uint64_t idt_base, idt_limit;
	uint64_t gdt_base;
	uint64_t gs_base, kernel_gs_base;
};

struct kp_source {
	const char *kind;		// static string, e.g. "ELF vmcore (physical only)"
	bool live;			// /proc/kcore
	char *vmcoreinfo;		// owned, NUL-terminated, NULL if absent
	size_t vmcoreinfo_size;
	struct kp_cpu_state *cpus;	// owned
	size_t ncpus;
	bool has_phys_base;		// kdump sub-header phys_base
	uint64_t phys_base;
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

extern const struct kp_source_ops kp_elf_core_ops;	// elf_core.c
extern const struct kp_source_ops kp_kdump_ops;		// kdump.c (incl. flattened)
extern const struct kp_source_ops kp_lime_ops;		// lime.c (LiME, AVML)
// raw.c: the whole file is physical memory from base (no probe: --raw).
struct kp_error *kp_raw_open(struct kp_file *file, uint64_t base, struct kp_memory *mem,
			     struct kp_source *src);

// Parses an ELF note area (as in PT_NOTE or a kdump notes region): collects
// VMCOREINFO, NT_PRSTATUS and QEMU CPU state into src. Malformed notes fail
// with KP_ERR_FORMAT naming what (at 'where' + offset) was wrong.
struct kp_error *kp_notes_parse(const uint8_t *buf, size_t len, const char *where,
				uint64_t file_offset, struct kp_source *src);
void kp_source_deinit(struct kp_source *src);
// Test hook: decompressed-page cache hits and misses of a kdump source.
void kp_kdump_cache_stats(const struct kp_source *src, uint64_t *hits_ret,
			  uint64_t *misses_ret);

#endif
