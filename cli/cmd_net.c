// SPDX-License-Identifier: MIT
// kpeek net: network interfaces of every namespace (crash's net, ip addr).
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "output.h"

static void usage(void)
{
	printf("Usage: kpeek [-c CORE] net [--json]\n"
	       "Lists the network interfaces of every network namespace: NETNS (the\n"
	       "namespace's inode, as /proc/PID/ns/net names it), IDX, NAME, FLAGS\n"
	       "(dev->flags: UP, BROADCAST, LOOPBACK, POINTOPOINT, NOARP, PROMISC,\n"
	       "ALLMULTI, MULTICAST...), MTU, MAC, the counters RX_BYTES RX_PKTS\n"
	       "TX_BYTES TX_PKTS, and the IPv4 and IPv6 addresses with their prefix\n"
	       "lengths. Counters are shown where kpeek knows where the kernel keeps\n"
	       "them for the driver (the device's own stats, or the per-CPU stats of\n"
	       "loopback, dummy and tunnel drivers); a driver with counters of its own\n"
	       "(virtio_net, e1000...) shows -.\n"
	       "\n"
	       "Exit status: 0 success, 2 an error or an incomplete listing (one line on\n"
	       "stderr), a usage error or output that could not be written.\n"
	       "\n"
	       "Options:\n"
	       "  -j, --json   {\"interfaces\": [{index, name, flags: [..], mtu, mac,\n"
	       "               (null without one), addrs: [..], rx_bytes, rx_packets,\n"
	       "               tx_bytes, tx_packets\n"
	       "               (null when unknown), stats_source, netns, dev}],\n"
	       "               \"complete\": bool}\n"
	       "  -h, --help   show this help\n"
	       "\n"
	       "Examples:\n"
	       "  kpeek -c vmcore net\n");
}

// uapi/linux/if.h net_device_flags, in bit order.
static const char *const flag_names[] = {
	"UP", "BROADCAST", "DEBUG", "LOOPBACK", "POINTOPOINT", "NOTRAILERS", "RUNNING", "NOARP",
	"PROMISC", "ALLMULTI", "MASTER", "SLAVE", "MULTICAST", "PORTSEL", "AUTOMEDIA", "DYNAMIC",
};
#define NFLAGS (sizeof(flag_names) / sizeof(flag_names[0]))

static void flags_text(uint32_t flags, char *buf, size_t size)
{
	size_t at = 0;
	buf[0] = '\0';
	for (unsigned i = 0; i < NFLAGS && at < size; i++)
		if (flags >> i & 1)
			at += (size_t)snprintf(buf + at, size - at, "%s%s", at ? "," : "", flag_names[i]);
	if (!buf[0])
		snprintf(buf, size, "-");
}

static void mac_text(const struct kp_netdev *d, char *buf, size_t size)
{
	size_t at = 0;
	buf[0] = '\0';
	for (uint32_t i = 0; i < d->mac_len && at + 3 < size; i++)
		at += (size_t)snprintf(buf + at, size - at, "%s%02x", i ? ":" : "", d->mac[i]);
}

static void json(struct out *o, const struct kp_netdev *d, const char *mac)
{
	out_begin_object(o, NULL);
	out_kv_int(o, "index", d->index);
	out_kv_str(o, "name", d->name);
	out_begin_list(o, "flags");
	for (unsigned i = 0; i < NFLAGS; i++)
		if (d->flags >> i & 1)
			out_kv_str(o, NULL, flag_names[i]);
	out_end_list(o);
	out_kv_uint(o, "mtu", d->mtu);
	out_kv_str(o, "mac", mac[0] ? mac : NULL);	// none: dev->addr_len 0
	out_begin_list(o, "addrs");
	for (size_t i = 0; i < d->naddrs; i++)
		out_kv_str(o, NULL, d->addrs[i]);
	out_end_list(o);
	if (d->addrs_not_shown)		// the list holds addresses only
		out_kv_uint(o, "addrs_not_shown", d->addrs_not_shown);
	const char *keys[4] = { "rx_bytes", "rx_packets", "tx_bytes", "tx_packets" };
	uint64_t vals[4] = { d->rx_bytes, d->rx_packets, d->tx_bytes, d->tx_packets };
	for (int i = 0; i < 4; i++)
		out_kv_int_known(o, keys[i], d->has_stats, (int64_t)vals[i]);
	out_kv_str(o, "stats_source", d->has_stats ? d->stats_source : NULL);
	out_kv_uint(o, "netns", d->netns);
	out_kv_hex(o, "dev", d->address);
	out_end_object(o);
}

int cmd_net(struct cli *cli, int argc, char **argv)
{
	static const struct column cols[] = {
		{ "NETNS", COL_UINT, false }, { "IDX", COL_INT, false }, { "NAME", COL_STR, true },
		{ "FLAGS", COL_STR, true }, { "MTU", COL_UINT, false }, { "MAC", COL_STR, true },
		{ "RX_BYTES", COL_STR, false }, { "RX_PKTS", COL_STR, false }, { "TX_BYTES", COL_STR, false },
		{ "TX_PKTS", COL_STR, false }, { "ADDRESSES", COL_STR, true },
	};
	int opt_status = cli_json_help_options(cli, "net", argc, argv, usage);
	if (opt_status >= 0)
		return opt_status;
	if (optind < argc)
		return cli_usage_error("net", "unexpected argument '%s'", argv[optind]);
	struct kp_kernel *k = cli_kernel(cli);
	if (!k)
		return CLI_EXIT_ERROR;
	struct kp_netdev_iter *it;
	struct kp_error *err = kp_netdev_iter_create(k, &it);
	if (err)
		return cli_error_prefix(err, "net");
	struct out *o = out_create(cli->json);
	if (out_is_json(o))
		out_begin_list(o, "interfaces");
	else
		out_table_begin(o, "interfaces", cols, 11);
	const struct kp_netdev *d;
	while (!(err = kp_netdev_iter_next(it, &d)) && d) {
		char mac[100], flags[200], addrs[1024] = "", n[4][24];
		mac_text(d, mac, sizeof(mac));
		if (out_is_json(o)) {
			json(o, d, mac);
			continue;
		}
		flags_text(d->flags, flags, sizeof(flags));
		uint64_t vals[4] = { d->rx_bytes, d->rx_packets, d->tx_bytes, d->tx_packets };
		for (int i = 0; i < 4; i++)
			snprintf(n[i], sizeof(n[i]), d->has_stats ? "%" PRIu64 : "-", vals[i]);
		// What does not fit (or was not kept) is counted, never cut silently.
		size_t a = 0, at = 0;
		for (; a < d->naddrs && at + strlen(d->addrs[a]) + 32 < sizeof(addrs); a++)
			at += (size_t)snprintf(addrs + at, sizeof(addrs) - at, "%s%s", a ? " " : "", d->addrs[a]);
		if (d->naddrs - a + d->addrs_not_shown)
			snprintf(addrs + at, sizeof(addrs) - at, "%s... (%zu more)", at ? " " : "",
				 d->naddrs - a + d->addrs_not_shown);
		out_cell_uint(o, d->netns);
		out_cell_int(o, d->index);
		out_cell_str(o, d->name);
		out_cell_str(o, flags);
		out_cell_uint(o, d->mtu);
		out_cell_str(o, mac[0] ? mac : "-");
		for (int i = 0; i < 4; i++)
			out_cell_str(o, n[i]);
		out_cell_str(o, addrs[0] ? addrs : "-");
	}
	struct cli_walk w = { .st = { .sz = sizeof(w.st) }, .err = err };
	kp_netdev_iter_status(it, &w.st);
	kp_netdev_iter_destroy(it);
	if (out_is_json(o)) {
		out_end_list(o);
		cli_walk_json(o, &w);
	} else {
		out_table_end(o);
	}
	out_destroy(o);
	return cli_walk_end("net", "interfaces", &w);
}
