// SPDX-License-Identifier: MIT
// x86-64 4- and 5-level page-table walk with a cache of whole 4 KiB tables.
//
// Step names follow the kernel (arch/x86/include/asm/pgtable_types.h): the top
// table is always "PGD" (PML4 with 4 levels, PML5 with 5), "P4D" exists only
// with 5 levels (the PML4 then), then "PUD" (PDPT), "PMD" (PD) and "PTE" (PT).
// Tables are cached by arch/ptcache.c (2 MiB, allocated at create). A
// kp_pgtable is not thread-safe: walks update the cache and the counters.
#ifndef KP_PGTABLE_X86_64_H
#define KP_PGTABLE_X86_64_H

#include <kpeek/kpeek.h>
#include "arch/ptcache.h"
#include "io/memory.h"

struct kp_pgtable;

// root_pa: physical address of the top-level table (CR3 & ~0xfff or
// swapper_pg_dir's physical address). levels: 4 or 5.
// Bits 0..11 (PCID) and 52..63 of root_pa are ignored; the PTI user-PGD bit 12
// is not: clear it to walk the kernel's tables.
struct kp_error *kp_pgtable_create(struct kp_memory *mem, uint64_t root_pa,
				   int levels, struct kp_pgtable **ret);
void kp_pgtable_destroy(struct kp_pgtable *pt);
// Fills ret with every level read. Not-present is a value (ret->present false);
// errors only when a table cannot be read or vaddr is not canonical.
// A non-canonical vaddr (48-bit with 4 levels, 57-bit with 5) is KP_ERR_INVALID;
// an unreadable table is KP_ERR_FAULT with address = vaddr and a message naming
// the level and the table's physical address.
struct kp_error *kp_pgtable_walk(struct kp_pgtable *pt, uint64_t vaddr,
				 struct kp_vtop *ret);
// kp_translate_fn over a struct kp_pgtable (arg). Unlike kp_pgtable_walk,
// not-present and non-canonical addresses are KP_ERR_FAULT errors naming vaddr
// (as kp_memory_read expects of a translator). Hits in the table cache and in
// the last-page fast path (one entry each for 4 KiB, 2 MiB and 1 GiB pages)
// allocate nothing and make no reads.
kp_translate_fn kp_pgtable_translate;
// Drops cached tables (live memory may change).
void kp_pgtable_flush(struct kp_pgtable *pt);

// Counters since creation (kp_pgtable_flush does not reset them).
void kp_pgtable_get_stats(const struct kp_pgtable *pt, struct kp_pgtable_stats *ret);

#endif
