// SPDX-License-Identifier: MIT
// kp_task_iter: the task list (init_task.tasks) and each group's threads,
// walked with the list walker of list.c, ending as every walk does
// (lib/walk.h): a task the dump cannot give is left out and named at the
// end; a task gone from a live kernel is a change.
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/layout.h"
#include "linux/lib/list.h"
#include "linux/lib/walk.h"
#include "linux/sched/sched.h"
#include "util/error.h"

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

static const struct kp_member_spec task_members[KP_LX_T_N] = {
	[KP_LX_T_TASKS] = { .name = "tasks", .flags = KP_MEMBER_NOSPAN },
	[KP_LX_T_PID] = { .name = "pid" },
	[KP_LX_T_TGID] = { .name = "tgid" },
	[KP_LX_T_REAL_PARENT] = { .name = "real_parent" },
	// 5.14 renamed the long 'state' to unsigned int '__state'.
	[KP_LX_T_STATE] = { .name = "__state|state" },
	[KP_LX_T_EXIT_STATE] = { .name = "exit_state" },
	[KP_LX_T_FLAGS] = { .name = "flags" },
	[KP_LX_T_COMM] = { .name = "comm" },
	// x86 moved cpu into thread_info (THREAD_INFO_IN_TASK) in 5.16;
	// older kernels and other configs keep task_struct.cpu.
	[KP_LX_T_CPU] = { .name = "thread_info.cpu|cpu", .flags = KP_MEMBER_OPTIONAL },
	[KP_LX_T_SIGNAL] = { .name = "signal" },
	// signal->thread_head + thread_node since 3.14; thread_group
	// (the headless ring) before, and beside it until 6.7.
	[KP_LX_T_THREAD_NODE] = { .name = "thread_node", .flags = KP_MEMBER_OPTIONAL | KP_MEMBER_NOSPAN },
	[KP_LX_T_THREAD_GROUP] = { .name = "thread_group", .flags = KP_MEMBER_OPTIONAL | KP_MEMBER_NOSPAN },
};
const struct kp_struct_spec kp_lx_task_spec = KP_STRUCT_SPEC("struct task_struct", task_members);

static const struct kp_member_spec signal_members[KP_LX_S_N] = {
	[KP_LX_S_THREAD_HEAD] = { .name = "thread_head", .flags = KP_MEMBER_OPTIONAL | KP_MEMBER_NOSPAN },
};
const struct kp_struct_spec kp_lx_signal_spec = KP_STRUCT_SPEC("struct signal_struct",
							       signal_members);

struct kp_task_iter {
	struct kp_kernel *k;
	const struct kp_struct_layout *tl, *sl;	// task_struct, signal_struct
	uint64_t init_task;
	bool threads;
	bool started, ended;
	struct kp_list_iter *tasks;	// init_task.tasks (NULL before init_task is yielded)
	struct kp_list_iter *group;	// the current leader's threads, or NULL
	uint64_t leader;
	uint64_t leader_signal;		// its signal_struct
	bool group_pending;		// the leader's threads are to be opened
	uint64_t yielded;
	uint8_t *buf;			// the task_struct span of the current task
	struct kp_task task;
	struct kp_lx_walk walk;
};

#define U(it, m) kp_layout_u64((it)->tl, (it)->buf, (m))

// Reads the task at address into it->task. A fault reading its name is
// returned after the task is read (it is still a task, named by its comm).
static struct kp_error *read_task(struct kp_task_iter *it, uint64_t address, bool *read)
{
	const struct kp_struct_layout *l = it->tl;
	*read = false;
	struct kp_error *err = kp_read(it->k, KP_VIRT, address + l->lo, it->buf, kp_layout_span(l));
	if (err)
		return kp_error_prefix(err, "reading task_struct at 0x%" PRIx64, address);
	*read = true;
	struct kp_task *t = &it->task;
	memset(t, 0, sizeof(*t));
	t->address = address;
	t->pid = (int32_t)U(it, KP_LX_T_PID);
	t->tgid = (int32_t)U(it, KP_LX_T_TGID);
	t->state = kp_lx_task_state_letter(U(it, KP_LX_T_STATE), U(it, KP_LX_T_EXIT_STATE));
	t->cpu = kp_layout_has(l, KP_LX_T_CPU) ? (int32_t)U(it, KP_LX_T_CPU) : -1;
	t->flags = U(it, KP_LX_T_FLAGS);
	memcpy(t->comm, kp_layout_at(l, it->buf, KP_LX_T_COMM), 16);
	t->comm[15] = '\0';
	t->kthread = t->flags & PF_KTHREAD;
	// ppid = real_parent->tgid, as /proc/PID/stat (0 for the idle task,
	// its own parent).
	uint64_t parent = U(it, KP_LX_T_REAL_PARENT);
	uint32_t tgid;
	if (parent == address)
		t->ppid = 0;
	else if (parent && kp_ok(kp_read_u32(it->k, parent + kp_layout_off(l, KP_LX_T_TGID), &tgid)))
		t->ppid = (int32_t)tgid;
	else
		t->ppid = -1;
	err = kp_lx_task_name(it->k, address, t->flags, t->comm, t->name, sizeof(t->name));
	t->name_partial = err != NULL;
	if (err) {
		memcpy(t->name, t->comm, sizeof(t->comm));
		return kp_error_prefix(err, "task %d (%s) at 0x%" PRIx64 ": its name", t->pid,
				       t->comm, address);
	}
	return NULL;
}

// The list of the threads of the leader: the signal->thread_head list of
// thread_node links (3.14+), else the headless ring task->thread_group.
static struct kp_error *open_group(struct kp_task_iter *it, uint64_t leader, uint64_t signal)
{
	if (kp_layout_has(it->tl, KP_LX_T_THREAD_NODE) && kp_layout_has(it->sl, KP_LX_S_THREAD_HEAD)) {
		if (!signal)
			return NULL;	// exited, being reaped
		return kp_lx_list_iter_create(it->k, signal + kp_layout_off(it->sl, KP_LX_S_THREAD_HEAD),
					      0, "thread list", &it->group);
	}
	if (kp_layout_has(it->tl, KP_LX_T_THREAD_GROUP))
		return kp_lx_list_iter_create(it->k, leader + kp_layout_off(it->tl, KP_LX_T_THREAD_GROUP),
					      KP_LIST_HEAD_IS_NODE, "thread list", &it->group);
	return NULL;
}

struct kp_error *kp_lx_task_iter_create(struct kp_kernel *k, const struct kp_struct_layout *tl,
					const struct kp_struct_layout *sl, uint64_t init_task,
					unsigned flags, struct kp_task_iter **ret)
{
	if (tl->hi <= tl->lo || kp_layout_span(tl) > (1u << 20) || tl->m[KP_LX_T_COMM].size < 16)
		return kp_error_create(KP_ERR_UNSUPPORTED,
				       "task list: struct task_struct of this kernel (comm of %" PRIu64 " bytes, %" PRIu64 " bytes to read)",
				       tl->m[KP_LX_T_COMM].size, kp_layout_span(tl));
	struct kp_task_iter *it = calloc(1, sizeof(*it));
	if (!it || !(it->buf = malloc(kp_layout_span(tl)))) {
		free(it);
		return &kp_enomem;
	}
	it->k = k;
	it->tl = tl;
	it->sl = sl;
	it->init_task = init_task;
	it->threads = flags & KP_TASKS_THREADS;
	kp_lx_walk_init(&it->walk, k);
	*ret = it;
	return NULL;
}

struct kp_error *kp_task_iter_create(struct kp_kernel *k, unsigned flags, struct kp_task_iter **ret)
{
	const struct kp_struct_layout *tl, *sl;
	struct kp_symbol sym;
	struct kp_error *err;
	if ((err = kp_kernel_layout(k, &kp_lx_task_spec, &tl)) ||
	    (err = kp_kernel_layout(k, &kp_lx_signal_spec, &sl)))
		return kp_error_prefix(err, "task list");
	if ((err = kp_symbol_by_name(k, "init_task", &sym)))
		return kp_error_prefix(err, "task list");
	return kp_lx_task_iter_create(k, tl, sl, sym.address, flags, ret);
}

// A sub-walk (a list) is done: its error and its passes count for this walk.
static void merge(struct kp_task_iter *it, struct kp_list_iter *list, struct kp_error *err)
{
	KP_INIT(kp_walk_status, st);
	kp_list_iter_status(list, &st);
	it->walk.restarts += st.restarts;
	if (st.end == KP_WALK_LIVE_CHANGED)
		kp_lx_walk_changed(&it->walk);
	if (err)
		kp_lx_walk_stop(&it->walk, err);
}

// Reads the task at address; false if it is left out (it cannot be read:
// in a dump an error for the end, on a live kernel a task that went away).
static bool take(struct kp_task_iter *it, uint64_t address)
{
	bool read;
	if (it->yielded >= KP_LX_MAX_TASKS) {
		kp_lx_walk_stop(&it->walk, kp_error_create(KP_ERR_LOOP,
			"task list does not end after %u entries (at task 0x%" PRIx64 ")",
			KP_LX_MAX_TASKS, address));
		it->ended = true;
		return false;
	}
	struct kp_error *err = read_task(it, address, &read);
	if (!read && it->walk.live) {
		kp_error_destroy(err);
		kp_lx_walk_changed(&it->walk);
		return false;
	}
	if (!read) {
		kp_lx_walk_left_out(&it->walk, err);
		return false;
	}
	if (err)
		kp_lx_walk_partial(&it->walk, err);	// named by comm (name_partial)
	it->yielded++;
	return true;
}

// The next thread of the current group other than the leader; false at the
// group's end.
static bool next_thread(struct kp_task_iter *it)
{
	uint64_t link = kp_layout_has(it->sl, KP_LX_S_THREAD_HEAD) && kp_layout_has(it->tl, KP_LX_T_THREAD_NODE) ?
			kp_layout_off(it->tl, KP_LX_T_THREAD_NODE) : kp_layout_off(it->tl, KP_LX_T_THREAD_GROUP);
	for (;;) {
		uint64_t node;
		bool done;
		struct kp_error *err = kp_list_iter_next(it->group, &node, &done);
		if (err || done) {
			if (err)
				err = kp_error_prefix(err, "threads of task 0x%" PRIx64, it->leader);
			merge(it, it->group, err);
			kp_list_iter_destroy(it->group);
			it->group = NULL;
			return false;
		}
		if (node - link != it->leader && take(it, node - link))
			return true;
		if (it->ended)
			return false;
	}
}

// The next thread-group leader; false at the end of the task list.
static bool next_leader(struct kp_task_iter *it)
{
	for (;;) {
		uint64_t task;
		if (!it->started) {
			// init_task is the list's head and a task of its own.
			struct kp_error *err = kp_lx_list_iter_create(it->k, it->init_task + kp_layout_off(it->tl, KP_LX_T_TASKS),
								      0, "task list", &it->tasks);
			if (err) {
				kp_lx_walk_stop(&it->walk, err);
				return false;
			}
			it->started = true;
			task = it->init_task;
		} else {
			uint64_t node;
			bool done;
			struct kp_error *err = kp_list_iter_next(it->tasks, &node, &done);
			if (err || done) {
				merge(it, it->tasks, err);
				return false;
			}
			task = node - kp_layout_off(it->tl, KP_LX_T_TASKS);
		}
		it->leader = task;
		if (take(it, task)) {
			it->leader_signal = U(it, KP_LX_T_SIGNAL);
			it->group_pending = it->threads;
			return true;
		}
		if (it->ended)
			return false;
	}
}

struct kp_error *kp_task_iter_next(struct kp_task_iter *it, const struct kp_task **ret)
{
	*ret = NULL;
	while (!it->ended) {
		if (it->group_pending) {
			it->group_pending = false;
			struct kp_error *err = open_group(it, it->leader, it->leader_signal);
			if (err)
				kp_lx_walk_stop(&it->walk, kp_error_prefix(err, "threads of task 0x%" PRIx64, it->leader));
		}
		if (it->group && next_thread(it)) {
			*ret = &it->task;
			return NULL;
		}
		if (it->group)
			continue;
		if (next_leader(it)) {
			*ret = &it->task;
			return NULL;
		}
		it->ended = true;
	}
	return kp_lx_walk_finish(&it->walk);
}

void kp_task_iter_status(const struct kp_task_iter *it, struct kp_walk_status *ret)
{
	kp_lx_walk_status(&it->walk, ret);
}

void kp_task_iter_destroy(struct kp_task_iter *it)
{
	if (!it)
		return;
	kp_list_iter_destroy(it->tasks);
	kp_list_iter_destroy(it->group);
	kp_lx_walk_deinit(&it->walk);
	free(it->buf);
	free(it);
}

struct kp_error *kp_task_by_pid(struct kp_kernel *k, int32_t pid, uint64_t *ret)
{
	struct kp_task_iter *it;
	struct kp_error *err = kp_task_iter_create(k, KP_TASKS_THREADS, &it);
	if (err)
		return err;
	const struct kp_task *t;
	uint64_t found = 0;
	while (!found && !(err = kp_task_iter_next(it, &t)) && t)
		if (t->pid == pid)
			found = t->address;
	kp_task_iter_destroy(it);
	if (found) {
		kp_error_destroy(err);
		*ret = found;
		return NULL;
	}
	if (err)
		return kp_error_prefix(err, "looking for PID %d", pid);
	return kp_error_create(KP_ERR_NOT_FOUND, "no task with PID %d", pid);
}
