// SPDX-License-Identifier: MIT
// The types of one kernel (types.h): the working split BTF, the types
// synthesized in it, and the index of BTF VARs.
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/btf.h>
#include <linux/btf.h>

#include "types/btf_load.h"
#include "types/types.h"
#include "util/error.h"
#include "util/vec.h"

#include "types/types_impl.h"


struct kp_error *kp_types_create(struct btf *base, const char *source, struct kp_types **ret)
{
	struct kp_types *t = calloc(1, sizeof(*t));
	if (t) {
		t->base = base;
		t->work = btf__new_empty_split(base);
		t->source = strdup(source);
	}
	if (!t || !t->work || !t->source) {
		if (t) {
			btf__free(t->work);
			free(t->source);
			free(t);
		}
		btf__free(base);
		return &kp_enomem;
	}
	t->nbase = btf__type_cnt(base) - 1;
	// The base as parsed (not yet modifiable): its raw bytes are at hand.
	uint32_t raw_size;
	const struct btf_header *h = btf__raw_data(base, &raw_size);
	if (h && raw_size >= sizeof(*h))
		t->base_strs = h->str_len;
	*ret = t;
	return NULL;
}

void kp_types_destroy(struct kp_types *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < LAYOUT_CACHE; i++)
		free(t->layouts[i].key);
	for (size_t i = 0; i < t->nmemo; i++)
		free(t->memo[i].value);
	free(t->memo);
	btf__free(t->work);
	btf__free(t->base);
	free(t->synth);
	free(t->vars);
	free(t->source);
	free(t->more_note);
	free(t);
}

struct btf *kp_types_btf(const struct kp_types *t)
{
	return t->work;
}

const char *kp_types_source(const struct kp_types *t)
{
	return t->source;
}

size_t kp_types_count(const struct kp_types *t)
{
	return t->nbase;
}

// ---------------------------------------------------------------- synthesized types

static struct kp_error *synth(struct kp_types *t, int kind, uint32_t ref, uint32_t n,
			      uint32_t *ret)
{
	for (size_t i = 0; i < t->nsynth; i++) {
		const struct synth *s = &t->synth[i];
		if (s->kind == kind && s->ref == ref && s->n == n) {
			*ret = s->id;
			return NULL;
		}
	}
	if (!KP_VEC_RESERVE(t->synth, t->synth_cap, t->nsynth + 1))
		return &kp_enomem;
	int id;
	if (kind == BTF_KIND_PTR) {
		id = btf__add_ptr(t->work, (int)ref);
	} else if (kind == BTF_KIND_ARRAY) {
		uint32_t index = 0;
		kp_btf_find_int(t->work, "unsigned int", &index);
		id = btf__add_array(t->work, (int)index, (int)ref, n);
	} else if (kind == BTF_KIND_CONST) {
		id = btf__add_const(t->work, (int)ref);
	} else {
		id = btf__add_func_proto(t->work, 0);
		if (id > 0 && btf__add_func_param(t->work, "", 0) < 0)
			id = -ENOMEM;
	}
	if (id <= 0)
		return kp_error_create(KP_ERR_INVALID, "cannot build a type over BTF type id %u: %s",
				       ref, strerror(-id));
	t->synth[t->nsynth++] = (struct synth){ kind, ref, n, (uint32_t)id };
	*ret = (uint32_t)id;
	return NULL;
}

struct kp_error *kp_types_pointer_to(struct kp_types *t, uint32_t target, uint32_t *ret)
{
	return synth(t, BTF_KIND_PTR, target, 0, ret);
}

struct kp_error *kp_types_array_of(struct kp_types *t, uint32_t elem, uint32_t nelems,
				   uint32_t *ret)
{
	return synth(t, BTF_KIND_ARRAY, elem, nelems, ret);
}

struct kp_error *kp_types_const_of(struct kp_types *t, uint32_t type, uint32_t *ret)
{
	return synth(t, BTF_KIND_CONST, type, 0, ret);
}

struct kp_error *kp_types_unknown_func(struct kp_types *t, uint32_t *ret)
{
	return synth(t, BTF_KIND_FUNC_PROTO, 0, 0, ret);
}

struct kp_error *kp_types_int_type(struct kp_types *t, unsigned size, bool is_signed,
				   uint32_t *ret)
{
	static const char *const names[4][2] = {
		{ "unsigned char", "signed char" }, { "unsigned short", "short" },
		{ "unsigned int", "int" }, { "unsigned long", "long" },
	};
	int slot = size == 1 ? 0 : size == 2 ? 1 : size == 4 ? 2 : size == 8 ? 3 : -1;
	if (slot < 0)
		return kp_error_create(KP_ERR_INVALID, "no %u-byte integer type", size);
	uint32_t *cached = &t->ints[slot][is_signed];
	if (*cached) {
		*ret = *cached;
		return NULL;
	}
	uint32_t id = 0;
	if (!kp_btf_find_int(t->work, names[slot][is_signed], &id)) {
		// Any integer of that size and signedness (e.g. "long long").
		uint32_t n = btf__type_cnt(t->work);
		for (uint32_t i = 1; i < n && !id; i++) {
			const struct btf_type *bt = btf__type_by_id(t->work, i);
			if (bt && btf_is_int(bt) && bt->size == size && btf_int_bits(bt) == size * 8 &&
			    !(btf_int_encoding(bt) & BTF_INT_BOOL) &&
			    !!(btf_int_encoding(bt) & BTF_INT_SIGNED) == is_signed)
				id = i;
		}
	}
	if (!id) {
		// Only a BTF without this integer type (hostile or stripped) gets
		// here. libbpf 1.1's btf__add_int() on the split BTF looks the name
		// up in the base, and that first string lookup converts the base to
		// its modifiable form: its types and strings move and the old copies
		// are freed. Drop the one cache that points into the base (VAR names;
		// rebuilt on next use) rather than converting every base up front,
		// which costs ~100 ms on the kernel's 4 MB BTF.
		free(t->vars);
		t->vars = NULL;
		t->nvars = 0;
		t->vars_indexed = false;
		int nid = btf__add_int(t->work, names[slot][is_signed], size,
				       is_signed ? BTF_INT_SIGNED : 0);
		if (nid <= 0)
			return &kp_enomem;
		id = (uint32_t)nid;
	}
	*cached = id;
	*ret = id;
	return NULL;
}

struct kp_error *kp_types_find(struct kp_types *t, int kind, const char *name, uint32_t *ret)
{
	int32_t id = btf__find_by_name_kind(t->work, name, (uint32_t)kind);
	if (id <= 0)
		return kp_error_create(KP_ERR_NOT_FOUND, "%s%s not found in BTF",
				       kind == BTF_KIND_STRUCT ? "struct " :
				       kind == BTF_KIND_UNION ? "union " :
				       kind == BTF_KIND_ENUM ? "enum " :
				       kind == BTF_KIND_TYPEDEF ? "type " : "", name);
	*ret = (uint32_t)id;
	return NULL;
}

// ---------------------------------------------------------------- variables

#define PERCPU_DATASEC ".data..percpu"

const struct btf_type *kp_types_percpu_datasec(struct kp_types *t)
{
	int32_t id = btf__find_by_name_kind(t->work, PERCPU_DATASEC, BTF_KIND_DATASEC);
	return id > 0 ? btf__type_by_id(t->work, (uint32_t)id) : NULL;
}

uint64_t kp_types_percpu_extent(struct kp_types *t)
{
	const struct btf_type *sec = kp_types_percpu_datasec(t);
	return sec ? sec->size : 0;
}

static int var_cmp(const void *a, const void *b)
{
	return strcmp(((const struct var *)a)->name, ((const struct var *)b)->name);
}

static struct kp_error *index_vars(struct kp_types *t)
{
	struct btf *btf = t->work;
	uint32_t n = btf__type_cnt(btf);
	size_t count = 0, cap = 0;
	struct var *vars = NULL;
	for (uint32_t i = 1; i < n; i++) {
		const struct btf_type *bt = btf__type_by_id(btf, i);
		if (!bt || !btf_is_datasec(bt))
			continue;
		const char *sec = btf__name_by_offset(btf, bt->name_off);
		bool percpu = sec && strcmp(sec, PERCPU_DATASEC) == 0;
		const struct btf_var_secinfo *vs = btf_var_secinfos(bt);
		for (uint32_t j = 0; j < btf_vlen(bt); j++) {
			const struct btf_type *v = btf__type_by_id(btf, vs[j].type);
			const char *name = v ? btf__name_by_offset(btf, v->name_off) : NULL;
			if (!v || !btf_is_var(v) || !name || !*name)
				continue;
			if (!KP_VEC_RESERVE(vars, cap, count + 1)) {
				free(vars);
				return &kp_enomem;
			}
			vars[count++] = (struct var){ name, v->type, percpu };
		}
	}
	if (count)
		qsort(vars, count, sizeof(*vars), var_cmp);
	t->vars = vars;
	t->nvars = count;
	t->vars_indexed = true;
	return NULL;
}

bool kp_types_var(struct kp_types *t, const char *name, uint32_t *type_ret, bool *percpu_ret)
{
	if (!t->vars_indexed && !kp_ok(index_vars(t)))
		return false;
	struct var key = { name, 0, false };
	const struct var *v = t->nvars ?
		bsearch(&key, t->vars, t->nvars, sizeof(key), var_cmp) : NULL;
	if (!v)
		return false;
	*type_ret = v->type;
	*percpu_ret = v->percpu;
	return true;
}

// ---------------------------------------------------------------- layouts

static uint32_t hash_key(const char *key, size_t len)
{
	uint32_t h = 2166136261u;
	for (size_t i = 0; i < len; i++)
		h = (h ^ (uint8_t)key[i]) * 16777619u;
	return h;
}

// "TYPE\0MEMBER" into buf (or a malloc'ed buffer when it does not fit);
// NULL on out-of-memory.
static char *make_key(const char *type, const char *member, char *buf, size_t size,
		      size_t *len_ret)
{
	size_t tl = strlen(type), ml = strlen(member);
	size_t len = tl + 1 + ml;
	char *key = len < size ? buf : malloc(len + 1);
	if (key) {
		memcpy(key, type, tl + 1);
		memcpy(key + tl + 1, member, ml + 1);
	}
	*len_ret = len;
	return key;
}

bool kp_types_layout_lookup(struct kp_types *t, const char *type, const char *member,
			    uint64_t *offset_ret, uint64_t *size_ret)
{
	char buf[256];
	size_t len;
	char *key = make_key(type, member, buf, sizeof(buf), &len);
	if (!key)
		return false;
	typeof(t->layouts[0]) *slot = &t->layouts[hash_key(key, len) % LAYOUT_CACHE];
	bool hit = slot->key && slot->key_len == len && memcmp(slot->key, key, len) == 0;
	if (hit) {
		*offset_ret = slot->offset;
		*size_ret = slot->size;
	}
	if (key != buf)
		free(key);
	return hit;
}

void kp_types_layout_store(struct kp_types *t, const char *type, const char *member,
			   uint64_t offset, uint64_t size)
{
	size_t len;
	char *key = make_key(type, member, NULL, 0, &len);
	if (!key)
		return;	// only a cache
	typeof(t->layouts[0]) *slot = &t->layouts[hash_key(key, len) % LAYOUT_CACHE];
	free(slot->key);
	slot->key = key;
	slot->key_len = len;
	slot->offset = offset;
	slot->size = size;
}

// A walker asks for the same few dozen specs again and again; a linear scan
// of that many pointers costs less than hashing them.
void *kp_types_memo_get(const struct kp_types *t, const void *key)
{
	for (size_t i = 0; i < t->nmemo; i++)
		if (t->memo[i].key == key)
			return t->memo[i].value;
	return NULL;
}

bool kp_types_memo_put(struct kp_types *t, const void *key, void *value)
{
	if (!KP_VEC_RESERVE(t->memo, t->memo_cap, t->nmemo + 1))
		return false;
	t->memo[t->nmemo++] = (struct memo){ key, value };
	return true;
}

// Enumerator j of the ENUM or ENUM64 bt: its name and value.
static const char *enumerator(const struct btf *btf, const struct btf_type *bt, uint32_t j,
			      uint64_t *value_ret)
{
	uint32_t name_off;
	if (btf_is_enum(bt)) {
		name_off = btf_enum(bt)[j].name_off;
		*value_ret = btf_kflag(bt) ? (uint64_t)(int64_t)btf_enum(bt)[j].val :
			(uint32_t)btf_enum(bt)[j].val;
	} else {
		name_off = btf_enum64(bt)[j].name_off;
		*value_ret = btf_enum64_value(&btf_enum64(bt)[j]);
	}
	return btf__name_by_offset(btf, name_off);
}

// The ENUM or ENUM64 named name.
static const struct btf_type *named_enum(const struct btf *btf, const char *name)
{
	int32_t id = btf__find_by_name_kind(btf, name, BTF_KIND_ENUM);
	if (id <= 0)
		id = btf__find_by_name_kind(btf, name, BTF_KIND_ENUM64);
	return id > 0 ? btf__type_by_id(btf, (uint32_t)id) : NULL;
}

const char *kp_types_enumerator_name(struct kp_types *t, const char *name, uint64_t value)
{
	const struct btf *btf = t->work;
	const struct btf_type *bt = named_enum(btf, name);
	for (uint32_t j = 0; bt && j < btf_vlen(bt); j++) {
		uint64_t val;
		const char *s = enumerator(btf, bt, j, &val);
		if (val == value)
			return s;
	}
	return NULL;
}

bool kp_types_enum_value(struct kp_types *t, const char *name, const char *enumerator_name,
			 uint64_t *ret)
{
	const struct btf *btf = t->work;
	const struct btf_type *bt = named_enum(btf, name);
	for (uint32_t j = 0; bt && j < btf_vlen(bt); j++) {
		uint64_t val;
		const char *s = enumerator(btf, bt, j, &val);
		if (s && !strcmp(s, enumerator_name)) {
			*ret = val;
			return true;
		}
	}
	return false;
}

bool kp_types_enumerator(struct kp_types *t, const char *name, uint32_t *type_ret,
			 uint64_t *value_ret)
{
	struct btf *btf = t->work;
	uint32_t n = btf__type_cnt(btf);
	for (uint32_t i = 1; i < n; i++) {
		const struct btf_type *bt = btf__type_by_id(btf, i);
		if (!bt || !btf_is_any_enum(bt))
			continue;
		for (uint32_t j = 0; j < btf_vlen(bt); j++) {
			uint64_t val;
			const char *s = enumerator(btf, bt, j, &val);
			if (s && strcmp(s, name) == 0) {
				*type_ret = i;
				*value_ret = val;
				return true;
			}
		}
	}
	return false;
}
