// The C-like expression language of kp_eval() and the C type-name parser
// shared with the curated variable types and kp_member_offset().
#ifndef KP_EXPR_H
#define KP_EXPR_H

#include <kpeek/kpeek.h>
#include "types/btf.h"

struct kp_kernel;
struct kp_value;

// Longest expression accepted and deepest nesting (parser recursion).
#define KP_EXPR_MAX_LEN 4096
#define KP_EXPR_MAX_DEPTH 64

// Parses a C type name: "struct task_struct *", "unsigned long[3]", "u64",
// "char *[4]", "void *[]". KP_ERR_SYNTAX / KP_ERR_NOT_FOUND.
struct kp_error *kp_parse_type(struct kp_kernel *kernel, const char *str, uint32_t *ret);

// Walks a member designator ("tasks", "se.vruntime", "mem[0].x") from type:
// the result's bit_offset is from the start of type.
struct kp_error *kp_member_path(struct kp_kernel *kernel, uint32_t type, const char *path,
				size_t len, struct kp_btf_member *ret);

// The value of a symbol name: its BTF VAR type, the curated table
// (vartypes.c), a function, an enumerator, or an untyped lvalue.
struct kp_error *kp_resolve_symbol(struct kp_kernel *kernel, const char *name,
				   struct kp_value **ret);

#endif
