// SPDX-License-Identifier: MIT
// The rbtree walker (linux/lib/rbtree.c), the mounts of a namespace
// (linux/fs/mount.c: its list up to 6.7, its rbtree since 6.8) and a
// process's fd table (linux/fs/files.c), on the synthetic kernel's
// processes (tests/gen/synthprocs.h) and on trees the tests build in its
// free RAM.
#include <stdlib.h>

#include "test.h"
#include "synthkernel.h"
#include "synthprocs.h"
#include "linux/lib/rbtree.h"

typedef void edit_fn(uint8_t *m, void *arg);

#define TASK(i) sk_task_va(&(struct sk_opts){ .procs = SK_PROCS_LIST }, i)
#define RB_NODE(i) (SKP_FREE + 0x20 * (uint64_t)(i))	// rb_nodes of the tests' trees
#define RB_ROOT (SKP_FREE - 8 + 0x2000)			// their rb_root

#define UNMAPPED_DENTRY UINT64_C(0xffffc90000400000)	// vmalloc space, no page table

static struct kp_kernel *procs(enum sk_procs form, edit_fn *edit, void *arg)
{
	struct sk_opts o = { .format = SK_ELF, .ntasks = 3, .procs = form, .edit = edit, .edit_arg = arg };
	struct kp_kernel *k = NULL;
	CHECK_OK(sk_open(&o, &k));
	return k;
}

struct corrupt {
	uint64_t pa, value;
};

// Writes the words of arg (ended by pa 0).
static void put(uint8_t *m, void *arg)
{
	for (const struct corrupt *c = arg; c->pa; c++)
		sk_put64(m, c->pa, c->value);
}

// ---------------------------------------------------------------- rbtree

struct nodes {
	uint64_t at[128];
	size_t n;
};

static struct kp_error *collect(uint64_t node, void *arg)
{
	struct nodes *g = arg;
	if (g->n < 128)
		g->at[g->n] = node;
	g->n++;
	return NULL;
}

// Nodes lo..hi as a balanced tree: the root's index.
static int balanced(uint8_t *m, int lo, int hi)
{
	if (lo > hi)
		return -1;
	int mid = (lo + hi) / 2, l = balanced(m, lo, mid - 1), r = balanced(m, mid + 1, hi);
	sk_put64(m, RB_NODE(mid) + SKP_RB_LEFT, l < 0 ? 0 : SKP_VA(RB_NODE(l)));
	sk_put64(m, RB_NODE(mid) + SKP_RB_RIGHT, r < 0 ? 0 : SKP_VA(RB_NODE(r)));
	return mid;
}

enum shape { BALANCED_15, LEFT_CHAIN_64, LEFT_CHAIN_65, RIGHT_CHAIN_100, EMPTY };

static void tree(uint8_t *m, void *arg)
{
	enum shape s = *(enum shape *)arg;
	int n = s == LEFT_CHAIN_64 ? 64 : s == LEFT_CHAIN_65 ? 65 : 100;
	if (s == BALANCED_15) {
		sk_put64(m, RB_ROOT, SKP_VA(RB_NODE(balanced(m, 0, 14))));
		return;
	}
	if (s == EMPTY)
		return;
	// A left chain has its smallest node last; a right chain first.
	for (int i = 0; i < n; i++) {
		uint64_t next = i + 1 < n ? SKP_VA(RB_NODE(i + 1)) : 0;
		sk_put64(m, RB_NODE(i) + (s == RIGHT_CHAIN_100 ? SKP_RB_RIGHT : SKP_RB_LEFT), next);
	}
	sk_put64(m, RB_ROOT, SKP_VA(RB_NODE(0)));
}

static struct kp_error *walk(enum shape s, uint64_t max, struct nodes *g)
{
	struct kp_kernel *k = procs(SK_PROCS_RBTREE, tree, &s);
	if (!k)
		return kp_error_create(KP_ERR_INVALID, "no kernel");
	g->n = 0;
	struct kp_error *err = kp_lx_rb_walk(k, SKP_VA(RB_ROOT), max, collect, g);
	kp_kernel_destroy(k);
	return err;
}

TEST(rbtree_in_order_empty_and_deep)
{
	struct nodes g;
	CHECK_OK(walk(BALANCED_15, 15, &g));
	CHECK_U64(g.n, 15);
	for (size_t i = 0; i < 15 && i < g.n; i++)
		CHECK_U64(g.at[i], SKP_VA(RB_NODE(i)));
	CHECK_OK(walk(EMPTY, 15, &g));
	CHECK_U64(g.n, 0);
	// 64 levels down the left: the deepest node first.
	CHECK_OK(walk(LEFT_CHAIN_64, 64, &g));
	CHECK_U64(g.n, 64);
	CHECK_U64(g.at[0], SKP_VA(RB_NODE(63)));
	CHECK_U64(g.at[63], SKP_VA(RB_NODE(0)));
	CHECK_ERR(walk(LEFT_CHAIN_65, 1000, &g), KP_ERR_FORMAT, "deeper than 64 at node 0xffff888000032800 (corrupt?)");
	CHECK_U64(g.n, 0);
	// Right children do not stack up: only the count bounds them.
	CHECK_OK(walk(RIGHT_CHAIN_100, 100, &g));
	CHECK_U64(g.n, 100);
	CHECK_ERR(walk(RIGHT_CHAIN_100, 99, &g), KP_ERR_LOOP, "more than 99 nodes (corrupt?)");
	CHECK_U64(g.n, 99);
}

// The namespace's tree with its last node's right child pointing back at
// the root, and with a left child outside memory.
TEST(rbtree_cycle_and_fault)
{
	uint64_t node3 = SKP_MOUNT(3) + SKP_MOUNT_NODE;
	struct corrupt cycle[] = { { node3 + SKP_RB_RIGHT, SKP_VA(SKP_MOUNT(1)) + SKP_MOUNT_NODE }, { 0, 0 } };
	struct kp_kernel *k = procs(SK_PROCS_RBTREE, put, cycle);
	struct nodes g = {0};
	if (!k)
		return;
	CHECK_ERR(kp_lx_rb_walk(k, SKP_VA(SKP_MNT_NS), 5, collect, &g), KP_ERR_LOOP,
		  "rb_root at 0xffff888000020d20: more than 5 nodes (corrupt?)");
	CHECK_U64(g.n, 5);
	kp_kernel_destroy(k);
	struct corrupt away[] = { { SKP_MOUNT(2) + SKP_MOUNT_NODE + SKP_RB_LEFT, SKP_VA(0x100000) }, { 0, 0 } };
	if (!(k = procs(SK_PROCS_RBTREE, put, away)))
		return;
	g.n = 0;
	CHECK_ERR(kp_lx_rb_walk(k, SKP_VA(SKP_MNT_NS), 5, collect, &g), KP_ERR_FAULT, "rb_node at 0xffff888000100000");
	CHECK_U64(g.n, 2);	// the two before it in order
	kp_kernel_destroy(k);
}

// ---------------------------------------------------------------- mounts

static const struct {
	int32_t id, parent;
	uint32_t major, minor;
	const char *point, *options, *propagation, *fstype, *source, *super;
} mountinfo[4] = {
	{ 21, 21, 254, 1, "/", "rw,relatime", "", "ext4", "/dev/vda1", "rw,lazytime" },
	{ 22, 21, 0, 22, "/proc", "rw,nosuid,nodev,noexec,relatime", "", "proc", "proc", "rw" },
	{ 23, 21, 0, 23, "/tmp", "rw,nodev,noexec", "shared:1", "tmpfs", "tmpfs", "rw" },
	{ 24, 21, 0, 23, "/mnt", "rw,relatime", "master:1", "tmpfs", "tmpfs", "rw" },
};

// The mounts the iterator gives must be mountinfo[which[0..n)] (with
// mount_point point0 for the first when not NULL); returns its last word.
static struct kp_error *check_mounts(struct kp_kernel *k, uint64_t task, const int *which, size_t n,
				     const char *point0, struct kp_walk_status *st)
{
	struct kp_mount_iter *it;
	const struct kp_mount *m;
	struct kp_error *err = kp_mount_iter_create(k, task, &it);
	if (err)
		return err;
	size_t i = 0;
	while (!(err = kp_mount_iter_next(it, &m)) && m) {
		if (i++ >= n) {
			FAILF("mount %zu (id %d) beyond the %zu expected", i - 1, m->id, n);
			continue;
		}
		int w = which[i - 1];
		const char *point = i == 1 && point0 ? point0 : mountinfo[w].point;
		if (m->id != mountinfo[w].id || m->parent_id != mountinfo[w].parent ||
		    m->dev_major != mountinfo[w].major || m->dev_minor != mountinfo[w].minor ||
		    strcmp(m->root, "/") || strcmp(m->mount_point, point) || strcmp(m->options, mountinfo[w].options) ||
		    strcmp(m->propagation, mountinfo[w].propagation) || strcmp(m->fstype, mountinfo[w].fstype) ||
		    strcmp(m->source, mountinfo[w].source) || strcmp(m->super_options, mountinfo[w].super) ||
		    m->address != SKP_VA(SKP_MOUNT(w)))
			FAILF("mount %zu: %d %d %u:%u %s %s %s %s - %s %s %s, want mount %d", i - 1, m->id, m->parent_id,
			      m->dev_major, m->dev_minor, m->root, m->mount_point, m->options, m->propagation,
			      m->fstype, m->source, m->super_options, w);
	}
	CHECK_U64(i, n);
	kp_mount_iter_status(it, st);
	kp_mount_iter_destroy(it);
	return err;
}

static const int all_mounts[] = { 0, 1, 2, 3 };

TEST(mounts_on_the_list_and_in_the_rbtree)
{
	KP_INIT(kp_walk_status, st);
	for (enum sk_procs form = SK_PROCS_LIST; form <= SK_PROCS_RBTREE; form++) {
		struct kp_kernel *k = procs(form, NULL, NULL);
		if (!k)
			return;
		CHECK_OK(check_mounts(k, 0, all_mounts, 4, NULL, &st));
		CHECK(st.end == KP_WALK_COMPLETE);
		CHECK_OK(check_mounts(k, TASK(2), all_mounts, 4, NULL, &st));
		kp_kernel_destroy(k);
	}
}

// Every task's root is /tmp: only that mount is under it, at "/".
static void chroot_tmp(uint8_t *m, void *arg)
{
	(void)arg;
	sk_put64(m, SKP_FS + 8, SKP_VA(SKP_MOUNT(SKP_M_TMP)) + SKP_MOUNT_MNT);
	sk_put64(m, SKP_FS + 16, SKP_VA(SKP_DENTRY(SKP_D_TMPROOT)));
}

TEST(mounts_outside_the_root_are_left_out)
{
	KP_INIT(kp_walk_status, st);
	struct kp_kernel *k = procs(SK_PROCS_LIST, chroot_tmp, NULL);
	static const int tmp[] = { 2 };
	if (!k)
		return;
	CHECK_OK(check_mounts(k, TASK(1), tmp, 1, "/", &st));
	CHECK(st.end == KP_WALK_COMPLETE && st.left_out == 0);
	kp_kernel_destroy(k);
}

TEST(corrupt_mount_namespaces)
{
	KP_INIT(kp_walk_status, st);
	// A count below the mounts: an error once beyond it, after the mounts
	// before it (in order).
	struct corrupt fewer[] = { { SKP_MNT_NS + SKP_NS_COUNT_LIST, 1 }, { 0, 0 } };
	struct kp_kernel *k = procs(SK_PROCS_LIST, put, fewer);
	if (!k)
		return;
	struct kp_mount_iter *it;
	const struct kp_mount *m;
	size_t n = 0;
	CHECK_OK(kp_mount_iter_create(k, 0, &it));
	struct kp_error *err;
	while (!(err = kp_mount_iter_next(it, &m)) && m)
		CHECK_U64(m->id, mountinfo[n++].id);
	CHECK_ERR(err, KP_ERR_LOOP, "mnt_namespace 0xffff888000020d20: more mounts than its count 1 (corrupt?)");
	CHECK(n >= 1 && n < 4);
	kp_mount_iter_destroy(it);
	kp_kernel_destroy(k);
	// A list that does not come back: the list walker's error.
	struct corrupt loop[] = { { SKP_MOUNT(3) + SKP_MOUNT_LIST, SKP_VA(SKP_MOUNT(1)) + SKP_MOUNT_LIST }, { 0, 0 } };
	if (!(k = procs(SK_PROCS_LIST, put, loop)))
		return;
	CHECK_ERR(check_mounts(k, 0, all_mounts, 4, NULL, &st), KP_ERR_FORMAT, "mount list is corrupt");
	CHECK(st.end == KP_WALK_STOPPED);
	kp_kernel_destroy(k);
	// /proc's super block is not in the dump: left out, the others shown.
	struct corrupt nosb[] = { { SKP_MOUNT(1) + SKP_MOUNT_MNT + 8, SKP_VA(0x100000) }, { 0, 0 } };
	if (!(k = procs(SK_PROCS_RBTREE, put, nosb)))
		return;
	static const int shown[] = { 0, 2, 3 };
	CHECK_ERR(check_mounts(k, 0, shown, 3, NULL, &st), KP_ERR_FAULT, "struct mount at 0xffff888000022080");
	CHECK(st.end == KP_WALK_STOPPED && st.left_out == 1);
	kp_kernel_destroy(k);
}

// ---------------------------------------------------------------- fds

static const struct {
	int32_t fd;
	const char *kind;
	uint32_t flags;
	uint64_t pos, inode;
	int file;
	const char *target;
} fds[5] = {
	{ 0, "FIFO", 0, 0, 4242, SKP_F_PIPE, "pipe:[4242]" },
	{ 1, "REG", 02001, 1234, 4321, SKP_F_LOG, "/tmp/log.txt" },
	{ 2, "REG", 02001, 1234, 4321, SKP_F_LOG, "/tmp/log.txt" },
	{ 5, "REG", 02, 7, 4322, SKP_F_OLD, "/tmp/old (deleted)" },
	{ 70, "REG", 0100000, 0, 131074, SKP_F_SH, "/bin/sh" },
};

// The open files of task 1 must be fds[which[0..n)]; returns its last word.
static struct kp_error *check_fds(struct kp_kernel *k, const int *which, size_t n, struct kp_walk_status *st)
{
	struct kp_fd_iter *it;
	const struct kp_fd *f;
	struct kp_error *err = kp_fd_iter_create(k, TASK(1), &it);
	if (err)
		return err;
	size_t i = 0;
	while (!(err = kp_fd_iter_next(it, &f)) && f) {
		if (i++ >= n) {
			FAILF("fd %d beyond the %zu expected", f->fd, n);
			continue;
		}
		int w = which[i - 1];
		if (f->fd != fds[w].fd || strcmp(f->kind, fds[w].kind) || f->flags != fds[w].flags ||
		    f->pos != fds[w].pos || f->inode != fds[w].inode || strcmp(f->target, fds[w].target) ||
		    f->file != SKP_VA(SKP_FILE(fds[w].file)))
			FAILF("fd %d %s 0%o %" PRIu64 " %" PRIu64 " %s, want fd %d", f->fd, f->kind, f->flags, f->pos,
			      f->inode, f->target, fds[w].fd);
	}
	CHECK_U64(i, n);
	kp_fd_iter_status(it, st);
	kp_fd_iter_destroy(it);
	return err;
}

TEST(open_files_by_the_open_fds_bitmap)
{
	KP_INIT(kp_walk_status, st);
	struct kp_kernel *k = procs(SK_PROCS_LIST, NULL, NULL);
	static const int all[] = { 0, 1, 2, 3, 4 };
	if (!k)
		return;
	// fd 3 is open with no file yet (skipped), fd 127 has a file but no bit.
	CHECK_OK(check_fds(k, all, 5, &st));
	CHECK(st.end == KP_WALK_COMPLETE && st.left_out == 0);
	struct kp_fd_iter *it = NULL;
	CHECK_ERR(kp_fd_iter_create(k, TASK(3), &it), KP_ERR_INVALID, "has no files_struct (it exited)");
	kp_kernel_destroy(k);
}

TEST(fd_tables_bounded_by_max_fds)
{
	KP_INIT(kp_walk_status, st);
	// 64 fds: fd 70 is beyond the table.
	struct corrupt small[] = { { SKP_FDT + SKP_FDT_MAX, 64 }, { 0, 0 } };
	struct kp_kernel *k = procs(SK_PROCS_LIST, put, small);
	static const int low[] = { 0, 1, 2, 3 };
	if (!k)
		return;
	CHECK_OK(check_fds(k, low, 4, &st));
	kp_kernel_destroy(k);
	// Not a multiple of 64, and more than the kernel allows.
	static const uint64_t bad[] = { 100, (UINT64_C(1) << 30) + 64, 0xffffffc0 };
	static const char *const says[] = { "max_fds 100 (corrupt?)", "max_fds 1073741888 (corrupt?)",
					    "max_fds 4294967232 (corrupt?)" };
	for (int i = 0; i < 3; i++) {
		struct corrupt c[] = { { SKP_FDT + SKP_FDT_MAX, bad[i] }, { 0, 0 } };
		if (!(k = procs(SK_PROCS_LIST, put, c)))
			return;
		CHECK_ERR(check_fds(k, low, 0, &st), KP_ERR_FORMAT, says[i]);
		kp_kernel_destroy(k);
	}
	// The bitmap is not in the dump.
	struct corrupt nobits[] = { { SKP_FDT + SKP_FDT_OPEN, SKP_VA(0x100000) }, { 0, 0 } };
	if (!(k = procs(SK_PROCS_LIST, put, nobits)))
		return;
	CHECK_ERR(check_fds(k, low, 0, &st), KP_ERR_FAULT, "the open_fds bitmap of fdtable 0xffff888000020ca0");
	kp_kernel_destroy(k);
	// fd 5's struct file is not: left out, the others shown.
	struct corrupt nofile[] = { { SKP_FD_ARRAY + 5 * 8, SKP_VA(0x100000) }, { 0, 0 } };
	static const int rest[] = { 0, 1, 2, 4 };
	if (!(k = procs(SK_PROCS_LIST, put, nofile)))
		return;
	CHECK_ERR(check_fds(k, rest, 4, &st), KP_ERR_FAULT, "fd 5: struct file at 0xffff888000100000");
	CHECK(st.end == KP_WALK_STOPPED && st.left_out == 1);
	kp_kernel_destroy(k);
}

// The public d_path: a file's (mnt, dentry) as /proc shows its path.
TEST(public_d_path)
{
	struct kp_kernel *k = procs(SK_PROCS_LIST, NULL, NULL);
	uint64_t tmp = SKP_VA(SKP_MOUNT(SKP_M_TMP)) + SKP_MOUNT_MNT;
	uint64_t root = SKP_VA(SKP_MOUNT(SKP_M_ROOT)) + SKP_MOUNT_MNT;
	char *path = NULL;
	CHECK_OK(kp_d_path(k, tmp, SKP_VA(SKP_DENTRY(SKP_D_LOG)), &path));
	CHECK_STR(path, "/tmp/log.txt");
	free(path);
	path = NULL;
	CHECK_OK(kp_d_path(k, root, SKP_VA(SKP_DENTRY(SKP_D_SH)), &path));
	CHECK_STR(path, "/bin/sh");
	free(path);
	path = NULL;
	CHECK_ERR(kp_d_path(k, tmp, UNMAPPED_DENTRY, &path), KP_ERR_FAULT, "0x");
	CHECK(path == NULL);
	kp_kernel_destroy(k);
}

int main(void)
{
	RUN(rbtree_in_order_empty_and_deep);
	RUN(rbtree_cycle_and_fault);
	RUN(mounts_on_the_list_and_in_the_rbtree);
	RUN(mounts_outside_the_root_are_left_out);
	RUN(corrupt_mount_namespaces);
	RUN(open_files_by_the_open_fds_bitmap);
	RUN(fd_tables_bounded_by_max_fds);
	RUN(public_d_path);
	return TEST_SUMMARY();
}
