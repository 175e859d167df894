// SPDX-License-Identifier: MIT
// One merged symbol table behind every lookup (kallsyms text or memory,
// System.map, VMCOREINFO, module symbols).
#ifndef KP_SYMTAB_H
#define KP_SYMTAB_H

#include <kpeek/kpeek.h>

struct kp_symtab;

struct kp_error *kp_symtab_create(struct kp_symtab **ret);
void kp_symtab_destroy(struct kp_symtab *st);
// Copies name and module. A (name, address) pair that an earlier source
// added is ignored (its type learnt if it had none); one source may list a
// pair twice. type: nm letter or '?'. module: NULL for core kernel.
struct kp_error *kp_symtab_add(struct kp_symtab *st, const char *name, size_t name_len,
			       uint64_t address, char type, const char *module);
// The symbols added from now on come from another source.
void kp_symtab_next_source(struct kp_symtab *st);
// Optional: room for count more symbols (and names), so that a bulk load
// does not grow (and rehash) its arrays step by step.
struct kp_error *kp_symtab_reserve(struct kp_symtab *st, size_t count);
// Sorts and indexes; lookups finalize implicitly when needed.
struct kp_error *kp_symtab_finalize(struct kp_symtab *st);
size_t kp_symtab_count(struct kp_symtab *st);
// Cheap lookup for optional symbols: no suggestions are built. False if unknown.
bool kp_symtab_find(struct kp_symtab *st, const char *name, struct kp_symbol *ret);
// Prefers core-kernel over module and global over local symbols for a name.
// Unknown names: KP_ERR_NOT_FOUND "unknown symbol 'x' (did you mean: a, b?)".
struct kp_error *kp_symtab_by_name(struct kp_symtab *st, const char *name,
				   struct kp_symbol *ret);
// Symbol at or below address; size = distance to the next symbol at a higher
// address (capped), so that name+off/size reads like %pS.
struct kp_error *kp_symtab_by_address(struct kp_symtab *st, uint64_t address,
				      struct kp_symbol *ret);
// Symbol i in address order (after finalize).
bool kp_symtab_at(struct kp_symtab *st, size_t i, struct kp_symbol *ret);

#endif
