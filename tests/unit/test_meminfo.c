// SPDX-License-Identifier: MIT
// kp_meminfo_create (linux/mm/meminfo.c, zones.c) on the synthetic
// kernel's counters (tests/gen/synthsys.h): the lines are computed here,
// as the kernel's meminfo_proc_show() does, from what the generator wrote.
#include "test.h"
#include "synthkernel.h"
#include "synthsys.h"

static struct kp_kernel *open_sys(enum sk_sys sys, const struct sks_word *edit)
{
	struct sk_opts o = { .format = SK_ELF, .ntasks = 12, .procs = SK_PROCS_LIST, .sys = sys,
			     .edit = edit ? sks_put_words : NULL, .edit_arg = (void *)edit };
	struct kp_kernel *k = NULL;
	CHECK_OK(sk_open(&o, &k));
	return k;
}

static int64_t find(const struct sks_stat *s, const char *name)
{
	for (; s->name; s++)
		if (!strcmp(s->name, name))
			return s->value;
	abort();
}

static int64_t st(const char *name)
{
	for (const struct sks_stat *s = sks_node_stats; s->name; s++)
		if (!strcmp(s->name, name))
			return s->value;
	return find(sks_zone_stats, name);
}

static int64_t var(const char *name)
{
	return find(sks_scalars, name);
}

static int64_t min64(int64_t a, int64_t b)
{
	return a < b ? a : b;
}

struct line {
	const char *name;
	int64_t value;	// kB, or a count for HugePages_*
};

// /proc/meminfo of the generated kernel, in its order.
static size_t expected(struct line *l)
{
	size_t n = 0;
	int64_t wmark = 0, huge_kb = 0;
	for (uint64_t z = 0; z < SKS_NZONES; z++)
		wmark += (int64_t)(SKS_WMARK_LOW(z) + z);
	for (int i = 0; i < 2; i++)
		huge_kb += (int64_t)(sks_hstates[i].nr << (sks_hstates[i].order + 2));
	int64_t cache = st("NR_ACTIVE_FILE") + st("NR_INACTIVE_FILE");
	int64_t recl = st("NR_SLAB_RECLAIMABLE_B") + st("NR_KERNEL_MISC_RECLAIMABLE");
	int64_t avail = st("NR_FREE_PAGES") - var("totalreserve_pages") + cache - min64(cache / 2, wmark) + recl -
			min64(recl / 2, wmark);
	int64_t committed = SKS_COMMITTED_COUNT;
	for (int cpu = 0; cpu < 3; cpu++)
		committed += sks_committed_delta[cpu];	// CPU 3 is not possible
#define L(name_, pages_) (l[n++] = (struct line){ name_, (pages_) * 4 })
	L("MemTotal", var("_totalram_pages"));
	L("MemFree", st("NR_FREE_PAGES"));
	L("MemAvailable", avail);
	L("Buffers", SKS_BLOCKDEV_PAGES);
	L("Cached", st("NR_FILE_PAGES") - st("NR_SWAPCACHE") - SKS_BLOCKDEV_PAGES);
	L("SwapCached", st("NR_SWAPCACHE"));
	L("Active", st("NR_ACTIVE_ANON") + st("NR_ACTIVE_FILE"));
	L("Inactive", st("NR_INACTIVE_ANON") + st("NR_INACTIVE_FILE"));
	L("Active(anon)", st("NR_ACTIVE_ANON"));
	L("Inactive(anon)", st("NR_INACTIVE_ANON"));
	L("Active(file)", st("NR_ACTIVE_FILE"));
	L("Inactive(file)", st("NR_INACTIVE_FILE"));
	L("Unevictable", st("NR_UNEVICTABLE"));
	L("Mlocked", st("NR_MLOCK"));
	L("SwapTotal", var("total_swap_pages"));
	L("SwapFree", var("nr_swap_pages"));
	L("Dirty", st("NR_FILE_DIRTY"));
	L("Writeback", st("NR_WRITEBACK"));
	L("AnonPages", st("NR_ANON_MAPPED"));
	L("Mapped", st("NR_FILE_MAPPED"));
	L("Shmem", st("NR_SHMEM"));
	L("KReclaimable", recl);
	L("Slab", st("NR_SLAB_RECLAIMABLE_B") + st("NR_SLAB_UNRECLAIMABLE_B"));
	L("SReclaimable", st("NR_SLAB_RECLAIMABLE_B"));
	L("SUnreclaim", st("NR_SLAB_UNRECLAIMABLE_B"));
	l[n++] = (struct line){ "KernelStack", st("NR_KERNEL_STACK_KB") };
	L("PageTables", st("NR_PAGETABLE"));
	L("SecPageTables", st("NR_SECONDARY_PAGETABLE"));
	L("Bounce", st("NR_BOUNCE"));
	L("WritebackTmp", st("NR_WRITEBACK_TEMP"));
	L("CommitLimit", (var("_totalram_pages") - huge_kb / 4) * var("sysctl_overcommit_ratio") / 100 +
			 var("total_swap_pages"));
	L("Committed_AS", committed);
	L("VmallocUsed", var("nr_vmalloc_pages"));
	L("Percpu", var("pcpu_nr_populated") * var("pcpu_nr_units"));
	L("HardwareCorrupted", var("num_poisoned_pages"));
	L("CmaTotal", var("totalcma_pages"));
	L("CmaFree", st("NR_FREE_CMA_PAGES"));
#undef L
	const struct sks_hstate *h = &sks_hstates[0];
	l[n++] = (struct line){ "HugePages_Total", (int64_t)h->nr };
	l[n++] = (struct line){ "HugePages_Free", (int64_t)h->free };
	l[n++] = (struct line){ "HugePages_Rsvd", (int64_t)h->resv };
	l[n++] = (struct line){ "HugePages_Surp", (int64_t)h->surplus };
	l[n++] = (struct line){ "Hugepagesize", INT64_C(1) << (h->order + 2) };
	l[n++] = (struct line){ "Hugetlb", huge_kb };
	return n;
}

// The lines of k without those named in gone (NULL-ended).
static void check(struct kp_kernel *k, const char *const *gone)
{
	struct line want[64];
	size_t n = expected(want), at = 0;
	struct kp_meminfo *mi;
	CHECK_OK(kp_meminfo_create(k, &mi));
	if (!mi)
		return;
	for (size_t i = 0; i < n; i++) {
		bool missing = false;
		for (const char *const *g = gone; g && *g; g++)
			missing |= !strcmp(*g, want[i].name);
		if (missing)
			continue;
		if (at >= mi->n) {
			FAILF("no %s line", want[i].name);
			break;
		}
		CHECK_STR(mi->items[at].name, want[i].name);
		CHECK_U64(mi->items[at].value, want[i].value);
		CHECK(mi->items[at].kb == (strncmp(want[i].name, "HugePages_", 10) != 0));
		at++;
	}
	CHECK_U64(mi->n, at);
	kp_meminfo_destroy(mi);
}

TEST(meminfo_of_both_generations)
{
	for (enum sk_sys sys = SK_SYS_NEW; sys <= SK_SYS_OLD; sys++) {
		struct kp_kernel *k = open_sys(sys, NULL);
		if (!k)
			return;
		check(k, NULL);
		kp_kernel_destroy(k);
	}
}

struct hostile {
	const char *what;
	struct sks_word edit[3];
	const char *gone[12];
};

// What cannot be read is not shown, never shown as 0; the rest stands.
TEST(unreadable_inputs_leave_their_lines_out)
{
	uint64_t inode0 = SKS_FILES + 0x240 + 0x18;
	const struct hostile cases[] = {
		// The node's zones are on a page the dump lacks.
		{ "zones", { { SKS_NODE_DATA, SK_HOLE, 8 } }, { "MemAvailable" } },
		// The block devices' inode list loops (not back to its head).
		{ "blockdev loop", { { inode0 + 0x40, SKP_VA(inode0), 8 } }, { "Buffers", "Cached" } },
		// More huge page sizes than the kernel has: no huge page lines.
		{ "hstates", { { SKS_SCALARS + 8 * 11, 1000, 4 } },
		  { "CommitLimit", "HugePages_Total", "HugePages_Free", "HugePages_Rsvd", "HugePages_Surp",
		    "Hugepagesize", "Hugetlb" } },
		// A counter beyond any memory (2^62 pages): its lines out, no overflow.
		{ "absurd counter", { { SKS_NODE_STAT + 8 * 3, UINT64_C(1) << 62, 8 } },
		  { "MemAvailable", "Active", "Inactive", "Active(anon)", "Inactive(anon)", "Active(file)",
		    "Inactive(file)", "Unevictable" } },
		// A per-CPU counter outside memory.
		{ "committed", { { SKS_COMMITTED + 0x20, UINT64_C(0x7fff00000000), 8 } }, { "Committed_AS" } },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct kp_kernel *k = open_sys(SK_SYS_NEW, cases[i].edit);
		if (!k)
			return;
		printf("  %s\n", cases[i].what);
		if (strcmp(cases[i].what, "hstates")) {
			check(k, cases[i].gone);
		} else {
			// CommitLimit stays, computed without huge pages.
			struct kp_meminfo *mi;
			CHECK_OK(kp_meminfo_create(k, &mi));
			for (size_t j = 0; mi && j < mi->n; j++) {
				CHECK(strncmp(mi->items[j].name, "Huge", 4) != 0);
				if (!strcmp(mi->items[j].name, "CommitLimit"))
					CHECK_U64(mi->items[j].value, (var("_totalram_pages") / 2 + var("total_swap_pages")) * 4);
			}
			kp_meminfo_destroy(mi);
		}
		kp_kernel_destroy(k);
	}
}

TEST(a_kernel_without_counters_says_so)
{
	struct sk_opts o = { .format = SK_ELF, .ntasks = 12, .procs = SK_PROCS_LIST };
	struct kp_kernel *k = NULL;
	struct kp_meminfo *mi = NULL;
	CHECK_OK(sk_open(&o, &k));
	if (!k)
		return;
	CHECK_ERR(kp_meminfo_create(k, &mi), KP_ERR_NOT_FOUND, "no symbols 'vm_node_stat' and 'vm_zone_stat'");
	CHECK(mi == NULL);
	kp_kernel_destroy(k);
}

int main(void)
{
	RUN(meminfo_of_both_generations);
	RUN(unreadable_inputs_leave_their_lines_out);
	RUN(a_kernel_without_counters_says_so);
	return TEST_SUMMARY();
}
