// SPDX-License-Identifier: MIT
// kp_task_status (linux/sched/status.c, with linux/ns and linux/cgroup) on
// the synthetic kernel's processes (tests/gen/synthprocs.h): every value
// expected here is one the generator wrote (its comments say which), or
// one a test's edit writes over it.
#include <stdlib.h>
#include <string.h>

#include "test.h"
#include "synthkernel.h"
#include "synthprocs.h"

static const struct sk_opts base = { .format = SK_ELF, .ntasks = 3, .procs = SK_PROCS_LIST };
#define TASK(i) sk_task_va(&base, i)
#define ALL_CAPS UINT64_C(0x1ffffffffff)

struct word {
	uint64_t pa, value;
	int size;	// 4 or 8
};

static void put(uint8_t *m, void *arg)
{
	for (const struct word *w = arg; w->pa; w++) {
		if (w->size == 4)
			sk_put32(m, w->pa, (uint32_t)w->value);
		else
			sk_put64(m, w->pa, w->value);
	}
}

static struct kp_kernel *procs(const struct word *change)
{
	struct sk_opts o = base;
	o.edit = change ? put : NULL;
	o.edit_arg = (void *)change;
	struct kp_kernel *k = NULL;
	CHECK_OK(sk_open(&o, &k));
	return k;
}

static void check_ns(const struct kp_task_status *s, uint32_t pid_ns)
{
	uint64_t want[KP_NS_COUNT] = {
		[KP_NS_UTS] = skp_ns_inum[SKP_NS_UTS], [KP_NS_PID] = pid_ns,
		[KP_NS_PID_FOR_CHILDREN] = skp_ns_inum[SKP_NS_PID], [KP_NS_USER] = skp_ns_inum[SKP_NS_USER],
		[KP_NS_MNT] = SKP_MNT_NS_INUM, [KP_NS_CGROUP] = skp_ns_inum[SKP_NS_CGROUP],
	};	// net, ipc and time: not in the synthetic BTF, so not there (0)
	for (int i = 0; i < KP_NS_COUNT; i++)
		if (s->ns[i] != want[i])
			FAILF("pid %d: %s namespace %" PRIu64 ", want %" PRIu64, s->pid, kp_ns_name(i), s->ns[i], want[i]);
}

TEST(status_of_two_processes)
{
	struct kp_kernel *k = procs(NULL);
	struct kp_task_status *s;
	if (!k)
		return;
	CHECK_OK(kp_task_status_create(k, TASK(1), &s));
	if (s) {
		CHECK_STR(s->name, "init");
		CHECK(s->state == 'S' && s->umask == 022 && s->fd_size == 128);
		CHECK(s->tgid == 1 && s->pid == 1 && s->ppid == 0 && s->tracer_pid == 0);
		CHECK(s->uid[0] == 0 && s->uid[3] == 0 && s->gid[1] == 0);
		CHECK(s->ngroups == 2 && s->groups[0] == 4 && s->groups[1] == 27);
		CHECK(s->pid_levels == 1 && s->ns_pid[0] == 1 && s->ns_tgid[0] == 1);
		CHECK(s->ns_pgid[0] == 1 && s->ns_sid[0] == 1 && s->threads == 1);
		CHECK_U64(s->sig_pending, 0);
		CHECK_U64(s->sig_blocked, 0);
		CHECK_U64(s->sig_ignored, 0x10002);	// SIGINT, SIGCHLD
		CHECK_U64(s->sig_caught, 0x4000);	// SIGTERM
		CHECK(s->cap_inheritable == 0 && s->cap_permitted == ALL_CAPS && s->cap_effective == ALL_CAPS &&
		      s->cap_bounding == ALL_CAPS && s->cap_ambient == 0);
		CHECK(!s->no_new_privs && s->seccomp == -1 && s->seccomp_filters == -1);
		CHECK(s->voluntary_ctxt_switches == 17 && s->nonvoluntary_ctxt_switches == 3);
		CHECK_STR(s->cgroup, "/system.slice/sshd.service");
		CHECK(s->cred == SKP_VA(SKP_CRED(1)) && s->subjective_cred == s->cred);
		check_ns(s, skp_ns_inum[SKP_NS_PID]);
		kp_task_status_destroy(s);
	}
	// Task 2: uid 1000, in a child PID namespace (pid 1 there), traced by
	// task 1, no new privileges, SIGHUP pending, SIGQUIT pending for the
	// process, SIGCHLD blocked.
	CHECK_OK(kp_task_status_create(k, TASK(2), &s));
	if (s) {
		CHECK(s->pid == 2 && s->ppid == 1 && s->tracer_pid == 1);
		CHECK(s->uid[0] == 1000 && s->uid[1] == 1000 && s->gid[0] == 1000 && s->gid[3] == 1000);
		CHECK(s->pid_levels == 2 && s->ns_pid[0] == 2 && s->ns_pid[1] == 1);
		CHECK(s->ns_tgid[0] == 2 && s->ns_tgid[1] == 1);
		// Its process group and session are task 1's, made outside the
		// child namespace: 0 there.
		CHECK(s->ns_pgid[0] == 1 && s->ns_pgid[1] == 0 && s->ns_sid[0] == 1 && s->ns_sid[1] == 0);
		CHECK_U64(s->sig_pending, 0x1);
		CHECK_U64(s->sig_shared_pending, 0x4);
		CHECK_U64(s->sig_blocked, 0x10000);
		CHECK(s->cap_permitted == 0 && s->cap_effective == 0 && s->cap_bounding == ALL_CAPS);
		CHECK(s->no_new_privs);
		CHECK(s->voluntary_ctxt_switches == 5 && s->nonvoluntary_ctxt_switches == 1);
		CHECK_STR(s->cgroup, "/");
		check_ns(s, skp_ns_inum[SKP_NS_PID_CHILD]);
		kp_task_status_destroy(s);
	}
	// A kernel thread without a struct pid (pid_alive() false): no parent,
	// no PID levels, no signal handlers, no fd table.
	CHECK_OK(kp_task_status_create(k, TASK(3), &s));
	if (s) {
		CHECK(s->pid == 3 && s->ppid == 0 && s->pid_levels == 0 && s->threads == 0 && s->fd_size == 0);
		kp_task_status_destroy(s);
	}
	kp_kernel_destroy(k);
}

// kp_task_status_create of task 1 with change written: code and text.
static void check_corrupt(const struct word *change, enum kp_error_code code, const char *text)
{
	struct kp_kernel *k = procs(change);
	struct kp_task_status *s = NULL;
	if (!k)
		return;
	CHECK_ERR(kp_task_status_create(k, TASK(1), &s), code, text);
	CHECK(s == NULL);
	kp_kernel_destroy(k);
}

TEST(corrupt_status_structures_are_errors)
{
	const struct word groups[] = { { SKP_GROUPS + 4, 65537, 4 }, { 0, 0, 0 } };
	check_corrupt(groups, KP_ERR_FORMAT, "group_info at 0xffff88800003e300 claims 65537 groups (corrupt?)");
	const struct word negative[] = { { SKP_GROUPS + 4, 0xffffffff, 4 }, { 0, 0, 0 } };
	check_corrupt(negative, KP_ERR_FORMAT, "claims -1 groups");
	const struct word level[] = { { SKP_PID(1) + SKP_PID_LEVEL, 33, 4 }, { 0, 0, 0 } };
	check_corrupt(level, KP_ERR_FORMAT, "struct pid at 0xffff88800003e100 is at level 33 (corrupt?)");
	// A kernfs node that is its own parent.
	const struct word cycle[] = { { SKP_KERNFS(2) + 8, SKP_VA(SKP_KERNFS(2)), 8 }, { 0, 0, 0 } };
	check_corrupt(cycle, KP_ERR_INVALID, "cgroup path longer than 4096 bytes");
	// The root's, whose name is empty: the depth bound ends it.
	const struct word root[] = { { SKP_KERNFS(0) + 8, SKP_VA(SKP_KERNFS(0)), 8 }, { 0, 0, 0 } };
	check_corrupt(root, KP_ERR_LOOP, "the cgroup at kernfs node 0xffff88800003e400 is more than 2048 deep (a cycle?)");
	const struct word handlers[] = { { sk_task_pa(&base, 1) + SKP_T_SIGHAND, SKP_VA(0x100000), 8 }, { 0, 0, 0 } };
	check_corrupt(handlers, KP_ERR_FAULT, "the signal handlers at 0xffff888000100000");
	const struct word cred[] = { { sk_task_pa(&base, 1) + SKP_T_REAL_CRED, SKP_VA(0x100000), 8 }, { 0, 0, 0 } };
	check_corrupt(cred, KP_ERR_FAULT, "the status of task 0xffff888000002000");
}

// kp_task_mem against the generator's pages (synthprocs.c), each line
// worked out here by task_mem()'s rules, in kB of 4 KB pages.
TEST(memory_sizes_as_proc_status)
{
	struct kp_kernel *k = procs(NULL);
	struct kp_task_mem m;
	if (!k)
		return;
	CHECK_OK(kp_task_mem(k, TASK(1), &m));
	CHECK_U64(m.mm, SKP_VA(SKP_MM(0)));
	CHECK_U64(m.vm_size, 753 * 4);
	CHECK_U64(m.vm_peak, 800 * 4);	// hiwater_vm above total_vm
	CHECK_U64(m.vm_lck, 8);
	CHECK_U64(m.vm_pin, 4);
	CHECK_U64(m.rss_file, 300 * 4);
	CHECK_U64(m.rss_anon, 50 * 4);
	CHECK_U64(m.rss_shmem, 7 * 4);
	CHECK_U64(m.vm_rss, 357 * 4);
	CHECK_U64(m.vm_hwm, 500 * 4);	// hiwater_rss above the resident pages
	CHECK_U64(m.vm_data, 40 * 4);
	CHECK_U64(m.vm_stk, 33 * 4);
	CHECK_U64(m.vm_exe, 0xa2000 >> 10);	// 0x400000..PAGE_ALIGN(0x4a1234)
	CHECK_U64(m.vm_lib, (300 * 4096 - 0xa2000) >> 10);
	CHECK_U64(m.vm_pte, 0x5000 >> 10);
	CHECK_U64(m.vm_swap, 2 * 4);
	struct kp_meminfo_item lines[KP_TASK_MEM_LINES];
	CHECK(kp_task_mem_lines(&m, lines) == 15);
	CHECK_STR(lines[0].name, "VmPeak");
	CHECK_STR(lines[13].name, "VmPTE");
	CHECK(lines[13].value == 20 && lines[14].value == 8 && !strcmp(lines[14].name, "VmSwap"));
	m.vm_pte = UINT64_MAX;	// a kernel that does not count page tables: no VmPTE line
	CHECK(kp_task_mem_lines(&m, lines) == 14);
	CHECK_STR(lines[13].name, "VmSwap");
	// Task 2: its anonymous count -3 is 0, as /proc shows it.
	CHECK_OK(kp_task_mem(k, TASK(2), &m));
	CHECK(m.vm_size == 400 && m.vm_peak == 400 && m.rss_file == 80 && m.rss_anon == 0 &&
	      m.vm_rss == 80 && m.vm_hwm == 80 && m.vm_exe == 0 && m.vm_lib == 0 && m.vm_pte == 0);
	CHECK_ERR(kp_task_mem(k, TASK(3), &m), KP_ERR_INVALID, "is a kernel thread: it has no user memory");
	kp_kernel_destroy(k);
}

static void check_corrupt_mem(const struct word *change, const char *text)
{
	struct kp_kernel *k = procs(change);
	struct kp_task_mem m = { .vm_rss = 7 };
	if (!k)
		return;
	CHECK_ERR(kp_task_mem(k, TASK(1), &m), KP_ERR_FORMAT, text);
	CHECK(m.vm_rss == 7);	// untouched on failure
	kp_kernel_destroy(k);
}

TEST(corrupt_memory_sizes_are_errors)
{
	const struct word rss[] = { { SKP_MM(0) + SKP_MM_RSS_STAT + 8, UINT64_C(1) << 50, 8 }, { 0, 0, 0 } };
	check_corrupt_mem(rss, "mm_struct at 0xffff888000020000: its MM_ANONPAGES counter is 1125899906842624 pages: corrupt");
	const struct word vm[] = { { SKP_MM(0) + SKP_MM_TOTAL_VM, UINT64_C(1) << 41, 8 }, { 0, 0, 0 } };
	check_corrupt_mem(vm, "mm_struct at 0xffff888000020000: its total_vm is 2199023255552 pages: corrupt");
}

int main(void)
{
	RUN(status_of_two_processes);
	RUN(corrupt_status_structures_are_errors);
	RUN(memory_sizes_as_proc_status);
	RUN(corrupt_memory_sizes_are_errors);
	return TEST_SUMMARY();
}
