// SPDX-License-Identifier: MIT
// The commands about processes given by PID (env, maps, files, status):
// one driver for their operands, blocks and exit status.
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "cli.h"
#include "output.h"

int cli_pid_command(struct cli *cli, const struct cli_pid_cmd *cmd, int argc, char **argv)
{
	int opt_status = cli_json_help_options(cli, cmd->name, argc, argv, cmd->usage);
	if (opt_status >= 0)
		return opt_status;
	if (optind >= argc)
		return cli_usage_error(cmd->name, "expected PID");
	for (int i = optind; i < argc; i++) {
		uint64_t v;
		if (!cli_parse_number(argv[i], &v) || v > INT32_MAX)
			return cli_usage_error(cmd->name, "not a PID: '%s'", argv[i]);
	}
	struct kp_kernel *k = cli_kernel(cli);
	if (!k)
		return CLI_EXIT_ERROR;
	struct out *o = out_create(cli->json);
	bool json = out_is_json(o), many = argc - optind > 1;
	if (json && many)
		out_begin_list(o, "processes");
	int status = 0;
	for (int i = optind; i < argc; i++) {
		uint64_t v, task;
		cli_parse_number(argv[i], &v);
		int32_t pid = (int32_t)v;
		struct kp_error *err = kp_task_by_pid(k, pid, &task);
		if (json && many)
			out_begin_object(o, NULL);
		if (json)
			out_kv_int(o, "pid", pid);
		else if (many && !err)
			out_text(o, "%d:\n", pid);
		int s;
		if (err) {
			if (json)
				out_kv_str(o, cmd->key, NULL);
			out_flush(o);
			s = cli_error_prefix(err, "%s %d", cmd->name, pid);
		} else {
			s = cmd->one(k, o, pid, task);
		}
		if (json && many)
			out_end_object(o);
		out_flush(o);
		if (s && !status)
			status = s;
	}
	if (json && many)
		out_end_list(o);
	out_destroy(o);
	return status;
}
