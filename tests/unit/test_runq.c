// SPDX-License-Identifier: MIT
// kp_runq_iter (linux/sched/runq_walk.c) on the synthetic kernel's run
// queues (tests/gen/synthsys.h): every value expected here is one the
// generator wrote (synthsys.c's runqueues()), or one a test's edit writes.
#include "test.h"
#include "synthkernel.h"
#include "synthsys.h"

#define VA(pa) SKP_VA(pa)
#define UNMAPPED UINT64_C(0xffffc90000400000)	// vmalloc space, no page table

static struct sk_opts opts(enum sk_sys sys, const struct sks_word *edit)
{
	return (struct sk_opts){ .format = SK_ELF, .ntasks = 12, .procs = SK_PROCS_LIST, .sys = sys,
				 .edit = edit ? sks_put_words : NULL, .edit_arg = (void *)edit };
}

static struct kp_kernel *open_sys(enum sk_sys sys, const struct sks_word *edit)
{
	struct sk_opts o = opts(sys, edit);
	struct kp_kernel *k = NULL;
	CHECK_OK(sk_open(&o, &k));
	return k;
}

static const struct sk_opts base = { .ntasks = 12, .procs = SK_PROCS_LIST, .sys = SK_SYS_NEW };
#define TASK(i) sk_task_va(&base, i)
#define TASK_PA(i) sk_task_pa(&base, i)

struct want_task {
	int32_t pid;
	const char *comm, *cls;
	int32_t prio;
	uint64_t vruntime;
};

static void check_task(const struct kp_rq_task *t, const struct want_task *w)
{
	CHECK_U64(t->pid, w->pid);
	CHECK_U64(t->task, w->pid ? TASK(w->pid) : SK_INIT_TASK);
	CHECK_STR(t->comm, w->comm);
	CHECK_STR(t->sched_class, w->cls);
	CHECK_U64(t->prio, w->prio);
	CHECK_U64(t->vruntime, w->vruntime);
}

// CPU 0's queue in pick order: deadline, real-time by priority, then fair
// in tree order with group 0's queue in its place, then the running group 1's.
static const struct want_task cpu0[] = {
	{ 3, "task3", "dl", 0, 0 }, { 4, "task4", "rt", 89, 0 }, { 5, "task5", "rt", 49, 0 },
	{ 6, "task6", "rt", 49, 0 }, { 7, "task7", "fair", 120, 100 }, { 8, "task8", "fair", 110, 50 },
	{ 9, "task9", "fair", 125, 60 }, { 2, "task2", "fair", 120, 300 }, { 10, "task10", "fair", 127, 70 },
};

static void check_cpu(const struct kp_rq *r, uint32_t cpu)
{
	CHECK_U64(r->cpu, cpu);
	CHECK_U64(r->rq, VA(SKS_RQ(cpu)));
	if (cpu == 0) {
		CHECK_U64(r->nr_running, 10);
		check_task(&r->current, &(struct want_task){ 1, "init", "fair", 120, 1000 });
		CHECK_U64(r->nqueued, 9);
		for (size_t i = 0; i < r->nqueued && i < 9; i++)
			check_task(&r->queued[i], &cpu0[i]);
	} else if (cpu == 1) {
		CHECK_U64(r->nr_running, 0);
		check_task(&r->current, &(struct want_task){ 0, "swapper/0", "idle", 120, 0 });
		CHECK_U64(r->nqueued, 0);
	} else {
		CHECK_U64(r->nr_running, 2);
		check_task(&r->current, &(struct want_task){ 11, "task11", "rt", 98, 0 });
		CHECK_U64(r->nqueued, 1);
		if (r->nqueued == 1)
			check_task(&r->queued[0], &(struct want_task){ 12, "task12", "fair", 120, 5 });
	}
}

// Walks every run queue: the CPUs yielded (a bit each), the error, the status.
static struct kp_error *walk(struct kp_kernel *k, unsigned *cpus, struct kp_walk_status *st)
{
	struct kp_runq_iter *it;
	const struct kp_rq *r;
	struct kp_error *err = kp_runq_iter_create(k, &it);
	*cpus = 0;
	if (err)
		return err;
	while (!(err = kp_runq_iter_next(it, &r)) && r) {
		*cpus |= 1u << r->cpu;
		check_cpu(r, r->cpu);
	}
	kp_runq_iter_status(it, st);
	kp_runq_iter_destroy(it);
	return err;
}

TEST(run_queues_of_every_possible_cpu)
{
	for (enum sk_sys sys = SK_SYS_NEW; sys <= SK_SYS_OLD; sys++) {
		struct kp_kernel *k = open_sys(sys, NULL);
		KP_INIT(kp_walk_status, st);
		unsigned cpus;
		if (!k)
			return;
		CHECK_OK(walk(k, &cpus, &st));
		CHECK_U64(cpus, 0x7);	// CPU 3 is not in __cpu_possible_mask
		CHECK(st.end == KP_WALK_COMPLETE && st.left_out == 0);
		kp_kernel_destroy(k);
	}
}

// Without the fair server's dl_server bit (5.x), the server entity would
// be taken for a task: the generator leaves it out of the old kernels'
// tree; a new kernel whose server has the bit cleared shows a bogus task,
// which proves the bit is what the walker looks at.
TEST(the_fair_server_is_not_a_task)
{
	const struct sks_word edit[] = { { SKS_FAIR_SERVER + SKS_DL_FLAGS, 0, 4 }, { 0, 0, 0 } };
	struct kp_kernel *k = open_sys(SK_SYS_NEW, edit);
	struct kp_runq_iter *it = NULL;
	const struct kp_rq *r = NULL;
	if (!k)
		return;
	CHECK_OK(kp_runq_iter_create(k, &it));
	if (it)	// else failed above: no iterator to read
		CHECK_OK(kp_runq_iter_next(it, &r));
	CHECK(r && r->nqueued == 10 && r->queued[1].task == VA(SKS_FAIR_SERVER) - SKS_T_DL);
	kp_runq_iter_destroy(it);
	kp_kernel_destroy(k);
}

struct hostile {
	const char *what;
	struct sks_word edit[3];
	unsigned cpus;		// yielded
	enum kp_error_code code;
	const char *message;
};

TEST(hostile_run_queues)
{
	uint64_t se2 = TASK_PA(2) + SKS_T_SE + SKS_SE_RUN_NODE, rt6 = TASK_PA(6) + SKS_T_RT;
	const struct hostile cases[] = {
		// CPU 0's fair tree loops back to its root: within its bound.
		{ "cfs cycle", { { se2 + SKS_RB_RIGHT, VA(SKS_GROUP_SE(0) + SKS_SE_RUN_NODE), 8 } }, 0x6, KP_ERR_LOOP,
		  "run queue of CPU 0" },
		// Group 0's queue holds group 0: nested beyond 64 levels.
		{ "group in itself", { { SKS_GROUP_CFS(0) + SKS_CFS_TIMELINE, VA(SKS_GROUP_SE(0) + SKS_SE_RUN_NODE), 8 } },
		  0x6, KP_ERR_LOOP, "task groups nested more than 64 deep" },
		// An RT list whose last node points back into it.
		{ "rt list", { { rt6, VA(TASK_PA(5) + SKS_T_RT), 8 } }, 0x6, KP_ERR_FORMAT, "rt priority queue" },
		// CPU 2's queued task: a pointer to nowhere.
		{ "unmapped", { { TASK_PA(12) + SKS_T_SE + SKS_SE_RUN_NODE + SKS_RB_LEFT, UNMAPPED, 8 } }, 0x3,
		  KP_ERR_FAULT, "0xffffc90000400000" },
		// CPU 1's current task is on a page the dump lacks.
		{ "no page", { { SKS_RQ(1) + SKS_RQ_CURR, SK_HOLE, 8 } }, 0x5, KP_ERR_FAULT, "the current task of CPU 1" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct hostile *c = &cases[i];
		struct kp_kernel *k = open_sys(SK_SYS_NEW, c->edit);
		KP_INIT(kp_walk_status, st);
		unsigned cpus;
		if (!k)
			return;
		printf("  %s\n", c->what);
		CHECK_ERR(walk(k, &cpus, &st), c->code, c->message);
		CHECK_U64(cpus, c->cpus);
		CHECK(st.end == KP_WALK_STOPPED && st.left_out == 1);
		kp_kernel_destroy(k);
	}
}

TEST(a_kernel_without_run_queues_says_so)
{
	struct sk_opts o = opts(SK_SYS_NONE, NULL);
	struct kp_kernel *k = NULL;
	struct kp_runq_iter *it = NULL;
	CHECK_OK(sk_open(&o, &k));
	if (!k)
		return;
	CHECK_ERR(kp_runq_iter_create(k, &it), KP_ERR_NOT_FOUND, "struct rq not found");
	CHECK(it == NULL);
	kp_kernel_destroy(k);
}

int main(void)
{
	RUN(run_queues_of_every_possible_cpu);
	RUN(the_fair_server_is_not_a_task);
	RUN(hostile_run_queues);
	RUN(a_kernel_without_run_queues_says_so);
	return TEST_SUMMARY();
}
