// SPDX-License-Identifier: MIT
// Loaded modules: the modules list (modules.c), their symbols
// (module_symbols.c) and BTF (module_btf.c), and every module the kernel
// knows of from the list, mod_tree and sysfs (module_map.c).
#ifndef KP_LINUX_MODULE_H
#define KP_LINUX_MODULE_H

#include <kpeek/kpeek.h>

#include "types/layout.h"

// struct module as the module walkers read it.
enum kp_lx_module_member {
	KP_LX_M_LIST,		// struct list_head list
	KP_LX_M_NAME,		// char name[MODULE_NAME_LEN]
	KP_LX_M_STATE,		// enum module_state
	KP_LX_M_REFCNT,		// atomic_t (CONFIG_MODULE_UNLOAD)
	// <= 6.3: core_layout / init_layout (/ data_layout, 6.2+ where
	// CONFIG_ARCH_WANTS_MODULES_DATA_IN_VMALLOC) struct module_layout;
	// 6.4+: mem[MOD_MEM_NUM_TYPES] struct module_memory (commit
	// ac3b43283923).
	KP_LX_M_MEM,
	KP_LX_M_CORE_LAYOUT,
	KP_LX_M_INIT_LAYOUT,
	KP_LX_M_DATA_LAYOUT,
	KP_LX_M_SOURCE_LIST,	// modules using this one (CONFIG_MODULE_UNLOAD)
	KP_LX_M_INIT,
	KP_LX_M_EXIT,
	KP_LX_M_TAINTS,		// unsigned long, TAINT_* bits
	KP_LX_M_KALLSYMS,	// struct mod_kallsyms * (CONFIG_KALLSYMS)
	KP_LX_M_SYMS,		// exported symbols: const struct kernel_symbol *
	KP_LX_M_NUM_SYMS,
	KP_LX_M_N
};
extern const struct kp_struct_spec kp_lx_module_spec;

#define KP_LX_MODULE_REGIONS 8

// struct module with what is derived from it: where each memory region's
// {base, size} lies in it, whatever the kernel's layout.
struct kp_lx_module_layout {
	const struct kp_struct_layout *mod;	// of kp_lx_module_spec
	// Every region (their sizes add up to /proc/modules' size; base is the
	// first's, core text / MOD_TEXT): offsets in struct module of the base
	// pointer and of the unsigned int size.
	unsigned nregions;
	uint64_t region_base[KP_LX_MODULE_REGIONS], region_size[KP_LX_MODULE_REGIONS];
	// The core and init text, whose ends bound the size of a module's last
	// functions as the kernel's %pS does.
	unsigned ntext;
	uint64_t text_base[2], text_size[2];
	// /proc/modules' used-by column: mod->source_list of struct
	// module_use, linked by their source_list, naming the user in ->source.
	bool has_uses;
	uint64_t use_source_list, use_source;
};

struct kp_error *kp_lx_module_layout(struct kp_kernel *kernel, struct kp_lx_module_layout *ret);
// kp_module_iter_create() with an explicit layout and list head.
struct kp_error *kp_lx_module_iter_create(struct kp_kernel *kernel,
					  const struct kp_lx_module_layout *l, uint64_t modules_head,
					  struct kp_module_iter **ret);

// ---------------------------------------------------------------- module BTF

struct kp_types;
// Adds every loaded module's BTF to types (module_btf.c); true if any type
// was added. Installed with kp_kernel_set_late_types() by kp_kernel_open().
bool kp_lx_module_btf(struct kp_kernel *kernel, struct kp_types *types);

// ---------------------------------------------------------------- module symbols

// The symbols of every loaded module, as /proc/kallsyms lists them (each
// module's kallsyms symtab, strtab and typetab; upper case for what the
// module exports), added to st with the module's name; *added: how many.
struct kp_symtab;
struct kp_error *kp_lx_module_symbols(struct kp_kernel *kernel, struct kp_symtab *st,
				      size_t *added);
// One module's symbols (its struct module at mod, named name) into st:
// for a module missing from the modules list (module_map.c).
struct kp_error *kp_lx_module_symbols_at(struct kp_kernel *kernel, uint64_t mod,
					 const char *name, struct kp_symtab *st, size_t *added);

// ---------------------------------------------------------------- module map

struct kp_lx_range {
	uint64_t start, end;
};

// A module as seen from the modules list, mod_tree and sysfs (module_map.c).
struct kp_lx_mod {
	uint64_t address;		// struct module *
	char name[64];
	int32_t state;			// MODULE_STATE_*
	bool in_list, in_tree, in_sysfs;
	unsigned nranges;
	struct kp_lx_range ranges[KP_LX_MODULE_REGIONS];	// its memory regions
};

struct kp_lx_module_map {
	struct kp_lx_mod *mods;
	size_t n, cap;
	bool have_tree, have_sysfs;	// whether those views were read
	char tree_why[160], sysfs_why[160];	// why not
	struct kp_symtab *hidden_syms;	// symbols of modules not in the list
};

// Fails only when the modules list itself cannot be walked.
struct kp_error *kp_lx_module_map_create(struct kp_kernel *kernel, struct kp_lx_module_map **ret);
void kp_lx_module_map_destroy(struct kp_lx_module_map *m);
// The module whose memory holds address; NULL if none (m may be NULL).
const struct kp_lx_mod *kp_lx_module_map_find(const struct kp_lx_module_map *m, uint64_t address);
// The symbol at address in a module missing from the list.
bool kp_lx_module_map_symbol(const struct kp_lx_module_map *m, uint64_t address,
			     struct kp_symbol *ret);

#endif
