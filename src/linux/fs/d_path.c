// SPDX-License-Identifier: MIT
// d_path() (fs/d_path.c prepend_path()): a path from a mount and a dentry,
// component by component up to the root, crossing mounts: a dentry that is
// its mount's root (mnt_root) continues at the mount's mountpoint in its
// parent mount (struct mount: mnt_parent, mnt_mountpoint, and the struct
// vfsmount inside it, mnt). A dentry whose d_hash is unhashed and that is
// not a root is a file unlinked while open: " (deleted)". Dentries of
// pipefs, sockfs and the anonymous-inode file system have no path: their
// d_dname() names them ("pipe:[INO]", "socket:[INO]", "anon_inode:NAME");
// kpeek tells them by their superblock's magic. A file of alloc_file_pseudo()
// (memfd_create(), shmem_file_setup()) has a dentry that is its own parent
// and not its mount's root, named by simple_dname(): "/NAME (deleted)";
// kpeek tells it by its d_op->d_dname.
#include <stdlib.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "core/layout.h"
#include "linux/fs/fs.h"
#include "linux/sched/sched.h"
#include "util/error.h"

#define PIPEFS_MAGIC 0x50495045u	// include/uapi/linux/magic.h
#define SOCKFS_MAGIC 0x534F434Bu
#define ANON_INODE_FS_MAGIC 0x09041934u
#define NAME_MAX 255
#define MAX_DEPTH (KP_LX_PATH_MAX / 2)	// components of a path: "/a" each

enum { D_PARENT, D_NAME_LEN, D_NAME, D_HASH_PPREV, D_INODE, D_SB, D_OP, D_N };
static const struct kp_member_spec dentry_members[D_N] = {
	[D_PARENT] = { .name = "d_parent" },
	[D_NAME_LEN] = { .name = "d_name.len" },
	[D_NAME] = { .name = "d_name.name" },
	[D_HASH_PPREV] = { .name = "d_hash.pprev" },
	[D_INODE] = { .name = "d_inode" },
	[D_SB] = { .name = "d_sb" },
	// Every kernel has it; the synthetic kernel of the unit tests does not.
	[D_OP] = { .name = "d_op", .flags = KP_MEMBER_OPTIONAL },
};
static const struct kp_struct_spec dentry_spec = KP_STRUCT_SPEC("struct dentry", dentry_members);
enum { M_MNT, M_PARENT, M_MOUNTPOINT, M_N };
static const struct kp_member_spec mount_members[M_N] = {
	[M_MNT] = { .name = "mnt", .flags = KP_MEMBER_NOSPAN },
	[M_PARENT] = { .name = "mnt_parent" },
	[M_MOUNTPOINT] = { .name = "mnt_mountpoint" },
};
static const struct kp_struct_spec mount_spec = KP_STRUCT_SPEC("struct mount", mount_members);
static const struct kp_member_spec vfsmount_members[] = { { .name = "mnt_root" } };
static const struct kp_struct_spec vfsmount_spec = KP_STRUCT_SPEC("struct vfsmount", vfsmount_members);
enum { SB_MAGIC, SB_DEV, SB_N };
static const struct kp_member_spec sb_members[SB_N] = {
	[SB_MAGIC] = { .name = "s_magic" }, [SB_DEV] = { .name = "s_dev" },
};
static const struct kp_struct_spec sb_spec = KP_STRUCT_SPEC("struct super_block", sb_members);
static const struct kp_member_spec dops_members[] = { { .name = "d_dname" } };
static const struct kp_struct_spec dops_spec = KP_STRUCT_SPEC("struct dentry_operations", dops_members);
static const struct kp_member_spec inode_members[] = { { .name = "i_ino" } };
static const struct kp_struct_spec inode_spec = KP_STRUCT_SPEC("struct inode", inode_members);
enum { T_FS, T_N };
static const struct kp_member_spec task_members[T_N] = { [T_FS] = { .name = "fs" } };
static const struct kp_struct_spec task_spec = KP_STRUCT_SPEC("struct task_struct", task_members);
static const struct kp_member_spec fs_members[] = { { .name = "root" } };
static const struct kp_struct_spec fs_spec = KP_STRUCT_SPEC("struct fs_struct", fs_members);
enum { P_MNT, P_DENTRY, P_N };
static const struct kp_member_spec path_members[P_N] = {
	[P_MNT] = { .name = "mnt" }, [P_DENTRY] = { .name = "dentry" },
};
static const struct kp_struct_spec path_spec = KP_STRUCT_SPEC("struct path", path_members);

struct layouts {
	const struct kp_struct_layout *dentry, *mount, *vfsmount, *sb, *inode;
};

static struct kp_error *layouts(struct kp_kernel *k, struct layouts *ret)
{
	static const struct kp_struct_spec *const specs[] = { &dentry_spec, &mount_spec, &vfsmount_spec,
							       &sb_spec, &inode_spec };
	const struct kp_struct_layout *l[5];
	struct kp_error *err = kp_kernel_layouts(k, specs, 5, l);
	if (err)
		return err;
	*ret = (struct layouts){ l[0], l[1], l[2], l[3], l[4] };
	return NULL;
}

struct kp_error *kp_lx_task_root(struct kp_kernel *k, uint64_t task, struct kp_lx_root *ret)
{
	static const struct kp_struct_spec *const specs[] = { &task_spec, &fs_spec, &path_spec };
	const struct kp_struct_layout *l[3];
	uint64_t fs;
	struct kp_error *err = kp_kernel_layouts(k, specs, 3, l);
	if (err || (err = kp_read_u64(k, task + kp_layout_off(l[0], T_FS), &fs)))
		return err;
	if (!fs)
		return kp_error_create(KP_ERR_INVALID, "task 0x%" PRIx64 " has no fs_struct (it exited)", task);
	uint64_t root = fs + kp_layout_off(l[1], 0);
	if ((err = kp_read_u64(k, root + kp_layout_off(l[2], P_MNT), &ret->mnt)) ||
	    (err = kp_read_u64(k, root + kp_layout_off(l[2], P_DENTRY), &ret->dentry)))
		return kp_error_prefix(err, "fs_struct at 0x%" PRIx64, fs);
	return NULL;
}

struct kp_error *kp_lx_init_root(struct kp_kernel *k, struct kp_lx_root *ret)
{
	uint64_t task;
	struct kp_symbol sym;
	struct kp_error *err = kp_task_by_pid(k, 1, &task);
	if (!err && !(err = kp_lx_task_root(k, task, ret)))
		return NULL;
	kp_error_destroy(err);
	if (!kp_symbol_find(k, "init_task", &sym))
		return kp_error_create(KP_ERR_NOT_FOUND, "no PID 1 and no init_task: no root for paths");
	return kp_lx_task_root(k, sym.address, ret);
}

struct kp_error *kp_lx_dentry_inode(struct kp_kernel *k, uint64_t dentry, uint32_t *dev_ret,
				    uint64_t *ino_ret)
{
	struct layouts l;
	uint64_t inode, sb;
	uint32_t dev = 0;
	uint64_t ino = 0;
	struct kp_error *err = layouts(k, &l);
	if (err || (err = kp_read_u64(k, dentry + kp_layout_off(l.dentry, D_INODE), &inode)) ||
	    (err = kp_read_u64(k, dentry + kp_layout_off(l.dentry, D_SB), &sb)) ||
	    (sb && (err = kp_read_u32(k, sb + kp_layout_off(l.sb, SB_DEV), &dev))) ||
	    (inode && (err = kp_read_u64(k, inode + kp_layout_off(l.inode, 0), &ino))))
		return err;
	*dev_ret = dev;
	*ino_ret = ino;
	return NULL;
}

// One dentry's name and links.
struct dentry {
	uint64_t parent, name, inode, sb, op;
	uint32_t len;
	bool unhashed;
};

static struct kp_error *read_dentry(struct kp_kernel *k, const struct layouts *l, uint64_t at,
				    struct dentry *ret)
{
	uint8_t buf[256];
	const struct kp_struct_layout *d = l->dentry;
	if (kp_layout_span(d) > sizeof(buf))
		return kp_error_create(KP_ERR_UNSUPPORTED, "struct dentry span of %" PRIu64 " bytes", kp_layout_span(d));
	struct kp_error *err = kp_read(k, KP_VIRT, at + d->lo, buf, kp_layout_span(d));
	if (err)
		return kp_error_prefix(err, "dentry at 0x%" PRIx64, at);
	ret->parent = kp_layout_u64(d, buf, D_PARENT);
	ret->name = kp_layout_u64(d, buf, D_NAME);
	ret->len = (uint32_t)kp_layout_u64(d, buf, D_NAME_LEN);
	ret->inode = kp_layout_u64(d, buf, D_INODE);
	ret->sb = kp_layout_u64(d, buf, D_SB);
	ret->op = kp_layout_u64(d, buf, D_OP);
	ret->unhashed = !kp_layout_u64(d, buf, D_HASH_PPREV);
	if (ret->len > NAME_MAX)
		return kp_error_create(KP_ERR_FORMAT, "dentry at 0x%" PRIx64 ": a name of %u bytes (corrupt?)",
				       at, ret->len);
	return NULL;
}

// "pipe:[INO]" and friends for a dentry of a pseudo file system into buf,
// *named_ret true; false if it is an ordinary one. A super block, inode or
// name that cannot be read is an error (the name would be wrong).
static struct kp_error *pseudo_name(struct kp_kernel *k, const struct layouts *l, const struct dentry *d,
				    char *buf, size_t size, bool *named_ret)
{
	uint32_t magic;
	uint64_t ino = 0;
	struct kp_error *err;
	*named_ret = false;
	if (!d->sb)
		return NULL;
	if ((err = kp_read_u32(k, d->sb + kp_layout_off(l->sb, SB_MAGIC), &magic)))
		return kp_error_prefix(err, "the super block of a dentry");
	if (magic != PIPEFS_MAGIC && magic != SOCKFS_MAGIC && magic != ANON_INODE_FS_MAGIC)
		return NULL;
	if (d->inode && (err = kp_read_u64(k, d->inode + kp_layout_off(l->inode, 0), &ino)))
		return kp_error_prefix(err, "the inode of a dentry");
	if (magic == PIPEFS_MAGIC || magic == SOCKFS_MAGIC) {
		snprintf(buf, size, "%s:[%" PRIu64 "]", magic == PIPEFS_MAGIC ? "pipe" : "socket", ino);
	} else {
		char name[NAME_MAX + 1] = "";
		if (d->name && d->len && (err = kp_read(k, KP_VIRT, d->name, name, d->len)))
			return kp_error_prefix(err, "the name of a dentry");
		name[d->len] = '\0';
		snprintf(buf, size, "anon_inode:%s", name);
	}
	*named_ret = true;
	return NULL;
}

// "/NAME (deleted)" for the dentry at at of alloc_file_pseudo() into buf,
// *named_ret true: its own parent, not the root of its mount vfsmnt, and
// its d_op->d_dname is simple_dname() (fs/d_path.c d_path() asks d_dname
// then); false otherwise. What cannot be read is an error.
static struct kp_error *simple_dname(struct kp_kernel *k, const struct layouts *l, uint64_t vfsmnt,
				     uint64_t at, const struct dentry *d, char *buf, size_t size,
				     bool *named_ret)
{
	static const struct kp_struct_spec *const specs[] = { &dops_spec };
	const struct kp_struct_layout *ops;
	struct kp_symbol sym;
	uint64_t mnt_root, dname;
	char name[NAME_MAX + 1];
	struct kp_error *err;
	*named_ret = false;
	if (d->parent != at || !d->op || !kp_symbol_find(k, "simple_dname", &sym))
		return NULL;
	if ((err = kp_kernel_layouts(k, specs, 1, &ops)))
		return err;
	if ((err = kp_read_u64(k, vfsmnt + kp_layout_off(l->vfsmount, 0), &mnt_root)))
		return kp_error_prefix(err, "vfsmount at 0x%" PRIx64, vfsmnt);
	if (mnt_root == at)
		return NULL;
	if ((err = kp_read_u64(k, d->op + kp_layout_off(ops, 0), &dname)))
		return kp_error_prefix(err, "the dentry operations of dentry 0x%" PRIx64, at);
	if (dname != sym.address)
		return NULL;
	if (d->len && (err = kp_read(k, KP_VIRT, d->name, name, d->len)))
		return kp_error_prefix(err, "the name of dentry 0x%" PRIx64, at);
	name[d->len] = '\0';
	snprintf(buf, size, "/%s (deleted)", name);
	*named_ret = true;
	return NULL;
}

// Prepends "/" and name (len bytes at address name) to the path that ends
// at buf + size, *at its start.
static struct kp_error *prepend(struct kp_kernel *k, char *buf, size_t *at, uint64_t name,
				uint32_t len)
{
	if (*at < (size_t)len + 1)
		return kp_error_create(KP_ERR_INVALID, "path longer than %d bytes", KP_LX_PATH_MAX);
	*at -= len;
	struct kp_error *err = len ? kp_read(k, KP_VIRT, name, buf + *at, len) : NULL;
	if (err)
		return kp_error_prefix(err, "a path component at 0x%" PRIx64, name);
	buf[--*at] = '/';
	return NULL;
}

// d_path() into ret; *reached_ret: whether the walk up met root (false: the
// path is outside it, from the namespace's root).
static struct kp_error *path_from(struct kp_kernel *k, const struct kp_lx_root *root, uint64_t vfsmnt,
				  uint64_t dentry, char *ret, size_t size, bool *reached_ret)
{
	struct layouts l;
	struct dentry d, first;
	uint64_t first_at = dentry;
	struct kp_error *err = layouts(k, &l);
	if (err || (err = read_dentry(k, &l, dentry, &first)))
		return err;
	bool named;
	if ((err = pseudo_name(k, &l, &first, ret, size, &named)) ||
	    (!named && (err = simple_dname(k, &l, vfsmnt, dentry, &first, ret, size, &named))))
		return err;
	if (named) {
		*reached_ret = true;
		return NULL;
	}
	char buf[KP_LX_PATH_MAX];
	bool reached = false;
	size_t at = sizeof(buf);
	uint64_t mnt_off = kp_layout_off(l.mount, M_MNT);
	d = first;
	for (int depth = 0;; depth++) {
		if (depth > MAX_DEPTH)
			return kp_error_create(KP_ERR_LOOP, "path of dentry 0x%" PRIx64 ": more than %d components (corrupt?)",
					       first_at, MAX_DEPTH);
		if (dentry == root->dentry && vfsmnt == root->mnt) {
			reached = true;
			break;
		}
		uint64_t mnt_root;
		if ((err = kp_read_u64(k, vfsmnt + kp_layout_off(l.vfsmount, 0), &mnt_root)))
			return kp_error_prefix(err, "vfsmount at 0x%" PRIx64, vfsmnt);
		if (dentry == mnt_root || dentry == d.parent) {
			// The root of a mount: on to where it is mounted.
			uint64_t mount = vfsmnt - mnt_off, parent, point;
			if ((err = kp_read_u64(k, mount + kp_layout_off(l.mount, M_PARENT), &parent)) ||
			    (err = kp_read_u64(k, mount + kp_layout_off(l.mount, M_MOUNTPOINT), &point)))
				return kp_error_prefix(err, "struct mount at 0x%" PRIx64, mount);
			if (parent == mount || dentry != mnt_root)
				break;	// the namespace's root: out of the reader's
			vfsmnt = parent + mnt_off;
			dentry = point;
			if ((err = read_dentry(k, &l, dentry, &d)))
				return err;
			continue;
		}
		if ((err = prepend(k, buf, &at, d.name, d.len)))
			return err;
		dentry = d.parent;
		if ((err = read_dentry(k, &l, dentry, &d)))
			return err;
	}
	if (at == sizeof(buf))
		buf[--at] = '/';
	// d_unlinked(): unhashed and not a root.
	bool deleted = first.unhashed && first.parent != first_at;
	snprintf(ret, size, "%.*s%s", (int)(sizeof(buf) - at), buf + at, deleted ? " (deleted)" : "");
	*reached_ret = reached;
	return NULL;
}

struct kp_error *kp_lx_d_path(struct kp_kernel *k, const struct kp_lx_root *root, uint64_t vfsmnt,
			      uint64_t dentry, char *ret, size_t size)
{
	bool reached;
	return path_from(k, root, vfsmnt, dentry, ret, size, &reached);
}

struct kp_error *kp_lx_path_root(struct kp_kernel *k, const struct kp_lx_root *root, uint64_t vfsmnt,
				 uint64_t dentry, char *ret, size_t size, bool *reachable_ret)
{
	return path_from(k, root, vfsmnt, dentry, ret, size, reachable_ret);
}

struct kp_error *kp_lx_dentry_path(struct kp_kernel *k, uint64_t dentry, char *ret, size_t size)
{
	struct layouts l;
	struct dentry d;
	char buf[KP_LX_PATH_MAX];
	size_t at = sizeof(buf);
	uint64_t first = dentry;
	struct kp_error *err = layouts(k, &l);
	if (err || (err = read_dentry(k, &l, dentry, &d)))
		return err;
	for (int depth = 0; d.parent != dentry; depth++) {
		if (depth > MAX_DEPTH)
			return kp_error_create(KP_ERR_LOOP, "path of dentry 0x%" PRIx64 ": more than %d components (corrupt?)",
					       first, MAX_DEPTH);
		if ((err = prepend(k, buf, &at, d.name, d.len)))
			return err;
		dentry = d.parent;
		if ((err = read_dentry(k, &l, dentry, &d)))
			return err;
	}
	if (at == sizeof(buf))
		buf[--at] = '/';
	snprintf(ret, size, "%.*s", (int)(sizeof(buf) - at), buf + at);
	return NULL;
}

// ---------------------------------------------------------------- the public d_path

struct kp_error *kp_d_path(struct kp_kernel *kernel, uint64_t mnt, uint64_t dentry, char **ret)
{
	struct kp_lx_root root;
	struct kp_error *err = kp_lx_init_root(kernel, &root);
	if (err)
		return err;
	char *buf = malloc(KP_LX_PATH_MAX);
	if (!buf)
		return &kp_enomem;
	if ((err = kp_lx_d_path(kernel, &root, mnt, dentry, buf, KP_LX_PATH_MAX))) {
		free(buf);
		return err;
	}
	*ret = buf;
	return NULL;
}
