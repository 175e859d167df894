// SPDX-License-Identifier: MIT
// Members: a name through anonymous members (kp_btf_member), with close
// names suggested when it is not there, and member designators walked from a
// type ("se.vruntime", "mem[0].x"; kp_types_member_path).
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/btf.h>
#include <linux/btf.h>

#include "types/btf.h"
#include "types/types.h"
#include "util/error.h"
#include "util/suggest.h"

// Type chains followed at most this deep: hostile BTF may make them loop.
#define MAX_DEPTH 64

static const struct btf_type *ty(const struct btf *btf, uint32_t id)
{
	return btf__type_by_id(btf, id);
}

// Hostile BTF can make anonymous members contain themselves: bound the
// members visited, not only the depth, or the search is exponential.
#define MEMBER_BUDGET 200000

static bool find_member(const struct btf *btf, uint32_t id, const char *name, size_t len,
			uint64_t base, struct kp_btf_member *ret, int depth, long *budget)
{
	const struct btf_type *t = ty(btf, kp_btf_strip(btf, id));
	if (!t || !btf_is_composite(t) || depth > MAX_DEPTH || (*budget -= btf_vlen(t) + 1) < 0)
		return false;
	const struct btf_member *m = btf_members(t);
	for (uint32_t i = 0; i < btf_vlen(t); i++) {
		const char *mname = btf__name_by_offset(btf, m[i].name_off);
		uint64_t off = base + btf_member_bit_offset(t, i);
		if (mname && *mname) {
			if (strlen(mname) != len || memcmp(mname, name, len) != 0)
				continue;
			ret->type = m[i].type;
			ret->bit_offset = off;
			ret->bit_size = btf_member_bitfield_size(t, i);
			// Pre-kflag encoding: the bitfield lives in the INT type.
			const struct btf_type *mt = ty(btf, kp_btf_strip(btf, m[i].type));
			if (!ret->bit_size && mt && btf_is_int(mt) &&
			    (btf_int_offset(mt) || btf_int_bits(mt) != mt->size * 8)) {
				ret->bit_offset += btf_int_offset(mt);
				ret->bit_size = btf_int_bits(mt);
			}
			return true;
		}
		if (find_member(btf, m[i].type, name, len, off, ret, depth + 1, budget))
			return true;
	}
	return false;
}

// Offers the names of id's members (and of anonymous members' members).
static void collect(const struct btf *btf, uint32_t id, struct kp_suggest *s, int depth,
		    long *budget)
{
	const struct btf_type *t = ty(btf, kp_btf_strip(btf, id));
	if (!t || !btf_is_composite(t) || depth > MAX_DEPTH || (*budget -= btf_vlen(t) + 1) < 0)
		return;
	const struct btf_member *m = btf_members(t);
	for (uint32_t i = 0; i < btf_vlen(t); i++) {
		const char *mname = btf__name_by_offset(btf, m[i].name_off);
		if (!mname || !*mname) {
			collect(btf, m[i].type, s, depth + 1, budget);
			continue;
		}
		size_t ml = strlen(mname);
		kp_suggest_offer(s, mname, ml, kp_suggest_chars(mname, ml));
	}
}

struct kp_error *kp_btf_member(const struct btf *btf, uint32_t id, const char *name,
			       size_t len, struct kp_btf_member *ret)
{
	char *tname = NULL;
	const struct btf_type *t = ty(btf, kp_btf_strip(btf, id));
	long budget = MEMBER_BUDGET;
	if (t && btf_is_composite(t) && find_member(btf, id, name, len, 0, ret, 0, &budget)) {
		if (!ty(btf, ret->type))
			return kp_error_create(KP_ERR_FORMAT,
					       "corrupt BTF: member '%.*s' of type id %u has "
					       "nonexistent type id %u", (int)len, name, id, ret->type);
		return NULL;
	}
	if (kp_btf_type_name(btf, id, &tname))
		tname = NULL;
	if (!t || !btf_is_composite(t)) {
		struct kp_error *err = kp_error_create(KP_ERR_TYPE,
			"member '%.*s' of a non-struct type %s", (int)len, name,
			tname ? tname : "?");
		free(tname);
		return err;
	}
	struct kp_suggest s;
	kp_suggest_init(&s, name, len, 3);
	budget = MEMBER_BUDGET;
	collect(btf, id, &s, 0, &budget);
	char hint[256];
	kp_suggest_format(&s, hint, sizeof(hint));
	struct kp_error *err = kp_error_create(KP_ERR_TYPE, "%s has no member '%.*s'%s",
					       tname ? tname : "struct", (int)len, name, hint);
	free(tname);
	return err;
}


struct kp_error *kp_types_member_path(struct kp_types *t, uint32_t type, const char *path,
				      size_t len, struct kp_btf_member *ret)
{
	const struct btf *btf = kp_types_btf(t);
	struct kp_btf_member acc = { .type = type };
	size_t i = 0;
	bool need_name = true;
	while (i < len) {
		if (need_name || path[i] == '.') {
			if (!need_name)
				i++;
			size_t j = i;
			while (j < len && (isalnum((unsigned char)path[j]) || path[j] == '_'))
				j++;
			if (j == i)
				return kp_error_create(KP_ERR_SYNTAX,
						       "bad member path '%.*s' at offset %zu",
						       (int)len, path, i);
			struct kp_btf_member m;
			struct kp_error *err = kp_btf_member(btf, acc.type, path + i, j - i, &m);
			if (err)
				return err;
			acc.bit_offset += m.bit_offset;
			acc.type = m.type;
			acc.bit_size = m.bit_size;
			i = j;
			need_name = false;
		} else if (path[i] == '[') {
			char *end;
			unsigned long long idx = strtoull(path + i + 1, &end, 0);
			if (end == path + i + 1 || (size_t)(end - path) >= len || *end != ']')
				return kp_error_create(KP_ERR_SYNTAX,
						       "bad index in member path '%.*s' at offset %zu",
						       (int)len, path, i);
			if (kp_btf_kind(btf, acc.type) != BTF_KIND_ARRAY)
				return kp_error_create(KP_ERR_TYPE, "'%.*s' is not an array",
						       (int)i, path);
			const struct btf_type *bt = btf__type_by_id(btf, kp_btf_strip(btf, acc.type));
			uint32_t elem = btf_array(bt)->type;
			uint64_t esize = kp_btf_size(btf, elem);
			if (idx > (1ULL << 40) || (esize && idx > (UINT64_MAX / 8) / esize))
				return kp_error_create(KP_ERR_INVALID, "index %llu too large", idx);
			acc.bit_offset += idx * esize * 8;
			acc.type = elem;
			acc.bit_size = 0;
			i = (size_t)(end - path) + 1;
		} else {
			return kp_error_create(KP_ERR_SYNTAX, "bad member path '%.*s' at offset %zu",
					       (int)len, path, i);
		}
	}
	if (need_name)
		return kp_error_create(KP_ERR_SYNTAX, "empty member path");
	*ret = acc;
	return NULL;
}
