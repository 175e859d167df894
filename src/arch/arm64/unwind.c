// SPDX-License-Identifier: MIT
// arm64 stacks: the AAPCS64 frame records the kernel always keeps
// (CONFIG_FRAME_POINTER is forced on arm64): x29 points at {caller's x29,
// return address}, as arch/arm64/kernel/stacktrace.c follows them.
//
//   sleeping task   thread.cpu_context.{pc, fp, sp} saved by cpu_switch_to
//   end of stack    a zeroed record {0, 0} in the task's pt_regs: the final
//                   record (5.13+); 6.13+ adds a type after it
//                   (struct frame_record_meta): FINAL, or PT_REGS for an
//                   exception taken in the kernel, whose pt_regs hold the
//                   interrupted pc and x29
//   return address  signed with pointer authentication (8.3+, 5.7+): the
//                   PAC bits above the VA size are stripped as the kernel's
//                   ptrauth_strip_kernel_insn_pac() does.
//   entry from EL0  a CPU caught in the exception vectors or an el0* entry
//                   handler before kernel_entry saved the user's registers:
//                   x29 is still the user's, the kernel stack holds nothing
//                   yet, the stack ends "entered from user mode".
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "arch/arm64/arm64.h"
#include "arch/unwind.h"
#include "io/memory.h"
#include "symbols/symtab.h"
#include "util/error.h"

#define META_FINAL 1	// FRAME_META_TYPE_FINAL
#define META_PT_REGS 2	// FRAME_META_TYPE_PT_REGS
#define PT_NREGS 34	// regs[31], sp, pc, pstate (kp_arm64_reg_names)
#define PSR_MODE_MASK 0xf	// PSR_MODE_EL0t is 0
#define VECTORS_SIZE 0x800	// 16 entries of 0x80 bytes (arch/arm64/kernel/entry.S)
#define VECTORS_LOWER_EL 0x400	// the last 8 entries: exceptions from EL0

struct kp_unwinder {
	struct kp_unwind_env env;
	uint64_t kernel_bits;		// set in every kernel address: ~0 << VA bits
	uint64_t ctx_pc, ctx_fp, ctx_sp;	// task_struct.thread.cpu_context.*
	bool has_meta;			// 6.13+: pt_regs.stackframe.type
	uint64_t meta_type;		// offset of type in struct pt_regs
	uint64_t stackframe;		// offset of stackframe in struct pt_regs
	uint64_t pt_regs, pt_sp, pt_pc, pt_pstate;	// offsets in struct pt_regs
};

static bool member(struct kp_unwinder *u, const char *type, const char *m, uint64_t *off)
{
	return u->env.member(u->env.arg, type, m, off, NULL);
}

struct kp_error *kp_arm64_unwinder_new(unsigned va_bits, const struct kp_unwind_env *env,
				       struct kp_unwinder **ret)
{
	if (va_bits < 36 || va_bits > 52)
		return kp_error_create(KP_ERR_INVALID, "arm64: VA size %u", va_bits);
	struct kp_unwinder *u = calloc(1, sizeof(*u));
	if (!u)
		return &kp_enomem;
	u->env = *env;
	u->kernel_bits = ~0ULL << va_bits;
	static const char ts[] = "struct task_struct", pt[] = "struct pt_regs";
	if (!member(u, ts, "thread.cpu_context.pc", &u->ctx_pc) ||
	    !member(u, ts, "thread.cpu_context.fp", &u->ctx_fp) ||
	    !member(u, ts, "thread.cpu_context.sp", &u->ctx_sp) ||
	    !member(u, pt, "regs", &u->pt_regs) || !member(u, pt, "sp", &u->pt_sp) ||
	    !member(u, pt, "pc", &u->pt_pc) || !member(u, pt, "pstate", &u->pt_pstate) ||
	    !member(u, pt, "stackframe", &u->stackframe)) {
		free(u);
		return kp_error_create(KP_ERR_NOT_FOUND, "BTF lacks task_struct.thread.cpu_context or struct pt_regs");
	}
	u->has_meta = member(u, pt, "stackframe.type", &u->meta_type);
	*ret = u;
	return NULL;
}

void kp_arm64_unwinder_destroy(struct kp_unwinder *u)
{
	free(u);
}

static struct kp_error *read_u64(struct kp_unwinder *u, uint64_t addr, uint64_t *ret)
{
	struct kp_error *err = kp_memory_read(u->env.mem, KP_VIRT, addr, ret, 8);
	return err ? kp_error_prefix(err, "stack") : NULL;
}

static uint64_t strip_pac(const struct kp_unwinder *u, uint64_t pc)
{
	// Bit 55 selects the kernel's half; its addresses have every bit above
	// the VA size set, where the PAC was.
	return pc >> 55 & 1 ? pc | u->kernel_bits : pc;
}

struct kp_error *kp_arm64_unwind_sleeping(struct kp_unwinder *u, uint64_t task,
					  struct kp_unwind_frame *ret)
{
	uint64_t pc, fp, sp;
	struct kp_error *err;
	if ((err = read_u64(u, task + u->ctx_pc, &pc)) || (err = read_u64(u, task + u->ctx_fp, &fp)) ||
	    (err = read_u64(u, task + u->ctx_sp, &sp)))
		return kp_error_prefix(err, "task 0x%" PRIx64 ": saved context", task);
	memset(ret, 0, sizeof(*ret));
	ret->pc = strip_pac(u, pc);
	ret->fp = fp;
	ret->sp = sp;
	return NULL;
}

// The exception frame whose stackframe record is at record (6.13+).
static struct kp_error *regs_frame(struct kp_unwinder *u, uint64_t record,
				   struct kp_unwind_frame *f)
{
	uint64_t at = record - u->stackframe;
	uint8_t buf[PT_NREGS * 8];
	struct kp_error *err = kp_memory_read(u->env.mem, KP_VIRT, at + u->pt_regs, buf, 31 * 8);
	if (err)
		return kp_error_prefix(err, "exception frame");
	struct kp_unwind_frame n;
	memset(&n, 0, sizeof(n));
	n.regs.nregs = PT_NREGS;
	memcpy(n.regs.r, buf, 31 * 8);
	if ((err = read_u64(u, at + u->pt_sp, &n.regs.r[31])) ||
	    (err = read_u64(u, at + u->pt_pc, &n.regs.r[32])) ||
	    (err = read_u64(u, at + u->pt_pstate, &n.regs.r[33])))
		return err;
	n.pc = n.regs.pc = n.regs.r[32];
	n.sp = n.regs.sp = n.regs.r[31];
	n.fp = n.regs.fp = n.regs.r[29];
	n.exact = true;
	n.regs_at = at;
	n.have_regs = n.regs_full = true;
	n.user = (n.regs.r[33] & PSR_MODE_MASK) == 0;
	*f = n;
	return NULL;
}

// Whether a CPU's own registers (not an exception frame's) show it entering
// the kernel from EL0 before kernel_entry saved the user's registers and
// pointed x29 at the task's final frame record: x29 still holds a user
// address, and the pc is in the lower-EL half of an exception vector table
// (vectors; the Spectre-BHB copies in __bp_harden_el1_vectors, 5.17+; the
// KPTI trampoline's tramp_vectors) or in an el0* entry handler of entry.S
// (el0_sync/el0_irq up to 5.12, el0t_64_sync/el0t_64_irq/... 5.13+), or
// leaving for EL0 in ret_to_user after kernel_exit restored the user's x29.
// Only such a frame is let go of: x29 outside the kernel anywhere else is a
// corrupt stack.
static bool entering_from_user(struct kp_unwinder *u, const struct kp_unwind_frame *f)
{
	if (!f->exact || f->regs_at || !f->fp || (f->fp & u->kernel_bits) == u->kernel_bits)
		return false;
	struct kp_symbol s;
	struct kp_error *err = kp_symtab_by_address(u->env.st, f->pc, &s);
	if (err) {
		kp_error_destroy(err);
		return false;
	}
	if (!s.module && (!strcmp(s.name, "vectors") || !strcmp(s.name, "__bp_harden_el1_vectors") ||
			  !strcmp(s.name, "tramp_vectors")))
		return (f->pc - s.address) % VECTORS_SIZE >= VECTORS_LOWER_EL;
	return !s.module && (!strncmp(s.name, "el0", 3) || !strcmp(s.name, "ret_to_user"));
}

struct kp_error *kp_arm64_unwind_step(struct kp_unwinder *u, struct kp_unwind_frame *f,
				      const char **end_ret)
{
	*end_ret = NULL;
	if (f->user || entering_from_user(u, f)) {
		*end_ret = KP_UNWIND_USER;
		return NULL;
	}
	uint64_t fp = f->fp, rec[2];
	if (!fp) {
		*end_ret = KP_UNWIND_END;
		return NULL;
	}
	if (fp & 7)
		return kp_error_create(KP_ERR_FORMAT, "corrupt stack at pc 0x%" PRIx64
				       ": frame pointer 0x%" PRIx64 " not aligned", f->pc, fp);
	struct kp_error *err = kp_memory_read(u->env.mem, KP_VIRT, fp, rec, sizeof(rec));
	if (err)
		return kp_error_prefix(err, "stack");
	if (!rec[0] && !rec[1]) {
		if (!u->has_meta) {
			*end_ret = KP_UNWIND_END;	// the final record
			return NULL;
		}
		uint64_t type;
		if ((err = read_u64(u, fp - u->stackframe + u->meta_type, &type)))
			return err;
		if (type == META_FINAL) {
			*end_ret = KP_UNWIND_END;
			return NULL;
		}
		if (type != META_PT_REGS)
			return kp_error_create(KP_ERR_FORMAT, "corrupt stack at pc 0x%" PRIx64
					       ": frame record at 0x%" PRIx64 " of unknown type %" PRIu64,
					       f->pc, fp, type);
		return regs_frame(u, fp, f);
	}
	struct kp_unwind_frame n;
	memset(&n, 0, sizeof(n));
	n.pc = strip_pac(u, rec[1]);
	n.fp = rec[0];
	n.sp = fp + sizeof(rec);	// the caller's frame is above the record
	n.guess = f->guess;
	*f = n;
	return NULL;
}
