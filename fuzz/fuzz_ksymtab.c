// SPDX-License-Identifier: MIT
// The kernel's tables of exported symbols found in rodata (core/ksymtab.c),
// the addresses arm64 and x86-64 code forms (kp_arch.data_refs), the
// banner scan (core/derive.c) and arm64's _text below _stext. The input is
// the rodata at FUZZ_KSYMTAB_RODATA, also decoded as code; kallsyms names
// FUZZ_KSYMTAB_FUNCS functions k00_fn, k02_fn, ... at FUZZ_KSYMTAB_TEXT +
// 0x100 * N, the layout tests/unit/test_derive.c builds its tables for.
#include <stdio.h>
#include <string.h>

#include "fuzz.h"
#include "formats.h"
#include "arch/arm64/arm64.h"
#include "arch/x86_64/x86_64.h"
#include "core/derive.h"
#include "core/ksymtab.h"
#include "symbols/symtab.h"

static void ignore(uint64_t target, void *arg)
{
	(void)target;
	(void)arg;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!size || size > FUZZ_KSYMTAB_MAX)
		return 0;
	kp_arm64_data_refs(data, size, FUZZ_KSYMTAB_RODATA, false, ignore, NULL);
	kp_arm64_data_refs(data, size, FUZZ_KSYMTAB_RODATA, true, ignore, NULL);
	kp_x86_data_refs(data, size, FUZZ_KSYMTAB_RODATA, false, ignore, NULL);
	kp_x86_data_refs(data, size, FUZZ_KSYMTAB_RODATA, true, ignore, NULL);
	struct kp_memory *mem;
	struct kp_symtab *st;
	if (kp_memory_create(&mem))
		return 0;
	if (kp_symtab_create(&st)) {
		kp_memory_destroy(mem);
		return 0;
	}
	static const struct { const char *name; uint64_t a; } marks[] = {
		{ "_stext", FUZZ_KSYMTAB_TEXT }, { "_etext", FUZZ_KSYMTAB_TEXT + 0x10000 },
		{ "__bss_start", FUZZ_KSYMTAB_RODATA + 0x200000 },
		{ "__bss_stop", FUZZ_KSYMTAB_RODATA + 0x201000 },
	};
	bool ok = !kp_memory_add(mem, KP_VIRT, FUZZ_KSYMTAB_RODATA, size, kp_read_buffer, (void *)data, 0);
	for (size_t i = 0; ok && i < sizeof(marks) / sizeof(marks[0]); i++)
		ok = fuzz_ok(kp_symtab_add(st, marks[i].name, strlen(marks[i].name), marks[i].a, 'T', NULL));
	char name[16];
	for (unsigned i = 0; ok && i < FUZZ_KSYMTAB_FUNCS; i += 2) {
		snprintf(name, sizeof(name), "k%02u_fn", i);
		ok = fuzz_ok(kp_symtab_add(st, name, strlen(name), FUZZ_KSYMTAB_TEXT + 0x100 * i, 'T', NULL));
	}
	unsigned added;
	// The banner scan over the same bytes (core/derive.c).
	uint64_t text;
	if (ok) {
		(void)kp_derive_banner(mem, "6.1.0-9-arm64", "#1 SMP", FUZZ_KSYMTAB_RODATA,
				       FUZZ_KSYMTAB_RODATA + size);
		(void)kp_arm64_text_start(mem, FUZZ_KSYMTAB_RODATA + size, &text);
	}
	if (ok && fuzz_ok(kp_symtab_finalize(st)))
		fuzz_drop(kp_ksymtab_add_variables(mem, FUZZ_KSYMTAB_TEXT, FUZZ_KSYMTAB_RODATA + size, st,
						   &added));
	kp_symtab_destroy(st);
	kp_memory_destroy(mem);
	return 0;
}
