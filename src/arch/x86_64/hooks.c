// SPDX-License-Identifier: MIT
// x86-64 facts for kpeek's integrity checks: the instructions an inline
// hook puts at a function's entry, and interrupt gates.
#include <string.h>

#include "arch/x86_64/x86_64.h"
#include "util/le.h"

// endbr64 (CONFIG_X86_KERNEL_IBT, 6.2+) and the 5-byte nop gcc's
// -mfentry call is patched into when ftrace does not trace the function
// (ftrace_nop_replace(): x86_nops[5], "nopl 0x0(%rax,%rax,1)").
static const uint8_t ENDBR64[] = { 0xf3, 0x0f, 0x1e, 0xfa };
// With IBT, apply_seal_endbr() (6.2) overwrites the endbr64 of functions
// never called indirectly with ENDBR_POISON, "osp nopl (%rax)".
static const uint8_t ENDBR_POISON[] = { 0x66, 0x0f, 0x1f, 0x00 };
static const uint8_t NOP5[] = { 0x0f, 0x1f, 0x44, 0x00, 0x00 };

bool kp_x86_entry_branch(const uint8_t *code, size_t size, uint64_t addr, struct kp_branch *ret)
{
	size_t i = 0;
	if (size >= 4 && (!memcmp(code, ENDBR64, 4) || !memcmp(code, ENDBR_POISON, 4)))
		i = 4;
	if (size >= i + 5 && !memcmp(code + i, NOP5, 5))
		i += 5;
	const uint8_t *p = code + i;
	size_t n = size - i;
	struct kp_branch b = { .at = addr + i };
	if (n >= 5 && (p[0] == 0xe9 || p[0] == 0xe8)) {
		b.kind = p[0] == 0xe9 ? KP_BRANCH_JUMP : KP_BRANCH_CALL;
		b.target = b.at + 5 + (uint64_t)(int64_t)(int32_t)kp_le32(p + 1);
		b.insn = p[0] == 0xe9 ? "jmp rel32" : "call rel32";
	} else if (n >= 2 && p[0] == 0xeb) {
		b.kind = KP_BRANCH_JUMP;
		b.target = b.at + 2 + (uint64_t)(int64_t)(int8_t)p[1];
		b.insn = "jmp rel8";
	} else if (n >= 6 && p[0] == 0xff && p[1] == 0x25) {
		// jmp *disp32(%rip): through a pointer right after it, usually.
		b.kind = KP_BRANCH_JUMP;
		b.indirect = true;
		b.target = b.at + 6 + (uint64_t)(int64_t)(int32_t)kp_le32(p + 2);
		b.insn = "jmp *rip-relative";
	} else if (n >= 12 && (p[0] & 0xfe) == 0x48 && p[1] >= 0xb8 && p[1] <= 0xbf) {
		// movabs $imm64, %reg; jmp/call *%reg (REX.W [+REX.B] B8+r, then
		// [41] FF E0+r / FF D0+r): the 12/13-byte absolute hook.
		unsigned reg = (p[1] - 0xb8) | (p[0] & 1) << 3;
		const uint8_t *q = p + 10;
		size_t left = n - 10;
		bool rexb = left >= 3 && q[0] == 0x41;
		if (rexb) {
			q++;
			left--;
		}
		if (left < 2 || q[0] != 0xff || ((q[1] & 7) | (rexb ? 8u : 0u)) != reg ||
		    ((q[1] & 0xf8) != 0xe0 && (q[1] & 0xf8) != 0xd0))
			return false;
		b.kind = (q[1] & 0xf8) == 0xe0 ? KP_BRANCH_JUMP : KP_BRANCH_CALL;
		b.target = kp_le64(p + 2);
		b.insn = "movabs+jmp";
	} else if (n >= 6 && p[0] == 0x68 && p[5] == 0xc3) {
		// push $imm32 (sign-extended); ret
		b.kind = KP_BRANCH_JUMP;
		b.target = (uint64_t)(int64_t)(int32_t)kp_le32(p + 1);
		b.insn = "push+ret";
	} else if (n >= 1 && p[0] == 0xcc) {
		b.kind = KP_BRANCH_TRAP;
		b.insn = "int3";
	} else {
		return false;
	}
	*ret = b;
	return true;
}

// A 64-bit interrupt gate (Intel SDM vol. 3, 6.14.1; the kernel's struct
// gate_struct): offset 15:0 at 0, selector at 2, ist/type/dpl/P at 4..5
// (P is bit 15), offset 31:16 at 6, offset 63:32 at 8.
bool kp_x86_vector_handler(const uint8_t *gate, uint64_t *ret)
{
	if (!(kp_le16(gate + 4) & 0x8000))
		return false;
	*ret = (uint64_t)kp_le16(gate) | (uint64_t)kp_le16(gate + 6) << 16 |
	       (uint64_t)kp_le32(gate + 8) << 32;
	return true;
}
