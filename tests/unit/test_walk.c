// SPDX-License-Identifier: MIT
// How walks end (src/linux/lib/walk.h, list.c, the task iterator): a page
// missing at the head, in the middle and at the end of a list; a corrupt
// link; and, on a kernel marked live, lists that change between the reads
// of a pass (a node removed, a node inserted, the head moved, a list that
// never stops changing).
#include <stdlib.h>

#include "test.h"
#include "arch/arch.h"
#include "core/kernel.h"
#include "io/memory.h"
#include "linux/lib/list.h"
#include "linux/lib/walk.h"
#include "symbols/symtab.h"

#define BASE 0xffff888000200000ULL
#define MEMSIZE 0x10000
#define NODE(i) (BASE + 0x100ULL * (i))	// node i; NODE(0) is the head
#define LIST_POISON2 0xdead000000000122ULL	// list_del()'s prev (x86-64)

static uint8_t mem[MEMSIZE];

// The memory of the tests' kernel: a hole (addresses that fault, a page a
// dump lacks) and a mutation run once, before the read number mutate_at.
static struct {
	uint64_t hole_start, hole_end;
	unsigned reads, mutate_at, mutate_every;
	void (*mutate)(void);
} m;

static void w64(uint64_t addr, uint64_t v) { memcpy(mem + (addr - BASE), &v, 8); }

static struct kp_error *read_mem(void *buf, uint64_t address, size_t count, uint64_t offset,
				 void *arg)
{
	(void)arg;
	m.reads++;
	if (m.mutate && ((m.mutate_at && m.reads == m.mutate_at) ||
			 (m.mutate_every && m.reads % m.mutate_every == 0)))
		m.mutate();
	if (address < m.hole_end && address + count > m.hole_start)
		return kp_error_create(KP_ERR_FAULT, "address 0x%llx is not in the dump",
				       (unsigned long long)(address < m.hole_start ? m.hole_start : address));
	memcpy(buf, mem + offset, count);
	return NULL;
}

static struct kp_kernel *kernel(bool live)
{
	struct kp_memory *mm;
	struct kp_symtab *st;
	struct kp_kernel *k;
	if (kp_memory_create(&mm) || kp_memory_add(mm, KP_VIRT, BASE, MEMSIZE, read_mem, NULL, 0) ||
	    kp_symtab_create(&st) || kp_kernel_from_parts(mm, st, &kp_arch_x86_64, NULL, &k))
		abort();
	kp_kernel_set_live(k, live);
	return k;
}

// A circular list of head NODE(0) and nodes NODE(1)..NODE(n).
static void build(int n)
{
	memset(mem, 0, sizeof(mem));
	memset(&m, 0, sizeof(m));
	for (int i = 0; i <= n; i++) {
		w64(NODE(i), NODE(i == n ? 0 : i + 1));
		w64(NODE(i) + 8, NODE(i == 0 ? n : i - 1));
	}
}

// Every node of a walk (up to 64) and its last word.
struct walk {
	int n;
	uint64_t nodes[64];
	struct kp_error *err;
	struct kp_walk_status st;
};

static struct walk walk_limit(struct kp_kernel *k, uint64_t limit)
{
	struct walk w = { .st = { .sz = sizeof(w.st) } };
	struct kp_list_iter *it;
	if ((w.err = kp_list_iter_create(k, NODE(0), 0, &it)))
		return w;
	if (limit)
		kp_list_iter_set_limit(it, limit);
	for (int calls = 0; calls < 200; calls++) {
		uint64_t node;
		bool done;
		if ((w.err = kp_list_iter_next(it, &node, &done)) || done)
			break;
		if (w.n < 64)
			w.nodes[w.n++] = node;
	}
	// Done means done: the error was the walk's last word.
	uint64_t node;
	bool done = false;
	struct kp_error *again = kp_list_iter_next(it, &node, &done);
	CHECK(!again && done);
	kp_error_destroy(again);
	kp_list_iter_status(it, &w.st);
	kp_list_iter_destroy(it);
	return w;
}

static struct walk walk(struct kp_kernel *k)
{
	return walk_limit(k, 0);
}

static void check_nodes(const struct walk *w, const int *want, int n)
{
	CHECK_U64(w->n, n);
	for (int i = 0; i < n && i < w->n; i++)
		CHECK_U64(w->nodes[i], NODE(want[i]));
}

// The caller's limit ends the walk as such (at_limit); a corrupt list's
// error is the list's fault.
TEST(the_callers_limit_is_not_the_lists_fault)
{
	build(5);
	struct kp_kernel *k = kernel(false);
	struct walk w = walk_limit(k, 3);
	static const int want[] = { 1, 2, 3 };
	check_nodes(&w, want, 3);
	CHECK_ERR(w.err, KP_ERR_LOOP, "does not end after 3 entries");
	CHECK(w.st.end == KP_WALK_STOPPED && w.st.at_limit);
	// Node 5 leads back to node 1: a cycle that never returns to its head.
	w64(NODE(5), NODE(1));
	w = walk_limit(k, 64);
	CHECK_ERR(w.err, KP_ERR_FORMAT, "is corrupt");
	CHECK(w.st.end == KP_WALK_STOPPED && !w.st.at_limit);
	kp_kernel_destroy(k);
}

TEST(dump_missing_page_at_the_head)
{
	build(5);
	struct kp_kernel *k = kernel(false);
	m.hole_start = NODE(0);
	m.hole_end = NODE(0) + 0x100;
	struct walk w = walk(k);
	CHECK_ERR(w.err, KP_ERR_FAULT, "list head at 0xffff888000200000");
	CHECK_U64(w.n, 0);
	CHECK(w.st.end == KP_WALK_STOPPED);
	kp_kernel_destroy(k);
}

TEST(dump_missing_page_in_the_middle)
{
	build(5);
	struct kp_kernel *k = kernel(false);
	m.hole_start = NODE(3);
	m.hole_end = NODE(3) + 0x100;
	struct walk w = walk(k);
	// The nodes before the gap, then those behind it read backwards from
	// the head, in list order; the fault names the missing node.
	static const int want[] = { 1, 2, 4, 5 };
	check_nodes(&w, want, 4);
	CHECK_ERR(w.err, KP_ERR_FAULT, "node at 0xffff888000200300 (after 0xffff888000200200)");
	CHECK(w.st.end == KP_WALK_STOPPED);
	kp_kernel_destroy(k);
}

TEST(dump_missing_page_at_the_end)
{
	build(5);
	struct kp_kernel *k = kernel(false);
	m.hole_start = NODE(5);
	m.hole_end = NODE(5) + 0x100;
	struct walk w = walk(k);
	static const int want[] = { 1, 2, 3, 4 };
	check_nodes(&w, want, 4);
	CHECK_ERR(w.err, KP_ERR_FAULT, "node at 0xffff888000200500");
	kp_kernel_destroy(k);
}

TEST(dump_corrupt_link_is_an_error_after_the_nodes_before_it)
{
	build(5);
	struct kp_kernel *k = kernel(false);
	w64(NODE(3) + 8, NODE(1));	// node 3's prev skips node 2
	struct walk w = walk(k);
	static const int want[] = { 1, 2 };
	check_nodes(&w, want, 2);
	CHECK_ERR(w.err, KP_ERR_FORMAT, "is corrupt: 0xffff888000200200 points to 0xffff888000200300");
	// A closed ring that never returns to the head.
	build(5);
	w64(NODE(5), NODE(2));
	w64(NODE(2) + 8, NODE(5));
	w = walk(k);
	CHECK(w.err && (w.err->code == KP_ERR_FORMAT || w.err->code == KP_ERR_LOOP));
	kp_error_destroy(w.err);
	kp_kernel_destroy(k);
}

// A live kernel: node 3 is removed (list_del) after the pass read node 2.
static void remove_node3(void)
{
	w64(NODE(2), NODE(4));
	w64(NODE(4) + 8, NODE(2));
	w64(NODE(3) + 8, LIST_POISON2);
}

TEST(live_node_removed_under_the_pass)
{
	build(5);
	struct kp_kernel *k = kernel(true);
	m.mutate = remove_node3;
	m.mutate_at = 4;	// head, 1, 2 read; then 3 is removed
	struct walk w = walk(k);
	static const int want[] = { 1, 2, 4, 5 };
	CHECK_OK(w.err);
	check_nodes(&w, want, 4);
	CHECK(w.st.end == KP_WALK_COMPLETE);
	CHECK_U64(w.st.restarts, 1);
	kp_kernel_destroy(k);
	// In a dump the same memory is corrupt: node 3's prev is poison.
	build(5);
	remove_node3();
	w64(NODE(2), NODE(3));	// node 2 still points at it
	k = kernel(false);
	w = walk(k);
	CHECK_ERR(w.err, KP_ERR_FORMAT, "prev pointer is 0xdead000000000122");
	kp_kernel_destroy(k);
}

// A live kernel: a node added at the tail (fork: list_add_tail_rcu) while
// the pass is in the middle.
static void add_node6(void)
{
	w64(NODE(6), NODE(0));
	w64(NODE(6) + 8, NODE(5));
	w64(NODE(5), NODE(6));
	w64(NODE(0) + 8, NODE(6));
}

TEST(live_node_inserted_under_the_pass)
{
	build(5);
	struct kp_kernel *k = kernel(true);
	m.mutate = add_node6;
	m.mutate_at = 3;
	struct walk w = walk(k);
	static const int want[] = { 1, 2, 3, 4, 5, 6 };
	CHECK_OK(w.err);
	check_nodes(&w, want, 6);
	CHECK(w.st.end == KP_WALK_COMPLETE);
	kp_kernel_destroy(k);
}

// The head's first node replaced while the pass runs.
static void move_head(void)
{
	w64(NODE(7), NODE(2));
	w64(NODE(7) + 8, NODE(0));
	w64(NODE(0), NODE(7));
	w64(NODE(2) + 8, NODE(7));
	w64(NODE(1) + 8, LIST_POISON2);
}

TEST(live_head_moved_under_the_pass)
{
	build(5);
	struct kp_kernel *k = kernel(true);
	m.mutate = move_head;
	m.mutate_at = 3;
	struct walk w = walk(k);
	static const int want[] = { 7, 2, 3, 4, 5 };
	CHECK_OK(w.err);
	check_nodes(&w, want, 5);
	CHECK(w.st.end == KP_WALK_COMPLETE);
	CHECK(w.st.restarts >= 1);
	kp_kernel_destroy(k);
}

// A list that changes under every pass (a node added at the tail every
// third read, as forks do): the answer is the last pass, marked, not an
// error.
static int tail = 5;
static void churn(void)
{
	int n = ++tail;
	w64(NODE(n), NODE(0));
	w64(NODE(n) + 8, NODE(n - 1));
	w64(NODE(n - 1), NODE(n));
	w64(NODE(0) + 8, NODE(n));
}

TEST(live_list_that_never_stops_changing)
{
	build(5);
	struct kp_kernel *k = kernel(true);
	m.mutate = churn;
	m.mutate_every = 3;
	struct walk w = walk(k);
	CHECK_OK(w.err);
	CHECK(w.n >= 5);
	CHECK(w.st.end == KP_WALK_LIVE_CHANGED);
	CHECK_U64(w.st.restarts, KP_WALK_LIVE_PASSES - 1);
	CHECK(tail < 0x100);	// the nodes stayed in the test's memory
	kp_kernel_destroy(k);
}

// A live list whose head cannot be read is an error, after every pass.
TEST(live_unreadable_head_is_an_error)
{
	build(3);
	struct kp_kernel *k = kernel(true);
	m.hole_start = NODE(0);
	m.hole_end = NODE(0) + 8;
	struct walk w = walk(k);
	CHECK_ERR(w.err, KP_ERR_FAULT, "list head");
	CHECK(w.st.end == KP_WALK_STOPPED);
	kp_kernel_destroy(k);
}

// A value a live kernel writes while it is read (watch): never half old,
// half new: read until two reads agree, an error if they never do.
static int bumps;
static void bump(void)
{
	if (bumps-- > 0)
		w64(NODE(1), 0x1111111100000000ULL + (uint64_t)bumps);
}

TEST(live_value_is_read_whole)
{
	build(1);
	struct kp_kernel *k = kernel(true);
	uint64_t v = 0;
	m.mutate = bump;
	m.mutate_every = 1;
	bumps = 3;	// changes under the first three reads, then holds
	CHECK_OK(kp_kernel_read_whole(k, NODE(1), &v, 8));
	CHECK_U64(v, 0x1111111100000000ULL);
	bumps = 1000;	// never holds still
	CHECK_ERR(kp_kernel_read_whole(k, NODE(1), &v, 8), KP_ERR_UNSUPPORTED, "cannot be read whole");
	kp_kernel_destroy(k);
	// A dump's is read once.
	build(1);
	k = kernel(false);
	m.mutate = bump;
	m.mutate_every = 1;
	bumps = 1000;
	CHECK_OK(kp_kernel_read_whole(k, NODE(1), &v, 8));
	CHECK_U64(m.reads, 1);
	kp_kernel_destroy(k);
}

// An object yielded with a part unread (kp_lx_walk_partial) is counted and
// its error returned at the end, unless an error ended the walk: that one
// is returned (it says where the walk stopped), and the end says which.
TEST(partial_objects_and_the_error_that_ends_the_walk)
{
	struct kp_kernel *k = kernel(false);
	struct kp_lx_walk w;
	struct kp_walk_status st = { .sz = sizeof(st) };
	kp_lx_walk_init(&w, k);
	kp_lx_walk_partial(&w, kp_error_create(KP_ERR_FAULT, "name of task 1"));
	kp_lx_walk_partial(&w, kp_error_create(KP_ERR_FAULT, "name of task 2"));
	kp_lx_walk_status(&w, &st);
	CHECK(st.end == KP_WALK_COMPLETE);
	CHECK_U64(st.partial, 2);
	struct kp_error *err = kp_lx_walk_finish(&w);
	CHECK_STR(err ? kp_error_message(err) : "(none)", "name of task 1");
	kp_error_destroy(err);
	kp_lx_walk_deinit(&w);

	kp_lx_walk_init(&w, k);
	kp_lx_walk_partial(&w, kp_error_create(KP_ERR_FAULT, "name of task 1"));
	kp_lx_walk_stop(&w, kp_error_create(KP_ERR_FAULT, "the list's next node"));
	kp_lx_walk_partial(&w, kp_error_create(KP_ERR_FAULT, "name of task 3"));
	kp_lx_walk_status(&w, &st);
	CHECK(st.end == KP_WALK_STOPPED);
	CHECK_U64(st.partial, 2);
	CHECK_U64(st.left_out, 0);
	err = kp_lx_walk_finish(&w);
	CHECK_STR(err ? kp_error_message(err) : "(none)", "the list's next node");
	kp_error_destroy(err);
	CHECK(kp_lx_walk_finish(&w) == NULL);	// returned once
	kp_lx_walk_deinit(&w);

	// Live, an object that could not be read went away under the walk,
	// unless the kernel lacks what reading it needs (a symbol): that is
	// left out and returned at the end, as in a dump.
	kp_kernel_destroy(k);
	k = kernel(true);
	kp_lx_walk_init(&w, k);
	CHECK(kp_lx_walk_unreadable(&w, kp_error_create(KP_ERR_FAULT, "task 7 went away")) == NULL);
	CHECK(kp_lx_walk_unreadable(&w, kp_error_create(KP_ERR_NOT_FOUND, "unknown symbol 'runqueues'")) ==
	      NULL);
	kp_lx_walk_status(&w, &st);
	CHECK_U64(st.left_out, 1);
	err = kp_lx_walk_finish(&w);
	CHECK_STR(err ? kp_error_message(err) : "(none)", "unknown symbol 'runqueues'");
	kp_error_destroy(err);
	kp_lx_walk_deinit(&w);

	// Nothing returned: deinit frees what is kept (ASan's leak check).
	kp_lx_walk_init(&w, k);
	kp_lx_walk_partial(&w, kp_error_create(KP_ERR_FAULT, "kept"));
	kp_lx_walk_stop(&w, kp_error_create(KP_ERR_FAULT, "kept too"));
	kp_lx_walk_deinit(&w);
	kp_kernel_destroy(k);
}

int main(void)
{
	RUN(partial_objects_and_the_error_that_ends_the_walk);
	RUN(the_callers_limit_is_not_the_lists_fault);
	RUN(dump_missing_page_at_the_head);
	RUN(dump_missing_page_in_the_middle);
	RUN(dump_missing_page_at_the_end);
	RUN(dump_corrupt_link_is_an_error_after_the_nodes_before_it);
	RUN(live_node_removed_under_the_pass);
	RUN(live_node_inserted_under_the_pass);
	RUN(live_head_moved_under_the_pass);
	RUN(live_list_that_never_stops_changing);
	RUN(live_unreadable_head_is_an_error);
	RUN(live_value_is_read_whole);
	return TEST_SUMMARY();
}
