// SPDX-License-Identifier: MIT
// Finding the kernel in physical-only dumps without a VMCOREINFO note
// (src/locate.c): the vmcoreinfo page in memory checked against the CPU
// registers, stale pages rejected, and the facts derived from the registers,
// the kallsyms tables found in the image or a symbol file.
#include <unistd.h>

#include "test.h"
#include "collect.h"
#include "symbols/kallsyms.h"
#include "core/kernel.h"
#include "core/locate.h"
#include "symbols/kallsyms_scan.h"
#include "mkcore.h"
#include "mkkallsyms.h"
#include "mkpgtable.h"

#define START_MAP 0xffffffff80000000ULL
#define LINK_TEXT 0xffffffff81000000ULL
#define TEXT_PA UINT64_C(0x200000)
#define IDT_VA 0xfffffe0000000000ULL	// cpu_entry_area's read-only IDT
#define VMCI_PA 0x100000ULL
#define STALE_PA 0x80000ULL
// Offsets from _text (and TEXT_PA).
#define O_DIVIDE 0x1200
#define O_OTHER 0x1300
#define O_BANNER 0x100000
#define O_POB 0x100200
#define O_IDT 0x103000
#define O_KALLSYMS 0x180000
#define O_PGD 0x400000	// = phys 0x600000, where mkpgtable puts the tables

static const char banner[] = "Linux version 6.1.0-locate (kpeek@test) #1 SMP\n";

struct scene_opts {
	int levels;
	uint64_t kaslr;
	bool vmcoreinfo_page;	// the real page at VMCI_PA
	bool stale_page;	// a page from "another boot" at STALE_PA
	bool no_tables;		// no kallsyms tables in memory
	bool seqs;		// kallsyms_seqs_of_names between markers and tokens
	bool no_cpus;		// no QEMU notes
	bool idt_unmapped;
	bool pti;		// CR3 with the PTI user bit and a PCID
	bool vmci_note;		// a VMCOREINFO note (the ordinary case)
};

struct scene {
	char *core;
	uint64_t text, phys_base, pgd, direct;
	struct kp_kallsyms_tables tables;
	struct kp_mkkallsyms_sym syms[8];
	size_t nsyms;
};

static uint64_t direct_base(int levels)
{
	return levels == 5 ? 0xff11000000000000ULL : 0xffff888000000000ULL;
}

static void put64(uint8_t *m, uint64_t pa, uint64_t v)
{
	memcpy(m + pa, &v, 8);
}

static void gate(uint8_t *g, uint64_t h)
{
	memset(g, 0, 16);
	g[0] = h;
	g[1] = h >> 8;
	g[2] = 0x10;	// __KERNEL_CS
	g[5] = 0x8e;	// present, DPL 0, 64-bit interrupt gate
	g[6] = h >> 16;
	g[7] = h >> 24;
	for (int i = 0; i < 4; i++)
		g[8 + i] = h >> (32 + 8 * i);
}

static void vmcoreinfo_text(char *buf, size_t size, const struct scene *s, int levels,
			    uint64_t kaslr)
{
	snprintf(buf, size,
		 "OSRELEASE=6.1.0-locate\nPAGESIZE=4096\n"
		 "SYMBOL(swapper_pg_dir)=%" PRIx64 "\n"
		 "SYMBOL(kallsyms_names)=%" PRIx64 "\nSYMBOL(kallsyms_num_syms)=%" PRIx64 "\n"
		 "SYMBOL(kallsyms_token_table)=%" PRIx64 "\nSYMBOL(kallsyms_token_index)=%" PRIx64 "\n"
		 "SYMBOL(kallsyms_offsets)=%" PRIx64 "\nSYMBOL(kallsyms_relative_base)=%" PRIx64 "\n"
		 "NUMBER(phys_base)=%" PRId64 "\nNUMBER(pgtable_l5_enabled)=%d\n"
		 "KERNELOFFSET=%" PRIx64 "\n",
		 s->pgd, s->tables.names, s->tables.num_syms, s->tables.token_table,
		 s->tables.token_index, s->tables.offsets, s->tables.relative_base,
		 (int64_t)s->phys_base, levels == 5, kaslr);
}

// Copies the mkkallsyms tables into m at pa, inserting u8[3][n] of
// kallsyms_seqs_of_names before the token table when seqs is set.
static void place_tables(uint8_t *m, uint64_t pa, const struct kp_mkkallsyms *k, bool seqs,
			 struct kp_kallsyms_tables *t)
{
	*t = k->tables;
	size_t tt = kp_mkkallsyms_off(k, k->tables.token_table);
	uint32_t n;
	memcpy(&n, k->buf + kp_mkkallsyms_off(k, k->tables.num_syms), 4);
	size_t gap = seqs ? ((3 * (size_t)n + 7) & ~(size_t)7) : 0;
	memcpy(m + pa, k->buf, tt);
	for (size_t i = 0; i < gap; i++)
		m[pa + tt + i] = (uint8_t)(i % 3 == 0 ? 0 : i * 7);
	memcpy(m + pa + tt + gap, k->buf + tt, k->size - tt);
	t->token_table += gap;
	t->token_index += gap;
}

static void build(const struct scene_opts *o, struct scene *s)
{
	memset(s, 0, sizeof(*s));
	int levels = o->levels ? o->levels : 4;
	s->text = LINK_TEXT + o->kaslr;
	s->phys_base = TEXT_PA - (s->text - START_MAP);
	s->pgd = s->text + O_PGD;
	s->direct = direct_base(levels);

	char spec[1024];
	snprintf(spec, sizeof(spec),
		 "levels %d\nram 6M\ntables 0x600000\nmaxtables 64\n"
		 "map 0x%" PRIx64 " 0x%" PRIx64 " 2M 3\n"
		 "map 0x%" PRIx64 " 0 1G\n",
		 levels, s->text, TEXT_PA, s->direct);
	struct kp_mkpgtable *pg;
	CHECK_OK(kp_mkpgtable_create(spec, &pg));
	if (!o->idt_unmapped)
		CHECK_OK(kp_mkpgtable_map(pg, IDT_VA, TEXT_PA + O_IDT, 4096, 1ULL << 63));
	CHECK_U64(pg->root, TEXT_PA + O_PGD);
	uint8_t *m = pg->buf;
	memset(m, 0, pg->ram);

	memset(m + TEXT_PA, 0xcc, 0x2000);
	memcpy(m + TEXT_PA + O_BANNER, banner, sizeof(banner));
	put64(m, TEXT_PA + O_POB, s->direct);
	gate(m + TEXT_PA + O_IDT, s->text + O_DIVIDE);
	gate(m + TEXT_PA + O_IDT + 16, s->text + O_OTHER);

	const struct kp_mkkallsyms_sym syms[] = {
		{"_text", 'T', s->text},
		{"asm_exc_divide_error", 'T', s->text + O_DIVIDE},
		{"asm_exc_debug", 'T', s->text + O_OTHER},
		{"linux_banner", 'D', s->text + O_BANNER},
		{"page_offset_base", 'D', s->text + O_POB},
		{"init_top_pgt", 'D', s->pgd},
		{"_end", 'B', s->pgd + 0x10000},
	};
	s->nsyms = sizeof(syms) / sizeof(syms[0]);
	memcpy(s->syms, syms, sizeof(syms));
	struct kp_mkkallsyms k;
	CHECK_OK(kp_mkkallsyms_build(syms, s->nsyms, s->text + O_KALLSYMS, 0, &k));
	if (!o->no_tables)
		place_tables(m, TEXT_PA + O_KALLSYMS, &k, o->seqs, &s->tables);
	else
		s->tables = k.tables;

	char text[2048];
	if (o->vmcoreinfo_page) {
		vmcoreinfo_text(text, sizeof(text), s, levels, o->kaslr);
		memcpy(m + VMCI_PA, text, strlen(text));
	}
	if (o->stale_page) {
		// The previous kernel: another KASLR offset, so its swapper_pg_dir
		// is not where CR3's tables put it.
		struct scene old = *s;
		old.text = s->text + 0x4000000;
		old.phys_base = s->phys_base - 0x4000000;
		old.pgd = s->pgd + 0x4000000;
		vmcoreinfo_text(text, sizeof(text), &old, levels, o->kaslr + 0x4000000);
		memcpy(m + STALE_PA, text, strlen(text));
	}

	struct mkcore *mc = mkcore_create();
	if (o->vmci_note) {
		vmcoreinfo_text(text, sizeof(text), s, levels, o->kaslr);
		mkcore_add_vmcoreinfo(mc, text);
	}
	if (!o->no_cpus) {
		for (int cpu = 0; cpu < 2; cpu++) {
			struct mkcore_qemu_cpu q = {
				.rip = s->text + O_OTHER,
				.cr0 = 0x80050033,
				.cr3 = pg->root | (o->pti ? (1 << 12) | 5 : 0),
				.cr4 = 0x3506f0 | (levels == 5 ? 1 << 12 : 0),
				.idt_base = IDT_VA,
				.idt_limit = 0xfff,
				.cs_selector = 0x10,
			};
			mkcore_add_qemu_cpu(mc, &q);
		}
	}
	mkcore_add_load(mc, 0, 0, m, pg->size, pg->size);
	s->core = mkcore_write_tmp(mc);
	mkcore_destroy(mc);
	kp_mkkallsyms_deinit(&k);
	kp_mkpgtable_destroy(pg);
}

static void teardown(struct scene *s)
{
	unlink(s->core);
	free(s->core);
}

static char *write_syms(const struct scene *s, uint64_t bias, bool stub)
{
	char path[] = "/tmp/kpeek-locate-XXXXXX";
	int fd = mkstemp(path);
	if (fd < 0)
		abort();
	FILE *f = fdopen(fd, "w");
	if (stub)
		fprintf(f, "ffffffffffffffff B The real System.map is in the linux-image-6.1-dbg package\n");
	for (size_t i = 0; !stub && i < s->nsyms; i++)
		fprintf(f, "%016" PRIx64 " %c %s\n", s->syms[i].address - bias, s->syms[i].type,
			s->syms[i].name);
	fclose(f);
	return strdup(path);
}

static struct kp_kernel *open_core(const char *core, const char *system_map, const char *kallsyms)
{
	KP_OPTS(kp_open_options, o, .core = core, .system_map = system_map, .kallsyms = kallsyms);
	struct kp_kernel *k = NULL;
	CHECK_OK(kp_kernel_open(&o, &k));
	return k;
}

// The facts a VMCOREINFO note would have given.
static void check_facts(struct kp_kernel *k, const struct scene *s, int levels, uint64_t kaslr)
{
	KP_INIT(kp_kernel_info, info);
	kp_kernel_get_info(k, &info);
	CHECK(info.has_kaslr_offset);
	CHECK_U64(info.kaslr_offset, kaslr);
	CHECK_U64(kpt_fact(k, "phys_base"), s->phys_base);
	CHECK_U64(kpt_fact(k, "paging levels"), levels);
	CHECK_U64(kpt_fact(k, "pgd"), TEXT_PA + O_PGD);
	CHECK_U64(kpt_fact(k, "page_offset_base"), s->direct);
	CHECK_STR(info.release, "6.1.0-locate");
	struct kp_symbol sym;
	CHECK_OK(kp_symbol_by_name(k, "asm_exc_divide_error", &sym));
	CHECK_U64(sym.address, s->text + O_DIVIDE);
	uint64_t v = 0;
	CHECK_OK(kp_read_u64(k, s->text + O_POB, &v));
	CHECK_U64(v, s->direct);
	// Through the direct map too.
	CHECK_OK(kp_read_u64(k, s->direct + TEXT_PA + O_POB, &v));
	CHECK_U64(v, s->direct);
}

static void check_note_contains(struct kp_kernel *k, const char *origin, const char *check)
{
	KP_INIT(kp_kernel_info, info);
	kp_kernel_get_info(k, &info);
	CHECK(info.vmcoreinfo_source && strstr(info.vmcoreinfo_source, origin));
	if (!(info.vmcoreinfo_source && strstr(info.vmcoreinfo_source, origin)))
		printf("  origin: %s\n", info.vmcoreinfo_source ? info.vmcoreinfo_source : "(null)");
	CHECK(info.kaslr_check && strstr(info.kaslr_check, check));
	if (!(info.kaslr_check && strstr(info.kaslr_check, check)))
		printf("  check: %s\n", info.kaslr_check ? info.kaslr_check : "(null)");
}

TEST(page_verified_4level)
{
	struct scene s;
	struct scene_opts o = {.levels = 4, .kaslr = 0x1e000000, .vmcoreinfo_page = true};
	build(&o, &s);
	struct kp_kernel *k = open_core(s.core, NULL, NULL);
	if (k) {
		check_facts(k, &s, 4, o.kaslr);
		check_note_contains(k, "found in memory at phys 0x100000",
				    "verified against IDT and CR3 of CPU 0");
	}
	kp_kernel_destroy(k);
	teardown(&s);
}

TEST(page_verified_5level_pti)
{
	struct scene s;
	struct scene_opts o = {.levels = 5, .kaslr = 0x12600000, .vmcoreinfo_page = true,
			       .pti = true};
	build(&o, &s);
	struct kp_kernel *k = open_core(s.core, NULL, NULL);
	if (k) {
		check_facts(k, &s, 5, o.kaslr);
		check_note_contains(k, "found in memory", "verified against IDT and CR3 of CPU 0");
	}
	kp_kernel_destroy(k);
	teardown(&s);
}

TEST(note_wins)
{
	// With the note, nothing is located or verified.
	struct scene s;
	struct scene_opts o = {.kaslr = 0x2000000, .vmci_note = true, .stale_page = true};
	build(&o, &s);
	struct kp_kernel *k = open_core(s.core, NULL, NULL);
	if (k) {
		KP_INIT(kp_kernel_info, info);
		kp_kernel_get_info(k, &info);
		CHECK_STR(info.vmcoreinfo_source, "dump note");
		CHECK(info.kaslr_check == NULL);
		CHECK_U64(info.kaslr_offset, o.kaslr);
	}
	kp_kernel_destroy(k);
	teardown(&s);
}

TEST(stale_page_rejected)
{
	struct scene s;
	struct scene_opts o = {.kaslr = 0x1e000000, .vmcoreinfo_page = true, .stale_page = true};
	build(&o, &s);
	struct kp_kernel *k = open_core(s.core, NULL, NULL);
	if (k) {
		check_facts(k, &s, 4, o.kaslr);
		check_note_contains(k, "found in memory at phys 0x100000",
				    "rejected 1 stale vmcoreinfo page(s), first at phys 0x80000");
	}
	kp_kernel_destroy(k);
	teardown(&s);
}

TEST(only_stale_page_falls_back)
{
	struct scene s;
	struct scene_opts o = {.kaslr = 0x1e000000, .stale_page = true};
	build(&o, &s);
	struct kp_kernel *k = open_core(s.core, NULL, NULL);
	if (k) {
		check_facts(k, &s, 4, o.kaslr);
		check_note_contains(k, "reconstructed from CPU 0 registers and kallsyms tables",
				    "rejected 1 stale");
	}
	kp_kernel_destroy(k);
	teardown(&s);
}

TEST(registers_only)
{
	static const struct scene_opts cases[] = {
		{.levels = 4, .kaslr = 0x1e000000},
		{.levels = 5, .kaslr = 0x12600000},
		{.levels = 4, .kaslr = 0x0},
		{.levels = 4, .kaslr = 0x3c200000, .seqs = true},
		{.levels = 5, .kaslr = 0x8000000, .seqs = true, .pti = true},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct scene s;
		build(&cases[i], &s);
		struct kp_kernel *k = open_core(s.core, NULL, NULL);
		if (k) {
			check_facts(k, &s, cases[i].levels, cases[i].kaslr);
			check_note_contains(k, "none in the dump: reconstructed from CPU 0 registers and kallsyms tables in memory",
					    "derived from IDT and CR3 of CPU 0");
		} else {
			printf("  case %zu\n", i);
		}
		kp_kernel_destroy(k);
		teardown(&s);
	}
}

TEST(registers_and_symbol_files)
{
	struct scene s;
	struct scene_opts o = {.kaslr = 0x1e000000, .no_tables = true};
	build(&o, &s);
	KP_OPTS(kp_open_options, oo, .core = s.core);
	struct kp_kernel *k = NULL;
	CHECK_ERR(kp_kernel_open(&oo, &k), KP_ERR_NOT_FOUND, "pass the kernel's System.map with -m");

	char *map = write_syms(&s, o.kaslr, false);	// link addresses
	char *kallsyms = write_syms(&s, 0, false);	// relocated
	char *wrong = write_syms(&s, 0x200000, false);
	char *stub = write_syms(&s, 0, true);
	k = open_core(s.core, map, NULL);
	if (k) {
		check_facts(k, &s, 4, o.kaslr);
		check_note_contains(k, map, "derived from IDT");
	}
	kp_kernel_destroy(k);
	k = open_core(s.core, NULL, kallsyms);
	if (k)
		check_facts(k, &s, 4, o.kaslr);
	kp_kernel_destroy(k);
	oo.kallsyms = wrong;
	CHECK_ERR(kp_kernel_open(&oo, &k), KP_ERR_INVALID, "does not match the dump: IDT vector 0 of CPU 0 points at");
	oo.kallsyms = NULL;
	oo.system_map = stub;
	CHECK_ERR(kp_kernel_open(&oo, &k), KP_ERR_UNSUPPORTED, "placeholder System.map");
	for (char **p = (char *[]){map, kallsyms, wrong, stub, NULL}; *p; p++) {
		unlink(*p);
		free(*p);
	}
	teardown(&s);
}

TEST(page_without_registers)
{
	struct scene s;
	struct scene_opts o = {.kaslr = 0x1e000000, .vmcoreinfo_page = true, .no_cpus = true};
	build(&o, &s);
	struct kp_kernel *k = open_core(s.core, NULL, NULL);
	if (k) {
		check_facts(k, &s, 4, o.kaslr);
		check_note_contains(k, "found in memory", "not verified: no CPU registers in the dump");
	}
	kp_kernel_destroy(k);
	teardown(&s);
}

TEST(clear_errors)
{
	struct scene s;
	struct scene_opts o = {.kaslr = 0x1e000000, .no_cpus = true};
	build(&o, &s);
	KP_OPTS(kp_open_options, oo, .core = s.core);
	struct kp_kernel *k = NULL;
	CHECK_ERR(kp_kernel_open(&oo, &k), KP_ERR_NOT_FOUND,
		  "no CPU registers in the dump: cannot locate the kernel without VMCOREINFO");
	teardown(&s);

	struct scene_opts o2 = {.kaslr = 0x1e000000, .idt_unmapped = true};
	build(&o2, &s);
	oo.core = s.core;
	CHECK_ERR(kp_kernel_open(&oo, &k), KP_ERR_FAULT, "IDT at 0xfffffe0000000000 is not mapped");
	teardown(&s);

	// A page that disagrees with the registers and nothing else to go on.
	struct scene_opts o3 = {.kaslr = 0x1e000000, .stale_page = true, .no_tables = true};
	build(&o3, &s);
	oo.core = s.core;
	CHECK_ERR(kp_kernel_open(&oo, &k), KP_ERR_NOT_FOUND,
		  "vmcoreinfo page at phys 0x80000 rejected (swapper_pg_dir");
	teardown(&s);
}

// kp_locate_kallsyms over memory holding only the tables, every encoding.
TEST(kallsyms_signature)
{
	static const unsigned flags[] = {0, KP_MKKALLSYMS_NO_PERCPU, KP_MKKALLSYMS_ABSOLUTE,
					 KP_MKKALLSYMS_NO_COMPRESSION, KP_MKKALLSYMS_SEQS,
					 KP_MKKALLSYMS_TABLES_LAST, KP_MKKALLSYMS_PC_RELATIVE,
					 KP_MKKALLSYMS_PC_RELATIVE | KP_MKKALLSYMS_NO_COMPRESSION};
	struct kp_mkkallsyms_sym syms[600];
	char names[600][24];
	for (int i = 0; i < 600; i++) {
		snprintf(names[i], sizeof(names[i]), "sym_%d_%s", i, i % 3 ? "fn" : "var");
		syms[i] = (struct kp_mkkallsyms_sym){names[i], i % 3 ? 't' : 'd',
						     0xffffffff81000000ULL + 0x40ULL * i};
	}
	for (size_t f = 0; f < sizeof(flags) / sizeof(flags[0]); f++) {
		struct kp_mkkallsyms k;
		// 4-aligned only where the labels are (7.2).
		uint64_t base = 0xffffffff82000000ULL + 0x1238 * 8 +
				(flags[f] & KP_MKKALLSYMS_PC_RELATIVE ? 4 : 0);
		CHECK_OK(kp_mkkallsyms_build(syms, 600, base, flags[f], &k));
		// Garbage around the tables, as in .rodata.
		size_t pre = 0x10000 + (base & 0xfff), size = pre + k.size + 0x1000;
		uint8_t *buf = malloc(size);
		for (size_t i = 0; i < size; i++)
			buf[i] = (uint8_t)(i * 131 + 7);
		memcpy(buf + pre, k.buf, k.size);
		struct kp_memory *mem;
		CHECK_OK(kp_memory_create(&mem));
		CHECK_OK(kp_memory_add(mem, KP_VIRT, base - pre, size, kp_read_buffer, buf, 0));
		struct kp_kallsyms_tables t;
		struct kp_error *err = kp_locate_kallsyms(mem, base - pre, base - pre + size, 0xffffffff80000000ULL, &t);
		CHECK_OK(err);
		if (!err) {
			CHECK_U64(t.names, k.tables.names);
			CHECK_U64(t.num_syms, k.tables.num_syms);
			CHECK_U64(t.token_table, k.tables.token_table);
			CHECK_U64(t.token_index, k.tables.token_index);
			CHECK_U64(t.offsets, k.tables.offsets);
			CHECK_U64(t.relative_base, k.tables.relative_base);
			CHECK_U64(t.addresses, k.tables.addresses);
		}
		// Without the token index nothing is found.
		memset(buf + pre + kp_mkkallsyms_off(&k, k.tables.token_index) + 2, 0, 2);
		CHECK_ERR(kp_locate_kallsyms(mem, base - pre, base - pre + size, 0xffffffff80000000ULL, &t),
			  KP_ERR_NOT_FOUND, "no kallsyms tables");
		kp_memory_destroy(mem);
		free(buf);
		kp_mkkallsyms_deinit(&k);
	}
}

// Hostile memory: flipped bytes in the tables, the IDT, the page tables and
// the vmcoreinfo page must give an error or a kernel, never a crash.
TEST(corrupt_inputs)
{
	struct scene s;
	struct scene_opts o = {.kaslr = 0x1e000000, .vmcoreinfo_page = true, .seqs = true};
	build(&o, &s);
	uint8_t *img;
	size_t len;
	{
		FILE *f = fopen(s.core, "rb");
		fseek(f, 0, SEEK_END);
		len = ftell(f);
		fseek(f, 0, SEEK_SET);
		img = malloc(len);
		CHECK(fread(img, 1, len, f) == len);
		fclose(f);
	}
	// The single PT_LOAD starts at physical 0; find its file offset.
	uint64_t phoff, off0 = 0;
	memcpy(&phoff, img + 32, 8);
	for (int i = 0; i < 2; i++) {
		uint32_t type;
		memcpy(&type, img + phoff + 56 * i, 4);
		if (type == 1)
			memcpy(&off0, img + phoff + 56 * i + 8, 8);
	}
	CHECK(off0 != 0);
	const uint64_t spots[] = {
		VMCI_PA + 20, TEXT_PA + O_IDT + 5, TEXT_PA + O_IDT + 8, TEXT_PA + O_PGD + 511 * 8,
		TEXT_PA + O_PGD + 511 * 8 + 5, TEXT_PA + O_KALLSYMS + 0x10,
	};
	char path[] = "/tmp/kpeek-locate-corrupt-XXXXXX";
	int fd = mkstemp(path);
	close(fd);
	unsigned seed = 1;
	for (int round = 0; round < 60; round++) {
		uint8_t *c = malloc(len);
		memcpy(c, img, len);
		int nflips = 1 + round % 4;
		for (int j = 0; j < nflips; j++) {
			seed = seed * 1103515245 + 12345;
			uint64_t pa;
			if (j == 0 && round < 12)
				pa = spots[round % 6];
			else
				pa = TEXT_PA + O_KALLSYMS + (seed >> 8) % 0x8000;
			if (off0 + pa < len)
				c[off0 + pa] ^= (uint8_t)(1 + (seed >> 3) % 255);
		}
		CHECK(mkcore_write_bytes(path, c, len) == 0);
		KP_OPTS(kp_open_options, oo, .core = path);
		struct kp_kernel *k = NULL;
		struct kp_error *err = kp_kernel_open(&oo, &k);
		if (err) {
			CHECK(err->message && *err->message && !strchr(err->message, '\n'));
			kp_error_destroy(err);
		} else {
			KP_INIT(kp_kernel_info, info);
			kp_kernel_get_info(k, &info);
			kp_kernel_destroy(k);
		}
		free(c);
	}
	unlink(path);
	free(img);
	teardown(&s);
}

int main(void)
{
	RUN(page_verified_4level);
	RUN(page_verified_5level_pti);
	RUN(note_wins);
	RUN(stale_page_rejected);
	RUN(only_stale_page_falls_back);
	RUN(registers_only);
	RUN(registers_and_symbol_files);
	RUN(page_without_registers);
	RUN(clear_errors);
	RUN(kallsyms_signature);
	RUN(corrupt_inputs);
	return TEST_SUMMARY();
}
