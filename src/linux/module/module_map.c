// SPDX-License-Identifier: MIT
// Every module the kernel knows of, from three places that must agree:
//
//   the modules list     `modules` (what /proc/modules and lsmod show; a
//                        rootkit unlinks itself from it: Diamorphine,
//                        Reptile, KoviD)
//   mod_tree             the latched rb-tree of module memory the kernel
//                        uses for address lookups (__module_address(),
//                        CONFIG_MODULES_TREE_LOOKUP): struct mod_tree_root
//                        { struct latch_tree_root root; ... }, nodes struct
//                        mod_tree_node { struct module *mod; struct
//                        latch_tree_node node; } in tree[0]; one node per
//                        memory region (core/init layout up to 6.3,
//                        mem[type] since 6.4)
//   sysfs                `module_kset` (/sys/module): struct module_kobject
//                        { struct kobject kobj; struct module *mod; ... }
//                        linked through kobj.entry; built-in modules with
//                        parameters have one too, with mod NULL
//
// and the memory each occupies (the regions of kp_lx_module_layout), so
// that any pointer can be named by the module that holds it, listed or not.
// The symbols of a module missing from the list are read from its own
// struct module (module_symbols.c), so that its functions have names.
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/layout.h"
#include "linux/lib/list.h"
#include "linux/module/module.h"
#include "symbols/symtab.h"
#include "util/error.h"
#include "util/le.h"
#include "util/vec.h"

// An rb-tree of n nodes is at most 2*log2(n + 1) deep: 64 covers any tree
// that fits in memory; deeper is corrupt.
#define MAX_TREE_DEPTH 64
#define MAX_TREE_NODES (KP_LX_MAX_MODULES * 8u)

// The latched rb-tree: mod_tree.root.tree[0] and its nodes.
enum { TR_ROOT, TR_N_ROOT };
static const struct kp_member_spec root_members[TR_N_ROOT] = { [TR_ROOT] = { .name = "root.tree[0].rb_node" } };
static const struct kp_struct_spec root_spec = KP_STRUCT_SPEC("struct mod_tree_root", root_members);
enum { RB_LEFT, RB_RIGHT, RB_N };
static const struct kp_member_spec rb_members[RB_N] = { [RB_LEFT] = { .name = "rb_left" }, [RB_RIGHT] = { .name = "rb_right" } };
static const struct kp_struct_spec rb_spec = KP_STRUCT_SPEC("struct rb_node", rb_members);
enum { TN_NODE, TN_MOD, TN_N };
static const struct kp_member_spec tnode_members[TN_N] = {
	[TN_NODE] = { .name = "node.node[0]" }, [TN_MOD] = { .name = "mod" },
};
static const struct kp_struct_spec tnode_spec = KP_STRUCT_SPEC("struct mod_tree_node", tnode_members);
// sysfs: module_kset's list of kobjects, each in a struct module_kobject.
static const struct kp_member_spec kset_members[] = { { .name = "list" } };
static const struct kp_struct_spec kset_spec = KP_STRUCT_SPEC("struct kset", kset_members);
static const struct kp_member_spec kobject_members[] = { { .name = "entry" } };
static const struct kp_struct_spec kobject_spec = KP_STRUCT_SPEC("struct kobject", kobject_members);
enum { MK_KOBJ, MK_MOD, MK_N };
static const struct kp_member_spec mkobj_members[MK_N] = { [MK_KOBJ] = { .name = "kobj" }, [MK_MOD] = { .name = "mod" } };
static const struct kp_struct_spec mkobj_spec = KP_STRUCT_SPEC("struct module_kobject", mkobj_members);

static struct kp_lx_mod *find_mod(struct kp_lx_module_map *m, uint64_t address)
{
	for (size_t i = 0; i < m->n; i++)
		if (m->mods[i].address == address)
			return &m->mods[i];
	return NULL;
}

// The entry for the struct module at address, read on first sight.
static struct kp_error *get_mod(struct kp_kernel *k, struct kp_lx_module_map *m,
				const struct kp_lx_module_layout *l, uint64_t address,
				struct kp_lx_mod **ret)
{
	struct kp_lx_mod *e = find_mod(m, address);
	if (e) {
		*ret = e;
		return NULL;
	}
	if (m->n >= KP_LX_MAX_MODULES)
		return kp_error_create(KP_ERR_LOOP, "more than %u modules (corrupt?)", KP_LX_MAX_MODULES);
	const struct kp_struct_layout *ml = l->mod;
	uint8_t buf[4096];
	if (kp_layout_span(ml) > sizeof(buf))
		return kp_error_create(KP_ERR_UNSUPPORTED, "struct module spans %" PRIu64 " bytes",
				       kp_layout_span(ml));
	struct kp_error *err = kp_read(k, KP_VIRT, address + ml->lo, buf, kp_layout_span(ml));
	if (err)
		return kp_error_prefix(err, "reading struct module at 0x%" PRIx64, address);
	if (!KP_VEC_RESERVE(m->mods, m->cap, m->n + 1))
		return &kp_enomem;
	e = &m->mods[m->n++];
	memset(e, 0, sizeof(*e));
	e->address = address;
	uint64_t name_size = ml->m[KP_LX_M_NAME].size;
	size_t nl = name_size < sizeof(e->name) ? name_size : sizeof(e->name) - 1;
	memcpy(e->name, kp_layout_at(ml, buf, KP_LX_M_NAME), nl);
	e->name[nl] = '\0';
	e->state = (int32_t)kp_layout_u64(ml, buf, KP_LX_M_STATE);
	for (unsigned i = 0; i < l->nregions; i++) {
		const uint8_t *b = kp_layout_ptr(ml, buf, l->region_base[i], 8);
		const uint8_t *sz = kp_layout_ptr(ml, buf, l->region_size[i], 4);
		uint64_t base = b ? kp_le64(b) : 0;
		uint32_t size = sz ? kp_le32(sz) : 0;
		if (base && size)
			e->ranges[e->nranges++] = (struct kp_lx_range){ base, base + size };
	}
	*ret = e;
	return NULL;
}

static struct kp_error *from_list(struct kp_kernel *k, struct kp_lx_module_map *m,
				  const struct kp_lx_module_layout *l)
{
	struct kp_symbol head;
	if (!kp_symbol_find(k, "modules", &head))
		return kp_error_create(KP_ERR_NOT_FOUND, "no symbol 'modules'");
	struct kp_list_iter *it;
	struct kp_error *err = kp_lx_list_iter_create(k, head.address, 0, "module list", &it);
	if (err)
		return err;
	for (;;) {
		uint64_t node;
		bool done;
		struct kp_lx_mod *e;
		if ((err = kp_list_iter_next(it, &node, &done)) || done)
			break;
		if ((err = get_mod(k, m, l, node - kp_layout_off(l->mod, KP_LX_M_LIST), &e)))
			break;
		e->in_list = true;
	}
	kp_list_iter_destroy(it);
	return err;
}

// In-order walk of tree[0] of mod_tree.
static struct kp_error *from_tree(struct kp_kernel *k, struct kp_lx_module_map *m,
				  const struct kp_lx_module_layout *l)
{
	static const struct kp_struct_spec *const specs[] = { &root_spec, &rb_spec, &tnode_spec };
	const struct kp_struct_layout *tl[3];
	struct kp_symbol sym;
	uint64_t first;
	struct kp_error *err;
	if (!kp_symbol_find(k, "mod_tree", &sym))
		return kp_error_create(KP_ERR_NOT_FOUND, "no symbol 'mod_tree' (CONFIG_MODULES_TREE_LOOKUP or kallsyms of variables missing)");
	if ((err = kp_kernel_layouts(k, specs, 3, tl)))
		return err;
	uint64_t root = kp_layout_off(tl[0], TR_ROOT), left = kp_layout_off(tl[1], RB_LEFT),
		 right = kp_layout_off(tl[1], RB_RIGHT), node = kp_layout_off(tl[2], TN_NODE),
		 mod = kp_layout_off(tl[2], TN_MOD);
	if ((err = kp_read_u64(k, sym.address + root, &first)))
		return kp_error_prefix(err, "mod_tree at 0x%" PRIx64, sym.address);
	uint64_t stack[MAX_TREE_DEPTH];
	size_t depth = 0, seen = 0;
	uint64_t cur = first;
	while (cur || depth) {
		while (cur) {
			if (depth == MAX_TREE_DEPTH)
				return kp_error_create(KP_ERR_LOOP, "mod_tree at 0x%" PRIx64 ": deeper than %d (corrupt?)",
						       sym.address, MAX_TREE_DEPTH);
			stack[depth++] = cur;
			if ((err = kp_read_u64(k, cur + left, &cur)))
				return kp_error_prefix(err, "mod_tree node");
		}
		cur = stack[--depth];
		if (++seen > MAX_TREE_NODES)
			return kp_error_create(KP_ERR_LOOP, "mod_tree at 0x%" PRIx64 ": more than %u nodes (corrupt?)",
					       sym.address, MAX_TREE_NODES);
		uint64_t owner;
		struct kp_lx_mod *e;
		if ((err = kp_read_u64(k, cur - node + mod, &owner)))
			return kp_error_prefix(err, "mod_tree node at 0x%" PRIx64, cur);
		if ((err = get_mod(k, m, l, owner, &e)))
			return kp_error_prefix(err, "mod_tree node at 0x%" PRIx64, cur);
		e->in_tree = true;
		if ((err = kp_read_u64(k, cur + right, &cur)))
			return kp_error_prefix(err, "mod_tree node");
	}
	return NULL;
}

static struct kp_error *from_sysfs(struct kp_kernel *k, struct kp_lx_module_map *m,
				   const struct kp_lx_module_layout *l)
{
	static const struct kp_struct_spec *const specs[] = { &kset_spec, &kobject_spec, &mkobj_spec };
	const struct kp_struct_layout *kl[3];
	struct kp_symbol sym;
	uint64_t kset;
	struct kp_error *err;
	if (!kp_symbol_find(k, "module_kset", &sym))
		return kp_error_create(KP_ERR_NOT_FOUND, "no symbol 'module_kset'");
	if ((err = kp_kernel_layouts(k, specs, 3, kl)))
		return err;
	uint64_t list = kp_layout_off(kl[0], 0), entry = kp_layout_off(kl[1], 0),
		 kobj = kp_layout_off(kl[2], MK_KOBJ), mod = kp_layout_off(kl[2], MK_MOD);
	if ((err = kp_read_u64(k, sym.address, &kset)))
		return kp_error_prefix(err, "module_kset at 0x%" PRIx64, sym.address);
	if (!kset)
		return kp_error_create(KP_ERR_NOT_FOUND, "module_kset is NULL");
	struct kp_list_iter *it;
	if ((err = kp_lx_list_iter_create(k, kset + list, 0, "module kset", &it)))
		return err;
	for (;;) {
		uint64_t n, owner;
		bool done;
		struct kp_lx_mod *e;
		if ((err = kp_list_iter_next(it, &n, &done)) || done)
			break;
		if ((err = kp_read_u64(k, n - entry - kobj + mod, &owner)))
			break;
		if (!owner)
			continue;	// a built-in module's parameters
		if ((err = get_mod(k, m, l, owner, &e)))
			break;
		e->in_sysfs = true;
	}
	kp_list_iter_destroy(it);
	return err;
}

static void note(char *buf, size_t size, struct kp_error *err)
{
	snprintf(buf, size, "%s", kp_error_message(err));
	kp_error_destroy(err);
}

struct kp_error *kp_lx_module_map_create(struct kp_kernel *k, struct kp_lx_module_map **ret)
{
	struct kp_lx_module_layout l;
	struct kp_error *err = kp_lx_module_layout(k, &l);
	if (err)
		return err;
	struct kp_lx_module_map *m = calloc(1, sizeof(*m));
	if (!m)
		return &kp_enomem;
	if ((err = from_list(k, m, &l))) {
		kp_lx_module_map_destroy(m);
		return err;
	}
	// The other views are optional: a kernel without them (or without the
	// symbols) is compared on what there is, and the reason is kept.
	struct {
		struct kp_error *(*read)(struct kp_kernel *, struct kp_lx_module_map *,
					 const struct kp_lx_module_layout *);
		bool *have;
		char *why;
	} views[] = {
		{ from_tree, &m->have_tree, m->tree_why },
		{ from_sysfs, &m->have_sysfs, m->sysfs_why },
	};
	for (size_t i = 0; i < sizeof(views) / sizeof(views[0]); i++) {
		err = views[i].read(k, m, &l);
		*views[i].have = !err;
		if (err && err->code == KP_ERR_NOMEM) {
			kp_lx_module_map_destroy(m);
			return err;
		}
		if (err)
			note(views[i].why, sizeof(m->tree_why), err);
	}
	// Names for the functions of modules missing from the list.
	for (size_t i = 0; i < m->n; i++) {
		struct kp_lx_mod *e = &m->mods[i];
		if (e->in_list)
			continue;
		if (!m->hidden_syms && (err = kp_symtab_create(&m->hidden_syms))) {
			kp_lx_module_map_destroy(m);
			return err;
		}
		size_t added = 0;
		err = kp_lx_module_symbols_at(k, e->address, e->name, m->hidden_syms, &added);
		if (err && err->code == KP_ERR_NOMEM) {
			kp_lx_module_map_destroy(m);
			return err;
		}
		kp_error_destroy(err);	// unnamed then, still found by address
	}
	*ret = m;
	return NULL;
}

void kp_lx_module_map_destroy(struct kp_lx_module_map *m)
{
	if (!m)
		return;
	kp_symtab_destroy(m->hidden_syms);
	free(m->mods);
	free(m);
}

const struct kp_lx_mod *kp_lx_module_map_find(const struct kp_lx_module_map *m, uint64_t address)
{
	for (size_t i = 0; m && i < m->n; i++)
		for (unsigned j = 0; j < m->mods[i].nranges; j++)
			if (address >= m->mods[i].ranges[j].start && address < m->mods[i].ranges[j].end)
				return &m->mods[i];
	return NULL;
}

bool kp_lx_module_map_symbol(const struct kp_lx_module_map *m, uint64_t address,
			     struct kp_symbol *ret)
{
	const struct kp_lx_mod *owner = kp_lx_module_map_find(m, address);
	if (!owner || owner->in_list || !m->hidden_syms)
		return false;
	struct kp_symbol s;
	struct kp_error *err = kp_symtab_by_address(m->hidden_syms, address, &s);
	if (err) {
		kp_error_destroy(err);
		return false;
	}
	if (!s.module || strcmp(s.module, owner->name))
		return false;	// the nearest name belongs to another module
	*ret = s;
	return true;
}
