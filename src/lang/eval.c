// SPDX-License-Identifier: MIT
// kp_eval(): parses an expression (parse.c) and evaluates its AST over
// kernel memory, symbols and BTF types: C integer promotions and arithmetic,
// pointer arithmetic, array and function decay, member access (bitfields
// included), casts, sizeof, and the builtins container_of, offsetof and
// per_cpu.
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/btf.h>
#include <linux/btf.h>

#include "core/kernel.h"
#include "lang/parse.h"
#include "lang/symbol_type.h"
#include "lang/typename.h"
#include "lang/value.h"
#include "types/types.h"
#include "util/error.h"

// What evaluation reads from: the kernel (memory, symbols) and its types.
struct ev {
	struct kp_kernel *k;
	struct kp_types *types;
};

struct num {
	uint64_t x;
	unsigned size;		// 4 or 8 after promotion
	bool sgn;
};

static char *tname(const struct btf *btf, uint32_t id)
{
	char *s = NULL;
	if (kp_btf_type_name(btf, id, &s))
		return NULL;
	return s;
}

static struct kp_error *type_error(const struct kp_value *v, const char *fmt)
{
	char *name = v->untyped ? NULL : tname(v->btf, v->type);
	struct kp_error *err = kp_error_create(KP_ERR_TYPE, fmt, name ? name : "?");
	free(name);
	return err;
}

static struct kp_error *untyped_error(const struct kp_value *v)
{
	const char *s = v->symbol ? v->symbol : "?";
	return kp_error_create(KP_ERR_TYPE,
			       "no type known for symbol '%s' (BTF has no VAR for it); cast it, "
			       "e.g. (unsigned long)%s or *(struct foo *)&%s", s, s, s);
}

static int vkind(const struct kp_value *v)
{
	return kp_btf_kind(v->btf, v->type);
}

static void norm(struct num *n)
{
	if (n->size < 8) {
		uint64_t mask = (1ULL << (n->size * 8)) - 1;
		n->x &= mask;
		if (n->sgn && (n->x >> (n->size * 8 - 1)))
			n->x |= ~mask;
	}
}

static struct kp_error *get_num(struct kp_value *v, struct num *ret)
{
	if (v->untyped)
		return untyped_error(v);
	if (!kp_btf_is_integer(v->btf, v->type))
		return type_error(v, "expected an integer, got %s");
	uint64_t size = kp_btf_size(v->btf, v->type);
	struct kp_error *err = kp_value_scalar(v, &ret->x);
	if (err)
		return err;
	// Integer promotion: everything narrower than int becomes int.
	ret->sgn = size < 4 || v->bit_size ? true : kp_btf_is_signed(v->btf, v->type);
	ret->size = size < 4 || (v->bit_size && v->bit_size < 32) ? 4 : size > 8 ? 8 : (unsigned)size;
	norm(ret);
	return NULL;
}

static struct kp_error *make_num(struct ev *e, struct num n, struct kp_value **ret)
{
	uint32_t type;
	struct kp_error *err = kp_types_int_type(e->types, n.size, n.sgn, &type);
	if (err)
		return err;
	return kp_value_from_u64(e->k, type, n.x, ret);
}

static struct kp_error *make_ulong(struct ev *e, uint64_t x, struct kp_value **ret)
{
	return make_num(e, (struct num){ x, 8, false }, ret);
}

// Arrays and functions used as values become pointers (consumes v).
static struct kp_error *decay(struct ev *e, struct kp_value *v, struct kp_value **ret)
{
	int kind = v->untyped ? -1 : vkind(v);
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

// Target type of a pointer value and its element size for arithmetic.
static uint32_t ptr_target(const struct kp_value *v, uint64_t *esize_ret)
{
	const struct btf_type *t = btf__type_by_id(v->btf, kp_btf_strip(v->btf, v->type));
	uint32_t target = t ? t->type : 0;
	uint64_t esize = kp_btf_size(v->btf, target);
	// GNU C: void * and function pointers step by one byte.
	*esize_ret = esize ? esize : 1;
	return target;
}

// Element size for pointer arithmetic; an element type past 2^64 bytes
// is an error, not a step of 0 or 1.
static struct kp_error *ptr_step(const struct kp_value *v, uint64_t *esize_ret)
{
	uint64_t esize, checked;
	uint32_t target = ptr_target(v, &esize);
	struct kp_error *err = kp_btf_size_checked(v->btf, target, &checked);
	if (err)
		return err;
	*esize_ret = esize;
	return NULL;
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
static struct kp_error *part(struct ev *e, struct kp_value *v, const struct kp_btf_member *m,
			     const char *what, size_t what_len, struct kp_value **ret)
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

static struct kp_error *member(struct ev *e, struct kp_value *v, const struct kp_tok *name,
			       struct kp_value **ret)
{
	struct kp_btf_member m;
	struct kp_error *err = kp_btf_member(v->btf, v->type, name->s, name->len, &m);
	if (err)
		return err;
	return part(e, v, &m, name->s, name->len, ret);
}

static bool struct_kind(int kind)
{
	return kind == BTF_KIND_STRUCT || kind == BTF_KIND_UNION;
}

static struct kp_error *cast(struct ev *e, uint32_t type, struct kp_value *v,
			     struct kp_value **ret)
{
	struct btf *btf = v->btf;
	int tk = kp_btf_kind(btf, type);
	int vk = v->untyped ? -1 : vkind(v);
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
		char *to = tname(btf, type), *from = tname(btf, v->type);
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
	struct kp_error *err = src == v ? NULL : decay(e, src, &d);
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

static bool is_ptr(const struct kp_value *v)
{
	return !v->untyped && vkind(v) == BTF_KIND_PTR;
}

static struct kp_error *truth(struct kp_value *v, bool *ret)
{
	if (v->untyped)
		return untyped_error(v);
	if (!kp_btf_is_scalar(v->btf, v->type))
		return type_error(v, "expected a scalar, got %s");
	uint64_t x;
	struct kp_error *err = kp_value_scalar(v, &x);
	if (!err)
		*ret = x != 0;
	return err;
}

static struct kp_error *eval(struct ev *e, const struct kp_node *n, struct kp_value **ret);

// Evaluates n to a value that has a type: an untyped symbol is an error.
static struct kp_error *eval_typed(struct ev *e, const struct kp_node *n,
				   struct kp_value **ret)
{
	struct kp_value *v;
	struct kp_error *err = eval(e, n, &v);
	if (err)
		return err;
	if (v->untyped) {
		err = untyped_error(v);
		kp_value_destroy(v);
		return err;
	}
	*ret = v;
	return NULL;
}

static struct kp_error *eval_rvalue(struct ev *e, const struct kp_node *n,
				    struct kp_value **ret)
{
	struct kp_value *v = NULL;	// gcc -O2 cannot see eval_typed() sets it
	struct kp_error *err = eval_typed(e, n, &v);
	if (err)
		return err;
	return decay(e, v, ret);
}

static struct kp_error *binary_arith(struct ev *e, const struct kp_node *n,
				     struct kp_value *a, struct kp_value *b,
				     struct kp_value **ret)
{
	int op = n->op;
	bool pa = is_ptr(a), pb = is_ptr(b);
	struct kp_error *err;
	if (pa || pb) {
		uint64_t xa, xb, esize = 1;
		if ((err = kp_value_scalar(a, &xa)) || (err = kp_value_scalar(b, &xb)))
			return err;
		bool cmp = op == KP_OP_EQ || op == KP_OP_NE || op == '<' || op == '>' ||
			op == KP_OP_LE || op == KP_OP_GE;
		if (cmp) {
			bool r = op == KP_OP_EQ ? xa == xb : op == KP_OP_NE ? xa != xb :
				op == '<' ? xa < xb : op == '>' ? xa > xb :
				op == KP_OP_LE ? xa <= xb : xa >= xb;
			return make_num(e, (struct num){ r, 4, true }, ret);
		}
		if (pa && pb && op == '-') {
			if ((err = ptr_step(a, &esize)))
				return err;
			return make_num(e, (struct num){ (uint64_t)((int64_t)(xa - xb) / (int64_t)esize),
							 8, true }, ret);
		}
		struct kp_value *p = pa ? a : b, *i = pa ? b : a;
		struct num ni;
		if ((op != '+' && !(op == '-' && pa)) || (pa && pb))
			return kp_error_create(KP_ERR_TYPE,
					       "invalid pointer arithmetic at column %d", n->col);
		if ((err = get_num(i, &ni)))
			return err;
		if ((err = ptr_step(p, &esize)))
			return err;
		uint64_t xp = pa ? xa : xb;
		uint64_t r = op == '+' ? xp + ni.x * esize : xp - ni.x * esize;
		return kp_value_from_u64(e->k, p->type, r, ret);
	}
	struct num x, y;
	if ((err = get_num(a, &x)) || (err = get_num(b, &y)))
		return err;
	struct num r;
	if (op == KP_OP_SHL || op == KP_OP_SHR) {
		r = x;
		unsigned bits = x.size * 8;
		if (y.x >= bits)
			r.x = op == KP_OP_SHR && r.sgn && (int64_t)x.x < 0 ? UINT64_MAX : 0;
		else if (op == KP_OP_SHL)
			r.x = x.x << y.x;
		else
			r.x = r.sgn ? (uint64_t)((int64_t)x.x >> y.x) : x.x >> y.x;
		norm(&r);
		return make_num(e, r, ret);
	}
	r.size = x.size > y.size ? x.size : y.size;
	r.sgn = x.size == y.size ? x.sgn && y.sgn : x.size > y.size ? x.sgn : y.sgn;
	x.size = y.size = r.size;
	x.sgn = y.sgn = r.sgn;
	norm(&x);
	norm(&y);
	int64_t sx = (int64_t)x.x, sy = (int64_t)y.x;
	switch (op) {
	case '+': r.x = x.x + y.x; break;
	case '-': r.x = x.x - y.x; break;
	case '*': r.x = x.x * y.x; break;
	case '&': r.x = x.x & y.x; break;
	case '|': r.x = x.x | y.x; break;
	case '^': r.x = x.x ^ y.x; break;
	case '/':
	case '%':
		if (!y.x)
			return kp_error_create(KP_ERR_INVALID, "division by zero at column %d",
					       n->col);
		if (r.sgn && !(sy == -1 && sx == INT64_MIN))
			r.x = (uint64_t)(op == '/' ? sx / sy : sx % sy);
		else if (r.sgn)
			r.x = op == '/' ? x.x : 0;	// INT64_MIN / -1 wraps
		else
			r.x = op == '/' ? x.x / y.x : x.x % y.x;
		break;
	default: {
		bool t;
		if (r.sgn)
			t = op == KP_OP_EQ ? sx == sy : op == KP_OP_NE ? sx != sy :
				op == '<' ? sx < sy : op == '>' ? sx > sy :
				op == KP_OP_LE ? sx <= sy : sx >= sy;
		else
			t = op == KP_OP_EQ ? x.x == y.x : op == KP_OP_NE ? x.x != y.x :
				op == '<' ? x.x < y.x : op == '>' ? x.x > y.x :
				op == KP_OP_LE ? x.x <= y.x : x.x >= y.x;
		return make_num(e, (struct num){ t, 4, true }, ret);
	}
	}
	norm(&r);
	return make_num(e, r, ret);
}

static struct kp_error *eval_binary(struct ev *e, const struct kp_node *n,
				    struct kp_value **ret)
{
	struct kp_value *a = NULL, *b = NULL;
	struct kp_error *err = eval_rvalue(e, n->a, &a);
	if (err)
		return err;
	if (n->op == KP_OP_ANDAND || n->op == KP_OP_OROR) {
		bool ta, tb = false;
		err = truth(a, &ta);
		if (!err && (n->op == KP_OP_ANDAND ? ta : !ta)) {
			err = eval_rvalue(e, n->b, &b);
			if (!err)
				err = truth(b, &tb);
		} else if (!err) {
			tb = ta;
		}
		if (!err)
			err = make_num(e, (struct num){ tb, 4, true }, ret);
	} else {
		err = eval_rvalue(e, n->b, &b);
		if (!err)
			err = binary_arith(e, n, a, b, ret);
	}
	kp_value_destroy(a);
	kp_value_destroy(b);
	return err;
}

// &a: a pointer to lvalue a (untyped symbols give void *).
static struct kp_error *address_of(struct ev *e, struct kp_value *a, int col,
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

// *a for a pointer rvalue a.
static struct kp_error *deref(struct ev *e, struct kp_value *a, int col, struct kp_value **ret)
{
	uint64_t x, esize;
	if (!is_ptr(a))
		return type_error(a, "cannot dereference a value of type %s (not a pointer)");
	uint32_t target = ptr_target(a, &esize);
	if (kp_btf_kind(a->btf, target) == BTF_KIND_UNKN)
		return kp_error_create(KP_ERR_TYPE,
				       "cannot dereference a void pointer at column %d; "
				       "cast it first, e.g. *(unsigned long *)p", col);
	struct kp_error *err = kp_value_scalar(a, &x);
	if (err)
		return err;
	return kp_value_lvalue(e->k, target, x, ret);
}

static struct kp_error *eval_unary(struct ev *e, const struct kp_node *n,
				   struct kp_value **ret)
{
	struct kp_value *a;
	struct kp_error *err;
	if (n->op == '&') {
		if ((err = eval(e, n->a, &a)))
			return err;
		err = address_of(e, a, n->col, ret);
		kp_value_destroy(a);
		return err;
	}
	if ((err = eval_rvalue(e, n->a, &a)))
		return err;
	if (n->op == '*') {
		err = deref(e, a, n->col, ret);
	} else if (n->op == '!') {
		bool t;
		if (!(err = truth(a, &t)))
			err = make_num(e, (struct num){ !t, 4, true }, ret);
	} else {
		struct num x;
		if (!(err = get_num(a, &x))) {
			if (n->op == '-')
				x.x = -x.x;
			else if (n->op == '~')
				x.x = ~x.x;
			norm(&x);
			err = make_num(e, x, ret);
		}
	}
	kp_value_destroy(a);
	return err;
}

// a[idx] of an array (lvalue or rvalue) or a pointer a.
static struct kp_error *subscript(struct ev *e, struct kp_value *a, uint64_t idx, int col,
				  struct kp_value **ret)
{
	struct kp_error *err;
	int kind = a->untyped ? -1 : vkind(a);
	if (a->untyped)
		return untyped_error(a);
	if (kind == BTF_KIND_ARRAY) {
		const struct btf_type *t = btf__type_by_id(a->btf, kp_btf_strip(a->btf, a->type));
		const struct btf_array *arr = btf_array(t);
		uint64_t esize = kp_btf_size(a->btf, arr->type);
		if (a->lvalue) {
			err = kp_value_lvalue(e->k, arr->type, a->address + idx * esize, ret);
			if (!err)
				inherit_percpu(a, *ret);
			return err;
		}
		if (idx >= arr->nelems || (idx + 1) * esize > a->size)
			return kp_error_create(KP_ERR_INVALID, "index %" PRId64 " out of bounds [0, %u)",
					       (int64_t)idx, arr->nelems);
		return kp_value_rvalue(e->k, arr->type, a->data + idx * esize, esize, ret);
	}
	if (kind == BTF_KIND_PTR) {
		uint64_t esize, x;
		uint32_t target = ptr_target(a, &esize);
		if (kp_btf_kind(a->btf, target) == BTF_KIND_UNKN)
			return kp_error_create(KP_ERR_TYPE, "cannot index a void pointer at column %d",
					       col);
		if ((err = ptr_step(a, &esize)) || (err = kp_value_scalar(a, &x)))
			return err;
		return kp_value_lvalue(e->k, target, x + idx * esize, ret);
	}
	return type_error(a, "cannot index a value of type %s");
}

static struct kp_error *eval_index(struct ev *e, const struct kp_node *n,
				   struct kp_value **ret)
{
	struct kp_value *a, *i;
	struct kp_error *err = eval(e, n->a, &a);
	if (err)
		return err;
	if ((err = eval_rvalue(e, n->b, &i))) {
		kp_value_destroy(a);
		return err;
	}
	struct num idx;
	if (!(err = get_num(i, &idx)))
		err = subscript(e, a, idx.x, n->col, ret);
	kp_value_destroy(a);
	kp_value_destroy(i);
	return err;
}

static struct kp_error *eval_member(struct ev *e, const struct kp_node *n,
				    struct kp_value **ret)
{
	struct kp_value *a;
	struct kp_error *err = n->kind == KP_N_ARROW ? eval_rvalue(e, n->a, &a) : eval(e, n->a, &a);
	if (err)
		return err;
	int kind = a->untyped ? -1 : vkind(a);
	if (a->untyped) {
		err = untyped_error(a);
	} else if (n->kind == KP_N_MEMBER) {
		if (kind == BTF_KIND_PTR)
			err = type_error(a, "'.' on a pointer (%s): use '->'");
		else if (!struct_kind(kind))
			err = type_error(a, "'.' on %s, which is not a struct or union");
		else
			err = member(e, a, n->tok, ret);
	} else {
		uint64_t esize, x;
		uint32_t target = kind == BTF_KIND_PTR ? ptr_target(a, &esize) : 0;
		struct kp_value *obj;
		if (struct_kind(kind))
			err = type_error(a, "'->' on %s, which is not a pointer: use '.'");
		else if (kind != BTF_KIND_PTR || !struct_kind(kp_btf_kind(a->btf, target)))
			err = type_error(a, "'->' on %s, which is not a pointer to a struct or union");
		else if (!(err = kp_value_scalar(a, &x)) &&
			 !(err = kp_value_lvalue(e->k, target, x, &obj))) {
			err = member(e, obj, n->tok, ret);
			kp_value_destroy(obj);
		}
	}
	kp_value_destroy(a);
	return err;
}

static struct kp_error *eval_num(struct ev *e, const struct kp_tok *t,
				 struct kp_value **ret)
{
	struct num r = { t->num, 4, true };
	if (t->num_unsigned && !t->num_long && t->num <= UINT32_MAX)
		r.sgn = false;
	else if (!t->num_long && !t->num_unsigned && t->num <= INT32_MAX)
		;
	else if (!t->num_unsigned && t->num <= INT64_MAX)
		r.size = 8;
	else
		r = (struct num){ t->num, 8, false };
	return make_num(e, r, ret);
}

// container_of(a, type, member): a pointer to type, m bytes before a.
static struct kp_error *container_of(struct ev *e, struct kp_value *a, uint32_t type,
				     const struct kp_btf_member *m, struct kp_value **ret)
{
	uint64_t x;
	uint32_t ptr;
	struct kp_error *err;
	if (!is_ptr(a) && !kp_btf_is_integer(a->btf, a->type))
		return type_error(a, "container_of() needs a pointer, got %s");
	if ((err = kp_value_scalar(a, &x)) || (err = kp_types_pointer_to(e->types, type, &ptr)))
		return err;
	return kp_value_from_u64(e->k, ptr, x - m->bit_offset / 8, ret);
}

static struct kp_error *eval_builtin(struct ev *e, const struct kp_node *n,
				     struct kp_value **ret)
{
	struct kp_error *err;
	struct kp_btf_member m = { 0 };
	struct kp_value *a = NULL;
	if (n->kind == KP_N_CONTAINER_OF || n->kind == KP_N_OFFSETOF) {
		if ((err = kp_types_member_path(e->types, n->type, n->path, n->path_len, &m)))
			return err;
		if (m.bit_size)
			return kp_error_create(KP_ERR_TYPE, "'%.*s' is a bitfield", (int)n->path_len,
					       n->path);
		if (n->kind == KP_N_OFFSETOF)
			return make_ulong(e, m.bit_offset / 8, ret);
		if ((err = eval_rvalue(e, n->a, &a)))
			return err;
		err = container_of(e, a, n->type, &m, ret);
		kp_value_destroy(a);
		return err;
	}
	// per_cpu(var, cpu): var's address is an offset into each CPU's area.
	struct kp_value *cpu = NULL;
	struct num c;
	struct kp_symbol sym;
	uint64_t off;
	if ((err = eval(e, n->a, &a)))
		return err;
	if (!a->lvalue || a->bit_size)
		err = kp_error_create(KP_ERR_TYPE, "per_cpu() needs a variable");
	else if (!(err = eval_rvalue(e, n->b, &cpu)) && !(err = get_num(cpu, &c))) {
		if ((err = kp_kernel_check_cpu(e->k, c.x)))
			err = kp_error_prefix(err, "per_cpu()");
		else if ((err = kp_symbol_by_name(e->k, "__per_cpu_offset", &sym)))
			err = kp_error_prefix(err, "per_cpu()");
		else if (!(err = kp_read(e->k, KP_VIRT, sym.address + c.x * 8, &off, 8))) {
			err = kp_value_lvalue(e->k, a->type, a->address + off, ret);
			if (!err && a->untyped) {
				(*ret)->untyped = true;
				(*ret)->symbol = a->symbol ? strdup(a->symbol) : NULL;
			}
		}
	}
	kp_value_destroy(a);
	kp_value_destroy(cpu);
	return err;
}

static struct kp_error *eval(struct ev *e, const struct kp_node *n, struct kp_value **ret)
{
	struct kp_error *err;
	struct kp_value *a;
	switch (n->kind) {
	case KP_N_NUM:
		return eval_num(e, n->tok, ret);
	case KP_N_IDENT: {
		char name[256];
		if (n->tok->len >= sizeof(name))
			return kp_error_create(KP_ERR_NOT_FOUND, "symbol name too long at column %d",
					       n->col);
		memcpy(name, n->tok->s, n->tok->len);
		name[n->tok->len] = '\0';
		return kp_resolve_symbol(e->k, name, ret);
	}
	case KP_N_MEMBER:
	case KP_N_ARROW:
		return eval_member(e, n, ret);
	case KP_N_INDEX:
		return eval_index(e, n, ret);
	case KP_N_UNARY:
		return eval_unary(e, n, ret);
	case KP_N_CAST:
		if ((err = eval(e, n->a, &a)))
			return err;
		err = cast(e, n->type, a, ret);
		kp_value_destroy(a);
		return err;
	case KP_N_BINARY:
		return eval_binary(e, n, ret);
	case KP_N_SIZEOF_TYPE:
	case KP_N_SIZEOF_EXPR: {
		uint32_t type = n->type;
		if (n->kind == KP_N_SIZEOF_EXPR) {
			if ((err = eval(e, n->a, &a)))
				return err;
			if (a->untyped || a->bit_size)
				err = a->untyped ? untyped_error(a) :
					kp_error_create(KP_ERR_TYPE, "sizeof of a bitfield");
			type = a->type;
			kp_value_destroy(a);
			if (err)
				return err;
		}
		uint64_t size;
		if ((err = kp_btf_size_checked(kp_types_btf(e->types), type, &size)))
			return err;
		if (!size && kp_btf_kind(kp_types_btf(e->types), type) != BTF_KIND_ARRAY) {
			char *name = tname(kp_types_btf(e->types), type);
			err = kp_error_create(KP_ERR_TYPE, "sizeof of incomplete type %s",
					      name ? name : "?");
			free(name);
			return err;
		}
		return make_ulong(e, size, ret);
	}
	default:
		return eval_builtin(e, n, ret);
	}
}

struct kp_error *kp_eval(struct kp_kernel *kernel, const char *expr, struct kp_value **ret)
{
	struct ev e = { .k = kernel };
	struct kp_error *err = kp_kernel_types(kernel, &e.types);
	if (err)
		return err;
	struct kp_ast ast;
	if ((err = kp_parse_expr(e.types, expr, &ast)))
		return err;
	err = eval_typed(&e, ast.root, ret);
	kp_ast_deinit(&ast);
	return err;
}

// ---------------------------------------------------------------- navigation API

static struct ev ev_of(const struct kp_value *v)
{
	return (struct ev){ .k = v->kernel, .types = v->types };
}

// A copy of v with arrays and functions decayed to pointers (consumed by
// the caller).
static struct kp_error *rvalue_of(struct ev *e, struct kp_value *v, struct kp_value **ret)
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
	return decay(e, copy, ret);
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
	struct ev e = ev_of(v);
	if (v->untyped)
		return untyped_error(v);
	struct kp_value *obj = v, *tmp = NULL;
	struct kp_error *err;
	// p->m and s.m alike.
	if (vkind(v) == BTF_KIND_PTR) {
		if ((err = deref(&e, v, 0, &tmp)))
			return err;
		obj = tmp;
	}
	if (!struct_kind(vkind(obj))) {
		err = type_error(obj, "member of %s, which is not a struct or union");
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
	struct ev e = ev_of(v);
	return subscript(&e, v, (uint64_t)index, 0, ret);
}

struct kp_error *kp_value_deref(struct kp_value *v, struct kp_value **ret)
{
	struct ev e = ev_of(v);
	struct kp_value *r;
	struct kp_error *err = rvalue_of(&e, v, &r);
	if (err)
		return err;
	err = deref(&e, r, 0, ret);
	kp_value_destroy(r);
	return err;
}

struct kp_error *kp_value_address_of(struct kp_value *v, struct kp_value **ret)
{
	struct ev e = ev_of(v);
	return address_of(&e, v, 0, ret);
}

struct kp_error *kp_value_cast(struct kp_value *v, const char *type, struct kp_value **ret)
{
	struct ev e = ev_of(v);
	uint32_t id;
	struct kp_error *err = kp_parse_type(e.types, type, &id);
	if (err)
		return err;
	return cast(&e, id, v, ret);
}

struct kp_error *kp_value_container_of(struct kp_value *v, const char *type, const char *member,
				       struct kp_value **ret)
{
	struct ev e = ev_of(v);
	uint32_t id;
	struct kp_btf_member m;
	struct kp_error *err = kp_parse_type(e.types, type, &id);
	if (!err)
		err = kp_types_member_path(e.types, id, member, strlen(member), &m);
	if (err)
		return err;
	if (m.bit_size)
		return kp_error_create(KP_ERR_TYPE, "'%s' is a bitfield", member);
	struct kp_value *r;
	if ((err = rvalue_of(&e, v, &r)))
		return err;
	err = container_of(&e, r, id, &m, ret);
	kp_value_destroy(r);
	return err;
}
