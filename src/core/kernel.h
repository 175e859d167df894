// The kernel handle: one memory source with its address translation, symbols
// and (lazily) BTF. Library-internal; the public API is in kpeek.h.
#ifndef KP_KERNEL_H
#define KP_KERNEL_H

#include <kpeek/kpeek.h>
#include "io/file.h"
#include "io/memory.h"
#include "format/source.h"
#include "symbols/symtab.h"
#include "format/vmcoreinfo.h"

struct btf;
struct kp_pgtable;
struct kp_btf_types;

// x86-64 layout facts (arch/x86/include/asm/page_64_types.h).
#define KP_START_KERNEL_MAP 0xffffffff80000000ULL	// __START_KERNEL_map
#define KP_KERNEL_IMAGE_SIZE (1ULL << 30)		// KERNEL_IMAGE_SIZE with KASLR
#define KP_DEFAULT_KERNEL_START 0xffffffff81000000ULL	// _text without KASLR

struct kp_kernel {
	struct kp_file *file;
	struct kp_memory *mem;
	struct kp_source src;
	struct kp_vmcoreinfo *vmcoreinfo;	// NULL if the source has none
	struct kp_pgtable *pgtable;		// NULL when virtual segments suffice (kcore)
	struct kp_symtab *symtab;

	bool has_kaslr_offset;
	uint64_t kaslr_offset;
	bool has_phys_base;
	uint64_t phys_base;
	int paging_levels;
	bool has_page_offset_base;
	uint64_t page_offset_base;
	bool has_pgd;
	uint64_t pgd_phys;
	char *release;
	char *banner;
	char symbol_sources[128];
	char vmcoreinfo_origin[160];		// "dump note", "found in memory at ..."
	char kaslr_check[192];			// locate.c: "verified against IDT and CR3 of CPU 0"

	// BTF, loaded on first use by kp_kernel_btf().
	struct btf *btf;
	char *btf_source;
	struct kp_error *btf_error;		// remembered failure of the first load
	struct kp_btf_types *types;		// btf.c's caches (resolver, synthesized types)
	char *btf_path;				// --btf override
};

// BTF of the kernel, loading it on first use (btf.c).
struct kp_error *kp_kernel_btf(struct kp_kernel *kernel, struct btf **ret);
void kp_btf_types_destroy(struct kp_btf_types *types);

#endif
