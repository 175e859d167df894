// SPDX-License-Identifier: MIT
// arm64 facts for kpeek's integrity checks, the instructions an inline
// hook puts at a function's entry, and the addresses a function forms
// with ADRP (Arm ARM, A64 encodings).
#include "arch/arm64/arm64.h"
#include "io/memory.h"
#include "util/error.h"
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

// ADRP Xd, page: the 4 KiB page of pc + (immhi:immlo << 12).
static bool adrp(uint32_t insn, uint64_t at, unsigned *rd, uint64_t *page)
{
	if ((insn & 0x9f000000u) != 0x90000000u)
		return false;
	uint64_t imm = (uint64_t)(insn >> 5 & 0x7ffff) << 2 | (insn >> 29 & 3);
	*rd = insn & 0x1f;
	*page = (at & ~UINT64_C(0xfff)) + (sext(imm, 21) << 12);
	return true;
}

// ret, retaa, retab; b imm26 (a tail call).
static bool exits(uint32_t insn)
{
	return insn == 0xd65f03c0u || insn == 0xd65f0bffu || insn == 0xd65f0fffu ||
	       (insn & 0xfc000000u) == 0x14000000u;
}

void kp_arm64_data_refs(const uint8_t *code, size_t size, uint64_t addr, bool to_exit,
			void (*fn)(uint64_t target, void *arg), void *arg)
{
	// The addresses registers hold: an ADRP's page, or an address an ADD
	// formed from one (a variable, or a member of one: the compiler forms
	// a neighbour's address from it too). A call clobbers x0-x18 (AAPCS64).
	uint64_t val[32];
	uint32_t known = 0;
	for (size_t i = 0; i + 4 <= size; i += 4) {
		uint32_t insn = kp_le32(code + i);
		unsigned rd = insn & 0x1f, rn = insn >> 5 & 0x1f;
		uint64_t p;
		if (adrp(insn, addr + i, &rd, &p)) {
			val[rd] = p;
			known |= 1u << rd;
		} else if ((insn & 0xff800000u) == 0x91000000u && (known >> rn & 1)) {
			// add Xd, Xn, #imm12 {, lsl #12}
			uint64_t imm = insn >> 10 & 0xfff;
			val[rd] = val[rn] + (insn & 0x00400000u ? imm << 12 : imm);
			known |= 1u << rd;
			fn(val[rd], arg);
		} else if ((insn & 0xbfc00000u) == 0xb9400000u && (known >> rn & 1)) {
			// ldr Wt|Xt, [Xn, #imm12 * 4|8]
			fn(val[rn] + ((uint64_t)(insn >> 10 & 0xfff) << (insn >> 30 & 1 ? 3 : 2)), arg);
			known &= ~(1u << rd);
		} else if ((insn & 0xfc000000u) == 0x94000000u || (insn & 0xfffffc1fu) == 0xd63f0000u) {
			known &= ~UINT32_C(0x7ffff);	// bl, blr
		} else if (to_exit && exits(insn)) {
			return;
		}
	}
}

// The Image header (Documentation/arch/arm64/booting.rst) starts the image,
// at _text: its magic "ARM\x64" at offset 0x38, its image size at 0x10.
// _stext follows the head text, SEGMENT_ALIGNed (64 KiB, vmlinux.lds.S):
// looked for below it a page at a time, 2 MiB at most. Kernels that map
// the text from _stext only (6.1) and reuse the head's page have no header
// left: _text stays unknown there.
#define IMAGE_MAGIC 0x644d5241u
#define HEAD_MAX (2u << 20)

bool kp_arm64_text_start(struct kp_memory *mem, uint64_t stext, uint64_t *ret)
{
	uint8_t h[64];
	for (uint64_t off = 4096; off <= HEAD_MAX && off <= stext; off += 4096) {
		if (!kp_ok(kp_memory_read(mem, KP_VIRT, stext - off, h, sizeof(h))) ||
		    kp_le32(h + 0x38) != IMAGE_MAGIC || kp_le64(h + 0x10) <= off)
			continue;
		*ret = stext - off;
		return true;
	}
	return false;
}
