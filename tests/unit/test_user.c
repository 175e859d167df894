// SPDX-License-Identifier: MIT
// A process's user memory read through its own page tables (linux/mm/user.c
// and the x86-64 uspace walker) and /proc/PID/cmdline and environ from it
// (linux/mm/cmdline.c), on the synthetic kernel's processes
// (tests/gen/synthprocs.h): every expected byte is one the generator or
// the test's edit wrote there.
#include <stdlib.h>

#include "test.h"
#include "synthkernel.h"
#include "synthprocs.h"

typedef void edit_fn(uint8_t *m, void *arg);

static const struct sk_opts base = { .format = SK_ELF, .ntasks = 3, .procs = SK_PROCS_LIST };
#define TASK(i) sk_task_va(&base, i)
#define MM1 SKP_MM(0)

// The synthetic kernel with processes, edited by edit (NULL: as generated).
static struct kp_kernel *procs(edit_fn *edit, void *arg)
{
	struct sk_opts o = base;
	o.edit = edit;
	o.edit_arg = arg;
	struct kp_kernel *k = NULL;
	CHECK_OK(sk_open(&o, &k));
	return k;
}

// The bytes the generator wrote from SKP_ARG_START on: the arguments, then
// the environment.
static const char areas[] = SKP_ARGS "\0" SKP_ENV;

// size bytes of task 1's memory at address, which must be readable.
static void check_read(struct kp_user *u, uint64_t address, const void *want, size_t size)
{
	uint8_t got[256];
	if (size > sizeof(got))
		abort();
	memset(got, 0xee, sizeof(got));
	struct kp_error *err = kp_user_read(u, address, got, size);
	if (err) {
		FAILF("reading %zu bytes at 0x%" PRIx64 ": %s", size, address, err->message);
		kp_error_destroy(err);
	} else if (memcmp(got, want, size)) {
		FAILF("%zu bytes at 0x%" PRIx64 ": not what was written (first byte 0x%02x, want 0x%02x)",
		      size, address, got[0], ((const uint8_t *)want)[0]);
	}
}

// A read that must fail with code, its message naming text; buf keeps
// the bytes it had before the page that failed (never zeros for it).
static void check_unreadable(struct kp_user *u, uint64_t address, size_t size, enum kp_error_code code,
			     const char *text)
{
	uint8_t buf[64];
	memset(buf, 0xee, sizeof(buf));
	CHECK_ERR(kp_user_read(u, address, buf, size), code, text);
	uint64_t page_end = (address | 0xfff) + 1;
	for (size_t i = address + size > page_end ? page_end - address : 0; i < size; i++)
		if (buf[i] != 0xee) {
			FAILF("byte %zu of a failed read at 0x%" PRIx64 " was written (0x%02x)", i, address, buf[i]);
			break;
		}
}

TEST(present_pages_read_through_the_process_page_tables)
{
	struct kp_kernel *k = procs(NULL, NULL);
	struct kp_user *u;
	if (!k)
		return;
	CHECK_OK(kp_user_create(k, TASK(1), &u));
	check_read(u, SKP_U_TEXT, SKP_U_TEXT_BYTES, sizeof(SKP_U_TEXT_BYTES));
	uint8_t want[40];
	for (unsigned i = 0; i < sizeof(want); i++)
		want[i] = SKP_PAGE_A_BYTE(0x123 + i);
	check_read(u, SKP_U_PAGE_A + 0x123, want, sizeof(want));
	// The kernel's own tables do not map the user half: a reader that
	// used them could not read this at all.
	uint64_t v;
	CHECK_ERR(kp_read_u64(k, SKP_U_TEXT, &v), KP_ERR_FAULT, "0x400000");
	kp_user_destroy(u);
	kp_kernel_destroy(k);
}

TEST(absent_pages_are_errors_naming_the_address)
{
	struct kp_kernel *k = procs(NULL, NULL);
	struct kp_user *u;
	if (!k)
		return;
	CHECK_OK(kp_user_create(k, TASK(1), &u));
	check_unreadable(u, SKP_U_NEVER + 0x40, 8, KP_ERR_FAULT, "user address 0x7ffffffe0040 of pid 1 is not in memory (never touched");
	check_unreadable(u, SKP_U_SWAPPED + 0x8, 8, KP_ERR_FAULT, "user address 0x7ffffffe1008 of pid 1 is not in memory (swapped out");
	// No table below the top level there.
	check_unreadable(u, 0x10000000, 8, KP_ERR_FAULT, "user address 0x10000000 of pid 1 is not in memory");
	check_unreadable(u, SK_DIRECT, 8, KP_ERR_INVALID, "0xffff888000000000 is not a user address");
	check_unreadable(u, UINT64_C(0x0000900000000000), 8, KP_ERR_INVALID, "not canonical");
	kp_user_destroy(u);
	kp_kernel_destroy(k);
}

TEST(huge_page_reads_at_its_offset)
{
	struct kp_kernel *k = procs(NULL, NULL);
	struct kp_user *u;
	if (!k)
		return;
	CHECK_OK(kp_user_create(k, TASK(1), &u));
	// The 2 MiB page maps physical 0: the marker, and the kernel's banner.
	check_read(u, SKP_U_HUGE + SKP_HUGE_MARK, SKP_HUGE_BYTES, sizeof(SKP_HUGE_BYTES));
	check_read(u, SKP_U_HUGE + (SK_BANNER - SK_TEXT), "Linux version 6.1.0-synth", 25);
	// Where the page maps physical memory the dump does not have: an
	// error naming the user address, never zeros.
	check_unreadable(u, SKP_U_HUGE + SKP_RAM_END + 8, 8, KP_ERR_FAULT,
			 "user address 0x7fffffa40008 of pid 1: physical address 0x40008 is not in the memory source");
	kp_user_destroy(u);
	kp_kernel_destroy(k);
}

TEST(reads_across_a_page_boundary)
{
	struct kp_kernel *k = procs(NULL, NULL);
	struct kp_user *u;
	if (!k)
		return;
	CHECK_OK(kp_user_create(k, TASK(1), &u));
	// Page B follows A in user memory, not in physical memory.
	check_read(u, SKP_U_PAGE_B - 8, areas + 8, 16);
	check_read(u, SKP_ARG_START, areas, sizeof(areas));
	uint8_t want[4096 + 16];
	for (unsigned i = 0; i < 16; i++)
		want[i] = SKP_PAGE_B_BYTE(4096 - 16 + i);
	check_read(u, SKP_U_PAGE_B + 4096 - 16, want, 16);
	// B present, the page after it never touched: an error naming that
	// page's first address.
	check_unreadable(u, SKP_U_PAGE_B + 4096 - 8, 16, KP_ERR_FAULT, "user address 0x7ffffffe0000 of pid 1 is not in memory");
	kp_user_destroy(u);
	kp_kernel_destroy(k);
}

static void exited(uint8_t *m, void *arg)
{
	(void)arg;
	sk_put64(m, sk_task_pa(&base, 2) + SKP_T_MM, 0);
}

static void pgd_unmapped(uint8_t *m, void *arg)
{
	(void)arg;
	sk_put64(m, MM1 + SKP_MM_PGD, SK_VMALLOC + 0x1000);	// its PTE is 0
}

TEST(tasks_without_user_memory)
{
	struct kp_kernel *k = procs(exited, NULL);
	struct kp_user *u = NULL;
	if (!k)
		return;
	CHECK_ERR(kp_user_create(k, SK_INIT_TASK, &u), KP_ERR_INVALID,
		  "task 0 (task_struct 0xffffffff9f001200) is a kernel thread: it has no user memory");
	CHECK_ERR(kp_user_create(k, TASK(3), &u), KP_ERR_INVALID, "task 3 (task_struct");
	CHECK_ERR(kp_user_create(k, TASK(3), &u), KP_ERR_INVALID, "is a kernel thread");
	CHECK_ERR(kp_user_create(k, TASK(2), &u), KP_ERR_NOT_FOUND, "task 2 (task_struct");
	CHECK_ERR(kp_user_create(k, TASK(2), &u), KP_ERR_NOT_FOUND, "has no user memory (it exited)");
	char *s = NULL;
	size_t n;
	CHECK_ERR(kp_task_cmdline(k, SK_INIT_TASK, &s, &n), KP_ERR_INVALID, "is a kernel thread");
	CHECK_ERR(kp_task_environ(k, TASK(3), &s, &n), KP_ERR_INVALID, "is a kernel thread");
	CHECK(u == NULL && s == NULL);
	// An exited task's arguments and environment are empty, as its
	// /proc/PID/cmdline and environ read: no error.
	n = 1;
	CHECK_OK(kp_task_cmdline(k, TASK(2), &s, &n));
	CHECK(s && n == 0 && !s[0]);
	free(s);
	n = 1;
	CHECK_OK(kp_task_environ(k, TASK(2), &s, &n));
	CHECK(s && n == 0 && !s[0]);
	free(s);
	kp_kernel_destroy(k);
	if (!(k = procs(pgd_unmapped, NULL)))
		return;
	CHECK_ERR(kp_user_create(k, TASK(1), &u), KP_ERR_FAULT, "the page tables of mm_struct 0xffff888000020000");
	kp_kernel_destroy(k);
}

// ---------------------------------------------------------------- cmdline, environ

// The areas of task 1's mm and the bytes written at their start.
struct areas {
	uint64_t arg_start, arg_end, env_start, env_end;
	const void *bytes;
	size_t len;
};

static void set_areas(uint8_t *m, void *arg)
{
	const struct areas *a = arg;
	sk_put64(m, MM1 + SKP_MM_ARG_START, a->arg_start);
	sk_put64(m, MM1 + SKP_MM_ARG_END, a->arg_end);
	sk_put64(m, MM1 + SKP_MM_ENV_START, a->env_start);
	sk_put64(m, MM1 + SKP_MM_ENV_END, a->env_end);
	if (a->len)
		skp_uput(m, a->arg_start, a->bytes, a->len);
}

// kp_task_cmdline (or environ) of task 1 with the areas a must give want.
static void check_text(const struct areas *a, bool environ, const void *want, size_t want_len)
{
	struct kp_kernel *k = procs(a ? set_areas : NULL, (void *)a);
	char *s;
	size_t n;
	if (!k)
		return;
	struct kp_error *err = (environ ? kp_task_environ : kp_task_cmdline)(k, TASK(1), &s, &n);
	if (err) {
		FAILF("%s: %s", environ ? "environ" : "cmdline", err->message);
		kp_error_destroy(err);
	} else {
		if (n != want_len || memcmp(s, want, n))
			FAILF("%s: %zu bytes, want %zu (\"%.*s\")", environ ? "environ" : "cmdline", n,
			      want_len, (int)(want_len < 64 ? want_len : 64), (const char *)want);
		CHECK(s[n] == '\0');
		free(s);
	}
	kp_kernel_destroy(k);
}

TEST(cmdline_and_environ_as_written)
{
	check_text(NULL, false, SKP_ARGS, sizeof(SKP_ARGS));
	check_text(NULL, true, SKP_ENV, sizeof(SKP_ENV));
	// Task 2's areas are empty.
	struct kp_kernel *k = procs(NULL, NULL);
	char *s;
	size_t n = 1;
	if (!k)
		return;
	CHECK_OK(kp_task_cmdline(k, TASK(2), &s, &n));
	CHECK_U64(n, 0);
	free(s);
	n = 1;
	CHECK_OK(kp_task_environ(k, TASK(2), &s, &n));
	CHECK_U64(n, 0);
	free(s);
	kp_kernel_destroy(k);
}

TEST(cmdline_with_an_empty_argument)
{
	static const char args[] = "prog\0\0x";
	uint64_t at = SKP_U_PAGE_A + 0x100;
	struct areas a = { at, at + sizeof(args), at + sizeof(args), at + sizeof(args), args, sizeof(args) };
	check_text(&a, false, args, sizeof(args));
	check_text(&a, true, "", 0);
}

TEST(cmdline_longer_than_a_page)
{
	// 625 arguments of 8 bytes from page A into page B.
	static char args[5000];
	for (unsigned i = 0; i < 625; i++)
		snprintf(args + 8 * i, 8, "arg%04u", i);
	uint64_t at = SKP_U_PAGE_A + 0x10;
	struct areas a = { at, at + sizeof(args), at + sizeof(args), at + sizeof(args) + 8, args, sizeof(args) };
	check_text(&a, false, args, sizeof(args));
	// The environment: the 8 bytes after it (page B's).
	uint8_t env[8];
	for (unsigned i = 0; i < 8; i++)
		env[i] = SKP_PAGE_B_BYTE(at + sizeof(args) - SKP_U_PAGE_B + i);
	check_text(&a, true, env, sizeof(env));
}

// setproctitle(): the last byte of the argument area is not a NUL.
TEST(cmdline_rewritten_by_setproctitle)
{
	uint64_t at = SKP_ARG_START;
	// Within the area: up to and including the first NUL.
	static const char title[] = "nginx: master\0XXXXX";	// 19 bytes, as SKP_ARGS
	struct areas a = { at, SKP_ARG_END, SKP_ARG_END + 0x100, SKP_ARG_END + 0x200, title, 19 };
	check_text(&a, false, "nginx: master", 14);
	// Longer than the area, into the environment that follows it.
	static const char longer[] = "nginx: worker process 1234";	// 27 bytes + NUL
	a = (struct areas){ at, SKP_ARG_END, SKP_ARG_END, SKP_ENV_END, longer, sizeof(longer) };
	check_text(&a, false, longer, sizeof(longer));
	// ... but not into an environment elsewhere: the argument area only.
	a.env_start = SKP_ARG_END + 1;
	check_text(&a, false, longer, 19);
	// No NUL before the environment's end: all of both, no more.
	static const char nonul[] = "0123456789abcdefghijklmnopqrstuvwxyz0123456789";
	a = (struct areas){ at, SKP_ARG_END, SKP_ARG_END, SKP_ENV_END, nonul, sizeof(nonul) - 1 };
	check_text(&a, false, nonul, SKP_ENV_END - SKP_ARG_START);
	// At most a page: no NUL in the 6 KiB of both areas.
	static uint8_t x[6144];
	memset(x, 'x', sizeof(x));
	a = (struct areas){ SKP_U_PAGE_A, SKP_U_PAGE_A + 100, SKP_U_PAGE_A + 100, SKP_U_PAGE_A + sizeof(x), x, sizeof(x) };
	check_text(&a, false, x, 4096);
}

TEST(corrupt_areas_are_bounded_errors)
{
	struct areas a = { SKP_ARG_START, SKP_ARG_START + (UINT64_C(1) << 46), SKP_ARG_END, SKP_ENV_END, NULL, 0 };
	struct kp_kernel *k = procs(set_areas, &a);
	char *s = NULL;
	size_t n;
	if (!k)
		return;
	CHECK_ERR(kp_task_cmdline(k, TASK(1), &s, &n), KP_ERR_FORMAT,
		  "the argument area at 0x7ffffffdeff0 claims 70368744177664 bytes");
	kp_kernel_destroy(k);
	a = (struct areas){ SKP_ARG_START, SKP_ARG_END, SKP_ARG_END, UINT64_MAX, NULL, 0 };
	if (!(k = procs(set_areas, &a)))
		return;
	CHECK_ERR(kp_task_environ(k, TASK(1), &s, &n), KP_ERR_FORMAT, "the environment area at 0x7ffffffdf003 claims");
	kp_kernel_destroy(k);
	// An area in a page the process never touched.
	a = (struct areas){ SKP_U_NEVER, SKP_U_NEVER + 8, SKP_U_NEVER + 8, SKP_U_NEVER + 8, NULL, 0 };
	if (!(k = procs(set_areas, &a)))
		return;
	CHECK_ERR(kp_task_cmdline(k, TASK(1), &s, &n), KP_ERR_FAULT, "its argument: user address 0x7ffffffe0000");
	CHECK(s == NULL);
	kp_kernel_destroy(k);
}

int main(void)
{
	RUN(present_pages_read_through_the_process_page_tables);
	RUN(absent_pages_are_errors_naming_the_address);
	RUN(huge_page_reads_at_its_offset);
	RUN(reads_across_a_page_boundary);
	RUN(tasks_without_user_memory);
	RUN(cmdline_and_environ_as_written);
	RUN(cmdline_with_an_empty_argument);
	RUN(cmdline_longer_than_a_page);
	RUN(cmdline_rewritten_by_setproctitle);
	RUN(corrupt_areas_are_bounded_errors);
	return TEST_SUMMARY();
}
