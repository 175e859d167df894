// x86-64 page-table walk (Intel SDM vol. 3A, 4.5 "4-Level Paging and 5-Level
// Paging"). Tables are cached whole, keyed by physical address, in a small
// set-associative cache; the tables themselves are untrusted input, so every
// walk is bounded by the number of levels and any 52-bit table address is
// acceptable (it just fails to read).
#include <endian.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "arch/x86_64/pgtable.h"
#include "util/error.h"

#define ENTRIES 512
#define TABLE_SIZE 4096
#define PTE_PRESENT 0x1ULL
#define PTE_PS 0x80ULL		// page size, meaningful in PUD and PMD entries only
// Bits 12..51: MAXPHYADDR is at most 52. This drops NX (63), protection keys
// (59..62) and the software bits 52..58.
#define PHYS_MASK 0x000ffffffffff000ULL

// 128 sets x 4 ways = 512 tables (2 MiB): enough for the kernel's upper levels
// plus a few hundred PTE tables of vmalloc/module space.
#define SET_BITS 7
#define NSETS (1u << SET_BITS)
#define NWAYS 4
#define NO_TAG UINT64_MAX	// tags are 4 KiB aligned, so this never matches

// Last translation per page size (4 KiB, 2 MiB, 1 GiB). An empty entry has
// mask 0 and an unaligned base, which no address matches.
struct fast {
	uint64_t mask;		// ~(page size - 1)
	uint64_t va_base;
	uint64_t pa_base;
};

struct kp_pgtable {
	struct kp_memory *mem;
	uint64_t root;
	int levels;
	int va_bits;		// 48 or 57
	uint32_t clock;		// LRU stamps
	uint64_t tags[NSETS][NWAYS];
	uint32_t stamps[NSETS][NWAYS];
	uint64_t (*data)[ENTRIES];	// NSETS * NWAYS tables, raw little-endian
	// Last table used at each level (index into data); checked against its tag.
	uint64_t memo_pa[KP_VTOP_MAX_LEVELS];
	unsigned memo_slot[KP_VTOP_MAX_LEVELS];
	struct fast fast[3];
	struct kp_pgtable_stats stats;
};

static void reset(struct kp_pgtable *pt)
{
	for (unsigned s = 0; s < NSETS; s++)
		for (unsigned w = 0; w < NWAYS; w++) {
			pt->tags[s][w] = NO_TAG;
			pt->stamps[s][w] = 0;
		}
	for (int i = 0; i < KP_VTOP_MAX_LEVELS; i++) {
		pt->memo_pa[i] = NO_TAG;
		pt->memo_slot[i] = 0;
	}
	for (int i = 0; i < 3; i++)
		pt->fast[i] = (struct fast){.mask = 0, .va_base = 1, .pa_base = 0};
	pt->clock = 0;
}

struct kp_error *kp_pgtable_create(struct kp_memory *mem, uint64_t root_pa,
				   int levels, struct kp_pgtable **ret)
{
	if (levels != 4 && levels != 5)
		return kp_error_create(KP_ERR_INVALID,
				       "unsupported number of x86-64 paging levels %d (want 4 or 5)",
				       levels);
	struct kp_pgtable *pt = calloc(1, sizeof(*pt));
	if (!pt)
		return &kp_enomem;
	pt->data = calloc((size_t)NSETS * NWAYS, sizeof(*pt->data));
	if (!pt->data) {
		free(pt);
		return &kp_enomem;
	}
	pt->mem = mem;
	pt->root = root_pa & PHYS_MASK;
	pt->levels = levels;
	pt->va_bits = levels == 5 ? 57 : 48;
	reset(pt);
	*ret = pt;
	return NULL;
}

void kp_pgtable_destroy(struct kp_pgtable *pt)
{
	if (!pt)
		return;
	free(pt->data);
	free(pt);
}

void kp_pgtable_flush(struct kp_pgtable *pt)
{
	reset(pt);
}

void kp_pgtable_get_stats(const struct kp_pgtable *pt, struct kp_pgtable_stats *ret)
{
	*ret = pt->stats;
}

// lvl: 0 = PTE .. levels-1 = PGD.
static const char *level_name(const struct kp_pgtable *pt, int lvl)
{
	static const char *const names[] = {"PTE", "PMD", "PUD", "P4D"};
	return lvl == pt->levels - 1 ? "PGD" : names[lvl];
}

static bool is_canonical(uint64_t vaddr, int bits)
{
	int shift = 64 - bits;
	return (uint64_t)((int64_t)(vaddr << shift) >> shift) == vaddr;
}

static unsigned set_of(uint64_t pa)
{
	uint64_t pfn = pa >> 12;
	// Consecutive page-table pages land in distinct sets; higher bits are
	// folded in so that tables a power of two apart do not all collide.
	return (unsigned)((pfn ^ (pfn >> SET_BITS) ^ (pfn >> (2 * SET_BITS))) & (NSETS - 1));
}

static uint64_t get_entry(const uint64_t *table, unsigned index)
{
	return le64toh(table[index]);
}

// Reads entry 'index' of the table at physical address table_pa (level lvl),
// through the cache. If the whole table cannot be read (e.g. a segment ends
// inside it), falls back to reading just the entry, uncached.
static struct kp_error *read_entry(struct kp_pgtable *pt, int lvl, uint64_t table_pa,
				   unsigned index, uint64_t vaddr, uint64_t *ret)
{
	if (pt->memo_pa[lvl] == table_pa) {
		unsigned slot = pt->memo_slot[lvl];
		if (pt->tags[slot / NWAYS][slot % NWAYS] == table_pa) {
			pt->stamps[slot / NWAYS][slot % NWAYS] = ++pt->clock;
			pt->stats.table_hits++;
			*ret = get_entry(pt->data[slot], index);
			return NULL;
		}
	}
	unsigned set = set_of(table_pa);
	uint64_t *tags = pt->tags[set];
	uint32_t *stamps = pt->stamps[set];
	unsigned victim = 0;
	for (unsigned w = 0; w < NWAYS; w++) {
		if (tags[w] == table_pa) {
			unsigned slot = set * NWAYS + w;
			stamps[w] = ++pt->clock;
			pt->memo_pa[lvl] = table_pa;
			pt->memo_slot[lvl] = slot;
			pt->stats.table_hits++;
			*ret = get_entry(pt->data[slot], index);
			return NULL;
		}
		// Empty ways first, else the oldest stamp: the largest unsigned
		// distance from the clock, which also holds after the clock wraps.
		if (tags[victim] != NO_TAG &&
		    (tags[w] == NO_TAG || pt->clock - stamps[w] > pt->clock - stamps[victim]))
			victim = w;
	}
	unsigned slot = set * NWAYS + victim;
	tags[victim] = NO_TAG;	// its data is about to be overwritten
	struct kp_error *err = kp_memory_read(pt->mem, KP_PHYS, table_pa, pt->data[slot],
					      TABLE_SIZE);
	if (!err) {
		tags[victim] = table_pa;
		stamps[victim] = ++pt->clock;
		pt->memo_pa[lvl] = table_pa;
		pt->memo_slot[lvl] = slot;
		pt->stats.table_reads++;
		*ret = get_entry(pt->data[slot], index);
		return NULL;
	}
	uint64_t entry_pa = table_pa + 8 * (uint64_t)index;
	if (err->code == KP_ERR_FAULT) {
		kp_error_destroy(err);
		uint64_t raw;
		err = kp_memory_read(pt->mem, KP_PHYS, entry_pa, &raw, sizeof(raw));
		if (!err) {
			pt->stats.entry_reads++;
			*ret = le64toh(raw);
			return NULL;
		}
		if (err->code == KP_ERR_FAULT) {
			kp_error_destroy(err);
			return kp_error_fault(vaddr,
					      "%s table at physical address 0x%" PRIx64
					      " (entry %u at 0x%" PRIx64 ", for virtual address 0x%" PRIx64
					      ") is not in the memory source",
					      level_name(pt, lvl), table_pa, index, entry_pa, vaddr);
		}
	}
	return kp_error_prefix(err, "reading %s table at physical address 0x%" PRIx64
			       " for virtual address 0x%" PRIx64,
			       level_name(pt, lvl), table_pa, vaddr);
}

// The walk itself; fills *v (always, also on error: callers copy it out only
// on success).
static struct kp_error *walk(struct kp_pgtable *pt, uint64_t vaddr, struct kp_vtop *v)
{
	v->vaddr = vaddr;
	v->levels = pt->levels;
	v->nsteps = 0;
	v->present = false;
	v->paddr = 0;
	v->page_size = 0;
	v->method = "page tables";
	pt->stats.walks++;
	uint64_t table = pt->root;
	for (int lvl = pt->levels - 1; lvl >= 0; lvl--) {
		int shift = 12 + 9 * lvl;
		unsigned index = (unsigned)(vaddr >> shift) & (ENTRIES - 1);
		uint64_t entry = 0;
		struct kp_error *err = read_entry(pt, lvl, table, index, vaddr, &entry);
		if (err)
			return err;
		struct kp_vtop_step *step = &v->step[v->nsteps++];
		step->name = level_name(pt, lvl);
		step->table = table;
		step->index = index;
		step->entry = entry;
		if (!(entry & PTE_PRESENT))
			return NULL;
		// PS in PGD/P4D entries is reserved; like the kernel (p4d_large() and
		// pgd_large() are 0), treat those entries as tables. In PTEs bit 7 is PAT.
		if (lvl == 0 || ((lvl == 1 || lvl == 2) && (entry & PTE_PS))) {
			uint64_t size = 1ULL << shift;
			// For huge pages this also drops PAT (bit 12) and the reserved
			// bits below the page frame.
			v->paddr = (entry & PHYS_MASK & ~(size - 1)) | (vaddr & (size - 1));
			v->page_size = size;
			v->present = true;
			return NULL;
		}
		table = entry & PHYS_MASK;
	}
	return NULL;	// not reached: lvl 0 always returns
}

struct kp_error *kp_pgtable_walk(struct kp_pgtable *pt, uint64_t vaddr,
				 struct kp_vtop *ret)
{
	if (!is_canonical(vaddr, pt->va_bits))
		return kp_error_create(KP_ERR_INVALID,
				       "virtual address 0x%" PRIx64
				       " is not canonical for %d-level paging (%d-bit)",
				       vaddr, pt->levels, pt->va_bits);
	struct kp_vtop v;
	struct kp_error *err = walk(pt, vaddr, &v);
	if (err)
		return err;
	*ret = v;
	return NULL;
}

struct kp_error *kp_pgtable_translate(void *arg, uint64_t vaddr, uint64_t *paddr_ret,
				      uint64_t *size_ret)
{
	struct kp_pgtable *pt = arg;
	for (int i = 0; i < 3; i++) {
		const struct fast *f = &pt->fast[i];
		if ((vaddr & f->mask) == f->va_base) {
			uint64_t off = vaddr & ~f->mask;
			pt->stats.fast_hits++;
			*paddr_ret = f->pa_base | off;
			*size_ret = ~f->mask + 1 - off;
			return NULL;
		}
	}
	if (!is_canonical(vaddr, pt->va_bits))
		return kp_error_fault(vaddr,
				      "virtual address 0x%" PRIx64
				      " is not canonical for %d-level paging (%d-bit)",
				      vaddr, pt->levels, pt->va_bits);
	struct kp_vtop v;
	struct kp_error *err = walk(pt, vaddr, &v);
	if (err)
		return err;
	if (!v.present) {
		const struct kp_vtop_step *last = &v.step[v.nsteps - 1];
		return kp_error_fault(vaddr,
				      "virtual address 0x%" PRIx64 " is not mapped (%s entry %u"
				      " = 0x%" PRIx64 " in table 0x%" PRIx64 " not present)",
				      vaddr, last->name, last->index, last->entry, last->table);
	}
	uint64_t mask = ~(v.page_size - 1);
	int i = v.page_size == 4096 ? 0 : v.page_size == (1ULL << 21) ? 1 : 2;
	pt->fast[i] = (struct fast){
		.mask = mask, .va_base = vaddr & mask, .pa_base = v.paddr & mask};
	*paddr_ret = v.paddr;
	*size_ret = v.page_size - (vaddr & ~mask);
	return NULL;
}
