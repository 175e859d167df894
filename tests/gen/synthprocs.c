// SPDX-License-Identifier: MIT
// The processes of the synthetic kernel in its memory (synthprocs.h).
#include <stdio.h>
#include <string.h>

#include "mkpgtable.h"
#include "synthprocs.h"
#include "util/error.h"

#define IMG_PA(va) ((va) - SK_TEXT)	// image addresses to physical
#define ULONG_MAX_ UINT64_C(0xffffffffffffffff)

const struct kp_mkkallsyms_sym skp_symbols[] = {
	{ "special_mapping_name", 't', SKP_SPECIAL_NAME },
	{ "init_cred", 'D', SKP_INIT_CRED },
	{ NULL, 0, 0 },
};

struct world {
	uint8_t *m;
	const struct sk_opts *o;
	uint64_t names;		// the next free byte of the names area
};

static void put64(struct world *w, uint64_t pa, uint64_t v)
{
	sk_put64(w->m, pa, v);
}

static void put32(struct world *w, uint64_t pa, uint32_t v)
{
	sk_put32(w->m, pa, v);
}

// A NUL-terminated copy of s in the names area: its address.
static uint64_t name(struct world *w, const char *s)
{
	size_t n = strlen(s) + 1;
	if (w->names + n > SKP_UPT)
		sk_die("names area full");
	memcpy(w->m + w->names, s, n);
	w->names += n;
	return SKP_VA(w->names - n);
}

// Task 1's user pages: virtual page -> physical page.
static const struct { uint64_t va, pa; } upages[] = {
	{ SKP_U_TEXT, SKP_UTEXT }, { SKP_U_PAGE_A, SKP_UPAGE_A }, { SKP_U_PAGE_B, SKP_UPAGE_B },
};

void skp_uput(uint8_t *m, uint64_t va, const void *bytes, size_t n)
{
	const uint8_t *p = bytes;
	for (; n; va++, p++, n--) {
		size_t i = 0;
		while (i < 3 && upages[i].va != (va & ~UINT64_C(0xfff)))
			i++;
		if (i == 3)
			sk_die("no user page there");
		m[upages[i].pa + (va & 0xfff)] = *p;
	}
}

static void user_memory(struct world *w)
{
	char spec[512];
	snprintf(spec, sizeof(spec),
		 "levels 4\ntables 0x%llx\nmaxtables %d\n"
		 "map 0x%llx 0x%llx 4K flags=0x4\nmap 0x%llx 0x%llx 4K flags=0x4\n"
		 "map 0x%llx 0x%llx 4K flags=0x4\nset 0x%llx PTE 0x%llx\n"
		 "map 0x%llx 0 2M flags=0x4\n",
		 (unsigned long long)SKP_UPT, SKP_UPT_PAGES,
		 (unsigned long long)SKP_U_TEXT, (unsigned long long)SKP_UTEXT,
		 (unsigned long long)SKP_U_PAGE_A, (unsigned long long)SKP_UPAGE_A,
		 (unsigned long long)SKP_U_PAGE_B, (unsigned long long)SKP_UPAGE_B,
		 (unsigned long long)SKP_U_SWAPPED, (unsigned long long)SKP_SWAP_PTE,
		 (unsigned long long)SKP_U_HUGE);
	struct kp_mkpgtable *pg;
	struct kp_error *err = kp_mkpgtable_create(spec, &pg);
	if (err)
		sk_die(kp_error_message(err));
	memcpy(w->m + SKP_UPT, pg->buf + SKP_UPT, SKP_UPT_PAGES * 4096);
	kp_mkpgtable_destroy(pg);
	// Every byte of the two stack pages says where it is, then the areas.
	for (unsigned i = 0; i < 4096; i++) {
		w->m[SKP_UPAGE_A + i] = SKP_PAGE_A_BYTE(i);
		w->m[SKP_UPAGE_B + i] = SKP_PAGE_B_BYTE(i);
	}
	skp_uput(w->m, SKP_U_TEXT, SKP_U_TEXT_BYTES, sizeof(SKP_U_TEXT_BYTES));
	skp_uput(w->m, SKP_ARG_START, SKP_ARGS, sizeof(SKP_ARGS));
	skp_uput(w->m, SKP_ARG_END, SKP_ENV, sizeof(SKP_ENV));
	memcpy(w->m + SKP_HUGE_MARK, SKP_HUGE_BYTES, sizeof(SKP_HUGE_BYTES));
}

// The VMAs, [start, end) and VM_* flags: 0-4 task 1's, 5-8 task 2's.
static const struct vma_def {
	uint64_t start, end, flags;
	int file;
	bool special;
} vmas[] = {
	{ SKP_U_TEXT, SKP_U_TEXT + 0x1000, 0x75, SKP_F_SH, false },	// r-x, may rwx
	{ 0x401000, 0x422000, 0x73, -1, false },			// the heap
	{ 0x7ffff7fc1000, 0x7ffff7fc3000, 0x75, -1, true },		// [vdso]
	{ SKP_U_HUGE, SKP_U_HUGE + 0x200000, 0x73, -1, false },
	{ SKP_U_PAGE_A, 0x7ffffffff000, 0x173, -1, false },		// [stack] (VM_GROWSDOWN)
	{ 0x1000000, 0x1001000, 0x71, -1, false },
	{ 0x1002000, 0x1004000, 0x73, -1, false },
	{ 0x11000000, 0x11001000, 0xfb, -1, false },			// shared
	{ 0x7ffffff00000, 0x7ffffff21000, 0x173, -1, false },
};

static void vma(struct world *w, unsigned i, uint64_t mm)
{
	const struct vma_def *v = &vmas[i];
	uint64_t pa = SKP_VMA(i);
	put64(w, pa + SKP_VMA_START, v->start);
	put64(w, pa + SKP_VMA_END, v->end);
	put64(w, pa + SKP_VMA_FLAGS, v->flags);
	put64(w, pa + SKP_VMA_FILE, v->file < 0 ? 0 : SKP_VA(SKP_FILE(v->file)));
	if (v->special) {
		put64(w, pa + SKP_VMA_OPS, SKP_VMOPS);
		put64(w, pa + SKP_VMA_PRIVATE, SKP_VDSO_MAPPING);
	}
	put64(w, pa + 0x38, SKP_VA(mm));
}

// Slot s of a maple_range_64 node (or leaf) and its pivot (the last
// slot's is implied: the node's maximum).
static void slot(struct world *w, uint64_t node, unsigned s, uint64_t pivot, uint64_t entry)
{
	if (s > 15)
		sk_die("too many entries for one maple node");
	if (s < 15)
		put64(w, node + SKP_R64_PIVOT + 8 * s, pivot);
	put64(w, node + SKP_R64_SLOT + 8 * s, entry);
}

// A maple_leaf_64 node over [min, max] holding vmas[first, last): the gaps
// between them are NULL slots, as the VMA tree stores them.
static void leaf(struct world *w, uint64_t node, uint64_t parent, uint64_t min, uint64_t max,
		 unsigned first, unsigned last)
{
	unsigned s = 0;
	uint64_t at = min;	// the first index not yet in a slot
	for (unsigned i = first; i < last; i++) {
		if (vmas[i].start > at)
			slot(w, node, s++, vmas[i].start - 1, 0);
		slot(w, node, s++, vmas[i].end - 1, SKP_VA(SKP_VMA(i)));
		at = vmas[i].end;
	}
	if (at <= max)
		slot(w, node, s++, max, 0);
	put64(w, node, parent);
	if (s < 16)
		w->m[node + SKP_R64_SLOT + 15 * 8] = (uint8_t)(s - 1);	// maple_metadata.end
}

// Task 1's memory sizes (kp_task_mem): in pages, text 0x400000..0x4a1234.
const struct skp_mm_sizes skp_mm_sizes = {
	.total_vm = 753, .locked_vm = 2, .pinned_vm = 1, .data_vm = 40, .exec_vm = 300, .stack_vm = 33,
	.hiwater_rss = 500, .hiwater_vm = 800, .start_code = 0x400000, .end_code = 0x4a1234,
	.rss = { 300, 50, 2, 7 }, .pgtables = 0x5000,
};

static void sizes(struct world *w, uint64_t mm)
{
	const struct skp_mm_sizes *s = &skp_mm_sizes;
	const uint64_t v[] = { s->total_vm, s->locked_vm, s->pinned_vm, s->data_vm, s->exec_vm, s->stack_vm,
			       s->hiwater_rss, s->hiwater_vm, s->start_code, s->end_code };
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++)
		put64(w, mm + SKP_MM_TOTAL_VM + 8 * i, v[i]);
	for (size_t i = 0; i < 4; i++)
		put64(w, mm + SKP_MM_RSS_STAT + 8 * i, (uint64_t)s->rss[i]);
	put64(w, mm + SKP_MM_PGTABLES, s->pgtables);
}

static void mms(struct world *w)
{
	// Task 1: one leaf at the root.
	uint64_t mm = SKP_MM(0), tree = SKP_VA(mm + SKP_MM_MT);
	for (unsigned i = 0; i < 5; i++)
		vma(w, i, mm);
	leaf(w, SKP_NODE(0), tree | 1, 0, ULONG_MAX_, 0, 5);
	put32(w, mm + SKP_MM_MT + 4, 1);	// ma_flags: MT_FLAGS_ALLOC_RANGE
	put64(w, mm + SKP_MM_MT + SKP_MT_ROOT,
	      SKP_MAPLE_ROOT(SKP_ENODE(SKP_VA(SKP_NODE(0)), SKP_MAPLE_LEAF_64)));
	put64(w, mm + SKP_MM_PGD, SKP_VA(SKP_UPT));
	put32(w, mm + SKP_MM_MAP_COUNT, 5);
	put64(w, mm + SKP_MM_START_BRK, 0x401000);
	put64(w, mm + SKP_MM_BRK, 0x422000);
	put64(w, mm + SKP_MM_START_STACK, SKP_U_PAGE_A + 0xe00);
	put64(w, mm + SKP_MM_ARG_START, SKP_ARG_START);
	put64(w, mm + SKP_MM_ARG_END, SKP_ARG_END);
	put64(w, mm + SKP_MM_ENV_START, SKP_ARG_END);
	put64(w, mm + SKP_MM_ENV_END, SKP_ENV_END);
	put64(w, mm + SKP_MM_EXE_FILE, SKP_VA(SKP_FILE(SKP_F_SH)));
	sizes(w, mm);
	// Task 2: a maple_arange_64 root over two leaves.
	mm = SKP_MM(1);
	tree = SKP_VA(mm + SKP_MM_MT);
	for (unsigned i = 5; i < 9; i++)
		vma(w, i, mm);
	uint64_t root = SKP_NODE(1), split = 0x10ffffff;
	leaf(w, SKP_NODE(2), SKP_VA(root), 0, split, 5, 7);
	leaf(w, SKP_NODE(3), SKP_VA(root), split + 1, ULONG_MAX_, 7, 9);
	put64(w, root, tree | 1);
	put64(w, root + SKP_A64_PIVOT, split);
	put64(w, root + SKP_A64_PIVOT + 8, ULONG_MAX_);
	put64(w, root + SKP_A64_SLOT, SKP_ENODE(SKP_VA(SKP_NODE(2)), SKP_MAPLE_LEAF_64));
	put64(w, root + SKP_A64_SLOT + 8, SKP_ENODE(SKP_VA(SKP_NODE(3)), SKP_MAPLE_LEAF_64));
	put64(w, root + SKP_A64_GAP, split - 0x1004000 + 1);	// each child's largest gap
	put64(w, root + SKP_A64_GAP + 8, ULONG_MAX_ - 0x7ffffff21000 + 1);
	w->m[root + SKP_A64_META] = 1;
	put32(w, mm + SKP_MM_MT + 4, 1);
	put64(w, mm + SKP_MM_MT + SKP_MT_ROOT, SKP_MAPLE_ROOT(SKP_ENODE(SKP_VA(root), SKP_MAPLE_ARANGE_64)));
	put64(w, mm + SKP_MM_PGD, SKP_VA(SKP_PGD2));
	put32(w, mm + SKP_MM_MAP_COUNT, 4);
	put64(w, mm + SKP_MM_START_STACK, 0x7ffffff20000);
	put64(w, mm + SKP_MM_EXE_FILE, SKP_VA(SKP_FILE(SKP_F_SH)));
	put64(w, mm + SKP_MM_TOTAL_VM, 100);
	put64(w, mm + SKP_MM_RSS_STAT, 20);
	put64(w, mm + SKP_MM_RSS_STAT + 8, (uint64_t)-3);
}

static const struct dentry_def {
	const char *name;
	int parent, sb;
	uint32_t mode;
	uint64_t ino;
	bool unhashed;
} dentries[SKP_ND] = {
	[SKP_D_ROOT] = { "/", SKP_D_ROOT, SKP_SB_EXT4, 040755, 2, true },
	[SKP_D_BIN] = { "bin", SKP_D_ROOT, SKP_SB_EXT4, 040755, 131073, false },
	[SKP_D_SH] = { "sh", SKP_D_BIN, SKP_SB_EXT4, 0100755, 131074, false },
	[SKP_D_PROC] = { "proc", SKP_D_ROOT, SKP_SB_EXT4, 040555, 262145, false },
	[SKP_D_TMP] = { "tmp", SKP_D_ROOT, SKP_SB_EXT4, 041777, 393217, false },
	[SKP_D_PROCROOT] = { "/", SKP_D_PROCROOT, SKP_SB_PROC, 040555, 1, true },
	[SKP_D_TMPROOT] = { "/", SKP_D_TMPROOT, SKP_SB_TMPFS, 041777, 1, true },
	[SKP_D_LOG] = { "log.txt", SKP_D_TMPROOT, SKP_SB_TMPFS, 0100644, 4321, false },
	[SKP_D_OLD] = { "old", SKP_D_TMPROOT, SKP_SB_TMPFS, 0100600, 4322, true },	// unlinked
	[SKP_D_PIPE] = { "", SKP_D_PIPE, SKP_SB_PIPEFS, 010600, 4242, true },
	[SKP_D_MNT] = { "mnt", SKP_D_ROOT, SKP_SB_EXT4, 040755, 524289, false },
};

static const struct {
	const char *type;
	uint32_t dev;
	uint64_t magic, flags;
	int root;
} sbs[SKP_NSB] = {
	[SKP_SB_EXT4] = { "ext4", (254u << 20) | 1, 0xef53, 0x2000000, SKP_D_ROOT },	// SB_LAZYTIME
	[SKP_SB_PROC] = { "proc", 22, 0x9fa0, 0, SKP_D_PROCROOT },
	[SKP_SB_TMPFS] = { "tmpfs", 23, 0x01021994, 0, SKP_D_TMPROOT },
	[SKP_SB_PIPEFS] = { "pipefs", 12, 0x50495045, 0, SKP_D_PIPE },
};

static const struct {
	int parent, point, root, sb, id, group, master;
	uint32_t flags;
	const char *dev;
} mounts[SKP_NM] = {
	[SKP_M_ROOT] = { SKP_M_ROOT, SKP_D_ROOT, SKP_D_ROOT, SKP_SB_EXT4, 21, 0, -1, 0x20, "/dev/vda1" },
	[SKP_M_PROC] = { SKP_M_ROOT, SKP_D_PROC, SKP_D_PROCROOT, SKP_SB_PROC, 22, 0, -1, 0x27, "proc" },
	[SKP_M_TMP] = { SKP_M_ROOT, SKP_D_TMP, SKP_D_TMPROOT, SKP_SB_TMPFS, 23, 1, -1, 0x1006, "tmpfs" },
	[SKP_M_MNT] = { SKP_M_ROOT, SKP_D_MNT, SKP_D_TMPROOT, SKP_SB_TMPFS, 24, 0, SKP_M_TMP, 0x20, "tmpfs" },
};

static const struct {
	int mount, dentry;
	uint32_t flags;
	uint64_t pos;
} files[SKP_NF] = {
	[SKP_F_PIPE] = { -1, SKP_D_PIPE, 0, 0 },
	[SKP_F_LOG] = { SKP_M_TMP, SKP_D_LOG, 02001, 1234 },	// O_WRONLY | O_APPEND
	[SKP_F_OLD] = { SKP_M_TMP, SKP_D_OLD, 02, 7 },		// O_RDWR
	[SKP_F_SH] = { SKP_M_ROOT, SKP_D_SH, 0100000, 0 },	// O_LARGEFILE
};

#define VFSMOUNT(i) (SKP_VA(SKP_MOUNT(i)) + SKP_MOUNT_MNT)

static void dcache(struct world *w)
{
	for (int i = 0; i < SKP_ND; i++) {
		const struct dentry_def *d = &dentries[i];
		uint64_t pa = SKP_DENTRY(i), ino = SKP_INODE(i);
		put64(w, pa + 8, d->unhashed ? 0 : SKP_VA(pa));	// d_hash.pprev
		put64(w, pa + 0x10, SKP_VA(SKP_DENTRY(d->parent)));
		put32(w, pa + 0x1c, (uint32_t)strlen(d->name));
		put64(w, pa + 0x20, name(w, d->name));
		put64(w, pa + 0x28, SKP_VA(ino));
		put64(w, pa + 0x30, SKP_VA(SKP_SB(d->sb)));
		put32(w, ino + SKP_INODE_MODE, d->mode);	// and i_uid 0
		put64(w, ino + SKP_INODE_INO, d->ino);
		put64(w, ino + 0x10, SKP_VA(SKP_SB(d->sb)));
	}
	for (int i = 0; i < SKP_NSB; i++) {
		uint64_t pa = SKP_SB(i);
		put32(w, pa, sbs[i].dev);
		put64(w, pa + 8, sbs[i].flags);
		put64(w, pa + 0x10, sbs[i].magic);
		put64(w, pa + 0x18, SKP_VA(SKP_FSTYPE(i)));
		put64(w, pa + 0x28, SKP_VA(SKP_DENTRY(sbs[i].root)));
		put64(w, SKP_FSTYPE(i), name(w, sbs[i].type));
	}
	for (int i = 0; i < SKP_NF; i++) {
		uint64_t pa = SKP_FILE(i);
		put32(w, pa, files[i].flags);
		put64(w, pa + 8, files[i].pos);
		put64(w, pa + 0x10, files[i].mount < 0 ? 0 : VFSMOUNT(files[i].mount));
		put64(w, pa + 0x18, SKP_VA(SKP_DENTRY(files[i].dentry)));
		put64(w, pa + 0x20, SKP_VA(SKP_INODE(files[i].dentry)));
	}
}

// The namespace's mounts: on its list, and in its rbtree (the second
// mount at the root, the others in order beside it).
static void mount_ns(struct world *w)
{
	uint64_t ns = SKP_MNT_NS, head = SKP_VA(ns);
	for (int i = 0; i < SKP_NM; i++) {
		uint64_t pa = SKP_MOUNT(i);
		put64(w, pa, SKP_VA(SKP_MOUNT(mounts[i].parent)));
		put64(w, pa + 8, SKP_VA(SKP_DENTRY(mounts[i].point)));
		put64(w, pa + SKP_MOUNT_MNT, SKP_VA(SKP_DENTRY(mounts[i].root)));
		put64(w, pa + SKP_MOUNT_MNT + 8, SKP_VA(SKP_SB(mounts[i].sb)));
		put32(w, pa + SKP_MOUNT_MNT + 0x10, mounts[i].flags);
		put32(w, pa + 0x30, (uint32_t)mounts[i].id);
		put32(w, pa + 0x34, (uint32_t)mounts[i].group);
		put64(w, pa + 0x38, name(w, mounts[i].dev));
		put64(w, pa + 0x40, mounts[i].master < 0 ? 0 : SKP_VA(SKP_MOUNT(mounts[i].master)));
		uint64_t next = i + 1 < SKP_NM ? SKP_VA(SKP_MOUNT(i + 1)) + SKP_MOUNT_LIST : head;
		uint64_t prev = i ? SKP_VA(SKP_MOUNT(i - 1)) + SKP_MOUNT_LIST : head;
		put64(w, pa + SKP_MOUNT_LIST, next);
		put64(w, pa + SKP_MOUNT_LIST + 8, prev);
	}
	put64(w, ns, SKP_VA(SKP_MOUNT(0)) + SKP_MOUNT_LIST);
	put64(w, ns + 8, SKP_VA(SKP_MOUNT(SKP_NM - 1)) + SKP_MOUNT_LIST);
	put32(w, ns + SKP_NS_COUNT_LIST, SKP_NM);
	if (w->o->procs == SK_PROCS_RBTREE) {
		// mounts.rb_node: 1, its left 0, its right 2, whose right is 3.
#define NODE(i) (SKP_VA(SKP_MOUNT(i)) + SKP_MOUNT_NODE)
		put64(w, ns, NODE(1));
		put64(w, ns + 8, 0);
		put32(w, ns + SKP_NS_COUNT_RB, SKP_NM);
		put64(w, SKP_MOUNT(1) + SKP_MOUNT_NODE + SKP_RB_LEFT, NODE(0));
		put64(w, SKP_MOUNT(1) + SKP_MOUNT_NODE + SKP_RB_RIGHT, NODE(2));
		put64(w, SKP_MOUNT(2) + SKP_MOUNT_NODE + SKP_RB_RIGHT, NODE(3));
		put64(w, SKP_MOUNT(0) + SKP_MOUNT_NODE, NODE(1) | 1);	// black, parent 1
		put64(w, SKP_MOUNT(2) + SKP_MOUNT_NODE, NODE(1) | 1);
		put64(w, SKP_MOUNT(3) + SKP_MOUNT_NODE, NODE(2));	// red
		put64(w, SKP_MOUNT(1) + SKP_MOUNT_NODE, 1);
#undef NODE
	}
}

// fd 0 pipe, 1 and 2 the log, 3 reserved, 5 the unlinked file, 70 the
// shell; fd 127 holds a file but is not open.
static void fd_table(struct world *w)
{
	static const struct { unsigned fd; int file; } fds[] = {
		{ 0, SKP_F_PIPE }, { 1, SKP_F_LOG }, { 2, SKP_F_LOG }, { 3, -1 }, { 5, SKP_F_OLD },
		{ 70, SKP_F_SH }, { 127, SKP_F_LOG },
	};
	uint64_t open[2] = { 0, 0 };
	for (size_t i = 0; i < sizeof(fds) / sizeof(fds[0]); i++) {
		if (fds[i].file >= 0)
			put64(w, SKP_FD_ARRAY + 8 * fds[i].fd, SKP_VA(SKP_FILE(fds[i].file)));
		if (fds[i].fd != 127)
			open[fds[i].fd / 64] |= UINT64_C(1) << (fds[i].fd % 64);
	}
	put64(w, SKP_OPEN_FDS, open[0]);
	put64(w, SKP_OPEN_FDS + 8, open[1]);
	put32(w, SKP_FDT + SKP_FDT_MAX, 128);
	put64(w, SKP_FDT + SKP_FDT_FD, SKP_VA(SKP_FD_ARRAY));
	put64(w, SKP_FDT + SKP_FDT_OPEN, SKP_VA(SKP_OPEN_FDS));
	put32(w, SKP_FILES, 2);
	put64(w, SKP_FILES + 8, SKP_VA(SKP_FDT));
	put32(w, SKP_FS, 022);
	for (uint64_t p = SKP_FS + 8; p <= SKP_FS + 0x18; p += 0x10) {
		put64(w, p, VFSMOUNT(SKP_M_ROOT));
		put64(w, p + 8, SKP_VA(SKP_DENTRY(SKP_D_ROOT)));
	}
}

#define ALL_CAPS UINT64_C(0x1ffffffffff)	// CAP_LAST_CAP 40

// A cred of uid and gid id (root's capabilities for 0), in the groups.
static void cred(struct world *w, uint64_t pa, uint32_t usage, uint32_t id)
{
	put32(w, pa + SKP_CRED_USAGE, usage);
	for (unsigned i = 0; i < 8; i++)
		put32(w, pa + SKP_CRED_UID + 4 * i, id);
	uint64_t caps[5] = { 0, id ? 0 : ALL_CAPS, id ? 0 : ALL_CAPS, ALL_CAPS, 0 };
	for (unsigned i = 0; i < 5; i++)
		put64(w, pa + SKP_CRED_CAPS + 8 * i, caps[i]);
	put64(w, pa + SKP_CRED_GROUPS, SKP_VA(SKP_GROUPS));
	put64(w, pa + SKP_CRED_USER_NS, SKP_VA(SKP_NS(SKP_NS_USER)));
}

const uint32_t skp_ns_inum[SKP_NNS] = {
	[SKP_NS_UTS] = 4026531838u, [SKP_NS_USER] = 4026531837u, [SKP_NS_PID] = 4026531836u,
	[SKP_NS_PID_CHILD] = 4026532211u, [SKP_NS_CGROUP] = 4026531835u,
};

// Namespaces, groups, handlers and cgroups (shared); each process's
// struct pid (task 2's in a child PID namespace, pid 1 there) and
// signal_struct (pgrp and session: task 1's).
static void status(struct world *w)
{
	put32(w, SKP_NSPROXY, 1);
	put64(w, SKP_NSPROXY + 8, SKP_VA(SKP_MNT_NS));
	put64(w, SKP_NSPROXY + 0x10, SKP_VA(SKP_NS(SKP_NS_UTS)));
	put64(w, SKP_NSPROXY + 0x20, SKP_VA(SKP_NS(SKP_NS_PID)));	// pid_ns_for_children
	put64(w, SKP_NSPROXY + 0x30, SKP_VA(SKP_NS(SKP_NS_CGROUP)));
	for (int i = 0; i < SKP_NNS; i++)
		put32(w, SKP_NS(i) + SKP_NS_INUM, skp_ns_inum[i]);
	put32(w, SKP_MNT_NS + SKP_MNT_NS_NS + SKP_NS_INUM, SKP_MNT_NS_INUM);
	put32(w, SKP_GROUPS + 4, 2);
	put32(w, SKP_GROUPS + 8, 4);
	put32(w, SKP_GROUPS + 12, 27);
	for (unsigned t = 1; t <= 2; t++) {
		uint64_t pid = SKP_PID(t), sig = SKP_SIGNAL(t);
		put32(w, pid, 1);
		put32(w, pid + SKP_PID_LEVEL, t - 1);
		put32(w, pid + SKP_PID_NUMBERS, t);
		put64(w, pid + SKP_PID_NUMBERS + 8, SKP_VA(SKP_NS(SKP_NS_PID)));
		if (t == 2) {
			put32(w, pid + SKP_PID_NUMBERS + 0x10, 1);
			put64(w, pid + SKP_PID_NUMBERS + 0x18, SKP_VA(SKP_NS(SKP_NS_PID_CHILD)));
		}
		put32(w, sig, 1);	// nr_threads
		put64(w, sig + SKP_SIGNAL_SHARED, t == 2 ? 0x4 : 0);
		put64(w, sig + SKP_SIGNAL_PIDS + 8, SKP_VA(pid));		// PIDTYPE_TGID
		put64(w, sig + SKP_SIGNAL_PIDS + 16, SKP_VA(SKP_PID(1)));	// PGID
		put64(w, sig + SKP_SIGNAL_PIDS + 24, SKP_VA(SKP_PID(1)));	// SID
		put64(w, SKP_CSS_SET(t), SKP_VA(SKP_CGROUP(t == 1 ? 2 : 0)));
	}
	// SIGINT and SIGCHLD ignored, SIGTERM caught.
	put32(w, SKP_SIGHAND, 2);
	put64(w, SKP_SIGHAND + 8 + 0x20 * 1, 1);
	put64(w, SKP_SIGHAND + 8 + 0x20 * 16, 1);
	put64(w, SKP_SIGHAND + 8 + 0x20 * 14, 0x401234);
	// The cgroups: the root, system.slice, system.slice/sshd.service.
	static const char *const kn[] = { "", "system.slice", "sshd.service" };
	for (int i = 0; i < 3; i++) {
		put64(w, SKP_CGROUP(i), SKP_VA(SKP_KERNFS(i)));
		put64(w, SKP_KERNFS(i), name(w, kn[i]));
		put64(w, SKP_KERNFS(i) + 8, i ? SKP_VA(SKP_KERNFS(i - 1)) : 0);
	}
}

// Tasks 1 and 2 processes on their own creds, the others kernel threads.
static void tasks(struct world *w)
{
	const struct sk_opts *o = w->o;
	unsigned n = o->ntasks > SKP_MAX_TASKS ? SKP_MAX_TASKS : o->ntasks, kthreads = 1;
	for (unsigned i = 0; i <= n; i++) {
		uint64_t pa = sk_task_pa(o, i), c = SKP_INIT_CRED;
		put64(w, pa + SKP_T_FS, SKP_VA(SKP_FS));
		put64(w, pa + SKP_T_NSPROXY, SKP_VA(SKP_NSPROXY));
		put64(w, pa + SKP_T_CGROUPS, SKP_VA(SKP_CSS_SET(2)));
		if (i == 1 || i == 2) {
			c = SKP_VA(SKP_CRED(i));
			cred(w, SKP_CRED(i), 2, i == 1 ? 0 : 1000);
			put64(w, pa + SKP_T_MM, SKP_VA(SKP_MM(i - 1)));
			put64(w, pa + SKP_T_FILES, SKP_VA(SKP_FILES));
			put64(w, pa + SKP_T_CGROUPS, SKP_VA(SKP_CSS_SET(i)));
			put64(w, pa + SK_T_SIGNAL, SKP_VA(SKP_SIGNAL(i)));
			put64(w, pa + SKP_T_THREAD_PID, SKP_VA(SKP_PID(i)));
			put64(w, pa + SKP_T_SIGHAND, SKP_VA(SKP_SIGHAND));
			put64(w, pa + SKP_T_NVCSW, i == 1 ? 17 : 5);
			put64(w, pa + SKP_T_NIVCSW, i == 1 ? 3 : 1);
			if (i == 2) {
				// No new privileges, traced by its parent (task 1),
				// SIGHUP pending and SIGCHLD blocked.
				put64(w, pa + SKP_T_ATOMIC_FLAGS, 1);
				put32(w, pa + SKP_T_PTRACE, 1);
				put64(w, pa + SKP_T_PENDING + 0x10, 0x1);
				put64(w, pa + SKP_T_BLOCKED, 0x10000);
			}
		} else if (i) {
			put32(w, pa + SK_T_FLAGS, SKP_KTHREAD_FLAGS);
			kthreads++;
		}
		put64(w, pa + SKP_T_CRED, c);
		put64(w, pa + SKP_T_REAL_CRED, c);
	}
	// Two references from each kernel thread and init_task, and some.
	cred(w, IMG_PA(SKP_INIT_CRED), 2 * kthreads + 4, 0);
}

void skp_write(uint8_t *m, const struct sk_opts *o)
{
	struct world w = { m, o, SKP_NAMES };
	user_memory(&w);
	mms(&w);
	dcache(&w);
	mount_ns(&w);
	fd_table(&w);
	status(&w);
	tasks(&w);
	// The [vdso]'s special mapping: vm_ops->name is special_mapping_name().
	put64(&w, IMG_PA(SKP_VMOPS), SKP_SPECIAL_NAME);
	put64(&w, IMG_PA(SKP_VDSO_MAPPING), SKP_VDSO_NAME);
	memcpy(m + IMG_PA(SKP_VDSO_NAME), "[vdso]", 7);
}
