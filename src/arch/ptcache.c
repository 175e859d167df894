// SPDX-License-Identifier: MIT
// The page-table cache every architecture's walker uses (ptcache.h).
#include <endian.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "arch/ptcache.h"
#include "util/error.h"

#define CACHE_BYTES (2u << 20)
#define NWAYS 4
#define NO_TAG UINT64_MAX	// tags are table-aligned, so this never matches
#define MAX_LEVELS KP_VTOP_MAX_LEVELS
#define NFAST 4			// page sizes remembered: e.g. 4K, 2M, 1G (+1)

// Last translation of one page size. An empty entry has mask 0 and an
// unaligned base, which no address matches.
struct fast {
	uint64_t mask;		// ~(page size - 1)
	uint64_t va_base;
	uint64_t pa_base;
};

struct kp_ptcache {
	struct kp_memory *mem;
	uint64_t table_size;
	unsigned entries;	// per table
	unsigned nsets, set_bits;
	uint32_t clock;		// LRU stamps
	uint64_t *tags;		// [nsets][NWAYS]
	uint32_t *stamps;	// [nsets][NWAYS]
	uint64_t *data;		// [nsets * NWAYS][entries], raw little-endian
	// Last table used at each level (a slot), checked against its tag.
	uint64_t memo_pa[MAX_LEVELS];
	unsigned memo_slot[MAX_LEVELS];
	struct fast fast[NFAST];
	unsigned next_fast;	// round robin among page sizes not yet seen
	struct kp_pgtable_stats stats;
};

void kp_ptcache_flush(struct kp_ptcache *c)
{
	for (unsigned i = 0; i < c->nsets * NWAYS; i++) {
		c->tags[i] = NO_TAG;
		c->stamps[i] = 0;
	}
	for (int i = 0; i < MAX_LEVELS; i++) {
		c->memo_pa[i] = NO_TAG;
		c->memo_slot[i] = 0;
	}
	for (int i = 0; i < NFAST; i++)
		c->fast[i] = (struct fast){ .mask = 0, .va_base = 1, .pa_base = 0 };
	c->clock = 0;
}

struct kp_error *kp_ptcache_create(struct kp_memory *mem, uint64_t table_size,
				   struct kp_ptcache **ret)
{
	if (table_size < 4096 || table_size > 65536 || (table_size & (table_size - 1)))
		return kp_error_create(KP_ERR_INVALID, "page table of %" PRIu64 " bytes", table_size);
	struct kp_ptcache *c = calloc(1, sizeof(*c));
	if (!c)
		return &kp_enomem;
	c->mem = mem;
	c->table_size = table_size;
	c->entries = (unsigned)(table_size / 8);
	c->nsets = (unsigned)(CACHE_BYTES / table_size / NWAYS);
	while ((1u << c->set_bits) < c->nsets)
		c->set_bits++;
	c->tags = calloc((size_t)c->nsets * NWAYS, sizeof(*c->tags));
	c->stamps = calloc((size_t)c->nsets * NWAYS, sizeof(*c->stamps));
	c->data = malloc((size_t)c->nsets * NWAYS * table_size);
	if (!c->tags || !c->stamps || !c->data) {
		kp_ptcache_destroy(c);
		return &kp_enomem;
	}
	kp_ptcache_flush(c);
	*ret = c;
	return NULL;
}

void kp_ptcache_destroy(struct kp_ptcache *c)
{
	if (!c)
		return;
	free(c->tags);
	free(c->stamps);
	free(c->data);
	free(c);
}

static unsigned set_of(const struct kp_ptcache *c, uint64_t pa)
{
	uint64_t n = pa / c->table_size;
	// Consecutive tables land in distinct sets; higher bits are folded in
	// so that tables a power of two apart do not all collide.
	return (unsigned)((n ^ (n >> c->set_bits) ^ (n >> (2 * c->set_bits))) & (c->nsets - 1));
}

static uint64_t get(const struct kp_ptcache *c, unsigned slot, unsigned index)
{
	return le64toh(c->data[(size_t)slot * c->entries + index]);
}

struct kp_error *kp_ptcache_entry(struct kp_ptcache *c, int lvl, const char *name,
				  uint64_t table_pa, unsigned index, uint64_t vaddr,
				  uint64_t *ret)
{
	if (index >= c->entries || lvl < 0 || lvl >= MAX_LEVELS)
		return kp_error_create(KP_ERR_INVALID, "page table index %u at level %d", index, lvl);
	if (c->memo_pa[lvl] == table_pa && c->tags[c->memo_slot[lvl]] == table_pa) {
		unsigned slot = c->memo_slot[lvl];
		c->stamps[slot] = ++c->clock;
		c->stats.table_hits++;
		*ret = get(c, slot, index);
		return NULL;
	}
	unsigned set = set_of(c, table_pa);
	uint64_t *tags = c->tags + (size_t)set * NWAYS;
	uint32_t *stamps = c->stamps + (size_t)set * NWAYS;
	unsigned victim = 0;
	for (unsigned w = 0; w < NWAYS; w++) {
		if (tags[w] == table_pa) {
			unsigned slot = set * NWAYS + w;
			stamps[w] = ++c->clock;
			c->memo_pa[lvl] = table_pa;
			c->memo_slot[lvl] = slot;
			c->stats.table_hits++;
			*ret = get(c, slot, index);
			return NULL;
		}
		// Empty ways first, else the oldest stamp: the largest unsigned
		// distance from the clock, which also holds after the clock wraps.
		if (tags[victim] != NO_TAG &&
		    (tags[w] == NO_TAG || c->clock - stamps[w] > c->clock - stamps[victim]))
			victim = w;
	}
	unsigned slot = set * NWAYS + victim;
	tags[victim] = NO_TAG;	// its data is about to be overwritten
	struct kp_error *err = kp_memory_read(c->mem, KP_PHYS, table_pa,
					      c->data + (size_t)slot * c->entries, c->table_size);
	if (!err) {
		tags[victim] = table_pa;
		stamps[victim] = ++c->clock;
		c->memo_pa[lvl] = table_pa;
		c->memo_slot[lvl] = slot;
		c->stats.table_reads++;
		*ret = get(c, slot, index);
		return NULL;
	}
	uint64_t entry_pa = table_pa + 8 * (uint64_t)index;
	if (err->code == KP_ERR_FAULT) {
		kp_error_destroy(err);
		uint64_t raw;
		err = kp_memory_read(c->mem, KP_PHYS, entry_pa, &raw, sizeof(raw));
		if (!err) {
			c->stats.entry_reads++;
			*ret = le64toh(raw);
			return NULL;
		}
		if (err->code == KP_ERR_FAULT) {
			// The source's reason (not in it, excluded, lost, in another
			// part of a split dump) said of the table, at vaddr.
			struct kp_error *why = err;
			err = kp_error_fault(vaddr, "%s table at physical address 0x%" PRIx64
					     " (entry %u at 0x%" PRIx64 ", for virtual address 0x%" PRIx64
					     ") is not readable: %s", name, table_pa, index, entry_pa, vaddr,
					     kp_error_message(why));
			kp_error_destroy(why);
			return err;
		}
	}
	return kp_error_prefix(err, "reading %s table at physical address 0x%" PRIx64
			       " for virtual address 0x%" PRIx64, name, table_pa, vaddr);
}

bool kp_ptcache_fast(struct kp_ptcache *c, uint64_t vaddr, uint64_t *paddr_ret,
		     uint64_t *size_ret)
{
	for (int i = 0; i < NFAST; i++) {
		const struct fast *f = &c->fast[i];
		if ((vaddr & f->mask) == f->va_base) {
			uint64_t off = vaddr & ~f->mask;
			c->stats.fast_hits++;
			*paddr_ret = f->pa_base | off;
			*size_ret = ~f->mask + 1 - off;
			return true;
		}
	}
	return false;
}

void kp_ptcache_remember(struct kp_ptcache *c, uint64_t vaddr, uint64_t paddr,
			 uint64_t page_size)
{
	uint64_t mask = ~(page_size - 1);
	int i;
	for (i = 0; i < NFAST; i++)
		if (c->fast[i].mask == mask)
			break;
	if (i == NFAST) {
		i = (int)(c->next_fast++ % NFAST);
	}
	c->fast[i] = (struct fast){ .mask = mask, .va_base = vaddr & mask, .pa_base = paddr & mask };
}

void kp_ptcache_count_walk(struct kp_ptcache *c)
{
	c->stats.walks++;
}

void kp_ptcache_get_stats(const struct kp_ptcache *c, struct kp_pgtable_stats *ret)
{
	*ret = c->stats;
}

struct kp_error *kp_ptcache_span(struct kp_error *err, uint64_t vaddr, unsigned shift)
{
	if (err && err != &kp_enomem && shift < 64) {
		uint64_t span = 1ULL << shift;
		err->span = span - (vaddr & (span - 1));
	}
	return err;
}

struct kp_error *kp_ptcache_answer(struct kp_ptcache *c, const struct kp_vtop *v,
				   const char *absent, unsigned last_shift,
				   uint64_t *paddr_ret, uint64_t *size_ret)
{
	if (!v->present) {
		const struct kp_vtop_step *last = &v->step[v->nsteps - 1];
		struct kp_error *err = kp_error_fault(v->vaddr,
						      "virtual address 0x%" PRIx64 " is not mapped (%s entry %u"
						      " = 0x%" PRIx64 " in table 0x%" PRIx64 " not %s)",
						      v->vaddr, last->name, last->index, last->entry,
						      last->table, absent);
		return kp_ptcache_span(err, v->vaddr, last_shift);
	}
	kp_ptcache_remember(c, v->vaddr, v->paddr, v->page_size);
	*paddr_ret = v->paddr;
	*size_ret = v->page_size - (v->vaddr & (v->page_size - 1));
	return NULL;
}
