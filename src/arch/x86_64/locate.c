// SPDX-License-Identifier: MIT
// x86-64 dumps without VMCOREINFO (the generic part is core/locate.c): what
// QEMU's CPU notes say. A vmcoreinfo page found in RAM may be stale (left by
// the kernel that ran before a kexec), so it is checked against the
// registers QEMU saved for a CPU: the page tables at CR3 must map
// swapper_pg_dir where the text's KERNELOFFSET and phys_base put it, and IDT
// vector 0 must point at asm_exc_divide_error (divide_error before 5.8) by
// the text's symbols. Without a usable page everything comes from the
// registers: CR3 gives the page tables, the IDT handler is a known
// kernel-text address, and the symbols come from a System.map / kallsyms
// file or from the kernel's own kallsyms tables found in the image.
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arch/x86_64/pgtable.h"
#include "arch/x86_64/x86_64.h"
#include "format/vmcoreinfo.h"
#include "symbols/kallsyms.h"
#include "symbols/kallsyms_scan.h"
#include "symbols/symtab.h"
#include "util/error.h"
#include "util/strbuf.h"

#define KERNEL_PGD_INDEX 511		// top-level slot of __START_KERNEL_map
#define PAGE X86_PAGE_SIZE

struct regs {
	int cpu;
	struct x86_cpu cs;
	int levels;
	uint64_t root;		// physical address of the kernel's top-level table
	struct kp_pgtable *pt;
	uint64_t handler;	// IDT vector 0
};

// The handler of IDT vector 0 through root's tables: a present 64-bit
// interrupt or trap gate into the kernel image (Intel SDM 3A, 6.14.1).
static struct kp_error *idt_handler(struct kp_memory *mem, const struct x86_cpu *cs,
				    struct kp_pgtable *pt, uint64_t *ret)
{
	struct kp_vtop v;
	struct kp_error *err = kp_pgtable_walk(pt, cs->idt_base, &v);
	if (err)
		return err;
	if (!v.present)
		return kp_error_fault(cs->idt_base, "IDT at 0x%" PRIx64 " is not mapped",
				      cs->idt_base);
	uint8_t g[16];
	err = kp_memory_read(mem, KP_PHYS, v.paddr, g, sizeof(g));
	if (err)
		return kp_error_prefix(err, "IDT at 0x%" PRIx64 " (phys 0x%" PRIx64 ")",
				       cs->idt_base, v.paddr);
	unsigned type = g[5] & 0x1f;
	uint64_t h = (uint64_t)(g[0] | g[1] << 8) | (uint64_t)(g[6] | g[7] << 8) << 16 |
		     (uint64_t)(g[8] | g[9] << 8 | g[10] << 16 | (uint32_t)g[11] << 24) << 32;
	if (!(g[5] & 0x80) || (type != 0xe && type != 0xf))
		return kp_error_create(KP_ERR_FORMAT,
				       "IDT at 0x%" PRIx64 ": vector 0 is not a present interrupt or trap gate (type byte 0x%02x)",
				       cs->idt_base, g[5]);
	if (h < X86_START_KERNEL_MAP || h - X86_START_KERNEL_MAP >= X86_KERNEL_IMAGE_SIZE)
		return kp_error_create(KP_ERR_FORMAT,
				       "IDT at 0x%" PRIx64 ": vector 0 handler 0x%" PRIx64 " is outside the kernel image",
				       cs->idt_base, h);
	*ret = h;
	return NULL;
}

static struct kp_error *setup_regs(struct kp_memory *mem, const struct kp_source *src,
				   struct regs *r)
{
	memset(r, 0, sizeof(*r));
	// The reasons say only what is missing: a vmcoreinfo page found in
	// memory is still used (unverified), so "cannot locate" is added by
	// the caller when there is none.
	if (!src->ncpus)
		return kp_error_create(KP_ERR_NOT_FOUND, "no CPU registers in the dump");
	struct kp_error *first = NULL;
	for (size_t i = 0; i < src->ncpus; i++) {
		struct x86_cpu cpu;
		const struct x86_cpu *cs = &cpu;
		// Paging on and an IDT: a CPU that has run the kernel.
		if (!kp_x86_qemu_cpu(&src->cpus[i], &cpu) || !(cs->cr0 & X86_CR0_PG) ||
		    !cs->idt_base)
			continue;
		int levels = cs->cr4 & X86_CR4_LA57 ? 5 : 4;
		// With PTI the kernel's PGD is the even page of an 8 KiB pair
		// and CR3 may hold the user one; without PTI bit 12 is an
		// address bit. Try the kernel's first.
		uint64_t roots[2] = {cs->cr3 & X86_CR3_ADDR_MASK & ~X86_CR3_PTI_USER,
				     cs->cr3 & X86_CR3_ADDR_MASK};
		for (int k = 0; k < (roots[0] == roots[1] ? 1 : 2); k++) {
			struct kp_pgtable *pt;
			struct kp_error *err = kp_pgtable_create(mem, roots[k], levels, &pt);
			uint64_t h = 0;
			if (!err)
				err = idt_handler(mem, &cpu, pt, &h);
			if (!err) {
				*r = (struct regs){.cpu = (int)i, .cs = cpu, .levels = levels,
						   .root = roots[k], .pt = pt, .handler = h};
				kp_error_destroy(first);
				return NULL;
			}
			kp_pgtable_destroy(pt);
			if (err == &kp_enomem) {
				kp_error_destroy(first);
				return err;
			}
			if (!first)
				first = kp_error_prefix(err, "CPU %zu (CR3 0x%" PRIx64 ")", i, cs->cr3);
			else
				kp_error_destroy(err);
		}
	}
	if (first)
		return first;
	return kp_error_create(KP_ERR_NOT_FOUND,
			       "no CPU in the dump has control registers (CR0/CR3/IDTR, from QEMU notes) with paging on");
}

// ---------------------------------------------------------------- checks

// swapper_pg_dir (virtual sw) must map, through CR3's tables, to the physical
// address phys_base puts it at, and share the kernel's top-level entry with
// the table in CR3 (every PGD copies the kernel half of swapper_pg_dir).
static struct kp_error *check_pgd(struct kp_memory *mem, const struct regs *r, uint64_t sw,
				  uint64_t phys_base)
{
	uint64_t claim = sw - X86_START_KERNEL_MAP + phys_base;
	struct kp_vtop v;
	struct kp_error *err = kp_pgtable_walk(r->pt, sw, &v);
	if (err)
		return err;
	if (!v.present)
		return kp_error_create(KP_ERR_INVALID,
				       "swapper_pg_dir 0x%" PRIx64 " is not mapped by the page tables at CR3 of CPU %d",
				       sw, r->cpu);
	if (v.paddr != claim)
		return kp_error_create(KP_ERR_INVALID,
				       "swapper_pg_dir 0x%" PRIx64 " is at phys 0x%" PRIx64 " by CR3 of CPU %d, not 0x%" PRIx64 " (phys_base 0x%" PRIx64 ")",
				       sw, v.paddr, r->cpu, claim, phys_base);
	uint64_t mine, theirs;
	err = kp_memory_read_u64(mem, KP_PHYS, claim + KERNEL_PGD_INDEX * 8, &mine);
	if (!err)
		err = kp_memory_read_u64(mem, KP_PHYS, r->root + KERNEL_PGD_INDEX * 8, &theirs);
	if (err)
		return kp_error_prefix(err, "top-level page table entry %d", KERNEL_PGD_INDEX);
	if (mine != theirs)
		return kp_error_create(KP_ERR_INVALID,
				       "swapper_pg_dir (phys 0x%" PRIx64 ") entry %d is 0x%" PRIx64 ", the PGD in CR3 of CPU %d (phys 0x%" PRIx64 ") has 0x%" PRIx64,
				       claim, KERNEL_PGD_INDEX, mine, r->cpu, r->root, theirs);
	return NULL;
}

static struct kp_error *divide_error_sym(struct kp_symtab *st, struct kp_symbol *ret)
{
	// Renamed in 5.8 (idtentry rework, "x86/entry: Convert Divide Error
	// to IDTENTRY").
	static const char *const names[] = {"asm_exc_divide_error", "divide_error"};
	for (int i = 0; i < 2; i++)
		if (kp_symtab_find(st, names[i], ret))
			return NULL;
	return kp_error_create(KP_ERR_NOT_FOUND,
			       "no asm_exc_divide_error (or divide_error) symbol to check the IDT against");
}

// IDT vector 0's handler must be asm_exc_divide_error, whose address in st
// plus bias is its run-time address.
static struct kp_error *check_handler(const struct regs *r, struct kp_symtab *st, uint64_t bias)
{
	struct kp_symbol s;
	struct kp_error *err = divide_error_sym(st, &s);
	if (err)
		return err;
	if (s.address + bias != r->handler)
		return kp_error_create(KP_ERR_INVALID,
				       "IDT vector 0 of CPU %d points at 0x%" PRIx64 ", but %s is at 0x%" PRIx64,
				       r->cpu, r->handler, s.name, s.address + bias);
	return NULL;
}

// Symbols to check the IDT with, in the order kernel_open will use them:
// a relocated kallsyms file, the tables the vmcoreinfo names, a System.map
// (bias = KERNELOFFSET), the tables found in the image. *bias_ret is what to
// add to the table's addresses.
static struct kp_error *candidate_symbols(struct kp_memory *mem,
					  const struct kp_open_options *opts,
					  const struct kp_vmcoreinfo *vi, uint64_t kaslr,
					  struct kp_symtab **ret, uint64_t *bias_ret)
{
	struct kp_kallsyms_tables t;
	*bias_ret = 0;
	if (opts->kallsyms)
		return kp_symtab_from_file(opts->kallsyms, 0, ret);
	if (kp_kallsyms_tables_from_vmcoreinfo(vi, &t)) {
		struct kp_error *err = kp_symtab_from_tables(mem, &t, ret);
		return err ? kp_error_prefix(err, "kallsyms tables it names") : NULL;
	}
	if (opts->system_map) {
		*bias_ret = kaslr;
		return kp_symtab_from_file(opts->system_map, 0, ret);
	}
	struct kp_error *err = kp_locate_kallsyms(mem, X86_START_KERNEL_MAP,
						  X86_START_KERNEL_MAP + X86_KERNEL_IMAGE_SIZE,
						  X86_START_KERNEL_MAP, &t);
	if (err)
		return err;
	return kp_symtab_from_tables(mem, &t, ret);
}

// NULL if the vmcoreinfo text agrees with the registers, else why not.
static struct kp_error *check_candidate(struct kp_memory *mem, const struct regs *r,
					const struct kp_open_options *opts, const char *text,
					size_t len)
{
	struct kp_vmcoreinfo *vi;
	struct kp_error *err = kp_vmcoreinfo_parse(text, len, &vi);
	if (err)
		return err;
	int64_t l5, pb;
	uint64_t sw, kaslr = 0;
	if (kp_vmcoreinfo_number(vi, "pgtable_l5_enabled", &l5) && (l5 ? 5 : 4) != r->levels) {
		err = kp_error_create(KP_ERR_INVALID,
				      "it says %d-level paging, CPU %d runs %d-level (CR4.LA57=%d)",
				      l5 ? 5 : 4, r->cpu, r->levels, r->levels == 5);
		goto out;
	}
	if (!kp_vmcoreinfo_number(vi, "phys_base", &pb) ||
	    (!kp_vmcoreinfo_symbol(vi, "init_top_pgt", &sw) &&
	     !kp_vmcoreinfo_symbol(vi, "swapper_pg_dir", &sw))) {
		err = kp_error_create(KP_ERR_INVALID, "it has no NUMBER(phys_base) or SYMBOL(swapper_pg_dir)");
		goto out;
	}
	err = check_pgd(mem, r, sw, (uint64_t)pb);
	if (err)
		goto out;
	kp_vmcoreinfo_kerneloffset(vi, &kaslr);
	struct kp_symtab *st;
	uint64_t bias;
	err = candidate_symbols(mem, opts, vi, kaslr, &st, &bias);
	if (err)
		goto out;
	err = check_handler(r, st, bias);
	kp_symtab_destroy(st);
out:
	kp_vmcoreinfo_destroy(vi);
	return err;
}

// ---------------------------------------------------------------- from registers only

static bool lookup(struct kp_symtab *st, const char *name, uint64_t bias, uint64_t *ret)
{
	struct kp_symbol s;
	if (!kp_symtab_find(st, name, &s))
		return false;
	*ret = s.address + bias;
	return true;
}

// The symbols of a System.map or kallsyms file (*st, the caller's to
// destroy even on failure), checked against IDT vector 0; *bias is the
// KASLR offset a System.map's link addresses need.
static struct kp_error *symbols_from_file(const struct regs *r, const char *path,
					  bool link_addresses, struct kp_symtab **st,
					  uint64_t *bias)
{
	struct kp_error *err = kp_symtab_from_file(path, 0, st);
	if (err)
		return err;
	if (link_addresses) {
		// Link addresses: the handler's distance from its link address
		// is the KASLR offset.
		struct kp_symbol s;
		if ((err = divide_error_sym(*st, &s)))
			return err;
		*bias = r->handler - s.address;
		if (*bias & (PAGE - 1))
			return kp_error_create(KP_ERR_INVALID,
					       "%s does not match the dump: IDT vector 0 of CPU %d points at 0x%" PRIx64 ", %s links at 0x%" PRIx64 " (not a page-aligned KASLR offset)",
					       path, r->cpu, r->handler, s.name, s.address);
	}
	err = check_handler(r, *st, *bias);
	return err ? kp_error_prefix(err, "%s does not match the dump", path) : NULL;
}

// The symbols of the kernel's own kallsyms tables, found in the image that
// CR3 maps (*st, the caller's to destroy even on failure), checked against
// IDT vector 0.
static struct kp_error *symbols_from_image(struct kp_memory *mem, const struct regs *r,
					   struct kp_image_scan *scan, struct kp_symtab **st)
{
	struct kp_error *err = kp_locate_scan_image(mem, X86_START_KERNEL_MAP,
						    X86_START_KERNEL_MAP + X86_KERNEL_IMAGE_SIZE,
						    X86_START_KERNEL_MAP, scan);
	if (err)
		return err;
	if (!scan->has_tables)
		return kp_error_create(KP_ERR_NOT_FOUND,
				       "no VMCOREINFO, no vmcoreinfo page, and no kallsyms tables found in the kernel image mapped by CR3 of CPU %d: pass the kernel's System.map with -m or a kallsyms file with --kallsyms",
				       r->cpu);
	if (!(err = kp_symtab_from_tables(mem, &scan->tables, st)))
		err = check_handler(r, *st, 0);
	return err ? kp_error_prefix(err, "kallsyms tables found at 0x%" PRIx64,
				     scan->tables.token_table) : NULL;
}

// Where the kernel is, by its symbols and CR3's page tables.
struct layout {
	uint64_t text_va, swapper_pg_dir, phys_base, kaslr;
};

static struct kp_error *find_layout(struct kp_memory *mem, const struct regs *r,
				    struct kp_symtab *st, uint64_t bias, bool link_addresses,
				    const char *how, struct layout *ret)
{
	uint64_t text_va, sw;
	if (!lookup(st, "_text", bias, &text_va) && !lookup(st, "_stext", bias, &text_va))
		return kp_error_create(KP_ERR_NOT_FOUND, "no _text symbol (from %s)", how);
	if (!lookup(st, "init_top_pgt", bias, &sw) && !lookup(st, "swapper_pg_dir", bias, &sw))
		return kp_error_create(KP_ERR_NOT_FOUND, "no swapper_pg_dir symbol (from %s)", how);
	// Without a System.map the link address of _text is assumed to be the
	// x86-64 default (CONFIG_PHYSICAL_START 0x1000000).
	uint64_t kaslr = link_addresses ? bias : text_va - X86_DEFAULT_KERNEL_START;
	struct kp_vtop v;
	struct kp_error *err = kp_pgtable_walk(r->pt, text_va, &v);
	if (!err && !v.present)
		err = kp_error_fault(text_va, "_text 0x%" PRIx64 " is not mapped by CR3 of CPU %d",
				     text_va, r->cpu);
	if (err)
		return err;
	uint64_t phys_base = v.paddr - (text_va - X86_START_KERNEL_MAP);
	if ((err = check_pgd(mem, r, sw, phys_base)))
		return err;
	*ret = (struct layout){ text_va, sw, phys_base, kaslr };
	return NULL;
}

// The VMCOREINFO the kernel would have written, as far as kpeek needs it:
// the release from linux_banner, the page tables, the text, the kallsyms
// tables when they were found, phys_base, 5-level paging, KERNELOFFSET.
static char *reconstruct_vmcoreinfo(struct kp_memory *mem, const struct regs *r,
				    struct kp_symtab *st, uint64_t bias,
				    const struct kp_image_scan *scan, const struct layout *l,
				    size_t *len_ret)
{
	char banner[512] = "";
	uint64_t banner_va;
	if (!(lookup(st, "linux_banner", bias, &banner_va) &&
	      kp_memory_read_cstr(mem, KP_VIRT, banner_va, banner, sizeof(banner))) && scan->banner)
		kp_memory_read_cstr(mem, KP_VIRT, scan->banner, banner, sizeof(banner));

	struct kp_sb t = { 0 };
	if (!strncmp(banner, "Linux version ", 14)) {
		size_t n = strcspn(banner + 14, " \n");
		kp_sb_printf(&t, "OSRELEASE=%.*s\n", (int)n, banner + 14);
	}
	kp_sb_printf(&t, "PAGESIZE=4096\nSYMBOL(swapper_pg_dir)=%" PRIx64 "\n", l->swapper_pg_dir);
	kp_sb_printf(&t, "SYMBOL(_stext)=%" PRIx64 "\n", l->text_va);
	if (scan->has_tables) {
		const struct kp_kallsyms_tables *k = &scan->tables;
		kp_sb_printf(&t, "SYMBOL(kallsyms_names)=%" PRIx64 "\nSYMBOL(kallsyms_num_syms)=%" PRIx64 "\n"
			"SYMBOL(kallsyms_token_table)=%" PRIx64 "\nSYMBOL(kallsyms_token_index)=%" PRIx64 "\n",
		    k->names, k->num_syms, k->token_table, k->token_index);
		if (k->offsets)
			kp_sb_printf(&t, "SYMBOL(kallsyms_offsets)=%" PRIx64 "\n", k->offsets);
		if (k->relative_base)
			kp_sb_printf(&t, "SYMBOL(kallsyms_relative_base)=%" PRIx64 "\n",
			    k->relative_base);
		if (k->addresses)
			kp_sb_printf(&t, "SYMBOL(kallsyms_addresses)=%" PRIx64 "\n", k->addresses);
	}
	kp_sb_printf(&t, "NUMBER(phys_base)=%" PRId64 "\nNUMBER(pgtable_l5_enabled)=%d\nKERNELOFFSET=%" PRIx64 "\n",
	    (int64_t)l->phys_base, r->levels == 5, l->kaslr);
	*len_ret = t.len;
	return kp_sb_take(&t);
}

static struct kp_error *derive(struct kp_memory *mem, const struct regs *r,
			       const struct kp_open_options *opts, struct kp_locate_result *ret)
{
	struct kp_symtab *st = NULL;
	struct kp_image_scan scan = {0};
	uint64_t bias = 0;
	bool link_addresses = opts->system_map && !opts->kallsyms;
	const char *how;
	struct kp_error *err;
	if (opts->kallsyms || opts->system_map) {
		how = opts->kallsyms ? opts->kallsyms : opts->system_map;
		err = symbols_from_file(r, how, link_addresses, &st, &bias);
	} else {
		how = "kallsyms tables in memory";
		err = symbols_from_image(mem, r, &scan, &st);
	}
	struct layout l = { 0 };
	if (!err)
		err = find_layout(mem, r, st, bias, link_addresses, how, &l);
	size_t len;
	char *text = err ? NULL : reconstruct_vmcoreinfo(mem, r, st, bias, &scan, &l, &len);
	kp_symtab_destroy(st);
	if (err)
		return err;
	if (!text)
		return &kp_enomem;
	ret->vmcoreinfo = text;
	ret->vmcoreinfo_size = len;
	snprintf(ret->origin, sizeof(ret->origin),
		 "none in the dump: reconstructed from CPU %d registers and %s", r->cpu, how);
	snprintf(ret->verified, sizeof(ret->verified), "derived from IDT and CR3 of CPU %d",
		 r->cpu);
	return NULL;
}

// ---------------------------------------------------------------- the locator

struct kp_locator {
	struct kp_memory *mem;
	struct regs r;
};

struct kp_error *kp_x86_locator_create(struct kp_memory *mem, const struct kp_source *src,
				       struct kp_locator **ret)
{
	struct kp_locator *l = calloc(1, sizeof(*l));
	if (!l)
		return &kp_enomem;
	struct kp_error *err = setup_regs(mem, src, &l->r);
	if (err) {
		free(l);
		return err;
	}
	l->mem = mem;
	// Candidates are checked and the image scanned through CR3's tables.
	kp_memory_set_translator(mem, kp_pgtable_translate, l->r.pt);
	*ret = l;
	return NULL;
}

void kp_x86_locator_destroy(struct kp_locator *l)
{
	if (!l)
		return;
	kp_memory_set_translator(l->mem, NULL, NULL);
	kp_pgtable_destroy(l->r.pt);
	free(l);
}

struct kp_error *kp_x86_locator_check(struct kp_locator *l, const struct kp_open_options *opts,
				      const char *text, size_t len, char *verified,
				      size_t verified_size)
{
	struct kp_error *err = check_candidate(l->mem, &l->r, opts, text, len);
	if (!err)
		snprintf(verified, verified_size, "verified against IDT and CR3 of CPU %d",
			 l->r.cpu);
	return err;
}

struct kp_error *kp_x86_locator_derive(struct kp_locator *l, const struct kp_open_options *opts,
				       struct kp_locate_result *ret)
{
	return derive(l->mem, &l->r, opts, ret);
}
