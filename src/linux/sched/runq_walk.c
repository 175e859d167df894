// SPDX-License-Identifier: MIT
// kp_runq_iter: what each CPU's run queue holds, as crash's runq shows it
// (kernel/sched/sched.h): rq->curr, then the queued tasks of each class in
// the order the scheduler picks them:
//   - deadline: rq->dl.root, an rbtree of sched_dl_entity.rb_node by
//     deadline; 6.8's fair server (dl_server) is an entity of that tree
//     that is not a task, skipped;
//   - real-time: rq->rt.active, a bitmap of priorities and a list of
//     sched_rt_entity.run_list per priority (MAX_RT_PRIO);
//   - fair: rq->cfs.tasks_timeline, an rbtree of sched_entity.run_node
//     (by vruntime, by deadline with EEVDF since 6.6); an entity with a
//     my_q is a task group's (CONFIG_FAIR_GROUP_SCHED, autogroups), its
//     own queue walked in its place, and a group that is running (its
//     cfs_rq->curr, not in the tree) is walked too.
// The running entity of a class is not in its tree: rq->curr is apart.
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "core/kernel.h"
#include "core/layout.h"
#include "linux/lib/list.h"
#include "linux/lib/rbtree.h"
#include "linux/lib/walk.h"
#include "linux/sched/sched.h"
#include "util/error.h"
#include "util/vec.h"

#define MAX_RT_PRIO 100
#define MAX_GROUP_DEPTH 64	// nested task groups (cgroup depth)
#define MAX_QUEUED 65536	// tasks queued on one CPU

enum { R_NR_RUNNING, R_NR_SWITCHES, R_CURR, R_CFS, R_RT, R_DL, R_N };
static const struct kp_member_spec rq_members[R_N] = {
	[R_NR_RUNNING] = { .name = "nr_running", .flags = KP_MEMBER_NOSPAN },
	[R_NR_SWITCHES] = { .name = "nr_switches", .flags = KP_MEMBER_NOSPAN },
	[R_CURR] = { .name = "curr", .flags = KP_MEMBER_NOSPAN },
	[R_CFS] = { .name = "cfs", .flags = KP_MEMBER_NOSPAN },
	[R_RT] = { .name = "rt", .flags = KP_MEMBER_NOSPAN },
	[R_DL] = { .name = "dl", .flags = KP_MEMBER_NOSPAN },
};
static const struct kp_struct_spec rq_spec = KP_STRUCT_SPEC("struct rq", rq_members);
enum { C_TIMELINE, C_CURR, C_N };
static const struct kp_member_spec cfs_members[C_N] = {
	[C_TIMELINE] = { .name = "tasks_timeline.rb_root", .flags = KP_MEMBER_NOSPAN },
	[C_CURR] = { .name = "curr" },
};
static const struct kp_struct_spec cfs_spec = KP_STRUCT_SPEC("struct cfs_rq", cfs_members);
enum { E_RUN_NODE, E_MY_Q, E_VRUNTIME, E_N };
static const struct kp_member_spec se_members[E_N] = {
	[E_RUN_NODE] = { .name = "run_node", .flags = KP_MEMBER_NOSPAN },
	[E_MY_Q] = { .name = "my_q", .flags = KP_MEMBER_OPTIONAL },	// CONFIG_FAIR_GROUP_SCHED
	[E_VRUNTIME] = { .name = "vruntime" },
};
static const struct kp_struct_spec se_spec = KP_STRUCT_SPEC("struct sched_entity", se_members);
enum { RT_BITMAP, RT_QUEUE, RT_N };
static const struct kp_member_spec rt_rq_members[RT_N] = {
	[RT_BITMAP] = { .name = "active.bitmap", .flags = KP_MEMBER_NOSPAN },
	[RT_QUEUE] = { .name = "active.queue", .flags = KP_MEMBER_NOSPAN },
};
static const struct kp_struct_spec rt_rq_spec = KP_STRUCT_SPEC("struct rt_rq", rt_rq_members);
static const struct kp_member_spec rt_se_members[] = { { .name = "run_list", .flags = KP_MEMBER_NOSPAN } };
static const struct kp_struct_spec rt_se_spec = KP_STRUCT_SPEC("struct sched_rt_entity", rt_se_members);
static const struct kp_member_spec dl_rq_members[] = { { .name = "root.rb_root", .flags = KP_MEMBER_NOSPAN } };
static const struct kp_struct_spec dl_rq_spec = KP_STRUCT_SPEC("struct dl_rq", dl_rq_members);
enum { D_RB_NODE, D_SERVER, D_N };
static const struct kp_member_spec dl_se_members[D_N] = {
	[D_RB_NODE] = { .name = "rb_node", .flags = KP_MEMBER_NOSPAN },
	[D_SERVER] = { .name = "dl_server", .flags = KP_MEMBER_OPTIONAL },	// 6.8 (63ba8422f876)
};
static const struct kp_struct_spec dl_se_spec = KP_STRUCT_SPEC("struct sched_dl_entity", dl_se_members);
enum { T_SE, T_RT, T_DL, T_PID, T_COMM, T_PRIO, T_CLASS, T_N };
static const struct kp_member_spec task_members[T_N] = {
	[T_SE] = { .name = "se", .flags = KP_MEMBER_NOSPAN },
	[T_RT] = { .name = "rt", .flags = KP_MEMBER_NOSPAN },
	[T_DL] = { .name = "dl", .flags = KP_MEMBER_NOSPAN },
	[T_PID] = { .name = "pid" },
	[T_COMM] = { .name = "comm" },
	[T_PRIO] = { .name = "prio" },
	[T_CLASS] = { .name = "sched_class" },
};
static const struct kp_struct_spec task_spec = KP_STRUCT_SPEC("struct task_struct", task_members);

enum { L_RQ, L_CFS, L_SE, L_RT_RQ, L_RT_SE, L_DL_RQ, L_DL_SE, L_TASK, L_N };
static const struct kp_struct_spec *const specs[L_N] = {
	&rq_spec, &cfs_spec, &se_spec, &rt_rq_spec, &rt_se_spec, &dl_rq_spec, &dl_se_spec, &task_spec,
};

// The scheduling classes, by the symbol of their struct sched_class.
static const struct { const char *symbol, *name; } class_syms[] = {
	{ "stop_sched_class", "stop" }, { "dl_sched_class", "dl" }, { "rt_sched_class", "rt" },
	{ "fair_sched_class", "fair" }, { "ext_sched_class", "ext" }, { "idle_sched_class", "idle" },
};
#define NCLASSES (sizeof(class_syms) / sizeof(class_syms[0]))

struct kp_runq_iter {
	struct kp_kernel *k;
	const struct kp_struct_layout *l[L_N];
	uint64_t classes[NCLASSES];
	uint32_t ncpus, next_cpu;
	struct kp_rq rq;
	struct kp_rq_task *queued;
	size_t cap;
	struct kp_lx_walk walk;
};

static const char *class_name(struct kp_runq_iter *it, uint64_t cls)
{
	for (size_t i = 0; i < NCLASSES; i++)
		if (it->classes[i] && it->classes[i] == cls)
			return class_syms[i].name;
	return "?";
}

// The task at task into t (class: the queue it was found in, or NULL for
// its sched_class's).
static struct kp_error *task(struct kp_runq_iter *it, uint64_t at, const char *class, struct kp_rq_task *t)
{
	uint8_t buf[8192];
	const struct kp_struct_layout *l = it->l[L_TASK];
	struct kp_error *err = kp_kernel_read_struct(it->k, l, at, buf, sizeof(buf));
	if (err)
		return err;
	memset(t, 0, sizeof(*t));
	t->task = at;
	t->pid = (int32_t)kp_layout_u64(l, buf, T_PID);
	memcpy(t->comm, kp_layout_at(l, buf, T_COMM), sizeof(t->comm));
	t->comm[sizeof(t->comm) - 1] = '\0';
	t->prio = (int32_t)kp_layout_u64(l, buf, T_PRIO);
	t->sched_class = class ? class : class_name(it, kp_layout_u64(l, buf, T_CLASS));
	if (!strcmp(t->sched_class, "fair")) {
		uint64_t se = at + kp_layout_off(l, T_SE);
		err = kp_read_u64(it->k, se + kp_layout_off(it->l[L_SE], E_VRUNTIME), &t->vruntime);
	}
	return err;
}

static struct kp_error *queue(struct kp_runq_iter *it, uint64_t at, const char *class)
{
	if (it->rq.nqueued >= MAX_QUEUED)
		return kp_error_create(KP_ERR_LOOP, "run queue of CPU %u: more than %u queued tasks (corrupt?)",
				       it->rq.cpu, MAX_QUEUED);
	if (!KP_VEC_RESERVE(it->queued, it->cap, it->rq.nqueued + 1))
		return &kp_enomem;
	struct kp_error *err = task(it, at, class, &it->queued[it->rq.nqueued]);
	if (!err)
		it->rq.nqueued++;
	return err;
}

static struct kp_error *on_dl(uint64_t node, void *arg)
{
	struct kp_runq_iter *it = arg;
	const struct kp_struct_layout *l = it->l[L_DL_SE];
	uint64_t se = node - kp_layout_off(l, D_RB_NODE);
	if (kp_layout_has(l, D_SERVER)) {
		uint8_t buf[8];
		const struct kp_member_layout *m = &l->m[D_SERVER];
		struct kp_error *err = kp_read(it->k, KP_VIRT, se + m->offset, buf, m->size > 8 ? 8 : m->size);
		if (err)
			return kp_error_prefix(err, "sched_dl_entity at 0x%" PRIx64, se);
		if (buf[0] >> m->bit_offset & 1)
			return NULL;	// the fair server, not a task
	}
	return queue(it, se - kp_layout_off(it->l[L_TASK], T_DL), "dl");
}

static struct kp_error *rt(struct kp_runq_iter *it, uint64_t rt_rq)
{
	const struct kp_struct_layout *l = it->l[L_RT_RQ];
	uint64_t bitmap[(MAX_RT_PRIO + 64) / 64];
	struct kp_error *err = kp_read(it->k, KP_VIRT, rt_rq + kp_layout_off(l, RT_BITMAP), bitmap, 16);
	if (err)
		return kp_error_prefix(err, "rt_rq at 0x%" PRIx64, rt_rq);
	for (unsigned prio = 0; prio < MAX_RT_PRIO; prio++) {
		if (!(bitmap[prio / 64] >> (prio % 64) & 1))
			continue;
		uint64_t head = rt_rq + kp_layout_off(l, RT_QUEUE) + prio * 16, node;
		struct kp_list_iter *list;
		bool done;
		if ((err = kp_lx_list_iter_create(it->k, head, 0, "rt priority queue", &list)))
			return err;
		while (!(err = kp_list_iter_next(list, &node, &done)) && !done) {
			uint64_t se = node - kp_layout_off(it->l[L_RT_SE], 0);
			if ((err = queue(it, se - kp_layout_off(it->l[L_TASK], T_RT), "rt")))
				break;
		}
		kp_list_iter_destroy(list);
		if (err)
			return err;
	}
	return NULL;
}

struct fair {
	struct kp_runq_iter *it;
	unsigned depth;
};
static struct kp_error *cfs(struct fair *f, uint64_t cfs_rq);

// A fair entity: a task, or a group whose queue is walked in its place.
static struct kp_error *fair_entity(struct fair *f, uint64_t se)
{
	struct kp_runq_iter *it = f->it;
	uint64_t my_q = 0;
	if (kp_layout_has(it->l[L_SE], E_MY_Q)) {
		struct kp_error *err = kp_read_u64(it->k, se + kp_layout_off(it->l[L_SE], E_MY_Q), &my_q);
		if (err)
			return kp_error_prefix(err, "sched_entity at 0x%" PRIx64, se);
	}
	if (my_q)
		return cfs(f, my_q);
	return queue(it, se - kp_layout_off(it->l[L_TASK], T_SE), "fair");
}

static struct kp_error *on_fair(uint64_t node, void *arg)
{
	struct fair *f = arg;
	return fair_entity(f, node - kp_layout_off(f->it->l[L_SE], E_RUN_NODE));
}

static struct kp_error *cfs(struct fair *f, uint64_t cfs_rq)
{
	struct kp_runq_iter *it = f->it;
	const struct kp_struct_layout *l = it->l[L_CFS];
	if (++f->depth > MAX_GROUP_DEPTH)
		return kp_error_create(KP_ERR_LOOP, "cfs_rq at 0x%" PRIx64 ": task groups nested more than %d deep "
				       "(corrupt?)", cfs_rq, MAX_GROUP_DEPTH);
	struct kp_error *err = kp_lx_rb_walk(it->k, cfs_rq + kp_layout_off(l, C_TIMELINE), MAX_QUEUED, on_fair, f);
	uint64_t curr, my_q = 0;
	// A running group entity is not in its parent's tree: its queue is
	// walked too (its running task is rq->curr).
	if (!err && kp_layout_has(it->l[L_SE], E_MY_Q) &&
	    !(err = kp_read_u64(it->k, cfs_rq + kp_layout_off(l, C_CURR), &curr)) && curr &&
	    !(err = kp_read_u64(it->k, curr + kp_layout_off(it->l[L_SE], E_MY_Q), &my_q)) && my_q)
		err = cfs(f, my_q);
	f->depth--;
	return err;
}

// The run queue of it->rq.cpu; *switched: the CPU switched tasks while it
// was read (rq->nr_switches, counted in __schedule() as rq->curr changes).
static struct kp_error *one(struct kp_runq_iter *it, bool *switched)
{
	const struct kp_struct_layout *l = it->l[L_RQ];
	uint64_t rq, curr, before, after;
	struct kp_error *err = kp_lx_rq(it->k, it->rq.cpu, &rq);
	if (err)
		return err;
	if ((err = kp_read_u64(it->k, rq + kp_layout_off(l, R_NR_SWITCHES), &before)) ||
	    (err = kp_read_u32(it->k, rq + kp_layout_off(l, R_NR_RUNNING), &it->rq.nr_running)) ||
	    (err = kp_read_u64(it->k, rq + kp_layout_off(l, R_CURR), &curr)))
		return kp_error_prefix(err, "run queue of CPU %u at 0x%" PRIx64, it->rq.cpu, rq);
	it->rq.rq = rq;
	it->rq.nqueued = 0;
	if ((err = task(it, curr, NULL, &it->rq.current)))
		return kp_error_prefix(err, "the current task of CPU %u", it->rq.cpu);
	struct fair f = { .it = it };
	if ((err = kp_lx_rb_walk(it->k, rq + kp_layout_off(l, R_DL) + kp_layout_off(it->l[L_DL_RQ], 0),
				 MAX_QUEUED, on_dl, it)) ||
	    (err = rt(it, rq + kp_layout_off(l, R_RT))) || (err = cfs(&f, rq + kp_layout_off(l, R_CFS))))
		return kp_error_prefix(err, "run queue of CPU %u", it->rq.cpu);
	if ((err = kp_read_u64(it->k, rq + kp_layout_off(l, R_NR_SWITCHES), &after)))
		return kp_error_prefix(err, "run queue of CPU %u at 0x%" PRIx64, it->rq.cpu, rq);
	*switched = after != before;
	it->rq.queued = it->queued;
	return NULL;
}

struct kp_error *kp_runq_iter_create(struct kp_kernel *k, struct kp_runq_iter **ret)
{
	struct kp_runq_iter *it = calloc(1, sizeof(*it));
	if (!it)
		return &kp_enomem;
	it->k = k;
	kp_lx_walk_init(&it->walk, k);
	struct kp_error *err = kp_kernel_layouts(k, specs, L_N, it->l);
	if (err) {
		kp_runq_iter_destroy(it);
		return err;
	}
	for (size_t i = 0; i < NCLASSES; i++) {
		struct kp_symbol sym;
		if (kp_symbol_find(k, class_syms[i].symbol, &sym))
			it->classes[i] = sym.address;
	}
	if (!(it->ncpus = kp_kernel_nr_cpu_ids(k))) {
		kp_runq_iter_destroy(it);
		return kp_kernel_no_symbol(k, "nr_cpu_ids cannot be read: which CPUs exist is unknown");
	}
	*ret = it;
	return NULL;
}

// Whether a live pass met a switch: the CPU switched tasks while it was
// read (a task could be seen twice or not at all), or the current task is
// queued as well (put_prev_task() enqueues it before rq->curr changes). In
// a dump the same moment can be frozen, and is shown as it is.
static bool met_switch(const struct kp_rq *rq, bool switched)
{
	if (switched)
		return true;
	for (size_t i = 0; i < rq->nqueued; i++)
		if (rq->queued[i].task == rq->current.task)
			return true;
	return false;
}

struct kp_error *kp_runq_iter_next(struct kp_runq_iter *it, const struct kp_rq **ret)
{
	*ret = NULL;
	while (it->next_cpu < it->ncpus) {
		uint32_t cpu = it->next_cpu++;
		struct kp_error *err = kp_kernel_check_cpu(it->k, cpu);
		if (err) {
			kp_error_destroy(err);	// not a possible CPU
			continue;
		}
		it->rq.cpu = cpu;
		// A live run queue changes all the time: read again, then answer
		// with the last read, marked.
		bool switched = false;
		for (unsigned pass = 0; (err = one(it, &switched)) && err->code != KP_ERR_NOMEM && it->walk.live &&
					pass < KP_WALK_LIVE_PASSES; pass++)
			kp_error_destroy(err);
		while (!err && it->walk.live && met_switch(&it->rq, switched)) {
			if (!kp_lx_walk_restart(&it->walk)) {
				kp_lx_walk_changed(&it->walk);
				break;
			}
			err = one(it, &switched);
		}
		if (!err) {
			*ret = &it->rq;
			return NULL;
		}
		if ((err = kp_lx_walk_unreadable(&it->walk, err)))
			return err;
	}
	return kp_lx_walk_finish(&it->walk);
}

void kp_runq_iter_status(const struct kp_runq_iter *it, struct kp_walk_status *ret)
{
	kp_lx_walk_status(&it->walk, ret);
}

void kp_runq_iter_destroy(struct kp_runq_iter *it)
{
	if (!it)
		return;
	kp_lx_walk_deinit(&it->walk);
	free(it->queued);
	free(it);
}
