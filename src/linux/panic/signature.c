// SPDX-License-Identifier: MIT
// The signature of a crash (kp_signature_get): what identifies the bug and not the machine, the boot or the dump's
// format. doc/signature.md states the rules for other tools; a change here
// that changes a hash is a change of that document's version.
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "linux/panic/panic.h"
#include "util/error.h"
#include "util/opts.h"

static bool starts(const char *s, const char *prefix)
{
	return !strncmp(s, prefix, strlen(prefix));
}

static bool word_char(char c)
{
	return isalnum((unsigned char)c) || c == '_';
}

// The length of the task name at s: up to the last ':' followed by a pid of
// "task NAME:PID" (hung_task.c; a name such as "kworker/0:1" has colons of
// its own), up to the next space after "Comm: "; at most TASK_COMM_LEN - 1
// bytes. 0 if s does not start with one.
static size_t comm_length(const char *s, bool task)
{
	size_t k = 0;
	for (size_t i = 0; i < 16 && s[i]; i++) {
		if (task && s[i] == ':' && i && isdigit((unsigned char)s[i + 1])) {
			size_t d = i + 1;
			while (isdigit((unsigned char)s[d]))
				d++;
			if (!word_char(s[d]) && s[d] != ':')
				k = i;
		} else if (!task && s[i] == ' ') {
			return i;
		}
	}
	size_t len = strnlen(s, 16);
	return task ? k : len < 16 ? len : 0;	// "Comm: NAME" at the end
}

#define TITLE_MAX 200	// bytes of a normalized title kept (doc/signature.md)

// The title's rules (doc/signature.md): what follows " [#" (the oops
// counter, then "PREEMPT SMP NOPTI": the machine's configuration and CPU)
// is dropped; a number that starts a word ("22" of "22s", not the 4 of
// "ext4") becomes N, or X when it is hexadecimal (0x..., or a word of 8 or
// more hex digits: an address); the task name of "task NAME:PID"
// and "Comm: NAME" becomes ?; runs of white space become one space; the
// first TITLE_MAX bytes are kept, without trailing space. out: at least
// TITLE_MAX + 8 bytes for the whole rule (less cuts it shorter).
void kp_lx_signature_title(const char *s, char *out, size_t size)
{
	size_t n = 0;
	char prev = ' ';
	const char *cut = strstr(s, " [#");
	while (*s && s != cut && n + 8 < size) {
		bool boundary = !word_char(prev);
		size_t hex = 0, dec = 0;
		while (isxdigit((unsigned char)s[hex]))
			hex++;
		while (isdigit((unsigned char)s[dec]))
			dec++;
		if (boundary && s[0] == '0' && s[1] == 'x' && isxdigit((unsigned char)s[2])) {
			size_t l = 2;
			while (isxdigit((unsigned char)s[l]))
				l++;
			out[n++] = 'X';
			prev = 'X';
			s += l;
		} else if (boundary && hex >= 8 && !word_char(s[hex]) && dec < hex) {
			out[n++] = 'X';
			prev = 'X';
			s += hex;
		} else if (boundary && dec) {
			out[n++] = 'N';
			prev = 'N';
			s += dec;
		} else if (boundary && (starts(s, "task ") || starts(s, "Comm: "))) {
			size_t l = s[0] == 't' ? 5 : 6, k = comm_length(s + l, s[0] == 't');
			memcpy(out + n, s, l);
			n += l;
			s += l;
			if (k) {
				out[n++] = '?';
				s += k;
			}
			prev = ' ';
		} else if (isspace((unsigned char)*s)) {
			if (n && out[n - 1] != ' ')
				out[n++] = ' ';
			prev = ' ';
			s++;
		} else {
			prev = *s;
			out[n++] = *s++;
		}
	}
	if (n > TITLE_MAX)
		n = TITLE_MAX;
	while (n && out[n - 1] == ' ')
		n--;
	out[n] = '\0';
}

// Functions that every crash of a kind passes through and that say nothing
// of the bug: panic and kdump entry, the fault and trap handlers, the
// stack dumpers and panic()'s delay loop. A trailing '*' matches a prefix.
static const char *const generic[] = {
	"panic", "vpanic", "nmi_panic", "__crash_kexec", "crash_kexec", "machine_kexec",
	"machine_crash_shutdown", "native_machine_crash_shutdown", "crash_setup_regs",
	"panic_smp_self_stop", "smp_send_stop", "oops_end", "die", "__die", "__die_body",
	"die_kernel_fault", "die_if_kernel", "do_trap", "do_error_trap", "handle_invalid_op",
	"exc_invalid_op", "handle_bug", "report_bug", "exc_page_fault", "page_fault_oops",
	"kernelmode_fixup_or_oops", "__bad_area_nosemaphore", "bad_area_nosemaphore",
	"do_user_addr_fault", "no_context", "exc_general_protection", "do_general_protection",
	"exc_divide_error", "do_divide_error", "asm_*", "end_repeat_nmi", "repeat_nmi", "__do_kernel_fault", "do_page_fault",
	"do_translation_fault", "do_mem_abort", "do_bad_area", "el1_abort", "el1_da", "el1_undef",
	"do_el1_undef", "el1_dbg", "el1_inv", "el1_sync_handler", "el1h_64_sync_handler",
	"el1h_64_sync", "el1_sync", "el0_da", "el0_ia", "el0t_*", "bug_handler", "bug_brk_handler", "brk_handler",
	"call_break_hook", "call_el1_break_hook", "do_debug_exception", "do_el1_brk64",
	"arm64_notify_die", "__warn", "warn_slowpath_fmt", "check_panic_on_warn", "dump_stack",
	"dump_stack_lvl", "show_stack", "show_regs", "delay_tsc", "delay_halt*", "__delay",
	"__const_udelay", "__udelay", "__ndelay", "__delay_cycles", "native_safe_halt",
};
// A watchdog's interrupt, to reach the code it interrupted (lockups).
static const char *const watchdog_irq[] = {
	"watchdog_timer_fn", "watchdog_overflow_callback", "watchdog_hardlockup_check",
	"watchdog_buddy_check_hardlockup", "__run_hrtimer", "__hrtimer_run_queues",
	"hrtimer_interrupt", "hrtimer_run_queues", "__sysvec_apic_timer_interrupt",
	"sysvec_apic_timer_interrupt", "asm_sysvec_*", "local_apic_timer_interrupt",
	"__perf_event_overflow", "perf_event_overflow", "handle_pmi_common",
	"intel_pmu_handle_irq", "amd_pmu_handle_irq", "perf_event_nmi_handler", "nmi_handle",
	"default_do_nmi", "exc_nmi", "end_repeat_nmi", "rcu_sched_clock_irq",
	"print_cpu_stall", "check_cpu_stall", "rcu_pending", "update_process_times",
	"tick_sched_handle", "tick_sched_timer", "tick_nohz_handler", "arch_timer_handler_*",
	"handle_percpu_devid_irq", "generic_handle_domain_irq", "handle_irq_desc",
	"gic_handle_irq", "call_on_irq_stack", "do_interrupt_handler", "el1_interrupt",
	"el1h_64_irq_handler", "el1h_64_irq", "el1_irq", "irq_exit_rcu", "__irq_exit_rcu",
};
// Sleeping, for a blocked task's stack (hung tasks).
static const char *const sleeping[] = {
	"__switch_to", "__switch_to_asm", "cpu_switch_to", "context_switch", "__schedule",
	"schedule", "schedule_timeout", "schedule_preempt_disabled", "schedule_hrtimeout*",
	"io_schedule", "io_schedule_timeout", "__mutex_lock*", "mutex_lock*",
	"rwsem_down_*", "down_read*", "down_write*", "__down*", "down", "down_timeout",
	"wait_for_completion*", "__wait_for_common", "do_wait_for_common", "bit_wait*",
	"out_of_line_wait_on_bit*", "__wait_on_bit*", "folio_wait_bit_common",
	"wait_on_page_bit_common",
};
// The page allocator's way to the OOM killer (OOM: who allocated).
static const char *const allocating[] = {
	"out_of_memory", "__alloc_pages*", "alloc_pages*", "__folio_alloc*", "folio_alloc*",
	"vma_alloc_folio*", "pagefault_out_of_memory", "dump_header", "oom_kill_process",
	"__get_free_pages", "get_zeroed_page*", "alloc_pages_current", "alloc_pages_vma",
	// arm64's zeroed user page (6.x; alloc_zeroed_user_highpage_movable before)
	"vma_alloc_zeroed_movable_folio", "alloc_zeroed_user_highpage*",
};

static bool listed(const char *name, const char *const *list, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		size_t l = strlen(list[i]);
		if (list[i][l - 1] == '*' ? !strncmp(name, list[i], l - 1) : !strcmp(name, list[i]))
			return true;
	}
	return false;
}
#define LISTED(name, list) listed(name, list, sizeof(list) / sizeof(list[0]))

// The function of a frame, without the compiler's ".cold", ".isra.0",
// ".constprop.0" suffixes (one build has them, the next not); "?" where no
// symbol names it.
static void frame_name(struct kp_kernel *k, const struct kp_frame *f, char *out, size_t size)
{
	struct kp_symbol sym;
	uint64_t at = f->flags & KP_FRAME_EXACT ? f->pc : f->pc - 1;
	struct kp_error *err = kp_symbol_by_address(k, at, &sym);
	if (err) {
		kp_error_destroy(err);
		snprintf(out, size, "?");
		return;
	}
	snprintf(out, size, "%.*s", (int)strcspn(sym.name, "."), sym.name);
}

// Where panic() or kdump took over: the frames inner to the first of these
// are whatever ran on the way (or interrupted panic()'s delay loop when
// the dump was taken: a timer on 6.1 arm64), never the bug.
static const char *const panic_entry[] = {
	"panic", "vpanic", "nmi_panic", "__crash_kexec", "crash_kexec", "oops_end", "die", "__die",
	"die_kernel_fault",
};

void kp_lx_signature_frames(const struct kp_lx_sig_frame *f, size_t n, bool blocked, struct kp_signature *sig)
{
	bool lockup = sig->kind == KP_PANIC_SOFT_LOCKUP || sig->kind == KP_PANIC_HARD_LOCKUP ||
		      sig->kind == KP_PANIC_RCU_STALL;
	size_t start = 0;
	for (size_t i = 0; i < n && !f[i].user; i++)
		if (LISTED(f[i].name, panic_entry)) {
			start = i;
			break;
		}
	for (size_t i = start; i < n && sig->nframes < KP_SIGNATURE_FRAMES; i++) {
		if (f[i].user || (sig->nframes && f[i].entered && !lockup))
			break;
		const char *name = f[i].name;
		if (LISTED(name, generic) || (lockup && LISTED(name, watchdog_irq)) ||
		    (blocked && LISTED(name, sleeping)) ||
		    (sig->kind == KP_PANIC_OOM && LISTED(name, allocating)))
			continue;
		snprintf(sig->frames[sig->nframes++], sizeof(sig->frames[0]), "%s", name);
	}
}

// The first meaningful functions of stack into sig->frames (the rules:
// kp_lx_signature_frames), from its first SIG_SCAN frames.
#define SIG_SCAN 128
static void take_frames(struct kp_kernel *k, const struct kp_stack *stack, bool blocked,
			struct kp_signature *sig)
{
	struct kp_lx_sig_frame names[SIG_SCAN];	// 16.6 KiB
	const struct kp_frame *fr;
	size_t n = kp_stack_frames(stack, &fr);
	n = n < SIG_SCAN ? n : SIG_SCAN;
	for (size_t i = 0; i < n; i++) {
		frame_name(k, &fr[i], names[i].name, sizeof(names[i].name));
		names[i].user = fr[i].flags & KP_FRAME_USER;
		names[i].entered = (fr[i].flags & KP_FRAME_REGS) && fr[i].regs_address;
	}
	kp_lx_signature_frames(names, n, blocked, sig);
}

// The pid of the first task hung_task.c named blocked ("INFO: task
// NAME:PID blocked for more than N seconds."; "blocked in I/O wait for
// more than" where the task waits in io_schedule(), as 7.2 prints it), 0
// if none.
static int32_t first_blocked(struct kp_kernel *k)
{
	struct kp_printk_iter *it;
	if (!kp_ok(kp_printk_iter_create(k, &it)))
		return 0;
	int32_t pid = 0;
	for (;;) {
		const struct kp_printk_record *r;
		if (!kp_ok(kp_printk_iter_next(it, &r)) || !r)
			break;
		char line[128];
		size_t n = r->len < sizeof(line) - 1 ? r->len : sizeof(line) - 1;
		memcpy(line, r->text, n);
		line[n] = '\0';
		if (strncmp(line, "INFO: task ", 11))
			continue;
		const char *colon = strstr(line, " blocked for more than ");
		if (!colon)
			colon = strstr(line, " blocked in I/O wait for more than ");
		if (!colon)
			continue;
		while (colon > line && colon[-1] != ':')
			colon--;
		int v;
		if (colon > line && sscanf(colon, "%d blocked", &v) == 1 && v > 0) {
			pid = v;
			break;
		}
	}
	kp_printk_iter_destroy(it);
	return pid;
}

// The first record of the oops that led to the panic: the record p->oops
// names is often the last of a few ("BUG: kernel NULL pointer dereference,
// address: 0" then "Oops: 0002 [#1] PREEMPT SMP NOPTI"; arm64's "Unable to
// handle kernel ..." then "Internal error: Oops: ..."); the first says what
// happened and the others how this machine is configured. An oops ends
// with "---[ end trace" (oops_exit()); p->oops itself if the log cannot be
// read again.
static void first_of_oops(struct kp_kernel *k, const struct kp_panic *p, char *out, size_t size)
{
	struct kp_printk_iter *it;
	snprintf(out, size, "%s", p->oops);
	if (!kp_ok(kp_printk_iter_create(k, &it)))
		return;
	char first[256] = "", line[256];
	for (;;) {
		const struct kp_printk_record *r;
		if (!kp_ok(kp_printk_iter_next(it, &r)) || !r)
			break;
		const char *nl = memchr(r->text, '\n', r->len);
		size_t n = nl ? (size_t)(nl - r->text) : r->len;
		n = n < sizeof(line) - 1 ? n : sizeof(line) - 1;
		memcpy(line, r->text, n);
		line[n] = '\0';
		if (starts(line, "---[ end trace") || starts(line, "Kernel panic - not syncing: ")) {
			first[0] = '\0';
			if (p->message[0] && r->ts_nsec == p->ts_nsec && starts(line, "Kernel panic"))
				break;
			continue;
		}
		if (!kp_lx_is_oops_start(line, n))
			continue;
		if (!first[0])
			memcpy(first, line, n + 1);
		if (!strcmp(line, p->oops))
			snprintf(out, size, "%s", first);
	}
	kp_printk_iter_destroy(it);
}

// FNV-1a, 64 bits (offset basis 0xcbf29ce484222325, prime 0x100000001b3),
// over the canonical text doc/signature.md defines.
static uint64_t fnv1a(uint64_t h, const char *s)
{
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
	return (h ^ '\n') * 0x100000001b3ULL;
}

void kp_lx_signature_hash(struct kp_signature *sig)
{
	uint64_t h = fnv1a(0xcbf29ce484222325ULL, "kpeek-signature-1");
	h = fnv1a(h, kp_panic_kind_name(sig->kind));
	h = fnv1a(h, sig->title);
	for (unsigned i = 0; i < sig->nframes; i++)
		h = fnv1a(h, sig->frames[i]);
	sig->hash = h;
}

static void stack_frames(struct kp_kernel *k, const struct kp_panic *p, struct kp_signature *sig)
{
	struct kp_stack *st = NULL;
	struct kp_error *err;
	int32_t blocked = sig->kind == KP_PANIC_HUNG_TASK ? first_blocked(k) : 0;
	if (blocked) {
		uint64_t task;
		err = kp_task_by_pid(k, blocked, &task);
		if (!err)
			err = kp_stack_task_create(k, task, &st);
	} else {
		err = kp_stack_cpu_create(k, p->cpu, &st);
		// A dump without the CPU's registers (raw memory): where the
		// panicking task was last switched out says nothing of the crash.
	}
	if (err) {
		sig->no_stack = true;
		snprintf(sig->stack_error, sizeof(sig->stack_error), "%s", kp_error_message(err));
		kp_error_destroy(err);
		return;
	}
	take_frames(k, st, blocked != 0, sig);
	// An unwind that stopped before a frame was kept (the stack's page is
	// not in the dump) is no stack either.
	bool complete;
	const char *end = kp_stack_end(st, &complete);
	if (!sig->nframes && !complete) {
		sig->no_stack = true;
		snprintf(sig->stack_error, sizeof(sig->stack_error), "%s", end);
	}
	kp_stack_destroy(st);
}

struct kp_error *kp_signature_get(struct kp_kernel *k, const struct kp_panic *panic, struct kp_signature *ret)
{
	KP_INIT(kp_panic, own);
	const struct kp_panic *p = panic;
	if (!p) {
		struct kp_error *err = kp_panic_get(k, &own);
		if (err)
			return err;
		p = &own;
	} else if (p->sz < sizeof(*p)) {
		return kp_error_create(KP_ERR_INVALID, "struct kp_panic: sz %zu, not this version's (use kp_panic_get)",
				       p->sz);
	}
	struct kp_signature sig;
	memset(&sig, 0, sizeof(sig));
	sig.sz = sizeof(sig);
	sig.kind = p->kind;
	if (sig.kind != KP_PANIC_NONE) {
		char title[256];
		if (p->oops[0])
			first_of_oops(k, p, title, sizeof(title));
		else
			snprintf(title, sizeof(title), "%.255s",
				 p->message + (starts(p->message, "Kernel panic - not syncing: ") ? 28 : 0));
		kp_lx_signature_title(title, sig.title, sizeof(sig.title));
		memcpy(sig.record, title, sizeof(sig.record));
		if (p->panicked) {
			stack_frames(k, p, &sig);
		} else {
			sig.no_stack = true;
			snprintf(sig.stack_error, sizeof(sig.stack_error), "no panicking CPU (panic_cpu is unset)");
		}
		kp_lx_signature_hash(&sig);
	}
	if (!kp_out_copy(ret, &sig, sizeof(sig)))
		return kp_error_create(KP_ERR_INVALID, "struct kp_signature: sz not set (use KP_INIT)");
	return NULL;
}
