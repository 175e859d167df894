// SPDX-License-Identifier: MIT
// Typed values: a BTF type (an id in the kernel's working BTF, types.h) plus
// either an lvalue address in kernel virtual memory or inline bytes (an
// rvalue), and for bitfields the bit offset and width. The public
// struct kp_value of kpeek.h.
#ifndef KP_LANG_VALUE_H
#define KP_LANG_VALUE_H

#include <kpeek/kpeek.h>

struct btf;
struct kp_types;

// Biggest value read in one piece (e.g. *(char (*)[N])p with a huge N).
#define KP_VALUE_MAX_SIZE (64u << 20)

struct kp_value {
	struct kp_kernel *kernel;
	struct kp_types *types;
	struct btf *btf;	// kp_types_btf(types)
	uint32_t type;
	bool lvalue;
	uint64_t address;	// lvalue: first byte (of the bitfield's storage)
	uint32_t bit_offset;	// bitfield: bits from address / data[0], 0-7
	uint32_t bit_size;	// 0 unless a bitfield
	uint64_t size;		// bytes at address / in data
	uint8_t *data;		// rvalue bytes (or NULL for an unread lvalue); owned
	// A symbol with no known type: only & and casts may use it.
	bool untyped;
	// A per-CPU variable (or part of one) used without per_cpu(): its
	// address is an offset into each CPU's area.
	bool percpu;
	char *symbol;		// untyped / percpu symbol name (owned), for messages
};

// An lvalue of type at address (no read).
struct kp_error *kp_value_lvalue(struct kp_kernel *kernel, uint32_t type, uint64_t address,
				 struct kp_value **ret);
// An rvalue holding a copy of size bytes (size must be the type's size).
struct kp_error *kp_value_rvalue(struct kp_kernel *kernel, uint32_t type, const void *bytes,
				 uint64_t size, struct kp_value **ret);
// An integer / pointer rvalue of type holding v (truncated to the type size).
struct kp_error *kp_value_from_u64(struct kp_kernel *kernel, uint32_t type, uint64_t v,
				   struct kp_value **ret);
// Reads the bytes of an lvalue (once; kept in data). Rvalues: no-op.
struct kp_error *kp_value_fetch(struct kp_value *value);
// Integer/pointer contents, sign-extended for signed types; bitfields extracted.
struct kp_error *kp_value_scalar(struct kp_value *value, uint64_t *ret);
// Decodes a scalar of type from little-endian bytes; bit_size 0 means the
// whole type (format.c shares it).
uint64_t kp_value_decode(const struct btf *btf, uint32_t type, const uint8_t *bytes,
			 size_t avail, uint64_t bit_off, uint32_t bit_size);


// What the operators of expressions (eval.c, arith.c, navigate.c,
// builtins.c) read from and make values with: the kernel (memory,
// symbols) and its types.
struct kp_eval_env {
	struct kp_kernel *k;
	struct kp_types *types;
};

// The C name of type, for a message (malloc'ed); NULL if it has none.
char *kp_value_type_str(const struct btf *btf, uint32_t type);
// KP_ERR_TYPE with fmt's one %s the name of v's type.
struct kp_error *kp_value_type_error(const struct kp_value *v, const char *fmt);
// KP_ERR_TYPE for a symbol used without a type, saying how to give it one.
struct kp_error *kp_value_untyped_error(const struct kp_value *v);
// The BTF kind of v's type (typedefs and qualifiers stripped).
int kp_value_kind(const struct kp_value *v);
bool kp_value_is_pointer(const struct kp_value *v);
// The type a pointer value points to; *esize_ret the step of its arithmetic.
uint32_t kp_value_pointer_target(const struct kp_value *v, uint64_t *esize_ret);
// The step of pointer arithmetic on v; an element type past 2^64 bytes is
// an error, not a step of 0 or 1.
struct kp_error *kp_value_pointer_step(const struct kp_value *v, uint64_t *esize_ret);

#endif
