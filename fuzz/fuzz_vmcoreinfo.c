// SPDX-License-Identifier: MIT
// VMCOREINFO text.
#include "fuzz.h"
#include "format/vmcoreinfo.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct kp_vmcoreinfo *vi;
	struct kp_error *err = kp_vmcoreinfo_parse((const char *)data, size, &vi);
	if (!err) {
		uint64_t u;
		int64_t s;
		kp_vmcoreinfo_symbol(vi, "init_task", &u);
		kp_vmcoreinfo_number(vi, "phys_base", &s);
		kp_vmcoreinfo_offset(vi, "printk_info", "seq", &u);
		kp_vmcoreinfo_kerneloffset(vi, &u);
		const char *key, *value;
		for (size_t i = 0; kp_vmcoreinfo_entry(vi, i, &key, &value); i++)
			;
		kp_vmcoreinfo_destroy(vi);
	}
	kp_error_destroy(err);
	return 0;
}
