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
	       "Exit status: 0 success, 2 an error for one of the PIDs (one line on stderr\n"
	       "each; the others are printed), a usage error or output that could not be\n"
	       "written.\n"
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

static int one(struct kp_kernel *k, struct out *o, int32_t pid, uint64_t task)
{
	bool json = out_is_json(o);
	char *buf;
	size_t len;
	struct kp_error *err = kp_task_environ(k, task, &buf, &len);
	if (err) {
		if (json)
			out_kv_str(o, "env", NULL);
		out_flush(o);
		return cli_error_prefix(err, "env %d", pid);
	}
	if (json)
		out_begin_list(o, "env");
	strings(o, buf, len, json);
	if (json)
		out_end_list(o);
	free(buf);
	return 0;
}

int cmd_env(struct cli *cli, int argc, char **argv)
{
	static const struct cli_pid_cmd cmd = { "env", "env", usage, one };
	return cli_pid_command(cli, &cmd, argc, argv);
}
