// SPDX-License-Identifier: MIT
// kp_netdev_iter (linux/net/dev.c, dev_info.c) and kp_socket_iter
// (linux/net/sockets.c, sock.c, linux/lib/hlist.c) on the synthetic
// kernel's network (tests/gen/synthsys.h, synthsys_net.c): what is
// expected is what the generator wrote there.
#include "sys_open.h"

struct want_dev {
	const char *name;
	uint64_t netns;
	int32_t index;
	uint32_t flags, mtu;
	uint8_t mac[6];
	const char *stats;
	uint64_t rx_packets, rx_bytes, tx_packets, tx_bytes;
	const char *addrs[4];
};

// lo: lstats of CPUs 0-2 (10, 20, 30 packets of 100 bytes); eth0: stats
// plus tstats of CPUs 0-2; the second namespace's lo: stats alone.
static const struct want_dev devs[SKS_NDEVS] = {
	{ "lo", SKS_INIT_NET_INUM, 1, 0x49, 65536, { 0 }, "lstats", 60, 6000, 60, 6000, { "127.0.0.1/8", "::1/128" } },
	{ "eth0", SKS_INIT_NET_INUM, 2, 0x1043, 1500, { 0x52, 0x54, 0, 0x12, 0x34, 0x56 }, "stats+tstats", 103,
	  10300, 56, 5600, { "10.0.2.15/24", "10.0.2.16/24", "fe80::5054:ff:fe12:3456/64", "2001:db8::15/64" } },
	{ "lo", SKS_NET2_INUM, 1, 0x8, 65536, { 0 }, "stats", 7, 700, 7, 700, { NULL } },
};

static void check_dev(const struct kp_netdev *d, unsigned i)
{
	const struct want_dev *w = &devs[i];
	CHECK_U64(d->address, SKP_VA(SKS_DEV(i)));
	CHECK_STR(d->name, w->name);
	CHECK_U64(d->netns, w->netns);
	CHECK_U64(d->index, w->index);
	CHECK_U64(d->flags, w->flags);
	CHECK_U64(d->mtu, w->mtu);
	CHECK_U64(d->mac_len, 6);
	CHECK(!memcmp(d->mac, w->mac, 6));
	CHECK(d->has_stats);
	CHECK_STR(d->stats_source, w->stats);
	CHECK_U64(d->rx_packets, w->rx_packets);
	CHECK_U64(d->rx_bytes, w->rx_bytes);
	CHECK_U64(d->tx_packets, w->tx_packets);
	CHECK_U64(d->tx_bytes, w->tx_bytes);
	size_t n = 0;
	while (n < 4 && w->addrs[n])
		n++;
	CHECK_U64(d->naddrs, n);
	for (size_t a = 0; a < n && a < d->naddrs; a++)
		CHECK_STR(d->addrs[a], w->addrs[a]);
}

static struct kp_error *walk_devs(struct kp_kernel *k, unsigned *seen, struct kp_walk_status *st)
{
	struct kp_netdev_iter *it;
	const struct kp_netdev *d;
	struct kp_error *err = kp_netdev_iter_create(k, &it);
	*seen = 0;
	if (err)
		return err;
	while (!(err = kp_netdev_iter_next(it, &d)) && d) {
		unsigned i = (unsigned)((d->address - SKP_VA(SKS_DEV(0))) / 0x100);
		CHECK(i < SKS_NDEVS && *seen >> i == 0);
		if (i < SKS_NDEVS) {
			*seen |= 1u << i;
			check_dev(d, i);
		}
	}
	kp_netdev_iter_status(it, st);
	kp_netdev_iter_destroy(it);
	return err;
}

struct want_sock {
	const char *netid, *state, *local, *peer;
	uint16_t family;
	uint64_t netns, peer_inode;
	size_t npids;
};

// In the walker's order: TCP listening, established, UDP, raw, unix.
static const struct { unsigned sock; struct want_sock w; } socks[] = {
	{ SKS_S_LISTEN, { "tcp", "LISTEN", "0.0.0.0:22", "0.0.0.0:*", 2, SKS_INIT_NET_INUM, 0, 2 } },
	{ SKS_S_LISTEN6, { "tcp", "LISTEN", "[::]:80", "[::]:*", 10, SKS_NET2_INUM, 0, 0 } },
	{ SKS_S_ESTAB, { "tcp", "ESTAB", "10.0.2.15:22", "10.0.2.2:51000", 2, SKS_INIT_NET_INUM, 0, 0 } },
	{ SKS_S_TW, { "tcp", "TIME-WAIT", "10.0.2.15:22", "10.0.2.2:50999", 2, SKS_INIT_NET_INUM, 0, 0 } },
	{ SKS_S_UDP, { "udp", "UNCONN", "0.0.0.0:68", "0.0.0.0:*", 2, SKS_INIT_NET_INUM, 0, 0 } },
	{ SKS_S_RAW, { "raw", "UNCONN", "0.0.0.0:1", "0.0.0.0:*", 2, SKS_INIT_NET_INUM, 0, 0 } },
	{ SKS_S_UNIX_A, { "u_str", "LISTEN", "/run/sock", "*", 1, SKS_INIT_NET_INUM, 0, 0 } },
	{ SKS_S_UNIX_B, { "u_dgr", "UNCONN", "@abs", "*", 1, SKS_INIT_NET_INUM, 5006, 0 } },
};
#define NSOCKS (sizeof(socks) / sizeof(socks[0]))

// The sockets yielded, as bits of their place in socks[] (in order).
static struct kp_error *walk_socks(struct kp_kernel *k, unsigned *seen, struct kp_walk_status *st)
{
	struct kp_socket_iter *it;
	const struct kp_socket *s;
	struct kp_error *err = kp_socket_iter_create(k, &it);
	*seen = 0;
	if (err)
		return err;
	while (!(err = kp_socket_iter_next(it, &s)) && s) {
		size_t i = 0;
		while (i < NSOCKS && SKP_VA(SKS_SK(socks[i].sock)) != s->sock)
			i++;
		CHECK(i < NSOCKS && *seen >> i == 0);
		if (i == NSOCKS)
			continue;
		*seen |= 1u << i;
		const struct want_sock *w = &socks[i].w;
		CHECK_STR(s->netid, w->netid);
		CHECK_STR(s->state, w->state);
		CHECK_STR(s->local, w->local);
		CHECK_STR(s->peer, w->peer);
		CHECK_U64(s->family, w->family);
		CHECK_U64(s->inode, sks_sock_inode[socks[i].sock]);
		CHECK_U64(s->peer_inode, w->peer_inode);
		CHECK_U64(s->netns, w->netns);
		CHECK_U64(s->npids, w->npids);
		for (size_t p = 0; p < s->npids && p < w->npids; p++)
			CHECK_U64(s->pids[p], p + 1);	// tasks 1 and 2 share the fd table
	}
	kp_socket_iter_status(it, st);
	kp_socket_iter_destroy(it);
	return err;
}

TEST(interfaces_and_sockets_of_both_generations)
{
	for (enum sk_sys sys = SK_SYS_NEW; sys <= SK_SYS_OLD; sys++) {
		struct kp_kernel *k = sys_open(sys, NULL);
		KP_INIT(kp_walk_status, st);
		unsigned seen;
		if (!k)
			return;
		CHECK_OK(walk_devs(k, &seen, &st));
		CHECK_U64(seen, 0x7);
		CHECK(st.end == KP_WALK_COMPLETE && st.left_out == 0);
		CHECK_OK(walk_socks(k, &seen, &st));
		CHECK_U64(seen, 0xff);
		CHECK(st.end == KP_WALK_COMPLETE && st.left_out == 0);
		kp_kernel_destroy(k);
	}
}

struct hostile {
	const char *what;
	bool sockets;
	struct sks_word edit[3];
	unsigned seen;
	enum kp_error_code code;
	const char *message;
	uint64_t left_out;
};

static const struct hostile cases[] = {
	// eth0's IPv4 addresses loop (ifa_next, singly linked): bounded.
	{ "ifa cycle", false, { { SKS_IFA(2) + SKS_IFA_NEXT, SKP_VA(SKS_IFA(1)), 8 } }, 0x5, KP_ERR_LOOP,
	  "more than 4096 addresses", 1 },
	// init_net's device list does not come back: the devices before it.
	{ "dev list", false, { { SKS_DEV(1) + SKS_DEV_LIST, SKP_VA(SKS_DEV(0) + SKS_DEV_LIST), 8 } }, 0x3,
	  KP_ERR_FORMAT, "dev_base_head is corrupt", 0 },
	{ "addr_len", false, { { SKS_DEV(1) + SKS_DEV_ADDR_LEN, 200, 1 } }, 0x5, KP_ERR_FORMAT, "addr_len 200", 1 },
	{ "unmapped", false, { { SKS_DEV(0) + SKS_DEV_IP6, UNMAPPED, 8 } }, 0x6, KP_ERR_FAULT,
	  "the IPv6 addresses of net_device 0xffff88800004b000: list: reading the list head at 0xffffc90000400008", 1 },
	{ "no page", false, { { SKS_DEV(1) + SKS_DEV_ADDR, SK_HOLE, 8 } }, 0x5, KP_ERR_FAULT, "the address of eth0",
	  1 },
	// The UDP chain loops on its socket: the sockets before the loop stand.
	{ "udp cycle", true, { { SKS_SK(SKS_S_UDP) + SKS_SKC_NODE, SKP_VA(SKS_SK(SKS_S_UDP) + SKS_SKC_NODE), 8 } },
	  0x1f, KP_ERR_LOOP, "udp hash: the chain at 0xffff88800004c090 loops", 0 },
	// An established hash of 2^32 buckets.
	{ "ehash mask", true, { { SKS_TCP_HASHINFO + 0x10, 0xffffffff, 4 } }, 0x3, KP_ERR_FORMAT,
	  "tcp established hash: 4294967296 buckets", 0 },
	{ "unmapped", true, { { SKS_SK(SKS_S_ESTAB) + SKS_SKC_NET, UNMAPPED, 8 } }, 0xfb, KP_ERR_FAULT,
	  "the namespace of socket 0xffff88800004c200: virtual address 0xffffc90000400038", 1 },
	{ "no page", true, { { SKS_SK(SKS_S_UNIX_A) + SKS_UNIX_ADDR, SK_HOLE, 8 } }, 0xbf, KP_ERR_FAULT,
	  "unix socket 0xffff88800004c700: virtual address 0xffffffff9f01d004", 1 },
};

TEST(hostile_networks)
{
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct hostile *c = &cases[i];
		struct kp_kernel *k = sys_open(SK_SYS_NEW, c->edit);
		KP_INIT(kp_walk_status, st);
		unsigned seen;
		if (!k)
			return;
		printf("  %s %s\n", c->sockets ? "sockets:" : "interfaces:", c->what);
		CHECK_ERR(c->sockets ? walk_socks(k, &seen, &st) : walk_devs(k, &seen, &st), c->code, c->message);
		CHECK_U64(seen, c->seen);
		CHECK(st.end == KP_WALK_STOPPED);
		CHECK_U64(st.left_out, c->left_out);
		kp_kernel_destroy(k);
	}
}

// No process holds a socket (fd 4 closed): every socket without PIDs.
TEST(sockets_held_by_no_process)
{
	const struct sks_word edit[] = { { SKP_FD_ARRAY + 8 * SKS_SOCK_FD, 0, 8 }, { 0, 0, 0 } };
	struct kp_kernel *k = sys_open(SK_SYS_NEW, edit);
	struct kp_socket_iter *it;
	const struct kp_socket *s;
	size_t n = 0;
	if (!k)
		return;
	CHECK_OK(kp_socket_iter_create(k, &it));
	struct kp_error *err;
	while (!(err = kp_socket_iter_next(it, &s)) && s) {
		CHECK_U64(s->npids, 0);
		n++;
	}
	CHECK_OK(err);
	CHECK_U64(n, NSOCKS);
	kp_socket_iter_destroy(it);
	kp_kernel_destroy(k);
}

TEST(a_kernel_without_a_network_says_so)
{
	struct kp_kernel *k = sys_open(SK_SYS_NONE, NULL);
	struct kp_netdev_iter *dit = NULL;
	struct kp_socket_iter *sit = NULL;
	if (!k)
		return;
	CHECK_ERR(kp_netdev_iter_create(k, &dit), KP_ERR_NOT_FOUND, "struct net_device");
	CHECK_ERR(kp_socket_iter_create(k, &sit), KP_ERR_NOT_FOUND, "struct sock_common");
	CHECK(!dit && !sit);
	kp_kernel_destroy(k);
}

// eth0 with 300 more IPv4 addresses (10.1.0.0/16 ...), chained after its
// two in the free area: the first 256 of all its addresses are listed, the
// other 48 (the last 46 IPv4, both IPv6) counted in addrs_not_shown.
#define MANY 300
static void many_addresses(uint8_t *m, void *arg)
{
	(void)arg;
	sk_put64(m, SKS_IFA(2) + SKS_IFA_NEXT, SKP_VA(SKS_FREE));
	for (unsigned i = 0; i < MANY; i++) {
		uint64_t pa = SKS_FREE + 0x20 * i;
		uint8_t a[4] = { 10, 1, (uint8_t)(i >> 8), (uint8_t)i };
		memcpy(m + pa + SKS_IFA_LOCAL, a, 4);
		memcpy(m + pa + SKS_IFA_LOCAL + 4, a, 4);
		m[pa + SKS_IFA_PREFIX] = 16;
		sk_put64(m, pa + SKS_IFA_NEXT, i + 1 < MANY ? SKP_VA(pa + 0x20) : 0);
	}
}

TEST(addresses_beyond_the_cap_are_counted)
{
	struct sk_opts o = { .format = SK_ELF, .ntasks = 12, .procs = SK_PROCS_LIST, .sys = SK_SYS_NEW,
			     .edit = many_addresses };
	struct kp_kernel *k = NULL;
	CHECK_OK(sk_open(&o, &k));
	struct kp_netdev_iter *it = NULL;
	const struct kp_netdev *d;
	if (k)
		CHECK_OK(kp_netdev_iter_create(k, &it));
	if (!it) {
		kp_kernel_destroy(k);
		return;
	}
	bool eth0 = false;
	struct kp_error *err;
	while (!(err = kp_netdev_iter_next(it, &d)) && d) {
		if (d->address != SKP_VA(SKS_DEV(1))) {
			CHECK_U64(d->addrs_not_shown, 0);
			continue;
		}
		eth0 = true;
		CHECK_U64(d->naddrs, 256);
		CHECK_U64(d->addrs_not_shown, 2 + MANY + 2 - 256);
		CHECK_STR(d->addrs[0], "10.0.2.15/24");
		CHECK_STR(d->addrs[1], "10.0.2.16/24");
		CHECK_STR(d->addrs[2], "10.1.0.0/16");
		CHECK_STR(d->addrs[255], "10.1.0.253/16");
	}
	CHECK_OK(err);
	CHECK(eth0);
	kp_netdev_iter_destroy(it);
	kp_kernel_destroy(k);
}

int main(void)
{
	RUN(interfaces_and_sockets_of_both_generations);
	RUN(hostile_networks);
	RUN(sockets_held_by_no_process);
	RUN(a_kernel_without_a_network_says_so);
	RUN(addresses_beyond_the_cap_are_counted);
	return TEST_SUMMARY();
}
