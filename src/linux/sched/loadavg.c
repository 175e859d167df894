// SPDX-License-Identifier: MIT
// kp_loadavg: the numbers of /proc/loadavg (fs/proc/loadavg.c).
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/layout.h"
#include "linux/sched/sched.h"
#include "util/error.h"
#include "util/le.h"
#include "util/opts.h"

#define FSHIFT 11
#define FIXED_1 (1ULL << FSHIFT)
#define LOAD_INT(x) ((x) >> FSHIFT)
#define LOAD_FRAC(x) LOAD_INT(((x) & (FIXED_1 - 1)) * 100)

void kp_loadavg_format(uint64_t avenrun, char buf[16])
{
	// /proc/loadavg rounds by adding FIXED_1/200 before splitting.
	uint64_t v = avenrun + FIXED_1 / 200;
	snprintf(buf, 16, "%llu.%02llu", (unsigned long long)(LOAD_INT(v) % 100000000ULL),
		 (unsigned long long)LOAD_FRAC(v));
}

#define MAX_CPUS 8192	// CONFIG_NR_CPUS upper bound of every architecture kpeek reads

static bool sym_addr(struct kp_kernel *k, const char *name, uint64_t *ret)
{
	struct kp_symbol sym;
	if (!kp_symbol_find(k, name, &sym))
		return false;
	*ret = sym.address;
	return true;
}

// nr_running(): the sum of cpu_rq(cpu)->nr_running over online CPUs.
// false if anything is missing: the count is then unknown, never a guess.
static bool sum_nr_running(struct kp_kernel *k, uint32_t *ret)
{
	const struct kp_struct_layout *l;
	uint64_t online, nr_cpu_ids_addr;
	uint32_t nr_cpu_ids = MAX_CPUS;
	struct kp_error *err = kp_kernel_layout(k, &kp_lx_rq_spec, &l);
	if (err || !sym_addr(k, "__cpu_online_mask", &online)) {
		kp_error_destroy(err);
		return false;
	}
	if (sym_addr(k, "nr_cpu_ids", &nr_cpu_ids_addr)) {
		err = kp_read_u32(k, nr_cpu_ids_addr, &nr_cpu_ids);
		kp_error_destroy(err);
		if (err || nr_cpu_ids == 0 || nr_cpu_ids > MAX_CPUS)
			nr_cpu_ids = MAX_CPUS;
	}
	uint64_t words[MAX_CPUS / 64];
	size_t nwords = (nr_cpu_ids + 63) / 64;
	if ((err = kp_read(k, KP_VIRT, online, words, nwords * 8))) {
		kp_error_destroy(err);
		return false;
	}
	uint32_t sum = 0;
	bool any = false;
	for (uint32_t cpu = 0; cpu < nr_cpu_ids; cpu++) {
		if (!(words[cpu / 64] >> (cpu % 64) & 1))
			continue;
		uint64_t rq;
		uint32_t nr;
		if ((err = kp_lx_rq(k, cpu, &rq)) ||
		    (err = kp_read_u32(k, rq + kp_layout_off(l, KP_LX_RQ_NR_RUNNING), &nr))) {
			kp_error_destroy(err);
			return false;
		}
		sum += nr;
		any = true;
	}
	if (any)
		*ret = sum;
	return any;
}

static const struct kp_member_spec pid_ns_members[] = {
	{ .name = "idr.idr_next" },
};
static const struct kp_struct_spec pid_ns_spec = KP_STRUCT_SPEC("struct pid_namespace", pid_ns_members);

struct kp_error *kp_loadavg(struct kp_kernel *k, struct kp_loadavg *ret)
{
	struct kp_loadavg la = {.sz = sizeof(la), .last_pid = -1};
	struct kp_symbol sym;
	struct kp_error *err = kp_symbol_by_name(k, "avenrun", &sym);
	if (err)
		return kp_error_prefix(err, "loadavg");
	if ((err = kp_read(k, KP_VIRT, sym.address, la.avenrun, sizeof(la.avenrun))))
		return kp_error_prefix(err, "loadavg: reading avenrun at 0x%llx",
				       (unsigned long long)sym.address);
	la.has_running = sum_nr_running(k, &la.running);
	uint64_t addr;
	const struct kp_struct_layout *pl;
	if (sym_addr(k, "nr_threads", &addr)) {
		uint32_t v;
		err = kp_read_u32(k, addr, &v);
		if (!err) {
			la.total = v;
			la.has_total = true;
		}
		kp_error_destroy(err);
	}
	// 4.15+: last_pid is idr_get_cursor(&init_pid_ns.idr) - 1.
	if (sym_addr(k, "init_pid_ns", &addr)) {
		err = kp_kernel_layout(k, &pid_ns_spec, &pl);
		if (!err) {
			uint32_t v;
			err = kp_read_u32(k, addr + kp_layout_off(pl, 0), &v);
			if (!err)
				la.last_pid = (int32_t)v - 1;
		}
		kp_error_destroy(err);
	}
	if (!kp_out_copy(ret, &la, sizeof(la)))
		return kp_error_create(KP_ERR_INVALID, "struct kp_loadavg: sz not set (use KP_INIT)");
	return NULL;
}
