// SPDX-License-Identifier: MIT
// The kernel's table of taint letters (kernel/panic.c taint_flags[],
// TAINT_FLAGS_COUNT entries of struct taint_flag {c_true, c_false, module,
// ...}, entry i for bit i of a taint mask): read once for /proc/modules'
// letters (modules.c) and print_tainted()'s (panic.c).
#include <inttypes.h>

#include "linux/linux.h"
#include "util/error.h"

// TAINT_FLAGS_COUNT is a #define in every kernel of 5.10..7.2, so BTF never
// has it; where a kernel's BTF does name it (an enum), it is used as is.
// Otherwise the table is read entry by entry while the entries look like
// taint_flags[]'s: c_true an upper-case letter, c_false printable, module 0
// or 1. Bounded by the symbol's extent (kallsyms: up to the next symbol) and
// by KP_LX_MAX_TAINTS. On 6.1 that is 19 entries, 'P' to 'N', then padding.
static bool entry_ok(const uint8_t *e, uint64_t c_true, uint64_t c_false, uint64_t module)
{
	return e[c_true] >= 'A' && e[c_true] <= 'Z' && e[c_false] >= 0x20 && e[c_false] < 0x7f &&
	       e[module] <= 1;
}

struct kp_error *kp_lx_taint_table(struct kp_kernel *k, struct kp_lx_taint_table *ret)
{
	static const char tf[] = "struct taint_flag";
	struct kp_value *v = NULL;
	int64_t count = 0;
	uint64_t size, c_true, c_false, module;
	struct kp_symbol sym;
	if (!kp_symbol_find(k, "taint_flags", &sym) ||
	    !kp_lx_has_member(k, tf, "c_true", &c_true, NULL) ||
	    !kp_lx_has_member(k, tf, "c_false", &c_false, NULL) ||
	    !kp_lx_has_member(k, tf, "module", &module, NULL) ||
	    !kp_ok(kp_type_size(k, tf, &size)) || size == 0 || size > 64)
		return kp_error_create(KP_ERR_NOT_FOUND, "no taint_flags table");
	struct kp_error *err = kp_eval(k, "TAINT_FLAGS_COUNT", &v);
	if (!err)
		err = kp_value_to_s64(v, &count);
	kp_value_destroy(v);
	bool exact = !err && count > 0 && count <= KP_LX_MAX_TAINTS;
	kp_error_destroy(err);
	if (!exact) {
		count = KP_LX_MAX_TAINTS;
		if (sym.size && sym.size / size < (uint64_t)count)
			count = (int64_t)(sym.size / size);
	}
	struct kp_lx_taint_table t = { .count = 0 };
	for (unsigned i = 0; i < (unsigned)count; i++) {
		uint8_t e[64];
		err = kp_read(k, KP_VIRT, sym.address + i * size, e, size);
		if (err)
			return kp_error_prefix(err, "taint_flags unreadable");
		if (!exact && !entry_ok(e, c_true, c_false, module))
			break;
		t.c_true[i] = (char)e[c_true];
		t.c_false[i] = (char)e[c_false];
		t.module[i] = e[module] != 0;
		t.count++;
	}
	if (!t.count)
		return kp_error_create(KP_ERR_NOT_FOUND, "no taint_flags table (no entry at 0x%" PRIx64 ")",
				       sym.address);
	*ret = t;
	return NULL;
}
