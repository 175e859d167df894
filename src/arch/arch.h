// SPDX-License-Identifier: MIT
// The architecture interface: everything kpeek knows about one CPU
// architecture and how Linux lays itself out on it, behind one struct
// kp_arch (modelled on drgn's struct drgn_architecture_info). An
// architecture is a folder src/arch/NAME/ that defines one; nothing outside
// src/arch/ names a register, a paging constant or an address-space layout.
//
// The architecture is chosen once when a kernel is opened: from the ELF
// e_machine of a core, the machine field of a kdump header, the keys of
// VMCOREINFO, or the caller's --arch (core/detect_arch.c).
#ifndef KP_ARCH_ARCH_H
#define KP_ARCH_ARCH_H

#include <kpeek/kpeek.h>

#include "io/memory.h"

struct kp_source;
struct kp_symtab;
struct kp_vmcoreinfo;

// General-purpose registers of one CPU, as a PRSTATUS note holds them.
#define KP_MAX_REGS 40
struct kp_regs {
	uint64_t pc, sp, fp;	// fp: the frame pointer register (rbp, x29)
	unsigned nregs;		// valid entries of r[], named by kp_arch.reg_names
	uint64_t r[KP_MAX_REGS];
};

// The nregs 64-bit registers of struct elf_prstatus's pr_reg (byte 112 on
// every 64-bit architecture; include/uapi/linux/elfcore.h), with pc, sp
// and fp taken from the indexes given. False if desc is too short.
bool kp_prstatus_regs(const uint8_t *desc, size_t len, unsigned nregs, unsigned pc,
		      unsigned sp, unsigned fp, struct kp_regs *ret);

// What kp_arch.create() is given: the memory and notes of the source, and
// its VMCOREINFO (found or reconstructed), which may be NULL.
struct kp_arch_input {
	struct kp_memory *mem;
	const struct kp_source *src;
	const struct kp_vmcoreinfo *vmcoreinfo;
};

// A C type for a well-known global whose BTF has no VAR (lang/symbol_type.c):
// "A|B" tries A, then B; "[]" takes its length from the symbol's size.
struct kp_var_type {
	const char *name;
	const char *type;
};

// What locating the kernel in a dump without a VMCOREINFO note found.
struct kp_locate_result {
	// VMCOREINFO text (malloc'ed, NUL-terminated): the kernel's own
	// vmcoreinfo page found in memory, or text reconstructed from the CPU
	// registers and the kernel image that kernel_open reads as if it were
	// the note.
	char *vmcoreinfo;
	size_t vmcoreinfo_size;
	char origin[160];	// "found in memory at phys 0x...", "reconstructed from ..."
	bool found;		// the text is a page found in memory, ...
	uint64_t pa;		// ... at this physical address
	char verified[192];	// what it was checked against, or "not verified: ..."
};

// The first branch of a function (kp_arch.entry_branch): what an inline
// hook puts there.
enum kp_branch_kind {
	KP_BRANCH_JUMP,		// jmp / b
	KP_BRANCH_CALL,		// call / bl
	KP_BRANCH_TRAP,		// int3 / brk: a breakpoint (kprobes put one there)
};

struct kp_branch {
	enum kp_branch_kind kind;
	uint64_t at;		// address of the instruction
	uint64_t target;	// where it goes (jumps and calls)
	bool indirect;		// target is the address of the pointer it jumps through
	const char *insn;	// "jmp rel32", "movabs+jmp", "b", "ldr+br", ...
};

struct kp_arch_ctx;	// an architecture's state for one kernel
struct kp_locator;	// an architecture's view of the CPU registers of a dump
struct kp_unwind_env;	// arch/unwind.h
struct kp_unwind_frame;
struct kp_unwinder;
struct kp_uspace;	// a process's page tables, as its architecture walks them

struct kp_arch {
	const char *name;		// "x86_64", "arm64"
	uint16_t elf_machine;		// EM_X86_64, EM_AARCH64
	// Names of the machine in utsname / kdump headers ("x86_64"), NULL-ended.
	const char *const *uts_machines;
	// Whether VMCOREINFO text came from this architecture's kernel (by the
	// keys only it writes).
	bool (*vmcoreinfo_is_mine)(const struct kp_vmcoreinfo *vi);

	// ---- registers
	// Registers from an NT_PRSTATUS note's desc; false if it is too short.
	bool (*prstatus_regs)(const uint8_t *desc, size_t len, struct kp_regs *ret);
	const char *const *reg_names;	// names of kp_regs.r[i]

	// ---- one kernel
	// Reads the layout (page tables, kernel image, direct map) from the
	// VMCOREINFO and CPU registers of in, and installs the virtual-to-
	// physical translator in in->mem when the source has physical memory.
	struct kp_error *(*create)(const struct kp_arch_input *in, struct kp_arch_ctx **ret);
	void (*destroy)(struct kp_arch_ctx *ctx);
	// Called once the symbols are loaded: facts kept in kernel variables.
	void (*symbols_loaded)(struct kp_arch_ctx *ctx, struct kp_symtab *st);
	uint64_t (*page_size)(const struct kp_arch_ctx *ctx);
	// Walks the page tables for vaddr (KP_ERR_UNSUPPORTED without them);
	// fills every step's name and flag names. Unmapped is ret->present false.
	struct kp_error *(*vtop)(struct kp_arch_ctx *ctx, uint64_t vaddr, struct kp_vtop *ret);
	// Addresses of the kernel's half of the address space (pointers worth
	// symbolizing).
	bool (*kernel_address)(const struct kp_arch_ctx *ctx, uint64_t vaddr);
	// The virtual range the kernel image can occupy (for scans of it).
	void (*image_range)(const struct kp_arch_ctx *ctx, uint64_t *start, uint64_t *end);
	// Link-time address of _text without KASLR (for System.map files when
	// VMCOREINFO gives no KERNELOFFSET).
	uint64_t link_text;
	// Rodata starts at _etext rounded up to this: between them, memory the
	// kernel frees after boot (x86-64) and reuses for anything.
	uint64_t rodata_align;
	// Direct-map virtual address of physical paddr; false if unknown.
	bool (*phys_to_virt)(const struct kp_arch_ctx *ctx, uint64_t paddr, uint64_t *ret);
	// Where the kernel image is mapped: virtual start and its physical address.
	bool (*image_map)(const struct kp_arch_ctx *ctx, uint64_t *vaddr, uint64_t *paddr);
	// The area of the kernel's address space vaddr lies in ("vmalloc",
	// "modules", "fixmap"...) and its bounds [*start, *end); NULL if none
	// the architecture knows (the direct map and the memory map are
	// found without it). NULL where the architecture names none.
	const char *(*region)(const struct kp_arch_ctx *ctx, uint64_t vaddr, uint64_t *start,
			      uint64_t *end);
	// Facts for `kpeek info` (struct kp_fact of kpeek.h); *ret owned by ctx.
	size_t (*facts)(const struct kp_arch_ctx *ctx, const struct kp_fact **ret);

	// ---- dumps without VMCOREINFO (see core/locate.c)
	// What the CPU registers of src say (page-table root, a known handler);
	// installs a translator into mem for the duration. An error says why
	// the registers cannot be used.
	struct kp_error *(*locator_create)(struct kp_memory *mem, const struct kp_source *src,
					   struct kp_locator **ret);
	void (*locator_destroy)(struct kp_locator *l);
	// NULL if a VMCOREINFO text found in memory agrees with the registers
	// (*verified_ret says against what), else why not.
	struct kp_error *(*locator_check)(struct kp_locator *l, const struct kp_open_options *opts,
					  const char *text, size_t len, char *verified,
					  size_t verified_size);
	// Reconstructs VMCOREINFO from the registers and the kernel image.
	struct kp_error *(*locator_derive)(struct kp_locator *l, const struct kp_open_options *opts,
					   struct kp_locate_result *ret);

	// ---- stacks (arch/unwind.h); NULL where kpeek cannot unwind
	// An unwinder for one kernel: reads what it needs (unwind tables,
	// layouts) through env, which outlives it.
	struct kp_error *(*unwinder_create)(const struct kp_arch_ctx *ctx,
					    const struct kp_unwind_env *env,
					    struct kp_unwinder **ret);
	void (*unwinder_destroy)(struct kp_unwinder *u);
	// The innermost frame of a task switched out by the scheduler, from
	// the context it saved (x86-64: thread.sp; arm64: thread.cpu_context).
	struct kp_error *(*unwind_sleeping)(struct kp_unwinder *u, uint64_t task,
					    struct kp_unwind_frame *ret);
	// Replaces *f by its caller's frame; at the end of the stack f stays
	// and *end_ret is set (KP_UNWIND_END). An error says why the stack
	// cannot be followed further (corrupt, unreadable).
	struct kp_error *(*unwind_step)(struct kp_unwinder *u, struct kp_unwind_frame *f,
					const char **end_ret);

	// ---- user memory (a process's page tables); NULL where kpeek cannot
	// A walker of the user half of the address space whose top-level
	// table is at physical root_pa (the process's mm->pgd).
	struct kp_error *(*uspace_create)(struct kp_arch_ctx *ctx, uint64_t root_pa,
					  struct kp_uspace **ret);
	void (*uspace_destroy)(struct kp_uspace *u);
	// As vtop for a user address: unmapped is ret->present false, with the
	// last entry read in the last step (non-zero: swapped out, PROT_NONE or
	// a migration entry; zero: never mapped there). An address outside the
	// user half is KP_ERR_INVALID.
	struct kp_error *(*uspace_walk)(struct kp_uspace *u, uint64_t vaddr, struct kp_vtop *ret);
	// The VMA every process shows after its own (get_gate_vma(): x86-64's
	// vsyscall page, unless vsyscall=none) and the name /proc gives it;
	// false if there is none. NULL where the architecture has no gate VMA.
	bool (*gate_vma)(struct kp_arch_ctx *ctx, uint64_t *vma_ret, const char **name_ret);

	// ---- kernel objects
	const char *const *syscall_tables;	// symbol names, NULL-ended
	const char *const *syscall_dispatchers;	// functions that switch on the number
	// A symbol a syscall table entry may point at ("__x64_sys_read").
	bool (*syscall_handler_name)(const char *name);
	// For a kallsyms without variables (core/derive_refs.c): functions
	// whose code forms the native syscall table's address, and entries
	// (number, handler) it must hold; NULL-ended, NULL if none.
	const char *const *syscall_table_users;
	const struct kp_syscall_probe {
		unsigned nr;
		const char *handler;
	} *syscall_probes;
	// Calls fn for every direct call/jump target in code (at vaddr addr).
	// Targets may be false positives where the architecture cannot decode
	// instruction boundaries; the caller keeps those that start a symbol.
	void (*call_targets)(const uint8_t *code, size_t size, uint64_t addr,
			     void (*fn)(uint64_t target, uint64_t at, void *arg), void *arg);
	// Calls fn for every address code forms from its own location (at
	// vaddr addr): the variables a function refers to; with to_exit, up to
	// its first return or tail call only (a function of a few
	// instructions). arm64: an ADRP and the ADD or LDR that completes it on
	// the same register; x86-64: operands relative to the next
	// instruction and absolute 32-bit ones. Targets may be
	// wrong (arm64: a register reused between the two; x86-64: a byte
	// inside another instruction taken for one): the caller validates
	// each by what it points at.
	void (*data_refs)(const uint8_t *code, size_t size, uint64_t addr, bool to_exit,
			  void (*fn)(uint64_t target, void *arg), void *arg);
	// For a kallsyms of functions only: the start of the kernel image
	// (_text) found below _stext; NULL where kallsyms always has _text.
	bool (*text_start)(const struct kp_arch_ctx *ctx, uint64_t stext, uint64_t *ret);
	// ---- integrity checks (src/checks/)
	// The first branch of the function whose first size bytes are code (at
	// addr), past what the kernel itself patches into every function entry
	// (x86-64: endbr64 and the 5-byte fentry nop; arm64: bti, paciasp,
	// nops and ftrace's "mov x9, x30"); false if it starts with no branch.
	bool (*entry_branch)(const uint8_t *code, size_t size, uint64_t addr,
			     struct kp_branch *ret);
	// The interrupt vector table kpeek can check: its symbol (NULL if
	// none), entry count and size, and the handler an entry points at
	// (false if the entry is not present).
	const char *vector_table;
	unsigned vector_count, vector_size;
	bool (*vector_handler)(const uint8_t *entry, uint64_t *ret);
	// A symbol whose code vectors the kernel never sets up after boot keep
	// pointing at (freed init text), NULL if none.
	const char *vector_boot_handlers;
	// Curated types of arch-specific globals (symbol_type.h), NULL-ended.
	const struct kp_var_type *var_types;
};

extern const struct kp_arch kp_arch_x86_64;
extern const struct kp_arch kp_arch_arm64;

// Every architecture kpeek supports, NULL-ended.
extern const struct kp_arch *const kp_arches[];

const struct kp_arch *kp_arch_by_name(const char *name);
const struct kp_arch *kp_arch_by_elf_machine(unsigned machine);
const struct kp_arch *kp_arch_by_uts_machine(const char *machine);
const struct kp_arch *kp_arch_by_vmcoreinfo(const struct kp_vmcoreinfo *vi);
// A name for an ELF machine number, for messages ("aarch64", "ppc64").
const char *kp_elf_machine_name(unsigned machine);

// Appends word to the space-separated flag list in buf (size bytes, len
// used): the flag strings of every kp_vtop step, on its hot path (no
// printf). A word that does not fit is left out.
void kp_flags_append(char *buf, size_t size, size_t *len, const char *word);

#endif
