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
// A symbol below address ends at address at the latest (the end of a
// module's text: a function's size there is what the kernel's %pS prints,
// kernel/module/kallsyms.c find_kallsyms_symbol()). Not a symbol itself.
struct kp_error *kp_symtab_add_limit(struct kp_symtab *st, uint64_t address);
// The symbols added from now on come from another source.
void kp_symtab_next_source(struct kp_symtab *st);
// kp_symtab_next_source() for symbols no symbol table names, with how they
// were found ("references in get_avenrun"; copied) for kp_symtab_origin().
struct kp_error *kp_symtab_next_source_origin(struct kp_symtab *st, const char *origin);
// The origin of the symbol name at address (as kp_symtab_find gave it),
// NULL if its source has none or the table holds no such symbol.
const char *kp_symtab_origin(struct kp_symtab *st, const char *name, uint64_t address);
// Optional: room for count more symbols (and names), so that a bulk load
// does not grow (and rehash) its arrays step by step.
struct kp_error *kp_symtab_reserve(struct kp_symtab *st, size_t count);
// Sorts and indexes; lookups finalize implicitly when needed.
struct kp_error *kp_symtab_finalize(struct kp_symtab *st);
size_t kp_symtab_count(struct kp_symtab *st);
// Whether no symbol has been added (cheap: loads nothing).
bool kp_symtab_empty(const struct kp_symtab *st);
// Whether every source is in the table (no lazy source left unloaded).
bool kp_symtab_loaded(const struct kp_symtab *st);
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
#define KP_SYMTAB_MAX_NAME 1024	// of a lazy source's names (KSYM_NAME_LEN 512 since 6.1)

// Every symbol in address order, as the table loaded whole lists them
// (symbols at one address in the order of their sources), without loading
// a lazy source: pos starts zeroed; ret (its name in pos) valid until the
// next call; &kp_not_found past the last.
struct kp_symtab_pos {
	size_t lazy, own;
	char name[KP_SYMTAB_MAX_NAME + 1];
};
struct kp_error *kp_symtab_next(struct kp_symtab *st, struct kp_symtab_pos *pos,
				struct kp_symbol *ret);
// The i-th symbol at exactly address, aliases in source order (the address
// lookup's pick among them is the first real one); false past the last.
bool kp_symtab_alias(struct kp_symtab *st, uint64_t address, size_t i, struct kp_symbol *ret);
// count[c] = number of symbols of type letter c (a source counted whole,
// duplicates between sources included: for heuristics).
void kp_symtab_count_types(struct kp_symtab *st, size_t count[256]);

// Section markers (__start_*, __stop_*, __end_*, _end) share their address
// with a real symbol; address lookups name the real one, as %pS does.
bool kp_symtab_is_marker(const char *name);
// Mapping symbols ("$x", "$d" of arm64 modules, ".L..." local labels, "L0"):
// address lookups skip them, as the kernel's %pS does.
bool kp_symtab_is_mapping_symbol(const char *name);

// Below this, "addresses" are per-CPU offsets or absolute values that would
// match small integers: such symbols, and those of type A, are found by name
// only, and address lookups never return them.
#define KP_SYMTAB_MIN_ADDRESS 0x100000000ULL
static inline bool kp_symtab_addressable(uint64_t address, char type)
{
	return address >= KP_SYMTAB_MIN_ADDRESS && type != 'A' && type != 'a';
}

// A source that looks a name up without building its whole table (the
// kernel's compressed kallsyms in memory: kallsyms_index.c), so that the
// first answer does not pay for 150k symbols. by-name lookups consult it
// beside the symbols added the usual way; whatever needs every symbol
// (address lookups, iteration, counts, suggestions for an unknown name)
// first loads all of it into the table, in its place as the first source.
struct kp_symtab_lazy_ops {
	// The symbol the source would give by name (global over local, then
	// the lowest address, then the first listed); ret->name valid until
	// the next call; size and module not set. 1 found, 0 none, -1 when
	// the source would rather be loaded whole (a name repeated so often
	// that looking it up is as costly as loading).
	int (*find)(void *ctx, const char *name, struct kp_symbol *ret);
	// The lowest address above address of one of its symbols that is
	// kp_symtab_addressable(), 0 if none.
	uint64_t (*next_address)(void *ctx, uint64_t address);
	// The symbol an address lookup would give of its own: the highest
	// kp_symtab_addressable() address at or below address, of the symbols
	// there the first that is not a section marker (__start_*, __stop_*,
	// __end_*, _end), else the first; ret->name valid until the next call;
	// size and module not set. 1 found, 0 none, -1 when the source would
	// rather be loaded whole. May be NULL (address lookups load it).
	int (*at_or_below)(void *ctx, uint64_t address, struct kp_symbol *ret);
	// The i-th kp_symtab_addressable() symbol at exactly address, in
	// source order: 1 found; 0 not, *n the number there is; -1 when the
	// source would rather be loaded whole. ret as at_or_below's. May be
	// NULL (alias lookups load it).
	int (*alias)(void *ctx, uint64_t address, size_t i, size_t *n, struct kp_symbol *ret);
	// Whether it has a symbol name at address (of any type): 1 yes, 0 no,
	// -1 when it would rather be loaded whole. May be NULL.
	int (*lists)(void *ctx, const char *name, uint64_t address);
	// Its i-th symbol (in address order): 1, 0 past the last, -1 when it
	// cannot be read. ret as at_or_below's. May be NULL.
	int (*record)(void *ctx, size_t i, struct kp_symbol *ret);
	void (*count_types)(void *ctx, size_t count[256]);
	// Adds every symbol with kp_symtab_add; adds nothing on error.
	struct kp_error *(*load)(void *ctx, struct kp_symtab *st);
	void (*destroy)(void *ctx);
};
// Only as the first source of an empty table. The table owns ctx from the
// call on (destroyed on error too).
struct kp_error *kp_symtab_add_lazy(struct kp_symtab *st, const struct kp_symtab_lazy_ops *ops,
				    void *ctx);

#endif
