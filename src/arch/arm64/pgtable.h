// SPDX-License-Identifier: MIT
// arm64 translation table walk (Arm ARM D8, "The AArch64 Virtual Memory
// System Architecture") for the kernel's TTBR1 tables: 4, 16 or 64 KiB
// granules, 3 to 5 levels, 48- or 52-bit virtual addresses (FEAT_LPA with
// 64 KiB pages, FEAT_LPA2 with 4 and 16 KiB pages, 6.9+), through the shared
// table cache (arch/ptcache.h). Not thread-safe.
//
// Step names follow the kernel: the top table is "PGD", then "P4D" (5
// levels), "PUD" (4+), "PMD" (3+), "PTE".
#ifndef KP_ARCH_ARM64_PGTABLE_H
#define KP_ARCH_ARM64_PGTABLE_H

#include <kpeek/kpeek.h>
#include "arch/ptcache.h"
#include "io/memory.h"

struct arm64_pgtable;

// root_pa: the physical address of swapper_pg_dir; page_shift 12, 14 or 16;
// va_bits 36..52 (the addresses the tables map: the top va_bits bits are
// all ones).
struct kp_error *kp_arm64_pgtable_create(struct kp_memory *mem, uint64_t root_pa,
					 unsigned page_shift, unsigned va_bits,
					 struct arm64_pgtable **ret);
void kp_arm64_pgtable_destroy(struct arm64_pgtable *pt);
// Makes pt a TTBR0 walker: the addresses whose top 64 - va_bits bits are
// zeros (a process's), not ones.
void kp_arm64_pgtable_set_user(struct arm64_pgtable *pt);
int kp_arm64_pgtable_levels(const struct arm64_pgtable *pt);
bool kp_arm64_pgtable_lpa2(const struct arm64_pgtable *pt);
// As kp_pgtable_walk() of x86-64: an unmapped address is ret->present
// false; an address outside the tables' range is KP_ERR_INVALID; a table
// not in the source KP_ERR_FAULT.
struct kp_error *kp_arm64_pgtable_walk(struct arm64_pgtable *pt, uint64_t vaddr,
				       struct kp_vtop *ret);
// kp_translate_fn over an arm64_pgtable (arg).
kp_translate_fn kp_arm64_pgtable_translate;
void kp_arm64_pgtable_get_stats(const struct arm64_pgtable *pt, struct kp_pgtable_stats *ret);

#endif
