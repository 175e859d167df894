// SPDX-License-Identifier: MIT
// Moving from one value to another: members (bitfields included, and the
// per-CPU mark of a variable kept on its parts), subscripts, dereference,
// address-of, container_of, casts and the decay of arrays and functions to
// pointers. kp_eval()'s operators (eval.c) and the public kp_value_*()
// navigation API below share them, so that p->m in an expression and
// kp_value_member(p, "m") give the same value and the same errors.
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/btf.h>
#include <linux/btf.h>

#include "core/kernel.h"
#include "lang/arith.h"
#include "lang/navigate.h"
#include "lang/typename.h"
#include "types/types.h"
#include "util/error.h"

struct kp_error *kp_nav_decay(struct kp_eval_env *e, struct kp_value *v, struct kp_value **ret)
{
	int kind = v->untyped ? -1 : kp_value_kind(v);
	if ((kind != BTF_KIND_ARRAY && kind != BTF_KIND_FUNC_PROTO) || !v->lvalue) {
		*ret = v;
		return NULL;
	}
	uint32_t target = v->type;
	if (kind == BTF_KIND_ARRAY)
		target = btf_array(btf__type_by_id(v->btf, kp_btf_strip(v->btf, v->type)))->type;
	uint32_t ptr;
	struct kp_error *err = kp_types_pointer_to(e->types, target, &ptr);
	if (!err)
		err = kp_value_from_u64(e->k, ptr, v->address, ret);
	kp_value_destroy(v);
	return err;
}

static void inherit_percpu(const struct kp_value *from, struct kp_value *to)
{
	if (from->percpu && from->symbol) {
		to->percpu = true;
		to->symbol = strdup(from->symbol);	// only for a message: NULL is fine
	}
}

// The part m of struct/union value v (m.bit_offset from v's start); what
// names it goes into messages.
static struct kp_error *part(struct kp_eval_env *e, struct kp_value *v,
			     const struct kp_btf_member *m, const char *what, size_t what_len,
			     struct kp_value **ret)
{
	struct kp_error *err;
	if (v->lvalue) {
		err = kp_value_lvalue(e->k, m->type, v->address + m->bit_offset / 8, ret);
		if (!err)
			inherit_percpu(v, *ret);
		if (!err && m->bit_size) {
			(*ret)->bit_offset = (uint32_t)(m->bit_offset % 8);
			(*ret)->bit_size = m->bit_size;
			(*ret)->size = ((*ret)->bit_offset + m->bit_size + 7) / 8;
		}
		return err;
	}
	uint64_t msize = kp_btf_size(v->btf, m->type);
	if (m->bit_offset / 8 + (m->bit_size ? 0 : msize) > v->size)
		return kp_error_create(KP_ERR_TYPE, "member '%.*s' lies outside the value",
				       (int)what_len, what);
	if (m->bit_size) {
		struct kp_value tmp = *v;
		tmp.type = m->type;
		tmp.bit_offset = (uint32_t)(m->bit_offset % 8);
		tmp.bit_size = m->bit_size;
		tmp.data = v->data + m->bit_offset / 8;
		tmp.size = v->size - m->bit_offset / 8;
		uint64_t x;
		err = kp_value_scalar(&tmp, &x);
		if (err)
			return err;
		return kp_value_from_u64(e->k, m->type, x, ret);
	}
	return kp_value_rvalue(e->k, m->type, v->data + m->bit_offset / 8, msize, ret);
}

static bool struct_kind(int kind)
{
	return kind == BTF_KIND_STRUCT || kind == BTF_KIND_UNION;
}

static struct kp_error *member(struct kp_eval_env *e, struct kp_value *v, const char *name,
			       size_t len, struct kp_value **ret)
{
	struct kp_btf_member m;
	struct kp_error *err = kp_btf_member(v->btf, v->type, name, len, &m);
	if (err)
		return err;
	return part(e, v, &m, name, len, ret);
}

// p->name: the struct or union p points to, then its member.
static struct kp_error *arrow_member(struct kp_eval_env *e, struct kp_value *p, int kind,
				     const char *name, size_t len, struct kp_value **ret)
{
	uint64_t esize, x;
	uint32_t target = kind == BTF_KIND_PTR ? kp_value_pointer_target(p, &esize) : 0;
	struct kp_value *obj;
	struct kp_error *err;
	if (struct_kind(kind))
		err = kp_value_type_error(p, "'->' on %s, which is not a pointer: use '.'");
	else if (kind != BTF_KIND_PTR || !struct_kind(kp_btf_kind(p->btf, target)))
		err = kp_value_type_error(p,
			"'->' on %s, which is not a pointer to a struct or union");
	else if (!(err = kp_value_scalar(p, &x)) &&
		 !(err = kp_value_lvalue(e->k, target, x, &obj))) {
		err = member(e, obj, name, len, ret);
		kp_value_destroy(obj);
	}
	return err;
}

struct kp_error *kp_nav_member_of(struct kp_eval_env *e, struct kp_value *a, bool arrow,
				  const char *name, size_t len, struct kp_value **ret)
{
	int kind = a->untyped ? -1 : kp_value_kind(a);
	if (a->untyped)
		return kp_value_untyped_error(a);
	if (arrow)
		return arrow_member(e, a, kind, name, len, ret);
	if (kind == BTF_KIND_PTR)
		return kp_value_type_error(a, "'.' on a pointer (%s): use '->'");
	if (!struct_kind(kind))
		return kp_value_type_error(a, "'.' on %s, which is not a struct or union");
	return member(e, a, name, len, ret);
}

struct kp_error *kp_nav_subscript(struct kp_eval_env *e, struct kp_value *a, int64_t idx,
				  int col, struct kp_value **ret)
{
	struct kp_error *err;
	int kind = a->untyped ? -1 : kp_value_kind(a);
	if (a->untyped)
		return kp_value_untyped_error(a);
	if (kind == BTF_KIND_ARRAY) {
		const struct btf_type *t = btf__type_by_id(a->btf, kp_btf_strip(a->btf, a->type));
		const struct btf_array *arr = btf_array(t);
		uint64_t esize = kp_btf_size(a->btf, arr->type);
		if (a->lvalue) {
			// No bound: kernel arrays of [0] and [] are read past their size.
			uint64_t at;
			if ((err = kp_arith_element(a->address, idx, esize, col, &at)))
				return err;
			err = kp_value_lvalue(e->k, arr->type, at, ret);
			if (!err)
				inherit_percpu(a, *ret);
			return err;
		}
		if (idx < 0 || (uint64_t)idx >= arr->nelems || esize > a->size ||
		    (esize && (uint64_t)idx > a->size / esize - 1))
			return kp_error_create(KP_ERR_INVALID, "index %" PRId64 " out of bounds [0, %u)",
					       idx, arr->nelems);
		return kp_value_rvalue(e->k, arr->type, a->data + (uint64_t)idx * esize, esize, ret);
	}
	if (kind == BTF_KIND_PTR) {
		uint64_t esize, x;
		uint32_t target = kp_value_pointer_target(a, &esize);
		if (kp_btf_kind(a->btf, target) == BTF_KIND_UNKN)
			return kp_error_create(KP_ERR_TYPE, "cannot index a void pointer at column %d",
					       col);
		if ((err = kp_value_pointer_step(a, &esize)) || (err = kp_value_scalar(a, &x)))
			return err;
		uint64_t at;
		if ((err = kp_arith_element(x, idx, esize, col, &at)))
			return err;
		return kp_value_lvalue(e->k, target, at, ret);
	}
	return kp_value_type_error(a, "cannot index a value of type %s");
}

// A struct or union BTF only declares (a pointer to a FWD: pahole emits
// them for types a unit did not define) as its definition of the same name,
// where the BTF has one, as C sees the complete type once it is in scope.
static uint32_t complete(struct kp_eval_env *e, const struct btf *btf, uint32_t target)
{
	uint32_t id = kp_btf_strip_cv(btf, target);
	const struct btf_type *t = id ? btf__type_by_id(btf, id) : NULL;
	if (!t || !btf_is_fwd(t) || !t->name_off)
		return target;
	uint32_t def;
	struct kp_error *err = kp_types_find(e->types, btf_kflag(t) ? BTF_KIND_UNION : BTF_KIND_STRUCT,
					     btf__name_by_offset(btf, t->name_off), &def);
	if (err) {
		kp_error_destroy(err);
		return target;
	}
	return def;
}

struct kp_error *kp_nav_deref(struct kp_eval_env *e, struct kp_value *a, int col,
			      struct kp_value **ret)
{
	uint64_t x, esize;
	if (!kp_value_is_pointer(a))
		return kp_value_type_error(a,
			"cannot dereference a value of type %s (not a pointer)");
	uint32_t target = kp_value_pointer_target(a, &esize);
	if (kp_btf_kind(a->btf, target) == BTF_KIND_UNKN)
		return kp_error_create(KP_ERR_TYPE,
				       "cannot dereference a void pointer at column %d; "
				       "cast it first, e.g. *(unsigned long *)p", col);
	struct kp_error *err = kp_value_scalar(a, &x);
	if (err)
		return err;
	return kp_value_lvalue(e->k, complete(e, a->btf, target), x, ret);
}

struct kp_error *kp_nav_address_of(struct kp_eval_env *e, struct kp_value *a, int col,
				   struct kp_value **ret)
{
	uint32_t ptr;
	struct kp_error *err;
	if (!a->lvalue)
		return kp_error_create(KP_ERR_TYPE,
				       "cannot take the address of an rvalue at column %d", col);
	if (a->bit_size)
		return kp_error_create(KP_ERR_TYPE,
				       "cannot take the address of a bitfield at column %d", col);
	if ((err = kp_types_pointer_to(e->types, a->untyped ? 0 : a->type, &ptr)))
		return err;
	return kp_value_from_u64(e->k, ptr, a->address, ret);
}

struct kp_error *kp_nav_cast(struct kp_eval_env *e, uint32_t type, struct kp_value *v,
			     struct kp_value **ret)
{
	struct btf *btf = v->btf;
	int tk = kp_btf_kind(btf, type);
	int vk = v->untyped ? -1 : kp_value_kind(v);
	if (tk == BTF_KIND_UNKN)
		return kp_error_create(KP_ERR_TYPE, "cannot cast to void");
	if (tk == BTF_KIND_FLOAT || vk == BTF_KIND_FLOAT)
		return kp_error_create(KP_ERR_UNSUPPORTED, "floating-point casts are not supported");
	bool target_scalar = tk == BTF_KIND_INT || tk == BTF_KIND_ENUM || tk == BTF_KIND_ENUM64 ||
		tk == BTF_KIND_PTR;
	// Reinterpreting memory: untyped symbols, aggregates, and casts to an
	// aggregate type ("(struct task_struct)init_task").
	if (!target_scalar || v->untyped || struct_kind(vk)) {
		if (v->lvalue && !v->bit_size)
			return kp_value_lvalue(e->k, type, v->address, ret);
		if (!v->lvalue && v->data && kp_btf_size(btf, type) <= v->size)
			return kp_value_rvalue(e->k, type, v->data, kp_btf_size(btf, type), ret);
		char *to = kp_value_type_str(btf, type), *from = kp_value_type_str(btf, v->type);
		struct kp_error *err = kp_error_create(KP_ERR_TYPE,
			"cannot cast a%s of type %s to %s", v->lvalue ? " bitfield" : "n rvalue",
			from ? from : "?", to ? to : "?");
		free(to);
		free(from);
		return err;
	}
	struct kp_value *d;
	struct kp_value copy = *v;
	copy.data = NULL;
	copy.symbol = NULL;
	// decay() consumes its argument: give it a shallow copy for lvalues.
	struct kp_value *src = v;
	if (v->lvalue && (vk == BTF_KIND_ARRAY || vk == BTF_KIND_FUNC_PROTO)) {
		src = malloc(sizeof(*src));
		if (!src)
			return &kp_enomem;
		*src = copy;
	}
	struct kp_error *err = src == v ? NULL : kp_nav_decay(e, src, &d);
	if (err)
		return err;
	if (src == v)
		d = v;
	uint64_t x;
	err = kp_value_scalar(d, &x);
	if (d != v)
		kp_value_destroy(d);
	if (err)
		return err;
	if (kp_btf_is_bool(btf, type))
		x = x != 0;
	return kp_value_from_u64(e->k, type, x, ret);
}

struct kp_error *kp_nav_member_path(struct kp_eval_env *e, uint32_t type, const char *path,
				    size_t len, struct kp_btf_member *ret)
{
	struct kp_btf_member m;
	struct kp_error *err = kp_types_member_path(e->types, type, path, len, &m);
	if (err)
		return err;
	if (m.bit_size)
		return kp_error_create(KP_ERR_TYPE, "'%.*s' is a bitfield", (int)len, path);
	*ret = m;
	return NULL;
}

struct kp_error *kp_nav_container_of(struct kp_eval_env *e, struct kp_value *a, uint32_t type,
				     const struct kp_btf_member *m, struct kp_value **ret)
{
	uint64_t x;
	uint32_t ptr;
	struct kp_error *err;
	if (!kp_value_is_pointer(a) && !kp_btf_is_integer(a->btf, a->type))
		return kp_value_type_error(a, "container_of() needs a pointer, got %s");
	if ((err = kp_value_scalar(a, &x)) || (err = kp_types_pointer_to(e->types, type, &ptr)))
		return err;
	return kp_value_from_u64(e->k, ptr, x - m->bit_offset / 8, ret);
}

// ---------------------------------------------------------------- the public navigation API

static struct kp_eval_env ev_of(const struct kp_value *v)
{
	return (struct kp_eval_env){ .k = v->kernel, .types = v->types };
}

// A copy of v with arrays and functions decayed to pointers (consumed by
// the caller).
static struct kp_error *rvalue_of(struct kp_eval_env *e, struct kp_value *v,
				  struct kp_value **ret)
{
	struct kp_value *copy = malloc(sizeof(*copy));
	if (!copy)
		return &kp_enomem;
	*copy = *v;
	copy->symbol = v->symbol ? strdup(v->symbol) : NULL;
	copy->data = NULL;
	if (v->data && !(copy->data = malloc(v->size ? v->size : 1))) {
		kp_value_destroy(copy);
		return &kp_enomem;
	}
	if (v->data)
		memcpy(copy->data, v->data, v->size);
	return kp_nav_decay(e, copy, ret);
}

struct kp_error *kp_value_at(struct kp_kernel *k, const char *type, uint64_t address,
			     struct kp_value **ret)
{
	struct kp_types *types = NULL;
	uint32_t id;
	struct kp_error *err = kp_kernel_types(k, &types);
	if (!err)
		err = kp_parse_type(types, type, &id);
	if (err)
		return err;
	return kp_value_lvalue(k, id, address, ret);
}

struct kp_error *kp_value_member(struct kp_value *v, const char *member, struct kp_value **ret)
{
	struct kp_eval_env e = ev_of(v);
	if (v->untyped)
		return kp_value_untyped_error(v);
	struct kp_value *obj = v, *tmp = NULL;
	struct kp_error *err;
	// p->m and s.m alike.
	if (kp_value_kind(v) == BTF_KIND_PTR) {
		if ((err = kp_nav_deref(&e, v, 0, &tmp)))
			return err;
		obj = tmp;
	}
	if (!struct_kind(kp_value_kind(obj))) {
		err = kp_value_type_error(obj, "member of %s, which is not a struct or union");
	} else {
		struct kp_btf_member m;
		err = kp_types_member_path(e.types, obj->type, member, strlen(member), &m);
		if (!err)
			err = part(&e, obj, &m, member, strlen(member), ret);
	}
	kp_value_destroy(tmp);
	return err;
}

struct kp_error *kp_value_subscript(struct kp_value *v, int64_t index, struct kp_value **ret)
{
	struct kp_eval_env e = ev_of(v);
	return kp_nav_subscript(&e, v, index, 0, ret);
}

struct kp_error *kp_value_deref(struct kp_value *v, struct kp_value **ret)
{
	struct kp_eval_env e = ev_of(v);
	struct kp_value *r;
	struct kp_error *err = rvalue_of(&e, v, &r);
	if (err)
		return err;
	err = kp_nav_deref(&e, r, 0, ret);
	kp_value_destroy(r);
	return err;
}

struct kp_error *kp_value_address_of(struct kp_value *v, struct kp_value **ret)
{
	struct kp_eval_env e = ev_of(v);
	return kp_nav_address_of(&e, v, 0, ret);
}

struct kp_error *kp_value_cast(struct kp_value *v, const char *type, struct kp_value **ret)
{
	struct kp_eval_env e = ev_of(v);
	uint32_t id;
	struct kp_error *err = kp_parse_type(e.types, type, &id);
	if (err)
		return err;
	return kp_nav_cast(&e, id, v, ret);
}

struct kp_error *kp_value_container_of(struct kp_value *v, const char *type, const char *member,
				       struct kp_value **ret)
{
	struct kp_eval_env e = ev_of(v);
	uint32_t id;
	struct kp_btf_member m;
	struct kp_error *err = kp_parse_type(e.types, type, &id);
	if (!err)
		err = kp_nav_member_path(&e, id, member, strlen(member), &m);
	if (err)
		return err;
	struct kp_value *r;
	if ((err = rvalue_of(&e, v, &r)))
		return err;
	err = kp_nav_container_of(&e, r, id, &m, ret);
	kp_value_destroy(r);
	return err;
}

