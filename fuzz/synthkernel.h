// A small synthetic x86-64 "kernel" for the fuzz seeds, the BTF/expression
// harnesses and the hostile-input unit tests: physical memory with 4-level page
// tables, the kernel's in-memory kallsyms tables, a .BTF blob between
// __start_BTF and __stop_BTF, VMCOREINFO (as a note and as the vmcoreinfo page
// in RAM), init_task and a task list that can be made to loop.
//
// Header-only (static inline) so that tests/tools/mkseeds.c, tests/unit and
// fuzz/ can share it without a library of their own. Needs tests/gen
// (mkcore, mkkdump, mkkallsyms, mkpgtable) and libbpf. Aborts on failure: this
// is test code.
//
// Physical layout (the kernel image is mapped 2 MiB at TEXT -> phys 0, the
// direct map 1 GiB at SK_DIRECT -> phys 0):
//   0x0000 text (int3)        0x1000 data: banner, avenrun, jiffies, init_task
//   0x2000 tasks (32 x 0x80)  0x3000 vmcoreinfo page ("OSRELEASE=...")
//   0x4000 kallsyms tables    0xc000 BTF        0x10000 page tables
#ifndef KP_SYNTHKERNEL_H
#define KP_SYNTHKERNEL_H

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/btf.h>
#include <linux/btf.h>

#include "../tests/gen/mkcore.h"
#include "../tests/gen/mkkallsyms.h"
#include "../tests/gen/mkkdump.h"
#include "../tests/gen/mkpgtable.h"

#define SK_KASLR UINT64_C(0x1e000000)
#define SK_TEXT (UINT64_C(0xffffffff81000000) + SK_KASLR)
#define SK_DIRECT UINT64_C(0xffff888000000000)
#define SK_PHYS_BASE (UINT64_C(0) - (SK_TEXT - UINT64_C(0xffffffff80000000)))
#define SK_DATA (SK_TEXT + 0x1000)
#define SK_BANNER (SK_DATA + 0x000)
#define SK_AVENRUN (SK_DATA + 0x100)
#define SK_JIFFIES (SK_DATA + 0x120)
#define SK_POB (SK_DATA + 0x128)
#define SK_PTRS (SK_DATA + 0x140)
#define SK_INIT_TASK (SK_DATA + 0x200)
#define SK_TASKS_PA UINT64_C(0x2000)
#define SK_MAX_TASKS 32
#define SK_VMCOREINFO_PA UINT64_C(0x3000)
#define SK_KALLSYMS (SK_TEXT + 0x4000)
#define SK_BTF (SK_TEXT + 0xc000)
#define SK_BTF_MAX 0x4000
#define SK_PGT (SK_TEXT + 0x10000)
#define SK_RAM UINT64_C(0x10000)

// struct task_struct of the synthetic BTF (kpeek takes every offset from BTF).
#define SK_T_STATE 0x00
#define SK_T_FLAGS 0x04
#define SK_T_EXIT_STATE 0x08
#define SK_T_TASKS 0x10
#define SK_T_PID 0x20
#define SK_T_TGID 0x24
#define SK_T_REAL_PARENT 0x28
#define SK_T_PARENT 0x30
#define SK_T_SIGNAL 0x38
#define SK_T_COMM 0x40
#define SK_T_THREAD_GROUP 0x50
#define SK_T_PRIO 0x60	// bitfields prio:7, policy:3
#define SK_T_SIZE 0x80

enum sk_format {
	SK_ELF,		// physical-only ELF core with a VMCOREINFO note
	SK_ELF_NO_NOTE,	// the same without the note (found by scanning RAM)
	SK_KDUMP,	// kdump-compressed (zlib)
	SK_KDUMP_FLAT,	// makedumpfile's flattened form of it
	SK_LIME,	// LiME version 1: two ranges
	SK_RAW,		// raw physical memory from 0 (kpeek --raw)
};

enum sk_loop {
	SK_LOOP_NONE,
	SK_LOOP_TASKS,		// the last task's tasks.next points back at task 1
	SK_LOOP_SELF,		// the last task's tasks.next points at itself
	SK_LOOP_THREADS,	// task 1's thread_group ring never returns to it
	SK_LOOP_NULL,		// the last task's tasks.next is NULL
};

struct sk_opts {
	enum sk_format format;
	unsigned ntasks;	// besides init_task, at most SK_MAX_TASKS
	enum sk_loop loop;
	bool qemu_notes;	// NT_PRSTATUS + QEMU CPU notes (ELF only)
};

static inline void sk_die(const char *what)
{
	fprintf(stderr, "synthkernel: %s\n", what);
	abort();
}

static inline void sk_put64(uint8_t *m, uint64_t pa, uint64_t v)
{
	memcpy(m + pa, &v, 8);
}

static inline void sk_put32(uint8_t *m, uint64_t pa, uint32_t v)
{
	memcpy(m + pa, &v, 4);
}

static inline int sk_id(int id)
{
	if (id < 0)
		sk_die("building BTF");
	return id;
}

// A BTF with the task_struct above and a little of everything the type code
// handles: typedefs, qualifiers, bitfields, unions, enums, functions, VARs.
static inline struct btf *sk_btf_new(void)
{
	struct btf *b = btf__new_empty();
	if (!b)
		sk_die("btf__new_empty");
	int t_int = sk_id(btf__add_int(b, "int", 4, BTF_INT_SIGNED));		// 1
	int t_uint = sk_id(btf__add_int(b, "unsigned int", 4, 0));		// 2
	int t_char = sk_id(btf__add_int(b, "char", 1, BTF_INT_CHAR));		// 3
	int t_ulong = sk_id(btf__add_int(b, "long unsigned int", 8, 0));	// 4
	int t_long = sk_id(btf__add_int(b, "long int", 8, BTF_INT_SIGNED));	// 5
	int t_bool = sk_id(btf__add_int(b, "_Bool", 1, BTF_INT_BOOL));		// 6
	int comm = sk_id(btf__add_array(b, t_int, t_char, 16));			// 7
	int p_lh = sk_id(btf__add_ptr(b, comm + 4));				// 8
	int p_task = sk_id(btf__add_ptr(b, comm + 5));				// 9
	int p_sig = sk_id(btf__add_ptr(b, comm + 6));				// 10
	int lh = sk_id(btf__add_struct(b, "list_head", 16));			// 11
	sk_id(btf__add_field(b, "next", p_lh, 0, 0));
	sk_id(btf__add_field(b, "prev", p_lh, 64, 0));
	int task = sk_id(btf__add_struct(b, "task_struct", SK_T_SIZE));	// 12
	if (lh != comm + 4 || task != comm + 5)
		sk_die("unexpected BTF ids");
	sk_id(btf__add_field(b, "__state", t_uint, SK_T_STATE * 8, 0));
	sk_id(btf__add_field(b, "flags", t_uint, SK_T_FLAGS * 8, 0));
	sk_id(btf__add_field(b, "exit_state", t_int, SK_T_EXIT_STATE * 8, 0));
	sk_id(btf__add_field(b, "tasks", lh, SK_T_TASKS * 8, 0));
	sk_id(btf__add_field(b, "pid", t_int, SK_T_PID * 8, 0));
	sk_id(btf__add_field(b, "tgid", t_int, SK_T_TGID * 8, 0));
	sk_id(btf__add_field(b, "real_parent", p_task, SK_T_REAL_PARENT * 8, 0));
	sk_id(btf__add_field(b, "parent", p_task, SK_T_PARENT * 8, 0));
	sk_id(btf__add_field(b, "signal", p_sig, SK_T_SIGNAL * 8, 0));
	sk_id(btf__add_field(b, "comm", comm, SK_T_COMM * 8, 0));
	sk_id(btf__add_field(b, "thread_group", lh, SK_T_THREAD_GROUP * 8, 0));
	sk_id(btf__add_field(b, "prio", t_uint, SK_T_PRIO * 8, 7));
	sk_id(btf__add_field(b, "policy", t_uint, SK_T_PRIO * 8 + 7, 3));
	int sig = sk_id(btf__add_struct(b, "signal_struct", 8));		// 13
	if (sig != comm + 6)
		sk_die("unexpected BTF ids");
	sk_id(btf__add_field(b, "nr_threads", t_int, 0, 0));
	// A union with an anonymous struct member.
	int anon = sk_id(btf__add_struct(b, NULL, 8));
	sk_id(btf__add_field(b, "lo", t_uint, 0, 0));
	sk_id(btf__add_field(b, "hi", t_uint, 32, 0));
	int un = sk_id(btf__add_union(b, "u64_parts", 8));
	sk_id(btf__add_field(b, "whole", t_ulong, 0, 0));
	sk_id(btf__add_field(b, NULL, anon, 0, 0));
	int en = sk_id(btf__add_enum(b, "pid_type", 4));
	sk_id(btf__add_enum_value(b, "PIDTYPE_PID", 0));
	sk_id(btf__add_enum_value(b, "PIDTYPE_TGID", 1));
	sk_id(btf__add_enum_value(b, "PIDTYPE_MAX", 4));
	int u64t = sk_id(btf__add_typedef(b, "u64", t_ulong));
	int cu64 = sk_id(btf__add_const(b, u64t));
	int vu64 = sk_id(btf__add_volatile(b, cu64));
	int avenrun = sk_id(btf__add_array(b, t_int, t_ulong, 3));
	int fp = sk_id(btf__add_func_proto(b, t_int));
	sk_id(btf__add_func_param(b, "p", p_task));
	sk_id(btf__add_func_param(b, "n", t_long));
	int fn = sk_id(btf__add_func(b, "schedule", BTF_FUNC_GLOBAL, fp));
	int ptrs = sk_id(btf__add_array(b, t_int, sk_id(btf__add_ptr(b, 0)), 4));
	int v_init = sk_id(btf__add_var(b, "init_task", BTF_VAR_GLOBAL_ALLOCATED, task));
	int v_jif = sk_id(btf__add_var(b, "jiffies", BTF_VAR_GLOBAL_ALLOCATED, vu64));
	int v_av = sk_id(btf__add_var(b, "avenrun", BTF_VAR_GLOBAL_ALLOCATED, avenrun));
	int v_pob = sk_id(btf__add_var(b, "page_offset_base", BTF_VAR_GLOBAL_ALLOCATED, t_ulong));
	int v_ptrs = sk_id(btf__add_var(b, "synth_ptrs", BTF_VAR_GLOBAL_ALLOCATED, ptrs));
	int v_un = sk_id(btf__add_var(b, "synth_parts", BTF_VAR_GLOBAL_ALLOCATED, un));
	int v_en = sk_id(btf__add_var(b, "synth_pidtype", BTF_VAR_GLOBAL_ALLOCATED, en));
	int v_b = sk_id(btf__add_var(b, "synth_flag", BTF_VAR_GLOBAL_ALLOCATED, t_bool));
	sk_id(btf__add_datasec(b, ".data", 0x400));
	sk_id(btf__add_datasec_var_info(b, v_init, 0x200, SK_T_SIZE));
	sk_id(btf__add_datasec_var_info(b, v_jif, 0x120, 8));
	sk_id(btf__add_datasec_var_info(b, v_av, 0x100, 24));
	sk_id(btf__add_datasec_var_info(b, v_pob, 0x128, 8));
	sk_id(btf__add_datasec_var_info(b, v_ptrs, 0x140, 32));
	sk_id(btf__add_datasec_var_info(b, v_un, 0x160, 8));
	sk_id(btf__add_datasec_var_info(b, v_en, 0x168, 4));
	sk_id(btf__add_datasec_var_info(b, v_b, 0x16c, 1));
	(void)fn;
	return b;
}

// Raw bytes of sk_btf_new(); caller frees.
static inline void *sk_btf_raw(uint32_t *size_ret)
{
	struct btf *b = sk_btf_new();
	uint32_t size;
	const void *raw = btf__raw_data(b, &size);
	if (!raw)
		sk_die("btf__raw_data");
	void *copy = malloc(size);
	if (!copy)
		sk_die("out of memory");
	memcpy(copy, raw, size);
	btf__free(b);
	*size_ret = size;
	return copy;
}

static inline uint64_t sk_task_va(unsigned i)
{
	return i == 0 ? SK_INIT_TASK : SK_DIRECT + SK_TASKS_PA + (uint64_t)(i - 1) * SK_T_SIZE;
}

static inline uint64_t sk_task_pa(unsigned i)
{
	return i == 0 ? SK_INIT_TASK - SK_TEXT : SK_TASKS_PA + (uint64_t)(i - 1) * SK_T_SIZE;
}

static inline void sk_write_tasks(uint8_t *m, const struct sk_opts *o)
{
	unsigned n = o->ntasks > SK_MAX_TASKS ? SK_MAX_TASKS : o->ntasks;
	for (unsigned i = 0; i <= n; i++) {
		uint64_t pa = sk_task_pa(i), va = sk_task_va(i);
		uint64_t next = sk_task_va(i == n ? 0 : i + 1) + SK_T_TASKS;
		uint64_t prev = sk_task_va(i == 0 ? n : i - 1) + SK_T_TASKS;
		if (i == n && n > 0) {
			if (o->loop == SK_LOOP_TASKS)
				next = sk_task_va(1) + SK_T_TASKS;
			else if (o->loop == SK_LOOP_SELF)
				next = va + SK_T_TASKS;
			else if (o->loop == SK_LOOP_NULL)
				next = 0;
		}
		memset(m + pa, 0, SK_T_SIZE);
		sk_put32(m, pa + SK_T_STATE, i == 0 ? 0 : 1);
		sk_put32(m, pa + SK_T_FLAGS, i == 0 ? 0x00200002 : 0x00400100);
		sk_put64(m, pa + SK_T_TASKS, next);
		sk_put64(m, pa + SK_T_TASKS + 8, prev);
		sk_put32(m, pa + SK_T_PID, i);
		sk_put32(m, pa + SK_T_TGID, i);
		sk_put64(m, pa + SK_T_REAL_PARENT, sk_task_va(i ? i - 1 : 0));
		sk_put64(m, pa + SK_T_PARENT, sk_task_va(i ? i - 1 : 0));
		sk_put64(m, pa + SK_T_SIGNAL, SK_DATA + 0x300);
		snprintf((char *)m + pa + SK_T_COMM, 16, i ? "task%u" : "swapper/0", i);
		// A one-thread group: the ring holds only the leader.
		uint64_t tg = va + SK_T_THREAD_GROUP;
		if (o->loop == SK_LOOP_THREADS && i == 1 && n >= 3) {
			// 1 -> 2 -> 3 -> 2 -> ...: never back to 1.
			tg = sk_task_va(2) + SK_T_THREAD_GROUP;
		} else if (o->loop == SK_LOOP_THREADS && i == 2 && n >= 3) {
			tg = sk_task_va(3) + SK_T_THREAD_GROUP;
		} else if (o->loop == SK_LOOP_THREADS && i == 3 && n >= 3) {
			tg = sk_task_va(2) + SK_T_THREAD_GROUP;
		}
		sk_put64(m, pa + SK_T_THREAD_GROUP, tg);
		sk_put64(m, pa + SK_T_THREAD_GROUP + 8, tg);
		sk_put32(m, pa + SK_T_PRIO, 120 | (1u << 7));
	}
}

// VMCOREINFO text of the synthetic kernel (static buffer).
static inline const char *sk_vmcoreinfo(const struct kp_mkkallsyms *ks)
{
	static char text[2048];
	snprintf(text, sizeof(text),
		 "OSRELEASE=6.1.0-synth\nPAGESIZE=4096\n"
		 "SYMBOL(swapper_pg_dir)=%" PRIx64 "\n"
		 "SYMBOL(init_top_pgt)=%" PRIx64 "\n"
		 "SYMBOL(_stext)=%" PRIx64 "\n"
		 "SYMBOL(kallsyms_names)=%" PRIx64 "\n"
		 "SYMBOL(kallsyms_num_syms)=%" PRIx64 "\n"
		 "SYMBOL(kallsyms_token_table)=%" PRIx64 "\n"
		 "SYMBOL(kallsyms_token_index)=%" PRIx64 "\n"
		 "SYMBOL(kallsyms_offsets)=%" PRIx64 "\n"
		 "SYMBOL(kallsyms_relative_base)=%" PRIx64 "\n"
		 "OFFSET(task_struct.tasks)=%d\n"
		 "NUMBER(phys_base)=%" PRId64 "\n"
		 "NUMBER(pgtable_l5_enabled)=0\n"
		 "KERNELOFFSET=%" PRIx64 "\n",
		 SK_PGT, SK_PGT, SK_TEXT, ks->tables.names, ks->tables.num_syms,
		 ks->tables.token_table, ks->tables.token_index, ks->tables.offsets,
		 ks->tables.relative_base, SK_T_TASKS, (int64_t)SK_PHYS_BASE, SK_KASLR);
	return text;
}

// Builds the dump image in memory; caller frees *buf_ret.
static inline void sk_build(const struct sk_opts *o, uint8_t **buf_ret, size_t *len_ret)
{
	struct kp_mkpgtable *pg;
	char spec[512];
	snprintf(spec, sizeof(spec),
		 "levels 4\nram 0x%" PRIx64 "\ntables 0x%" PRIx64 "\nmaxtables 8\n"
		 "map 0x%" PRIx64 " 0 2M\nmap 0x%" PRIx64 " 0 1G\n",
		 SK_RAM, SK_PGT - SK_TEXT, SK_TEXT, SK_DIRECT);
	struct kp_error *err = kp_mkpgtable_create(spec, &pg);
	if (err)
		sk_die(kp_error_message(err));
	if (pg->root != SK_PGT - SK_TEXT)
		sk_die("page table root is not at 0x10000");
	uint8_t *m = pg->buf;
	memset(m, 0, SK_RAM);
	memset(m, 0xcc, 0x1000);
	static const char banner[] =
		"Linux version 6.1.0-synth (kpeek@test) (gcc 12.2.0) #1 SMP PREEMPT_DYNAMIC\n";
	memcpy(m + (SK_BANNER - SK_TEXT), banner, sizeof(banner));
	sk_put64(m, SK_AVENRUN - SK_TEXT, 0x347);
	sk_put64(m, SK_AVENRUN - SK_TEXT + 8, 0x2d0);
	sk_put64(m, SK_AVENRUN - SK_TEXT + 16, 0x19a);
	sk_put64(m, SK_JIFFIES - SK_TEXT, UINT64_C(0x100003039));
	sk_put64(m, SK_POB - SK_TEXT, SK_DIRECT);
	sk_put64(m, SK_PTRS - SK_TEXT, SK_TEXT + 0x10);
	sk_put64(m, SK_PTRS - SK_TEXT + 8, SK_INIT_TASK);
	sk_put64(m, SK_PTRS - SK_TEXT + 24, UINT64_C(0xdead000000000100));
	sk_put64(m, SK_DATA - SK_TEXT + 0x160, UINT64_C(0x1122334455667788));
	sk_put32(m, SK_DATA - SK_TEXT + 0x168, 1);
	m[SK_DATA - SK_TEXT + 0x16c] = 1;
	sk_write_tasks(m, o);

	uint32_t btf_size;
	void *btf = sk_btf_raw(&btf_size);
	if (btf_size > SK_BTF_MAX)
		sk_die("BTF too big");
	memcpy(m + (SK_BTF - SK_TEXT), btf, btf_size);
	free(btf);

	const struct kp_mkkallsyms_sym syms[] = {
		{ "_text", 'T', SK_TEXT },
		{ "startup_64", 'T', SK_TEXT },
		{ "schedule", 'T', SK_TEXT + 0x100 },
		{ "do_syscall_64", 'T', SK_TEXT + 0x200 },
		{ "_etext", 'T', SK_TEXT + 0x1000 },
		{ "linux_banner", 'D', SK_BANNER },
		{ "avenrun", 'D', SK_AVENRUN },
		{ "jiffies", 'D', SK_JIFFIES },
		{ "page_offset_base", 'D', SK_POB },
		{ "synth_ptrs", 'D', SK_PTRS },
		{ "synth_parts", 'd', SK_DATA + 0x160 },
		{ "synth_pidtype", 'd', SK_DATA + 0x168 },
		{ "synth_flag", 'd', SK_DATA + 0x16c },
		{ "init_task", 'D', SK_INIT_TASK },
		{ "__start_BTF", 'R', SK_BTF },
		{ "__stop_BTF", 'R', SK_BTF + btf_size },
		{ "init_top_pgt", 'D', SK_PGT },
		{ "_end", 'B', SK_PGT + 0x8000 },
	};
	struct kp_mkkallsyms ks;
	err = kp_mkkallsyms_build(syms, sizeof(syms) / sizeof(syms[0]), SK_KALLSYMS, 0, &ks);
	if (err)
		sk_die(kp_error_message(err));
	if (ks.size > SK_BTF - SK_KALLSYMS)
		sk_die("kallsyms tables too big");
	memcpy(m + (SK_KALLSYMS - SK_TEXT), ks.buf, ks.size);
	const char *vmci = sk_vmcoreinfo(&ks);
	memcpy(m + SK_VMCOREINFO_PA, vmci, strlen(vmci) + 1);

	if (o->format == SK_ELF || o->format == SK_ELF_NO_NOTE) {
		struct mkcore *mc = mkcore_create();
		if (o->format == SK_ELF)
			mkcore_add_vmcoreinfo(mc, vmci);
		if (o->qemu_notes) {
			mkcore_add_prstatus(mc, 1, SK_TEXT + 0x100, SK_DIRECT + 0x8000, 0x10, 0);
			struct mkcore_qemu_cpu q = {
				.rip = SK_TEXT + 0x100,
				.cr0 = 0x80050033,
				.cr3 = pg->root,
				.cr4 = 0x3506f0,
				.cs_selector = 0x10,
			};
			mkcore_add_qemu_cpu(mc, &q);
		}
		mkcore_add_load(mc, 0, 0, m, pg->size, pg->size);
		mkcore_to_buffer(mc, 1 << 20, buf_ret, len_ret);
		mkcore_destroy(mc);
	} else if (o->format == SK_LIME || o->format == SK_RAW) {
		size_t hdr = o->format == SK_LIME ? 32 : 0;
		uint8_t *out = malloc(pg->size + 2 * hdr);
		if (!out)
			sk_die("out of memory");
		const uint64_t split = 0x3000;
		size_t at = 0;
		for (int r = 0; r < 2; r++) {
			uint64_t start = r ? split : 0, end = r ? pg->size : split;
			if (hdr) {
				uint32_t magic = 0x4C694D45u, version = 1;
				uint64_t last = end - 1, reserved = 0;
				memcpy(out + at, &magic, 4);
				memcpy(out + at + 4, &version, 4);
				memcpy(out + at + 8, &start, 8);
				memcpy(out + at + 16, &last, 8);
				memcpy(out + at + 24, &reserved, 8);
				at += hdr;
			}
			memcpy(out + at, m + start, end - start);
			at += end - start;
		}
		*buf_ret = out;
		*len_ret = at;
	} else {
		struct mkkdump_opts ko = {
			.mem = m,
			.npages = pg->size / 4096,
			.comp = MKK_ZLIB,
			.vmcoreinfo = vmci,
			.phys_base = SK_PHYS_BASE,
			.share_zero_pages = true,
		};
		uint8_t *img;
		size_t len;
		struct mkkdump_layout lay;
		mkkdump_build(&ko, &img, &len, &lay);
		if (o->format == SK_KDUMP_FLAT) {
			struct mkkdump_flat_opts fo = { .record_max = 4096 };
			mkkdump_flatten(img, len, &fo, buf_ret, len_ret);
			free(img);
		} else {
			*buf_ret = img;
			*len_ret = len;
		}
	}
	kp_mkkallsyms_deinit(&ks);
	kp_mkpgtable_destroy(pg);
}

#endif
