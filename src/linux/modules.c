// kp_modules: the 'modules' list of struct module, as /proc/modules shows it.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "linux/linux.h"

// enum module_state (include/linux/module.h, unchanged since 3.x).
static const char *const state_names[] = {"Live", "Loading", "Unloading", "Unformed"};
#define MODULE_STATE_UNFORMED 3
#define MODULE_REF_BASE 1	// kernel/module: refcnt starts at 1 (module_refcount())

static bool has_member(struct kp_kernel *k, const char *type, const char *name,
		       uint64_t *off_ret, uint64_t *size_ret)
{
	uint64_t size = 0;
	struct kp_error *err = kp_member_offset(k, type, name, off_ret, &size);
	kp_error_destroy(err);
	if (!err && size_ret)
		*size_ret = size;
	return !err;
}

static void span_add(uint64_t *lo, uint64_t *hi, uint64_t off, uint64_t size)
{
	if (off < *lo)
		*lo = off;
	if (off + size > *hi)
		*hi = off + size;
}

void kp_lx_module_layout_span(struct kp_lx_module_layout *l)
{
	uint64_t lo = UINT64_MAX, hi = 0;
	span_add(&lo, &hi, l->list, 16);
	span_add(&lo, &hi, l->name, l->name_size);
	span_add(&lo, &hi, l->state, 4);
	if (l->has_refcnt)
		span_add(&lo, &hi, l->refcnt, 4);
	for (unsigned i = 0; i < l->nlayouts; i++) {
		span_add(&lo, &hi, l->layout_base[i], 8);
		span_add(&lo, &hi, l->layout_size[i], 4);
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
	l.has_refcnt = has_member(k, ms, "refcnt", &l.refcnt, NULL);
	uint64_t mem_off, mem_size, elem, base, size;
	if (has_member(k, ms, "mem", &mem_off, &mem_size)) {
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
			if (!has_member(k, ms, names[i], &off, NULL)) {
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

static uint64_t get_u64(const uint8_t *p)
{
	uint64_t v;
	memcpy(&v, p, 8);
	return v;
}

static uint32_t get_u32(const uint8_t *p)
{
	uint32_t v;
	memcpy(&v, p, 4);
	return v;
}

struct kp_error *kp_lx_modules_walk(struct kp_kernel *k, const struct kp_lx_module_layout *l,
				    uint64_t head, struct kp_module **mods_ret,
				    size_t *count_ret)
{
	if (l->hi <= l->lo || l->hi - l->lo > (1u << 16) || l->name_size > 64 || !l->name_size)
		return kp_error_create(KP_ERR_INVALID, "module list: bad struct module layout");
	struct kp_error *err = NULL;
	struct kp_module *mods = NULL;
	size_t n = 0, cap = 0;
	uint8_t *buf = malloc(l->hi - l->lo);
	if (!buf)
		return &kp_enomem;
	uint64_t node;
	if ((err = kp_read_u64(k, head, &node))) {
		err = kp_error_prefix(err, "reading the module list head at 0x%llx",
				      (unsigned long long)head);
		goto out;
	}
	struct kp_lx_loop loop;
	kp_lx_loop_init(&loop, head);
	for (size_t steps = 0; node != head; steps++) {
		if (!node) {
			err = kp_error_create(KP_ERR_FORMAT, "module list has a NULL link (after %zu modules)", n);
			goto out;
		}
		if (steps >= KP_LX_MAX_MODULES || kp_lx_loop_step(&loop, node)) {
			err = kp_error_create(KP_ERR_LOOP, "module list does not end after %zu entries (loop at 0x%llx)",
					      steps, (unsigned long long)node);
			goto out;
		}
		uint64_t mod = node - l->list;
		if ((err = kp_read(k, KP_VIRT, mod + l->lo, buf, l->hi - l->lo))) {
			err = kp_error_prefix(err, "reading struct module at 0x%llx",
					      (unsigned long long)mod);
			goto out;
		}
#define AT(off) (buf + (off) - l->lo)
		node = get_u64(AT(l->list));
		int32_t state = (int32_t)get_u32(AT(l->state));
		if (state == MODULE_STATE_UNFORMED)
			continue;	// /proc/modules skips modules still being set up
		if (n == cap) {
			size_t c = cap ? cap * 2 : 64;
			struct kp_module *m = realloc(mods, c * sizeof(*m));
			if (!m) {
				err = &kp_enomem;
				goto out;
			}
			mods = m;
			cap = c;
		}
		struct kp_module *m = &mods[n++];
		memset(m, 0, sizeof(*m));
		m->address = mod;
		memcpy(m->name, AT(l->name), l->name_size);
		m->name[l->name_size < 64 ? l->name_size : 63] = '\0';
		m->name[63] = '\0';
		m->state = state;
		snprintf(m->state_name, sizeof(m->state_name), "%s",
			 state >= 0 && state < 4 ? state_names[state] : "Unknown");
		m->refcnt = l->has_refcnt ? (int32_t)get_u32(AT(l->refcnt)) - MODULE_REF_BASE : -1;
		for (unsigned i = 0; i < l->nlayouts; i++)
			m->size += get_u32(AT(l->layout_size[i]));
		m->base = l->nlayouts ? get_u64(AT(l->layout_base[0])) : 0;
#undef AT
	}
	*mods_ret = mods;
	*count_ret = n;
	mods = NULL;
out:
	free(mods);
	free(buf);
	return err;
}

struct kp_error *kp_modules(struct kp_kernel *k, struct kp_module **mods_ret, size_t *count_ret)
{
	struct kp_lx_module_layout l;
	struct kp_symbol sym;
	struct kp_error *err = kp_lx_module_layout(k, &l);
	if (err)
		return err;
	if ((err = kp_symbol_by_name(k, "modules", &sym)))
		return kp_error_prefix(err, "module list");
	return kp_lx_modules_walk(k, &l, sym.address, mods_ret, count_ret);
}
