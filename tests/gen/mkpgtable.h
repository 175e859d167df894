// SPDX-License-Identifier: MIT
// Synthetic x86-64 page tables in a synthetic physical memory buffer, built from
// a short text spec. For tests of translation and of physical-only dumps.
//
// Spec: one directive per line; '#' starts a comment; numbers are C literals
// (0x.., decimal) with an optional K/M/G suffix (binary units).
//
//   levels 4|5        paging levels (default 4)
//   ram SIZE          physical RAM [0, SIZE) filled with kp_mkpgtable_pattern()
//                     (default 0: no RAM, only tables)
//   tables PA         physical address where table pages are allocated from
//                     (default: ram rounded up to 4K, at least 0x1000; must not
//                     be below ram)
//   maxtables N       capacity in table pages, root included (default 512)
//   map VA PA 4K|2M|1G [COUNT] [nx] [pat] [flags=BITS]
//                     maps COUNT (default 1) consecutive pages of that size;
//                     nx sets bit 63, pat the PAT bit (12 in huge pages, 7 in
//                     PTEs), flags= ORs raw bits into each leaf entry
//   set VA LEVEL VALUE
//                     stores the raw VALUE in VA's entry at LEVEL (PGD, P4D,
//                     PUD, PMD, PTE, as the kernel names them: PGD is the top,
//                     P4D exists with 5 levels only), creating the tables above
//                     it. For not-present entries, cycles and wild pointers.
//
// levels/ram/tables/maxtables must precede the first map or set. Example:
//   levels 5
//   ram 4M
//   map 0xffffffff81000000 0x200000 2M
//   map 0xffff888000000000 0 1G
//   map 0xffffc90000000000 0x3000 4K 2 nx
//
// Memory layout: the buffer covers [0, size) = RAM, then (from 'tables') the
// table pages; it has a fixed capacity and never moves, so tables may be changed
// (kp_mkpgtable_map/_set) after the buffer was handed to a kp_memory. Leaf
// entries get P|RW|A|D|G (+PS), table entries P|RW|A|D, as the kernel's
// __PAGE_KERNEL / _KERNPG_TABLE. Mapped data pages outside [0, size) are simply
// absent from physical memory.
//
// Typical use (a physical-only dump):
//   struct kp_mkpgtable *pg;
//   kp_mkpgtable_create("levels 4\nram 2M\nmap 0xffffffff81000000 0 2M\n", &pg);
//   kp_mkpgtable_add_to(pg, mem);           // KP_PHYS [0, pg->size)
//   kp_pgtable_create(mem, pg->root, pg->levels, &pt);
#ifndef KP_MKPGTABLE_H
#define KP_MKPGTABLE_H

#include <kpeek/kpeek.h>
#include "io/memory.h"

struct kp_mkpgtable {
	int levels;		// 4 or 5
	uint64_t root;		// physical address of the top-level table (CR3)
	uint8_t *buf;		// physical memory [0, size); owned
	uint64_t size;
	uint64_t ram;		// [0, ram) holds the pattern
	uint64_t tables;	// first table page
	bool tables_set;	// 'tables' was given (else it follows 'ram')
	unsigned max_tables;
	unsigned ntables;	// table pages used, root included
};

// Hardware-independent level numbers for the C API: 1 = PTE, 2 = PMD, 3 = PUD,
// 4 = P4D (5 levels) or PGD (4 levels), 5 = PGD (5 levels).
enum {
	KP_MKPG_PTE = 1,
	KP_MKPG_PMD = 2,
	KP_MKPG_PUD = 3,
};

// Parses spec and builds the tables; errors are KP_ERR_INVALID naming the line.
struct kp_error *kp_mkpgtable_create(const char *spec, struct kp_mkpgtable **ret);
void kp_mkpgtable_destroy(struct kp_mkpgtable *pg);
// Applies more spec lines (only map and set once the buffer exists).
struct kp_error *kp_mkpgtable_apply(struct kp_mkpgtable *pg, const char *spec);
// Maps one page; page_size 4096, 2 MiB or 1 GiB; extra is ORed into the leaf.
struct kp_error *kp_mkpgtable_map(struct kp_mkpgtable *pg, uint64_t va, uint64_t pa,
				  uint64_t page_size, uint64_t extra);
// Stores a raw entry for va at level (1..levels), creating the tables above.
struct kp_error *kp_mkpgtable_set(struct kp_mkpgtable *pg, uint64_t va, int level,
				  uint64_t value);
// Physical address of the table holding va's entry at level (creating tables).
struct kp_error *kp_mkpgtable_table(struct kp_mkpgtable *pg, uint64_t va, int level,
				    uint64_t *ret);
// The raw entry for va at level; KP_ERR_NOT_FOUND if a table above is missing.
struct kp_error *kp_mkpgtable_entry(struct kp_mkpgtable *pg, uint64_t va, int level,
				    uint64_t *ret);
// kp_memory_add(mem, KP_PHYS, 0, pg->size, kp_read_buffer, pg->buf, 0).
struct kp_error *kp_mkpgtable_add_to(struct kp_mkpgtable *pg, struct kp_memory *mem);

// The little-endian 64-bit word stored at 8-aligned physical address pa in RAM.
static inline uint64_t kp_mkpgtable_pattern(uint64_t pa)
{
	return 0x5a00000000000000ULL | (pa & 0x00fffffffffffff8ULL);
}

#endif
