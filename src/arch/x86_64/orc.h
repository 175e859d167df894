// SPDX-License-Identifier: MIT
// The ORC unwinder's state and entries, shared by orc.c (the tables: their
// format version, lookups, module tables) and orc_unwind.c (the unwinding
// rules). Everything else goes through kp_x86_unwind_* (x86_64.h).
#ifndef KP_ARCH_X86_64_ORC_H
#define KP_ARCH_X86_64_ORC_H

#include "arch/unwind.h"
#include "io/memory.h"

#define MODULE_CACHE 8

enum orc_type { T_UNDEFINED, T_END, T_CALL, T_REGS, T_REGS_PARTIAL };
enum orc_reg {
	R_UNDEFINED, R_PREV_SP, R_SP, R_BP, R_SP_INDIRECT, R_BP_INDIRECT,
	R_AX, R_DX, R_DI, R_R10, R_R13, R_BAD,
};

struct orc {
	int16_t sp_offset, bp_offset;
	enum orc_reg sp_reg, bp_reg;
	enum orc_type type;
	bool signal;
	uint64_t ip;		// where the entry starts (search()); 0 if made up
};

// One ORC table: vmlinux's or a module's.
struct table {
	uint64_t ip, entries;	// addresses of the two arrays
	uint32_t n;
};

// struct pt_regs members, in kp_regs order (orc.c's pt_regs_members).
#define NPTREGS 21
enum { PT_BP = 4, PT_R10 = 7, PT_AX = 10, PT_CX = 11, PT_DX = 12, PT_DI = 14, PT_IP = 16, PT_CS = 17,
       PT_SP = 19, PT_R13 = 2 };

struct kp_unwinder {
	struct kp_unwind_env env;
	int version;
	struct table core;
	bool has_lookup;
	uint64_t stext, etext, lookup;
	uint32_t lookup_blocks;
	// Layouts from BTF.
	uint64_t thread_sp;		// task_struct.thread.sp
	uint64_t frame_bp, frame_ret, frame_size;	// struct inactive_task_frame
	uint64_t pt_off[NPTREGS], pt_size;
	uint64_t mod_ip, mod_orc, mod_num;	// struct module.arch.*
	bool has_mod_orc;
	uint64_t ret_from_fork[2];	// ret_from_fork_asm (6.6+), ret_from_fork
	struct {
		uint64_t module;
		struct table t;
	} mods[MODULE_CACHE];
	unsigned next_mod;
};

static inline struct kp_error *kp_orc_read(struct kp_unwinder *u, uint64_t addr, void *buf,
					   size_t n)
{
	return kp_memory_read(u->env.mem, KP_VIRT, addr, buf, n);
}

// The entry for ip (the kernel's orc_find()): vmlinux's table through
// orc_lookup, its whole table for init text, or the table of the module
// ip is in; *found_ret false when no table covers ip.
struct kp_error *kp_orc_find(struct kp_unwinder *u, uint64_t ip, struct orc *ret,
			     bool *found_ret);

#endif
