// SPDX-License-Identifier: MIT
// x86-64 page-table walks over synthetic tables (tests/gen/mkpgtable): 4 and 5
// levels, 4K/2M/1G pages, not-present entries at every level, non-canonical
// addresses, flag bits, the table cache, and hostile tables (cycles, wild
// pointers, tables partly outside memory).
#include <time.h>

#include "test.h"
#include "io/memory.h"
#include "arch/x86_64/pgtable.h"
#include "../gen/mkpgtable.h"

struct fixture {
	struct kp_mkpgtable *pg;
	struct kp_memory *mem;
	struct kp_pgtable *pt;
};

static bool setup(struct fixture *f, const char *spec)
{
	memset(f, 0, sizeof(*f));
	struct kp_error *err = kp_mkpgtable_create(spec, &f->pg);
	if (err) {
		FAILF("mkpgtable: %s", err->message);
		kp_error_destroy(err);
		return false;
	}
	CHECK_OK(kp_memory_create(&f->mem));
	if (!f->mem)
		return false;
	CHECK_OK(kp_mkpgtable_add_to(f->pg, f->mem));
	CHECK_OK(kp_pgtable_create(f->mem, f->pg->root, f->pg->levels, &f->pt));
	if (!f->pt)
		return false;
	kp_memory_set_translator(f->mem, kp_pgtable_translate, f->pt);
	return true;
}

static void teardown(struct fixture *f)
{
	kp_pgtable_destroy(f->pt);
	kp_memory_destroy(f->mem);
	kp_mkpgtable_destroy(f->pg);
}

static struct kp_vtop walk_ok(struct fixture *f, uint64_t va)
{
	struct kp_vtop v;
	memset(&v, 0, sizeof(v));
	CHECK_OK(kp_pgtable_walk(f->pt, va, &v));
	return v;
}

static uint64_t entry_of(struct fixture *f, uint64_t va, int level)
{
	uint64_t e = 0;
	CHECK_OK(kp_mkpgtable_entry(f->pg, va, level, &e));
	return e;
}

static uint64_t table_of(struct fixture *f, uint64_t va, int level)
{
	uint64_t t = 0;
	CHECK_OK(kp_mkpgtable_table(f->pg, va, level, &t));
	return t;
}

static void check_translate(struct fixture *f, uint64_t va, uint64_t want_pa,
			    uint64_t want_size)
{
	uint64_t pa = 0, size = 0;
	CHECK_OK(kp_pgtable_translate(f->pt, va, &pa, &size));
	CHECK_U64(pa, want_pa);
	CHECK_U64(size, want_size);
}

// Every step of a walk matches the generator's tables.
static void check_steps(struct fixture *f, const struct kp_vtop *v, const char *const *names)
{
	CHECK_U64(v->levels, f->pg->levels);
	for (int i = 0; i < v->nsteps; i++) {
		int level = f->pg->levels - i;
		CHECK_STR(v->step[i].name, names[i]);
		CHECK_U64(v->step[i].table, table_of(f, v->vaddr, level));
		CHECK_U64(v->step[i].index, (v->vaddr >> (12 + 9 * (level - 1))) & 511);
		CHECK_U64(v->step[i].entry, entry_of(f, v->vaddr, level));
	}
	CHECK_STR(v->method, "page tables");
}

static const char *const names4[] = {"PGD", "PUD", "PMD", "PTE"};
static const char *const names5[] = {"PGD", "P4D", "PUD", "PMD", "PTE"};

static void check_page_sizes(const char *spec, const char *const *names, int levels)
{
	struct fixture f;
	if (!setup(&f, spec))
		goto out;
	struct kp_vtop v = walk_ok(&f, 0xffffffff81234567);
	CHECK(v.present);
	CHECK_U64(v.nsteps, levels - 1);
	CHECK_U64(v.page_size, 2 << 20);
	CHECK_U64(v.paddr, 0x1234567);
	check_steps(&f, &v, names);

	v = walk_ok(&f, 0xffff888012345678);
	CHECK(v.present);
	CHECK_U64(v.nsteps, levels - 2);
	CHECK_U64(v.page_size, 1 << 30);
	CHECK_U64(v.paddr, 0x12345678);
	check_steps(&f, &v, names);

	v = walk_ok(&f, 0xffffc90000001abc);
	CHECK(v.present);
	CHECK_U64(v.nsteps, levels);
	CHECK_U64(v.page_size, 4096);
	CHECK_U64(v.paddr, 0x7000abc);
	check_steps(&f, &v, names);

	// A user address, and the last page of the address space.
	v = walk_ok(&f, 0x400123);
	CHECK(v.present);
	CHECK_U64(v.paddr, 0x5000123);
	v = walk_ok(&f, 0xffffffffffffffff);
	CHECK(v.present);
	CHECK_U64(v.paddr, 0x6000fff);

	check_translate(&f, 0xffffffffffffffff, 0x6000fff, 1);
	check_translate(&f, 0xffffffff81234567, 0x1234567, 0x200000 - 0x34567);
	check_translate(&f, 0xffff888012345678, 0x12345678, 0x40000000 - 0x12345678);
	check_translate(&f, 0xffffc90000001abc, 0x7000abc, 0x1000 - 0xabc);
	// Again, from the fast path.
	check_translate(&f, 0xffffffff81200008, 0x1200008, 0x200000 - 8);
	check_translate(&f, 0xffff888000000000, 0, 0x40000000);
	check_translate(&f, 0xffffc90000001000, 0x7000000, 0x1000);
	struct kp_pgtable_stats st;
	kp_pgtable_get_stats(f.pt, &st);
	CHECK_U64(st.fast_hits, 3);
out:
	teardown(&f);
}

#define PAGE_SIZES_SPEC                                                        \
	"map 0xffffffff81000000 0x1000000 2M 4\n"                              \
	"map 0xffff888000000000 0 1G 2   # direct map\n"                       \
	"map 0xffffc90000000000 0x7001000 4K\n"                                \
	"map 0xffffc90000001000 0x7000000 4K\n"                                \
	"map 0x400000 0x5000000 4K\n"                                          \
	"map 0xfffffffffffff000 0x6000000 4K\n"

TEST(four_level_page_sizes)
{
	check_page_sizes("levels 4\n" PAGE_SIZES_SPEC, names4, 4);
}

TEST(five_level_page_sizes)
{
	check_page_sizes("levels 5\n" PAGE_SIZES_SPEC, names5, 5);
}

TEST(five_level_uses_57_bits)
{
	struct fixture f;
	if (!setup(&f, "levels 5\nmap 0xff11000000000000 0x40000000 1G\n"
		       "map 0x00ff000000000000 0x80000000 1G\n"))
		goto out;
	struct kp_vtop v = walk_ok(&f, 0xff11000000000123);
	CHECK(v.present);
	CHECK_U64(v.paddr, 0x40000123);
	CHECK_U64(v.step[0].index, 0x111);	// bits 48..56
	v = walk_ok(&f, 0x00ff000000000042);
	CHECK(v.present);
	CHECK_U64(v.paddr, 0x80000042);
	CHECK_U64(v.step[0].index, 0xff);
out:
	teardown(&f);
}

// An address under the mapped 0xffffc90000002000 whose entry at level is
// replaced (1 = PTE .. levels = PGD).
static uint64_t not_present_va(int levels, int level)
{
	if (level == levels)	// another PGD slot
		return levels == 5 ? 0xff00000000000000 : 0xffff800000000000;
	switch (level) {
	case 1: return 0xffffc90000001000;
	case 2: return 0xffffc90000200000;
	case 3: return 0xffffc90040000000;
	default: return 0xffffc98000000000;	// another P4D slot (5 levels)
	}
}

static void check_not_present(int levels, const char *const *names)
{
	char spec[256];
	snprintf(spec, sizeof(spec), "levels %d\nmap 0xffffc90000002000 0x3000 4K\n", levels);
	struct fixture f;
	if (!setup(&f, spec))
		goto out;
	// Junk in the other bits (NX, address bits, RW|US; P clear), which must be
	// reported as read.
	const uint64_t junk = 0x8000000123456006;
	for (int level = levels; level >= 1; level--)
		CHECK_OK(kp_mkpgtable_set(f.pg, not_present_va(levels, level), level,
					  junk ^ ((uint64_t)level << 12)));
	for (int level = levels; level >= 1; level--) {
		uint64_t va = not_present_va(levels, level);
		struct kp_vtop v = walk_ok(&f, va);
		CHECK(!v.present);
		CHECK_U64(v.nsteps, levels - level + 1);
		CHECK_U64(v.step[v.nsteps - 1].entry, junk ^ ((uint64_t)level << 12));
		CHECK_STR(v.step[v.nsteps - 1].name, names[levels - level]);
		CHECK_U64(v.paddr, 0);
		CHECK_U64(v.page_size, 0);
		check_steps(&f, &v, names);
		char msg[128];
		snprintf(msg, sizeof(msg), "virtual address 0x%" PRIx64 " is not mapped (%s entry",
			 va, names[levels - level]);
		uint64_t pa = 1, size = 1;
		CHECK_ERR(kp_pgtable_translate(f.pt, va, &pa, &size), KP_ERR_FAULT, msg);
		CHECK_U64(pa, 1);
		CHECK_U64(size, 1);
		// The fault spans what the absent entry would map, from va on.
		struct kp_error *e = kp_pgtable_translate(f.pt, va, &pa, &size);
		uint64_t span = 1ULL << (12 + 9 * (level - 1));
		CHECK_U64(e ? e->span : 0, span - (va & (span - 1)));
		CHECK_U64(kp_memory_fault_span(f.mem, va), span - (va & (span - 1)));
		kp_error_destroy(e);
	}
	// The mapped neighbour still works.
	struct kp_vtop v = walk_ok(&f, 0xffffc90000002010);
	CHECK(v.present);
	CHECK_U64(v.paddr, 0x3010);
out:
	teardown(&f);
}

TEST(not_present_at_each_level_4)
{
	check_not_present(4, names4);
}

TEST(not_present_at_each_level_5)
{
	check_not_present(5, names5);
}

TEST(non_canonical)
{
	struct fixture f;
	if (!setup(&f, "levels 4\nmap 0xffff800000000000 0x1000 4K\n"))
		goto out;
	struct kp_vtop v = {.nsteps = 77};
	CHECK_ERR(kp_pgtable_walk(f.pt, 0x0000800000000000, &v), KP_ERR_INVALID,
		  "0x800000000000 is not canonical for 4-level paging");
	CHECK_ERR(kp_pgtable_walk(f.pt, 0xffff7fffffffffff, &v), KP_ERR_INVALID,
		  "0xffff7fffffffffff is not canonical");
	CHECK_ERR(kp_pgtable_walk(f.pt, 0x8000000000000000, &v), KP_ERR_INVALID,
		  "not canonical");
	CHECK_U64(v.nsteps, 77);	// untouched on failure
	uint64_t pa = 0, size = 0;
	CHECK_ERR(kp_pgtable_translate(f.pt, 0x0000800000000000, &pa, &size), KP_ERR_FAULT,
		  "virtual address 0x800000000000 is not canonical");
	// A read through kp_memory_read reports it too.
	uint8_t b;
	CHECK_ERR(kp_memory_read(f.mem, KP_VIRT, 0x1234000000000000, &b, 1), KP_ERR_FAULT,
		  "0x1234000000000000 is not canonical");
	// The edges of the canonical halves are fine.
	v = walk_ok(&f, 0x00007fffffffffff);
	CHECK(!v.present);
	v = walk_ok(&f, 0xffff800000000010);
	CHECK(v.present);
	CHECK_U64(v.paddr, 0x1010);
	teardown(&f);

	if (!setup(&f, "levels 5\n"))
		goto out;
	v = walk_ok(&f, 0x0000800000000000);	// canonical with 57 bits
	CHECK(!v.present);
	CHECK_U64(v.nsteps, 1);
	CHECK_ERR(kp_pgtable_walk(f.pt, 0x0100000000000000, &v), KP_ERR_INVALID,
		  "0x100000000000000 is not canonical for 5-level paging (57-bit)");
	CHECK_ERR(kp_pgtable_walk(f.pt, 0xfe00000000000000, &v), KP_ERR_INVALID,
		  "not canonical");
out:
	teardown(&f);
}

TEST(reads_across_pages)
{
	struct fixture f;
	if (!setup(&f, "ram 8M\n"
		       "map 0xffffc90000000000 0x3000 4K\n"
		       "map 0xffffc90000001000 0x1000 4K\n"
		       "map 0xffffc90000002000 0x600000 4K\n"
		       "map 0xffffffff81000000 0x200000 2M\n"
		       "map 0xffffffff81200000 0x400000 2M\n"))
		goto out;
	// Two discontiguous 4K pages, then into a third.
	uint64_t w[3];
	CHECK_OK(kp_memory_read(f.mem, KP_VIRT, 0xffffc90000000ff8, w, sizeof(w)));
	CHECK_U64(w[0], kp_mkpgtable_pattern(0x3ff8));
	CHECK_U64(w[1], kp_mkpgtable_pattern(0x1000));
	CHECK_U64(w[2], kp_mkpgtable_pattern(0x1008));
	CHECK_OK(kp_memory_read(f.mem, KP_VIRT, 0xffffc90000001ff8, w, 16));
	CHECK_U64(w[0], kp_mkpgtable_pattern(0x1ff8));
	CHECK_U64(w[1], kp_mkpgtable_pattern(0x600000));
	// Unaligned, across the 2M boundary.
	uint8_t b[16], want[16];
	CHECK_OK(kp_memory_read(f.mem, KP_VIRT, 0xffffffff811ffff9, b, 16));
	uint64_t p1 = kp_mkpgtable_pattern(0x3ffff8), p2 = kp_mkpgtable_pattern(0x400000),
		 p3 = kp_mkpgtable_pattern(0x400008);
	memcpy(want, (uint8_t *)&p1 + 1, 7);
	memcpy(want + 7, &p2, 8);
	memcpy(want + 15, &p3, 1);
	CHECK(memcmp(b, want, 16) == 0);
	// Running into an unmapped page names its first address.
	CHECK_ERR(kp_memory_read(f.mem, KP_VIRT, 0xffffc90000002ffc, w, 8), KP_ERR_FAULT,
		  "virtual address 0xffffc90000003000 is not mapped (PTE entry 3");
	// A mapped page outside physical memory.
	CHECK_OK(kp_mkpgtable_map(f.pg, 0xffffc90000004000, 0x7ffff000, 4096, 0));
	kp_pgtable_flush(f.pt);
	CHECK_ERR(kp_memory_read(f.mem, KP_VIRT, 0xffffc90000004010, w, 8), KP_ERR_FAULT,
		  "virtual address 0xffffc90000004010 maps to physical 0x7ffff010");
out:
	teardown(&f);
}

TEST(flag_bits_do_not_leak)
{
	struct fixture f;
	// Protection keys (59..62), software bits (52..58), NX, PAT, and the
	// reserved low bits of huge-page frames.
	if (!setup(&f, "levels 4\n"
		       "map 0xffffc90000000000 0x3000 4K nx pat flags=0x7ff0000000000e00\n"
		       "map 0xffffffff81000000 0x200000 2M nx pat flags=0x7ff00000001fee00\n"
		       "map 0xffff888000000000 0x40000000 1G nx pat flags=0x7ff000003fffee00\n"))
		goto out;
	struct kp_vtop v = walk_ok(&f, 0xffffc90000000123);
	CHECK(v.present);
	CHECK_U64(v.paddr, 0x3123);
	CHECK(v.step[3].entry & (1ULL << 63));
	v = walk_ok(&f, 0xffffffff81012345);
	CHECK(v.present);
	CHECK_U64(v.paddr, 0x212345);
	CHECK(v.step[2].entry & (1ULL << 12));
	v = walk_ok(&f, 0xffff888001234567);
	CHECK(v.present);
	CHECK_U64(v.paddr, 0x41234567);
	// The same through translate.
	check_translate(&f, 0xffffc90000000123, 0x3123, 0x1000 - 0x123);
	check_translate(&f, 0xffffffff81012345, 0x212345, 0x200000 - 0x12345);
	check_translate(&f, 0xffff888001234567, 0x41234567, 0x40000000 - 0x1234567);
	// Table entries with NX and high bits point at the same tables.
	uint64_t pmd_entry = entry_of(&f, 0xffffc90000000000, KP_MKPG_PMD);
	CHECK_OK(kp_mkpgtable_set(f.pg, 0xffffc90000000000, KP_MKPG_PMD,
				  pmd_entry | 0xfff0000000000000));
	kp_pgtable_flush(f.pt);
	v = walk_ok(&f, 0xffffc90000000123);
	CHECK(v.present);
	CHECK_U64(v.paddr, 0x3123);
	CHECK_U64(v.step[3].table, table_of(&f, 0xffffc90000000000, KP_MKPG_PTE));
	// The largest 52-bit physical address is fine.
	CHECK_OK(kp_mkpgtable_map(f.pg, 0xffffc90000001000, 0xffffffffff000, 4096, 0));
	kp_pgtable_flush(f.pt);
	check_translate(&f, 0xffffc90000001fff, 0xfffffffffffff, 1);
out:
	teardown(&f);
}

TEST(ps_bit_above_pud_is_ignored)
{
	// PS is reserved in PML5/PML4 entries; like the kernel (pgd_large() and
	// p4d_large() are 0) they are taken as table pointers.
	struct fixture f;
	if (!setup(&f, "levels 5\nmap 0xffffc90000000000 0x3000 4K\n"))
		goto out;
	for (int level = 5; level >= 4; level--) {
		uint64_t e = entry_of(&f, 0xffffc90000000000, level);
		CHECK_OK(kp_mkpgtable_set(f.pg, 0xffffc90000000000, level, e | 0x80));
	}
	struct kp_vtop v = walk_ok(&f, 0xffffc90000000abc);
	CHECK(v.present);
	CHECK_U64(v.nsteps, 5);
	CHECK_U64(v.page_size, 4096);
	CHECK_U64(v.paddr, 0x3abc);
out:
	teardown(&f);
}

TEST(cache_and_flush)
{
	struct fixture f;
	if (!setup(&f, "map 0xffffc90000000000 0x3000 4K\nmap 0xffffffff81000000 0x200000 2M\n"))
		goto out;
	struct kp_vtop v = walk_ok(&f, 0xffffc90000000000);
	CHECK_U64(v.paddr, 0x3000);
	struct kp_pgtable_stats st;
	kp_pgtable_get_stats(f.pt, &st);
	CHECK_U64(st.table_reads, 4);
	CHECK_U64(st.table_hits, 0);
	v = walk_ok(&f, 0xffffffff81000000);	// shares only the top table
	kp_pgtable_get_stats(f.pt, &st);
	CHECK_U64(st.table_reads, 6);
	CHECK_U64(st.table_hits, 1);
	// The tables change under the cache: stale until flushed (live memory).
	CHECK_OK(kp_mkpgtable_map(f.pg, 0xffffc90000000000, 0x9000, 4096, 0));
	check_translate(&f, 0xffffc90000000010, 0x3010, 0xff0);
	check_translate(&f, 0xffffc90000000020, 0x3020, 0xfe0);	// fast path
	kp_pgtable_flush(f.pt);
	check_translate(&f, 0xffffc90000000010, 0x9010, 0xff0);
	v = walk_ok(&f, 0xffffc90000000010);
	CHECK_U64(v.paddr, 0x9010);
	kp_pgtable_get_stats(f.pt, &st);
	CHECK_U64(st.table_reads, 10);
	CHECK_U64(st.fast_hits, 1);
	// Unmapping is seen after a flush too, also by the fast path.
	CHECK_OK(kp_mkpgtable_set(f.pg, 0xffffc90000000000, KP_MKPG_PTE, 0));
	kp_pgtable_flush(f.pt);
	uint64_t pa, size;
	CHECK_ERR(kp_pgtable_translate(f.pt, 0xffffc90000000010, &pa, &size), KP_ERR_FAULT,
		  "not mapped (PTE entry 0 = 0x0");
out:
	teardown(&f);
}

TEST(cache_evicts_and_stays_correct)
{
	// More PTE tables than the cache holds (512), each mapping its own page:
	// translations stay right through evictions.
	struct fixture f;
	if (!setup(&f, "maxtables 1200\n"))
		goto out;
	const unsigned ntables = 1100;
	for (unsigned i = 0; i < ntables; i++)
		CHECK_OK(kp_mkpgtable_map(f.pg, 0xffffc90000000000 + ((uint64_t)i << 21),
					  0x100000000 + ((uint64_t)i << 12), 4096, 0));
	for (int pass = 0; pass < 3; pass++)
		for (unsigned i = 0; i < ntables; i++) {
			unsigned j = (i * 7919u + (unsigned)pass) % ntables;
			struct kp_vtop v = walk_ok(&f, 0xffffc90000000000 + ((uint64_t)j << 21) + j);
			if (!v.present || v.paddr != 0x100000000 + ((uint64_t)j << 12) + j) {
				FAILF("table %u: present %d paddr 0x%" PRIx64, j, v.present, v.paddr);
				goto out;
			}
		}
	struct kp_pgtable_stats st;
	kp_pgtable_get_stats(f.pt, &st);
	CHECK(st.table_reads > ntables);
	CHECK(st.table_reads < 3 * ntables + 20);
out:
	teardown(&f);
}

TEST(self_reference_and_cycles)
{
	struct fixture f;
	if (!setup(&f, "levels 4\nram 64K\nmap 0xffffc90000000000 0x3000 4K\n"))
		goto out;
	// A recursive PGD slot: an address whose every index is 0x1ed sees the
	// root table at every level, ending in the root page itself.
	uint64_t root = f.pg->root;
	CHECK_OK(kp_mkpgtable_set(f.pg, 0xfffff6fb7dbed000, 4, root | 0x63));
	struct kp_vtop v = walk_ok(&f, 0xfffff6fb7dbedff8);
	CHECK(v.present);
	CHECK_U64(v.nsteps, 4);
	for (int i = 0; i < 4; i++) {
		CHECK_U64(v.step[i].table, root);
		CHECK_U64(v.step[i].index, 0x1ed);
	}
	CHECK_U64(v.paddr, root + 0xff8);
	// Read through it: the root table's last entry (zero).
	uint64_t w = 1;
	CHECK_OK(kp_memory_read(f.mem, KP_VIRT, 0xfffff6fb7dbedff8, &w, 8));
	CHECK_U64(w, 0);

	// A PMD entry pointing at its own table: the walk takes the PMD table as
	// the PTE table and stops there, bounded.
	uint64_t pmd = table_of(&f, 0xffffc90000000000, KP_MKPG_PMD);
	CHECK_OK(kp_mkpgtable_set(f.pg, 0xffffc90000000000, KP_MKPG_PMD, pmd | 0x63));
	kp_pgtable_flush(f.pt);
	v = walk_ok(&f, 0xffffc90000000000);
	CHECK(v.present);
	CHECK_U64(v.step[3].table, pmd);
	CHECK_U64(v.paddr, pmd);
	// A PUD entry pointing at the root: the root is taken as the PMD table.
	uint64_t pud = table_of(&f, 0xffffc90000000000, KP_MKPG_PUD);
	CHECK_OK(kp_mkpgtable_set(f.pg, 0xffffc90000000000, KP_MKPG_PUD, root | 0x63));
	kp_pgtable_flush(f.pt);
	v = walk_ok(&f, 0xffffc90000000000);
	CHECK_U64(v.nsteps, 3);		// root[0] is empty
	CHECK(!v.present);
	CHECK_U64(v.step[2].table, root);
	CHECK(pud != root);
out:
	teardown(&f);
}

TEST(missing_table_pages)
{
	struct fixture f;
	if (!setup(&f, "levels 5\nmap 0xffffc90000000000 0x3000 4K\n"))
		goto out;
	// A PUD entry pointing beyond physical memory.
	CHECK_OK(kp_mkpgtable_set(f.pg, 0xffffc90000000000, KP_MKPG_PUD, 0x7fff00000063));
	struct kp_vtop v = {.nsteps = 9};
	CHECK_ERR(kp_pgtable_walk(f.pt, 0xffffc90000000000, &v), KP_ERR_FAULT,
		  "PMD table at physical address 0x7fff00000000 (entry 0 at 0x7fff00000000,"
		  " for virtual address 0xffffc90000000000) is not readable: physical address 0x7fff00000000"
		  " is not in the memory source");
	CHECK_U64(v.nsteps, 9);
	uint64_t pa = 5, size = 5;
	CHECK_ERR(kp_pgtable_translate(f.pt, 0xffffc90000000008, &pa, &size), KP_ERR_FAULT,
		  "PMD table at physical address 0x7fff00000000");
	CHECK_U64(pa, 5);
	uint8_t b;
	struct kp_error *err = kp_memory_read(f.mem, KP_VIRT, 0xffffc90000000010, &b, 1);
	CHECK(err && err->code == KP_ERR_FAULT && err->has_address &&
	      err->address == 0xffffc90000000010);
	kp_error_destroy(err);
	// The largest 52-bit table address, and a root outside memory.
	CHECK_OK(kp_mkpgtable_set(f.pg, 0xffffc90000000000, KP_MKPG_PUD,
				  0xfffffffffffff063));
	kp_pgtable_flush(f.pt);
	CHECK_ERR(kp_pgtable_walk(f.pt, 0xffffc90000000000, &v), KP_ERR_FAULT,
		  "PMD table at physical address 0xffffffffff000");
	struct kp_pgtable *bad = NULL;
	CHECK_OK(kp_pgtable_create(f.mem, 0x40000000, 4, &bad));
	CHECK_ERR(kp_pgtable_walk(bad, 0, &v), KP_ERR_FAULT,
		  "PGD table at physical address 0x40000000");
	kp_pgtable_destroy(bad);
out:
	teardown(&f);
}

TEST(table_partly_in_memory)
{
	// Physical memory that ends in the middle of the PTE table: entries in
	// the readable half still translate (read one by one), the rest fault.
	struct kp_mkpgtable *pg = NULL;
	struct kp_memory *mem = NULL;
	struct kp_pgtable *pt = NULL;
	CHECK_OK(kp_mkpgtable_create("map 0xffffc90000000000 0x3000 4K\n"
				     "map 0xffffc90000100000 0x4000 4K\n", &pg));
	if (!pg)
		return;
	uint64_t pte_table = 0;
	CHECK_OK(kp_mkpgtable_table(pg, 0xffffc90000000000, KP_MKPG_PTE, &pte_table));
	CHECK_OK(kp_memory_create(&mem));
	CHECK_OK(kp_memory_add(mem, KP_PHYS, 0, pte_table + 2048, kp_read_buffer, pg->buf, 0));
	CHECK_OK(kp_pgtable_create(mem, pg->root, 4, &pt));
	struct kp_vtop v;
	CHECK_OK(kp_pgtable_walk(pt, 0xffffc90000000042, &v));
	CHECK(v.present);
	CHECK_U64(v.paddr, 0x3042);
	CHECK_ERR(kp_pgtable_walk(pt, 0xffffc90000100000, &v), KP_ERR_FAULT,
		  "PTE table at physical address");
	struct kp_pgtable_stats st;
	kp_pgtable_get_stats(pt, &st);
	CHECK_U64(st.entry_reads, 1);
	kp_pgtable_destroy(pt);
	kp_memory_destroy(mem);
	kp_mkpgtable_destroy(pg);
}

static struct kp_error *read_corrupt(void *buf, uint64_t address, size_t count,
				     uint64_t offset, void *arg)
{
	return kp_error_create(KP_ERR_FORMAT, "compressed page at 0x%" PRIx64 " is corrupt",
			       address);
}

TEST(other_read_errors_are_passed_on)
{
	// A source error other than a hole (a corrupt compressed page) keeps its
	// code and gains the level, table and address.
	struct kp_memory *mem = NULL;
	struct kp_pgtable *pt = NULL;
	CHECK_OK(kp_memory_create(&mem));
	CHECK_OK(kp_memory_add(mem, KP_PHYS, 0, 1 << 20, read_corrupt, NULL, 0));
	CHECK_OK(kp_pgtable_create(mem, 0x1000, 4, &pt));
	struct kp_vtop v;
	CHECK_ERR(kp_pgtable_walk(pt, 0xffffffff81000000, &v), KP_ERR_FORMAT,
		  "reading PGD table at physical address 0x1000 for virtual address"
		  " 0xffffffff81000000: compressed page at 0x1000 is corrupt");
	kp_pgtable_destroy(pt);
	kp_memory_destroy(mem);
}

TEST(create_arguments)
{
	struct kp_memory *mem = NULL;
	CHECK_OK(kp_memory_create(&mem));
	struct kp_pgtable *pt = (struct kp_pgtable *)1;
	CHECK_ERR(kp_pgtable_create(mem, 0x1000, 3, &pt), KP_ERR_INVALID,
		  "paging levels 3");
	CHECK(pt == (struct kp_pgtable *)1);
	kp_pgtable_destroy(NULL);
	kp_memory_destroy(mem);

	// CR3 with PCID bits and bit 63 (no-flush) still finds the root.
	struct fixture f;
	if (!setup(&f, "map 0xffffffff81000000 0x200000 2M\n"))
		goto out;
	struct kp_pgtable *pcid = NULL;
	CHECK_OK(kp_pgtable_create(f.mem, f.pg->root | 0x8000000000000abc, 4, &pcid));
	struct kp_vtop v = {0};
	CHECK_OK(kp_pgtable_walk(pcid, 0xffffffff81000010, &v));
	CHECK(v.present);
	CHECK_U64(v.paddr, 0x200010);
	CHECK_U64(v.step[0].table, f.pg->root);
	kp_pgtable_destroy(pcid);
out:
	teardown(&f);
}

TEST(mkpgtable_spec_errors)
{
	struct kp_mkpgtable *pg = NULL;
	CHECK_ERR(kp_mkpgtable_create("levels 6\n", &pg), KP_ERR_INVALID,
		  "line 1: levels must be 4 or 5");
	CHECK_ERR(kp_mkpgtable_create("\n# c\nfrob 1\n", &pg), KP_ERR_INVALID,
		  "line 3: unknown directive \"frob\"");
	CHECK_ERR(kp_mkpgtable_create("map 0xffffffff81001000 0 2M\n", &pg), KP_ERR_INVALID,
		  "line 1: 0xffffffff81001000 -> 0x0 is not aligned");
	CHECK_ERR(kp_mkpgtable_create("map 0x800000000000 0 4K\n", &pg), KP_ERR_INVALID,
		  "not canonical");
	CHECK_ERR(kp_mkpgtable_create("map 0 0 3K\n", &pg), KP_ERR_INVALID,
		  "page size must be 4K, 2M or 1G");
	CHECK_ERR(kp_mkpgtable_create("map 0 0 2M\nmap 0x1000 0 4K\n", &pg), KP_ERR_INVALID,
		  "line 2: 0x1000 is already mapped by a 2M page");
	CHECK_ERR(kp_mkpgtable_create("map 0 0 4K\nlevels 5\n", &pg), KP_ERR_INVALID,
		  "line 2: must come before the first map");
	CHECK_ERR(kp_mkpgtable_create("maxtables 2\nmap 0 0 4K\n", &pg), KP_ERR_INVALID,
		  "out of table pages");
	CHECK_ERR(kp_mkpgtable_create("levels 4\nset 0 P4D 0\n", &pg), KP_ERR_INVALID,
		  "bad level \"P4D\"");
	CHECK_ERR(kp_mkpgtable_create("map 0 0x10000000000000 4K\n", &pg), KP_ERR_INVALID,
		  "beyond 52 bits");
	CHECK_ERR(kp_mkpgtable_create("tables 0x1000\nram 64K\n", &pg), KP_ERR_INVALID,
		  "table area 0x1000 overlaps RAM [0, 0x10000)");
	CHECK(pg == NULL);
	CHECK_OK(kp_mkpgtable_create("ram 1M\nlevels 5\nmap 0 0 4K 3 nx\n", &pg));
	if (pg) {
		CHECK_U64(pg->tables, 0x100000);
		CHECK_U64(pg->root, 0x100000);
		CHECK_U64(pg->ntables, 5);
		CHECK_U64(pg->size, 0x100000 + 512 * 4096);
		uint64_t e = 0;
		CHECK_OK(kp_mkpgtable_entry(pg, 0x2000, KP_MKPG_PTE, &e));
		CHECK_U64(e, 0x8000000000002163);
		CHECK_ERR(kp_mkpgtable_entry(pg, 0x40000000, KP_MKPG_PTE, &e), KP_ERR_NOT_FOUND,
			  "not found");
	}
	kp_mkpgtable_destroy(pg);
}

static uint64_t xorshift(uint64_t *s)
{
	uint64_t x = *s;
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return *s = x;
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

TEST(bench_cached_translations)
{
	// 64 PTE tables (128 MiB of 4K pages) plus 2M and 1G mappings: after a
	// warm-up pass, random translations read no tables at all.
	struct fixture f;
	if (!setup(&f, "levels 5\n"
		       "map 0xffffc90000000000 0x100000000 4K 32768\n"
		       "map 0xffffffff80000000 0x200000000 2M 64\n"
		       "map 0xffff888000000000 0 1G 16\n"))
		goto out;
	const uint64_t bases[3] = {0xffffc90000000000, 0xffffffff80000000, 0xffff888000000000};
	const uint64_t spans[3] = {128 << 20, 128 << 20, 16ULL << 30};
	const uint64_t pbase[3] = {0x100000000, 0x200000000, 0};
	enum { N = 1 << 21 };
	struct kp_pgtable_stats st1, st2;
	double rate = 0;
	uint64_t sum = 0;
	for (int pass = 0; pass < 2; pass++) {
		uint64_t seed = 0x9e3779b97f4a7c15;
		double t0 = now();
		for (unsigned i = 0; i < N; i++) {
			uint64_t r = xorshift(&seed);
			unsigned k = (unsigned)(r >> 62) % 3;
			uint64_t off = (r >> 3) % spans[k];
			uint64_t pa, size;
			struct kp_error *err = kp_pgtable_translate(f.pt, bases[k] + off, &pa, &size);
			if (err || pa != pbase[k] + off) {
				FAILF("translate 0x%" PRIx64 ": %s", bases[k] + off,
				      err ? err->message : "wrong address");
				kp_error_destroy(err);
				goto out;
			}
			sum += size;
		}
		double dt = now() - t0;
		if (pass == 0) {
			kp_pgtable_get_stats(f.pt, &st1);
		} else {
			kp_pgtable_get_stats(f.pt, &st2);
			rate = N / dt;
		}
	}
	CHECK(sum != 0);
	printf("  %.1f million cached translations/s (random, %" PRIu64
	       " tables read, %" PRIu64 " walks, %" PRIu64 " fast-path hits)\n",
	       rate / 1e6, st2.table_reads, st2.walks, st2.fast_hits);
	CHECK_U64(st2.table_reads, st1.table_reads);
	CHECK_U64(st2.entry_reads, 0);
	CHECK(st1.table_reads <= 1 + 1 + 3 + 2 + 64);
	CHECK(st2.walks - st1.walks > N / 2);	// random addresses mostly walk

	// The same working set read through kp_memory_read.
	double t0 = now();
	uint64_t seed = 42, w;
	CHECK_OK(kp_mkpgtable_map(f.pg, 0xffffc90010000000, 0x1000, 4096, 0));
	CHECK_OK(kp_mkpgtable_map(f.pg, 0xffffc90010001000, 0x2000, 4096, 0));
	kp_pgtable_flush(f.pt);
	unsigned errors = 0;
	for (unsigned i = 0; i < N / 4; i++) {
		uint64_t va = 0xffffc90010000000 + (xorshift(&seed) & 0x1ff8);
		struct kp_error *err = kp_memory_read(f.mem, KP_VIRT, va, &w, 8);
		errors += err != NULL;
		kp_error_destroy(err);
	}
	printf("  %.1f million 8-byte kp_memory_read()s/s through the translator\n",
	       N / 4 / (now() - t0) / 1e6);
	CHECK_U64(errors, 0);
out:
	teardown(&f);
}

int main(void)
{
	RUN(four_level_page_sizes);
	RUN(five_level_page_sizes);
	RUN(five_level_uses_57_bits);
	RUN(not_present_at_each_level_4);
	RUN(not_present_at_each_level_5);
	RUN(non_canonical);
	RUN(reads_across_pages);
	RUN(flag_bits_do_not_leak);
	RUN(ps_bit_above_pud_is_ignored);
	RUN(cache_and_flush);
	RUN(cache_evicts_and_stays_correct);
	RUN(self_reference_and_cycles);
	RUN(missing_table_pages);
	RUN(table_partly_in_memory);
	RUN(other_read_errors_are_passed_on);
	RUN(create_arguments);
	RUN(mkpgtable_spec_errors);
	RUN(bench_cached_translations);
	return TEST_SUMMARY();
}
