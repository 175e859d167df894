// SPDX-License-Identifier: MIT
// The system of the synthetic kernel (sk_opts.sys of synthkernel.h, with
// sk_opts.procs): what the system walkers read, with BTF for every struct
// their member tables name, at this generator's offsets (kpeek takes every
// one from the BTF; tests write through them, sk_opts.edit, and compare
// with what they wrote):
//   run queues      per-CPU struct rq (runqueues) of CPUs 0-2 (CPU 3 is not
//                   in __cpu_possible_mask): deadline, real-time and fair
//                   tasks, two task groups (one of them running)
//   meminfo         vm_node_stat/vm_zone_stat by their enums, the globals
//                   of /proc/meminfo, one node's zones, huge pages, the
//                   block devices' pages
//   slab            three caches on slab_caches over two nodes
//   network         init_net (lo, eth0) and a second namespace (lo)
//   sockets         TCP (listening, established, time-wait), UDP, raw and
//                   unix sockets; fd 4 of the processes' table is the
//                   listening TCP socket
//   IRQs            IRQs 0, 1 and 9 with chips, flows and actions
// Two kernel generations (enum sk_sys), where the kernel changed:
//   SK_SYS_NEW  struct slab, struct irqstat, the maple tree sparse_irqs,
//               the deadline fair server (dl_server), listeners by
//               sk_nulls_node, unix sockets in net->unx.table, node_data
//   SK_SYS_OLD  struct page, unsigned int kstat_irqs, the irq_desc array,
//               icsk_listen_portaddr_node, unix_socket_table,
//               contig_page_data
// task_struct grows to SKS_T_SIZE and the tasks move to SKS_TASKS (16 at
// most); init_task keeps its 0x100 bytes in the data page (its scheduling
// entities are never read).
#ifndef KPT_SYNTHSYS_H
#define KPT_SYNTHSYS_H

#include <stdint.h>

#include "mkkallsyms.h"
#include "synthkernel.h"
#include "synthprocs.h"

struct btf;

#define SKS_RAM_END UINT64_C(0x60000)
#define SKS_MAX_TASKS 16
#define SKS_T_SIZE 0x200
#define SKS_IMG(pa) (SK_TEXT + (pa))	// a global: the image maps physical 0-2M

// task_struct's scheduling members (offsets in it).
#define SKS_T_CLASS 0xe8	// const struct sched_class *
#define SKS_T_SE 0x100		// struct sched_entity
#define SKS_T_RT 0x188		// struct sched_rt_entity
#define SKS_T_DL 0x1b8		// struct sched_dl_entity
#define SKS_SE_RUN_NODE 0x10
#define SKS_SE_VRUNTIME 0x60
#define SKS_SE_MY_Q 0x80
#define SKS_RB_RIGHT 0x08
#define SKS_RB_LEFT 0x10
#define SKS_DL_FLAGS 0x3c	// dl_throttled:1 ... dl_server:1 (bit 4)
#define SKS_CFS_TIMELINE 0x28	// tasks_timeline.rb_root
#define SKS_CFS_CURR 0x38
#define SKS_RT_QUEUE 0x10	// active.queue[MAX_RT_PRIO] (active.bitmap at 0)
#define SKS_RQ_NR_RUNNING 0x04
#define SKS_RQ_NR_SWITCHES 0x08
#define SKS_RQ_CFS 0x40
#define SKS_RQ_RT 0xc0
#define SKS_RQ_DL 0x720
#define SKS_RQ_CURR 0x740

// Physical layout.
#define SKS_TASKS UINT64_C(0x40000)
#define SKS_PCPU(cpu) (UINT64_C(0x42000) + 0x1000 * (cpu))	// per-CPU areas
#define SKS_GROUPS UINT64_C(0x46000)	// task group entities, cfs_rqs
#define SKS_GLOBALS UINT64_C(0x47000)	// globals (image addresses, SKS_IMG)
#define SKS_GLOBALS2 UINT64_C(0x48000)	// raw_v4_hashinfo, the struct nets
#define SKS_UNIX_TABLE UINT64_C(0x49000)
#define SKS_SLAB UINT64_C(0x4a000)
#define SKS_NET UINT64_C(0x4b000)
#define SKS_SOCK UINT64_C(0x4c000)
#define SKS_FILES UINT64_C(0x4d000)	// the socket's file, block device inodes
#define SKS_IRQ UINT64_C(0x4e000)
#define SKS_NAMES UINT64_C(0x4f000)
#define SKS_FREE UINT64_C(0x50000)	// to SKS_RAM_END: free for tests

// Per-CPU offsets (per-CPU symbols and __percpu pointers).
#define SKS_PC_RQ 0x100		// runqueues
#define SKS_PC_KSTAT(irq) (0x900 + 0x10 * (irq))
#define SKS_PC_LSTATS 0xa00
#define SKS_PC_TSTATS 0xa40
#define SKS_PC_COMMITTED 0xb00	// vm_committed_as.counters (s32)
#define SKS_PC_END 0xc00	// __per_cpu_end: the static variables end here
#define SKS_PCPU_UNIT 0x1000	// pcpu_unit_size: each CPU's area
#define SKS_RQ(cpu) (SKS_PCPU(cpu) + SKS_PC_RQ)

// Run queues: task group entities and their queues, the fair server.
#define SKS_GROUP_SE(g) (SKS_GROUPS + 0x200 * (g))		// g 0, 1
#define SKS_GROUP_CFS(g) (SKS_GROUPS + 0x200 * (g) + 0x100)	// its my_q
#define SKS_FAIR_SERVER (SKS_GROUPS + 0x400)

// Globals (physical; SKS_IMG() for their addresses).
#define SKS_PER_CPU_OFFSET (SKS_GLOBALS + 0x000)
#define SKS_POSSIBLE_MASK (SKS_GLOBALS + 0x040)
#define SKS_CLASSES (SKS_GLOBALS + 0x080)	// stop, dl, rt, fair, idle: 0x10 each
#define SKS_SCALARS (SKS_GLOBALS + 0x100)	// see sks_scalars
#define SKS_NODE_STAT (SKS_GLOBALS + 0x200)
#define SKS_ZONE_STAT (SKS_GLOBALS + 0x400)
#define SKS_COMMITTED (SKS_GLOBALS + 0x480)	// struct percpu_counter
#define SKS_HSTATES (SKS_GLOBALS + 0x500)
#define SKS_NODE_DATA (SKS_GLOBALS + 0x600)
#define SKS_NODE_STATES (SKS_GLOBALS + 0x800)
#define SKS_BLOCKDEV_SB (SKS_GLOBALS + 0x840)
#define SKS_SLAB_CACHES (SKS_GLOBALS + 0x850)
#define SKS_NR_NODE_IDS (SKS_GLOBALS + 0x860)
#define SKS_NET_LIST (SKS_GLOBALS + 0x870)
#define SKS_TCP_HASHINFO (SKS_GLOBALS + 0x880)
#define SKS_UDP_TABLE (SKS_GLOBALS + 0x8c0)
#define SKS_NR_IRQS (SKS_GLOBALS + 0x8e0)
#define SKS_SPARSE_IRQS (SKS_GLOBALS + 0x8f0)	// struct maple_tree
#define SKS_PGDAT (SKS_GLOBALS + 0x900)		// node 0 (contig_page_data when old)
// The modules list (symbol modules) and its two modules, SKS_MOD_NAMES with
// core_layout.size SKS_MOD_SIZES, in this order: what the Python bindings'
// list walks read (struct module has only these members).
#define SKS_MODULES (SKS_GLOBALS + 0xc00)
#define SKS_MOD(i) (SKS_GLOBALS + 0xc40 + 0x60 * (i))	// i 0, 1
#define SKS_MOD_STATE 0x00	// int
#define SKS_MOD_LIST 0x08
#define SKS_MOD_NAME 0x18	// char [56]
#define SKS_MOD_CORE 0x50	// struct module_layout { void *base; unsigned int size; }
#define SKS_MOD_STRUCT_SIZE 0x60
#define SKS_MOD_NAMES { "kp_mod_a", "kp_mod_b" }
#define SKS_MOD_SIZES { 0x4000, 0x2000 }
#define SKS_RAW_V4 SKS_GLOBALS2
#define SKS_NETNS(i) (SKS_GLOBALS2 + 0xc00 + 0x80 * (i))	// 0: init_net

// struct pglist_data, zone, hstate, percpu_counter.
#define SKS_NZONES 4
#define SKS_ZONE_SIZE 0x40
#define SKS_ZONE_WMARK 0x00	// _watermark[NR_WMARK]
#define SKS_ZONE_BOOST 0x20
#define SKS_HSTATE_SIZE 0x68
#define SKS_HSTATE_ORDER 0x08
#define SKS_HSTATE_NR 0x20	// nr, free, resv, surplus: 8 bytes apart

// Slab: caches, nodes and slabs.
#define SKS_NCACHES 3
#define SKS_CACHE(i) (SKS_SLAB + 0x300 * (i))
#define SKS_CACHE_SIZE 0x18	// unsigned int
#define SKS_CACHE_OO 0x28
#define SKS_CACHE_NAME 0x60
#define SKS_CACHE_LIST 0x68
#define SKS_CACHE_NODE 0x100	// struct kmem_cache_node *node[64]
#define SKS_KNODE(i) (SKS_SLAB + 0xa00 + 0x40 * (i))
#define SKS_KNODE_NR_PARTIAL 0x08
#define SKS_KNODE_PARTIAL 0x10
#define SKS_KNODE_NR_SLABS 0x20
#define SKS_KNODE_TOTAL 0x28
#define SKS_SLABP(i) (SKS_SLAB + 0xc00 + 0x40 * (i))	// struct slab (page)
#define SKS_SLAB_LIST 0x08
#define SKS_SLAB_COUNTERS 0x28	// inuse:16, objects:15, frozen:1

// Network: struct net, net_device, addresses.
#define SKS_NET_LIST_OFF 0x10	// net.list
#define SKS_NET_NS 0x28		// net.ns (ns_common: inum at + SKP_NS_INUM)
#define SKS_NET_DEVS 0x40	// dev_base_head
#define SKS_NET_UNIX 0x68	// unx.table.buckets (new)
#define SKS_NDEVS 3
#define SKS_DEV(i) (SKS_NET + 0x100 * (i))	// 0 lo, 1 eth0 (init_net), 2 lo (net 1)
#define SKS_DEV_LIST 0x10
#define SKS_DEV_OPS 0x20
#define SKS_DEV_FLAGS 0x28
#define SKS_DEV_MTU 0x2c
#define SKS_DEV_IFINDEX 0x30
#define SKS_DEV_ADDR_LEN 0x34
#define SKS_DEV_STATS 0x38	// struct net_device_stats: rx/tx packets, rx/tx bytes
#define SKS_DEV_PCPU 0x78	// lstats/tstats/dstats
#define SKS_DEV_IP 0x80
#define SKS_DEV_IP6 0x88
#define SKS_DEV_ADDR 0x90
#define SKS_IN_DEV(i) (SKS_NET + 0x300 + 0x20 * (i))
#define SKS_IN_DEV_IFA 0x10
#define SKS_IFA(i) (SKS_NET + 0x340 + 0x20 * (i))
#define SKS_IFA_NEXT 0x00
#define SKS_IFA_LOCAL 0x08	// __be32
#define SKS_IFA_PREFIX 0x10	// unsigned char
#define SKS_IN6_DEV(i) (SKS_NET + 0x400 + 0x20 * (i))
#define SKS_IN6_DEV_LIST 0x08
#define SKS_IFA6(i) (SKS_NET + 0x440 + 0x40 * (i))
#define SKS_IFA6_PREFIX 0x10
#define SKS_IFA6_LIST 0x18
#define SKS_OPS(i) (SKS_NET + 0x600 + 0x10 * (i))	// ndo_get_stats64 at 0
#define SKS_MACS (SKS_NET + 0x680)
#define SKS_LOOPBACK_STATS (SK_TEXT + 0x400)	// loopback_get_stats64
#define SKS_TSTATS_FN (SK_TEXT + 0x480)		// dev_get_tstats64
#define SKS_CMA_ALLOC_FN (SK_TEXT + 0x4c0)	// cma_alloc

// Sockets.
#define SKS_EHASH (SKS_SOCK + 0x000)	// 8 chains (ehash_mask 7)
#define SKS_LHASH2 (SKS_SOCK + 0x040)	// 4 inet_listen_hashbuckets (0x10 each)
#define SKS_HSLOT (SKS_SOCK + 0x080)	// 4 udp_hslots (0x10 each)
#define SKS_SK(i) (SKS_SOCK + 0x100 + 0x100 * (i))	// see enum below
#define SKS_ALLOC(i) (SKS_SOCK + 0x900 + 0x80 * (i))	// struct socket_alloc of socket i
#define SKS_UADDR(i) (SKS_SOCK + 0xd00 + 0x80 * (i))	// unix_address
#define SKS_SKC_DADDR 0x00
#define SKS_SKC_RCV_SADDR 0x04
#define SKS_SKC_DPORT 0x0c
#define SKS_SKC_NUM 0x0e
#define SKS_SKC_FAMILY 0x10
#define SKS_SKC_STATE 0x12
#define SKS_SKC_NET 0x30
#define SKS_SKC_V6_DADDR 0x38
#define SKS_SKC_V6_SADDR 0x48
#define SKS_SKC_NODE 0x68	// skc_node / skc_nulls_node
#define SKS_SK_TYPE 0x90
#define SKS_SK_SOCKET 0x98
#define SKS_ICSK_PORTADDR 0xa0	// icsk_listen_portaddr_node (old)
#define SKS_UNIX_ADDR 0xa0
#define SKS_UNIX_PEER 0xc0
#define SKS_ALLOC_INODE 0x30	// socket_alloc.vfs_inode (i_ino at + SKP_INODE_INO)
enum { SKS_S_LISTEN, SKS_S_ESTAB, SKS_S_TW, SKS_S_LISTEN6, SKS_S_UDP, SKS_S_RAW, SKS_S_UNIX_A, SKS_S_UNIX_B,
       SKS_NSOCKS };
// Each socket's inode (0: none, a time-wait socket).
extern const uint64_t sks_sock_inode[SKS_NSOCKS];
#define SKS_INIT_NET_INUM 4026531840u
#define SKS_NET2_INUM 4026532301u
#define SKS_SOCK_FD 4		// the processes' fd 4: socket SKS_S_LISTEN

// IRQs.
#define SKS_NR_IRQS_VALUE 16
#define SKS_DESC(irq) (SKS_IRQ + 0x80 * (irq))	// the irq_desc array (old) or each desc (new)
#define SKS_DESC_IRQ 0x14	// irq_data.irq
#define SKS_DESC_HWIRQ 0x18
#define SKS_DESC_CHIP 0x28
#define SKS_DESC_DOMAIN 0x30
#define SKS_DESC_KSTAT 0x48
#define SKS_DESC_ACTION 0x58
#define SKS_DESC_NAME 0x60
#define SKS_DESC_STATUS 0x68	// status_use_accessors
#define SKS_IRQ_HIDDEN (1 << 20)
#define SKS_CHIP(i) (SKS_IRQ + 0x800 + 0x10 * (i))
#define SKS_CHIP_PRINT 8	// irq_chip.irq_print_chip
#define SKS_CHAINED_ACTION (SKS_IRQ + 0xc00)	// chained_action (no name)
#define SKS_ACTION(i) (SKS_IRQ + 0x840 + 0x60 * (i))
#define SKS_ACTION_NEXT 0x18
#define SKS_ACTION_NAME 0x50
#define SKS_MT_LEAF (SKS_IRQ + 0xa00)	// sparse_irqs' one leaf

// What the generator wrote, for the tests to compare with.
struct sks_stat {
	const char *name;	// the enumerator
	int64_t value;
};
extern const struct sks_stat sks_node_stats[];	// NULL-ended, in enum node_stat_item order
extern const struct sks_stat sks_zone_stats[];	// enum zone_stat_item
// Scalars at SKS_SCALARS + 8 * i (4-byte ones: their low half).
extern const struct sks_stat sks_scalars[];	// .name is the symbol
#define SKS_BLOCKDEV_PAGES 100			// 60 + 40 on its two inodes
#define SKS_WMARK_LOW(z) (UINT64_C(16) * ((z) + 1))	// zone z; its boost: z
#define SKS_COMMITTED_COUNT 5000
extern const int32_t sks_committed_delta[4];	// CPUs 0-2 (3 is not possible)
struct sks_hstate {
	uint32_t order;
	uint64_t nr, free, resv, surplus;
};
extern const struct sks_hstate sks_hstates[2];	// default_hstate_idx 0

struct sks_cache {
	const char *name;
	uint32_t size, oo;
	// Node 0 and 1: nr_slabs, total_objects, and the partial slabs' (inuse, objects).
	uint64_t nr_slabs[2], total[2];
	unsigned npartial;
	struct { uint32_t inuse, objects; } partial[2];
};
extern const struct sks_cache sks_caches[SKS_NCACHES];

// The symbols it adds (NULL-ended; those of o->sys).
const struct kp_mkkallsyms_sym *sks_symbols(const struct sk_opts *o);
// The task_struct members it adds, made before synthkernel's structs.
struct sks_task_types {
	int se, rt, dl, cls;
};
void sks_btf_task_types(struct btf *b, const struct sk_opts *o, int t_int, int t_uint, int t_ulong,
			struct sks_task_types *ret);
void sks_btf_task_fields(struct btf *b, const struct sks_task_types *t);
// Everything else, after the processes' types.
void sks_btf_types(struct btf *b, const struct sk_opts *o, const struct skp_btf_base *t);
// Writes the system into the RAM m (after the processes).
void sks_write(uint8_t *m, const struct sk_opts *o);

// An edit (sk_opts.edit) writing words, until one with pa 0: arg is a
// struct sks_word array.
struct sks_word {
	uint64_t pa, value;
	int size;	// 1, 2, 4 or 8 (0: 8)
};
void sks_put_words(uint8_t *m, void *arg);

#endif
