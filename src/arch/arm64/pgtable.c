// SPDX-License-Identifier: MIT
// arm64 translation table walk (pgtable.h).
#include <inttypes.h>
#include <stdlib.h>

#include "arch/arm64/pgtable.h"
#include "util/error.h"

// Descriptor bits [1:0]: 0b11 a table (or a page at the last level), 0b01
// a block above the last level, anything else invalid.
#define DESC_TYPE 0x3ULL
#define DESC_TABLE 0x3ULL
#define DESC_BLOCK 0x1ULL

struct arm64_pgtable {
	uint64_t root;
	unsigned page_shift, bits;	// bits: index bits per level (page_shift - 3)
	unsigned va_bits;
	int levels;
	unsigned top_entries;
	// Output address: descriptor bits [47:page_shift] (and [49:48] with
	// LPA2), plus high bits moved into place: with 64 KiB pages bits
	// [15:12] are PA[51:48] (FEAT_LPA), with LPA2 bits [9:8] are PA[51:50].
	uint64_t low_mask, high_mask;
	unsigned high_shift;
	bool lpa2;
	bool user;		// TTBR0: the top bits are zeros
	struct kp_ptcache *cache;
};

struct kp_error *kp_arm64_pgtable_create(struct kp_memory *mem, uint64_t root_pa,
					 unsigned page_shift, unsigned va_bits,
					 struct arm64_pgtable **ret)
{
	if (page_shift != 12 && page_shift != 14 && page_shift != 16)
		return kp_error_create(KP_ERR_UNSUPPORTED,
				       "arm64 page size of %llu bytes (want 4, 16 or 64 KiB)",
				       1ULL << (page_shift < 32 ? page_shift : 0));
	if (va_bits < 36 || va_bits > 52 || va_bits <= page_shift)
		return kp_error_create(KP_ERR_UNSUPPORTED, "arm64 virtual address size of %u bits",
				       va_bits);
	struct arm64_pgtable *pt = calloc(1, sizeof(*pt));
	if (!pt)
		return &kp_enomem;
	struct kp_error *err = kp_ptcache_create(mem, 1ULL << page_shift, &pt->cache);
	if (err) {
		free(pt);
		return err;
	}
	pt->page_shift = page_shift;
	pt->bits = page_shift - 3;
	pt->va_bits = va_bits;
	pt->levels = (int)((va_bits - page_shift + pt->bits - 1) / pt->bits);
	pt->top_entries = 1u << ((va_bits - page_shift - 1) % pt->bits + 1);
	pt->low_mask = 0x0000ffffffffffffULL & ~((1ULL << page_shift) - 1);
	if (page_shift == 16) {
		pt->high_mask = 0xf000;
		pt->high_shift = 36;
	} else if (va_bits == 52) {
		// The kernel enables LPA2 together with 52-bit VAs on 4 and
		// 16 KiB pages (352b0395b505, "arm64: Enable 52-bit virtual
		// addressing for 4k and 16k granule configs", 6.9).
		pt->lpa2 = true;
		pt->low_mask |= 0x0003000000000000ULL;
		pt->high_mask = 0x300;
		pt->high_shift = 42;
	}
	// A top table smaller than a page is aligned to its size only: a
	// process's mm->pgd then comes from pgd_cache (arch/arm64/mm/pgd.c,
	// PGD_SIZE < PAGE_SIZE: 128 bytes with 4K/52-bit LPA2, found on 7.2
	// arm64 at 0x...800 in its page), not from a page of its own.
	uint64_t top_bytes = (uint64_t)pt->top_entries * 8;
	pt->root = root_pa & 0x000fffffffffffffULL & ~(top_bytes - 1);
	*ret = pt;
	return NULL;
}

void kp_arm64_pgtable_destroy(struct arm64_pgtable *pt)
{
	if (!pt)
		return;
	kp_ptcache_destroy(pt->cache);
	free(pt);
}

void kp_arm64_pgtable_set_user(struct arm64_pgtable *pt)
{
	pt->user = true;
}

int kp_arm64_pgtable_levels(const struct arm64_pgtable *pt)
{
	return pt->levels;
}

bool kp_arm64_pgtable_lpa2(const struct arm64_pgtable *pt)
{
	return pt->lpa2;
}

void kp_arm64_pgtable_get_stats(const struct arm64_pgtable *pt, struct kp_pgtable_stats *ret)
{
	kp_ptcache_get_stats(pt->cache, ret);
}

// lvl: 0 = PTE .. levels-1 = PGD.
static const char *level_name(const struct arm64_pgtable *pt, int lvl)
{
	static const char *const names[] = { "PTE", "PMD", "PUD", "P4D" };
	return lvl == pt->levels - 1 ? "PGD" : names[lvl];
}

static uint64_t output_address(const struct arm64_pgtable *pt, uint64_t desc)
{
	return (desc & pt->low_mask) | (desc & pt->high_mask) << pt->high_shift;
}

// Fills *v (also on error: callers copy it out only on success).
static struct kp_error *walk(struct arm64_pgtable *pt, uint64_t vaddr, struct kp_vtop *v)
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
		unsigned shift = pt->page_shift + pt->bits * (unsigned)lvl;
		unsigned entries = lvl == pt->levels - 1 ? pt->top_entries : 1u << pt->bits;
		unsigned index = (unsigned)(vaddr >> shift) & (entries - 1);
		uint64_t desc;
		struct kp_error *err = kp_ptcache_entry(pt->cache, lvl, level_name(pt, lvl), table,
							index, vaddr, &desc);
		if (err)	// the table: all the parent entry maps is unreadable
			return kp_ptcache_span(err, vaddr, lvl == pt->levels - 1 ? pt->va_bits
					       : (unsigned)shift + pt->bits);
		struct kp_vtop_step *step = &v->step[v->nsteps++];
		step->name = level_name(pt, lvl);
		step->table = table;
		step->index = index;
		step->entry = desc;
		uint64_t type = desc & DESC_TYPE;
		bool leaf = lvl == 0 ? type == DESC_TABLE : type == DESC_BLOCK;
		if (leaf) {
			uint64_t size = 1ULL << shift;
			v->paddr = (output_address(pt, desc) & ~(size - 1)) | (vaddr & (size - 1));
			v->page_size = size;
			v->present = true;
			return NULL;
		}
		if (type != DESC_TABLE || lvl == 0)
			return NULL;	// invalid: not mapped
		table = output_address(pt, desc);
	}
	return NULL;	// not reached
}

// TTBR1 maps the addresses whose top 64 - va_bits bits are all ones,
// TTBR0 those whose top bits are zeros.
static bool in_range(const struct arm64_pgtable *pt, uint64_t vaddr)
{
	return (vaddr >> pt->va_bits) == (pt->user ? 0 : ~0ULL >> pt->va_bits);
}

struct kp_error *kp_arm64_pgtable_walk(struct arm64_pgtable *pt, uint64_t vaddr,
				       struct kp_vtop *ret)
{
	if (!in_range(pt, vaddr))
		return kp_error_create(KP_ERR_INVALID,
				       "virtual address 0x%" PRIx64 " is not a %s address (%u-bit %s range)",
				       vaddr, pt->user ? "user" : "kernel", pt->va_bits,
				       pt->user ? "TTBR0" : "TTBR1");
	struct kp_vtop v;
	struct kp_error *err = walk(pt, vaddr, &v);
	if (err)
		return err;
	*ret = v;
	return NULL;
}

struct kp_error *kp_arm64_pgtable_translate(void *arg, uint64_t vaddr, uint64_t *paddr_ret,
					    uint64_t *size_ret)
{
	struct arm64_pgtable *pt = arg;
	if (kp_ptcache_fast(pt->cache, vaddr, paddr_ret, size_ret))
		return NULL;
	if (!in_range(pt, vaddr))
		return kp_error_fault(vaddr,
				      "virtual address 0x%" PRIx64 " is not a kernel address (%u-bit TTBR1 range)",
				      vaddr, pt->va_bits);
	struct kp_vtop v;
	struct kp_error *err = walk(pt, vaddr, &v);
	if (err)
		return err;
	// The last descriptor read maps a page << bits * (levels - steps).
	return kp_ptcache_answer(pt->cache, &v, "valid",
				 pt->page_shift + pt->bits * (unsigned)(pt->levels - v.nsteps),
				 paddr_ret, size_ret);
}
