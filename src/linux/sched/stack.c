// SPDX-License-Identifier: MIT
// kp_stack_*: kernel stacks of tasks and CPUs. Where a stack starts is
// Linux's business (here): a CPU's registers from the dump's notes for the
// task current on that CPU (per_cpu(runqueues).curr), else the context the
// scheduler saved when it switched the task out. How to go from one frame to
// its caller is the architecture's (kp_arch.unwind_step: ORC on x86-64).
//
// Bounds: at most MAX_FRAMES frames; the stack pointer may not move back
// within a stack (a move of more than STACK_SPAN is a switch to another
// stack: IRQ, exception or task stack), at most MAX_SWITCHES of those; every
// pc must be kernel text (a symbol of type t/T/w/W). A stack that breaks a
// bound ends there, marked incomplete with the reason.
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arch/unwind.h"
#include "core/kernel.h"
#include "format/source.h"
#include "core/layout.h"
#include "linux/panic/panic.h"
#include "linux/sched/sched.h"
#include "symbols/symtab.h"
#include "util/error.h"

#define MAX_FRAMES 1024
#define MAX_SWITCHES 8
#define STACK_SPAN (64u << 10)	// larger than any kernel stack (16 KiB, 32 with KASAN)

// Per kernel handle (kp_kernel_slot): the unwinder and what it asks for.
struct stacks {
	struct kp_kernel *k;
	const struct kp_arch *arch;
	struct kp_unwinder *u;
	struct kp_error *err;		// why there is no unwinder
	struct kp_unwind_env env;
	char release[65];
	// Modules by name, for the ORC tables of module text.
	bool mods_loaded;
	size_t nmods;
	struct {
		char name[64];
		uint64_t address;
	} *mods;
	// per_cpu(runqueues, cpu).curr, for the CPUs with register notes.
	bool curr_loaded;
	size_t ncurr;
	uint64_t *curr;
};

struct kp_stack {
	uint64_t task;
	int cpu;
	size_t n, cap;
	struct kp_frame *frames;
	size_t nregs, regs_cap;
	uint64_t (*regs)[KP_MAX_REGS];	// of the KP_FRAME_REGS frames, in order
	bool complete;
	char origin[96];
	char end[256];
};

static void stacks_destroy(void *arg)
{
	struct stacks *s = arg;
	if (!s)
		return;
	if (s->u)
		s->arch->unwinder_destroy(s->u);
	kp_error_destroy(s->err);
	free(s->mods);
	free(s->curr);
	free(s);
}

static bool env_member(void *arg, const char *type, const char *member, uint64_t *off,
		       uint64_t *size)
{
	struct stacks *s = arg;
	return kp_kernel_member_probe(s->k, type, member, off, size);
}

static void load_modules(struct stacks *s)
{
	s->mods_loaded = true;
	struct kp_module_iter *it;
	if (!kp_ok(kp_module_iter_create(s->k, &it)))
		return;
	size_t cap = 0;
	for (;;) {
		const struct kp_module *m;
		if (!kp_ok(kp_module_iter_next(it, &m)) || !m)
			break;
		if (s->nmods == cap) {
			size_t nc = cap ? cap * 2 : 64;
			void *p = realloc(s->mods, nc * sizeof(*s->mods));
			if (!p)
				break;
			s->mods = p;
			cap = nc;
		}
		snprintf(s->mods[s->nmods].name, sizeof(s->mods[0].name), "%s", m->name);
		s->mods[s->nmods++].address = m->address;
	}
	kp_module_iter_destroy(it);
}

static bool env_module_at(void *arg, uint64_t address, uint64_t *ret)
{
	struct stacks *s = arg;
	struct kp_symbol sym;
	if (!kp_kernel_symbol_at(s->k, address, &sym) || !sym.module)
		return false;
	if (!s->mods_loaded)
		load_modules(s);
	for (size_t i = 0; i < s->nmods; i++)
		if (!strcmp(s->mods[i].name, sym.module)) {
			*ret = s->mods[i].address;
			return true;
		}
	return false;
}

static struct kp_error *get_stacks(struct kp_kernel *k, struct stacks **ret)
{
	struct stacks *s = kp_kernel_slot(k, KP_KERNEL_SLOT_STACK);
	if (!s) {
		if (!(s = calloc(1, sizeof(*s))))
			return &kp_enomem;
		s->k = k;
		s->arch = kp_kernel_arch(k);
		const char *rel = kp_kernel_release(k);
		snprintf(s->release, sizeof(s->release), "%s", rel ? rel : "");
		s->env = (struct kp_unwind_env){
			.mem = kp_kernel_memory(k),
			.st = kp_kernel_symtab(k),
			.release = s->release,
			.arg = s,
			.member = env_member,
			.module_at = env_module_at,
		};
		if (!s->arch->unwinder_create)
			s->err = kp_error_create(KP_ERR_UNSUPPORTED, "kpeek cannot unwind %s stacks yet",
						 s->arch->name);
		else
			s->err = s->arch->unwinder_create(kp_kernel_arch_ctx(k), &s->env, &s->u);
		if (s->err && s->err != &kp_enomem)
			s->err = kp_error_prefix(s->err, "stack unwinder");
		kp_kernel_set_slot(k, KP_KERNEL_SLOT_STACK, s, stacks_destroy);
	}
	if (s->err)
		return s->err == &kp_enomem ? s->err : kp_error_create(kp_error_code(s->err), "%s", kp_error_message(s->err));
	*ret = s;
	return NULL;
}

struct kp_error *kp_stack_prepare(struct kp_kernel *k)
{
	struct stacks *s;
	return get_stacks(k, &s);
}

static void load_curr(struct stacks *s)
{
	s->curr_loaded = true;
	const struct kp_source *src = kp_kernel_source(s->k);
	if (!src->ncpus || !(s->curr = calloc(src->ncpus, sizeof(*s->curr))))
		return;
	s->ncurr = src->ncpus;
	for (size_t i = 0; i < s->ncurr; i++)
		if (kp_ok(kp_kernel_check_cpu(s->k, i)))
			kp_error_destroy(kp_lx_cpu_curr(s->k, i, &s->curr[i]));
}

static bool is_text(struct kp_kernel *k, uint64_t pc)
{
	struct kp_symbol sym;
	return kp_kernel_symbol_at(k, pc, &sym) && sym.type && strchr("tTwW", sym.type) &&
	       (!sym.size || pc < sym.address + sym.size);
}

static void end(struct kp_stack *st, bool complete, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void end(struct kp_stack *st, bool complete, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(st->end, sizeof(st->end), fmt, ap);
	va_end(ap);
	st->complete = complete;
}

static bool grow(void **p, size_t *cap, size_t need, size_t size)
{
	if (need <= *cap)
		return true;
	size_t nc = *cap ? *cap * 2 : 16;
	void *q = realloc(*p, nc * size);
	if (!q)
		return false;
	*p = q;
	*cap = nc;
	return true;
}

static bool add(struct kp_stack *st, const struct kp_unwind_frame *f, const struct kp_arch *arch)
{
	if (!grow((void **)&st->frames, &st->cap, st->n + 1, sizeof(*st->frames)) ||
	    !grow((void **)&st->regs, &st->regs_cap, st->nregs + 1, sizeof(*st->regs)))
		return false;
	struct kp_frame *fr = &st->frames[st->n];
	memset(fr, 0, sizeof(*fr));
	fr->pc = f->pc;
	fr->sp = f->sp;
	fr->flags = (f->exact ? KP_FRAME_EXACT : 0) | (f->guess ? KP_FRAME_UNRELIABLE : 0) |
		    (f->user ? KP_FRAME_USER : 0);
	// The first frame of a CPU's stack carries that CPU's registers (from
	// its note: regs_address 0).
	if ((f->regs_at || f->user || st->n == 0) && f->have_regs) {
		fr->flags |= KP_FRAME_REGS;
		fr->regs_address = f->regs_at;
		fr->nregs = f->regs.nregs;
		memcpy(st->regs[st->nregs++], f->regs.r, sizeof(st->regs[0]));
		fr->reg_names = arch->reg_names;
	} else if (f->regs_at) {
		fr->flags |= KP_FRAME_REGS;
		fr->regs_address = f->regs_at;
	}
	st->n++;
	return true;
}

// The frames' register pointers, once the arrays stop moving.
static void finish(struct kp_stack *st)
{
	size_t r = 0;
	for (size_t i = 0; i < st->n; i++)
		if (st->frames[i].nregs)
			st->frames[i].regs = st->regs[r++];
}

// Unwinds from f into st until the end or a bound.
static void unwind(struct stacks *s, struct kp_stack *st, struct kp_unwind_frame f)
{
	unsigned switches = 0;
	for (;;) {
		if (!f.user && !is_text(s->k, f.pc)) {
			end(st, false, "stopped: pc 0x%" PRIx64 " at sp 0x%" PRIx64
			    " is not kernel text (corrupt stack?)", f.pc, f.sp);
			return;
		}
		if (st->n == MAX_FRAMES) {
			end(st, false, "stopped after %d frames (output capped; a runaway stack?)", MAX_FRAMES);
			return;
		}
		if (!add(st, &f, s->arch)) {
			end(st, false, "stopped: out of memory");
			return;
		}
		uint64_t sp = f.sp;
		const char *why = NULL;
		struct kp_error *err = s->arch->unwind_step(s->u, &f, &why);
		if (err) {
			end(st, false, "stopped: %s", kp_error_message(err));
			kp_error_destroy(err);
			return;
		}
		if (why) {
			end(st, true, "%s", why);
			return;
		}
		if (f.user)
			continue;
		if (f.sp < sp && sp - f.sp < STACK_SPAN) {
			end(st, false, "stopped: the stack pointer went back from 0x%" PRIx64 " to 0x%" PRIx64
			    " (corrupt stack)", sp, f.sp);
			return;
		}
		if ((f.sp > sp ? f.sp - sp : sp - f.sp) >= STACK_SPAN && ++switches > MAX_SWITCHES) {
			end(st, false, "stopped: more than %d switches between stacks (corrupt stack)",
			    MAX_SWITCHES);
			return;
		}
	}
}

// A CPU's registers: its crash note in memory (a kdump vmcore), else the
// dump's n-th CPU note (QEMU's, or /proc/vmcore's copy of the crash notes).
static struct kp_error *cpu_frame(struct stacks *s, int cpu, struct kp_unwind_frame *ret,
				  const char **from)
{
	const struct kp_source *src = kp_kernel_source(s->k);
	uint8_t note[KP_LX_CRASH_NOTE_MAX];
	size_t len;
	const uint8_t *desc = note;
	*from = "crash_notes";
	if (cpu < 0 || !kp_lx_crash_note(s->k, (uint64_t)cpu, note, sizeof(note), &len)) {
		if (cpu < 0 || (size_t)cpu >= src->ncpus || !src->cpus[cpu].prstatus)
			return kp_error_create(KP_ERR_NOT_FOUND, "the %s has no registers of CPU %d%s",
					       src->live ? "live kernel" : "dump", cpu,
					       src->ncpus ? "" : " (no CPU notes)");
		desc = src->cpus[cpu].prstatus;
		len = src->cpus[cpu].prstatus_len;
		*from = "dump note";
	}
	memset(ret, 0, sizeof(*ret));
	if (!s->arch->prstatus_regs(desc, len, &ret->regs)) {
		if (desc == note)
			return kp_error_create(KP_ERR_FORMAT, "CPU %d: its crash note has %zu bytes: too short",
					       cpu, len);
		return kp_error_create(KP_ERR_FORMAT, "CPU %d: NT_PRSTATUS note at file offset 0x%" PRIx64
				       " too short", cpu, src->cpus[cpu].prstatus_at);
	}
	if (!ret->regs.pc && !ret->regs.sp)
		return kp_error_create(KP_ERR_NOT_FOUND, "CPU %d: its note holds no registers (offline CPU?)", cpu);
	ret->pc = ret->regs.pc;
	ret->sp = ret->regs.sp;
	ret->fp = ret->regs.fp;
	ret->exact = true;
	ret->have_regs = ret->regs_full = true;
	// A CPU in user space: its registers are the user context, the end.
	ret->user = !kp_kernel_is_kernel_address(s->k, ret->pc);
	return NULL;
}

static struct kp_stack *stack_alloc(uint64_t task, int cpu)
{
	struct kp_stack *st = calloc(1, sizeof(*st));
	if (st) {
		st->task = task;
		st->cpu = cpu;
	}
	return st;
}

struct kp_error *kp_stack_cpu_create(struct kp_kernel *k, int cpu, struct kp_stack **ret)
{
	struct stacks *s;
	struct kp_unwind_frame f;
	struct kp_error *err = get_stacks(k, &s);
	const char *from;
	if (err || (err = cpu_frame(s, cpu, &f, &from)))
		return err;
	if (!s->curr_loaded)
		load_curr(s);
	struct kp_stack *st = stack_alloc((size_t)cpu < s->ncurr ? s->curr[cpu] : 0, cpu);
	if (!st)
		return &kp_enomem;
	snprintf(st->origin, sizeof(st->origin), "registers of CPU %d (%s)", cpu, from);
	unwind(s, st, f);
	finish(st);
	*ret = st;
	return NULL;
}

struct kp_error *kp_stack_task_create(struct kp_kernel *k, uint64_t task, struct kp_stack **ret)
{
	struct stacks *s;
	struct kp_error *err = get_stacks(k, &s);
	if (err)
		return err;
	if (!s->curr_loaded)
		load_curr(s);
	const struct kp_source *src = kp_kernel_source(k);
	int cpu = -1;
	for (size_t i = 0; i < s->ncurr; i++)
		if (s->curr[i] == task)
			cpu = (int)i;
	struct kp_unwind_frame f;
	const char *from = NULL;
	if (cpu >= 0) {
		if ((err = cpu_frame(s, cpu, &f, &from)))
			return err;
	} else {
		if (src->live) {
			// Live there are no registers: a task on a CPU now has
			// a stale saved context (task_struct.on_cpu, 3.x+).
			uint64_t off, size;
			uint32_t on_cpu = 0;
			if (kp_kernel_member_probe(k, "struct task_struct", "on_cpu", &off, &size) &&
			    size == 4 && kp_ok(kp_read_u32(k, task + off, &on_cpu)) && on_cpu)
				return kp_error_create(KP_ERR_UNSUPPORTED, "task 0x%" PRIx64
						       " is running on a CPU: a live kernel's running tasks cannot be unwound (no registers)", task);
		}
		if ((err = s->arch->unwind_sleeping(s->u, task, &f)))
			return err;
	}
	struct kp_stack *st = stack_alloc(task, cpu);
	if (!st)
		return &kp_enomem;
	if (cpu >= 0)
		snprintf(st->origin, sizeof(st->origin), "registers of CPU %d (%s)", cpu, from);
	else
		snprintf(st->origin, sizeof(st->origin), "where the scheduler switched it out");
	unwind(s, st, f);
	finish(st);
	*ret = st;
	return NULL;
}

size_t kp_stack_frames(const struct kp_stack *st, const struct kp_frame **ret)
{
	*ret = st->frames;
	return st->n;
}

const char *kp_stack_origin(const struct kp_stack *st)
{
	return st->origin;
}

const char *kp_stack_end(const struct kp_stack *st, bool *complete_ret)
{
	if (complete_ret)
		*complete_ret = st->complete;
	return st->end;
}

uint64_t kp_stack_task(const struct kp_stack *st)
{
	return st->task;
}

int kp_stack_cpu(const struct kp_stack *st)
{
	return st->cpu;
}

void kp_stack_destroy(struct kp_stack *st)
{
	if (!st)
		return;
	free(st->frames);
	free(st->regs);
	free(st);
}
