// SPDX-License-Identifier: MIT
// check tasks: a process hidden by unlinking it from the task list
// (init_task.tasks: what ps, /proc and every list walker see; the DKOM of
// the FU/adore family, Volatility's psxview) is still
//   - in the PID table: init_pid_ns.idr maps every PID to its struct pid,
//     whose tasks[PIDTYPE_PID] is the task (via task->pid_links[0]);
//   - in its parent's children list (task->children, linked by ->sibling);
//   - the current task of a CPU while it runs (per_cpu(runqueues).curr).
// Each task seen in one of these must be in the task list (group leaders)
// or in its leader's thread list; and each listed task must be in the PID
// table (a rootkit can also detach a PID to hide from /proc lookups).
//
// Live, the views are read one after the other while tasks come and go: a
// task is reported only if its own list links say it is unlinked too
// (node->next->prev != node), which a task between fork and exit never is,
// and a task missing from the PID table only if a second walk still
// misses it.
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checks/check.h"
#include "core/layout.h"
#include "linux/lib/list.h"
#include "linux/lib/xarray.h"
#include "linux/sched/sched.h"
#include "util/error.h"
#include "util/le.h"
#include "util/vec.h"

// Where a task was seen besides the list.
enum { SEEN_IDR = 1, SEEN_CHILDREN = 2, SEEN_CPU = 4 };

struct seen {
	uint64_t task;
	unsigned views;
	uint64_t parent;	// for SEEN_CHILDREN: the listed parent
};

enum { X_GROUP_LEADER, X_CHILDREN, X_SIBLING, X_PID_LINKS, X_THREAD_PID, X_N };
static const struct kp_member_spec task_members[X_N] = {
	[X_GROUP_LEADER] = { .name = "group_leader" },
	[X_CHILDREN] = { .name = "children" },
	[X_SIBLING] = { .name = "sibling" },
	[X_PID_LINKS] = { .name = "pid_links[0]" },
	// 4.19+: the task's own struct pid (for the reverse check).
	[X_THREAD_PID] = { .name = "thread_pid", .flags = KP_MEMBER_OPTIONAL },
};
static const struct kp_struct_spec task_spec = KP_STRUCT_SPEC("struct task_struct", task_members);
static const struct kp_member_spec pid_members[] = { { .name = "tasks[0].first" } };
static const struct kp_struct_spec pid_spec = KP_STRUCT_SPEC("struct pid", pid_members);
static const struct kp_member_spec ns_members[] = { { .name = "idr.idr_rt" } };
static const struct kp_struct_spec ns_spec = KP_STRUCT_SPEC("struct pid_namespace", ns_members);

struct state {
	struct kp_ck *c;
	const struct kp_struct_layout *tl;	// kp_lx_task_spec
	uint64_t group_leader, children, sibling, pid_links, thread_pid;
	bool has_thread_pid;
	uint64_t pid_tasks;		// struct pid: tasks[PIDTYPE_PID].first
	uint64_t idr;			// init_pid_ns.idr.idr_rt (an xarray)
	struct kp_lx_xa_layout xa;
	struct kp_ck_addrs listed;		// tasks in the list and thread lists
	struct kp_ck_addrs pids;		// struct pid * in the PID table
	struct seen *seen;
	size_t nseen, seen_cap;
	// Objects a dump lacks (a filtered dump's excluded pages): counted,
	// the first error kept; the check then cannot be sure.
	size_t unreadable;
	char unreadable_why[256];
};

// A fault reading one object: counted (true); any other error is not.
static bool skip_fault(struct state *s, struct kp_error *err)
{
	if (!err || err->code != KP_ERR_FAULT)
		return false;
	if (!s->unreadable++)
		snprintf(s->unreadable_why, sizeof(s->unreadable_why), "%s", kp_error_message(err));
	kp_error_destroy(err);
	return true;
}

// One sighting (merged per task by merge_seen()).
static struct seen *saw(struct state *s, uint64_t task)
{
	if (!KP_VEC_RESERVE(s->seen, s->seen_cap, s->nseen + 1))
		return NULL;
	s->seen[s->nseen] = (struct seen){ .task = task };
	return &s->seen[s->nseen++];
}

static struct kp_error *layout(struct state *s)
{
	static const struct kp_struct_spec *const specs[] = { &kp_lx_task_spec, &task_spec, &pid_spec, &ns_spec };
	const struct kp_struct_layout *l[4];
	struct kp_kernel *k = s->c->k;
	struct kp_symbol ns;
	struct kp_error *err;
	if ((err = kp_kernel_layouts(k, specs, 4, l)) || (err = kp_lx_xa_layout(k, &s->xa)))
		return err;
	s->tl = l[0];
	s->group_leader = kp_layout_off(l[1], X_GROUP_LEADER);
	s->children = kp_layout_off(l[1], X_CHILDREN);
	s->sibling = kp_layout_off(l[1], X_SIBLING);
	s->pid_links = kp_layout_off(l[1], X_PID_LINKS);
	s->has_thread_pid = kp_layout_has(l[1], X_THREAD_PID);
	s->thread_pid = kp_layout_off(l[1], X_THREAD_PID);
	s->pid_tasks = kp_layout_off(l[2], 0);
	if (!kp_symbol_find(k, "init_pid_ns", &ns))
		return kp_error_create(KP_ERR_NOT_FOUND, "no symbol 'init_pid_ns' (the PID table)");
	s->idr = ns.address + kp_layout_off(l[3], 0);
	return NULL;
}

struct idr_walk {
	struct state *s;
	struct kp_ck_addrs *pids;
	bool note_tasks;
};

static struct kp_error *on_pid(uint64_t index, uint64_t pid, void *arg)
{
	struct idr_walk *w = arg;
	struct state *s = w->s;
	(void)index;
	if (!kp_ck_addrs_add(w->pids, pid))
		return &kp_enomem;
	if (w->pids->n > KP_LX_MAX_TASKS || (w->note_tasks && s->nseen > KP_LX_MAX_TASKS))
		return kp_error_create(KP_ERR_LOOP, "PID table: more than %u entries (corrupt?)",
				       KP_LX_MAX_TASKS);
	if (!w->note_tasks)
		return NULL;
	uint64_t first;
	struct kp_error *err = kp_read_u64(s->c->k, pid + s->pid_tasks, &first);
	if (err) {
		err = kp_error_prefix(err, "struct pid at 0x%" PRIx64, pid);
		return skip_fault(s, err) ? NULL : err;
	}
	if (!first)
		return NULL;	// a PID whose task is gone (kept by a reference)
	struct seen *e = saw(s, first - s->pid_links);
	if (!e)
		return &kp_enomem;
	e->views |= SEEN_IDR;
	return NULL;
}

static struct kp_error *walk_idr(struct state *s, struct kp_ck_addrs *pids, bool note_tasks)
{
	struct idr_walk w = { s, pids, note_tasks };
	struct kp_error *err = kp_lx_xa_walk(s->c->k, &s->xa, s->idr, on_pid, &w);
	if (!err)
		kp_ck_addrs_sort(pids);
	return err;
}

static struct kp_error *walk_list(struct state *s)
{
	struct kp_task_iter *it;
	struct kp_error *err = kp_task_iter_create(s->c->k, KP_TASKS_THREADS, &it);
	if (err)
		return err;
	const struct kp_task *t;
	while (!(err = kp_task_iter_next(it, &t)) && t)
		if (!kp_ck_addrs_add(&s->listed, t->address)) {
			err = &kp_enomem;
			break;
		}
	kp_task_iter_destroy(it);
	kp_ck_addrs_sort(&s->listed);
	return err;
}

// The children of every listed task.
static struct kp_error *walk_children(struct state *s)
{
	for (size_t i = 0; i < s->listed.n; i++) {
		uint64_t task = s->listed.v[i];
		struct kp_list_iter *it;
		struct kp_error *err = kp_lx_list_iter_create(s->c->k, task + s->children, 0,
							      "children list", &it);
		if (err)
			return err;
		for (;;) {
			uint64_t node;
			bool done;
			if ((err = kp_list_iter_next(it, &node, &done)) || done)
				break;
			uint64_t child = node - s->sibling;
			if (kp_ck_addrs_has(&s->listed, child))
				continue;
			struct seen *e = saw(s, child);
			if (!e) {
				err = &kp_enomem;
				break;
			}
			e->views |= SEEN_CHILDREN;
			e->parent = task;
		}
		kp_list_iter_destroy(it);
		if (err) {
			err = kp_error_prefix(err, "children of task 0x%" PRIx64, task);
			if (!skip_fault(s, err))
				return err;
		}
	}
	return NULL;
}

static struct kp_error *walk_cpus(struct state *s)
{
	struct kp_symbol sym;
	uint32_t n;
	if (!kp_symbol_find(s->c->k, "nr_cpu_ids", &sym) || !kp_ok(kp_read_u32(s->c->k, sym.address, &n)) ||
	    n > 8192)
		return NULL;	// without it, the other views still count
	for (uint64_t cpu = 0; cpu < n; cpu++) {
		uint64_t curr;
		if (!kp_lx_cpu_curr(s->c->k, cpu, &curr) || !curr)
			continue;
		struct seen *e = saw(s, curr);
		if (!e)
			return &kp_enomem;
		e->views |= SEEN_CPU;
	}
	return NULL;
}

// Whether the list_head at node is linked into a list (its neighbours
// point back at it): false for list_del_init (self-linked), list_del
// (poisoned) and a node whose neighbours were spliced around it.
static bool linked(struct kp_kernel *k, uint64_t node)
{
	uint64_t next, prev, back, fwd;
	if (!kp_ok(kp_read_u64(k, node, &next)) || !kp_ok(kp_read_u64(k, node + 8, &prev)) ||
	    next == node || !kp_ok(kp_read_u64(k, next + 8, &back)) ||
	    !kp_ok(kp_read_u64(k, prev, &fwd)))
		return false;
	return back == node && fwd == node;
}

struct task_info {
	int32_t pid, tgid;
	char comm[17];
	uint64_t leader;
	uint32_t exit_state;
};

static struct kp_error *task_info(struct state *s, uint64_t task, struct task_info *ret)
{
	struct kp_kernel *k = s->c->k;
	uint32_t pid, tgid, exit_state;
	struct kp_error *err;
	memset(ret, 0, sizeof(*ret));
	const struct kp_struct_layout *tl = s->tl;
	if ((err = kp_read_u32(k, task + kp_layout_off(tl, KP_LX_T_PID), &pid)) ||
	    (err = kp_read_u32(k, task + kp_layout_off(tl, KP_LX_T_TGID), &tgid)) ||
	    (err = kp_read_u32(k, task + kp_layout_off(tl, KP_LX_T_EXIT_STATE), &exit_state)) ||
	    (err = kp_read(k, KP_VIRT, task + kp_layout_off(tl, KP_LX_T_COMM), ret->comm, 16)) ||
	    (err = kp_read_u64(k, task + s->group_leader, &ret->leader)))
		return kp_error_prefix(err, "task 0x%" PRIx64, task);
	ret->pid = (int32_t)pid;
	ret->tgid = (int32_t)tgid;
	ret->exit_state = exit_state;
	for (int i = 0; i < 16; i++)
		if ((unsigned char)ret->comm[i] < 0x20 || (unsigned char)ret->comm[i] > 0x7e)
			ret->comm[i] = ret->comm[i] ? '?' : '\0';
	return NULL;
}

static const char *views_text(unsigned v, char *buf, size_t size)
{
	snprintf(buf, size, "%s%s%s%s%s", v & SEEN_IDR ? "the PID table" : "",
		 (v & SEEN_IDR) && (v & (SEEN_CHILDREN | SEEN_CPU)) ? ", " : "",
		 v & SEEN_CHILDREN ? "its parent's children" : "",
		 (v & SEEN_CHILDREN) && (v & SEEN_CPU) ? ", " : "",
		 v & SEEN_CPU ? "a CPU's run queue (current)" : "");
	return buf;
}

static int cmp_seen(const void *a, const void *b)
{
	uint64_t x = ((const struct seen *)a)->task, y = ((const struct seen *)b)->task;
	return x < y ? -1 : x > y;
}

static void merge_seen(struct state *s)
{
	if (s->nseen)
		qsort(s->seen, s->nseen, sizeof(*s->seen), cmp_seen);
	size_t n = 0;
	for (size_t i = 0; i < s->nseen; i++) {
		if (n && s->seen[n - 1].task == s->seen[i].task) {
			s->seen[n - 1].views |= s->seen[i].views;
			if (s->seen[i].parent)
				s->seen[n - 1].parent = s->seen[i].parent;
		} else {
			s->seen[n++] = s->seen[i];
		}
	}
	s->nseen = n;
}

// Tasks seen elsewhere but not in the lists.
static struct kp_error *report_unlisted(struct state *s, size_t *hidden)
{
	struct kp_kernel *k = s->c->k;
	merge_seen(s);
	for (size_t i = 0; i < s->nseen; i++) {
		struct seen *e = &s->seen[i];
		if (kp_ck_addrs_has(&s->listed, e->task))
			continue;
		struct task_info ti;
		struct kp_error *err = task_info(s, e->task, &ti);
		if (skip_fault(s, err))
			continue;
		if (err)
			return err;
		if (ti.pid == 0)
			continue;	// the idle tasks of CPUs 1.. are in no list
		bool leader = ti.leader == e->task;
		// A leader must be linked into init_task.tasks; a thread into its
		// group's thread list.
		uint64_t node = e->task + kp_layout_off(s->tl, leader ? KP_LX_T_TASKS :
			kp_layout_has(s->tl, KP_LX_T_THREAD_NODE) ? KP_LX_T_THREAD_NODE : KP_LX_T_THREAD_GROUP);
		if (linked(k, node))
			continue;	// linked after the walk (live), or its leader is hidden
		if (ti.exit_state & 0x10)
			continue;	// EXIT_DEAD: being released
		char views[128], why[256], parent[64] = "";
		if (e->views & SEEN_CHILDREN) {
			uint32_t ppid;
			if (kp_ok(kp_read_u32(k, e->parent + kp_layout_off(s->tl, KP_LX_T_PID), &ppid)))
				snprintf(parent, sizeof(parent), " (pid %u)", ppid);
		}
		snprintf(why, sizeof(why), "not in the %s, but in %s%s",
			 leader ? "task list (init_task.tasks)" : "thread list of its process",
			 views_text(e->views, views, sizeof(views)), parent);
		(*hidden)++;
		if ((err = kp_ck_add(s->c, e->task, NULL, why, "pid %d (%s)", ti.pid, ti.comm)))
			return err;
	}
	return NULL;
}

// Listed tasks whose struct pid is not in the PID table.
static struct kp_error *report_unpidded(struct state *s, size_t *detached)
{
	if (!s->has_thread_pid)
		return NULL;
	struct kp_kernel *k = s->c->k;
	struct kp_ck_addrs again = {0};
	struct kp_error *err = NULL;
	for (size_t i = 0; !err && i < s->listed.n; i++) {
		uint64_t task = s->listed.v[i], pid;
		if ((err = kp_read_u64(k, task + s->thread_pid, &pid))) {
			if (skip_fault(s, kp_error_prefix(err, "task 0x%" PRIx64, task))) {
				err = NULL;
				continue;
			}
			break;
		}
		if (!pid || kp_ck_addrs_has(&s->pids, pid))
			continue;
		if (!again.v && !again.cap && (err = walk_idr(s, &again, false)))
			break;
		if (kp_ck_addrs_has(&again, pid))
			continue;	// allocated after the first walk (live)
		struct task_info ti;
		if ((err = task_info(s, task, &ti))) {
			if (skip_fault(s, err)) {
				err = NULL;
				continue;
			}
			break;
		}
		if (ti.pid == 0 || ti.exit_state)
			continue;	// idle tasks; zombies detach their PID when reaped
		(*detached)++;
		err = kp_ck_add(s->c, task, NULL, "in the task list, but its PID is not in the PID table",
				"pid %d (%s)", ti.pid, ti.comm);
	}
	kp_ck_addrs_free(&again);
	return err;
}

struct kp_error *kp_ck_tasks(struct kp_ck *c)
{
	struct state s = { .c = c };
	struct kp_error *err = layout(&s);
	if (err)
		return kp_ck_cannot_err(c, err, "task views");
	// The PID table first, then the list: live, a task forked in between
	// is then in the list (linked), not a false "hidden".
	if ((err = walk_idr(&s, &s.pids, true))) {
		err = kp_ck_cannot_err(c, err, "PID table");
		goto out;
	}
	if ((err = walk_list(&s))) {
		err = kp_ck_cannot_err(c, err, "task list");
		goto out;
	}
	if ((err = walk_children(&s)) || (err = walk_cpus(&s))) {
		err = kp_ck_cannot_err(c, err, "children lists");
		goto out;
	}
	size_t hidden = 0, detached = 0;
	if ((err = report_unlisted(&s, &hidden)) || (err = report_unpidded(&s, &detached))) {
		err = kp_ck_cannot_err(c, err, "tasks");
		goto out;
	}
	err = kp_ck_summary(c, "%zu tasks in the task and thread lists, %zu PIDs in the PID table; "
			    "%zu hidden from the lists, %zu missing from the PID table",
			    s.listed.n, s.pids.n, hidden, detached);
	if (!err && s.unreadable)
		kp_ck_cannot(c, "%zu objects unreadable (the first: %s)", s.unreadable, s.unreadable_why);
out:
	kp_ck_addrs_free(&s.listed);
	kp_ck_addrs_free(&s.pids);
	free(s.seen);
	return err;
}
