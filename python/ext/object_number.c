// SPDX-License-Identifier: MIT
// Arithmetic and comparisons of kpeek.Object with C's semantics: pointer
// plus or minus an integer steps by the pointee's size, pointer minus
// pointer counts elements, integers follow the usual arithmetic
// conversions (promotion to int, the wider type, unsigned on a tie) and
// wrap at the result type's width; / and % truncate toward zero as C's.
#include "kpy.h"

enum op { OP_ADD, OP_SUB, OP_MUL, OP_DIV, OP_MOD, OP_AND, OP_OR, OP_XOR, OP_SHL, OP_SHR };

struct operand {
	PyObject *n;		// its value as a Python int (new reference)
	struct kp_type *t;	// NULL for a Python int
	enum kp_type_kind kind;
	uint64_t size;
};

static void operand_clear(struct operand *o)
{
	Py_CLEAR(o->n);
	kp_type_destroy(o->t);
	o->t = NULL;
}

// 1 ok, 0 not a number (NotImplemented), -1 error.
static int operand(PyObject *x, struct operand *ret)
{
	*ret = (struct operand){ .kind = KP_TYPE_INT };
	if (PyLong_Check(x)) {
		ret->n = Py_NewRef(x);
		return 1;
	}
	if (!KPY_CHECK_OBJECT(x))
		return 0;
	struct kp_error *err = kp_value_type(((KpyObject *)x)->v, &ret->t);
	if (err)
		return kpy_error_int(err);
	ret->kind = kpy_type_real_kind(ret->t);
	if (ret->kind == KP_TYPE_ARRAY || ret->kind == KP_TYPE_STRUCT ||
	    ret->kind == KP_TYPE_UNION || ret->kind == KP_TYPE_FLOAT) {
		operand_clear(ret);
		PyErr_SetString(PyExc_TypeError, "unsupported operand: not an integer or pointer");
		return -1;
	}
	struct kp_error *e2 = kp_type_sizeof(ret->t, &ret->size);
	kp_error_destroy(e2);
	if (!(ret->n = kpy_object_int((KpyObject *)x))) {
		operand_clear(ret);
		return -1;
	}
	return 1;
}

// The type of an integer result: C's usual arithmetic conversions.
static struct kp_type *result_type(KpyProgram *prog, struct operand *a, struct operand *b,
				   bool shift)
{
	struct operand *w = !a->t ? b : (!b->t || shift) ? a : NULL;
	if (!w) {
		bool as = kp_type_is_signed(a->t), bs = kp_type_is_signed(b->t);
		w = a->size > b->size ? a : b->size > a->size ? b : !as ? a : !bs ? b : a;
	}
	struct kp_type *t = NULL;
	// An enum computes in its underlying integer type, a small one in int.
	struct kp_error *err = w->size < 4 ? kp_type_lookup(prog->k, "int", &t) :
		w->kind == KP_TYPE_ENUM ? kp_type_lookup(prog->k, kp_type_is_signed(w->t) ?
			(w->size > 4 ? "long" : "int") : (w->size > 4 ? "unsigned long" : "unsigned int"), &t) :
		kpy_type_copy(w->t, &t);
	if (err)
		return kpy_error(err), NULL;
	return t;
}

static PyObject *c_div(PyObject *x, PyObject *y, bool mod)
{
	// C truncates toward zero: |x| / |y| with the sign of the quotient.
	PyObject *ax = PyNumber_Absolute(x), *ay = ax ? PyNumber_Absolute(y) : NULL;
	PyObject *q = ay ? PyNumber_FloorDivide(ax, ay) : NULL;
	Py_XDECREF(ax);
	Py_XDECREF(ay);
	if (!q)
		return NULL;
	PyObject *zero = PyLong_FromLong(0);
	int xneg = PyObject_RichCompareBool(x, zero, Py_LT);
	int yneg = PyObject_RichCompareBool(y, zero, Py_LT);
	Py_XDECREF(zero);
	if (xneg != yneg)
		Py_SETREF(q, PyNumber_Negative(q));
	if (!mod || !q)
		return q;
	PyObject *qy = PyNumber_Multiply(q, y);
	Py_DECREF(q);
	PyObject *r = qy ? PyNumber_Subtract(x, qy) : NULL;
	Py_XDECREF(qy);
	return r;
}

static PyObject *int_op(PyObject *x, PyObject *y, enum op op)
{
	switch (op) {
	case OP_ADD: return PyNumber_Add(x, y);
	case OP_SUB: return PyNumber_Subtract(x, y);
	case OP_MUL: return PyNumber_Multiply(x, y);
	case OP_DIV:
	case OP_MOD:
		if (!PyObject_IsTrue(y))
			return PyErr_Format(PyExc_ZeroDivisionError, "division by zero");
		return c_div(x, y, op == OP_MOD);
	case OP_AND: return PyNumber_And(x, y);
	case OP_OR: return PyNumber_Or(x, y);
	case OP_XOR: return PyNumber_Xor(x, y);
	case OP_SHL: return PyNumber_Lshift(x, y);
	case OP_SHR: return PyNumber_Rshift(x, y);
	}
	return NULL;
}

static PyObject *make(KpyProgram *prog, struct kp_type *t, PyObject *n)
{
	unsigned long long x = PyLong_AsUnsignedLongLongMask(n);
	if (x == (unsigned long long)-1 && PyErr_Occurred())
		return NULL;
	struct kp_value *v;
	struct kp_error *err = kp_type_value_from_u64(t, x, &v);
	return err ? kpy_error(err) : kpy_object_new(prog, v);
}

// The size a pointer steps by.
static int pointer_step(struct kp_type *ptr, uint64_t *ret)
{
	struct kp_type *r = kpy_type_resolve(ptr), *target = NULL;
	struct kp_error *err = r ? kp_type_target(r, &target) : NULL;
	kp_type_destroy(r);
	if (!err && target)
		err = kp_type_sizeof(target, ret);
	kp_type_destroy(target);
	if (err)
		return kpy_error_int(err);
	return target ? 0 : (PyErr_SetString(PyExc_TypeError, "bad pointer type"), -1);
}

static PyObject *pointer_op(KpyProgram *prog, struct operand *a, struct operand *b, enum op op)
{
	uint64_t step;
	struct operand *p = a->kind == KP_TYPE_POINTER ? a : b, *n = p == a ? b : a;
	if (pointer_step(p->t, &step) < 0)
		return NULL;
	if (op == OP_SUB && a->kind == KP_TYPE_POINTER && b->kind == KP_TYPE_POINTER) {
		// element count, as C's ptrdiff_t
		PyObject *d = PyNumber_Subtract(a->n, b->n), *s = PyLong_FromUnsignedLongLong(step);
		PyObject *r = d && s && step ? c_div(d, s, false) : NULL;
		if (!step && d && s)
			PyErr_SetString(PyExc_TypeError, "pointer difference of a zero-sized type");
		Py_XDECREF(d);
		Py_XDECREF(s);
		return r;
	}
	if ((op != OP_ADD && op != OP_SUB) || n->kind == KP_TYPE_POINTER ||
	    (op == OP_SUB && p == b))
		return PyErr_Format(PyExc_TypeError, "invalid operands to pointer arithmetic");
	PyObject *s = PyLong_FromUnsignedLongLong(step);
	PyObject *off = s ? PyNumber_Multiply(n->n, s) : NULL;
	PyObject *r = off ? int_op(p->n, off, op) : NULL;
	Py_XDECREF(s);
	Py_XDECREF(off);
	if (!r)
		return NULL;
	PyObject *obj = make(prog, p->t, r);
	Py_DECREF(r);
	return obj;
}

static PyObject *binary(PyObject *x, PyObject *y, enum op op)
{
	struct operand a, b;
	int ra = operand(x, &a);
	if (ra <= 0)
		return ra < 0 ? NULL : Py_NewRef(Py_NotImplemented);
	int rb = operand(y, &b);
	if (rb <= 0) {
		operand_clear(&a);
		return rb < 0 ? NULL : Py_NewRef(Py_NotImplemented);
	}
	KpyProgram *prog = ((KpyObject *)(KPY_CHECK_OBJECT(x) ? x : y))->prog;
	PyObject *r = NULL;
	if (a.kind == KP_TYPE_POINTER || b.kind == KP_TYPE_POINTER) {
		r = pointer_op(prog, &a, &b, op);
	} else {
		struct kp_type *t = result_type(prog, &a, &b, op == OP_SHL || op == OP_SHR);
		PyObject *n = t ? int_op(a.n, b.n, op) : NULL;
		r = n ? make(prog, t, n) : NULL;
		Py_XDECREF(n);
		kp_type_destroy(t);
	}
	operand_clear(&a);
	operand_clear(&b);
	return r;
}

#define BINARY(name, op) \
	static PyObject *name(PyObject *x, PyObject *y) { return binary(x, y, op); }
BINARY(nb_add, OP_ADD)
BINARY(nb_sub, OP_SUB)
BINARY(nb_mul, OP_MUL)
BINARY(nb_div, OP_DIV)
BINARY(nb_mod, OP_MOD)
BINARY(nb_and, OP_AND)
BINARY(nb_or, OP_OR)
BINARY(nb_xor, OP_XOR)
BINARY(nb_shl, OP_SHL)
BINARY(nb_shr, OP_SHR)

static PyObject *unary(PyObject *x, int which)
{
	struct operand a;
	int ra = operand(x, &a);
	if (ra <= 0)
		return NULL;
	PyObject *r = NULL;
	if (a.kind == KP_TYPE_POINTER) {
		PyErr_SetString(PyExc_TypeError, "invalid operand to unary operator");
	} else {
		struct operand none = { .kind = KP_TYPE_INT };
		struct kp_type *t = result_type(((KpyObject *)x)->prog, &a, &none, true);
		PyObject *n = !t ? NULL : which == 0 ? PyNumber_Negative(a.n) :
			which == 1 ? PyNumber_Invert(a.n) : Py_NewRef(a.n);
		r = n ? make(((KpyObject *)x)->prog, t, n) : NULL;
		Py_XDECREF(n);
		kp_type_destroy(t);
	}
	operand_clear(&a);
	return r;
}

static PyObject *nb_neg(PyObject *x) { return unary(x, 0); }
static PyObject *nb_invert(PyObject *x) { return unary(x, 1); }
static PyObject *nb_pos(PyObject *x) { return unary(x, 2); }

static PyObject *nb_int(PyObject *x)
{
	return kpy_object_int((KpyObject *)x);
}

static PyObject *nb_float(PyObject *x)
{
	PyObject *n = kpy_object_int((KpyObject *)x);
	PyObject *r = n ? PyNumber_Float(n) : NULL;
	Py_XDECREF(n);
	return r;
}

// drgn: a struct has no truth value; a scalar is true when non-zero.
static int nb_bool(PyObject *x)
{
	PyObject *n = kpy_object_int((KpyObject *)x);
	if (!n)
		return -1;
	int r = PyObject_IsTrue(n);
	Py_DECREF(n);
	return r;
}

static PyObject *richcompare(PyObject *x, PyObject *y, int op)
{
	struct operand a, b;
	int ra = operand(x, &a);
	if (ra <= 0)
		return ra < 0 ? NULL : Py_NewRef(Py_NotImplemented);
	int rb = operand(y, &b);
	if (rb <= 0) {
		operand_clear(&a);
		return rb < 0 ? NULL : Py_NewRef(Py_NotImplemented);
	}
	PyObject *r = PyObject_RichCompare(a.n, b.n, op);
	operand_clear(&a);
	operand_clear(&b);
	return r;
}

static PyNumberMethods number = {
	.nb_add = nb_add,
	.nb_subtract = nb_sub,
	.nb_multiply = nb_mul,
	.nb_floor_divide = nb_div,
	.nb_true_divide = nb_div,
	.nb_remainder = nb_mod,
	.nb_and = nb_and,
	.nb_or = nb_or,
	.nb_xor = nb_xor,
	.nb_lshift = nb_shl,
	.nb_rshift = nb_shr,
	.nb_negative = nb_neg,
	.nb_invert = nb_invert,
	.nb_positive = nb_pos,
	.nb_int = nb_int,
	.nb_index = nb_int,
	.nb_float = nb_float,
	.nb_bool = nb_bool,
};

void kpy_object_init_number(PyTypeObject *type)
{
	type->tp_as_number = &number;
	type->tp_richcompare = richcompare;
	type->tp_hash = PyObject_HashNotImplemented;
}
