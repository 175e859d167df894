// SPDX-License-Identifier: MIT
// The x86-64 ORC unwinder (arch/x86_64/orc.c) over the generated stack of
// tests/gen/mkstack.h, its ORC tables encoded in each of the four formats
// (5.10-6.2, 6.3, 6.4-7.0, 7.1+); the expected frames are those the
// generator wrote onto the stack.
#include "test.h"
#include "arch/unwind.h"
#include "arch/x86_64/x86_64.h"
#include "io/memory.h"
#include "mkstack.h"
#include "symbols/symtab.h"

static uint8_t mem_buf[MKSTACK_SIZE];

struct scene {
	struct kp_memory *mem;
	struct kp_symtab *st;
	struct kp_unwind_env env;
};

static bool no_module(void *arg, uint64_t address, uint64_t *ret)
{
	(void)arg, (void)address, (void)ret;
	return false;
}

// release NULL: the format is named by the ORC header.
static void scene_create(struct scene *s, int version, const char *release, bool thread)
{
	mkstack_image(mem_buf, version, !release, thread);
	CHECK_OK(kp_memory_create(&s->mem));
	CHECK_OK(kp_memory_add(s->mem, KP_VIRT, MKSTACK_BASE, MKSTACK_SIZE, kp_read_buffer,
			       mem_buf, 0));
	CHECK_OK(kp_symtab_create(&s->st));
	mkstack_symbols(s->st, !release);
	s->env = (struct kp_unwind_env){ s->mem, s->st, release ? release : "", NULL,
					 mkstack_member, no_module };
}

static void scene_destroy(struct scene *s)
{
	kp_symtab_destroy(s->st);
	kp_memory_destroy(s->mem);
}

static void put64(uint64_t addr, uint64_t v)
{
	memcpy(mem_buf + (addr - MKSTACK_BASE), &v, 8);
}

static void run_version(int version, const char *release)
{
	for (int thread = 0; thread < 2; thread++) {
		struct scene s;
		scene_create(&s, version, release, thread);
		struct kp_unwinder *u = NULL;
		CHECK_OK(kp_x86_unwinder_create(NULL, &s.env, &u));
		if (!u) {
			scene_destroy(&s);
			return;
		}
		struct kp_unwind_frame f;
		const char *end = NULL;
		CHECK_OK(kp_x86_unwind_sleeping(u, MKSTACK_TASK, &f));
		CHECK_U64(f.pc, MKSTACK_FUNC_A + 0x10);
		CHECK_U64(f.sp, MKSTACK_SP + 0x38);
		CHECK_U64(f.fp, MKSTACK_FP);
		CHECK_OK(kp_x86_unwind_step(u, &f, &end));
		CHECK(!end);
		CHECK_U64(f.pc, MKSTACK_FUNC_B + 0x20);
		CHECK_U64(f.sp, MKSTACK_SP + 0x40);
		CHECK_OK(kp_x86_unwind_step(u, &f, &end));
		CHECK(!end);
		CHECK_U64(f.pc, thread ? MKSTACK_THREAD_FN + 0x8 : MKSTACK_ENTRY + 0x8);
		CHECK_U64(f.sp, MKSTACK_FP + 16);
		CHECK_U64(f.fp, MKSTACK_SAVED_BP);
		CHECK(!f.exact);
		CHECK_OK(kp_x86_unwind_step(u, &f, &end));
		if (thread) {
			CHECK(end && !strcmp(end, KP_UNWIND_END));
		} else {
			CHECK(!end);
			CHECK(f.user);
			CHECK(f.exact);
			CHECK_U64(f.pc, MKSTACK_USER_PC);
			CHECK_U64(f.sp, MKSTACK_USER_SP);
			CHECK_U64(f.regs_at, MKSTACK_REGS);
			CHECK_OK(kp_x86_unwind_step(u, &f, &end));
			CHECK(end && !strcmp(end, KP_UNWIND_USER));
		}
		kp_x86_unwinder_destroy(u);
		scene_destroy(&s);
	}
}

TEST(orc_v1_by_release)
{
	run_version(1, "6.1.0-57-amd64");
	run_version(1, "5.10.0-32-amd64");
}

TEST(orc_v2_by_header)
{
	run_version(2, NULL);
}

TEST(orc_v3_by_header)
{
	run_version(3, NULL);
	run_version(3, "6.12.117+deb13-amd64");	// no header: by release
}

TEST(orc_v4_by_header)
{
	run_version(4, NULL);
	run_version(4, "7.2.13+deb14-amd64");
}

TEST(orc_unknown_header_refused)
{
	struct scene s;
	scene_create(&s, 3, NULL, false);
	mem_buf[MKSTACK_ORC_HEADER - MKSTACK_BASE] ^= 0xff;
	struct kp_unwinder *u = NULL;
	CHECK_ERR(kp_x86_unwinder_create(NULL, &s.env, &u), KP_ERR_UNSUPPORTED,
		  "unknown ORC format (header at 0xffffffff81001200 hashes orc_types.h as 015d32bf...)");
	scene_destroy(&s);
}

TEST(orc_hole_is_corrupt)
{
	// func_a's return address points past the code, into the hole.
	struct scene s;
	scene_create(&s, 3, NULL, false);
	put64(MKSTACK_SP + 0x38, MKSTACK_HOLE + 0x10);
	struct kp_unwinder *u = NULL;
	CHECK_OK(kp_x86_unwinder_create(NULL, &s.env, &u));
	struct kp_unwind_frame f;
	const char *end = NULL;
	CHECK_OK(kp_x86_unwind_sleeping(u, MKSTACK_TASK, &f));
	CHECK_OK(kp_x86_unwind_step(u, &f, &end));
	CHECK_U64(f.pc, MKSTACK_HOLE + 0x10);
	CHECK_ERR(kp_x86_unwind_step(u, &f, &end), KP_ERR_FORMAT,
		  "corrupt stack at pc 0xffffffff81000450: no unwind information (ORC undefined)");
	kp_x86_unwinder_destroy(u);
	scene_destroy(&s);
}

// Registers (a kdump crash note) whose pc is in code without ORC, as
// __crash_kexec() (STACK_FRAME_NON_STANDARD): the caller is the first word
// above sp that returns from a direct call into that code; a word that
// returns from a call elsewhere is passed over, and with none the stack is
// corrupt as before.
static void put_call(uint64_t ret_addr, uint64_t target)
{
	uint8_t *p = mem_buf + (ret_addr - 5 - MKSTACK_BASE);
	int32_t rel = (int32_t)(target - ret_addr);
	p[0] = 0xe8;
	memcpy(p + 1, &rel, 4);
}

TEST(orc_registers_in_code_without_orc)
{
	for (int found = 0; found < 2; found++) {
		struct scene s;
		scene_create(&s, 3, NULL, false);
		uint64_t sp = MKSTACK_SP - 0x100;
		put_call(MKSTACK_FUNC_A + 0x10, MKSTACK_FUNC_B);	// a call, elsewhere
		put64(sp + 0x10, MKSTACK_FUNC_A + 0x10);
		if (found) {
			put_call(MKSTACK_FUNC_B + 0x20, MKSTACK_HOLE);
			put64(sp + 0x30, MKSTACK_FUNC_B + 0x20);
		}
		struct kp_unwinder *u = NULL;
		CHECK_OK(kp_x86_unwinder_create(NULL, &s.env, &u));
		struct kp_unwind_frame f = { .pc = MKSTACK_HOLE + 0x10, .sp = sp, .exact = true,
					     .have_regs = true, .regs_full = true };
		const char *end = NULL;
		if (found) {
			CHECK_OK(kp_x86_unwind_step(u, &f, &end));
			CHECK(!end);
			CHECK_U64(f.pc, MKSTACK_FUNC_B + 0x20);
			CHECK_U64(f.sp, sp + 0x38);
			CHECK(!f.exact && !f.have_regs);
		} else {
			CHECK_ERR(kp_x86_unwind_step(u, &f, &end), KP_ERR_FORMAT,
				  "corrupt stack at pc 0xffffffff81000450: no unwind information (ORC undefined)");
		}
		kp_x86_unwinder_destroy(u);
		scene_destroy(&s);
	}
}

// A CPU caught in entry_SYSCALL_64 before the stack switch: the user frame
// from %rcx and %rsp, then "entered from user mode"; at the label after
// the switch (safe_stack) it is not that, and ORC decides.
TEST(orc_syscall_entry_before_stack_switch)
{
	struct scene s;
	scene_create(&s, 3, NULL, false);
	const uint64_t entry = MKSTACK_ENTRY;	// mkstack's entry_SYSCALL_64
	CHECK_OK(kp_symtab_add(s.st, "entry_SYSCALL_64_safe_stack", 27, entry + 0x2b, 'T', NULL));
	struct kp_unwinder *u = NULL;
	CHECK_OK(kp_x86_unwinder_create(NULL, &s.env, &u));
	struct kp_unwind_frame f = { .pc = entry + 0x12, .sp = 0x7ffc12345678, .exact = true,
				     .have_regs = true, .regs_full = true };
	f.regs.nregs = 21;
	f.regs.r[11] = 0x401000;		// rcx: the user's rip
	f.regs.r[19] = 0x7ffc12345678;		// rsp: still the user's
	f.regs.r[17] = 0x10;			// cs: the kernel's already
	const char *end = NULL;
	CHECK_OK(kp_x86_unwind_step(u, &f, &end));
	CHECK(!end && f.user);
	CHECK_U64(f.pc, 0x401000);
	CHECK_U64(f.sp, 0x7ffc12345678);
	CHECK_OK(kp_x86_unwind_step(u, &f, &end));
	CHECK(end && !strcmp(end, KP_UNWIND_USER));
	// Past the switch, ORC's answer, not the user's frame.
	f = (struct kp_unwind_frame){ .pc = entry + 0x2b, .sp = MKSTACK_SP, .exact = true,
				      .have_regs = true, .regs_full = true };
	f.regs.r[11] = 0x401000;
	end = NULL;
	kp_error_destroy(kp_x86_unwind_step(u, &f, &end));
	CHECK(f.pc != 0x401000 && !(f.user && f.sp == 0x7ffc12345678));
	kp_x86_unwinder_destroy(u);
	scene_destroy(&s);
}

TEST(orc_unreadable_stack)
{
	struct scene s;
	scene_create(&s, 3, NULL, false);
	put64(MKSTACK_TASK + MKSTACK_THREAD_SP, 0xffffc90000000000ULL);	// not in memory
	struct kp_unwinder *u = NULL;
	CHECK_OK(kp_x86_unwinder_create(NULL, &s.env, &u));
	struct kp_unwind_frame f;
	CHECK_ERR(kp_x86_unwind_sleeping(u, MKSTACK_TASK, &f), KP_ERR_FAULT,
		  "task 0xffffffff81002000: saved context");
	kp_x86_unwinder_destroy(u);
	scene_destroy(&s);
}

TEST(orc_tables_inconsistent)
{
	// Entry and address tables of different lengths.
	struct scene s;
	scene_create(&s, 3, NULL, false);
	kp_symtab_destroy(s.st);
	CHECK_OK(kp_symtab_create(&s.st));
	CHECK_OK(kp_symtab_add(s.st, "__start_orc_unwind_ip", 21, MKSTACK_BASE + 0x1000, 'R', NULL));
	CHECK_OK(kp_symtab_add(s.st, "__stop_orc_unwind_ip", 20, MKSTACK_BASE + 0x1014, 'R', NULL));
	CHECK_OK(kp_symtab_add(s.st, "__start_orc_unwind", 18, MKSTACK_BASE + 0x1100, 'R', NULL));
	CHECK_OK(kp_symtab_add(s.st, "__stop_orc_unwind", 17, MKSTACK_BASE + 0x1120, 'R', NULL));
	s.env.st = s.st;
	struct kp_unwinder *u = NULL;
	CHECK_ERR(kp_x86_unwinder_create(NULL, &s.env, &u), KP_ERR_FORMAT, "ORC tables inconsistent");
	scene_destroy(&s);
}

int main(void)
{
	RUN(orc_v1_by_release);
	RUN(orc_v2_by_header);
	RUN(orc_v3_by_header);
	RUN(orc_v4_by_header);
	RUN(orc_unknown_header_refused);
	RUN(orc_hole_is_corrupt);
	RUN(orc_registers_in_code_without_orc);
	RUN(orc_syscall_entry_before_stack_switch);
	RUN(orc_unreadable_stack);
	RUN(orc_tables_inconsistent);
	return TEST_SUMMARY();
}
