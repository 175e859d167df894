// SPDX-License-Identifier: MIT
// The run queues: per_cpu(runqueues, cpu), a struct rq per CPU
// (kernel/sched/sched.h), which BTF describes but need not name as a
// variable (5.10 has no VAR for it).
#include <inttypes.h>

#include "core/layout.h"
#include "linux/sched/sched.h"
#include "util/error.h"

static const struct kp_member_spec rq_members[KP_LX_RQ_N] = {
	[KP_LX_RQ_NR_RUNNING] = { .name = "nr_running" },
	[KP_LX_RQ_CURR] = { .name = "curr" },
};
const struct kp_struct_spec kp_lx_rq_spec = KP_STRUCT_SPEC("struct rq", rq_members);

// Apart from kp_lx_rq_spec: a kernel without it still has run queues.
static const struct kp_member_spec clock_members[] = { { .name = "clock_task" } };
static const struct kp_struct_spec clock_spec = KP_STRUCT_SPEC("struct rq", clock_members);
enum { T_CPU, T_EXEC_START, T_N };
static const struct kp_member_spec task_members[T_N] = {
	// As kp_lx_task_spec: x86 moved cpu into thread_info in 5.16.
	[T_CPU] = { .name = "thread_info.cpu|cpu" },
	[T_EXEC_START] = { .name = "se.exec_start" },
};
static const struct kp_struct_spec task_spec = KP_STRUCT_SPEC("struct task_struct", task_members);

struct kp_error *kp_lx_rq(struct kp_kernel *k, uint64_t cpu, uint64_t *ret)
{
	struct kp_symbol sym;
	uint64_t off;
	struct kp_error *err = kp_symbol_by_name(k, "runqueues", &sym);
	if (err)
		return kp_error_prefix(err, "run queue of CPU %" PRIu64, cpu);
	if ((err = kp_kernel_per_cpu_offset(k, cpu, &off)))
		return kp_error_prefix(err, "run queue of CPU %" PRIu64, cpu);
	*ret = sym.address + off;
	return NULL;
}

struct kp_error *kp_lx_cpu_curr(struct kp_kernel *k, uint64_t cpu, uint64_t *ret)
{
	const struct kp_struct_layout *l;
	uint64_t rq;
	struct kp_error *err;
	if ((err = kp_kernel_layout(k, &kp_lx_rq_spec, &l)) || (err = kp_lx_rq(k, cpu, &rq)))
		return err;
	if ((err = kp_read_u64(k, rq + kp_layout_off(l, KP_LX_RQ_CURR), ret)))
		return kp_error_prefix(err, "run queue of CPU %" PRIu64 " at 0x%" PRIx64, cpu, rq);
	return NULL;
}

// update_curr() (kernel/sched/fair.c; rt and dl alike) sets se.exec_start
// to rq_clock_task() each time it charges the running task, last when the
// task leaves the CPU: for a task that is not running, when it last ran.
struct kp_error *kp_task_last_ran(struct kp_kernel *k, uint64_t task, struct kp_task_last_ran *ret)
{
	const struct kp_struct_layout *tl, *rl;
	uint32_t cpu;
	uint64_t rq, exec_start, clock;
	struct kp_error *err;
	if ((err = kp_kernel_layout(k, &task_spec, &tl)) || (err = kp_kernel_layout(k, &clock_spec, &rl)))
		return err;
	if ((err = kp_read_u32(k, task + kp_layout_off(tl, T_CPU), &cpu)) ||
	    (err = kp_read_u64(k, task + kp_layout_off(tl, T_EXEC_START), &exec_start)))
		return kp_error_prefix(err, "task 0x%" PRIx64, task);
	if ((err = kp_lx_rq(k, cpu, &rq)))
		return kp_error_prefix(err, "task 0x%" PRIx64, task);
	if ((err = kp_read_u64(k, rq + kp_layout_off(rl, 0), &clock)))
		return kp_error_prefix(err, "run queue of CPU %" PRIu32 " at 0x%" PRIx64, cpu, rq);
	ret->cpu = (int32_t)cpu;
	ret->exec_start = exec_start;
	ret->clock_task = clock;
	// The clock of an idle CPU stands still (NOHZ) until it wakes: it can
	// be behind a start read later on another CPU's behalf.
	ret->since = clock > exec_start ? clock - exec_start : 0;
	return NULL;
}
