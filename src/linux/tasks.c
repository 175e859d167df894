// SPDX-License-Identifier: MIT
// kp_task_iter: the task list (init_task.tasks) and each group's threads,
// walked with the list walker of list.c.
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "linux/linux.h"
#include "util/error.h"
#include "util/le.h"

#define PF_KTHREAD 0x00200000u	// include/linux/sched.h, unchanged since 2.6

// Task states (include/linux/sched.h, 6.1).
#define TASK_UNINTERRUPTIBLE 0x0002u
#define TASK_REPORT 0x007fu	// INTERRUPTIBLE..PARKED: the states /proc reports
#define TASK_NOLOAD 0x0400u
#define TASK_IDLE (TASK_UNINTERRUPTIBLE | TASK_NOLOAD)
#define TASK_REPORT_IDLE (TASK_REPORT + 1)
#define TASK_RTLOCK_WAIT 0x1000u	// 5.15+: shown as D

char kp_lx_task_state_letter(uint64_t state, uint64_t exit_state)
{
	static const char letters[] = "RSDTtXZPI";
	uint32_t st = (uint32_t)state;
	uint32_t report = (st | (uint32_t)exit_state) & TASK_REPORT;
	if ((st & TASK_IDLE) == TASK_IDLE)
		report = TASK_REPORT_IDLE;
	if (st == TASK_RTLOCK_WAIT)
		report = TASK_UNINTERRUPTIBLE;
	// fls(): index of the highest set bit, 1-based; 0 for R.
	int idx = report ? 32 - __builtin_clz(report) : 0;
	return letters[idx];
}

static struct kp_error *member(struct kp_kernel *k, const char *type, const char *name,
			       uint64_t *off_ret, uint64_t *size_ret)
{
	uint64_t size = 0;
	struct kp_error *err = kp_member_offset(k, type, name, off_ret, &size);
	if (!err && size_ret)
		*size_ret = size;
	return err;
}

void kp_lx_task_layout_span(struct kp_lx_task_layout *l)
{
	uint64_t lo = UINT64_MAX, hi = 0;
	kp_lx_span_add(&lo, &hi, l->tasks, 16);
	kp_lx_span_add(&lo, &hi, l->pid, 4);
	kp_lx_span_add(&lo, &hi, l->tgid, 4);
	kp_lx_span_add(&lo, &hi, l->real_parent, 8);
	kp_lx_span_add(&lo, &hi, l->state, l->state_size);
	kp_lx_span_add(&lo, &hi, l->exit_state, 4);
	kp_lx_span_add(&lo, &hi, l->flags, l->flags_size);
	kp_lx_span_add(&lo, &hi, l->comm, 16);
	kp_lx_span_add(&lo, &hi, l->signal, 8);
	if (l->has_cpu)
		kp_lx_span_add(&lo, &hi, l->cpu, 4);
	if (l->has_thread_node)
		kp_lx_span_add(&lo, &hi, l->thread_node, 16);
	if (l->has_thread_group)
		kp_lx_span_add(&lo, &hi, l->thread_group, 16);
	l->lo = lo;
	l->hi = hi;
}

struct kp_error *kp_lx_task_layout(struct kp_kernel *k, struct kp_lx_task_layout *ret)
{
	static const char ts[] = "struct task_struct";
	struct kp_lx_task_layout l = {0};
	struct kp_error *err;
	uint64_t size;
	if ((err = member(k, ts, "tasks", &l.tasks, NULL)) ||
	    (err = member(k, ts, "pid", &l.pid, NULL)) ||
	    (err = member(k, ts, "tgid", &l.tgid, NULL)) ||
	    (err = member(k, ts, "real_parent", &l.real_parent, NULL)) ||
	    (err = member(k, ts, "exit_state", &l.exit_state, NULL)) ||
	    (err = member(k, ts, "flags", &l.flags, &l.flags_size)) ||
	    (err = member(k, ts, "comm", &l.comm, &size)) ||
	    (err = member(k, ts, "signal", &l.signal, NULL)))
		return kp_error_prefix(err, "task list");
	if (size < 16)
		return kp_error_create(KP_ERR_FORMAT, "task list: task_struct.comm is %llu bytes, expected 16",
				       (unsigned long long)size);
	// 5.14 renamed the long 'state' to unsigned int '__state'.
	if (!kp_lx_has_member(k, ts, "__state", &l.state, &l.state_size) &&
	    (err = member(k, ts, "state", &l.state, &l.state_size)))
		return kp_error_prefix(err, "task list");
	if (l.state_size != 4 && l.state_size != 8)
		l.state_size = 4;
	if (l.flags_size != 4 && l.flags_size != 8)
		l.flags_size = 4;
	// x86 moved cpu into thread_info (THREAD_INFO_IN_TASK) in 5.16; older
	// kernels and other configs keep task_struct.cpu.
	l.has_cpu = kp_lx_has_member(k, ts, "thread_info.cpu", &l.cpu, NULL) ||
		    kp_lx_has_member(k, ts, "cpu", &l.cpu, NULL);
	l.has_thread_node = kp_lx_has_member(k, ts, "thread_node", &l.thread_node, NULL) &&
			    kp_lx_has_member(k, "struct signal_struct", "thread_head",
				       &l.signal_thread_head, NULL);
	l.has_thread_group = kp_lx_has_member(k, ts, "thread_group", &l.thread_group, NULL);
	kp_lx_task_layout_span(&l);
	*ret = l;
	return NULL;
}

struct kp_task_iter {
	struct kp_kernel *k;
	struct kp_lx_task_layout l;
	struct kp_lx_task_name_layout names;
	uint64_t init_task;
	bool threads;
	struct kp_list_iter *tasks;	// init_task.tasks (NULL before init_task is yielded)
	struct kp_list_iter *group;	// the current leader's threads, or NULL
	uint64_t leader;
	uint64_t leader_signal;		// its signal_struct
	bool group_pending;		// the leader's threads are to be opened
	bool ended;			// the task list ended or is corrupt
	uint64_t yielded;
	bool started;
	uint8_t *buf;			// l.hi - l.lo bytes of the current task
	struct kp_task task;
};

#define AT(it, off) ((it)->buf + (off) - (it)->l.lo)

static uint64_t field(const struct kp_task_iter *it, uint64_t off, uint64_t size)
{
	return kp_le(AT(it, off), size);
}

// Reads the task at address into it->task. A fault reading its name is
// returned after the task is read (the caller may go on with the next one).
static struct kp_error *read_task(struct kp_task_iter *it, uint64_t address)
{
	const struct kp_lx_task_layout *l = &it->l;
	if (it->yielded >= KP_LX_MAX_TASKS)
		return kp_error_create(KP_ERR_LOOP, "task list does not end after %u entries (at task 0x%" PRIx64 ")",
				       KP_LX_MAX_TASKS, address);
	it->yielded++;
	struct kp_task *t = &it->task;
	t->address = 0;
	struct kp_error *err = kp_read(it->k, KP_VIRT, address + l->lo, it->buf, l->hi - l->lo);
	if (err)
		return kp_error_prefix(err, "reading task_struct at 0x%" PRIx64, address);
	memset(t, 0, sizeof(*t));
	t->address = address;
	t->pid = (int32_t)field(it, l->pid, 4);
	t->tgid = (int32_t)field(it, l->tgid, 4);
	t->state = kp_lx_task_state_letter(field(it, l->state, l->state_size),
					   field(it, l->exit_state, 4));
	t->cpu = l->has_cpu ? (int32_t)field(it, l->cpu, 4) : -1;
	t->flags = field(it, l->flags, l->flags_size);
	memcpy(t->comm, AT(it, l->comm), 16);
	t->comm[15] = '\0';
	t->kthread = t->flags & PF_KTHREAD;
	// ppid = real_parent->tgid, as /proc/PID/stat (0 for the idle task,
	// its own parent).
	uint64_t parent = field(it, l->real_parent, 8);
	uint32_t tgid;
	if (parent == address)
		t->ppid = 0;
	else if (parent && kp_ok(kp_read_u32(it->k, parent + l->tgid, &tgid)))
		t->ppid = (int32_t)tgid;
	else
		t->ppid = -1;
	err = kp_lx_task_name(it->k, &it->names, address, t->flags, t->comm, t->name,
			      sizeof(t->name));
	if (err)
		return kp_error_prefix(err, "task %d (%s) at 0x%" PRIx64 ": its name", t->pid,
				       t->comm, address);
	return NULL;
}

// The list of the threads of the leader: the signal->thread_head list of
// thread_node links (3.14+), else the headless ring task->thread_group.
static struct kp_error *open_group(struct kp_task_iter *it, uint64_t leader, uint64_t signal)
{
	const struct kp_lx_task_layout *l = &it->l;
	if (l->has_thread_node) {
		if (!signal)
			return NULL;	// exited, being reaped
		return kp_lx_list_iter_create(it->k, signal + l->signal_thread_head, 0,
					      "thread list", &it->group);
	}
	if (l->has_thread_group)
		return kp_lx_list_iter_create(it->k, leader + l->thread_group,
					      KP_LIST_HEAD_IS_NODE, "thread list", &it->group);
	return NULL;
}

struct kp_error *kp_lx_task_iter_create(struct kp_kernel *k, const struct kp_lx_task_layout *l,
					uint64_t init_task, unsigned flags,
					struct kp_task_iter **ret)
{
	if (l->hi <= l->lo || l->hi - l->lo > (1u << 20))
		return kp_error_create(KP_ERR_INVALID, "task list: bad task_struct layout");
	struct kp_task_iter *it = calloc(1, sizeof(*it));
	if (!it || !(it->buf = malloc(l->hi - l->lo))) {
		free(it);
		return &kp_enomem;
	}
	it->k = k;
	it->l = *l;
	kp_lx_task_name_layout(k, &it->names);
	it->init_task = init_task;
	it->threads = flags & KP_TASKS_THREADS;
	*ret = it;
	return NULL;
}

struct kp_error *kp_task_iter_create(struct kp_kernel *k, unsigned flags, struct kp_task_iter **ret)
{
	struct kp_lx_task_layout l;
	struct kp_symbol sym;
	struct kp_error *err = kp_lx_task_layout(k, &l);
	if (err)
		return err;
	if ((err = kp_symbol_by_name(k, "init_task", &sym)))
		return kp_error_prefix(err, "task list");
	return kp_lx_task_iter_create(k, &l, sym.address, flags, ret);
}

// The next thread of the current group other than the leader; *ret NULL at
// the group's end.
static struct kp_error *next_thread(struct kp_task_iter *it, const struct kp_task **ret)
{
	uint64_t link = it->l.has_thread_node ? it->l.thread_node : it->l.thread_group;
	for (;;) {
		uint64_t node;
		bool done;
		struct kp_error *err = kp_list_iter_next(it->group, &node, &done);
		if (err || done) {
			kp_list_iter_destroy(it->group);
			it->group = NULL;
			*ret = NULL;
			return err ? kp_error_prefix(err, "threads of task 0x%" PRIx64, it->leader) : NULL;
		}
		if (node - link == it->leader)
			continue;
		if ((err = read_task(it, node - link)))
			return err;
		*ret = &it->task;
		return NULL;
	}
}

// Ends the iteration on an error the task list cannot go on after.
static struct kp_error *fatal(struct kp_task_iter *it, struct kp_error *err)
{
	if (err && err->code != KP_ERR_FAULT) {
		it->ended = true;
		kp_list_iter_destroy(it->tasks);
		it->tasks = NULL;
		kp_list_iter_destroy(it->group);
		it->group = NULL;
	}
	return err;
}

struct kp_error *kp_task_iter_next(struct kp_task_iter *it, const struct kp_task **ret)
{
	struct kp_error *err;
	if (it->ended) {
		*ret = NULL;
		return NULL;
	}
	if (it->group_pending) {
		it->group_pending = false;
		if ((err = open_group(it, it->leader, it->leader_signal)))
			return fatal(it, kp_error_prefix(err, "threads of task 0x%" PRIx64, it->leader));
	}
	if (it->group) {
		if ((err = next_thread(it, ret)) || *ret)
			return fatal(it, err);
	}
	uint64_t task;
	if (!it->started) {
		// init_task is the list's head and a task of its own.
		if ((err = kp_lx_list_iter_create(it->k, it->init_task + it->l.tasks, 0,
						  "task list", &it->tasks)))
			return fatal(it, err);
		it->started = true;
		task = it->init_task;
	} else {
		uint64_t node;
		bool done;
		if (!it->tasks) {
			*ret = NULL;
			return NULL;
		}
		if ((err = kp_list_iter_next(it->tasks, &node, &done)))
			return fatal(it, err);	// a fault: the list walk goes on behind it
		if (done) {
			kp_list_iter_destroy(it->tasks);
			it->tasks = NULL;
			*ret = NULL;
			return NULL;
		}
		task = node - it->l.tasks;
	}
	it->leader = task;
	err = read_task(it, task);
	if (it->task.address == task) {
		// Its threads come next, whether or not its name could be read.
		it->leader_signal = it->l.has_thread_node ? field(it, it->l.signal, 8) : 0;
		it->group_pending = it->threads;
	}
	if (err)
		return fatal(it, err);
	*ret = &it->task;
	return NULL;
}

void kp_task_iter_destroy(struct kp_task_iter *it)
{
	if (!it)
		return;
	kp_list_iter_destroy(it->tasks);
	kp_list_iter_destroy(it->group);
	free(it->buf);
	free(it);
}

bool kp_lx_cpu_curr(struct kp_kernel *k, uint64_t cpu, uint64_t *ret)
{
	char expr[64];
	snprintf(expr, sizeof(expr), "per_cpu(*(struct rq *)&runqueues, %" PRIu64 ").curr", cpu);
	return kp_lx_eval_u64(k, expr, ret);
}
