// SPDX-License-Identifier: MIT
// The kernel handle inside the library: one memory source with its
// architecture, address translation, symbols and (loaded on first use)
// types. struct kp_kernel is defined in kernel_impl.h, for the files of
// core/ that implement the handle; the rest of the library reaches its
// parts through these accessors and the public API.
#ifndef KP_CORE_KERNEL_H
#define KP_CORE_KERNEL_H

#include <kpeek/kpeek.h>

struct kp_arch;
struct kp_arch_ctx;
struct kp_memory;
struct kp_source;
struct kp_symtab;
struct kp_types;
struct kp_vmcoreinfo;

struct kp_memory *kp_kernel_memory(struct kp_kernel *kernel);
const struct kp_source *kp_kernel_source(struct kp_kernel *kernel);
const struct kp_arch *kp_kernel_arch(struct kp_kernel *kernel);
struct kp_arch_ctx *kp_kernel_arch_ctx(struct kp_kernel *kernel);
struct kp_symtab *kp_kernel_symtab(struct kp_kernel *kernel);
// NULL if the source has none (and none was found or reconstructed).
const struct kp_vmcoreinfo *kp_kernel_vmcoreinfo(struct kp_kernel *kernel);
// The kernel's types, loading its BTF on first use (--btf file,
// /sys/kernel/btf/vmlinux live, or the .BTF section read from memory). A
// failed load is remembered: every later call returns a copy of its error.
struct kp_error *kp_kernel_types(struct kp_kernel *kernel, struct kp_types **ret);
// uname -r of the kernel, NULL if unknown (kp_kernel_get_info() without
// loading the module symbols it counts).
const char *kp_kernel_release(struct kp_kernel *kernel);
// KERNELOFFSET (KASLR); false if unknown.
bool kp_kernel_kaslr_offset(struct kp_kernel *kernel, uint64_t *ret);
uint64_t kp_kernel_page_size(struct kp_kernel *kernel);
// Bytes of memory the source holds (physical ranges, else virtual ones):
// the bound for anything a kernel structure in it may claim to contain.
uint64_t kp_kernel_memory_bytes(struct kp_kernel *kernel);
// Addresses in the kernel's half of the address space (worth symbolizing).
bool kp_kernel_is_kernel_address(struct kp_kernel *kernel, uint64_t address);
// kp_read() of a value of at most KP_READ_WHOLE_MAX bytes that a live
// kernel may be writing: read until two reads agree, so that it is never
// half old, half new (a dump's is read once).
#define KP_READ_WHOLE_MAX 16
struct kp_error *kp_kernel_read_whole(struct kp_kernel *kernel, uint64_t address, void *buf,
				      size_t len);
// Up to size bytes from the virtual address, stopping at the first byte
// that cannot be read (or after a NUL if stop_at_nul); returns the count.
size_t kp_kernel_read_partial(struct kp_kernel *kernel, uint64_t address, void *buf,
			      size_t size, bool stop_at_nul);
// nr_cpu_ids: CPUs are numbered below it (0 if it cannot be read).
uint32_t kp_kernel_nr_cpu_ids(struct kp_kernel *kernel);
// NULL if cpu is a possible CPU of the kernel (below nr_cpu_ids and set in
// __cpu_possible_mask where those can be read), else KP_ERR_INVALID saying
// which CPUs exist.
struct kp_error *kp_kernel_check_cpu(struct kp_kernel *kernel, uint64_t cpu);

// The core kernel's sections (sections.c), from their marker symbols.
enum kp_section {
	KP_SEC_NONE,		// not in the core kernel's image (or unknown)
	KP_SEC_TEXT,		// _stext.._etext
	KP_SEC_RODATA,		// __start_rodata..__end_rodata
	KP_SEC_DATA,		// _sdata.._edata
	KP_SEC_INIT,		// __init_begin..__init_end (freed after boot)
	KP_SEC_BSS,		// __bss_start..__bss_stop
	KP_NSECTIONS,
};
// The section address lies in; KP_SEC_NONE for module memory, the direct
// map or a kernel whose markers are unknown.
enum kp_section kp_kernel_section(struct kp_kernel *kernel, uint64_t address);
// A core-kernel symbol's type letter from the section its address lies in
// where kallsyms calls a variable a function ('T'/'t' in data, rodata or
// bss: 7.x x86-64); a section's first address is left alone (the previous
// section's end marker, _etext at __start_rodata on 6.12, sits there).
void kp_kernel_section_type(struct kp_kernel *kernel, struct kp_symbol *sym);
// "text", "rodata", "data", "init", "bss"; NULL for KP_SEC_NONE.
const char *kp_section_name(enum kp_section section);
// The per-CPU section (__per_cpu_start..__per_cpu_end: the "addresses" of
// per-CPU variables, 0-based on x86-64, inside the init area elsewhere);
// false when its markers are unknown.
bool kp_kernel_percpu_section(struct kp_kernel *kernel, uint64_t *start_ret,
			      uint64_t *end_ret);

// kp_kernel_open() without what the layers above add (linux/open.c).
struct kp_error *kp_kernel_open_core(const struct kp_open_options *opts,
				     struct kp_kernel **ret);

// Symbols a higher layer adds to st when a lookup first misses (module
// symbols read out of memory), *added how many; name says what they are in
// info's list of symbol sources. Ignored when a kallsyms text gave the
// symbols. On failure the symbols added stay; the source list says so.
typedef struct kp_error *kp_kernel_late_symbols_fn(struct kp_kernel *kernel,
						   struct kp_symtab *st, size_t *added);
void kp_kernel_set_late_symbols(struct kp_kernel *kernel, kp_kernel_late_symbols_fn *fn,
				const char *name);
// The types a higher layer can add when a type name misses in the kernel's
// BTF (module BTF): run at most once per handle, with its types; true if
// it added any.
struct kp_types;
typedef bool kp_kernel_late_types_fn(struct kp_kernel *kernel, struct kp_types *types);
void kp_kernel_set_late_types(struct kp_kernel *kernel, kp_kernel_late_types_fn *fn);
// State a higher layer builds once per handle and keeps until it is
// destroyed (the stack unwinder of linux/stack.c): one slot per user.
enum kp_kernel_slot_id {
	KP_KERNEL_SLOT_STACK,
	KP_KERNEL_SLOT_MEMMAP,	// linux/mm/memmap.c
	KP_KERNEL_SLOT_PERCPU,	// linux/mm/percpu.c
	KP_KERNEL_NSLOTS,
};
void *kp_kernel_slot(struct kp_kernel *kernel, enum kp_kernel_slot_id id);
// Replaces (destroying) what the slot held; destroy(obj) runs with the handle.
void kp_kernel_set_slot(struct kp_kernel *kernel, enum kp_kernel_slot_id id, void *obj,
			void (*destroy)(void *obj));
// The error for a variable a walk needs and the symbols lack: what (e.g.
// "no symbol 'slab_caches'"), and on a kernel whose kallsyms names functions
// only (no CONFIG_KALLSYMS_ALL) that reason and its remedy, as
// kp_symbol_by_name() says.
struct kp_error *kp_kernel_no_symbol(struct kp_kernel *kernel, const char *what);
// An address lookup without an error to build (NULL-free hot paths).
bool kp_kernel_symbol_at(struct kp_kernel *kernel, uint64_t address, struct kp_symbol *ret);

// A kernel handle over parts a caller built (unit tests, fuzzers): it takes
// mem and st (destroyed with the handle, also on failure), uses arch with
// no VMCOREINFO and no CPU notes, and BTF from btf_path (NULL: from the
// __start_BTF/__stop_BTF symbols in mem).
struct kp_error *kp_kernel_from_parts(struct kp_memory *mem, struct kp_symtab *st,
				      const struct kp_arch *arch, const char *btf_path,
				      struct kp_kernel **ret);
// Marks such a handle as a live kernel's (the walkers then read memory that
// changes under them: tests of their retries).
void kp_kernel_set_live(struct kp_kernel *kernel, bool live);

#endif
