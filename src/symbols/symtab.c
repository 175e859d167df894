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
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "symbols/symtab.h"

// A symbol extends to the next higher address unless that is further than
// this: beyond it (or past the last symbol, or past _end) the extent is
// unknown and only the symbol's own address matches. Generous because kernel
// data symbols (log buffers, page tables) can be a few MiB.
#define MAX_SYMBOL_EXTENT (4ULL << 20)
// Below this, "addresses" are per-CPU offsets or absolute values that would
// match small integers; they can be looked up by name only.
#define MIN_LOOKUP_ADDRESS 0x100000000ULL
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
	struct addr_rec *recs;	// one per distinct lookup address
	size_t nrecs;
};

// FNV-1a, then a finalizer (murmur3's fmix32): FNV's low bits, which pick
// the slot, barely change between names differing in their last characters,
// and linear probing then degenerates into long clusters.
static uint32_t hash_name(const char *s, size_t len)
{
	uint32_t h = 2166136261u;
	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)s[i]) * 16777619u;
	h ^= h >> 16;
	h *= 0x85ebca6bu;
	h ^= h >> 13;
	h *= 0xc2b2ae35u;
	h ^= h >> 16;
	return h;
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
	free(st);
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
	if (count < *cap)
		return true;
	size_t ncap = *cap ? *cap * 2 : 1024;
	while (ncap <= count)
		ncap *= 2;
	void *n = realloc(*p, ncap * elem);
	if (!n)
		return false;
	*p = n;
	*cap = ncap;
	return true;
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

static unsigned char_class(unsigned char c)
{
	if (c >= 'a' && c <= 'z')
		return c - 'a';
	if (c >= '0' && c <= '9')
		return 26 + c - '0';
	if (c >= 'A' && c <= 'Z')
		return 36 + c - 'A';
	return c == '_' ? 62 : 63;
}

static uint64_t char_set(const char *s, size_t len)
{
	uint64_t m = 0;
	for (size_t i = 0; i < len; i++)
		m |= 1ULL << char_class(s[i]);
	return m;
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
	u->chars = char_set(name, len);
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
static int name_score(const struct entry *e)
{
	return (e->module ? 0 : 2) + (is_global(e->type) ? 1 : 0);
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
	};
	st->finalized = false;
	return NULL;
}

static bool lookup_address_ok(const struct entry *e)
{
	return e->address >= MIN_LOOKUP_ADDRESS && e->type != 'A' && e->type != 'a';
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

// Higher is preferred among symbols at one address.
static int address_score(const struct kp_symtab *st, const struct entry *e)
{
	return (is_marker(st->unames[e->name].str) ? 0 : 2) + (is_global(e->type) ? 1 : 0);
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
	// of the same name in the same group is a duplicate.
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
		if (s >> 32 == group + 1) {
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
		if (!lookup_address_ok(e))
			continue;
		if (nrecs && recs[nrecs - 1].address == e->address) {
			struct addr_rec *r = &recs[nrecs - 1];
			if (address_score(st, e) > address_score(st, &st->entries[r->entry]))
				r->entry = i;
			continue;
		}
		recs[nrecs++] = (struct addr_rec){ .address = e->address, .entry = i };
	}
	for (size_t i = 0; i < nrecs; i++) {
		struct addr_rec *r = &recs[i];
		uint64_t gap = i + 1 < nrecs ? recs[i + 1].address - r->address : 0;
		if (gap > MAX_SYMBOL_EXTENT ||
		    strcmp(st->unames[st->entries[r->entry].name].str, "_end") == 0)
			gap = 0;
		r->size = gap;
	}
	// Every symbol's size is its address's: aliases share an extent.
	for (size_t i = 0, r = 0; i < n; i++) {
		struct entry *e = &st->entries[i];
		e->size = 0;
		if (!lookup_address_ok(e))
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

size_t kp_symtab_count(struct kp_symtab *st)
{
	kp_symtab_finalize(st);	// drops duplicates; on ENOMEM counts them
	return st->nentries;
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

#define MAX_SUGGESTIONS 5
#define MAX_DISTANCE 3
#define MAX_QUERY 64

// Optimal-string-alignment Damerau-Levenshtein distance, or bound + 1 if it
// exceeds bound. Only the diagonal band |i - j| <= bound is computed, and a
// row whose every cell exceeds bound ends the search: most names are
// rejected after two or three rows.
static unsigned bounded_distance(const char *a, size_t alen, const char *b, size_t blen,
				 unsigned bound)
{
	size_t diff = alen > blen ? alen - blen : blen - alen;
	if (diff > bound)
		return bound + 1;
	const unsigned big = bound + 1;
	unsigned rows[3][MAX_QUERY + 1];
	unsigned *prev2 = rows[0], *prev = rows[1], *cur = rows[2];
	// a is the query (alen <= MAX_QUERY): columns; b: rows.
	for (size_t j = 0; j <= alen; j++)
		prev[j] = j <= bound ? j : big;
	for (size_t i = 1; i <= blen; i++) {
		size_t lo = i > bound ? i - bound : 0;
		size_t hi = i + bound < alen ? i + bound : alen;
		if (lo > hi)
			return big;
		// The cells just outside the band are read by this row and
		// the next: they count as "too far".
		if (lo > 0)
			cur[lo - 1] = big;
		if (hi < alen)
			cur[hi + 1] = big;
		unsigned row_min = big;
		for (size_t j = lo; j <= hi; j++) {
			unsigned v;
			if (j == 0) {
				v = i;
			} else {
				unsigned cost = a[j - 1] != b[i - 1];
				v = prev[j - 1] + cost;
				if (prev[j] + 1 < v)
					v = prev[j] + 1;
				if (cur[j - 1] + 1 < v)
					v = cur[j - 1] + 1;
				if (i > 1 && j > 1 && a[j - 1] == b[i - 2] &&
				    a[j - 2] == b[i - 1] && prev2[j - 2] + 1 < v)
					v = prev2[j - 2] + 1;
			}
			if (v > big)
				v = big;
			cur[j] = v;
			if (v < row_min)
				row_min = v;
		}
		if (row_min > bound)
			return big;
		unsigned *t = prev2;
		prev2 = prev;
		prev = cur;
		cur = t;
	}
	return prev[alen] <= bound ? prev[alen] : big;
}

struct suggestion {
	const struct uname *u;
	unsigned rank;		// edit distance, or bound + 1 (prefix) / + 2 (substring)
};

static void offer(struct suggestion *best, size_t *n, const struct uname *u,
		  unsigned rank)
{
	// Worse than the current fifth: no.
	if (*n == MAX_SUGGESTIONS) {
		const struct suggestion *last = &best[MAX_SUGGESTIONS - 1];
		if (rank > last->rank ||
		    (rank == last->rank && strcmp(u->str, last->u->str) >= 0))
			return;
		(*n)--;
	}
	size_t i = *n;
	while (i > 0 && (best[i - 1].rank > rank ||
			 (best[i - 1].rank == rank && strcmp(best[i - 1].u->str, u->str) > 0))) {
		best[i] = best[i - 1];
		i--;
	}
	best[i] = (struct suggestion){ .u = u, .rank = rank };
	(*n)++;
}

static struct kp_error *unknown_symbol(const struct kp_symtab *st, const char *name)
{
	size_t len = strlen(name);
	struct suggestion best[MAX_SUGGESTIONS];
	size_t n = 0;
	if (len > 0) {
		unsigned bound = len <= 3 ? 1 : len <= 7 ? 2 : MAX_DISTANCE;
		uint64_t qchars = char_set(name, len);
		for (size_t i = 0; i < st->nunames; i++) {
			const struct uname *u = &st->unames[i];
			if (u->best == NO_ENTRY)
				continue;	// a module name, not a symbol
			// Each character class one string has and the other
			// lacks costs at least one edit; a substring has all
			// of the query's. Most names fail both tests here,
			// without their string being touched.
			unsigned missing = __builtin_popcountll(qchars & ~u->chars);
			unsigned extra = __builtin_popcountll(u->chars & ~qchars);
			bool near = len <= MAX_QUERY && missing <= bound && extra <= bound &&
				    (u->len > len ? u->len - len : len - u->len) <= bound;
			if (!near && (missing || len < 3 || u->len <= len))
				continue;
			unsigned d = near ? bounded_distance(name, len, u->str, u->len, bound) :
				     bound + 1;
			if (d <= bound) {
				offer(best, &n, u, d);
			} else if (len >= 3 && u->len > len && !missing) {
				if (memcmp(u->str, name, len) == 0)
					offer(best, &n, u, bound + 1);
				else if (memmem(u->str, u->len, name, len))
					offer(best, &n, u, bound + 2);
			}
		}
	}
	if (n == 0)
		return kp_error_create(KP_ERR_NOT_FOUND, "unknown symbol '%s'", name);
	char list[MAX_SUGGESTIONS * 72 + 1];
	size_t pos = 0;
	for (size_t i = 0; i < n; i++) {
		int w = snprintf(list + pos, sizeof(list) - pos, "%s%.64s",
				 i ? ", " : "", best[i].u->str);
		if (w < 0 || (size_t)w >= sizeof(list) - pos)
			break;
		pos += w;
	}
	return kp_error_create(KP_ERR_NOT_FOUND, "unknown symbol '%s' (did you mean: %s?)",
			       name, list);
}

// ---------------------------------------------------------------- lookups

struct kp_error *kp_symtab_by_name(struct kp_symtab *st, const char *name,
				   struct kp_symbol *ret)
{
	struct kp_error *err = kp_symtab_finalize(st);
	if (err)
		return err;
	size_t len = strlen(name);
	if (st->nunames) {
		size_t j = name_slot(st, name, len, hash_name(name, len));
		uint32_t s = (uint32_t)st->name_slots[j];
		if (s && st->unames[s - 1].best != NO_ENTRY) {
			fill(st, st->unames[s - 1].best, ret);
			return NULL;
		}
	}
	return unknown_symbol(st, name);
}

struct kp_error *kp_symtab_by_address(struct kp_symtab *st, uint64_t address,
				      struct kp_symbol *ret)
{
	struct kp_error *err = kp_symtab_finalize(st);
	if (err)
		return err;
	// Last record at or below address.
	size_t lo = 0, hi = st->nrecs;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (st->recs[mid].address <= address)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return &kp_not_found;
	const struct addr_rec *r = &st->recs[lo - 1];
	uint64_t off = address - r->address;
	if (off != 0 && off >= r->size)
		return &kp_not_found;
	fill(st, r->entry, ret);
	return NULL;
}

bool kp_symtab_at(struct kp_symtab *st, size_t i, struct kp_symbol *ret)
{
	if (kp_symtab_finalize(st) || i >= st->nentries)
		return false;
	fill(st, i, ret);
	return true;
}
