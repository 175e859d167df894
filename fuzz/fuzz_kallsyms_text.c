// SPDX-License-Identifier: MIT
// /proc/kallsyms and System.map text, then lookups in the merged table.
#include "fuzz.h"
#include "symbols/kallsyms.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct kp_symtab *st;
	if (kp_symtab_create(&st))
		return 0;
	struct kp_error *err = kp_kallsyms_parse_text((const char *)data, size, 0x1000,
						      "fuzz", size & 1, st);
	if (!err) {
		struct kp_symbol sym;
		kp_error_destroy(kp_symtab_by_name(st, "init_task", &sym));
		kp_error_destroy(kp_symtab_by_address(st, 0xffffffff81000000ULL, &sym));
	}
	kp_error_destroy(err);
	kp_symtab_destroy(st);
	return 0;
}
