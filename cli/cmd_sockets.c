// SPDX-License-Identifier: MIT
// kpeek sockets: the kernel's sockets as ss -a -p lists them.
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "output.h"

static void usage(void)
{
	printf("Usage: kpeek [-c CORE] sockets [--pid PID] [--json]\n"
	       "Lists the sockets of the kernel's tables as ss -a does: TCP (listening,\n"
	       "then established, time-wait and request sockets), UDP, raw (IPv4 and\n"
	       "IPv6), then unix sockets. Columns: NETID (tcp, udp, raw, u_str, u_dgr,\n"
	       "u_seq), STATE (ss's names: LISTEN, ESTAB, UNCONN, TIME-WAIT...), LOCAL\n"
	       "and PEER (ADDRESS:PORT, IPv6 in brackets, port 0 as *; a unix socket's\n"
	       "path, @abstract name or *, and its peer's inode), INODE, NETNS (the\n"
	       "network namespace's inode) and PIDS, the processes whose fd tables hold\n"
	       "the socket.\n"
	       "\n"
	       "Exit status: 0 success, 2 an error or an incomplete listing (one line on\n"
	       "stderr), a usage error or output that could not be written.\n"
	       "\n"
	       "Options:\n"
	       "  -p, --pid PID  only the sockets that process holds\n"
	       "  -j, --json     {\"sockets\": [{netid, state, local, peer, inode,\n"
	       "                 peer_inode (unix only; null without a peer), netns,\n"
	       "                 pids: [..], sock}], \"complete\": bool}\n"
	       "  -h, --help     show this help\n"
	       "\n"
	       "Examples:\n"
	       "  kpeek -c vmcore sockets\n"
	       "  kpeek sockets --pid 1 --json\n");
}

static bool holds(const struct kp_socket *s, int32_t pid)
{
	for (size_t i = 0; i < s->npids; i++)
		if (s->pids[i] == pid)
			return true;
	return false;
}

static void row(struct out *o, const struct kp_socket *s)
{
	char peer[160], pids[256] = "";
	if (s->family == 1 && s->peer_inode)
		snprintf(peer, sizeof(peer), "%s %" PRIu64, s->peer, s->peer_inode);
	else
		snprintf(peer, sizeof(peer), "%s", s->peer);
	for (size_t i = 0, at = 0; i < s->npids && at < sizeof(pids); i++)
		at += (size_t)snprintf(pids + at, sizeof(pids) - at, "%s%d", i ? "," : "", s->pids[i]);
	if (!out_is_json(o)) {
		out_cell_str(o, s->netid);
		out_cell_str(o, s->state);
		out_cell_str(o, s->local);
		out_cell_str(o, peer);
		out_cell_uint(o, s->inode);
		out_cell_uint(o, s->netns);
		out_cell_str(o, pids[0] ? pids : "-");
		return;
	}
	out_begin_object(o, NULL);
	out_kv_str(o, "netid", s->netid);
	out_kv_str(o, "state", s->state);
	out_kv_str(o, "local", s->local);
	out_kv_str(o, "peer", s->peer);
	out_kv_uint(o, "inode", s->inode);
	// A unix socket without a peer has none: null, not inode 0.
	if (s->family == 1)
		out_kv_int_known(o, "peer_inode", s->peer_inode, (int64_t)s->peer_inode);
	out_kv_uint(o, "netns", s->netns);
	out_begin_list(o, "pids");
	for (size_t i = 0; i < s->npids; i++)
		out_kv_int(o, NULL, s->pids[i]);
	out_end_list(o);
	out_kv_hex(o, "sock", s->sock);
	out_end_object(o);
}

static int options(struct cli *cli, int argc, char **argv, int32_t *pid)
{
	static const struct option opts[] = {
		{ "pid", required_argument, NULL, 'p' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;
	uint64_t v;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":p:jh", opts, NULL)) != -1) {
		switch (c) {
		case 'p':
			if (!cli_parse_number(optarg, &v) || v > INT32_MAX)
				return cli_usage_error("sockets", "--pid takes a process ID, not '%s'", optarg);
			*pid = (int32_t)v;
			break;
		case 'j':
			cli->json = true;
			break;
		case 'h':
			usage();
			return 0;
		default:
			return cli_bad_option("sockets", c, argv);
		}
	}
	if (optind < argc)
		return cli_usage_error("sockets", "unexpected argument '%s'", argv[optind]);
	return -1;
}

int cmd_sockets(struct cli *cli, int argc, char **argv)
{
	static const struct column cols[] = {
		{ "NETID", COL_STR, true }, { "STATE", COL_STR, true }, { "LOCAL", COL_STR, true },
		{ "PEER", COL_STR, true }, { "INODE", COL_UINT, false }, { "NETNS", COL_UINT, false },
		{ "PIDS", COL_STR, true },
	};
	int32_t pid = -1;
	int status = options(cli, argc, argv, &pid);
	if (status >= 0)
		return status;
	struct kp_kernel *k = cli_kernel(cli);
	if (!k)
		return CLI_EXIT_ERROR;
	uint64_t task;
	struct kp_socket_iter *it;
	struct kp_error *err = pid >= 0 ? kp_task_by_pid(k, pid, &task) : NULL;
	if (!err)
		err = kp_socket_iter_create(k, &it);
	if (err)
		return cli_error_prefix(err, "sockets");
	struct out *o = out_create(cli->json);
	if (out_is_json(o))
		out_begin_list(o, "sockets");
	else
		out_table_begin(o, "sockets", cols, 7);
	const struct kp_socket *s;
	while (!(err = kp_socket_iter_next(it, &s)) && s)
		if (pid < 0 || holds(s, pid))
			row(o, s);
	struct cli_walk w = { .st = { .sz = sizeof(w.st) }, .err = err };
	kp_socket_iter_status(it, &w.st);
	kp_socket_iter_destroy(it);
	if (out_is_json(o)) {
		out_end_list(o);
		cli_walk_json(o, &w);
	} else {
		out_table_end(o);
	}
	out_destroy(o);
	return cli_walk_end("sockets", "sockets", &w);
}
