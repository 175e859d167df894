// kp_module_iter: the 'modules' list of struct module, as /proc/modules
// shows it.
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "linux/linux.h"
#include "util/error.h"
#include "util/le.h"

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
	kp_lx_module_layout_span(&l);
	*ret = l;
	return NULL;
}

struct kp_module_iter {
	struct kp_kernel *k;
	struct kp_lx_module_layout l;
	struct kp_list_iter *list;
	uint8_t *buf;			// l.hi - l.lo bytes of the current module
	struct kp_module mod;
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
#undef AT
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
	free(it);
}
