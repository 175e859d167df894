// SPDX-License-Identifier: MIT
// The name of a task as /proc/PID/stat and ps(1) show it: proc_task_name()
// in fs/proc/array.c, which differs from task->comm for kernel threads:
//   - a workqueue worker (PF_WQ_WORKER) gets wq_worker_comm(): its id,
//     then "+DESC" while it runs a work item or "-DESC" after one, when it
//     is attached to a pool and worker->desc is set ("kworker/0:1-events").
//     The id is task->comm up to 6.9; since 6.10 ("workqueue: Refactor
//     worker ID formatting and make wq_worker_comm() use full ID string",
//     which added the enumerator WORKER_ID_LEN) it is formatted afresh by
//     format_worker_id(), untruncated: "kworker/R-WQNAME" (rescuers),
//     "kworker/CPU:ID" + "H" (nice < 0) or "F" (the RT pools' nice, one
//     below MIN_NICE), "kworker/uPOOL:ID" (unbound), "kworker/dying".
//   - any other kernel thread gets get_kthread_comm(): struct
//     kthread.full_name when the name did not fit comm (5.17+).
//   - a user task gets comm.
// proc_task_name() formats into 64 bytes: at most 63 characters.
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/kernel.h"
#include "core/layout.h"
#include "linux/sched/sched.h"
#include "types/types.h"
#include "util/error.h"

#define PF_WQ_WORKER 0x00000020u	// include/linux/sched.h, unchanged since 2.6.36
#define PF_KTHREAD 0x00200000u
#define MIN_NICE (-20)

enum { TN_KTHREAD, TN_N };
static const struct kp_member_spec task_members[TN_N] = {
	// to_kthread(): task->worker_private since 5.17 ("kthread: Generalize
	// pf_io_worker so it can point to struct kthread"), set_child_tid before.
	[TN_KTHREAD] = { .name = "worker_private|set_child_tid" },
};
static const struct kp_struct_spec task_spec = KP_STRUCT_SPEC("struct task_struct", task_members);

enum { KT_DATA, KT_FULL_NAME, KT_N };
static const struct kp_member_spec kthread_members[KT_N] = {
	[KT_DATA] = { .name = "data" },
	[KT_FULL_NAME] = { .name = "full_name", .flags = KP_MEMBER_OPTIONAL },	// 5.17+
};
static const struct kp_struct_spec kthread_spec = KP_STRUCT_SPEC_OPTIONAL("struct kthread", kthread_members);

enum { W_DESC, W_CURRENT_WORK, W_POOL, W_ID, W_RESCUE_WQ, W_N };
static const struct kp_member_spec worker_members[W_N] = {
	[W_DESC] = { .name = "desc" },
	[W_CURRENT_WORK] = { .name = "current_work" },
	[W_POOL] = { .name = "pool" },
	[W_ID] = { .name = "id", .flags = KP_MEMBER_OPTIONAL },
	[W_RESCUE_WQ] = { .name = "rescue_wq", .flags = KP_MEMBER_OPTIONAL },
};
static const struct kp_struct_spec worker_spec = KP_STRUCT_SPEC_OPTIONAL("struct worker", worker_members);

enum { P_CPU, P_ID, P_ATTRS, P_N };
static const struct kp_member_spec pool_members[P_N] = {
	[P_CPU] = { .name = "cpu" }, [P_ID] = { .name = "id" }, [P_ATTRS] = { .name = "attrs" },
};
static const struct kp_struct_spec pool_spec = KP_STRUCT_SPEC_OPTIONAL("struct worker_pool", pool_members);

static const struct kp_member_spec attrs_members[] = { { .name = "nice" } };
static const struct kp_struct_spec attrs_spec = KP_STRUCT_SPEC_OPTIONAL("struct workqueue_attrs", attrs_members);
static const struct kp_member_spec wq_members[] = { { .name = "name" } };
static const struct kp_struct_spec wq_spec = KP_STRUCT_SPEC_OPTIONAL("struct workqueue_struct", wq_members);

// What naming a task needs, resolved once per kernel (names()).
struct names {
	bool has_kthread, has_full_name, has_worker, full_worker_id;
	uint64_t kthread_ptr, kthread_data, kthread_full_name;
	uint64_t worker_desc, worker_desc_size, worker_current_work, worker_pool;
	uint64_t worker_id, worker_rescue_wq, pool_cpu, pool_id, pool_attrs, attrs_nice;
	uint64_t wq_name, wq_name_size;
};

static const struct kp_struct_layout *get(struct kp_kernel *k, const struct kp_struct_spec *spec)
{
	const struct kp_struct_layout *l;
	struct kp_error *err = kp_kernel_layout(k, spec, &l);
	if (err) {
		kp_error_destroy(err);
		return NULL;
	}
	return l->present ? l : NULL;
}

static void names(struct kp_kernel *k, struct names *ret)
{
	const struct kp_struct_layout *t = get(k, &task_spec), *kt = get(k, &kthread_spec),
				      *w = get(k, &worker_spec), *p = get(k, &pool_spec),
				      *a = get(k, &attrs_spec), *wq = get(k, &wq_spec);
	struct names l = {0};
	l.has_kthread = t && kt;
	if (!l.has_kthread) {
		*ret = l;
		return;
	}
	l.kthread_ptr = kp_layout_off(t, TN_KTHREAD);
	l.kthread_data = kp_layout_off(kt, KT_DATA);
	l.has_full_name = kp_layout_has(kt, KT_FULL_NAME);
	l.kthread_full_name = kp_layout_off(kt, KT_FULL_NAME);
	l.has_worker = w != NULL;
	if (w) {
		l.worker_desc = kp_layout_off(w, W_DESC);
		l.worker_desc_size = w->m[W_DESC].size > 64 ? 64 : w->m[W_DESC].size;
		l.worker_current_work = kp_layout_off(w, W_CURRENT_WORK);
		l.worker_pool = kp_layout_off(w, W_POOL);
	}
	// The enumerator WORKER_ID_LEN marks format_worker_id() (6.10, above).
	uint64_t id_len;
	l.full_worker_id = w && p && a && wq && kp_layout_has(w, W_ID) &&
			   kp_layout_has(w, W_RESCUE_WQ) && kp_kernel_enum_value(k, "WORKER_ID_LEN", &id_len);
	if (l.full_worker_id) {
		l.worker_id = kp_layout_off(w, W_ID);
		l.worker_rescue_wq = kp_layout_off(w, W_RESCUE_WQ);
		l.pool_cpu = kp_layout_off(p, P_CPU);
		l.pool_id = kp_layout_off(p, P_ID);
		l.pool_attrs = kp_layout_off(p, P_ATTRS);
		l.attrs_nice = kp_layout_off(a, 0);
		l.wq_name = kp_layout_off(wq, 0);
		l.wq_name_size = wq->m[0].size > 64 ? 64 : wq->m[0].size;
	}
	*ret = l;
}

// ret = a b c, truncated to size - 1 characters as scnprintf() would.
static void cat3(char *ret, size_t size, const char *a, const char *b, const char *c)
{
	size_t n = 0;
	for (const char *p[] = { a, b, c }, **q = p; q < p + 3; q++)
		for (const char *s = *q; *s && n + 1 < size; s++)
			ret[n++] = *s;
	ret[n] = '\0';
}

static struct kp_error *rd64(struct kp_kernel *k, uint64_t addr, uint64_t *ret)
{
	return kp_read_u64(k, addr, ret);
}

static struct kp_error *rd32(struct kp_kernel *k, uint64_t addr, int32_t *ret)
{
	uint32_t v;
	struct kp_error *err = kp_read_u32(k, addr, &v);
	if (!err)
		*ret = (int32_t)v;
	return err;
}

// A string of at most size bytes (NUL-terminated if shorter) at addr.
static struct kp_error *rdstr(struct kp_kernel *k, uint64_t addr, size_t size, char *buf,
			      size_t bufsize)
{
	char tmp[65];
	if (size > sizeof(tmp) - 1)
		size = sizeof(tmp) - 1;
	struct kp_error *err = kp_read(k, KP_VIRT, addr, tmp, size);
	if (err)
		return err;
	tmp[size] = '\0';
	cat3(buf, bufsize, tmp, "", "");
	return NULL;
}

// format_worker_id() (6.10+) into buf.
static struct kp_error *worker_id(struct kp_kernel *k, const struct names *l,
				  uint64_t worker, uint64_t pool, char *buf, size_t size)
{
	uint64_t wq, attrs;
	int32_t id, cpu, pool_id, nice;
	struct kp_error *err;
	if ((err = rd64(k, worker + l->worker_rescue_wq, &wq)))
		return err;
	if (wq) {
		char name[65];
		if ((err = rdstr(k, wq + l->wq_name, l->wq_name_size, name, sizeof(name))))
			return err;
		cat3(buf, size, "kworker/R-", name, "");
		return NULL;
	}
	if (!pool) {
		cat3(buf, size, "kworker/dying", "", "");
		return NULL;
	}
	if ((err = rd32(k, worker + l->worker_id, &id)) || (err = rd32(k, pool + l->pool_cpu, &cpu)))
		return err;
	if (cpu < 0) {
		if ((err = rd32(k, pool + l->pool_id, &pool_id)))
			return err;
		snprintf(buf, size, "kworker/u%d:%d", pool_id, id);
		return NULL;
	}
	if ((err = rd64(k, pool + l->pool_attrs, &attrs)))
		return err;
	if (!attrs)
		return kp_error_create(KP_ERR_FORMAT, "worker_pool 0x%" PRIx64 " has no attrs", pool);
	if ((err = rd32(k, attrs + l->attrs_nice, &nice)))
		return err;
	snprintf(buf, size, "kworker/%d:%d%s", cpu, id,
		 nice < 0 ? (nice == MIN_NICE - 1 ? "F" : "H") : "");
	return NULL;
}

// wq_worker_comm() into ret (which holds comm).
static struct kp_error *worker_name(struct kp_kernel *k, const struct names *l,
				    uint64_t kthread, char *ret, size_t size)
{
	uint64_t worker, pool, work = 0;
	struct kp_error *err;
	if ((err = rd64(k, kthread + l->kthread_data, &worker)))
		return kp_error_prefix(err, "struct kthread at 0x%" PRIx64, kthread);
	if (!worker)
		return NULL;
	if ((err = rd64(k, worker + l->worker_pool, &pool)))
		return kp_error_prefix(err, "struct worker at 0x%" PRIx64, worker);
	char id[64];
	if (l->full_worker_id) {
		if ((err = worker_id(k, l, worker, pool, id, sizeof(id))))
			return kp_error_prefix(err, "struct worker at 0x%" PRIx64, worker);
	} else {
		cat3(id, sizeof(id), ret, "", "");
	}
	char desc[65] = "";
	if (pool && ((err = rdstr(k, worker + l->worker_desc, l->worker_desc_size, desc, sizeof(desc))) ||
		     (err = rd64(k, worker + l->worker_current_work, &work))))
		return kp_error_prefix(err, "struct worker at 0x%" PRIx64, worker);
	if (pool && desc[0])
		cat3(ret, size, id, work ? "+" : "-", desc);
	else
		cat3(ret, size, id, "", "");
	return NULL;
}

// Resolved once per kernel: every task of a walk is named.
static const struct names *names_of(struct kp_kernel *k)
{
	struct kp_types *types;
	struct kp_error *err = kp_kernel_types(k, &types);
	if (err) {
		kp_error_destroy(err);
		return NULL;
	}
	static const char key;	// the memo's key: this file's own
	struct names *l = kp_types_memo_get(types, &key);
	if (l)
		return l;
	if (!(l = malloc(sizeof(*l))))
		return NULL;
	names(k, l);
	if (!kp_types_memo_put(types, &key, l)) {
		free(l);
		return NULL;
	}
	return l;
}

struct kp_error *kp_lx_task_name(struct kp_kernel *k, uint64_t task, uint64_t flags,
				 const char *comm, char *ret, size_t size)
{
	cat3(ret, size, comm, "", "");
	const struct names *l = names_of(k);
	if (!l)
		return NULL;	// no BTF for names: the comm, as the layouts of the walk say
	uint64_t kthread;
	struct kp_error *err;
	if (!(flags & PF_KTHREAD) || !l->has_kthread)
		return NULL;
	if ((err = rd64(k, task + l->kthread_ptr, &kthread)))
		return err;
	if (!kthread)
		return NULL;
	if (flags & PF_WQ_WORKER)
		return l->has_worker ? worker_name(k, l, kthread, ret, size) : NULL;
	uint64_t full;
	char name[64];
	if (!l->has_full_name)
		return NULL;
	if ((err = rd64(k, kthread + l->kthread_full_name, &full)))
		return kp_error_prefix(err, "struct kthread at 0x%" PRIx64, kthread);
	if (!full)
		return NULL;
	if ((err = kp_read_cstr(k, full, name, sizeof(name))))
		return kp_error_prefix(err, "kthread full_name at 0x%" PRIx64, full);
	cat3(ret, size, name, "", "");
	return NULL;
}
