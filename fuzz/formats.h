// SPDX-License-Identifier: MIT
// Input layouts of the harnesses that take more than one raw buffer, shared
// with the seed generator (tests/tools/mkseeds.c). Little-endian, packed.
#ifndef KP_FUZZ_FORMATS_H
#define KP_FUZZ_FORMATS_H

#include <stdint.h>

// fuzz_kallsyms_memory: this header, then the bytes of virtual memory at
// FUZZ_KALLSYMS_BASE. Each offset is taken modulo the memory size.
#define FUZZ_KALLSYMS_BASE 0xffffffff82000000ULL
enum { FUZZ_KALLSYMS_ABSOLUTE = 1 };	// flags: kallsyms_addresses, no offsets
struct __attribute__((packed)) fuzz_kallsyms_hdr {
	uint8_t flags;
	uint32_t num_syms, names, token_table, token_index, offsets, relative_base,
		addresses;
};

// fuzz_pgtable: this header, then physical memory from address 0.
struct __attribute__((packed)) fuzz_pgtable_hdr {
	uint8_t five_level;	// bit 0
	uint64_t vaddr;		// first address translated
	uint32_t root;		// top-level table (low 12 bits ignored)
};

// fuzz_expr: the expression text, then (after a NUL, optional) bytes that
// overwrite the synthetic kernel's data page (fuzz/synthkernel.h, SK_DATA).

// fuzz_unwind: this header, then a memory image at MKSTACK_BASE
// (tests/gen/mkstack.h) that replaces the start of the generated scene.
struct __attribute__((packed)) fuzz_unwind_hdr {
	uint8_t arch;		// bit 0: arm64 (frame records), else x86-64 (ORC)
	uint8_t version;	// x86-64: ORC format 1-4 by release (0: by header)
	uint8_t va_bits;	// arm64
	uint8_t pad;
	uint64_t task;		// the task to unwind
};

// fuzz_ksymtab: the input is rodata right after the text's end; kallsyms
// names FUZZ_KSYMTAB_FUNCS / 2 functions kNN_fn (N even) at
// FUZZ_KSYMTAB_TEXT + 0x100 * N.
#define FUZZ_KSYMTAB_TEXT 0xffffffff81000000ULL
#define FUZZ_KSYMTAB_RODATA (FUZZ_KSYMTAB_TEXT + 0x10000)
#define FUZZ_KSYMTAB_FUNCS 24
#define FUZZ_KSYMTAB_MAX (1u << 20)

#endif
