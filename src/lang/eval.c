// SPDX-License-Identifier: MIT
// kp_eval(): parses an expression (parse.c) and evaluates its AST over
// kernel memory, symbols and BTF types. This file walks the tree; the
// operators are elsewhere: C arithmetic in arith.c (integer promotions,
// pointer arithmetic), members, subscripts, dereference, address-of,
// casts and container_of in navigate.c (shared with the kp_value_*() API),
// sizeof and per_cpu in builtins.c, symbols in symbol_type.c.
#include <string.h>

#include "core/kernel.h"
#include "lang/arith.h"
#include "lang/builtins.h"
#include "lang/navigate.h"
#include "lang/parse.h"
#include "lang/symbol_type.h"
#include "types/types.h"
#include "util/error.h"

static struct kp_error *eval(struct kp_eval_env *e, const struct kp_node *n,
			     struct kp_value **ret);

// Evaluates n to a value that has a type: an untyped symbol is an error.
static struct kp_error *eval_typed(struct kp_eval_env *e, const struct kp_node *n,
				   struct kp_value **ret)
{
	struct kp_value *v;
	struct kp_error *err = eval(e, n, &v);
	if (err)
		return err;
	if (v->untyped) {
		err = kp_value_untyped_error(v);
		kp_value_destroy(v);
		return err;
	}
	*ret = v;
	return NULL;
}

static struct kp_error *eval_rvalue(struct kp_eval_env *e, const struct kp_node *n,
				    struct kp_value **ret)
{
	struct kp_value *v = NULL;	// gcc -O2 cannot see eval_typed() sets it
	struct kp_error *err = eval_typed(e, n, &v);
	if (err)
		return err;
	return kp_nav_decay(e, v, ret);
}

// && and || evaluate their right operand only when the left one does not
// decide.
static struct kp_error *eval_logical(struct kp_eval_env *e, const struct kp_node *n,
				     struct kp_value *a, struct kp_value **b_ret,
				     struct kp_value **ret)
{
	bool ta, tb = false;
	struct kp_error *err = kp_value_truth(a, &ta);
	if (!err && (n->op == KP_OP_ANDAND ? ta : !ta)) {
		err = eval_rvalue(e, n->b, b_ret);
		if (!err)
			err = kp_value_truth(*b_ret, &tb);
	} else if (!err) {
		tb = ta;
	}
	if (!err)
		err = kp_num_value(e, (struct kp_num){ tb, 4, true }, ret);
	return err;
}

static struct kp_error *eval_binary(struct kp_eval_env *e, const struct kp_node *n,
				    struct kp_value **ret)
{
	struct kp_value *a = NULL, *b = NULL;
	struct kp_error *err = eval_rvalue(e, n->a, &a);
	if (err)
		return err;
	if (n->op == KP_OP_ANDAND || n->op == KP_OP_OROR) {
		err = eval_logical(e, n, a, &b, ret);
	} else {
		err = eval_rvalue(e, n->b, &b);
		if (!err)
			err = kp_arith_binary(e, n->op, n->col, a, b, ret);
	}
	kp_value_destroy(a);
	kp_value_destroy(b);
	return err;
}

static struct kp_error *eval_unary(struct kp_eval_env *e, const struct kp_node *n,
				   struct kp_value **ret)
{
	struct kp_value *a;
	struct kp_error *err;
	if (n->op == '&') {
		if ((err = eval(e, n->a, &a)))
			return err;
		err = kp_nav_address_of(e, a, n->col, ret);
		kp_value_destroy(a);
		return err;
	}
	if ((err = eval_rvalue(e, n->a, &a)))
		return err;
	if (n->op == '*')
		err = kp_nav_deref(e, a, n->col, ret);
	else
		err = kp_arith_unary(e, n->op, a, ret);
	kp_value_destroy(a);
	return err;
}

static struct kp_error *eval_index(struct kp_eval_env *e, const struct kp_node *n,
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
	struct kp_num idx;
	int64_t at;
	if (!(err = kp_num_of(i, &idx)) && !(err = kp_num_index(idx, n->col, &at)))
		err = kp_nav_subscript(e, a, at, n->col, ret);
	kp_value_destroy(a);
	kp_value_destroy(i);
	return err;
}

static struct kp_error *eval_member(struct kp_eval_env *e, const struct kp_node *n,
				    struct kp_value **ret)
{
	struct kp_value *a;
	bool arrow = n->kind == KP_N_ARROW;
	struct kp_error *err = arrow ? eval_rvalue(e, n->a, &a) : eval(e, n->a, &a);
	if (err)
		return err;
	err = kp_nav_member_of(e, a, arrow, n->tok->s, n->tok->len, ret);
	kp_value_destroy(a);
	return err;
}

// A literal: int, unless its value or its suffixes need unsigned int, long
// or unsigned long (C's rules for decimal constants with u/l suffixes).
static struct kp_error *eval_num(struct kp_eval_env *e, const struct kp_tok *t,
				 struct kp_value **ret)
{
	struct kp_num r = { t->num, 4, true };
	if (t->num_unsigned && !t->num_long && t->num <= UINT32_MAX)
		r.sgn = false;
	else if (!t->num_long && !t->num_unsigned && t->num <= INT32_MAX)
		;
	else if (!t->num_unsigned && t->num <= INT64_MAX)
		r.size = 8;
	else
		r = (struct kp_num){ t->num, 8, false };
	return kp_num_value(e, r, ret);
}

static struct kp_error *eval_ident(struct kp_eval_env *e, const struct kp_node *n,
				   struct kp_value **ret)
{
	char name[256];
	if (n->tok->len >= sizeof(name))
		return kp_error_create(KP_ERR_NOT_FOUND, "symbol name too long at column %d",
				       n->col);
	memcpy(name, n->tok->s, n->tok->len);
	name[n->tok->len] = '\0';
	return kp_resolve_symbol(e->k, name, ret);
}

static struct kp_error *eval_cast(struct kp_eval_env *e, const struct kp_node *n,
				  struct kp_value **ret)
{
	struct kp_value *a;
	struct kp_error *err = eval(e, n->a, &a);
	if (err)
		return err;
	err = kp_nav_cast(e, n->type, a, ret);
	kp_value_destroy(a);
	return err;
}

static struct kp_error *eval_sizeof(struct kp_eval_env *e, const struct kp_node *n,
				    struct kp_value **ret)
{
	if (n->kind == KP_N_SIZEOF_TYPE)
		return kp_sizeof_type(e, n->type, ret);
	struct kp_value *a;
	struct kp_error *err = eval(e, n->a, &a);
	if (err)
		return err;
	err = kp_sizeof_value(e, a, ret);
	kp_value_destroy(a);
	return err;
}

// container_of(p, type, member) and offsetof(type, member).
static struct kp_error *eval_member_builtin(struct kp_eval_env *e, const struct kp_node *n,
					   struct kp_value **ret)
{
	struct kp_btf_member m;
	struct kp_value *a;
	struct kp_error *err = kp_nav_member_path(e, n->type, n->path, n->path_len, &m);
	if (err)
		return err;
	if (n->kind == KP_N_OFFSETOF)
		return kp_ulong_value(e, m.bit_offset / 8, ret);
	if ((err = eval_rvalue(e, n->a, &a)))
		return err;
	err = kp_nav_container_of(e, a, n->type, &m, ret);
	kp_value_destroy(a);
	return err;
}

static struct kp_error *eval_per_cpu(struct kp_eval_env *e, const struct kp_node *n,
				     struct kp_value **ret)
{
	struct kp_value *var, *cpu = NULL;
	struct kp_error *err = eval(e, n->a, &var);
	if (err)
		return err;
	if (!(err = kp_per_cpu_check_var(var)) && !(err = eval_rvalue(e, n->b, &cpu)))
		err = kp_per_cpu(e, var, cpu, ret);
	kp_value_destroy(var);
	kp_value_destroy(cpu);
	return err;
}

static struct kp_error *eval(struct kp_eval_env *e, const struct kp_node *n,
			     struct kp_value **ret)
{
	switch (n->kind) {
	case KP_N_NUM:
		return eval_num(e, n->tok, ret);
	case KP_N_IDENT:
		return eval_ident(e, n, ret);
	case KP_N_MEMBER:
	case KP_N_ARROW:
		return eval_member(e, n, ret);
	case KP_N_INDEX:
		return eval_index(e, n, ret);
	case KP_N_UNARY:
		return eval_unary(e, n, ret);
	case KP_N_CAST:
		return eval_cast(e, n, ret);
	case KP_N_BINARY:
		return eval_binary(e, n, ret);
	case KP_N_SIZEOF_TYPE:
	case KP_N_SIZEOF_EXPR:
		return eval_sizeof(e, n, ret);
	case KP_N_CONTAINER_OF:
	case KP_N_OFFSETOF:
		return eval_member_builtin(e, n, ret);
	case KP_N_PER_CPU:
	default:
		return eval_per_cpu(e, n, ret);
	}
}

struct kp_error *kp_eval(struct kp_kernel *kernel, const char *expr, struct kp_value **ret)
{
	struct kp_eval_env e = { .k = kernel };
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
