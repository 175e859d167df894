// SPDX-License-Identifier: MIT
// The BTF of the synthetic kernel's processes (synthprocs.h): the structs
// the process walkers read, at this generator's offsets.
#include <string.h>

#include <bpf/btf.h>
#include <linux/btf.h>

#include "synthprocs.h"

static int must(int id)
{
	if (id < 0)
		sk_die("building the processes' BTF");
	return id;
}

// Fields must directly follow their struct: every type a struct's fields
// use is made before the struct.
struct ctx {
	struct btf *b;
	const struct skp_btf_base *t;
	int u8, u16, ll, vptr, cptr, kuid, kgid, atomic;
	struct {
		const char *name;
		int id;
	} ptrs[48];
	int nptrs;
};

// struct name * (a forward declaration's pointer, one per name).
static int ptr(struct ctx *c, const char *name)
{
	for (int i = 0; i < c->nptrs; i++)
		if (!strcmp(c->ptrs[i].name, name))
			return c->ptrs[i].id;
	if (c->nptrs == (int)(sizeof(c->ptrs) / sizeof(c->ptrs[0])))
		sk_die("too many pointer types");
	int id = must(btf__add_ptr(c->b, must(btf__add_fwd(c->b, name, BTF_FWD_STRUCT))));
	c->ptrs[c->nptrs].name = name;
	c->ptrs[c->nptrs++].id = id;
	return id;
}

static int array(struct ctx *c, int elem, uint32_t n)
{
	return must(btf__add_array(c->b, c->t->t_int, elem, n));
}

static int strct(struct ctx *c, const char *name, uint32_t size)
{
	return must(btf__add_struct(c->b, name, size));
}

static void field(struct ctx *c, const char *name, int type, uint32_t byte)
{
	must(btf__add_field(c->b, name, type, byte * 8, 0));
}

// typedef struct { TYPE MEMBER; } NAME;
static int wrapped(struct ctx *c, const char *name, const char *member, int type, uint32_t size)
{
	int s = strct(c, NULL, size);
	field(c, member, type, 0);
	(void)s;
	return must(btf__add_typedef(c->b, name, s));
}

void skp_btf_task_ptrs(struct btf *b, int t_int, int t_uint, int t_ulong, struct skp_task_ptrs *ret)
{
	static const char *const names[] = { "mm_struct", "files_struct", "fs_struct", "nsproxy", "cred",
					     "pid", "sighand_struct", "css_set" };
	int ids[8];
	for (int i = 0; i < 8; i++)
		ids[i] = must(btf__add_ptr(b, must(btf__add_fwd(b, names[i], BTF_FWD_STRUCT))));
	*ret = (struct skp_task_ptrs){ t_uint, t_ulong, ids[0], ids[1], ids[2], ids[3], ids[4], ids[5],
				       ids[6], ids[7], 0, 0, 0 };
	// sigset_t (one unsigned long: _NSIG 64), struct sigpending, pids[].
	int sig = must(btf__add_array(b, t_int, t_ulong, 1));
	int set = must(btf__add_struct(b, NULL, 8));
	must(btf__add_field(b, "sig", sig, 0, 0));
	ret->sigset = must(btf__add_typedef(b, "sigset_t", set));
	int lh = must(btf__add_array(b, t_int, must(btf__add_ptr(b, 0)), 2));	// list_head's two pointers
	ret->sigpending = must(btf__add_struct(b, "sigpending", 0x18));
	must(btf__add_field(b, "list", lh, 0, 0));
	must(btf__add_field(b, "signal", ret->sigset, 0x10 * 8, 0));
	ret->pids = must(btf__add_array(b, t_int, ret->pid, 4));	// PIDTYPE_MAX
}

static void field_at(struct btf *b, const char *name, int type, uint32_t byte)
{
	must(btf__add_field(b, name, type, byte * 8, 0));
}

void skp_btf_task_fields(struct btf *b, const struct skp_task_ptrs *p)
{
	field_at(b, "ptrace", p->t_uint, SKP_T_PTRACE);
	field_at(b, "thread_pid", p->pid, SKP_T_THREAD_PID);
	field_at(b, "nvcsw", p->t_ulong, SKP_T_NVCSW);
	field_at(b, "nivcsw", p->t_ulong, SKP_T_NIVCSW);
	field_at(b, "mm", p->mm, SKP_T_MM);
	field_at(b, "files", p->files, SKP_T_FILES);
	field_at(b, "fs", p->fs, SKP_T_FS);
	field_at(b, "nsproxy", p->nsproxy, SKP_T_NSPROXY);
	field_at(b, "cred", p->cred, SKP_T_CRED);
	field_at(b, "real_cred", p->cred, SKP_T_REAL_CRED);
	field_at(b, "atomic_flags", p->t_ulong, SKP_T_ATOMIC_FLAGS);
	field_at(b, "pending", p->sigpending, SKP_T_PENDING);
	field_at(b, "blocked", p->sigset, SKP_T_BLOCKED);
	field_at(b, "sighand", p->sighand, SKP_T_SIGHAND);
	field_at(b, "cgroups", p->css_set, SKP_T_CGROUPS);
}

void skp_btf_signal_fields(struct btf *b, const struct skp_task_ptrs *p)
{
	field_at(b, "shared_pending", p->sigpending, SKP_SIGNAL_SHARED - 0x10);
	field_at(b, "pids", p->pids, SKP_SIGNAL_PIDS);
}

static void btf_base(struct ctx *c)
{
	struct btf *b = c->b;
	c->u8 = must(btf__add_int(b, "unsigned char", 1, 0));
	c->u16 = must(btf__add_int(b, "short unsigned int", 2, 0));
	c->ll = must(btf__add_int(b, "long long int", 8, BTF_INT_SIGNED));
	c->vptr = must(btf__add_ptr(b, 0));
	c->cptr = must(btf__add_ptr(b, must(btf__add_const(b, c->t->t_char))));
	c->kuid = wrapped(c, "kuid_t", "val", c->t->t_uint, 4);
	c->kgid = wrapped(c, "kgid_t", "val", c->t->t_uint, 4);
	c->atomic = wrapped(c, "atomic_t", "counter", c->t->t_int, 4);
}

// lib/maple_tree.c's nodes on 64-bit (include/linux/maple_tree.h): 256
// bytes, MAPLE_RANGE64_SLOTS 16, MAPLE_ARANGE64_SLOTS 10.
static void btf_maple(struct ctx *c)
{
	const struct skp_btf_base *t = c->t;
	int tree = strct(c, "maple_tree", 16);
	field(c, "ma_lock", t->t_uint, 0);
	field(c, "ma_flags", t->t_uint, 4);
	field(c, "ma_root", c->vptr, SKP_MT_ROOT);
	int meta = strct(c, "maple_metadata", 2);
	field(c, "end", c->u8, 0);
	field(c, "gap", c->u8, 1);
	int pnode = ptr(c, "maple_pnode");
	int piv15 = array(c, t->t_ulong, 15), slot16 = array(c, c->vptr, 16);
	int piv9 = array(c, t->t_ulong, 9), slot10 = array(c, c->vptr, 10);
	int gap10 = array(c, t->t_ulong, 10);
	int r64 = strct(c, "maple_range_64", 256);
	field(c, "parent", pnode, 0);
	field(c, "pivot", piv15, SKP_R64_PIVOT);
	field(c, "slot", slot16, SKP_R64_SLOT);
	int a64 = strct(c, "maple_arange_64", 256);
	field(c, "parent", pnode, 0);
	field(c, "pivot", piv9, SKP_A64_PIVOT);
	field(c, "slot", slot10, SKP_A64_SLOT);
	field(c, "gap", gap10, SKP_A64_GAP);
	field(c, "meta", meta, SKP_A64_META);
	int un = must(btf__add_union(c->b, NULL, 256));
	field(c, "mr64", r64, 0);
	field(c, "ma64", a64, 0);
	strct(c, "maple_node", 256);
	field(c, NULL, un, 0);
	(void)tree;
}

static void btf_mm(struct ctx *c)
{
	const struct skp_btf_base *t = c->t;
	int tree = must(btf__find_by_name_kind(c->b, "maple_tree", BTF_KIND_STRUCT));
	int pgd = must(btf__add_ptr(c->b, wrapped(c, "pgd_t", "pgd", t->t_ulong, 8)));
	int file = ptr(c, "file"), mm = ptr(c, "mm_struct"), vma = ptr(c, "vm_area_struct");
	int ops = ptr(c, "vm_operations_struct");
	// The counters' indices: an anonymous enum, as include/linux/mm_types_task.h.
	int counters = must(btf__add_enum(c->b, NULL, 4));
	static const char *const names[] = { "MM_FILEPAGES", "MM_ANONPAGES", "MM_SWAPENTS", "MM_SHMEMPAGES",
					     "NR_MM_COUNTERS" };
	for (int i = 0; i < 5; i++)
		must(btf__add_enum_value(c->b, names[i], i));
	(void)counters;
	int count = must(btf__add_array(c->b, t->t_int, t->t_long, 4));
	int rss_stat = strct(c, "mm_rss_stat", 0x20);
	field(c, "count", count, 0);
	strct(c, "mm_struct", SKP_MM_SIZE);
	field(c, "mm_mt", tree, SKP_MM_MT);
	field(c, "pgd", pgd, SKP_MM_PGD);
	field(c, "map_count", t->t_int, SKP_MM_MAP_COUNT);
	static const struct { const char *name; uint32_t at; } longs[] = {
		{ "start_brk", SKP_MM_START_BRK }, { "brk", SKP_MM_BRK },
		{ "start_stack", SKP_MM_START_STACK }, { "arg_start", SKP_MM_ARG_START },
		{ "arg_end", SKP_MM_ARG_END }, { "env_start", SKP_MM_ENV_START },
		{ "env_end", SKP_MM_ENV_END },
	};
	for (size_t i = 0; i < sizeof(longs) / sizeof(longs[0]); i++)
		field(c, longs[i].name, t->t_ulong, longs[i].at);
	field(c, "exe_file", file, SKP_MM_EXE_FILE);
	static const struct { const char *name; uint32_t at; } sizes[] = {
		{ "total_vm", SKP_MM_TOTAL_VM }, { "locked_vm", SKP_MM_LOCKED_VM },
		{ "pinned_vm", SKP_MM_PINNED_VM }, { "data_vm", SKP_MM_DATA_VM },
		{ "exec_vm", SKP_MM_EXEC_VM }, { "stack_vm", SKP_MM_STACK_VM },
		{ "hiwater_rss", SKP_MM_HIWATER_RSS }, { "hiwater_vm", SKP_MM_HIWATER_VM },
		{ "start_code", SKP_MM_START_CODE }, { "end_code", SKP_MM_END_CODE },
		{ "pgtables_bytes", SKP_MM_PGTABLES },
	};
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		field(c, sizes[i].name, t->t_ulong, sizes[i].at);
	field(c, "rss_stat", rss_stat, SKP_MM_RSS_STAT);
	strct(c, "vm_area_struct", 0x40);
	field(c, "vm_start", t->t_ulong, SKP_VMA_START);
	field(c, "vm_end", t->t_ulong, SKP_VMA_END);
	field(c, "__vm_flags", t->t_ulong, SKP_VMA_FLAGS);	// 6.3+
	field(c, "vm_pgoff", t->t_ulong, SKP_VMA_PGOFF);
	field(c, "vm_file", file, SKP_VMA_FILE);
	field(c, "vm_ops", ops, SKP_VMA_OPS);
	field(c, "vm_private_data", c->vptr, SKP_VMA_PRIVATE);
	field(c, "vm_mm", mm, 0x38);
	int proto = must(btf__add_func_proto(c->b, c->cptr));
	must(btf__add_func_param(c->b, "vma", vma));
	int fn = must(btf__add_ptr(c->b, proto));
	strct(c, "vm_operations_struct", 0x10);
	field(c, "name", fn, 0);
	strct(c, "vm_special_mapping", 0x10);
	field(c, "name", c->cptr, 0);
	field(c, "pages", c->vptr, 8);
}

static void btf_dcache(struct ctx *c, bool sys)
{
	const struct skp_btf_base *t = c->t;
	int vfsmount = ptr(c, "vfsmount"), dentry = ptr(c, "dentry"), inode = ptr(c, "inode");
	int sb = ptr(c, "super_block"), bl = ptr(c, "hlist_bl_node"), fstype = ptr(c, "file_system_type");
	int pprev = must(btf__add_ptr(c->b, bl)), mapping = sys ? ptr(c, "address_space") : 0;
	int umode = must(btf__add_typedef(c->b, "umode_t", c->u16));
	int path = strct(c, "path", 0x10);
	field(c, "mnt", vfsmount, 0);
	field(c, "dentry", dentry, 8);
	int qstr = strct(c, "qstr", 0x10);
	field(c, "hash", t->t_uint, 0);
	field(c, "len", t->t_uint, 4);
	field(c, "name", c->cptr, 8);
	int hbl = strct(c, "hlist_bl_node", 0x10);
	field(c, "next", bl, 0);
	field(c, "pprev", pprev, 8);
	strct(c, "dentry", 0x40);
	field(c, "d_hash", hbl, 0);
	field(c, "d_parent", dentry, 0x10);
	field(c, "d_name", qstr, 0x18);
	field(c, "d_inode", inode, 0x28);
	field(c, "d_sb", sb, 0x30);
	// The system's inodes are 0x40 bytes, its socket_alloc holds one.
	strct(c, "inode", sys ? 0x40 : 0x20);
	field(c, "i_mode", umode, SKP_INODE_MODE);
	field(c, "i_uid", c->kuid, SKP_INODE_UID);
	field(c, "i_ino", t->t_ulong, SKP_INODE_INO);
	field(c, "i_sb", sb, 0x10);
	if (sys) {
		field(c, "i_sb_list", t->list_head, 0x18);
		field(c, "i_mapping", mapping, 0x28);
	}
	strct(c, "super_block", 0x40);
	field(c, "s_dev", t->t_uint, 0);
	field(c, "s_flags", t->t_ulong, 8);
	field(c, "s_magic", t->t_ulong, 0x10);
	field(c, "s_type", fstype, 0x18);
	field(c, "s_subtype", c->cptr, 0x20);
	field(c, "s_root", dentry, 0x28);
	if (sys)
		field(c, "s_inodes", t->list_head, 0x30);
	strct(c, "file_system_type", 0x10);
	field(c, "name", c->cptr, 0);
	field(c, "fs_flags", t->t_int, 8);
	int inode_p = inode;
	strct(c, "file", 0x40);
	field(c, "f_flags", t->t_uint, 0);
	field(c, "f_pos", c->ll, 8);
	field(c, "f_path", path, 0x10);
	field(c, "f_inode", inode_p, 0x20);
}

// struct mount (fs/mount.h) and its namespace: the namespace's list up to
// 6.7, its rbtree by mnt_id_unique since (2eea9ce4310d).
static void btf_mounts(struct ctx *c, enum sk_procs procs)
{
	const struct skp_btf_base *t = c->t;
	int dentry = ptr(c, "dentry"), sb = ptr(c, "super_block"), mount = ptr(c, "mount");
	int rb = ptr(c, "rb_node");
	int vfsmount = strct(c, "vfsmount", 0x20);
	field(c, "mnt_root", dentry, 0);
	field(c, "mnt_sb", sb, 8);
	field(c, "mnt_flags", t->t_int, 0x10);
	// The system's task_struct made it already.
	int node = btf__find_by_name_kind(c->b, "rb_node", BTF_KIND_STRUCT);
	if (node < 0) {
		node = strct(c, "rb_node", 0x18);
		field(c, "__rb_parent_color", t->t_ulong, 0);
		field(c, "rb_right", rb, SKP_RB_RIGHT);
		field(c, "rb_left", rb, SKP_RB_LEFT);
	}
	int root = strct(c, "rb_root", 8);
	field(c, "rb_node", rb, 0);
	int ns = must(btf__find_by_name_kind(c->b, "ns_common", BTF_KIND_STRUCT));
	strct(c, "mount", 0x80);
	field(c, "mnt_parent", mount, 0);
	field(c, "mnt_mountpoint", dentry, 8);
	field(c, "mnt", vfsmount, SKP_MOUNT_MNT);
	field(c, "mnt_id", t->t_int, 0x30);
	field(c, "mnt_group_id", t->t_int, 0x34);
	field(c, "mnt_devname", c->cptr, 0x38);
	field(c, "mnt_master", mount, 0x40);
	field(c, "mnt_list", t->list_head, SKP_MOUNT_LIST);
	if (procs == SK_PROCS_RBTREE)
		field(c, "mnt_node", node, SKP_MOUNT_NODE);
	strct(c, "mnt_namespace", 0x38);
	if (procs == SK_PROCS_RBTREE) {
		field(c, "mounts", root, 0);
		field(c, "nr_mounts", t->t_uint, SKP_NS_COUNT_RB);
	} else {
		field(c, "list", t->list_head, 0);
		field(c, "mounts", t->t_uint, SKP_NS_COUNT_LIST);
	}
	field(c, "ns", ns, SKP_MNT_NS_NS);
}

// struct ns_common, inside every namespace: its inum is /proc/PID/ns's.
static void btf_ns_common(struct ctx *c)
{
	strct(c, "ns_common", 0x18);
	field(c, "stashed", c->t->t_ulong, 0);
	field(c, "ops", c->vptr, 8);
	field(c, "inum", c->t->t_uint, SKP_NS_INUM);
	field(c, "count", c->t->t_uint, 0x14);
}

static void btf_task_parts(struct ctx *c)
{
	const struct skp_btf_base *t = c->t;
	int path = must(btf__find_by_name_kind(c->b, "path", BTF_KIND_STRUCT));
	int fdt = ptr(c, "fdtable"), ns = ptr(c, "mnt_namespace");
	int fds = must(btf__add_ptr(c->b, ptr(c, "file")));
	int bits = must(btf__add_ptr(c->b, t->t_ulong));
	static const struct { const char *member, *type; } nss[] = {
		{ "uts_ns", "uts_namespace" }, { "ipc_ns", "ipc_namespace" },
		{ "pid_ns_for_children", "pid_namespace" }, { "net_ns", "net" },
		{ "cgroup_ns", "cgroup_namespace" },
	};
	int nsp[5];
	for (int i = 0; i < 5; i++)
		nsp[i] = ptr(c, nss[i].type);
	strct(c, "nsproxy", 0x38);
	field(c, "count", c->atomic, 0);
	field(c, "mnt_ns", ns, 8);
	for (uint32_t i = 0; i < 5; i++)
		field(c, nss[i].member, nsp[i], 0x10 + 8 * i);
	strct(c, "fs_struct", 0x28);
	field(c, "umask", t->t_int, 0);
	field(c, "root", path, 8);
	field(c, "pwd", path, 0x18);
	strct(c, "files_struct", 0x10);
	field(c, "count", c->atomic, 0);
	field(c, "fdt", fdt, 8);
	strct(c, "fdtable", 0x20);
	field(c, "max_fds", t->t_uint, SKP_FDT_MAX);
	field(c, "fd", fds, SKP_FDT_FD);
	field(c, "open_fds", bits, SKP_FDT_OPEN);
	static const char *const ids[] = { "uid", "gid", "suid", "sgid", "euid", "egid", "fsuid", "fsgid" };
	static const char *const caps[] = { "cap_inheritable", "cap_permitted", "cap_effective", "cap_bset",
					    "cap_ambient" };
	int cap = wrapped(c, "kernel_cap_t", "val", t->t_ulong, 8);	// 6.3+
	int groups = ptr(c, "group_info"), user_ns = ptr(c, "user_namespace");
	strct(c, "cred", 0x60);
	field(c, "usage", c->atomic, SKP_CRED_USAGE);
	for (uint32_t i = 0; i < 8; i++)
		field(c, ids[i], i % 2 ? c->kgid : c->kuid, SKP_CRED_UID + 4 * i);
	for (uint32_t i = 0; i < 5; i++)
		field(c, caps[i], cap, SKP_CRED_CAPS + 8 * i);
	field(c, "group_info", groups, SKP_CRED_GROUPS);
	field(c, "user_ns", user_ns, SKP_CRED_USER_NS);
}

// What /proc/PID/status reads besides: namespaces (net, ipc and time
// left out: optional), struct pid, groups, signal handlers, cgroups.
static void btf_status(struct ctx *c)
{
	const struct skp_btf_base *t = c->t;
	int ns = must(btf__find_by_name_kind(c->b, "ns_common", BTF_KIND_STRUCT));
	static const char *const names[] = { "uts_namespace", "user_namespace", "pid_namespace",
					     "cgroup_namespace" };
	for (int i = 0; i < 4; i++) {
		strct(c, names[i], 0x20);
		field(c, "ns", ns, 0);
	}
	int pid_ns = ptr(c, "pid_namespace");
	int upid = strct(c, "upid", 0x10);
	field(c, "nr", t->t_int, 0);
	field(c, "ns", pid_ns, 8);
	int numbers = array(c, upid, 1);
	strct(c, "pid", 0x20);
	field(c, "count", c->atomic, 0);
	field(c, "level", t->t_uint, SKP_PID_LEVEL);
	field(c, "numbers", numbers, SKP_PID_NUMBERS);
	int gids = array(c, c->kgid, 0);
	strct(c, "group_info", 8);
	field(c, "usage", c->atomic, 0);
	field(c, "ngroups", t->t_int, 4);
	field(c, "gid", gids, 8);
	int sigset = must(btf__find_by_name_kind(c->b, "sigset_t", BTF_KIND_TYPEDEF));
	int proto = must(btf__add_func_proto(c->b, 0));
	must(btf__add_func_param(c->b, NULL, t->t_int));
	int handler = must(btf__add_typedef(c->b, "__sighandler_t", must(btf__add_ptr(c->b, proto))));
	int sigaction = strct(c, "sigaction", 0x20);
	field(c, "sa_handler", handler, 0);
	field(c, "sa_flags", t->t_ulong, 8);
	field(c, "sa_restorer", c->vptr, 0x10);
	field(c, "sa_mask", sigset, 0x18);
	int ksig = strct(c, "k_sigaction", 0x20);
	field(c, "sa", sigaction, 0);
	int actions = array(c, ksig, 64);
	strct(c, "sighand_struct", 8 + 64 * 0x20);
	field(c, "count", c->atomic, 0);
	field(c, "action", actions, 8);
	int cgroup = ptr(c, "cgroup"), kn = ptr(c, "kernfs_node");
	strct(c, "css_set", 0x10);
	field(c, "dfl_cgrp", cgroup, 0);
	strct(c, "cgroup", 0x10);
	field(c, "kn", kn, 0);
	strct(c, "kernfs_node", 0x20);
	field(c, "name", c->cptr, 0);
	field(c, "parent", kn, 8);	// __parent since 6.15
}

void skp_btf_types(struct btf *b, enum sk_procs procs, bool sys, const struct skp_btf_base *t)
{
	struct ctx c = { .b = b, .t = t };
	btf_base(&c);
	btf_maple(&c);
	btf_mm(&c);
	btf_dcache(&c, sys);
	btf_ns_common(&c);
	btf_mounts(&c, procs);
	btf_task_parts(&c);
	btf_status(&c);
}
