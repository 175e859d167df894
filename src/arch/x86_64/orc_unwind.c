// SPDX-License-Identifier: MIT
// x86-64 stack unwinding with ORC: the rules of arch/x86/kernel/unwind_orc.c
// applied to one frame at a time. An ORC entry (orc.c finds it) says where
// the caller's stack pointer is (a register plus an offset, loaded through
// memory for the INDIRECT registers), what kind of frame this is (a call:
// the return address is just below that stack pointer; a full pt_regs of
// an exception or interrupt; or only the hardware's iret frame), and where
// the caller's frame pointer was saved.
#include <inttypes.h>
#include <string.h>

#include "arch/x86_64/orc.h"
#include "arch/x86_64/x86_64.h"
#include "symbols/symtab.h"
#include "util/error.h"

static struct kp_error *read_u64(struct kp_unwinder *u, uint64_t addr, uint64_t *ret)
{
	struct kp_error *err = kp_orc_read(u, addr, ret, 8);
	return err ? kp_error_prefix(err, "stack") : NULL;
}

// A register of the frame: from the full pt_regs, or the last full ones
// before a partial frame (get_reg() of unwind_orc.c).
static bool get_reg(const struct kp_unwind_frame *f, unsigned i, uint64_t *ret)
{
	if (!f->have_regs || i >= f->regs.nregs)
		return false;
	*ret = f->regs.r[i];
	return true;
}

static struct kp_error *corrupt(uint64_t pc, const char *what)
{
	return kp_error_create(KP_ERR_FORMAT, "corrupt stack at pc 0x%" PRIx64 ": %s", pc, what);
}

static struct kp_error *read_pt_regs(struct kp_unwinder *u, uint64_t at, struct kp_regs *r)
{
	uint8_t buf[512];
	if (u->pt_size > sizeof(buf))
		return kp_error_create(KP_ERR_UNSUPPORTED, "struct pt_regs of %" PRIu64 " bytes", u->pt_size);
	struct kp_error *err = kp_orc_read(u, at, buf, u->pt_size);
	if (err)
		return kp_error_prefix(err, "exception frame");
	memset(r, 0, sizeof(*r));
	r->nregs = NPTREGS;
	for (size_t i = 0; i < NPTREGS; i++)
		memcpy(&r->r[i], buf + u->pt_off[i], 8);
	r->pc = r->r[PT_IP];
	r->sp = r->r[PT_SP];
	r->fp = r->r[PT_BP];
	return NULL;
}

// A CPU's saved registers can hold a pc in a function objtool left without
// ORC: __crash_kexec() is STACK_FRAME_NON_STANDARD (its crash_setup_regs()
// takes the address of a label, _THIS_IP_), and it is where kdump saves the
// registers of the CPU that panicked. Its caller is then the first word
// above sp that is the return address of a direct call (e8 rel32) whose
// target lies in the same ORC-less stretch of text as pc ([undef->ip, pc]),
// and whose own ORC is defined. At most SCAN_WORDS words are read.
#define SCAN_WORDS 1024
static bool caller_of_orcless(struct kp_unwinder *u, const struct kp_unwind_frame *f,
			      const struct orc *undef, struct kp_unwind_frame *ret)
{
	if (!f->exact || !f->have_regs || !undef->ip)
		return false;
	for (uint64_t i = 0; i < SCAN_WORDS; i++) {
		uint64_t slot = f->sp + 8 * i, r;
		uint8_t call[5];
		if (!kp_ok(read_u64(u, slot, &r)) || r < 5 ||
		    !kp_ok(kp_orc_read(u, r - 5, call, sizeof(call))) || call[0] != 0xe8)
			continue;
		int32_t rel = (int32_t)((uint32_t)call[1] | (uint32_t)call[2] << 8 |
					(uint32_t)call[3] << 16 | (uint32_t)call[4] << 24);
		uint64_t target = r + (int64_t)rel;
		struct orc o;
		bool found;
		if (target < undef->ip || target > f->pc || !kp_ok(kp_orc_find(u, r - 1, &o, &found)) ||
		    !found || o.type == T_UNDEFINED || o.type == T_END)
			continue;
		*ret = *f;
		ret->pc = r;
		ret->sp = slot + 8;
		ret->regs_at = 0;
		ret->have_regs = ret->regs_full = false;
		ret->exact = false;
		return true;
	}
	return false;
}

// The caller's stack pointer (the CFA): sp_reg + sp_offset, loaded
// through memory for the INDIRECT registers.
static struct kp_error *caller_sp(struct kp_unwinder *u, const struct kp_unwind_frame *f,
				  const struct orc *o, uint64_t *ret)
{
	uint64_t sp, v;
	bool indirect = false;
	unsigned reg = 0;
	struct kp_error *err;
	switch (o->sp_reg) {
	case R_SP:
		sp = f->sp + o->sp_offset;
		break;
	case R_BP:
		sp = f->fp + o->sp_offset;
		break;
	case R_SP_INDIRECT:
		// 5.12+ (87ccc826bf1c): the offset applies after the load;
		// older kernels emit no SP_INDIRECT (none in 5.10's tables).
		sp = f->sp;
		indirect = true;
		break;
	case R_BP_INDIRECT:
		sp = f->fp + o->sp_offset;
		indirect = true;
		break;
	case R_AX: reg = PT_AX; goto from_regs;
	case R_DX: reg = PT_DX; goto from_regs;
	case R_DI: reg = PT_DI; goto from_regs;
	case R_R10: reg = PT_R10; goto from_regs;
	case R_R13: reg = PT_R13;
	from_regs:
		if (!get_reg(f, reg, &sp))
			return corrupt(f->pc, "ORC needs a register that no exception frame saved");
		break;
	default:
		return corrupt(f->pc, "bad ORC stack register");
	}
	if (indirect) {
		if ((err = read_u64(u, sp, &v)))
			return err;
		sp = o->sp_reg == R_SP_INDIRECT ? v + o->sp_offset : v;
	}
	*ret = sp;
	return NULL;
}

// A REGS_PARTIAL frame: only the hardware's iret frame (ip, cs, flags, sp,
// ss) is at sp; the other registers are the last full ones, if any.
static struct kp_error *iret_frame(struct kp_unwinder *u, const struct kp_unwind_frame *f,
				   uint64_t sp, struct kp_unwind_frame *n)
{
	uint64_t base = sp - u->pt_off[PT_IP];
	uint64_t ip, cs, rsp;
	struct kp_error *err;
	if ((err = read_u64(u, base + u->pt_off[PT_IP], &ip)) ||
	    (err = read_u64(u, base + u->pt_off[PT_CS], &cs)) ||
	    (err = read_u64(u, base + u->pt_off[PT_SP], &rsp)))
		return err;
	if (!f->regs_full) {
		memset(&n->regs, 0, sizeof(n->regs));
		n->regs.nregs = NPTREGS;
		n->have_regs = false;
	}
	n->regs.r[PT_IP] = ip;
	n->regs.r[PT_CS] = cs;
	n->regs.r[PT_SP] = rsp;
	n->regs.pc = n->pc = ip;
	n->regs.sp = n->sp = rsp;
	n->regs_at = base;
	n->regs_full = false;
	n->exact = true;
	return NULL;
}

// The caller's pc, sp and registers by the entry's type: a return address
// just below sp (CALL), a full pt_regs at sp (REGS), or an iret frame.
static struct kp_error *caller_frame(struct kp_unwinder *u, const struct kp_unwind_frame *f,
				     const struct orc *o, uint64_t sp, struct kp_unwind_frame *n)
{
	struct kp_error *err;
	switch (o->type) {
	case T_CALL:
		if ((err = read_u64(u, sp - 8, &n->pc)))
			return err;
		n->sp = sp;
		n->regs_at = 0;
		n->have_regs = n->regs_full = false;
		n->exact = false;
		return NULL;
	case T_REGS:
		if ((err = read_pt_regs(u, sp, &n->regs)))
			return err;
		n->pc = n->regs.pc;
		n->sp = n->regs.sp;
		n->regs_at = sp;
		n->have_regs = n->regs_full = true;
		n->exact = true;
		return NULL;
	case T_REGS_PARTIAL:
		return iret_frame(u, f, sp, n);
	default:
		return corrupt(f->pc, "bad ORC frame type");
	}
}

// The caller's frame pointer: kept (from the registers of an exception
// frame, if any), or loaded from where the entry says it was saved.
static struct kp_error *caller_fp(struct kp_unwinder *u, const struct kp_unwind_frame *f,
				  const struct orc *o, uint64_t sp, struct kp_unwind_frame *n)
{
	uint64_t v;
	switch (o->bp_reg) {
	case R_UNDEFINED:
		if (get_reg(n, PT_BP, &v))
			n->fp = v;
		return NULL;
	case R_PREV_SP:
		return read_u64(u, sp + o->bp_offset, &n->fp);
	case R_BP:
		return read_u64(u, f->fp + o->bp_offset, &n->fp);
	default:
		return corrupt(f->pc, "bad ORC frame-pointer register");
	}
}

// A CPU caught in entry_SYSCALL_64 before it switched to the kernel stack
// (swapgs up to the movq of top_of_stack into %rsp, which
// entry_SYSCALL_64_safe_stack follows, 5.10-7.2): its %rsp is still the
// user's and %rcx the user's %rip (SYSCALL saved it there), where ORC only
// says the stack ends (UNWIND_HINT_ENTRY). The user frame an entry from
// user mode gives, made of those two.
static bool syscall_before_switch(struct kp_unwinder *u, const struct kp_unwind_frame *f,
				  struct kp_unwind_frame *ret)
{
	struct kp_symbol entry, safe;
	if (!f->exact || !f->have_regs || !f->regs_full || f->regs_at ||
	    !kp_symtab_find(u->env.st, "entry_SYSCALL_64", &entry) ||
	    !kp_symtab_find(u->env.st, "entry_SYSCALL_64_safe_stack", &safe) ||
	    f->pc < entry.address || f->pc >= safe.address || safe.address - entry.address > 0x100)
		return false;
	*ret = *f;
	ret->pc = ret->regs.pc = ret->regs.r[PT_IP] = f->regs.r[PT_CX];
	ret->sp = ret->regs.sp = f->regs.r[PT_SP];
	ret->regs.r[PT_CS] = 0x33;	// __USER_CS
	ret->user = true;
	return true;
}

struct kp_error *kp_x86_unwind_step(struct kp_unwinder *u, struct kp_unwind_frame *f,
				    const char **end_ret)
{
	*end_ret = NULL;
	if (f->user) {
		*end_ret = KP_UNWIND_USER;
		return NULL;
	}
	struct kp_unwind_frame user;
	if (syscall_before_switch(u, f, &user)) {
		*f = user;
		return NULL;
	}
	struct orc o;
	bool found;
	// A return address is the instruction after a call, maybe past the
	// end of a noreturn function: look up the call itself.
	uint64_t at = f->exact ? f->pc : f->pc - 1;
	struct kp_error *err = kp_orc_find(u, at, &o, &found);
	if (err)
		return err;
	bool guess = f->guess;
	if (!found) {
		// Generated code (BPF, trampolines) has no ORC: assume a frame
		// pointer, as the kernel does (orc_fp_entry); not reliable.
		o = (struct orc){ 16, -16, R_BP, R_PREV_SP, T_CALL, false, 0 };
		guess = true;
	}
	if (o.type == T_END) {
		*end_ret = KP_UNWIND_END;
		return NULL;
	}
	if (o.type == T_UNDEFINED) {
		struct kp_unwind_frame n;
		if (!caller_of_orcless(u, f, &o, &n))
			return corrupt(f->pc, "no unwind information (ORC undefined)");
		*f = n;
		return NULL;
	}
	uint64_t sp = 0;	// gcc -O2 cannot see caller_sp() sets it
	if ((err = caller_sp(u, f, &o, &sp)))
		return err;
	struct kp_unwind_frame n = *f;
	n.guess = guess;
	if ((err = caller_frame(u, f, &o, sp, &n)))
		return err;
	if (o.type != T_CALL && (n.regs.r[PT_CS] & 3) == 3) {
		n.user = true;	// user_mode(regs): the entry from user space
		*f = n;
		return NULL;
	}
	// Whether the next lookup takes pc as it is: 6.3+ says so per entry,
	// before that every exception frame's pc was exact (set above).
	if (u->version >= 2)
		n.exact = o.signal;
	if ((err = caller_fp(u, f, &o, sp, &n)))
		return err;
	*f = n;
	return NULL;
}

struct kp_error *kp_x86_unwind_sleeping(struct kp_unwinder *u, uint64_t task,
					struct kp_unwind_frame *ret)
{
	uint64_t sp, bp, pc;
	struct kp_error *err;
	if ((err = read_u64(u, task + u->thread_sp, &sp)) ||
	    (err = read_u64(u, sp + u->frame_bp, &bp)) || (err = read_u64(u, sp + u->frame_ret, &pc)))
		return kp_error_prefix(err, "task 0x%" PRIx64 ": saved context", task);
	memset(ret, 0, sizeof(*ret));
	ret->pc = pc;
	ret->sp = sp + u->frame_size;
	ret->fp = bp;
	// A task that has never run resumes at ret_from_fork: exactly there
	// (6.4+ unwind_orc.c sets state->signal for it).
	ret->exact = pc && (pc == u->ret_from_fork[0] || pc == u->ret_from_fork[1]);
	return NULL;
}
