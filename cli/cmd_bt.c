// SPDX-License-Identifier: MIT
// kpeek bt: kernel stack traces (crash's bt, foreach bt).
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "output.h"

static void usage(void)
{
	printf("Usage: kpeek [-c CORE] bt [PID|0xTASK...] [-a | --all] [--json]\n"
	       "Kernel stack traces, innermost frame first, one line per frame:\n"
	       "  #N [SP] function+offset/size [module]\n"
	       "with the registers of exception and interrupt frames and of the entry\n"
	       "from user mode. Without arguments: the task that panicked (a crash dump).\n"
	       "A task running on a CPU is unwound from that CPU's registers in the dump\n"
	       "(its notes); any other task from where the scheduler switched it out.\n"
	       "No debuginfo is needed: x86-64 unwinds with the kernel's own ORC tables\n"
	       "read from memory, arm64 follows the frame records (x29) its kernels\n"
	       "always keep. Live (/proc/kcore) only sleeping tasks can be unwound.\n"
	       "Return addresses are shown as the kernel's stack traces show them\n"
	       "(%%pB: the symbol of the call, not of what follows it).\n"
	       "\n"
	       "Exit status: 0 every stack followed to its end, 2 a stack that was not (its\n"
	       "last line says why: corrupt frame, unreadable memory, runaway stack), a task\n"
	       "that could not be unwound, another error (one line on stderr), a usage error\n"
	       "or output that could not be written.\n"
	       "\n"
	       "Options:\n"
	       "  -a           the task on each CPU, from the CPU's registers (crash's bt -a)\n"
	       "      --all    every thread (crash's foreach bt); running ones live are listed\n"
	       "               as such, not unwound\n"
	       "  -j, --json   {\"stacks\": [{\"pid\", \"tid\", \"comm\", \"task\", \"cpu\",\n"
	       "               \"origin\", \"frames\": [{\"pc\", \"sp\", \"symbol\", \"offset\",\n"
	       "               \"size\", \"module\", \"exact\", \"reliable\", \"user\",\n"
	       "               \"regs\"}], \"end\", \"complete\"}]}; a stack that could not\n"
	       "               be unwound has \"error\" instead of \"origin\" to \"complete\";\n"
	       "               pid, tid, comm and task null when unknown\n"
	       "  -h, --help   show this help\n"
	       "\n"
	       "Examples:\n"
	       "  kpeek -c vmcore bt\n"
	       "  kpeek -c vmcore bt -a\n"
	       "  kpeek bt 1 $(pidof sshd)\n"
	       "  kpeek -c vmcore bt --all --json\n");
}

// What a stack is headed with.
struct who {
	uint64_t task;
	int32_t pid, tgid;
	char comm[64];
	bool known;
	int32_t cpu;		// where it ran last (ps's CPU), -1 if unknown
};

static bool ok(struct kp_error *err)
{
	kp_error_destroy(err);
	return !err;
}

static void print_regs(struct out *o, const struct kp_frame *f)
{
	// No address: the registers are the dump note's, of a CPU that was
	// in user mode when it was stopped.
	if (!f->regs_address)
		out_text(o, "    in user mode, registers from the CPU's note:\n");
	else
		out_text(o, "    %s at 0x%" PRIx64 ":\n",
			 f->flags & KP_FRAME_USER ? "entered from user mode, registers" :
			 "exception frame, registers", f->regs_address);
	if (!f->nregs) {
		out_text(o, "    (only pc and sp saved: pc 0x%" PRIx64 " sp 0x%" PRIx64 ")\n", f->pc, f->sp);
		return;
	}
	out_regs(o, NULL, f->nregs, f->regs, f->reg_names);
}

// The pid, tid and comm of the task (JSON), null when it could not be read
// (the task a CPU ran, whose task_struct the dump lacks).
static void json_who(struct out *o, const struct who *w)
{
	out_kv_int_known(o, "pid", w->known, w->tgid);
	out_kv_int_known(o, "tid", w->known, w->pid);
	out_kv_str(o, "comm", w->known ? w->comm : NULL);
}

static void json_stack(struct kp_kernel *k, struct out *o, const struct who *w,
		       const struct kp_stack *st)
{
	const struct kp_frame *fr;
	size_t n = kp_stack_frames(st, &fr);
	bool complete;
	const char *end = kp_stack_end(st, &complete);
	int cpu = kp_stack_cpu(st);
	out_begin_object(o, NULL);
	json_who(o, w);
	// 0: the unwinder could not tell which task the CPU ran.
	out_kv_hex_known(o, "task", kp_stack_task(st) != 0, kp_stack_task(st));
	if (cpu >= 0)
		out_kv_int(o, "cpu", cpu);
	else
		out_kv_str(o, "cpu", NULL);
	out_kv_str(o, "origin", kp_stack_origin(st));
	out_begin_list(o, "frames");
	for (size_t i = 0; i < n; i++)
		cli_frame_json(k, o, &fr[i]);
	out_end_list(o);
	out_kv_str(o, "end", end);
	out_kv_bool(o, "complete", complete);
	out_end_object(o);
}

static void text_stack(struct kp_kernel *k, struct out *o, const struct who *w,
		       const struct kp_stack *st)
{
	const struct kp_frame *fr;
	size_t n = kp_stack_frames(st, &fr);
	bool complete;
	const char *end = kp_stack_end(st, &complete);
	int cpu = kp_stack_cpu(st);
	int shown = cpu >= 0 ? cpu : w->cpu;
	char cpus[16] = "?";
	if (shown >= 0)
		snprintf(cpus, sizeof(cpus), "%d", shown);
	if (w->known)
		out_text(o, "PID: %-7d TASK: %016" PRIx64 "  CPU: %-3s COMMAND: \"%s\"%s\n", w->pid,
			 w->task, cpus, w->comm, cpu >= 0 ? "  (running)" : "");
	else
		out_text(o, "TASK: %016" PRIx64 "  CPU: %d\n", kp_stack_task(st), cpu);
	out_text(o, "  (%s)\n", kp_stack_origin(st));
	for (size_t i = 0; i < n; i++) {
		const struct kp_frame *f = &fr[i];
		if (f->flags & KP_FRAME_USER) {
			print_regs(o, f);
			continue;
		}
		char name[320];
		cli_frame_name(k, f, name, sizeof(name));
		out_text(o, "%s#%-2zu [%016" PRIx64 "] %s%s\n", i < 10 ? " " : "", i, f->sp,
			 f->flags & KP_FRAME_UNRELIABLE ? "? " : "", name);
		if ((f->flags & KP_FRAME_REGS) && i > 0)
			print_regs(o, f);
	}
	out_text(o, "  -- %s%s\n", end, complete ? "" : " (incomplete)");
}

// A stack that could not be unwound: who it is (the CPU's for a CPU's
// stack, else -1) and why.
static void print_unwind_error(struct out *o, const struct who *w, int cpu, struct kp_error *err)
{
	if (out_is_json(o)) {
		out_begin_object(o, NULL);
		json_who(o, w);
		// A CPU's stack names no task before it is unwound: null.
		out_kv_hex_known(o, "task", w->task != 0, w->task);
		out_kv_int_known(o, "cpu", cpu >= 0, cpu);
		out_kv_str(o, "error", kp_error_message(err));
		out_end_object(o);
	} else if (w->known) {
		out_text(o, "PID: %-7d TASK: %016" PRIx64 "  COMMAND: \"%s\"\n  -- %s\n", w->pid,
			 w->task, w->comm, kp_error_message(err));
	} else {
		out_text(o, "  -- %s\n", kp_error_message(err));
	}
}

// pid, tgid, comm and CPU (as ps shows it) of the task at address task.
static bool task_of(struct kp_kernel *k, uint64_t task, struct who *w)
{
	static const char ts[] = "struct task_struct";
	uint64_t pid_off, tgid_off, comm_off, cpu_off, size;
	uint32_t pid, tgid, cpu;
	// The CPU it ran on last: thread_info.cpu (5.16+, THREAD_INFO_IN_TASK), else cpu.
	w->cpu = -1;
	if ((ok(kp_member_offset(k, ts, "thread_info.cpu", &cpu_off, &size)) ||
	     ok(kp_member_offset(k, ts, "cpu", &cpu_off, &size))) && size == 4 &&
	    ok(kp_read_u32(k, task + cpu_off, &cpu)))
		w->cpu = (int32_t)cpu;
	char comm[16];
	if (!ok(kp_member_offset(k, ts, "pid", &pid_off, &size)) || size != 4 ||
	    !ok(kp_member_offset(k, ts, "tgid", &tgid_off, &size)) || size != 4 ||
	    !ok(kp_member_offset(k, ts, "comm", &comm_off, &size)) || size < sizeof(comm) ||
	    !ok(kp_read_u32(k, task + pid_off, &pid)) ||
	    !ok(kp_read_u32(k, task + tgid_off, &tgid)) ||
	    !ok(kp_read(k, KP_VIRT, task + comm_off, comm, sizeof(comm))))
		return false;
	comm[sizeof(comm) - 1] = '\0';
	w->pid = (int32_t)pid;
	w->tgid = (int32_t)tgid;
	snprintf(w->comm, sizeof(w->comm), "%s", comm);
	return true;
}

// The threads of pids[] (tids) into whos[]; with all, every thread into
// *all_ret. Unreadable tasks are counted as ps counts them.
static struct kp_error *find_tasks(struct kp_kernel *k, bool all, const int32_t *pids,
				   struct who *whos, size_t n, struct who **all_ret,
				   size_t *nall_ret, bool *oom, struct cli_walk *walk)
{
	struct kp_task *t = NULL;
	size_t nt = 0;
	*oom = false;
	struct kp_error *err = cli_collect_tasks(k, true, &t, &nt, walk);
	if (err)
		return err;
	struct who *list = all ? malloc((nt ? nt : 1) * sizeof(*list)) : NULL;
	if (all && !list) {
		*oom = true;
		free(t);
		return NULL;
	}
	for (size_t j = 0; j < nt; j++) {
		struct who w = { t[j].address, t[j].pid, t[j].tgid, "", true, t[j].cpu };
		snprintf(w.comm, sizeof(w.comm), "%s", t[j].name);
		for (size_t i = 0; i < n; i++)
			if (!whos[i].known && pids[i] == t[j].pid)
				whos[i] = w;
		if (all)
			list[j] = w;
	}
	free(t);
	*all_ret = list;
	*nall_ret = all ? nt : 0;
	return NULL;
}

// What bt was asked for and found: the tasks named (by PID or task
// address), every thread (--all), each CPU (-a) or the panicking CPU.
struct bt {
	struct kp_kernel *k;
	bool cpus, all;
	size_t nargs;		// tasks named
	int32_t *pids;		// [nargs]: by PID where addrs[i] is 0
	uint64_t *addrs;	// [nargs]: by task address, else 0
	struct who *whos;	// [nargs]: the tasks named, found
	struct who *list;	// --all: every thread
	size_t nlist;
	struct cli_walk walk;	// how the walk of the task list ended
	int panic_cpu;		// the CPU to unwind when nothing was named, else -1
	size_t count;		// stacks to print
};

// Options and arguments: -1 to go on, else the exit status.
static int parse_args(struct cli *cli, int argc, char **argv, struct bt *b)
{
	static const struct option opts[] = {
		{ "all", no_argument, NULL, 'A' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":ajh", opts, NULL)) != -1) {
		switch (c) {
		case 'a': b->cpus = true; break;
		case 'A': b->all = true; break;
		case 'j': cli->json = true; break;
		case 'h': usage(); return 0;
		default: return cli_bad_option("bt", c, argv);
		}
	}
	b->nargs = (size_t)(argc - optind);
	if ((b->cpus || b->all) && b->nargs)
		return cli_usage_error("bt", "-a and --all take no task arguments");
	if (b->cpus && b->all)
		return cli_usage_error("bt", "-a and --all exclude each other");
	size_t n = b->nargs ? b->nargs : 1;
	b->pids = calloc(n, sizeof(*b->pids));
	b->whos = calloc(n, sizeof(*b->whos));
	b->addrs = calloc(n, sizeof(*b->addrs));
	if (!b->pids || !b->whos || !b->addrs)
		return cli_fail("out of memory");
	for (size_t i = 0; i < b->nargs; i++) {
		const char *a = argv[optind + i];
		uint64_t v;
		if (!strncmp(a, "0x", 2) && cli_parse_number(a, &v))
			b->addrs[i] = v;
		else if (cli_parse_number(a, &v) && v <= INT32_MAX)
			b->pids[i] = (int32_t)v;
		else
			return cli_usage_error("bt", "'%s' is neither a PID nor a task address (0x...)", a);
	}
	return -1;
}

// The tasks named by PID (and every thread with --all), the panicking CPU
// when nothing was named, and how many stacks that makes: 0 or the exit
// status after saying why not.
static int find_stacks(struct bt *b)
{
	struct kp_error *err = NULL;
	bool need_tasks = b->all, oom = false;
	for (size_t i = 0; i < b->nargs; i++)
		need_tasks |= !b->addrs[i];
	if (need_tasks && (err = find_tasks(b->k, b->all, b->pids, b->whos, b->nargs, &b->list,
					    &b->nlist, &oom, &b->walk)))
		return cli_error_prefix(err, "bt: the task list");
	if (oom)
		return cli_fail("out of memory");
	for (size_t i = 0; i < b->nargs; i++) {
		if (b->addrs[i])
			b->whos[i].task = b->addrs[i];
		else if (!b->whos[i].known)
			return cli_fail("bt: no task with PID %d", b->pids[i]);
	}
	b->panic_cpu = -1;
	if (!b->nargs && !b->cpus && !b->all) {
		KP_INIT(kp_panic, p);
		if ((err = kp_panic_get(b->k, &p)))
			return cli_error_prefix(err, "bt");
		if (!p.panicked)
			return cli_fail("bt: the kernel did not panic (panic_cpu is unset): name a PID or task, or use -a or --all");
		b->panic_cpu = p.cpu;
	}
	b->count = b->all ? b->nlist : b->nargs ? b->nargs : 1;
	if (b->cpus) {
		// Only here: the info counts module symbols, which it loads.
		KP_INIT(kp_kernel_info, info);
		kp_kernel_get_info(b->k, &info);
		b->count = (size_t)info.ncpus;
	}
	if (b->cpus && !b->count)
		return cli_fail("bt -a: the source has no CPU registers (no CPU notes: live, or a raw memory image)");
	if ((err = kp_stack_prepare(b->k)))
		return cli_error_prefix(err, "bt");
	return 0;
}

// Prints stack i: 0, or 1 when it is incomplete or cannot be unwound. When
// it was the only stack asked for, its error is the command's: *err_ret,
// said on stderr after the output.
static int print_one(struct bt *b, struct out *o, size_t i, struct kp_error **err_ret)
{
	struct kp_stack *st = NULL;
	struct who w = { 0, 0, 0, "", false, -1 };
	struct kp_error *err;
	if (b->all)
		w = b->list[i];
	else if (b->nargs)
		w = b->whos[i];
	int cpu = b->cpus ? (int)i : b->panic_cpu;
	if (cpu >= 0)
		err = kp_stack_cpu_create(b->k, cpu, &st);
	else
		err = kp_stack_task_create(b->k, w.task, &st);
	if (!out_is_json(o) && i > 0)
		out_text(o, "\n");
	if (err) {
		print_unwind_error(o, &w, cpu, err);
		// Running tasks of a live kernel have no registers to unwind.
		if (kp_error_code(err) == KP_ERR_UNSUPPORTED && b->all) {
			kp_error_destroy(err);
			return 0;
		}
		if (!b->all && !b->cpus && b->nargs <= 1) {
			*err_ret = err;
			return CLI_EXIT_ERROR;
		}
		kp_error_destroy(err);
		return CLI_EXIT_ERROR;
	}
	if (!w.known && kp_stack_task(st)) {
		// -a and the panicking CPU: name the task that was current.
		w.task = kp_stack_task(st);
		w.known = task_of(b->k, w.task, &w);
	}
	if (out_is_json(o))
		json_stack(b->k, o, &w, st);
	else
		text_stack(b->k, o, &w, st);
	bool complete;
	kp_stack_end(st, &complete);
	kp_stack_destroy(st);
	return complete ? 0 : CLI_EXIT_ERROR;
}

int cmd_bt(struct cli *cli, int argc, char **argv)
{
	struct bt b = { 0 };
	struct out *o = NULL;
	int status = parse_args(cli, argc, argv, &b);
	if (status >= 0)
		goto out;
	if (!(b.k = cli_kernel(cli)))
		status = CLI_EXIT_ERROR;
	else
		status = find_stacks(&b);
	if (status)
		goto out;
	o = out_create(cli->json);
	if (out_is_json(o))
		out_begin_list(o, "stacks");
	for (size_t i = 0; i < b.count; i++) {
		struct kp_error *err = NULL;
		if (print_one(&b, o, i, &err))
			status = CLI_EXIT_ERROR;
		if (err) {
			out_destroy(o);
			o = NULL;
			status = cli_error_prefix(err, "bt");
			goto out;
		}
	}
	if (out_is_json(o)) {
		out_end_list(o);
		if (b.all)
			cli_walk_json(o, &b.walk);
	}
	if (b.walk.err) {
		// As ps says it: the stacks shown are right, some are missing.
		out_flush(o);
		status = cli_error_prefix(b.walk.err, "incomplete: %" PRIu64 " error%s reading tasks, the first",
					  b.walk.st.left_out ? b.walk.st.left_out : 1,
					  b.walk.st.left_out > 1 ? "s" : "");
		b.walk.err = NULL;
	} else {
		out_flush(o);
		cli_walk_end("bt", "tasks", &b.walk);
	}
out:
	kp_error_destroy(b.walk.err);
	out_destroy(o);
	free(b.list);
	free(b.pids);
	free(b.whos);
	free(b.addrs);
	return status;
}
