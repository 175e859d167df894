// SPDX-License-Identifier: MIT
// Stack unwinding: what an architecture's unwinder (kp_arch.unwind_*) is
// given and what one step of it computes. The Linux layer (linux/stack.c)
// chooses where a stack starts (a CPU's registers, a task switched out by
// the scheduler), runs the steps and bounds them; the architecture knows how
// its kernel lays out frames (x86-64: ORC tables read from memory; arm64:
// frame records).
#ifndef KP_ARCH_UNWIND_H
#define KP_ARCH_UNWIND_H

#include "arch/arch.h"

struct kp_symtab;
struct kp_unwinder;	// an architecture's unwinder for one kernel

// What the unwinder may ask of the kernel beyond its memory and symbols.
struct kp_unwind_env {
	struct kp_memory *mem;
	struct kp_symtab *st;
	const char *release;	// "6.1.0-57-amd64", "" if unknown
	void *arg;
	// Byte offset (and size, may be NULL) of a member designator of a
	// struct, from BTF; false if unknown.
	bool (*member)(void *arg, const char *type, const char *member, uint64_t *off,
		       uint64_t *size);
	// The struct module * whose memory holds address; false if none.
	bool (*module_at)(void *arg, uint64_t address, uint64_t *ret);
};

// One frame during unwinding. regs are the registers known in this frame:
// all of them at a CPU's registers or an exception frame's full pt_regs
// (regs_full), some of them (have_regs) after a partial exception frame.
struct kp_unwind_frame {
	uint64_t pc, sp, fp;
	bool exact;		// pc is where the CPU was, not a return address
	bool guess;		// found by a fallback (frame pointers): not reliable
	uint64_t regs_at;	// address of the exception frame this frame comes from, 0 if none
	bool have_regs, regs_full;
	bool user;		// the exception frame is the entry from user mode: the end
	struct kp_regs regs;
};

// Where kernel stacks start and end, for kp_arch.unwind_*: reasons are
// static strings.
#define KP_UNWIND_END "end of the stack"
#define KP_UNWIND_USER "entered from user mode"

#endif
