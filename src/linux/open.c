// SPDX-License-Identifier: MIT
// kp_kernel_open: the core's handle (core/kernel.c) plus what only this
// layer knows how to read, offered to the core for when a lookup needs it:
// the symbols of loaded modules (module_symbols.c) and their BTF
// (module_btf.c).
#include "core/kernel.h"
#include "linux/module/module.h"

struct kp_error *kp_kernel_open(const struct kp_open_options *opts, struct kp_kernel **ret)
{
	struct kp_kernel *k;
	struct kp_error *err = kp_kernel_open_core(opts, &k);
	if (err)
		return err;
	kp_kernel_set_late_symbols(k, kp_lx_module_symbols, "module symbols (memory)");
	kp_kernel_set_late_types(k, kp_lx_module_btf);
	*ret = k;
	return NULL;
}
