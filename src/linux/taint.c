// SPDX-License-Identifier: MIT
// The kernel's table of taint letters (kernel/panic.c taint_flags[],
// TAINT_FLAGS_COUNT entries of struct taint_flag {c_true, c_false, module,
// ...}, entry i for bit i of a taint mask): read once for /proc/modules'
// letters (modules.c) and print_tainted()'s (panic.c).
#include "linux/linux.h"
#include "util/error.h"

struct kp_error *kp_lx_taint_table(struct kp_kernel *k, struct kp_lx_taint_table *ret)
{
	static const char tf[] = "struct taint_flag";
	struct kp_value *v = NULL;
	int64_t count = 0;
	uint64_t size, c_true, c_false, module;
	struct kp_symbol sym;
	struct kp_error *err = kp_eval(k, "TAINT_FLAGS_COUNT", &v);
	if (!err)
		err = kp_value_to_s64(v, &count);
	kp_value_destroy(v);
	if (err || count <= 0 || count > KP_LX_MAX_TAINTS || !kp_symbol_find(k, "taint_flags", &sym) ||
	    !kp_lx_has_member(k, tf, "c_true", &c_true, NULL) ||
	    !kp_lx_has_member(k, tf, "c_false", &c_false, NULL) ||
	    !kp_lx_has_member(k, tf, "module", &module, NULL) ||
	    !kp_ok(kp_type_size(k, tf, &size)) || size == 0 || size > 64) {
		kp_error_destroy(err);
		return kp_error_create(KP_ERR_NOT_FOUND, "no taint_flags table");
	}
	struct kp_lx_taint_table t = { .count = (unsigned)count };
	for (unsigned i = 0; i < t.count; i++) {
		uint8_t e[64];
		if ((err = kp_read(k, KP_VIRT, sym.address + i * size, e, size)))
			return kp_error_prefix(err, "taint_flags unreadable");
		t.c_true[i] = (char)e[c_true];
		t.c_false[i] = (char)e[c_false];
		t.module[i] = e[module] != 0;
	}
	*ret = t;
	return NULL;
}
