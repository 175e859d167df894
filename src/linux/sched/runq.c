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

bool kp_lx_cpu_curr(struct kp_kernel *k, uint64_t cpu, uint64_t *ret)
{
	const struct kp_struct_layout *l;
	uint64_t rq;
	struct kp_error *err;
	if ((err = kp_kernel_layout(k, &kp_lx_rq_spec, &l)) || (err = kp_lx_rq(k, cpu, &rq)) ||
	    (err = kp_read_u64(k, rq + kp_layout_off(l, KP_LX_RQ_CURR), ret))) {
		kp_error_destroy(err);
		return false;
	}
	return true;
}
