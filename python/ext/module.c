// SPDX-License-Identifier: MIT
// kpeek._kpeek: errors, the struct sequences (Symbol, TypeMember) and the module's functions (drgn's cast, container_of,
// sizeof, program_from_core_dump, program_from_kernel).
#include "kpy.h"

PyObject *KpyFaultError, *KpyError;
PyTypeObject *KpySymbol_Type, *KpyTypeMember_Type;

// drgn's exceptions: FaultError for memory, LookupError for names,
// TypeError / ValueError for misuse; the rest is kpeek.Error.
PyObject *kpy_error(struct kp_error *err)
{
	const char *msg = kp_error_message(err);
	uint64_t addr;
	switch (kp_error_code(err)) {
	case KP_ERR_FAULT: {
		PyObject *a = kp_error_address(err, &addr) ? PyLong_FromUnsignedLongLong(addr) :
			Py_NewRef(Py_None);
		PyObject *e = a ? PyObject_CallFunction(KpyFaultError, "sO", msg, a) : NULL;
		if (e) {
			PyErr_SetObject(KpyFaultError, e);
			Py_DECREF(e);
		}
		Py_XDECREF(a);
		break;
	}
	case KP_ERR_NOT_FOUND:
		PyErr_SetString(PyExc_LookupError, msg);
		break;
	case KP_ERR_TYPE:
		PyErr_SetString(PyExc_TypeError, msg);
		break;
	case KP_ERR_INVALID:
	case KP_ERR_SYNTAX:
		PyErr_SetString(PyExc_ValueError, msg);
		break;
	case KP_ERR_NOMEM:
		PyErr_NoMemory();
		break;
	case KP_ERR_OS:
	case KP_ERR_OUTPUT:
	case KP_ERR_PERMISSION: {
		PyObject *e = Py_BuildValue("(is)", kp_error_errno(err), msg);
		if (e) {
			PyErr_SetObject(kp_error_code(err) == KP_ERR_PERMISSION ?
					PyExc_PermissionError : PyExc_OSError, e);
			Py_DECREF(e);
		}
		break;
	}
	case KP_ERR_INTERRUPTED:
		PyErr_SetString(PyExc_KeyboardInterrupt, msg);
		break;
	default:
		PyErr_SetString(KpyError, msg);
		break;
	}
	kp_error_destroy(err);
	return NULL;
}

int kpy_error_int(struct kp_error *err)
{
	kpy_error(err);
	return -1;
}

static PyStructSequence_Field symbol_fields[] = {
	{ "name", "the symbol's name" },
	{ "address", "its address" },
	{ "size", "its size (0 if unknown)" },
	{ "type", "nm-style type letter" },
	{ "module", "its module, None for the kernel" },
	{ NULL, NULL },
};
static PyStructSequence_Desc symbol_desc = { "kpeek.Symbol", "A kernel symbol", symbol_fields, 5 };

static PyStructSequence_Field member_fields[] = {
	{ "name", "member name, None if anonymous" },
	{ "type", "its Type" },
	{ "offset", "byte offset from the start of the outer type" },
	{ "bit_offset", "bit offset from the start of the outer type" },
	{ "bit_field_size", "width of a bitfield, None otherwise" },
	{ NULL, NULL },
};
static PyStructSequence_Desc member_desc = { "kpeek.TypeMember", "A struct or union member",
					     member_fields, 5 };

int kpy_structseq_init(void)
{
	KpySymbol_Type = PyStructSequence_NewType(&symbol_desc);
	KpyTypeMember_Type = PyStructSequence_NewType(&member_desc);
	return KpySymbol_Type && KpyTypeMember_Type ? 0 : -1;
}

static PyObject *str_or_none(const char *s)
{
	return s ? PyUnicode_DecodeUTF8(s, (Py_ssize_t)strlen(s), "surrogateescape") :
		Py_NewRef(Py_None);
}

PyObject *kpy_symbol_new(const struct kp_symbol *s)
{
	PyObject *r = PyStructSequence_New(KpySymbol_Type);
	if (!r)
		return NULL;
	PyStructSequence_SetItem(r, 0, str_or_none(s->name));
	PyStructSequence_SetItem(r, 1, PyLong_FromUnsignedLongLong(s->address));
	PyStructSequence_SetItem(r, 2, PyLong_FromUnsignedLongLong(s->size));
	PyStructSequence_SetItem(r, 3, PyUnicode_FromStringAndSize(&s->type, 1));
	PyStructSequence_SetItem(r, 4, str_or_none(s->module));
	if (PyErr_Occurred()) {
		Py_DECREF(r);
		return NULL;
	}
	return r;
}

// ---------------------------------------------------------------- functions

static PyObject *program_from_core_dump(PyObject *self, PyObject *args)
{
	PyObject *path;
	if (!PyArg_ParseTuple(args, "O:program_from_core_dump", &path))
		return NULL;
	return PyObject_CallFunctionObjArgs((PyObject *)&KpyProgram_Type, path, NULL);
}

static PyObject *program_from_kernel(PyObject *self, PyObject *noargs)
{
	return PyObject_CallNoArgs((PyObject *)&KpyProgram_Type);
}

static PyObject *cast(PyObject *self, PyObject *args)
{
	PyObject *type;
	KpyObject *obj;
	if (!PyArg_ParseTuple(args, "OO!:cast", &type, &KpyObject_Type, &obj))
		return NULL;
	struct kp_type *t = kpy_type_arg(obj->prog, type);
	if (!t)
		return NULL;
	struct kp_value *r;
	struct kp_error *err = kp_value_cast_type(obj->v, t, &r);
	kp_type_destroy(t);
	return err ? kpy_error(err) : kpy_object_new(obj->prog, r);
}

static PyObject *container_of(PyObject *self, PyObject *args)
{
	KpyObject *ptr;
	PyObject *type;
	const char *member;
	if (!PyArg_ParseTuple(args, "O!Os:container_of", &KpyObject_Type, &ptr, &type, &member))
		return NULL;
	struct kp_type *t = kpy_type_arg(ptr->prog, type);
	if (!t)
		return NULL;
	char *name = NULL;
	struct kp_error *err = kp_type_name(t, &name);
	kp_type_destroy(t);
	struct kp_value *r = NULL;
	if (!err)
		err = kp_value_container_of(ptr->v, name, member, &r);
	free(name);
	return err ? kpy_error(err) : kpy_object_new(ptr->prog, r);
}

static PyObject *sizeof_(PyObject *self, PyObject *arg)
{
	uint64_t size;
	struct kp_error *err;
	if (KPY_CHECK_TYPE(arg)) {
		err = kp_type_sizeof(((KpyType *)arg)->t, &size);
	} else if (KPY_CHECK_OBJECT(arg)) {
		struct kp_type *t;
		if ((err = kp_value_type(((KpyObject *)arg)->v, &t)))
			return kpy_error(err);
		err = kp_type_sizeof(t, &size);
		kp_type_destroy(t);
	} else {
		return PyErr_Format(PyExc_TypeError, "sizeof() needs a Type or an Object, not %s",
				    Py_TYPE(arg)->tp_name);
	}
	return err ? kpy_error(err) : PyLong_FromUnsignedLongLong(size);
}

static PyMethodDef functions[] = {
	{ "program_from_core_dump", program_from_core_dump, METH_VARARGS,
	  "program_from_core_dump(path) -> Program of a dump file" },
	{ "program_from_kernel", program_from_kernel, METH_NOARGS,
	  "program_from_kernel() -> Program of the running kernel (/proc/kcore)" },
	{ "cast", cast, METH_VARARGS, "cast(type, obj) -> Object: C's (type)obj" },
	{ "container_of", container_of, METH_VARARGS,
	  "container_of(ptr, type, member) -> Object: the type ptr's member is in" },
	{ "sizeof", sizeof_, METH_O, "sizeof(type_or_obj) -> int" },
	{ NULL, NULL, 0, NULL },
};

static struct PyModuleDef module = {
	PyModuleDef_HEAD_INIT, "kpeek._kpeek",
	"libkpeek's objects for Python (use the kpeek package)", -1, functions,
	NULL, NULL, NULL, NULL,
};

static int add_type(PyObject *m, const char *name, PyTypeObject *t)
{
	if (PyType_Ready(t) < 0)
		return -1;
	return PyModule_AddObjectRef(m, name, (PyObject *)t);
}

PyMODINIT_FUNC PyInit__kpeek(void);
PyMODINIT_FUNC PyInit__kpeek(void)
{
	PyObject *m = PyModule_Create(&module);
	if (!m)
		return NULL;
	kpy_object_init_number(&KpyObject_Type);
	KpyError = PyErr_NewExceptionWithDoc("kpeek.Error", "an error of libkpeek", NULL, NULL);
	KpyFaultError = PyErr_NewExceptionWithDoc(
		"kpeek.FaultError", "FaultError(message, address): memory that cannot be read",
		NULL, NULL);
	if (!KpyError || !KpyFaultError || kpy_structseq_init() < 0 ||
	    PyModule_AddObjectRef(m, "Error", KpyError) < 0 ||
	    PyModule_AddObjectRef(m, "FaultError", KpyFaultError) < 0 ||
	    add_type(m, "Program", &KpyProgram_Type) < 0 ||
	    add_type(m, "Object", &KpyObject_Type) < 0 || add_type(m, "Type", &KpyType_Type) < 0 ||
	    PyModule_AddObjectRef(m, "Symbol", (PyObject *)KpySymbol_Type) < 0 ||
	    PyModule_AddObjectRef(m, "TypeMember", (PyObject *)KpyTypeMember_Type) < 0 ||
	    PyModule_AddStringConstant(m, "libkpeek_version", kp_version()) < 0) {
		Py_DECREF(m);
		return NULL;
	}
	return m;
}
