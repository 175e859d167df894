// SPDX-License-Identifier: MIT
// The variables found in code (derive_code.c), shared by derive_refs.c and
// derive_tracepoints.c: the context of a search, the candidates the
// functions' code forms, and the checks every shape starts from.
#ifndef KP_CORE_DERIVE_CODE_H
#define KP_CORE_DERIVE_CODE_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "arch/arch.h"
#include "symbols/symtab.h"

#define CODE 1024
#define MAX_CANDIDATES 64
#define MAX_RING 65536
#define NAME_LEN 56		// MODULE_NAME_LEN; kmem_cache names are shorter

// Offsets (BTF) of the members a ring's nodes are checked by, looked up
// once rather than for each node.
struct node_layout {
	bool ok;
	uint64_t list, name, state;	// state: struct module only
};

struct ctx {
	struct kp_memory *mem;
	struct kp_types *types;
	const struct kp_arch *arch;
	struct kp_symtab *st;
	uint64_t image_lo, image_hi;
	struct node_layout module, cache;	// struct module, struct kmem_cache
};

struct candidates {
	uint64_t at[MAX_CANDIDATES];
	const char *by[MAX_CANDIDATES];	// the first user whose code formed it
	const char *user;		// the user whose code is being decoded
	size_t n;
};

static inline bool kp_derive_in_image(const struct ctx *c, uint64_t a)
{
	return a >= c->image_lo && a < c->image_hi;
}

// A NUL-terminated name of printable characters in buf[size].
static inline bool kp_derive_printable(const char *buf, size_t size)
{
	size_t n = strnlen(buf, size);
	if (n == 0 || n == size)
		return false;
	for (size_t i = 0; i < n; i++)
		if (buf[i] <= ' ' || buf[i] > '~')
			return false;
	return true;
}

// The offset of struct type's member name (a path: "kobj.name"), from BTF.
bool kp_derive_member_offset(const struct ctx *c, const char *type, const char *name,
			     uint64_t *ret);
// The addresses the code of users (up to 3, NULL-ended) forms, CODE bytes
// of each (to_exit: up to its first exit).
void kp_derive_gather(const struct ctx *c, struct kp_symtab *st, const char *const *users,
		      bool to_exit, struct candidates *ret);
// derive_tracepoints.c: __start___tracepoints_ptrs and
// __stop___tracepoints_ptrs.
struct kp_error *kp_derive_tracepoints(const struct ctx *c, struct kp_symtab *st,
				       unsigned *added);

#endif
