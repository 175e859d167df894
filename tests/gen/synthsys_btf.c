// SPDX-License-Identifier: MIT
// The BTF of the synthetic kernel's system (synthsys.h): the structs the
// system walkers read, at this generator's offsets, in the two kernel
// generations of enum sk_sys.
#include <string.h>

#include <bpf/btf.h>
#include <linux/btf.h>

#include "synthsys.h"

static int must(int id)
{
	if (id < 0)
		sk_die("building the system's BTF");
	return id;
}

struct ctx {
	struct btf *b;
	bool old;
	int t_int, t_uint, t_ulong, t_char, lh;
	int u8, u16, vptr, cptr, rb_root, ns;
	int in6, possible, hnode, hhead, nnode, nhead, sock;
};

static int ptr(struct ctx *c, const char *name)
{
	return must(btf__add_ptr(c->b, must(btf__add_fwd(c->b, name, BTF_FWD_STRUCT))));
}

static int find(struct ctx *c, const char *name, int kind)
{
	return must(btf__find_by_name_kind(c->b, name, kind));
}

static int strct(struct ctx *c, const char *name, uint32_t size)
{
	return must(btf__add_struct(c->b, name, size));
}

static void field(struct ctx *c, const char *name, int type, uint32_t byte)
{
	must(btf__add_field(c->b, name, type, byte * 8, 0));
}

static void bits(struct ctx *c, const char *name, int type, uint32_t bit, uint32_t size)
{
	must(btf__add_field(c->b, name, type, bit, size));
}

static int array(struct ctx *c, int elem, uint32_t n)
{
	return must(btf__add_array(c->b, c->t_int, elem, n));
}

// struct NAME { T member; } of size bytes (atomic_long_t and friends).
static int wrapped(struct ctx *c, const char *name, const char *member, int type, uint32_t size)
{
	int s = strct(c, NULL, size);
	field(c, member, type, 0);
	return name ? must(btf__add_typedef(c->b, name, s)) : s;
}

static void enumerate(struct ctx *c, const char *name, const char *const *names, int n)
{
	must(btf__add_enum(c->b, name, 4));
	for (int i = 0; i < n; i++)
		must(btf__add_enum_value(c->b, names[i], i));
}

void sks_btf_task_types(struct btf *b, const struct sk_opts *o, int t_int, int t_uint, int t_ulong,
			struct sks_task_types *ret)
{
	struct ctx c = { .b = b, .old = o->sys == SK_SYS_OLD, .t_int = t_int, .t_uint = t_uint, .t_ulong = t_ulong };
	int prb = ptr(&c, "rb_node");
	int rb = strct(&c, "rb_node", 0x18);
	field(&c, "__rb_parent_color", t_ulong, 0);
	field(&c, "rb_right", prb, SKS_RB_RIGHT);
	field(&c, "rb_left", prb, SKS_RB_LEFT);
	int load = strct(&c, "load_weight", 0x10);
	field(&c, "weight", t_ulong, 0);
	field(&c, "inv_weight", t_uint, 8);
	int pse = ptr(&c, "sched_entity"), pcfs = ptr(&c, "cfs_rq");
	ret->se = strct(&c, "sched_entity", 0x88);
	field(&c, "load", load, 0);
	field(&c, "run_node", rb, SKS_SE_RUN_NODE);
	field(&c, "deadline", t_ulong, 0x28);
	field(&c, "min_vruntime", t_ulong, 0x30);
	field(&c, "on_rq", t_uint, 0x48);
	field(&c, "exec_start", t_ulong, 0x50);
	field(&c, "sum_exec_runtime", t_ulong, 0x58);
	field(&c, "vruntime", t_ulong, SKS_SE_VRUNTIME);
	field(&c, "depth", t_int, 0x70);
	field(&c, "parent", pse, 0x78);
	field(&c, "my_q", pcfs, SKS_SE_MY_Q);
	ret->dl = strct(&c, "sched_dl_entity", 0x40);
	field(&c, "rb_node", rb, 0);
	field(&c, "dl_runtime", t_ulong, 0x18);
	field(&c, "dl_deadline", t_ulong, 0x20);
	field(&c, "deadline", t_ulong, 0x28);
	field(&c, "runtime", t_ulong, 0x30);
	field(&c, "flags", t_uint, 0x38);
	static const char *const dl_bits[] = { "dl_throttled", "dl_yielded", "dl_non_contending", "dl_overrun",
					       "dl_server" };
	for (uint32_t i = 0; i < (c.old ? 4u : 5u); i++)	// dl_server: 6.8
		bits(&c, dl_bits[i], t_uint, SKS_DL_FLAGS * 8 + i, 1);
	ret->cls = ptr(&c, "sched_class");
	// The last type before synthkernel's comm: list_head is 5 ids on.
	ret->rt = strct(&c, "sched_rt_entity", 0x30);
	field(&c, "run_list", ret->rt + 5, 0);
	field(&c, "timeout", t_ulong, 0x10);
	field(&c, "time_slice", t_uint, 0x20);
}

void sks_btf_task_fields(struct btf *b, const struct sks_task_types *t)
{
	must(btf__add_field(b, "sched_class", t->cls, SKS_T_CLASS * 8, 0));
	must(btf__add_field(b, "se", t->se, SKS_T_SE * 8, 0));
	must(btf__add_field(b, "rt", t->rt, SKS_T_RT * 8, 0));
	must(btf__add_field(b, "dl", t->dl, SKS_T_DL * 8, 0));
}

// kernel/sched/sched.h: the run queue and its classes' queues.
static void btf_sched(struct ctx *c)
{
	int prb = must(btf__add_ptr(c->b, find(c, "rb_node", BTF_KIND_STRUCT)));
	int cached = strct(c, "rb_root_cached", 0x10);
	field(c, "rb_root", c->rb_root, 0);
	field(c, "rb_leftmost", prb, 8);
	int pse = ptr(c, "sched_entity"), ptask = ptr(c, "task_struct");
	int load = find(c, "load_weight", BTF_KIND_STRUCT);
	strct(c, "cfs_rq", 0x80);
	field(c, "load", load, 0);
	field(c, "nr_running", c->t_uint, 0x10);
	field(c, "h_nr_running", c->t_uint, 0x14);
	field(c, "min_vruntime", c->t_ulong, 0x20);
	field(c, "tasks_timeline", cached, SKS_CFS_TIMELINE);
	field(c, "curr", pse, SKS_CFS_CURR);
	field(c, "next", pse, 0x40);
	int bitmap = array(c, c->t_ulong, 2), queue = array(c, c->lh, 100);	// MAX_RT_PRIO
	int prio = strct(c, "rt_prio_array", 0x650);
	field(c, "bitmap", bitmap, 0);
	field(c, "queue", queue, SKS_RT_QUEUE);
	int rt = strct(c, "rt_rq", 0x660);
	field(c, "active", prio, 0);
	field(c, "rt_nr_running", c->t_uint, 0x650);
	int dl = strct(c, "dl_rq", 0x20);
	field(c, "root", cached, 0);
	field(c, "dl_nr_running", c->t_ulong, 0x10);
	int cfs = find(c, "cfs_rq", BTF_KIND_STRUCT);
	strct(c, "rq", 0x780);
	field(c, "__lock", c->t_uint, 0);
	field(c, "nr_running", c->t_uint, SKS_RQ_NR_RUNNING);
	field(c, "nr_switches", c->t_ulong, SKS_RQ_NR_SWITCHES);
	field(c, "cfs", cfs, SKS_RQ_CFS);
	field(c, "rt", rt, SKS_RQ_RT);
	field(c, "dl", dl, SKS_RQ_DL);
	field(c, "curr", ptask, SKS_RQ_CURR);
	field(c, "idle", ptask, SKS_RQ_CURR + 8);
	field(c, "stop", ptask, SKS_RQ_CURR + 16);
	strct(c, "sched_class", 0x10);
	field(c, "enqueue_task", c->vptr, 0);
	field(c, "dequeue_task", c->vptr, 8);
}

// include/linux/mmzone.h, vmstat.h, hugetlb.h, percpu_counter.h.
static void btf_mm(struct ctx *c)
{
	int n_node = 0, n_zone = 0;
	const char *node_items[32], *zone_items[32];
	for (const struct sks_stat *s = sks_node_stats; s->name; s++)
		node_items[n_node++] = s->name;
	node_items[n_node++] = "NR_VM_NODE_STAT_ITEMS";
	for (const struct sks_stat *s = sks_zone_stats; s->name; s++)
		zone_items[n_zone++] = s->name;
	zone_items[n_zone++] = "NR_VM_ZONE_STAT_ITEMS";
	enumerate(c, "node_stat_item", node_items, n_node);
	enumerate(c, "zone_stat_item", zone_items, n_zone);
	static const char *const wmarks[] = { "WMARK_MIN", "WMARK_LOW", "WMARK_HIGH", "WMARK_PROMO", "NR_WMARK" };
	enumerate(c, "zone_watermarks", wmarks, 5);
	static const char *const states[] = { "N_POSSIBLE", "N_ONLINE", "N_NORMAL_MEMORY", "N_HIGH_MEMORY",
					      "N_MEMORY", "N_CPU", "NR_NODE_STATES" };
	enumerate(c, "node_states", states, 7);
	int bits = array(c, c->t_ulong, 1);
	must(btf__add_typedef(c->b, "nodemask_t", wrapped(c, NULL, "bits", bits, 8)));
	int wm = array(c, c->t_ulong, 4), pname = c->cptr, ppgdat = ptr(c, "pglist_data");
	int zone = strct(c, "zone", SKS_ZONE_SIZE);
	field(c, "_watermark", wm, SKS_ZONE_WMARK);
	field(c, "watermark_boost", c->t_ulong, SKS_ZONE_BOOST);
	field(c, "zone_pgdat", ppgdat, 0x28);
	field(c, "name", pname, 0x30);
	int zones = array(c, zone, SKS_NZONES);
	strct(c, "pglist_data", 0x140);
	field(c, "node_zones", zones, 0);
	field(c, "nr_zones", c->t_int, 0x100);
	field(c, "node_id", c->t_int, 0x108);
	int pcounters = must(btf__add_ptr(c->b, c->t_int));
	strct(c, "percpu_counter", 0x28);
	field(c, "lock", c->t_uint, 0);
	field(c, "count", c->t_ulong, 8);
	field(c, "list", c->lh, 0x10);
	field(c, "counters", pcounters, 0x20);
	int hname = array(c, c->t_char, 32);
	strct(c, "hstate", SKS_HSTATE_SIZE);
	field(c, "next_nid_to_alloc", c->t_int, 0);
	field(c, "order", c->t_uint, SKS_HSTATE_ORDER);
	field(c, "mask", c->t_ulong, 0x10);
	field(c, "max_huge_pages", c->t_ulong, 0x18);
	static const char *const huge[] = { "nr_huge_pages", "free_huge_pages", "resv_huge_pages",
					    "surplus_huge_pages" };
	for (uint32_t i = 0; i < 4; i++)
		field(c, huge[i], c->t_ulong, SKS_HSTATE_NR + 8 * i);
	field(c, "name", hname, 0x48);
	strct(c, "address_space", 0x10);
	field(c, "host", c->vptr, 0);
	field(c, "nrpages", c->t_ulong, 8);
}

// mm/slab.h: struct slab since 5.17, the same members in struct page before.
static void btf_slab(struct ctx *c)
{
	int along = must(btf__add_typedef(c->b, "atomic_long_t", wrapped(c, NULL, "counter", c->t_ulong, 8)));
	int oo = strct(c, "kmem_cache_order_objects", 4);
	field(c, "x", c->t_uint, 0);
	int pnode = ptr(c, "kmem_cache_node"), nodes = array(c, pnode, 64), pcache = ptr(c, "kmem_cache");
	strct(c, "kmem_cache", 0x300);
	field(c, "cpu_slab", c->vptr, 0);
	field(c, "flags", c->t_uint, 8);
	field(c, "min_partial", c->t_ulong, 0x10);
	field(c, "size", c->t_uint, SKS_CACHE_SIZE);
	field(c, "object_size", c->t_uint, 0x1c);
	field(c, "oo", oo, SKS_CACHE_OO);
	field(c, "name", c->cptr, SKS_CACHE_NAME);
	field(c, "list", c->lh, SKS_CACHE_LIST);
	field(c, "node", nodes, SKS_CACHE_NODE);
	strct(c, "kmem_cache_node", 0x40);
	field(c, "list_lock", c->t_uint, 0);
	field(c, "nr_partial", c->t_ulong, SKS_KNODE_NR_PARTIAL);
	field(c, "partial", c->lh, SKS_KNODE_PARTIAL);
	field(c, "nr_slabs", along, SKS_KNODE_NR_SLABS);
	field(c, "total_objects", along, SKS_KNODE_TOTAL);
	field(c, "full", c->lh, 0x30);
	int lists = must(btf__add_union(c->b, NULL, 0x10));
	field(c, "slab_list", c->lh, 0);
	field(c, "lru", c->lh, 0);
	int counts = strct(c, NULL, 4);
	bits(c, "inuse", c->t_uint, 0, 16);
	bits(c, "objects", c->t_uint, 16, 15);
	bits(c, "frozen", c->t_uint, 31, 1);
	int counters = must(btf__add_union(c->b, NULL, 8));
	field(c, "counters", c->t_ulong, 0);
	field(c, NULL, counts, 0);
	strct(c, c->old ? "page" : "slab", 0x40);
	field(c, c->old ? "flags" : "__page_flags", c->t_ulong, 0);
	field(c, NULL, lists, SKS_SLAB_LIST);
	field(c, "slab_cache", pcache, 0x18);
	field(c, "freelist", c->vptr, 0x20);
	field(c, NULL, counters, SKS_SLAB_COUNTERS);
	field(c, "memcg_data", c->t_ulong, 0x38);
}

static int stats(struct ctx *c, const char *name, const char *const *names, int n, uint32_t size)
{
	int s = strct(c, name, size);
	for (int i = 0; i < n; i++)
		field(c, names[i], c->t_ulong, 8 * (uint32_t)i);
	return s;
}

// include/linux/netdevice.h, inetdevice.h, net/if_inet6.h, net_namespace.h.
static void btf_netdev(struct ctx *c)
{
	static const char *const dev_stats[] = { "rx_packets", "tx_packets", "rx_bytes", "tx_bytes", "rx_errors",
						 "tx_errors", "rx_dropped", "tx_dropped" };
	int devstats = stats(c, "net_device_stats", dev_stats, 8, 0x40);
	static const char *const sw[] = { "rx_packets", "rx_bytes", "tx_packets", "tx_bytes" };
	stats(c, "pcpu_sw_netstats", sw, 4, 0x28);
	static const char *const lstats[] = { "packets", "bytes" };
	stats(c, "pcpu_lstats", lstats, 2, 0x18);
	if (!c->old) {	// 6.13
		static const char *const d[] = { "rx_packets", "rx_bytes", "rx_drops", "tx_packets", "tx_bytes" };
		stats(c, "pcpu_dstats", d, 5, 0x38);
	}
	strct(c, "net_device_ops", 0x10);
	field(c, "ndo_get_stats64", c->vptr, 0);
	field(c, "ndo_open", c->vptr, 8);
	int pl = ptr(c, "pcpu_lstats"), pt = ptr(c, "pcpu_sw_netstats"), pd = ptr(c, "pcpu_dstats");
	int pcpu = must(btf__add_union(c->b, NULL, 8));
	field(c, "lstats", pl, 0);
	field(c, "tstats", pt, 0);
	field(c, "dstats", pd, 0);
	int name = array(c, c->t_char, 16), ops = ptr(c, "net_device_ops"), pnet = ptr(c, "net");
	int ip = ptr(c, "in_device"), ip6 = ptr(c, "inet6_dev");
	int pu8 = must(btf__add_ptr(c->b, must(btf__add_const(c->b, c->u8))));
	int possible = strct(c, "possible_net_t", 8);
	field(c, "net", pnet, 0);
	strct(c, "net_device", 0xa0);
	field(c, "name", name, 0);
	field(c, "dev_list", c->lh, SKS_DEV_LIST);
	field(c, "netdev_ops", ops, SKS_DEV_OPS);
	field(c, "flags", c->t_uint, SKS_DEV_FLAGS);
	field(c, "mtu", c->t_uint, SKS_DEV_MTU);
	field(c, "ifindex", c->t_int, SKS_DEV_IFINDEX);
	field(c, "addr_len", c->u8, SKS_DEV_ADDR_LEN);
	field(c, "type", c->u16, 0x36);
	field(c, "stats", devstats, SKS_DEV_STATS);
	field(c, NULL, pcpu, SKS_DEV_PCPU);
	field(c, "ip_ptr", ip, SKS_DEV_IP);
	field(c, "ip6_ptr", ip6, SKS_DEV_IP6);
	field(c, "dev_addr", pu8, SKS_DEV_ADDR);
	field(c, "nd_net", possible, 0x98);
	int pifa = ptr(c, "in_ifaddr"), pdev = ptr(c, "net_device");
	strct(c, "in_device", 0x20);
	field(c, "dev", pdev, 0);
	field(c, "ifa_list", pifa, SKS_IN_DEV_IFA);
	strct(c, "in_ifaddr", 0x20);
	field(c, "ifa_next", pifa, SKS_IFA_NEXT);
	field(c, "ifa_local", c->t_uint, SKS_IFA_LOCAL);
	field(c, "ifa_address", c->t_uint, SKS_IFA_LOCAL + 4);
	field(c, "ifa_prefixlen", c->u8, SKS_IFA_PREFIX);
	field(c, "ifa_flags", c->u8, SKS_IFA_PREFIX + 1);
	strct(c, "inet6_dev", 0x20);
	field(c, "dev", pdev, 0);
	field(c, "addr_list", c->lh, SKS_IN6_DEV_LIST);
	int a16 = array(c, c->u8, 16), pidev = ptr(c, "inet6_dev");
	c->in6 = strct(c, "in6_addr", 16);
	field(c, "s6_addr", a16, 0);
	strct(c, "inet6_ifaddr", 0x40);
	field(c, "addr", c->in6, 0);
	field(c, "prefix_len", c->t_uint, SKS_IFA6_PREFIX);
	field(c, "if_list", c->lh, SKS_IFA6_LIST);
	field(c, "idev", pidev, 0x28);
	c->possible = possible;
}

// hlist_head/node, hlist_nulls_head/node (include/linux/types.h, list_nulls.h).
static void btf_hlists(struct ctx *c)
{
	int pn = ptr(c, "hlist_node"), ppn = must(btf__add_ptr(c->b, pn));
	c->hnode = strct(c, "hlist_node", 0x10);
	field(c, "next", pn, 0);
	field(c, "pprev", ppn, 8);
	c->hhead = strct(c, "hlist_head", 8);
	field(c, "first", pn, 0);
	int nn = ptr(c, "hlist_nulls_node"), pnn = must(btf__add_ptr(c->b, nn));
	c->nnode = strct(c, "hlist_nulls_node", 0x10);
	field(c, "next", nn, 0);
	field(c, "pprev", pnn, 8);
	c->nhead = strct(c, "hlist_nulls_head", 8);
	field(c, "first", nn, 0);
}

static void btf_net(struct ctx *c)
{
	int unx = 0;
	if (!c->old) {	// 5.17
		int pbuckets = must(btf__add_ptr(c->b, c->hhead));
		int table = strct(c, "unix_table", 0x10);
		field(c, "locks", c->vptr, 0);
		field(c, "buckets", pbuckets, 8);
		unx = strct(c, "netns_unix", 0x18);
		field(c, "sysctl_max_dgram_qlen", c->t_int, 0);
		field(c, "table", table, 8);
	}
	strct(c, "net", 0x80);
	field(c, "passive", c->t_uint, 0);
	field(c, "list", c->lh, SKS_NET_LIST_OFF);
	field(c, "ns", c->ns, SKS_NET_NS);
	field(c, "dev_base_head", c->lh, SKS_NET_DEVS);
	field(c, "ifindex", c->t_int, 0x50);
	if (unx)
		field(c, "unx", unx, SKS_NET_UNIX - 0x10);
}

// include/net/sock.h, inet_hashtables.h, udp.h, raw.h, af_unix.h.
static void btf_sock_common(struct ctx *c)
{
	int bind = must(btf__add_union(c->b, NULL, 0x10));
	field(c, "skc_bind_node", c->hnode, 0);
	field(c, "skc_portaddr_node", c->hnode, 0);
	int node = must(btf__add_union(c->b, NULL, 0x10));
	field(c, "skc_node", c->hnode, 0);
	field(c, "skc_nulls_node", c->nnode, 0);
	int common = strct(c, "sock_common", 0x88);
	field(c, "skc_daddr", c->t_uint, SKS_SKC_DADDR);
	field(c, "skc_rcv_saddr", c->t_uint, SKS_SKC_RCV_SADDR);
	field(c, "skc_hash", c->t_uint, 8);
	field(c, "skc_dport", c->u16, SKS_SKC_DPORT);
	field(c, "skc_num", c->u16, SKS_SKC_NUM);
	field(c, "skc_family", c->u16, SKS_SKC_FAMILY);
	field(c, "skc_state", c->u8, SKS_SKC_STATE);
	field(c, "skc_bound_dev_if", c->t_int, 0x14);
	field(c, NULL, bind, 0x18);
	field(c, "skc_prot", c->vptr, 0x28);
	field(c, "skc_net", c->possible, SKS_SKC_NET);
	field(c, "skc_v6_daddr", c->in6, SKS_SKC_V6_DADDR);
	field(c, "skc_v6_rcv_saddr", c->in6, SKS_SKC_V6_SADDR);
	field(c, "skc_cookie", c->t_ulong, 0x58);
	field(c, "skc_flags", c->t_ulong, 0x60);
	field(c, NULL, node, SKS_SKC_NODE);
	int psock = ptr(c, "socket");
	c->sock = strct(c, "sock", 0xa0);
	field(c, "__sk_common", common, 0);
	field(c, "sk_type", c->u16, SKS_SK_TYPE);
	field(c, "sk_protocol", c->u16, SKS_SK_TYPE + 2);
	field(c, "sk_socket", psock, SKS_SK_SOCKET);
	strct(c, "inet_connection_sock", 0xc0);
	field(c, "icsk_inet", c->sock, 0);
	if (c->old)	// up to 5.19
		field(c, "icsk_listen_portaddr_node", c->hnode, SKS_ICSK_PORTADDR);
	field(c, "icsk_timeout", c->t_ulong, 0xb0);
}

static void btf_tables(struct ctx *c)
{
	int lists = must(btf__add_union(c->b, NULL, 8));
	field(c, "head", c->hhead, 0);
	field(c, "nulls_head", c->nhead, 0);
	int lbucket = strct(c, "inet_listen_hashbucket", 0x10);
	field(c, "lock", c->t_uint, 0);
	field(c, "count", c->t_uint, 4);
	field(c, NULL, lists, 8);
	int ebucket = strct(c, "inet_ehash_bucket", 8);
	field(c, "chain", c->nhead, 0);
	int pe = must(btf__add_ptr(c->b, ebucket)), pl = must(btf__add_ptr(c->b, lbucket));
	strct(c, "inet_hashinfo", 0x40);
	field(c, "ehash", pe, 0);
	field(c, "ehash_locks", c->vptr, 8);
	field(c, "ehash_mask", c->t_uint, 0x10);
	field(c, "ehash_locks_mask", c->t_uint, 0x14);
	field(c, "bhash", c->vptr, 0x18);
	field(c, "bhash_size", c->t_uint, 0x20);
	field(c, "lhash2_mask", c->t_uint, 0x28);
	field(c, "lhash2", pl, 0x30);
	int slot = strct(c, "udp_hslot", 0x10);
	field(c, "head", c->hhead, 0);
	field(c, "count", c->t_int, 8);
	field(c, "lock", c->t_uint, 0xc);
	int pslot = must(btf__add_ptr(c->b, slot));
	strct(c, "udp_table", 0x18);
	field(c, "hash", pslot, 0);
	field(c, "hash2", pslot, 8);
	field(c, "mask", c->t_uint, 0x10);
	field(c, "log", c->t_uint, 0x14);
	int ht = array(c, c->old ? c->hhead : c->nhead, 256);	// RAW_HTABLE_SIZE; nulls since 6.1
	strct(c, "raw_hashinfo", 0x808);
	field(c, "lock", c->t_ulong, 0);
	field(c, "ht", ht, 8);
}

static void btf_unix(struct ctx *c)
{
	int inode = find(c, "inode", BTF_KIND_STRUCT), path = find(c, "path", BTF_KIND_STRUCT);
	int pfile = ptr(c, "file"), psk = ptr(c, "sock");
	int socket = strct(c, "socket", 0x30);
	field(c, "state", c->t_int, 0);
	field(c, "type", c->u16, 4);
	field(c, "flags", c->t_ulong, 8);
	field(c, "file", pfile, 0x10);
	field(c, "sk", psk, 0x18);
	field(c, "ops", c->vptr, 0x20);
	strct(c, "socket_alloc", SKS_ALLOC_INODE + 0x40);
	field(c, "socket", socket, 0);
	field(c, "vfs_inode", inode, SKS_ALLOC_INODE);
	int sun = array(c, c->t_char, 108);
	int sa = strct(c, "sockaddr_un", 110);
	field(c, "sun_family", c->u16, 0);
	field(c, "sun_path", sun, 2);
	int names = array(c, sa, 0);
	strct(c, "unix_address", 8);
	field(c, "refcnt", c->t_uint, 0);
	field(c, "len", c->t_int, 4);
	field(c, "name", names, 8);
	int paddr = ptr(c, "unix_address");
	strct(c, "unix_sock", 0xd0);
	field(c, "sk", c->sock, 0);
	field(c, "addr", paddr, SKS_UNIX_ADDR);
	field(c, "path", path, 0xa8);
	field(c, "peer", psk, SKS_UNIX_PEER);
}

// include/linux/irqdesc.h, irq.h, interrupt.h.
static void btf_irq(struct ctx *c)
{
	int common = strct(c, "irq_common_data", 0x10);
	field(c, "state_use_accessors", c->t_uint, 0);
	field(c, "handler_data", c->vptr, 8);
	int pcommon = must(btf__add_ptr(c->b, common)), pchip = ptr(c, "irq_chip"), pdom = ptr(c, "irq_domain");
	int pdata = ptr(c, "irq_data");
	int data = strct(c, "irq_data", 0x38);
	field(c, "mask", c->t_uint, 0);
	field(c, "irq", c->t_uint, SKS_DESC_IRQ - 0x10);
	field(c, "hwirq", c->t_ulong, SKS_DESC_HWIRQ - 0x10);
	field(c, "common", pcommon, 0x10);
	field(c, "chip", pchip, SKS_DESC_CHIP - 0x10);
	field(c, "domain", pdom, SKS_DESC_DOMAIN - 0x10);
	field(c, "parent_data", pdata, 0x28);
	field(c, "chip_data", c->vptr, 0x30);
	int kstat = c->t_uint;
	if (!c->old) {	// 6.10
		kstat = strct(c, "irqstat", 8);
		field(c, "cnt", c->t_uint, 0);
		field(c, "ref", c->t_uint, 4);
	}
	int pkstat = must(btf__add_ptr(c->b, kstat)), paction = ptr(c, "irqaction");
	strct(c, "irq_desc", 0x80);
	field(c, "irq_common_data", common, 0);
	field(c, "irq_data", data, 0x10);
	field(c, "kstat_irqs", pkstat, SKS_DESC_KSTAT);
	field(c, "handle_irq", c->vptr, 0x50);
	field(c, "action", paction, SKS_DESC_ACTION);
	field(c, "name", c->cptr, SKS_DESC_NAME);
	field(c, "status_use_accessors", c->t_uint, SKS_DESC_STATUS);
	field(c, "depth", c->t_uint, 0x6c);
	strct(c, "irq_chip", 0x10);
	field(c, "name", c->cptr, 0);
	field(c, "irq_print_chip", c->vptr, SKS_CHIP_PRINT);
	if (!c->old) {	// include/linux/irq.h's anonymous enum, IRQ_HIDDEN since 5.11
		must(btf__add_enum(c->b, NULL, 4));
		must(btf__add_enum_value(c->b, "IRQ_NOPROBE", 1 << 10));
		must(btf__add_enum_value(c->b, "IRQ_HIDDEN", SKS_IRQ_HIDDEN));
	}
	strct(c, "irqaction", 0x60);
	static const struct { const char *name; uint32_t at; } ptrs[] = {
		{ "handler", 0 }, { "dev_id", 8 }, { "percpu_dev_id", 0x10 }, { "thread_fn", 0x20 },
		{ "thread", 0x28 }, { "secondary", 0x30 }, { "dir", 0x58 },
	};
	for (size_t i = 0; i < sizeof(ptrs) / sizeof(ptrs[0]); i++)
		field(c, ptrs[i].name, c->vptr, ptrs[i].at);
	field(c, "next", paction, SKS_ACTION_NEXT);
	field(c, "irq", c->t_uint, 0x38);
	field(c, "flags", c->t_uint, 0x3c);
	field(c, "thread_flags", c->t_ulong, 0x40);
	field(c, "thread_mask", c->t_ulong, 0x48);
	field(c, "name", c->cptr, SKS_ACTION_NAME);
}

// struct module with what the Python bindings' examples read (synthsys.h).
static void btf_module(struct ctx *c)
{
	int layout = strct(c, "module_layout", 0x10);
	field(c, "base", c->vptr, 0);
	field(c, "size", c->t_uint, 8);
	field(c, "text_size", c->t_uint, 12);
	int name = array(c, c->t_char, 56);
	strct(c, "module", SKS_MOD_STRUCT_SIZE);
	field(c, "state", c->t_int, SKS_MOD_STATE);
	field(c, "list", c->lh, SKS_MOD_LIST);
	field(c, "name", name, SKS_MOD_NAME);
	field(c, "core_layout", layout, SKS_MOD_CORE);
}

void sks_btf_types(struct btf *b, const struct sk_opts *o, const struct skp_btf_base *t)
{
	struct ctx c = { .b = b, .old = o->sys == SK_SYS_OLD, .t_int = t->t_int, .t_uint = t->t_uint,
			 .t_ulong = t->t_ulong, .t_char = t->t_char, .lh = t->list_head };
	c.u8 = find(&c, "unsigned char", BTF_KIND_INT);
	c.u16 = find(&c, "short unsigned int", BTF_KIND_INT);
	c.rb_root = find(&c, "rb_root", BTF_KIND_STRUCT);
	c.ns = find(&c, "ns_common", BTF_KIND_STRUCT);
	c.vptr = must(btf__add_ptr(b, 0));
	c.cptr = must(btf__add_ptr(b, must(btf__add_const(b, t->t_char))));
	btf_sched(&c);
	btf_mm(&c);
	btf_slab(&c);
	btf_hlists(&c);
	btf_netdev(&c);
	btf_net(&c);
	btf_sock_common(&c);
	btf_tables(&c);
	btf_unix(&c);
	btf_irq(&c);
	btf_module(&c);
}
