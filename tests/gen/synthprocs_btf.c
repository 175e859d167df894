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

void skp_btf_task_ptrs(struct btf *b, struct skp_task_ptrs *ret)
{
	static const char *const names[] = { "mm_struct", "files_struct", "fs_struct", "nsproxy", "cred" };
	int ids[5];
	for (int i = 0; i < 5; i++)
		ids[i] = must(btf__add_ptr(b, must(btf__add_fwd(b, names[i], BTF_FWD_STRUCT))));
	*ret = (struct skp_task_ptrs){ ids[0], ids[1], ids[2], ids[3], ids[4] };
}

void skp_btf_task_fields(struct btf *b, const struct skp_task_ptrs *p)
{
	must(btf__add_field(b, "mm", p->mm, SKP_T_MM * 8, 0));
	must(btf__add_field(b, "files", p->files, SKP_T_FILES * 8, 0));
	must(btf__add_field(b, "fs", p->fs, SKP_T_FS * 8, 0));
	must(btf__add_field(b, "nsproxy", p->nsproxy, SKP_T_NSPROXY * 8, 0));
	must(btf__add_field(b, "cred", p->cred, SKP_T_CRED * 8, 0));
	must(btf__add_field(b, "real_cred", p->cred, SKP_T_REAL_CRED * 8, 0));
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
	strct(c, "mm_struct", 0x80);
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

static void btf_dcache(struct ctx *c)
{
	const struct skp_btf_base *t = c->t;
	int vfsmount = ptr(c, "vfsmount"), dentry = ptr(c, "dentry"), inode = ptr(c, "inode");
	int sb = ptr(c, "super_block"), bl = ptr(c, "hlist_bl_node"), fstype = ptr(c, "file_system_type");
	int pprev = must(btf__add_ptr(c->b, bl));
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
	strct(c, "inode", 0x20);
	field(c, "i_mode", umode, SKP_INODE_MODE);
	field(c, "i_uid", c->kuid, SKP_INODE_UID);
	field(c, "i_ino", t->t_ulong, SKP_INODE_INO);
	field(c, "i_sb", sb, 0x10);
	strct(c, "super_block", 0x40);
	field(c, "s_dev", t->t_uint, 0);
	field(c, "s_flags", t->t_ulong, 8);
	field(c, "s_magic", t->t_ulong, 0x10);
	field(c, "s_type", fstype, 0x18);
	field(c, "s_subtype", c->cptr, 0x20);
	field(c, "s_root", dentry, 0x28);
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
	int node = strct(c, "rb_node", 0x18);
	field(c, "__rb_parent_color", t->t_ulong, 0);
	field(c, "rb_right", rb, SKP_RB_RIGHT);
	field(c, "rb_left", rb, SKP_RB_LEFT);
	int root = strct(c, "rb_root", 8);
	field(c, "rb_node", rb, 0);
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
	strct(c, "mnt_namespace", 0x20);
	if (procs == SK_PROCS_RBTREE) {
		field(c, "mounts", root, 0);
		field(c, "nr_mounts", t->t_uint, SKP_NS_COUNT_RB);
	} else {
		field(c, "list", t->list_head, 0);
		field(c, "mounts", t->t_uint, SKP_NS_COUNT_LIST);
	}
}

static void btf_task_parts(struct ctx *c)
{
	const struct skp_btf_base *t = c->t;
	int path = must(btf__find_by_name_kind(c->b, "path", BTF_KIND_STRUCT));
	int fdt = ptr(c, "fdtable"), ns = ptr(c, "mnt_namespace");
	int fds = must(btf__add_ptr(c->b, ptr(c, "file")));
	int bits = must(btf__add_ptr(c->b, t->t_ulong));
	strct(c, "nsproxy", 0x10);
	field(c, "count", c->atomic, 0);
	field(c, "mnt_ns", ns, 8);
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
	strct(c, "cred", 0x40);
	field(c, "usage", c->atomic, SKP_CRED_USAGE);
	for (uint32_t i = 0; i < 8; i++)
		field(c, ids[i], i % 2 ? c->kgid : c->kuid, SKP_CRED_UID + 4 * i);
}

void skp_btf_types(struct btf *b, enum sk_procs procs, const struct skp_btf_base *t)
{
	struct ctx c = { .b = b, .t = t };
	btf_base(&c);
	btf_maple(&c);
	btf_mm(&c);
	btf_dcache(&c);
	btf_mounts(&c, procs);
	btf_task_parts(&c);
}
