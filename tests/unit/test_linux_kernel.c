// SPDX-License-Identifier: MIT
// The public kernel-object helpers end to end (kp_tasks, kp_modules,
// kp_loadavg, kp_printk_each) on a synthetic kernel (tests/gen/mkkernel_btf.c)
// whose BTF describes 6.1-like struct layouts (at offsets of our own), so
// that the BTF layout lookups are exercised, not only the walkers.
#include <stdlib.h>

#include <bpf/btf.h>

#include "test.h"
#include "collect.h"
#include "../gen/mkbtf.h"
#include "core/kernel.h"
#include "linux/module/module.h"
#include "symbols/symtab.h"

struct ids {
	int int_, uint, ulong, char_, u8, u16, u64, s64, ptr, list, atomic_long, atomic;
};

static void must(int id)
{
	if (id < 0)
		abort();
}

static int array(struct btf *b, int elem, int n, int index_type)
{
	int id = btf__add_array(b, index_type, elem, n);
	must(id);
	return id;
}

#define FIELD(b, name, type, byte) must(btf__add_field(b, name, type, (byte) * 8, 0))

// 6.4+ (module.mem[]) instead of core_layout/init_layout when mem is true.
static void *build_btf(bool mem, size_t *size_ret)
{
	struct btf *b = btf__new_empty();
	struct ids t;
	must(t.int_ = btf__add_int(b, "int", 4, BTF_INT_SIGNED));
	must(t.uint = btf__add_int(b, "unsigned int", 4, 0));
	must(t.ulong = btf__add_int(b, "long unsigned int", 8, 0));
	must(t.char_ = btf__add_int(b, "char", 1, BTF_INT_CHAR));
	must(t.u8 = btf__add_int(b, "unsigned char", 1, 0));
	must(t.u16 = btf__add_int(b, "short unsigned int", 2, 0));
	must(t.u64 = btf__add_int(b, "long long unsigned int", 8, 0));
	must(t.s64 = btf__add_int(b, "long long int", 8, BTF_INT_SIGNED));
	int fwd = btf__add_fwd(b, "opaque", BTF_FWD_STRUCT);
	must(t.ptr = btf__add_ptr(b, fwd));
	must(t.list = btf__add_struct(b, "list_head", 16));
	FIELD(b, "next", t.ptr, 0);
	FIELD(b, "prev", t.ptr, 8);
	int a64 = btf__add_struct(b, NULL, 8);
	must(a64);
	FIELD(b, "counter", t.s64, 0);
	must(t.atomic_long = btf__add_typedef(b, "atomic_long_t", a64));
	int a32 = btf__add_struct(b, NULL, 4);
	must(a32);
	FIELD(b, "counter", t.int_, 0);
	must(t.atomic = btf__add_typedef(b, "atomic_t", a32));
	int comm = array(b, t.char_, 16, t.int_);
	int name = array(b, t.char_, 56, t.int_);

	// x86-64 5.16+: cpu lives in thread_info.
	int ti = btf__add_struct(b, "thread_info", 24);
	must(ti);
	FIELD(b, "flags", t.ulong, 0);
	FIELD(b, "status", t.uint, 16);
	FIELD(b, "cpu", t.uint, 20);
	must(btf__add_struct(b, "task_struct", 256));
	FIELD(b, "thread_info", ti, 0);
	FIELD(b, "__state", t.uint, 24);
	FIELD(b, "flags", t.uint, 28);
	FIELD(b, "tasks", t.list, 32);
	FIELD(b, "exit_state", t.int_, 48);
	FIELD(b, "pid", t.int_, 52);
	FIELD(b, "tgid", t.int_, 56);
	FIELD(b, "real_parent", t.ptr, 64);
	FIELD(b, "thread_group", t.list, 72);
	FIELD(b, "thread_node", t.list, 88);
	FIELD(b, "comm", comm, 104);
	FIELD(b, "signal", t.ptr, 120);
	must(btf__add_struct(b, "signal_struct", 64));
	FIELD(b, "nr_threads", t.int_, 8);
	FIELD(b, "thread_head", t.list, 16);

	int ms = btf__add_enum(b, "module_state", 4);
	must(ms);
	must(btf__add_enum_value(b, "MODULE_STATE_LIVE", 0));
	must(btf__add_enum_value(b, "MODULE_STATE_COMING", 1));
	must(btf__add_enum_value(b, "MODULE_STATE_GOING", 2));
	must(btf__add_enum_value(b, "MODULE_STATE_UNFORMED", 3));
	int layout;
	if (mem) {
		must(layout = btf__add_struct(b, "module_memory", 32));
		FIELD(b, "base", t.ptr, 0);
		FIELD(b, "size", t.uint, 8);
	} else {
		must(layout = btf__add_struct(b, "module_layout", 80));
		FIELD(b, "base", t.ptr, 0);
		FIELD(b, "size", t.uint, 8);
		FIELD(b, "text_size", t.uint, 12);
	}
	// Module symbols (module_symbols.c): kallsyms, exports.
	int mk = btf__add_struct(b, "mod_kallsyms", 32);
	must(mk);
	FIELD(b, "symtab", t.ptr, 0);
	FIELD(b, "num_symtab", t.uint, 8);
	FIELD(b, "strtab", t.ptr, 16);
	FIELD(b, "typetab", t.ptr, 24);
	must(btf__add_struct(b, "elf64_sym", 24));
	FIELD(b, "st_name", t.uint, 0);
	FIELD(b, "st_info", t.u8, 4);
	FIELD(b, "st_other", t.u8, 5);
	FIELD(b, "st_shndx", t.u16, 6);
	FIELD(b, "st_value", t.u64, 8);
	FIELD(b, "st_size", t.u64, 16);
	int ks = btf__add_struct(b, "kernel_symbol", 12);
	must(ks);
	FIELD(b, "value_offset", t.int_, 0);
	FIELD(b, "name_offset", t.int_, 4);
	FIELD(b, "namespace_offset", t.int_, 8);
	int mk_ptr = btf__add_ptr(b, mk), ks_ptr = btf__add_ptr(b, ks);
	must(mk_ptr);
	must(ks_ptr);
	int mem_arr = mem ? array(b, layout, 7, t.int_) : 0;
	must(btf__add_struct(b, "module", 512));
	FIELD(b, "state", ms, 0);
	FIELD(b, "list", t.list, 8);
	FIELD(b, "name", name, 24);
	FIELD(b, "kallsyms", mk_ptr, 400);
	FIELD(b, "syms", ks_ptr, 416);
	FIELD(b, "num_syms", t.uint, 424);
	if (mem) {
		FIELD(b, "mem", mem_arr, 80);	// 7 * 32 = 224 bytes
	} else {
		FIELD(b, "core_layout", layout, 80);
		FIELD(b, "init_layout", layout, 160);
	}
	FIELD(b, "refcnt", t.atomic, 320);

	int dr = btf__add_struct(b, "prb_desc_ring", 48);
	must(dr);
	FIELD(b, "count_bits", t.uint, 0);
	FIELD(b, "descs", t.ptr, 8);
	FIELD(b, "infos", t.ptr, 16);
	FIELD(b, "head_id", t.atomic_long, 24);
	FIELD(b, "tail_id", t.atomic_long, 32);
	FIELD(b, "last_finalized_id", t.atomic_long, 40);
	int tr = btf__add_struct(b, "prb_data_ring", 32);
	must(tr);
	FIELD(b, "size_bits", t.uint, 0);
	FIELD(b, "data", t.ptr, 8);
	FIELD(b, "head_lpos", t.atomic_long, 16);
	FIELD(b, "tail_lpos", t.atomic_long, 24);
	must(btf__add_struct(b, "printk_ringbuffer", 88));
	FIELD(b, "desc_ring", dr, 0);
	FIELD(b, "text_data_ring", tr, 48);
	FIELD(b, "fail", t.atomic_long, 80);
	int lpos = btf__add_struct(b, "prb_data_blk_lpos", 16);
	must(lpos);
	FIELD(b, "begin", t.ulong, 0);
	FIELD(b, "next", t.ulong, 8);
	must(btf__add_struct(b, "prb_desc", 24));
	FIELD(b, "state_var", t.atomic_long, 0);
	FIELD(b, "text_blk_lpos", lpos, 8);
	must(btf__add_struct(b, "printk_info", 88));
	FIELD(b, "seq", t.u64, 0);
	FIELD(b, "ts_nsec", t.u64, 8);
	FIELD(b, "text_len", t.u16, 16);
	FIELD(b, "facility", t.u8, 18);
	must(btf__add_field(b, "flags", t.u8, 19 * 8, 5));
	must(btf__add_field(b, "level", t.u8, 19 * 8 + 5, 3));
	FIELD(b, "caller_id", t.uint, 20);

	int task_ptr = btf__add_ptr(b, btf__find_by_name_kind(b, "task_struct", BTF_KIND_STRUCT));
	must(task_ptr);
	int rq = btf__add_struct(b, "rq", 64);
	must(rq);
	FIELD(b, "nr_running", t.uint, 4);
	FIELD(b, "curr", task_ptr, 8);
	// A per-CPU variable as vmlinux BTF has them.
	int rq_var = btf__add_var(b, "runqueues", BTF_VAR_GLOBAL_ALLOCATED, rq);
	must(rq_var);
	must(btf__add_datasec(b, ".data..percpu", 0x100));
	must(btf__add_datasec_var_info(b, rq_var, 0x40, 64));
	// panic (panic.c): atomic_t panic_cpu, the taint_flags table.
	must(btf__add_struct(b, "taint_flag", 3));
	FIELD(b, "c_true", t.char_, 0);
	FIELD(b, "c_false", t.char_, 1);
	FIELD(b, "module", t.u8, 2);
	int tf = btf__add_enum(b, NULL, 4);
	must(tf);
	must(btf__add_enum_value(b, "TAINT_FLAGS_COUNT", 10));
	int idr = btf__add_struct(b, "idr", 24);
	must(idr);
	FIELD(b, "idr_base", t.uint, 16);
	FIELD(b, "idr_next", t.uint, 20);
	must(btf__add_struct(b, "pid_namespace", 136));
	FIELD(b, "idr", idr, 0);

	uint32_t size;
	const void *raw = btf__raw_data(b, &size);
	void *copy = raw ? malloc(size) : NULL;
	if (!copy)
		abort();
	memcpy(copy, raw, size);
	btf__free(b);
	*size_ret = size;
	return copy;
}

#define A(off) (MKK_BASE + (off))
#define TASK(i) A(0x1000 + 0x100 * (i))
#define SIG(i) A(0x2000 + 0x40 * (i))
#define MOD(i) A(0x3000 + 0x200 * (i))
#define MODULES A(0x2f00)
#define MOD_TEXT 0xffffffffc0000000ULL

static void list_link(struct kp_kernel *k, const uint64_t *nodes, int n)
{
	for (int i = 0; i < n; i++) {
		mkk_put_u64(k, nodes[i], nodes[(i + 1) % n]);
		mkk_put_u64(k, nodes[i] + 8, nodes[(i + n - 1) % n]);
	}
}

static void task(struct kp_kernel *k, int i, int pid, int tgid, int parent, uint32_t state,
		 const char *comm, uint32_t cpu, uint32_t flags)
{
	uint64_t t = TASK(i);
	mkk_put_u32(k, t + 20, cpu);
	mkk_put_u32(k, t + 24, state);
	mkk_put_u32(k, t + 28, flags);
	mkk_put_u32(k, t + 52, (uint32_t)pid);
	mkk_put_u32(k, t + 56, (uint32_t)tgid);
	mkk_put_u64(k, t + 64, TASK(parent));
	mkk_put(k, t + 104, comm, strlen(comm) + 1);
	mkk_put_u64(k, t + 120, SIG(tgid == pid ? i : parent));
}

static void printk_records(struct kp_kernel *k, const char *const texts[2]);

static struct kp_kernel *scene(bool mem)
{
	size_t size;
	void *blob = build_btf(mem, &size);
	struct kp_kernel *k = mkk_create(MKK_BTF_FILE, blob, size);
	free(blob);
	// Tasks: swapper (0), init (1) with a second thread (3), kthreadd (2).
	mkk_symbol(k, "init_task", TASK(0), 'D');
	task(k, 0, 0, 0, 0, 0, "swapper/0", 0, 0x00200000);
	task(k, 1, 1, 1, 0, 1, "init", 1, 0);
	task(k, 2, 2, 2, 0, 1, "kthreadd", 0, 0x00200000);
	task(k, 3, 3, 1, 1, 2, "init-worker", 1, 0);
	mkk_put_u64(k, TASK(3) + 120, SIG(1));
	uint64_t tl[] = {TASK(0) + 32, TASK(1) + 32, TASK(2) + 32};
	list_link(k, tl, 3);
	for (int i = 0; i < 3; i++) {
		uint64_t th[] = {SIG(i) + 16, TASK(i) + 88, TASK(3) + 88};
		list_link(k, th, i == 1 ? 3 : 2);
	}
	// Modules: newest first as the kernel adds them.
	mkk_symbol(k, "modules", MODULES, 'D');
	const char *names[] = {"virtio_net", "e1000"};
	for (int i = 0; i < 2; i++) {
		uint64_t m = MOD(i);
		mkk_put_u32(k, m, 0);
		mkk_put(k, m + 24, names[i], strlen(names[i]) + 1);
		mkk_put_u64(k, m + 80, 0xffffffffc0000000ULL + 0x10000 * (uint64_t)i);
		mkk_put_u32(k, m + 88, 0x4000);
		mkk_put_u32(k, m + 80 + (mem ? 32 : 80) + 8, 0x1000);	// second area
		mkk_put_u32(k, m + 320, 1 + (uint32_t)i);
	}
	uint64_t ml[] = {MODULES, MOD(0) + 8, MOD(1) + 8};
	list_link(k, ml, 3);
	// virtio_net's symbols: a nameless one, a local function, one it
	// exports, and data whose name it exports at another address.
	uint64_t mk = A(0x7000), symtab = A(0x7100), strtab = A(0x7200), typetab = A(0x7300),
		 exports = A(0x7400);
	static const char strs[] = "\0vn_probe\0vn_exported\0vn_data";
	const uint32_t st_name[] = {0, 1, 10, 22};
	const uint64_t value[] = {0, MOD_TEXT + 0x100, MOD_TEXT + 0x200, MOD_TEXT + 0x2000};
	mkk_put_u64(k, MOD(0) + 400, mk);
	mkk_put_u64(k, mk, symtab);
	mkk_put_u32(k, mk + 8, 4);
	mkk_put_u64(k, mk + 16, strtab);
	mkk_put_u64(k, mk + 24, typetab);
	for (int i = 0; i < 4; i++) {
		mkk_put_u32(k, symtab + 24 * (uint64_t)i, st_name[i]);
		mkk_put_u64(k, symtab + 24 * (uint64_t)i + 8, value[i]);
	}
	mkk_put(k, strtab, strs, sizeof(strs));
	mkk_put(k, typetab, "?ttd", 4);
	// Exports, PREL32: vn_exported at its address, vn_data elsewhere.
	mkk_put_u64(k, MOD(0) + 416, exports);
	mkk_put_u32(k, MOD(0) + 424, 2);
	const uint64_t ev[] = {value[2], value[3] + 8}, en[] = {strtab + 10, strtab + 22};
	for (uint64_t i = 0; i < 2; i++) {
		uint64_t at = exports + 12 * i;
		mkk_put_u32(k, at, (uint32_t)(ev[i] - at));
		mkk_put_u32(k, at + 4, (uint32_t)(en[i] - (at + 4)));
	}
	// e1000's table is corrupt: it loses its own symbols only.
	mkk_put_u64(k, MOD(1) + 400, A(0x7800));
	mkk_put_u64(k, A(0x7800), A(0x7900));
	mkk_put_u32(k, A(0x7800) + 8, 0x40000000);
	// loadavg: avenrun, nr_threads, init_pid_ns, one online CPU's rq.
	mkk_symbol(k, "avenrun", A(0x4000), 'D');
	mkk_put_u64(k, A(0x4000), 2048 + 1024);	// 1.50
	mkk_put_u64(k, A(0x4008), 205);		// 0.10
	mkk_put_u64(k, A(0x4010), 0);
	mkk_symbol(k, "nr_threads", A(0x4020), 'D');
	mkk_put_u32(k, A(0x4020), 4);
	mkk_symbol(k, "init_pid_ns", A(0x4100), 'D');
	mkk_put_u32(k, A(0x4100) + 20, 124);
	mkk_symbol(k, "__cpu_online_mask", A(0x4200), 'D');
	mkk_put_u64(k, A(0x4200), 0x5);	// CPUs 0 and 2
	mkk_symbol(k, "nr_cpu_ids", A(0x4210), 'D');
	mkk_put_u32(k, A(0x4210), 4);
	mkk_symbol(k, "__per_cpu_offset", A(0x4300), 'D');
	for (int c = 0; c < 4; c++)
		mkk_put_u64(k, A(0x4300) + 8 * (uint64_t)c, A(0x5000 + 0x100 * (uint64_t)c));
	mkk_symbol(k, "runqueues", 0x40, 'A');	// per-CPU offset
	for (int c = 0; c < 4; c++)
		mkk_put_u32(k, A(0x5000 + 0x100 * (uint64_t)c) + 0x40 + 4, 1 + (uint32_t)c);
	// printk: 4 descriptors, 64 bytes of text, two records.
	uint64_t rb = A(0x6000), descs = A(0x6100), infos = A(0x6200), data = A(0x6400);
	mkk_symbol(k, "prb", A(0x6800), 'D');
	mkk_put_u64(k, A(0x6800), rb);
	mkk_put_u32(k, rb + 0, 2);
	mkk_put_u64(k, rb + 8, descs);
	mkk_put_u64(k, rb + 16, infos);
	mkk_put_u64(k, rb + 24, 1);	// head_id
	mkk_put_u64(k, rb + 32, 0);	// tail_id
	mkk_put_u32(k, rb + 48, 6);
	mkk_put_u64(k, rb + 56, data);
	const char *texts[] = {"hello", "world\nline2"};
	printk_records(k, texts);
	return k;
}

// The two records of the printk ring (64 bytes of text in all).
static void printk_records(struct kp_kernel *k, const char *const texts[2])
{
	uint64_t descs = A(0x6100), infos = A(0x6200), data = A(0x6400);
	uint64_t lpos = 0;
	for (uint64_t id = 0; id < 2; id++) {
		size_t len = strlen(texts[id]);
		uint64_t blk = (8 + len + 7) & ~7ULL;
		mkk_put_u64(k, descs + 24 * id, (2ULL << 62) | id);
		mkk_put_u64(k, descs + 24 * id + 8, lpos);
		mkk_put_u64(k, descs + 24 * id + 16, lpos + blk);
		mkk_put_u64(k, data + lpos, id);
		mkk_put(k, data + lpos + 8, texts[id], len);
		lpos += blk;
		mkk_put_u64(k, infos + 88 * id, id);
		mkk_put_u64(k, infos + 88 * id + 8, 1000000000ULL * (id + 1) + 5000);
		uint16_t tl16 = (uint16_t)len;
		mkk_put(k, infos + 88 * id + 16, &tl16, 2);
		uint8_t fl = (uint8_t)((id ? 3 : 6) << 5 | 2);
		mkk_put(k, infos + 88 * id + 19, &fl, 1);
	}
}

TEST(tasks_through_btf)
{
	struct kp_kernel *k = scene(false);
	struct kp_task *t = NULL;
	size_t n = 0;
	CHECK_OK(kpt_tasks(k, true, &t, &n));
	CHECK_U64(n, 4);
	if (n == 4) {
		CHECK_STR(t[0].comm, "swapper/0");
		CHECK(t[0].kthread && t[0].state == 'R');
		CHECK_STR(t[1].comm, "init");
		CHECK_U64(t[1].cpu, 1);
		CHECK(t[1].state == 'S');
		CHECK_STR(t[2].comm, "init-worker");	// threads follow their leader
		CHECK_U64(t[2].pid, 3);
		CHECK_U64(t[2].tgid, 1);
		CHECK(t[2].state == 'D');
		CHECK_STR(t[3].comm, "kthreadd");
		CHECK_U64(t[3].ppid, 0);
	}
	free(t);
	CHECK_OK(kpt_tasks(k, false, &t, &n));
	CHECK_U64(n, 3);
	free(t);
	mkk_destroy(k);
}

TEST(modules_through_btf_both_layouts)
{
	for (int mem = 0; mem < 2; mem++) {
		struct kp_kernel *k = scene(mem);
		struct kp_module *m = NULL;
		size_t n = 0;
		CHECK_OK(kpt_modules(k, &m, &n));
		CHECK_U64(n, 2);
		if (n == 2) {
			CHECK_STR(m[0].name, "virtio_net");
			CHECK_U64(m[0].size, 0x5000);
			CHECK_U64(m[0].base, 0xffffffffc0000000ULL);
			CHECK_U64(m[0].refcnt, 0);
			CHECK_STR(m[1].name, "e1000");
			CHECK_U64(m[1].refcnt, 1);
			CHECK_STR(m[1].state_name, "Live");
		}
		free(m);
		mkk_destroy(k);
	}
}

TEST(module_symbols_as_proc_kallsyms)
{
	for (int mem = 0; mem < 2; mem++) {
		struct kp_kernel *k = scene(mem);
		struct kp_symtab *st = NULL;
		size_t added = 0;
		CHECK_OK(kp_symtab_create(&st));
		CHECK_ERR(kp_lx_module_symbols(k, st, &added), KP_ERR_FORMAT,
			  "module e1000 (struct module at 0x");
		CHECK_U64(added, 3);
		static const struct { const char *name; uint64_t value; char type; } want[] = {
			{ "vn_probe", MOD_TEXT + 0x100, 't' },
			{ "vn_exported", MOD_TEXT + 0x200, 'T' },
			{ "vn_data", MOD_TEXT + 0x2000, 'd' },
		};
		for (int i = 0; i < 3; i++) {
			struct kp_symbol sym;
			CHECK_OK(kp_symtab_by_name(st, want[i].name, &sym));
			CHECK_U64(sym.address, want[i].value);
			CHECK(sym.type == want[i].type);
			CHECK_STR(sym.module, "virtio_net");
		}
		CHECK_U64(kp_symtab_count(st), 3);
		kp_symtab_destroy(st);

		// Through the kernel handle: read when a name or address misses.
		kp_kernel_set_late_symbols(k, kp_lx_module_symbols, "module symbols (memory)");
		struct kp_symbol sym;
		CHECK_OK(kp_symbol_by_name(k, "avenrun", &sym));
		CHECK(sym.module == NULL);
		CHECK_OK(kp_symbol_by_address(k, MOD_TEXT + 0x104, &sym));
		CHECK_STR(sym.name, "vn_probe");
		CHECK_STR(sym.module, "virtio_net");
		CHECK_OK(kp_symbol_by_name(k, "vn_exported", &sym));
		CHECK(sym.type == 'T');
		char buf[128];
		CHECK(kp_symbolize(k, MOD_TEXT + 0x208, buf, sizeof(buf)));
		CHECK_STR(buf, "vn_exported+0x8/0x1e00 [virtio_net]");
		mkk_destroy(k);
	}
}

// panic_cpu, the panic record and the one before it, the task current on
// the panicking CPU, the taint letters as print_tainted() writes them.
TEST(panic_summary)
{
	struct kp_kernel *k = scene(false);
	KP_INIT(kp_panic, p);
	// Not yet panicked: panic_cpu -1, no panic record.
	mkk_symbol(k, "panic_cpu", A(0x4400), 'D');
	mkk_put_u32(k, A(0x4400), (uint32_t)-1);
	mkk_symbol(k, "tainted_mask", A(0x4408), 'D');
	CHECK_OK(kp_panic_get(k, &p));
	CHECK(!p.panicked && p.cpu == -1 && !p.message[0] && !p.has_task);
	CHECK_STR(p.taint, "Not tainted");

	// CPU 2 panics in init after a BUG; W is set.
	mkk_put_u32(k, A(0x4400), 2);
	mkk_put_u64(k, A(0x5000 + 0x200) + 0x40 + 8, TASK(1));	// per_cpu(runqueues, 2).curr
	static const char *const texts[2] = {"BUG: x", "Kernel panic - not syncing: Fatal"};
	printk_records(k, texts);
	mkk_put_u64(k, A(0x4408), 1u << 9);
	mkk_symbol(k, "taint_flags", A(0x4480), 'R');
	for (int i = 0; i < 10; i++) {
		char e[3] = { "PFSRMBUDAW"[i], i ? ' ' : 'G', 0 };
		mkk_put(k, A(0x4480) + 3 * (uint64_t)i, e, 3);
	}
	CHECK_OK(kp_panic_get(k, &p));
	CHECK(p.panicked);
	CHECK_U64(p.cpu, 2);
	CHECK_STR(p.message, "Kernel panic - not syncing: Fatal");
	CHECK_STR(p.oops, "BUG: x");
	CHECK_U64(p.ts_nsec, 2000005000);
	CHECK(p.has_task);
	CHECK_U64(p.task, TASK(1));
	CHECK_U64(p.pid, 1);
	CHECK_STR(p.comm, "init");
	CHECK_STR(p.taint, "Tainted: G        W");

	// A dump without the panicking task_struct (a page makedumpfile
	// excluded): the address is rq->curr, PID and comm the log's line of
	// that CPU, and task_error says why.
	static const char *const cpu_line[2] = {
		"Kernel panic - not syncing: Fatal",
		"CPU: 2 UID: 0 PID: 217 Comm: kp_hog Kdump: loaded Tainted: G        W          6.12.0-synth #1",
	};
	mkk_put_u32(k, A(0x6000) + 48, 8);	// 256 bytes of text
	printk_records(k, cpu_line);
	mkk_put_u64(k, A(0x5000 + 0x200) + 0x40 + 8, 0xdead000000000000ULL);
	CHECK_OK(kp_panic_get(k, &p));
	CHECK(p.panicked && p.has_task && !p.from_log);
	CHECK_U64(p.task, 0xdead000000000000ULL);
	CHECK_U64(p.pid, 217);
	CHECK_STR(p.comm, "kp_hog");
	CHECK(strstr(p.task_error, "task_struct at 0xdead000000000000"));
	// The log's line names another CPU: the task is unknown.
	mkk_put_u32(k, A(0x4400), 1);
	mkk_put_u64(k, A(0x5000 + 0x100) + 0x40 + 8, 0xdead000000000000ULL);
	CHECK_OK(kp_panic_get(k, &p));
	CHECK(p.panicked && !p.has_task && p.task_error[0]);

	// A panic_cpu that names no CPU of this kernel is corrupt.
	mkk_put_u32(k, A(0x4400), 7);
	CHECK_ERR(kp_panic_get(k, &p), KP_ERR_INVALID, "panic_cpu is 7");
	mkk_destroy(k);
}

TEST(loadavg_through_btf)
{
	struct kp_kernel *k = scene(false);
	KP_INIT(kp_loadavg, la);
	CHECK_OK(kp_loadavg(k, &la));
	CHECK_U64(la.avenrun[0], 3072);
	char buf[16];
	kp_loadavg_format(la.avenrun[0], buf);
	CHECK_STR(buf, "1.50");
	CHECK(la.has_running);
	CHECK_U64(la.running, 1 + 3);	// CPUs 0 and 2
	CHECK(la.has_total);
	CHECK_U64(la.total, 4);
	CHECK_U64(la.last_pid, 123);

	// Every run queue empty (an idle kernel's dump): 0, and known.
	for (int c = 0; c < 4; c++)
		mkk_put_u32(k, A(0x5000 + 0x100 * (uint64_t)c) + 0x40 + 4, 0);
	CHECK_OK(kp_loadavg(k, &la));
	CHECK(la.has_running);
	CHECK_U64(la.running, 0);

	// CPU 2's run queue outside memory: nr_running unknown, not the sum
	// of the others.
	mkk_put_u64(k, A(0x4300) + 8 * 2, 0xdead000000000000ULL);
	KP_INIT(kp_loadavg, la2);
	CHECK_OK(kp_loadavg(k, &la2));
	CHECK(!la2.has_running);
	CHECK(la2.has_total);
	CHECK_U64(la2.avenrun[0], 3072);
	CHECK_U64(la2.last_pid, 123);
	mkk_destroy(k);
}

struct recs {
	int n;
	char text[4][32];
	int level[4];
	uint64_t ts[4];
};

static struct kp_error *collect(const struct kp_printk_record *rec, void *arg)
{
	struct recs *r = arg;
	if (r->n < 4) {
		snprintf(r->text[r->n], 32, "%.*s", (int)rec->len, rec->text);
		r->level[r->n] = rec->level;
		r->ts[r->n] = rec->ts_nsec;
	}
	r->n++;
	return NULL;
}

TEST(printk_through_btf_with_bitfields)
{
	struct kp_kernel *k = scene(false);
	struct recs r = {0};
	CHECK_OK(kpt_printk(k, collect, &r));
	CHECK_U64(r.n, 2);
	CHECK_STR(r.text[0], "hello");
	CHECK_STR(r.text[1], "world\nline2");
	CHECK_U64(r.level[0], 6);
	CHECK_U64(r.level[1], 3);
	CHECK_U64(r.ts[1], 2000005000ULL);
	mkk_destroy(k);
}

TEST(printk_corrupt_ring_is_an_error_naming_where)
{
	struct kp_kernel *k = scene(false);
	struct recs r = {0};
	uint64_t rb = A(0x6000);
	mkk_put_u64(k, rb + 8, 0xffffc90000000000ULL);	// descs unmapped
	CHECK_ERR(kpt_printk(k, collect, &r), KP_ERR_FAULT,
		  "printk descriptors at 0xffffc90000000000");
	mkk_put_u64(k, rb + 8, A(0x6100));
	mkk_put_u32(k, rb + 0, 40);	// count_bits
	CHECK_ERR(kpt_printk(k, collect, &r), KP_ERR_FORMAT, "count_bits 40");
	mkk_put_u32(k, rb + 0, 2);
	mkk_put_u32(k, rb + 48, 3);	// size_bits below any real buffer
	CHECK_ERR(kpt_printk(k, collect, &r), KP_ERR_FORMAT, "size_bits 3");
	// Within the fixed limits but more than the 128 KiB the source holds:
	// corrupt, refused before anything that size is allocated.
	mkk_put_u32(k, rb + 0, 20);
	mkk_put_u32(k, rb + 48, 25);
	CHECK_ERR(kpt_printk(k, collect, &r), KP_ERR_FORMAT,
		  "is corrupt: its 150994944 bytes (count_bits 20, size_bits 25) are more than "
		  "the 131072 bytes of memory in the source");
	CHECK_U64(r.n, 0);
	mkk_destroy(k);
}

TEST(task_list_fault_names_the_task)
{
	struct kp_kernel *k = scene(false);
	mkk_put_u64(k, TASK(1) + 32, 0xffffc90000000000ULL + 32);
	struct kp_task *t;
	size_t n;
	CHECK_ERR(kpt_tasks(k, false, &t, &n), KP_ERR_FAULT, "reading the node at 0xffffc90000000020");
	mkk_destroy(k);
}

// A gap in the task list (a page a filtered dump lacks) ends the forward
// walk; the tasks behind the gap, read backwards from init_task, are
// yielded in order, then the fault is the walk's last word.
TEST(task_list_gap_resumes_from_the_other_end)
{
	struct kp_kernel *k = scene(false);
	mkk_put_u64(k, TASK(1) + 32, 0xffffc90000000000ULL + 32);
	struct kp_task_iter *it;
	CHECK_OK(kp_task_iter_create(k, 0, &it));
	const struct kp_task *t;
	int pids[8], n = 0, calls = 0;
	struct kp_error *err = NULL;
	while (calls++ < 16 && !(err = kp_task_iter_next(it, &t)) && t)
		pids[n++ & 7] = t->pid;
	CHECK(err && err->code == KP_ERR_FAULT && strstr(err->message, "0xffffc90000000020"));
	kp_error_destroy(err);
	// The error was the last word: the walk stays done.
	CHECK_OK(kp_task_iter_next(it, &t));
	CHECK(t == NULL);
	KP_INIT(kp_walk_status, st);
	kp_task_iter_status(it, &st);
	CHECK(st.end == KP_WALK_STOPPED);
	kp_task_iter_destroy(it);
	CHECK_U64(n, 3);
	if (n == 3) {
		CHECK_U64(pids[0], 0);
		CHECK_U64(pids[1], 1);
		CHECK_U64(pids[2], 2);
	}
	// A corrupt link behind the gap is the error then, not a wrong list.
	mkk_put_u64(k, TASK(2) + 32, TASK(1) + 32);	// kthreadd->next is not the head
	CHECK_OK(kp_task_iter_create(k, 0, &it));
	calls = 0;
	while (calls++ < 16 && !(err = kp_task_iter_next(it, &t)) && t)
		;
	CHECK(err && err->code == KP_ERR_FORMAT && strstr(err->message, "task list is corrupt"));
	kp_error_destroy(err);
	kp_task_iter_destroy(it);
	mkk_destroy(k);
}

TEST(missing_symbols_are_clear_errors)
{
	struct kp_kernel *k = mkk_create(MKK_BTF_NONE, NULL, 0);
	struct kp_task *t;
	size_t n;
	KP_INIT(kp_loadavg, la);
	struct kp_error *err = kpt_tasks(k, false, &t, &n);
	CHECK(err != NULL);
	kp_error_destroy(err);
	err = kp_loadavg(k, &la);
	CHECK(err && strstr(err->message, "avenrun"));
	kp_error_destroy(err);
	mkk_destroy(k);
}

int main(void)
{
	RUN(tasks_through_btf);
	RUN(modules_through_btf_both_layouts);
	RUN(module_symbols_as_proc_kallsyms);
	RUN(panic_summary);
	RUN(loadavg_through_btf);
	RUN(printk_through_btf_with_bitfields);
	RUN(printk_corrupt_ring_is_an_error_naming_where);
	RUN(task_list_fault_names_the_task);
	RUN(task_list_gap_resumes_from_the_other_end);
	RUN(missing_symbols_are_clear_errors);
	return TEST_SUMMARY();
}
