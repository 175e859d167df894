// SPDX-License-Identifier: MIT
// One socket as ss shows it (include/net/sock.h struct sock_common, which
// struct sock, inet_timewait_sock and request_sock all start with): family,
// state, the address and port pairs (skc_rcv_saddr/skc_num local,
// skc_daddr/skc_dport peer; skc_v6_* for IPv6), the network namespace, and
// for a full socket (not TIME-WAIT or NEW_SYN_RECV) its type, its inode
// (struct socket_alloc: the socket and its inode together) and, for unix
// sockets, the bound address and the peer.
#include <arpa/inet.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "core/layout.h"
#include "linux/net/net.h"
#include "util/error.h"

#define AF_UNIX_ 1
#define AF_INET_ 2
#define AF_INET6_ 10
#define TCP_TIME_WAIT 6		// include/net/tcp_states.h
#define TCP_CLOSE 7
#define TCP_NEW_SYN_RECV 12
#define SOCK_STREAM_ 1
#define SOCK_DGRAM_ 2
#define SOCK_SEQPACKET_ 5
#define SUN_PATH 108

enum { C_DADDR, C_RCV_SADDR, C_DPORT, C_NUM, C_FAMILY, C_STATE, C_NET, C_V6_DADDR, C_V6_SADDR, C_N };
static const struct kp_member_spec common_members[C_N] = {
	[C_DADDR] = { .name = "skc_daddr" },
	[C_RCV_SADDR] = { .name = "skc_rcv_saddr" },
	[C_DPORT] = { .name = "skc_dport" },
	[C_NUM] = { .name = "skc_num" },
	[C_FAMILY] = { .name = "skc_family" },
	[C_STATE] = { .name = "skc_state" },
	[C_NET] = { .name = "skc_net.net" },
	[C_V6_DADDR] = { .name = "skc_v6_daddr", .flags = KP_MEMBER_OPTIONAL },	// CONFIG_IPV6
	[C_V6_SADDR] = { .name = "skc_v6_rcv_saddr", .flags = KP_MEMBER_OPTIONAL },
};
static const struct kp_struct_spec common_spec = KP_STRUCT_SPEC("struct sock_common", common_members);
enum { S_TYPE, S_SOCKET, S_N };
static const struct kp_member_spec sock_members[S_N] = {
	[S_TYPE] = { .name = "sk_type" }, [S_SOCKET] = { .name = "sk_socket" },
};
static const struct kp_struct_spec sock_spec = KP_STRUCT_SPEC("struct sock", sock_members);
static const struct kp_member_spec alloc_members[] = { { .name = "vfs_inode.i_ino", .flags = KP_MEMBER_NOSPAN } };
static const struct kp_struct_spec alloc_spec = KP_STRUCT_SPEC("struct socket_alloc", alloc_members);
static const struct kp_member_spec alloc_socket_members[] = { { .name = "socket", .flags = KP_MEMBER_NOSPAN } };
static const struct kp_struct_spec alloc_socket_spec = KP_STRUCT_SPEC("struct socket_alloc", alloc_socket_members);
static const struct kp_member_spec net_members[] = { { .name = "ns.inum" } };
static const struct kp_struct_spec net_spec = KP_STRUCT_SPEC("struct net", net_members);
enum { U_ADDR, U_PEER, U_N };
static const struct kp_member_spec unix_members[U_N] = { [U_ADDR] = { .name = "addr" }, [U_PEER] = { .name = "peer" } };
static const struct kp_struct_spec unix_spec = KP_STRUCT_SPEC("struct unix_sock", unix_members);
enum { A_LEN, A_NAME, A_N };
static const struct kp_member_spec uaddr_members[A_N] = {
	[A_LEN] = { .name = "len" }, [A_NAME] = { .name = "name", .flags = KP_MEMBER_NOSPAN },
};
static const struct kp_struct_spec uaddr_spec = KP_STRUCT_SPEC("struct unix_address", uaddr_members);

static const char *const states[] = {
	[1] = "ESTAB", [2] = "SYN-SENT", [3] = "SYN-RECV", [4] = "FIN-WAIT-1", [5] = "FIN-WAIT-2",
	[6] = "TIME-WAIT", [7] = "UNCONN", [8] = "CLOSE-WAIT", [9] = "LAST-ACK", [10] = "LISTEN",
	[11] = "CLOSING", [12] = "SYN-RECV",
};

// "ADDRESS:PORT" as ss prints it: IPv6 in brackets, port 0 as *.
static void inet_text(int family, const void *addr, unsigned port, char *buf, size_t size)
{
	char a[INET6_ADDRSTRLEN] = "?";
	inet_ntop(family, addr, a, sizeof(a));
	char p[16] = "*";
	if (port)
		snprintf(p, sizeof(p), "%u", port);
	snprintf(buf, size, family == AF_INET6 ? "[%s]:%s" : "%s:%s", a, p);
}

// The inode of the struct socket at socket (0 if none: an orphan).
static struct kp_error *socket_inode(struct kp_kernel *k, uint64_t socket, uint64_t *ret)
{
	const struct kp_struct_layout *il, *sl;
	struct kp_error *err;
	*ret = 0;
	if (!socket || (err = kp_kernel_layout(k, &alloc_spec, &il)) ||
	    (err = kp_kernel_layout(k, &alloc_socket_spec, &sl)))
		return socket ? err : NULL;
	uint64_t alloc = socket - kp_layout_off(sl, 0);
	return kp_read_u64(k, alloc + kp_layout_off(il, 0), ret);
}

// A unix socket's bound address ("/path", "@abstract") into buf, "*" if none.
static struct kp_error *unix_name(struct kp_kernel *k, uint64_t addr, char *buf, size_t size)
{
	const struct kp_struct_layout *l;
	char path[SUN_PATH + 1];
	uint32_t len;
	struct kp_error *err = kp_kernel_layout(k, &uaddr_spec, &l);
	snprintf(buf, size, "*");
	if (err || !addr || (err = kp_read_u32(k, addr + kp_layout_off(l, A_LEN), &len)))
		return err;
	// len counts sun_family (2 bytes) and the path.
	if (len <= 2 || len > 2 + SUN_PATH)
		return len <= 2 ? NULL : kp_error_create(KP_ERR_FORMAT, "unix_address at 0x%" PRIx64 ": length %u "
							  "(corrupt?)", addr, len);
	memset(path, 0, sizeof(path));
	if ((err = kp_read(k, KP_VIRT, addr + kp_layout_off(l, A_NAME) + 2, path, len - 2)))
		return err;
	if (path[0])
		snprintf(buf, size, "%s", path);
	else
		snprintf(buf, size, "@%.*s", (int)(len - 3), path + 1);
	return NULL;
}

static struct kp_error *unix_sock(struct kp_kernel *k, uint64_t sk, struct kp_lx_sock *s)
{
	const struct kp_struct_layout *l;
	uint64_t addr, peer, peer_socket;
	struct kp_error *err = kp_kernel_layout(k, &unix_spec, &l);
	if (err || (err = kp_read_u64(k, sk + kp_layout_off(l, U_ADDR), &addr)) ||
	    (err = kp_read_u64(k, sk + kp_layout_off(l, U_PEER), &peer)) ||
	    (err = unix_name(k, addr, s->local, sizeof(s->local))))
		return err;
	snprintf(s->peer, sizeof(s->peer), "*");
	const struct kp_struct_layout *sl;
	if (peer && !(err = kp_kernel_layout(k, &sock_spec, &sl)) &&
	    !(err = kp_read_u64(k, peer + kp_layout_off(sl, S_SOCKET), &peer_socket)))
		err = socket_inode(k, peer_socket, &s->peer_inode);
	s->netid = s->type == SOCK_STREAM_ ? "u_str" : s->type == SOCK_DGRAM_ ? "u_dgr" :
		   s->type == SOCK_SEQPACKET_ ? "u_seq" : "u_???";
	return err;
}

struct kp_error *kp_lx_sock_decode(struct kp_kernel *k, uint64_t sk, const char *netid, struct kp_lx_sock *s)
{
	static const struct kp_struct_spec *const specs[] = { &common_spec, &sock_spec, &net_spec };
	const struct kp_struct_layout *l[3];
	uint8_t buf[256];
	uint64_t socket;
	uint32_t inum = 0;
	struct kp_error *err = kp_kernel_layouts(k, specs, 3, l);
	if (err || (err = kp_kernel_read_struct(k, l[0], sk, buf, sizeof(buf))))
		return err;
	memset(s, 0, sizeof(*s));
	s->sock = sk;
	s->netid = netid;
	s->family = (uint16_t)kp_layout_u64(l[0], buf, C_FAMILY);
	unsigned state = (unsigned)kp_layout_u64(l[0], buf, C_STATE);
	s->state = state < sizeof(states) / sizeof(states[0]) && states[state] ? states[state] : "UNKNOWN";
	uint64_t net = kp_layout_u64(l[0], buf, C_NET);
	if (net && (err = kp_read_u32(k, net + kp_layout_off(l[2], 0), &inum)))
		return kp_error_prefix(err, "the namespace of socket 0x%" PRIx64, sk);
	s->netns = inum;
	if (state != TCP_TIME_WAIT && state != TCP_NEW_SYN_RECV) {
		uint16_t type;
		if ((err = kp_read_u16(k, sk + kp_layout_off(l[1], S_TYPE), &type)) ||
		    (err = kp_read_u64(k, sk + kp_layout_off(l[1], S_SOCKET), &socket)) ||
		    (err = socket_inode(k, socket, &s->inode)))
			return kp_error_prefix(err, "socket 0x%" PRIx64, sk);
		s->type = type;
	}
	if (s->family == AF_UNIX_) {
		err = unix_sock(k, sk, s);
		return err ? kp_error_prefix(err, "unix socket 0x%" PRIx64, sk) : NULL;
	}
	unsigned lport = (unsigned)kp_layout_u64(l[0], buf, C_NUM);
	unsigned dport = ntohs((uint16_t)kp_layout_u64(l[0], buf, C_DPORT));
	if (s->family == AF_INET6_ && kp_layout_has(l[0], C_V6_SADDR)) {
		inet_text(AF_INET6, kp_layout_at(l[0], buf, C_V6_SADDR), lport, s->local, sizeof(s->local));
		inet_text(AF_INET6, kp_layout_at(l[0], buf, C_V6_DADDR), dport, s->peer, sizeof(s->peer));
	} else if (s->family == AF_INET_) {
		uint32_t saddr = (uint32_t)kp_layout_u64(l[0], buf, C_RCV_SADDR);
		uint32_t daddr = (uint32_t)kp_layout_u64(l[0], buf, C_DADDR);
		inet_text(AF_INET, &saddr, lport, s->local, sizeof(s->local));
		inet_text(AF_INET, &daddr, dport, s->peer, sizeof(s->peer));
	} else {
		return kp_error_create(KP_ERR_FORMAT, "socket 0x%" PRIx64 " of family %u in the %s table (corrupt?)",
				       sk, s->family, netid);
	}
	if (state == TCP_CLOSE && !strcmp(netid, "tcp"))
		s->state = "CLOSE";
	return NULL;
}
