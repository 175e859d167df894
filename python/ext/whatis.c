// SPDX-License-Identifier: MIT
// Address forensics: Program.whatis(), kp_whatis_create() as a list of
// dicts, the facts of kpeek whatis --json with the same keys (addresses as
// ints); Program.slab_objects(), the walker of kpeek slab.
#include "kpy.h"

static int set(PyObject *d, const char *key, PyObject *v)
{
	int r = v ? PyDict_SetItemString(d, key, v) : -1;
	Py_XDECREF(v);
	return r;
}

static PyObject *u64(uint64_t v)
{
	return PyLong_FromUnsignedLongLong(v);
}

static PyObject *str_or_none(const char *s)
{
	return s ? PyUnicode_DecodeUTF8(s, strlen(s), "backslashreplace") : Py_NewRef(Py_None);
}

static int slab(PyObject *d, const struct kp_whatis_fact *f)
{
	PyObject *allocated = f->slab.state == KP_SLAB_ALLOCATED ? Py_True :
			      f->slab.state == KP_SLAB_FREE ? Py_False : Py_None;
	return set(d, "cache", u64(f->slab.cache)) | set(d, "cache_name", str_or_none(f->slab.cache_name)) |
	       set(d, "slab", u64(f->slab.slab)) |
	       set(d, "object", f->slab.state == KP_SLAB_OUTSIDE ? Py_NewRef(Py_None) : u64(f->slab.object)) |
	       set(d, "offset", PyLong_FromLongLong(f->slab.offset)) |
	       set(d, "size", u64(f->slab.object_size)) | set(d, "slot_size", u64(f->slab.slot_size)) |
	       set(d, "allocated", Py_NewRef(allocated));
}

static int task(PyObject *d, const struct kp_whatis_fact *f)
{
	int r = set(d, "task", u64(f->task.task)) | set(d, "pid", PyLong_FromLong(f->task.pid)) |
		set(d, "comm", PyUnicode_DecodeUTF8(f->task.comm, strnlen(f->task.comm, sizeof(f->task.comm)),
						     "backslashreplace"));
	if (f->kind == KP_WHATIS_TASK)
		return r | set(d, "offset", u64(f->offset));
	return r | set(d, "stack", u64(f->task.stack)) | set(d, "stack_size", u64(f->task.stack_size)) |
	       set(d, "from_top", u64(f->task.from_top));
}

static int fields(PyObject *d, const struct kp_whatis_fact *f)
{
	switch (f->kind) {
	case KP_WHATIS_SLAB:
		return slab(d, f);
	case KP_WHATIS_TASK:
	case KP_WHATIS_STACK:
		return task(d, f);
	case KP_WHATIS_SYMBOL:
	case KP_WHATIS_MODULE:
		return set(d, "symbol", str_or_none(f->sym.name)) | set(d, "symbol_address", u64(f->sym.address)) |
		       set(d, "offset", u64(f->offset)) | set(d, "module", str_or_none(f->sym.module)) |
		       set(d, "section", str_or_none(f->section));
	case KP_WHATIS_PERCPU:
		return set(d, "cpu", u64(f->cpu)) | set(d, "symbol", str_or_none(f->sym.name)) |
		       set(d, "offset", u64(f->offset)) | set(d, "start", u64(f->start)) |
		       set(d, "size", u64(f->end - f->start));
	case KP_WHATIS_PAGE:
		return set(d, "pfn", u64(f->pfn)) | set(d, "offset", u64(f->offset));
	case KP_WHATIS_DIRECT:
		return set(d, "pfn", u64(f->pfn)) | set(d, "paddr", u64(f->paddr));
	case KP_WHATIS_REGION:
		return set(d, "region", str_or_none(f->region)) | set(d, "start", u64(f->start)) |
		       set(d, "end", u64(f->end));
	case KP_WHATIS_VMALLOC:
		return set(d, "start", u64(f->start)) | set(d, "size", u64(f->end - f->start)) |
		       set(d, "caller", f->caller ? u64(f->caller) : Py_NewRef(Py_None)) |
		       set(d, "caller_symbol", str_or_none(f->caller_sym.name));
	case KP_WHATIS_PHYSICAL:
		return set(d, "pfn", u64(f->pfn)) | set(d, "paddr", u64(f->paddr)) |
		       set(d, "in_dump", PyBool_FromLong(f->in_dump)) |
		       set(d, "has_page", PyBool_FromLong(f->has_page)) |
		       set(d, "memory", str_or_none(f->memory)) |
		       set(d, "memory_detail", str_or_none(f->memory_detail));
	}
	return 0;
}

PyObject *kpy_whatis(KpyProgram *self, PyObject *args, PyObject *kwds)
{
	static char *kwlist[] = { "address", "physical", NULL };
	unsigned long long address;
	int physical = 0;
	if (!PyArg_ParseTupleAndKeywords(args, kwds, "K|p:whatis", kwlist, &address, &physical))
		return NULL;
	if (!self->k)
		return PyErr_Format(PyExc_ValueError, "Program is not open");
	struct kp_whatis *w;
	struct kp_error *err = kp_whatis_create(self->k, physical ? KP_PHYS : KP_VIRT, address, &w);
	if (err)
		return kpy_error(err);
	PyObject *list = PyList_New(0);
	for (size_t i = 0; list && i < w->nfacts; i++) {
		const struct kp_whatis_fact *f = &w->facts[i];
		PyObject *d = PyDict_New();
		if (!d || set(d, "kind", PyUnicode_FromString(f->kind_name)) || fields(d, f) ||
		    set(d, "note", str_or_none(f->note)) || PyList_Append(list, d) < 0)
			Py_CLEAR(list);
		Py_XDECREF(d);
	}
	// A walk that could not be done: the facts hold, some may be missing
	// (kpeek whatis exits 2 with the same words). PyUnicode_FromFormat
	// has no %llx.
	if (list && w->note) {
		char at[24];
		snprintf(at, sizeof(at), "0x%llx", address);
		if (PyErr_WarnFormat(PyExc_RuntimeWarning, 1, "whatis %s: not checked: %s", at, w->note) < 0)
			Py_CLEAR(list);
	}
	kp_whatis_destroy(w);
	return list;
}

static PyObject *slab_object(const struct kp_slab_object *o)
{
	PyObject *d = PyDict_New();
	if (d && (set(d, "address", u64(o->address)) | set(d, "slab", u64(o->slab)) | set(d, "pfn", u64(o->pfn)) |
		  set(d, "index", PyLong_FromUnsignedLong(o->index)) |
		  set(d, "allocated", PyBool_FromLong(o->allocated))))
		Py_CLEAR(d);
	return d;
}

PyObject *kpy_slab_objects(KpyProgram *self, PyObject *arg)
{
	const char *name = NULL;
	unsigned long long cache = 0;
	if (PyUnicode_Check(arg)) {
		if (!(name = PyUnicode_AsUTF8(arg)))
			return NULL;
	} else if ((cache = PyLong_AsUnsignedLongLong(arg)) == (unsigned long long)-1 && PyErr_Occurred()) {
		return NULL;
	}
	if (!self->k)
		return PyErr_Format(PyExc_ValueError, "Program is not open");
	struct kp_slab_object_iter *it;
	struct kp_error *err = kp_slab_object_iter_create(self->k, name, cache, &it);
	if (err)
		return kpy_error(err);
	PyObject *list = PyList_New(0);
	const struct kp_slab_object *o;
	while (list && !(err = kp_slab_object_iter_next(it, &o)) && o) {
		PyObject *d = slab_object(o);
		if (!d || PyList_Append(list, d) < 0)
			Py_CLEAR(list);
		Py_XDECREF(d);
	}
	kp_slab_object_iter_destroy(it);
	if (err) {
		Py_XDECREF(list);
		return kpy_error(err);
	}
	return list;
}
