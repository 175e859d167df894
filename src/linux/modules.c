// SPDX-License-Identifier: MIT
// kp_module_iter: the 'modules' list of struct module, as /proc/modules
// shows it.
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "linux/linux.h"
#include "util/error.h"
#include "util/le.h"
#include "util/vec.h"

// enum module_state (include/linux/module.h, unchanged since 3.x).
static const char *const state_names[] = {"Live", "Loading", "Unloading", "Unformed"};
#define MODULE_STATE_UNFORMED 3
#define MODULE_REF_BASE 1	// kernel/module: refcnt starts at 1 (module_refcount())

void kp_lx_module_layout_span(struct kp_lx_module_layout *l)
{
	uint64_t lo = UINT64_MAX, hi = 0;
	kp_lx_span_add(&lo, &hi, l->list, 16);
	kp_lx_span_add(&lo, &hi, l->name, l->name_size);
	kp_lx_span_add(&lo, &hi, l->state, 4);
	if (l->has_refcnt)
		kp_lx_span_add(&lo, &hi, l->refcnt, 4);
	for (unsigned i = 0; i < l->nlayouts; i++) {
		kp_lx_span_add(&lo, &hi, l->layout_base[i], 8);
		kp_lx_span_add(&lo, &hi, l->layout_size[i], 4);
	}
	if (l->has_uses)
		kp_lx_span_add(&lo, &hi, l->source_list, 16);
	if (l->has_init_exit) {
		kp_lx_span_add(&lo, &hi, l->init, 8);
		kp_lx_span_add(&lo, &hi, l->exit, 8);
	}
	if (l->has_taints)
		kp_lx_span_add(&lo, &hi, l->taints, 8);
	l->lo = lo;
	l->hi = hi;
}

struct kp_error *kp_lx_module_layout(struct kp_kernel *k, struct kp_lx_module_layout *ret)
{
	static const char ms[] = "struct module";
	struct kp_lx_module_layout l = {0};
	struct kp_error *err;
	if ((err = kp_member_offset(k, ms, "list", &l.list, NULL)) ||
	    (err = kp_member_offset(k, ms, "name", &l.name, &l.name_size)) ||
	    (err = kp_member_offset(k, ms, "state", &l.state, NULL)))
		return kp_error_prefix(err, "module list");
	if (l.name_size == 0 || l.name_size > 64)
		l.name_size = 56;	// MODULE_NAME_LEN on 64-bit
	// refcnt exists with CONFIG_MODULE_UNLOAD.
	l.has_refcnt = kp_lx_has_member(k, ms, "refcnt", &l.refcnt, NULL);
	uint64_t mem_off, mem_size, elem, base, size;
	if (kp_lx_has_member(k, ms, "mem", &mem_off, &mem_size)) {
		// 6.4+: struct module_memory mem[MOD_MEM_NUM_TYPES]; /proc/modules
		// sums every type's size and prints mem[MOD_TEXT = 0].base.
		if ((err = kp_type_size(k, "struct module_memory", &elem)) ||
		    (err = kp_member_offset(k, "struct module_memory", "base", &base, NULL)) ||
		    (err = kp_member_offset(k, "struct module_memory", "size", &size, NULL)))
			return kp_error_prefix(err, "module list");
		if (!elem || mem_size / elem == 0 || mem_size / elem > 8)
			return kp_error_create(KP_ERR_UNSUPPORTED, "module list: struct module.mem has %llu bytes of %llu-byte entries",
					       (unsigned long long)mem_size, (unsigned long long)elem);
		l.nlayouts = (unsigned)(mem_size / elem);
		for (unsigned i = 0; i < l.nlayouts; i++) {
			l.layout_base[i] = mem_off + i * elem + base;
			l.layout_size[i] = mem_off + i * elem + size;
		}
	} else {
		// <= 6.3: core_layout + init_layout, plus data_layout where
		// CONFIG_ARCH_WANTS_MODULES_DATA_IN_VMALLOC (6.2+) adds it
		// (kernel/module/procfs.c: module_total_size()).
		static const char *const names[] = {"core_layout", "init_layout", "data_layout"};
		if ((err = kp_member_offset(k, "struct module_layout", "base", &base, NULL)) ||
		    (err = kp_member_offset(k, "struct module_layout", "size", &size, NULL)))
			return kp_error_prefix(err, "module list");
		for (unsigned i = 0; i < 3; i++) {
			uint64_t off;
			if (!kp_lx_has_member(k, ms, names[i], &off, NULL)) {
				if (i < 1)
					return kp_error_create(KP_ERR_UNSUPPORTED, "module list: struct module has neither mem nor core_layout");
				continue;
			}
			l.layout_base[l.nlayouts] = off + base;
			l.layout_size[l.nlayouts] = off + size;
			l.nlayouts++;
		}
	}
	l.has_uses = kp_lx_has_member(k, ms, "source_list", &l.source_list, NULL) &&
		     kp_lx_has_member(k, "struct module_use", "source_list", &l.use_source_list, NULL) &&
		     kp_lx_has_member(k, "struct module_use", "source", &l.use_source, NULL);
	l.has_init_exit = kp_lx_has_member(k, ms, "init", &l.init, NULL) &&
			  kp_lx_has_member(k, ms, "exit", &l.exit, NULL);
	l.has_taints = kp_lx_has_member(k, ms, "taints", &l.taints, NULL);
	kp_lx_module_layout_span(&l);
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
	uint8_t *buf;			// l.hi - l.lo bytes of the current module
	struct kp_module mod;
	bool has_letters;
	char letters[64];		// taint letters by bit (taint_letters())
	char *used_by;			// mod.used_by
	size_t used_by_cap;
};

struct kp_error *kp_lx_module_iter_create(struct kp_kernel *k, const struct kp_lx_module_layout *l,
					  uint64_t head, struct kp_module_iter **ret)
{
	if (l->hi <= l->lo || l->hi - l->lo > (1u << 16) || l->name_size > 64 || !l->name_size)
		return kp_error_create(KP_ERR_INVALID, "module list: bad struct module layout");
	struct kp_module_iter *it = calloc(1, sizeof(*it));
	if (!it || !(it->buf = malloc(l->hi - l->lo))) {
		free(it);
		return &kp_enomem;
	}
	it->k = k;
	it->l = *l;
	it->has_letters = l->has_taints && taint_letters(k, it->letters);
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
	if (!it->has_letters)
		return kp_error_create(KP_ERR_UNSUPPORTED,
				       "taints 0x%" PRIx64 " but the kernel's taint_flags table cannot be read",
				       bits);
	size_t n = 0;
	for (unsigned b = 0; b < 64 && n + 1 < sizeof(m->taints); b++)
		if (bits >> b & 1 && it->letters[b])
			m->taints[n++] = it->letters[b];
	m->taints[n] = '\0';
	return NULL;
}

// The names of the modules using mod (its source_list), "a,b," as
// /proc/modules prints them, into it->used_by.
static struct kp_error *used_by(struct kp_module_iter *it, uint64_t mod, struct kp_module *m)
{
	const struct kp_lx_module_layout *l = &it->l;
	size_t len = 0;
	if (!KP_VEC_RESERVE(it->used_by, it->used_by_cap, 1))
		return &kp_enomem;
	it->used_by[0] = '\0';
	m->used_by = it->used_by;
	if (!l->has_uses)
		return NULL;
	struct kp_list_iter *uses;
	struct kp_error *err = kp_lx_list_iter_create(it->k, mod + l->source_list, 0,
						      "module use list", &uses);
	if (err)
		return err;
	kp_list_iter_set_limit(uses, KP_LX_MAX_MODULES);
	for (;;) {
		uint64_t node, source;
		bool done;
		if ((err = kp_list_iter_next(uses, &node, &done)) || done)
			break;
		char name[65];
		size_t nlen = l->name_size < sizeof(name) ? l->name_size : sizeof(name) - 1;
		if ((err = kp_read_u64(it->k, node - l->use_source_list + l->use_source, &source)) ||
		    (err = kp_read(it->k, KP_VIRT, source + l->name, name, nlen)))
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
	m->used_by = it->used_by;
	return err;
}

struct kp_error *kp_module_iter_next(struct kp_module_iter *it, const struct kp_module **ret)
{
	const struct kp_lx_module_layout *l = &it->l;
	for (;;) {
		uint64_t node;
		bool done;
		struct kp_error *err = kp_list_iter_next(it->list, &node, &done);
		if (err)
			return err;
		if (done) {
			*ret = NULL;
			return NULL;
		}
		uint64_t mod = node - l->list;
		if ((err = kp_read(it->k, KP_VIRT, mod + l->lo, it->buf, l->hi - l->lo)))
			return kp_error_prefix(err, "reading struct module at 0x%" PRIx64, mod);
#define AT(off) (it->buf + (off) - l->lo)
		int32_t state = (int32_t)kp_le32(AT(l->state));
		if (state == MODULE_STATE_UNFORMED)
			continue;	// /proc/modules skips modules still being set up
		struct kp_module *m = &it->mod;
		memset(m, 0, sizeof(*m));
		m->address = mod;
		memcpy(m->name, AT(l->name), l->name_size);
		m->name[l->name_size < 64 ? l->name_size : 63] = '\0';
		m->name[63] = '\0';
		m->state = state;
		snprintf(m->state_name, sizeof(m->state_name), "%s",
			 state >= 0 && state < 4 ? state_names[state] : "Unknown");
		m->refcnt = l->has_refcnt ? (int32_t)kp_le32(AT(l->refcnt)) - MODULE_REF_BASE : -1;
		for (unsigned i = 0; i < l->nlayouts; i++)
			m->size += kp_le32(AT(l->layout_size[i]));
		m->base = l->nlayouts ? kp_le64(AT(l->layout_base[0])) : 0;
		m->permanent = l->has_init_exit && kp_le64(AT(l->init)) && !kp_le64(AT(l->exit));
		if (l->has_taints && (err = taints(it, kp_le64(AT(l->taints)), m)))
			return kp_error_prefix(err, "module %s", m->name);
#undef AT
		if ((err = used_by(it, mod, m)))
			return kp_error_prefix(err, "module %s", m->name);
		*ret = m;
		return NULL;
	}
}

void kp_module_iter_destroy(struct kp_module_iter *it)
{
	if (!it)
		return;
	kp_list_iter_destroy(it->list);
	free(it->buf);
	free(it->used_by);
	free(it);
}
