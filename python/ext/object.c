// SPDX-License-Identifier: MIT
// kpeek.Object: a typed value of the kernel (struct kp_value) as drgn's
// Object: members as attributes, [i], value_(), string_(), address_of_(),
// address_, type_, read_(), repr like drgn's. Arithmetic and comparisons
// are in object_number.c.
#include "kpy.h"

PyObject *kpy_object_new(KpyProgram *prog, struct kp_value *v)
{
	KpyObject *self = PyObject_New(KpyObject, &KpyObject_Type);
	if (!self) {
		kp_value_destroy(v);
		return NULL;
	}
	self->prog = (KpyProgram *)Py_NewRef(prog);
	self->v = v;
	return (PyObject *)self;
}

static void object_dealloc(KpyObject *self)
{
	kp_value_destroy(self->v);
	Py_XDECREF(self->prog);
	PyObject_Free(self);
}

// Object(prog, type, value=None, *, address=None), as drgn's.
static PyObject *object_new(PyTypeObject *cls, PyObject *args, PyObject *kwds)
{
	static char *kwlist[] = { "prog", "type", "value", "address", NULL };
	KpyProgram *prog;
	PyObject *type, *value = Py_None, *address = Py_None;
	if (!PyArg_ParseTupleAndKeywords(args, kwds, "O!O|O$O:Object", kwlist, &KpyProgram_Type,
					 &prog, &type, &value, &address))
		return NULL;
	if ((value == Py_None) == (address == Py_None))
		return PyErr_Format(PyExc_ValueError, "Object() needs exactly one of value and address");
	if (!prog->k)
		return PyErr_Format(PyExc_ValueError, "Program is not open");
	struct kp_type *t = kpy_type_arg(prog, type);
	if (!t)
		return NULL;
	PyObject *n = PyNumber_Index(value != Py_None ? value : address);
	if (!n) {
		kp_type_destroy(t);
		return NULL;
	}
	unsigned long long x = PyLong_AsUnsignedLongLongMask(n);
	Py_DECREF(n);
	struct kp_value *v = NULL;
	struct kp_error *err = value != Py_None ? kp_type_value_from_u64(t, x, &v) :
		kp_type_value_at(t, x, &v);
	kp_type_destroy(t);
	return err ? kpy_error(err) : kpy_object_new(prog, v);
}

PyObject *kpy_object_int(KpyObject *o)
{
	struct kp_type *t;
	struct kp_error *err = kp_value_type(o->v, &t);
	if (err)
		return kpy_error(err);
	enum kp_type_kind k = kpy_type_real_kind(t);
	bool is_signed = kp_type_is_signed(t);
	kp_type_destroy(t);
	if (k == KP_TYPE_STRUCT || k == KP_TYPE_UNION || k == KP_TYPE_ARRAY ||
	    k == KP_TYPE_FUNCTION || k == KP_TYPE_VOID || k == KP_TYPE_FLOAT)
		return PyErr_Format(PyExc_TypeError, "cannot convert a value of this type to int");
	if (is_signed) {
		int64_t s;
		err = kp_value_to_s64(o->v, &s);
		return err ? kpy_error(err) : PyLong_FromLongLong(s);
	}
	uint64_t u;
	err = kp_value_to_u64(o->v, &u);
	return err ? kpy_error(err) : PyLong_FromUnsignedLongLong(u);
}

// A struct or union, or a pointer to one: where an unknown member is a
// LookupError, not a TypeError.
static bool kpy_object_is_struct(KpyObject *self)
{
	struct kp_type *t, *target;
	struct kp_error *err = kp_value_type(self->v, &t);
	if (err) {
		kp_error_destroy(err);
		return false;
	}
	enum kp_type_kind k = kpy_type_real_kind(t);
	if (k == KP_TYPE_POINTER) {
		struct kp_type *r = kpy_type_resolve(t);
		if (r && !(err = kp_type_target(r, &target))) {
			k = kpy_type_real_kind(target);
			kp_type_destroy(target);
		}
		kp_error_destroy(err);
		kp_type_destroy(r);
	}
	kp_type_destroy(t);
	return k == KP_TYPE_STRUCT || k == KP_TYPE_UNION;
}

static PyObject *member(KpyObject *self, const char *name)
{
	struct kp_value *r;
	struct kp_error *err = kp_value_member(self->v, name, &r);
	return err ? kpy_error(err) : kpy_object_new(self->prog, r);
}

static PyObject *member_(KpyObject *self, PyObject *args)
{
	const char *name;
	if (!PyArg_ParseTuple(args, "s:member_", &name))
		return NULL;
	PyObject *r = member(self, name);
	// drgn: LookupError for an unknown member of a struct.
	if (!r && PyErr_ExceptionMatches(PyExc_TypeError) && kpy_object_is_struct(self)) {
		PyObject *t, *v, *tb;
		PyErr_Fetch(&t, &v, &tb);
		PyErr_SetObject(PyExc_LookupError, v);
		Py_XDECREF(t);
		Py_XDECREF(v);
		Py_XDECREF(tb);
	}
	return r;
}

static PyObject *object_getattro(KpyObject *self, PyObject *name)
{
	PyObject *r = PyObject_GenericGetAttr((PyObject *)self, name);
	if (r || !PyErr_ExceptionMatches(PyExc_AttributeError))
		return r;
	PyErr_Clear();
	const char *s = PyUnicode_AsUTF8(name);
	if (!s)
		return NULL;
	r = member(self, s);
	if (!r && (PyErr_ExceptionMatches(PyExc_TypeError) ||
		   PyErr_ExceptionMatches(PyExc_LookupError))) {
		PyObject *t, *v, *tb;
		PyErr_Fetch(&t, &v, &tb);
		PyErr_Format(PyExc_AttributeError, "%S", v ? v : name);
		Py_XDECREF(t);
		Py_XDECREF(v);
		Py_XDECREF(tb);
	}
	return r;
}

static PyObject *object_item(KpyObject *self, Py_ssize_t i)
{
	struct kp_value *r;
	struct kp_error *err = kp_value_subscript(self->v, i, &r);
	return err ? kpy_error(err) : kpy_object_new(self->prog, r);
}

static PyObject *object_subscript(KpyObject *self, PyObject *key)
{
	Py_ssize_t i = PyNumber_AsSsize_t(key, PyExc_IndexError);
	if (i == -1 && PyErr_Occurred())
		return NULL;
	return object_item(self, i);
}

// len() and iteration of an array (drgn's), through its elements.
static Py_ssize_t object_length(KpyObject *self)
{
	struct kp_type *t;
	struct kp_error *err = kp_value_type(self->v, &t);
	if (err)
		return kpy_error(err), -1;
	bool array = kpy_type_real_kind(t) == KP_TYPE_ARRAY;
	uint64_t n = kp_type_length(t);
	kp_type_destroy(t);
	if (!array) {
		PyErr_SetString(PyExc_TypeError, "len() of an object that is not an array");
		return -1;
	}
	return (Py_ssize_t)n;
}

static PyObject *object_iter(KpyObject *self)
{
	Py_ssize_t n = object_length(self);
	if (n < 0)
		return NULL;
	PyObject *list = PyList_New(0);
	for (Py_ssize_t i = 0; list && i < n; i++) {
		PyObject *e = object_item(self, i);
		if (!e || PyList_Append(list, e) < 0)
			Py_CLEAR(list);
		Py_XDECREF(e);
	}
	PyObject *it = list ? PyObject_GetIter(list) : NULL;
	Py_XDECREF(list);
	return it;
}

static PyObject *deref_(KpyObject *self, PyObject *noargs)
{
	struct kp_value *r;
	struct kp_error *err = kp_value_deref(self->v, &r);
	return err ? kpy_error(err) : kpy_object_new(self->prog, r);
}

static PyObject *address_of_(KpyObject *self, PyObject *noargs)
{
	struct kp_value *r;
	struct kp_error *err = kp_value_address_of(self->v, &r);
	if (err && kp_error_code(err) == KP_ERR_TYPE) {
		PyErr_Format(PyExc_ValueError, "%s", kp_error_message(err));
		kp_error_destroy(err);
		return NULL;
	}
	return err ? kpy_error(err) : kpy_object_new(self->prog, r);
}

static PyObject *get_address(KpyObject *self, void *closure)
{
	uint64_t a;
	if (!kp_value_is_lvalue(self->v))
		Py_RETURN_NONE;
	struct kp_error *err = kp_value_address(self->v, &a);
	if (err) {
		kp_error_destroy(err);	// a bitfield has none
		Py_RETURN_NONE;
	}
	return PyLong_FromUnsignedLongLong(a);
}

static PyObject *get_type(KpyObject *self, void *closure)
{
	struct kp_type *t;
	struct kp_error *err = kp_value_type(self->v, &t);
	return err ? kpy_error(err) : kpy_type_new(self->prog, t);
}

static PyObject *get_prog(KpyObject *self, void *closure)
{
	return Py_NewRef(self->prog);
}

static PyObject *string_(KpyObject *self, PyObject *noargs)
{
	uint64_t size = kp_value_size(self->v);
	size_t cap = size >= 4096 && size < (1u << 20) ? (size_t)size + 1 : 4096;
	char *buf = malloc(cap);
	if (!buf)
		return PyErr_NoMemory();
	struct kp_error *err = kp_value_string(self->v, buf, cap);
	PyObject *r = err ? kpy_error(err) : PyBytes_FromString(buf);
	free(buf);
	return r;
}

static PyObject *to_bytes_(KpyObject *self, PyObject *noargs)
{
	const void *b;
	struct kp_error *err = kp_value_bytes(self->v, &b);
	return err ? kpy_error(err) :
		PyBytes_FromStringAndSize(b, (Py_ssize_t)kp_value_size(self->v));
}

// drgn's read_(): the value read now; kpeek's value keeps its bytes.
static PyObject *read_(KpyObject *self, PyObject *noargs)
{
	const void *b;
	struct kp_error *err = kp_value_bytes(self->v, &b);
	return err ? kpy_error(err) : Py_NewRef(self);
}

static PyObject *format(KpyObject *self, unsigned flags)
{
	char *s;
	struct kp_error *err = kp_value_format(self->v, flags, &s);
	if (err)
		return kpy_error(err);
	PyObject *r = PyUnicode_DecodeUTF8(s, (Py_ssize_t)strlen(s), "replace");
	free(s);
	return r;
}

static PyObject *format_(KpyObject *self, PyObject *args, PyObject *kwds)
{
	static char *kwlist[] = { "hex", "one_line", "symbols", NULL };
	int hex = 0, one_line = 0, symbols = 1;
	if (!PyArg_ParseTupleAndKeywords(args, kwds, "|$ppp:format_", kwlist, &hex, &one_line,
					 &symbols))
		return NULL;
	return format(self, (hex ? KP_FORMAT_HEX : 0) | (one_line ? KP_FORMAT_ONE_LINE : 0) |
		      (symbols ? 0 : KP_FORMAT_NO_SYMBOLS));
}

static PyObject *object_str(KpyObject *self)
{
	return format(self, 0);
}

// ---------------------------------------------------------------- value_()

static PyObject *value_of(KpyProgram *prog, struct kp_value *v, int depth);

// Named members of type into dict, those of anonymous members too (drgn
// flattens them the same way), each read from v by name.
static int members_into(KpyProgram *prog, struct kp_value *v, const struct kp_type *t,
			PyObject *dict, int depth)
{
	size_t n = kp_type_member_count(t);
	for (size_t i = 0; i < n; i++) {
		KP_INIT(kp_type_member, m);
		struct kp_type *mt;
		struct kp_error *err = kp_type_member(t, i, &m, &mt);
		if (err)
			return kpy_error_int(err);
		int rc = 0;
		if (!m.name) {
			rc = depth < 16 ? members_into(prog, v, mt, dict, depth + 1) : 0;
		} else {
			char *name = strdup(m.name);
			struct kp_value *mv = NULL;
			err = name ? kp_value_member(v, name, &mv) : NULL;
			PyObject *x = !name ? PyErr_NoMemory() : err ? kpy_error(err) :
				value_of(prog, mv, depth + 1);
			kp_value_destroy(mv);
			rc = x ? PyDict_SetItemString(dict, name, x) : -1;
			Py_XDECREF(x);
			free(name);
		}
		kp_type_destroy(mt);
		if (rc < 0)
			return -1;
	}
	return 0;
}

static PyObject *aggregate_value(KpyProgram *prog, struct kp_value *v, struct kp_type *t,
				 enum kp_type_kind k, int depth)
{
	if (k == KP_TYPE_ARRAY) {
		uint64_t n = kp_type_length(t);
		PyObject *list = PyList_New(0);
		for (uint64_t i = 0; list && i < n; i++) {
			struct kp_value *e;
			struct kp_error *err = kp_value_subscript(v, (int64_t)i, &e);
			PyObject *x = err ? kpy_error(err) : value_of(prog, e, depth + 1);
			kp_value_destroy(err ? NULL : e);
			if (!x || PyList_Append(list, x) < 0)
				Py_CLEAR(list);
			Py_XDECREF(x);
		}
		return list;
	}
	PyObject *dict = PyDict_New();
	if (dict && members_into(prog, v, t, dict, depth) < 0)
		Py_CLEAR(dict);
	return dict;
}

static PyObject *value_of(KpyProgram *prog, struct kp_value *v, int depth)
{
	struct kp_type *t;
	struct kp_error *err = kp_value_type(v, &t);
	if (err)
		return kpy_error(err);
	enum kp_type_kind k = kpy_type_real_kind(t);
	PyObject *r = NULL;
	const void *b;
	switch (k) {
	case KP_TYPE_STRUCT:
	case KP_TYPE_UNION:
	case KP_TYPE_ARRAY:
		r = depth > 64 ? PyErr_Format(PyExc_RecursionError, "value nested too deep") :
			aggregate_value(prog, v, t, k, depth);
		break;
	case KP_TYPE_FLOAT:
		if ((err = kp_value_bytes(v, &b)))
			r = kpy_error(err);
		else if (kp_value_size(v) == 4)
			r = PyFloat_FromDouble(*(const float *)b);
		else if (kp_value_size(v) == 8)
			r = PyFloat_FromDouble(*(const double *)b);
		else
			r = PyErr_Format(PyExc_NotImplementedError, "float of %d bytes",
					 (int)kp_value_size(v));
		break;
	case KP_TYPE_VOID:
	case KP_TYPE_FUNCTION:
		r = PyErr_Format(PyExc_TypeError, "cannot read a value of void or function type");
		break;
	default: {
		KpyObject tmp = { .prog = prog, .v = v };
		r = kpy_object_int(&tmp);
		if (r && k == KP_TYPE_BOOL)
			Py_SETREF(r, PyBool_FromLong(PyObject_IsTrue(r)));
		break;
	}
	}
	kp_type_destroy(t);
	return r;
}

static PyObject *value_(KpyObject *self, PyObject *noargs)
{
	return value_of(self->prog, self->v, 0);
}

// drgn: Object(prog, 'int', value=5), Object(prog, 'struct task_struct',
// address=0xffff...).
static PyObject *object_repr(KpyObject *self)
{
	char *tn;
	struct kp_error *err = kp_value_type_name(self->v, &tn);
	if (err)
		return kpy_error(err);
	PyObject *r = NULL, *addr = get_address(self, NULL);
	if (addr && addr != Py_None) {
		char hex[24];
		snprintf(hex, sizeof(hex), "0x%llx", PyLong_AsUnsignedLongLong(addr));
		r = PyUnicode_FromFormat("Object(prog, '%s', address=%s)", tn, hex);
	} else if (addr) {
		PyObject *val = value_of(self->prog, self->v, 0);
		struct kp_type *t = NULL;
		bool ptr = !kp_value_type(self->v, &t) && kpy_type_real_kind(t) == KP_TYPE_POINTER;
		kp_type_destroy(t);
		char hex[24];
		if (val && ptr)
			snprintf(hex, sizeof(hex), "0x%llx", PyLong_AsUnsignedLongLongMask(val));
		if (val && ptr)
			r = PyUnicode_FromFormat("Object(prog, '%s', value=%s)", tn, hex);
		else if (val)
			r = PyUnicode_FromFormat("Object(prog, '%s', value=%R)", tn, val);
		Py_XDECREF(val);
	}
	Py_XDECREF(addr);
	free(tn);
	return r;
}

static PyMethodDef object_methods[] = {
	{ "member_", (PyCFunction)member_, METH_VARARGS,
	  "member_(name) -> Object: a member (LookupError if none)" },
	{ "value_", (PyCFunction)value_, METH_NOARGS,
	  "value_() -> int, bool, float, dict (struct, union) or list (array)" },
	{ "string_", (PyCFunction)string_, METH_NOARGS,
	  "string_() -> bytes: a char array's or char pointer's string" },
	{ "address_of_", (PyCFunction)address_of_, METH_NOARGS, "address_of_() -> pointer Object" },
	{ "deref_", (PyCFunction)deref_, METH_NOARGS, "deref_() -> Object: *pointer (obj[0])" },
	{ "read_", (PyCFunction)read_, METH_NOARGS, "read_() -> Object with its bytes read" },
	{ "to_bytes_", (PyCFunction)to_bytes_, METH_NOARGS, "to_bytes_() -> bytes of the value" },
	{ "format_", (PyCFunction)(void (*)(void))format_, METH_VARARGS | METH_KEYWORDS,
	  "format_(*, hex=False, one_line=False, symbols=True) -> str as kpeek print" },
	{ NULL, NULL, 0, NULL },
};

static PyGetSetDef object_getset[] = {
	{ "address_", (getter)get_address, NULL, "address of an lvalue, else None", NULL },
	{ "type_", (getter)get_type, NULL, "the Type", NULL },
	{ "prog_", (getter)get_prog, NULL, "the Program", NULL },
	{ NULL, NULL, NULL, NULL, NULL },
};

static PyMappingMethods object_mapping = {
	.mp_length = (lenfunc)object_length,
	.mp_subscript = (binaryfunc)object_subscript,
};

PyTypeObject KpyObject_Type = {
	PyVarObject_HEAD_INIT(NULL, 0)
	.tp_name = "kpeek.Object",
	.tp_basicsize = sizeof(KpyObject),
	.tp_dealloc = (destructor)object_dealloc,
	.tp_repr = (reprfunc)object_repr,
	.tp_str = (reprfunc)object_str,
	.tp_getattro = (getattrofunc)object_getattro,
	.tp_as_mapping = &object_mapping,
	.tp_iter = (getiterfunc)object_iter,
	.tp_flags = Py_TPFLAGS_DEFAULT,
	.tp_doc = "Object(prog, type, value=None, *, address=None): a typed kernel value",
	.tp_methods = object_methods,
	.tp_getset = object_getset,
	.tp_new = object_new,
};
