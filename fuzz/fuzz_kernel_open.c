// The whole open path on an arbitrary file: format probe, ELF or kdump
// parsing, notes, VMCOREINFO (or the scan for it), page tables, in-memory
// kallsyms; then what the commands do first: BTF from memory, the task list,
// modules, the log, the load average, symbolization and translation.
#include <stdlib.h>

#include "fuzz.h"

static struct kp_error *count_record(const struct kp_printk_record *rec, void *arg)
{
	size_t *n = arg;
	return ++*n > 4096 ? kp_error_create(KP_ERR_INTERRUPTED, "enough") : NULL;
}

static struct kp_error *count_syscall(const struct kp_syscall_entry *e, void *arg)
{
	size_t *n = arg;
	return ++*n > 4096 ? kp_error_create(KP_ERR_INTERRUPTED, "enough") : NULL;
}

static void exercise(struct kp_kernel *k)
{
	struct kp_kernel_info info;
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
		struct kp_vtop vt;
		fuzz_drop(kp_vtop(k, sym.address, &vt));
	}
	fuzz_drop(kp_read_cstr(k, info.has_page_offset_base ? info.page_offset_base : 0,
			       buf, sizeof(buf)));
	struct kp_error *err = kp_kernel_load_btf(k);
	if (!err) {
		struct kp_task *tasks;
		size_t ntasks;
		if (fuzz_ok(kp_tasks(k, true, &tasks, &ntasks)))
			free(tasks);
		struct kp_module *mods;
		size_t nmods;
		if (fuzz_ok(kp_modules(k, &mods, &nmods)))
			free(mods);
		struct kp_loadavg la;
		fuzz_drop(kp_loadavg(k, &la));
		size_t count = 0;
		fuzz_drop(kp_printk_each(k, count_record, &count));
		count = 0;
		fuzz_drop(kp_check_syscalls(k, count_syscall, &count));
	}
	kp_error_destroy(err);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[64];
	int fd = fuzz_memfd(data, size, path);
	if (fd < 0)
		return 0;
	struct kp_open_options opts = { .core = path };
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
