// SPDX-License-Identifier: MIT
// C arithmetic on the values of kp_eval(): integers narrower than int are
// promoted to int, the operands of a binary operator are converted to a
// common type (the wider one; unsigned if either of equal size is), shifts
// keep the type of their left operand, and pointers step by the size of
// what they point to (GNU C: void * and function pointers by one byte).
// Results are rvalues of the kernel's own int types (kp_types_int_type).
//
// Where C leaves behaviour undefined, kpeek's rule (doc/expressions.md):
// signed overflow (+, -, *, unary -, <<, INT_MIN / -1) wraps around in two's
// complement, as the kernel itself assumes (it is built with
// -fno-strict-overflow); a shift count that is negative or at least the width
// of the promoted left operand, and division or remainder by zero, are
// errors naming the operator's column; pointer arithmetic and indexing whose
// byte offset or address overflows 64 bits is an error. Conversions (casts)
// follow C's rules for the target type: unsigned types keep the low bits,
// signed ones the two's-complement value of the low bits (what GCC defines).
#include <inttypes.h>

#include "lang/arith.h"
#include "lang/lex.h"
#include "types/types.h"
#include "util/error.h"

// Truncates n to its size, sign-extending a signed one.
static void norm(struct kp_num *n)
{
	if (n->size < 8) {
		uint64_t mask = (1ULL << (n->size * 8)) - 1;
		n->x &= mask;
		if (n->sgn && (n->x >> (n->size * 8 - 1)))
			n->x |= ~mask;
	}
}

struct kp_error *kp_num_of(struct kp_value *v, struct kp_num *ret)
{
	if (v->untyped)
		return kp_value_untyped_error(v);
	if (!kp_btf_is_integer(v->btf, v->type))
		return kp_value_type_error(v, "expected an integer, got %s");
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

struct kp_error *kp_num_value(struct kp_eval_env *e, struct kp_num n, struct kp_value **ret)
{
	uint32_t type;
	struct kp_error *err = kp_types_int_type(e->types, n.size, n.sgn, &type);
	if (err)
		return err;
	return kp_value_from_u64(e->k, type, n.x, ret);
}

struct kp_error *kp_ulong_value(struct kp_eval_env *e, uint64_t x, struct kp_value **ret)
{
	return kp_num_value(e, (struct kp_num){ x, 8, false }, ret);
}

// An int 0 or 1, as C's comparisons and logical operators give.
static struct kp_error *bool_value(struct kp_eval_env *e, bool t, struct kp_value **ret)
{
	return kp_num_value(e, (struct kp_num){ t, 4, true }, ret);
}

struct kp_error *kp_value_truth(struct kp_value *v, bool *ret)
{
	if (v->untyped)
		return kp_value_untyped_error(v);
	if (!kp_btf_is_scalar(v->btf, v->type))
		return kp_value_type_error(v, "expected a scalar, got %s");
	uint64_t x;
	struct kp_error *err = kp_value_scalar(v, &x);
	if (!err)
		*ret = x != 0;
	return err;
}

static bool is_comparison(int op)
{
	return op == KP_OP_EQ || op == KP_OP_NE || op == '<' || op == '>' || op == KP_OP_LE ||
	       op == KP_OP_GE;
}

static bool compare_unsigned(int op, uint64_t x, uint64_t y)
{
	return op == KP_OP_EQ ? x == y : op == KP_OP_NE ? x != y :
		op == '<' ? x < y : op == '>' ? x > y :
		op == KP_OP_LE ? x <= y : x >= y;
}

static bool compare_signed(int op, int64_t x, int64_t y)
{
	return op == KP_OP_EQ ? x == y : op == KP_OP_NE ? x != y :
		op == '<' ? x < y : op == '>' ? x > y :
		op == KP_OP_LE ? x <= y : x >= y;
}

// a op b where a or b is a pointer: comparisons of addresses, the distance
// in elements between two pointers, and pointer + integer, integer +
// pointer, pointer - integer.
static struct kp_error *pointer_arith(struct kp_eval_env *e, int op, int col,
				      struct kp_value *a, struct kp_value *b,
				      struct kp_value **ret)
{
	bool pa = kp_value_is_pointer(a), pb = kp_value_is_pointer(b);
	uint64_t xa, xb, esize = 1;
	struct kp_error *err;
	if ((err = kp_value_scalar(a, &xa)) || (err = kp_value_scalar(b, &xb)))
		return err;
	if (is_comparison(op))
		return bool_value(e, compare_unsigned(op, xa, xb), ret);
	if (pa && pb && op == '-') {
		if ((err = kp_value_pointer_step(a, &esize)))
			return err;
		int64_t elements = (int64_t)(xa - xb) / (int64_t)esize;
		return kp_num_value(e, (struct kp_num){ (uint64_t)elements, 8, true }, ret);
	}
	struct kp_value *p = pa ? a : b, *i = pa ? b : a;
	struct kp_num ni;
	if ((op != '+' && !(op == '-' && pa)) || (pa && pb))
		return kp_error_create(KP_ERR_TYPE, "invalid pointer arithmetic at column %d", col);
	if ((err = kp_num_of(i, &ni)))
		return err;
	if ((err = kp_value_pointer_step(p, &esize)))
		return err;
	int64_t idx = 0;
	if ((err = kp_num_index(ni, col, &idx)))
		return err;
	if (op == '-') {
		if (idx == INT64_MIN)
			return kp_error_create(KP_ERR_INVALID, "pointer offset overflows 64 bits "
					       "at column %d", col);
		idx = -idx;
	}
	uint64_t r;
	if ((err = kp_arith_element(pa ? xa : xb, idx, esize, col, &r)))
		return err;
	return kp_value_from_u64(e->k, p->type, r, ret);
}

struct kp_error *kp_num_index(struct kp_num n, int col, int64_t *ret)
{
	if (!n.sgn && n.x > INT64_MAX)
		return kp_error_create(KP_ERR_INVALID, "index %" PRIu64 " at column %d is "
				       "larger than any array", n.x, col);
	*ret = (int64_t)n.x;
	return NULL;
}

struct kp_error *kp_arith_element(uint64_t base, int64_t idx, uint64_t esize, int col,
				  uint64_t *ret)
{
	int64_t off;
	uint64_t r;
	if (esize > INT64_MAX || __builtin_mul_overflow(idx, (int64_t)esize, &off))
		return kp_error_create(KP_ERR_INVALID, "index %" PRId64 " of %" PRIu64
				       "-byte elements at column %d: the byte offset "
				       "overflows 64 bits", idx, esize, col);
	r = base + (uint64_t)off;
	if (off >= 0 ? r < base : r > base)
		return kp_error_create(KP_ERR_INVALID, "0x%" PRIx64 " %s %" PRIu64
				       " bytes at column %d: the address overflows 64 bits",
				       base, off >= 0 ? "+" : "-",
				       off >= 0 ? (uint64_t)off : -(uint64_t)off, col);
	*ret = r;
	return NULL;
}

// x << y and x >> y: the type of x. A count that is negative or at least
// the width of x is an error (C: undefined); a signed x << y wraps, a
// negative x >> y is arithmetic (what GCC defines).
static struct kp_error *shift(struct kp_eval_env *e, int op, int col, struct kp_num x,
			      struct kp_num y, struct kp_value **ret)
{
	struct kp_num r = x;
	unsigned bits = x.size * 8;
	const char *name = op == KP_OP_SHL ? "<<" : ">>";
	if (y.sgn && (int64_t)y.x < 0)
		return kp_error_create(KP_ERR_INVALID, "'%s' at column %d: negative shift "
				       "count %" PRId64, name, col, (int64_t)y.x);
	if (y.x >= bits)
		return kp_error_create(KP_ERR_INVALID, "'%s' at column %d: shift count %"
				       PRIu64 " is not less than the width of its %s-bit "
				       "left operand (%s); cast it to a wider type first",
				       name, col, y.x, bits == 64 ? "64" : "32",
				       x.sgn ? (bits == 64 ? "long" : "int") :
				       (bits == 64 ? "unsigned long" : "unsigned int"));
	if (op == KP_OP_SHL)
		r.x = x.x << y.x;
	else
		r.x = r.sgn ? (uint64_t)((int64_t)x.x >> y.x) : x.x >> y.x;
	norm(&r);
	return kp_num_value(e, r, ret);
}

// x op y for promoted integers, in their common type; division by zero is
// an error, INT64_MIN / -1 wraps.
static struct kp_error *integer_arith(struct kp_eval_env *e, int op, int col, struct kp_num x,
				      struct kp_num y, struct kp_value **ret)
{
	struct kp_num r;
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
			return kp_error_create(KP_ERR_INVALID, "'%c' at column %d: %s by zero",
					       op, col, op == '/' ? "division" : "remainder");
		if (r.sgn && !(sy == -1 && sx == INT64_MIN))
			r.x = (uint64_t)(op == '/' ? sx / sy : sx % sy);
		else if (r.sgn)
			r.x = op == '/' ? x.x : 0;	// INT64_MIN / -1 wraps
		else
			r.x = op == '/' ? x.x / y.x : x.x % y.x;
		break;
	default:
		return bool_value(e, r.sgn ? compare_signed(op, sx, sy) :
					     compare_unsigned(op, x.x, y.x), ret);
	}
	norm(&r);
	return kp_num_value(e, r, ret);
}

struct kp_error *kp_arith_binary(struct kp_eval_env *e, int op, int col, struct kp_value *a,
				 struct kp_value *b, struct kp_value **ret)
{
	if (kp_value_is_pointer(a) || kp_value_is_pointer(b))
		return pointer_arith(e, op, col, a, b, ret);
	struct kp_num x, y;
	struct kp_error *err;
	if ((err = kp_num_of(a, &x)) || (err = kp_num_of(b, &y)))
		return err;
	if (op == KP_OP_SHL || op == KP_OP_SHR)
		return shift(e, op, col, x, y, ret);
	return integer_arith(e, op, col, x, y, ret);
}

struct kp_error *kp_arith_unary(struct kp_eval_env *e, int op, struct kp_value *a,
				struct kp_value **ret)
{
	struct kp_error *err;
	if (op == '!') {
		bool t;
		if ((err = kp_value_truth(a, &t)))
			return err;
		return bool_value(e, !t, ret);
	}
	struct kp_num x;
	if ((err = kp_num_of(a, &x)))
		return err;
	if (op == '-')
		x.x = -x.x;
	else if (op == '~')
		x.x = ~x.x;
	norm(&x);
	return kp_num_value(e, x, ret);
}
