// SPDX-License-Identifier: MIT
// kpeek files PID...: a process's open files, as /proc/PID/fd shows them.
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cli.h"
#include "output.h"

static void usage(void)
{
	printf("Usage: kpeek [-c CORE] files [--json] PID...\n"
	       "Lists the open files of each process, from its fd table: FD, KIND (REG,\n"
	       "DIR, CHR, BLK, FIFO, SOCK, LNK), FLAGS (f_flags in octal, as\n"
	       "/proc/PID/fdinfo), POS, INODE and TARGET, what the link /proc/PID/fd/FD\n"
	       "shows: a path (\" (deleted)\" after an unlinked file), pipe:[INODE],\n"
	       "socket:[INODE], anon_inode:[eventpoll]... With several PIDs each block\n"
	       "starts with \"PID:\".\n"
	       "\n"
	       "Exit status: 0 success, 2 an error for one of the PIDs or an incomplete\n"
	       "listing (one line on stderr each), a usage error or output that could not be\n"
	       "written.\n"
	       "\n"
	       "Options:\n"
	       "  -j, --json   {\"pid\": N, \"files\": [{fd, kind, flags, pos, inode, target,\n"
	       "               file}], \"complete\": bool} (kind null when unknown; a list\n"
	       "               under \"processes\" with several PIDs)\n"
	       "  -h, --help   show this help\n"
	       "\n"
	       "Examples:\n"
	       "  kpeek -c vmcore files 1\n"
	       "  kpeek files --json $$\n");
}

static int one(struct kp_kernel *k, struct out *o, int32_t pid, uint64_t task)
{
	static const struct column cols[] = {
		{ "FD", COL_INT, false }, { "KIND", COL_STR, true }, { "FLAGS", COL_STR, false },
		{ "POS", COL_UINT, false }, { "INODE", COL_UINT, false }, { "TARGET", COL_STR, true },
	};
	bool json = out_is_json(o);
	struct kp_fd_iter *it;
	struct kp_error *err = kp_fd_iter_create(k, task, &it);
	if (err) {
		if (json)
			out_kv_str(o, "files", NULL);
		out_flush(o);
		return cli_error_prefix(err, "files %d", pid);
	}
	if (json)
		out_begin_list(o, "files");
	else
		out_table_begin(o, "files", cols, 6);
	const struct kp_fd *f;
	while (!(err = kp_fd_iter_next(it, &f)) && f) {
		char flags[16];
		snprintf(flags, sizeof(flags), "0%o", f->flags);
		if (json) {
			out_begin_object(o, NULL);
			out_kv_int(o, "fd", f->fd);
			// "?": no inode or a mode of no known type; unknown is null.
			out_kv_str(o, "kind", strcmp(f->kind, "?") ? f->kind : NULL);
			out_kv_uint(o, "flags", f->flags);
			out_kv_uint(o, "pos", f->pos);
			out_kv_uint(o, "inode", f->inode);
			out_kv_str(o, "target", f->target);
			out_kv_hex(o, "file", f->file);
			out_end_object(o);
		} else {
			out_cell_int(o, f->fd);
			out_cell_str(o, f->kind);
			out_cell_str(o, flags);
			out_cell_uint(o, f->pos);
			out_cell_uint(o, f->inode);
			out_cell_str(o, f->target);
		}
	}
	struct cli_walk w = { .st = { .sz = sizeof(w.st) }, .err = err };
	kp_fd_iter_status(it, &w.st);
	kp_fd_iter_destroy(it);
	if (json) {
		out_end_list(o);
		cli_walk_json(o, &w);
	} else {
		out_table_end(o);
	}
	out_flush(o);
	char cmd[32];
	snprintf(cmd, sizeof(cmd), "files %d", pid);
	return cli_walk_end(cmd, "files", &w);
}

int cmd_files(struct cli *cli, int argc, char **argv)
{
	static const struct cli_pid_cmd cmd = { "files", "files", usage, one };
	return cli_pid_command(cli, &cmd, argc, argv);
}
