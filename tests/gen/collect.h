// SPDX-License-Identifier: MIT
// Tests collect what the library's iterators yield into arrays (caller
// frees), so that checks can look at all of it at once.
#ifndef KPT_COLLECT_H
#define KPT_COLLECT_H

#include <kpeek/kpeek.h>

struct kp_error *kpt_tasks(struct kp_kernel *k, bool threads, struct kp_task **ret,
			   size_t *n_ret);
struct kp_error *kpt_modules(struct kp_kernel *k, struct kp_module **ret, size_t *n_ret);
// The same from an iterator the caller made (destroyed here).
struct kp_error *kpt_drain_tasks(struct kp_task_iter *it, struct kp_task **ret, size_t *n_ret);
struct kp_error *kpt_drain_modules(struct kp_module_iter *it, struct kp_module **ret,
				   size_t *n_ret);
// Calls fn for every printk record; a non-NULL error from fn stops the walk.
struct kp_error *kpt_printk(struct kp_kernel *k,
			    struct kp_error *(*fn)(const struct kp_printk_record *rec, void *arg),
			    void *arg);



// The architecture fact named key (kp_kernel_arch_fact): its value, or ~0 when
// the kernel does not know it or has no such fact.
uint64_t kpt_fact(struct kp_kernel *k, const char *key);
#define KPT_UNKNOWN UINT64_MAX
#endif
