// SPDX-License-Identifier: MIT
// kpeek loadavg: the first line of /proc/loadavg.
#include <unistd.h>
#include <stdio.h>
#include "cli.h"
#include "output.h"

static void usage(void)
{
	printf("Usage: kpeek [-c CORE] loadavg [--json]\n"
	       "Prints the load average as /proc/loadavg does:\n"
	       "  LOAD1 LOAD5 LOAD15 RUNNING/THREADS LAST_PID\n"
	       "from avenrun[], the runqueues' nr_running summed over online CPUs,\n"
	       "nr_threads and init_pid_ns's last allocated PID. A number kpeek cannot\n"
	       "find (a symbol the kernel lacks, memory the dump lacks) is printed as ?\n"
	       "(null in JSON).\n"
	       "\n"
	       "Exit status: 0 success, 2 an error (one line on stderr says what and where),\n"
	       "a usage error or output that could not be written.\n"
	       "\n"
	       "Options:\n"
	       "  -j, --json   {\"load1\": 0.42, \"load5\", \"load15\", \"avenrun\": [raw fixed\n"
	       "               point, FSHIFT 11], \"running\", \"threads\", \"last_pid\"}\n"
	       "  -h, --help   show this help\n"
	       "\n"
	       "Examples:\n"
	       "  kpeek loadavg\n"
	       "  kpeek -c vmcore loadavg --json\n");
}

int cmd_loadavg(struct cli *cli, int argc, char **argv)
{
	int opt_status = cli_json_help_options(cli, "loadavg", argc, argv, usage);
	if (opt_status >= 0)
		return opt_status;
	if (optind < argc)
		return cli_usage_error("loadavg", "unexpected argument '%s'", argv[optind]);
	struct kp_kernel *k = cli_kernel(cli);
	if (!k)
		return CLI_EXIT_ERROR;
	KP_INIT(kp_loadavg, la);
	struct kp_error *err = kp_loadavg(k, &la);
	if (err)
		return cli_error(err);
	char l[3][16];
	for (int i = 0; i < 3; i++)
		kp_loadavg_format(la.avenrun[i], l[i]);
	struct out *o = out_create(cli->json);
	if (out_is_json(o)) {
		static const char *const keys[] = { "load1", "load5", "load15" };
		for (int i = 0; i < 3; i++)
			out_kv_json(o, keys[i], l[i], l[i]);
		out_begin_list(o, "avenrun");
		for (int i = 0; i < 3; i++)
			out_kv_uint(o, NULL, la.avenrun[i]);
		out_end_list(o);
		out_kv_int_known(o, "running", la.has_running, la.running);
		out_kv_int_known(o, "threads", la.has_total, la.total);
		out_kv_int_known(o, "last_pid", la.last_pid >= 0, la.last_pid);
	} else {
		// /proc/loadavg's line; "?" for a number the kernel did not give.
		char running[16] = "?", total[16] = "?", last_pid[16] = "?";
		if (la.has_running)
			snprintf(running, sizeof(running), "%u", la.running);
		if (la.has_total)
			snprintf(total, sizeof(total), "%u", la.total);
		if (la.last_pid >= 0)
			snprintf(last_pid, sizeof(last_pid), "%d", la.last_pid);
		out_text(o, "%s %s %s %s/%s %s\n", l[0], l[1], l[2], running, total, last_pid);
	}
	out_destroy(o);
	return 0;
}
