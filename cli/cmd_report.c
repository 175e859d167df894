// SPDX-License-Identifier: MIT
// kpeek report: the triage a kernel engineer writes first about a dump (or
// the running system): the kernel, why it stopped, the stack, the log before
// it, memory and load, blocked tasks, modules, the rootkit checks; and the
// crash signature that groups a fleet's dumps (doc/signature.md).
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "output.h"
#include "report.h"

static void usage(void)
{
	printf("Usage: kpeek [-c CORE] report [--json] [--sections LIST] [--lines N]\n"
	       "                         [--signature-only] [DUMP]\n"
	       "The first answers about a crash dump, in the order a kernel engineer asks\n"
	       "them, each section only where it has something to say: the kernel (release,\n"
	       "architecture, dump, crash time, uptime, taint flags with their meaning,\n"
	       "command line); why it stopped (the panic message, its kind, the CPU and\n"
	       "task, the crash signature); the panicking CPU's backtrace and what every\n"
	       "other CPU ran; the last log lines before the panic and the warnings and\n"
	       "oopses before them; memory and the processes with the most of it\n"
	       "resident, load and run queues; tasks in D state, where they wait and for\n"
	       "how long they have not run; modules\n"
	       "that taint the kernel; the rootkit checks in one line. DUMP is the same as\n"
	       "-c DUMP; without either, the running system (no panic sections).\n"
	       "\n"
	       "The signature (16 hex digits) is the same for the same bug on another\n"
	       "machine, boot or dump format: kind, message with numbers, addresses and\n"
	       "task names normalized away, and the first meaningful functions of the\n"
	       "crashing stack, hashed; doc/signature.md states the rules.\n"
	       "\n"
	       "Exit status: 0 a report (a check that found something is part of it), 1 with\n"
	       "--strict: a check found something, 2 an error: the dump could not be opened,\n"
	       "or a section could not be read (the report says why where the section would\n"
	       "be, and one line on stderr how many), a usage error or output that could not\n"
	       "be written.\n"
	       "\n"
	       "Options:\n"
	       "  -j, --json             one JSON document: {\"schema_version\", \"system\",\n"
	       "                         \"panic\", \"signature\", \"stack\", \"cpus\", \"log\",\n"
	       "                         \"memory\", \"blocked\", \"modules\", \"checks\"}\n"
	       "      --sections LIST    only these sections (comma-separated): system,\n"
	       "                         panic, stack, cpus, log, memory, blocked, modules,\n"
	       "                         checks\n"
	       "      --lines N          log lines before the panic (default 40)\n"
	       "      --signature-only   print the signature alone (\"none\" if the kernel\n"
	       "                         did not panic)\n"
	       "      --strict           exit 1 if a rootkit check found something\n"
	       "  -h, --help             show this help\n"
	       "\n"
	       "Examples:\n"
	       "  kpeek report vmcore\n"
	       "  kpeek -c vmcore report --json --sections panic,stack\n"
	       "  kpeek report --signature-only vmcore   (doc/signature.md: a fleet's dumps)\n");
}

enum section { S_SYSTEM, S_PANIC, S_STACK, S_CPUS, S_LOG, S_MEMORY, S_BLOCKED, S_MODULES, S_CHECKS, S_N };
static const char *const section_names[S_N] = {
	"system", "panic", "stack", "cpus", "log", "memory", "blocked", "modules", "checks",
};

// NULL, or the first word of arg that names no section (its length in *len).
static const char *parse_sections(const char *arg, bool *want, int *len)
{
	memset(want, 0, S_N * sizeof(*want));
	for (const char *p = arg;; p++) {
		size_t l = strcspn(p, ",");
		int found = -1;
		for (int i = 0; i < S_N; i++)
			if (strlen(section_names[i]) == l && !strncmp(p, section_names[i], l))
				found = i;
		if (found < 0) {
			*len = (int)(l < 64 ? l : 64);
			return p;
		}
		want[found] = true;
		p += l;
		if (!*p)
			return NULL;
	}
}

// Documentation/admin-guide/tainted-kernels.rst, by bit (the letters are
// the kernel's own, read from taint_flags[] through the panic's "Tainted:").
static const char *const taint_meaning[] = {
	"proprietary module was loaded", "module was force loaded",
	"kernel running on an out of specification system", "module was force unloaded",
	"processor reported a machine check", "bad page referenced or unexpected page flags",
	"taint requested by userspace", "kernel died recently (an oops or BUG)",
	"ACPI table overridden by user", "kernel issued a warning", "staging driver was loaded",
	"workaround for a platform firmware bug", "externally-built (out-of-tree) module was loaded",
	"unsigned module was loaded", "soft lockup occurred", "kernel has been live patched",
	"auxiliary taint (distribution)", "kernel built with the struct randomization plugin",
	"an in-kernel test has been run", "userspace used a mutating debug operation (fwctl)",
};
#define NMEANINGS (sizeof(taint_meaning) / sizeof(taint_meaning[0]))

static void taint_flags(struct report *r)
{
	const struct kp_panic *p = &r->panic;
	const char *letters = strncmp(p->taint, "Tainted: ", 9) ? NULL : p->taint + 9;
	out_begin_list(r->o, "taint_flags");
	for (unsigned i = 0; p->has_tainted_mask && i < 64; i++) {
		if (!(p->tainted_mask >> i & 1))
			continue;
		char letter[2] = { letters && i < strlen(letters) ? letters[i] : '?', 0 };
		const char *meaning = i < NMEANINGS ? taint_meaning[i] : "unknown flag";
		if (out_is_json(r->o)) {
			out_begin_object(r->o, NULL);
			out_kv_int(r->o, "bit", i);
			out_kv_str(r->o, "letter", letter);
			out_kv_str(r->o, "meaning", meaning);
			out_end_object(r->o);
		} else {
			out_text(r->o, "           %s (bit %u): %s\n", letter, i, meaning);
		}
	}
	out_end_list(r->o);
}

// saved_command_line: char * (init/main.c).
static bool cmdline(struct kp_kernel *k, char *buf, size_t size)
{
	struct kp_symbol sym;
	uint64_t ptr;
	struct kp_error *err = NULL;
	bool ok = kp_symbol_find(k, "saved_command_line", &sym) &&
		  !(err = kp_read_u64(k, sym.address, &ptr)) && ptr &&
		  !(err = kp_read_cstr(k, ptr, buf, size));
	kp_error_destroy(err);
	return ok;
}

static void section_system(struct report *r)
{
	KP_INIT(kp_kernel_info, info);
	kp_kernel_get_info(r->k, &info);
	const struct kp_panic *p = &r->panic;
	char when[64] = "", uptime[32] = "", line[2048];
	if (p->has_crash_time) {
		time_t t = (time_t)p->crash_time;
		struct tm tm;
		if (gmtime_r(&t, &tm))
			strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S UTC", &tm);
	}
	if (p->ts_nsec)
		cli_seconds(p->ts_nsec, uptime, sizeof(uptime));
	bool has_cmdline = cmdline(r->k, line, sizeof(line));
	struct out *o = r->o;
	if (out_is_json(o)) {
		out_begin_object(o, "system");
		out_kv_str(o, "release", info.release);
		out_kv_str(o, "arch", info.arch);
		out_kv_str(o, "source", info.source_kind);
		out_kv_bool(o, "live", info.live);
		out_kv_int_known(o, "crash_time", p->has_crash_time, p->crash_time);
		out_kv_json(o, "uptime", uptime[0] ? uptime : "null", NULL);
		out_kv_str(o, "taint", p->taint[0] ? p->taint : NULL);
		out_kv_hex_known(o, "tainted_mask", p->has_tainted_mask, p->tainted_mask);
		taint_flags(r);
		out_kv_str(o, "cmdline", has_cmdline ? line : NULL);
		out_end_object(o);
		return;
	}
	out_text(o, "kernel:    %s %s, %s\n", info.release ? info.release : "(release unknown)",
		 info.arch, info.source_kind);
	if (when[0])
		out_text(o, "crashed:   %s\n", when);
	if (uptime[0])
		out_text(o, "uptime:    %s s at the %s\n", uptime, p->message[0] ? "panic" : "oops");
	out_text(o, "taint:     %s\n", p->taint[0] ? p->taint : "unknown (see panic below)");
	taint_flags(r);
	if (has_cmdline)
		out_text(o, "cmdline:   %s\n", line);
}

static void hex_signature(const struct kp_signature *sig, char buf[17])
{
	snprintf(buf, 17, "%016" PRIx64, sig->hash);
}

// The address an oops names in its first record (x86-64: "BUG: kernel NULL
// pointer dereference, address: 0000000000000000", "... page fault for
// address: ffff...", "... non-canonical address 0x...: "; arm64: "Unable to
// handle kernel ... at virtual address 0000000000000008").
static bool fault_address(const char *record, uint64_t *ret)
{
	const char *a = strstr(record, "address");
	if (!a)
		return false;
	a += strlen("address");
	a += strspn(a, ": ");
	if (!strncmp(a, "0x", 2))
		a += 2;
	char *end;
	unsigned long long v = strtoull(a, &end, 16);
	if (end == a || (*end && *end != ':' && *end != ' ' && *end != ','))
		return false;
	*ret = v;
	return true;
}

// The oops' faulting address and what kpeek can tell of it.
static void fault(struct report *r, const struct kp_signature *sig)
{
	uint64_t addr;
	struct out *o = r->o;
	bool known = r->panic.oops[0] && fault_address(sig->record, &addr);
	if (!known) {
		out_kv_str(o, "fault_address", NULL);
		out_begin_list(o, "fault_address_is");
		out_end_list(o);
		return;
	}
	out_kv_hex(o, "fault_address", addr);
	struct kp_whatis *w = NULL;
	struct kp_error *err = addr >= 4096 ? kp_whatis_create(r->k, KP_VIRT, addr, &w) : NULL;
	out_text(o, "address:   0x%" PRIx64 "%s\n", addr,
		 addr < 4096 ? " (a NULL pointer plus an offset)" : w && !w->nfacts ? ": nothing kpeek knows is there" :
		 err ? "" : ":");
	out_begin_list(o, "fault_address_is");
	for (size_t i = 0; w && i < w->nfacts; i++)
		cli_whatis_fact(o, r->k, &w->facts[i]);
	out_end_list(o);
	if (err)
		out_text(o, "           (what it is could not be read: %s)\n", kp_error_message(err));
	kp_error_destroy(err);
	kp_whatis_destroy(w);
}

static void section_panic(struct report *r, const struct kp_signature *sig)
{
	const struct kp_panic *p = &r->panic;
	struct out *o = r->o;
	char hex[17];
	hex_signature(sig, hex);
	bool show_sig = sig->kind != KP_PANIC_NONE;
	if (out_is_json(o)) {
		out_begin_object(o, "panic");
		out_kv_str(o, "message", p->message[0] ? p->message : NULL);
		out_kv_str(o, "kind", kp_panic_kind_name(p->kind));
		out_kv_str(o, "record", p->oops[0] ? sig->record : NULL);
		out_kv_int_known(o, "cpu", p->panicked, p->cpu);
		if (p->has_task) {
			out_begin_object(o, "task");
			out_kv_int(o, "pid", p->pid);
			out_kv_str(o, "comm", p->comm);
			out_kv_hex_known(o, "address", p->task != 0, p->task);
			out_end_object(o);
		} else {
			out_kv_str(o, "task", NULL);
		}
		out_kv_str(o, "task_error", p->task_error[0] ? p->task_error : NULL);
		fault(r, sig);
		out_end_object(o);
		out_kv_str(o, "signature", show_sig ? hex : NULL);
		out_begin_object(o, "signature_input");
		out_kv_str(o, "kind", kp_panic_kind_name(sig->kind));
		out_kv_str(o, "title", show_sig ? sig->title : NULL);
		out_begin_list(o, "frames");
		for (unsigned i = 0; i < sig->nframes; i++)
			out_kv_str(o, NULL, sig->frames[i]);
		out_end_list(o);
		out_kv_str(o, "no_stack", sig->no_stack ? sig->stack_error : NULL);
		out_end_object(o);
		return;
	}
	if (p->kind == KP_PANIC_NONE) {
		out_text(o, "panic:     none (panic_cpu is unset and the log has no panic)\n");
		return;
	}
	if (p->message[0])
		out_text(o, "panic:     %s\n", p->message);
	if (p->oops[0])
		out_text(o, "record:    %s\n", sig->record);	// the oops' first record
	out_text(o, "kind:      %s\n", kp_panic_kind_name(p->kind));
	if (p->panicked && p->has_task)
		out_text(o, "cpu:       %d, PID %d (%s)%s\n", p->cpu, p->pid, p->comm,
			 p->task_error[0] ? ", from the kernel log" : "");
	else if (p->panicked)
		out_text(o, "cpu:       %d\n", p->cpu);
	if (p->panicked && p->task_error[0])
		out_text(o, "           (its task cannot be read: %s)\n", p->task_error);
	fault(r, sig);
	if (!show_sig)
		return;
	out_text(o, "signature: %s (%s | %s |", hex, kp_panic_kind_name(sig->kind), sig->title);
	for (unsigned i = 0; i < sig->nframes; i++)
		out_text(o, " %s", sig->frames[i]);
	out_text(o, "%s)\n", sig->no_stack ? " no stack" : "");
	if (sig->no_stack)
		out_text(o, "           (without frames: %s)\n", sig->stack_error);
}

void report_problem(struct report *r, const char *section, struct kp_error *err)
{
	r->problems++;
	if (out_is_json(r->o))
		out_kv_str(r->o, "error", kp_error_message(err));
	else
		out_text(r->o, "%-10s (could not be read: %s)\n", section, kp_error_message(err));
	kp_error_destroy(err);
}

struct report_args {
	bool want[S_N];
	bool signature_only;
	bool strict;	// --strict: a check's finding is exit 1
	unsigned lines;
};

static int parse_args(struct cli *cli, int argc, char **argv, struct report_args *a)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "sections", required_argument, NULL, 's' },
		{ "lines", required_argument, NULL, 'n' },
		{ "signature-only", no_argument, NULL, 'S' },
		{ "strict", no_argument, NULL, 'T' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	for (int i = 0; i < S_N; i++)
		a->want[i] = true;
	a->lines = 40;
	int c;
	uint64_t v;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "jh", opts, NULL)) != -1) {
		switch (c) {
		case 'j':
			cli->json = true;
			break;
		case 's': {
			int l;
			const char *bad = parse_sections(optarg, a->want, &l);
			if (bad)
				return cli_usage_error("report", "--sections: '%.*s' is not a section (system, panic, stack, cpus, log, memory, blocked, modules, checks)",
						       l, bad);
			break;
		}
		case 'n':
			if (!cli_parse_number(optarg, &v) || v > 100000)
				return cli_usage_error("report", "--lines: '%s' is not a number up to 100000", optarg);
			a->lines = (unsigned)v;
			break;
		case 'S':
			a->signature_only = true;
			break;
		case 'T':
			a->strict = true;
			break;
		case 'h':
			usage();
			return 0;
		default:
			return cli_bad_option("report", c, argv);
		}
	}
	if (optind < argc && cli->open.ncores)
		return cli_usage_error("report", "a DUMP operand ('%s') and -c together", argv[optind]);
	if (optind + 1 < argc)
		return cli_usage_error("report", "unexpected argument '%s'", argv[optind + 1]);
	if (optind < argc) {
		cli->cores[0] = argv[optind];
		cli->open.core = cli->cores[0];
		cli->open.cores = cli->cores;
		cli->open.ncores = 1;
	}
	return -1;
}

int cmd_report(struct cli *cli, int argc, char **argv)
{
	struct report_args a = { .signature_only = false };
	int status = parse_args(cli, argc, argv, &a);
	if (status >= 0)
		return status;
	struct kp_kernel *k = cli_kernel(cli);
	if (!k)
		return CLI_EXIT_ERROR;
	struct report r = { .k = k, .log_lines = a.lines };
	r.panic.sz = sizeof(r.panic);
	// A log that cannot be read leaves the panic unknown, not the report.
	struct kp_error *perr = kp_panic_get(k, &r.panic);
	KP_INIT(kp_signature, sig);
	if (!perr && (perr = kp_signature_get(k, &r.panic, &sig)))
		memset(&r.panic, 0, sizeof(r.panic));
	if (a.signature_only) {
		char hex[17];
		hex_signature(&sig, hex);
		if (perr)
			return cli_error_prefix(perr, "report: the signature");
		printf("%s\n", sig.kind == KP_PANIC_NONE ? "none" : hex);
		return 0;
	}
	r.o = out_create(cli->json);
	out_text_only(r.o);
	r.live = !cli->open.ncores && !cli->open.core;
	out_kv_int(r.o, "schema_version", 1);
	bool first = !a.want[S_SYSTEM] && !(a.want[S_PANIC] && !r.live);
	if (a.want[S_SYSTEM])
		section_system(&r);
	if (a.want[S_PANIC] && !r.live && perr) {
		out_begin_object(r.o, "panic");
		report_problem(&r, "panic:", perr);
		out_end_object(r.o);
	} else if (a.want[S_PANIC] && !r.live) {
		section_panic(&r, &sig);
	} else {
		kp_error_destroy(perr);
	}
	void (*const sections[])(struct report *) = {
		[S_STACK] = report_stack, [S_CPUS] = report_cpus, [S_LOG] = report_log,
		[S_MEMORY] = report_memory, [S_BLOCKED] = report_blocked,
		[S_MODULES] = report_modules, [S_CHECKS] = report_checks,
	};
	for (int i = S_STACK; i < S_N; i++) {
		if (!a.want[i] || (i == S_STACK && (r.live || !r.panic.panicked)))
			continue;
		if (!first)
			out_text(r.o, "\n");	// a blank line between sections
		first = false;
		sections[i](&r);
	}
	out_destroy(r.o);
	if (r.problems)
		return cli_fail("report: %u section%s could not be read (the report says why)", r.problems,
				r.problems == 1 ? "" : "s");
	return a.strict && r.found ? CLI_EXIT_FINDING : 0;
}
