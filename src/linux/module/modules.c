// SPDX-License-Identifier: MIT
// kp_module_iter: the 'modules' list of struct module, as /proc/modules
// shows it.
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/layout.h"
#include "linux/lib/list.h"
#include "linux/lib/walk.h"
#include "linux/module/module.h"
#include "linux/panic/panic.h"
#include "util/error.h"
#include "util/le.h"
#include "util/vec.h"

// enum module_state (include/linux/module.h, unchanged since 3.x).
static const char *const state_names[] = {"Live", "Loading", "Unloading", "Unformed"};
#define MODULE_STATE_UNFORMED 3
#define MODULE_REF_BASE 1	// kernel/module: refcnt starts at 1 (module_refcount())

static const struct kp_member_spec module_members[KP_LX_M_N] = {
	[KP_LX_M_LIST] = { .name = "list", .flags = KP_MEMBER_NOSPAN },
	[KP_LX_M_NAME] = { .name = "name" },
	[KP_LX_M_STATE] = { .name = "state" },
	[KP_LX_M_REFCNT] = { .name = "refcnt", .flags = KP_MEMBER_OPTIONAL },
	[KP_LX_M_MEM] = { .name = "mem", .flags = KP_MEMBER_OPTIONAL },
	[KP_LX_M_CORE_LAYOUT] = { .name = "core_layout", .flags = KP_MEMBER_OPTIONAL },
	[KP_LX_M_INIT_LAYOUT] = { .name = "init_layout", .flags = KP_MEMBER_OPTIONAL },
	[KP_LX_M_DATA_LAYOUT] = { .name = "data_layout", .flags = KP_MEMBER_OPTIONAL },
	[KP_LX_M_SOURCE_LIST] = { .name = "source_list", .flags = KP_MEMBER_OPTIONAL | KP_MEMBER_NOSPAN },
	[KP_LX_M_INIT] = { .name = "init", .flags = KP_MEMBER_OPTIONAL },
	[KP_LX_M_EXIT] = { .name = "exit", .flags = KP_MEMBER_OPTIONAL },
	[KP_LX_M_TAINTS] = { .name = "taints", .flags = KP_MEMBER_OPTIONAL },
	[KP_LX_M_KALLSYMS] = { .name = "kallsyms", .flags = KP_MEMBER_OPTIONAL | KP_MEMBER_NOSPAN },
	[KP_LX_M_SYMS] = { .name = "syms", .flags = KP_MEMBER_OPTIONAL | KP_MEMBER_NOSPAN },
	[KP_LX_M_NUM_SYMS] = { .name = "num_syms", .flags = KP_MEMBER_OPTIONAL | KP_MEMBER_NOSPAN },
};
const struct kp_struct_spec kp_lx_module_spec = KP_STRUCT_SPEC("struct module", module_members);

enum { MM_BASE, MM_SIZE, MM_N };
static const struct kp_member_spec memory_members[MM_N] = {
	[MM_BASE] = { .name = "base" }, [MM_SIZE] = { .name = "size" },
};
static const struct kp_struct_spec memory_spec = KP_STRUCT_SPEC_OPTIONAL("struct module_memory", memory_members);

enum { ML_BASE, ML_SIZE, ML_TEXT_SIZE, ML_N };
static const struct kp_member_spec mlayout_members[ML_N] = {
	[ML_BASE] = { .name = "base" }, [ML_SIZE] = { .name = "size" }, [ML_TEXT_SIZE] = { .name = "text_size" },
};
static const struct kp_struct_spec mlayout_spec = KP_STRUCT_SPEC_OPTIONAL("struct module_layout", mlayout_members);

enum { MU_SOURCE_LIST, MU_SOURCE, MU_N };
static const struct kp_member_spec use_members[MU_N] = {
	[MU_SOURCE_LIST] = { .name = "source_list" }, [MU_SOURCE] = { .name = "source" },
};
static const struct kp_struct_spec use_spec = KP_STRUCT_SPEC_OPTIONAL("struct module_use", use_members);

// 6.4+: /proc/modules sums every mem[] type's size and prints
// mem[MOD_TEXT = 0].base; the text regions are mem[MOD_TEXT] and
// mem[MOD_INIT_TEXT].
static struct kp_error *regions_mem(struct kp_kernel *k, struct kp_lx_module_layout *l)
{
	const struct kp_struct_layout *mm, *mod = l->mod;
	struct kp_error *err = kp_kernel_layout(k, &memory_spec, &mm);
	if (err)
		return err;
	uint64_t elem = mm->size, off = kp_layout_off(mod, KP_LX_M_MEM), size = mod->m[KP_LX_M_MEM].size;
	if (!mm->present || !elem || size / elem == 0 || size / elem > KP_LX_MODULE_REGIONS)
		return kp_error_create(KP_ERR_UNSUPPORTED, "struct module.mem has %" PRIu64 " bytes of %" PRIu64 "-byte entries",
				       size, elem);
	l->nregions = (unsigned)(size / elem);
	for (unsigned i = 0; i < l->nregions; i++) {
		l->region_base[i] = off + i * elem + kp_layout_off(mm, MM_BASE);
		l->region_size[i] = off + i * elem + kp_layout_off(mm, MM_SIZE);
	}
	static const char *const text[] = { "MOD_TEXT", "MOD_INIT_TEXT" };
	for (unsigned i = 0; i < 2; i++) {
		uint64_t idx;
		if (kp_kernel_enum_value(k, text[i], &idx) && idx < l->nregions) {
			l->text_base[l->ntext] = l->region_base[idx];
			l->text_size[l->ntext++] = l->region_size[idx];
		}
	}
	return NULL;
}

// <= 6.3: core_layout + init_layout, plus data_layout where
// CONFIG_ARCH_WANTS_MODULES_DATA_IN_VMALLOC (6.2+) adds it
// (kernel/module/procfs.c: module_total_size()).
static struct kp_error *regions_layout(struct kp_kernel *k, struct kp_lx_module_layout *l)
{
	static const unsigned members[] = { KP_LX_M_CORE_LAYOUT, KP_LX_M_INIT_LAYOUT, KP_LX_M_DATA_LAYOUT };
	const struct kp_struct_layout *ml, *mod = l->mod;
	struct kp_error *err = kp_kernel_layout(k, &mlayout_spec, &ml);
	if (err)
		return err;
	if (!ml->present || !kp_layout_has(mod, KP_LX_M_CORE_LAYOUT))
		return kp_error_create(KP_ERR_UNSUPPORTED, "struct module has neither mem nor core_layout");
	for (unsigned i = 0; i < 3; i++) {
		if (!kp_layout_has(mod, members[i]))
			continue;
		uint64_t off = kp_layout_off(mod, members[i]);
		l->region_base[l->nregions] = off + kp_layout_off(ml, ML_BASE);
		l->region_size[l->nregions++] = off + kp_layout_off(ml, ML_SIZE);
		if (i < 2) {
			l->text_base[l->ntext] = off + kp_layout_off(ml, ML_BASE);
			l->text_size[l->ntext++] = off + kp_layout_off(ml, ML_TEXT_SIZE);
		}
	}
	return NULL;
}

struct kp_error *kp_lx_module_layout(struct kp_kernel *k, struct kp_lx_module_layout *ret)
{
	struct kp_lx_module_layout l = {0};
	const struct kp_struct_layout *use;
	struct kp_error *err = kp_kernel_layout(k, &kp_lx_module_spec, &l.mod);
	if (!err)
		err = kp_layout_has(l.mod, KP_LX_M_MEM) ? regions_mem(k, &l) : regions_layout(k, &l);
	if (!err)
		err = kp_kernel_layout(k, &use_spec, &use);
	if (err)
		return kp_error_prefix(err, "module list");
	if (l.mod->m[KP_LX_M_NAME].size == 0 || l.mod->m[KP_LX_M_NAME].size > 64)
		return kp_error_create(KP_ERR_UNSUPPORTED, "module list: struct module.name of %" PRIu64 " bytes",
				       l.mod->m[KP_LX_M_NAME].size);
	l.has_uses = kp_layout_has(l.mod, KP_LX_M_SOURCE_LIST) && use->present;
	if (l.has_uses) {
		l.use_source_list = kp_layout_off(use, MU_SOURCE_LIST);
		l.use_source = kp_layout_off(use, MU_SOURCE);
	}
	*ret = l;
	return NULL;
}

// letters[bit]: the letter module_flags_taint() shows for that bit of a
// module's taints, 0 for bits it does not show. False if the kernel's
// taint_flags table cannot be read.
static bool taint_letters(struct kp_kernel *k, char letters[64])
{
	struct kp_lx_taint_table t;
	struct kp_error *err = kp_lx_taint_table(k, &t);
	if (err) {
		kp_error_destroy(err);
		return false;
	}
	memset(letters, 0, 64);
	for (unsigned i = 0; i < t.count; i++)
		if (t.module[i])
			letters[i] = t.c_true[i];
	return true;
}

struct kp_module_iter {
	struct kp_kernel *k;
	struct kp_lx_module_layout l;
	struct kp_list_iter *list;
	uint8_t *buf;			// the struct module span of the current module
	struct kp_module mod;
	bool has_letters;
	char letters[64];		// taint letters by bit (taint_letters())
	char *used_by;			// mod.used_by
	size_t used_by_cap;
	struct kp_lx_walk walk;
};

struct kp_error *kp_lx_module_iter_create(struct kp_kernel *k, const struct kp_lx_module_layout *l,
					  uint64_t head, struct kp_module_iter **ret)
{
	const struct kp_struct_layout *mod = l->mod;
	if (mod->hi <= mod->lo || kp_layout_span(mod) > (1u << 16) || mod->m[KP_LX_M_NAME].size > 64 ||
	    !mod->m[KP_LX_M_NAME].size)
		return kp_error_create(KP_ERR_INVALID, "module list: bad struct module layout");
	struct kp_module_iter *it = calloc(1, sizeof(*it));
	if (!it || !(it->buf = malloc(kp_layout_span(mod)))) {
		free(it);
		return &kp_enomem;
	}
	it->k = k;
	it->l = *l;
	kp_lx_walk_init(&it->walk, k);
	it->has_letters = kp_layout_has(mod, KP_LX_M_TAINTS) && taint_letters(k, it->letters);
	struct kp_error *err = kp_lx_list_iter_create(k, head, 0, "module list", &it->list);
	if (err) {
		kp_module_iter_destroy(it);
		return err;
	}
	kp_list_iter_set_limit(it->list, KP_LX_MAX_MODULES);
	*ret = it;
	return NULL;
}

struct kp_error *kp_module_iter_create(struct kp_kernel *k, struct kp_module_iter **ret)
{
	struct kp_lx_module_layout l;
	struct kp_symbol sym;
	struct kp_error *err = kp_lx_module_layout(k, &l);
	if (err)
		return err;
	if ((err = kp_symbol_by_name(k, "modules", &sym)))
		return kp_error_prefix(err, "module list");
	return kp_lx_module_iter_create(k, &l, sym.address, ret);
}

// m->taints as module_flags_taint() writes them, in bit order.
static struct kp_error *taints(struct kp_module_iter *it, uint64_t bits, struct kp_module *m)
{
	if (!bits)
		return NULL;
	if (!it->has_letters) {
		snprintf(m->taints, sizeof(m->taints), "?");
		return kp_error_create(KP_ERR_UNSUPPORTED,
				       "taints 0x%" PRIx64 " but the kernel's taint_flags table cannot be read",
				       bits);
	}
	size_t n = 0;
	for (unsigned b = 0; b < 64 && n + 1 < sizeof(m->taints); b++)
		if (bits >> b & 1 && it->letters[b])
			m->taints[n++] = it->letters[b];
	m->taints[n] = '\0';
	return NULL;
}

// The names of the modules using mod (its source_list), "a,b," as
// /proc/modules prints them, into it->used_by; m->used_by stays NULL
// (unknown) when they cannot all be read: a partial list is never shown as
// the whole one.
static struct kp_error *used_by(struct kp_module_iter *it, uint64_t mod, struct kp_module *m)
{
	const struct kp_lx_module_layout *l = &it->l;
	uint64_t name_off = kp_layout_off(l->mod, KP_LX_M_NAME), name_size = l->mod->m[KP_LX_M_NAME].size;
	size_t len = 0;
	m->used_by = NULL;
	if (!KP_VEC_RESERVE(it->used_by, it->used_by_cap, 1))
		return &kp_enomem;
	it->used_by[0] = '\0';
	if (!l->has_uses) {
		m->used_by = it->used_by;
		return NULL;
	}
	struct kp_list_iter *uses;
	struct kp_error *err = kp_lx_list_iter_create(it->k, mod + kp_layout_off(l->mod, KP_LX_M_SOURCE_LIST),
						      0, "module use list", &uses);
	if (err)
		return err;
	kp_list_iter_set_limit(uses, KP_LX_MAX_MODULES);
	for (;;) {
		uint64_t node, source;
		bool done;
		if ((err = kp_list_iter_next(uses, &node, &done)) || done)
			break;
		char name[65];
		size_t nlen = name_size < sizeof(name) ? name_size : sizeof(name) - 1;
		if ((err = kp_read_u64(it->k, node - l->use_source_list + l->use_source, &source)) ||
		    (err = kp_read(it->k, KP_VIRT, source + name_off, name, nlen)))
			break;
		name[nlen] = '\0';
		size_t add = strlen(name) + 1;
		if (!KP_VEC_RESERVE(it->used_by, it->used_by_cap, len + add + 1)) {
			err = &kp_enomem;
			break;
		}
		memcpy(it->used_by + len, name, add - 1);
		it->used_by[len + add - 1] = ',';
		len += add;
		it->used_by[len] = '\0';
	}
	kp_list_iter_destroy(uses);
	if (!err)
		m->used_by = it->used_by;
	return err;
}

// The module at mod from it->buf; false if /proc/modules would skip it.
static bool decode(struct kp_module_iter *it, uint64_t mod)
{
	const struct kp_lx_module_layout *l = &it->l;
	const struct kp_struct_layout *ml = l->mod;
	int32_t state = (int32_t)kp_layout_u64(ml, it->buf, KP_LX_M_STATE);
	if (state == MODULE_STATE_UNFORMED)
		return false;	// /proc/modules skips modules still being set up
	struct kp_module *m = &it->mod;
	memset(m, 0, sizeof(*m));
	m->address = mod;
	memcpy(m->name, kp_layout_at(ml, it->buf, KP_LX_M_NAME), ml->m[KP_LX_M_NAME].size);
	m->name[63] = '\0';
	m->state = state;
	snprintf(m->state_name, sizeof(m->state_name), "%s",
		 state >= 0 && state < 4 ? state_names[state] : "Unknown");
	// module_refcount(): the count less its base, in 64 bits so that a
	// corrupt INT_MIN does not overflow; one that does not fit is unknown.
	int64_t ref = kp_layout_s64(ml, it->buf, KP_LX_M_REFCNT) - MODULE_REF_BASE;
	m->refcnt = kp_layout_has(ml, KP_LX_M_REFCNT) && ref >= 0 && ref <= INT32_MAX ? (int32_t)ref : -1;
	for (unsigned i = 0; i < l->nregions; i++) {
		const uint8_t *size = kp_layout_ptr(ml, it->buf, l->region_size[i], 4);
		m->size += size ? kp_le32(size) : 0;
	}
	const uint8_t *b = l->nregions ? kp_layout_ptr(ml, it->buf, l->region_base[0], 8) : NULL;
	m->base = b ? kp_le64(b) : 0;
	m->permanent = kp_layout_has(ml, KP_LX_M_INIT) && kp_layout_has(ml, KP_LX_M_EXIT) &&
		       kp_layout_u64(ml, it->buf, KP_LX_M_INIT) && !kp_layout_u64(ml, it->buf, KP_LX_M_EXIT);
	return true;
}

struct kp_error *kp_module_iter_next(struct kp_module_iter *it, const struct kp_module **ret)
{
	const struct kp_struct_layout *ml = it->l.mod;
	*ret = NULL;
	while (it->list) {
		uint64_t node;
		bool done;
		struct kp_error *err = kp_list_iter_next(it->list, &node, &done);
		if (err || done) {
			KP_INIT(kp_walk_status, st);
			kp_list_iter_status(it->list, &st);
			it->walk.restarts += st.restarts;
			if (st.end == KP_WALK_LIVE_CHANGED)
				kp_lx_walk_changed(&it->walk);
			if (err)
				kp_lx_walk_stop(&it->walk, err);
			kp_list_iter_destroy(it->list);
			it->list = NULL;
			break;
		}
		uint64_t mod = node - kp_layout_off(ml, KP_LX_M_LIST);
		if ((err = kp_read(it->k, KP_VIRT, mod + ml->lo, it->buf, kp_layout_span(ml)))) {
			err = kp_error_prefix(err, "reading struct module at 0x%" PRIx64, mod);
			if ((err = kp_lx_walk_unreadable(&it->walk, err)))	// unloaded, live
				return err;
			continue;
		}
		if (!decode(it, mod))
			continue;
		struct kp_module *m = &it->mod;
		if (kp_layout_has(ml, KP_LX_M_TAINTS) &&
		    (err = taints(it, kp_layout_u64(ml, it->buf, KP_LX_M_TAINTS), m)))
			kp_lx_walk_stop(&it->walk, kp_error_prefix(err, "module %s", m->name));
		// Users that cannot all be read: the module is yielded with
		// used_by unknown (NULL), a partial object.
		if ((err = used_by(it, mod, m)) && err->code == KP_ERR_NOMEM)
			kp_lx_walk_stop(&it->walk, err);
		else if (err)
			kp_lx_walk_partial(&it->walk, kp_error_prefix(err, "module %s: its users", m->name));
		*ret = m;
		return NULL;
	}
	return kp_lx_walk_finish(&it->walk);
}

void kp_module_iter_status(const struct kp_module_iter *it, struct kp_walk_status *ret)
{
	kp_lx_walk_status(&it->walk, ret);
}

void kp_module_iter_destroy(struct kp_module_iter *it)
{
	if (!it)
		return;
	kp_list_iter_destroy(it->list);
	kp_lx_walk_deinit(&it->walk);
	free(it->buf);
	free(it->used_by);
	free(it);
}
