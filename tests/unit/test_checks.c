// SPDX-License-Identifier: MIT
// The pieces of kpeek check that work without BTF: the xarray walker
// (src/linux/xarray.c) over synthetic nodes with a hand-made layout, and
// the architectures' decoders of a function's first branch and of an
// interrupt gate (src/arch/*/hooks.c), over encoded instructions.
#include <stdlib.h>

#include "test.h"
#include "arch/arch.h"
#include "arch/arm64/arm64.h"
#include "arch/x86_64/x86_64.h"
#include "core/kernel.h"
#include "io/memory.h"
#include "linux/lib/xarray.h"
#include "symbols/symtab.h"

#define BASE 0xffff888000100000ULL
#define MEMSIZE 0x10000

static uint8_t mem[MEMSIZE];

static struct kp_kernel *fake_kernel(void)
{
	struct kp_memory *m;
	struct kp_symtab *st;
	struct kp_kernel *k;
	memset(mem, 0, sizeof(mem));
	if (kp_memory_create(&m) || kp_memory_add(m, KP_VIRT, BASE, MEMSIZE, kp_read_buffer, mem, 0) ||
	    kp_symtab_create(&st) || kp_kernel_from_parts(m, st, &kp_arch_x86_64, NULL, &k))
		abort();
	return k;
}

static void w64(uint64_t addr, uint64_t v) { memcpy(mem + (addr - BASE), &v, 8); }

// struct xarray { ...; void *xa_head at 8 }, struct xa_node { u8 shift at
// 0; slots[16] at 0x28 } (XA_CHUNK_SIZE 16: CONFIG_BASE_SMALL's).
static const struct kp_lx_xa_layout XL = { .xa_head = 8, .node_shift = 0, .node_slots = 0x28, .chunk = 16 };
#define XA (BASE + 0x0)
#define NODE(i) (BASE + 0x100 + 0x100ULL * (i))
#define ENTRY(i) (BASE + 0x8000 + 0x40ULL * (i))	// 8-aligned pointers

struct got {
	uint64_t index[64], entry[64];
	size_t n;
};

static struct kp_error *collect(uint64_t index, uint64_t entry, void *arg)
{
	struct got *g = arg;
	if (g->n < 64) {
		g->index[g->n] = index;
		g->entry[g->n] = entry;
	}
	g->n++;
	return NULL;
}

static void node(int i, uint8_t shift)
{
	mem[NODE(i) - BASE] = shift;
}

static void slot(int i, unsigned s, uint64_t v)
{
	w64(NODE(i) + XL.node_slots + 8 * s, v);
}

TEST(xarray_walk_in_index_order_skipping_values_and_siblings)
{
	struct kp_kernel *k = fake_kernel();
	// Root node (shift 4) -> slot 0: leaf node (shift 0), slot 2: leaf.
	w64(XA + 8, NODE(0) | 2);
	node(0, 4);
	slot(0, 0, NODE(1) | 2);
	slot(0, 2, NODE(2) | 2);
	slot(0, 5, ENTRY(9));			// a pointer directly in the root: index 80
	node(1, 0);
	slot(1, 1, ENTRY(1));			// index 1
	slot(1, 3, 0x1235);			// a value entry (bit 0): skipped
	slot(1, 4, (1 << 2) | 2);		// a sibling entry (internal, small): skipped
	node(2, 0);
	slot(2, 15, ENTRY(2));			// index 2 * 16 + 15 = 47
	struct got g = {0};
	CHECK_OK(kp_lx_xa_walk(k, &XL, XA, collect, &g));
	CHECK_U64(g.n, 3);
	CHECK_U64(g.index[0], 1);
	CHECK_U64(g.entry[0], ENTRY(1));
	CHECK_U64(g.index[1], 47);
	CHECK_U64(g.entry[1], ENTRY(2));
	CHECK_U64(g.index[2], 80);
	CHECK_U64(g.entry[2], ENTRY(9));
	kp_kernel_destroy(k);
}

TEST(xarray_lone_entry_and_empty)
{
	struct kp_kernel *k = fake_kernel();
	struct got g = {0};
	CHECK_OK(kp_lx_xa_walk(k, &XL, XA, collect, &g));
	CHECK_U64(g.n, 0);
	w64(XA + 8, ENTRY(3));
	CHECK_OK(kp_lx_xa_walk(k, &XL, XA, collect, &g));
	CHECK_U64(g.n, 1);
	CHECK_U64(g.index[0], 0);
	CHECK_U64(g.entry[0], ENTRY(3));
	kp_kernel_destroy(k);
}

TEST(xarray_corrupt_nodes_are_errors)
{
	struct kp_kernel *k = fake_kernel();
	struct got g = {0};
	// A node that points at itself: its child must have a smaller shift.
	w64(XA + 8, NODE(0) | 2);
	node(0, 4);
	slot(0, 0, NODE(0) | 2);
	CHECK_ERR(kp_lx_xa_walk(k, &XL, XA, collect, &g), KP_ERR_FORMAT, "shift");
	// A node below the last level.
	node(0, 0);
	CHECK_ERR(kp_lx_xa_walk(k, &XL, XA, collect, &g), KP_ERR_FORMAT, "below the last level");
	// A shift that is no multiple of the chunk's bits.
	node(0, 3);
	slot(0, 0, 0);
	CHECK_ERR(kp_lx_xa_walk(k, &XL, XA, collect, &g), KP_ERR_FORMAT, "shift 3");
	// A node outside memory.
	w64(XA + 8, 0xffff888100000000ULL | 2);
	CHECK_ERR(kp_lx_xa_walk(k, &XL, XA, collect, &g), KP_ERR_FAULT, "xa_node");
	kp_kernel_destroy(k);
}

// ---------------------------------------------------------------- x86-64 entries

static bool x86(const uint8_t *code, size_t n, struct kp_branch *b)
{
	return kp_arch_x86_64.entry_branch(code, n, 0xffffffff81000000ULL, b);
}

TEST(x86_entry_branches)
{
	struct kp_branch b;
	// endbr64; nop5 (fentry, not traced); push %rbp: no branch.
	static const uint8_t plain[] = { 0xf3, 0x0f, 0x1e, 0xfa, 0x0f, 0x1f, 0x44, 0x00, 0x00, 0x55 };
	CHECK(!x86(plain, sizeof(plain), &b));
	// The sealed endbr64 (IBT poison), then a jmp rel32 after it.
	static const uint8_t sealed[] = { 0x66, 0x0f, 0x1f, 0x00, 0xe9, 0x00, 0x00, 0x00, 0x00 };
	CHECK(x86(sealed, sizeof(sealed), &b));
	CHECK_U64(b.at, 0xffffffff81000004ULL);
	CHECK_U64(b.target, 0xffffffff81000009ULL);
	// jmp rel32 over the endbr64 (what the test rootkit writes at +0).
	static const uint8_t jmp[] = { 0xe9, 0xfb, 0xff, 0xff, 0x3e, 0x90 };
	CHECK(x86(jmp, sizeof(jmp), &b));
	CHECK(b.kind == KP_BRANCH_JUMP);
	CHECK_U64(b.at, 0xffffffff81000000ULL);
	CHECK_U64(b.target, 0xffffffffc0000000ULL);	// 0xffffffff81000005 + 0x3efffffb
	// endbr64; call rel32 (ftrace tracing it) at +4.
	static const uint8_t call[] = { 0xf3, 0x0f, 0x1e, 0xfa, 0xe8, 0x10, 0x00, 0x00, 0x00 };
	CHECK(x86(call, sizeof(call), &b));
	CHECK(b.kind == KP_BRANCH_CALL);
	CHECK_U64(b.at, 0xffffffff81000004ULL);
	CHECK_U64(b.target, 0xffffffff81000019ULL);
	// movabs $0xffffffffc0001234, %rax; jmp *%rax
	static const uint8_t abs_rax[] = { 0x48, 0xb8, 0x34, 0x12, 0x00, 0xc0, 0xff, 0xff, 0xff, 0xff,
					   0xff, 0xe0 };
	CHECK(x86(abs_rax, sizeof(abs_rax), &b));
	CHECK(b.kind == KP_BRANCH_JUMP);
	CHECK_U64(b.target, 0xffffffffc0001234ULL);
	// movabs $imm, %r11; jmp *%r11
	static const uint8_t abs_r11[] = { 0x49, 0xbb, 0x34, 0x12, 0x00, 0xc0, 0xff, 0xff, 0xff, 0xff,
					   0x41, 0xff, 0xe3 };
	CHECK(x86(abs_r11, sizeof(abs_r11), &b));
	CHECK_U64(b.target, 0xffffffffc0001234ULL);
	// movabs to %rax, jmp through %rcx: not the hook pattern.
	static const uint8_t mismatch[] = { 0x48, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xe1 };
	CHECK(!x86(mismatch, sizeof(mismatch), &b));
	// push $0xc0001234 (sign-extended); ret
	static const uint8_t pushret[] = { 0x68, 0x34, 0x12, 0x00, 0xc0, 0xc3 };
	CHECK(x86(pushret, sizeof(pushret), &b));
	CHECK_U64(b.target, 0xffffffffc0001234ULL);
	// jmp *disp32(%rip): indirect, target is the pointer's address.
	static const uint8_t ind[] = { 0xff, 0x25, 0x00, 0x00, 0x00, 0x00 };
	CHECK(x86(ind, sizeof(ind), &b));
	CHECK(b.indirect);
	CHECK_U64(b.target, 0xffffffff81000006ULL);
	// int3 (a kprobe)
	static const uint8_t trap[] = { 0xcc, 0x90 };
	CHECK(x86(trap, sizeof(trap), &b));
	CHECK(b.kind == KP_BRANCH_TRAP);
	// Truncated code never reads past its end.
	CHECK(!x86(jmp, 4, &b));
	CHECK(!x86(abs_rax, 11, &b));
}

TEST(x86_interrupt_gate)
{
	// Offset 0xffffffff81a01234, selector 0x10, present interrupt gate.
	uint8_t gate[16] = { 0x34, 0x12, 0x10, 0x00, 0x00, 0x8e, 0xa0, 0x81,
			     0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0 };
	uint64_t h;
	CHECK(kp_arch_x86_64.vector_handler(gate, &h));
	CHECK_U64(h, 0xffffffff81a01234ULL);
	gate[5] = 0x0e;	// not present
	CHECK(!kp_arch_x86_64.vector_handler(gate, &h));
}

// ---------------------------------------------------------------- arm64 entries

static void put32(uint8_t *p, uint32_t v) { memcpy(p, &v, 4); }

TEST(arm64_entry_branches)
{
	const uint64_t at = 0xffff800008010000ULL;
	uint8_t code[16];
	struct kp_branch b;
	// bti c; mov x9, x30; bl -0x100 (ftrace_caller before it)
	put32(code, 0xd503245f);
	put32(code + 4, 0xaa1e03e9);
	put32(code + 8, 0x94000000u | ((uint32_t)(-0x40) & 0x03ffffff));
	CHECK(kp_arch_arm64.entry_branch(code, 12, at, &b));
	CHECK(b.kind == KP_BRANCH_CALL);
	CHECK_U64(b.at, at + 8);
	CHECK_U64(b.target, at + 8 - 0x100);
	// b +0x1000
	put32(code, 0x14000400);
	CHECK(kp_arch_arm64.entry_branch(code, 4, at, &b));
	CHECK(b.kind == KP_BRANCH_JUMP);
	CHECK_U64(b.target, at + 0x1000);
	// ldr x16, #8; br x16 (the absolute hook)
	put32(code, 0x58000050);
	put32(code + 4, 0xd61f0200);
	CHECK(kp_arch_arm64.entry_branch(code, 8, at, &b));
	CHECK(b.indirect);
	CHECK_U64(b.target, at + 8);
	// ldr x16; br x17: not the pattern
	put32(code + 4, 0xd61f0220);
	CHECK(!kp_arch_arm64.entry_branch(code, 8, at, &b));
	// brk #4 (a kprobe)
	put32(code, 0xd4200080);
	CHECK(kp_arch_arm64.entry_branch(code, 4, at, &b));
	CHECK(b.kind == KP_BRANCH_TRAP);
	// stp x29, x30, [sp, #-16]!: an ordinary prologue
	put32(code, 0xa9bf7bfd);
	CHECK(!kp_arch_arm64.entry_branch(code, 4, at, &b));
}

TEST(check_names_and_unknown_check)
{
	const char *const *n = kp_check_names();
	size_t count = 0;
	for (; n[count]; count++)
		CHECK(kp_check_description(n[count]) != NULL);
	CHECK_U64(count, 10);
	CHECK(kp_check_description("nope") == NULL);
	struct kp_kernel *k = fake_kernel();
	struct kp_check *c = NULL;
	CHECK_ERR(kp_check_run(k, "nope", 0, &c), KP_ERR_NOT_FOUND, "unknown check 'nope'");
	CHECK(c == NULL);
	// Without symbols every check says it cannot decide, never "clean".
	for (n = kp_check_names(); *n; n++) {
		CHECK_OK(kp_check_run(k, *n, 0, &c));
		CHECK(kp_check_status(c) == KP_CHECK_CANNOT);
		CHECK(kp_check_reason(c) && strstr(kp_check_reason(c), "_stext"));
		CHECK_U64(kp_check_count(c), 0);
		kp_check_destroy(c);
	}
	kp_kernel_destroy(k);
}

int main(void)
{
	RUN(xarray_walk_in_index_order_skipping_values_and_siblings);
	RUN(xarray_lone_entry_and_empty);
	RUN(xarray_corrupt_nodes_are_errors);
	RUN(x86_entry_branches);
	RUN(x86_interrupt_gate);
	RUN(arm64_entry_branches);
	RUN(check_names_and_unknown_check);
	return TEST_SUMMARY();
}
