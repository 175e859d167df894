// SPDX-License-Identifier: MIT
// The sections of kpeek report after the kernel's and the panic's: each a
// few lines in text, one key in JSON, nothing where it has nothing to say.
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "output.h"
#include "report.h"

#define MAX_CPU_LINES 64	// other CPUs listed; the rest are counted
#define MAX_EARLIER 10		// earlier warnings kept (the latest)

static void stack_text(struct report *r, struct kp_stack *st)
{
	const struct kp_frame *fr;
	size_t n = kp_stack_frames(st, &fr);
	bool complete;
	const char *end = kp_stack_end(st, &complete);
	struct out *o = r->o;
	if (out_is_json(o)) {
		out_kv_str(o, "origin", kp_stack_origin(st));
		out_begin_list(o, "frames");
		for (size_t i = 0; i < n; i++)
			cli_frame_json(r->k, o, &fr[i]);
		out_end_list(o);
		out_kv_str(o, "end", end);
		out_kv_bool(o, "complete", complete);
		return;
	}
	out_text(o, "stack:     CPU %d (%s)\n", r->panic.cpu, kp_stack_origin(st));
	for (size_t i = 0; i < n; i++) {
		char name[320];
		if (fr[i].flags & KP_FRAME_USER) {
			out_text(o, "           (entered from user mode)\n");
			continue;
		}
		cli_frame_name(r->k, &fr[i], name, sizeof(name));
		out_text(o, "           %s%s%s\n", fr[i].flags & KP_FRAME_UNRELIABLE ? "? " : "", name,
			 (fr[i].flags & KP_FRAME_REGS) && fr[i].regs_address ? "  <- exception/interrupt" : "");
	}
	out_text(o, "           -- %s%s\n", end, complete ? "" : " (incomplete)");
}

void report_stack(struct report *r)
{
	if (!r->panic.panicked)
		return;
	struct kp_stack *st;
	out_begin_object(r->o, "stack");
	out_kv_int(r->o, "cpu", r->panic.cpu);
	struct kp_error *err = kp_stack_cpu_create(r->k, r->panic.cpu, &st);
	if (err) {
		report_problem(r, "stack:", err);
	} else {
		stack_text(r, st);
		kp_stack_destroy(st);
	}
	out_end_object(r->o);
}

// "name+0xoff/0xsize" where cpu's registers in the dump put it, "" if the
// dump has none for it.
static void cpu_at(struct report *r, int cpu, char *buf, size_t size)
{
	struct kp_stack *st;
	const struct kp_frame *fr;
	buf[0] = '\0';
	struct kp_error *err = r->live ? NULL : kp_stack_cpu_create(r->k, cpu, &st);
	if (r->live || err) {
		kp_error_destroy(err);
		return;
	}
	if (kp_stack_frames(st, &fr) && !(fr[0].flags & KP_FRAME_USER))
		cli_frame_name(r->k, &fr[0], buf, size);
	else if (kp_stack_frames(st, &fr))
		snprintf(buf, size, "user mode");
	kp_stack_destroy(st);
}

void report_cpus(struct report *r)
{
	struct kp_runq_iter *it;
	struct out *o = r->o;
	out_begin_object(o, "cpus");
	struct kp_error *err = kp_runq_iter_create(r->k, &it);
	if (err) {
		report_problem(r, "cpus:", err);
		out_end_object(o);
		return;
	}
	out_begin_list(o, "others");
	unsigned shown = 0, more = 0;
	for (;;) {
		const struct kp_rq *rq;
		if ((err = kp_runq_iter_next(it, &rq)) || !rq)
			break;
		if (r->panic.panicked && (int)rq->cpu == r->panic.cpu)
			continue;
		if (shown == MAX_CPU_LINES) {
			more++;
			continue;
		}
		char at[320];
		cpu_at(r, (int)rq->cpu, at, sizeof(at));
		if (out_is_json(o)) {
			out_begin_object(o, NULL);
			out_kv_uint(o, "cpu", rq->cpu);
			out_kv_int(o, "pid", rq->current.pid);
			out_kv_str(o, "comm", rq->current.comm);
			out_kv_str(o, "at", at[0] ? at : NULL);
			out_kv_uint(o, "nr_running", rq->nr_running);
			out_end_object(o);
		} else {
			out_text(o, "%s CPU %u: PID %d (%s)%s%s, %u runnable\n", shown ? "          " : "cpus:     ",
				 rq->cpu, rq->current.pid, rq->current.comm, at[0] ? " in " : "", at, rq->nr_running);
		}
		shown++;
	}
	out_end_list(o);
	out_kv_uint(o, "not_shown", more);
	if (more)
		out_text(o, "           (%u more CPUs not shown)\n", more);
	kp_runq_iter_destroy(it);
	if (err)
		report_problem(r, "cpus:", err);
	out_end_object(o);
}

// Records that say something went wrong before the panic (the kernel's
// wording: lib/bug.c, kernel/panic.c __warn(), arch fault handlers,
// kernel/hung_task.c, kernel/watchdog.c, kernel/rcu, mm/oom_kill.c).
static bool notable(const char *s, size_t n)
{
	static const char *const starts[] = {
		"WARNING:", "BUG: ", "Oops", "kernel BUG at ", "general protection fault",
		"Unable to handle kernel ", "Internal error: ", "INFO: task ", "watchdog: BUG: ",
		"rcu: INFO: ", "INFO: rcu_", "Out of memory: ", "Kernel panic - not syncing: ",
	};
	for (size_t i = 0; i < sizeof(starts) / sizeof(starts[0]); i++) {
		size_t l = strlen(starts[i]);
		if (n >= l && !memcmp(s, starts[i], l))
			return true;
	}
	n = n < 200 ? n : 200;
	return memmem(s, n, " invoked oom-killer:", 20) != NULL;
}

static void *must(void *p)
{
	if (!p) {
		cli_fail("out of memory");
		exit(1);
	}
	return p;
}

struct line {
	uint64_t ts;
	char *text;
};

// A ring of the last cap records' first lines (bounded: cap * 256 bytes;
// out of memory ends kpeek, as dmesg does).
struct ring {
	struct line *l;
	size_t cap, n, head;
};

static void ring_push(struct ring *g, const struct kp_printk_record *rec)
{
	if (!g->cap)
		return;
	const char *nl = memchr(rec->text, '\n', rec->len);
	size_t len = nl ? (size_t)(nl - rec->text) : rec->len;
	len = len < 255 ? len : 255;
	char *t = must(strndup(rec->text, len));
	struct line *slot = &g->l[(g->head + g->n) % g->cap];
	if (g->n == g->cap) {
		slot = &g->l[g->head];
		free(slot->text);
		g->head = (g->head + 1) % g->cap;
	} else {
		g->n++;
	}
	slot->ts = rec->ts_nsec;
	slot->text = t;
}

static void ring_print(struct report *r, const char *key, const char *label, struct ring *g)
{
	struct out *o = r->o;
	out_begin_list(o, key);
	for (size_t i = 0; i < g->n; i++) {
		struct line *l = &g->l[(g->head + i) % g->cap];
		char time[32];
		cli_seconds(l->ts, time, sizeof(time));
		if (out_is_json(o)) {
			out_begin_object(o, NULL);
			out_kv_json(o, "time", time, time);
			out_kv_str(o, "text", l->text);
			out_end_object(o);
		} else {
			out_text(o, "%-10s [%12s] %s\n", i ? "" : label, time, l->text);
		}
		free(l->text);
	}
	out_end_list(o);
	free(g->l);
}

// The panic's own record: its time and caller (kp_panic) and its prefix.
static bool is_panic_record(const struct kp_panic *p, const struct kp_printk_record *rec)
{
	return p->message[0] && rec->ts_nsec == p->ts_nsec && rec->caller_id == p->caller_id &&
	       rec->len >= 28 && !memcmp(rec->text, "Kernel panic - not syncing: ", 28);
}

// A record leaving the window of the last lines (or every record, with
// --lines 0) is kept among the earlier ones if notable.
static void leaving(struct ring *earlier, const struct line *l, uint64_t *count)
{
	size_t len = strlen(l->text);
	if (!notable(l->text, len))
		return;
	struct kp_printk_record copy = { .ts_nsec = l->ts, .text = l->text, .len = len };
	ring_push(earlier, &copy);
	(*count)++;
}

void report_log(struct report *r)
{
	struct ring last = { .cap = r->log_lines }, earlier = { .cap = MAX_EARLIER };
	last.l = must(calloc(last.cap ? last.cap : 1, sizeof(*last.l)));
	earlier.l = must(calloc(MAX_EARLIER, sizeof(*earlier.l)));
	struct out *o = r->o;
	out_begin_object(o, "log");
	struct kp_printk_iter *it = NULL;
	struct kp_error *err = kp_printk_iter_create(r->k, &it);
	uint64_t nearlier = 0;
	while (!err) {
		const struct kp_printk_record *rec;
		if ((err = kp_printk_iter_next(it, &rec)) || !rec)
			break;
		if (!last.cap) {
			char text[256];
			size_t len = rec->len < 255 ? rec->len : 255;
			memcpy(text, rec->text, len);
			text[len] = '\0';
			text[strcspn(text, "\n")] = '\0';
			leaving(&earlier, &(struct line){ .ts = rec->ts_nsec, .text = text }, &nearlier);
		} else if (last.n == last.cap) {
			leaving(&earlier, &last.l[last.head], &nearlier);
		}
		ring_push(&last, rec);
		if (is_panic_record(&r->panic, rec))
			break;
	}
	kp_printk_iter_destroy(it);
	out_kv_uint(o, "earlier_notable", nearlier);
	if (nearlier > earlier.n)
		out_text(o, "earlier:   %" PRIu64 " warnings and oopses before these, the last %zu:\n",
			 nearlier, earlier.n);
	ring_print(r, "earlier", "earlier:", &earlier);
	ring_print(r, "lines", "log:", &last);
	if (err)
		report_problem(r, "log:", err);
	out_end_object(o);
}

// meminfo's lines that say where memory went, in its order.
static const char *const mem_keys[] = {
	"MemTotal", "MemFree", "MemAvailable", "Buffers", "Cached", "SwapTotal", "SwapFree",
	"AnonPages", "Shmem", "Slab", "SReclaimable", "SUnreclaim", "KernelStack", "PageTables",
	"VmallocUsed", "HugePages_Total",
};

static void memory_lines(struct report *r)
{
	struct kp_meminfo *mi;
	struct out *o = r->o;
	struct kp_error *err = kp_meminfo_create(r->k, &mi);
	if (err) {
		report_problem(r, "memory:", err);
		return;
	}
	out_begin_object(o, "meminfo");
	size_t shown = 0;
	for (size_t i = 0; i < mi->n; i++) {
		const struct kp_meminfo_item *it = &mi->items[i];
		bool want = false;
		for (size_t j = 0; j < sizeof(mem_keys) / sizeof(mem_keys[0]); j++)
			want |= !strcmp(it->name, mem_keys[j]);
		if (!want)
			continue;
		if (out_is_json(o)) {
			out_kv_uint(o, it->name, it->value);
			continue;
		}
		char size[32];
		if (it->kb)
			cli_human_size(it->value * 1024, size, sizeof(size));
		else
			snprintf(size, sizeof(size), "%" PRIu64, it->value);
		out_text(o, "%s%s %s", shown % 4 ? ", " : shown ? "\n           " : "memory:    ", it->name, size);
		shown++;
	}
	if (shown)
		out_text(o, "\n");
	out_end_object(o);
	kp_meminfo_destroy(mi);
}

static void load_line(struct report *r)
{
	KP_INIT(kp_loadavg, la);
	struct out *o = r->o;
	struct kp_error *err = kp_loadavg(r->k, &la);
	if (err) {
		report_problem(r, "load:", err);
		return;
	}
	char l[3][16];
	for (int i = 0; i < 3; i++)
		kp_loadavg_format(la.avenrun[i], l[i]);
	if (out_is_json(o)) {
		out_begin_object(o, "load");
		out_kv_json(o, "load1", l[0], NULL);
		out_kv_json(o, "load5", l[1], NULL);
		out_kv_json(o, "load15", l[2], NULL);
		out_kv_int_known(o, "running", la.has_running, la.running);
		out_kv_int_known(o, "threads", la.has_total, la.total);
		out_end_object(o);
		return;
	}
	out_text(o, "load:      %s %s %s", l[0], l[1], l[2]);
	if (la.has_running && la.has_total)
		out_text(o, ", %u runnable of %u threads", la.running, la.total);
	out_text(o, "\n");
}

static void runqueues(struct report *r)
{
	struct kp_runq_iter *it;
	struct out *o = r->o;
	struct kp_error *err = kp_runq_iter_create(r->k, &it);
	if (err) {
		report_problem(r, "runqueues:", err);
		return;
	}
	out_begin_list(o, "runqueues");
	unsigned n = 0;
	for (;;) {
		const struct kp_rq *rq;
		if ((err = kp_runq_iter_next(it, &rq)) || !rq)
			break;
		if (out_is_json(o)) {
			out_begin_object(o, NULL);
			out_kv_uint(o, "cpu", rq->cpu);
			out_kv_uint(o, "nr_running", rq->nr_running);
			out_end_object(o);
		} else if (n < MAX_CPU_LINES) {
			out_text(o, "%s CPU%u %u", n % 8 ? "," : n ? "\n          " : "runqueues:", rq->cpu,
				 rq->nr_running);
		}
		n++;
	}
	out_end_list(o);
	if (n)
		out_text(o, "%s\n", n > MAX_CPU_LINES ? " ..." : "");
	kp_runq_iter_destroy(it);
	if (err)
		report_problem(r, "runqueues:", err);
}

void report_memory(struct report *r)
{
	out_begin_object(r->o, "memory");
	memory_lines(r);
	report_largest(r);
	load_line(r);
	runqueues(r);
	out_end_object(r->o);
}

void report_modules(struct report *r)
{
	struct kp_module_iter *it;
	struct out *o = r->o;
	out_begin_object(o, "modules");
	struct kp_error *err = kp_module_iter_create(r->k, &it);
	if (err) {
		report_problem(r, "modules:", err);
		out_end_object(o);
		return;
	}
	out_begin_list(o, "tainting");
	unsigned n = 0, all = 0;
	for (;;) {
		const struct kp_module *m;
		if ((err = kp_module_iter_next(it, &m)) || !m)
			break;
		all++;
		if (!m->taints[0])
			continue;
		if (out_is_json(o)) {
			out_begin_object(o, NULL);
			out_kv_str(o, "name", m->name);
			out_kv_str(o, "taints", m->taints);
			out_end_object(o);
		} else {
			out_text(o, "%s %s (%s)", n ? "," : "modules:  ", m->name, m->taints);
		}
		n++;
	}
	out_end_list(o);
	out_kv_uint(o, "loaded", all);
	out_text(o, "%s%u loaded\n", n ? "; " : "modules:   ", all);
	kp_module_iter_destroy(it);
	if (err)
		report_problem(r, "modules:", err);
	out_end_object(o);
}

void report_checks(struct report *r)
{
	struct out *o = r->o;
	const char *const *names = kp_check_names();
	unsigned run = 0, found = 0, cannot = 0;
	char what[512] = "";
	size_t used = 0;
	out_begin_object(o, "checks");
	out_begin_list(o, "found");
	for (size_t i = 0; names[i]; i++) {
		struct kp_check *c;
		struct kp_error *err = kp_check_run(r->k, names[i], 0, &c);
		if (err) {
			report_problem(r, "checks:", err);
			break;
		}
		run++;
		enum kp_check_status st = kp_check_status(c);
		size_t findings = kp_check_count(c) + kp_check_dropped(c);
		if (st == KP_CHECK_FOUND) {
			found++;
			out_kv_str(o, NULL, names[i]);
			used += (size_t)snprintf(what + used, used < sizeof(what) ? sizeof(what) - used : 0,
						 "%s%s: %zu", found > 1 ? ", " : "", names[i], findings);
		}
		cannot += st == KP_CHECK_CANNOT;
		kp_check_destroy(c);
	}
	out_end_list(o);
	out_kv_uint(o, "run", run);
	out_kv_uint(o, "cannot", cannot);
	r->found = found;
	if (found)
		out_text(o, "checks:    %u checks, %u found something (%s): kpeek check\n", run, found, what);
	else
		out_text(o, "checks:    %u checks, nothing suspicious%s\n", run,
			 cannot ? " (some could not decide: kpeek check)" : "");
	out_end_object(o);
}
