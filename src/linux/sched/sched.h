// SPDX-License-Identifier: MIT
// Tasks (tasks.c), their names as /proc shows them (task_name.c), the task
// current on a CPU, and the members of task_struct the walkers read.
#ifndef KP_LINUX_SCHED_H
#define KP_LINUX_SCHED_H

#include <kpeek/kpeek.h>

#include "types/layout.h"

// struct task_struct as the task walker reads it.
enum kp_lx_task_member {
	KP_LX_T_TASKS,		// struct list_head tasks
	KP_LX_T_PID,
	KP_LX_T_TGID,
	KP_LX_T_REAL_PARENT,
	KP_LX_T_STATE,		// __state (5.14+, u32) or state (long)
	KP_LX_T_EXIT_STATE,
	KP_LX_T_FLAGS,		// PF_*
	KP_LX_T_COMM,		// char [16]
	KP_LX_T_CPU,		// thread_info.cpu (x86 5.16+) or cpu; optional
	KP_LX_T_SIGNAL,		// struct signal_struct *
	// Threads: signal->thread_head + task->thread_node (3.14+), else the
	// headless ring task->thread_group; both optional.
	KP_LX_T_THREAD_NODE,
	KP_LX_T_THREAD_GROUP,
	KP_LX_T_N
};
extern const struct kp_struct_spec kp_lx_task_spec;
enum kp_lx_signal_member {
	KP_LX_S_THREAD_HEAD,	// optional (3.14+)
	KP_LX_S_N
};
extern const struct kp_struct_spec kp_lx_signal_spec;

// kp_task_iter_create() with explicit layouts (of kp_lx_task_spec and
// kp_lx_signal_spec) and init_task address.
struct kp_error *kp_lx_task_iter_create(struct kp_kernel *kernel,
					const struct kp_struct_layout *task,
					const struct kp_struct_layout *signal, uint64_t init_task,
					unsigned flags, struct kp_task_iter **ret);
// /proc/PID/stat's state letter from __state and exit_state (6.1's
// __task_state_index()): "RSDTtXZPI".
char kp_lx_task_state_letter(uint64_t state, uint64_t exit_state);

// struct rq (runq.c).
enum kp_lx_rq_member {
	KP_LX_RQ_NR_RUNNING,
	KP_LX_RQ_CURR,
	KP_LX_RQ_N
};
extern const struct kp_struct_spec kp_lx_rq_spec;
// &per_cpu(runqueues, cpu): the run queue of a possible CPU.
struct kp_error *kp_lx_rq(struct kp_kernel *kernel, uint64_t cpu, uint64_t *ret);
// per_cpu(runqueues, cpu).curr: the task current on cpu.
struct kp_error *kp_lx_cpu_curr(struct kp_kernel *kernel, uint64_t cpu, uint64_t *ret);

// The name of the task at task (flags: its PF_*, comm: its comm) as
// /proc/PID/stat shows it, into ret (at most size - 1 characters). On an
// error ret holds comm (task_name.c).
struct kp_error *kp_lx_task_name(struct kp_kernel *kernel, uint64_t task, uint64_t flags,
				 const char *comm, char *ret, size_t size);

#endif
