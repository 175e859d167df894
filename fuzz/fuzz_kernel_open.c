// SPDX-License-Identifier: MIT
// The whole open path on an arbitrary file: format probe, ELF or kdump
// parsing, notes, architecture detection, VMCOREINFO (or the scan for it),
// page tables, in-memory kallsyms; then what the commands do first: BTF from
// memory, the task list, modules, the log, the load average, the syscall
// check and the other integrity checks, symbolization and translation. Only the public API is used.
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"

// Walks an iterator to its end, or to 4096 items (each walker is bounded
// on its own; this keeps one input quick).
#define DRAIN(iter, create, next, destroy, type)                               \
	do {                                                                   \
		struct iter *it_;                                              \
		if (fuzz_ok(create)) {                                         \
			const struct type *x_;                                 \
			for (int i_ = 0; i_ < 4096 && fuzz_ok(next(it_, &x_)) && x_; i_++) \
				;                                              \
			destroy(it_);                                          \
		}                                                              \
	} while (0)

static void exercise(struct kp_kernel *k)
{
	KP_INIT(kp_kernel_info, info);
	kp_kernel_get_info(k, &info);
	uint64_t v;
	fuzz_drop(kp_read_u64(k, 0xffffffff81000000ULL, &v));
	const struct kp_range *r;
	size_t n = kp_kernel_ranges(k, KP_VIRT, &r);
	for (size_t i = 0; i < n && i < 8; i++) {
		fuzz_drop(kp_read_u64(k, r[i].start, &v));
		fuzz_drop(kp_read_u64(k, r[i].end - 4, &v));
	}
	char buf[128];
	struct kp_symbol sym;
	if (fuzz_ok(kp_symbol_by_name(k, "_text", &sym))) {
		kp_symbolize(k, sym.address + 0x10, buf, sizeof(buf));
		KP_INIT(kp_vtop, vt);
		fuzz_drop(kp_vtop(k, sym.address, &vt));
	}
	struct kp_fact f;
	uint64_t direct = 0;
	for (size_t i = 0; kp_kernel_arch_fact(k, i, &f); i++)
		if (f.known && f.kind == KP_FACT_HEX && strstr(f.key, "page_offset"))
			direct = f.value;
	fuzz_drop(kp_read_cstr(k, direct, buf, sizeof(buf)));
	struct kp_error *err = kp_kernel_load_btf(k);
	if (!err) {
		DRAIN(kp_task_iter, kp_task_iter_create(k, KP_TASKS_THREADS, &it_), kp_task_iter_next,
		      kp_task_iter_destroy, kp_task);
		DRAIN(kp_module_iter, kp_module_iter_create(k, &it_), kp_module_iter_next,
		      kp_module_iter_destroy, kp_module);
		KP_INIT(kp_loadavg, la);
		fuzz_drop(kp_loadavg(k, &la));
		DRAIN(kp_printk_iter, kp_printk_iter_create(k, &it_), kp_printk_iter_next,
		      kp_printk_iter_destroy, kp_printk_record);
		DRAIN(kp_syscall_iter, kp_syscall_iter_create(k, &it_), kp_syscall_iter_next,
		      kp_syscall_iter_destroy, kp_syscall_entry);
		KP_INIT(kp_panic, p);
		fuzz_drop(kp_panic_get(k, &p));
		KP_INIT(kp_signature, sig);
		fuzz_drop(kp_signature_get(k, &p, &sig));
		struct kp_stack *st;
		if (fuzz_ok(kp_stack_cpu_create(k, 0, &st)))
			kp_stack_destroy(st);
		for (const char *const *name = kp_check_names(); *name; name++) {
			struct kp_check *c;
			if (fuzz_ok(kp_check_run(k, *name, KP_CHECK_ALL, &c)))
				kp_check_destroy(c);
		}
	}
	kp_error_destroy(err);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[64];
	int fd = fuzz_memfd(data, size, path);
	if (fd < 0)
		return 0;
	KP_OPTS(kp_open_options, opts, .core = path);
	struct kp_kernel *k;
	struct kp_error *err = kp_kernel_open(&opts, &k);
	if (!err) {
		exercise(k);
		kp_kernel_destroy(k);
	}
	kp_error_destroy(err);
	close(fd);
	return 0;
}
