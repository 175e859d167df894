// SPDX-License-Identifier: MIT
// mkstack: see mkstack.h. Encodings from arch/x86/include/asm/orc_types.h
// of each version; the test's expectations are the values written here.
#include <stdlib.h>
#include <string.h>

#include "mkstack.h"
#include "symbols/symtab.h"
#include "util/error.h"

#define V MKSTACK_BASE
#define IP_TABLE (V + 0x1000)
#define ORC_TABLE (V + 0x1100)
#define NENTRIES 5

struct entry {
	uint64_t ip;
	int16_t sp_offset, bp_offset;
	const char *sp_reg, *bp_reg;	// "sp", "bp", "prev_sp", "undef"
	const char *type;		// "call", "regs", "end", "undef"
};

static const struct entry entries[NENTRIES] = {
	{ MKSTACK_FUNC_A, 8, 0, "sp", "undef", "call" },
	{ MKSTACK_FUNC_B, 16, -16, "bp", "prev_sp", "call" },
	{ MKSTACK_ENTRY, 0, 0, "sp", "undef", "regs" },
	{ MKSTACK_THREAD_FN, 0, 0, "undef", "undef", "end" },
	{ MKSTACK_HOLE, 0, 0, "undef", "undef", "undef" },
};

static const uint8_t hashes[3][20] = {
	{ 0xdb, 0x84, 0xae, 0xd4, 0x10, 0x3b, 0x31, 0xdd, 0x51, 0xe0,
	  0x17, 0xf8, 0xf7, 0x97, 0x83, 0xca, 0x98, 0x5c, 0x2c, 0x51 },	// 6.3
	{ 0xfe, 0x5d, 0x32, 0xbf, 0x58, 0x1b, 0xd6, 0x3b, 0x2c, 0xa9,
	  0xa5, 0xc6, 0x5b, 0xa5, 0xa6, 0x25, 0xea, 0xb3, 0xfe, 0x24 },	// 6.4
	{ 0x13, 0x7c, 0x36, 0xad, 0x76, 0x27, 0xc4, 0xdd, 0x55, 0x93,
	  0x21, 0x76, 0xbb, 0x0e, 0xcd, 0xbd, 0x50, 0x41, 0xfc, 0x82 },	// 7.1
};

static unsigned reg_no(int version, const char *r)
{
	static const char *const v1[] = { "undef", "prev_sp", "dx", "di", "bp", "sp", NULL };
	static const char *const v4[] = { "undef", "ax", "dx", "sp", "bp", "di", "r10", "r13",
					  "prev_sp", NULL };
	const char *const *t = version >= 4 ? v4 : v1;
	for (unsigned i = 0; t[i]; i++)
		if (!strcmp(t[i], r))
			return i;
	abort();
}

static uint16_t flags(int version, const struct entry *e)
{
	unsigned f = reg_no(version, e->sp_reg) | reg_no(version, e->bp_reg) << 4;
	bool regs = !strcmp(e->type, "regs"), end = !strcmp(e->type, "end");
	if (version >= 3) {
		// UNDEFINED 0, END_OF_STACK 1, CALL 2, REGS 3; signal: bit 11.
		unsigned t = !strcmp(e->type, "undef") ? 0 : end ? 1 : regs ? 3 : 2;
		return (uint16_t)(f | t << 8 | (regs ? 1u << 11 : 0));
	}
	// CALL 0, REGS 1; ends and holes have an undefined sp_reg; end: bit 10
	// (6.3: signal 10, end 11).
	f |= (regs ? 1u : 0) << 8;
	if (version == 2)
		return (uint16_t)(f | (regs ? 1u << 10 : 0) | (end ? 1u << 11 : 0));
	return (uint16_t)(f | (end ? 1u << 10 : 0));
}

static void put64(uint8_t *buf, uint64_t addr, uint64_t v)
{
	memcpy(buf + (addr - V), &v, 8);
}

void mkstack_image(uint8_t *buf, int version, bool header, bool thread)
{
	memset(buf, 0, MKSTACK_SIZE);
	for (unsigned i = 0; i < NENTRIES; i++) {
		int32_t rel = (int32_t)(entries[i].ip - (IP_TABLE + 4 * i));
		memcpy(buf + (IP_TABLE + 4 * i - V), &rel, 4);
		uint8_t *e = buf + (ORC_TABLE + 6 * i - V);
		uint16_t f = flags(version, &entries[i]);
		memcpy(e, &entries[i].sp_offset, 2);
		memcpy(e + 2, &entries[i].bp_offset, 2);
		memcpy(e + 4, &f, 2);
	}
	if (header && version >= 2)
		memcpy(buf + (MKSTACK_ORC_HEADER - V), hashes[version - 2], 20);
	put64(buf, MKSTACK_TASK + MKSTACK_THREAD_SP, MKSTACK_SP);
	put64(buf, MKSTACK_SP + MKSTACK_FRAME_BP, MKSTACK_FP);
	put64(buf, MKSTACK_SP + MKSTACK_FRAME_RET, MKSTACK_FUNC_A + 0x10);
	// func_a: CALL, sp + 8: the return address right below the caller's sp.
	put64(buf, MKSTACK_SP + 0x38, MKSTACK_FUNC_B + 0x20);
	// func_b: CALL, bp + 16: return address at bp + 8, saved bp at bp.
	put64(buf, MKSTACK_FP, MKSTACK_SAVED_BP);
	put64(buf, MKSTACK_FP + 8, thread ? MKSTACK_THREAD_FN + 0x8 : MKSTACK_ENTRY + 0x8);
	// pt_regs (r15 first, 8 bytes each): bp 4, ip 16, cs 17, sp 19.
	put64(buf, MKSTACK_REGS + 8 * 16, MKSTACK_USER_PC);
	put64(buf, MKSTACK_REGS + 8 * 17, 0x33);	// user code segment
	put64(buf, MKSTACK_REGS + 8 * 19, MKSTACK_USER_SP);
	put64(buf, MKSTACK_REGS + 8 * 4, 0x2222);
}

static void sym(struct kp_symtab *st, const char *name, uint64_t addr, char type)
{
	struct kp_error *err = kp_symtab_add(st, name, strlen(name), addr, type, NULL);
	if (err)
		abort();
}

void mkstack_symbols(struct kp_symtab *st, bool header)
{
	sym(st, "func_a", MKSTACK_FUNC_A, 't');
	sym(st, "func_b", MKSTACK_FUNC_B, 't');
	sym(st, "entry_SYSCALL_64", MKSTACK_ENTRY, 'T');
	sym(st, "kthread_fn", MKSTACK_THREAD_FN, 't');
	sym(st, "__start_orc_unwind_ip", IP_TABLE, 'R');
	sym(st, "__stop_orc_unwind_ip", IP_TABLE + 4 * NENTRIES, 'R');
	sym(st, "__start_orc_unwind", ORC_TABLE, 'R');
	sym(st, "__stop_orc_unwind", ORC_TABLE + 6 * NENTRIES, 'R');
	if (header) {
		sym(st, "__start_orc_header", MKSTACK_ORC_HEADER, 'R');
		sym(st, "__stop_orc_header", MKSTACK_ORC_HEADER + 20, 'R');
	}
}

bool mkstack_member(void *arg, const char *type, const char *m, uint64_t *off, uint64_t *size)
{
	static const char *const pt[] = { "r15", "r14", "r13", "r12", "bp", "bx", "r11", "r10",
					  "r9", "r8", "ax", "cx", "dx", "si", "di", "orig_ax",
					  "ip", "cs", "flags", "sp", "ss", NULL };
	(void)arg;
	if (size)
		*size = 8;
	if (!strcmp(type, "struct task_struct") && !strcmp(m, "thread.sp"))
		return *off = MKSTACK_THREAD_SP, true;
	if (!strcmp(type, "struct inactive_task_frame") && !strcmp(m, "bp"))
		return *off = MKSTACK_FRAME_BP, true;
	if (!strcmp(type, "struct inactive_task_frame") && !strcmp(m, "ret_addr"))
		return *off = MKSTACK_FRAME_RET, true;
	if (!strcmp(type, "struct pt_regs"))
		for (unsigned i = 0; pt[i]; i++)
			if (!strcmp(pt[i], m))
				return *off = 8 * i, true;
	return false;
}
