// SPDX-License-Identifier: MIT
// The network of the synthetic kernel's system (synthsys.h): namespaces,
// interfaces with their addresses and counters, and sockets.
#include <arpa/inet.h>
#include <string.h>

#include "synthsys_world.h"

const uint64_t sks_sock_inode[SKS_NSOCKS] = { 5001, 5002, 0, 5003, 5004, 5005, 5006, 5007 };

static void put_net(struct sks_world *w, unsigned i, uint32_t inum)
{
	sk_put32(w->m, SKS_NETNS(i) + SKS_NET_NS + SKP_NS_INUM, inum);
}

// lo and eth0 in init_net, a lo (down, no addresses) in the second.
static void devices(struct sks_world *w)
{
	uint8_t *m = w->m;
	static const struct {
		const char *name;
		int ifindex;
		uint32_t flags, mtu;
		uint8_t mac[6];
	} devs[SKS_NDEVS] = {
		{ "lo", 1, 0x49, 65536, { 0 } },
		{ "eth0", 2, 0x1043, 1500, { 0x52, 0x54, 0x00, 0x12, 0x34, 0x56 } },
		{ "lo", 1, 0x8, 65536, { 0 } },
	};
	for (unsigned i = 0; i < SKS_NDEVS; i++) {
		uint64_t d = SKS_DEV(i);
		memcpy(m + d, devs[i].name, strlen(devs[i].name) + 1);
		sk_put64(m, d + SKS_DEV_OPS, SKP_VA(SKS_OPS(i)));
		sk_put32(m, d + SKS_DEV_FLAGS, devs[i].flags);
		sk_put32(m, d + SKS_DEV_MTU, devs[i].mtu);
		sk_put32(m, d + SKS_DEV_IFINDEX, (uint32_t)devs[i].ifindex);
		m[d + SKS_DEV_ADDR_LEN] = 6;
		memcpy(m + SKS_MACS + 8 * i, devs[i].mac, 6);
		sk_put64(m, d + SKS_DEV_ADDR, SKP_VA(SKS_MACS + 8 * i));
		sk_put64(m, d + 0x98, SKS_IMG(SKS_NETNS(i == 2)));
	}
	// lo: loopback_get_stats64 over lstats; eth0: dev_get_tstats64
	// (stats + tstats); the other lo: no ndo_get_stats64 (stats).
	sk_put64(m, SKS_OPS(0), SKS_LOOPBACK_STATS);
	sk_put64(m, SKS_OPS(1), SKS_TSTATS_FN);
	sk_put64(m, SKS_DEV(0) + SKS_DEV_PCPU, SKS_PC_LSTATS);
	sk_put64(m, SKS_DEV(1) + SKS_DEV_PCPU, SKS_PC_TSTATS);
	for (unsigned cpu = 0; cpu < 4; cpu++) {
		uint64_t k = cpu == 3 ? 999 : cpu + 1;	// CPU 3 is not possible
		sk_put64(m, SKS_PCPU(cpu) + SKS_PC_LSTATS, 10 * k);
		sk_put64(m, SKS_PCPU(cpu) + SKS_PC_LSTATS + 8, 1000 * k);
		const uint64_t t[4] = { 1, 100, 2, 200 };	// rx packets, bytes, tx packets, bytes
		for (unsigned j = 0; j < 4; j++)
			sk_put64(m, SKS_PCPU(cpu) + SKS_PC_TSTATS + 8 * j, cpu == 3 ? 999 : t[j]);
	}
	const uint64_t stats[2][4] = { { 100, 50, 10000, 5000 }, { 7, 7, 700, 700 } };
	for (unsigned j = 0; j < 4; j++) {
		sk_put64(m, SKS_DEV(1) + SKS_DEV_STATS + 8 * j, stats[0][j]);
		sk_put64(m, SKS_DEV(2) + SKS_DEV_STATS + 8 * j, stats[1][j]);
	}
}

// 127.0.0.1/8 and ::1/128 on lo; 10.0.2.15/24, 10.0.2.16/24,
// fe80::5054:ff:fe12:3456/64 and 2001:db8::15/64 on eth0.
static void addresses(struct sks_world *w)
{
	uint8_t *m = w->m;
	static const struct { const char *addr; unsigned prefix; } v4[] = {
		{ "127.0.0.1", 8 }, { "10.0.2.15", 24 }, { "10.0.2.16", 24 },
	}, v6[] = { { "::1", 128 }, { "fe80::5054:ff:fe12:3456", 64 }, { "2001:db8::15", 64 } };
	for (unsigned i = 0; i < 3; i++) {
		uint32_t a;
		inet_pton(AF_INET, v4[i].addr, &a);
		sk_put32(m, SKS_IFA(i) + SKS_IFA_LOCAL, a);
		sk_put32(m, SKS_IFA(i) + SKS_IFA_LOCAL + 4, a);
		m[SKS_IFA(i) + SKS_IFA_PREFIX] = (uint8_t)v4[i].prefix;
		inet_pton(AF_INET6, v6[i].addr, m + SKS_IFA6(i));
		sk_put32(m, SKS_IFA6(i) + SKS_IFA6_PREFIX, v6[i].prefix);
	}
	sk_put64(m, SKS_IFA(1) + SKS_IFA_NEXT, SKP_VA(SKS_IFA(2)));
	for (unsigned d = 0; d < 2; d++) {
		sk_put64(m, SKS_DEV(d) + SKS_DEV_IP, SKP_VA(SKS_IN_DEV(d)));
		sk_put64(m, SKS_DEV(d) + SKS_DEV_IP6, SKP_VA(SKS_IN6_DEV(d)));
		sk_put64(m, SKS_IN_DEV(d), SKP_VA(SKS_DEV(d)));
		sk_put64(m, SKS_IN_DEV(d) + SKS_IN_DEV_IFA, SKP_VA(SKS_IFA(d)));
		sk_put64(m, SKS_IN6_DEV(d), SKP_VA(SKS_DEV(d)));
	}
	uint64_t lo6[] = { SKS_IFA6(0) + SKS_IFA6_LIST }, eth6[] = { SKS_IFA6(1) + SKS_IFA6_LIST,
								    SKS_IFA6(2) + SKS_IFA6_LIST };
	sks_list(w, SKS_IN6_DEV(0) + SKS_IN6_DEV_LIST, lo6, 1, false);
	sks_list(w, SKS_IN6_DEV(1) + SKS_IN6_DEV_LIST, eth6, 2, false);
}

static void namespaces(struct sks_world *w)
{
	uint64_t nets[2] = { SKS_NETNS(0) + SKS_NET_LIST_OFF, SKS_NETNS(1) + SKS_NET_LIST_OFF };
	uint64_t devs0[2] = { SKS_DEV(0) + SKS_DEV_LIST, SKS_DEV(1) + SKS_DEV_LIST };
	uint64_t devs1[1] = { SKS_DEV(2) + SKS_DEV_LIST };
	sks_list(w, SKS_NET_LIST, nets, 2, true);
	put_net(w, 0, SKS_INIT_NET_INUM);
	put_net(w, 1, SKS_NET2_INUM);
	sks_list(w, SKS_NETNS(0) + SKS_NET_DEVS, devs0, 2, false);
	sks_list(w, SKS_NETNS(1) + SKS_NET_DEVS, devs1, 1, false);
}

static const struct sock_def {
	uint16_t family, type, lport, rport;
	uint8_t state;
	const char *local, *peer;
	unsigned net;
} socks[SKS_NSOCKS] = {
	[SKS_S_LISTEN] = { AF_INET, 1, 22, 0, 10, "0.0.0.0", "0.0.0.0", 0 },
	[SKS_S_ESTAB] = { AF_INET, 1, 22, 51000, 1, "10.0.2.15", "10.0.2.2", 0 },
	[SKS_S_TW] = { AF_INET, 0, 22, 50999, 6, "10.0.2.15", "10.0.2.2", 0 },
	[SKS_S_LISTEN6] = { AF_INET6, 1, 80, 0, 10, "::", "::", 1 },
	[SKS_S_UDP] = { AF_INET, 2, 68, 0, 7, "0.0.0.0", "0.0.0.0", 0 },
	[SKS_S_RAW] = { AF_INET, 3, 1, 0, 7, "0.0.0.0", "0.0.0.0", 0 },
	[SKS_S_UNIX_A] = { AF_UNIX, 1, 0, 0, 10, "/run/sock", NULL, 0 },
	[SKS_S_UNIX_B] = { AF_UNIX, 2, 0, 0, 7, "\0abs", NULL, 0 },
};

static void sock(struct sks_world *w, unsigned i)
{
	uint8_t *m = w->m;
	const struct sock_def *s = &socks[i];
	uint64_t sk = SKS_SK(i);
	sk_put32(m, sk + SKS_SKC_FAMILY, s->family);
	m[sk + SKS_SKC_STATE] = s->state;
	sk_put64(m, sk + SKS_SKC_NET, SKS_IMG(SKS_NETNS(s->net)));
	if (s->family == AF_INET) {
		inet_pton(AF_INET, s->local, m + sk + SKS_SKC_RCV_SADDR);
		inet_pton(AF_INET, s->peer, m + sk + SKS_SKC_DADDR);
	} else if (s->family == AF_INET6) {
		inet_pton(AF_INET6, s->local, m + sk + SKS_SKC_V6_SADDR);
		inet_pton(AF_INET6, s->peer, m + sk + SKS_SKC_V6_DADDR);
	}
	m[sk + SKS_SKC_NUM] = (uint8_t)s->lport;	// host order
	m[sk + SKS_SKC_NUM + 1] = (uint8_t)(s->lport >> 8);
	m[sk + SKS_SKC_DPORT] = (uint8_t)(s->rport >> 8);	// network order
	m[sk + SKS_SKC_DPORT + 1] = (uint8_t)s->rport;
	if (i == SKS_S_TW)
		return;	// an inet_timewait_sock: sock_common only
	m[sk + SKS_SK_TYPE] = (uint8_t)s->type;
	sk_put64(m, sk + SKS_SK_SOCKET, SKP_VA(SKS_ALLOC(i)));
	sk_put64(m, SKS_ALLOC(i) + 0x18, SKP_VA(sk));
	sk_put64(m, SKS_ALLOC(i) + SKS_ALLOC_INODE + SKP_INODE_INO, sks_sock_inode[i]);
	sk_put32(m, SKS_ALLOC(i) + SKS_ALLOC_INODE + SKP_INODE_MODE, 0140777);
	if (s->family == AF_UNIX) {
		uint64_t a = SKS_UADDR(i - SKS_S_UNIX_A);
		size_t len = i == SKS_S_UNIX_A ? strlen(s->local) + 1 : 4;
		sk_put32(m, a + 4, (uint32_t)(2 + len));
		m[a + 8] = AF_UNIX;
		memcpy(m + a + 10, s->local, len);
		sk_put64(m, sk + SKS_UNIX_ADDR, SKP_VA(a));
	}
}

// Chains of the hash tables: the first node at head, each next at the node.
static void chain(struct sks_world *w, uint64_t head, const unsigned *sk, size_t n, uint64_t off, uint64_t end)
{
	for (size_t i = 0; i < n; i++) {
		sk_put64(w->m, i ? SKS_SK(sk[i - 1]) + off : head, SKP_VA(SKS_SK(sk[i]) + off));
		sk_put64(w->m, SKS_SK(sk[i]) + off + 8, i ? SKP_VA(SKS_SK(sk[i - 1]) + off) : SKP_VA(head));
	}
	sk_put64(w->m, n ? SKS_SK(sk[n - 1]) + off : head, end);
}

static void tables(struct sks_world *w)
{
	uint8_t *m = w->m;
	bool old = w->o->sys == SK_SYS_OLD;
	uint64_t h = SKS_TCP_HASHINFO;
	sk_put64(m, h, SKP_VA(SKS_EHASH));
	sk_put32(m, h + 0x10, 7);
	sk_put64(m, h + 0x30, SKP_VA(SKS_LHASH2));
	sk_put32(m, h + 0x28, 3);
	for (uint64_t b = 0; b < 8; b++)
		sk_put64(m, SKS_EHASH + 8 * b, b << 1 | 1);	// empty hlist_nulls
	for (uint64_t b = 0; b < 4; b++)
		sk_put64(m, SKS_LHASH2 + 0x10 * b + 8, old ? 0 : b << 1 | 1);
	static const unsigned est[] = { SKS_S_ESTAB, SKS_S_TW }, lis[] = { SKS_S_LISTEN, SKS_S_LISTEN6 };
	static const unsigned udp[] = { SKS_S_UDP }, raw[] = { SKS_S_RAW };
	static const unsigned unx[] = { SKS_S_UNIX_A, SKS_S_UNIX_B };
	chain(w, SKS_EHASH + 8 * 5, est, 2, SKS_SKC_NODE, 5 << 1 | 1);
	chain(w, SKS_LHASH2 + 0x10 * 3 + 8, lis, 2, old ? SKS_ICSK_PORTADDR : SKS_SKC_NODE, old ? 0 : 3 << 1 | 1);
	sk_put64(m, SKS_UDP_TABLE, SKP_VA(SKS_HSLOT));
	sk_put32(m, SKS_UDP_TABLE + 0x10, 3);
	chain(w, SKS_HSLOT + 0x10 * 1, udp, 1, SKS_SKC_NODE, 0);
	chain(w, SKS_RAW_V4 + 8 + 8 * 1, raw, 1, SKS_SKC_NODE, 0);
	chain(w, SKS_UNIX_TABLE, unx, 2, SKS_SKC_NODE, 0);
	if (!old)
		sk_put64(m, SKS_NETNS(0) + SKS_NET_UNIX, SKP_VA(SKS_UNIX_TABLE));
	sk_put64(m, SKS_SK(SKS_S_UNIX_B) + SKS_UNIX_PEER, SKP_VA(SKS_SK(SKS_S_UNIX_A)));
}

// fd 4 of the processes' table: the listening TCP socket's file (sockfs).
static void socket_file(struct sks_world *w)
{
	uint8_t *m = w->m;
	uint64_t file = SKS_FILES, dentry = SKS_FILES + 0x40, inode = SKS_FILES + 0x80, sb = SKS_FILES + 0xc0;
	sk_put32(m, file, 02);
	sk_put64(m, file + 0x18, SKP_VA(dentry));
	sk_put64(m, file + 0x20, SKP_VA(inode));
	sk_put64(m, dentry + 0x10, SKP_VA(dentry));
	sk_put64(m, dentry + 0x20, sks_name(w, ""));
	sk_put64(m, dentry + 0x28, SKP_VA(inode));
	sk_put64(m, dentry + 0x30, SKP_VA(sb));
	sk_put32(m, inode + SKP_INODE_MODE, 0140777);
	sk_put64(m, inode + SKP_INODE_INO, sks_sock_inode[SKS_S_LISTEN]);
	sk_put64(m, inode + 0x10, SKP_VA(sb));
	sk_put64(m, sb + 0x10, 0x534F434B);	// SOCKFS_MAGIC
	sk_put64(m, sb + 0x18, SKP_VA(SKS_FILES + 0x100));
	sk_put64(m, sb + 0x28, SKP_VA(dentry));
	sk_put64(m, SKS_FILES + 0x100, sks_name(w, "sockfs"));
	sk_put64(m, SKP_FD_ARRAY + 8 * SKS_SOCK_FD, SKP_VA(file));
	m[SKP_OPEN_FDS] |= 1u << SKS_SOCK_FD;
}

void sks_write_net(struct sks_world *w)
{
	namespaces(w);
	devices(w);
	addresses(w);
	for (unsigned i = 0; i < SKS_NSOCKS; i++)
		sock(w, i);
	tables(w);
	socket_file(w);
}
