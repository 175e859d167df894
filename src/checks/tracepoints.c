// SPDX-License-Identifier: MIT
// check tracepoints: a probe attached to a tracepoint (struct tracepoint's
// funcs: an array of struct tracepoint_func { func, data, prio } ending
// with a NULL func) runs at every hit: a rootkit attaches one to watch
// forks, execs or network events without touching any code. The kernel's
// own probes (trace events, perf, BPF raw tracepoints) are kernel text,
// or for a module's own events that module's event functions. Any other
// probe outside kernel text is reported with the tracepoint's name.
//
// The tracepoints: the core kernel's __start___tracepoints_ptrs ..
// __stop___tracepoints_ptrs and each module's tracepoints_ptrs
// (num_tracepoints), the hidden modules' too; an entry is a tracepoint_ptr_t,
// an int offset from the entry itself with CONFIG_HAVE_ARCH_PREL32_RELOCATIONS
// (x86-64 and arm64), else a pointer: BTF's size of the typedef says which.
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checks/check.h"
#include "core/kernel.h"
#include "core/layout.h"
#include "linux/module/module.h"
#include "util/error.h"
#include "util/le.h"

#define MAX_TRACEPOINTS (1u << 20)
#define MAX_PROBES 4096u	// per tracepoint

struct state {
	struct kp_ck *c;
	uint64_t ptr_size;		// 4 (PREL32) or 8
	uint64_t tp_name, tp_funcs;	// struct tracepoint
	uint64_t func_size, func_func;	// struct tracepoint_func
	unsigned tracepoints, probed, probes;
};

// The kernel's event machinery for a module's own tracepoints: when an
// event is enabled (tracefs, perf, BPF raw tracepoints) the probe is the
// module's trace_event_raw_event_CLASS, perf_trace_CLASS or
// __bpf_trace_CLASS (include/trace/trace_events.h, perf.h, bpf_probe.h;
// CLASS is the event class, not always the tracepoint's name), in a
// listed module.
static bool own_event(struct kp_ck *c, uint64_t fn)
{
	static const char *const prefixes[] = { "trace_event_raw_event_", "perf_trace_", "__bpf_trace_" };
	struct kp_symbol sym;
	if (!kp_ck_trusted_code(c, fn) || !kp_ck_symbol(c, fn, &sym) || sym.address != fn)
		return false;
	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++) {
		size_t n = strlen(prefixes[i]);
		if (!strncmp(sym.name, prefixes[i], n) && sym.name[n])
			return true;
	}
	return false;
}

static struct kp_error *one(struct state *s, uint64_t tp)
{
	struct kp_kernel *k = s->c->k;
	uint64_t funcs, name_ptr;
	struct kp_error *err;
	if ((err = kp_read_u64(k, tp + s->tp_funcs, &funcs)) ||
	    (err = kp_read_u64(k, tp + s->tp_name, &name_ptr)))
		return kp_error_prefix(err, "struct tracepoint at 0x%" PRIx64, tp);
	if (++s->tracepoints > MAX_TRACEPOINTS)
		return kp_error_create(KP_ERR_LOOP, "more than %u tracepoints (corrupt?)", MAX_TRACEPOINTS);
	if (!funcs)
		return NULL;
	s->probed++;
	char name[128];
	size_t got = kp_kernel_read_partial(k, name_ptr, name, sizeof(name) - 1, true);
	name[got] = '\0';
	if (!got || !name[0])
		snprintf(name, sizeof(name), "at 0x%" PRIx64, tp);
	for (unsigned i = 0;; i++) {
		uint64_t fn;
		if (i == MAX_PROBES)
			return kp_error_create(KP_ERR_LOOP, "tracepoint %s: more than %u probes (corrupt?)",
					       name, MAX_PROBES);
		if ((err = kp_read_u64(k, funcs + i * s->func_size + s->func_func, &fn)))
			return kp_error_prefix(err, "tracepoint %s: probes at 0x%" PRIx64, name, funcs);
		if (!fn)
			return NULL;
		s->probes++;
		char why[200] = "", where[160];
		if (!kp_ck_in_text(s->c, fn) && !own_event(s->c, fn)) {
			kp_ck_where(s->c, fn, where, sizeof(where));
			snprintf(why, sizeof(why), "probe in %s", where);
		}
		if ((err = kp_ck_add(s->c, fn, NULL, why[0] ? why : NULL, "tracepoint %s", name)))
			return err;
	}
}

// count entries of tracepoint_ptr_t at table.
static struct kp_error *table(struct state *s, uint64_t start, uint64_t count)
{
	struct kp_kernel *k = s->c->k;
	if (count > MAX_TRACEPOINTS)
		return kp_error_create(KP_ERR_FORMAT, "tracepoint table at 0x%" PRIx64 ": %" PRIu64 " entries (corrupt?)",
				       start, count);
	for (uint64_t i = 0; i < count; i++) {
		uint64_t at = start + i * s->ptr_size, tp;
		struct kp_error *err;
		if (s->ptr_size == 4) {
			uint32_t off;
			if ((err = kp_read_u32(k, at, &off)))
				return kp_error_prefix(err, "tracepoint table");
			tp = at + (uint64_t)(int64_t)(int32_t)off;
		} else if ((err = kp_read_u64(k, at, &tp))) {
			return kp_error_prefix(err, "tracepoint table");
		}
		if ((err = one(s, tp)))
			return err;
	}
	return NULL;
}

// CONFIG_TRACEPOINTS: a module's own table.
enum { MT_PTRS, MT_NUM, MT_N };
static const struct kp_member_spec module_members[MT_N] = {
	[MT_PTRS] = { .name = "tracepoints_ptrs", .flags = KP_MEMBER_OPTIONAL },
	[MT_NUM] = { .name = "num_tracepoints", .flags = KP_MEMBER_OPTIONAL },
};
static const struct kp_struct_spec module_spec = KP_STRUCT_SPEC("struct module", module_members);

static struct kp_error *modules(struct state *s)
{
	struct kp_kernel *k = s->c->k;
	const struct kp_struct_layout *ml;
	struct kp_error *lerr = kp_kernel_layout(k, &module_spec, &ml);
	kp_error_destroy(lerr);
	if (!s->c->mods || lerr || !kp_layout_has(ml, MT_PTRS) || !kp_layout_has(ml, MT_NUM))
		return NULL;
	uint64_t ptrs = kp_layout_off(ml, MT_PTRS), num = kp_layout_off(ml, MT_NUM);
	for (size_t i = 0; i < s->c->mods->n; i++) {
		uint64_t mod = s->c->mods->mods[i].address, start;
		uint32_t n;
		struct kp_error *err;
		if ((err = kp_read_u64(k, mod + ptrs, &start)) || (err = kp_read_u32(k, mod + num, &n)))
			return kp_error_prefix(err, "module %s", s->c->mods->mods[i].name);
		if (n && (err = table(s, start, n)))
			return kp_error_prefix(err, "module %s", s->c->mods->mods[i].name);
	}
	return NULL;
}

// tracepoint_ptr_t: an int offset with CONFIG_HAVE_ARCH_PREL32_RELOCATIONS
// (5.0+), else struct tracepoint *.
static const struct kp_struct_spec ptr_spec = KP_TYPE_SPEC("tracepoint_ptr_t");
enum { TP_NAME, TP_FUNCS, TP_N };
static const struct kp_member_spec tp_members[TP_N] = {
	[TP_NAME] = { .name = "name" }, [TP_FUNCS] = { .name = "funcs" },
};
static const struct kp_struct_spec tp_spec = KP_STRUCT_SPEC("struct tracepoint", tp_members);
static const struct kp_member_spec func_members[] = { { .name = "func" } };
static const struct kp_struct_spec func_spec = KP_STRUCT_SPEC("struct tracepoint_func", func_members);

struct kp_error *kp_ck_tracepoints(struct kp_ck *c)
{
	static const struct kp_struct_spec *const specs[] = { &ptr_spec, &tp_spec, &func_spec };
	const struct kp_struct_layout *l[3];
	struct kp_kernel *k = c->k;
	struct state s = { .c = c };
	struct kp_symbol start, stop;
	struct kp_error *err;
	if (!kp_symbol_find(k, "__start___tracepoints_ptrs", &start) ||
	    !kp_symbol_find(k, "__stop___tracepoints_ptrs", &stop) || stop.address < start.address) {
		kp_ck_cannot(c, "no __start___tracepoints_ptrs/__stop___tracepoints_ptrs symbols (no CONFIG_TRACEPOINTS?)");
		return NULL;
	}
	if ((err = kp_kernel_layouts(k, specs, 3, l)))
		return kp_ck_cannot_err(c, err, "tracepoints");
	s.ptr_size = l[0]->size;
	s.tp_name = kp_layout_off(l[1], TP_NAME);
	s.tp_funcs = kp_layout_off(l[1], TP_FUNCS);
	s.func_size = l[2]->size;
	s.func_func = kp_layout_off(l[2], 0);
	if ((s.ptr_size != 4 && s.ptr_size != 8) || s.func_size < 8 || s.func_size > 64) {
		kp_ck_cannot(c, "tracepoint_ptr_t of %" PRIu64 " bytes, struct tracepoint_func of %" PRIu64,
			     s.ptr_size, s.func_size);
		return NULL;
	}
	if ((err = table(&s, start.address, (stop.address - start.address) / s.ptr_size)) ||
	    (err = modules(&s)))
		return kp_ck_cannot_err(c, err, "tracepoints");
	return kp_ck_summary(c, "%u tracepoints (kernel and modules), %u with probes, %u probes",
			     s.tracepoints, s.probed, s.probes);
}
