// SPDX-License-Identifier: MIT
// The arm64 frame-record unwinder (arch/arm64/unwind.c) over a generated
// kernel stack: frame records chained through x29, a PAC-signed return
// address, the final record, and a CPU caught entering the kernel: in the
// lower-EL half of the vector table or an el0* handler with the user's x29
// (the stack ends "entered from user mode"), in the EL1 half (the walk goes
// on through x29), and a user x29 anywhere else (a corrupt stack, an error).
#include "test.h"
#include "arch/arm64/arm64.h"
#include "arch/unwind.h"
#include "io/memory.h"
#include "symbols/symtab.h"

#define VA_BITS 48
#define STACK 0xffff800080010000ULL	// the generated stack page
#define TEXT 0xffffc00080010000ULL	// where the symbols below are
#define VECTORS (TEXT + 0x800)		// 2 KiB aligned, as .align 11
#define EL0T_IRQ (TEXT + 0x1000)
#define HANDLER (TEXT + 0x2000)
#define CALLER (TEXT + 0x3000)
#define RET_TO_USER (TEXT + 0x3800)
#define USER_FP 0x0000ffffd227d240ULL

static uint8_t stack_buf[4096];

static void put64(uint64_t addr, uint64_t v)
{
	memcpy(stack_buf + (addr - STACK), &v, 8);
}

// Offsets the unwinder asks BTF for; pt_regs as 6.1's (no stackframe.type).
static bool member(void *arg, const char *type, const char *m, uint64_t *off, uint64_t *size)
{
	static const struct {
		const char *type, *member;
		uint64_t off;
	} tab[] = {
		{ "struct task_struct", "thread.cpu_context.pc", 0x1000 },
		{ "struct task_struct", "thread.cpu_context.fp", 0x1008 },
		{ "struct task_struct", "thread.cpu_context.sp", 0x1010 },
		{ "struct pt_regs", "regs", 0 },
		{ "struct pt_regs", "sp", 0xf8 },
		{ "struct pt_regs", "pc", 0x100 },
		{ "struct pt_regs", "pstate", 0x108 },
		{ "struct pt_regs", "stackframe", 0x130 },
	};
	(void)arg;
	for (size_t i = 0; i < sizeof(tab) / sizeof(tab[0]); i++)
		if (!strcmp(tab[i].type, type) && !strcmp(tab[i].member, m)) {
			*off = tab[i].off;
			if (size)
				*size = 8;
			return true;
		}
	return false;
}

struct scene {
	struct kp_memory *mem;
	struct kp_symtab *st;
	struct kp_unwinder *u;
};

static void add_sym(struct kp_symtab *st, const char *name, uint64_t addr)
{
	CHECK_OK(kp_symtab_add(st, name, strlen(name), addr, 'T', NULL));
}

static void scene_create(struct scene *s)
{
	memset(stack_buf, 0, sizeof(stack_buf));
	CHECK_OK(kp_memory_create(&s->mem));
	CHECK_OK(kp_memory_add(s->mem, KP_VIRT, STACK, sizeof(stack_buf), kp_read_buffer,
			       stack_buf, 0));
	CHECK_OK(kp_symtab_create(&s->st));
	add_sym(s->st, "_stext", TEXT);
	add_sym(s->st, "vectors", VECTORS);
	add_sym(s->st, "el0t_64_irq", EL0T_IRQ);
	add_sym(s->st, "handle_thing", HANDLER);
	add_sym(s->st, "do_caller", CALLER);
	add_sym(s->st, "ret_to_user", RET_TO_USER);
	add_sym(s->st, "_etext", TEXT + 0x4000);
	CHECK_OK(kp_symtab_finalize(s->st));
	struct kp_unwind_env env = { s->mem, s->st, "6.1.0-57-arm64", NULL, member, NULL };
	s->u = NULL;
	CHECK_OK(kp_arm64_unwinder_new(VA_BITS, &env, &s->u));
}

static void scene_destroy(struct scene *s)
{
	kp_arm64_unwinder_destroy(s->u);
	kp_symtab_destroy(s->st);
	kp_memory_destroy(s->mem);
}

// The first frame of a CPU, from its note.
static struct kp_unwind_frame cpu_frame(uint64_t pc, uint64_t fp, uint64_t sp)
{
	struct kp_unwind_frame f;
	memset(&f, 0, sizeof(f));
	f.pc = pc;
	f.fp = fp;
	f.sp = sp;
	f.exact = f.have_regs = f.regs_full = true;
	return f;
}

// Steps from f; returns the end reason (NULL: a next frame, now in f) and
// fails the test on an error.
static const char *step(struct scene *s, struct kp_unwind_frame *f)
{
	const char *why = NULL;
	CHECK_OK(kp_arm64_unwind_step(s->u, f, &why));
	return why;
}

TEST(records_to_the_final_one)
{
	struct scene s;
	scene_create(&s);
	// handle_thing's record at STACK+0x100 -> do_caller's at +0x200 -> final.
	put64(STACK + 0x100, STACK + 0x200);
	put64(STACK + 0x108, HANDLER + 0x40);
	put64(STACK + 0x200, 0);
	put64(STACK + 0x208, 0);
	struct kp_unwind_frame f = cpu_frame(HANDLER + 0x10, STACK + 0x100, STACK + 0xf0);
	CHECK(step(&s, &f) == NULL);
	CHECK_U64(f.pc, HANDLER + 0x40);
	CHECK_U64(f.fp, STACK + 0x200);
	CHECK(!f.exact);
	CHECK_STR(step(&s, &f), KP_UNWIND_END);
	scene_destroy(&s);
}

TEST(pac_signed_return_address_stripped)
{
	struct scene s;
	scene_create(&s);
	// A PAC in bits 48..54 and 56..63 of a kernel return address (bit 55 set).
	uint64_t signed_ra = (CALLER + 0x24) & ~(0xff7fULL << 48);
	signed_ra |= 0x3a15ULL << 48 | 1ULL << 55;
	CHECK(signed_ra != CALLER + 0x24);
	put64(STACK + 0x100, 0);
	put64(STACK + 0x108, signed_ra);
	struct kp_unwind_frame f = cpu_frame(HANDLER + 0x10, STACK + 0x100, STACK + 0xf0);
	CHECK(step(&s, &f) == NULL);
	CHECK_U64(f.pc, CALLER + 0x24);
	scene_destroy(&s);
}

TEST(vector_entry_from_el0_ends_in_user_mode)
{
	struct scene s;
	scene_create(&s);
	// Caught at the first instruction of the EL0 IRQ entry (vectors+0x480)
	// and of the EL0 synchronous entry (+0x400), x29 still the user's.
	for (uint64_t off = 0x400; off < 0x800; off += 0x80) {
		struct kp_unwind_frame f = cpu_frame(VECTORS + off, USER_FP, STACK + 0x1000);
		CHECK_STR(step(&s, &f), KP_UNWIND_USER);
	}
	// In el0t_64_irq before kernel_entry set x29.
	struct kp_unwind_frame f = cpu_frame(EL0T_IRQ + 0x8, USER_FP, STACK + 0xed0);
	CHECK_STR(step(&s, &f), KP_UNWIND_USER);
	// In ret_to_user after kernel_exit restored the user's x29.
	f = cpu_frame(RET_TO_USER + 0x54, USER_FP, STACK + 0x1000);
	CHECK_STR(step(&s, &f), KP_UNWIND_USER);
	// x29 zero there: the end as well (the final record's rule).
	f = cpu_frame(VECTORS + 0x480, 0, STACK + 0x1000);
	CHECK_STR(step(&s, &f), KP_UNWIND_END);
	scene_destroy(&s);
}

TEST(vector_entry_from_el1_walks_on)
{
	struct scene s;
	scene_create(&s);
	// An IRQ taken in the kernel (vectors+0x280) before pt_regs are saved:
	// x29 is the interrupted function's record, the walk goes on through it.
	put64(STACK + 0x300, 0);
	put64(STACK + 0x308, CALLER + 0x30);
	struct kp_unwind_frame f = cpu_frame(VECTORS + 0x280, STACK + 0x300, STACK + 0x2c0);
	CHECK(step(&s, &f) == NULL);
	CHECK_U64(f.pc, CALLER + 0x30);
	// A user x29 with the pc in the EL1 half is not forgiven.
	f = cpu_frame(VECTORS + 0x280, USER_FP, STACK + 0x2c0);
	const char *why = NULL;
	struct kp_error *err = kp_arm64_unwind_step(s.u, &f, &why);
	CHECK(err != NULL);
	kp_error_destroy(err);
	scene_destroy(&s);
}

TEST(user_fp_elsewhere_is_an_error)
{
	struct scene s;
	scene_create(&s);
	const char *why = NULL;
	// A CPU in an ordinary function with a user x29: a corrupt stack.
	struct kp_unwind_frame f = cpu_frame(HANDLER + 0x10, USER_FP, STACK + 0xf0);
	struct kp_error *err = kp_arm64_unwind_step(s.u, &f, &why);
	CHECK(err != NULL);
	CHECK(why == NULL);
	kp_error_destroy(err);
	// Nor is a return address found in a frame record (not the CPU's own
	// registers) pointing into the vectors with a user x29.
	f = cpu_frame(VECTORS + 0x480, USER_FP, STACK + 0xf0);
	f.exact = false;
	err = kp_arm64_unwind_step(s.u, &f, &why);
	CHECK(err != NULL);
	kp_error_destroy(err);
	scene_destroy(&s);
}

int main(void)
{
	RUN(records_to_the_final_one);
	RUN(pac_signed_return_address_stripped);
	RUN(vector_entry_from_el0_ends_in_user_mode);
	RUN(vector_entry_from_el1_walks_on);
	RUN(user_fp_elsewhere_is_an_error);
	return TEST_SUMMARY();
}
