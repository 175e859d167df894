// SPDX-License-Identifier: MIT
// C arithmetic on values (arith.c): integer promotions and the usual
// arithmetic conversions, pointer arithmetic and comparisons.
#ifndef KP_LANG_ARITH_H
#define KP_LANG_ARITH_H

#include "lang/value.h"

// An integer after promotion: its bits (sign-extended when sgn), size 4 or 8.
struct kp_num {
	uint64_t x;
	unsigned size;
	bool sgn;
};

// The promoted value of an integer (or enum, or bitfield) value.
struct kp_error *kp_num_of(struct kp_value *v, struct kp_num *ret);
// An rvalue of the int type of n's size and signedness.
struct kp_error *kp_num_value(struct kp_eval_env *e, struct kp_num n, struct kp_value **ret);
// An unsigned long rvalue (sizeof, offsetof).
struct kp_error *kp_ulong_value(struct kp_eval_env *e, uint64_t x, struct kp_value **ret);
// Whether a scalar value is nonzero (conditions of !, && and ||).
struct kp_error *kp_value_truth(struct kp_value *v, bool *ret);
// The address of element idx of an array of esize-byte elements at base
// (p + idx, &p[idx]): an error naming the column when the byte offset or
// the address overflows 64 bits, never a wrapped address.
struct kp_error *kp_arith_element(uint64_t base, int64_t idx, uint64_t esize, int col,
				  uint64_t *ret);
// An index (or pointer offset) as a signed 64-bit count: an unsigned one past
// INT64_MAX is an error, since no array is that large.
struct kp_error *kp_num_index(struct kp_num n, int col, int64_t *ret);
// a op b for rvalues a and b (arrays and functions decayed): op a char or
// KP_OP_* of lex.h other than && and ||; col for messages.
struct kp_error *kp_arith_binary(struct kp_eval_env *e, int op, int col, struct kp_value *a,
				 struct kp_value *b, struct kp_value **ret);
// -a, ~a or !a for an rvalue a.
struct kp_error *kp_arith_unary(struct kp_eval_env *e, int op, struct kp_value *a,
				struct kp_value **ret);

#endif
