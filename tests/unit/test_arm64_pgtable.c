// SPDX-License-Identifier: MIT
// arm64 translation table walks over tables built here from the Arm ARM's
// descriptor formats, for every granule and VA size the kernel builds: 4 KiB
// (48-bit, 4 levels; 52-bit LPA2, 5 levels), 16 KiB (47-bit, 3 levels;
// 48-bit, 4; 52-bit LPA2, 4), 64 KiB (42-bit, 2 levels; 48-bit, 3; 52-bit
// FEAT_LPA, 3). The level counts are the kernel's CONFIG_PGTABLE_LEVELS for
// those configurations (arch/arm64/Kconfig), not computed from the walker.
#include "test.h"
#include "io/memory.h"
#include "arch/arm64/pgtable.h"

struct config {
	unsigned page_shift, va_bits;
	int levels;
	const char *what;
};

static const struct config configs[] = {
	{ 12, 48, 4, "4K pages, 48-bit VA" },
	{ 12, 52, 5, "4K pages, 52-bit VA (LPA2)" },
	{ 14, 47, 3, "16K pages, 47-bit VA" },
	{ 14, 48, 4, "16K pages, 48-bit VA" },
	{ 14, 52, 4, "16K pages, 52-bit VA (LPA2)" },
	{ 16, 42, 2, "64K pages, 42-bit VA" },
	{ 16, 48, 3, "64K pages, 48-bit VA" },
	{ 16, 52, 3, "64K pages, 52-bit VA (FEAT_LPA)" },
};

// Up to 5 tables of up to 64 KiB, at physical 0, 64 KiB apart.
#define TABLE_STRIDE 0x10000u
#define MEM_SIZE (6 * TABLE_STRIDE)

struct tables {
	const struct config *c;
	uint8_t *mem;
	struct kp_memory *m;
	struct arm64_pgtable *pt;
};

// Index of va in the table of level lvl (0 = the last level): VA bits
// [shift + bits - 1 : shift], the top table taking what is left below
// va_bits (16 entries for 4K/52-bit, 2 for 16K/48-bit, ...).
static unsigned index_at(const struct config *c, uint64_t va, int lvl)
{
	unsigned bits = c->page_shift - 3;
	unsigned shift = c->page_shift + bits * (unsigned)lvl;
	va &= (1ULL << c->va_bits) - 1;
	return (unsigned)(va >> shift) & ((1u << bits) - 1);
}

// An output address as the descriptor holds it: bits [47:page_shift], and
// above 48 bits, LPA2 (52-bit VA with 4/16 KiB pages) keeps PA[49:48] in
// place and PA[51:50] in bits [9:8]; 64 KiB pages (FEAT_LPA) put PA[51:48]
// in bits [15:12].
static uint64_t encode(const struct config *c, uint64_t pa)
{
	if (c->page_shift == 16)
		return (pa & 0x0000ffffffff0000ULL) | ((pa >> 48) & 0xf) << 12;
	if (c->va_bits == 52)
		return (pa & 0x0003fffffffff000ULL) | ((pa >> 50) & 0x3) << 8;
	return pa & 0x0000fffffffff000ULL;
}

static void put(struct tables *t, uint64_t pa, uint64_t v)
{
	memcpy(t->mem + pa, &v, 8);
}

static bool build(struct tables *t, const struct config *c)
{
	memset(t, 0, sizeof(*t));
	t->c = c;
	t->mem = calloc(1, MEM_SIZE);
	CHECK_OK(kp_memory_create(&t->m));
	CHECK_OK(kp_memory_add(t->m, KP_PHYS, 0, MEM_SIZE, kp_read_buffer, t->mem, 0));
	CHECK_OK(kp_arm64_pgtable_create(t->m, 0, c->page_shift, c->va_bits, &t->pt));
	return t->mem && t->m && t->pt;
}

// A walk by a fresh walker: the tables are edited between walks, and a
// walker caches whole tables (dumps do not change under it).
static struct kp_error *walk(struct tables *t, uint64_t va, struct kp_vtop *v)
{
	kp_arm64_pgtable_destroy(t->pt);
	t->pt = NULL;
	struct kp_error *err = kp_arm64_pgtable_create(t->m, 0, t->c->page_shift, t->c->va_bits,
						       &t->pt);
	return err ? err : kp_arm64_pgtable_walk(t->pt, va, v);
}

static void teardown(struct tables *t)
{
	kp_arm64_pgtable_destroy(t->pt);
	kp_memory_destroy(t->m);
	free(t->mem);
}

// Links va's path from the top table (at 0) down to the table of level
// lvl (tables at 1, 2, ... x TABLE_STRIDE), then writes leaf there.
static void map(struct tables *t, uint64_t va, int lvl, uint64_t leaf)
{
	uint64_t table = 0;
	for (int l = t->c->levels - 1; l > lvl; l--) {
		uint64_t next = (uint64_t)(t->c->levels - l) * TABLE_STRIDE;
		put(t, table + 8 * index_at(t->c, va, l), encode(t->c, next) | 0x3);
		table = next;
	}
	put(t, table + 8 * index_at(t->c, va, lvl), leaf);
}

static void check_config(const struct config *c)
{
	struct tables t;
	if (!build(&t, c))
		goto out;
	if (kp_arm64_pgtable_levels(t.pt) != c->levels)
		FAILF("%s: %d levels, the kernel builds %d", c->what,
		      kp_arm64_pgtable_levels(t.pt), c->levels);
	CHECK(kp_arm64_pgtable_lpa2(t.pt) == (c->va_bits == 52 && c->page_shift != 16));
	uint64_t top = ~0ULL << c->va_bits;
	uint64_t page = 1ULL << c->page_shift;
	// A page: a kernel address with a different index at every level, at
	// a physical address above 4 PiB on 52-bit configurations (every high
	// output-address bit set), below 256 TiB otherwise.
	uint64_t va = top | (0x5a5a5a5a5a5a5a5aULL & ((1ULL << c->va_bits) - 1) & ~(page - 1));
	uint64_t pa = c->va_bits == 52 ? 0x000f3c5a12340000ULL : 0x0000a5a512340000ULL;
	map(&t, va, 0, encode(c, pa) | 0x3 | 0x400);	// AF
	KP_INIT(kp_vtop, v);
	CHECK_OK(walk(&t, va + 0x18, &v));
	if (!v.present || v.paddr != pa + 0x18 || v.page_size != page)
		FAILF("%s: page at 0x%" PRIx64 ": present %d, 0x%" PRIx64 " (%" PRIu64
		      " bytes), expected 0x%" PRIx64 " (%" PRIu64 ")", c->what, va, v.present,
		      v.paddr, v.page_size, pa + 0x18, page);
	CHECK(v.levels == c->levels && v.nsteps == c->levels);
	CHECK_STR(v.step[0].name, "PGD");
	CHECK_STR(v.step[v.nsteps - 1].name, "PTE");
	// A block one level up, in another slot of the same table.
	if (c->levels >= 2) {
		uint64_t bsize = page << (c->page_shift - 3);
		uint64_t va2 = (va & ~(bsize - 1)) ^ bsize;	// the next block over
		uint64_t bpa = c->va_bits == 52 ? 0x000c000000000000ULL : 0x0000400000000000ULL;
		map(&t, va2, 1, encode(c, bpa) | 0x1 | 0x400);
		CHECK_OK(walk(&t, va2 + 0x1234, &v));
		if (!v.present || v.paddr != bpa + 0x1234 || v.page_size != bsize)
			FAILF("%s: block at 0x%" PRIx64 ": present %d, 0x%" PRIx64 " (%" PRIu64
			      " bytes), expected 0x%" PRIx64 " (%" PRIu64 ")", c->what, va2,
			      v.present, v.paddr, v.page_size, bpa + 0x1234, bsize);
		// The page is still where it was.
		CHECK_OK(walk(&t, va, &v));
		CHECK(v.present && v.paddr == pa);
	}
	// An empty slot: not mapped, not an error; the walk stops there.
	uint64_t hole = va ^ (page << 1);
	CHECK_OK(walk(&t, hole, &v));
	CHECK(!v.present);
	// An invalid descriptor (bit 0 clear) at the last level.
	map(&t, va, 0, encode(c, pa) | 0x2);
	CHECK_OK(walk(&t, va, &v));
	CHECK(!v.present);
	// A block descriptor at the last level is reserved: not a mapping.
	map(&t, va, 0, encode(c, pa) | 0x1);
	CHECK_OK(walk(&t, va, &v));
	CHECK(!v.present);
	// Addresses TTBR1 does not translate: the top bits are not all ones.
	CHECK_ERR(walk(&t, va & ~(1ULL << 63), &v), KP_ERR_INVALID, "");
	if (c->va_bits < 52)
		CHECK_ERR(walk(&t, va ^ (1ULL << c->va_bits), &v),
			  KP_ERR_INVALID, "");
out:
	teardown(&t);
}

TEST(every_granule_and_va_size)
{
	for (size_t i = 0; i < sizeof(configs) / sizeof(configs[0]); i++)
		check_config(&configs[i]);
}

// A process's tables (TTBR0, the uspace walker: kp_arm64_pgtable_set_user):
// the same descriptors for the addresses whose top bits are zeros, and
// only those.
static void check_user(const struct config *c)
{
	struct tables t;
	if (!build(&t, c))
		goto out;
	kp_arm64_pgtable_set_user(t.pt);
	uint64_t page = 1ULL << c->page_shift;
	uint64_t va = 0x5a5a5a5a5a5a5a5aULL & ((1ULL << c->va_bits) - 1) & ~(page - 1);
	uint64_t pa = 0x0000a5a512340000ULL;
	map(&t, va, 0, encode(c, pa) | 0x3 | 0x400 | 0x40);	// AF, AP[1]: EL0 access
	KP_INIT(kp_vtop, v);
	CHECK_OK(kp_arm64_pgtable_walk(t.pt, va + 0x28, &v));
	if (!v.present || v.paddr != pa + 0x28 || v.page_size != page)
		FAILF("%s: user page at 0x%" PRIx64 ": present %d, 0x%" PRIx64 ", expected 0x%" PRIx64,
		      c->what, va, v.present, v.paddr, pa + 0x28);
	CHECK(v.nsteps == c->levels);
	// Nothing mapped one page up: not present, not an error.
	CHECK_OK(kp_arm64_pgtable_walk(t.pt, va + page, &v));
	CHECK(!v.present);
	// The kernel's half is not the process's.
	CHECK_ERR(kp_arm64_pgtable_walk(t.pt, va | (~0ULL << c->va_bits), &v), KP_ERR_INVALID,
		  "is not a user address");
	CHECK_ERR(kp_arm64_pgtable_walk(t.pt, va | (1ULL << 63), &v), KP_ERR_INVALID, "TTBR0 range");
	// And a kernel walker refuses the user address.
	CHECK_ERR(walk(&t, va, &v), KP_ERR_INVALID, "is not a kernel address");
	// A top table smaller than a page comes from pgd_cache (PGD_SIZE:
	// 128 bytes with 4K/52-bit LPA2, 16 with 16K/48-bit): mm->pgd is
	// aligned to its size only. Moved to the second such slot of a page
	// that holds nothing else, the walk must start there, not at the page.
	unsigned bits = c->page_shift - 3;
	uint64_t top_bytes = 8ULL << ((c->va_bits - c->page_shift - 1) % bits + 1);
	if (top_bytes < page) {
		uint64_t root = 5 * TABLE_STRIDE + top_bytes;
		memcpy(t.mem + root, t.mem, top_bytes);
		memset(t.mem, 0, top_bytes);
		struct arm64_pgtable *pt;
		CHECK_OK(kp_arm64_pgtable_create(t.m, root, c->page_shift, c->va_bits, &pt));
		kp_arm64_pgtable_set_user(pt);
		CHECK_OK(kp_arm64_pgtable_walk(pt, va + 0x28, &v));
		if (!v.present || v.paddr != pa + 0x28)
			FAILF("%s: user page through a %" PRIu64 "-byte root at 0x%" PRIx64 ": present %d, 0x%"
			      PRIx64, c->what, top_bytes, root, v.present, v.paddr);
		CHECK_U64(v.step[0].table, root);
		kp_arm64_pgtable_destroy(pt);
	}
out:
	teardown(&t);
}

TEST(user_tables_every_granule_and_va_size)
{
	for (size_t i = 0; i < sizeof(configs) / sizeof(configs[0]); i++)
		check_user(&configs[i]);
}

// A table pointing outside the source is a fault naming the table, not a
// wild read; a table pointing at itself ends within the level count.
TEST(missing_and_self_referencing_tables)
{
	struct tables t;
	const struct config *c = &configs[0];
	if (build(&t, c)) {
		uint64_t va = ~0ULL << c->va_bits;
		put(&t, 8 * index_at(c, va, c->levels - 1), encode(c, 0x40000000ULL) | 0x3);
		KP_INIT(kp_vtop, v);
		CHECK_ERR(walk(&t, va, &v), KP_ERR_FAULT, "0x40000000");
		put(&t, 8 * index_at(c, va, c->levels - 1), encode(c, 0) | 0x3);
		CHECK_OK(walk(&t, va, &v));
		CHECK(v.nsteps <= c->levels);
	}
	teardown(&t);
}

TEST(unsupported_geometry)
{
	struct kp_memory *m;
	struct arm64_pgtable *pt;
	CHECK_OK(kp_memory_create(&m));
	CHECK_ERR(kp_arm64_pgtable_create(m, 0, 13, 48, &pt), KP_ERR_UNSUPPORTED, "page size");
	CHECK_ERR(kp_arm64_pgtable_create(m, 0, 12, 53, &pt), KP_ERR_UNSUPPORTED, "53 bits");
	CHECK_ERR(kp_arm64_pgtable_create(m, 0, 12, 30, &pt), KP_ERR_UNSUPPORTED, "30 bits");
	kp_memory_destroy(m);
}

int main(void)
{
	RUN(every_granule_and_va_size);
	RUN(user_tables_every_granule_and_va_size);
	RUN(missing_and_self_referencing_tables);
	RUN(unsupported_geometry);
	return TEST_SUMMARY();
}
