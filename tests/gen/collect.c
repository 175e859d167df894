// SPDX-License-Identifier: MIT
// Iterators into arrays, for tests (collect.h).
#include <stdlib.h>
#include <string.h>

#include "collect.h"

struct kp_error *kpt_tasks(struct kp_kernel *k, bool threads, struct kp_task **ret,
			   size_t *n_ret)
{
	struct kp_task_iter *it;
	struct kp_error *err = kp_task_iter_create(k, threads ? KP_TASKS_THREADS : 0, &it);
	return err ? err : kpt_drain_tasks(it, ret, n_ret);
}

struct kp_error *kpt_drain_tasks(struct kp_task_iter *it, struct kp_task **ret, size_t *n_ret)
{
	struct kp_error *err;
	struct kp_task *t = NULL;
	size_t n = 0;
	const struct kp_task *task;
	while (!(err = kp_task_iter_next(it, &task)) && task) {
		struct kp_task *nt = realloc(t, (n + 1) * sizeof(*t));
		if (!nt)
			abort();
		t = nt;
		t[n++] = *task;
	}
	kp_task_iter_destroy(it);
	if (err) {
		free(t);
		return err;
	}
	*ret = t;
	*n_ret = n;
	return NULL;
}

struct kp_error *kpt_modules(struct kp_kernel *k, struct kp_module **ret, size_t *n_ret)
{
	struct kp_module_iter *it;
	struct kp_error *err = kp_module_iter_create(k, &it);
	return err ? err : kpt_drain_modules(it, ret, n_ret);
}

struct kp_error *kpt_drain_modules(struct kp_module_iter *it, struct kp_module **ret,
				   size_t *n_ret)
{
	struct kp_error *err;
	struct kp_module *m = NULL;
	size_t n = 0;
	const struct kp_module *mod;
	while (!(err = kp_module_iter_next(it, &mod)) && mod) {
		struct kp_module *nm = realloc(m, (n + 1) * sizeof(*m));
		if (!nm)
			abort();
		m = nm;
		m[n++] = *mod;
	}
	kp_module_iter_destroy(it);
	if (err) {
		free(m);
		return err;
	}
	*ret = m;
	*n_ret = n;
	return NULL;
}

struct kp_error *kpt_printk(struct kp_kernel *k,
			    struct kp_error *(*fn)(const struct kp_printk_record *rec, void *arg),
			    void *arg)
{
	struct kp_printk_iter *it;
	struct kp_error *err = kp_printk_iter_create(k, &it);
	if (err)
		return err;
	const struct kp_printk_record *rec;
	while (!(err = kp_printk_iter_next(it, &rec)) && rec && !(err = fn(rec, arg)))
		;
	kp_printk_iter_destroy(it);
	return err;
}

uint64_t kpt_fact(struct kp_kernel *k, const char *key)
{
	struct kp_fact f;
	for (size_t i = 0; kp_kernel_arch_fact(k, i, &f); i++)
		if (!strcmp(f.key, key))
			return f.known ? f.value : KPT_UNKNOWN;
	return KPT_UNKNOWN;
}
