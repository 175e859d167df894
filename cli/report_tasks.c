// SPDX-License-Identifier: MIT
// The sections of kpeek report about tasks: the largest processes by
// resident memory (in the memory section: who an OOM was about) and the
// tasks in D state (blocked: what a hung-task panic is about).
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "output.h"
#include "report.h"

#define LARGEST 5	// processes listed by resident memory

struct largest {
	const struct kp_task *task;
	struct kp_task_mem mem;
};

// Inserts p into the top list (largest VmRSS first, LARGEST at most).
static void rank(struct largest *top, size_t *n, const struct kp_task *t, const struct kp_task_mem *m)
{
	size_t at = *n;
	while (at > 0 && top[at - 1].mem.vm_rss < m->vm_rss)
		at--;
	if (at >= LARGEST)
		return;
	size_t last = *n < LARGEST ? *n : LARGEST - 1;
	memmove(&top[at + 1], &top[at], (last - at) * sizeof(*top));
	top[at] = (struct largest){ t, *m };
	if (*n < LARGEST)
		(*n)++;
}

static void largest_out(struct report *r, const struct largest *top, size_t n)
{
	struct out *o = r->o;
	out_begin_list(o, "processes");
	for (size_t i = 0; i < n; i++) {
		if (out_is_json(o)) {
			out_begin_object(o, NULL);
			out_kv_int(o, "pid", top[i].task->pid);
			out_kv_str(o, "comm", top[i].task->comm);
			out_kv_uint(o, "rss", top[i].mem.vm_rss);
			out_kv_uint(o, "vsz", top[i].mem.vm_size);
			out_end_object(o);
			continue;
		}
		char size[32];
		cli_human_size(top[i].mem.vm_rss * 1024, size, sizeof(size));
		out_text(o, "%s%s (%d) %s", i ? ", " : "largest:   ", top[i].task->name, top[i].task->pid, size);
	}
	out_end_list(o);
}

// The processes with the most resident memory (VmRSS), as an OOM report's
// task dump would rank them; kernel threads have none.
void report_largest(struct report *r)
{
	struct kp_task *tasks;
	size_t n, nt = 0, unread = 0;
	struct cli_walk w = { .err = NULL };
	struct out *o = r->o;
	out_begin_object(o, "largest");
	struct kp_error *err = cli_collect_tasks(r->k, false, &tasks, &n, &w), *first = NULL;
	if (err) {
		report_problem(r, "largest:", err);
		out_end_object(o);
		return;
	}
	struct largest top[LARGEST];
	for (size_t i = 0; i < n; i++) {
		struct kp_task_mem m;
		if (tasks[i].kthread)
			continue;
		if (cli_task_mem(r->k, tasks[i].address, &m, &err)) {
			rank(top, &nt, &tasks[i], &m);
		} else if (err) {
			unread++;
			if (first)
				kp_error_destroy(err);
			else
				first = err;
		}
	}
	largest_out(r, top, nt);
	if (out_is_json(o))
		out_kv_uint(o, "unreadable", unread);
	else if (nt)
		out_text(o, "\n");
	if (first) {
		char msg[512];
		snprintf(msg, sizeof(msg), "the memory of %zu process%s, the first: %s", unread,
			 unread == 1 ? "" : "es", kp_error_message(first));
		r->problems++;
		if (out_is_json(o))
			out_kv_str(o, "unreadable_first", kp_error_message(first));
		else
			out_text(o, "%-10s (could not be read: %s)\n", nt ? "" : "largest:", msg);
		kp_error_destroy(first);
	}
	cli_walk_json(o, &w);
	if (!cli_walk_complete(&w))
		out_text(o, "%-10s (the task list could not all be read: processes may be missing%s%s)\n",
			 nt ? "" : "largest:", w.err ? ": " : "", w.err ? kp_error_message(w.err) : "");
	r->problems += w.err != NULL;
	kp_error_destroy(w.err);
	free(tasks);
	out_end_object(o);
}

// The scheduler's own text, where a sleeping task's stack starts:
// in_sched_functions() (kernel/sched/core.c) is the __sched and the lock
// text. Looked up once a report.
struct sched_text {
	uint64_t start[2], end[2];
	bool known[2];
};

static void sched_text(struct kp_kernel *k, struct sched_text *ret)
{
	static const char *const marks[2][2] = {
		{ "__sched_text_start", "__sched_text_end" }, { "__lock_text_start", "__lock_text_end" },
	};
	for (int i = 0; i < 2; i++) {
		struct kp_symbol s, e;
		struct kp_error *err = kp_symbol_by_name(k, marks[i][0], &s);
		if (!err)
			err = kp_symbol_by_name(k, marks[i][1], &e);
		ret->known[i] = !err;
		kp_error_destroy(err);
		if (ret->known[i])
			ret->start[i] = s.address, ret->end[i] = e.address;
	}
}

static bool in_sched(const struct sched_text *t, uint64_t at)
{
	for (int i = 0; i < 2; i++)
		if (t->known[i] && at >= t->start[i] && at < t->end[i])
			return true;
	return false;
}

// The first function of a blocked task's stack outside the scheduler
// (where it waits), as /proc/PID/stack and /proc/PID/wchan skip it; the
// context switch itself is not in the scheduler's text. "" if the stack
// cannot be read.
static void waits_in(struct report *r, const struct sched_text *t, uint64_t task, char *buf, size_t size)
{
	static const char *const switches[] = { "__switch_to", "__switch_to_asm", "cpu_switch_to" };
	struct kp_stack *st;
	const struct kp_frame *fr;
	buf[0] = '\0';
	struct kp_error *err = kp_stack_task_create(r->k, task, &st);
	if (err) {
		kp_error_destroy(err);
		return;
	}
	size_t n = kp_stack_frames(st, &fr);
	for (size_t i = 0; i < n && !buf[0]; i++) {
		struct kp_symbol sym;
		uint64_t at = fr[i].flags & KP_FRAME_EXACT ? fr[i].pc : fr[i].pc - 1;
		struct kp_error *e = kp_symbol_by_address(r->k, at, &sym);
		bool sched = in_sched(t, at);
		for (size_t j = 0; !e && j < sizeof(switches) / sizeof(switches[0]); j++)
			sched |= !strcmp(sym.name, switches[j]);
		kp_error_destroy(e);
		if (!e && !sched)
			cli_frame_name(r->k, &fr[i], buf, size);
	}
	kp_stack_destroy(st);
}

static void blocked_one(struct report *r, const struct sched_text *t, const struct kp_task *task, bool first)
{
	struct out *o = r->o;
	char at[320], last[32] = "null", since[32] = "null", tail[64] = "";
	waits_in(r, t, task->address, at, sizeof(at));
	struct kp_task_last_ran lr;
	struct kp_error *e = kp_task_last_ran(r->k, task->address, &lr);
	if (!e) {
		cli_seconds(lr.exec_start, last, sizeof(last));
		cli_seconds(lr.since, since, sizeof(since));
		snprintf(tail, sizeof(tail), ", not run for %s s", since);
	}
	kp_error_destroy(e);	// not known: null, and nothing in text
	if (out_is_json(o)) {
		out_begin_object(o, NULL);
		out_kv_int(o, "pid", task->pid);
		out_kv_str(o, "comm", task->comm);
		out_kv_str(o, "waits_in", at[0] ? at : NULL);
		out_kv_json(o, "last_ran", last, NULL);
		out_kv_json(o, "since_ran", since, NULL);
		out_end_object(o);
	} else {
		out_text(o, "%-10s PID %d (%s)%s%s%s\n", first ? "blocked:" : "", task->pid, task->name,
			 at[0] ? " in " : "", at, tail);
	}
}

void report_blocked(struct report *r)
{
	struct kp_task *tasks;
	size_t n;
	struct cli_walk w = { .err = NULL };
	struct out *o = r->o;
	out_begin_object(o, "blocked");
	struct kp_error *err = cli_collect_tasks(r->k, true, &tasks, &n, &w);
	if (err) {
		report_problem(r, "blocked:", err);
		out_end_object(o);
		return;
	}
	struct sched_text t;
	sched_text(r->k, &t);
	out_begin_list(o, "tasks");
	size_t nd = 0;
	for (size_t i = 0; i < n; i++)
		if (tasks[i].state == 'D')
			blocked_one(r, &t, &tasks[i], !nd++);
	out_end_list(o);
	free(tasks);
	if (!nd)
		out_text(o, "blocked:   no task in D state%s\n", cli_walk_complete(&w) ? "" : " among those read");
	cli_walk_json(o, &w);
	if (!cli_walk_complete(&w))
		out_text(o, "%-10s (the task list could not all be read: tasks may be missing%s%s)\n",
			 nd ? "" : "blocked:", w.err ? ": " : "", w.err ? kp_error_message(w.err) : "");
	r->problems += w.err != NULL;	// a live kernel's change is not one
	kp_error_destroy(w.err);
	out_end_object(o);
}
