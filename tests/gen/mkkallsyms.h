// SPDX-License-Identifier: MIT
// Synthetic in-memory kallsyms tables, laid out as scripts/kallsyms.c emits
// them, for tests and synthetic dumps.
//
// Given (name, type, address) triples, builds in one buffer, at consecutive
// 8-byte-aligned places as in the kernel's .rodata (5.10 and 6.1.0):
//   kallsyms_offsets (s32[N]) or kallsyms_addresses (u64[N]),
//   kallsyms_relative_base (u64, base-relative only), kallsyms_num_syms (u32),
//   kallsyms_names, kallsyms_markers, kallsyms_token_table,
//   kallsyms_token_index (u16[256], the last bytes of the buffer);
// or in the later layouts the flags below choose (see kallsyms_scan.c).
// Names are compressed like the kernel's: the type letter and the name form
// one string; byte codes no symbol uses become tokens standing for the most
// frequent adjacent token pairs (recursively, so tokens can be long). Records
// of more than 127 tokens get the 6.1 two-byte length.
//
// Symbols are sorted by address (stable), as nm -n feeds scripts/kallsyms.
// By default the offsets are CONFIG_KALLSYMS_ABSOLUTE_PERCPU-style (x86-64
// SMP): a symbol below 4 GiB is a per-CPU one stored as its absolute value,
// the others as relative_base - 1 - offset, relative_base being the lowest
// non-per-CPU address.
//
// Typical use:
//   struct kp_mkkallsyms k;
//   kp_mkkallsyms_build(syms, n, 0xffffffff82000000, 0, &k);
//   kp_memory_add(mem, KP_VIRT, k.base, k.size, kp_read_buffer, k.buf, 0);
//   kp_kallsyms_read_memory(mem, &k.tables, st);
//   kp_mkkallsyms_deinit(&k);
#ifndef KP_MKKALLSYMS_H
#define KP_MKKALLSYMS_H

#include <kpeek/kpeek.h>
#include "symbols/kallsyms.h"

struct kp_mkkallsyms_sym {
	const char *name;
	char type;		// nm letter
	uint64_t address;
};

enum {
	// kallsyms_addresses instead of offsets (CONFIG_KALLSYMS_BASE_RELATIVE=n)
	KP_MKKALLSYMS_ABSOLUTE = 1 << 0,
	// unsigned offsets from the lowest address (ABSOLUTE_PERCPU=n)
	KP_MKKALLSYMS_NO_PERCPU = 1 << 1,
	// at most 32 multi-character tokens (faster to build for big tables)
	KP_MKKALLSYMS_FEW_TOKENS = 1 << 2,
	// no multi-character tokens: a record has one token per character
	KP_MKKALLSYMS_NO_COMPRESSION = 1 << 3,
	// kallsyms_seqs_of_names between markers and token table (6.1 stable)
	KP_MKKALLSYMS_SEQS = 1 << 4,
	// offsets and relative_base after the token index, then
	// kallsyms_seqs_of_names (6.12)
	KP_MKKALLSYMS_TABLES_LAST = 1 << 5,
	// as TABLES_LAST, offsets relative to each entry, no relative_base,
	// labels 4-aligned (7.2)
	KP_MKKALLSYMS_PC_RELATIVE = 1 << 6,
};

struct kp_mkkallsyms {
	uint8_t *buf;		// owned; the tables, virtual [base, base + size)
	size_t size;
	uint64_t base;
	struct kp_kallsyms_tables tables;
	uint64_t markers;	// kallsyms_markers
	uint64_t seqs;		// kallsyms_seqs_of_names, 0 if none
	uint64_t relative_base;	// value stored (0 with KP_MKKALLSYMS_ABSOLUTE)
	size_t names_size;	// bytes of kallsyms_names
	unsigned ntokens;	// multi-character tokens in the token table
	unsigned long_records;	// records with a two-byte length
};

// Fails with KP_ERR_INVALID for an empty name, a name of more than 511
// characters, or an address that the chosen encoding cannot represent.
struct kp_error *kp_mkkallsyms_build(const struct kp_mkkallsyms_sym *syms, size_t n,
				     uint64_t base, unsigned flags,
				     struct kp_mkkallsyms *ret);
void kp_mkkallsyms_deinit(struct kp_mkkallsyms *k);

// Offset in buf of a virtual address inside it (for tests that corrupt tables).
static inline size_t kp_mkkallsyms_off(const struct kp_mkkallsyms *k, uint64_t vaddr)
{
	return (size_t)(vaddr - k->base);
}

#endif
