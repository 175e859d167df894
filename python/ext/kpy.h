// SPDX-License-Identifier: MIT
// The CPython extension kpeek._kpeek: libkpeek's public API as drgn's
// object model (Program, Object, Type, Symbol). Every libkpeek error
// becomes a Python exception (kpy_error); Objects and Types hold a strong
// reference on their Program, which closes its kernel when collected.
#ifndef KPY_H
#define KPY_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <errno.h>
#include <kpeek/kpeek.h>

typedef struct {
	PyObject_HEAD
	struct kp_kernel *k;
	PyObject *path;		// str or None (live)
	PyObject *cache;	// dict for the helpers (task states...)
} KpyProgram;

typedef struct {
	PyObject_HEAD
	KpyProgram *prog;
	struct kp_value *v;
} KpyObject;

typedef struct {
	PyObject_HEAD
	KpyProgram *prog;
	struct kp_type *t;
} KpyType;

extern PyTypeObject KpyProgram_Type, KpyObject_Type, KpyType_Type;
extern PyTypeObject *KpySymbol_Type, *KpyTypeMember_Type;
extern PyObject *KpyFaultError, *KpyError;

// Sets the exception err maps to, destroys err; returns NULL.
PyObject *kpy_error(struct kp_error *err);
// As kpy_error for callers returning int (-1).
int kpy_error_int(struct kp_error *err);

// A new Object owning v (destroyed on failure).
PyObject *kpy_object_new(KpyProgram *prog, struct kp_value *v);
// A new Type owning t (destroyed on failure).
PyObject *kpy_type_new(KpyProgram *prog, struct kp_type *t);
// A Type or a type name (str) as a new kp_type.
struct kp_type *kpy_type_arg(KpyProgram *prog, PyObject *arg);
// A new handle on the same type.
struct kp_error *kpy_type_copy(const struct kp_type *t, struct kp_type **ret);
// A new handle on t with its typedefs looked through; NULL if broken.
struct kp_type *kpy_type_resolve(const struct kp_type *t);
// Kind with typedefs looked through.
enum kp_type_kind kpy_type_real_kind(const struct kp_type *t);
// A Symbol from a kp_symbol.
PyObject *kpy_symbol_new(const struct kp_symbol *s);
// Python int of an Object's value converted as C converts to 64 bits.
PyObject *kpy_object_int(KpyObject *o);

// Program.whatis(address, physical=False) and Program.slab_objects(cache)
// (whatis.c).
PyObject *kpy_whatis(KpyProgram *self, PyObject *args, PyObject *kwds);
PyObject *kpy_slab_objects(KpyProgram *self, PyObject *arg);
PyObject *kpy_search(KpyProgram *self, PyObject *args, PyObject *kwds);

void kpy_object_init_number(PyTypeObject *type);
int kpy_structseq_init(void);

#define KPY_CHECK_OBJECT(x) PyObject_TypeCheck((x), &KpyObject_Type)
#define KPY_CHECK_TYPE(x) PyObject_TypeCheck((x), &KpyType_Type)

#endif
