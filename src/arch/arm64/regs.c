// SPDX-License-Identifier: MIT
// arm64 CPU notes: the registers of NT_PRSTATUS.
#include <string.h>

#include "arch/arm64/arm64.h"
#include "util/le.h"

// struct elf_prstatus (include/uapi/linux/elfcore.h): pr_reg, here struct
// user_pt_regs (arch/arm64/include/uapi/asm/ptrace.h: regs[31], sp, pc,
// pstate), starts at byte 112.
#define PRSTATUS_NREGS 34
enum { REG_FP = 29, REG_SP = 31, REG_PC = 32 };

const char *const kp_arm64_reg_names[] = {
	"x0", "x1", "x2", "x3", "x4", "x5", "x6", "x7", "x8", "x9", "x10", "x11", "x12",
	"x13", "x14", "x15", "x16", "x17", "x18", "x19", "x20", "x21", "x22", "x23", "x24",
	"x25", "x26", "x27", "x28", "x29", "x30", "sp", "pc", "pstate", NULL,
};

bool kp_arm64_prstatus_regs(const uint8_t *desc, size_t len, struct kp_regs *ret)
{
	return kp_prstatus_regs(desc, len, PRSTATUS_NREGS, REG_PC, REG_SP, REG_FP, ret);
}
