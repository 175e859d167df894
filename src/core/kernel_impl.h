// SPDX-License-Identifier: MIT
// struct kp_kernel itself, for the files of core/ that implement the handle:
// kernel.c (accessors, BTF), kernel_open.c, kernel_read.c, kernel_info.c,
// symbols_load.c and symbols_lookup.c. Everything else reaches its parts
// through kernel.h's accessors and the public API.
#ifndef KP_CORE_KERNEL_IMPL_H
#define KP_CORE_KERNEL_IMPL_H

#include <string.h>

#include "core/kernel.h"
#include "format/source.h"

struct kp_kernel {
	struct kp_file *file;
	// The other parts of a split dump (file and src are the first).
	struct kp_file **part_files;
	struct kp_source *part_srcs;
	size_t nparts;
	char split[160];			// a part alone: what it holds, else ""
	struct kp_memory *mem;
	struct kp_source src;
	const struct kp_arch *arch;
	struct kp_arch_ctx *arch_ctx;
	struct kp_vmcoreinfo *vmcoreinfo;	// NULL if the source has none
	struct kp_symtab *symtab;

	bool has_kaslr_offset;
	uint64_t kaslr_offset;
	char *release;
	char *banner;
	char symbol_sources[128];
	// The kernel's kallsyms names functions only (CONFIG_KALLSYMS_ALL=n,
	// e.g. Debian's 6.1 arm64) and nothing else gave data symbols.
	bool no_data_symbols;
	char vmcoreinfo_origin[256];		// "dump note", "found in memory at ..."
	char kaslr_check[192];			// how the architecture checked the layout
	bool vmcoreinfo_ignored;
	// The vmcoreinfo page a scan found (locate.c), and the different one
	// it met first where the kernel's own vmcoreinfo_data points past that
	// (kernel_open.c): facts.c reports it as a disagreement.
	bool vmcoreinfo_found;
	uint64_t vmcoreinfo_pa;
	char *scan_first;
	size_t scan_first_size;
	uint64_t scan_first_pa;
	bool disagree_done;			// facts.c
	struct kp_disagreement *disagree;
	size_t ndisagree, disagree_cap;		// the source's note had no OSRELEASE

	// BTF, loaded on first use by kp_kernel_types().
	struct kp_types *types;
	struct kp_error *types_error;		// remembered failure of the first load
	char *btf_path;				// --btf override
	bool force;				// use btf_path unchecked

	// Symbols a higher layer reads when a lookup first needs them (module
	// symbols out of memory: linux/open.c). Not when a kallsyms text
	// (/proc/kallsyms, --kallsyms) gave them already.
	kp_kernel_late_symbols_fn *late_symbols;
	kp_kernel_late_types_fn *late_types;
	const char *late_name;
	bool late_done, text_symbols;

	// The core kernel's sections, from their marker symbols (sections.c),
	// found on first use.
	bool sections_loaded;
	uint64_t section_start[KP_NSECTIONS], section_end[KP_NSECTIONS];

	// State a higher layer keeps for this handle (kp_kernel_slot()).
	struct {
		void *obj;
		void (*destroy)(void *obj);
	} slots[KP_KERNEL_NSLOTS];
};

// symbols_load.c: the symbol sources read at open, in their order, then
// the table finalized; NULL if every one that must be there was.
struct kp_error *kp_kernel_load_symbols(struct kp_kernel *kernel,
					const struct kp_open_options *opts);
// symbols_load.c: for a kallsyms of functions only (no_data_symbols), the
// variables kpeek's commands start from, found by their shape with the BTF.
struct kp_error *kp_kernel_derive_symbols(struct kp_kernel *kernel);
// symbols_load.c: ends a source of symbols (the next ones are another) and
// adds name to the list info shows.
void kp_kernel_add_symbol_source(struct kp_kernel *kernel, const char *name);
// symbols_lookup.c: loads the late symbols (kp_kernel_set_late_symbols())
// once; true if that added any.
bool kp_kernel_load_late_symbols(struct kp_kernel *kernel);

// split.c: the parts of a split dump (k->src and k->part_srcs) are one
// dump and cover every page frame once.
struct kp_error *kp_split_check(struct kp_kernel *k);

void kp_kernel_disagreements_free(struct kp_kernel *kernel);

#define KP_BANNER_PREFIX "Linux version "
// The release in a banner "Linux version RELEASE (...) ...": its *len
// bytes start at the pointer returned; NULL if banner is not one.
static inline const char *kp_banner_release(const char *banner, size_t *len)
{
	size_t n = strlen(KP_BANNER_PREFIX);
	if (!banner || strncmp(banner, KP_BANNER_PREFIX, n))
		return NULL;
	*len = strcspn(banner + n, " ");
	return banner + n;
}

// A BTF file given by the user checked against the dump (side_check.c):
// KP_ERR_INVALID naming the file and what disagreed.
struct kp_error *kp_kernel_check_btf_file(struct kp_kernel *kernel, struct kp_types *types);

#endif
