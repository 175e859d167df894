// SPDX-License-Identifier: MIT
// Reading the kernel's compressed kallsyms tables out of memory, record by
// record (kallsyms_memory.c): the one decoder behind the full table
// (kp_kallsyms_read_memory) and the name index (kallsyms_index.c).
#ifndef KP_SYMBOLS_KALLSYMS_MEMORY_H
#define KP_SYMBOLS_KALLSYMS_MEMORY_H

#include "symbols/kallsyms.h"

// kallsyms_num_syms above this is corrupt (Debian's kernels have ~150k).
#define KP_KALLSYMS_MAX_SYMS 4000000u

struct kp_kallsyms_reader {
	struct kp_memory *mem;
	struct kp_kallsyms_tables t;
	uint32_t n;		// kallsyms_num_syms
	int encoding;		// how addresses are stored (kallsyms_memory.c)
	uint64_t base;		// kallsyms_relative_base where there is one
	char *tokens;		// kallsyms_token_table
	uint16_t index[256];
	uint16_t toklen[256];
	uint64_t limit;		// bytes of kallsyms_names that may be read
	uint8_t *buf;		// a window of kallsyms_names
	uint64_t buf_pos;	// table offset of buf[0]
	size_t buf_len;
	// Bytes a refill reads: large for a pass over every record (the
	// default), small for lookups of single records, which would
	// otherwise read (and on kdump files decompress) 256 KiB each.
	size_t window;
};

// Reads kallsyms_num_syms, the token table and how addresses are encoded.
struct kp_error *kp_kallsyms_reader_open(struct kp_memory *mem,
					 const struct kp_kallsyms_tables *t,
					 struct kp_kallsyms_reader *ret);
void kp_kallsyms_reader_close(struct kp_kallsyms_reader *r);

// The tokens of record i, which starts at offset *pos of kallsyms_names:
// *tok (valid until the next call) and *ntok (at least 1); *pos moves to
// the next record. Checks the record's framing only.
struct kp_error *kp_kallsyms_reader_tokens(struct kp_kallsyms_reader *r, uint32_t i,
					   uint64_t *pos, const uint8_t **tok, size_t *ntok);

// Decodes record i, which starts at offset *pos of kallsyms_names, into
// name: the type letter, then the symbol name, *len characters in all, no
// NUL (at least 2, printable ASCII). *pos moves to the next record.
struct kp_error *kp_kallsyms_reader_record(struct kp_kallsyms_reader *r, uint32_t i,
					   uint64_t *pos,
					   char name[KP_KALLSYMS_MAX_NAME + 2], size_t *len);

// Addresses of symbols [first, first + count) into ret.
struct kp_error *kp_kallsyms_reader_addresses(struct kp_kallsyms_reader *r, uint32_t first,
					      uint32_t count, uint64_t *ret);

#endif
