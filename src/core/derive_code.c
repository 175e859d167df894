// SPDX-License-Identifier: MIT
// What the variables found in code (derive_refs.c, derive_tracepoints.c)
// share: the addresses the functions that use a variable form
// (kp_arch.data_refs), and the members their shapes are checked by.
#include <bpf/btf.h>

#include "core/derive_code.h"
#include "io/memory.h"
#include "types/types.h"
#include "util/error.h"

bool kp_derive_member_offset(const struct ctx *c, const char *type, const char *name, uint64_t *ret)
{
	uint32_t id;
	struct kp_btf_member m;
	struct kp_error *err = kp_types_find(c->types, BTF_KIND_STRUCT, type, &id);
	if (!err)
		err = kp_types_member_path(c->types, id, name, strlen(name), &m);
	if (err) {
		kp_error_destroy(err);
		return false;
	}
	*ret = m.bit_offset / 8;
	return true;
}

static void collect(uint64_t target, void *arg)
{
	struct candidates *c = arg;
	for (size_t i = 0; i < c->n; i++)
		if (c->at[i] == target)
			return;
	if (c->n < MAX_CANDIDATES) {
		c->by[c->n] = c->user;
		c->at[c->n++] = target;
	}
}

void kp_derive_gather(const struct ctx *c, struct kp_symtab *st, const char *const *users,
		      bool to_exit, struct candidates *cand)
{
	uint8_t code[CODE];
	struct kp_symbol fn;
	cand->n = 0;
	for (size_t i = 0; users && i < 3 && users[i]; i++)
		if (kp_symtab_find(st, users[i], &fn) &&
		    kp_ok(kp_memory_read(c->mem, KP_VIRT, fn.address, code, sizeof(code)))) {
			cand->user = users[i];
			c->arch->data_refs(code, sizeof(code), fn.address, to_exit, collect, cand);
		}
}
