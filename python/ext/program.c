// SPDX-License-Identifier: MIT
// kpeek.Program: one opened kernel (a dump or /proc/kcore) and what is
// looked up in it by name: variables, symbols, types, raw memory, stacks,
// and the C walkers the helpers reach (tasks, lists, modules, argv).
#include "kpy.h"

static int program_init(KpyProgram *self, PyObject *args, PyObject *kwds)
{
	static char *kwlist[] = { "core", "system_map", "kallsyms", "btf", "raw", "raw_base",
				  "arch", NULL };
	PyObject *core = Py_None, *core_bytes = NULL;
	const char *system_map = NULL, *kallsyms = NULL, *btf = NULL, *arch = NULL;
	int raw = 0;
	unsigned long long raw_base = 0;
	if (self->k) {
		PyErr_SetString(PyExc_ValueError, "Program is already open");
		return -1;
	}
	if (!PyArg_ParseTupleAndKeywords(args, kwds, "|O$zzzpKz:Program", kwlist, &core,
					 &system_map, &kallsyms, &btf, &raw, &raw_base, &arch))
		return -1;
	if (core != Py_None && !PyUnicode_FSConverter(core, &core_bytes))
		return -1;
	KP_OPTS(kp_open_options, o, .core = core_bytes ? PyBytes_AS_STRING(core_bytes) : NULL,
		.system_map = system_map, .kallsyms = kallsyms, .btf = btf, .raw = raw,
		.raw_base = raw_base, .arch = arch);
	struct kp_kernel *k = NULL;
	struct kp_error *err;
	Py_BEGIN_ALLOW_THREADS
	err = kp_kernel_open(&o, &k);
	Py_END_ALLOW_THREADS
	Py_XDECREF(core_bytes);
	if (err && kp_error_code(err) == KP_ERR_NOT_FOUND) {
		// a dump that is not there: an OSError as open() raises
		PyObject *e = Py_BuildValue("(is)", ENOENT, kp_error_message(err));
		if (e)
			PyErr_SetObject(PyExc_FileNotFoundError, e);
		Py_XDECREF(e);
		kp_error_destroy(err);
		return -1;
	}
	if (err)
		return kpy_error_int(err);
	self->k = k;
	Py_XSETREF(self->path, Py_NewRef(core));
	if (!self->cache && !(self->cache = PyDict_New()))
		return -1;
	return 0;
}

static void program_dealloc(KpyProgram *self)
{
	kp_kernel_destroy(self->k);
	Py_XDECREF(self->path);
	Py_XDECREF(self->cache);
	Py_TYPE(self)->tp_free((PyObject *)self);
}

static int check_open(KpyProgram *self)
{
	if (self->k)
		return 0;
	PyErr_SetString(PyExc_ValueError, "Program is not open");
	return -1;
}

// A variable or any expression of the CLI's print.
static PyObject *eval(KpyProgram *self, const char *expr)
{
	struct kp_value *v;
	if (check_open(self))
		return NULL;
	struct kp_error *err = kp_eval(self->k, expr, &v);
	return err ? kpy_error(err) : kpy_object_new(self, v);
}

static bool identifier(const char *s)
{
	if (!*s || (*s >= '0' && *s <= '9'))
		return false;
	for (; *s; s++)
		if (!(*s == '_' || *s == '.' || *s == '$' || (*s >= 'a' && *s <= 'z') ||
		      (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9')))
			return false;
	return true;
}

static PyObject *variable(KpyProgram *self, PyObject *args)
{
	const char *name;
	if (!PyArg_ParseTuple(args, "s:variable", &name))
		return NULL;
	if (!identifier(name))
		return PyErr_Format(PyExc_LookupError, "could not find variable '%s'", name);
	return eval(self, name);
}

static PyObject *subscript(KpyProgram *self, PyObject *key)
{
	if (!PyUnicode_Check(key))
		return PyErr_Format(PyExc_TypeError, "Program[] needs a name, not %s",
				    Py_TYPE(key)->tp_name);
	const char *name = PyUnicode_AsUTF8(key);
	if (!name)
		return NULL;
	if (!identifier(name)) {
		PyErr_SetObject(PyExc_KeyError, key);
		return NULL;
	}
	PyObject *r = eval(self, name);
	// drgn raises KeyError (a LookupError) for prog[name]; libkpeek's
	// message says why (a kernel without CONFIG_KALLSYMS_ALL...).
	if (!r && PyErr_ExceptionMatches(PyExc_LookupError)) {
		PyObject *t, *v, *tb;
		PyErr_Fetch(&t, &v, &tb);
		PyErr_SetObject(PyExc_KeyError, v ? v : key);
		Py_XDECREF(t);
		Py_XDECREF(v);
		Py_XDECREF(tb);
	}
	return r;
}

static PyObject *program_eval(KpyProgram *self, PyObject *args)
{
	const char *expr;
	if (!PyArg_ParseTuple(args, "s:eval", &expr))
		return NULL;
	return eval(self, expr);
}

static PyObject *symbol(KpyProgram *self, PyObject *arg)
{
	struct kp_symbol s;
	struct kp_error *err;
	if (check_open(self))
		return NULL;
	if (PyUnicode_Check(arg)) {
		const char *name = PyUnicode_AsUTF8(arg);
		if (!name)
			return NULL;
		err = kp_symbol_by_name(self->k, name, &s);
	} else {
		unsigned long long a = PyLong_AsUnsignedLongLongMask(arg);
		if (PyErr_Occurred())
			return NULL;
		err = kp_symbol_by_address(self->k, a, &s);
	}
	return err ? kpy_error(err) : kpy_symbol_new(&s);
}

static PyObject *program_type(KpyProgram *self, PyObject *args)
{
	PyObject *name;
	if (!PyArg_ParseTuple(args, "O:type", &name))
		return NULL;
	if (KPY_CHECK_TYPE(name))
		return Py_NewRef(name);
	if (check_open(self))
		return NULL;
	struct kp_type *t = kpy_type_arg(self, name);
	return t ? kpy_type_new(self, t) : NULL;
}

static PyObject *program_read(KpyProgram *self, PyObject *args, PyObject *kwds)
{
	static char *kwlist[] = { "address", "size", "physical", NULL };
	unsigned long long address;
	Py_ssize_t size;
	int physical = 0;
	if (!PyArg_ParseTupleAndKeywords(args, kwds, "Kn|p:read", kwlist, &address, &size,
					 &physical) || check_open(self))
		return NULL;
	if (size < 0)
		return PyErr_Format(PyExc_ValueError, "negative size");
	PyObject *buf = PyBytes_FromStringAndSize(NULL, size);
	if (!buf)
		return NULL;
	struct kp_error *err = kp_read(self->k, physical ? KP_PHYS : KP_VIRT, address,
				       PyBytes_AS_STRING(buf), (size_t)size);
	if (err) {
		Py_DECREF(buf);
		return kpy_error(err);
	}
	return buf;
}

// ---------------------------------------------------------------- walkers for the helpers

// Every task (threads too with threads=True): a list of (address, pid,
// state char, name) from the walker kpeek ps uses.
static PyObject *tasks(KpyProgram *self, PyObject *args)
{
	int threads = 1;
	if (!PyArg_ParseTuple(args, "|p:_tasks", &threads) || check_open(self))
		return NULL;
	struct kp_task_iter *it;
	struct kp_error *err = kp_task_iter_create(self->k, threads ? KP_TASKS_THREADS : 0, &it);
	if (err)
		return kpy_error(err);
	PyObject *list = PyList_New(0);
	const struct kp_task *t;
	while (list && !(err = kp_task_iter_next(it, &t)) && t) {
		PyObject *e = Py_BuildValue("(KiiCy)", (unsigned long long)t->address, t->pid,
					    t->tgid, t->state, t->name);
		if (!e || PyList_Append(list, e) < 0)
			Py_CLEAR(list);
		Py_XDECREF(e);
	}
	kp_task_iter_destroy(it);
	if (err) {
		Py_XDECREF(list);
		return kpy_error(err);
	}
	return list;
}

static PyObject *task_by_pid(KpyProgram *self, PyObject *args)
{
	int pid;
	uint64_t task;
	if (!PyArg_ParseTuple(args, "i:_task_by_pid", &pid) || check_open(self))
		return NULL;
	struct kp_error *err = kp_task_by_pid(self->k, pid, &task);
	if (err && kp_error_code(err) == KP_ERR_NOT_FOUND) {
		kp_error_destroy(err);
		Py_RETURN_NONE;
	}
	return err ? kpy_error(err) : PyLong_FromUnsignedLongLong(task);
}

// The nodes of a struct list_head list from its head (addresses).
static PyObject *list_nodes(KpyProgram *self, PyObject *args)
{
	unsigned long long head;
	if (!PyArg_ParseTuple(args, "K:_list_nodes", &head) || check_open(self))
		return NULL;
	struct kp_list_iter *it;
	struct kp_error *err = kp_list_iter_create(self->k, head, 0, &it);
	if (err)
		return kpy_error(err);
	PyObject *list = PyList_New(0);
	uint64_t node;
	bool done = false;
	while (list && !(err = kp_list_iter_next(it, &node, &done)) && !done) {
		PyObject *n = PyLong_FromUnsignedLongLong(node);
		if (!n || PyList_Append(list, n) < 0)
			Py_CLEAR(list);
		Py_XDECREF(n);
	}
	kp_list_iter_destroy(it);
	if (err) {
		Py_XDECREF(list);
		return kpy_error(err);
	}
	return list;
}

static PyObject *modules(KpyProgram *self, PyObject *noargs)
{
	if (check_open(self))
		return NULL;
	struct kp_module_iter *it;
	struct kp_error *err = kp_module_iter_create(self->k, &it);
	if (err)
		return kpy_error(err);
	PyObject *list = PyList_New(0);
	const struct kp_module *m;
	while (list && !(err = kp_module_iter_next(it, &m)) && m) {
		PyObject *e = Py_BuildValue("(Ky)", (unsigned long long)m->address, m->name);
		if (!e || PyList_Append(list, e) < 0)
			Py_CLEAR(list);
		Py_XDECREF(e);
	}
	kp_module_iter_destroy(it);
	if (err) {
		Py_XDECREF(list);
		return kpy_error(err);
	}
	return list;
}

// A task's arguments or environment: a list of bytes.
static PyObject *task_words(KpyProgram *self, PyObject *args)
{
	unsigned long long task;
	int env = 0;
	if (!PyArg_ParseTuple(args, "K|p:_task_words", &task, &env) || check_open(self))
		return NULL;
	char *buf = NULL;
	size_t len = 0;
	struct kp_error *err = env ? kp_task_environ(self->k, task, &buf, &len) :
		kp_task_cmdline(self->k, task, &buf, &len);
	if (err)
		return kpy_error(err);
	PyObject *list = PyList_New(0);
	for (size_t i = 0; list && i < len;) {
		size_t n = strnlen(buf + i, len - i);
		PyObject *w = PyBytes_FromStringAndSize(buf + i, (Py_ssize_t)n);
		if (!w || PyList_Append(list, w) < 0)
			Py_CLEAR(list);
		Py_XDECREF(w);
		i += n + 1;
	}
	free(buf);
	return list;
}

// (cpu, exec_start, clock_task, since) of kp_task_last_ran().
static PyObject *task_last_ran(KpyProgram *self, PyObject *args)
{
	unsigned long long task;
	if (!PyArg_ParseTuple(args, "K:_task_last_ran", &task) || check_open(self))
		return NULL;
	struct kp_task_last_ran lr;
	struct kp_error *err = kp_task_last_ran(self->k, task, &lr);
	if (err)
		return kpy_error(err);
	return Py_BuildValue("(iKKK)", lr.cpu, (unsigned long long)lr.exec_start,
			     (unsigned long long)lr.clock_task, (unsigned long long)lr.since);
}

// kp_task_mem() as {"VmPeak": kB, ...}, the keys of /proc/PID/status.
static PyObject *task_mem(KpyProgram *self, PyObject *args)
{
	unsigned long long task;
	if (!PyArg_ParseTuple(args, "K:_task_mem", &task) || check_open(self))
		return NULL;
	struct kp_task_mem m;
	struct kp_error *err = kp_task_mem(self->k, task, &m);
	if (err)
		return kpy_error(err);
	struct kp_meminfo_item lines[KP_TASK_MEM_LINES];
	size_t n = kp_task_mem_lines(&m, lines);
	PyObject *d = PyDict_New();
	for (size_t i = 0; d && i < n; i++) {
		PyObject *v = PyLong_FromUnsignedLongLong(lines[i].value);
		if (!v || PyDict_SetItemString(d, lines[i].name, v) < 0)
			Py_CLEAR(d);
		Py_XDECREF(v);
	}
	return d;
}

static PyObject *d_path(KpyProgram *self, PyObject *args)
{
	unsigned long long mnt, dentry;
	if (!PyArg_ParseTuple(args, "KK:_d_path", &mnt, &dentry) || check_open(self))
		return NULL;
	char *path;
	struct kp_error *err = kp_d_path(self->k, mnt, dentry, &path);
	if (err)
		return kpy_error(err);
	PyObject *r = PyBytes_FromString(path);
	free(path);
	return r;
}

// drgn's prog.stack_trace(task or pid): the frames, innermost first.
static PyObject *stack_trace(KpyProgram *self, PyObject *arg)
{
	uint64_t task;
	struct kp_error *err;
	if (check_open(self))
		return NULL;
	if (KPY_CHECK_OBJECT(arg)) {
		PyObject *n = kpy_object_int((KpyObject *)arg);
		if (!n)
			return NULL;
		task = PyLong_AsUnsignedLongLongMask(n);
		Py_DECREF(n);
	} else {
		int pid = PyLong_AsLong(arg);
		if (PyErr_Occurred())
			return NULL;
		if ((err = kp_task_by_pid(self->k, pid, &task)))
			return kpy_error(err);
	}
	struct kp_stack *st;
	if ((err = kp_stack_task_create(self->k, task, &st)))
		return kpy_error(err);
	const struct kp_frame *f;
	size_t n = kp_stack_frames(st, &f);
	// kpeek.StackFrame (a Python class: drgn's frame.symbol() is a method).
	PyObject *m = PyImport_ImportModule("kpeek");
	PyObject *cls = m ? PyObject_GetAttrString(m, "StackFrame") : NULL;
	Py_XDECREF(m);
	PyObject *list = cls ? PyList_New(0) : NULL;
	for (size_t i = 0; list && i < n; i++) {
		struct kp_symbol s;
		struct kp_error *e2 = kp_symbol_by_address(self->k, f[i].pc, &s);
		bool has = !e2;
		kp_error_destroy(e2);
		PyObject *sym = has ? kpy_symbol_new(&s) : Py_NewRef(Py_None);
		PyObject *fr = sym ? PyObject_CallFunction(cls, "KKsOO", (unsigned long long)f[i].pc,
							  (unsigned long long)f[i].sp,
							  has ? s.name : NULL, sym,
							  (f[i].flags & KP_FRAME_EXACT) ? Py_True : Py_False) : NULL;
		Py_XDECREF(sym);
		if (!fr || PyList_Append(list, fr) < 0)
			Py_CLEAR(list);
		Py_XDECREF(fr);
	}
	Py_XDECREF(cls);
	kp_stack_destroy(st);
	return list;
}

// kpeek report's signature (doc/signature.md): a dict of what it hashes,
// None for a kernel that did not panic.
static PyObject *crash_signature(KpyProgram *self, PyObject *unused)
{
	KP_INIT(kp_signature, sig);
	struct kp_error *err = kp_signature_get(self->k, NULL, &sig);
	if (err)
		return kpy_error(err);
	if (sig.kind == KP_PANIC_NONE)
		Py_RETURN_NONE;
	PyObject *frames = PyList_New(0);
	for (unsigned i = 0; frames && i < sig.nframes; i++) {
		PyObject *f = PyUnicode_DecodeUTF8(sig.frames[i], strlen(sig.frames[i]), "backslashreplace");
		if (!f || PyList_Append(frames, f) < 0)
			Py_CLEAR(frames);
		Py_XDECREF(f);
	}
	if (!frames)
		return NULL;
	char hex[17];
	snprintf(hex, sizeof(hex), "%016llx", (unsigned long long)sig.hash);
	PyObject *d = Py_BuildValue("{s:s,s:s,s:s,s:N,s:O}", "signature", hex, "kind",
				    kp_panic_kind_name(sig.kind), "title", sig.title, "frames", frames,
				    "stack", sig.no_stack ? Py_False : Py_True);
	if (!d)
		Py_DECREF(frames);
	return d;
}

static PyObject *program_repr(KpyProgram *self)
{
	if (!self->path || self->path == Py_None)
		return PyUnicode_FromString("Program(/proc/kcore)");
	return PyUnicode_FromFormat("Program(%R)", self->path);
}

static PyObject *get_cache(KpyProgram *self, void *closure)
{
	return Py_NewRef(self->cache ? self->cache : Py_None);
}

static PyObject *get_path(KpyProgram *self, void *closure)
{
	return Py_NewRef(self->path ? self->path : Py_None);
}

static PyMethodDef program_methods[] = {
	{ "variable", (PyCFunction)variable, METH_VARARGS,
	  "variable(name) -> Object: a global variable (LookupError if unknown)" },
	{ "object", (PyCFunction)variable, METH_VARARGS, "object(name): as variable()" },
	{ "eval", (PyCFunction)program_eval, METH_VARARGS,
	  "eval(expr) -> Object: a C expression as kpeek print evaluates it" },
	{ "symbol", (PyCFunction)symbol, METH_O,
	  "symbol(name_or_address) -> Symbol (LookupError if none)" },
	{ "type", (PyCFunction)program_type, METH_VARARGS, "type(name) -> Type from the kernel's BTF" },
	{ "read", (PyCFunction)(void (*)(void))program_read, METH_VARARGS | METH_KEYWORDS,
	  "read(address, size, physical=False) -> bytes" },
	{ "stack_trace", (PyCFunction)stack_trace, METH_O,
	  "stack_trace(task_or_pid) -> list of StackFrame, innermost first" },
	{ "whatis", (PyCFunction)(void (*)(void))kpy_whatis, METH_VARARGS | METH_KEYWORDS,
	  "whatis(address, physical=False) -> list of dict: every fact of kpeek whatis, most specific first" },
	{ "slab_objects", (PyCFunction)kpy_slab_objects, METH_O,
	  "slab_objects(cache) -> list of dict (address, slab, pfn, index, allocated): every object of a SLUB "
	  "cache, by name or struct kmem_cache * address, as kpeek slab walks it" },
	{ "search", (PyCFunction)(void (*)(void))kpy_search, METH_VARARGS | METH_KEYWORDS,
	  "search(value=None, *, string=None, pid=0, physical=False, ignore=0, width=8, start=0, end=0, "
	  "limit=-1) -> list of int: the addresses of kpeek search: where value (its bits but those set in "
	  "ignore; width 8 or 4 bytes, aligned) or the bytes of string are, in the kernel's memory through "
	  "the direct map, process pid's memory, or physical memory" },
	{ "crash_signature", (PyCFunction)crash_signature, METH_NOARGS,
	  "crash_signature() -> dict (signature, kind, title, frames, stack) as kpeek report's, None without a panic" },
	{ "_tasks", (PyCFunction)tasks, METH_VARARGS, NULL },
	{ "_task_by_pid", (PyCFunction)task_by_pid, METH_VARARGS, NULL },
	{ "_list_nodes", (PyCFunction)list_nodes, METH_VARARGS, NULL },
	{ "_modules", (PyCFunction)modules, METH_NOARGS, NULL },
	{ "_task_words", (PyCFunction)task_words, METH_VARARGS, NULL },
	{ "_task_last_ran", (PyCFunction)task_last_ran, METH_VARARGS, NULL },
	{ "_task_mem", (PyCFunction)task_mem, METH_VARARGS, NULL },
	{ "_d_path", (PyCFunction)d_path, METH_VARARGS, NULL },
	{ NULL, NULL, 0, NULL },
};

static PyGetSetDef program_getset[] = {
	{ "_cache", (getter)get_cache, NULL, NULL, NULL },
	{ "path", (getter)get_path, NULL, "the dump's path, None for /proc/kcore", NULL },
	{ NULL, NULL, NULL, NULL, NULL },
};

static PyMappingMethods program_mapping = {
	.mp_subscript = (binaryfunc)subscript,
};

PyTypeObject KpyProgram_Type = {
	PyVarObject_HEAD_INIT(NULL, 0)
	.tp_name = "kpeek.Program",
	.tp_basicsize = sizeof(KpyProgram),
	.tp_dealloc = (destructor)program_dealloc,
	.tp_repr = (reprfunc)program_repr,
	.tp_as_mapping = &program_mapping,
	.tp_flags = Py_TPFLAGS_DEFAULT,
	.tp_doc = "Program(core=None, *, system_map=None, kallsyms=None, btf=None, raw=False,\n"
		  "raw_base=0, arch=None): a kernel, from a dump file or /proc/kcore",
	.tp_methods = program_methods,
	.tp_getset = program_getset,
	.tp_init = (initproc)program_init,
	.tp_new = PyType_GenericNew,
};
