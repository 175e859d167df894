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
#include <string.h>

#include "core/kernel.h"
#include "linux/linux.h"
#include "types/types.h"
#include "util/error.h"

#define PF_WQ_WORKER 0x00000020u	// include/linux/sched.h, unchanged since 2.6.36
#define PF_KTHREAD 0x00200000u
#define MIN_NICE (-20)

static bool member(struct kp_kernel *k, const char *type, const char *name, uint64_t *off,
		   uint64_t *size)
{
	return kp_lx_has_member(k, type, name, off, size);
}

void kp_lx_task_name_layout(struct kp_kernel *k, struct kp_lx_task_name_layout *ret)
{
	struct kp_lx_task_name_layout l = {0};
	static const char ts[] = "struct task_struct", kt[] = "struct kthread",
			  wk[] = "struct worker", pl[] = "struct worker_pool";
	// to_kthread(): task->worker_private since 5.17 ("kthread: Generalize
	// pf_io_worker so it can point to struct kthread"), set_child_tid before.
	l.has_kthread = (member(k, ts, "worker_private", &l.kthread_ptr, NULL) ||
			 member(k, ts, "set_child_tid", &l.kthread_ptr, NULL)) &&
			member(k, kt, "data", &l.kthread_data, NULL);
	l.has_full_name = l.has_kthread &&
			  member(k, kt, "full_name", &l.kthread_full_name, NULL);
	l.has_worker = l.has_kthread &&
		       member(k, wk, "desc", &l.worker_desc, &l.worker_desc_size) &&
		       member(k, wk, "current_work", &l.worker_current_work, NULL) &&
		       member(k, wk, "pool", &l.worker_pool, NULL);
	// The enumerator WORKER_ID_LEN marks format_worker_id() (6.10, above).
	struct kp_types *types;
	uint32_t id_type;
	uint64_t id_len_value;
	bool id_len = kp_ok(kp_kernel_types(k, &types)) &&
		      kp_types_enumerator(types, "WORKER_ID_LEN", &id_type, &id_len_value);
	l.full_worker_id = id_len && l.has_worker &&
			   member(k, wk, "id", &l.worker_id, NULL) &&
			   member(k, wk, "rescue_wq", &l.worker_rescue_wq, NULL) &&
			   member(k, pl, "cpu", &l.pool_cpu, NULL) &&
			   member(k, pl, "id", &l.pool_id, NULL) &&
			   member(k, pl, "attrs", &l.pool_attrs, NULL) &&
			   member(k, "struct workqueue_attrs", "nice", &l.attrs_nice, NULL) &&
			   member(k, "struct workqueue_struct", "name", &l.wq_name,
				  &l.wq_name_size);
	if (l.worker_desc_size > 64)
		l.worker_desc_size = 64;
	if (l.wq_name_size > 64)
		l.wq_name_size = 64;
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
static struct kp_error *worker_id(struct kp_kernel *k, const struct kp_lx_task_name_layout *l,
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
static struct kp_error *worker_name(struct kp_kernel *k, const struct kp_lx_task_name_layout *l,
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

struct kp_error *kp_lx_task_name(struct kp_kernel *k, const struct kp_lx_task_name_layout *l,
				 uint64_t task, uint64_t flags, const char *comm, char *ret,
				 size_t size)
{
	cat3(ret, size, comm, "", "");
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
