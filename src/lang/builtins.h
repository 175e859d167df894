// SPDX-License-Identifier: MIT
// The kernel's own builtins of expressions and sizeof (builtins.c).
// container_of and offsetof are member navigation (navigate.h).
#ifndef KP_LANG_BUILTINS_H
#define KP_LANG_BUILTINS_H

#include "lang/value.h"

// per_cpu(var, cpu) needs var to be a variable: checked before cpu is
// evaluated.
struct kp_error *kp_per_cpu_check_var(const struct kp_value *var);
// per_cpu(var, cpu): var in the per-CPU area of CPU cpu (an rvalue).
struct kp_error *kp_per_cpu(struct kp_eval_env *e, const struct kp_value *var,
			    struct kp_value *cpu, struct kp_value **ret);
// sizeof(type) as an unsigned long: an incomplete type is an error.
struct kp_error *kp_sizeof_type(struct kp_eval_env *e, uint32_t type, struct kp_value **ret);
// sizeof v (untyped symbols and bitfields have no size).
struct kp_error *kp_sizeof_value(struct kp_eval_env *e, const struct kp_value *v,
				 struct kp_value **ret);

#endif
