// SPDX-License-Identifier: MIT
// kpeek panic: why the kernel stopped (crash's `sys` panic lines).
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "output.h"

static void usage(void)
{
	printf("Usage: kpeek [-c CORE] panic [--json]\n"
	       "Says why the kernel stopped: the panic message and the record that led\n"
	       "to it (\"BUG: ...\", \"Oops: ...\", \"sysrq: Trigger a crash\") from the kernel\n"
	       "log, the panicking CPU (panic_cpu), the task current on it, the printk\n"
	       "time of the panic (seconds since boot), the crash time of a kdump vmcore\n"
	       "(VMCOREINFO CRASHTIME), the other CPUs kdump stopped (their registers in\n"
	       "crash_notes), the taint flags as the kernel prints them, and the registers\n"
	       "of the panicking CPU at the crash (kdump's crash notes, a QEMU dump's CPU\n"
	       "note: for a QEMU dump of a kernel stopped in panic(), where it was then).\n"
	       "A kernel that did not panic is said to be running.\n"
	       "\n"
	       "Exit status: 0 success (a kernel that did not panic too), 2 an error (one\n"
	       "line on stderr says what and where), a usage error or output that could not\n"
	       "be written.\n"
	       "\n"
	       "Options:\n"
	       "  -j, --json   {\"panicked\", \"cpu\", \"message\", \"oops\", \"kind\", \"uptime\",\n"
	       "               \"crash_time\", \"crash_time_invalid\",\n"
	       "               \"task\": {\"address\", \"pid\", \"comm\"},\n"
	       "               \"taint\", \"tainted_mask\", \"cpus_stopped\": [CPU...],\n"
	       "               \"cpus_stopped_count\", \"from_log\",\n"
	       "               \"registers\": {\"name\": \"0x...\"} of the panicking CPU}\n"
	       "  -h, --help   show this help\n"
	       "\n"
	       "Examples:\n"
	       "  kpeek -c vmcore panic\n"
	       "  kpeek -c vmcore panic --json\n");
}

// What panic prints besides struct kp_panic: its times as text, and the
// panicking CPU's registers at the crash (its crash note in a kdump vmcore,
// QEMU's CPU note in a QEMU dump): the first frame of its stack.
struct panic_view {
	char uptime[32], when[64];
	struct kp_stack *st;
	const struct kp_frame *f0;
};

static void view(struct kp_kernel *k, const struct kp_panic *p, struct panic_view *v)
{
	if (p->ts_nsec)
		cli_seconds(p->ts_nsec, v->uptime, sizeof(v->uptime));
	if (p->has_crash_time) {
		time_t t = (time_t)p->crash_time;
		struct tm tm;
		if (gmtime_r(&t, &tm))
			strftime(v->when, sizeof(v->when), "%Y-%m-%d %H:%M:%S UTC", &tm);
	}
	if (p->panicked) {
		const struct kp_frame *fr;
		struct kp_error *serr = kp_stack_cpu_create(k, p->cpu, &v->st);
		kp_error_destroy(serr);
		if (!serr && kp_stack_frames(v->st, &fr) && (fr[0].flags & KP_FRAME_REGS) && fr[0].nregs)
			v->f0 = &fr[0];
	}
}

// The CPU list "1,3-5" as [1, 3, 4, 5] (JSON lists are arrays, also when
// empty); the count says how many there were where the list was cut (",...").
static void cpus_stopped(struct out *o, const struct kp_panic *p)
{
	out_begin_list(o, "cpus_stopped");
	for (const char *s = p->cpus_stopped; *s && *s != '.';) {
		char *end;
		unsigned long a = strtoul(s, &end, 10), b = a;
		if (end == s)
			break;
		if (*end == '-')
			b = strtoul(end + 1, &end, 10);
		for (unsigned long c = a; c <= b && c - a < 8192; c++)
			out_kv_uint(o, NULL, c);
		s = *end == ',' ? end + 1 : end;
	}
	out_end_list(o);
	out_kv_int(o, "cpus_stopped_count", p->ncpus_stopped);
}

static void json_panic(struct out *o, const struct kp_panic *p, const struct panic_view *v)
{
	out_kv_bool(o, "panicked", p->panicked);
	out_kv_int_known(o, "cpu", p->panicked, p->cpu);
	out_kv_str(o, "message", p->message[0] ? p->message : NULL);
	out_kv_str(o, "oops", p->oops[0] ? p->oops : NULL);
	out_kv_str(o, "kind", kp_panic_kind_name(p->kind));
	out_kv_json(o, "uptime", v->uptime[0] ? v->uptime : "null", NULL);
	out_kv_int_known(o, "crash_time", p->has_crash_time, p->crash_time);
	out_kv_bool(o, "crash_time_invalid", p->crash_time_invalid);
	if (p->has_task) {
		out_begin_object(o, "task");
		out_kv_hex_known(o, "address", p->task != 0, p->task);
		out_kv_int(o, "pid", p->pid);
		out_kv_str(o, "comm", p->comm);
		out_end_object(o);
	} else {
		out_kv_str(o, "task", NULL);
	}
	out_kv_str(o, "task_error", p->task_error[0] ? p->task_error : NULL);
	out_kv_str(o, "taint", p->taint);
	out_kv_hex_known(o, "tainted_mask", p->has_tainted_mask, p->tainted_mask);
	cpus_stopped(o, p);
	out_kv_bool(o, "from_log", p->from_log);
	if (v->f0)
		out_regs(o, "registers", v->f0->nregs, v->f0->regs, v->f0->reg_names);
	else
		out_kv_str(o, "registers", NULL);
}

static void text_panic(struct out *o, const struct kp_panic *p, const struct panic_view *v)
{
	if (!p->panicked && !p->message[0]) {
		out_text(o, "no panic: panic_cpu is unset and the kernel log has no panic message\n");
		out_text(o, "taint:      %s\n", p->taint);
		return;
	}
	out_text(o, "panic:      %s\n", p->message[0] ? p->message
			     : p->oops[0] ? "(none: the oops below went to kdump before panic())"
			     : "(no panic message in the kernel log)");
	if (p->oops[0])
		out_text(o, "oops:       %s\n", p->oops);
	out_text(o, "kind:       %s\n", kp_panic_kind_name(p->kind));
	if (p->panicked)
		out_text(o, "cpu:        %d%s\n", p->cpu,
			 p->from_log ? " (from the kernel log: no panic_cpu in kallsyms)" : "");
	else
		out_text(o, "cpu:        unknown (panic_cpu is unset)\n");
	if (p->has_task && !p->task_error[0])
		out_text(o, "task:       PID %d (%s) at 0x%" PRIx64 "\n", p->pid, p->comm, p->task);
	else if (p->has_task)
		out_text(o, "task:       PID %d (%s), from the kernel log: %s\n", p->pid, p->comm, p->task_error);
	else if (p->task_error[0])
		out_text(o, "task:       unknown: %s\n", p->task_error);
	if (p->ncpus_stopped)
		out_text(o, "stopped:    CPU %s (registers saved in crash_notes: bt -a)\n", p->cpus_stopped);
	if (v->uptime[0])
		out_text(o, "uptime:     %s s (printk time of the %s)\n", v->uptime,
			 p->message[0] ? "panic message" : "oops");
	out_text(o, "crash time: %s\n", v->when[0] ? v->when : p->crash_time_invalid ?
		 "invalid (VMCOREINFO's CRASHTIME is not a time between 1970 and 9999)" :
		 "unknown (no CRASHTIME in VMCOREINFO: not a kdump vmcore)");
	out_text(o, "taint:      %s\n", p->taint);
	if (v->f0) {
		out_text(o, "registers:  CPU %d at the crash (%s):\n", p->cpu, kp_stack_origin(v->st));
		out_regs(o, NULL, v->f0->nregs, v->f0->regs, v->f0->reg_names);
	}
}

int cmd_panic(struct cli *cli, int argc, char **argv)
{
	int opt_status = cli_json_help_options(cli, "panic", argc, argv, usage);
	if (opt_status >= 0)
		return opt_status;
	if (optind < argc)
		return cli_usage_error("panic", "unexpected argument '%s'", argv[optind]);
	struct kp_kernel *k = cli_kernel(cli);
	if (!k)
		return CLI_EXIT_ERROR;
	KP_INIT(kp_panic, p);
	struct kp_error *err = kp_panic_get(k, &p);
	if (err)
		return cli_error(err);
	struct panic_view v = { .st = NULL };
	view(k, &p, &v);
	struct out *o = out_create(cli->json);
	if (out_is_json(o))
		json_panic(o, &p, &v);
	else
		text_panic(o, &p, &v);
	kp_stack_destroy(v.st);
	out_destroy(o);
	return 0;
}
