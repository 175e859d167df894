// SPDX-License-Identifier: MIT
// The kernel's table of taint letters (kernel/panic.c taint_flags[],
// TAINT_FLAGS_COUNT entries of struct taint_flag, entry i for bit i of a
// taint mask): read once for /proc/modules' letters (modules.c) and
// print_tainted()'s (panic.c). struct taint_flag is {c_true, c_false, bool
// module} up to 6.x; 7.x has {c_true, c_false, const char *desc} and no
// module flag: module_flags_taint() then shows every bit a module's taints
// hold (only module taints are ever set there).
#include <inttypes.h>

#include "core/layout.h"
#include "linux/panic/panic.h"
#include "util/error.h"

enum { TF_C_TRUE, TF_C_FALSE, TF_MODULE, TF_N };
static const struct kp_member_spec taint_members[TF_N] = {
	[TF_C_TRUE] = { .name = "c_true" },
	[TF_C_FALSE] = { .name = "c_false" },
	[TF_MODULE] = { .name = "module", .flags = KP_MEMBER_OPTIONAL },	// up to 6.x
};
static const struct kp_struct_spec taint_spec = KP_STRUCT_SPEC_OPTIONAL("struct taint_flag", taint_members);

// TAINT_FLAGS_COUNT is a #define in every kernel of 5.10..7.2, so BTF never
// has it; where a kernel's BTF does name it (an enum), it is used as is.
// Otherwise the table is read entry by entry while the entries look like
// taint_flags[]'s: c_true an upper-case letter, c_false printable, module
// (where there is one) 0 or 1. Bounded by the symbol's extent (kallsyms: up
// to the next symbol) and by KP_LX_MAX_TAINTS. On 6.1 that is 19 entries,
// 'P' to 'N', then padding.
static bool entry_ok(const struct kp_struct_layout *l, const uint8_t *e)
{
	uint64_t t = kp_layout_u64(l, e, TF_C_TRUE), f = kp_layout_u64(l, e, TF_C_FALSE);
	return t >= 'A' && t <= 'Z' && f >= 0x20 && f < 0x7f &&
	       (!kp_layout_has(l, TF_MODULE) || kp_layout_u64(l, e, TF_MODULE) <= 1);
}


struct kp_error *kp_lx_taint_table(struct kp_kernel *k, struct kp_lx_taint_table *ret)
{
	const struct kp_struct_layout *l;
	uint64_t value;
	struct kp_symbol sym;
	struct kp_error *err = kp_kernel_layout(k, &taint_spec, &l);
	if (err || !l->present || !kp_symbol_find(k, "taint_flags", &sym) || l->size == 0 || l->size > 64) {
		kp_error_destroy(err);
		return kp_error_create(KP_ERR_NOT_FOUND, "no taint_flags table");
	}
	// The entries are read whole: the span is the entry.
	uint64_t size = l->size;
	if (l->lo != 0 || l->hi > size)
		return kp_error_create(KP_ERR_UNSUPPORTED, "struct taint_flag of this kernel (%" PRIu64 " bytes)", size);
	int64_t count = kp_kernel_enum_value(k, "TAINT_FLAGS_COUNT", &value) ? (int64_t)value : 0;
	bool exact = count > 0 && count <= KP_LX_MAX_TAINTS;
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
		if (!exact && !entry_ok(l, e))
			break;
		t.c_true[i] = (char)kp_layout_u64(l, e, TF_C_TRUE);
		t.c_false[i] = (char)kp_layout_u64(l, e, TF_C_FALSE);
		t.module[i] = !kp_layout_has(l, TF_MODULE) || kp_layout_u64(l, e, TF_MODULE) != 0;
		t.count++;
	}
	if (!t.count)
		return kp_error_create(KP_ERR_NOT_FOUND, "no taint_flags table (no entry at 0x%" PRIx64 ")",
				       sym.address);
	*ret = t;
	return NULL;
}
