// SPDX-License-Identifier: MIT
// Program.search(): kp_search_create(), the scan of kpeek search, as a
// list of the addresses where a value or a byte string is.
#include "kpy.h"

PyObject *kpy_search(KpyProgram *self, PyObject *args, PyObject *kwds)
{
	static char *kwlist[] = { "value", "string", "pid", "physical", "ignore", "width", "start", "end",
				  "limit", NULL };
	PyObject *value = Py_None;
	Py_buffer bytes = { .buf = NULL };
	int pid = 0, physical = 0, width = 8;
	unsigned long long ignore = 0, start = 0, end = 0;
	Py_ssize_t limit = -1;
	if (!PyArg_ParseTupleAndKeywords(args, kwds, "|O$y*ipKiKKn:search", kwlist, &value, &bytes, &pid,
					 &physical, &ignore, &width, &start, &end, &limit))
		return NULL;
	KP_INIT(kp_search_spec, sp);
	PyObject *list = NULL;
	if ((value == Py_None) == (bytes.buf == NULL)) {
		PyErr_SetString(PyExc_TypeError, "search() takes a value or string=, one of them");
		goto out;
	}
	if (pid && physical) {
		PyErr_SetString(PyExc_ValueError, "search(): pid= and physical=True exclude each other");
		goto out;
	}
	if (value != Py_None && (sp.value = PyLong_AsUnsignedLongLong(value)) == (unsigned long long)-1 &&
	    PyErr_Occurred())
		goto out;
	if (!self->k) {
		PyErr_SetString(PyExc_ValueError, "Program is not open");
		goto out;
	}
	sp.space = pid ? KP_SEARCH_USER : physical ? KP_SEARCH_PHYS : KP_SEARCH_KERNEL;
	sp.pid = pid;
	sp.bytes = bytes.buf;
	sp.nbytes = bytes.buf ? (size_t)bytes.len : 0;
	sp.ignore = ignore;
	sp.width = width > 0 ? (unsigned)width : 0;
	sp.start = start;
	sp.end = end;
	struct kp_search *s;
	struct kp_error *err = kp_search_create(self->k, &sp, &s);
	if (err) {
		kpy_error(err);
		goto out;
	}
	list = PyList_New(0);
	const struct kp_search_hit *h;
	while (list && (limit < 0 || PyList_GET_SIZE(list) < limit) && !(err = kp_search_next(s, &h)) && h) {
		PyObject *a = PyLong_FromUnsignedLongLong(h->address);
		if (!a || PyList_Append(list, a) < 0)
			Py_CLEAR(list);
		Py_XDECREF(a);
	}
	kp_search_destroy(s);
	if (err) {
		Py_CLEAR(list);
		kpy_error(err);
	}
out:
	if (bytes.buf)
		PyBuffer_Release(&bytes);
	return list;
}
