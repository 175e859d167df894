// SPDX-License-Identifier: MIT
// kpeek maps PID...: a process's memory mappings in /proc/PID/maps format.
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include "cli.h"
#include "output.h"

static void usage(void)
{
	printf("Usage: kpeek [-c CORE] maps [--json] PID...\n"
	       "Prints the memory mappings of each process exactly as /proc/PID/maps does:\n"
	       "START-END PERMS OFFSET MAJOR:MINOR INODE PATH, one line per VMA of its\n"
	       "mm_struct (the maple tree on 6.1+, the mmap list before), PATH the file's\n"
	       "path (\" (deleted)\" after an unlinked file) or [heap], [stack], [vdso],\n"
	       "[vvar], [vsyscall]. With several PIDs each block starts with \"PID:\".\n"
	       "A kernel thread has no mappings (an error).\n"
	       "\n"
	       "Exit status: 0 success, 2 an error for one of the PIDs or an incomplete\n"
	       "listing (one line on stderr each), a usage error or output that could not be\n"
	       "written.\n"
	       "\n"
	       "Options:\n"
	       "  -j, --json   {\"pid\": N, \"maps\": [{start, end, perms, offset, dev,\n"
	       "               inode, path, vma}], \"complete\": bool} (dev \"major:minor\";\n"
	       "               a list of those objects under \"processes\" with several)\n"
	       "  -h, --help   show this help\n"
	       "\n"
	       "Examples:\n"
	       "  kpeek -c vmcore maps 1\n"
	       "  kpeek maps --json $$\n");
}

static void line(struct out *o, const struct kp_vma *v, bool json)
{
	char dev[24];
	snprintf(dev, sizeof(dev), "%02x:%02x", v->dev_major, v->dev_minor);
	if (json) {
		out_begin_object(o, NULL);
		out_kv_hex(o, "start", v->start);
		out_kv_hex(o, "end", v->end);
		out_kv_str(o, "perms", v->perms);
		out_kv_uint(o, "offset", v->offset);
		out_kv_str(o, "dev", dev);
		out_kv_uint(o, "inode", v->inode);
		out_kv_str(o, "path", v->path);
		out_kv_hex(o, "vma", v->address);
		out_end_object(o);
		return;
	}
	// show_vma_header_prefix(), then the name at column 73: seq_setwidth(25
	// + sizeof(void *) * 6 - 1) pads the line to 72 characters and
	// seq_pad(m, ' ') adds the ' ' after the padding, always.
	char head[128];
	int n = snprintf(head, sizeof(head), "%08" PRIx64 "-%08" PRIx64 " %s %08" PRIx64 " %s %" PRIu64 " ",
			 v->start, v->end, v->perms, v->offset, dev, v->inode);
	if (v->path[0])
		out_text(o, "%s%*s %s\n", head, n < 72 ? 72 - n : 0, "", v->path);
	else
		out_text(o, "%s\n", head);
}

// The maps of one process; the exit status.
static int one(struct kp_kernel *k, struct out *o, int32_t pid, uint64_t task)
{
	bool json = out_is_json(o);
	struct kp_vma_iter *it;
	struct kp_error *err = kp_vma_iter_create(k, task, &it);
	if (err) {
		if (json)
			out_kv_str(o, "maps", NULL);
		out_flush(o);
		return cli_error_prefix(err, "maps %d", pid);
	}
	if (json)
		out_begin_list(o, "maps");
	const struct kp_vma *v;
	while (!(err = kp_vma_iter_next(it, &v)) && v)
		line(o, v, json);
	struct cli_walk w = { .st = { .sz = sizeof(w.st) }, .err = err };
	kp_vma_iter_status(it, &w.st);
	kp_vma_iter_destroy(it);
	if (json) {
		out_end_list(o);
		cli_walk_json(o, &w);
	}
	out_flush(o);
	char cmd[32];
	snprintf(cmd, sizeof(cmd), "maps %d", pid);
	return cli_walk_end(cmd, "mappings", &w);
}

int cmd_maps(struct cli *cli, int argc, char **argv)
{
	static const struct cli_pid_cmd cmd = { "maps", "maps", usage, one };
	return cli_pid_command(cli, &cmd, argc, argv);
}
