// SPDX-License-Identifier: MIT
// kpeek env PID...: a process's environment, as /proc/PID/environ has it,
// read from its user memory.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cli.h"
#include "output.h"

static void usage(void)
{
	printf("Usage: kpeek [-c CORE] env [--json] PID...\n"
	       "Prints the environment of each process as /proc/PID/environ has it: one\n"
	       "NAME=value per line, read from the process's own memory (its environment\n"
	       "area, env_start..env_end of its mm_struct) through its page tables. With\n"
	       "several PIDs each block starts with \"PID:\". A kernel thread has no\n"
	       "environment; a page of the area that is not in memory (swapped out, or\n"
	       "left out of the dump) is an error naming the address.\n"
	       "\n"
	       "Exit status: 0 success, 1 an error for one of the PIDs (one line on stderr\n"
	       "each; the others are printed), 2 a usage error or output that could not\n"
	       "be written.\n"
	       "\n"
	       "Options:\n"
	       "  -j, --json   {\"pid\": N, \"env\": [\"NAME=value\", ...]}, a list of those\n"
	       "               objects with several PIDs (\"env\" null for a PID in error)\n"
	       "  -h, --help   show this help\n"
	       "\n"
	       "Examples:\n"
	       "  kpeek -c vmcore env 1\n"
	       "  kpeek env --json 1 $$\n");
}

// The NUL-separated strings of buf[0, len), each out as one item.
static void strings(struct out *o, const char *buf, size_t len, bool json)
{
	for (size_t i = 0; i < len;) {
		const char *s = buf + i, *nul = memchr(s, '\0', len - i);
		size_t n = nul ? (size_t)(nul - s) : len - i;
		char *one = strndup(s, n);
		if (one) {
			if (json)
				out_kv_str(o, NULL, one);
			else
				out_text(o, "%s\n", one);
			free(one);
		}
		i += n + 1;
	}
}

int cmd_env(struct cli *cli, int argc, char **argv)
{
	int opt_status = cli_json_help_options(cli, "env", argc, argv, usage);
	if (opt_status >= 0)
		return opt_status;
	if (optind >= argc)
		return cli_usage_error("env", "expected PID");
	int npids = argc - optind;
	int32_t *pids = calloc((size_t)npids, sizeof(*pids));
	if (!pids)
		return cli_fail("out of memory");
	for (int i = 0; i < npids; i++) {
		uint64_t v;
		if (!cli_parse_number(argv[optind + i], &v) || v > INT32_MAX) {
			free(pids);
			return cli_usage_error("env", "not a PID: '%s'", argv[optind + i]);
		}
		pids[i] = (int32_t)v;
	}
	struct kp_kernel *k = cli_kernel(cli);
	if (!k) {
		free(pids);
		return 1;
	}
	struct out *o = out_create(cli->json);
	bool json = out_is_json(o), many = npids > 1;
	if (json && many)
		out_begin_list(o, "processes");
	int status = 0;
	for (int i = 0; i < npids; i++) {
		uint64_t task;
		char *buf = NULL;
		size_t len = 0;
		struct kp_error *err = kp_task_by_pid(k, pids[i], &task);
		if (!err)
			err = kp_task_environ(k, task, &buf, &len);
		if (json && many)
			out_begin_object(o, NULL);
		if (json)
			out_kv_int(o, "pid", pids[i]);
		else if (many && !err)
			out_text(o, "%d:\n", pids[i]);
		if (json && !buf)
			out_kv_str(o, "env", NULL);
		if (buf) {
			if (json)
				out_begin_list(o, "env");
			strings(o, buf, len, json);
			if (json)
				out_end_list(o);
		}
		if (json && many)
			out_end_object(o);
		free(buf);
		if (err) {
			out_flush(o);
			status = cli_error_prefix(err, "env %d", pids[i]);
		}
	}
	if (json && many)
		out_end_list(o);
	out_destroy(o);
	free(pids);
	return status;
}
