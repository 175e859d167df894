// Finding the kernel in a physical-only dump that carries no VMCOREINFO note
// (QEMU dump-guest-memory without -device vmcoreinfo, or a cleared note).
//
// 1. The note is only the way the text reaches the dump; the text itself lives
//    in the guest's RAM. Since Linux 4.13 ("kexec: move vmcoreinfo out of the
//    kernel's .bss section"), crash_save_vmcoreinfo_init() fills a page from
//    get_zeroed_page() (vmcoreinfo_data) with "OSRELEASE=...\nPAGESIZE=..." at
//    boot on every kernel with CONFIG_CRASH_CORE, whether or not a dump device
//    is configured. The text starts at a page boundary, so reading the first
//    bytes of every physical page finds it.
// 2. A page found that way may be stale (left by the kernel that ran before a
//    kexec), so it is checked against the registers that QEMU saved for a CPU:
//    the page tables at CR3 must map swapper_pg_dir where the text's
//    KERNELOFFSET and phys_base put it, and IDT vector 0 must point at
//    asm_exc_divide_error (divide_error before 5.8) by the text's symbols.
// 3. Without a usable page, everything comes from the registers: CR3 gives
//    the page tables, the IDT handler is a known kernel-text address, and the
//    symbols come from a System.map / kallsyms file or from the kernel's own
//    kallsyms tables, found in the kernel image by their signature.
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "io/file.h"
#include "symbols/kallsyms.h"
#include "core/kernel.h"
#include "core/locate.h"
#include "arch/x86_64/pgtable.h"
#include "symbols/symtab.h"
#include "format/vmcoreinfo.h"

#define PAGE 4096ULL
#define CR0_PG (1ULL << 31)
#define CR4_LA57 (1ULL << 12)
#define CR3_ADDR_MASK 0x000ffffffffff000ULL
#define CR3_PTI_USER (1ULL << 12)	// PTI: the user PGD is the kernel's + 4 KiB
#define KERNEL_PGD_INDEX 511		// top-level slot of __START_KERNEL_map
#define MAX_SYMS 4000000u
#define SCAN_MAX_PAGES (1ULL << 22)	// 16 GiB of physical memory

static const char prefix[] = "OSRELEASE=";

// ---------------------------------------------------------------- helpers

static struct kp_error *read_u64(struct kp_memory *mem, enum kp_space space, uint64_t a,
				 uint64_t *ret)
{
	return kp_memory_read(mem, space, a, ret, sizeof(*ret));
}

static bool ok(struct kp_error *err)
{
	if (!err)
		return true;
	kp_error_destroy(err);
	return false;
}

// NUL-terminated string at va (at most size-1 bytes), reading up to page ends
// only so that a string at the end of a mapping does not fault.
static bool read_cstr(struct kp_memory *mem, uint64_t va, char *buf, size_t size)
{
	size_t have = 0;
	while (have < size - 1) {
		size_t chunk = PAGE - ((va + have) & (PAGE - 1));
		if (chunk > size - 1 - have)
			chunk = size - 1 - have;
		if (!ok(kp_memory_read(mem, KP_VIRT, va + have, buf + have, chunk)))
			return false;
		if (memchr(buf + have, '\0', chunk))
			return true;
		have += chunk;
	}
	buf[size - 1] = '\0';
	return true;
}

// ---------------------------------------------------------------- vmcoreinfo page

static bool plausible(const char *text, size_t len)
{
	// Printable text lines only, with the keys every x86-64 kernel writes.
	for (size_t i = 0; i < len; i++) {
		unsigned char c = text[i];
		if (c != '\n' && (c < 0x20 || c > 0x7e))
			return false;
	}
	return memmem(text, len, "\nPAGESIZE=", 10) &&
	       memmem(text, len, "\nKERNELOFFSET=", 14) &&
	       memmem(text, len, "SYMBOL(swapper_pg_dir)=", 23);
}

// A page-aligned candidate at pa: the whole page must read and look right.
static struct kp_error *try_page(struct kp_memory *mem, uint64_t pa, char **text_ret,
				 size_t *len_ret)
{
	char head[sizeof(prefix) - 1];
	// Excluded or unreadable pages cannot hold it.
	if (!ok(kp_memory_read(mem, KP_PHYS, pa, head, sizeof(head))) ||
	    memcmp(head, prefix, sizeof(head)))
		return &kp_not_found;
	char *page = malloc(PAGE + 1);
	if (!page)
		return &kp_enomem;
	if (!ok(kp_memory_read(mem, KP_PHYS, pa, page, PAGE))) {
		free(page);
		return &kp_not_found;
	}
	page[PAGE] = '\0';
	size_t len = strlen(page);
	if (!plausible(page, len)) {
		free(page);
		return &kp_not_found;
	}
	*text_ret = page;
	*len_ret = len;
	return NULL;
}

// Where the next file data at or after source offset off lies, within a
// segment read from a plain file: [*data, *hole). False if there is none
// before end. Without SEEK_DATA support everything is data.
static bool next_data(const struct kp_file *f, uint64_t off, uint64_t end, uint64_t *data,
		      uint64_t *hole)
{
	off_t d = lseek(f->fd, (off_t)off, SEEK_DATA);
	if (d < 0) {
		if (errno == ENXIO)
			return false;	// only a hole up to EOF
		*data = off;
		*hole = end;
		return true;
	}
	if ((uint64_t)d >= end)
		return false;
	off_t h = lseek(f->fd, d, SEEK_HOLE);
	*data = (uint64_t)d;
	*hole = h < 0 || (uint64_t)h > end ? end : (uint64_t)h;
	return true;
}

struct kp_error *kp_locate_vmcoreinfo_page(struct kp_memory *mem, uint64_t *pa,
					   char **text_ret, size_t *len_ret)
{
	struct kp_segment_info seg;
	uint64_t scanned = 0;
	uint64_t a = (*pa + PAGE - 1) & ~(PAGE - 1);
	// Segment by segment: zero-filled tails (p_memsz > p_filesz) cannot
	// hold it and holes of sparse files need not be read (reading them
	// through the mapping costs a zeroed page-cache page each).
	while (a >= *pa && kp_memory_segment_at(mem, KP_PHYS, a, &seg)) {
		uint64_t from = a > seg.start ? a : (seg.start + PAGE - 1) & ~(PAGE - 1);
		uint64_t to = seg.last;	// inclusive
		if (seg.last == UINT64_MAX)
			return kp_error_create(KP_ERR_NOT_FOUND, "no vmcoreinfo page in the dump's memory");
		a = seg.last + 1;
		if (seg.fn == kp_read_zero || from > to || to - from < PAGE - 1)
			continue;
		uint64_t end = to - PAGE + 2;	// pages start below end
		while (from < end) {
			uint64_t stop = end;
			if (seg.fn == kp_file_read_fn) {
				uint64_t data, hole, base = seg.offset - seg.start;
				if (!next_data(seg.arg, from + base, end + base, &data, &hole))
					break;
				from = (data - base + PAGE - 1) & ~(PAGE - 1);
				stop = hole - base;
			}
			for (; from < stop; from += PAGE) {
				// The page is allocated early at boot, low in RAM
				// (20 MiB into a 512 MiB guest); bound the scan of
				// what hostile dumps claim to hold.
				if (++scanned > SCAN_MAX_PAGES)
					return kp_error_create(KP_ERR_NOT_FOUND,
							       "no vmcoreinfo page in the first %llu GiB of the dump's memory (scanned up to phys 0x%" PRIx64 ")",
							       SCAN_MAX_PAGES * PAGE >> 30, from);
				struct kp_error *err = try_page(mem, from, text_ret, len_ret);
				if (!err) {
					*pa = from;
					return NULL;
				}
				if (err != &kp_not_found)
					return err;
			}
		}
	}
	return kp_error_create(KP_ERR_NOT_FOUND, "no vmcoreinfo page in the dump's memory");
}

// ---------------------------------------------------------------- CPU registers

struct regs {
	int cpu;
	const struct kp_cpu_state *cs;
	int levels;
	uint64_t root;		// physical address of the kernel's top-level table
	struct kp_pgtable *pt;
	uint64_t handler;	// IDT vector 0
};

// The handler of IDT vector 0 through root's tables: a present 64-bit
// interrupt or trap gate into the kernel image (Intel SDM 3A, 6.14.1).
static struct kp_error *idt_handler(struct kp_memory *mem, const struct kp_cpu_state *cs,
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
	if (h < KP_START_KERNEL_MAP || h - KP_START_KERNEL_MAP >= KP_KERNEL_IMAGE_SIZE)
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
		const struct kp_cpu_state *cs = &src->cpus[i];
		// Paging on and an IDT: a CPU that has run the kernel.
		if (!cs->has_control || !(cs->cr0 & CR0_PG) || !cs->idt_base)
			continue;
		int levels = cs->cr4 & CR4_LA57 ? 5 : 4;
		// With PTI the kernel's PGD is the even page of an 8 KiB pair
		// and CR3 may hold the user one; without PTI bit 12 is an
		// address bit. Try the kernel's first.
		uint64_t roots[2] = {cs->cr3 & CR3_ADDR_MASK & ~CR3_PTI_USER,
				     cs->cr3 & CR3_ADDR_MASK};
		for (int k = 0; k < (roots[0] == roots[1] ? 1 : 2); k++) {
			struct kp_pgtable *pt;
			struct kp_error *err = kp_pgtable_create(mem, roots[k], levels, &pt);
			uint64_t h = 0;
			if (!err)
				err = idt_handler(mem, cs, pt, &h);
			if (!err) {
				*r = (struct regs){.cpu = (int)i, .cs = cs, .levels = levels,
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
	uint64_t claim = sw - KP_START_KERNEL_MAP + phys_base;
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
	err = read_u64(mem, KP_PHYS, claim + KERNEL_PGD_INDEX * 8, &mine);
	if (!err)
		err = read_u64(mem, KP_PHYS, r->root + KERNEL_PGD_INDEX * 8, &theirs);
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
		if (ok(kp_symtab_by_name(st, names[i], ret)))
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

static struct kp_error *symbols_from_file(const char *path, struct kp_symtab **ret)
{
	char *text;
	size_t len;
	struct kp_error *err = kp_read_whole_file(path, &text, &len);
	if (err)
		return err;
	struct kp_symtab *st;
	err = kp_symtab_create(&st);
	if (!err)
		err = kp_kallsyms_parse_text(text, len, 0, path, st);
	free(text);
	if (!err)
		err = kp_symtab_finalize(st);
	if (err) {
		kp_symtab_destroy(st);
		return err;
	}
	*ret = st;
	return NULL;
}

static struct kp_error *symbols_from_tables(struct kp_memory *mem,
					    const struct kp_kallsyms_tables *t,
					    struct kp_symtab **ret)
{
	struct kp_symtab *st;
	struct kp_error *err = kp_symtab_create(&st);
	if (!err)
		err = kp_kallsyms_read_memory(mem, t, st);
	if (!err)
		err = kp_symtab_finalize(st);
	if (err) {
		kp_symtab_destroy(st);
		return err;
	}
	*ret = st;
	return NULL;
}

static bool vmcoreinfo_tables(const struct kp_vmcoreinfo *vi, struct kp_kallsyms_tables *t)
{
	memset(t, 0, sizeof(*t));
	if (!kp_vmcoreinfo_symbol(vi, "kallsyms_names", &t->names) ||
	    !kp_vmcoreinfo_symbol(vi, "kallsyms_num_syms", &t->num_syms) ||
	    !kp_vmcoreinfo_symbol(vi, "kallsyms_token_table", &t->token_table) ||
	    !kp_vmcoreinfo_symbol(vi, "kallsyms_token_index", &t->token_index))
		return false;
	if (kp_vmcoreinfo_symbol(vi, "kallsyms_offsets", &t->offsets) &&
	    kp_vmcoreinfo_symbol(vi, "kallsyms_relative_base", &t->relative_base))
		return true;
	return kp_vmcoreinfo_symbol(vi, "kallsyms_addresses", &t->addresses);
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
		return symbols_from_file(opts->kallsyms, ret);
	if (vmcoreinfo_tables(vi, &t)) {
		struct kp_error *err = symbols_from_tables(mem, &t, ret);
		return err ? kp_error_prefix(err, "kallsyms tables it names") : NULL;
	}
	if (opts->system_map) {
		*bias_ret = kaslr;
		return symbols_from_file(opts->system_map, ret);
	}
	struct kp_error *err = kp_locate_kallsyms(mem, KP_START_KERNEL_MAP,
						  KP_START_KERNEL_MAP + KP_KERNEL_IMAGE_SIZE, &t);
	if (err)
		return err;
	return symbols_from_tables(mem, &t, ret);
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

struct text {
	char *buf;
	size_t len, cap;
	bool failed;
};

static void add(struct text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void add(struct text *t, const char *fmt, ...)
{
	va_list ap;
	for (;;) {
		va_start(ap, fmt);
		int n = vsnprintf(t->buf + t->len, t->cap - t->len, fmt, ap);
		va_end(ap);
		if (n < 0) {
			t->failed = true;
			return;
		}
		if ((size_t)n < t->cap - t->len) {
			t->len += n;
			return;
		}
		char *nb = realloc(t->buf, t->cap * 2 + n + 1);
		if (!nb) {
			t->failed = true;
			return;
		}
		t->buf = nb;
		t->cap = t->cap * 2 + n + 1;
	}
}

static bool lookup(struct kp_symtab *st, const char *name, uint64_t bias, uint64_t *ret)
{
	struct kp_symbol s;
	if (!ok(kp_symtab_by_name(st, name, &s)))
		return false;
	*ret = s.address + bias;
	return true;
}

static struct kp_error *derive(struct kp_memory *mem, const struct regs *r,
			       const struct kp_open_options *opts, struct kp_locate_result *ret)
{
	struct kp_symtab *st = NULL;
	struct kp_image_scan scan = {0};
	uint64_t bias = 0, kaslr, text_va, sw;
	const char *how;
	struct kp_error *err = NULL;

	if (opts->kallsyms || opts->system_map) {
		const char *path = opts->kallsyms ? opts->kallsyms : opts->system_map;
		err = symbols_from_file(path, &st);
		if (err)
			return err;
		if (opts->system_map && !opts->kallsyms) {
			// Link addresses: the handler's distance from its
			// link address is the KASLR offset.
			struct kp_symbol s;
			err = divide_error_sym(st, &s);
			if (err)
				goto out;
			bias = r->handler - s.address;
			if (bias & (PAGE - 1)) {
				err = kp_error_create(KP_ERR_INVALID,
						      "%s does not match the dump: IDT vector 0 of CPU %d points at 0x%" PRIx64 ", %s links at 0x%" PRIx64 " (not a page-aligned KASLR offset)",
						      path, r->cpu, r->handler, s.name, s.address);
				goto out;
			}
		}
		err = check_handler(r, st, bias);
		if (err) {
			err = kp_error_prefix(err, "%s does not match the dump", path);
			goto out;
		}
		how = path;
	} else {
		err = kp_locate_scan_image(mem, KP_START_KERNEL_MAP, KP_START_KERNEL_MAP + KP_KERNEL_IMAGE_SIZE,
				 &scan);
		if (err)
			return err;
		if (!scan.has_tables) {
			err = kp_error_create(KP_ERR_NOT_FOUND,
					      "no VMCOREINFO, no vmcoreinfo page, and no kallsyms tables found in the kernel image mapped by CR3 of CPU %d: pass the kernel's System.map with -m or a kallsyms file with --kallsyms",
					      r->cpu);
			goto out;
		}
		err = symbols_from_tables(mem, &scan.tables, &st);
		if (err) {
			err = kp_error_prefix(err, "kallsyms tables found at 0x%" PRIx64,
					      scan.tables.token_table);
			goto out;
		}
		err = check_handler(r, st, 0);
		if (err) {
			err = kp_error_prefix(err, "kallsyms tables found at 0x%" PRIx64,
					      scan.tables.token_table);
			goto out;
		}
		how = "kallsyms tables in memory";
	}
	if (!lookup(st, "_text", bias, &text_va) && !lookup(st, "_stext", bias, &text_va)) {
		err = kp_error_create(KP_ERR_NOT_FOUND, "no _text symbol (from %s)", how);
		goto out;
	}
	if (!lookup(st, "init_top_pgt", bias, &sw) && !lookup(st, "swapper_pg_dir", bias, &sw)) {
		err = kp_error_create(KP_ERR_NOT_FOUND, "no swapper_pg_dir symbol (from %s)", how);
		goto out;
	}
	// Without a System.map the link address of _text is assumed to be the
	// x86-64 default (CONFIG_PHYSICAL_START 0x1000000).
	kaslr = opts->system_map && !opts->kallsyms ? bias : text_va - KP_DEFAULT_KERNEL_START;
	struct kp_vtop v;
	err = kp_pgtable_walk(r->pt, text_va, &v);
	if (!err && !v.present)
		err = kp_error_fault(text_va, "_text 0x%" PRIx64 " is not mapped by CR3 of CPU %d",
				     text_va, r->cpu);
	if (err)
		goto out;
	uint64_t phys_base = v.paddr - (text_va - KP_START_KERNEL_MAP);
	err = check_pgd(mem, r, sw, phys_base);
	if (err)
		goto out;

	char banner[512] = "";
	uint64_t banner_va;
	if (!(lookup(st, "linux_banner", bias, &banner_va) &&
	      read_cstr(mem, banner_va, banner, sizeof(banner))) && scan.banner)
		read_cstr(mem, scan.banner, banner, sizeof(banner));

	struct text t = {.cap = 1024};
	t.buf = malloc(t.cap);
	if (!t.buf) {
		err = &kp_enomem;
		goto out;
	}
	t.buf[0] = '\0';
	if (!strncmp(banner, "Linux version ", 14)) {
		size_t n = strcspn(banner + 14, " \n");
		add(&t, "OSRELEASE=%.*s\n", (int)n, banner + 14);
	}
	add(&t, "PAGESIZE=4096\nSYMBOL(swapper_pg_dir)=%" PRIx64 "\n", sw);
	add(&t, "SYMBOL(_stext)=%" PRIx64 "\n", text_va);
	if (scan.has_tables) {
		const struct kp_kallsyms_tables *k = &scan.tables;
		add(&t, "SYMBOL(kallsyms_names)=%" PRIx64 "\nSYMBOL(kallsyms_num_syms)=%" PRIx64 "\n"
			"SYMBOL(kallsyms_token_table)=%" PRIx64 "\nSYMBOL(kallsyms_token_index)=%" PRIx64 "\n",
		    k->names, k->num_syms, k->token_table, k->token_index);
		if (k->offsets)
			add(&t, "SYMBOL(kallsyms_offsets)=%" PRIx64 "\nSYMBOL(kallsyms_relative_base)=%" PRIx64 "\n",
			    k->offsets, k->relative_base);
		else
			add(&t, "SYMBOL(kallsyms_addresses)=%" PRIx64 "\n", k->addresses);
	}
	add(&t, "NUMBER(phys_base)=%" PRId64 "\nNUMBER(pgtable_l5_enabled)=%d\nKERNELOFFSET=%" PRIx64 "\n",
	    (int64_t)phys_base, r->levels == 5, kaslr);
	if (t.failed) {
		free(t.buf);
		err = &kp_enomem;
		goto out;
	}
	ret->vmcoreinfo = t.buf;
	ret->vmcoreinfo_size = t.len;
	snprintf(ret->origin, sizeof(ret->origin),
		 "none in the dump: reconstructed from CPU %d registers and %s", r->cpu, how);
	snprintf(ret->verified, sizeof(ret->verified), "derived from IDT and CR3 of CPU %d",
		 r->cpu);
out:
	kp_symtab_destroy(st);
	return err;
}

// ---------------------------------------------------------------- driver

struct kp_error *kp_locate_kernel(struct kp_memory *mem, const struct kp_source *src,
				  const struct kp_open_options *opts,
				  struct kp_locate_result *ret)
{
	struct regs r;
	struct kp_error *regs_err = setup_regs(mem, src, &r);
	if (regs_err == &kp_enomem)
		return regs_err;
	if (!regs_err)
		kp_memory_set_translator(mem, kp_pgtable_translate, r.pt);

	struct kp_locate_result res = {0};
	struct kp_error *err = NULL, *rejected = NULL, *scan_err = NULL;
	uint64_t pa = 0, rejected_pa = 0;
	unsigned nrejected = 0;
	for (;; pa += PAGE) {
		char *text;
		size_t len;
		err = kp_locate_vmcoreinfo_page(mem, &pa, &text, &len);
		if (err) {
			if (err->code != KP_ERR_NOT_FOUND)
				goto out;
			scan_err = err;
			err = NULL;
			break;
		}
		if (regs_err) {
			// Nothing to check it against: take it as it is.
			res.vmcoreinfo = text;
			res.vmcoreinfo_size = len;
			snprintf(res.verified, sizeof(res.verified), "not verified: %s",
				 regs_err->message);
			break;
		}
		struct kp_error *why = check_candidate(mem, &r, opts, text, len);
		if (!why) {
			res.vmcoreinfo = text;
			res.vmcoreinfo_size = len;
			snprintf(res.verified, sizeof(res.verified),
				 "verified against IDT and CR3 of CPU %d", r.cpu);
			break;
		}
		free(text);
		if (why == &kp_enomem) {
			err = why;
			goto out;
		}
		if (!rejected) {
			rejected = why;
			rejected_pa = pa;
		} else {
			kp_error_destroy(why);
		}
		nrejected++;
	}
	if (res.vmcoreinfo) {
		snprintf(res.origin, sizeof(res.origin), "found in memory at phys 0x%" PRIx64, pa);
	} else if (regs_err) {
		err = kp_error_create(regs_err->code, "no VMCOREINFO note, %s, and %s: "
				      "cannot locate the kernel without VMCOREINFO",
				      scan_err ? scan_err->message : "no vmcoreinfo page",
				      regs_err->message);
		goto out;
	} else {
		err = derive(mem, &r, opts, &res);
		if (err)
			goto out;
	}
	if (rejected) {
		size_t n = strlen(res.verified);
		snprintf(res.verified + n, sizeof(res.verified) - n,
			 "; rejected %u stale vmcoreinfo page(s), first at phys 0x%" PRIx64, nrejected,
			 rejected_pa);
	}
	*ret = res;
	res.vmcoreinfo = NULL;
out:
	if (err && rejected)
		err = kp_error_prefix(err, "vmcoreinfo page at phys 0x%" PRIx64 " rejected (%s); then",
				      rejected_pa, rejected->message);
	kp_error_destroy(rejected);
	kp_error_destroy(regs_err);
	kp_error_destroy(scan_err);
	free(res.vmcoreinfo);
	kp_memory_set_translator(mem, NULL, NULL);
	kp_pgtable_destroy(r.pt);
	return err;
}
