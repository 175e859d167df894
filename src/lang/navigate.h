// SPDX-License-Identifier: MIT
// Moving from one value to another (navigate.c): members, subscripts,
// dereference, address-of, container_of, casts, and the decay of arrays
// and functions to pointers. kp_eval()'s operators and the public
// kp_value_*() navigation API share them.
#ifndef KP_LANG_NAVIGATE_H
#define KP_LANG_NAVIGATE_H

#include "lang/value.h"
#include "types/btf.h"

// Arrays and functions used as values become pointers (consumes v).
struct kp_error *kp_nav_decay(struct kp_eval_env *e, struct kp_value *v, struct kp_value **ret);
// a.name, or a->name if arrow (a an rvalue then), with a message that says
// which of the two a needs when it is the other.
struct kp_error *kp_nav_member_of(struct kp_eval_env *e, struct kp_value *a, bool arrow,
				  const char *name, size_t len, struct kp_value **ret);
// a[idx] of an array (lvalue or rvalue) or a pointer a; col for messages.
struct kp_error *kp_nav_subscript(struct kp_eval_env *e, struct kp_value *a, int64_t idx,
				  int col, struct kp_value **ret);
// *a for a pointer rvalue a.
struct kp_error *kp_nav_deref(struct kp_eval_env *e, struct kp_value *a, int col,
			      struct kp_value **ret);
// &a: a pointer to lvalue a (untyped symbols give void *).
struct kp_error *kp_nav_address_of(struct kp_eval_env *e, struct kp_value *a, int col,
				   struct kp_value **ret);
// (type)v: converts a scalar, reinterprets memory otherwise.
struct kp_error *kp_nav_cast(struct kp_eval_env *e, uint32_t type, struct kp_value *v,
			     struct kp_value **ret);
// The member of type that path (a designator, len bytes) names, for
// container_of and offsetof: a bitfield is an error.
struct kp_error *kp_nav_member_path(struct kp_eval_env *e, uint32_t type, const char *path,
				    size_t len, struct kp_btf_member *ret);
// container_of(a, type, m): a pointer to type, m bytes before a.
struct kp_error *kp_nav_container_of(struct kp_eval_env *e, struct kp_value *a, uint32_t type,
				     const struct kp_btf_member *m, struct kp_value **ret);

#endif
