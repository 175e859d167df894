// SPDX-License-Identifier: MIT
// mkbtf: builds the test BTF described in mkbtf.h with libbpf.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/btf.h>
#include <linux/btf.h>

#include "mkbtf.h"

static int must(int id, const char *what)
{
	if (id < 0) {
		fprintf(stderr, "mkbtf: %s failed: %d\n", what, id);
		abort();
	}
	return id;
}

#define M(call) must((call), #call)

void *mkbtf_build(size_t *size_ret)
{
	struct btf *btf = btf__new_empty();
	if (!btf)
		abort();
	int t_int = M(btf__add_int(btf, "int", 4, BTF_INT_SIGNED));
	int t_uint = M(btf__add_int(btf, "unsigned int", 4, 0));
	int t_long = M(btf__add_int(btf, "long int", 8, BTF_INT_SIGNED));
	int t_ulong = M(btf__add_int(btf, "long unsigned int", 8, 0));
	int t_char = M(btf__add_int(btf, "char", 1, BTF_INT_SIGNED));
	M(btf__add_int(btf, "unsigned char", 1, 0));
	int t_bool = M(btf__add_int(btf, "_Bool", 1, BTF_INT_BOOL));
	int t_ull = M(btf__add_int(btf, "long long unsigned int", 8, 0));
	int t___u64 = M(btf__add_typedef(btf, "__u64", t_ull));
	int t_u64 = M(btf__add_typedef(btf, "u64", t___u64));
	int t_kpid = M(btf__add_typedef(btf, "__kernel_pid_t", t_int));
	int t_pid = M(btf__add_typedef(btf, "pid_t", t_kpid));

	// struct list_head { struct list_head *next, *prev; }: fields attach to
	// the struct added last, so its pointer type comes first, naming the id
	// the struct will get.
	int t_lhp = M(btf__add_ptr(btf, (int)btf__type_cnt(btf) + 1));
	int t_lh = M(btf__add_struct(btf, "list_head", 16));
	if (t_lh != t_lhp + 1)
		abort();
	M(btf__add_field(btf, "next", t_lhp, 0, 0));
	M(btf__add_field(btf, "prev", t_lhp, 64, 0));

	int t_chararr = M(btf__add_array(btf, t_int, t_char, 16));
	int t_state = M(btf__add_enum(btf, "task_state", 4));
	M(btf__add_enum_value(btf, "TASK_RUNNING", 0));
	M(btf__add_enum_value(btf, "TASK_INTERRUPTIBLE", 1));
	M(btf__add_enum_value(btf, "TASK_DEAD", 64));
	int t_big = M(btf__add_enum64(btf, "big_enum", 8, false));
	M(btf__add_enum64_value(btf, "BIG_ONE", 0x100000000ULL));
	M(btf__add_enum64_value(btf, "BIG_TWO", 0x200000000ULL));
	(void)t_big;

	int t_proto = M(btf__add_func_proto(btf, t_int));
	M(btf__add_func_param(btf, "x", t_int));
	int t_fnp = M(btf__add_ptr(btf, t_proto));
	M(btf__add_func(btf, "do_thing", BTF_FUNC_GLOBAL, t_proto));
	int t_cchar = M(btf__add_const(btf, t_char));
	int t_ccharp = M(btf__add_ptr(btf, t_cchar));

	int t_union = M(btf__add_union(btf, NULL, 4));
	M(btf__add_field(btf, "a_int", t_int, 0, 0));
	M(btf__add_field(btf, "a_uint", t_uint, 0, 0));
	int t_anon = M(btf__add_struct(btf, NULL, 8));
	M(btf__add_field(btf, "x", t_int, 0, 0));
	M(btf__add_field(btf, "y", t_int, 32, 0));

	int t_task_id = (int)btf__type_cnt(btf) + 1;	// after its pointer
	int t_taskp = M(btf__add_ptr(btf, t_task_id));
	int t_task = M(btf__add_struct(btf, "task_struct", MKBTF_TASK_SIZE));
	if (t_task != t_task_id)
		abort();
	M(btf__add_field(btf, "__state", t_uint, 0, 0));
	M(btf__add_field(btf, NULL, t_union, 32, 0));
	M(btf__add_field(btf, "tasks", t_lh, 64, 0));
	M(btf__add_field(btf, "pid", t_pid, 192, 0));
	M(btf__add_field(btf, "tgid", t_pid, 224, 0));
	M(btf__add_field(btf, "comm", t_chararr, 256, 0));
	M(btf__add_field(btf, "flag_a", t_uint, 384, 1));
	M(btf__add_field(btf, "flag_b", t_uint, 385, 3));
	M(btf__add_field(btf, "neg", t_int, 388, 4));
	M(btf__add_field(btf, "parent", t_taskp, 448, 0));
	M(btf__add_field(btf, "state", t_state, 512, 0));
	M(btf__add_field(btf, "on_cpu", t_bool, 544, 0));
	M(btf__add_field(btf, "utime", t_u64, 576, 0));
	M(btf__add_field(btf, NULL, t_anon, 640, 0));
	M(btf__add_field(btf, "fn", t_fnp, 704, 0));
	M(btf__add_field(btf, "name", t_ccharp, 768, 0));

	int t_prb = M(btf__add_struct(btf, "printk_ringbuffer", 8));
	M(btf__add_field(btf, "a", t_ulong, 0, 0));
	int t_pgd_s = M(btf__add_struct(btf, NULL, 8));
	M(btf__add_field(btf, "pgd", t_ulong, 0, 0));
	M(btf__add_typedef(btf, "pgd_t", t_pgd_s));
	int t_bits = M(btf__add_array(btf, t_int, t_ulong, 1));
	M(btf__add_struct(btf, "cpumask", 8));
	M(btf__add_field(btf, "bits", t_bits, 0, 0));
	int t_sysname = M(btf__add_array(btf, t_int, t_char, 65));
	M(btf__add_struct(btf, "uts_namespace", 65));
	M(btf__add_field(btf, "sysname", t_sysname, 0, 0));
	(void)t_prb;

	int v_global = M(btf__add_var(btf, "global_counter", BTF_VAR_GLOBAL_ALLOCATED, t_long));
	M(btf__add_datasec(btf, ".data", 8));
	M(btf__add_datasec_var_info(btf, v_global, 0, 8));
	int v_rq = M(btf__add_var(btf, "runqueue_cnt", BTF_VAR_GLOBAL_ALLOCATED, t_int));
	M(btf__add_datasec(btf, ".data..percpu", 4));
	M(btf__add_datasec_var_info(btf, v_rq, 0, 4));
	(void)t_ulong;
	(void)t_u64;
	(void)t_bool;
	(void)t_lhp;

	uint32_t size;
	const void *raw = btf__raw_data(btf, &size);
	if (!raw)
		abort();
	void *copy = malloc(size);
	if (!copy)
		abort();
	memcpy(copy, raw, size);
	btf__free(btf);
	*size_ret = size;
	return copy;
}

char *mkbtf_write_tmp(const void *blob, size_t size)
{
	char *path = strdup("/tmp/kpeek-btf-XXXXXX");
	if (!path)
		abort();
	int fd = mkstemp(path);
	if (fd < 0)
		abort();
	if (size && write(fd, blob, size) != (ssize_t)size)
		abort();
	close(fd);
	return path;
}

void *mkbtf_build_hostile(bool dangling, size_t *size_ret)
{
	struct btf *btf = btf__new_empty();
	if (!btf)
		abort();
	int t_int = M(btf__add_int(btf, "int", 4, BTF_INT_SIGNED));
	M(btf__add_int(btf, "long unsigned int", 8, 0));
	// An anonymous struct whose two unnamed members are itself.
	int self = (int)btf__type_cnt(btf);
	M(btf__add_struct(btf, NULL, 8));
	M(btf__add_field(btf, NULL, self, 0, 0));
	M(btf__add_field(btf, NULL, self, 0, 0));
	M(btf__add_field(btf, "v", t_int, 0, 0));
	M(btf__add_struct(btf, "evil", 8));
	M(btf__add_field(btf, NULL, self, 0, 0));
	// A prototype whose 200 parameters are pointers to itself.
	int proto = (int)btf__type_cnt(btf);
	int pp = proto + 1;
	M(btf__add_func_proto(btf, pp));
	for (int i = 0; i < 200; i++)
		M(btf__add_func_param(btf, "p", pp));
	M(btf__add_ptr(btf, proto));
	M(btf__add_typedef(btf, "evil_fn", pp));
	// A pointer cycle and a typedef cycle.
	int cyc = (int)btf__type_cnt(btf);
	M(btf__add_ptr(btf, cyc + 1));
	M(btf__add_ptr(btf, cyc));
	M(btf__add_typedef(btf, "cyc_t", cyc));
	int td = (int)btf__type_cnt(btf);
	M(btf__add_typedef(btf, "loop_t", td + 1));
	M(btf__add_typedef(btf, "loop2_t", td));
	if (dangling) {
		// A member whose type id does not exist.
		M(btf__add_struct(btf, "dangling", 8));
		M(btf__add_field(btf, "bad", 50000, 0, 0));
		M(btf__add_array(btf, t_int, 50001, 4));
	}
	uint32_t size;
	const void *raw = btf__raw_data(btf, &size);
	void *copy = malloc(size);
	if (!raw || !copy)
		abort();
	memcpy(copy, raw, size);
	btf__free(btf);
	*size_ret = size;
	return copy;
}
