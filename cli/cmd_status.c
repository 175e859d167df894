// SPDX-License-Identifier: MIT
// kpeek status PID...: who a process is, as /proc/PID/status, /proc/PID/ns
// and /proc/PID/cgroup show it.
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "output.h"

static void usage(void)
{
	printf("Usage: kpeek [-c CORE] status [--json] PID...\n"
	       "Prints the lines of /proc/PID/status kpeek knows from the dump, in the\n"
	       "kernel's order and format (Name, Umask, State, Tgid, Pid, PPid,\n"
	       "TracerPid, Uid, Gid, FDSize, Groups, NStgid, NSpid, NSpgid, NSsid,\n"
	       "VmPeak..VmSwap (a process's memory, from the kernel's own counters; on\n"
	       "6.2..6.15, whose /proc leaves out their per-CPU parts, VmRSS and the\n"
	       "Rss lines can be a little higher than /proc's), Threads, SigPnd, ShdPnd, SigBlk, SigIgn, SigCgt, CapInh, CapPrm, CapEff,\n"
	       "CapBnd, CapAmb, NoNewPrivs, Seccomp, Seccomp_filters and the context\n"
	       "switch counts), then its namespaces as the links of /proc/PID/ns show\n"
	       "them (\"ns/mnt:\tmnt:[4026531841]\") and its cgroup v2 line as\n"
	       "/proc/PID/cgroup shows it (\"cgroup:\t0::/user.slice\"). IDs are those\n"
	       "of the initial namespaces. With several PIDs each block starts with\n"
	       "\"PID:\".\n"
	       "\n"
	       "Exit status: 0 success, 2 an error for one of the PIDs (one line on stderr\n"
	       "each), a usage error or output that could not be written.\n"
	       "\n"
	       "Options:\n"
	       "  -j, --json   {\"pid\": N, \"status\": {\"Name\": .., \"Umask\": 18,\n"
	       "               \"Uid\": [4 numbers], \"Groups\": [..], \"NStgid\": [..],\n"
	       "               \"CapEff\": \"0x1ffffffffff\", ..., \"ns\": {\"mnt\": INODE, ..},\n"
	       "               \"cgroup\": \"/..\"}} (Umask a number, the signal and\n"
	       "               capability sets \"0x\" hex strings; a list of those\n"
	       "               objects under \"processes\" with several PIDs)\n"
	       "  -h, --help   show this help\n"
	       "\n"
	       "Examples:\n"
	       "  kpeek -c vmcore status 1\n"
	       "  kpeek status --json $$\n");
}

// get_task_state()'s strings (fs/proc/array.c task_state_array); NULL for
// another letter.
static const char *state_name(char c)
{
	static const char *const names[] = {
		"R (running)", "S (sleeping)", "D (disk sleep)", "T (stopped)", "t (tracing stop)",
		"X (dead)", "Z (zombie)", "P (parked)", "I (idle)",
	};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (names[i][0] == c)
			return names[i];
	return NULL;
}

// A list of IDs: text "\t1\t2" (NStgid) or JSON numbers.
static void ids(struct out *o, const char *key, const int32_t *v, uint32_t n)
{
	if (out_is_json(o)) {
		out_begin_list(o, key);
		for (uint32_t i = 0; i < n; i++)
			out_kv_int(o, NULL, v[i]);
		out_end_list(o);
		return;
	}
	out_text(o, "%s:", key);
	for (uint32_t i = 0; i < n; i++)
		out_text(o, "\t%d", v[i]);
	out_text(o, "\n");
}

// Text: "Key:\tvalue"; JSON: "Key": number.
static void num(struct out *o, const char *key, int64_t v)
{
	if (out_is_json(o))
		out_kv_int(o, key, v);
	else
		out_text(o, "%s:\t%" PRId64 "\n", key, v);
}

static void str(struct out *o, const char *key, const char *v)
{
	if (out_is_json(o))
		out_kv_str(o, key, v);
	else
		out_text(o, "%s:\t%s\n", key, v);
}

// A capability or signal set: 16 hex digits as /proc in text; in JSON the
// "0x" hex string every kpeek document uses for masks and addresses.
static void set(struct out *o, const char *key, uint64_t v)
{
	char buf[17];
	snprintf(buf, sizeof(buf), "%016" PRIx64, v);
	if (out_is_json(o))
		out_kv_hex(o, key, v);
	else
		str(o, key, buf);
}

static void creds(struct out *o, const struct kp_task_status *st)
{
	const char *keys[2] = { "Uid", "Gid" };
	const uint32_t *v[2] = { st->uid, st->gid };
	for (int i = 0; i < 2; i++) {
		if (out_is_json(o)) {
			out_begin_list(o, keys[i]);
			for (int j = 0; j < 4; j++)
				out_kv_uint(o, NULL, v[i][j]);
			out_end_list(o);
		} else {
			out_text(o, "%s:\t%u\t%u\t%u\t%u\n", keys[i], v[i][0], v[i][1], v[i][2], v[i][3]);
		}
	}
	num(o, "FDSize", st->fd_size);
	// task_state(): each group, space-separated, then one more space.
	if (out_is_json(o)) {
		out_begin_list(o, "Groups");
		for (uint32_t i = 0; i < st->ngroups; i++)
			out_kv_uint(o, NULL, st->groups[i]);
		out_end_list(o);
	} else {
		out_text(o, "Groups:\t");
		for (uint32_t i = 0; i < st->ngroups; i++)
			out_text(o, "%s%u", i ? " " : "", st->groups[i]);
		out_text(o, " \n");
	}
}

static void namespaces(struct out *o, const struct kp_task_status *st)
{
	if (out_is_json(o))
		out_begin_object(o, "ns");
	for (int i = 0; i < KP_NS_COUNT; i++) {
		if (!st->ns[i])
			continue;
		if (out_is_json(o))
			out_kv_uint(o, kp_ns_name(i), st->ns[i]);
		else
			out_text(o, "ns/%s:\t%s:[%" PRIu64 "]\n", kp_ns_name(i), kp_ns_type(i), st->ns[i]);
	}
	if (out_is_json(o))
		out_end_object(o);
	if (out_is_json(o))
		out_kv_str(o, "cgroup", st->cgroup);
	else if (st->cgroup)
		out_text(o, "cgroup:\t0::%s\n", st->cgroup);
}

// task_mem()'s lines (fs/proc/task_mmu.c), "VmRSS:\t    1234 kB"; a
// number of kB in JSON. A kernel thread has none, as in /proc.
static void memory(struct out *o, const struct kp_task_mem *m)
{
	struct kp_meminfo_item lines[KP_TASK_MEM_LINES];
	size_t n = kp_task_mem_lines(m, lines);
	for (size_t i = 0; i < n; i++) {
		if (out_is_json(o))
			out_kv_uint(o, lines[i].name, lines[i].value);
		else
			out_text(o, "%s:\t%8" PRIu64 " kB\n", lines[i].name, lines[i].value);
	}
}

static void print(struct out *o, const struct kp_task_status *st, const struct kp_task_mem *mem)
{
	str(o, "Name", st->name);
	if (st->umask >= 0 && out_is_json(o)) {
		num(o, "Umask", st->umask);	// a number in JSON, octal in text
	} else if (st->umask >= 0) {
		char buf[16];
		snprintf(buf, sizeof(buf), "%04o", (unsigned)st->umask);
		str(o, "Umask", buf);
	}
	const char *state = state_name(st->state);
	if (out_is_json(o))
		out_kv_str(o, "State", state);	// null: a state letter kpeek does not know
	else
		str(o, "State", state ? state : "?");
	num(o, "Tgid", st->tgid);
	num(o, "Pid", st->pid);
	num(o, "PPid", st->ppid);
	num(o, "TracerPid", st->tracer_pid);
	creds(o, st);
	ids(o, "NStgid", st->ns_tgid, st->pid_levels);
	ids(o, "NSpid", st->ns_pid, st->pid_levels);
	ids(o, "NSpgid", st->ns_pgid, st->pid_levels);
	ids(o, "NSsid", st->ns_sid, st->pid_levels);
	if (mem)
		memory(o, mem);
	num(o, "Threads", st->threads);
	set(o, "SigPnd", st->sig_pending);
	set(o, "ShdPnd", st->sig_shared_pending);
	set(o, "SigBlk", st->sig_blocked);
	set(o, "SigIgn", st->sig_ignored);
	set(o, "SigCgt", st->sig_caught);
	set(o, "CapInh", st->cap_inheritable);
	set(o, "CapPrm", st->cap_permitted);
	set(o, "CapEff", st->cap_effective);
	set(o, "CapBnd", st->cap_bounding);
	set(o, "CapAmb", st->cap_ambient);
	num(o, "NoNewPrivs", st->no_new_privs);
	if (st->seccomp >= 0)
		num(o, "Seccomp", st->seccomp);
	if (st->seccomp_filters >= 0)
		num(o, "Seccomp_filters", st->seccomp_filters);
	num(o, "voluntary_ctxt_switches", (int64_t)st->voluntary_ctxt_switches);
	num(o, "nonvoluntary_ctxt_switches", (int64_t)st->nonvoluntary_ctxt_switches);
	namespaces(o, st);
}

static int one(struct kp_kernel *k, struct out *o, int32_t pid, uint64_t task)
{
	struct kp_task_status *st = NULL;
	struct kp_task_mem mem;
	struct kp_error *err;
	bool has_mem = cli_task_mem(k, task, &mem, &err);
	if (err || (err = kp_task_status_create(k, task, &st))) {
		if (out_is_json(o))
			out_kv_str(o, "status", NULL);
		out_flush(o);
		return cli_error_prefix(err, "status %d", pid);
	}
	if (out_is_json(o))
		out_begin_object(o, "status");
	print(o, st, has_mem ? &mem : NULL);
	if (out_is_json(o))
		out_end_object(o);
	kp_task_status_destroy(st);
	return 0;
}

int cmd_status(struct cli *cli, int argc, char **argv)
{
	static const struct cli_pid_cmd cmd = { "status", "status", usage, one };
	return cli_pid_command(cli, &cmd, argc, argv);
}
