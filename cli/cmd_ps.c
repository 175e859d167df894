// SPDX-License-Identifier: MIT
// kpeek ps: the task list, like crash's ps.
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "output.h"

static void usage(void)
{
	printf("Usage: kpeek [-c CORE] ps [-t] [--tree] [-k|-u] [-a] [--json]\n"
	       "Lists the tasks of the init_task.tasks list (thread-group leaders), with\n"
	       "columns PID PPID TGID ST CPU VSZ RSS TASK COMM. PPID is the parent's thread\n"
	       "group (real_parent->tgid) as ps(1) shows; ST the state letter of\n"
	       "/proc/PID/stat (R S D T t X Z P I); VSZ and RSS the address space and the\n"
	       "resident memory in kB, as VmSize and VmRSS of kpeek status (0 for kernel\n"
	       "threads and exited tasks); TASK the struct task_struct address. COMM is the name\n"
	       "/proc/PID/stat shows: comm, or a kernel thread's full name and a workqueue\n"
	       "worker's +/-description (kworker/0:1-events); kernel threads are shown in\n"
	       "brackets, [kthreadd], in text mode. The idle task of CPU 0\n"
	       "(swapper/0, PID 0) is listed first; the other CPUs' idle tasks are not in\n"
	       "the task list. A task whose memory the dump lacks (pages makedumpfile\n"
	       "excluded) is left out, and the tasks are listed as far as the task list\n"
	       "can be followed; a kernel thread whose full name the dump lacks is\n"
	       "shown by its comm (JSON \"name\": null); stderr then counts the errors\n"
	       "and names the first. A\n"
	       "number kpeek cannot read (a parent the dump lacks, a CPU the kernel does\n"
	       "not record) is shown as - (null in JSON). On a live kernel that changed\n"
	       "under every pass of the task list, the last pass is shown and one line on\n"
	       "stderr says so (JSON \"complete\": false, \"reason\": \"live-changed\").\n"
	       "\n"
	       "Exit status: 0 success, 2 an error or an incomplete listing (stderr says\n"
	       "what is missing), a usage error or output that could not be written.\n"
	       "\n"
	       "Options:\n"
	       "  -t, --threads   every thread, each group's threads after its leader\n"
	       "      --tree      children indented under their parent\n"
	       "  -k, --kernel    kernel threads only\n"
	       "  -u, --user      user tasks only\n"
	       "  -a, --args      each process's arguments after its name, as\n"
	       "                  /proc/PID/cmdline has them, shell-quoted where needed\n"
	       "                  (read from its memory: ? where a page is not there)\n"
	       "  -j, --json      {\"tasks\": [{pid, ppid, tgid, state, cpu, vsz, rss,\n"
	       "                  task, comm, name, kthread, flags, depth, args: [...] (-a, user\n"
	       "                  tasks; null where unreadable)}], \"complete\": bool}\n"
	       "  -h, --help      show this help\n"
	       "\n"
	       "Examples:\n"
	       "  kpeek ps\n"
	       "  kpeek -c vmcore ps --tree\n"
	       "  kpeek ps -t -u\n");
}

struct node {
	size_t first_child, last_child, next_sibling;	// SIZE_MAX = none
	bool placed;
};

struct leader {
	int32_t pid;
	size_t index;
};

static int leader_cmp(const void *a, const void *b)
{
	const struct leader *x = a, *y = b;
	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

// DFS order of the task tree: a leader's parent is the leader whose pid is
// its ppid; threads hang under their own leader. PID 0 and orphans are roots.
static bool tree_order(const struct kp_task *t, size_t n, size_t *order, int *depth)
{
	size_t cnt = n ? n : 1;
	struct node *nd = calloc(cnt, sizeof(*nd));
	struct leader *ld = calloc(cnt, sizeof(*ld));
	size_t *stack = calloc(cnt, sizeof(*stack));
	int *sdepth = calloc(cnt, sizeof(*sdepth));
	bool *seen = calloc(cnt, sizeof(*seen));
	bool ok = nd && ld && stack && sdepth && seen;
	if (!ok)
		goto out;
	size_t nl = 0;
	for (size_t i = 0; i < n; i++) {
		nd[i].first_child = nd[i].last_child = nd[i].next_sibling = SIZE_MAX;
		if (t[i].pid == t[i].tgid)
			ld[nl++] = (struct leader){ t[i].pid, i };
	}
	qsort(ld, nl, sizeof(*ld), leader_cmp);
	for (size_t i = 0; i < n; i++) {
		if (t[i].pid == 0)
			continue;
		struct leader key = { t[i].pid != t[i].tgid ? t[i].tgid : t[i].ppid, 0 };
		struct leader *hit = bsearch(&key, ld, nl, sizeof(*ld), leader_cmp);
		if (!hit || hit->index == i)
			continue;
		size_t p = hit->index;
		if (nd[p].last_child == SIZE_MAX)
			nd[p].first_child = i;
		else
			nd[nd[p].last_child].next_sibling = i;
		nd[p].last_child = i;
		nd[i].placed = true;
	}
	size_t out_n = 0;
	for (size_t r = 0; r < n; r++) {
		if (nd[r].placed)
			continue;
		size_t sp = 0;
		stack[sp] = r;
		sdepth[sp++] = 0;
		while (sp) {
			size_t i = stack[--sp];
			int d = sdepth[sp];
			if (seen[i])
				continue;
			seen[i] = true;
			order[out_n] = i;
			depth[out_n++] = d;
			// Push children in reverse so that the first comes out first.
			size_t kids = 0;
			for (size_t c = nd[i].first_child; c != SIZE_MAX; c = nd[c].next_sibling)
				kids++;
			if (sp + kids > n)
				break;
			size_t at = sp + kids;
			for (size_t c = nd[i].first_child; c != SIZE_MAX; c = nd[c].next_sibling) {
				stack[--at] = c;
				sdepth[at] = d + 1;
			}
			sp += kids;
		}
	}
	// Tasks in a parent cycle (corrupt data) hang under no root: list them
	// flat at the end.
	for (size_t i = 0; i < n; i++)
		if (!seen[i])
			order[out_n] = i, depth[out_n++] = 0;
out:
	free(nd);
	free(ld);
	free(stack);
	free(sdepth);
	free(seen);
	return ok;
}

struct ps_opts {
	bool threads, tree, kernel_only, user_only, args;
	struct kp_kernel *k;
	size_t unreadable;		// -a: processes whose arguments could not be read
	char first[320];		// the first one's error
	size_t no_memory;		// tasks whose memory sizes could not be read
	char first_memory[320];
};

// -1 to go on, else the exit status.
static int parse_options(struct cli *cli, int argc, char **argv, struct ps_opts *po)
{
	static const struct option opts[] = {
		{ "threads", no_argument, NULL, 't' },
		{ "tree", no_argument, NULL, 'T' },
		{ "kernel", no_argument, NULL, 'k' },
		{ "user", no_argument, NULL, 'u' },
		{ "args", no_argument, NULL, 'a' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":tkuajh", opts, NULL)) != -1) {
		switch (c) {
		case 't': po->threads = true; break;
		case 'T': po->tree = true; break;
		case 'k': po->kernel_only = true; break;
		case 'u': po->user_only = true; break;
		case 'a': po->args = true; break;
		case 'j': cli->json = true; break;
		case 'h': usage(); return 0;
		default: return cli_bad_option("ps", c, argv);
		}
	}
	if (optind < argc)
		return cli_usage_error("ps", "unexpected argument '%s'", argv[optind]);
	if (po->kernel_only && po->user_only)
		return cli_usage_error("ps", "-k and -u exclude each other");
	return -1;
}

static bool shown(const struct ps_opts *po, const struct kp_task *p)
{
	return !((po->kernel_only && !p->kthread) || (po->user_only && p->kthread));
}

// VSZ and RSS in kB: 0 for a kernel thread or a task whose memory is gone
// (as /proc/PID/stat); false, and counted, when they cannot be read.
static bool memory(struct ps_opts *po, const struct kp_task *p, uint64_t *vsz, uint64_t *rss)
{
	struct kp_task_mem m;
	struct kp_error *err;
	*vsz = *rss = 0;
	if (p->kthread)
		return true;
	if (cli_task_mem(po->k, p->address, &m, &err)) {
		*vsz = m.vm_size;
		*rss = m.vm_rss;
		return true;
	}
	if (!err)
		return true;
	if (!po->no_memory++)
		snprintf(po->first_memory, sizeof(po->first_memory), "pid %d: %s", p->pid,
			 kp_error_message(err));
	kp_error_destroy(err);
	return false;
}

// The task's /proc/PID/cmdline (NULL and counted when it cannot be read).
static char *cmdline(struct ps_opts *po, const struct kp_task *p, size_t *len)
{
	char *buf = NULL;
	struct kp_error *err = kp_task_cmdline(po->k, p->address, &buf, len);
	if (!err)
		return buf;
	if (!po->unreadable++)
		snprintf(po->first, sizeof(po->first), "pid %d: %s", p->pid, kp_error_message(err));
	kp_error_destroy(err);
	return NULL;
}

static void json_args(struct out *o, struct ps_opts *po, const struct kp_task *p)
{
	size_t len;
	char *buf = cmdline(po, p, &len);
	if (!buf) {
		out_kv_str(o, "args", NULL);
		return;
	}
	out_begin_list(o, "args");
	for (size_t i = 0; i < len;) {
		size_t n = strnlen(buf + i, len - i);
		char *one = strndup(buf + i, n);
		if (one)
			out_kv_str(o, NULL, one);
		free(one);
		i += n + 1;
	}
	out_end_list(o);
	free(buf);
}

// The arguments as one shell-quoted line ("?" where unreadable), malloc'ed.
static char *args_text(struct ps_opts *po, const struct kp_task *p)
{
	size_t len;
	char *buf = cmdline(po, p, &len);
	if (!buf)
		return strdup("?");
	char *line = cli_shell_words(buf, len);
	free(buf);
	return line;
}

static void json_tasks(struct out *o, struct ps_opts *po, const struct kp_task *t, size_t n,
		       const size_t *order, const int *depth)
{
	out_begin_list(o, "tasks");
	for (size_t i = 0; i < n; i++) {
		const struct kp_task *p = &t[order[i]];
		if (!shown(po, p))
			continue;
		char st[2] = { p->state, 0 };
		uint64_t vsz, rss;
		bool mem = memory(po, p, &vsz, &rss);
		out_begin_object(o, NULL);
		out_kv_int(o, "pid", p->pid);
		out_kv_int_known(o, "ppid", p->ppid >= 0, p->ppid);	// parent unreadable
		out_kv_int(o, "tgid", p->tgid);
		out_kv_str(o, "state", st);
		out_kv_int_known(o, "cpu", p->cpu >= 0, p->cpu);
		out_kv_int_known(o, "vsz", mem, (int64_t)vsz);
		out_kv_int_known(o, "rss", mem, (int64_t)rss);
		out_kv_hex(o, "task", p->address);
		out_kv_str(o, "comm", p->comm);
		out_kv_str(o, "name", p->name_partial ? NULL : p->name);	// null: unread, comm says
		out_kv_bool(o, "kthread", p->kthread);
		out_kv_hex(o, "flags", p->flags);
		if (po->tree)
			out_kv_int(o, "depth", depth[i]);
		if (po->args && !p->kthread)
			json_args(o, po, p);
		out_end_object(o);
	}
	out_end_list(o);
}

static void text_tasks(struct out *o, struct ps_opts *po, const struct kp_task *t, size_t n,
		       const size_t *order, const int *depth)
{
	static const struct column cols[] = {
		{ "PID", COL_INT, false }, { "PPID", COL_INT, false },
		{ "TGID", COL_INT, false }, { "ST", COL_STR, false },
		{ "CPU", COL_STR, false }, { "VSZ", COL_INT, false },
		{ "RSS", COL_INT, false }, { "TASK", COL_HEX, false },
		{ "COMM", COL_STR, true }, { "ARGS", COL_STR, true },
	};
	out_table_begin(o, "tasks", cols, po->args ? 10 : 9);
	for (size_t i = 0; i < n; i++) {
		const struct kp_task *p = &t[order[i]];
		if (!shown(po, p))
			continue;
		char st[2] = { p->state, 0 }, cpu[16], comm[160];
		snprintf(cpu, sizeof(cpu), p->cpu >= 0 ? "%d" : "-", p->cpu);
		int d = depth[i] > 32 ? 32 : depth[i];
		int len = 0;
		for (int j = 0; j < d; j++)
			len += snprintf(comm + len, sizeof(comm) - (size_t)len, "  ");
		if (d)
			len += snprintf(comm + len, sizeof(comm) - (size_t)len, "\\_ ");
		snprintf(comm + len, sizeof(comm) - (size_t)len, p->kthread ? "[%s]" : "%s", p->name);
		out_cell_int(o, p->pid);
		out_cell_int_known(o, p->ppid >= 0, p->ppid);	// unknown: said on stderr
		out_cell_int(o, p->tgid);
		out_cell_str(o, st);
		out_cell_str(o, cpu);
		uint64_t vsz, rss;
		bool mem = memory(po, p, &vsz, &rss);
		out_cell_int_known(o, mem, (int64_t)vsz);	// unknown: said on stderr
		out_cell_int_known(o, mem, (int64_t)rss);
		out_cell_hex(o, p->address);
		out_cell_str(o, comm);
		if (po->args) {
			char *a = p->kthread ? NULL : args_text(po, p);
			out_cell_str(o, a ? a : "");
			free(a);
		}
	}
	out_table_end(o);
}

// The exit status after the listing: 1, with one line saying what is
// missing, when tasks could not be read or a parent is unknown (PPID "-",
// JSON null): the listing is not the whole truth. A live kernel that
// changed under every pass is said, exit 0.
static int incomplete(const struct kp_task *t, size_t n, struct cli_walk *w)
{
	// Tasks left out, and tasks listed by their comm because their full
	// name could not be read (partial); err is what ended the walk, if
	// anything did, else the first partial task's.
	size_t bad = w->err ? w->st.left_out + w->st.partial : 0;
	if (w->err && w->st.end == KP_WALK_STOPPED && !w->st.left_out)
		bad++;	// the list itself could not be followed to its end
	struct kp_error *bad_err = w->err;
	w->err = NULL;
	size_t orphans = 0;
	char first[128] = "";
	for (size_t i = 0; i < n; i++)
		if (t[i].ppid < 0 && !orphans++)
			snprintf(first, sizeof(first), "task %d (%s) at 0x%" PRIx64, t[i].pid,
				 t[i].comm, t[i].address);
	if (bad && orphans)
		return cli_error_prefix(bad_err, "incomplete: %zu error%s reading tasks (and the parent of %zu task%s unreadable), the first",
					bad, bad == 1 ? "" : "s", orphans, orphans == 1 ? "" : "s");
	if (bad)
		return cli_error_prefix(bad_err, "incomplete: %zu error%s reading tasks, the first",
					bad, bad == 1 ? "" : "s");
	if (orphans)
		return cli_fail("incomplete: the parent of %zu task%s could not be read, the first: %s",
				orphans, orphans == 1 ? "" : "s", first);
	return cli_walk_end("ps", "tasks", w);
}

int cmd_ps(struct cli *cli, int argc, char **argv)
{
	struct ps_opts po = { 0 };
	int status = parse_options(cli, argc, argv, &po);
	if (status >= 0)
		return status;
	struct kp_kernel *k = po.k = cli_kernel(cli);
	if (!k)
		return CLI_EXIT_ERROR;
	struct kp_task *t = NULL;
	size_t n = 0;
	struct cli_walk walk;
	struct kp_error *err = cli_collect_tasks(k, po.threads, &t, &n, &walk);
	if (err)
		return cli_error(err);
	size_t *order = malloc((n ? n : 1) * sizeof(*order));
	int *depth = malloc((n ? n : 1) * sizeof(*depth));
	if (!order || !depth) {
		free(order);
		free(depth);
		free(t);
		kp_error_destroy(walk.err);
		return cli_fail("out of memory");
	}
	if (!po.tree || !tree_order(t, n, order, depth))
		for (size_t i = 0; i < n; i++)
			order[i] = i, depth[i] = 0;
	struct out *o = out_create(cli->json);
	if (out_is_json(o)) {
		json_tasks(o, &po, t, n, order, depth);
		cli_walk_json(o, &walk);
	} else {
		text_tasks(o, &po, t, n, order, depth);
	}
	out_destroy(o);
	free(order);
	free(depth);
	status = incomplete(t, n, &walk);
	if (po.unreadable) {
		int s = cli_fail("ps: the arguments of %zu process%s could not be read, the first: %s",
				 po.unreadable, po.unreadable == 1 ? "" : "es", po.first);
		if (!status)
			status = s;
	}
	if (po.no_memory) {
		int s = cli_fail("ps: the memory sizes of %zu task%s could not be read, the first: %s",
				 po.no_memory, po.no_memory == 1 ? "" : "s", po.first_memory);
		if (!status)
			status = s;
	}
	free(t);
	return status;
}
