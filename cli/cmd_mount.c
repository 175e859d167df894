// SPDX-License-Identifier: MIT
// kpeek mount [--pid PID]: the mounts of a mount namespace, as
// /proc/PID/mountinfo shows them.
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "output.h"

static void usage(void)
{
	printf("Usage: kpeek [-c CORE] mount [--pid PID] [--json]\n"
	       "Prints the mounts of the mount namespace of PID (default: PID 1) as\n"
	       "/proc/PID/mountinfo does: MOUNT_ID PARENT_ID MAJOR:MINOR ROOT MOUNT_POINT\n"
	       "OPTIONS [OPTIONAL FIELDS] - FSTYPE SOURCE SUPER_OPTIONS, mount points\n"
	       "relative to that process's root (mounts outside it left out). Only the\n"
	       "generic super options are known (ro/rw, sync, dirsync, mand,\n"
	       "lazytime): a file system's own options are made by its code; the\n"
	       "optional field propagate_from is not shown.\n"
	       "\n"
	       "Exit status: 0 success, 2 an error or an incomplete listing (one line on\n"
	       "stderr), a usage error or output that could not be written.\n"
	       "\n"
	       "Options:\n"
	       "  -p, --pid PID  the mount namespace and root of that process\n"
	       "  -j, --json     {\"pid\": N, \"mounts\": [{id, parent, dev, root,\n"
	       "                 mountpoint, options, optional, fstype, source,\n"
	       "                 super_options, mount}], \"complete\": bool} (options,\n"
	       "                 optional and super_options lists of words)\n"
	       "  -h, --help     show this help\n"
	       "\n"
	       "Examples:\n"
	       "  kpeek -c vmcore mount\n"
	       "  kpeek mount --pid $$ --json\n");
}

// mangle() of fs/proc_namespace.c: space, tab, newline and backslash as
// octal escapes. Malloc'ed; NULL when out of memory.
static char *mangle(const char *s)
{
	char *ret = malloc(strlen(s) * 4 + 1), *p = ret;
	if (!ret)
		return NULL;
	for (; *s; s++) {
		if (strchr(" \t\n\\", *s))
			p += sprintf(p, "\\%03o", (unsigned char)*s);
		else
			*p++ = *s;
	}
	*p = '\0';
	return ret;
}

// A list the kernel prints as one string ("rw,nosuid", "shared:1 master:2")
// as a JSON list of its words: an empty string is an empty list.
static void words(struct out *o, const char *key, const char *s, char sep)
{
	out_begin_list(o, key);
	while (*s) {
		const char *e = strchr(s, sep);
		size_t n = e ? (size_t)(e - s) : strlen(s);
		char *one = strndup(s, n);
		if (one && n)
			out_kv_str(o, NULL, one);
		free(one);
		s += n + (e != NULL);
	}
	out_end_list(o);
}

static void line(struct out *o, const struct kp_mount *m)
{
	char dev[24];
	snprintf(dev, sizeof(dev), "%u:%u", m->dev_major, m->dev_minor);
	if (out_is_json(o)) {
		out_begin_object(o, NULL);
		out_kv_int(o, "id", m->id);
		out_kv_int(o, "parent", m->parent_id);
		out_kv_str(o, "dev", dev);
		out_kv_str(o, "root", m->root);
		out_kv_str(o, "mountpoint", m->mount_point);
		words(o, "options", m->options, ',');
		words(o, "optional", m->propagation, ' ');
		out_kv_str(o, "fstype", m->fstype);
		out_kv_str(o, "source", m->source);
		words(o, "super_options", m->super_options, ',');
		out_kv_hex(o, "mount", m->address);
		out_end_object(o);
		return;
	}
	char *root = mangle(m->root), *point = mangle(m->mount_point);
	char *type = mangle(m->fstype), *source = mangle(m->source);
	if (root && point && type && source)
		out_text(o, "%d %d %s %s %s %s%s%s - %s %s %s\n", m->id, m->parent_id, dev, root, point,
			 m->options, m->propagation[0] ? " " : "", m->propagation, type, source,
			 m->super_options);
	free(root);
	free(point);
	free(type);
	free(source);
}

int cmd_mount(struct cli *cli, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "pid", required_argument, NULL, 'p' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int32_t pid = -1;
	int c;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":p:jh", opts, NULL)) != -1) {
		uint64_t v;
		switch (c) {
		case 'p':
			if (!cli_parse_number(optarg, &v) || v > INT32_MAX)
				return cli_usage_error("mount", "--pid takes a process ID, not '%s'", optarg);
			pid = (int32_t)v;
			break;
		case 'j':
			cli->json = true;
			break;
		case 'h':
			usage();
			return 0;
		default:
			return cli_bad_option("mount", c, argv);
		}
	}
	if (optind < argc)
		return cli_usage_error("mount", "unexpected argument '%s'", argv[optind]);
	struct kp_kernel *k = cli_kernel(cli);
	if (!k)
		return CLI_EXIT_ERROR;
	uint64_t task = 0;
	struct kp_mount_iter *it;
	struct kp_error *err = pid >= 0 ? kp_task_by_pid(k, pid, &task) : NULL;
	if (!err)
		err = kp_mount_iter_create(k, task, &it);
	if (err)
		return pid >= 0 ? cli_error_prefix(err, "mount --pid %d", pid) : cli_error_prefix(err, "mount");
	struct out *o = out_create(cli->json);
	if (out_is_json(o)) {
		out_kv_int(o, "pid", pid >= 0 ? pid : 1);	// by default PID 1's
		out_begin_list(o, "mounts");
	}
	const struct kp_mount *m;
	while (!(err = kp_mount_iter_next(it, &m)) && m)
		line(o, m);
	struct cli_walk w = { .st = { .sz = sizeof(w.st) }, .err = err };
	kp_mount_iter_status(it, &w.st);
	kp_mount_iter_destroy(it);
	if (out_is_json(o)) {
		out_end_list(o);
		cli_walk_json(o, &w);
	}
	out_destroy(o);
	return cli_walk_end("mount", "mounts", &w);
}
