// SPDX-License-Identifier: MIT
// x86-64 facts for kpeek's integrity checks: the instructions an inline
// hook puts at a function's entry, interrupt gates, and the variables a
// function's code refers to.
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
// Later kernels poison it as "nopl -42(%rax)" (seen on Debian's 7.2).
static const uint8_t ENDBR_POISON2[] = { 0x0f, 0x1f, 0x40, 0xd6 };

static bool endbr(const uint8_t *code, size_t size)
{
	return size >= 4 && (!memcmp(code, ENDBR64, 4) || !memcmp(code, ENDBR_POISON, 4) ||
			     !memcmp(code, ENDBR_POISON2, 4));
}

static const uint8_t NOP5[] = { 0x0f, 0x1f, 0x44, 0x00, 0x00 };

bool kp_x86_entry_branch(const uint8_t *code, size_t size, uint64_t addr, struct kp_branch *ret)
{
	size_t i = endbr(code, size) ? 4 : 0;
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

// ---------------------------------------------------------------- data references

// Immediate bytes after the ModRM operand of the one-byte opcodes
// data_refs knows (-1: not one of them): the ALU, mov, lea, test and imul
// forms compilers use on a variable.
static int imm_size(uint8_t op)
{
	switch (op) {
	case 0x01: case 0x03: case 0x09: case 0x0b: case 0x21: case 0x23: case 0x29: case 0x2b:
	case 0x31: case 0x33: case 0x39: case 0x3b: case 0x63: case 0x84: case 0x85: case 0x88:
	case 0x89: case 0x8a: case 0x8b: case 0x8d:
		return 0;
	case 0x6b: case 0x80: case 0x83: case 0xc6:
		return 1;
	case 0x69: case 0x81: case 0xc7:
		return 4;
	default:
		return -1;
	}
}

// The kernel is linked at -2 GiB (-mcmodel=kernel): its code also names
// variables by 32-bit absolute addresses, sign-extended.
#define KERNEL_IMAGE_MIN 0xffffffff80000000ULL

static uint64_t abs32(const uint8_t *p)
{
	uint64_t a = (uint64_t)(int64_t)(int32_t)kp_le32(p);
	return a >= KERNEL_IMAGE_MIN ? a : 0;
}

// The instruction at code[i] (a REX prefix, a known opcode or 0f b6/b7/be/bf,
// a ModRM operand), code at vaddr addr: its length in *len and in *target
// the address it forms (0 if none): a RIP-relative operand (mod 00, r/m
// 101), a SIB operand without base or a 32-bit displacement that is a
// kernel address (an array indexed from its absolute address: the syscall
// table before 6.9, taint_flags[i].c_true), or the sign-extended immediate
// of a mov or compare (mov $irq_desc_tree, %rdi; cmp $chained_action,
// 8(%rbx)). False if it is not such an instruction.
static bool modrm_insn(const uint8_t *code, size_t size, size_t i, uint64_t addr, size_t *len,
		       uint64_t *target)
{
	size_t p = i;
	if (p < size && (code[p] & 0xf0) == 0x40)
		p++;	// REX
	int imm;
	uint8_t op = 0;
	if (p + 1 < size && code[p] == 0x0f && (code[p + 1] & 0xf6) == 0xb6) {
		p += 2;	// movzx, movsx
		imm = 0;
	} else if (p < size && (imm = imm_size(code[p])) >= 0) {
		op = code[p++];
	} else {
		return false;
	}
	if (p >= size)
		return false;
	uint8_t modrm = code[p++], mod = modrm >> 6, rm = modrm & 7;
	size_t disp = mod == 1 ? 1 : mod == 2 ? 4 : 0;
	*target = 0;
	if (mod != 3 && rm == 4) {	// SIB
		if (p >= size)
			return false;
		bool no_base = mod == 0 && (code[p] & 7) == 5;
		p++;
		if (no_base) {
			disp = 4;
			if (p + 4 <= size)
				*target = abs32(code + p);
		}
	} else if (mod == 0 && rm == 5) {
		disp = 4;
		if (p + 4 <= size)
			*target = addr + (p + 4 + (size_t)imm) + (uint64_t)(int64_t)(int32_t)kp_le32(code + p);
	}
	if (mod == 2 && p + 4 <= size)
		*target = abs32(code + p);	// an array at an absolute address, indexed
	*len = p + disp + (size_t)imm - i;
	if (i + *len > size)
		return false;
	if (!*target && (op == 0xc7 || op == 0x81))
		*target = abs32(code + p + disp);
	return true;
}

// 0x66 prefixes and a nop: the K8 nops alternatives patch the fentry call
// into on CPUs without the 0f 1f form (5.10 under QEMU: 66 66 66 66 90);
// 0 if code does not start with one.
static size_t nop66(const uint8_t *code, size_t size)
{
	size_t n = 0;
	while (n < size && n < 8 && code[n] == 0x66)
		n++;
	return n < size && code[n] == 0x90 ? n + 1 : 0;
}

// Small functions (to_exit) are decoded in order from their entry: endbr64,
// the fentry nop or call, nops (0x66-prefixed ones too), pushes and pops,
// mov reg, imm32 and the ModRM forms above, until ret or a jmp (a tail call
// or the return thunk); anything else ends the walk. Otherwise every byte
// is tried as the start of one of the ModRM forms (instruction boundaries
// are not decoded): the caller validates what the targets point at.
void kp_x86_data_refs(const uint8_t *code, size_t size, uint64_t addr, bool to_exit,
		      void (*fn)(uint64_t target, void *arg), void *arg)
{
	size_t len;
	uint64_t target;
	if (!to_exit) {
		for (size_t i = 0; i < size; i++)
			if (modrm_insn(code, size, i, addr, &len, &target) && target)
				fn(target, arg);
		return;
	}
	size_t i = endbr(code, size) ? 4 : 0;
	while (i < size) {
		uint8_t op = code[i];
		if (op == 0xc3 || op == 0xe9 || op == 0xeb)
			return;
		if (i + 5 <= size && (!memcmp(code + i, NOP5, 5) || op == 0xe8))
			len = 5;
		else if (op == 0x90 || (op & 0xf0) == 0x50)
			len = 1;
		else if ((op & 0xf0) == 0x40 && i + 1 < size && (code[i + 1] & 0xf0) == 0x50)
			len = 2;	// push/pop r8-r15
		else if (op == 0x66 && (len = nop66(code + i, size - i)))
			;
		else if ((op & 0xf8) == 0xb8)
			len = 5;
		else if (!modrm_insn(code, size, i, addr, &len, &target))
			return;
		else if (target)
			fn(target, arg);
		i += len;
	}
}
