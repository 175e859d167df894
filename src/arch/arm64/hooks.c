// SPDX-License-Identifier: MIT
// arm64 facts for kpeek's integrity checks: the instructions an inline
// hook puts at a function's entry (Arm ARM, A64 encodings).
#include "arch/arm64/arm64.h"
#include "util/le.h"

#define INSN_NOP 0xd503201fu
#define INSN_BTI_C 0xd503245fu	// bti c (CONFIG_ARM64_BTI_KERNEL)
#define INSN_PACIASP 0xd503233fu
#define INSN_MOV_X9_X30 0xaa1e03e9u	// ftrace's patch site (WITH_REGS/ARGS, 5.5+)

static uint64_t sext(uint64_t v, unsigned bits)
{
	uint64_t m = UINT64_C(1) << (bits - 1);
	return (v ^ m) - m;
}

bool kp_arm64_entry_branch(const uint8_t *code, size_t size, uint64_t addr, struct kp_branch *ret)
{
	for (size_t i = 0; i + 4 <= size && i < 16; i += 4) {
		uint32_t insn = kp_le32(code + i);
		uint64_t at = addr + i;
		if (insn == INSN_NOP || insn == INSN_BTI_C || insn == INSN_PACIASP ||
		    insn == INSN_MOV_X9_X30)
			continue;
		struct kp_branch b = { .at = at };
		if ((insn & 0x7c000000u) == 0x14000000u) {
			// b / bl imm26
			b.kind = insn & 0x80000000u ? KP_BRANCH_CALL : KP_BRANCH_JUMP;
			b.target = at + (sext(insn & 0x03ffffffu, 26) << 2);
			b.insn = insn & 0x80000000u ? "bl" : "b";
		} else if ((insn & 0xff00001eu) == 0x58000010u && i + 8 <= size) {
			// ldr x16|x17, literal; br x16|x17: the absolute hook
			uint32_t br = kp_le32(code + i + 4);
			if (br != (0xd61f0000u | (insn & 0x1f) << 5))
				return false;
			b.kind = KP_BRANCH_JUMP;
			b.indirect = true;
			b.target = at + (sext(insn >> 5 & 0x7ffff, 19) << 2);
			b.insn = "ldr+br";
		} else if ((insn & 0xffe0001fu) == 0xd4200000u) {
			b.kind = KP_BRANCH_TRAP;	// brk #imm (kprobes: BRK #0x004)
			b.insn = "brk";
		} else {
			return false;
		}
		*ret = b;
		return true;
	}
	return false;
}
