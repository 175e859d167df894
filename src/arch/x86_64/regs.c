// SPDX-License-Identifier: MIT
// x86-64 CPU notes: the registers of NT_PRSTATUS and QEMU's CPU state note.
#include <string.h>

#include "arch/x86_64/x86_64.h"
#include "util/le.h"

// struct elf_prstatus (include/uapi/linux/elfcore.h, unchanged since 2.6):
// pr_reg, a struct user_regs_struct of 27 u64, starts at byte 112.
#define PRSTATUS_NREGS 27
enum { REG_RBP = 4, REG_RIP = 16, REG_RSP = 19 };

// struct user_regs_struct (arch/x86/include/uapi/asm/ptrace.h).
const char *const kp_x86_reg_names[] = {
	"r15", "r14", "r13", "r12", "rbp", "rbx", "r11", "r10", "r9", "r8", "rax", "rcx",
	"rdx", "rsi", "rdi", "orig_rax", "rip", "cs", "eflags", "rsp", "ss", "fs_base",
	"gs_base", "ds", "es", "fs", "gs", NULL,
};

bool kp_x86_prstatus_regs(const uint8_t *desc, size_t len, struct kp_regs *ret)
{
	return kp_prstatus_regs(desc, len, PRSTATUS_NREGS, REG_RIP, REG_RSP, REG_RBP, ret);
}

// QEMUCPUState (QEMU target/i386/arch_dump.c, version 1): u32 version, u32
// size, 16 GPRs, rip, rflags, then ten segments {u32 selector, limit, flags,
// pad; u64 base} in the order cs ds es fs gs ss ldt tr gdt idt, then cr[5];
// kernel_gs_base was appended later (QEMU 5.0), so 'size' tells which.
#define QEMU_SEG_OFFSET(i) (152 + 24 * (i))
enum { QSEG_GS = 4, QSEG_GDT = 8, QSEG_IDT = 9 };
#define QEMU_CR_OFFSET 392
#define QEMU_KERNEL_GS_BASE_OFFSET 432
#define QEMU_MIN_SIZE QEMU_KERNEL_GS_BASE_OFFSET

bool kp_x86_qemu_cpu(const struct kp_cpu_notes *n, struct x86_cpu *ret)
{
	const uint8_t *d = n->qemu;
	size_t len = n->qemu_len;
	uint32_t size = d && len >= 8 ? kp_le32(d + 4) : 0;
	if (size < QEMU_MIN_SIZE || size > len)
		return false;
	memset(ret, 0, sizeof(*ret));
	ret->cr0 = kp_le64(d + QEMU_CR_OFFSET);
	ret->cr3 = kp_le64(d + QEMU_CR_OFFSET + 3 * 8);
	ret->cr4 = kp_le64(d + QEMU_CR_OFFSET + 4 * 8);
	ret->idt_base = kp_le64(d + QEMU_SEG_OFFSET(QSEG_IDT) + 16);
	ret->idt_limit = kp_le32(d + QEMU_SEG_OFFSET(QSEG_IDT) + 4);
	ret->gdt_base = kp_le64(d + QEMU_SEG_OFFSET(QSEG_GDT) + 16);
	ret->gs_base = kp_le64(d + QEMU_SEG_OFFSET(QSEG_GS) + 16);
	if (size >= QEMU_KERNEL_GS_BASE_OFFSET + 8)
		ret->kernel_gs_base = kp_le64(d + QEMU_KERNEL_GS_BASE_OFFSET);
	return true;
}
