// SPDX-License-Identifier: MIT
// The value of a kernel symbol named in an expression.
#ifndef KP_LANG_SYMBOL_TYPE_H
#define KP_LANG_SYMBOL_TYPE_H

#include <kpeek/kpeek.h>

#include "arch/arch.h"	// struct kp_var_type

// The value of name: its BTF VAR type, the curated tables (generic, then
// the architecture's), a function, an enumerator, or an untyped lvalue that
// only & and casts may use.
struct kp_error *kp_resolve_symbol(struct kp_kernel *kernel, const char *name,
				   struct kp_value **ret);

#endif
