// SPDX-License-Identifier: MIT
// kpeek.Type: a BTF type (struct kp_type) as drgn's Type: name, kind,
// size, tag, type (target), length, members, enumerators.
#include "kpy.h"

PyObject *kpy_type_new(KpyProgram *prog, struct kp_type *t)
{
	KpyType *self = PyObject_New(KpyType, &KpyType_Type);
	if (!self) {
		kp_type_destroy(t);
		return NULL;
	}
	self->prog = (KpyProgram *)Py_NewRef(prog);
	self->t = t;
	return (PyObject *)self;
}

struct kp_type *kpy_type_arg(KpyProgram *prog, PyObject *arg)
{
	struct kp_type *t = NULL;
	struct kp_error *err;
	if (KPY_CHECK_TYPE(arg)) {
		// A copy of the handle: a pointer to it, then its target.
		struct kp_type *p;
		if ((err = kp_type_pointer(((KpyType *)arg)->t, &p)))
			return kpy_error(err), NULL;
		err = kp_type_target(p, &t);
		kp_type_destroy(p);
	} else if (PyUnicode_Check(arg)) {
		const char *name = PyUnicode_AsUTF8(arg);
		if (!name)
			return NULL;
		err = kp_type_lookup(prog->k, name, &t);
	} else {
		PyErr_Format(PyExc_TypeError, "expected a Type or a type name, not %s",
			     Py_TYPE(arg)->tp_name);
		return NULL;
	}
	if (err)
		return kpy_error(err), NULL;
	return t;
}

struct kp_error *kpy_type_copy(const struct kp_type *t, struct kp_type **ret)
{
	struct kp_type *p;
	struct kp_error *err = kp_type_pointer(t, &p);
	if (err)
		return err;
	err = kp_type_target(p, ret);
	kp_type_destroy(p);
	return err;
}

struct kp_type *kpy_type_resolve(const struct kp_type *t)
{
	struct kp_type *cur = NULL;
	// Typedefs of typedefs: BTF bounds them; so does this loop.
	for (int i = 0; i < 32; i++) {
		const struct kp_type *c = cur ? cur : t;
		struct kp_type *next;
		if (kp_type_kind(c) != KP_TYPE_TYPEDEF && cur)
			return cur;
		struct kp_error *err = kp_type_kind(c) == KP_TYPE_TYPEDEF ?
			kp_type_target(c, &next) : kp_type_pointer(c, &next);
		if (!err && kp_type_kind(c) != KP_TYPE_TYPEDEF) {
			// a copy of t itself: the target of a pointer to it
			struct kp_type *p = next;
			err = kp_type_target(p, &next);
			kp_type_destroy(p);
		}
		kp_type_destroy(cur);
		if (err) {
			kp_error_destroy(err);
			return NULL;
		}
		cur = next;
	}
	return cur;
}

enum kp_type_kind kpy_type_real_kind(const struct kp_type *t)
{
	enum kp_type_kind kind = kp_type_kind(t);
	if (kind != KP_TYPE_TYPEDEF)
		return kind;
	struct kp_type *r = kpy_type_resolve(t);
	kind = r ? kp_type_kind(r) : KP_TYPE_VOID;
	kp_type_destroy(r);
	return kind;
}

static void type_dealloc(KpyType *self)
{
	kp_type_destroy(self->t);
	Py_XDECREF(self->prog);
	PyObject_Free(self);
}

static PyObject *get_name(KpyType *self, void *closure)
{
	char *s;
	struct kp_error *err = kp_type_name(self->t, &s);
	if (err)
		return kpy_error(err);
	PyObject *r = PyUnicode_FromString(s);
	free(s);
	return r;
}

static PyObject *get_kind(KpyType *self, void *closure)
{
	PyObject *m = PyImport_ImportModule("kpeek");
	PyObject *kinds = m ? PyObject_GetAttrString(m, "TypeKind") : NULL;
	Py_XDECREF(m);
	if (!kinds)
		return NULL;
	PyObject *r = PyObject_CallFunction(kinds, "i", (int)kp_type_kind(self->t));
	Py_DECREF(kinds);
	return r;
}

static PyObject *get_size(KpyType *self, void *closure)
{
	uint64_t size;
	if (!kp_type_is_complete(self->t))
		Py_RETURN_NONE;
	struct kp_error *err = kp_type_sizeof(self->t, &size);
	return err ? kpy_error(err) : PyLong_FromUnsignedLongLong(size);
}

static PyObject *get_tag(KpyType *self, void *closure)
{
	const char *tag = kp_type_tag(self->t);
	return tag ? PyUnicode_FromString(tag) : Py_NewRef(Py_None);
}

static PyObject *get_target(KpyType *self, void *closure)
{
	struct kp_type *t;
	struct kp_error *err = kp_type_target(self->t, &t);
	if (err) {
		kpy_error(err);
		// drgn: a type without one has no such attribute.
		PyErr_Clear();
		return PyErr_Format(PyExc_AttributeError, "this type has no 'type'");
	}
	return kpy_type_new(self->prog, t);
}

static PyObject *get_length(KpyType *self, void *closure)
{
	if (kpy_type_real_kind(self->t) != KP_TYPE_ARRAY)
		Py_RETURN_NONE;
	return PyLong_FromUnsignedLongLong(kp_type_length(self->t));
}

static PyObject *get_is_signed(KpyType *self, void *closure)
{
	return PyBool_FromLong(kp_type_is_signed(self->t));
}

static PyObject *member_of(KpyType *self, size_t i)
{
	KP_INIT(kp_type_member, m);
	struct kp_type *mt;
	struct kp_error *err = kp_type_member(self->t, i, &m, &mt);
	if (err)
		return kpy_error(err);
	PyObject *r = PyStructSequence_New(KpyTypeMember_Type);
	if (!r) {
		kp_type_destroy(mt);
		return NULL;
	}
	PyStructSequence_SetItem(r, 0, m.name ? PyUnicode_FromString(m.name) : Py_NewRef(Py_None));
	PyStructSequence_SetItem(r, 1, kpy_type_new(self->prog, mt));
	PyStructSequence_SetItem(r, 2, PyLong_FromUnsignedLongLong(m.bit_offset / 8));
	PyStructSequence_SetItem(r, 3, PyLong_FromUnsignedLongLong(m.bit_offset));
	PyStructSequence_SetItem(r, 4, m.bit_size ? PyLong_FromUnsignedLong(m.bit_size) :
				 Py_NewRef(Py_None));
	if (PyErr_Occurred())
		Py_CLEAR(r);
	return r;
}

static PyObject *get_members(KpyType *self, void *closure)
{
	enum kp_type_kind k = kpy_type_real_kind(self->t);
	if (k != KP_TYPE_STRUCT && k != KP_TYPE_UNION)
		Py_RETURN_NONE;
	size_t n = kp_type_member_count(self->t);
	PyObject *list = PyList_New((Py_ssize_t)n);
	for (size_t i = 0; list && i < n; i++) {
		PyObject *m = member_of(self, i);
		if (!m)
			Py_CLEAR(list);
		else
			PyList_SET_ITEM(list, (Py_ssize_t)i, m);
	}
	return list;
}

static PyObject *get_enumerators(KpyType *self, void *closure)
{
	if (kpy_type_real_kind(self->t) != KP_TYPE_ENUM)
		Py_RETURN_NONE;
	size_t n = kp_type_member_count(self->t);
	PyObject *list = PyList_New((Py_ssize_t)n);
	for (size_t i = 0; list && i < n; i++) {
		const char *name;
		int64_t v;
		struct kp_error *err = kp_type_enumerator(self->t, i, &name, &v);
		PyObject *e = err ? kpy_error(err) : Py_BuildValue("(sL)", name, (long long)v);
		if (!e)
			Py_CLEAR(list);
		else
			PyList_SET_ITEM(list, (Py_ssize_t)i, e);
	}
	return list;
}

static PyObject *type_repr(KpyType *self)
{
	PyObject *name = get_name(self, NULL);
	if (!name)
		return NULL;
	PyObject *r = PyUnicode_FromFormat("prog.type(%R)", name);
	Py_DECREF(name);
	return r;
}

static PyObject *type_str(KpyType *self)
{
	return get_name(self, NULL);
}

static PyObject *type_richcompare(PyObject *a, PyObject *b, int op)
{
	if (!KPY_CHECK_TYPE(b) || (op != Py_EQ && op != Py_NE))
		Py_RETURN_NOTIMPLEMENTED;
	PyObject *na = get_name((KpyType *)a, NULL), *nb = na ? get_name((KpyType *)b, NULL) : NULL;
	PyObject *r = nb ? PyObject_RichCompare(na, nb, op) : NULL;
	Py_XDECREF(na);
	Py_XDECREF(nb);
	return r;
}

static PyObject *type_pointer(KpyType *self, PyObject *noargs)
{
	struct kp_type *p;
	struct kp_error *err = kp_type_pointer(self->t, &p);
	return err ? kpy_error(err) : kpy_type_new(self->prog, p);
}

static PyObject *member(KpyType *self, PyObject *args)
{
	const char *name;
	if (!PyArg_ParseTuple(args, "s:member", &name))
		return NULL;
	size_t n = kp_type_member_count(self->t);
	for (size_t i = 0; i < n; i++) {
		KP_INIT(kp_type_member, m);
		struct kp_error *err = kp_type_member(self->t, i, &m, NULL);
		if (err)
			return kpy_error(err);
		if (m.name && !strcmp(m.name, name))
			return member_of(self, i);
	}
	return PyErr_Format(PyExc_LookupError, "no member '%s'", name);
}

static PyMethodDef type_methods[] = {
	{ "pointer", (PyCFunction)type_pointer, METH_NOARGS, "pointer() -> Type: a pointer to it" },
	{ "member", (PyCFunction)member, METH_VARARGS, "member(name) -> TypeMember" },
	{ NULL, NULL, 0, NULL },
};

static PyGetSetDef type_getset[] = {
	{ "name", (getter)get_name, NULL, "C name", NULL },
	{ "type_name", (getter)get_name, NULL, "C name (drgn's type_name())", NULL },
	{ "kind", (getter)get_kind, NULL, "TypeKind", NULL },
	{ "size", (getter)get_size, NULL, "size in bytes, None if none", NULL },
	{ "tag", (getter)get_tag, NULL, "name without struct/union/enum", NULL },
	{ "type", (getter)get_target, NULL, "pointee, element, typedef'd or return type", NULL },
	{ "length", (getter)get_length, NULL, "elements of an array", NULL },
	{ "is_signed", (getter)get_is_signed, NULL, "signed integer or enum", NULL },
	{ "members", (getter)get_members, NULL, "list of TypeMember (struct, union)", NULL },
	{ "enumerators", (getter)get_enumerators, NULL, "list of (name, value) (enum)", NULL },
	{ NULL, NULL, NULL, NULL, NULL },
};

PyTypeObject KpyType_Type = {
	PyVarObject_HEAD_INIT(NULL, 0)
	.tp_name = "kpeek.Type",
	.tp_basicsize = sizeof(KpyType),
	.tp_dealloc = (destructor)type_dealloc,
	.tp_repr = (reprfunc)type_repr,
	.tp_str = (reprfunc)type_str,
	.tp_richcompare = type_richcompare,
	.tp_hash = PyObject_HashNotImplemented,
	.tp_flags = Py_TPFLAGS_DEFAULT,
	.tp_doc = "A type of the kernel's BTF (Program.type())",
	.tp_methods = type_methods,
	.tp_getset = type_getset,
};
