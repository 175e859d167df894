// SPDX-License-Identifier: MIT
// Queries on one BTF (btf.h).
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/btf.h>
#include <linux/btf.h>

#include "types/btf.h"
#include "util/error.h"

// Type chains (typedefs, qualifiers, nested anonymous members) followed at
// most this deep: hostile BTF may make them loop.
#define MAX_DEPTH 64

// ---------------------------------------------------------------- type helpers

static const struct btf_type *ty(const struct btf *btf, uint32_t id)
{
	return btf__type_by_id(btf, id);
}

static uint32_t strip(const struct btf *btf, uint32_t id, bool typedefs)
{
	for (int i = 0; i < MAX_DEPTH; i++) {
		const struct btf_type *t = ty(btf, id);
		if (!t || id == 0)
			return id;
		switch (btf_kind(t)) {
		case BTF_KIND_TYPEDEF:
			if (!typedefs)
				return id;
			// fallthrough
		case BTF_KIND_CONST:
		case BTF_KIND_VOLATILE:
		case BTF_KIND_RESTRICT:
		case BTF_KIND_TYPE_TAG:
			id = t->type;
			break;
		default:
			return id;
		}
	}
	return 0;	// a qualifier loop in hostile BTF: treat as void
}

uint32_t kp_btf_strip(const struct btf *btf, uint32_t id)
{
	return strip(btf, id, true);
}

uint32_t kp_btf_strip_cv(const struct btf *btf, uint32_t id)
{
	return strip(btf, id, false);
}

int kp_btf_kind(const struct btf *btf, uint32_t id)
{
	id = kp_btf_strip(btf, id);
	const struct btf_type *t = id ? ty(btf, id) : NULL;
	return t ? btf_kind(t) : BTF_KIND_UNKN;
}

// Arrays are multiplied out here in 64 bits: libbpf's btf__resolve_size()
// fails for anything past 4 GiB, and a failure read as 0 made
// sizeof(int[1 << 30]) 0 and pointer arithmetic on such arrays step by 1.
struct kp_error *kp_btf_size_checked(const struct btf *btf, uint32_t id, uint64_t *ret)
{
	uint64_t count = 1;
	for (int i = 0; i < MAX_DEPTH; i++) {
		id = kp_btf_strip(btf, id);
		const struct btf_type *t = id ? ty(btf, id) : NULL;
		if (t && btf_is_array(t)) {
			if (__builtin_mul_overflow(count, (uint64_t)btf_array(t)->nelems, &count))
				break;
			id = btf_array(t)->type;
			continue;
		}
		uint64_t size = 0;
		int kind = t ? btf_kind(t) : BTF_KIND_UNKN;
		if (kind != BTF_KIND_UNKN && kind != BTF_KIND_FUNC &&
		    kind != BTF_KIND_FUNC_PROTO && kind != BTF_KIND_FWD) {
			int64_t s = btf__resolve_size(btf, id);	// not an array: at most 4 GiB
			size = s > 0 ? (uint64_t)s : 0;
		}
		if (__builtin_mul_overflow(count, size, ret))
			break;
		return NULL;
	}
	return kp_error_create(KP_ERR_TYPE, "type is larger than the address space");
}

uint64_t kp_btf_size(const struct btf *btf, uint32_t id)
{
	uint64_t size;
	struct kp_error *err = kp_btf_size_checked(btf, id, &size);
	if (err) {
		kp_error_destroy(err);
		return 0;
	}
	return size;
}

bool kp_btf_is_signed(const struct btf *btf, uint32_t id)
{
	const struct btf_type *t = ty(btf, kp_btf_strip(btf, id));
	if (!t)
		return false;
	if (btf_is_int(t))
		return btf_int_encoding(t) & BTF_INT_SIGNED;
	if (btf_is_enum(t) || btf_is_enum64(t))
		return btf_kflag(t);
	return false;
}

bool kp_btf_is_integer(const struct btf *btf, uint32_t id)
{
	int kind = kp_btf_kind(btf, id);
	return kind == BTF_KIND_INT || kind == BTF_KIND_ENUM || kind == BTF_KIND_ENUM64;
}

bool kp_btf_is_scalar(const struct btf *btf, uint32_t id)
{
	int kind = kp_btf_kind(btf, id);
	return kp_btf_is_integer(btf, id) || kind == BTF_KIND_PTR || kind == BTF_KIND_FLOAT;
}

bool kp_btf_is_bool(const struct btf *btf, uint32_t id)
{
	const struct btf_type *t = ty(btf, kp_btf_strip(btf, id));
	return t && btf_is_int(t) && (btf_int_encoding(t) & BTF_INT_BOOL);
}

bool kp_btf_is_char(const struct btf *btf, uint32_t id)
{
	const struct btf_type *t = ty(btf, kp_btf_strip(btf, id));
	if (!t || !btf_is_int(t) || t->size != 1 || (btf_int_encoding(t) & BTF_INT_BOOL))
		return false;
	if (btf_int_encoding(t) & BTF_INT_CHAR)
		return true;
	const char *name = btf__name_by_offset(btf, t->name_off);
	return name && strstr(name, "char");
}

// ---------------------------------------------------------------- integer names

// GCC names integers "long unsigned int"; C programmers write "unsigned long".
// Writes the canonical C name; false if name is not made of C integer words.
bool kp_btf_int_cname(const char *name, char *out, size_t size)
{
	int nlong = 0, nshort = 0, nchar = 0, nint = 0, nsigned = 0, nunsigned = 0, nbool = 0;
	int n128 = 0;
	const char *p = name;
	while (*p) {
		while (*p == ' ')
			p++;
		const char *w = p;
		while (*p && *p != ' ')
			p++;
		size_t len = (size_t)(p - w);
		if (!len)
			break;
#define IS(s) (len == sizeof(s) - 1 && memcmp(w, s, len) == 0)
		if (IS("long"))
			nlong++;
		else if (IS("short"))
			nshort++;
		else if (IS("char"))
			nchar++;
		else if (IS("int"))
			nint++;
		else if (IS("signed") || IS("__signed__"))
			nsigned++;
		else if (IS("unsigned"))
			nunsigned++;
		else if (IS("_Bool") || IS("bool"))
			nbool++;
		else if (IS("__int128"))
			n128++;
		else
			return false;
#undef IS
	}
	const char *base;
	if (nbool) {
		if (nbool > 1 || nlong || nshort || nchar || nint || nsigned || nunsigned || n128)
			return false;
		base = "_Bool";
	} else if (n128) {
		if (n128 > 1 || nlong || nshort || nchar || nint)
			return false;
		base = "__int128";
	} else if (nchar) {
		if (nchar > 1 || nlong || nshort || nint)
			return false;
		base = "char";
	} else if (nshort) {
		if (nshort > 1 || nlong || nint > 1)
			return false;
		base = "short";
	} else if (nlong) {
		if (nlong > 2 || nint > 1)
			return false;
		base = nlong == 2 ? "long long" : "long";
	} else if (nint == 1 || nsigned || nunsigned) {
		if (nint > 1)
			return false;
		base = "int";
	} else {
		return false;
	}
	if (nsigned + nunsigned > 1)
		return false;
	const char *sign = nunsigned ? "unsigned " : (nsigned && nchar) ? "signed " : "";
	return (size_t)snprintf(out, size, "%s%s", sign, base) < size;
}

bool kp_btf_find_int(const struct btf *btf, const char *cname, uint32_t *ret)
{
	char want[32], got[32];
	if (!kp_btf_int_cname(cname, want, sizeof(want)))
		return false;
	uint32_t n = btf__type_cnt(btf);
	for (uint32_t i = 1; i < n; i++) {
		const struct btf_type *t = ty(btf, i);
		if (!t || !btf_is_int(t))
			continue;
		const char *name = btf__name_by_offset(btf, t->name_off);
		if (name && kp_btf_int_cname(name, got, sizeof(got)) && strcmp(got, want) == 0) {
			*ret = i;
			return true;
		}
	}
	return false;
}

