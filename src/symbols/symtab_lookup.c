// SPDX-License-Identifier: MIT
// Lookups in the merged symbol table: by name (the table's pick merged with
// the lazy source's answer), by address (the records finalize built, sizes
// like the kernel's %pS) and the aliases at an address. What needs every
// name (the walk, the suggestions for an unknown one) is symtab_iter.c.
#include <stdlib.h>
#include <string.h>

#include "symbols/symtab_impl.h"
#include "util/error.h"

static void fill(const struct kp_symtab *st, uint32_t idx, struct kp_symbol *ret)
{
	const struct entry *e = &st->entries[idx];
	ret->name = st->unames[e->name].str;
	ret->address = e->address;
	ret->size = e->size;
	ret->type = e->type;
	ret->module = e->module;
}



// The table's own pick for name (the lazy source aside).
static bool find_own(struct kp_symtab *st, const char *name, size_t len, uint32_t *ret)
{
	uint32_t u;
	if (!kp_symtab_name_id(st, name, len, &u) || st->unames[u].best == NO_ENTRY)
		return false;
	*ret = st->unames[u].best;
	return true;
}

// The first record at an address above address, or nrecs.
static size_t rec_above(const struct kp_symtab *st, uint64_t address)
{
	size_t lo = 0, hi = st->nrecs;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (st->recs[mid].address <= address)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

// finalize's size of a symbol at address, over the table and the lazy source.
uint64_t kp_symtab_merged_size(struct kp_symtab *st, const struct kp_symbol *sym)
{
	uint64_t address = sym->address;
	if (!kp_symtab_addressable(address, sym->type) || kp_symtab_is_mapping_symbol(sym->name))
		return 0;
	uint64_t next = st->lazy->next_address(st->lazy_ctx, address);
	size_t r = rec_above(st, address);
	if (r < st->nrecs && (!next || st->recs[r].address < next))
		next = st->recs[r].address;
	uint64_t limit = kp_symtab_limit_above(st, address);
	if (limit && (!next || limit < next))
		next = limit;
	if (!next || next - address > MAX_SYMBOL_EXTENT)
		return 0;
	if (r > 0 && st->recs[r - 1].address == address && st->recs[r - 1].end)
		return 0;
	if (st->lazy_end < 0) {
		// The source does not change: look _end up once, not per lookup.
		struct kp_symbol end;
		st->lazy_end = st->lazy->find(st->lazy_ctx, "_end", &end) > 0 &&
			       kp_symtab_addressable(end.address, end.type);
		st->lazy_end_address = st->lazy_end ? end.address : 0;
	}
	if (st->lazy_end && st->lazy_end_address == address)
		return 0;
	return next - address;
}

const char *kp_symtab_origin(struct kp_symtab *st, const char *name, uint64_t address)
{
	struct kp_error *err = kp_symtab_finalize(st);
	uint32_t i;
	if (err || !find_own(st, name, strlen(name), &i) || st->entries[i].address != address) {
		kp_error_destroy(err);
		return NULL;
	}
	uint16_t source = st->entries[i].source;
	return source < st->norigins ? st->origins[source] : NULL;
}

bool kp_symtab_find(struct kp_symtab *st, const char *name, struct kp_symbol *ret)
{
	struct kp_error *err = kp_symtab_finalize(st);
	if (err) {
		kp_error_destroy(err);
		return false;
	}
	size_t len = strlen(name);
	uint32_t own_idx;
	bool own = find_own(st, name, len, &own_idx);
	if (!st->lazy) {
		if (own)
			fill(st, own_idx, ret);
		return own;
	}
	struct kp_symbol best, lazy;
	int found = st->lazy->find(st->lazy_ctx, name, &lazy);
	if (found < 0) {
		if ((err = kp_symtab_complete(st))) {
			kp_error_destroy(err);
			return false;
		}
		return kp_symtab_find(st, name, ret);
	}
	if (own)
		fill(st, own_idx, &best);
	if (found) {
		// Same address: the same symbol, first seen in the lazy source.
		int ls = kp_symtab_name_score(NULL, lazy.type),
		    os = own ? kp_symtab_name_score(best.module, best.type) : -1;
		if (!own || lazy.address == best.address || ls > os ||
		    (ls == os && lazy.address < best.address)) {
			uint32_t u;
			if ((err = kp_symtab_intern(st, lazy.name, len, &u))) {
				kp_error_destroy(err);
				return false;
			}
			best = (struct kp_symbol){ .name = st->unames[u].str, .address = lazy.address,
						   .type = lazy.type };
		}
	} else if (!own) {
		return false;
	}
	best.size = kp_symtab_merged_size(st, &best);
	*ret = best;
	return true;
}


// An address lookup without loading the lazy source: its candidate merged
// with the table's as finalize would merge them (the higher address; at
// one address the lazy source's symbol, being the first source, unless it
// is a section marker and the table's is not), the size as kp_symtab_merged_size()
// gives it. 1 answered (ret or kp_not_found in *err), 0 when the lazy source
// must be loaded after all.
static int by_address_lazy(struct kp_symtab *st, uint64_t address, struct kp_symbol *ret,
			   struct kp_error **err)
{
	struct kp_symbol l;
	int lf = st->lazy->at_or_below(st->lazy_ctx, address, &l);
	if (lf < 0)
		return 0;
	size_t lo = rec_above(st, address);
	const struct addr_rec *r = lo ? &st->recs[lo - 1] : NULL;
	struct kp_symbol best;
	if (r)
		fill(st, r->entry, &best);
	if (lf && (!r || l.address > r->address ||
		   (l.address == r->address && !(kp_symtab_is_marker(l.name) && !kp_symtab_is_marker(best.name))))) {
		uint32_t u;
		if ((*err = kp_symtab_intern(st, l.name, strlen(l.name), &u)))
			return 1;
		best = (struct kp_symbol){ .name = st->unames[u].str, .address = l.address, .type = l.type };
	} else if (!r) {
		*err = &kp_not_found;
		return 1;
	}
	best.size = kp_symtab_merged_size(st, &best);
	uint64_t off = address - best.address;
	if (off != 0 && off >= best.size) {
		*err = &kp_not_found;
		return 1;
	}
	*ret = best;
	*err = NULL;
	return 1;
}

struct kp_error *kp_symtab_by_address(struct kp_symtab *st, uint64_t address,
				      struct kp_symbol *ret)
{
	struct kp_error *err = kp_symtab_finalize(st);
	if (err)
		return err;
	if (st->lazy && st->lazy->at_or_below && by_address_lazy(st, address, ret, &err))
		return err;
	if ((err = kp_symtab_complete(st)))
		return err;
	// Last record at or below address.
	size_t lo = rec_above(st, address);
	if (lo == 0)
		return &kp_not_found;
	const struct addr_rec *r = &st->recs[lo - 1];
	uint64_t off = address - r->address;
	if (off != 0 && off >= r->size)
		return &kp_not_found;
	fill(st, r->entry, ret);
	return NULL;
}

// The first entry at or above address (entries in address order).
static size_t first_entry_at(const struct kp_symtab *st, uint64_t address)
{
	size_t lo = 0, hi = st->nentries;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (st->entries[mid].address < address)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

// The lazy source's aliases come first (it is the first source; ties in
// address keep the order of sources), then the table's own, less those it
// lists too (the duplicates finalize drops when it is loaded). 1 found, 0 none, -1 the source would rather be loaded.
static int alias_lazy(struct kp_symtab *st, uint64_t address, size_t i, struct kp_symbol *ret)
{
	struct kp_symbol l;
	size_t n = 0;
	int lf = st->lazy->alias(st->lazy_ctx, address, i, &n, &l);
	if (lf < 0)
		return -1;
	if (lf == 0) {
		i -= n;
		size_t j = first_entry_at(st, address);
		for (; j < st->nentries && st->entries[j].address == address; j++) {
			const struct entry *e = &st->entries[j];
			if (!kp_symtab_entry_addressable(st, e))
				continue;
			int dup = st->lazy->lists(st->lazy_ctx, st->unames[e->name].str, address);
			if (dup < 0)
				return -1;
			if (dup || i--)
				continue;
			fill(st, (uint32_t)j, ret);
			ret->size = kp_symtab_merged_size(st, ret);
			return 1;
		}
		return 0;
	}
	uint32_t u;
	struct kp_error *err = kp_symtab_intern(st, l.name, strlen(l.name), &u);
	if (err) {
		kp_error_destroy(err);
		return -1;
	}
	*ret = (struct kp_symbol){ .name = st->unames[u].str, .address = l.address, .type = l.type };
	ret->size = kp_symtab_merged_size(st, ret);
	return 1;
}

bool kp_symtab_alias(struct kp_symtab *st, uint64_t address, size_t i, struct kp_symbol *ret)
{
	struct kp_error *err = kp_symtab_finalize(st);
	int found = -1;
	if (!err && st->lazy && st->lazy->alias && st->lazy->lists)
		found = alias_lazy(st, address, i, ret);
	if (found >= 0)
		return found;
	if (err || (err = kp_symtab_complete(st))) {
		kp_error_destroy(err);
		return false;
	}
	for (size_t j = first_entry_at(st, address);
	     j < st->nentries && st->entries[j].address == address; j++) {
		if (!kp_symtab_entry_addressable(st, &st->entries[j]) || i--)
			continue;
		fill(st, (uint32_t)j, ret);
		return true;
	}
	return false;
}
