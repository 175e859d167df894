// SPDX-License-Identifier: MIT
// Symbol sources in kallsyms form: /proc/kallsyms and System.map text, and the
// kernel's own compressed in-memory tables.
#ifndef KP_KALLSYMS_H
#define KP_KALLSYMS_H

#include <kpeek/kpeek.h>
#include "io/memory.h"
#include "symbols/symtab.h"

// KSYM_NAME_LEN is 512 since 6.1 (128 before); allow more, bound the rest
// (in kallsyms text and in the in-memory tables alike).
#define KP_KALLSYMS_MAX_NAME 1024

// Parses "ADDR TYPE NAME [MODULE]" lines, adding bias to every address (the
// KASLR offset for System.map; 0 for /proc/kallsyms). 'what' names the input in
// errors. Detects Debian's System.map stub and all-zero (kptr_restrict) kallsyms.
// A NUL byte, a line of another form, or (sorted: a System.map) an address
// below the line before is an error naming the line; st is then unchanged.
struct kp_error *kp_kallsyms_parse_text(const char *text, size_t len, uint64_t bias,
					const char *what, bool sorted, struct kp_symtab *st);
// The address the text gives a core kernel symbol, moved by bias as
// kp_kallsyms_parse_text() moves it; false if no well-formed line names it.
bool kp_kallsyms_text_find(const char *text, size_t len, uint64_t bias, const char *name,
			   uint64_t *ret);

// Virtual addresses of the kernel's kallsyms tables (from VMCOREINFO or a
// scan of the image). Addresses are encoded one of three ways (kallsyms.c):
// offsets + relative_base, offsets alone (PC-relative), or addresses.
struct kp_kallsyms_tables {
	uint64_t num_syms;	// &kallsyms_num_syms
	uint64_t names;		// kallsyms_names
	uint64_t token_table;
	uint64_t token_index;
	uint64_t offsets;	// kallsyms_offsets, 0 for absolute tables
	uint64_t relative_base;	// &kallsyms_relative_base, 0 if PC-relative
	uint64_t addresses;	// kallsyms_addresses (absolute tables), else 0
};

// Whether kallsyms_offsets[i] is relative to its own address (no
// kallsyms_relative_base; 7.x kernels).
static inline bool kp_kallsyms_pc_relative(const struct kp_kallsyms_tables *t)
{
	return t->offsets && !t->relative_base;
}

// The tables' addresses as VMCOREINFO names them (SYMBOL(kallsyms_names)
// etc., written since 6.0); false if it does not name all of them.
struct kp_vmcoreinfo;
bool kp_kallsyms_tables_from_vmcoreinfo(const struct kp_vmcoreinfo *vi,
					struct kp_kallsyms_tables *ret);

// Decodes the in-memory tables read through mem's virtual space into st.
struct kp_error *kp_kallsyms_read_memory(struct kp_memory *mem,
					 const struct kp_kallsyms_tables *t,
					 struct kp_symtab *st);

// Adds the in-memory tables to st: as a source looked up lazily
// (kallsyms_index.c) when st is empty and the tables are in address order,
// as every kernel's are; else decoded whole, as kp_kallsyms_read_memory.
// Corrupt tables are refused either way, with the same errors.
struct kp_error *kp_kallsyms_attach(struct kp_memory *mem, const struct kp_kallsyms_tables *t,
				    struct kp_symtab *st);

// A finalized symbol table of one source: a kallsyms/System.map file (bias
// added as for kp_kallsyms_parse_text), or the in-memory tables.
struct kp_error *kp_symtab_from_file(const char *path, uint64_t bias, struct kp_symtab **ret);
struct kp_error *kp_symtab_from_tables(struct kp_memory *mem, const struct kp_kallsyms_tables *t,
				       struct kp_symtab **ret);

#endif
