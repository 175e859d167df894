// SPDX-License-Identifier: MIT
// check tasks: a process hidden by unlinking it (the DKOM of the FU/adore
// family, Volatility's psxview) stays in the kernel's other views of the
// same set of tasks, which are compared here:
//   - the task list (init_task.tasks: thread-group leaders) and each
//     group's thread list (signal->thread_head, 3.14+; else thread_group):
//     what ps, /proc and every list walker see;
//   - the PID table of every PID namespace: init_pid_ns.idr maps every PID
//     to its struct pid, whose tasks[PIDTYPE_PID] is the task (through
//     task->pid_links[0]); a struct pid of a nested namespace names that
//     namespace in numbers[level].ns, whose own idr must agree;
//   - the children lists (task->children, linked by ->sibling): a leader is
//     in its real parent's;
//   - the task current on each CPU's run queue (rq->curr).
// A task seen in any view must be in the task list (a leader) or its
// leader's thread list (a thread); a listed task must be in the PID table;
// a listed leader must be in its parent's children list.
//
// In a dump every mismatch is reported, whatever the task's own links
// look like: a ring of hidden tasks closed on itself satisfies next->prev
// == node everywhere. A view that cannot be read makes the check unable to
// decide (never "nothing suspicious"). On a live kernel the views are read
// one after the other while tasks come and go: a task that is exiting or
// was just forked is a transition, and every finding is confirmed by the
// check being run again (registry.c).
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checks/check.h"
#include "core/layout.h"
#include "linux/lib/list.h"
#include "linux/lib/xarray.h"
#include "linux/sched/sched.h"
#include "core/kernel.h"
#include "util/error.h"
#include "util/vec.h"

#define EXIT_DEAD 0x10		// include/linux/sched.h
#define EXIT_ZOMBIE 0x20
#define MAX_CPUS 8192
#define MAX_PID_NS 4096		// namespaces compared (containers; each at most 32 levels deep)

enum { T_PID, T_TGID, T_COMM, T_EXIT_STATE, T_GROUP_LEADER, T_REAL_PARENT, T_CHILDREN,
       T_SIBLING, T_PID_LINKS, T_THREAD_PID, T_N };
static const struct kp_member_spec task_members[T_N] = {
	[T_PID] = { .name = "pid" },
	[T_TGID] = { .name = "tgid" },
	[T_COMM] = { .name = "comm" },
	[T_EXIT_STATE] = { .name = "exit_state" },
	[T_GROUP_LEADER] = { .name = "group_leader" },
	[T_REAL_PARENT] = { .name = "real_parent" },
	[T_CHILDREN] = { .name = "children", .flags = KP_MEMBER_NOSPAN },
	[T_SIBLING] = { .name = "sibling", .flags = KP_MEMBER_NOSPAN },
	[T_PID_LINKS] = { .name = "pid_links[0]", .flags = KP_MEMBER_NOSPAN },
	// 4.19+: the task's own struct pid (for the reverse check).
	[T_THREAD_PID] = { .name = "thread_pid", .flags = KP_MEMBER_OPTIONAL },
};
static const struct kp_struct_spec task_spec = KP_STRUCT_SPEC("struct task_struct", task_members);
enum { P_TASKS, P_LEVEL, P_NUMBERS, P_N };
static const struct kp_member_spec pid_members[P_N] = {
	[P_TASKS] = { .name = "tasks[0].first" },
	[P_LEVEL] = { .name = "level" },
	[P_NUMBERS] = { .name = "numbers", .flags = KP_MEMBER_NOSPAN },
};
static const struct kp_struct_spec pid_spec = KP_STRUCT_SPEC("struct pid", pid_members);
enum { U_NS, U_N };
static const struct kp_member_spec upid_members[U_N] = { [U_NS] = { .name = "ns" } };
static const struct kp_struct_spec upid_spec = KP_STRUCT_SPEC("struct upid", upid_members);
static const struct kp_member_spec ns_members[] = { { .name = "idr.idr_rt" } };
static const struct kp_struct_spec ns_spec = KP_STRUCT_SPEC("struct pid_namespace", ns_members);

// The views a task was seen in.
enum {
	V_LIST = 1 << 0,	// the task list (a leader)
	V_THREADS = 1 << 1,	// a thread list
	V_PID = 1 << 2,		// the PID table of the initial PID namespace
	V_NS = 1 << 3,		// the PID table of a nested PID namespace
	V_CHILDREN = 1 << 4,	// its parent's children list
	V_CPU = 1 << 5,		// a CPU's current task
};

struct seen {
	uint64_t task;
	unsigned views;
	uint64_t parent;	// V_CHILDREN: whose list
};

struct state {
	struct kp_ck *c;
	const struct kp_struct_layout *tl, *pl, *ul, *nl;	// task, pid, upid, pid_namespace
	struct kp_lx_xa_layout xa;
	uint64_t init_ns;
	struct seen *seen;		// sightings, merged per task by merge()
	size_t nseen, seen_cap;
	struct kp_ck_addrs pids;	// struct pid * of the initial namespace's table
	struct kp_ck_addrs ns;		// nested namespaces seen
	size_t unread;			// views or objects that could not be read
	// Views not read whole (V_*): a task missing from one of them may be
	// in the part that could not be read, so it is not a finding.
	unsigned cut;
	char unread_why[300];		// the first
};

// A view or an object that could not be read: the check cannot decide
// unless it found something anyway. NOMEM is returned.
static struct kp_error *unread(struct state *s, struct kp_error *err, const char *what)
{
	if (!err || err->code == KP_ERR_NOMEM)
		return err;
	if (!s->unread++)
		snprintf(s->unread_why, sizeof(s->unread_why), "%s: %s", what, kp_error_message(err));
	kp_error_destroy(err);
	return NULL;
}

static struct kp_error *saw(struct state *s, uint64_t task, unsigned views, uint64_t parent)
{
	if (s->nseen > 4 * (size_t)KP_LX_MAX_TASKS)
		return kp_error_create(KP_ERR_LOOP, "more than %u task sightings (corrupt?)",
				       4 * KP_LX_MAX_TASKS);
	if (!KP_VEC_RESERVE(s->seen, s->seen_cap, s->nseen + 1))
		return &kp_enomem;
	s->seen[s->nseen++] = (struct seen){ task, views, parent };
	return NULL;
}

static struct kp_error *layout(struct state *s)
{
	static const struct kp_struct_spec *const specs[] = { &task_spec, &pid_spec, &upid_spec, &ns_spec };
	const struct kp_struct_layout *l[4];
	struct kp_symbol ns;
	struct kp_error *err = kp_kernel_layouts(s->c->k, specs, 4, l);
	if (err || (err = kp_lx_xa_layout(s->c->k, &s->xa)))
		return err;
	s->tl = l[0], s->pl = l[1], s->ul = l[2], s->nl = l[3];
	if (!kp_symbol_find(s->c->k, "init_pid_ns", &ns))
		return kp_error_create(KP_ERR_NOT_FOUND, "no symbol 'init_pid_ns' (the PID table)");
	s->init_ns = ns.address;
	return NULL;
}

// ---------------------------------------------------------------- the views

static struct kp_error *walk_list(struct state *s)
{
	struct kp_task_iter *it;
	struct kp_error *err = kp_task_iter_create(s->c->k, KP_TASKS_THREADS, &it);
	if (err)
		return unread(s, err, "task list");
	const struct kp_task *t;
	while (!(err = kp_task_iter_next(it, &t)) && t)
		if ((err = saw(s, t->address, t->pid == t->tgid ? V_LIST : V_THREADS, 0)))
			break;
	KP_INIT(kp_walk_status, st);
	kp_task_iter_status(it, &st);
	kp_task_iter_destroy(it);
	if (err && err->code != KP_ERR_NOMEM && st.end != KP_WALK_STOPPED) {
		kp_error_destroy(err);	// a kernel thread's full name: not a view
		return NULL;
	}
	// A task left out is still followed past; a list that stops is not:
	// tasks beyond the break are in no list view, and not hidden for it.
	if (err && !st.left_out)
		s->cut |= V_LIST | V_THREADS;
	return unread(s, err, "task list");
}

struct idr_walk {
	struct state *s;
	unsigned view;
};

static struct kp_error *on_pid(uint64_t index, uint64_t pid, void *arg)
{
	struct idr_walk *w = arg;
	struct state *s = w->s;
	struct kp_kernel *k = s->c->k;
	uint8_t buf[256];
	(void)index;
	if (kp_layout_span(s->pl) > sizeof(buf))
		return kp_error_create(KP_ERR_UNSUPPORTED, "struct pid of %" PRIu64 " bytes", kp_layout_span(s->pl));
	struct kp_error *err = kp_read(k, KP_VIRT, pid + s->pl->lo, buf, kp_layout_span(s->pl));
	if (err) {
		s->cut |= w->view;
		return unread(s, kp_error_prefix(err, "struct pid at 0x%" PRIx64, pid), "PID table");
	}
	if (w->view == V_PID) {
		if (!kp_ck_addrs_add(&s->pids, pid))
			return &kp_enomem;
		// The namespaces it is also numbered in, numbers[1..level].
		uint64_t level = kp_layout_u64(s->pl, buf, P_LEVEL);
		for (uint64_t i = 1; i <= level && i < 64; i++) {
			uint64_t ns;
			uint64_t at = pid + kp_layout_off(s->pl, P_NUMBERS) + i * s->ul->size +
				      kp_layout_off(s->ul, U_NS);
			if ((err = kp_read_u64(k, at, &ns))) {
				s->cut |= V_NS;
				return unread(s, kp_error_prefix(err, "struct pid at 0x%" PRIx64, pid), "PID table");
			}
			if (ns && s->ns.n < MAX_PID_NS && !kp_ck_addrs_add(&s->ns, ns))
				return &kp_enomem;
		}
	}
	uint64_t first = kp_layout_u64(s->pl, buf, P_TASKS);
	if (!first)
		return NULL;	// a PID whose task is gone (kept by a reference)
	return saw(s, first - kp_layout_off(s->tl, T_PID_LINKS), w->view, 0);
}

static struct kp_error *walk_ns(struct state *s, uint64_t ns, unsigned view)
{
	struct idr_walk w = { s, view };
	struct kp_error *err = kp_lx_xa_walk(s->c->k, &s->xa, ns + kp_layout_off(s->nl, 0), on_pid, &w);
	if (err)
		s->cut |= view;
	if (err)
		return unread(s, kp_error_prefix(err, "PID namespace at 0x%" PRIx64, ns), "PID table");
	return NULL;
}

static struct kp_error *walk_pid_tables(struct state *s)
{
	struct kp_error *err = walk_ns(s, s->init_ns, V_PID);
	kp_ck_addrs_sort(&s->pids);
	kp_ck_addrs_sort(&s->ns);
	for (size_t i = 0; !err && i < s->ns.n; i++)
		if (s->ns.v[i] != s->init_ns)
			err = walk_ns(s, s->ns.v[i], V_NS);
	return err;
}

static int cmp_seen(const void *a, const void *b)
{
	uint64_t x = ((const struct seen *)a)->task, y = ((const struct seen *)b)->task;
	return x < y ? -1 : x > y;
}

// One entry per task with every view it was seen in.
static void merge(struct state *s)
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

// The children of every task seen so far.
static struct kp_error *walk_children(struct state *s)
{
	size_t n = s->nseen;
	for (size_t i = 0; i < n; i++) {
		uint64_t task = s->seen[i].task;
		struct kp_list_iter *it;
		struct kp_error *err = kp_lx_list_iter_create(s->c->k, task + kp_layout_off(s->tl, T_CHILDREN),
							      0, "children list", &it);
		if (err)
			return err;
		kp_list_iter_set_limit(it, KP_LX_MAX_TASKS);
		for (;;) {
			uint64_t node;
			bool done;
			if ((err = kp_list_iter_next(it, &node, &done)) || done)
				break;
			if ((err = saw(s, node - kp_layout_off(s->tl, T_SIBLING), V_CHILDREN, task)))
				break;
		}
		kp_list_iter_destroy(it);
		if (err)
			s->cut |= V_CHILDREN;
		if ((err = unread(s, err ? kp_error_prefix(err, "children of task 0x%" PRIx64, task) : NULL,
				  "children lists")))
			return err;
	}
	return NULL;
}

static struct kp_error *walk_cpus(struct state *s)
{
	struct kp_symbol sym;
	uint32_t n;
	struct kp_error *err;
	if (!kp_symbol_find(s->c->k, "nr_cpu_ids", &sym))
		return unread(s, kp_error_create(KP_ERR_NOT_FOUND, "no symbol nr_cpu_ids"), "run queues");
	if ((err = kp_read_u32(s->c->k, sym.address, &n)))
		return unread(s, err, "run queues");
	for (uint32_t cpu = 0; cpu < n && cpu < MAX_CPUS; cpu++) {
		uint64_t curr;
		if (!kp_ok(kp_kernel_check_cpu(s->c->k, cpu)))
			continue;	// not a possible CPU: no run queue
		if ((err = kp_lx_cpu_curr(s->c->k, cpu, &curr))) {
			char what[48];
			snprintf(what, sizeof(what), "current task of CPU %u", cpu);
			if ((err = unread(s, err, what)))
				return err;
			continue;
		}
		if (curr && (err = saw(s, curr, V_CPU, 0)))
			return err;
	}
	return NULL;
}

// ---------------------------------------------------------------- comparing them

struct task_info {
	int32_t pid, tgid;
	char comm[17];
	uint32_t exit_state;
	uint64_t leader, parent, thread_pid;
};

static struct kp_error *task_info(struct state *s, uint64_t task, struct task_info *ret)
{
	const struct kp_struct_layout *l = s->tl;
	uint8_t buf[4096];
	if (kp_layout_span(l) > sizeof(buf))
		return kp_error_create(KP_ERR_UNSUPPORTED, "task_struct span of %" PRIu64 " bytes", kp_layout_span(l));
	struct kp_error *err = kp_read(s->c->k, KP_VIRT, task + l->lo, buf, kp_layout_span(l));
	if (err)
		return kp_error_prefix(err, "task 0x%" PRIx64, task);
	ret->pid = (int32_t)kp_layout_u64(l, buf, T_PID);
	ret->tgid = (int32_t)kp_layout_u64(l, buf, T_TGID);
	ret->exit_state = (uint32_t)kp_layout_u64(l, buf, T_EXIT_STATE);
	ret->leader = kp_layout_u64(l, buf, T_GROUP_LEADER);
	ret->parent = kp_layout_u64(l, buf, T_REAL_PARENT);
	ret->thread_pid = kp_layout_u64(l, buf, T_THREAD_PID);
	memcpy(ret->comm, kp_layout_at(l, buf, T_COMM), 16);
	ret->comm[16] = '\0';
	return NULL;
}

static void views_text(unsigned v, char *buf, size_t size)
{
	static const struct { unsigned bit; const char *name; } names[] = {
		{ V_PID, "the PID table" }, { V_NS, "a nested PID namespace's PID table" },
		{ V_CHILDREN, "its parent's children list" }, { V_CPU, "a CPU's run queue (current)" },
	};
	size_t n = 0;
	buf[0] = '\0';
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if ((v & names[i].bit) && n < size)
			n += (size_t)snprintf(buf + n, size - n, "%s%s", n ? ", " : "", names[i].name);
}

struct counts {
	size_t listed, hidden, detached, orphaned, transitions;
};

// What is wrong with a task seen in these views; NULL if nothing.
static const char *judge(struct state *s, const struct seen *e, const struct task_info *ti,
			 char *why, size_t size, struct counts *n)
{
	bool listed = e->views & (V_LIST | V_THREADS);
	bool leader = ti->leader == e->task;
	char views[160];
	views_text(e->views, views, sizeof(views));
	if (!listed) {
		// release_task() has unlinked it; it is doing its last switch.
		if ((ti->exit_state & EXIT_DEAD) && e->views == V_CPU)
			return NULL;
		if (s->cut & (leader ? V_LIST : V_THREADS))
			return NULL;	// in the part not read, perhaps: said as unreadable
		snprintf(why, size, "not in the %s, but in %s", leader ? "task list (init_task.tasks)" :
			 "thread list of its process", views);
		n->hidden++;
		return why;
	}
	n->listed++;
	if (ti->exit_state & EXIT_DEAD)
		return NULL;	// being released: detach_pid() and the lists go now
	if (ti->thread_pid && kp_layout_has(s->tl, T_THREAD_PID) && !(s->cut & V_PID) &&
	    !kp_ck_addrs_has(&s->pids, ti->thread_pid)) {
		snprintf(why, size, "in the %s, but its PID (struct pid 0x%" PRIx64 ") is not in the PID table",
			 leader ? "task list" : "thread list of its process", ti->thread_pid);
		n->detached++;
		return why;
	}
	if (leader && e->task != ti->parent && !(e->views & V_CHILDREN) && !(s->cut & V_CHILDREN)) {
		snprintf(why, size, "in the task list, but not in its parent's children list (real_parent 0x%" PRIx64 ")",
			 ti->parent);
		n->orphaned++;
		return why;
	}
	return NULL;
}

static struct kp_error *report(struct state *s, struct counts *n)
{
	struct kp_error *err = NULL;
	for (size_t i = 0; !err && i < s->nseen; i++) {
		const struct seen *e = &s->seen[i];
		struct task_info ti;
		if ((err = task_info(s, e->task, &ti))) {
			err = unread(s, err, "tasks");
			continue;
		}
		if (ti.pid == 0)
			continue;	// the idle tasks of CPUs 1.. are in no list
		char why[320];
		const char *w = judge(s, e, &ti, why, sizeof(why), n);
		if (!w)
			continue;
		// Live, a task exiting or just forked may be in one view and not
		// yet (or no longer) in another: a transition, confirmed or not by
		// the check's second run.
		if (s->c->live && ti.exit_state) {
			n->transitions++;
			err = kp_ck_add_race(s->c, e->task, why, "pid %d (%s), exiting", ti.pid, ti.comm);
			continue;
		}
		err = kp_ck_add(s->c, e->task, NULL, w, "pid %d (%s)", ti.pid, ti.comm);
	}
	return err;
}

struct kp_error *kp_ck_tasks(struct kp_ck *c)
{
	struct state s = { .c = c };
	struct kp_error *err = layout(&s);
	if (err)
		return kp_ck_cannot_err(c, err, "task views");
	// The PID tables first, then the lists: live, a task forked in between
	// is then in the lists, not a false "hidden".
	struct counts n = { 0 };
	if (!(err = walk_pid_tables(&s)) && !(err = walk_list(&s)) && !(err = walk_cpus(&s))) {
		merge(&s);
		if (!(err = walk_children(&s))) {
			merge(&s);
			err = report(&s, &n);
		}
	}
	if (err)
		err = kp_ck_cannot_err(c, err, "tasks");
	if (!err)
		err = kp_ck_summary(c, "%zu tasks in the task and thread lists, %zu PIDs in the PID table "
				    "(and %zu nested PID namespaces); %zu hidden from the lists, %zu missing from the "
				    "PID table, %zu missing from their parent's children list",
				    n.listed, s.pids.n, s.ns.n, n.hidden, n.detached, n.orphaned);
	if (!err && c->live)
		err = kp_ck_summary(c, "live kernel: %zu exiting tasks seen in some views only (transitions, "
				    "not findings); findings are confirmed by a second run", n.transitions);
	if (!err && s.unread)
		kp_ck_cannot(c, "%zu views or objects unreadable (the first: %s)", s.unread, s.unread_why);
	kp_ck_addrs_free(&s.pids);
	kp_ck_addrs_free(&s.ns);
	free(s.seen);
	return err;
}
