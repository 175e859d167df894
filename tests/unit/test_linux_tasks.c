// SPDX-License-Identifier: MIT
// Task and module list walkers (src/linux/tasks.c, modules.c) over synthetic
// memory with hand-made layouts, plus the pure helpers (state letters,
// loadavg formatting, syscall handler names).
#include <stdlib.h>

#include "test.h"
#include "collect.h"
#include "arch/arch.h"
#include "arch/x86_64/x86_64.h"
#include "core/kernel.h"
#include "io/memory.h"
#include "linux/module/module.h"
#include "linux/sched/sched.h"
#include "symbols/symtab.h"

#define BASE 0xffff888000100000ULL
#define MEMSIZE 0x20000

static uint8_t mem[MEMSIZE];

static struct kp_kernel *fake_kernel(void)
{
	struct kp_memory *m;
	struct kp_symtab *st;
	struct kp_kernel *k;
	if (kp_memory_create(&m) || kp_memory_add(m, KP_VIRT, BASE, MEMSIZE, kp_read_buffer, mem, 0) ||
	    kp_symtab_create(&st) || kp_kernel_from_parts(m, st, &kp_arch_x86_64, NULL, &k))
		abort();
	return k;
}

// The same memory with [hole, hole + size) left out (a page a dump lacks).
static struct kp_kernel *fake_kernel_hole(uint64_t hole, uint64_t size)
{
	struct kp_memory *m;
	struct kp_symtab *st;
	struct kp_kernel *k;
	if (kp_memory_create(&m) ||
	    kp_memory_add(m, KP_VIRT, BASE, hole - BASE, kp_read_buffer, mem, 0) ||
	    kp_memory_add(m, KP_VIRT, hole + size, BASE + MEMSIZE - hole - size, kp_read_buffer, mem,
			  hole + size - BASE) ||
	    kp_symtab_create(&st) || kp_kernel_from_parts(m, st, &kp_arch_x86_64, NULL, &k))
		abort();
	return k;
}

static void fake_destroy(struct kp_kernel *k)
{
	kp_kernel_destroy(k);
}

// Every task of a walk with an explicit layout, or its error (*t_ret and
// *n_ret untouched).
// Offsets of the hand-made structs.
static const struct {
	uint64_t tasks, pid, tgid, real_parent, state, exit_state, flags, comm, cpu, signal,
		 thread_node, thread_group, signal_thread_head;
} TL = {
	.tasks = 0x10, .pid = 0x20, .tgid = 0x24, .real_parent = 0x28,
	.state = 0x30, .exit_state = 0x34, .flags = 0x38,
	.comm = 0x40, .cpu = 0x50, .signal = 0x58,
	.thread_node = 0x60, .signal_thread_head = 0x10, .thread_group = 0x70,
};

#define M(o, s) { .offset = (o), .size = (s), .present = true }

// The task_struct and signal_struct layouts of the synthetic memory;
// thread_node false: a kernel before 3.14 (the thread_group ring only).
static void task_layouts(bool thread_node, struct kp_struct_layout **tl, struct kp_struct_layout **sl)
{
	struct kp_member_layout t[KP_LX_T_N] = {
		[KP_LX_T_TASKS] = M(TL.tasks, 16), [KP_LX_T_PID] = M(TL.pid, 4),
		[KP_LX_T_TGID] = M(TL.tgid, 4), [KP_LX_T_REAL_PARENT] = M(TL.real_parent, 8),
		[KP_LX_T_STATE] = M(TL.state, 4), [KP_LX_T_EXIT_STATE] = M(TL.exit_state, 4),
		[KP_LX_T_FLAGS] = M(TL.flags, 4), [KP_LX_T_COMM] = M(TL.comm, 16),
		[KP_LX_T_CPU] = M(TL.cpu, 4), [KP_LX_T_SIGNAL] = M(TL.signal, 8),
		[KP_LX_T_THREAD_NODE] = M(TL.thread_node, 16),
		[KP_LX_T_THREAD_GROUP] = M(TL.thread_group, 16),
	};
	struct kp_member_layout sg[KP_LX_S_N] = { [KP_LX_S_THREAD_HEAD] = M(TL.signal_thread_head, 16) };
	if (!thread_node)
		t[KP_LX_T_THREAD_NODE].present = false;
	if (kp_struct_layout_manual(&kp_lx_task_spec, 0x200, t, tl) ||
	    kp_struct_layout_manual(&kp_lx_signal_spec, 0x100, sg, sl))
		abort();
}

static struct kp_error *walk_layouts(struct kp_kernel *k, bool thread_node, uint64_t init,
				     bool threads, struct kp_task **t_ret, size_t *n_ret)
{
	struct kp_struct_layout *tl, *sl;
	task_layouts(thread_node, &tl, &sl);
	struct kp_task_iter *it;
	struct kp_error *err = kp_lx_task_iter_create(k, tl, sl, init, threads ? KP_TASKS_THREADS : 0, &it);
	if (!err)
		err = kpt_drain_tasks(it, t_ret, n_ret);
	free(tl);
	free(sl);
	return err;
}

static struct kp_error *walk_tasks(struct kp_kernel *k, uint64_t init, bool threads,
				   struct kp_task **t_ret, size_t *n_ret)
{
	return walk_layouts(k, true, init, threads, t_ret, n_ret);
}

static struct kp_error *walk_modules(struct kp_kernel *k, uint64_t head, struct kp_module **m_ret,
				     size_t *n_ret);

static void w64(uint64_t addr, uint64_t v) { memcpy(mem + (addr - BASE), &v, 8); }
static void w32(uint64_t addr, uint32_t v) { memcpy(mem + (addr - BASE), &v, 4); }

// ---------------------------------------------------------------- tasks

#define TASK(i) (BASE + 0x200ULL * (i))
#define SIG(i) (BASE + 0x10000ULL + 0x100ULL * (i))

static void list_link(uint64_t *nodes, int n)	// circular list of nodes
{
	for (int i = 0; i < n; i++) {
		w64(nodes[i], nodes[(i + 1) % n]);
		w64(nodes[i] + 8, nodes[(i + n - 1) % n]);
	}
}

static void task_init(int i, int pid, int tgid, int parent, uint32_t state,
		      uint32_t exit_state, uint32_t flags, const char *comm, int cpu, int sig)
{
	uint64_t t = TASK(i);
	w32(t + TL.pid, (uint32_t)pid);
	w32(t + TL.tgid, (uint32_t)tgid);
	w64(t + TL.real_parent, TASK(parent));
	w32(t + TL.state, state);
	w32(t + TL.exit_state, exit_state);
	w32(t + TL.flags, flags);
	memset(mem + (t - BASE) + TL.comm, 0, 16);
	memcpy(mem + (t - BASE) + TL.comm, comm, strlen(comm));
	w32(t + TL.cpu, (uint32_t)cpu);
	w64(t + TL.signal, SIG(sig));
}

// init_task(0, swapper) -> systemd(1) -> kthreadd(2, kernel thread), and
// "app" pid 10 with threads 11 and 12.
static void build_tasks(void)
{
	memset(mem, 0, sizeof(mem));
	task_init(0, 0, 0, 0, 0, 0, 0x00200000, "swapper/0", 0, 0);
	task_init(1, 1, 1, 0, 1, 0, 0, "systemd", 1, 1);
	task_init(2, 2, 2, 0, 0x402, 0, 0x00200000, "kthreadd", 0, 2);
	task_init(3, 10, 10, 1, 0, 0x20, 0, "app", 1, 3);
	task_init(4, 11, 10, 1, 2, 0, 0, "app-worker", 0, 3);
	task_init(5, 12, 10, 1, 4, 0, 0, "app-io", 1, 3);
	uint64_t tasks[] = {TASK(0) + TL.tasks, TASK(1) + TL.tasks, TASK(2) + TL.tasks,
			    TASK(3) + TL.tasks};
	list_link(tasks, 4);
	for (int i = 0; i < 3; i++) {
		uint64_t single[] = {SIG(i) + TL.signal_thread_head, TASK(i) + TL.thread_node};
		list_link(single, 2);
		uint64_t ring[] = {TASK(i) + TL.thread_group};
		list_link(ring, 1);
	}
	uint64_t group[] = {SIG(3) + TL.signal_thread_head, TASK(3) + TL.thread_node,
			    TASK(4) + TL.thread_node, TASK(5) + TL.thread_node};
	list_link(group, 4);
	uint64_t ring[] = {TASK(3) + TL.thread_group, TASK(4) + TL.thread_group,
			   TASK(5) + TL.thread_group};
	list_link(ring, 3);
}

TEST(state_letters_follow_task_state_index)
{
	CHECK(kp_lx_task_state_letter(0, 0) == 'R');
	CHECK(kp_lx_task_state_letter(1, 0) == 'S');
	CHECK(kp_lx_task_state_letter(2, 0) == 'D');
	CHECK(kp_lx_task_state_letter(4, 0) == 'T');
	CHECK(kp_lx_task_state_letter(8, 0) == 't');
	CHECK(kp_lx_task_state_letter(0, 0x10) == 'X');
	CHECK(kp_lx_task_state_letter(0, 0x20) == 'Z');
	CHECK(kp_lx_task_state_letter(0x40, 0) == 'P');
	CHECK(kp_lx_task_state_letter(0x402, 0) == 'I');	// TASK_IDLE
	CHECK(kp_lx_task_state_letter(0x1000, 0) == 'D');	// TASK_RTLOCK_WAIT
	CHECK(kp_lx_task_state_letter(0x101, 0) == 'S');	// + TASK_WAKEKILL bits
	CHECK(kp_lx_task_state_letter(0x8, 0x20) == 'Z');	// highest bit wins
}

TEST(task_list_leaders)
{
	build_tasks();
	struct kp_kernel *k = fake_kernel();
	struct kp_task *t = NULL;
	size_t n = 0;
	CHECK_OK(walk_tasks(k, TASK(0), false, &t, &n));
	CHECK_U64(n, 4);
	if (n == 4) {
		CHECK_STR(t[0].comm, "swapper/0");
		CHECK_U64(t[0].ppid, 0);
		CHECK(t[0].kthread);
		CHECK_U64(t[1].pid, 1);
		CHECK_U64(t[1].ppid, 0);
		CHECK(t[1].state == 'S');
		CHECK_U64(t[1].cpu, 1);
		CHECK(t[2].state == 'I');
		CHECK_STR(t[3].comm, "app");
		CHECK_U64(t[3].ppid, 1);
		CHECK(t[3].state == 'Z');
		CHECK_U64(t[3].address, TASK(3));
		CHECK(!t[3].kthread);
	}
	free(t);
	fake_destroy(k);
}

TEST(task_list_threads_via_thread_node_and_thread_group)
{
	build_tasks();
	struct kp_kernel *k = fake_kernel();
	for (int variant = 0; variant < 2; variant++) {
		struct kp_task *t = NULL;
		size_t n = 0;
		// variant 1: pre-3.14, the thread_group ring.
		CHECK_OK(walk_layouts(k, variant == 0, TASK(0), true, &t, &n));
		CHECK_U64(n, 6);
		if (n == 6) {
			CHECK_U64(t[3].pid, 10);
			CHECK_U64(t[4].pid, 11);
			CHECK_U64(t[4].tgid, 10);
			CHECK(t[4].state == 'D');
			CHECK_U64(t[5].pid, 12);
			CHECK(t[5].state == 'T');
			CHECK_U64(t[5].ppid, 1);
		}
		free(t);
	}
	fake_destroy(k);
}

TEST(task_list_cycle_null_and_fault_are_errors)
{
	struct kp_kernel *k = fake_kernel();
	struct kp_task *t = (struct kp_task *)1;
	size_t n = 7;
	// A cycle that does not come back to init_task: re-entering task 1
	// from task 3 breaks task 1's prev link (it points at init_task).
	build_tasks();
	w64(TASK(3) + TL.tasks, TASK(1) + TL.tasks);
	CHECK_ERR(walk_tasks(k, TASK(0), false, &t, &n), KP_ERR_FORMAT,
		  "task list is corrupt: 0xffff888000100610 points to 0xffff888000100210");
	// A thread ring that loops without reaching signal->thread_head.
	build_tasks();
	w64(TASK(5) + TL.thread_node, TASK(4) + TL.thread_node);
	CHECK_ERR(walk_tasks(k, TASK(0), true, &t, &n), KP_ERR_FORMAT, "thread list is corrupt");
	// A cycle whose every prev link agrees can only be a singly linked
	// list's: there Brent's algorithm ends it (test_memory's list tests).
	build_tasks();
	w64(TASK(2) + TL.tasks, 0);
	CHECK_ERR(walk_tasks(k, TASK(0), false, &t, &n), KP_ERR_FORMAT, "NULL");
	// A link into the middle of a node (8 bytes into init_task.tasks): the
	// walker would read a garbage task; next->prev does not point back.
	build_tasks();
	w64(TASK(1) + TL.tasks, TASK(0) + TL.tasks + 8);
	CHECK_ERR(walk_tasks(k, TASK(0), false, &t, &n), KP_ERR_FORMAT,
		  "task list is corrupt");
	// A node whose prev was not updated (unlinked behind its neighbour's back).
	build_tasks();
	w64(TASK(2) + TL.tasks + 8, TASK(0) + TL.tasks);
	CHECK_ERR(walk_tasks(k, TASK(0), false, &t, &n), KP_ERR_FORMAT, "prev pointer");
	build_tasks();
	w64(TASK(2) + TL.tasks, 0xffffc90000000000ULL + TL.tasks);
	CHECK_ERR(walk_tasks(k, TASK(0), false, &t, &n), KP_ERR_FAULT,
		  "node at 0xffffc90000000010");
	CHECK(t == (struct kp_task *)1 && n == 7);	// untouched on failure
	fake_destroy(k);
}

// A task whose task_struct the dump lacks (but whose list links are there):
// left out, the walk goes on, and its error is the walk's last word; on a
// live kernel the same task is one that went away (no error).
TEST(unreadable_task_is_left_out_and_named_at_the_end)
{
	build_tasks();
	for (int live = 0; live < 2; live++) {
		struct kp_kernel *k = fake_kernel_hole(TASK(2) + 0x20, 0x10);	// pid .. real_parent
		kp_kernel_set_live(k, live);
		struct kp_struct_layout *tl, *sl;
		task_layouts(true, &tl, &sl);
		struct kp_task_iter *it;
		CHECK_OK(kp_lx_task_iter_create(k, tl, sl, TASK(0), 0, &it));
		const struct kp_task *t;
		int pids[8], n = 0, calls = 0;
		struct kp_error *err = NULL;
		while (calls++ < 16 && !(err = kp_task_iter_next(it, &t)) && t)
			pids[n++ & 7] = t->pid;
		KP_INIT(kp_walk_status, st);
		kp_task_iter_status(it, &st);
		CHECK_U64(n, 3);
		if (n == 3) {
			CHECK_U64(pids[0], 0);
			CHECK_U64(pids[1], 1);
			CHECK_U64(pids[2], 10);
		}
		if (!live) {
			CHECK_ERR(err, KP_ERR_FAULT, "reading task_struct at 0xffff888000100400");
			CHECK(st.end == KP_WALK_STOPPED);
			CHECK_U64(st.left_out, 1);
		} else {
			CHECK_OK(err);
			CHECK(st.end == KP_WALK_LIVE_CHANGED);
		}
		kp_task_iter_destroy(it);
		free(tl);
		free(sl);
		fake_destroy(k);
	}
}

// ---------------------------------------------------------------- modules

static const struct {
	uint64_t list, name, state, refcnt, layout_base[2], layout_size[2];
} ML = {
	.list = 0x08, .name = 0x18, .state = 0x00, .refcnt = 0x58,
	.layout_base = {0x60, 0x80}, .layout_size = {0x68, 0x88},
};

// struct module with two regions (core and init layout) at 0x60 and 0x80;
// with uses, its source_list at 0xa0 (struct module_use: source_list at 0,
// source at 0x20).
#define ML_SOURCE_LIST 0xa0
#define USE_SOURCE 0x20
static struct kp_struct_layout *module_layout_uses(struct kp_lx_module_layout *ret, bool uses)
{
	struct kp_member_layout m[KP_LX_M_N] = {
		[KP_LX_M_LIST] = M(ML.list, 16), [KP_LX_M_NAME] = M(ML.name, 56),
		[KP_LX_M_STATE] = M(ML.state, 4), [KP_LX_M_REFCNT] = M(ML.refcnt, 4),
		[KP_LX_M_CORE_LAYOUT] = M(0x60, 0x20), [KP_LX_M_INIT_LAYOUT] = M(0x80, 0x20),
	};
	if (uses)
		m[KP_LX_M_SOURCE_LIST] = (struct kp_member_layout)M(ML_SOURCE_LIST, 16);
	struct kp_struct_layout *l;
	if (kp_struct_layout_manual(&kp_lx_module_spec, 0x100, m, &l))
		abort();
	*ret = (struct kp_lx_module_layout){
		.mod = l, .nregions = 2,
		.region_base = { ML.layout_base[0], ML.layout_base[1] },
		.region_size = { ML.layout_size[0], ML.layout_size[1] },
		.has_uses = uses, .use_source_list = 0, .use_source = USE_SOURCE,
	};
	return l;
}

static struct kp_struct_layout *module_layout(struct kp_lx_module_layout *ret)
{
	return module_layout_uses(ret, false);
}

static struct kp_error *walk_modules(struct kp_kernel *k, uint64_t head, struct kp_module **m_ret,
				     size_t *n_ret)
{
	struct kp_lx_module_layout l;
	struct kp_struct_layout *ml = module_layout(&l);
	struct kp_module_iter *it;
	struct kp_error *err = kp_lx_module_iter_create(k, &l, head, &it);
	if (!err)
		err = kpt_drain_modules(it, m_ret, n_ret);
	free(ml);
	return err;
}

#define MOD(i) (BASE + 0x4000ULL + 0x100ULL * (i))
#define MODULES_HEAD (BASE + 0x3f00ULL)

static void mod_init(int i, const char *name, int state, uint32_t refcnt,
		     uint64_t base, uint32_t core, uint32_t init)
{
	uint64_t m = MOD(i);
	w32(m + ML.state, (uint32_t)state);
	memset(mem + (m - BASE) + ML.name, 0, 56);
	memcpy(mem + (m - BASE) + ML.name, name, strlen(name));
	w32(m + ML.refcnt, refcnt);
	w64(m + ML.layout_base[0], base);
	w32(m + ML.layout_size[0], core);
	w64(m + ML.layout_base[1], 0);
	w32(m + ML.layout_size[1], init);
}

TEST(module_list_as_proc_modules)
{
	memset(mem, 0, sizeof(mem));
	mod_init(0, "ext4", 0, 3, 0xffffffffc0100000ULL, 0xb4000, 0);
	mod_init(1, "halfway", 3, 1, 0, 0, 0);	// MODULE_STATE_UNFORMED
	mod_init(2, "loading", 1, 1, 0xffffffffc0200000ULL, 0x2000, 0x1000);
	uint64_t nodes[] = {MODULES_HEAD, MOD(0) + ML.list, MOD(1) + ML.list, MOD(2) + ML.list};
	list_link(nodes, 4);
	struct kp_kernel *k = fake_kernel();
	struct kp_module *m = NULL;
	size_t n = 0;
	CHECK_OK(walk_modules(k, MODULES_HEAD, &m, &n));
	CHECK_U64(n, 2);
	if (n == 2) {
		CHECK_STR(m[0].name, "ext4");
		CHECK_U64(m[0].refcnt, 2);
		CHECK_U64(m[0].size, 0xb4000);
		CHECK_U64(m[0].base, 0xffffffffc0100000ULL);
		CHECK_STR(m[0].state_name, "Live");
		CHECK_STR(m[1].name, "loading");
		CHECK_U64(m[1].size, 0x3000);
		CHECK_STR(m[1].state_name, "Loading");
		CHECK_U64(m[1].address, MOD(2));
	}
	free(m);
	// Empty list.
	uint64_t empty[] = {MODULES_HEAD};
	list_link(empty, 1);
	CHECK_OK(walk_modules(k, MODULES_HEAD, &m, &n));
	CHECK_U64(n, 0);
	free(m);
	// Cycle.
	list_link(nodes, 4);
	w64(MOD(2) + ML.list, MOD(0) + ML.list);
	CHECK_ERR(walk_modules(k, MODULES_HEAD, &m, &n), KP_ERR_FORMAT, "module list is corrupt");
	// Unnamed garbage name: always NUL-terminated.
	list_link(nodes, 4);
	memset(mem + (MOD(0) - BASE) + ML.name, 'A', 56);
	CHECK_OK(walk_modules(k, MODULES_HEAD, &m, &n));
	if (n)
		CHECK_U64(strlen(m[0].name), 56);
	free(m);
	fake_destroy(k);
}

// /proc/modules' used-by column from each module's source_list; a user
// whose struct module cannot be read makes the column unknown (NULL),
// never a shorter list, and the walk's error names the module.
#define USE(i) (BASE + 0x6000ULL + 0x40ULL * (i))
TEST(module_users_and_a_user_that_cannot_be_read)
{
	memset(mem, 0, sizeof(mem));
	mod_init(0, "virtio_blk", 0, 1, 0xffffffffc0300000ULL, 0x3000, 0);
	mod_init(1, "virtio_net", 0, 1, 0xffffffffc0310000ULL, 0x3000, 0);
	mod_init(2, "virtio", 0, 3, 0xffffffffc0320000ULL, 0x3000, 0);
	uint64_t nodes[] = {MODULES_HEAD, MOD(0) + ML.list, MOD(1) + ML.list, MOD(2) + ML.list};
	list_link(nodes, 4);
	for (int i = 0; i < 3; i++) {
		uint64_t none[] = {MOD(i) + ML_SOURCE_LIST};
		list_link(none, 1);
	}
	uint64_t uses[] = {MOD(2) + ML_SOURCE_LIST, USE(0), USE(1)};
	list_link(uses, 3);
	w64(USE(0) + USE_SOURCE, MOD(0));
	w64(USE(1) + USE_SOURCE, MOD(1));
	for (int hole = 0; hole < 2; hole++) {
		// hole: the second user is a module out of the list at MOD(8),
		// whose memory the source lacks.
		if (hole)
			w64(USE(1) + USE_SOURCE, MOD(8));
		struct kp_kernel *k = hole ? fake_kernel_hole(MOD(8), 0x100) : fake_kernel();
		struct kp_lx_module_layout l;
		struct kp_struct_layout *ml = module_layout_uses(&l, true);
		struct kp_module_iter *it;
		CHECK_OK(kp_lx_module_iter_create(k, &l, MODULES_HEAD, &it));
		const struct kp_module *m;
		char got[3][160] = {"", "", ""};
		int n = 0;
		struct kp_error *err;
		while (!(err = kp_module_iter_next(it, &m)) && m) {
			if (n < 3)
				snprintf(got[n], sizeof(got[n]), "%.63s %.80s", m->name, m->used_by ? m->used_by : "(unknown)");
			n++;
		}
		CHECK_U64(n, 3);
		CHECK_STR(got[0], "virtio_blk ");
		CHECK_STR(got[1], "virtio_net ");
		if (!hole) {
			CHECK_OK(err);
			CHECK_STR(got[2], "virtio virtio_blk,virtio_net,");
		} else {
			CHECK_ERR(err, KP_ERR_FAULT, "module virtio: its users");
			CHECK_STR(got[2], "virtio (unknown)");
			// Yielded with a part unread: partial, the walk not stopped.
			KP_INIT(kp_walk_status, st);
			kp_module_iter_status(it, &st);
			CHECK_U64(st.partial, 1);
			CHECK_U64(st.left_out, 0);
			CHECK(st.end == KP_WALK_COMPLETE);
		}
		kp_module_iter_destroy(it);
		free(ml);
		fake_destroy(k);
	}
}

// Hostile memory: random bytes with pointers steered back into the segment
// (so walks go somewhere); every walk must end with a result or an error.
TEST(random_memory_never_crashes_the_walkers)
{
	struct kp_kernel *k = fake_kernel();
	uint64_t x = 0x2545f4914f6cdd1dULL;
	for (int round = 0; round < 300; round++) {
		for (size_t i = 0; i < MEMSIZE; i += 8) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			uint64_t v = x;
			if ((x & 3) != 0)	// mostly in-segment, 8-aligned pointers
				v = BASE + ((x >> 8) % MEMSIZE & ~7ULL);
			memcpy(mem + i, &v, 8);
		}
		struct kp_task *t = NULL;
		size_t n = 0;
		struct kp_error *err = walk_tasks(k, TASK(round % 8), round & 1, &t, &n);
		if (!err)
			free(t);
		kp_error_destroy(err);
		struct kp_module *m = NULL;
		err = walk_modules(k, MODULES_HEAD, &m, &n);
		if (!err)
			free(m);
		kp_error_destroy(err);
	}
	fake_destroy(k);
}

// ---------------------------------------------------------------- pure helpers

TEST(loadavg_format_rounds_like_proc_loadavg)
{
	char buf[16];
	kp_loadavg_format(0, buf);
	CHECK_STR(buf, "0.00");
	kp_loadavg_format(2048, buf);	// 1.0
	CHECK_STR(buf, "1.00");
	kp_loadavg_format(1024, buf);	// 0.5
	CHECK_STR(buf, "0.50");
	kp_loadavg_format(2047, buf);	// 0.9995 + 0.005 -> 1.00
	CHECK_STR(buf, "1.00");
	kp_loadavg_format(10 * 2048 + 205, buf);	// 10.1001 -> 10.10
	CHECK_STR(buf, "10.10");
	kp_loadavg_format(UINT64_MAX, buf);	// never overflows the buffer
	CHECK(strlen(buf) < 16);
}

TEST(syscall_handler_names)
{
	bool (*ok)(const char *) = kp_arch_x86_64.syscall_handler_name;
	CHECK(ok("__x64_sys_read"));
	CHECK(ok("__ia32_compat_sys_ioctl"));
	CHECK(ok("__x64_sys_ni_syscall"));
	CHECK(ok("sys_ni_syscall"));
	CHECK(!ok("rootkit_read"));
	CHECK(!ok("__x64_sys_"));
}

int main(void)
{
	RUN(state_letters_follow_task_state_index);
	RUN(task_list_leaders);
	RUN(task_list_threads_via_thread_node_and_thread_group);
	RUN(task_list_cycle_null_and_fault_are_errors);
	RUN(unreadable_task_is_left_out_and_named_at_the_end);
	RUN(module_list_as_proc_modules);
	RUN(module_users_and_a_user_that_cannot_be_read);
	RUN(random_memory_never_crashes_the_walkers);
	RUN(loadavg_format_rounds_like_proc_loadavg);
	RUN(syscall_handler_names);
	return TEST_SUMMARY();
}
