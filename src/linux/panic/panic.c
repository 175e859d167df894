// SPDX-License-Identifier: MIT
// kp_panic_get: why the kernel stopped.
//
//   panic_cpu       atomic_t, PANIC_CPU_INVALID (-1) until panic() (or
//                   crash_kexec() on an oops) claims it for the CPU that
//                   panics (kernel/panic.c, 4.5+).
//   the printk ring the last "Kernel panic - not syncing: " record, and
//                   before it the record that started the crash.
//   runqueues       per_cpu(runqueues, cpu).curr: the task current there.
//   tainted_mask    with the kernel's taint_flags[] letters, formatted as
//                   print_tainted() does for the "CPU: ... Comm: ..." line.
//   crash_notes     the other CPUs the crash stopped (crash_notes.c).
//   VMCOREINFO      CRASHTIME=<seconds> (written by kdump's crash kernel
//                   path, crash_save_vmcoreinfo(); QEMU dumps have none).
#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/kernel.h"
#include "format/vmcoreinfo.h"
#include "core/layout.h"
#include "linux/panic/panic.h"
#include "linux/sched/sched.h"
#include "util/error.h"
#include "util/opts.h"

#define PANIC_PREFIX "Kernel panic - not syncing: "
#define PANIC_CPU_INVALID (-1)	// include/linux/panic.h (4.5+)

// Records that start a crash: the kernel's own wording (lib/bug.c,
// arch/x86/kernel/dumpstack.c, arch/arm64/mm/fault.c, drivers/tty/sysrq.c,
// kernel/watchdog*.c, mm/...).
bool kp_lx_is_oops_start(const char *s, size_t n)
{
	static const char *const starts[] = {
		"BUG: ", "Oops", "general protection fault", "kernel BUG at ",
		"Unable to handle kernel ", "sysrq: Trigger a crash", "Internal error: ",
		"watchdog: BUG: ", "Kernel stack overflow", "stack-protector: ",
		"divide error", "invalid opcode",
	};
	for (size_t i = 0; i < sizeof(starts) / sizeof(starts[0]); i++) {
		size_t l = strlen(starts[i]);
		if (n >= l && !memcmp(s, starts[i], l))
			return true;
	}
	return false;
}

// The first line of a record, as bytes: the printers escape what cannot be
// shown (valid UTF-8 such as "café" is kept); only a NUL, which would end
// the C string early, becomes '?'.
static void copy_line(char *dst, size_t size, const char *s, size_t n)
{
	const char *nl = memchr(s, '\n', n);
	if (nl)
		n = nl - s;
	if (n >= size)
		n = size - 1;
	for (size_t i = 0; i < n; i++)
		dst[i] = s[i] ? s[i] : '?';
	dst[n] = '\0';
}

// dump_stack_print_info()'s "CPU: %d PID: %d Comm: %.20s [Kdump: loaded ]TAINT
// RELEASE ..." (6.12+: "CPU: %d UID: %u PID: %d ..."), the record after the
// panic message. TAINT is "Not tainted" or "Tainted: ..." (letters and
// spaces), up to " RELEASE"; a kernel whose release is unknown ends it
// at the first space before a digit.
struct log_cpu {
	bool found;
	int cpu, pid;
	char comm[16];
	char taint[72];
};

static void parse_cpu_line(const char *text, size_t len, const char *release, struct log_cpu *ret)
{
	char line[256];
	copy_line(line, sizeof(line), text, len);
	int cpu, pid, n = 0;
	unsigned uid;
	if (sscanf(line, "CPU: %d PID: %d Comm: %n", &cpu, &pid, &n) != 2 &&
	    sscanf(line, "CPU: %d UID: %u PID: %d Comm: %n", &cpu, &uid, &pid, &n) != 3)
		return;
	if (!n || cpu < 0 || pid < 0)
		return;
	const char *rest = line + n;
	const char *taint = strstr(rest, " Not tainted");
	const char *tainted = strstr(rest, " Tainted: ");
	if (!taint || (tainted && tainted < taint))
		taint = tainted;
	if (!taint)
		return;
	// With a crash kernel loaded, " Kdump: loaded" comes between.
	const char *kdump = strstr(rest, " Kdump: loaded ");
	const char *comm_end = kdump && kdump < taint ? kdump : taint;
	if (comm_end - rest > 20)
		return;
	snprintf(ret->comm, sizeof(ret->comm), "%.*s", (int)(comm_end - rest < 15 ? comm_end - rest : 15), rest);
	taint++;
	char want[80];
	snprintf(want, sizeof(want), " %s", release ? release : "");
	const char *end = taint;
	if (release)
		end = strstr(taint, want);
	else
		while (*end && !(end[0] == ' ' && isdigit((unsigned char)end[1])))
			end++;
	if (!end || !*end)
		return;
	snprintf(ret->taint, sizeof(ret->taint), "%.*s", (int)(end - taint), taint);
	ret->cpu = cpu;
	ret->pid = pid;
	ret->found = true;
}

// The last panic record and the oops record before it. An oops with kdump
// loaded and panic_on_oops (or in interrupt, or in init) goes to
// crash_kexec() from oops_end() before panic() prints anything: then the
// last oops record is what there is, and its time the crash's.
// lc: the "CPU: ..." line after the last panic record.
static struct kp_error *scan_log(struct kp_kernel *k, struct kp_panic *p, struct log_cpu *lc)
{
	struct kp_printk_iter *it;
	struct kp_error *err = kp_printk_iter_create(k, &it);
	if (err)
		return err;
	char oops[sizeof(p->oops)] = "";
	bool after_panic = false;
	uint64_t oops_ts = 0;
	uint32_t oops_caller = 0;
	for (;;) {
		const struct kp_printk_record *r;
		if ((err = kp_printk_iter_next(it, &r)) || !r)
			break;
		size_t pl = strlen(PANIC_PREFIX);
		if (r->len >= pl && !memcmp(r->text, PANIC_PREFIX, pl)) {
			copy_line(p->message, sizeof(p->message), r->text, r->len);
			p->ts_nsec = r->ts_nsec;
			p->caller_id = r->caller_id;
			memcpy(p->oops, oops, sizeof(oops));
			oops[0] = '\0';
			memset(lc, 0, sizeof(*lc));
			after_panic = true;
		} else if (after_panic && !lc->found && r->len > 5 && !memcmp(r->text, "CPU: ", 5)) {
			parse_cpu_line(r->text, r->len, kp_kernel_release(k), lc);
		} else if (kp_lx_is_oops_start(r->text, r->len)) {
			copy_line(oops, sizeof(oops), r->text, r->len);
			oops_ts = r->ts_nsec;
			oops_caller = r->caller_id;
		}
	}
	kp_printk_iter_destroy(it);
	if (!err && p->panicked && !p->message[0] && oops[0]) {
		memcpy(p->oops, oops, sizeof(oops));
		p->ts_nsec = oops_ts;
		p->caller_id = oops_caller;
	}
	return err;
}

// print_tainted(): "Not tainted", or "Tainted: " and one letter per flag
// (c_true when set, c_false, usually ' ', when not).
static void format_taint(struct kp_kernel *k, struct kp_panic *p)
{
	if (!p->tainted_mask) {
		snprintf(p->taint, sizeof(p->taint), "Not tainted");
		return;
	}
	size_t n = (size_t)snprintf(p->taint, sizeof(p->taint), "Tainted: ");
	struct kp_lx_taint_table t;
	struct kp_error *err = kp_lx_taint_table(k, &t);
	if (err) {
		snprintf(p->taint, sizeof(p->taint), "Tainted: 0x%" PRIx64 " (%s)", p->tainted_mask,
			 err->code == KP_ERR_NOT_FOUND ? "no taint_flags table" : "taint_flags unreadable");
		kp_error_destroy(err);
		return;
	}
	for (unsigned i = 0; i < t.count && n + 1 < sizeof(p->taint); i++) {
		char c = p->tainted_mask >> i & 1 ? t.c_true[i] : t.c_false[i];
		p->taint[n++] = isprint((unsigned char)c) ? c : '?';
	}
	p->taint[n] = '\0';
}

// pid and comm of p->task.
static struct kp_error *current_task(struct kp_kernel *k, struct kp_panic *p)
{
	const struct kp_struct_layout *tl;
	uint32_t pid;
	struct kp_error *err = kp_kernel_layout(k, &kp_lx_task_spec, &tl);
	if (err)
		return err;
	if (tl->m[KP_LX_T_PID].size != 4 || tl->m[KP_LX_T_COMM].size < sizeof(p->comm))
		return kp_error_create(KP_ERR_UNSUPPORTED, "task_struct: pid or comm of an unknown size");
	if ((err = kp_read_u32(k, p->task + kp_layout_off(tl, KP_LX_T_PID), &pid)) ||
	    (err = kp_read(k, KP_VIRT, p->task + kp_layout_off(tl, KP_LX_T_COMM), p->comm, sizeof(p->comm) - 1)))
		return kp_error_prefix(err, "task_struct at 0x%" PRIx64, p->task);
	p->comm[sizeof(p->comm) - 1] = '\0';	// bytes: the printers escape them
	p->pid = (int32_t)pid;
	p->has_task = true;
	return NULL;
}

// The task current on the panicking CPU. A dump can lack its task_struct
// (makedumpfile -d of a kernel whose page flags it misreads excludes pages
// in use): pid and comm are then the log's "CPU: N PID: P Comm: C" line of
// that CPU, if it has one, and task_error says why.
static void panicking_task(struct kp_kernel *k, struct kp_panic *p, const struct log_cpu *lc)
{
	struct kp_error *err = kp_lx_cpu_curr(k, (uint64_t)p->cpu, &p->task);
	if (!err && !p->task)
		return;	// no current task (not yet scheduled)
	if (!err && !(err = current_task(k, p)))
		return;
	snprintf(p->task_error, sizeof(p->task_error), "%s", kp_error_message(err));
	kp_error_destroy(err);
	memset(p->comm, 0, sizeof(p->comm));
	if (!lc->found || lc->cpu != p->cpu)
		return;
	p->pid = lc->pid;
	memcpy(p->comm, lc->comm, sizeof(p->comm));
	p->has_task = true;
}

// The CPUs other than the panicking one with a crash note, as a CPU list.
// Bounded by nr_cpu_ids (and MAX_CPUS against a corrupt value).
#define MAX_CPUS 8192
static void stopped_cpus(struct kp_kernel *k, struct kp_panic *p)
{
	struct kp_symbol sym;
	uint32_t n;
	if (!kp_symbol_find(k, "nr_cpu_ids", &sym) || !kp_ok(kp_read_u32(k, sym.address, &n)))
		return;
	if (n > MAX_CPUS)
		n = MAX_CPUS;
	size_t used = 0;
	int64_t run_start = -1;
	uint8_t note[KP_LX_CRASH_NOTE_MAX];
	size_t len;
	for (uint64_t cpu = 0; cpu <= n; cpu++) {
		bool has = cpu < n && (int64_t)cpu != p->cpu &&
			   kp_lx_crash_note(k, cpu, note, sizeof(note), &len);
		if (has) {
			p->ncpus_stopped++;
			if (run_start < 0)
				run_start = (int64_t)cpu;
			continue;
		}
		if (run_start < 0)
			continue;
		char one[48];
		int w = cpu - 1 == (uint64_t)run_start
				? snprintf(one, sizeof(one), "%s%" PRId64, used ? "," : "", run_start)
				: snprintf(one, sizeof(one), "%s%" PRId64 "-%" PRIu64, used ? "," : "", run_start, cpu - 1);
		if (used + (size_t)w + 4 >= sizeof(p->cpus_stopped)) {
			snprintf(p->cpus_stopped + used, sizeof(p->cpus_stopped) - used, ",...");
			return;
		}
		memcpy(p->cpus_stopped + used, one, (size_t)w + 1);
		used += (size_t)w;
		run_start = -1;
	}
}

// The task of pid on cpu (for from_log): the CPU's current task if it has
// that pid (the idle task, pid 0 on every CPU, of a panic in an interrupt
// taken while idle), else the one the task list has.
static void task_by_pid(struct kp_kernel *k, int cpu, int pid, struct kp_panic *p)
{
	struct kp_panic cur = { .task = 0 };
	if (kp_ok(kp_lx_cpu_curr(k, (uint64_t)cpu, &cur.task)) && cur.task &&
	    kp_ok(current_task(k, &cur)) && cur.pid == pid) {
		p->task = cur.task;
		p->has_task = true;
		return;
	}
	if (pid > 0 && kp_ok(kp_task_by_pid(k, pid, &p->task)))
		p->has_task = true;
}

struct kp_error *kp_panic_get(struct kp_kernel *k, struct kp_panic *ret)
{
	struct kp_panic p;
	memset(&p, 0, sizeof(p));
	p.sz = sizeof(p);
	p.cpu = -1;
	int64_t cpu = -1;
	struct kp_symbol sym;
	uint32_t counter;
	struct kp_error *err = kp_symbol_by_name(k, "panic_cpu", &sym);
	// Without panic_cpu in kallsyms (no CONFIG_KALLSYMS_ALL) the log says
	// which CPU and task panicked (from_log, below).
	bool no_panic_cpu = err && err->code == KP_ERR_NOT_FOUND;
	// atomic_t: { int counter; }.
	if (!err && !(err = kp_read_u32(k, sym.address, &counter)))
		cpu = (int32_t)counter;
	if (no_panic_cpu) {
		kp_error_destroy(err);
		err = NULL;
		cpu = -1;
	}
	if (err)
		return kp_error_prefix(err, "panic: panic_cpu");
	// PANIC_CPU_INVALID (-1) until a CPU enters panic() or crash_kexec();
	// anything else must be a possible CPU.
	if (cpu != PANIC_CPU_INVALID) {
		if (cpu < 0 || (err = kp_kernel_check_cpu(k, (uint64_t)cpu)))
			return kp_error_prefix(err ? err : kp_error_create(KP_ERR_FORMAT, "not a CPU"),
					       "panic: panic_cpu is %" PRId64 " (at 0x%" PRIx64 "), neither a CPU nor PANIC_CPU_INVALID (-1)",
					       cpu, sym.address);
		p.panicked = true;
		p.cpu = (int)cpu;
	}
	struct log_cpu lc = { .found = false };
	// The log first: panicking_task() may need its "CPU: ..." line.
	if ((err = scan_log(k, &p, &lc)))
		return kp_error_prefix(err, "panic: the kernel log");
	if (p.panicked) {
		panicking_task(k, &p, &lc);
		stopped_cpus(k, &p);
	}
	uint64_t mask;
	bool have_mask = kp_symbol_find(k, "tainted_mask", &sym) &&
			 kp_ok(kp_read_u64(k, sym.address, &mask));
	if (have_mask) {
		p.tainted_mask = mask;
		p.has_tainted_mask = true;
		format_taint(k, &p);
	} else {
		snprintf(p.taint, sizeof(p.taint), "unknown (tainted_mask unreadable)");
	}
	if (no_panic_cpu && p.message[0] && lc.found &&
	    kp_ok(kp_kernel_check_cpu(k, (uint64_t)lc.cpu))) {
		p.from_log = true;
		p.panicked = true;
		p.cpu = lc.cpu;
		p.pid = lc.pid;
		memcpy(p.comm, lc.comm, sizeof(p.comm));
		task_by_pid(k, lc.cpu, lc.pid, &p);
		if (!have_mask)
			snprintf(p.taint, sizeof(p.taint), "%s", lc.taint);
	}
	p.kind = kp_lx_panic_kind(p.message, p.oops, p.panicked);
	const struct kp_vmcoreinfo *vi = kp_kernel_vmcoreinfo(k);
	int64_t t = 0;
	int ct = vi ? kp_vmcoreinfo_crash_time(vi, &t) : -1;
	p.has_crash_time = ct == 0;
	p.crash_time = ct == 0 ? t : 0;
	p.crash_time_invalid = ct > 0;
	if (!kp_out_copy(ret, &p, sizeof(p)))
		return kp_error_create(KP_ERR_INVALID, "struct kp_panic: sz not set (use KP_INIT)");
	return NULL;
}
