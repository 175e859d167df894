// SPDX-License-Identifier: MIT
// x86-64 page-table walk (Intel SDM vol. 3A, 4.5 "4-Level Paging and 5-Level
// Paging"), through the shared table cache (arch/ptcache.h); the tables
// themselves are untrusted input, so every walk is bounded by the number of
// levels and any 52-bit table address is acceptable (it just fails to read).
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "arch/ptcache.h"
#include "arch/x86_64/pgtable.h"
#include "util/error.h"

#define ENTRIES 512
#define TABLE_SIZE 4096
#define PTE_PRESENT 0x1ULL
#define PTE_PS 0x80ULL		// page size, meaningful in PUD and PMD entries only
// Bits 12..51: MAXPHYADDR is at most 52. This drops NX (63), protection keys
// (59..62) and the software bits 52..58.
#define PHYS_MASK 0x000ffffffffff000ULL

struct kp_pgtable {
	uint64_t root;
	int levels;
	int va_bits;		// 48 or 57
	struct kp_ptcache *cache;
};

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
	struct kp_error *err = kp_ptcache_create(mem, TABLE_SIZE, &pt->cache);
	if (err) {
		free(pt);
		return err;
	}
	pt->root = root_pa & PHYS_MASK;
	pt->levels = levels;
	pt->va_bits = levels == 5 ? 57 : 48;
	*ret = pt;
	return NULL;
}

void kp_pgtable_destroy(struct kp_pgtable *pt)
{
	if (!pt)
		return;
	kp_ptcache_destroy(pt->cache);
	free(pt);
}

void kp_pgtable_flush(struct kp_pgtable *pt)
{
	kp_ptcache_flush(pt->cache);
}

void kp_pgtable_get_stats(const struct kp_pgtable *pt, struct kp_pgtable_stats *ret)
{
	kp_ptcache_get_stats(pt->cache, ret);
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
	kp_ptcache_count_walk(pt->cache);
	uint64_t table = pt->root;
	for (int lvl = pt->levels - 1; lvl >= 0; lvl--) {
		int shift = 12 + 9 * lvl;
		unsigned index = (unsigned)(vaddr >> shift) & (ENTRIES - 1);
		uint64_t entry = 0;
		struct kp_error *err = kp_ptcache_entry(pt->cache, lvl, level_name(pt, lvl), table,
						       index, vaddr, &entry);
		if (err)	// the table: all the parent entry maps is unreadable
			return kp_ptcache_span(err, vaddr, (unsigned)shift + 9);
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
	if (kp_ptcache_fast(pt->cache, vaddr, paddr_ret, size_ret))
		return NULL;
	if (!is_canonical(vaddr, pt->va_bits))
		return kp_error_fault(vaddr,
				      "virtual address 0x%" PRIx64
				      " is not canonical for %d-level paging (%d-bit)",
				      vaddr, pt->levels, pt->va_bits);
	struct kp_vtop v;
	struct kp_error *err = walk(pt, vaddr, &v);
	if (err)
		return err;
	// The last entry read maps 4 KiB << 9 * (levels - steps).
	return kp_ptcache_answer(pt->cache, &v, "present", 12 + 9 * (unsigned)(pt->levels - v.nsteps),
				 paddr_ret, size_ret);
}
