// SPDX-License-Identifier: MIT
// One network interface as `ip addr` and /proc/net/dev show it: name,
// index, flags (dev->flags: IFF_*), MTU, MAC (dev_addr, addr_len bytes),
// its IPv4 addresses (in_device->ifa_list, singly linked by ifa_next) and
// IPv6 addresses (inet6_dev->addr_list of inet6_ifaddr.if_list).
//
// Counters are taken where dev_get_stats() takes them, told by the
// driver's ndo_get_stats64 (by symbol):
//   none                  dev->stats (struct net_device_stats)
//   loopback_get_stats64  the per-CPU lstats, as received and sent
//   dummy_get_stats64     the per-CPU lstats, as sent (5.10..6.x)
//   dev_get_tstats64      dev->stats plus the per-CPU tstats
//   dev_get_dstats64      dev->stats plus the per-CPU dstats (6.13)
// Any other driver keeps counters of its own: none known (has_stats false).
#include <arpa/inet.h>
#include <inttypes.h>
#include <string.h>

#include "core/kernel.h"
#include "core/layout.h"
#include "linux/net/net.h"
#include "util/error.h"

#define MAX_ADDRS 4096	// per family and interface: beyond, the list is corrupt

enum { D_NAME, D_INDEX, D_FLAGS, D_MTU, D_ADDR, D_ADDR_LEN, D_OPS, D_PCPU, D_STATS, D_N };
static const struct kp_member_spec dev_members[D_N] = {
	[D_NAME] = { .name = "name" },
	[D_INDEX] = { .name = "ifindex" },
	[D_FLAGS] = { .name = "flags" },
	[D_MTU] = { .name = "mtu" },
	[D_ADDR] = { .name = "dev_addr" },
	[D_ADDR_LEN] = { .name = "addr_len" },
	[D_OPS] = { .name = "netdev_ops" },
	[D_PCPU] = { .name = "lstats" },	// a union with tstats and dstats
	[D_STATS] = { .name = "stats", .flags = KP_MEMBER_NOSPAN },
};
static const struct kp_struct_spec dev_spec = KP_STRUCT_SPEC("struct net_device", dev_members);
enum { A_IP, A_IP6, A_N };
static const struct kp_member_spec addr_members[A_N] = {
	[A_IP] = { .name = "ip_ptr", .flags = KP_MEMBER_OPTIONAL },	// CONFIG_INET
	[A_IP6] = { .name = "ip6_ptr", .flags = KP_MEMBER_OPTIONAL },	// CONFIG_IPV6
};
static const struct kp_struct_spec addr_spec = KP_STRUCT_SPEC("struct net_device", addr_members);
static const struct kp_member_spec ops_members[] = { { .name = "ndo_get_stats64" } };
static const struct kp_struct_spec ops_spec = KP_STRUCT_SPEC("struct net_device_ops", ops_members);
enum { S_RX_PACKETS, S_TX_PACKETS, S_RX_BYTES, S_TX_BYTES, S_N };
static const struct kp_member_spec stats_members[S_N] = {
	[S_RX_PACKETS] = { .name = "rx_packets" }, [S_TX_PACKETS] = { .name = "tx_packets" },
	[S_RX_BYTES] = { .name = "rx_bytes" }, [S_TX_BYTES] = { .name = "tx_bytes" },
};
static const struct kp_struct_spec stats_spec = KP_STRUCT_SPEC("struct net_device_stats", stats_members);
static const struct kp_struct_spec tstats_spec = KP_STRUCT_SPEC("struct pcpu_sw_netstats", stats_members);
static const struct kp_struct_spec dstats_spec = KP_STRUCT_SPEC_OPTIONAL("struct pcpu_dstats", stats_members);
enum { L_PACKETS, L_BYTES, L_N };
static const struct kp_member_spec lstats_members[L_N] = {
	[L_PACKETS] = { .name = "packets" }, [L_BYTES] = { .name = "bytes" },
};
static const struct kp_struct_spec lstats_spec = KP_STRUCT_SPEC("struct pcpu_lstats", lstats_members);
enum { I4_LIST, I4_N };
static const struct kp_member_spec in_dev_members[I4_N] = { [I4_LIST] = { .name = "ifa_list" } };
static const struct kp_struct_spec in_dev_spec = KP_STRUCT_SPEC("struct in_device", in_dev_members);
enum { F4_NEXT, F4_LOCAL, F4_PREFIX, F4_N };
static const struct kp_member_spec ifa_members[F4_N] = {
	[F4_NEXT] = { .name = "ifa_next" }, [F4_LOCAL] = { .name = "ifa_local" },
	[F4_PREFIX] = { .name = "ifa_prefixlen" },
};
static const struct kp_struct_spec ifa_spec = KP_STRUCT_SPEC("struct in_ifaddr", ifa_members);
static const struct kp_member_spec in6_dev_members[] = { { .name = "addr_list", .flags = KP_MEMBER_NOSPAN } };
static const struct kp_struct_spec in6_dev_spec = KP_STRUCT_SPEC("struct inet6_dev", in6_dev_members);
enum { F6_ADDR, F6_PREFIX, F6_LIST, F6_N };
static const struct kp_member_spec ifa6_members[F6_N] = {
	[F6_ADDR] = { .name = "addr" }, [F6_PREFIX] = { .name = "prefix_len" },
	[F6_LIST] = { .name = "if_list", .flags = KP_MEMBER_NOSPAN },
};
static const struct kp_struct_spec ifa6_spec = KP_STRUCT_SPEC("struct inet6_ifaddr", ifa6_members);

// The member at off of every possible CPU's copy of the per-CPU struct at
// pcpu, summed.
static struct kp_error *percpu_sum(struct kp_kernel *k, uint64_t pcpu, uint64_t off, uint64_t *ret)
{
	uint64_t sum = 0;
	for (uint32_t cpu = 0, n = kp_kernel_nr_cpu_ids(k); cpu < n; cpu++) {
		uint64_t base, v;
		struct kp_error *err = kp_kernel_per_cpu_offset(k, cpu, &base);
		if (err && err->code == KP_ERR_INVALID) {
			kp_error_destroy(err);	// not a possible CPU
			continue;
		}
		if (err || (err = kp_read_u64(k, pcpu + base + off, &v)))
			return err;
		sum += v;
	}
	*ret = sum;
	return NULL;
}

// Adds the per-CPU struct's four counters (l: tstats or dstats).
static struct kp_error *add_pcpu4(struct kp_kernel *k, const struct kp_struct_layout *l, uint64_t pcpu,
				  struct kp_netdev *d)
{
	uint64_t *out[S_N] = { &d->rx_packets, &d->tx_packets, &d->rx_bytes, &d->tx_bytes }, v;
	for (unsigned i = 0; i < S_N; i++) {
		struct kp_error *err = percpu_sum(k, pcpu, kp_layout_off(l, i), &v);
		if (err)
			return err;
		*out[i] += v;
	}
	return NULL;
}

static struct kp_error *counters(struct kp_kernel *k, const struct kp_struct_layout *l, const uint8_t *buf,
				 uint64_t dev, struct kp_netdev *d)
{
	static const struct kp_struct_spec *const specs[] = { &ops_spec, &stats_spec, &tstats_spec,
							       &dstats_spec, &lstats_spec };
	const struct kp_struct_layout *sl[5];
	uint64_t fn, pcpu = kp_layout_u64(l, buf, D_PCPU), v[L_N];
	struct kp_symbol sym;
	struct kp_error *err = kp_kernel_layouts(k, specs, 5, sl);
	if (err || (err = kp_read_u64(k, kp_layout_u64(l, buf, D_OPS) + kp_layout_off(sl[0], 0), &fn)))
		return err;
	const char *name = fn && kp_ok(kp_symbol_by_address(k, fn, &sym)) && sym.address == fn ? sym.name : "";
	bool lstats = !strcmp(name, "loopback_get_stats64") || !strcmp(name, "dummy_get_stats64");
	bool base = !fn || !strcmp(name, "dev_get_tstats64") || !strcmp(name, "dev_get_dstats64");
	if (!lstats && !base)
		return NULL;	// the driver's own counters
	d->stats_source = !fn ? "stats" : lstats ? "lstats" : !strcmp(name, "dev_get_tstats64") ? "stats+tstats" :
			  "stats+dstats";
	if (base) {
		uint8_t sbuf[256];
		if ((err = kp_kernel_read_struct(k, sl[1], dev + kp_layout_off(l, D_STATS), sbuf, sizeof(sbuf))))
			return err;
		d->rx_packets = kp_layout_u64(sl[1], sbuf, S_RX_PACKETS);
		d->tx_packets = kp_layout_u64(sl[1], sbuf, S_TX_PACKETS);
		d->rx_bytes = kp_layout_u64(sl[1], sbuf, S_RX_BYTES);
		d->tx_bytes = kp_layout_u64(sl[1], sbuf, S_TX_BYTES);
		if (!strcmp(name, "dev_get_tstats64"))
			err = add_pcpu4(k, sl[2], pcpu, d);
		else if (!strcmp(name, "dev_get_dstats64"))
			err = sl[3]->present ? add_pcpu4(k, sl[3], pcpu, d) :
				kp_error_create(KP_ERR_TYPE, "no struct pcpu_dstats");
	} else {
		for (unsigned i = 0; i < L_N && !err; i++)
			err = percpu_sum(k, pcpu, kp_layout_off(sl[4], i), &v[i]);
		if (!err) {
			d->tx_packets = v[L_PACKETS];
			d->tx_bytes = v[L_BYTES];
			bool loop = !strcmp(name, "loopback_get_stats64");
			d->rx_packets = loop ? v[L_PACKETS] : 0;
			d->rx_bytes = loop ? v[L_BYTES] : 0;
		}
	}
	if (!err)
		d->has_stats = true;
	return err ? kp_error_prefix(err, "the counters of %s", d->name) : NULL;
}

struct kp_error *kp_lx_netdev_decode(struct kp_kernel *k, uint64_t dev, struct kp_netdev *d)
{
	const struct kp_struct_layout *l;
	uint8_t buf[4096];
	struct kp_error *err = kp_kernel_layout(k, &dev_spec, &l);
	if (err || (err = kp_kernel_read_struct(k, l, dev, buf, sizeof(buf))))
		return err;
	memset(d, 0, sizeof(*d));
	d->address = dev;
	memcpy(d->name, kp_layout_at(l, buf, D_NAME), sizeof(d->name));
	d->name[sizeof(d->name) - 1] = '\0';
	d->index = (int32_t)kp_layout_u64(l, buf, D_INDEX);
	d->flags = (uint32_t)kp_layout_u64(l, buf, D_FLAGS);
	d->mtu = (uint32_t)kp_layout_u64(l, buf, D_MTU);
	d->mac_len = (uint32_t)kp_layout_u64(l, buf, D_ADDR_LEN);
	if (d->mac_len > sizeof(d->mac))
		return kp_error_create(KP_ERR_FORMAT, "net_device %s: addr_len %u (corrupt?)", d->name, d->mac_len);
	uint64_t mac = kp_layout_u64(l, buf, D_ADDR);
	if (mac && d->mac_len && (err = kp_read(k, KP_VIRT, mac, d->mac, d->mac_len)))
		return kp_error_prefix(err, "the address of %s", d->name);
	return counters(k, l, buf, dev, d);
}

static struct kp_error *ipv4(struct kp_kernel *k, uint64_t in_dev, kp_lx_addr_fn *fn, void *arg)
{
	const struct kp_struct_layout *dl, *fl;
	uint64_t ifa;
	struct kp_error *err;
	if ((err = kp_kernel_layout(k, &in_dev_spec, &dl)) || (err = kp_kernel_layout(k, &ifa_spec, &fl)) ||
	    (err = kp_read_u64(k, in_dev + kp_layout_off(dl, I4_LIST), &ifa)))
		return err;
	for (unsigned n = 0; ifa; n++) {
		uint8_t buf[128];
		if (n == MAX_ADDRS)
			return kp_error_create(KP_ERR_LOOP, "in_device 0x%" PRIx64 ": more than %d addresses "
					       "(a cycle?)", in_dev, MAX_ADDRS);
		if ((err = kp_kernel_read_struct(k, fl, ifa, buf, sizeof(buf))))
			return err;
		uint32_t local = (uint32_t)kp_layout_u64(fl, buf, F4_LOCAL);	// network order in memory
		fn(arg, AF_INET, &local, (unsigned)kp_layout_u64(fl, buf, F4_PREFIX));
		ifa = kp_layout_u64(fl, buf, F4_NEXT);
	}
	return NULL;
}

static struct kp_error *ipv6(struct kp_kernel *k, uint64_t in6_dev, kp_lx_addr_fn *fn, void *arg)
{
	const struct kp_struct_layout *dl, *fl;
	struct kp_list_iter *list;
	uint64_t node;
	bool done;
	struct kp_error *err;
	if ((err = kp_kernel_layout(k, &in6_dev_spec, &dl)) || (err = kp_kernel_layout(k, &ifa6_spec, &fl)) ||
	    (err = kp_list_iter_create(k, in6_dev + kp_layout_off(dl, 0), 0, &list)))
		return err;
	kp_list_iter_set_limit(list, MAX_ADDRS);
	while (!(err = kp_list_iter_next(list, &node, &done)) && !done) {
		uint8_t addr[16], prefix;
		uint64_t ifa = node - kp_layout_off(fl, F6_LIST);
		if ((err = kp_read(k, KP_VIRT, ifa + kp_layout_off(fl, F6_ADDR), addr, 16)) ||
		    (err = kp_read_u8(k, ifa + kp_layout_off(fl, F6_PREFIX), &prefix)))
			break;
		fn(arg, AF_INET6, addr, prefix);
	}
	kp_list_iter_destroy(list);
	return err;
}

struct kp_error *kp_lx_netdev_addrs(struct kp_kernel *k, uint64_t dev, kp_lx_addr_fn *fn, void *arg)
{
	const struct kp_struct_layout *l;
	uint64_t in_dev = 0, in6_dev = 0;
	struct kp_error *err = kp_kernel_layout(k, &addr_spec, &l);
	if (err || (kp_layout_has(l, A_IP) && (err = kp_read_u64(k, dev + kp_layout_off(l, A_IP), &in_dev))) ||
	    (kp_layout_has(l, A_IP6) && (err = kp_read_u64(k, dev + kp_layout_off(l, A_IP6), &in6_dev))))
		return err;
	if (in_dev && (err = ipv4(k, in_dev, fn, arg)))
		return kp_error_prefix(err, "the IPv4 addresses of net_device 0x%" PRIx64, dev);
	if (in6_dev && (err = ipv6(k, in6_dev, fn, arg)))
		return kp_error_prefix(err, "the IPv6 addresses of net_device 0x%" PRIx64, dev);
	return NULL;
}
