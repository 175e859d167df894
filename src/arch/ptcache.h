// SPDX-License-Identifier: MIT
// What every architecture's page-table walker shares: a cache of whole
// tables keyed by physical address (set-associative, LRU, about 2 MiB
// whatever the granule), and a fast path remembering the last translation
// of each page size. The tables are untrusted input: an entry is read
// through the cache, or alone when its table is not wholly in the source.
// Not thread-safe: lookups update the cache and the counters.
#ifndef KP_ARCH_PTCACHE_H
#define KP_ARCH_PTCACHE_H

#include <kpeek/kpeek.h>
#include "io/memory.h"

struct kp_ptcache;

// Counters since creation (kp_ptcache_flush does not reset them).
struct kp_pgtable_stats {
	uint64_t walks;		// walks through the tables (fast-path misses)
	uint64_t fast_hits;	// translations answered by the last-page fast path
	uint64_t table_hits;	// table lookups answered by the cache
	uint64_t table_reads;	// whole tables read from physical memory
	uint64_t entry_reads;	// single entries read (table not wholly readable)
};

// table_size: bytes of one table (4096, 16384, 65536), a power of two.
struct kp_error *kp_ptcache_create(struct kp_memory *mem, uint64_t table_size,
				   struct kp_ptcache **ret);
void kp_ptcache_destroy(struct kp_ptcache *c);
// Drops cached tables and fast-path entries (live memory may change).
void kp_ptcache_flush(struct kp_ptcache *c);

// Entry index (little-endian u64) of the table at table_pa, the table of
// level lvl (0 = last) of a walk for vaddr; name is the level's name for
// messages ("PMD"). A table not in the source is KP_ERR_FAULT at vaddr.
struct kp_error *kp_ptcache_entry(struct kp_ptcache *c, int lvl, const char *name,
				  uint64_t table_pa, unsigned index, uint64_t vaddr,
				  uint64_t *ret);

// The fast path: true (and the physical address and the bytes left in the
// page) if vaddr is in the last page translated of some page size.
bool kp_ptcache_fast(struct kp_ptcache *c, uint64_t vaddr, uint64_t *paddr_ret,
		     uint64_t *size_ret);
// Remembers a translation (page_size a power of two).
void kp_ptcache_remember(struct kp_ptcache *c, uint64_t vaddr, uint64_t paddr,
			 uint64_t page_size);
// err (returned) with its span: the bytes from vaddr to the end of the
// 1 << shift bytes around it, which the same fault covers (an entry that is
// absent, a table that cannot be read: the parent entry's span).
struct kp_error *kp_ptcache_span(struct kp_error *err, uint64_t vaddr, unsigned shift);
// A finished walk as a kp_translate_fn answer: a fault naming the entry
// that stopped it ("... not <absent>)", the architecture's word), with the
// span of that entry (it maps 1 << last_shift bytes), or the mapping,
// remembered for the fast path, and the bytes left in its page.
struct kp_error *kp_ptcache_answer(struct kp_ptcache *c, const struct kp_vtop *v,
				   const char *absent, unsigned last_shift,
				   uint64_t *paddr_ret, uint64_t *size_ret);
// Counts a walk through the tables (a fast-path miss).
void kp_ptcache_count_walk(struct kp_ptcache *c);
void kp_ptcache_get_stats(const struct kp_ptcache *c, struct kp_pgtable_stats *ret);

#endif
