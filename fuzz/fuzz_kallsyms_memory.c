// SPDX-License-Identifier: MIT
// The kernel's compressed in-memory kallsyms tables. The input is a
// struct fuzz_kallsyms_hdr (formats.h) choosing where each table starts, then
// the bytes of memory at a fixed virtual address.
#include <string.h>

#include "fuzz.h"
#include "formats.h"
#include "symbols/kallsyms.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_kallsyms_hdr h;
	if (size <= sizeof(h))
		return 0;
	memcpy(&h, data, sizeof(h));
	data += sizeof(h);
	size -= sizeof(h);
	struct kp_memory *mem;
	struct kp_symtab *st;
	if (kp_memory_create(&mem))
		return 0;
	if (kp_symtab_create(&st)) {
		kp_memory_destroy(mem);
		return 0;
	}
	const uint64_t base = FUZZ_KALLSYMS_BASE;
	struct kp_error *err = kp_memory_add(mem, KP_VIRT, base, size, kp_read_buffer,
					     (void *)data, 0);
	if (!err) {
		struct kp_kallsyms_tables t = {
			.num_syms = base + h.num_syms % size,
			.names = base + h.names % size,
			.token_table = base + h.token_table % size,
			.token_index = base + h.token_index % size,
		};
		if (h.flags & FUZZ_KALLSYMS_ABSOLUTE) {
			t.addresses = base + h.addresses % size;
		} else {
			t.offsets = base + h.offsets % size;
			t.relative_base = base + h.relative_base % size;
		}
		err = kp_kallsyms_read_memory(mem, &t, st);
		// The name index (kallsyms_index.c) over the same bytes.
		struct kp_symtab *lazy;
		if (!kp_symtab_create(&lazy)) {
			struct kp_symbol sym;
			if (fuzz_ok(kp_kallsyms_attach(mem, &t, lazy))) {
				kp_symtab_find(lazy, "_text", &sym);
				kp_symtab_find(lazy, "_end", &sym);
				fuzz_drop(kp_symtab_by_address(lazy, 0xffffffff81000100ULL, &sym));
				// Its lookups without loading: aliases, the count,
				// a walk, an unknown name's suggestions.
				kp_symtab_alias(lazy, 0xffffffff81000100ULL, 0, &sym);
				kp_symtab_count(lazy);
				struct kp_symtab_pos pos = { 0 };
				for (size_t i = 0; i < 16 && !kp_symtab_next(lazy, &pos, &sym); i++)
					;
				fuzz_drop(kp_symtab_by_name(lazy, "no_such_symbol", &sym));
			}
			kp_symtab_destroy(lazy);
		}
	}
	if (!err) {
		struct kp_symbol sym;
		fuzz_drop(kp_symtab_by_name(st, "_text", &sym));
		fuzz_drop(kp_symtab_by_address(st, 0xffffffff81000100ULL, &sym));
		struct kp_symtab_pos pos = { 0 };
		for (size_t i = 0; i < 16 && !kp_symtab_next(st, &pos, &sym); i++)
			;
	}
	kp_error_destroy(err);
	kp_symtab_destroy(st);
	kp_memory_destroy(mem);
	return 0;
}
