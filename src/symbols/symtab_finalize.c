// SPDX-License-Identifier: MIT
// Finalizing the merged symbol table (kp_symtab_finalize), once after a
// batch of additions and again whenever symbols were added since:
//   - radix-sorts compact (address, index) pairs and rewrites the entries in
//     address order (stable: ties keep insertion order),
//   - drops duplicate (name, address) pairs with a per-name "last seen at"
//     mark (O(n) however many symbols share a name or an address),
//   - picks, per name, the entry by_name returns,
//   - builds one record per distinct lookup address, sizes precomputed.
#include <stdlib.h>
#include <string.h>

#include "symbols/symtab_impl.h"
#include "util/error.h"

static bool lookup_address_ok(const struct entry *e)
{
	return kp_symtab_addressable(e->address, e->type);
}

static bool has_prefix(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

bool kp_symtab_is_marker(const char *name)
{
	return has_prefix(name, "__start_") || has_prefix(name, "__stop_") ||
	       has_prefix(name, "__end_") || strcmp(name, "_end") == 0;
}

// Mapping symbols ("$x", "$d" of arm64 modules, ".L..." local labels; the
// kernel's is_mapping_symbol(), 6.3+, and scripts/kallsyms.c before): by name
// only. Address lookups skip them as the kernel's %pS does, so that they
// neither hide the function at their address nor cut its extent short.
bool kp_symtab_is_mapping_symbol(const char *name)
{
	return name[0] == '$' || (name[0] == '.' && name[1] == 'L') ||
	       (name[0] == 'L' && name[1] == '0');
}

bool kp_symtab_entry_addressable(const struct kp_symtab *st, const struct entry *e)
{
	return lookup_address_ok(e) && !kp_symtab_is_mapping_symbol(st->unames[e->name].str);
}

// Higher is preferred among symbols at one address; among equals the first
// in source order, as the kernel's own lookup (kallsyms get_symbol_pos()
// takes the first alias in its table: "__do_sys_pause", not
// "__x64_sys_pause", in /proc/PID/stack and oops traces).
static int address_score(const struct kp_symtab *st, const struct entry *e)
{
	return kp_symtab_is_marker(st->unames[e->name].str) ? 0 : 1;
}

struct sort_key {
	uint64_t address;
	uint64_t index;
};

// Rewrites entries in address order: a stable LSD radix sort of (address,
// index) pairs, 8 bits a pass, skipping passes in which every key has the
// same byte (kernel addresses share their top bytes), then moved into place
// along the permutation's cycles: no second copy of the entries, which is
// most of the peak memory of a live start (95k-200k symbols from
// /proc/kallsyms, not in order: modules follow the kernel). kallsyms input is
// usually sorted already.
static bool sort_entries(struct kp_symtab *st)
{
	size_t n = st->nentries;
	bool sorted = true;
	for (size_t i = 1; i < n && sorted; i++)
		sorted = st->entries[i].address >= st->entries[i - 1].address;
	if (sorted)
		return true;
	struct sort_key *a = malloc(n * sizeof(*a)), *b = malloc(n * sizeof(*b));
	if (!a || !b) {
		free(a);
		free(b);
		return false;
	}
	for (size_t i = 0; i < n; i++)
		a[i] = (struct sort_key){ st->entries[i].address, i };
	for (int shift = 0; shift < 64; shift += 8) {
		size_t count[256] = {0};
		for (size_t i = 0; i < n; i++)
			count[(a[i].address >> shift) & 0xff]++;
		if (count[(a[0].address >> shift) & 0xff] == n)
			continue;
		size_t pos = 0;
		for (int d = 0; d < 256; d++) {
			size_t c = count[d];
			count[d] = pos;
			pos += c;
		}
		for (size_t i = 0; i < n; i++)
			b[count[(a[i].address >> shift) & 0xff]++] = a[i];
		struct sort_key *t = a;
		a = b;
		b = t;
	}
	free(b);
	// Position i takes the entry at a[i].index; a placed position is marked
	// by a[i].index == i.
	for (size_t i = 0; i < n; i++) {
		if (a[i].index == i)
			continue;
		struct entry tmp = st->entries[i];
		size_t j = i;
		for (;;) {
			size_t k = a[j].index;
			a[j].index = j;
			if (k == i) {
				st->entries[j] = tmp;
				break;
			}
			st->entries[j] = st->entries[k];
			j = k;
		}
	}
	free(a);
	return true;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static int name_score(const struct entry *e)
{
	return kp_symtab_name_score(e->module, e->type);
}

// seen[name] = (address group + 1) << 32 | kept entry: a second entry of the
// same name in the same group from another source is a duplicate. One
// source may list a name twice at one address (/proc/kallsyms has lockdep's
// __key.0 so): both stay. False when out of memory (nothing dropped).
static bool drop_duplicates(struct kp_symtab *st)
{
	uint64_t *seen = calloc(st->nunames + 1, sizeof(*seen));
	if (!seen)
		return false;
	size_t n = 0;
	uint64_t group = 0;
	for (size_t i = 0; i < st->nentries; i++) {
		struct entry e = st->entries[i];
		if (n && e.address != st->entries[n - 1].address)
			group++;
		uint64_t s = seen[e.name];
		if (s >> 32 == group + 1 && st->entries[(uint32_t)s].source != e.source) {
			// Same symbol from a second source (VMCOREINFO, then
			// kallsyms): keep the first, but learn its type.
			struct entry *kept = &st->entries[(uint32_t)s];
			if (kept->type == '?')
				kept->type = e.type;
			continue;
		}
		seen[e.name] = (group + 1) << 32 | n;
		st->entries[n++] = e;
	}
	st->nentries = n;
	free(seen);
	return true;
}

// Picks each name's entry for by-name lookups, and fills recs with one
// record per address that address lookups can return; their count.
static size_t index_entries(struct kp_symtab *st, struct addr_rec *recs)
{
	for (size_t i = 0; i < st->nunames; i++)
		st->unames[i].best = NO_ENTRY;
	size_t nrecs = 0;
	for (size_t i = 0; i < st->nentries; i++) {
		const struct entry *e = &st->entries[i];
		struct uname *u = &st->unames[e->name];
		if (u->best == NO_ENTRY || name_score(e) > name_score(&st->entries[u->best]))
			u->best = i;
		if (!kp_symtab_entry_addressable(st, e))
			continue;
		bool end = strcmp(u->str, "_end") == 0;
		if (nrecs && recs[nrecs - 1].address == e->address) {
			struct addr_rec *r = &recs[nrecs - 1];
			if (address_score(st, e) > address_score(st, &st->entries[r->entry]))
				r->entry = i;
			r->end |= end;
			continue;
		}
		recs[nrecs++] = (struct addr_rec){ .address = e->address, .entry = i, .end = end };
	}
	return nrecs;
}

// A record's size: up to the next record or limit, unknown (0) past
// MAX_SYMBOL_EXTENT, after the last record, and at _end. Then every
// symbol's size is its address's: aliases share an extent.
static void size_entries(struct kp_symtab *st, struct addr_rec *recs, size_t nrecs)
{
	if (st->nlimits)
		qsort(st->limits, st->nlimits, sizeof(*st->limits), cmp_u64);
	for (size_t i = 0; i < nrecs; i++) {
		struct addr_rec *r = &recs[i];
		uint64_t gap = i + 1 < nrecs ? recs[i + 1].address - r->address : 0;
		uint64_t limit = kp_symtab_limit_above(st, r->address);
		if (limit && (!gap || limit - r->address < gap))
			gap = limit - r->address;
		if (gap > MAX_SYMBOL_EXTENT || r->end)
			gap = 0;
		r->size = gap;
	}
	for (size_t i = 0, r = 0; i < st->nentries; i++) {
		struct entry *e = &st->entries[i];
		e->size = 0;
		if (!kp_symtab_entry_addressable(st, e))
			continue;
		while (recs[r].address < e->address)
			r++;
		e->size = recs[r].size;
	}
}

struct kp_error *kp_symtab_finalize(struct kp_symtab *st)
{
	if (st->finalized)
		return NULL;
	if (!kp_symtab_intern_pending(st))
		return &kp_enomem;
	// Every name is interned: the queue goes before the sort needs room.
	free(st->pending);
	st->pending = NULL;
	st->pending_cap = 0;
	if (!sort_entries(st))
		return &kp_enomem;
	struct addr_rec *recs = malloc(st->nentries * sizeof(*recs) + 1);
	if (!recs || !drop_duplicates(st)) {
		free(recs);
		return &kp_enomem;
	}
	size_t nrecs = index_entries(st, recs);
	size_entries(st, recs, nrecs);
	free(st->recs);
	st->recs = recs;
	st->nrecs = nrecs;
	st->finalized = true;
	return NULL;
}
