// SPDX-License-Identifier: MIT
// The maple tree walker (linux/lib/maple.c) and the VMA iterator over it
// (linux/mm/vma.c), on the synthetic kernel's processes
// (tests/gen/synthprocs.h): task 1's VMAs in one maple_leaf_64 at the
// root, task 2's in a maple_arange_64 over two leaves, and trees the
// tests build in the free RAM from nodes laid out as the kernel lays them
// out (256-byte nodes, the type in the encoded pointer).
#include <stdlib.h>

#include "test.h"
#include "synthkernel.h"
#include "synthprocs.h"
#include "linux/lib/maple.h"

typedef void edit_fn(uint8_t *m, void *arg);

static const struct sk_opts base = { .format = SK_ELF, .ntasks = 3, .procs = SK_PROCS_LIST };
#define TASK(i) sk_task_va(&base, i)
#define MAX UINT64_MAX
#define TREE(mm) SKP_VA(SKP_MM(mm) + SKP_MM_MT)
#define ROOT_PA(mm) (SKP_MM(mm) + SKP_MM_MT + SKP_MT_ROOT)
#define FREE_NODE(j) (SKP_FREE + 0x100 * (uint64_t)(j))

static struct kp_kernel *procs(edit_fn *edit, void *arg)
{
	struct sk_opts o = base;
	o.edit = edit;
	o.edit_arg = arg;
	struct kp_kernel *k = NULL;
	CHECK_OK(sk_open(&o, &k));
	return k;
}

// [first, last] and entry of what a walk yielded.
struct got {
	uint64_t first[64], last[64], entry[64];
	size_t n;
};

static struct kp_error *collect(uint64_t first, uint64_t last, uint64_t entry, void *arg)
{
	struct got *g = arg;
	if (g->n < 64) {
		g->first[g->n] = first;
		g->last[g->n] = last;
		g->entry[g->n] = entry;
	}
	g->n++;
	return NULL;
}

// Task 1's VMAs (0-4) and task 2's (5-8): the indexes each covers.
static const struct {
	uint64_t first, last;
} want[9] = {
	{ 0x400000, 0x400fff }, { 0x401000, 0x421fff }, { 0x7ffff7fc1000, 0x7ffff7fc2fff },
	{ 0x7fffffa00000, 0x7fffffbfffff }, { 0x7ffffffde000, 0x7fffffffefff },
	{ 0x1000000, 0x1000fff }, { 0x1002000, 0x1003fff }, { 0x11000000, 0x11000fff },
	{ 0x7ffffff00000, 0x7ffffff20fff },
};

// g holds the VMAs from..from + n - 1 of want, in order.
static void check_got(const struct got *g, unsigned from, size_t n)
{
	CHECK_U64(g->n, n);
	for (size_t i = 0; i < n && i < g->n; i++) {
		if (g->first[i] != want[from + i].first || g->last[i] != want[from + i].last ||
		    g->entry[i] != SKP_VA(SKP_VMA(from + i)))
			FAILF("entry %zu: [0x%" PRIx64 ", 0x%" PRIx64 "] 0x%" PRIx64 ", want VMA %zu [0x%" PRIx64
			      ", 0x%" PRIx64 "]", i, g->first[i], g->last[i], g->entry[i], from + i,
			      want[from + i].first, want[from + i].last);
	}
}

TEST(single_leaf_and_two_level_trees_in_index_order)
{
	struct kp_kernel *k = procs(NULL, NULL);
	struct got g = {0};
	if (!k)
		return;
	CHECK_OK(kp_lx_mt_walk(k, TREE(0), 5, collect, &g));
	check_got(&g, 0, 5);
	g.n = 0;
	CHECK_OK(kp_lx_mt_walk(k, TREE(1), 4, collect, &g));
	check_got(&g, 5, 4);
	kp_kernel_destroy(k);
}

// Task 2's leaves under a maple_range_64 root (a tree without gaps),
// under a maple_arange_64 above the original root (three levels), as
// a lone entry and empty.
static void other_roots(uint8_t *m, void *arg)
{
	int which = *(int *)arg;
	uint64_t r = FREE_NODE(0), split = 0x10ffffff;
	if (which == 0) {
		sk_put64(m, r + SKP_R64_PIVOT, split);
		sk_put64(m, r + SKP_R64_PIVOT + 8, MAX);
		sk_put64(m, r + SKP_R64_SLOT, SKP_ENODE(SKP_VA(SKP_NODE(2)), SKP_MAPLE_LEAF_64));
		sk_put64(m, r + SKP_R64_SLOT + 8, SKP_ENODE(SKP_VA(SKP_NODE(3)), SKP_MAPLE_LEAF_64));
		sk_put64(m, ROOT_PA(1), SKP_MAPLE_ROOT(SKP_ENODE(SKP_VA(r), SKP_MAPLE_RANGE_64)));
	} else if (which == 1) {
		sk_put64(m, r + SKP_A64_PIVOT, MAX);
		sk_put64(m, r + SKP_A64_SLOT, SKP_ENODE(SKP_VA(SKP_NODE(1)), SKP_MAPLE_ARANGE_64));
		sk_put64(m, ROOT_PA(1), SKP_MAPLE_ROOT(SKP_ENODE(SKP_VA(r), SKP_MAPLE_ARANGE_64)));
	} else {
		sk_put64(m, ROOT_PA(1), which == 2 ? SKP_VA(SKP_VMA(5)) : 0);
	}
}

TEST(range_64_root_three_levels_lone_entry_and_empty)
{
	for (int which = 0; which < 4; which++) {
		struct kp_kernel *k = procs(other_roots, &which);
		struct got g = {0};
		if (!k)
			return;
		CHECK_OK(kp_lx_mt_walk(k, TREE(1), 4, collect, &g));
		if (which < 2) {
			check_got(&g, 5, 4);
		} else if (which == 2) {
			// A tree of one entry at index 0 holds it in ma_root.
			CHECK_U64(g.n, 1);
			CHECK(g.first[0] == 0 && g.last[0] == 0 && g.entry[0] == SKP_VA(SKP_VMA(5)));
		} else {
			CHECK_U64(g.n, 0);
		}
		kp_kernel_destroy(k);
	}
}

struct corrupt {
	uint64_t pa, value;
};

static void put(uint8_t *m, void *arg)
{
	for (const struct corrupt *c = arg; c->pa; c++)
		sk_put64(m, c->pa, c->value);
}

// kp_lx_mt_walk of mm's tree with the words of c changed: err's code and
// text, after the first n VMAs of the tree (from want[from]).
static void check_corrupt(const struct corrupt *c, int mm, uint64_t max_entries, enum kp_error_code code,
			  const char *text, unsigned from, size_t n)
{
	struct kp_kernel *k = procs(put, (void *)c);
	struct got g = {0};
	if (!k)
		return;
	CHECK_ERR(kp_lx_mt_walk(k, TREE(mm), max_entries, collect, &g), code, text);
	check_got(&g, from, n);
	kp_kernel_destroy(k);
}

TEST(corrupt_nodes_are_errors_after_what_came_before)
{
	uint64_t n0 = SKP_NODE(0), n1 = SKP_NODE(1);
	// Node types that are not a range or a leaf: dense, and beyond arange.
	struct corrupt dense[] = { { ROOT_PA(0), SKP_MAPLE_ROOT(SKP_ENODE(SKP_VA(n0), 0)) }, { 0, 0 } };
	check_corrupt(dense, 0, 5, KP_ERR_FORMAT, "maple tree: node 0xffff888000021000 of type 0 (corrupt?)", 0, 0);
	struct corrupt nine[] = { { n1 + SKP_A64_SLOT + 8, SKP_ENODE(SKP_VA(SKP_NODE(3)), 9) }, { 0, 0 } };
	check_corrupt(nine, 1, 4, KP_ERR_FORMAT, "node 0xffff888000021300 of type 9", 5, 2);
	// A pivot below the slot's first index (the gap after the heap) and
	// one beyond the node's maximum (the last of the first leaf).
	struct corrupt low[] = { { n0 + SKP_R64_PIVOT + 3 * 8, 0x300000 }, { 0, 0 } };
	check_corrupt(low, 0, 5, KP_ERR_FORMAT,
		      "maple tree node 0xffff888000021000: pivot 3 is 0x300000, outside 0x422000-0xffffffffffffffff", 0, 2);
	struct corrupt high[] = { { SKP_NODE(2) + SKP_R64_PIVOT + 4 * 8, 0x20000000 }, { 0, 0 } };
	check_corrupt(high, 1, 4, KP_ERR_FORMAT, "pivot 4 is 0x20000000, outside 0x1004000-0x10ffffff", 5, 2);
	// A child outside memory.
	struct corrupt away[] = { { n1 + SKP_A64_SLOT + 8, SKP_ENODE(SKP_VA(0x100000), SKP_MAPLE_LEAF_64) }, { 0, 0 } };
	check_corrupt(away, 1, 4, KP_ERR_FAULT, "maple tree node 0xffff888000100000", 5, 2);
}

// A chain of n maple_arange_64 nodes, each the only child of the one
// above, over task 1's leaf: n + 1 levels.
static void chain(uint8_t *m, void *arg)
{
	unsigned n = *(unsigned *)arg;
	for (unsigned j = 0; j < n; j++) {
		uint64_t child = j + 1 < n ? SKP_ENODE(SKP_VA(FREE_NODE(j + 1)), SKP_MAPLE_ARANGE_64)
					   : SKP_ENODE(SKP_VA(SKP_NODE(0)), SKP_MAPLE_LEAF_64);
		sk_put64(m, FREE_NODE(j) + SKP_A64_PIVOT, MAX);
		sk_put64(m, FREE_NODE(j) + SKP_A64_SLOT, child);
	}
	sk_put64(m, ROOT_PA(0), SKP_MAPLE_ROOT(SKP_ENODE(SKP_VA(FREE_NODE(0)), SKP_MAPLE_ARANGE_64)));
}

static struct kp_error *walk_chain(unsigned internal, uint64_t max_entries, struct got *g)
{
	struct kp_kernel *k = procs(chain, &internal);
	if (!k)
		return kp_error_create(KP_ERR_INVALID, "no kernel");
	struct kp_error *err = kp_lx_mt_walk(k, TREE(0), max_entries, collect, g);
	kp_kernel_destroy(k);
	return err;
}

TEST(height_and_node_count_are_bounded)
{
	// MAPLE_HEIGHT_MAX is 31 levels, the leaves included.
	struct got g = {0};
	CHECK_OK(walk_chain(30, 1000, &g));
	check_got(&g, 0, 5);
	g.n = 0;
	CHECK_ERR(walk_chain(31, 1000, &g), KP_ERR_LOOP, "maple tree: deeper than 31");
	CHECK_U64(g.n, 0);
	// Nodes: at most 2 * max_entries + 16.
	CHECK_OK(walk_chain(15, 0, &g));
	CHECK_ERR(walk_chain(16, 0, &g), KP_ERR_LOOP, "or more than 16 nodes (corrupt?) at node 0xffff888000021000");
	// A node that is its own child: the height bound ends it.
	struct corrupt cycle[] = { { SKP_NODE(1) + SKP_A64_SLOT, SKP_ENODE(SKP_VA(SKP_NODE(1)), SKP_MAPLE_ARANGE_64) },
				   { 0, 0 } };
	check_corrupt(cycle, 1, 1000, KP_ERR_LOOP, "deeper than 31 or more than 2016 nodes (corrupt?) at node 0xffff888000021100", 5, 0);
}

// ---------------------------------------------------------------- kp_vma_iter

// What /proc/PID/maps shows for want[i].
static const struct {
	const char *perms;
	uint64_t offset;
	uint32_t major, minor;
	uint64_t inode;
	const char *path;
} maps[9] = {
	{ "r-xp", 0, 254, 1, 131074, "/bin/sh" }, { "rw-p", 0, 0, 0, 0, "[heap]" },
	{ "r-xp", 0, 0, 0, 0, "[vdso]" }, { "rw-p", 0, 0, 0, 0, "" }, { "rw-p", 0, 0, 0, 0, "[stack]" },
	{ "r--p", 0, 0, 0, 0, "" }, { "rw-p", 0, 0, 0, 0, "" }, { "rw-s", 0, 0, 0, 0, "" },
	{ "rw-p", 0, 0, 0, 0, "[stack]" },
};

// The VMAs of task must be those of want/maps listed in which (n of
// them, in order); returns the walk's last word, and its status in st.
static struct kp_error *check_maps(struct kp_kernel *k, uint64_t task, const unsigned *which, size_t n,
				   struct kp_walk_status *st)
{
	struct kp_vma_iter *it;
	const struct kp_vma *v;
	struct kp_error *err = kp_vma_iter_create(k, task, &it);
	if (err)
		return err;
	size_t i = 0;
	while (!(err = kp_vma_iter_next(it, &v)) && v) {
		if (i++ >= n) {
			FAILF("VMA %zu (0x%" PRIx64 "-0x%" PRIx64 ") beyond the %zu expected", i - 1, v->start, v->end, n);
			continue;
		}
		unsigned w = which[i - 1];
		if (v->start != want[w].first || v->end != want[w].last + 1 || strcmp(v->perms, maps[w].perms) ||
		    v->offset != maps[w].offset || v->dev_major != maps[w].major || v->dev_minor != maps[w].minor ||
		    v->inode != maps[w].inode || strcmp(v->path, maps[w].path) || v->address != SKP_VA(SKP_VMA(w)))
			FAILF("VMA %zu: %" PRIx64 "-%" PRIx64 " %s %08" PRIx64 " %02x:%02x %" PRIu64 " \"%s\", want VMA %u",
			      i - 1, v->start, v->end, v->perms, v->offset, v->dev_major, v->dev_minor, v->inode,
			      v->path, w);
	}
	CHECK_U64(i, n);
	kp_vma_iter_status(it, st);
	kp_vma_iter_destroy(it);
	return err;
}

static const unsigned task1[] = { 0, 1, 2, 3, 4 }, task2[] = { 5, 6, 7, 8 };

TEST(vmas_as_proc_pid_maps_shows_them)
{
	struct kp_kernel *k = procs(NULL, NULL);
	KP_INIT(kp_walk_status, st);
	if (!k)
		return;
	CHECK_OK(check_maps(k, TASK(1), task1, 5, &st));
	CHECK(st.end == KP_WALK_COMPLETE && st.left_out == 0);
	CHECK_OK(check_maps(k, TASK(2), task2, 4, &st));
	CHECK(st.end == KP_WALK_COMPLETE);
	struct kp_vma_iter *it = NULL;
	CHECK_ERR(kp_vma_iter_create(k, TASK(3), &it), KP_ERR_INVALID, "is a kernel thread");
	CHECK(it == NULL);
	kp_kernel_destroy(k);
}

static void mm_gone(uint8_t *m, void *arg)
{
	(void)arg;
	sk_put64(m, sk_task_pa(&base, 2) + SKP_T_MM, 0);	// exit_mm()
}

// A task that exited has no VMA and no error: /proc/PID/maps reads empty.
TEST(vmas_of_an_exited_task_none)
{
	struct kp_kernel *k = procs(mm_gone, NULL);
	KP_INIT(kp_walk_status, st);
	if (!k)
		return;
	CHECK_OK(check_maps(k, TASK(2), NULL, 0, &st));
	CHECK(st.end == KP_WALK_COMPLETE && st.left_out == 0);
	kp_kernel_destroy(k);
}

TEST(vmas_beyond_map_count_unreadable_and_corrupt)
{
	KP_INIT(kp_walk_status, st);
	// map_count 3 under five VMAs: the first three, then the error.
	struct corrupt fewer[] = { { SKP_MM(0) + SKP_MM_MAP_COUNT, 3 }, { 0, 0 } };
	struct kp_kernel *k = procs(put, fewer);
	if (!k)
		return;
	CHECK_ERR(check_maps(k, TASK(1), task1, 3, &st), KP_ERR_LOOP,
		  "mm_struct 0xffff888000020000: more VMAs than its map_count 3 (corrupt?)");
	CHECK(st.end == KP_WALK_STOPPED);
	kp_kernel_destroy(k);
	// A map_count no process can have.
	struct corrupt huge[] = { { SKP_MM(0) + SKP_MM_MAP_COUNT, 0x7fffffff }, { 0, 0 } };
	if (!(k = procs(put, huge)))
		return;
	struct kp_vma_iter *it = NULL;
	CHECK_ERR(kp_vma_iter_create(k, TASK(1), &it), KP_ERR_FORMAT, "map_count 2147483647 (corrupt?)");
	kp_kernel_destroy(k);
	// task 2's third VMA is not in the dump: left out, the rest shown.
	struct corrupt gone[] = { { SKP_NODE(3) + SKP_R64_SLOT, SKP_VA(0x100000) }, { 0, 0 } };
	if (!(k = procs(put, gone)))
		return;
	static const unsigned shown[] = { 5, 6, 8 };
	CHECK_ERR(check_maps(k, TASK(2), shown, 3, &st), KP_ERR_FAULT, "reading vm_area_struct at 0xffff888000100000");
	CHECK(st.end == KP_WALK_STOPPED && st.left_out == 1);
	kp_kernel_destroy(k);
}

// The text mapping's file at page 3 of /tmp/old, unlinked while mapped.
static void deleted(uint8_t *m, void *arg)
{
	(void)arg;
	sk_put64(m, SKP_VMA(0) + SKP_VMA_FILE, SKP_VA(SKP_FILE(SKP_F_OLD)));
	sk_put64(m, SKP_VMA(0) + SKP_VMA_PGOFF, 3);
}

TEST(vma_of_an_unlinked_file_at_an_offset)
{
	struct kp_kernel *k = procs(deleted, NULL);
	struct kp_vma_iter *it;
	const struct kp_vma *v = NULL;
	if (!k)
		return;
	CHECK_OK(kp_vma_iter_create(k, TASK(1), &it));
	CHECK_OK(kp_vma_iter_next(it, &v));
	if (v) {
		CHECK_STR(v->path, "/tmp/old (deleted)");
		CHECK_U64(v->offset, 0x3000);
		CHECK(v->dev_major == 0 && v->dev_minor == 23 && v->inode == 4322);
		CHECK_U64(v->file, SKP_VA(SKP_FILE(SKP_F_OLD)));
	}
	kp_vma_iter_destroy(it);
	kp_kernel_destroy(k);
}

int main(void)
{
	RUN(single_leaf_and_two_level_trees_in_index_order);
	RUN(range_64_root_three_levels_lone_entry_and_empty);
	RUN(corrupt_nodes_are_errors_after_what_came_before);
	RUN(height_and_node_count_are_bounded);
	RUN(vmas_as_proc_pid_maps_shows_them);
	RUN(vmas_of_an_exited_task_none);
	RUN(vmas_beyond_map_count_unreadable_and_corrupt);
	RUN(vma_of_an_unlinked_file_at_an_offset);
	return TEST_SUMMARY();
}
