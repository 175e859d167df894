// SPDX-License-Identifier: MIT
// The merged symbol table.
//
// Names (and module names) are interned once in a chunked arena, so the
// pointers handed out stay valid for the table's lifetime even while symbols
// are added. kp_symtab_add only interns the name (one probe of an open-
// addressing hash whose slots carry the hash, so misses touch no string) and
// appends. kp_symtab_finalize then
//   - radix-sorts compact (address, index) pairs and rewrites the entries in
//     address order (stable: ties keep insertion order),
//   - drops duplicate (name, address) pairs with a per-name "last seen at"
//     mark (O(n) however many symbols share a name or an address),
//   - picks, per name, the entry by_name returns,
//   - builds one record per distinct lookup address, sizes precomputed.
// Nothing here is quadratic: a fuzzed dump may hand us millions of
// identical names or addresses.
//
// A lazy source (kp_symtab_add_lazy) stays outside all this until something
// needs every symbol: by-name lookups merge its answer with the table's.
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "symbols/symtab.h"
#include "util/suggest.h"
#include "util/error.h"
#include "util/hash.h"
#include "util/vec.h"

// A symbol extends to the next higher address unless that is further than
// this: beyond it (or past the last symbol, or past _end) the extent is
// unknown and only the symbol's own address matches. Generous because kernel
// data symbols (log buffers, page tables) can be a few MiB.
#define MAX_SYMBOL_EXTENT (4ULL << 20)
#define ARENA_CHUNK (64u * 1024)
#define NO_ENTRY UINT32_MAX
// Entries and names are indexed by uint32_t.
#define MAX_ENTRIES (UINT32_MAX / 4)

struct arena_chunk {
	struct arena_chunk *next;
	size_t used, size;
	char data[];
};

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
};

// FNV-1a, then a finalizer (murmur3's fmix32): FNV's low bits, which pick
// the slot, barely change between names differing in their last characters,
// and linear probing then degenerates into long clusters.
static uint32_t hash_name(const char *s, size_t len)
{
	uint32_t h = 2166136261u;
	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)s[i]) * 16777619u;
	return kp_hash_fmix32(h);
}

static const char *arena_dup(struct kp_symtab *st, const char *s, size_t len)
{
	struct arena_chunk *c = st->arena;
	if (!c || c->size - c->used < len + 1) {
		size_t size = len + 1 > ARENA_CHUNK ? len + 1 : ARENA_CHUNK;
		c = malloc(sizeof(*c) + size);
		if (!c)
			return NULL;
		c->size = size;
		c->used = 0;
		c->next = st->arena;
		st->arena = c;
	}
	char *p = c->data + c->used;
	memcpy(p, s, len);
	p[len] = '\0';
	c->used += len + 1;
	return p;
}

struct kp_error *kp_symtab_create(struct kp_symtab **ret)
{
	struct kp_symtab *st = calloc(1, sizeof(*st));
	if (!st)
		return &kp_enomem;
	*ret = st;
	return NULL;
}

void kp_symtab_destroy(struct kp_symtab *st)
{
	if (!st)
		return;
	while (st->arena) {
		struct arena_chunk *next = st->arena->next;
		free(st->arena);
		st->arena = next;
	}
	free(st->unames);
	free(st->name_slots);
	free(st->entries);
	free(st->pending);
	free(st->recs);
	free(st->limits);
	if (st->lazy)
		st->lazy->destroy(st->lazy_ctx);
	free(st);
}

struct kp_error *kp_symtab_add_limit(struct kp_symtab *st, uint64_t address)
{
	if (!kp_vec_reserve((void **)&st->limits, &st->limits_cap, st->nlimits + 1,
			    sizeof(*st->limits)))
		return &kp_enomem;
	st->limits[st->nlimits++] = address;
	st->finalized = false;
	return NULL;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

// The first limit above address, 0 if none (after finalize).
static uint64_t limit_above(const struct kp_symtab *st, uint64_t address)
{
	size_t lo = 0, hi = st->nlimits;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (st->limits[mid] <= address)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < st->nlimits ? st->limits[lo] : 0;
}

// Makes room in the name hash for want names (load factor <= 1/2).
static bool grow_names_to(struct kp_symtab *st, size_t want)
{
	size_t old_cap = st->name_slots ? st->name_mask + 1 : 0;
	if (want * 2 < old_cap)
		return true;
	size_t cap = old_cap ? old_cap * 2 : 4096;
	while (want * 2 >= cap)
		cap *= 2;
	uint64_t *slots = calloc(cap, sizeof(*slots));
	if (!slots)
		return false;
	for (size_t i = 0; i < old_cap; i++) {
		uint64_t s = st->name_slots[i];
		if (!s)
			continue;
		size_t j = (s >> 32) & (cap - 1);
		while (slots[j])
			j = (j + 1) & (cap - 1);
		slots[j] = s;
	}
	free(st->name_slots);
	st->name_slots = slots;
	st->name_mask = cap - 1;
	return true;
}

static bool grow_names(struct kp_symtab *st)
{
	return grow_names_to(st, st->nunames + 1);
}

// Makes room for index count (count + 1 elements).
static bool grow_array(void **p, size_t *cap, size_t count, size_t elem)
{
	return kp_vec_reserve(p, cap, count + 1, elem);
}

// Slot holding name, or the empty slot where it would go.
static size_t name_slot(const struct kp_symtab *st, const char *name, size_t len,
			uint32_t hash)
{
	size_t j = hash & st->name_mask;
	for (;;) {
		uint64_t s = st->name_slots[j];
		if (!s)
			return j;
		if ((uint32_t)(s >> 32) == hash) {
			const struct uname *u = &st->unames[(uint32_t)s - 1];
			if (u->len == len && memcmp(u->str, name, len) == 0)
				return j;
		}
		j = (j + 1) & st->name_mask;
	}
}

// Interns a name whose hash is known; copy: the string is not in the arena
// yet. The caller has made room in unames and name_slots.
static bool intern_hashed(struct kp_symtab *st, const char *name, size_t len,
			  uint32_t hash, bool copy, uint32_t *ret)
{
	size_t j = name_slot(st, name, len, hash);
	if (st->name_slots[j]) {
		*ret = (uint32_t)st->name_slots[j] - 1;
		return true;
	}
	const char *str = copy ? arena_dup(st, name, len) : name;
	if (!str)
		return false;
	struct uname *u = &st->unames[st->nunames];
	u->str = str;
	u->len = len;
	u->best = NO_ENTRY;
	u->chars = kp_suggest_chars(name, len);
	st->nunames++;
	st->name_slots[j] = (uint64_t)hash << 32 | st->nunames;
	*ret = st->nunames - 1;
	return true;
}

static struct kp_error *intern(struct kp_symtab *st, const char *name, size_t len,
			       uint32_t *ret)
{
	if (len > UINT32_MAX)
		return kp_error_create(KP_ERR_INVALID, "symbol name of %zu bytes", len);
	if (!grow_names(st) ||
	    !grow_array((void **)&st->unames, &st->unames_cap, st->nunames,
			sizeof(*st->unames)) ||
	    !intern_hashed(st, name, len, hash_name(name, len), true, ret))
		return &kp_enomem;
	return NULL;
}

static bool intern_pending(struct kp_symtab *st)
{
	size_t np = st->npending;
	if (!np)
		return true;
	if (!grow_names_to(st, st->nunames + np) ||
	    !grow_array((void **)&st->unames, &st->unames_cap, st->nunames + np - 1,
			sizeof(*st->unames)))
		return false;
	const size_t ahead = 16;
	struct entry *e = st->entries + (st->nentries - np);
	for (size_t i = 0; i < ahead && i < np; i++)
		__builtin_prefetch(&st->name_slots[st->pending[i].hash & st->name_mask]);
	for (size_t i = 0; i < np; i++) {
		if (i + ahead < np)
			__builtin_prefetch(&st->name_slots[st->pending[i + ahead].hash &
							   st->name_mask]);
		const struct pending *p = &st->pending[i];
		intern_hashed(st, p->str, p->len, p->hash, false, &e[i].name);
	}
	st->npending = 0;
	return true;
}

struct kp_error *kp_symtab_reserve(struct kp_symtab *st, size_t count)
{
	if (count > MAX_ENTRIES || st->nentries + count > MAX_ENTRIES)
		return kp_error_create(KP_ERR_INVALID, "more than %u symbols",
				       (unsigned)MAX_ENTRIES);
	if (!count)
		return NULL;
	// Names: as many as symbols, a guess (kallsyms has few repeats).
	if (!grow_array((void **)&st->entries, &st->entries_cap,
			st->nentries + count - 1, sizeof(*st->entries)) ||
	    !grow_array((void **)&st->pending, &st->pending_cap,
			st->npending + count - 1, sizeof(*st->pending)) ||
	    !grow_array((void **)&st->unames, &st->unames_cap,
			st->nunames + count - 1, sizeof(*st->unames)) ||
	    !grow_names_to(st, st->nunames + count))
		return &kp_enomem;
	return NULL;
}

static bool is_global(char type)
{
	return type >= 'A' && type <= 'Z';
}

// Higher is preferred by name: core kernel over module, then global over local.
static int score(const char *module, char type)
{
	return (module ? 0 : 2) + (is_global(type) ? 1 : 0);
}

static int name_score(const struct entry *e)
{
	return score(e->module, e->type);
}

void kp_symtab_next_source(struct kp_symtab *st)
{
	st->source++;
}

struct kp_error *kp_symtab_add(struct kp_symtab *st, const char *name, size_t name_len,
			       uint64_t address, char type, const char *module)
{
	if (name_len == 0)
		return kp_error_create(KP_ERR_INVALID,
				       "empty symbol name at 0x%" PRIx64, address);
	if (st->nentries >= MAX_ENTRIES)
		return kp_error_create(KP_ERR_INVALID, "more than %u symbols",
				       (unsigned)MAX_ENTRIES);
	if (name_len > UINT32_MAX)
		return kp_error_create(KP_ERR_INVALID, "symbol name of %zu bytes", name_len);
	if (!grow_array((void **)&st->entries, &st->entries_cap, st->nentries,
			sizeof(*st->entries)) ||
	    !grow_array((void **)&st->pending, &st->pending_cap, st->npending,
			sizeof(*st->pending)))
		return &kp_enomem;
	const char *mod = NULL;
	if (module) {
		if (st->last_module && strcmp(st->last_module, module) == 0) {
			mod = st->last_module;
		} else {
			uint32_t m;
			struct kp_error *err = intern(st, module, strlen(module), &m);
			if (err)
				return err;
			mod = st->last_module = st->unames[m].str;
		}
	}
	const char *str = arena_dup(st, name, name_len);
	if (!str)
		return &kp_enomem;
	st->pending[st->npending++] = (struct pending){
		.str = str, .len = name_len, .hash = hash_name(name, name_len),
	};
	st->entries[st->nentries++] = (struct entry){
		.address = address, .module = mod, .name = NO_ENTRY, .type = type,
		.source = st->source,
	};
	st->finalized = false;
	return NULL;
}

static bool lookup_address_ok(const struct entry *e)
{
	return kp_symtab_addressable(e->address, e->type);
}

static bool has_prefix(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

// Section markers share their address with a real symbol; %pS names the
// real one.
static bool is_marker(const char *name)
{
	return has_prefix(name, "__start_") || has_prefix(name, "__stop_") ||
	       has_prefix(name, "__end_") || strcmp(name, "_end") == 0;
}

// Mapping symbols ("$x", "$d" of arm64 modules, ".L..." local labels; the
// kernel's is_mapping_symbol(), 6.3+, and scripts/kallsyms.c before): by name
// only. Address lookups skip them as the kernel's %pS does, so that they
// neither hide the function at their address nor cut its extent short.
static bool is_mapping_symbol(const char *name)
{
	return name[0] == '$' || (name[0] == '.' && name[1] == 'L') ||
	       (name[0] == 'L' && name[1] == '0');
}

// Whether entry e has a place in address lookups.
static bool in_recs(const struct kp_symtab *st, const struct entry *e)
{
	return lookup_address_ok(e) && !is_mapping_symbol(st->unames[e->name].str);
}

// Higher is preferred among symbols at one address; among equals the first
// in source order, as the kernel's own lookup (kallsyms get_symbol_pos()
// takes the first alias in its table: "__do_sys_pause", not
// "__x64_sys_pause", in /proc/PID/stack and oops traces).
static int address_score(const struct kp_symtab *st, const struct entry *e)
{
	return is_marker(st->unames[e->name].str) ? 0 : 1;
}

struct sort_key {
	uint64_t address;
	uint64_t index;
};

// Rewrites entries in address order: a stable LSD radix sort of (address,
// index) pairs, 8 bits a pass, skipping passes in which every key has the
// same byte (kernel addresses share their top bytes). kallsyms input is
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
	struct entry *out = malloc(n * sizeof(*out));
	if (!a || !b || !out) {
		free(a);
		free(b);
		free(out);
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
	for (size_t i = 0; i < n; i++)
		out[i] = st->entries[a[i].index];
	free(a);
	free(b);
	free(st->entries);
	st->entries = out;
	st->entries_cap = n;
	return true;
}

struct kp_error *kp_symtab_finalize(struct kp_symtab *st)
{
	if (st->finalized)
		return NULL;
	if (!intern_pending(st) || !sort_entries(st))
		return &kp_enomem;
	// seen[name] = (address group + 1) << 32 | kept entry: a second entry
	// of the same name in the same group from another source is a
	// duplicate. One source may list a name twice at one address
	// (/proc/kallsyms has lockdep's __key.0 so): both stay.
	uint64_t *seen = calloc(st->nunames + 1, sizeof(*seen));
	struct addr_rec *recs = malloc(st->nentries * sizeof(*recs) + 1);
	if (!seen || !recs) {
		free(seen);
		free(recs);
		return &kp_enomem;
	}
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

	for (size_t i = 0; i < st->nunames; i++)
		st->unames[i].best = NO_ENTRY;
	size_t nrecs = 0;
	for (size_t i = 0; i < n; i++) {
		const struct entry *e = &st->entries[i];
		struct uname *u = &st->unames[e->name];
		if (u->best == NO_ENTRY || name_score(e) > name_score(&st->entries[u->best]))
			u->best = i;
		if (!in_recs(st, e))
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
	if (st->nlimits)
		qsort(st->limits, st->nlimits, sizeof(*st->limits), cmp_u64);
	for (size_t i = 0; i < nrecs; i++) {
		struct addr_rec *r = &recs[i];
		uint64_t gap = i + 1 < nrecs ? recs[i + 1].address - r->address : 0;
		uint64_t limit = limit_above(st, r->address);
		if (limit && (!gap || limit - r->address < gap))
			gap = limit - r->address;
		if (gap > MAX_SYMBOL_EXTENT || r->end)
			gap = 0;
		r->size = gap;
	}
	// Every symbol's size is its address's: aliases share an extent.
	for (size_t i = 0, r = 0; i < n; i++) {
		struct entry *e = &st->entries[i];
		e->size = 0;
		if (!in_recs(st, e))
			continue;
		while (recs[r].address < e->address)
			r++;
		e->size = recs[r].size;
	}
	free(st->recs);
	st->recs = recs;
	st->nrecs = nrecs;
	st->finalized = true;
	return NULL;
}

static void fill(const struct kp_symtab *st, uint32_t idx, struct kp_symbol *ret)
{
	const struct entry *e = &st->entries[idx];
	ret->name = st->unames[e->name].str;
	ret->address = e->address;
	ret->size = e->size;
	ret->type = e->type;
	ret->module = e->module;
}

// ---------------------------------------------------------------- suggestions

static struct kp_error *unknown_symbol(const struct kp_symtab *st, const char *name)
{
	struct kp_suggest sg;
	kp_suggest_init(&sg, name, strlen(name), KP_SUGGEST_MAX);
	for (size_t i = 0; i < st->nunames; i++) {
		const struct uname *u = &st->unames[i];
		if (u->best != NO_ENTRY)	// else a module name, not a symbol
			kp_suggest_offer(&sg, u->str, u->len, u->chars);
	}
	char hint[KP_SUGGEST_MAX * 72 + 32];
	kp_suggest_format(&sg, hint, sizeof(hint));
	return kp_error_create(KP_ERR_NOT_FOUND, "unknown symbol '%s'%s", name, hint);
}

// ---------------------------------------------------------------- the lazy source

struct kp_error *kp_symtab_add_lazy(struct kp_symtab *st, const struct kp_symtab_lazy_ops *ops,
				    void *ctx)
{
	if (st->lazy || st->nentries) {
		ops->destroy(ctx);
		return kp_error_create(KP_ERR_INVALID,
				       "a symbol source looked up lazily must be the first");
	}
	st->lazy = ops;
	st->lazy_ctx = ctx;
	st->lazy_source = st->source;
	st->lazy_end = -1;
	return NULL;
}

static void reverse(struct entry *e, size_t n)
{
	for (size_t i = 0; i < n / 2; i++) {
		struct entry t = e[i];
		e[i] = e[n - 1 - i];
		e[n - 1 - i] = t;
	}
}

// Adds every symbol of the lazy source, placed before those added so far
// (it came first: ties in address keep the order of sources).
static struct kp_error *load_lazy(struct kp_symtab *st)
{
	if (!st->lazy)
		return NULL;
	if (!intern_pending(st))
		return &kp_enomem;
	size_t before = st->nentries;
	bool finalized = st->finalized;
	uint16_t source = st->source;
	st->source = st->lazy_source;
	struct kp_error *err = st->lazy->load(st->lazy_ctx, st);
	st->source = source;
	if (!err && !intern_pending(st))
		err = &kp_enomem;
	if (err) {
		st->nentries = before;
		st->npending = 0;
		st->finalized = finalized;
		return err;
	}
	reverse(st->entries, before);
	reverse(st->entries + before, st->nentries - before);
	reverse(st->entries, st->nentries);
	st->lazy->destroy(st->lazy_ctx);
	st->lazy = NULL;
	st->lazy_ctx = NULL;
	st->finalized = false;
	return NULL;
}

// Every symbol in the table, sorted and indexed.
static struct kp_error *complete(struct kp_symtab *st)
{
	struct kp_error *err = load_lazy(st);
	return err ? err : kp_symtab_finalize(st);
}

size_t kp_symtab_count(struct kp_symtab *st)
{
	struct kp_error *err = complete(st);	// drops duplicates; on error counts them
	kp_error_destroy(err);
	return st->nentries;
}

bool kp_symtab_empty(const struct kp_symtab *st)
{
	return !st->nentries && !st->lazy;
}

bool kp_symtab_loaded(const struct kp_symtab *st)
{
	return !st->lazy;
}

void kp_symtab_count_types(struct kp_symtab *st, size_t count[256])
{
	memset(count, 0, 256 * sizeof(*count));
	if (st->lazy)
		st->lazy->count_types(st->lazy_ctx, count);
	for (size_t i = 0; i < st->nentries; i++)
		count[(unsigned char)st->entries[i].type]++;
}

// ---------------------------------------------------------------- lookups

// The table's own pick for name (the lazy source aside).
static bool find_own(struct kp_symtab *st, const char *name, size_t len, uint32_t *ret)
{
	if (!st->nunames)
		return false;
	size_t j = name_slot(st, name, len, hash_name(name, len));
	uint32_t s = (uint32_t)st->name_slots[j];
	if (!s || st->unames[s - 1].best == NO_ENTRY)
		return false;
	*ret = st->unames[s - 1].best;
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
static uint64_t merged_size(struct kp_symtab *st, uint64_t address, char type)
{
	if (!kp_symtab_addressable(address, type))
		return 0;
	uint64_t next = st->lazy->next_address(st->lazy_ctx, address);
	size_t r = rec_above(st, address);
	if (r < st->nrecs && (!next || st->recs[r].address < next))
		next = st->recs[r].address;
	uint64_t limit = limit_above(st, address);
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
		if ((err = complete(st))) {
			kp_error_destroy(err);
			return false;
		}
		return kp_symtab_find(st, name, ret);
	}
	if (own)
		fill(st, own_idx, &best);
	if (found) {
		// Same address: the same symbol, first seen in the lazy source.
		int ls = score(NULL, lazy.type), os = own ? score(best.module, best.type) : -1;
		if (!own || lazy.address == best.address || ls > os ||
		    (ls == os && lazy.address < best.address)) {
			uint32_t u;
			if ((err = intern(st, lazy.name, len, &u))) {
				kp_error_destroy(err);
				return false;
			}
			best = (struct kp_symbol){ .name = st->unames[u].str, .address = lazy.address,
						   .type = lazy.type };
		}
	} else if (!own) {
		return false;
	}
	best.size = merged_size(st, best.address, best.type);
	*ret = best;
	return true;
}

struct kp_error *kp_symtab_by_name(struct kp_symtab *st, const char *name,
				   struct kp_symbol *ret)
{
	struct kp_error *err = kp_symtab_finalize(st);
	if (err)
		return err;
	if (kp_symtab_find(st, name, ret))
		return NULL;
	// Suggestions come from every name.
	if ((err = complete(st)))
		return err;
	return unknown_symbol(st, name);
}

struct kp_error *kp_symtab_by_address(struct kp_symtab *st, uint64_t address,
				      struct kp_symbol *ret)
{
	struct kp_error *err = complete(st);
	if (err)
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

bool kp_symtab_alias(struct kp_symtab *st, uint64_t address, size_t i, struct kp_symbol *ret)
{
	struct kp_error *err = complete(st);
	if (err) {
		kp_error_destroy(err);
		return false;
	}
	size_t lo = 0, hi = st->nentries;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (st->entries[mid].address < address)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t j = lo; j < st->nentries && st->entries[j].address == address; j++) {
		if (!in_recs(st, &st->entries[j]) || i--)
			continue;
		fill(st, (uint32_t)j, ret);
		return true;
	}
	return false;
}

bool kp_symtab_at(struct kp_symtab *st, size_t i, struct kp_symbol *ret)
{
	struct kp_error *err = complete(st);
	if (err || i >= st->nentries) {
		kp_error_destroy(err);
		return false;
	}
	fill(st, i, ret);
	return true;
}
