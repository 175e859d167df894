// SPDX-License-Identifier: MIT
// The system of the synthetic kernel in its memory (synthsys.h): symbols,
// run queues, memory counters, slab caches and IRQs (the network is in
// synthsys_net.c).
#include <stdio.h>
#include <string.h>

#include "synthsys.h"
#include "synthsys_world.h"

#define ULONG_MAX_ UINT64_C(0xffffffffffffffff)

const struct sks_stat sks_node_stats[] = {
	{ "NR_INACTIVE_ANON", 2000 }, { "NR_ACTIVE_ANON", 3000 }, { "NR_INACTIVE_FILE", 4000 },
	{ "NR_ACTIVE_FILE", 5000 }, { "NR_UNEVICTABLE", 60 }, { "NR_SLAB_RECLAIMABLE_B", 700 },
	{ "NR_SLAB_UNRECLAIMABLE_B", 800 }, { "NR_ISOLATED_ANON", 0 }, { "NR_ANON_MAPPED", 2500 },
	{ "NR_FILE_MAPPED", 1500 }, { "NR_FILE_PAGES", 9500 }, { "NR_FILE_DIRTY", 30 }, { "NR_WRITEBACK", 2 },
	{ "NR_WRITEBACK_TEMP", 1 }, { "NR_SHMEM", 400 }, { "NR_SWAPCACHE", 10 },
	{ "NR_KERNEL_MISC_RECLAIMABLE", 5 }, { "NR_KERNEL_STACK_KB", 6000 }, { "NR_PAGETABLE", 350 },
	{ "NR_SECONDARY_PAGETABLE", 3 }, { NULL, 0 },
};

const struct sks_stat sks_zone_stats[] = {
	{ "NR_FREE_PAGES", 100000 }, { "NR_ZONE_INACTIVE_ANON", 1 }, { "NR_ZONE_ACTIVE_ANON", 2 },
	{ "NR_MLOCK", 20 }, { "NR_BOUNCE", 4 }, { "NR_FREE_CMA_PAGES", 7 }, { NULL, 0 },
};

// 4-byte ones: sysctl_overcommit_ratio, pcpu_nr_units, hugetlb_max_hstate,
// default_hstate_idx, pcpu_unit_size.
const struct sks_stat sks_scalars[] = {
	{ "_totalram_pages", 262144 }, { "totalreserve_pages", 3000 }, { "total_swap_pages", 131072 },
	{ "nr_swap_pages", 120000 }, { "sysctl_overcommit_kbytes", 0 }, { "sysctl_overcommit_ratio", 50 },
	{ "nr_vmalloc_pages", 1200 }, { "pcpu_nr_populated", 64 }, { "pcpu_nr_units", 3 },
	{ "num_poisoned_pages", 0 }, { "totalcma_pages", 4096 }, { "hugetlb_max_hstate", 2 },
	{ "default_hstate_idx", 0 }, { "pcpu_unit_size", SKS_PCPU_UNIT }, { NULL, 0 },
};

const int32_t sks_committed_delta[4] = { 7, -3, 11, 1000 };
const struct sks_hstate sks_hstates[2] = { { 9, 16, 10, 2, 1 }, { 18, 1, 1, 0, 0 } };

const struct sks_cache sks_caches[SKS_NCACHES] = {
	{ "kmalloc-64", 64, 64, { 3, 1 }, { 192, 64 }, 2, { { 10, 64 }, { 60, 64 } } },
	{ "task_struct", 9216, 3u << 16 | 3, { 5, 0 }, { 15, 0 }, 1, { { 1, 3 } } },
	{ "dentry", 192, 21, { 10, 0 }, { 210, 0 }, 0, { { 0, 0 } } },
};

static const char *const classes[] = { "stop_sched_class", "dl_sched_class", "rt_sched_class",
				       "fair_sched_class", "idle_sched_class" };
enum { C_STOP, C_DL, C_RT, C_FAIR, C_IDLE };
#define CLASS(k) SKS_IMG(SKS_CLASSES + 0x10 * (k))

const struct kp_mkkallsyms_sym *sks_symbols(const struct sk_opts *o)
{
	static struct kp_mkkallsyms_sym syms[64];
	bool old = o->sys == SK_SYS_OLD;
	size_t n = 0;
#define SYM(name_, type_, address_) (syms[n++] = (struct kp_mkkallsyms_sym){ name_, type_, address_ })
	SYM("runqueues", 'd', SKS_PC_RQ);	// per-CPU
	SYM("__per_cpu_start", 'D', 0);		// zero-based, as x86-64 until 6.14
	SYM("__per_cpu_end", 'D', SKS_PC_END);
	SYM("loopback_get_stats64", 't', SKS_LOOPBACK_STATS);
	SYM("dev_get_tstats64", 'T', SKS_TSTATS_FN);
	SYM("cma_alloc", 'T', SKS_CMA_ALLOC_FN);	// CONFIG_CMA: meminfo's Cma lines
	SYM("__per_cpu_offset", 'D', SKS_IMG(SKS_PER_CPU_OFFSET));
	SYM("__cpu_possible_mask", 'D', SKS_IMG(SKS_POSSIBLE_MASK));
	for (size_t i = 0; i < 5; i++)
		SYM(classes[i], 'R', CLASS(i));
	for (size_t i = 0; sks_scalars[i].name; i++)
		SYM(sks_scalars[i].name, 'D', SKS_IMG(SKS_SCALARS + 8 * i));
	SYM("vm_node_stat", 'D', SKS_IMG(SKS_NODE_STAT));
	SYM("vm_zone_stat", 'D', SKS_IMG(SKS_ZONE_STAT));
	SYM("vm_committed_as", 'd', SKS_IMG(SKS_COMMITTED));
	SYM("hstates", 'D', SKS_IMG(SKS_HSTATES));
	if (!old)
		SYM("node_data", 'D', SKS_IMG(SKS_NODE_DATA));
	if (!old)
		SYM("node_states", 'D', SKS_IMG(SKS_NODE_STATES));
	SYM("blockdev_superblock", 'D', SKS_IMG(SKS_BLOCKDEV_SB));
	SYM("slab_caches", 'D', SKS_IMG(SKS_SLAB_CACHES));
	SYM("nr_node_ids", 'D', SKS_IMG(SKS_NR_NODE_IDS));
	SYM("net_namespace_list", 'D', SKS_IMG(SKS_NET_LIST));
	SYM("tcp_hashinfo", 'D', SKS_IMG(SKS_TCP_HASHINFO));
	SYM("udp_table", 'D', SKS_IMG(SKS_UDP_TABLE));
	SYM("nr_irqs", 'D', SKS_IMG(SKS_NR_IRQS));
	SYM(old ? "__unused_sparse" : "sparse_irqs", 'd', SKS_IMG(SKS_SPARSE_IRQS));
	SYM(old ? "contig_page_data" : "node0_pgdat", 'D', SKS_IMG(SKS_PGDAT));
	SYM("raw_v4_hashinfo", 'D', SKS_IMG(SKS_RAW_V4));
	SYM("modules", 'd', SKS_IMG(SKS_MODULES));
	SYM("init_net", 'D', SKS_IMG(SKS_NETNS(0)));
	if (old)
		SYM("unix_socket_table", 'D', SKS_IMG(SKS_UNIX_TABLE));
	SYM(old ? "irq_desc" : "irq_descs_synth", 'D', SKS_IMG(SKS_DESC(0)));
	SYM("ioapic_chip", 'd', SKS_IMG(SKS_CHIP(0)));	// what follows the array
	SYM("chained_action", 'D', SKS_IMG(SKS_CHAINED_ACTION));
#undef SYM
	syms[n] = (struct kp_mkkallsyms_sym){ NULL, 0, 0 };
	return syms;
}

uint64_t sks_name(struct sks_world *w, const char *s)
{
	size_t n = strlen(s) + 1;
	if (w->names + n > SKS_NAMES + 0x1000)
		sk_die("system names area full");
	memcpy(w->m + w->names, s, n);
	w->names += n;
	return SKP_VA(w->names - n);
}

// A list_head at pa holding the nodes (physical addresses), in order.
void sks_list(struct sks_world *w, uint64_t head, const uint64_t *nodes, size_t n, bool head_is_img)
{
	uint64_t hva = head_is_img ? SKS_IMG(head) : SKP_VA(head);
	for (size_t i = 0; i < n; i++) {
		sk_put64(w->m, nodes[i], i + 1 < n ? SKP_VA(nodes[i + 1]) : hva);
		sk_put64(w->m, nodes[i] + 8, i ? SKP_VA(nodes[i - 1]) : hva);
	}
	sk_put64(w->m, head, n ? SKP_VA(nodes[0]) : hva);
	sk_put64(w->m, head + 8, n ? SKP_VA(nodes[n - 1]) : hva);
}

// The scheduling fields of task i: its class, prio and vruntime.
static void sched_task(struct sks_world *w, unsigned i, int cls, uint32_t prio, uint64_t vruntime)
{
	uint64_t pa = sk_task_pa(w->o, i);
	sk_put64(w->m, pa + SKS_T_CLASS, CLASS(cls));
	sk_put32(w->m, pa + SK_T_PRIO, prio | (cls == C_RT ? 1u : cls == C_DL ? 6u : 0u) << 7);
	sk_put64(w->m, pa + SKS_T_SE + SKS_SE_VRUNTIME, vruntime);
}

// An rb_node at pa with children (physical addresses of rb_nodes, 0: none).
static void rb(struct sks_world *w, uint64_t pa, uint64_t parent, uint64_t left, uint64_t right)
{
	sk_put64(w->m, pa, parent ? SKP_VA(parent) : 1);	// root: black, no parent
	sk_put64(w->m, pa + SKS_RB_LEFT, left ? SKP_VA(left) : 0);
	sk_put64(w->m, pa + SKS_RB_RIGHT, right ? SKP_VA(right) : 0);
}

#define SE_NODE(i) (sk_task_pa(w->o, i) + SKS_T_SE + SKS_SE_RUN_NODE)
#define GROUP_NODE(g) (SKS_GROUP_SE(g) + SKS_SE_RUN_NODE)

// Empty queues of a run queue: the RT lists point at themselves.
static void empty_rq(struct sks_world *w, uint64_t rq)
{
	for (unsigned p = 0; p < 100; p++)
		sks_list(w, rq + SKS_RQ_RT + SKS_RT_QUEUE + 16 * p, NULL, 0, false);
}

// CPU 0: init running in group 1; deadline task 3 (and the fair server),
// real-time 4 (prio 10), 5 and 6 (prio 50); fair 7, group 0 (8, 9), 2,
// then the running group 1's 10. CPU 1 idle. CPU 2: 11 running, 12 queued.
static void runqueues(struct sks_world *w)
{
	uint8_t *m = w->m;
	for (unsigned cpu = 0; cpu < 4; cpu++) {
		sk_put64(m, SKS_PER_CPU_OFFSET + 8 * cpu, SKP_VA(SKS_PCPU(cpu)));
		if (cpu < 3)
			empty_rq(w, SKS_RQ(cpu));
	}
	sk_put64(m, SKS_POSSIBLE_MASK, 0x7);
	uint64_t rq = SKS_RQ(0);
	sk_put32(m, rq + SKS_RQ_NR_RUNNING, 10);
	sk_put64(m, rq + SKS_RQ_CURR, sk_task_va(w->o, 1));
	static const struct { unsigned task; int cls; uint32_t prio; uint64_t vruntime; } tasks[] = {
		{ 1, C_FAIR, 120, 1000 }, { 2, C_FAIR, 120, 300 }, { 3, C_DL, 0, 0 }, { 4, C_RT, 89, 0 },
		{ 5, C_RT, 49, 0 }, { 6, C_RT, 49, 0 }, { 7, C_FAIR, 120, 100 }, { 8, C_FAIR, 110, 50 },
		{ 9, C_FAIR, 125, 60 }, { 10, C_FAIR, 127, 70 }, { 11, C_RT, 98, 0 }, { 12, C_FAIR, 120, 5 },
	};
	for (size_t i = 0; i < sizeof(tasks) / sizeof(tasks[0]); i++)
		sched_task(w, tasks[i].task, tasks[i].cls, tasks[i].prio, tasks[i].vruntime);
	sk_put64(m, PA_INIT_TASK + SKS_T_CLASS, CLASS(C_IDLE));
	// Deadline: task 3, the fair server to its right (6.8+).
	uint64_t dl3 = sk_task_pa(w->o, 3) + SKS_T_DL;
	sk_put64(m, rq + SKS_RQ_DL, SKP_VA(dl3));
	rb(w, dl3, 0, 0, w->o->sys == SK_SYS_NEW ? SKS_FAIR_SERVER : 0);
	rb(w, SKS_FAIR_SERVER, dl3, 0, 0);
	sk_put32(m, SKS_FAIR_SERVER + SKS_DL_FLAGS, 1u << 4);	// dl_server
	// Real-time: priorities 10 and 50.
	sk_put64(m, rq + SKS_RQ_RT, UINT64_C(1) << 10 | UINT64_C(1) << 50);
	uint64_t rt10[] = { sk_task_pa(w->o, 4) + SKS_T_RT };
	uint64_t rt50[] = { sk_task_pa(w->o, 5) + SKS_T_RT, sk_task_pa(w->o, 6) + SKS_T_RT };
	sks_list(w, rq + SKS_RQ_RT + SKS_RT_QUEUE + 16 * 10, rt10, 1, false);
	sks_list(w, rq + SKS_RQ_RT + SKS_RT_QUEUE + 16 * 50, rt50, 2, false);
	// Fair: 7, group 0, 2 (the group at the root); group 0 holds 8 and 9.
	uint64_t cfs = rq + SKS_RQ_CFS;
	sk_put64(m, cfs + SKS_CFS_TIMELINE, SKP_VA(GROUP_NODE(0)));
	rb(w, GROUP_NODE(0), 0, SE_NODE(7), SE_NODE(2));
	rb(w, SE_NODE(7), GROUP_NODE(0), 0, 0);
	rb(w, SE_NODE(2), GROUP_NODE(0), 0, 0);
	sk_put64(m, SKS_GROUP_SE(0) + SKS_SE_MY_Q, SKP_VA(SKS_GROUP_CFS(0)));
	sk_put64(m, SKS_GROUP_CFS(0) + SKS_CFS_TIMELINE, SKP_VA(SE_NODE(8)));
	rb(w, SE_NODE(8), 0, 0, SE_NODE(9));
	rb(w, SE_NODE(9), SE_NODE(8), 0, 0);
	// Group 1 is running: the root's curr; it holds 10, and init runs in it.
	sk_put64(m, cfs + SKS_CFS_CURR, SKP_VA(SKS_GROUP_SE(1)));
	sk_put64(m, SKS_GROUP_SE(1) + SKS_SE_MY_Q, SKP_VA(SKS_GROUP_CFS(1)));
	sk_put64(m, SKS_GROUP_CFS(1) + SKS_CFS_TIMELINE, SKP_VA(SE_NODE(10)));
	rb(w, SE_NODE(10), 0, 0, 0);
	sk_put64(m, SKS_GROUP_CFS(1) + SKS_CFS_CURR, sk_task_va(w->o, 1) + SKS_T_SE);
	// CPU 1 idle, CPU 2 running 11 with 12 queued.
	sk_put64(m, SKS_RQ(1) + SKS_RQ_CURR, SK_INIT_TASK);
	sk_put32(m, SKS_RQ(2) + SKS_RQ_NR_RUNNING, 2);
	sk_put64(m, SKS_RQ(2) + SKS_RQ_CURR, sk_task_va(w->o, 11));
	sk_put64(m, SKS_RQ(2) + SKS_RQ_CFS + SKS_CFS_TIMELINE, SKP_VA(SE_NODE(12)));
	rb(w, SE_NODE(12), 0, 0, 0);
}

// The memory counters and what /proc/meminfo reads besides.
static void meminfo(struct sks_world *w)
{
	uint8_t *m = w->m;
	for (size_t i = 0; sks_node_stats[i].name; i++)
		sk_put64(m, SKS_NODE_STAT + 8 * i, (uint64_t)sks_node_stats[i].value);
	for (size_t i = 0; sks_zone_stats[i].name; i++)
		sk_put64(m, SKS_ZONE_STAT + 8 * i, (uint64_t)sks_zone_stats[i].value);
	for (size_t i = 0; sks_scalars[i].name; i++)
		sk_put64(m, SKS_SCALARS + 8 * i, (uint64_t)sks_scalars[i].value);
	sk_put64(m, SKS_COMMITTED + 8, SKS_COMMITTED_COUNT);
	sks_list(w, SKS_COMMITTED + 0x10, NULL, 0, true);
	sk_put64(m, SKS_COMMITTED + 0x20, SKS_PC_COMMITTED);
	for (unsigned cpu = 0; cpu < 4; cpu++)
		sk_put32(m, SKS_PCPU(cpu) + SKS_PC_COMMITTED, (uint32_t)sks_committed_delta[cpu]);
	for (unsigned i = 0; i < 2; i++) {
		uint64_t h = SKS_HSTATES + SKS_HSTATE_SIZE * i;
		sk_put32(m, h + SKS_HSTATE_ORDER, sks_hstates[i].order);
		const uint64_t v[4] = { sks_hstates[i].nr, sks_hstates[i].free, sks_hstates[i].resv,
					sks_hstates[i].surplus };
		for (unsigned j = 0; j < 4; j++)
			sk_put64(m, h + SKS_HSTATE_NR + 8 * j, v[j]);
	}
	// One node, online, of four zones.
	sk_put64(m, SKS_NODE_DATA, SKS_IMG(SKS_PGDAT));
	sk_put64(m, SKS_NODE_STATES + 8 * 1, 1);	// N_ONLINE: node 0
	sk_put32(m, SKS_PGDAT + 0x100, SKS_NZONES);
	for (uint64_t z = 0; z < SKS_NZONES; z++) {
		sk_put64(m, SKS_PGDAT + SKS_ZONE_SIZE * z + SKS_ZONE_WMARK + 8, SKS_WMARK_LOW(z));
		sk_put64(m, SKS_PGDAT + SKS_ZONE_SIZE * z + SKS_ZONE_BOOST, z);
	}
	// The block devices' super block: two inodes of 60 and 40 pages.
	uint64_t sb = SKS_FILES + 0x200, inodes[2] = { SKS_FILES + 0x240 + 0x18, SKS_FILES + 0x280 + 0x18 };
	sk_put64(m, SKS_BLOCKDEV_SB, SKP_VA(sb));
	sks_list(w, sb + 0x30, inodes, 2, false);
	for (unsigned i = 0; i < 2; i++) {
		sk_put64(m, inodes[i] - 0x18 + 0x28, SKP_VA(SKS_FILES + 0x2c0 + 0x10 * i));
		sk_put64(m, SKS_FILES + 0x2c0 + 0x10 * i + 8, i ? 40 : 60);
	}
}

// The caches on slab_caches, their nodes and partial slabs.
static void slab(struct sks_world *w)
{
	uint8_t *m = w->m;
	uint64_t lists[SKS_NCACHES];
	unsigned knode = 0, slabp = 0;
	sk_put32(m, SKS_NR_NODE_IDS, 2);
	for (unsigned i = 0; i < SKS_NCACHES; i++) {
		const struct sks_cache *c = &sks_caches[i];
		uint64_t pa = SKS_CACHE(i);
		lists[i] = pa + SKS_CACHE_LIST;
		sk_put32(m, pa + SKS_CACHE_SIZE, c->size);
		sk_put32(m, pa + SKS_CACHE_OO, c->oo);
		sk_put64(m, pa + SKS_CACHE_NAME, sks_name(w, c->name));
		for (unsigned n = 0; n < 2; n++) {
			if (n == 1 && i == 1)
				continue;	// no node 1 (NULL)
			uint64_t kn = SKS_KNODE(knode++), partial[2];
			sk_put64(m, pa + SKS_CACHE_NODE + 8 * n, SKP_VA(kn));
			sk_put64(m, kn + SKS_KNODE_NR_SLABS, c->nr_slabs[n]);
			sk_put64(m, kn + SKS_KNODE_TOTAL, c->total[n]);
			unsigned np = n ? 0 : c->npartial;
			for (unsigned s = 0; s < np; s++) {
				uint64_t sl = SKS_SLABP(slabp++);
				partial[s] = sl + SKS_SLAB_LIST;
				sk_put32(m, sl + SKS_SLAB_COUNTERS, c->partial[s].inuse | c->partial[s].objects << 16);
				sk_put64(m, sl + 0x18, SKP_VA(pa));	// slab_cache
			}
			sk_put64(m, kn + SKS_KNODE_NR_PARTIAL, np);
			sks_list(w, kn + SKS_KNODE_PARTIAL, partial, np, false);
			sks_list(w, kn + 0x30, NULL, 0, false);
		}
	}
	sks_list(w, SKS_SLAB_CACHES, lists, SKS_NCACHES, true);
}

// IRQ 0 (timer) and 1 (i8042) edge on the IO-APIC, 9 (acpi, shared)
// fasteoi on a chip without a name and outside a domain; sparse_irqs' one
// leaf (new) or the irq_desc array (old: every descriptor of nr_irqs).
static void irqs(struct sks_world *w)
{
	uint8_t *m = w->m;
	static const struct {
		unsigned irq, chip, hwirq;
		bool domain;
		const char *flow, *actions[2];
		uint32_t counts[4];
	} d[] = {
		{ 0, 0, 2, true, "edge", { "timer", NULL }, { 100, 20, 3, 777 } },
		{ 1, 0, 1, true, "edge", { "i8042", NULL }, { 5, 0, 0, 777 } },
		{ 9, 1, 9, false, "fasteoi", { "acpi", "shared" }, { 0, 0, 7, 777 } },
	};
	bool old = w->o->sys == SK_SYS_OLD;
	sk_put32(m, SKS_NR_IRQS, SKS_NR_IRQS_VALUE);
	sk_put64(m, SKS_CHIP(0), sks_name(w, "IO-APIC"));
	for (unsigned i = 0; old && i < SKS_NR_IRQS_VALUE; i++)
		sk_put32(m, SKS_DESC(i) + SKS_DESC_IRQ, i);
	unsigned action = 0;
	for (size_t i = 0; i < sizeof(d) / sizeof(d[0]); i++) {
		uint64_t desc = SKS_DESC(d[i].irq);
		sk_put32(m, desc + SKS_DESC_IRQ, d[i].irq);
		sk_put64(m, desc + SKS_DESC_HWIRQ, d[i].hwirq);
		sk_put64(m, desc + SKS_DESC_CHIP, SKP_VA(SKS_CHIP(d[i].chip)));
		sk_put64(m, desc + SKS_DESC_DOMAIN, d[i].domain ? SKP_VA(SKS_IRQ + 0xff0) : 0);
		sk_put64(m, desc + SKS_DESC_KSTAT, SKS_PC_KSTAT(d[i].irq));
		sk_put64(m, desc + SKS_DESC_NAME, sks_name(w, d[i].flow));
		for (unsigned cpu = 0; cpu < 4; cpu++)
			sk_put32(m, SKS_PCPU(cpu) + SKS_PC_KSTAT(d[i].irq), d[i].counts[cpu]);
		uint64_t at = desc + SKS_DESC_ACTION;
		for (unsigned a = 0; a < 2 && d[i].actions[a]; a++, action++) {
			sk_put64(m, at, SKP_VA(SKS_ACTION(action)));
			sk_put64(m, SKS_ACTION(action) + SKS_ACTION_NAME, sks_name(w, d[i].actions[a]));
			at = SKS_ACTION(action) + SKS_ACTION_NEXT;
		}
	}
	// sparse_irqs (MT_FLAGS_ALLOC_RANGE): one leaf, IRQs 0, 1 and 9.
	uint64_t tree = SKS_SPARSE_IRQS, leaf = SKS_MT_LEAF;
	static const struct { uint64_t pivot; int irq; } slots[] = {
		{ 0, 0 }, { 1, 1 }, { 8, -1 }, { 9, 9 }, { ULONG_MAX_, -1 },
	};
	sk_put32(m, tree + 4, 1);
	sk_put64(m, tree + SKP_MT_ROOT, SKP_MAPLE_ROOT(SKP_ENODE(SKP_VA(leaf), SKP_MAPLE_LEAF_64)));
	sk_put64(m, leaf, SKS_IMG(tree) | 1);
	for (unsigned s = 0; s < 5; s++) {
		sk_put64(m, leaf + SKP_R64_PIVOT + 8 * s, slots[s].pivot);
		sk_put64(m, leaf + SKP_R64_SLOT + 8 * s, slots[s].irq < 0 ? 0 : SKP_VA(SKS_DESC(slots[s].irq)));
	}
	m[leaf + SKP_R64_SLOT + 15 * 8] = 4;	// maple_metadata.end
}

// Two modules on the modules list (image addresses, as the kernel's own
// list head is in its data).
static void modules(struct sks_world *w)
{
	static const char *const names[] = SKS_MOD_NAMES;
	static const uint32_t sizes[] = SKS_MOD_SIZES;
	uint64_t nodes[2];
	for (int i = 0; i < 2; i++) {
		memset(w->m + SKS_MOD(i), 0, SKS_MOD_STRUCT_SIZE);
		sk_put32(w->m, SKS_MOD(i) + SKS_MOD_STATE, 0);	// MODULE_STATE_LIVE
		snprintf((char *)w->m + SKS_MOD(i) + SKS_MOD_NAME, 56, "%s", names[i]);
		sk_put64(w->m, SKS_MOD(i) + SKS_MOD_CORE, UINT64_C(0xffffffffc0000000) + 0x10000 * (uint64_t)i);
		sk_put32(w->m, SKS_MOD(i) + SKS_MOD_CORE + 8, sizes[i]);
		sk_put32(w->m, SKS_MOD(i) + SKS_MOD_CORE + 12, sizes[i] / 2);	// text_size
		nodes[i] = SKS_MOD(i) + SKS_MOD_LIST;
	}
	for (int i = 0; i < 2; i++) {
		uint64_t next = i + 1 < 2 ? SKS_IMG(nodes[i + 1]) : SKS_IMG(SKS_MODULES);
		uint64_t prev = i ? SKS_IMG(nodes[i - 1]) : SKS_IMG(SKS_MODULES);
		sk_put64(w->m, nodes[i], next);
		sk_put64(w->m, nodes[i] + 8, prev);
	}
	sk_put64(w->m, SKS_MODULES, SKS_IMG(nodes[0]));
	sk_put64(w->m, SKS_MODULES + 8, SKS_IMG(nodes[1]));
}

void sks_write(uint8_t *m, const struct sk_opts *o)
{
	if (o->procs == SK_PROCS_NONE || o->ntasks < 12)
		sk_die("the system needs the processes and 12 tasks");
	struct sks_world w = { m, o, SKS_NAMES };
	runqueues(&w);
	meminfo(&w);
	slab(&w);
	irqs(&w);
	modules(&w);
	sks_write_net(&w);
}

void sks_put_words(uint8_t *m, void *arg)
{
	for (const struct sks_word *w = arg; w->pa; w++) {
		if (w->size == 1)
			m[w->pa] = (uint8_t)w->value;
		else if (w->size == 2)
			memcpy(m + w->pa, &(uint16_t){ (uint16_t)w->value }, 2);
		else if (w->size == 4)
			sk_put32(m, w->pa, (uint32_t)w->value);
		else
			sk_put64(m, w->pa, w->value);
	}
}
