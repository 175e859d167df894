// SPDX-License-Identifier: MIT
// The mounts of a mount namespace, as /proc/PID/mountinfo shows them
// (fs/proc_namespace.c show_mountinfo()): in the namespace's order (its
// list up to 6.7, its rbtree by mnt_id_unique since 6.8, 2eea9ce4310d),
// mount points made relative to the task's root and mounts outside it
// left out (seq_path_root()).
//
// What a dump cannot give: the file system's own super options
// (s_op->show_options() is code) and propagate_from (get_dominating_id()):
// the generic super options (ro/rw, sync, dirsync, mand, lazytime) are
// all super_options holds.
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/layout.h"
#include "linux/fs/fs.h"
#include "linux/lib/list.h"
#include "linux/lib/rbtree.h"
#include "linux/lib/walk.h"
#include "util/error.h"
#include "util/vec.h"

#define MAX_MOUNTS (1u << 20)
#define NAME_MAX 255

// include/linux/mount.h (enum mount_flags since 6.x: the same values).
#define MNT_NOSUID 0x01u
#define MNT_NODEV 0x02u
#define MNT_NOEXEC 0x04u
#define MNT_NOATIME 0x08u
#define MNT_NODIRATIME 0x10u
#define MNT_RELATIME 0x20u
#define MNT_READONLY 0x40u
#define MNT_NOSYMFOLLOW 0x80u	// 5.10
// Propagation: mnt_flags bits up to 6.15; struct mount's mnt_t_flags
// (T_SHARED, T_UNBINDABLE, in the kernel's BTF) since.
#define MNT_SHARED 0x1000u
#define MNT_UNBINDABLE 0x2000u
// include/linux/fs.h super_block s_flags.
#define SB_RDONLY 0x1u
#define SB_SYNCHRONOUS 0x10u
#define SB_MANDLOCK 0x40u
#define SB_DIRSYNC 0x80u
#define SB_LAZYTIME 0x2000000u

enum { N_LIST, N_MOUNTS, N_COUNT, N_N };
static const struct kp_member_spec ns_members[N_N] = {
	[N_LIST] = { .name = "list", .flags = KP_MEMBER_OPTIONAL | KP_MEMBER_NOSPAN },	// up to 6.7
	[N_MOUNTS] = { .name = "mounts", .flags = KP_MEMBER_NOSPAN },	// 6.8: rb_root (before: the count)
	// 6.8 renamed the count 'mounts' to nr_mounts.
	[N_COUNT] = { .name = "nr_mounts|mounts" },
};
static const struct kp_struct_spec ns_spec = KP_STRUCT_SPEC("struct mnt_namespace", ns_members);

enum { M_MNT, M_ROOT, M_SB, M_FLAGS, M_IDMAP, M_PARENT, M_ID, M_DEVNAME, M_MASTER, M_GROUP,
       M_T_FLAGS, M_LIST, M_NODE, M_N };
static const struct kp_member_spec mount_members[M_N] = {
	[M_MNT] = { .name = "mnt", .flags = KP_MEMBER_NOSPAN },
	[M_ROOT] = { .name = "mnt.mnt_root" },
	[M_SB] = { .name = "mnt.mnt_sb" },
	[M_FLAGS] = { .name = "mnt.mnt_flags" },
	// 6.3 (256c8aed2b42) mnt_idmap; 5.12 (a6435940b62f) mnt_userns.
	[M_IDMAP] = { .name = "mnt.mnt_idmap|mnt.mnt_userns", .flags = KP_MEMBER_OPTIONAL },
	[M_PARENT] = { .name = "mnt_parent" },
	[M_ID] = { .name = "mnt_id" },
	[M_DEVNAME] = { .name = "mnt_devname" },
	[M_MASTER] = { .name = "mnt_master" },
	[M_GROUP] = { .name = "mnt_group_id" },
	[M_T_FLAGS] = { .name = "mnt_t_flags", .flags = KP_MEMBER_OPTIONAL },
	[M_LIST] = { .name = "mnt_list", .flags = KP_MEMBER_NOSPAN },
	[M_NODE] = { .name = "mnt_node", .flags = KP_MEMBER_OPTIONAL | KP_MEMBER_NOSPAN },	// 6.8
};
static const struct kp_struct_spec mount_spec = KP_STRUCT_SPEC("struct mount", mount_members);
enum { S_DEV, S_TYPE, S_SUBTYPE, S_FLAGS, S_N };
static const struct kp_member_spec sb_members[S_N] = {
	[S_DEV] = { .name = "s_dev" }, [S_TYPE] = { .name = "s_type" },
	[S_SUBTYPE] = { .name = "s_subtype", .flags = KP_MEMBER_OPTIONAL },
	[S_FLAGS] = { .name = "s_flags" },
};
static const struct kp_struct_spec sb_spec = KP_STRUCT_SPEC("struct super_block", sb_members);
static const struct kp_member_spec fstype_members[] = { { .name = "name" } };
static const struct kp_struct_spec fstype_spec = KP_STRUCT_SPEC("struct file_system_type", fstype_members);
static const struct kp_member_spec task_members[] = { { .name = "nsproxy" } };
static const struct kp_struct_spec task_spec = KP_STRUCT_SPEC("struct task_struct", task_members);
static const struct kp_member_spec nsproxy_members[] = { { .name = "mnt_ns" } };
static const struct kp_struct_spec nsproxy_spec = KP_STRUCT_SPEC("struct nsproxy", nsproxy_members);

struct kp_mount_iter {
	struct kp_kernel *k;
	const struct kp_struct_layout *nl, *ml, *sl, *fl;
	uint64_t ns, nr_mounts;
	struct kp_lx_root root;
	uint64_t t_shared, t_unbindable;	// mnt_t_flags bits (6.16+)
	uint64_t no_idmap;	// &nop_mnt_idmap or &init_user_ns: not idmapped
	uint64_t *mounts;	// the pass's struct mount addresses
	size_t n, cap, next;
	struct kp_mount m;
	char root_path[KP_LX_PATH_MAX], point[KP_LX_PATH_MAX], source[KP_LX_PATH_MAX];
	char fstype[2 * NAME_MAX + 2], options[128], propagation[64], super[64];
	struct kp_lx_walk walk;
};

static struct kp_error *add(struct kp_mount_iter *it, uint64_t mount)
{
	if (it->n >= MAX_MOUNTS || it->n > it->nr_mounts)
		return kp_error_create(KP_ERR_LOOP, "mnt_namespace 0x%" PRIx64 ": more mounts than its count %"
				       PRIu64 " (corrupt?)", it->ns, it->nr_mounts);
	if (!KP_VEC_RESERVE(it->mounts, it->cap, it->n + 1))
		return &kp_enomem;
	it->mounts[it->n++] = mount;
	return NULL;
}

static struct kp_error *on_node(uint64_t node, void *arg)
{
	struct kp_mount_iter *it = arg;
	return add(it, node - kp_layout_off(it->ml, M_NODE));
}

// One pass over the namespace's mounts into it->mounts.
static struct kp_error *collect(struct kp_mount_iter *it)
{
	uint32_t count;
	it->n = 0;
	struct kp_error *err = kp_read_u32(it->k, it->ns + kp_layout_off(it->nl, N_COUNT), &count);
	if (err)
		return kp_error_prefix(err, "mnt_namespace at 0x%" PRIx64, it->ns);
	it->nr_mounts = count;
	if (!kp_layout_has(it->nl, N_LIST)) {
		if (!kp_layout_has(it->ml, M_NODE))
			return kp_error_create(KP_ERR_UNSUPPORTED, "struct mount has neither mnt_list nor mnt_node");
		return kp_lx_rb_walk(it->k, it->ns + kp_layout_off(it->nl, N_MOUNTS), it->nr_mounts + 1,
				     on_node, it);
	}
	struct kp_list_iter *list;
	if ((err = kp_lx_list_iter_create(it->k, it->ns + kp_layout_off(it->nl, N_LIST), 0, "mount list", &list)))
		return err;
	for (;;) {
		uint64_t node;
		bool done;
		if ((err = kp_list_iter_next(list, &node, &done)) || done ||
		    (err = add(it, node - kp_layout_off(it->ml, M_LIST))))
			break;
	}
	kp_list_iter_destroy(list);
	return err;
}

static struct kp_error *setup(struct kp_mount_iter *it, uint64_t task)
{
	static const struct kp_struct_spec *const specs[] = { &ns_spec, &mount_spec, &sb_spec, &fstype_spec,
							       &task_spec, &nsproxy_spec };
	const struct kp_struct_layout *l[6];
	struct kp_kernel *k = it->k;
	uint64_t nsproxy;
	struct kp_symbol sym;
	struct kp_error *err = kp_kernel_layouts(k, specs, 6, l);
	if (err)
		return err;
	it->nl = l[0], it->ml = l[1], it->sl = l[2], it->fl = l[3];
	if (!task) {
		if ((err = kp_task_by_pid(k, 1, &task))) {
			if (!kp_symbol_find(k, "init_task", &sym))
				return kp_error_prefix(err, "no init_task either");
			kp_error_destroy(err);
			task = sym.address;
		}
	}
	if ((err = kp_read_u64(k, task + kp_layout_off(l[4], 0), &nsproxy)))
		return kp_error_prefix(err, "task 0x%" PRIx64, task);
	if (!nsproxy)
		return kp_error_create(KP_ERR_INVALID, "task 0x%" PRIx64 " has no namespaces (it exited)", task);
	if ((err = kp_read_u64(k, nsproxy + kp_layout_off(l[5], 0), &it->ns)))
		return kp_error_prefix(err, "nsproxy at 0x%" PRIx64, nsproxy);
	if ((err = kp_lx_task_root(k, task, &it->root)))
		return err;
	if (!kp_kernel_enum_value(k, "T_SHARED", &it->t_shared))
		it->t_shared = 1;
	if (!kp_kernel_enum_value(k, "T_UNBINDABLE", &it->t_unbindable))
		it->t_unbindable = 2;
	if (kp_layout_has(it->ml, M_IDMAP) &&
	    kp_symbol_find(k, it->ml->m[M_IDMAP].alt == 0 ? "nop_mnt_idmap" : "init_user_ns", &sym))
		it->no_idmap = sym.address;
	return NULL;
}

struct kp_error *kp_mount_iter_create(struct kp_kernel *k, uint64_t task, struct kp_mount_iter **ret)
{
	struct kp_mount_iter *it = calloc(1, sizeof(*it));
	if (!it)
		return &kp_enomem;
	it->k = k;
	kp_lx_walk_init(&it->walk, k);
	struct kp_error *err = setup(it, task);
	// A live system mounts and unmounts while the list is read: passes.
	while (!err && (err = collect(it))) {
		if (err->code == KP_ERR_NOMEM || !kp_lx_walk_restart(&it->walk))
			break;
		kp_error_destroy(err);
		err = NULL;
	}
	if (err && it->n && err->code != KP_ERR_NOMEM) {
		kp_lx_walk_stop(&it->walk, err);	// what came before stands
		err = NULL;
	}
	if (err) {
		kp_mount_iter_destroy(it);
		return err;
	}
	*ret = it;
	return NULL;
}

// show_mnt_opts() after ro/rw, then idmapped (5.12).
static void mount_options(struct kp_mount_iter *it, uint64_t flags, uint64_t idmap)
{
	static const struct { uint32_t flag; const char *name; } opts[] = {
		{ MNT_NOSUID, ",nosuid" }, { MNT_NODEV, ",nodev" }, { MNT_NOEXEC, ",noexec" },
		{ MNT_NOATIME, ",noatime" }, { MNT_NODIRATIME, ",nodiratime" },
		{ MNT_RELATIME, ",relatime" }, { MNT_NOSYMFOLLOW, ",nosymfollow" },
	};
	char *p = it->options;
	p = stpcpy(p, flags & MNT_READONLY ? "ro" : "rw");
	for (size_t i = 0; i < sizeof(opts) / sizeof(opts[0]); i++)
		if (flags & opts[i].flag)
			p = stpcpy(p, opts[i].name);
	if (it->no_idmap && idmap && idmap != it->no_idmap)
		stpcpy(p, ",idmapped");
}

// show_sb_opts() after ro/rw: the generic super options.
static void super_options(struct kp_mount_iter *it, uint64_t flags)
{
	static const struct { uint32_t flag; const char *name; } opts[] = {
		{ SB_SYNCHRONOUS, ",sync" }, { SB_DIRSYNC, ",dirsync" }, { SB_MANDLOCK, ",mand" },
		{ SB_LAZYTIME, ",lazytime" },
	};
	char *p = stpcpy(it->super, flags & SB_RDONLY ? "ro" : "rw");
	for (size_t i = 0; i < sizeof(opts) / sizeof(opts[0]); i++)
		if (flags & opts[i].flag)
			p = stpcpy(p, opts[i].name);
}

// The optional fields: "shared:N", "master:N", "unbindable".
static struct kp_error *propagation(struct kp_mount_iter *it, const uint8_t *buf)
{
	uint64_t flags = kp_layout_u64(it->ml, buf, M_FLAGS);
	uint64_t t = kp_layout_u64(it->ml, buf, M_T_FLAGS);
	bool has_t = kp_layout_has(it->ml, M_T_FLAGS);
	bool shared = has_t ? t & it->t_shared : flags & MNT_SHARED;
	bool unbindable = has_t ? t & it->t_unbindable : flags & MNT_UNBINDABLE;
	uint64_t master = kp_layout_u64(it->ml, buf, M_MASTER);
	size_t size = sizeof(it->propagation), at = 0;
	it->propagation[0] = '\0';
	if (shared)
		at += (size_t)snprintf(it->propagation, size, " shared:%d", (int32_t)kp_layout_u64(it->ml, buf, M_GROUP));
	if (master) {
		uint32_t group;
		struct kp_error *err = kp_read_u32(it->k, master + kp_layout_off(it->ml, M_GROUP), &group);
		if (err)
			return kp_error_prefix(err, "the master of a mount, struct mount at 0x%" PRIx64, master);
		at += (size_t)snprintf(it->propagation + at, size - at, " master:%d", (int32_t)group);
	}
	if (unbindable && at < size)
		snprintf(it->propagation + at, size - at, " unbindable");
	it->m.propagation = it->propagation[0] ? it->propagation + 1 : "";
	return NULL;
}

// The file system's type name (".subtype" after it, as show_type()),
// device and super options.
static struct kp_error *super(struct kp_mount_iter *it, uint64_t sb)
{
	uint8_t buf[2048];
	char subtype[NAME_MAX + 1] = "";
	const struct kp_struct_layout *l = it->sl;
	struct kp_error *err = kp_kernel_read_struct(it->k, l, sb, buf, sizeof(buf));
	if (err)
		return err;
	uint32_t dev = (uint32_t)kp_layout_u64(l, buf, S_DEV);
	it->m.dev_major = dev >> 20;	// MINORBITS
	it->m.dev_minor = dev & 0xfffff;
	super_options(it, kp_layout_u64(l, buf, S_FLAGS));
	uint64_t type = kp_layout_u64(l, buf, S_TYPE), name, sub = kp_layout_u64(l, buf, S_SUBTYPE);
	if ((err = kp_read_u64(it->k, type + kp_layout_off(it->fl, 0), &name)) ||
	    (err = kp_read_cstr(it->k, name, it->fstype, NAME_MAX + 1)) ||
	    (sub && (err = kp_read_cstr(it->k, sub, subtype, sizeof(subtype)))))
		return kp_error_prefix(err, "the file system type of super_block 0x%" PRIx64, sb);
	if (subtype[0])
		strcat(strcat(it->fstype, "."), subtype);
	return NULL;
}

// The mount at it->mounts[i]: false (and nothing to say) when it is not
// under the task's root.
static struct kp_error *decode(struct kp_mount_iter *it, uint64_t at, bool *shown_ret)
{
	uint8_t buf[1024];
	const struct kp_struct_layout *l = it->ml;
	struct kp_kernel *k = it->k;
	bool reachable;
	struct kp_error *err = kp_kernel_read_struct(k, l, at, buf, sizeof(buf));
	if (err)
		return err;
	uint64_t root = kp_layout_u64(l, buf, M_ROOT), parent = kp_layout_u64(l, buf, M_PARENT);
	uint64_t vfsmnt = at + kp_layout_off(l, M_MNT);
	if ((err = kp_lx_path_root(k, &it->root, vfsmnt, root, it->point, sizeof(it->point), &reachable)))
		return kp_error_prefix(err, "the mount point of struct mount at 0x%" PRIx64, at);
	*shown_ret = reachable;
	if (!reachable)
		return NULL;
	uint32_t parent_id;
	if ((err = kp_read_u32(k, parent + kp_layout_off(l, M_ID), &parent_id)))
		return kp_error_prefix(err, "the parent of struct mount at 0x%" PRIx64, at);
	uint64_t devname = kp_layout_u64(l, buf, M_DEVNAME);
	strcpy(it->source, "none");
	if ((err = kp_lx_dentry_path(k, root, it->root_path, sizeof(it->root_path))) ||
	    (devname && (err = kp_read_cstr(k, devname, it->source, sizeof(it->source)))) ||
	    (err = super(it, kp_layout_u64(l, buf, M_SB))) || (err = propagation(it, buf)))
		return kp_error_prefix(err, "struct mount at 0x%" PRIx64, at);
	mount_options(it, kp_layout_u64(l, buf, M_FLAGS), kp_layout_u64(l, buf, M_IDMAP));
	struct kp_mount *m = &it->m;
	m->address = at;
	m->id = (int32_t)kp_layout_u64(l, buf, M_ID);
	m->parent_id = (int32_t)parent_id;
	m->root = it->root_path;
	m->mount_point = it->point;
	m->options = it->options;
	m->fstype = it->fstype;
	m->source = it->source;
	m->super_options = it->super;
	return NULL;
}

struct kp_error *kp_mount_iter_next(struct kp_mount_iter *it, const struct kp_mount **ret)
{
	while (it->next < it->n) {
		bool shown = false;
		struct kp_error *err = decode(it, it->mounts[it->next++], &shown);
		if (err) {
			if ((err = kp_lx_walk_unreadable(&it->walk, err)))
				return err;
			continue;
		}
		if (shown) {
			*ret = &it->m;
			return NULL;
		}
	}
	*ret = NULL;
	return kp_lx_walk_finish(&it->walk);
}

void kp_mount_iter_status(const struct kp_mount_iter *it, struct kp_walk_status *ret)
{
	kp_lx_walk_status(&it->walk, ret);
}

void kp_mount_iter_destroy(struct kp_mount_iter *it)
{
	if (!it)
		return;
	kp_lx_walk_deinit(&it->walk);
	free(it->mounts);
	free(it);
}
