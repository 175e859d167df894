// SPDX-License-Identifier: MIT
// The synthetic kernel of kpeek's tests (synthkernel.h).
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <bpf/btf.h>
#include <kpeek/kpeek.h>
#include <linux/btf.h>

#include "mkcore.h"
#include "mkkallsyms.h"
#include "mkkdump.h"
#include "mkpgtable.h"
#include "synthkernel.h"
#include "synthprocs.h"
#include "synthsys.h"

#define PA(va) ((va) - SK_TEXT)	// image addresses to physical

static const char banner[] =
	"Linux version 6.1.0-synth (kpeek@test) (gcc 12.2.0) #1 SMP PREEMPT_DYNAMIC\n";
// Control bytes, ESC sequences and invalid UTF-8 for the terminal-safety tests.
// ESC, bytes that are not UTF-8, a C0 control and C1 CSI (U+009B as UTF-8).
static const char evil[] = "ok\x1b[2Jbad\xff\xfe\x01" "end\xc2\x9b" "31m";

void sk_die(const char *what)
{
	fprintf(stderr, "synthkernel: %s\n", what);
	abort();
}

void sk_put64(uint8_t *m, uint64_t pa, uint64_t v)
{
	memcpy(m + pa, &v, 8);
}

void sk_put32(uint8_t *m, uint64_t pa, uint32_t v)
{
	memcpy(m + pa, &v, 4);
}

uint64_t sk_ram_end(const struct sk_opts *o)
{
	return o->sys ? SKS_RAM_END : o->procs ? SKP_RAM_END : SK_RAM;
}

uint64_t sk_task_size(const struct sk_opts *o)
{
	return o->sys ? SKS_T_SIZE : o->procs ? SKP_T_SIZE : SK_T_SIZE;
}

static unsigned max_tasks(const struct sk_opts *o)
{
	return o->sys ? SKS_MAX_TASKS : o->procs ? SKP_MAX_TASKS : SK_MAX_TASKS;
}

static int id(int id)
{
	if (id < 0)
		sk_die("building BTF");
	return id;
}

static struct btf *btf_new(const struct sk_opts *o)
{
	struct btf *b = btf__new_empty();
	if (!b)
		sk_die("btf__new_empty");
	int t_int = id(btf__add_int(b, "int", 4, BTF_INT_SIGNED));		// 1
	int t_uint = id(btf__add_int(b, "unsigned int", 4, 0));		// 2
	int t_char = id(btf__add_int(b, "char", 1, BTF_INT_CHAR));		// 3
	int t_ulong = id(btf__add_int(b, "long unsigned int", 8, 0));		// 4
	int t_long = id(btf__add_int(b, "long int", 8, BTF_INT_SIGNED));	// 5
	int t_bool = id(btf__add_int(b, "_Bool", 1, BTF_INT_BOOL));		// 6
	struct skp_task_ptrs procs;
	struct sks_task_types sys = { 0 };
	if (o->procs)
		skp_btf_task_ptrs(b, t_int, t_uint, t_ulong, &procs);	// before comm: ids below are comm's + n
	if (o->sys)
		sks_btf_task_types(b, o, t_int, t_uint, t_ulong, &sys);	// its last type: comm's - 1
	// Without processes no task has memory (mm NULL), as a kernel thread:
	// what ps shows as VSZ and RSS 0.
	int p_mm = o->procs ? 0 : id(btf__add_ptr(b, id(btf__add_fwd(b, "mm_struct", BTF_FWD_STRUCT))));
	int comm = id(btf__add_array(b, t_int, t_char, 16));			// 7
	// Fields must directly follow their struct, so the pointers come
	// first, referring to the struct ids that follow them.
	int p_lh = id(btf__add_ptr(b, comm + 4));				// 8
	int p_task = id(btf__add_ptr(b, comm + 5));				// 9
	int p_sig = id(btf__add_ptr(b, comm + 6));				// 10
	int lh = id(btf__add_struct(b, "list_head", 16));			// 11
	id(btf__add_field(b, "next", p_lh, 0, 0));
	id(btf__add_field(b, "prev", p_lh, 64, 0));
	int task = id(btf__add_struct(b, "task_struct", (uint32_t)sk_task_size(o)));	// 12
	if (lh != comm + 4 || task != comm + 5 || (o->sys && sys.rt + 1 != comm))
		sk_die("unexpected BTF ids");
	id(btf__add_field(b, "__state", t_uint, SK_T_STATE * 8, 0));
	id(btf__add_field(b, "flags", t_uint, SK_T_FLAGS * 8, 0));
	id(btf__add_field(b, "exit_state", t_int, SK_T_EXIT_STATE * 8, 0));
	id(btf__add_field(b, "tasks", lh, SK_T_TASKS * 8, 0));
	id(btf__add_field(b, "pid", t_int, SK_T_PID * 8, 0));
	id(btf__add_field(b, "tgid", t_int, SK_T_TGID * 8, 0));
	id(btf__add_field(b, "real_parent", p_task, SK_T_REAL_PARENT * 8, 0));
	id(btf__add_field(b, "parent", p_task, SK_T_PARENT * 8, 0));
	id(btf__add_field(b, "signal", p_sig, SK_T_SIGNAL * 8, 0));
	id(btf__add_field(b, "comm", comm, SK_T_COMM * 8, 0));
	id(btf__add_field(b, "thread_group", lh, SK_T_THREAD_GROUP * 8, 0));
	id(btf__add_field(b, "prio", t_uint, SK_T_PRIO * 8, 7));
	id(btf__add_field(b, "policy", t_uint, SK_T_PRIO * 8 + 7, 3));
	if (o->procs)
		skp_btf_task_fields(b, &procs);
	else
		id(btf__add_field(b, "mm", p_mm, SK_T_MM * 8, 0));
	if (o->sys)
		sks_btf_task_fields(b, &sys);
	int sig = id(btf__add_struct(b, "signal_struct", o->procs ? SKP_SIGNAL_SIZE : 8));	// 13
	if (sig != comm + 6)
		sk_die("unexpected BTF ids");
	id(btf__add_field(b, "nr_threads", t_int, 0, 0));
	if (o->procs)
		skp_btf_signal_fields(b, &procs);
	// A union with an anonymous struct member.
	int anon = id(btf__add_struct(b, NULL, 8));
	id(btf__add_field(b, "lo", t_uint, 0, 0));
	id(btf__add_field(b, "hi", t_uint, 32, 0));
	int un = id(btf__add_union(b, "u64_parts", 8));
	id(btf__add_field(b, "whole", t_ulong, 0, 0));
	id(btf__add_field(b, NULL, anon, 0, 0));
	int en = id(btf__add_enum(b, "pid_type", 4));
	id(btf__add_enum_value(b, "PIDTYPE_PID", 0));
	id(btf__add_enum_value(b, "PIDTYPE_TGID", 1));
	id(btf__add_enum_value(b, "PIDTYPE_MAX", 4));
	if (o->procs) {
		id(btf__add_enum_value(b, "PIDTYPE_PGID", 2));
		id(btf__add_enum_value(b, "PIDTYPE_SID", 3));
	}
	int u64t = id(btf__add_typedef(b, "u64", t_ulong));
	int cu64 = id(btf__add_const(b, u64t));
	int vu64 = id(btf__add_volatile(b, cu64));
	int avenrun = id(btf__add_array(b, t_int, t_ulong, 3));
	int fp = id(btf__add_func_proto(b, t_int));
	id(btf__add_func_param(b, "p", p_task));
	id(btf__add_func_param(b, "n", t_long));
	id(btf__add_func(b, "schedule", BTF_FUNC_GLOBAL, fp));
	int ptrs = id(btf__add_array(b, t_int, id(btf__add_ptr(b, 0)), 4));
	int v_init = id(btf__add_var(b, "init_task", BTF_VAR_GLOBAL_ALLOCATED, task));
	int v_jif = id(btf__add_var(b, "jiffies", BTF_VAR_GLOBAL_ALLOCATED, vu64));
	int v_av = id(btf__add_var(b, "avenrun", BTF_VAR_GLOBAL_ALLOCATED, avenrun));
	int v_pob = id(btf__add_var(b, "page_offset_base", BTF_VAR_GLOBAL_ALLOCATED, t_ulong));
	int v_ptrs = id(btf__add_var(b, "synth_ptrs", BTF_VAR_GLOBAL_ALLOCATED, ptrs));
	int v_un = id(btf__add_var(b, "synth_parts", BTF_VAR_GLOBAL_ALLOCATED, un));
	int v_en = id(btf__add_var(b, "synth_pidtype", BTF_VAR_GLOBAL_ALLOCATED, en));
	int v_b = id(btf__add_var(b, "synth_flag", BTF_VAR_GLOBAL_ALLOCATED, t_bool));
	id(btf__add_datasec(b, ".data", 0x400));
	id(btf__add_datasec_var_info(b, v_init, SK_INIT_TASK - SK_DATA, (uint32_t)sk_task_size(o)));
	id(btf__add_datasec_var_info(b, v_jif, SK_JIFFIES - SK_DATA, 8));
	id(btf__add_datasec_var_info(b, v_av, SK_AVENRUN - SK_DATA, 24));
	id(btf__add_datasec_var_info(b, v_pob, SK_POB - SK_DATA, 8));
	id(btf__add_datasec_var_info(b, v_ptrs, SK_PTRS - SK_DATA, 32));
	id(btf__add_datasec_var_info(b, v_un, SK_PARTS - SK_DATA, 8));
	id(btf__add_datasec_var_info(b, v_en, SK_PIDTYPE - SK_DATA, 4));
	id(btf__add_datasec_var_info(b, v_b, SK_FLAG - SK_DATA, 1));
	if (o->procs) {
		struct skp_btf_base base = { t_int, t_uint, t_char, t_ulong, t_long, lh };
		skp_btf_types(b, o->procs, o->sys != SK_SYS_NONE, &base);
		if (o->sys)
			sks_btf_types(b, o, &base);
	}
	return b;
}

void *sk_btf_raw(const struct sk_opts *o, uint32_t *size_ret)
{
	struct btf *b = btf_new(o);
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

uint64_t sk_task_pa(const struct sk_opts *o, unsigned i)
{
	uint64_t first = o->sys ? SKS_TASKS : SK_TASKS_PA;
	return i == 0 ? PA(SK_INIT_TASK) : first + (uint64_t)(i - 1) * sk_task_size(o);
}

uint64_t sk_task_va(const struct sk_opts *o, unsigned i)
{
	return i == 0 ? SK_INIT_TASK : SK_DIRECT + sk_task_pa(o, i);
}

static void write_tasks(uint8_t *m, const struct sk_opts *o)
{
	unsigned n = o->ntasks > max_tasks(o) ? max_tasks(o) : o->ntasks;
	for (unsigned i = 0; i <= n; i++) {
		uint64_t pa = sk_task_pa(o, i), va = sk_task_va(o, i);
		uint64_t next = sk_task_va(o, i == n ? 0 : i + 1) + SK_T_TASKS;
		uint64_t prev = sk_task_va(o, i == 0 ? n : i - 1) + SK_T_TASKS;
		if (i == n && n > 0) {
			if (o->loop == SK_LOOP_TASKS)
				next = sk_task_va(o, 1) + SK_T_TASKS;
			else if (o->loop == SK_LOOP_SELF)
				next = va + SK_T_TASKS;
			else if (o->loop == SK_LOOP_NULL)
				next = 0;
			else if (o->loop == SK_LOOP_MIDDLE)
				next = sk_task_va(o, 0) + SK_T_TASKS + 8;
		}
		// init_task has 0x100 bytes of the data page, whatever its type says.
		memset(m + pa, 0, i == 0 && sk_task_size(o) > 0x100 ? 0x100 : sk_task_size(o));
		sk_put32(m, pa + SK_T_STATE, i == 0 ? 0 : 1);
		sk_put32(m, pa + SK_T_FLAGS, i == 0 ? 0x00200002 : 0x00400100);
		sk_put64(m, pa + SK_T_TASKS, next);
		sk_put64(m, pa + SK_T_TASKS + 8, prev);
		sk_put32(m, pa + SK_T_PID, i);
		sk_put32(m, pa + SK_T_TGID, i);
		sk_put64(m, pa + SK_T_REAL_PARENT, sk_task_va(o, i ? i - 1 : 0));
		sk_put64(m, pa + SK_T_PARENT, sk_task_va(o, i ? i - 1 : 0));
		sk_put64(m, pa + SK_T_SIGNAL, SK_SIGNAL);
		if (i == 0)
			snprintf((char *)m + pa + SK_T_COMM, 16, "swapper/0");
		else if (i == 1)
			snprintf((char *)m + pa + SK_T_COMM, 16, "init");
		else
			snprintf((char *)m + pa + SK_T_COMM, 16, "task%u", i);
		// A one-thread group: the ring holds only the leader.
		uint64_t tg = va + SK_T_THREAD_GROUP;
		if (o->loop == SK_LOOP_THREADS && n >= 3 && i >= 1 && i <= 3) {
			// 1 -> 2 -> 3 -> 2 -> ...: never back to 1.
			tg = sk_task_va(o, i == 2 ? 3 : 2) + SK_T_THREAD_GROUP;
		}
		sk_put64(m, pa + SK_T_THREAD_GROUP, tg);
		sk_put64(m, pa + SK_T_THREAD_GROUP + 8, tg);
		sk_put32(m, pa + SK_T_PRIO, 120 | (1u << 7));
	}
}

const char *sk_vmcoreinfo(const struct kp_mkkallsyms *ks)
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

// Everything but the dump format: memory, the symbols and the BTF size.
struct image {
	struct kp_mkpgtable *pg;
	uint8_t *m;
	uint32_t btf_size;
	struct kp_mkkallsyms ks;
	struct kp_mkkallsyms_sym syms[128];
	size_t nsyms;
	const char *vmcoreinfo;
};

// The kallsyms tables of the image (its BTF placed first: __stop_BTF).
static void symbols(const struct sk_opts *o, struct image *im)
{
	// Sorted by address as nm -n (the kallsyms text file is written in
	// this order).
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
		{ "synth_parts", 'd', SK_PARTS },
		{ "synth_pidtype", 'd', SK_PIDTYPE },
		{ "synth_flag", 'd', SK_FLAG },
		{ "nr_cpu_ids", 'D', SK_NR_CPU_IDS },
		{ "__cpu_online_mask", 'D', SK_ONLINE_MASK },
		{ "evil_string", 'd', SK_EVIL },
		{ "vmcoreinfo_data", 'D', SK_VMCOREINFO_DATA },
		{ "vmcoreinfo_size", 'D', SK_VMCOREINFO_SIZE },
		{ "init_task", 'D', SK_INIT_TASK },
		{ "__start_BTF", 'R', SK_BTF },
		{ "__stop_BTF", 'R', SK_BTF + im->btf_size },
		{ "init_top_pgt", 'D', SK_PGT },
		{ "hole_start", 'd', SK_HOLE - 8 },
		{ "_end", 'B', SK_HOLE_END },
	};
	im->nsyms = sizeof(syms) / sizeof(syms[0]);
	memcpy(im->syms, syms, sizeof(syms));
	const struct kp_mkkallsyms_sym *more[2] = { o->procs ? skp_symbols : NULL, o->sys ? sks_symbols(o) : NULL };
	for (int set = 0; set < 2; set++) {
		// Each after the last symbol at or below its address.
		for (const struct kp_mkkallsyms_sym *p = more[set]; p && p->name; p++) {
			size_t at = 0;
			while (at < im->nsyms && im->syms[at].address <= p->address)
				at++;
			if (im->nsyms == sizeof(im->syms) / sizeof(im->syms[0]))
				sk_die("too many symbols");
			memmove(im->syms + at + 1, im->syms + at, (im->nsyms - at) * sizeof(*im->syms));
			im->syms[at] = *p;
			im->nsyms++;
		}
	}
	struct kp_error *err = kp_mkkallsyms_build(im->syms, im->nsyms, SK_KALLSYMS, 0, &im->ks);
	if (err)
		sk_die(kp_error_message(err));
	if (im->ks.size > SK_BTF - SK_KALLSYMS)
		sk_die("kallsyms tables too big");
	memcpy(im->m + PA(SK_KALLSYMS), im->ks.buf, im->ks.size);
}

static void build_image(const struct sk_opts *o, struct image *im)
{
	char spec[512];
	// With processes the table area's buffer goes on to the end of their RAM.
	unsigned maxtables = 16 + (unsigned)((sk_ram_end(o) - SK_RAM) / 4096);
	snprintf(spec, sizeof(spec),
		 "levels 4\nram 0x%" PRIx64 "\ntables 0x%" PRIx64 "\nmaxtables %u\n"
		 "map 0x%" PRIx64 " 0 2M\nmap 0x%" PRIx64 " 0 1G\n"
		 "map 0x%" PRIx64 " 0x%" PRIx64 " 4K nx\nset 0x%" PRIx64 " PTE 0\n",
		 PA(SK_PGT), PA(SK_PGT), maxtables, SK_TEXT, SK_DIRECT, SK_VMALLOC, SK_VMALLOC_PA,
		 SK_VMALLOC + 0x1000);
	struct kp_error *err = kp_mkpgtable_create(spec, &im->pg);
	if (err)
		sk_die(kp_error_message(err));
	// The table area runs to the end of RAM; the tables use its first 7
	// pages, the vmalloc page and the hole are in its unused tail.
	if (im->pg->root != PA(SK_PGT) || im->pg->size != sk_ram_end(o) ||
	    im->pg->ntables > (SK_VMALLOC_PA - PA(SK_PGT)) / 4096)
		sk_die("unexpected page table area");
	uint8_t *m = im->m = im->pg->buf;
	memset(m, 0, PA(SK_PGT));
	memset(m, 0xcc, 0x1000);		// int3 padding, a nop sled
	memset(m + 0x100, 0x90, 0x10);
	memcpy(m + PA(SK_BANNER), banner, sizeof(banner));
	// avenrun: 0.41, 0.35, 0.20 in FSHIFT 11 fixed point.
	sk_put64(m, PA(SK_AVENRUN), 0x347);
	sk_put64(m, PA(SK_AVENRUN) + 8, 0x2d0);
	sk_put64(m, PA(SK_AVENRUN) + 16, 0x19a);
	sk_put64(m, PA(SK_JIFFIES), UINT64_C(0x100003039));
	sk_put64(m, PA(SK_POB), SK_DIRECT);
	sk_put64(m, PA(SK_PTRS), SK_TEXT + 0x110);
	sk_put64(m, PA(SK_PTRS) + 8, SK_INIT_TASK);
	sk_put64(m, PA(SK_PTRS) + 24, UINT64_C(0xdead000000000100));
	sk_put64(m, PA(SK_PARTS), UINT64_C(0x1122334455667788));
	sk_put32(m, PA(SK_PIDTYPE), 1);
	m[PA(SK_FLAG)] = 1;
	sk_put32(m, PA(SK_NR_CPU_IDS), 4);
	sk_put64(m, PA(SK_ONLINE_MASK), 0x5);
	memcpy(m + PA(SK_EVIL), evil, sizeof(evil));
	sk_put32(m, PA(SK_SIGNAL), 1);	// signal_struct.nr_threads
	memset(m + SK_VMALLOC_PA, 0x5a, 0x1000);
	sk_put64(m, PA(SK_HOLE) - 8, UINT64_C(0x1122334455667788));
	write_tasks(m, o);
	if (o->procs)
		skp_write(m, o);
	if (o->sys)
		sks_write(m, o);

	void *btf = sk_btf_raw(o, &im->btf_size);
	if (im->btf_size > SK_BTF_MAX)
		sk_die("BTF too big");
	memcpy(m + PA(SK_BTF), btf, im->btf_size);
	free(btf);
	symbols(o, im);
	im->vmcoreinfo = sk_vmcoreinfo(&im->ks);
	memcpy(m + SK_VMCOREINFO_PA, im->vmcoreinfo, strlen(im->vmcoreinfo) + 1);
	sk_put64(m, PA(SK_VMCOREINFO_DATA), SK_DIRECT + SK_VMCOREINFO_PA);
	sk_put64(m, PA(SK_VMCOREINFO_SIZE), strlen(im->vmcoreinfo));
	if (o->edit)
		o->edit(m, o->edit_arg);
}

static void free_image(struct image *im)
{
	kp_mkkallsyms_deinit(&im->ks);
	kp_mkpgtable_destroy(im->pg);
}

// RAM as loads or ranges: everything but the hole (the last range ends
// at sk_ram_end()).
static const struct { uint64_t start, end; } ram[] = {
	{ 0, SK_VMCOREINFO_PA }, { SK_VMCOREINFO_PA, PA(SK_HOLE) }, { PA(SK_HOLE_END), SK_RAM },
};
#define NRAM (sizeof(ram) / sizeof(ram[0]))

static uint64_t ram_end(const struct sk_opts *o, size_t r)
{
	return r == NRAM - 1 ? sk_ram_end(o) : ram[r].end;
}

static struct mkcore *elf_core(const struct sk_opts *o, const struct image *im)
{
	struct mkcore *mc = mkcore_create();
	if (o->format == SK_ELF)
		mkcore_add_vmcoreinfo(mc, im->vmcoreinfo);
	for (unsigned cpu = 0; cpu < o->cpus; cpu++) {
		mkcore_add_prstatus(mc, cpu + 1, SK_TEXT + 0x100, SK_DIRECT + 0x8000 + cpu * 0x1000,
				    0x10, 0);
		struct mkcore_qemu_cpu q = {
			.rip = SK_TEXT + 0x100,
			.cr0 = 0x80050033,
			.cr3 = im->pg->root,
			.cr4 = 0x3506f0,
			.cs_selector = 0x10,
		};
		mkcore_add_qemu_cpu(mc, &q);
	}
	// The first two pieces are one load, as QEMU writes RAM.
	mkcore_add_load(mc, 0, 0, im->m, PA(SK_HOLE), PA(SK_HOLE));
	uint64_t len = ram_end(o, 2) - ram[2].start;
	mkcore_add_load(mc, 0, ram[2].start, im->m + ram[2].start, len, len);
	return mc;
}

void sk_build(const struct sk_opts *o, uint8_t **buf_ret, size_t *len_ret)
{
	struct image im;
	build_image(o, &im);
	uint8_t *m = im.m;
	if (o->format == SK_ELF || o->format == SK_ELF_NO_NOTE) {
		struct mkcore *mc = elf_core(o, &im);
		mkcore_to_buffer(mc, 1 << 20, buf_ret, len_ret);
		mkcore_destroy(mc);
	} else if (o->format == SK_LIME || o->format == SK_RAW) {
		size_t hdr = o->format == SK_LIME ? 32 : 0;
		uint8_t *out = calloc(1, sk_ram_end(o) + NRAM * hdr);
		if (!out)
			sk_die("out of memory");
		size_t at = 0;
		for (size_t r = 0; r < NRAM; r++) {
			uint64_t start = ram[r].start, end = ram_end(o, r);
			if (!hdr) {
				// A raw image has every byte from 0: the hole is zeros.
				start = r ? ram_end(o, r - 1) : 0;
			} else {
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
		uint8_t state[SKS_RAM_END / 4096];
		memset(state, MKK_DUMPED, sizeof(state));
		for (uint64_t pa = PA(SK_HOLE); pa < PA(SK_HOLE_END); pa += 4096)
			state[pa / 4096] = MKK_HOLE;
		struct mkkdump_opts ko = {
			.mem = m,
			.npages = sk_ram_end(o) / 4096,
			.state = state,
			.comp = MKK_ZLIB,
			.vmcoreinfo = im.vmcoreinfo,
			.phys_base = SK_PHYS_BASE,
			.share_zero_pages = true,
		};
		if (o->split_parts > 1) {
			uint64_t n = ko.npages;
			ko.split = true;
			ko.start_pfn = n * o->split_part / o->split_parts;
			ko.end_pfn = n * (o->split_part + 1) / o->split_parts;
		}
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
	free_image(&im);
}

struct kp_error *sk_open(const struct sk_opts *o, struct kp_kernel **ret)
{
	uint8_t *buf;
	size_t len;
	char path[64];
	sk_build(o, &buf, &len);
	int fd = memfd_create("synth", MFD_CLOEXEC);
	if (fd < 0)
		sk_die("memfd_create");
	for (size_t at = 0; at < len;) {
		ssize_t n = write(fd, buf + at, len - at);
		if (n <= 0)
			sk_die("writing the synthetic dump");
		at += (size_t)n;
	}
	free(buf);
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	KP_OPTS(kp_open_options, opts, .core = path);
	struct kp_error *err = kp_kernel_open(&opts, ret);
	close(fd);
	return err;
}

static FILE *open_out(const char *dir, const char *name, char **path_ret)
{
	char *path;
	if (asprintf(&path, "%s/%s", dir, name) < 0)
		sk_die("out of memory");
	FILE *f = fopen(path, "w");
	if (!f) {
		fprintf(stderr, "synthkernel: %s: %s\n", path, strerror(errno));
		abort();
	}
	*path_ret = path;
	return f;
}

static void close_out(FILE *f, char *path)
{
	if (ferror(f) | fclose(f)) {
		fprintf(stderr, "synthkernel: %s: write error\n", path);
		abort();
	}
	free(path);
}

void sk_write_files(const char *dir, const struct sk_opts *o)
{
	struct sk_opts elf = *o;
	elf.format = SK_ELF;
	uint8_t *buf;
	size_t len;
	sk_build(&elf, &buf, &len);
	char *path;
	FILE *f = open_out(dir, "synth.core", &path);
	fwrite(buf, 1, len, f);
	close_out(f, path);
	free(buf);

	// The kdump of the same kernel as the 2 parts of a split dump.
	for (unsigned i = 0; i < 2; i++) {
		struct sk_opts part = *o;
		part.format = SK_KDUMP;
		part.split_parts = 2;
		part.split_part = i;
		sk_build(&part, &buf, &len);
		f = open_out(dir, i ? "synth.part2" : "synth.part1", &path);
		fwrite(buf, 1, len, f);
		close_out(f, path);
		free(buf);
	}

	struct image im;
	build_image(o, &im);
	f = open_out(dir, "synth.kallsyms", &path);
	for (size_t i = 0; i < im.nsyms; i++)
		fprintf(f, "%016" PRIx64 " %c %s\n", im.syms[i].address, im.syms[i].type,
			im.syms[i].name);
	close_out(f, path);

	f = open_out(dir, "synth.btf", &path);
	fwrite(im.m + PA(SK_BTF), 1, im.btf_size, f);
	close_out(f, path);

	f = open_out(dir, "synth.layout", &path);
	fprintf(f, "TEXT=0x%" PRIx64 "\nDATA=0x%" PRIx64 "\nHOLE=0x%" PRIx64 "\n"
		   "INIT_TASK=0x%" PRIx64 "\nTASK2=0x%" PRIx64 "\nPGD=0x%" PRIx64 "\n"
		   "DIRECT=0x%" PRIx64 "\nVMALLOC=0x%" PRIx64 "\nPHYS_BASE=0x%" PRIx64 "\n"
		   "HOLE_START=0x%" PRIx64 "\nHOLE_PA=0x%" PRIx64 "\n"
		   "TASK2_PA=0x%" PRIx64 "\nT_REAL_PARENT=0x%x\n",
		SK_TEXT, SK_DATA, SK_HOLE, SK_INIT_TASK, sk_task_va(o, 1), im.pg->root, SK_DIRECT,
		SK_VMALLOC, SK_PHYS_BASE, SK_HOLE - 8, PA(SK_HOLE), sk_task_pa(o, 1), SK_T_REAL_PARENT);
	close_out(f, path);
	free_image(&im);
}
