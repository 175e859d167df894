// SPDX-License-Identifier: MIT
// The merged symbol table: creating it and adding symbols.
//
// Names (and module names) are interned once in a chunked arena, so the
// pointers handed out stay valid for the table's lifetime even while symbols
// are added. kp_symtab_add only copies the name into the arena and appends;
// finalize interns the pending names in one batch (one probe each of an
// open-addressing hash whose slots carry the hash, so misses touch no
// string). kp_symtab_finalize (symtab_finalize.c) then sorts, drops
// duplicates and indexes; lookups are symtab_lookup.c's. Nothing here is
// quadratic: a fuzzed dump may hand us millions of identical names or
// addresses.
//
// A lazy source (kp_symtab_add_lazy, symtab_lazy.c) stays outside all this
// until something needs every symbol: by-name lookups merge its answer with
// the table's.
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "symbols/symtab_impl.h"
#include "util/suggest.h"
#include "util/error.h"
#include "util/hash.h"
#include "util/vec.h"

#define ARENA_CHUNK (64u * 1024)
// Entries and names are indexed by uint32_t.
#define MAX_ENTRIES (UINT32_MAX / 4)

struct arena_chunk {
	struct arena_chunk *next;
	size_t used, size;
	char data[];
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
	free(st->origins);
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


uint64_t kp_symtab_limit_above(const struct kp_symtab *st, uint64_t address)
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

bool kp_symtab_name_id(const struct kp_symtab *st, const char *name, size_t len,
		       uint32_t *ret)
{
	if (!st->nunames)
		return false;
	uint32_t s = (uint32_t)st->name_slots[name_slot(st, name, len, hash_name(name, len))];
	if (!s)
		return false;
	*ret = s - 1;
	return true;
}

struct kp_error *kp_symtab_intern(struct kp_symtab *st, const char *name, size_t len,
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

bool kp_symtab_intern_pending(struct kp_symtab *st)
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

void kp_symtab_next_source(struct kp_symtab *st)
{
	st->source++;
}

struct kp_error *kp_symtab_next_source_origin(struct kp_symtab *st, const char *origin)
{
	kp_symtab_next_source(st);
	size_t n = st->norigins;
	if (st->source >= n) {
		if (!grow_array((void **)&st->origins, &st->norigins, st->source, sizeof(*st->origins)))
			return &kp_enomem;
		memset(st->origins + n, 0, (st->norigins - n) * sizeof(*st->origins));
	}
	const char *copy = arena_dup(st, origin, strlen(origin));
	if (!copy)
		return &kp_enomem;
	st->origins[st->source] = copy;
	return NULL;
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
			struct kp_error *err = kp_symtab_intern(st, module, strlen(module), &m);
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
