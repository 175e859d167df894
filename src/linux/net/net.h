// SPDX-License-Identifier: MIT
// Networking: interfaces (dev.c, dev_info.c) and sockets.
#ifndef KP_LINUX_NET_H
#define KP_LINUX_NET_H

#include <kpeek/kpeek.h>

// The net_device at dev into ret: name, index, flags, MTU, MAC and the
// counters kpeek can tell the source of (not netns or addresses).
struct kp_error *kp_lx_netdev_decode(struct kp_kernel *kernel, uint64_t dev, struct kp_netdev *ret);
// Each IPv4 then IPv6 address of the net_device at dev, with its prefix
// length (family AF_INET or AF_INET6, addr in network order).
typedef void kp_lx_addr_fn(void *arg, int family, const void *addr, unsigned prefix);
struct kp_error *kp_lx_netdev_addrs(struct kp_kernel *kernel, uint64_t dev, kp_lx_addr_fn *fn, void *arg);

// One socket, decoded (sock.c).
struct kp_lx_sock {
	uint64_t sock;
	const char *netid, *state;
	uint16_t family, type;
	char local[128], peer[128];
	uint64_t inode, peer_inode, netns;
};
// The socket at sk (a struct sock_common first), found in the table of
// netid ("tcp", "udp", "raw", or "unix": its type then names it).
struct kp_error *kp_lx_sock_decode(struct kp_kernel *kernel, uint64_t sk, const char *netid,
				   struct kp_lx_sock *ret);

#endif
