// SPDX-License-Identifier: MIT
// kp_meminfo: the lines of /proc/meminfo a dump can give, computed as
// fs/proc/meminfo.c meminfo_proc_show(), si_meminfo(), si_swapinfo() and
// si_mem_available() do (5.10..7.x), in their order:
//   - the global counters vm_node_stat[] and vm_zone_stat[] (atomic_long_t,
//     in pages; NR_KERNEL_STACK_KB in kB), indexed by the enumerators of
//     enum node_stat_item and zone_stat_item, which BTF gives (an item
//     moves between the two across versions: NR_PAGETABLE became a node
//     item in 5.11, so both enums are asked);
//   - the global variables behind the other lines (_totalram_pages,
//     nr_swap_pages, vm_committed_as, hstates[]...), whose sizes are the
//     kernel's declarations (BTF has no VAR for them);
//   - the zones' low watermarks for MemAvailable, the block devices' page
//     cache pages for Buffers.
// A line whose inputs the kernel does not have (no CONFIG_CMA: no
// CmaTotal) or kpeek cannot read is left out, never printed as 0.
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "core/kernel.h"
#include "core/layout.h"
#include "linux/lib/list.h"
#include "linux/mm/mm.h"
#include "util/error.h"

#define MAX_ITEMS 64
// 2^40 pages: 4 PiB of 4 KiB pages, all x86-64's 5-level paging can
// address. A counter beyond it is corrupt, and its line left out: sums of
// such values cannot overflow.
#define MAX_PAGES (INT64_C(1) << 40)

static bool sane(int64_t v)
{
	return v >= -MAX_PAGES && v <= MAX_PAGES;
}

struct mi {
	struct kp_kernel *k;
	uint64_t node_stat, zone_stat;	// &vm_node_stat, &vm_zone_stat
	unsigned shift;			// PAGE_SHIFT - 10: pages to kB
	struct kp_meminfo *out;
};

// A global counter by enumerator, from the node or the zone counters.
static bool stat(struct mi *m, const char *item, int64_t *ret)
{
	uint64_t idx, v;
	uint64_t base = kp_kernel_enum_value_in(m->k, "node_stat_item", item, &idx) ? m->node_stat :
			kp_kernel_enum_value_in(m->k, "zone_stat_item", item, &idx) ? m->zone_stat : 0;
	if (!base || idx > 256 || !kp_ok(kp_read_u64(m->k, base + idx * 8, &v)) || !sane((int64_t)v))
		return false;
	*ret = (int64_t)v;
	return true;
}

// A global variable of size bytes (4 or 8), signed.
static bool var(struct mi *m, const char *name, unsigned size, int64_t *ret)
{
	struct kp_symbol sym;
	uint64_t v8;
	uint32_t v4;
	if (!kp_symbol_find(m->k, name, &sym))
		return false;
	if (size == 4 && kp_ok(kp_read_u32(m->k, sym.address, &v4))) {
		*ret = (int32_t)v4;
		return true;
	}
	if (size == 8 && kp_ok(kp_read_u64(m->k, sym.address, &v8)) && sane((int64_t)v8)) {
		*ret = (int64_t)v8;
		return true;
	}
	return false;
}

static void put(struct mi *m, const char *name, int64_t v, bool kb)
{
	struct kp_meminfo *o = m->out;
	if (o->n == MAX_ITEMS)
		return;
	o->items[o->n++] = (struct kp_meminfo_item){ .name = name, .value = v < 0 ? 0 : (uint64_t)v, .kb = kb };
}

static void pages(struct mi *m, const char *name, bool have, int64_t v)
{
	if (have && sane(v))
		put(m, name, v < 0 ? 0 : v << m->shift, true);
}

static void counter(struct mi *m, const char *name, const char *item)
{
	int64_t v = 0;
	bool have = stat(m, item, &v);
	pages(m, name, have, v);
}

// A line from a global variable of size bytes, in pages.
static void variable(struct mi *m, const char *name, const char *symbol, unsigned size)
{
	int64_t v = 0;
	bool have = var(m, symbol, size, &v);
	pages(m, name, have, v);
}

// percpu_counter_sum_positive(): count plus every CPU's delta.
static bool percpu_counter_sum(struct mi *m, const char *name, int64_t *ret)
{
	static const struct kp_member_spec members[] = { { .name = "count" }, { .name = "counters" } };
	static const struct kp_struct_spec spec = KP_STRUCT_SPEC("struct percpu_counter", members);
	const struct kp_struct_layout *l;
	struct kp_symbol sym;
	uint64_t count, counters;
	if (!kp_symbol_find(m->k, name, &sym) || !kp_ok(kp_kernel_layout(m->k, &spec, &l)) ||
	    !kp_ok(kp_read_u64(m->k, sym.address + kp_layout_off(l, 0), &count)) ||
	    !kp_ok(kp_read_u64(m->k, sym.address + kp_layout_off(l, 1), &counters)))
		return false;
	if (!sane((int64_t)count))
		return false;
	int64_t sum = (int64_t)count;
	for (uint32_t cpu = 0, n = kp_kernel_nr_cpu_ids(m->k); cpu < n; cpu++) {
		uint64_t off;
		uint32_t v;
		struct kp_error *err = kp_kernel_per_cpu_offset(m->k, cpu, &off);
		if (err) {
			bool impossible = err->code == KP_ERR_INVALID;
			kp_error_destroy(err);
			if (impossible)
				continue;
			return false;
		}
		if (!kp_ok(kp_read_u32(m->k, counters + off, &v)))
			return false;
		sum += (int32_t)v;
	}
	*ret = sum < 0 ? 0 : sum;
	return true;
}

// nr_blockdev_pages(): the page cache of the block devices' inodes, on
// blockdev_superblock's s_inodes list.
static bool blockdev_pages(struct mi *m, int64_t *ret)
{
	static const struct kp_member_spec sb_members[] = { { .name = "s_inodes" } };
	static const struct kp_struct_spec sb_spec = KP_STRUCT_SPEC("struct super_block", sb_members);
	static const struct kp_member_spec inode_members[] = { { .name = "i_sb_list" }, { .name = "i_mapping" } };
	static const struct kp_struct_spec inode_spec = KP_STRUCT_SPEC("struct inode", inode_members);
	static const struct kp_member_spec as_members[] = { { .name = "nrpages" } };
	static const struct kp_struct_spec as_spec = KP_STRUCT_SPEC("struct address_space", as_members);
	static const struct kp_struct_spec *const specs[] = { &sb_spec, &inode_spec, &as_spec };
	const struct kp_struct_layout *l[3];
	struct kp_symbol sym;
	struct kp_list_iter *it;
	uint64_t sb, node, sum = 0;
	bool done = false;
	if (!kp_symbol_find(m->k, "blockdev_superblock", &sym) || !kp_ok(kp_kernel_layouts(m->k, specs, 3, l)) ||
	    !kp_ok(kp_read_u64(m->k, sym.address, &sb)) || !sb ||
	    !kp_ok(kp_lx_list_iter_create(m->k, sb + kp_layout_off(l[0], 0), 0, "block device inodes", &it)))
		return false;
	for (;;) {
		uint64_t mapping, n;
		struct kp_error *err = kp_list_iter_next(it, &node, &done);
		if (err) {
			// The iterator says done with its error: a corrupt list's
			// sum is not the answer.
			kp_error_destroy(err);
			done = false;
			break;
		}
		if (done)
			break;
		uint64_t inode = node - kp_layout_off(l[1], 0);
		if (!kp_ok(kp_read_u64(m->k, inode + kp_layout_off(l[1], 1), &mapping)) || !mapping ||
		    !kp_ok(kp_read_u64(m->k, mapping + kp_layout_off(l[2], 0), &n)))
			break;
		if (n > (uint64_t)MAX_PAGES)
			break;	// corrupt: not done, no sum
		sum += n;
	}
	kp_list_iter_destroy(it);
	*ret = (int64_t)sum;
	return done && sum <= (uint64_t)MAX_PAGES;
}

// si_mem_available().
static bool available(struct mi *m, int64_t free, int64_t *ret)
{
	int64_t reserve, afile, ifile, sreclaim, misc = 0, wmark_low;
	if (!var(m, "totalreserve_pages", 8, &reserve) || !stat(m, "NR_ACTIVE_FILE", &afile) ||
	    !stat(m, "NR_INACTIVE_FILE", &ifile) || !stat(m, "NR_SLAB_RECLAIMABLE_B", &sreclaim) ||
	    !kp_lx_low_watermarks(m->k, &wmark_low))
		return false;
	stat(m, "NR_KERNEL_MISC_RECLAIMABLE", &misc);
	int64_t avail = free - reserve, cache = afile + ifile, reclaimable = sreclaim + misc;
	cache -= cache / 2 < wmark_low ? cache / 2 : wmark_low;
	avail += cache;
	avail += reclaimable - (reclaimable / 2 < wmark_low ? reclaimable / 2 : wmark_low);
	*ret = avail < 0 ? 0 : avail;
	return true;
}

// The default huge page size's pool and every size's total
// (hugetlb_report_meminfo()), when the kernel has hugetlbfs.
struct huge {
	bool have;
	uint64_t order, nr, free, resv, surplus;	// of the default size
	uint64_t total_kb;				// of every size
};

static void hugepages(struct mi *m, struct huge *ret)
{
	enum { H_ORDER, H_NR, H_FREE, H_RESV, H_SURPLUS, H_N };
	static const struct kp_member_spec members[H_N] = {
		[H_ORDER] = { .name = "order" }, [H_NR] = { .name = "nr_huge_pages" },
		[H_FREE] = { .name = "free_huge_pages" }, [H_RESV] = { .name = "resv_huge_pages" },
		[H_SURPLUS] = { .name = "surplus_huge_pages" },
	};
	static const struct kp_struct_spec spec = KP_STRUCT_SPEC("struct hstate", members);
	const struct kp_struct_layout *l;
	struct kp_symbol sym;
	int64_t nstates, def;
	uint8_t buf[4096];
	struct huge h = { .have = true };
	if (!kp_symbol_find(m->k, "hstates", &sym) || !kp_ok(kp_kernel_layout(m->k, &spec, &l)) ||
	    !var(m, "hugetlb_max_hstate", 4, &nstates) || !var(m, "default_hstate_idx", 4, &def) ||
	    nstates < 0 || nstates > 16 || def < 0 || def >= 16)
		return;
	for (int64_t i = 0; i < nstates || i == def; i++) {
		if (!kp_ok(kp_kernel_read_struct(m->k, l, sym.address + (uint64_t)i * l->size, buf, sizeof(buf))))
			return;
		uint64_t order = kp_layout_u64(l, buf, H_ORDER);
		if (order > 30)
			return;	// corrupt
		h.total_kb += kp_layout_u64(l, buf, H_NR) << (order + m->shift);
		if (i != def)
			continue;
		h.order = order;
		h.nr = kp_layout_u64(l, buf, H_NR);
		h.free = kp_layout_u64(l, buf, H_FREE);
		h.resv = kp_layout_u64(l, buf, H_RESV);
		h.surplus = kp_layout_u64(l, buf, H_SURPLUS);
	}
	*ret = h;
}

// vm_commit_limit(): overcommit_kbytes, else ratio % of RAM without huge
// pages; plus swap.
static bool commit_limit(struct mi *m, int64_t totalram, int64_t swap, const struct huge *h, int64_t *ret)
{
	int64_t kbytes, ratio, huge = (int64_t)(h->total_kb >> m->shift);
	if (!var(m, "sysctl_overcommit_kbytes", 8, &kbytes) || !var(m, "sysctl_overcommit_ratio", 4, &ratio))
		return false;
	int64_t limit;
	if (kbytes)
		limit = kbytes >> m->shift;
	else if (__builtin_mul_overflow(totalram - huge, ratio, &limit))
		return false;	// a corrupt ratio or huge page count
	else
		limit /= 100;
	return !__builtin_add_overflow(limit, swap, ret) && sane(*ret);
}

// The lines, in meminfo_proc_show()'s order.
// CONFIG_CMA: totalcma_pages and NR_FREE_CMA_PAGES exist without it
// (mm/page_alloc.c, mmzone.h), the lines only with it; cma_alloc()
// (mm/cma.c) only with it.
static void cma_lines(struct mi *m)
{
	struct kp_symbol cma;
	if (kp_symbol_find(m->k, "cma_alloc", &cma)) {
		variable(m, "CmaTotal", "totalcma_pages", 8);
		counter(m, "CmaFree", "NR_FREE_CMA_PAGES");
	}
}

static struct kp_error *lines(struct mi *m)
{
	int64_t total, free, shmem = 0, buffers = 0, files = 0, swapcache = 0, swap_total = 0, swap_free = 0;
	int64_t lru[5] = { 0 }, sreclaim = 0, sunreclaim = 0, misc = 0, committed = 0, limit = 0, v = 0;
	static const char *const lru_items[5] = { "NR_INACTIVE_ANON", "NR_ACTIVE_ANON", "NR_INACTIVE_FILE",
						  "NR_ACTIVE_FILE", "NR_UNEVICTABLE" };
	if (!var(m, "_totalram_pages", 8, &total) || !stat(m, "NR_FREE_PAGES", &free))
		return kp_error_create(KP_ERR_NOT_FOUND, "no _totalram_pages or NR_FREE_PAGES: the memory "
				       "totals are unknown");
	bool have_buffers = blockdev_pages(m, &buffers);
	bool have_swap = var(m, "total_swap_pages", 8, &swap_total) && var(m, "nr_swap_pages", 8, &swap_free);
	// total_swapcache_pages(): none without swap; NR_SWAPCACHE (5.13) counts it.
	bool have_swapcache = (have_swap && swap_total == 0) || stat(m, "NR_SWAPCACHE", &swapcache);
	bool have_lru = true;
	for (int i = 0; i < 5; i++)
		have_lru &= stat(m, lru_items[i], &lru[i]);
	pages(m, "MemTotal", true, total);
	pages(m, "MemFree", true, free);
	bool have = available(m, free, &v);
	pages(m, "MemAvailable", have, v);
	pages(m, "Buffers", have_buffers, buffers);
	bool have_files = stat(m, "NR_FILE_PAGES", &files);
	pages(m, "Cached", have_files && have_buffers && have_swapcache, files - swapcache - buffers);
	pages(m, "SwapCached", have_swapcache, swapcache);
	pages(m, "Active", have_lru, lru[1] + lru[3]);
	pages(m, "Inactive", have_lru, lru[0] + lru[2]);
	pages(m, "Active(anon)", have_lru, lru[1]);
	pages(m, "Inactive(anon)", have_lru, lru[0]);
	pages(m, "Active(file)", have_lru, lru[3]);
	pages(m, "Inactive(file)", have_lru, lru[2]);
	pages(m, "Unevictable", have_lru, lru[4]);
	counter(m, "Mlocked", "NR_MLOCK");
	pages(m, "SwapTotal", have_swap, swap_total);
	pages(m, "SwapFree", have_swap, swap_free);
	counter(m, "Dirty", "NR_FILE_DIRTY");
	counter(m, "Writeback", "NR_WRITEBACK");
	counter(m, "AnonPages", "NR_ANON_MAPPED");
	counter(m, "Mapped", "NR_FILE_MAPPED");
	bool have_shmem = stat(m, "NR_SHMEM", &shmem);
	pages(m, "Shmem", have_shmem, shmem);
	bool have_slab = stat(m, "NR_SLAB_RECLAIMABLE_B", &sreclaim) && stat(m, "NR_SLAB_UNRECLAIMABLE_B", &sunreclaim);
	stat(m, "NR_KERNEL_MISC_RECLAIMABLE", &misc);
	pages(m, "KReclaimable", have_slab, sreclaim + misc);
	pages(m, "Slab", have_slab, sreclaim + sunreclaim);
	pages(m, "SReclaimable", have_slab, sreclaim);
	pages(m, "SUnreclaim", have_slab, sunreclaim);
	if (stat(m, "NR_KERNEL_STACK_KB", &v))
		put(m, "KernelStack", v, true);	// kB already
	counter(m, "PageTables", "NR_PAGETABLE");
	counter(m, "SecPageTables", "NR_SECONDARY_PAGETABLE");	// 6.2
	counter(m, "Bounce", "NR_BOUNCE");
	counter(m, "WritebackTmp", "NR_WRITEBACK_TEMP");
	struct huge huge = { .have = false };
	hugepages(m, &huge);
	bool have_limit = have_swap && commit_limit(m, total, swap_total, &huge, &limit);
	pages(m, "CommitLimit", have_limit, limit);
	have = percpu_counter_sum(m, "vm_committed_as", &committed);
	pages(m, "Committed_AS", have, committed);
	variable(m, "VmallocUsed", "nr_vmalloc_pages", 8);
	int64_t populated = 0, units = 0, percpu = 0;
	have = var(m, "pcpu_nr_populated", 8, &populated) && var(m, "pcpu_nr_units", 4, &units) &&
	       !__builtin_mul_overflow(populated, units, &percpu) && sane(percpu);
	pages(m, "Percpu", have, percpu);
	variable(m, "HardwareCorrupted", "num_poisoned_pages", 8);
	cma_lines(m);
	counter(m, "Unaccepted", "NR_UNACCEPTED");	// 6.5
	if (huge.have) {
		put(m, "HugePages_Total", (int64_t)huge.nr, false);
		put(m, "HugePages_Free", (int64_t)huge.free, false);
		put(m, "HugePages_Rsvd", (int64_t)huge.resv, false);
		put(m, "HugePages_Surp", (int64_t)huge.surplus, false);
		put(m, "Hugepagesize", (int64_t)(1ull << (huge.order + m->shift)), true);
		put(m, "Hugetlb", (int64_t)huge.total_kb, true);
	}
	return NULL;
}

struct kp_error *kp_meminfo_create(struct kp_kernel *k, struct kp_meminfo **ret)
{
	struct kp_symbol ns, zs;
	if (!kp_symbol_find(k, "vm_node_stat", &ns) || !kp_symbol_find(k, "vm_zone_stat", &zs))
		return kp_kernel_no_symbol(k, "no symbols 'vm_node_stat' and 'vm_zone_stat' (the memory counters)");
	struct kp_meminfo *o = calloc(1, sizeof(*o) + MAX_ITEMS * sizeof(o->items[0]));
	if (!o)
		return &kp_enomem;
	o->items = (struct kp_meminfo_item *)(o + 1);
	struct mi m = { .k = k, .node_stat = ns.address, .zone_stat = zs.address, .out = o,
			.shift = (unsigned)__builtin_ctzll(kp_kernel_page_size(k)) - 10 };
	struct kp_error *err = lines(&m);
	if (err) {
		kp_meminfo_destroy(o);
		return err;
	}
	*ret = o;
	return NULL;
}

void kp_meminfo_destroy(struct kp_meminfo *m)
{
	free(m);
}
