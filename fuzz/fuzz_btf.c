// SPDX-License-Identifier: MIT
// A raw BTF blob as the kernel's .BTF section: the input is placed in a
// synthetic dump's memory between __start_BTF and __stop_BTF, loaded through
// kp_kernel_types (validation, then libbpf), then every type helper, member and
// size lookups, expressions and the task walk run over whatever it describes.
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/btf.h>

#include <bpf/libbpf.h>

#include "fuzz.h"
#include "mkcore.h"
#include "mkkallsyms.h"
#include "mkkdump.h"
#include "mkpgtable.h"
#include "synthkernel.h"
#include "core/kernel.h"
#include "types/btf.h"
#include "types/types.h"

// The blob sits at SK_BTF; SK_DATA holds a plausible init_task.
static uint8_t data_page[4096];

// kpeek validates every blob before libbpf parses it, so libbpf must never
// have anything to say (it would print to the host program's stderr).
static int libbpf_said(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	fprintf(stderr, "libbpf printed (level %d): ", level);
	vfprintf(stderr, fmt, ap);
	abort();
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	libbpf_set_print(libbpf_said);
	// The data page of the synthetic kernel, init_task included.
	struct sk_opts o = { .format = SK_ELF, .ntasks = 0 };
	uint8_t *img;
	size_t len;
	sk_build(&o, &img, &len);
	static const char banner[] = "Linux version 6.1.0-synth";
	uint8_t *p = memmem(img, len, banner, sizeof(banner) - 1);
	if (!p || p + sizeof(data_page) > img + len)
		sk_die("no data page in the synthetic kernel");
	memcpy(data_page, p, sizeof(data_page));
	// init_task.tasks points at itself: a one-task list.
	sk_put64(data_page, SK_INIT_TASK - SK_DATA + SK_T_TASKS, SK_INIT_TASK + SK_T_TASKS);
	free(img);
	return 0;
}

static void types(struct kp_types *t, struct btf *btf)
{
	uint32_t n = btf__type_cnt(btf);
	for (uint32_t id = 0; id < n && id < 512; id++) {
		char *name = NULL;
		if (fuzz_ok(kp_btf_type_name(btf, id, &name)))
			free(name);
		if (fuzz_ok(kp_btf_decl_name(btf, id, "x", &name)))
			free(name);
		kp_btf_size(btf, id);
		kp_btf_kind(btf, id);
		kp_btf_strip(btf, id);
		kp_btf_strip_cv(btf, id);
		kp_btf_is_signed(btf, id);
		kp_btf_is_scalar(btf, id);
		kp_btf_is_char(btf, id);
		kp_btf_is_bool(btf, id);
		int kind = kp_btf_kind(btf, id);
		if (kind == BTF_KIND_STRUCT || kind == BTF_KIND_UNION) {
			struct kp_btf_member m;
			const struct btf_type *t = btf__type_by_id(btf, kp_btf_strip(btf, id));
			if (t && btf_vlen(t)) {
				const char *mn = btf__name_by_offset(btf, btf_members(t)[0].name_off);
				if (mn && *mn)
					fuzz_drop(kp_btf_member(btf, id, mn, strlen(mn), &m));
			}
			fuzz_drop(kp_btf_member(btf, id, "next", 4, &m));
		}
	}
	uint32_t id;
	fuzz_drop(kp_types_find(t, BTF_KIND_STRUCT, "task_struct", &id));
	kp_btf_find_int(btf, "unsigned long", &id);
	bool percpu;
	kp_types_var(t, "init_task", &id, &percpu);
	uint32_t p;
	if (fuzz_ok(kp_types_pointer_to(t, 1, &p)))
		fuzz_drop(kp_types_array_of(t, p, 4, &p));
	fuzz_drop(kp_types_int_type(t, 8, false, &id));
}

static void exprs(struct kp_kernel *k)
{
	static const char *const list[] = {
		"init_task.comm", "init_task.tasks.next->next", "init_task.real_parent->pid",
		"jiffies", "avenrun[1]", "sizeof(struct task_struct)",
		"(struct task_struct *)init_task.tasks.next", "synth_parts", "synth_pidtype",
		"*(struct list_head *)&init_task",
	};
	for (size_t i = 0; i < sizeof(list) / sizeof(list[0]); i++) {
		struct kp_value *v;
		struct kp_error *err = kp_eval(k, list[i], &v);
		if (err) {
			kp_error_destroy(err);
			continue;
		}
		char *s;
		if (fuzz_ok(kp_value_format(v, 0, &s)))
			free(s);
		if (fuzz_ok(kp_value_format(v, KP_FORMAT_JSON | KP_FORMAT_HEX, &s)))
			free(s);
		if (fuzz_ok(kp_value_type_name(v, &s)))
			free(s);
		kp_value_destroy(v);
	}
	uint64_t off, size;
	fuzz_drop(kp_member_offset(k, "struct task_struct", "tasks", &off, &size));
	fuzz_drop(kp_member_offset(k, "struct task_struct", "comm[3]", &off, &size));
	fuzz_drop(kp_type_size(k, "struct list_head", &size));
	struct kp_task_iter *it;
	if (fuzz_ok(kp_task_iter_create(k, KP_TASKS_THREADS, &it))) {
		const struct kp_task *task;
		while (fuzz_ok(kp_task_iter_next(it, &task)) && task)
			;
		kp_task_iter_destroy(it);
	}
	KP_INIT(kp_loadavg, la);
	fuzz_drop(kp_loadavg(k, &la));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size == 0 || size > (1u << 20))
		return 0;
	char vmci[1024];
	snprintf(vmci, sizeof(vmci),
		 "OSRELEASE=6.1.0-synth\nSYMBOL(__start_BTF)=%" PRIx64 "\n"
		 "SYMBOL(__stop_BTF)=%" PRIx64 "\nSYMBOL(init_task)=%" PRIx64 "\n"
		 "SYMBOL(jiffies)=%" PRIx64 "\nSYMBOL(avenrun)=%" PRIx64 "\n"
		 "SYMBOL(synth_parts)=%" PRIx64 "\nSYMBOL(synth_pidtype)=%" PRIx64 "\n",
		 SK_BTF, SK_BTF + size, SK_INIT_TASK, SK_JIFFIES, SK_AVENRUN, SK_DATA + 0x160,
		 SK_DATA + 0x168);
	struct mkcore *mc = mkcore_create();
	mkcore_add_vmcoreinfo(mc, vmci);
	mkcore_add_load(mc, SK_DATA, UINT64_MAX, data_page, sizeof(data_page),
			sizeof(data_page));
	mkcore_add_load(mc, SK_BTF, UINT64_MAX, data, size, size);
	uint8_t *img;
	size_t len;
	mkcore_to_buffer(mc, 2u << 20, &img, &len);
	mkcore_destroy(mc);
	char path[64];
	int fd = fuzz_memfd(img, len, path);
	free(img);
	if (fd < 0)
		return 0;
	KP_OPTS(kp_open_options, opts, .core = path);
	struct kp_kernel *k;
	struct kp_error *err = kp_kernel_open(&opts, &k);
	if (!err) {
		struct kp_types *t;
		err = kp_kernel_types(k, &t);
		if (!err) {
			types(t, kp_types_btf(t));
			exprs(k);
			// The same bytes as a module's split BTF over the kernel's.
			size_t added = 0;
			fuzz_drop(kp_types_add_split(t, data, size, &added));
			types(t, kp_types_btf(t));
		}
		kp_kernel_destroy(k);
	}
	kp_error_destroy(err);
	close(fd);
	return 0;
}
