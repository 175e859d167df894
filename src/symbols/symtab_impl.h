// SPDX-License-Identifier: MIT
// The insides of the merged symbol table, for the files that implement it:
// symtab.c (adding: the name arena and hash), symtab_finalize.c (sorting and
// indexing), symtab_lazy.c (a source looked up without being loaded) and
// symtab_lookup.c (by name, by address). Everything else uses symtab.h.
#ifndef KP_SYMBOLS_SYMTAB_IMPL_H
#define KP_SYMBOLS_SYMTAB_IMPL_H

#include "symbols/symtab.h"

// A symbol extends to the next higher address unless that is further than
// this: beyond it (or past the last symbol, or past _end) the extent is
// unknown and only the symbol's own address matches. Generous because kernel
// data symbols (log buffers, page tables) can be a few MiB.
#define MAX_SYMBOL_EXTENT (4ULL << 20)
#define NO_ENTRY UINT32_MAX	// uname.best of a name no symbol has (a module name)

struct arena_chunk;

struct uname {
	const char *str;
	uint32_t len;
	uint32_t best;		// entry by_name returns (after finalize); NO_ENTRY
				// for names without symbols (module names)
	uint64_t chars;		// set of character classes, for suggestions
};

struct entry {
	uint64_t address;
	uint64_t size;		// valid after finalize
	const char *module;
	uint32_t name;		// index into unames
	char type;
	uint16_t source;	// kp_symtab_next_source() count when added
};

struct pending {
	const char *str;	// in the arena
	uint32_t len;
	uint32_t hash;
};

struct addr_rec {
	uint64_t address;
	uint64_t size;		// 0: extent unknown, exact matches only
	uint32_t entry;
	bool end;		// _end is here: the image ends, nothing extends past
};

struct kp_symtab {
	struct arena_chunk *arena;

	struct uname *unames;
	size_t nunames, unames_cap;
	uint64_t *name_slots;	// hash << 32 | (uname index + 1); 0 = empty
	size_t name_mask;

	struct entry *entries;	// in address order after finalize
	size_t nentries, entries_cap;
	// Names of the last npending entries, copied but not yet interned:
	// finalize interns them in one batch, prefetching hash slots ahead,
	// since nearly every probe of a big table is a cache and TLB miss.
	struct pending *pending;
	size_t npending, pending_cap;
	const char *last_module;	// interned; modules come in runs

	bool finalized;
	uint16_t source;		// the source entries now come from
	struct addr_rec *recs;	// one per distinct lookup address
	size_t nrecs;

	const struct kp_symtab_lazy_ops *lazy;	// NULL once loaded
	void *lazy_ctx;
	uint16_t lazy_source;
	int lazy_end;			// the lazy source's _end: -1 unknown, 0 none, 1 at...
	uint64_t lazy_end_address;	// ... this address (merged_size())
	uint64_t *limits;		// kp_symtab_add_limit(), sorted by finalize
	size_t nlimits, limits_cap;
	// kp_symtab_next_source_origin(): origins[source] (in the arena), NULL where a
	// source has none; norigins entries allocated.
	const char **origins;
	size_t norigins;
};

// The name's index in unames, if it is interned (symtab.c).
bool kp_symtab_name_id(const struct kp_symtab *st, const char *name, size_t len,
		       uint32_t *ret);
// Interns a name (symtab.c): a copy of it when it is new.
struct kp_error *kp_symtab_intern(struct kp_symtab *st, const char *name, size_t len,
				  uint32_t *ret);
// Interns the names of the entries added since the last call, in one batch
// (symtab.c); false when out of memory.
bool kp_symtab_intern_pending(struct kp_symtab *st);
// The first limit (kp_symtab_add_limit()) above address, 0 if none; the
// limits are sorted by finalize (symtab.c).
uint64_t kp_symtab_limit_above(const struct kp_symtab *st, uint64_t address);
// Whether entry e has a place in address lookups (symtab_finalize.c).
bool kp_symtab_entry_addressable(const struct kp_symtab *st, const struct entry *e);
// finalize's size of a symbol, over the table and the lazy source
// (symtab_lookup.c).
uint64_t kp_symtab_merged_size(struct kp_symtab *st, const struct kp_symbol *sym);
// Loads the lazy source, if any, and finalizes: every symbol in the table,
// sorted and indexed (symtab_lazy.c).
struct kp_error *kp_symtab_complete(struct kp_symtab *st);

// Higher is preferred by name: core kernel over module, then global over local.
static inline int kp_symtab_name_score(const char *module, char type)
{
	bool global = type >= 'A' && type <= 'Z';
	return (module ? 0 : 2) + (global ? 1 : 0);
}

#endif
