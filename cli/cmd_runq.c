// SPDX-License-Identifier: MIT
// kpeek runq: each CPU's running task and queued tasks (crash's runq).
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "output.h"

static void usage(void)
{
	printf("Usage: kpeek [-c CORE] runq [--json]\n"
	       "Lists each possible CPU's run queue: the task running on it (rq->curr,\n"
	       "the CPU's idle task when it is idle), then the tasks queued, in the\n"
	       "order the scheduler picks them: the deadline tree, the real-time\n"
	       "priority lists, then the fair (CFS/EEVDF) tree with task groups'\n"
	       "queues in place of their entities. Columns: CPU, WHAT (current or\n"
	       "queued), CLASS (dl, rt, fair; for the current task also stop, ext,\n"
	       "idle), PRIO (0-99 real-time, 100-139 normal), PID, TASK, VRUNTIME\n"
	       "(fair tasks) and COMM. A CPU whose run queue cannot be read is left\n"
	       "out and counted on stderr.\n"
	       "\n"
	       "Exit status: 0 success, 2 an error or an incomplete listing (one line on\n"
	       "stderr), a usage error or output that could not be written.\n"
	       "\n"
	       "Options:\n"
	       "  -j, --json   {\"cpus\": [{\"cpu\": N, \"rq\", \"nr_running\", \"current\":\n"
	       "               {pid, comm, class, prio, task, vruntime}, \"queued\": [..]}],\n"
	       "               \"complete\": bool} (class null when unknown)\n"
	       "  -h, --help   show this help\n"
	       "\n"
	       "Examples:\n"
	       "  kpeek -c vmcore runq\n"
	       "  kpeek runq --json\n");
}

static void json_task(struct out *o, const char *key, const struct kp_rq_task *t)
{
	out_begin_object(o, key);
	out_kv_int(o, "pid", t->pid);
	out_kv_str(o, "comm", t->comm);
	// The library says "?" for a class it cannot name: null.
	out_kv_str(o, "class", strcmp(t->sched_class, "?") ? t->sched_class : NULL);
	out_kv_int(o, "prio", t->prio);
	out_kv_hex(o, "task", t->task);
	if (!strcmp(t->sched_class, "fair"))
		out_kv_uint(o, "vruntime", t->vruntime);
	out_end_object(o);
}

static void row(struct out *o, uint32_t cpu, const char *what, const struct kp_rq_task *t)
{
	out_cell_uint(o, cpu);
	out_cell_str(o, what);
	out_cell_str(o, t->sched_class);
	out_cell_int(o, t->prio);
	out_cell_int(o, t->pid);
	out_cell_hex(o, t->task);
	char vruntime[24] = "-";
	if (!strcmp(t->sched_class, "fair"))
		snprintf(vruntime, sizeof(vruntime), "%" PRIu64, t->vruntime);
	out_cell_str(o, vruntime);
	out_cell_str(o, t->comm);
}

int cmd_runq(struct cli *cli, int argc, char **argv)
{
	static const struct column cols[] = {
		{ "CPU", COL_UINT, false }, { "WHAT", COL_STR, true }, { "CLASS", COL_STR, true },
		{ "PRIO", COL_INT, false }, { "PID", COL_INT, false }, { "TASK", COL_HEX, false },
		{ "VRUNTIME", COL_STR, false }, { "COMM", COL_STR, true },
	};
	int opt_status = cli_json_help_options(cli, "runq", argc, argv, usage);
	if (opt_status >= 0)
		return opt_status;
	if (optind < argc)
		return cli_usage_error("runq", "unexpected argument '%s'", argv[optind]);
	struct kp_kernel *k = cli_kernel(cli);
	if (!k)
		return CLI_EXIT_ERROR;
	struct kp_runq_iter *it;
	struct kp_error *err = kp_runq_iter_create(k, &it);
	if (err)
		return cli_error_prefix(err, "runq");
	struct out *o = out_create(cli->json);
	bool json = out_is_json(o);
	if (json)
		out_begin_list(o, "cpus");
	else
		out_table_begin(o, "cpus", cols, 8);
	const struct kp_rq *rq;
	while (!(err = kp_runq_iter_next(it, &rq)) && rq) {
		if (!json) {
			row(o, rq->cpu, "current", &rq->current);
			for (size_t i = 0; i < rq->nqueued; i++)
				row(o, rq->cpu, "queued", &rq->queued[i]);
			continue;
		}
		out_begin_object(o, NULL);
		out_kv_uint(o, "cpu", rq->cpu);
		out_kv_hex(o, "rq", rq->rq);
		out_kv_uint(o, "nr_running", rq->nr_running);
		json_task(o, "current", &rq->current);
		out_begin_list(o, "queued");
		for (size_t i = 0; i < rq->nqueued; i++)
			json_task(o, NULL, &rq->queued[i]);
		out_end_list(o);
		out_end_object(o);
	}
	struct cli_walk w = { .st = { .sz = sizeof(w.st) }, .err = err };
	kp_runq_iter_status(it, &w.st);
	kp_runq_iter_destroy(it);
	if (json) {
		out_end_list(o);
		cli_walk_json(o, &w);
	} else {
		out_table_end(o);
	}
	out_destroy(o);
	return cli_walk_end("runq", "run queues", &w);
}
