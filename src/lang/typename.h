// SPDX-License-Identifier: MIT
// C type names over a kernel's BTF: "struct task_struct *", "unsigned long
// [3]", "u64", "char *[4]", "int (*)[2]", parsed into working-BTF type ids
// (pointers, arrays and const synthesized as needed).
#ifndef KP_LANG_TYPENAME_H
#define KP_LANG_TYPENAME_H

#include "lang/lex.h"

// Whether a type name starts ahead tokens after the current one (so that
// "(u64)x" is a cast and "(jiffies)" is not).
bool kp_starts_type(struct kp_parser *p, size_t ahead);
// Parses a type name at the current token; false with p->err set on failure.
bool kp_parse_type_tokens(struct kp_parser *p, uint32_t *ret);
// A whole string as one type name. KP_ERR_SYNTAX / KP_ERR_NOT_FOUND.
struct kp_error *kp_parse_type(struct kp_types *types, const char *str, uint32_t *ret);

#endif
