// SPDX-License-Identifier: MIT
// x86-64: struct kp_arch for the kernel's 4- and 5-level paging layout
// (Documentation/arch/x86/x86_64/mm.rst): the kernel image at
// __START_KERNEL_map + (physical - phys_base), the direct map at
// page_offset_base, page tables rooted at init_top_pgt (swapper_pg_dir).
#include <elf.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arch/x86_64/pgtable.h"
#include "arch/x86_64/x86_64.h"
#include "format/vmcoreinfo.h"
#include "symbols/symtab.h"
#include "util/error.h"
#include "util/le.h"

// Kernel addresses live in the upper half of the address space; below it a
// "pointer" is a small number or a per-CPU offset.
#define KERNEL_HALF 0xffff800000000000ULL

enum { FACT_PHYS_BASE, FACT_LEVELS, FACT_PAGE_OFFSET, FACT_PGD, NFACTS };

#define FLAG_MEMO 64	// power of two

struct kp_arch_ctx {
	struct kp_memory *mem;
	bool has_phys_base;
	uint64_t phys_base;
	int levels;			// 4 or 5, 0 if unknown
	bool has_pgd;
	uint64_t pgd;			// physical address of the kernel's top table
	bool has_page_offset_base;
	uint64_t page_offset_base;	// start of the direct map
	uint64_t vmalloc_base;		// start of the vmalloc area, 0 if unknown
	struct kp_pgtable *pt;		// NULL without physical memory or pgd
	uint64_t gate_vma, vsyscall_mode;	// their symbols' addresses, 0 if none
	struct kp_fact facts[NFACTS];
	// Flag strings of recent entries: a translation's upper levels are
	// the same few entries again and again (kp_vtop's hot path).
	struct {
		uint64_t entry;
		int lvl;		// zeroed: entry 0 at level 0, whose flags are ""
		char flags[sizeof(((struct kp_vtop_step *)0)->flags)];
	} flag_memo[FLAG_MEMO];
};

static bool is_mine(const struct kp_vmcoreinfo *vi)
{
	uint64_t a;
	int64_t n;
	// arch/x86/kernel/crash_core_64.c: init_top_pgt (4.13+, init_level4_pgt
	// before), pgtable_l5_enabled (4.17+), phys_base; arm64 writes
	// kimage_voffset instead.
	return kp_vmcoreinfo_symbol(vi, "init_top_pgt", &a) ||
	       kp_vmcoreinfo_symbol(vi, "init_level4_pgt", &a) ||
	       kp_vmcoreinfo_number(vi, "pgtable_l5_enabled", &n) ||
	       (kp_vmcoreinfo_number(vi, "phys_base", &n) &&
		!kp_vmcoreinfo_number(vi, "kimage_voffset", &n));
}

// The kernel image is mapped at __START_KERNEL_map + (physical - phys_base).
static bool image_pa(const struct kp_arch_ctx *c, uint64_t va, uint64_t *ret)
{
	if (!c->has_phys_base || va < X86_START_KERNEL_MAP ||
	    va - X86_START_KERNEL_MAP >= X86_KERNEL_IMAGE_SIZE)
		return false;
	*ret = va - X86_START_KERNEL_MAP + c->phys_base;
	return true;
}

static void read_vmcoreinfo(struct kp_arch_ctx *c, const struct kp_vmcoreinfo *vi)
{
	int64_t num;
	uint64_t addr;
	if (kp_vmcoreinfo_number(vi, "phys_base", &num)) {
		c->phys_base = (uint64_t)num;
		c->has_phys_base = true;
	}
	if (kp_vmcoreinfo_number(vi, "pgtable_l5_enabled", &num))
		c->levels = num ? 5 : 4;
	if ((kp_vmcoreinfo_symbol(vi, "init_top_pgt", &addr) ||
	     kp_vmcoreinfo_symbol(vi, "swapper_pg_dir", &addr)) &&
	    image_pa(c, addr, &c->pgd))
		c->has_pgd = true;
}

// CR4.LA57 of any CPU that runs with paging on.
static void levels_from_cpus(struct kp_arch_ctx *c, const struct kp_source *src)
{
	for (size_t i = 0; i < src->ncpus; i++) {
		struct x86_cpu cpu;
		if (kp_x86_qemu_cpu(&src->cpus[i], &cpu) && (cpu.cr0 & 1)) {
			c->levels = (cpu.cr4 & X86_CR4_LA57) ? 5 : 4;
			return;
		}
	}
}

static void fill_facts(struct kp_arch_ctx *c)
{
	c->facts[FACT_PHYS_BASE] = (struct kp_fact){
		"phys_base", KP_FACT_HEX, c->has_phys_base, c->phys_base, NULL };
	c->facts[FACT_LEVELS] = (struct kp_fact){
		"paging levels", KP_FACT_INT, c->levels != 0, (uint64_t)c->levels, NULL };
	c->facts[FACT_PAGE_OFFSET] = (struct kp_fact){
		"page_offset_base", KP_FACT_HEX, c->has_page_offset_base, c->page_offset_base, NULL };
	c->facts[FACT_PGD] = (struct kp_fact){
		"pgd", KP_FACT_HEX, c->has_pgd, c->pgd, NULL };
}

static struct kp_error *create(const struct kp_arch_input *in, struct kp_arch_ctx **ret)
{
	struct kp_arch_ctx *c = calloc(1, sizeof(*c));
	if (!c)
		return &kp_enomem;
	c->mem = in->mem;
	// The kdump sub-header's phys_base, until VMCOREINFO says better.
	if (in->src->has_phys_base) {
		c->phys_base = in->src->phys_base;
		c->has_phys_base = true;
	}
	if (in->vmcoreinfo)
		read_vmcoreinfo(c, in->vmcoreinfo);
	if (!c->levels)
		levels_from_cpus(c, in->src);
	if (c->has_pgd && kp_memory_has_segments(in->mem, KP_PHYS)) {
		if (!c->levels)
			c->levels = 4;
		struct kp_error *err = kp_pgtable_create(in->mem, c->pgd, c->levels, &c->pt);
		if (err) {
			free(c);
			return err;
		}
		kp_memory_set_translator(in->mem, kp_pgtable_translate, c->pt);
	}
	fill_facts(c);
	*ret = c;
	return NULL;
}

static void destroy(struct kp_arch_ctx *c)
{
	if (!c)
		return;
	kp_pgtable_destroy(c->pt);
	free(c);
}

static void symbols_loaded(struct kp_arch_ctx *c, struct kp_symtab *st)
{
	// The direct map's base, randomized by KASLR (4.8+).
	struct kp_symbol sym;
	uint64_t v;
	if (kp_symtab_find(st, "gate_vma", &sym))
		c->gate_vma = sym.address;
	if (kp_symtab_find(st, "vsyscall_mode", &sym))
		c->vsyscall_mode = sym.address;
	if (kp_symtab_find(st, "page_offset_base", &sym) &&
	    kp_ok(kp_memory_read(c->mem, KP_VIRT, sym.address, &v, sizeof(v)))) {
		c->page_offset_base = v;
		c->has_page_offset_base = true;
	}
	// The vmalloc area's base, randomized with the direct map's (4.8+).
	if (kp_symtab_find(st, "vmalloc_base", &sym) &&
	    kp_ok(kp_memory_read(c->mem, KP_VIRT, sym.address, &v, sizeof(v))))
		c->vmalloc_base = v;
	fill_facts(c);
}

static uint64_t page_size(const struct kp_arch_ctx *c)
{
	return X86_PAGE_SIZE;
}

// Flags of a page-table entry (Intel SDM vol. 3A, 4.5); bit 7 is PS above
// the PTE level and PAT in a PTE.
void kp_x86_pte_flags(uint64_t e, int lvl, char *buf, size_t size)
{
	static const struct {
		int bit;
		const char *name;
	} bits[] = {
		{ 0, "P" }, { 1, "RW" }, { 2, "US" }, { 3, "PWT" }, { 4, "PCD" },
		{ 5, "A" }, { 6, "D" }, { 7, "PS" }, { 8, "G" }, { 63, "NX" },
	};
	size_t len = 0;
	buf[0] = '\0';
	for (size_t i = 0; i < sizeof(bits) / sizeof(bits[0]); i++) {
		if (!(e >> bits[i].bit & 1))
			continue;
		kp_flags_append(buf, size, &len, bits[i].bit == 7 && lvl == 0 ? "PAT" : bits[i].name);
	}
}

static struct kp_error *vtop(struct kp_arch_ctx *c, uint64_t vaddr, struct kp_vtop *ret)
{
	if (!c->pt)
		return kp_error_create(KP_ERR_UNSUPPORTED,
				       "cannot translate 0x%" PRIx64 ": no page tables (the source has no physical memory or no VMCOREINFO with swapper_pg_dir)",
				       vaddr);
	struct kp_error *err = kp_pgtable_walk(c->pt, vaddr, ret);
	if (err)
		return err;
	for (int i = 0; i < ret->nsteps; i++) {
		uint64_t e = ret->step[i].entry;
		int lvl = ret->levels - 1 - i;
		unsigned m = (unsigned)((e ^ e >> 12 ^ e >> 24 ^ (uint64_t)lvl) & (FLAG_MEMO - 1));
		if (c->flag_memo[m].lvl != lvl || c->flag_memo[m].entry != e) {
			c->flag_memo[m].entry = e;
			c->flag_memo[m].lvl = lvl;
			kp_x86_pte_flags(e, lvl, c->flag_memo[m].flags, sizeof(c->flag_memo[m].flags));
		}
		memcpy(ret->step[i].flags, c->flag_memo[m].flags, sizeof(ret->step[i].flags));
	}
	return NULL;
}

// A process's page tables: the same walker as the kernel's, from its own
// root (x86-64 mm->pgd maps both halves; with PTI the user copy next to it
// maps the same user half).
struct kp_uspace {
	struct kp_pgtable *pt;
};

static struct kp_error *uspace_create(struct kp_arch_ctx *c, uint64_t root_pa,
				      struct kp_uspace **ret)
{
	struct kp_uspace *u = calloc(1, sizeof(*u));
	if (!u)
		return &kp_enomem;
	struct kp_error *err = kp_pgtable_create(c->mem, root_pa, c->levels ? c->levels : 4, &u->pt);
	if (err) {
		free(u);
		return err;
	}
	*ret = u;
	return NULL;
}

static void uspace_destroy(struct kp_uspace *u)
{
	if (!u)
		return;
	kp_pgtable_destroy(u->pt);
	free(u);
}

static struct kp_error *uspace_walk(struct kp_uspace *u, uint64_t vaddr, struct kp_vtop *ret)
{
	// The user half: canonical addresses with bit 63 clear.
	if (vaddr >> 63)
		return kp_error_create(KP_ERR_INVALID, "0x%" PRIx64 " is not a user address", vaddr);
	return kp_pgtable_walk(u->pt, vaddr, ret);
}

// arch/x86/entry/vsyscall/vsyscall_64.c: get_gate_vma() is gate_vma unless
// vsyscall_mode (static enum { EMULATE, XONLY, NONE }) is NONE, Debian's
// default (CONFIG_LEGACY_VSYSCALL_NONE); arch_vma_name() calls it
// [vsyscall].
#define VSYSCALL_NONE 2

static bool gate_vma(struct kp_arch_ctx *c, uint64_t *vma_ret, const char **name_ret)
{
	uint32_t mode;
	if (!c->gate_vma || !c->vsyscall_mode ||
	    !kp_ok(kp_memory_read(c->mem, KP_VIRT, c->vsyscall_mode, &mode, 4)) || mode == VSYSCALL_NONE)
		return false;
	*vma_ret = c->gate_vma;
	*name_ret = "[vsyscall]";
	return true;
}

static bool kernel_address(const struct kp_arch_ctx *c, uint64_t vaddr)
{
	return vaddr >= KERNEL_HALF;
}

static void image_range(const struct kp_arch_ctx *c, uint64_t *start, uint64_t *end)
{
	*start = X86_START_KERNEL_MAP;
	*end = X86_START_KERNEL_MAP + X86_KERNEL_IMAGE_SIZE;
}

// The areas of Documentation/arch/x86/x86_64/mm.rst (4.17+) that
// whatis names: vmalloc (VMALLOC_SIZE_TB: 32 TiB with 4-level paging,
// 12800 TiB with 5-level), the CPU entry area (0.5 TiB at
// CPU_ENTRY_AREA_BASE in both), modules (MODULES_VADDR = the image's end
// with KASLR's 1 GiB image, up to MODULES_END), the fixmap (from
// MODULES_END) and the legacy vsyscall page.
#define CPU_ENTRY_AREA_BASE 0xfffffe0000000000ULL
#define MODULES_END 0xffffffffff000000ULL
#define VSYSCALL_ADDR 0xffffffffff600000ULL

static const char *region(const struct kp_arch_ctx *c, uint64_t a, uint64_t *start, uint64_t *end)
{
	struct { const char *name; uint64_t start, end; } r[] = {
		{ "vmalloc", c->vmalloc_base, c->vmalloc_base + ((c->levels == 5 ? 12800ULL : 32ULL) << 40) },
		{ "cpu_entry_area", CPU_ENTRY_AREA_BASE, CPU_ENTRY_AREA_BASE + (1ULL << 39) },
		{ "modules", X86_START_KERNEL_MAP + X86_KERNEL_IMAGE_SIZE, MODULES_END },
		{ "fixmap", MODULES_END, VSYSCALL_ADDR },
		{ "vsyscall", VSYSCALL_ADDR, VSYSCALL_ADDR + X86_PAGE_SIZE },
	};
	for (size_t i = c->vmalloc_base && c->levels ? 0 : 1; i < sizeof(r) / sizeof(r[0]); i++)
		if (a >= r[i].start && a < r[i].end) {
			*start = r[i].start;
			*end = r[i].end;
			return r[i].name;
		}
	return NULL;
}

static bool phys_to_virt(const struct kp_arch_ctx *c, uint64_t paddr, uint64_t *ret)
{
	if (!c->has_page_offset_base)
		return false;
	*ret = c->page_offset_base + paddr;
	return true;
}

static bool image_map(const struct kp_arch_ctx *c, uint64_t *vaddr, uint64_t *paddr)
{
	if (!c->has_phys_base)
		return false;
	*vaddr = X86_START_KERNEL_MAP;
	*paddr = c->phys_base;
	return true;
}

static size_t facts(const struct kp_arch_ctx *c, const struct kp_fact **ret)
{
	*ret = c->facts;
	return NFACTS;
}

static bool syscall_handler_name(const char *name)
{
	// 4.17+ pt_regs wrappers, their compat forms, and the plain names of
	// older kernels (sys_read, compat_sys_*, ptregs_/stub_ trampolines).
	static const char *const prefixes[] = {
		"__x64_sys_", "__ia32_sys_", "__ia32_compat_sys_", "__x64_compat_sys_",
		"__x32_compat_sys_", "sys_", "compat_sys_", "ptregs_sys_", "stub_",
	};
	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++) {
		size_t n = strlen(prefixes[i]);
		if (!strncmp(name, prefixes[i], n) && name[n])
			return true;
	}
	return false;
}

// Since the branch-history mitigation (mainline 6.9, backported to 6.1.x
// stable among others) x86-64 dispatches through x64_sys_call() and
// friends: a switch compiled (-fno-jump-tables) into compares and direct
// call/jmp rel32 instructions. Instruction lengths are not decoded: every
// E8 (call rel32) / E9 (jmp rel32) byte is a candidate, and the caller keeps
// the targets that are exactly the start of a symbol (random bytes almost
// never land on one, real calls always do).
static void call_targets(const uint8_t *code, size_t size, uint64_t addr,
			 void (*fn)(uint64_t target, uint64_t at, void *arg), void *arg)
{
	for (size_t i = 0; i + 5 <= size; i++) {
		if (code[i] != 0xe8 && code[i] != 0xe9)
			continue;
		int32_t rel = (int32_t)kp_le32(code + i + 1);
		fn(addr + i + 5 + (uint64_t)(int64_t)rel, addr + i, arg);
	}
}

static const char *const uts_machines[] = { "x86_64", NULL };
static const char *const syscall_tables[] = {
	"sys_call_table", "ia32_sys_call_table", "x32_sys_call_table", NULL,
};
static const char *const syscall_dispatchers[] = {
	"x64_sys_call", "ia32_sys_call", "x32_sys_call", NULL,
};

// do_syscall_64() indexes sys_call_table by its absolute address until the
// branch-history mitigation (6.9, backported) made it call x64_sys_call();
// the numbers of arch/x86/entry/syscalls/syscall_64.tbl.
static const char *const syscall_table_users[] = { "do_syscall_64", NULL };
static const struct kp_syscall_probe syscall_probes[] = {
	{ 0, "__x64_sys_read" }, { 1, "__x64_sys_write" }, { 206, "__x64_sys_io_setup" },
	{ 0, NULL },
};

static const struct kp_var_type var_types[] = {
	{ "sys_call_table", "sys_call_ptr_t[]|void *[]" },
	{ "ia32_sys_call_table", "sys_call_ptr_t[]|void *[]" },
	{ "x32_sys_call_table", "sys_call_ptr_t[]|void *[]" },
	{ "idt_table", "gate_desc[256]|struct gate_struct[256]" },
	{ "swapper_pg_dir", "pgd_t[512]" },
	{ "init_top_pgt", "pgd_t[512]" },
	{ "page_offset_base", "unsigned long" },
	{ "vmemmap_base", "unsigned long" },
	{ "vmalloc_base", "unsigned long" },
	{ "phys_base", "unsigned long" },
	{ "__supported_pte_mask", "pteval_t|unsigned long" },
	{ "__pgtable_l5_enabled", "unsigned int" },
	{ "ptrs_per_p4d", "unsigned int" },
	{ "boot_cpu_data", "struct cpuinfo_x86" },
	{ NULL, NULL },
};

const struct kp_arch kp_arch_x86_64 = {
	.name = "x86_64",
	.elf_machine = EM_X86_64,
	.uts_machines = uts_machines,
	.vmcoreinfo_is_mine = is_mine,
	.prstatus_regs = kp_x86_prstatus_regs,
	.reg_names = kp_x86_reg_names,
	.create = create,
	.destroy = destroy,
	.symbols_loaded = symbols_loaded,
	.page_size = page_size,
	.vtop = vtop,
	.kernel_address = kernel_address,
	.uspace_create = uspace_create,
	.uspace_destroy = uspace_destroy,
	.uspace_walk = uspace_walk,
	.gate_vma = gate_vma,
	.image_range = image_range,
	.link_text = X86_DEFAULT_KERNEL_START,
	// X86_ALIGN_RODATA_BEGIN (arch/x86/kernel/vmlinux.lds.S): HPAGE_SIZE;
	// the text/rodata gap is freed (free_kernel_image_pages()).
	.rodata_align = 2ULL << 20,
	.phys_to_virt = phys_to_virt,
	.region = region,
	.image_map = image_map,
	.facts = facts,
	.locator_create = kp_x86_locator_create,
	.locator_destroy = kp_x86_locator_destroy,
	.locator_check = kp_x86_locator_check,
	.locator_derive = kp_x86_locator_derive,
	.unwinder_create = kp_x86_unwinder_create,
	.unwinder_destroy = kp_x86_unwinder_destroy,
	.unwind_sleeping = kp_x86_unwind_sleeping,
	.unwind_step = kp_x86_unwind_step,
	.syscall_tables = syscall_tables,
	.syscall_dispatchers = syscall_dispatchers,
	.syscall_handler_name = syscall_handler_name,
	.call_targets = call_targets,
	.syscall_table_users = syscall_table_users,
	.syscall_probes = syscall_probes,
	.data_refs = kp_x86_data_refs,
	.entry_branch = kp_x86_entry_branch,
	// idt_table (arch/x86/kernel/idt.c): IDT_ENTRIES 16-byte gates.
	.vector_table = "idt_table",
	.vector_count = 256,
	.vector_size = 16,
	.vector_handler = kp_x86_vector_handler,
	// idt_setup_early_handler() points the 32 exception vectors at
	// early_idt_handler_array (head_64.S, .init.text); idt_setup_traps()
	// replaces those Linux handles, the reserved ones keep the stubs.
	.vector_boot_handlers = "early_idt_handler_array",
	.var_types = var_types,
};
