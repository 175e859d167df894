// SPDX-License-Identifier: MIT
// kpeek check creds (src/checks/creds.c) on the synthetic kernel's
// processes (tests/gen/synthprocs.h): task 1 (uid 0) and task 2 (uid 1000)
// each on a struct cred of their own with usage 2, the kernel threads and
// init_task on init_cred; each test writes one rootkit's change over it.
#include <stdlib.h>

#include "test.h"
#include "synthkernel.h"
#include "synthprocs.h"

static const struct sk_opts base = { .format = SK_ELF, .ntasks = 3, .procs = SK_PROCS_LIST };
#define TASK(i) sk_task_va(&base, i)
#define TASK_PA(i) sk_task_pa(&base, i)

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

// check creds with the words of change written (NULL: none): its status,
// and its findings must be want[0..n): "object: why" each.
static void check_creds(const struct word *change, enum kp_check_status status, const char *const *want,
			size_t n)
{
	struct sk_opts o = base;
	o.edit = change ? put : NULL;
	o.edit_arg = (void *)change;
	struct kp_kernel *k = NULL;
	struct kp_check *c = NULL;
	CHECK_OK(sk_open(&o, &k));
	if (!k)
		return;
	CHECK_OK(kp_check_run(k, "creds", 0, &c));
	if (c) {
		if (kp_check_status(c) != status)
			FAILF("status %d, want %d (reason: %s)", kp_check_status(c), status,
			      kp_check_reason(c) ? kp_check_reason(c) : "none");
		CHECK_U64(kp_check_count(c), n);
		for (size_t i = 0; i < n && i < kp_check_count(c); i++) {
			const struct kp_finding *f = kp_check_finding(c, i);
			char got[512];
			snprintf(got, sizeof(got), "%s: %s", f->object, f->why ? f->why : "(fine)");
			CHECK_STR(got, want[i]);
		}
		CHECK(kp_check_summary_count(c) == 1);
		kp_check_destroy(c);
	}
	kp_kernel_destroy(k);
}

TEST(clean_processes)
{
	check_creds(NULL, KP_CHECK_CLEAN, NULL, 0);
	struct sk_opts o = base;
	struct kp_kernel *k = NULL;
	struct kp_check *c = NULL;
	CHECK_OK(sk_open(&o, &k));
	if (!k)
		return;
	CHECK_OK(kp_check_run(k, "creds", 0, &c));
	if (c && kp_check_summary_count(c) == 1)
		CHECK_STR(kp_check_summary(c, 0), "2 user tasks' credentials; 0 shared across processes");
	kp_check_destroy(c);
	kp_kernel_destroy(k);
}

TEST(user_task_on_init_cred)
{
	const struct word w[] = { { TASK_PA(2) + SKP_T_CRED, SKP_INIT_CRED, 8 },
				  { TASK_PA(2) + SKP_T_REAL_CRED, SKP_INIT_CRED, 8 }, { 0, 0, 0 } };
	static const char *const want[] = {
		"pid 2 (task2): its credentials are init_cred, the kernel's own (every forked task gets a copy)",
	};
	check_creds(w, KP_CHECK_FOUND, want, 1);
}

TEST(two_processes_share_a_cred)
{
	// Task 2 on task 1's cred, its usage counting all four references.
	const struct word w[] = { { TASK_PA(2) + SKP_T_CRED, SKP_VA(SKP_CRED(1)), 8 },
				  { TASK_PA(2) + SKP_T_REAL_CRED, SKP_VA(SKP_CRED(1)), 8 },
				  { SKP_CRED(1) + SKP_CRED_USAGE, 4, 4 }, { 0, 0, 0 } };
	static const char *const want[] = {
		"pid 2 (task2): it shares struct cred 0xffff888000020800 with pid 1 (init), another process",
		"struct cred of pid 1 (init): its usage count 2 is below the 4 task references to it "
		"(a pointer written without get_cred())",
	};
	check_creds(w, KP_CHECK_FOUND, want, 1);
	// ... and without the references counted: both findings.
	const struct word uncounted[] = { w[0], w[1], { 0, 0, 0 } };
	check_creds(uncounted, KP_CHECK_FOUND, want, 2);
}

TEST(usage_count_below_references)
{
	const struct word w[] = { { SKP_CRED(1) + SKP_CRED_USAGE, 1, 4 }, { 0, 0, 0 } };
	static const char *const want[] = {
		"struct cred of pid 1 (init): its usage count 1 is below the 2 task references to it "
		"(a pointer written without get_cred())",
	};
	check_creds(w, KP_CHECK_FOUND, want, 1);
	// A negative count (a corrupt or overflowed atomic_t) too.
	const struct word neg[] = { { SKP_CRED(2) + SKP_CRED_USAGE, 0x80000000, 4 }, { 0, 0, 0 } };
	static const char *const want_neg[] = {
		"struct cred of pid 2 (task2): its usage count -2147483648 is below the 2 task references to it "
		"(a pointer written without get_cred())",
	};
	check_creds(neg, KP_CHECK_FOUND, want_neg, 1);
}

TEST(euid_zero_without_a_setuid_root_executable)
{
	static const char *const want[] = {
		"pid 2 (task2): it runs with euid/fsuid 0 under real uid 1000, and its executable is not set-uid root",
	};
	const struct word euid[] = { { SKP_CRED(2) + SKP_CRED_EUID, 0, 4 }, { 0, 0, 0 } };
	check_creds(euid, KP_CHECK_FOUND, want, 1);
	const struct word fsuid[] = { { SKP_CRED(2) + SKP_CRED_FSUID, 0, 4 }, { 0, 0, 0 } };
	check_creds(fsuid, KP_CHECK_FOUND, want, 1);
	// /bin/sh set-uid root: what su and sudo give.
	const struct word suid[] = { euid[0], { SKP_INODE(SKP_D_SH) + SKP_INODE_MODE, 0104755, 4 }, { 0, 0, 0 } };
	check_creds(suid, KP_CHECK_CLEAN, NULL, 0);
	// Set-uid, but not root's.
	const struct word other[] = { suid[0], suid[1], { SKP_INODE(SKP_D_SH) + SKP_INODE_UID, 1000, 4 }, { 0, 0, 0 } };
	check_creds(other, KP_CHECK_FOUND, want, 1);
}

TEST(unreadable_credentials_cannot_be_judged)
{
	const struct word w[] = { { TASK_PA(2) + SKP_T_REAL_CRED, SKP_VA(0x100000), 8 }, { 0, 0, 0 } };
	struct sk_opts o = base;
	o.edit = put;
	o.edit_arg = (void *)w;
	struct kp_kernel *k = NULL;
	struct kp_check *c = NULL;
	CHECK_OK(sk_open(&o, &k));
	if (!k)
		return;
	CHECK_OK(kp_check_run(k, "creds", 0, &c));
	if (c) {
		CHECK(kp_check_status(c) == KP_CHECK_CANNOT);
		CHECK_STR(kp_check_reason(c), "1 tasks' credentials unreadable");
		kp_check_destroy(c);
	}
	kp_kernel_destroy(k);
}

int main(void)
{
	RUN(clean_processes);
	RUN(user_task_on_init_cred);
	RUN(two_processes_share_a_cred);
	RUN(usage_count_below_references);
	RUN(euid_zero_without_a_setuid_root_executable);
	RUN(unreadable_credentials_cannot_be_judged);
	return TEST_SUMMARY();
}
