// SPDX-License-Identifier: MIT
// arm64: struct kp_arch for the kernel's layout since 5.4 ("arm64: mm: Flip
// kernel VA space", Documentation/arch/arm64/memory.rst): the linear map at
// PAGE_OFFSET = -(1 << VA_BITS) from PHYS_OFFSET up, the kernel image at
// physical + kimage_voffset, TTBR1 tables rooted at swapper_pg_dir.
// Everything comes from VMCOREINFO; QEMU's arm64 dumps have no system
// registers.
#include <elf.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arch/arm64/arm64.h"
#include "arch/arm64/pgtable.h"
#include "format/vmcoreinfo.h"
#include "symbols/symtab.h"
#include "util/error.h"

// KIMAGE_VADDR without KASLR when VA_BITS_MIN is 48 and modules get 128 MiB
// (5.4 to 6.4); only used for a System.map when VMCOREINFO has no
// KERNELOFFSET, which arm64 always writes.
#define ARM64_LINK_TEXT 0xffff800008000000ULL
// The image is tens of MiB; scans of it stop at the first hole past it.
#define IMAGE_SPAN (512ULL << 20)

enum { FACT_VA_BITS, FACT_PAGE_SIZE, FACT_LEVELS, FACT_KIMAGE_VOFFSET, FACT_PHYS_OFFSET,
       FACT_PAGE_OFFSET, FACT_PGD, FACT_PAC_MASK, NFACTS };

struct kp_arch_ctx {
	struct kp_memory *mem;
	bool has_layout;
	struct arm64_layout lay;
	struct arm64_pgtable *pt;	// NULL without physical memory or layout
	char why[160];			// why there is no layout
	struct kp_fact facts[NFACTS];
};

static struct kp_error *unwinder_create(const struct kp_arch_ctx *c,
				       const struct kp_unwind_env *env, struct kp_unwinder **ret)
{
	if (!c->has_layout)
		return kp_error_create(KP_ERR_UNSUPPORTED, "arm64 stacks need the VA size: %s", c->why);
	return kp_arm64_unwinder_new(c->lay.va_bits, env, ret);
}

static bool is_mine(const struct kp_vmcoreinfo *vi)
{
	int64_t n;
	// arch/arm64: kimage_voffset and VA_BITS (4.12+); x86-64 writes neither.
	return kp_vmcoreinfo_number(vi, "kimage_voffset", &n) ||
	       kp_vmcoreinfo_number(vi, "TCR_EL1_T1SZ", &n);
}

static void fill_facts(struct kp_arch_ctx *c)
{
	const struct arm64_layout *l = &c->lay;
	bool k = c->has_layout;
	c->facts[FACT_VA_BITS] = (struct kp_fact){
		"VA bits", KP_FACT_INT, k, l->va_bits, NULL };
	c->facts[FACT_PAGE_SIZE] = (struct kp_fact){
		"page size", KP_FACT_INT, l->page_shift != 0, 1ULL << l->page_shift, NULL };
	c->facts[FACT_LEVELS] = (struct kp_fact){
		"paging levels", KP_FACT_INT, c->pt != NULL,
		c->pt ? (uint64_t)kp_arm64_pgtable_levels(c->pt) : 0, NULL };
	c->facts[FACT_KIMAGE_VOFFSET] = (struct kp_fact){
		"kimage_voffset", KP_FACT_HEX, l->has_kimage_voffset, l->kimage_voffset, NULL };
	c->facts[FACT_PHYS_OFFSET] = (struct kp_fact){
		"PHYS_OFFSET", KP_FACT_HEX, l->has_phys_offset, l->phys_offset, NULL };
	c->facts[FACT_PAGE_OFFSET] = (struct kp_fact){
		"PAGE_OFFSET", KP_FACT_HEX, k, k ? kp_arm64_page_offset(l) : 0, NULL };
	c->facts[FACT_PGD] = (struct kp_fact){
		"pgd", KP_FACT_HEX, k && l->swapper_pg_dir, l->swapper_pg_dir - l->kimage_voffset,
		NULL };
	c->facts[FACT_PAC_MASK] = (struct kp_fact){
		"PAC mask", KP_FACT_HEX, l->pac_mask != 0, l->pac_mask, NULL };
}

static struct kp_error *create(const struct kp_arch_input *in, struct kp_arch_ctx **ret)
{
	struct kp_arch_ctx *c = calloc(1, sizeof(*c));
	if (!c)
		return &kp_enomem;
	c->mem = in->mem;
	if (!in->vmcoreinfo)
		snprintf(c->why, sizeof(c->why), "no VMCOREINFO");
	else
		c->has_layout = kp_arm64_layout(in->vmcoreinfo, &c->lay, c->why, sizeof(c->why));
	if (c->has_layout && !c->lay.swapper_pg_dir) {
		c->has_layout = false;
		snprintf(c->why, sizeof(c->why), "no SYMBOL(swapper_pg_dir) in VMCOREINFO");
	}
	if (c->has_layout && kp_memory_has_segments(in->mem, KP_PHYS)) {
		struct kp_error *err = kp_arm64_pgtable_create(
			in->mem, c->lay.swapper_pg_dir - c->lay.kimage_voffset, c->lay.page_shift,
			c->lay.va_bits, &c->pt);
		if (err) {
			free(c);
			return err;
		}
		kp_memory_set_translator(in->mem, kp_arm64_pgtable_translate, c->pt);
	}
	fill_facts(c);
	*ret = c;
	return NULL;
}

static void destroy(struct kp_arch_ctx *c)
{
	if (!c)
		return;
	kp_arm64_pgtable_destroy(c->pt);
	free(c);
}

static void symbols_loaded(struct kp_arch_ctx *c, struct kp_symtab *st)
{
	struct kp_symbol sym;
	if (!c->lay.stext && (kp_symtab_find(st, "_stext", &sym) || kp_symtab_find(st, "_text", &sym)))
		c->lay.stext = sym.address;
}

static uint64_t page_size(const struct kp_arch_ctx *c)
{
	return c->lay.page_shift ? 1ULL << c->lay.page_shift : 4096;
}

// Attributes of a VMSAv8-64 descriptor (Arm ARM D8.3): lower attributes of
// blocks and pages, upper ones, and the hierarchical ones of tables.
void kp_arm64_desc_flags(uint64_t d, int lvl, bool lpa2, char *buf, size_t size)
{
	size_t len = 0;
	buf[0] = '\0';
	char word[16];
#define ADD(w) kp_flags_append(buf, size, &len, (w))
#define ADDN(prefix, v) (snprintf(word, sizeof(word), "%s%u", (prefix), (unsigned)(v)), ADD(word))
	if (!(d & 1)) {
		ADD("INVALID");
		return;
	}
	bool table = lvl > 0 && (d & 3) == 3;
	if (table) {
		ADD("TABLE");
		if (d >> 59 & 1)
			ADD("PXNTable");
		if (d >> 60 & 1)
			ADD("UXNTable");
		if (d >> 61 & 3)
			ADDN("APTable=", d >> 61 & 3);
		return;
	}
	ADD(lvl == 0 ? "PAGE" : "BLOCK");
	ADDN("Attr", d >> 2 & 7);
	if (d >> 6 & 1)
		ADD("USER");
	ADD(d >> 7 & 1 ? "RO" : "RW");
	if (!lpa2 && (d >> 8 & 3))
		ADD((d >> 8 & 3) == 3 ? "SH=IS" : (d >> 8 & 3) == 2 ? "SH=OS" : "SH=?");
	if (d >> 10 & 1)
		ADD("AF");
	if (d >> 11 & 1)
		ADD("nG");
	if (d >> 51 & 1)
		ADD("DBM");
	if (d >> 52 & 1)
		ADD("CONT");
	if (d >> 53 & 1)
		ADD("PXN");
	if (d >> 54 & 1)
		ADD("UXN");
#undef ADD
#undef ADDN
}

static struct kp_error *vtop(struct kp_arch_ctx *c, uint64_t vaddr, struct kp_vtop *ret)
{
	if (!c->pt)
		return kp_error_create(KP_ERR_UNSUPPORTED,
				       "cannot translate 0x%" PRIx64 ": no page tables (%s)", vaddr,
				       c->has_layout ? "the source has no physical memory" : c->why);
	struct kp_error *err = kp_arm64_pgtable_walk(c->pt, vaddr, ret);
	if (err)
		return err;
	for (int i = 0; i < ret->nsteps; i++)
		kp_arm64_desc_flags(ret->step[i].entry, ret->levels - 1 - i,
				    kp_arm64_pgtable_lpa2(c->pt), ret->step[i].flags,
				    sizeof(ret->step[i].flags));
	return NULL;
}

// A process's page tables: TTBR0's, the same granule and levels as the
// kernel's (Linux sets T0SZ like T1SZ), for the addresses whose top bits
// are all zeros.
struct kp_uspace {
	struct arm64_pgtable *pt;
};

static struct kp_error *uspace_create(struct kp_arch_ctx *c, uint64_t root_pa,
				      struct kp_uspace **ret)
{
	if (!c->has_layout)
		return kp_error_create(KP_ERR_UNSUPPORTED, "no page-table layout (%s)", c->why);
	struct kp_uspace *u = calloc(1, sizeof(*u));
	if (!u)
		return &kp_enomem;
	struct kp_error *err = kp_arm64_pgtable_create(c->mem, root_pa, c->lay.page_shift,
						       c->lay.va_bits, &u->pt);
	if (err) {
		free(u);
		return err;
	}
	kp_arm64_pgtable_set_user(u->pt);
	*ret = u;
	return NULL;
}

static void uspace_destroy(struct kp_uspace *u)
{
	if (!u)
		return;
	kp_arm64_pgtable_destroy(u->pt);
	free(u);
}

static struct kp_error *uspace_walk(struct kp_uspace *u, uint64_t vaddr, struct kp_vtop *ret)
{
	return kp_arm64_pgtable_walk(u->pt, vaddr, ret);
}

static bool kernel_address(const struct kp_arch_ctx *c, uint64_t vaddr)
{
	unsigned bits = c->has_layout ? c->lay.va_bits : 48;
	return (vaddr >> bits) == (~0ULL >> bits);
}

static void image_range(const struct kp_arch_ctx *c, uint64_t *start, uint64_t *end)
{
	if (c->lay.stext) {
		*start = c->lay.stext & ~((2ULL << 20) - 1);
		*end = *start + IMAGE_SPAN;
		return;
	}
	// The image lies in the vmalloc area of the kernel half: from the top
	// of the linear map, where modules and the image start.
	unsigned bits = c->has_layout ? c->lay.va_bits : 48;
	*start = ~0ULL << (bits - 1);
	*end = *start + (8ULL << 30);
}

static bool phys_to_virt(const struct kp_arch_ctx *c, uint64_t paddr, uint64_t *ret)
{
	if (!c->has_layout || !c->lay.has_phys_offset)
		return false;
	// __phys_to_virt() (arch/arm64/include/asm/memory.h).
	*ret = (paddr - c->lay.phys_offset) | kp_arm64_page_offset(&c->lay);
	return true;
}

static const char *region(const struct kp_arch_ctx *c, uint64_t a, uint64_t *start, uint64_t *end)
{
	return c->has_layout ? kp_arm64_region(&c->lay, a, start, end) : NULL;
}

static bool text_start(const struct kp_arch_ctx *c, uint64_t stext, uint64_t *ret)
{
	return c->mem && kp_arm64_text_start(c->mem, stext, ret);
}

static bool image_map(const struct kp_arch_ctx *c, uint64_t *vaddr, uint64_t *paddr)
{
	if (!c->has_layout || !c->lay.stext)
		return false;
	*vaddr = c->lay.stext;
	*paddr = c->lay.stext - c->lay.kimage_voffset;
	return true;
}

static size_t facts(const struct kp_arch_ctx *c, const struct kp_fact **ret)
{
	*ret = c->facts;
	return NFACTS;
}

static bool syscall_handler_name(const char *name)
{
	// 4.19+ pt_regs wrappers (arch/arm64/include/asm/syscall_wrapper.h),
	// the compat ones, and the plain names of older kernels.
	static const char *const prefixes[] = {
		"__arm64_sys_", "__arm64_compat_sys_", "sys_", "compat_sys_",
	};
	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++) {
		size_t n = strlen(prefixes[i]);
		if (!strncmp(name, prefixes[i], n) && name[n])
			return true;
	}
	return false;
}

static const char *const uts_machines[] = { "aarch64", "arm64", NULL };
static const char *const syscall_tables[] = { "sys_call_table", "compat_sys_call_table", NULL };
static const char *const no_dispatchers[] = { NULL };
// do_el0_svc() passes sys_call_table to el0_svc_common() (inlined,
// arch/arm64/kernel/syscall.c, 5.0+); the asm-generic numbers of
// include/uapi/asm-generic/unistd.h.
static const char *const syscall_table_users[] = { "do_el0_svc", "el0_svc_common", NULL };
static const struct kp_syscall_probe syscall_probes[] = {
	{ 0, "__arm64_sys_io_setup" }, { 63, "__arm64_sys_read" }, { 64, "__arm64_sys_write" },
	{ 0, NULL },
};

static const struct kp_var_type var_types[] = {
	{ "sys_call_table", "syscall_fn_t[]|void *[]" },
	{ "compat_sys_call_table", "syscall_fn_t[]|void *[]" },
	{ "swapper_pg_dir", "pgd_t[]" },
	{ "kimage_voffset", "u64|unsigned long long" },
	{ "memstart_addr", "s64|long long" },
	{ "vabits_actual", "u64|unsigned long long" },
	{ NULL, NULL },
};

const struct kp_arch kp_arch_arm64 = {
	.name = "arm64",
	.elf_machine = EM_AARCH64,
	.uts_machines = uts_machines,
	.vmcoreinfo_is_mine = is_mine,
	.prstatus_regs = kp_arm64_prstatus_regs,
	.reg_names = kp_arm64_reg_names,
	.create = create,
	.destroy = destroy,
	.symbols_loaded = symbols_loaded,
	.page_size = page_size,
	.vtop = vtop,
	.kernel_address = kernel_address,
	.uspace_create = uspace_create,
	.uspace_destroy = uspace_destroy,
	.uspace_walk = uspace_walk,
	.image_range = image_range,
	.link_text = ARM64_LINK_TEXT,
	// _etext is SEGMENT_ALIGNed and rodata follows it at once
	// (arch/arm64/kernel/vmlinux.lds.S).
	.rodata_align = 4096,
	.phys_to_virt = phys_to_virt,
	.image_map = image_map,
	.region = region,
	.facts = facts,
	.locator_create = kp_arm64_locator_create,
	.locator_destroy = kp_arm64_locator_destroy,
	.locator_check = kp_arm64_locator_check,
	.locator_derive = kp_arm64_locator_derive,
	.unwinder_create = unwinder_create,
	.unwinder_destroy = kp_arm64_unwinder_destroy,
	.unwind_sleeping = kp_arm64_unwind_sleeping,
	.unwind_step = kp_arm64_unwind_step,
	.syscall_tables = syscall_tables,
	.syscall_dispatchers = no_dispatchers,
	.syscall_handler_name = syscall_handler_name,
	.syscall_table_users = syscall_table_users,
	.syscall_probes = syscall_probes,
	.call_targets = NULL,
	.data_refs = kp_arm64_data_refs,
	.text_start = text_start,
	.entry_branch = kp_arm64_entry_branch,
	// Exception vectors (VBAR_EL1) are code, not a table of pointers:
	// vector_table stays NULL.
	.var_types = var_types,
};
