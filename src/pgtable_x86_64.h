// x86-64 4- and 5-level page-table walk with a cache of whole 4 KiB tables.
#ifndef KP_PGTABLE_X86_64_H
#define KP_PGTABLE_X86_64_H

#include <kpeek/kpeek.h>
#include "memory.h"

struct kp_pgtable;

// root_pa: physical address of the top-level table (CR3 & ~0xfff or
// swapper_pg_dir's physical address). levels: 4 or 5.
struct kp_error *kp_pgtable_create(struct kp_memory *mem, uint64_t root_pa,
				   int levels, struct kp_pgtable **ret);
void kp_pgtable_destroy(struct kp_pgtable *pt);
// Fills ret with every level read. Not-present is a value (ret->present false);
// errors only when a table cannot be read or vaddr is not canonical.
struct kp_error *kp_pgtable_walk(struct kp_pgtable *pt, uint64_t vaddr,
				 struct kp_vtop *ret);
// kp_translate_fn over a struct kp_pgtable (arg).
kp_translate_fn kp_pgtable_translate;
// Drops cached tables (live memory may change).
void kp_pgtable_flush(struct kp_pgtable *pt);

#endif
