// SPDX-License-Identifier: MIT
// mkstack: a kernel stack to unwind, in one memory image at MKSTACK_BASE
// (MKSTACK_SIZE bytes): a sleeping task whose stack goes through func_a (a
// CALL frame with an sp offset), func_b (a frame-pointer frame) and the
// system-call entry's pt_regs (or, thread, a kernel thread's function whose
// ORC entry ends the stack), with x86-64 ORC tables in one of the four
// formats (1: 5.10-6.2, 2: 6.3, 3: 6.4-7.0, 4: 7.1+). For the ORC unit
// tests and the unwinder's fuzz seeds.
#ifndef MKSTACK_H
#define MKSTACK_H

#include <stdbool.h>
#include <stdint.h>

struct kp_symtab;

#define MKSTACK_BASE 0xffffffff81000000ULL
#define MKSTACK_SIZE 0x10000u
#define MKSTACK_FUNC_A (MKSTACK_BASE + 0x100)
#define MKSTACK_FUNC_B (MKSTACK_BASE + 0x200)
#define MKSTACK_ENTRY (MKSTACK_BASE + 0x300)
#define MKSTACK_THREAD_FN (MKSTACK_BASE + 0x400)	// ORC: end of stack
#define MKSTACK_HOLE (MKSTACK_BASE + 0x440)	// ORC: undefined
#define MKSTACK_ORC_HEADER (MKSTACK_BASE + 0x1200)
#define MKSTACK_TASK (MKSTACK_BASE + 0x2000)
#define MKSTACK_THREAD_SP 0x100		// task_struct.thread.sp
#define MKSTACK_FRAME_BP 0x28		// inactive_task_frame.bp
#define MKSTACK_FRAME_RET 0x30		// inactive_task_frame.ret_addr (last)
#define MKSTACK_SP (MKSTACK_BASE + 0x8000)	// the task's thread.sp
#define MKSTACK_FP (MKSTACK_BASE + 0x8050)	// func_b's frame pointer
#define MKSTACK_REGS (MKSTACK_FP + 16)		// the entry's pt_regs
#define MKSTACK_USER_PC 0x7fff1234ULL
#define MKSTACK_USER_SP 0x7ffe0000ULL
#define MKSTACK_SAVED_BP 0x1111ULL		// func_b's caller's bp

// Fills buf (MKSTACK_SIZE bytes, zeroed first): tables, header (if
// header), task and stack.
void mkstack_image(uint8_t *buf, int version, bool header, bool thread);
// Adds the functions and the ORC table symbols (and the header's if header).
void mkstack_symbols(struct kp_symtab *st, bool header);
// struct member offsets of the scene (kp_unwind_env.member).
bool mkstack_member(void *arg, const char *type, const char *member, uint64_t *off,
		    uint64_t *size);

#endif
