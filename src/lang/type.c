// SPDX-License-Identifier: MIT
// Type introspection of the public API (struct kp_type, KPEEK_0.6): what a
// language binding needs to show a type as drgn does (kind, name, size,
// members, array length, pointee) and to make values of it. A handle is a
// type id of the kernel's working BTF (types.h), which stays valid while
// the kernel lives; names come back in a scratch copy, because strings of
// the working BTF move when kpeek synthesizes a type.
#include <stdlib.h>
#include <string.h>

#include <bpf/btf.h>
#include <linux/btf.h>

#include "core/kernel.h"
#include "lang/navigate.h"
#include "lang/typename.h"
#include "lang/value.h"
#include "types/types.h"
#include "util/error.h"
#include "util/opts.h"

struct kp_type {
	struct kp_kernel *kernel;
	struct kp_types *types;
	uint32_t id;
	char *scratch;	// the last name handed out (kp_type_tag, kp_type_member...)
};

static struct kp_error *new_type(struct kp_kernel *k, struct kp_types *types, uint32_t id,
				 struct kp_type **ret)
{
	struct kp_type *t = calloc(1, sizeof(*t));
	if (!t)
		return &kp_enomem;
	t->kernel = k;
	t->types = types;
	t->id = id;
	*ret = t;
	return NULL;
}

static struct btf *btf_of(const struct kp_type *t)
{
	return kp_types_btf(t->types);
}

static const struct btf_type *raw(const struct kp_type *t, uint32_t id)
{
	return id ? btf__type_by_id(btf_of(t), id) : NULL;
}

// The id with qualifiers skipped (typedefs kept): what kind and name describe.
static uint32_t cv(const struct kp_type *t)
{
	return kp_btf_strip_cv(btf_of(t), t->id);
}

static const char *keep(const struct kp_type *t_const, const char *s)
{
	struct kp_type *t = (struct kp_type *)t_const;
	free(t->scratch);
	t->scratch = s ? strdup(s) : NULL;
	return t->scratch;
}

struct kp_error *kp_type_lookup(struct kp_kernel *k, const char *name, struct kp_type **ret)
{
	struct kp_types *types = NULL;
	uint32_t id;
	struct kp_error *err = kp_kernel_types(k, &types);
	if (!err)
		err = kp_parse_type(types, name, &id);
	if (err)
		return err;
	return new_type(k, types, id, ret);
}

struct kp_error *kp_value_type(struct kp_value *value, struct kp_type **ret)
{
	if (value->untyped)
		return kp_value_untyped_error(value);
	return new_type(value->kernel, value->types, value->type, ret);
}

void kp_type_destroy(struct kp_type *type)
{
	if (!type)
		return;
	free(type->scratch);
	free(type);
}

enum kp_type_kind kp_type_kind(const struct kp_type *type)
{
	const struct btf_type *t = raw(type, cv(type));
	if (!t)
		return KP_TYPE_VOID;
	switch (btf_kind(t)) {
	case BTF_KIND_INT:
		return btf_int_encoding(t) & BTF_INT_BOOL ? KP_TYPE_BOOL : KP_TYPE_INT;
	case BTF_KIND_FLOAT:
		return KP_TYPE_FLOAT;
	case BTF_KIND_STRUCT:
		return KP_TYPE_STRUCT;
	case BTF_KIND_UNION:
		return KP_TYPE_UNION;
	case BTF_KIND_FWD:
		return btf_kflag(t) ? KP_TYPE_UNION : KP_TYPE_STRUCT;
	case BTF_KIND_ENUM:
	case BTF_KIND_ENUM64:
		return KP_TYPE_ENUM;
	case BTF_KIND_TYPEDEF:
		return KP_TYPE_TYPEDEF;
	case BTF_KIND_PTR:
		return KP_TYPE_POINTER;
	case BTF_KIND_ARRAY:
		return KP_TYPE_ARRAY;
	case BTF_KIND_FUNC:
	case BTF_KIND_FUNC_PROTO:
		return KP_TYPE_FUNCTION;
	default:
		return KP_TYPE_VOID;
	}
}

struct kp_error *kp_type_name(const struct kp_type *type, char **ret)
{
	return kp_btf_type_name(btf_of(type), type->id, ret);
}

const char *kp_type_tag(const struct kp_type *type)
{
	const struct btf_type *t = raw(type, cv(type));
	if (!t || !t->name_off)
		return NULL;
	switch (btf_kind(t)) {
	case BTF_KIND_PTR:
	case BTF_KIND_ARRAY:
	case BTF_KIND_FUNC_PROTO:
		return NULL;
	default:
		return keep(type, btf__name_by_offset(btf_of(type), t->name_off));
	}
}

bool kp_type_is_complete(const struct kp_type *type)
{
	const struct btf_type *t = raw(type, kp_btf_strip(btf_of(type), type->id));
	return t && !btf_is_fwd(t) && !btf_is_func(t) && !btf_is_func_proto(t);
}

struct kp_error *kp_type_sizeof(const struct kp_type *type, uint64_t *ret)
{
	if (!kp_type_is_complete(type)) {
		char *name = kp_value_type_str(btf_of(type), type->id);
		struct kp_error *err = kp_error_create(KP_ERR_TYPE, "%s has no size", name ? name : "?");
		free(name);
		return err;
	}
	return kp_btf_size_checked(btf_of(type), type->id, ret);
}

bool kp_type_is_signed(const struct kp_type *type)
{
	return kp_btf_is_signed(btf_of(type), type->id);
}

uint64_t kp_type_length(const struct kp_type *type)
{
	const struct btf_type *t = raw(type, kp_btf_strip(btf_of(type), type->id));
	return t && btf_is_array(t) ? btf_array(t)->nelems : 0;
}

struct kp_error *kp_type_target(const struct kp_type *type, struct kp_type **ret)
{
	uint32_t id = cv(type);
	const struct btf_type *t = raw(type, id);
	uint32_t target;
	if (t && btf_is_array(t))
		target = btf_array(t)->type;
	else if (t && (btf_is_ptr(t) || btf_is_typedef(t) || btf_is_func(t) ||
		       btf_is_func_proto(t)))
		target = t->type;	// for a function: its prototype's return type
	else
		return kp_value_type_error(&(struct kp_value){ .btf = btf_of(type), .type = id },
					   "%s has no target type (not a pointer, array or typedef)");
	if (t && btf_is_func(t))
		target = raw(type, target) ? raw(type, target)->type : 0;
	return new_type(type->kernel, type->types, target, ret);
}

struct kp_error *kp_type_pointer(const struct kp_type *type, struct kp_type **ret)
{
	uint32_t id;
	struct kp_error *err = kp_types_pointer_to(type->types, type->id, &id);
	if (err)
		return err;
	return new_type(type->kernel, type->types, id, ret);
}

// ---------------------------------------------------------------- members and enumerators

// The struct, union or enum behind typedefs and qualifiers; NULL otherwise.
static const struct btf_type *compound(const struct kp_type *type, bool want_enum)
{
	const struct btf_type *t = raw(type, kp_btf_strip(btf_of(type), type->id));
	if (!t)
		return NULL;
	if (want_enum)
		return btf_is_enum(t) || btf_is_enum64(t) ? t : NULL;
	return btf_is_composite(t) ? t : NULL;
}

size_t kp_type_member_count(const struct kp_type *type)
{
	const struct btf_type *t = compound(type, false);
	if (!t)
		t = compound(type, true);
	return t ? btf_vlen(t) : 0;
}

static struct kp_error *out_of_range(const struct kp_type *type, size_t index, const char *what)
{
	char *name = kp_value_type_str(btf_of(type), type->id);
	struct kp_error *err = kp_error_create(KP_ERR_INVALID, "%s has no %s %zu",
					       name ? name : "?", what, index);
	free(name);
	return err;
}

struct kp_error *kp_type_member(const struct kp_type *type, size_t index,
				struct kp_type_member *ret, struct kp_type **type_ret)
{
	const struct btf_type *t = compound(type, false);
	if (!t || index >= btf_vlen(t))
		return out_of_range(type, index, "member");
	const struct btf_member *m = btf_members(t) + index;
	struct kp_type_member out = {
		.sz = sizeof(out),
		.bit_offset = btf_member_bit_offset(t, index),
		.bit_size = btf_member_bitfield_size(t, index),
	};
	const char *name = m->name_off ? btf__name_by_offset(btf_of(type), m->name_off) : NULL;
	struct kp_type *mt = NULL;
	if (type_ret) {
		struct kp_error *err = new_type(type->kernel, type->types, m->type, &mt);
		if (err)
			return err;
	}
	out.name = name && *name ? keep(type, name) : NULL;
	if (!kp_out_copy(ret, &out, sizeof(out))) {
		kp_type_destroy(mt);
		return kp_error_create(KP_ERR_INVALID, "struct kp_type_member: sz too small");
	}
	if (type_ret)
		*type_ret = mt;
	return NULL;
}

struct kp_error *kp_type_enumerator(const struct kp_type *type, size_t index,
				    const char **name_ret, int64_t *value_ret)
{
	const struct btf_type *t = compound(type, true);
	if (!t || index >= btf_vlen(t))
		return out_of_range(type, index, "enumerator");
	uint32_t name_off;
	int64_t value;
	if (btf_is_enum(t)) {
		const struct btf_enum *e = btf_enum(t) + index;
		name_off = e->name_off;
		value = btf_kflag(t) ? (int64_t)(int32_t)e->val : (int64_t)(uint32_t)e->val;
	} else {
		const struct btf_enum64 *e = btf_enum64(t) + index;
		name_off = e->name_off;
		value = (int64_t)btf_enum64_value(e);
	}
	*name_ret = keep(type, btf__name_by_offset(btf_of(type), name_off));
	*value_ret = value;
	return NULL;
}

// ---------------------------------------------------------------- values of a type

struct kp_error *kp_type_value_at(const struct kp_type *type, uint64_t address,
				  struct kp_value **ret)
{
	return kp_value_lvalue(type->kernel, type->id, address, ret);
}

struct kp_error *kp_type_value_from_u64(const struct kp_type *type, uint64_t value,
					struct kp_value **ret)
{
	if (!kp_btf_is_scalar(btf_of(type), type->id) ||
	    kp_btf_kind(btf_of(type), type->id) == BTF_KIND_FLOAT)
		return kp_value_type_error(&(struct kp_value){ .btf = btf_of(type), .type = type->id },
					   "an integer value of %s, which is not an integer, enum or pointer");
	if (kp_btf_is_bool(btf_of(type), type->id))
		value = value != 0;
	return kp_value_from_u64(type->kernel, type->id, value, ret);
}

struct kp_error *kp_value_cast_type(struct kp_value *value, const struct kp_type *type,
				    struct kp_value **ret)
{
	struct kp_eval_env e = { .k = value->kernel, .types = value->types };
	return kp_nav_cast(&e, type->id, value, ret);
}

struct kp_error *kp_value_bytes(struct kp_value *value, const void **ret)
{
	if (value->untyped)
		return kp_value_untyped_error(value);
	struct kp_error *err = kp_value_fetch(value);
	if (err)
		return err;
	*ret = value->data ? value->data : (const void *)"";
	return NULL;
}
