// SPDX-License-Identifier: MIT
// Every symbol of a table in address order without loading its lazy
// source: the source's records (in address order, as the index requires)
// merged with the table's own entries, ties to the source (it came first),
// less the table's duplicates of its symbols (finalize's drop_duplicates),
// sizes as the whole table would have them. A listing of a 7.2 kernel's
// 200k symbols then needs no more memory than a lookup. Lookups by name
// that miss walk it too, for "did you mean" suggestions.
#include <string.h>

#include "symbols/symtab_impl.h"
#include "util/error.h"
#include "util/suggest.h"

// Whether the lazy source can be walked in place (else it is loaded).
static bool walkable(const struct kp_symtab *st)
{
	return st->lazy && st->lazy->record && st->lazy->lists;
}

// The next own entry at or after pos->own that loading would keep; false
// when the lazy source cannot say.
static bool next_own(struct kp_symtab *st, struct kp_symtab_pos *pos, bool *ret)
{
	for (; pos->own < st->nentries; pos->own++) {
		const struct entry *e = &st->entries[pos->own];
		int dup = st->lazy->lists(st->lazy_ctx, st->unames[e->name].str, e->address);
		if (dup < 0)
			return false;
		if (!dup) {
			*ret = true;
			return true;
		}
	}
	*ret = false;
	return true;
}

static void fill_own(struct kp_symtab *st, size_t i, struct kp_symbol *ret)
{
	const struct entry *e = &st->entries[i];
	*ret = (struct kp_symbol){ .name = st->unames[e->name].str, .address = e->address,
				   .type = e->type, .module = e->module };
}

static struct kp_error *next_merged(struct kp_symtab *st, struct kp_symtab_pos *pos,
				    bool sized, struct kp_symbol *ret)
{
	struct kp_symbol l;
	int lf = st->lazy->record(st->lazy_ctx, pos->lazy, &l);
	bool own;
	if (lf < 0 || !next_own(st, pos, &own))
		return kp_error_create(KP_ERR_FORMAT, "kallsyms: symbol %zu cannot be read",
				       pos->lazy);
	if (lf && (!own || l.address <= st->entries[pos->own].address)) {
		size_t len = strnlen(l.name, KP_SYMTAB_MAX_NAME);
		memcpy(pos->name, l.name, len);
		pos->name[len] = '\0';
		*ret = (struct kp_symbol){ .name = pos->name, .address = l.address, .type = l.type };
		pos->lazy++;
	} else if (own) {
		fill_own(st, pos->own++, ret);
	} else {
		return &kp_not_found;
	}
	ret->size = sized ? kp_symtab_merged_size(st, ret) : 0;
	return NULL;
}

struct kp_error *kp_symtab_next(struct kp_symtab *st, struct kp_symtab_pos *pos,
				struct kp_symbol *ret)
{
	struct kp_error *err = kp_symtab_finalize(st);
	if (err)
		return err;
	if (walkable(st))
		return next_merged(st, pos, true, ret);
	// Loaded whole: its own entries (a lazy source without the means to
	// be walked is loaded first; a position in it carries over, since its
	// symbols come first there too).
	if ((err = kp_symtab_complete(st)))
		return err;
	size_t i = pos->lazy + pos->own;
	if (i >= st->nentries)
		return &kp_not_found;
	fill_own(st, i, ret);
	ret->size = st->entries[i].size;
	pos->own++;
	return NULL;
}

// The names a suggestion keeps, copied out of the walk's position (which
// the next step overwrites); a slot is free when no suggestion points in it.
struct kept {
	char name[KP_SUGGEST_MAX + 1][KP_SYMTAB_MAX_NAME + 1];
};

static bool offered(const struct kp_suggest *sg, const char *name)
{
	for (size_t i = 0; i < sg->n; i++)
		if (!strcmp(sg->best[i].name, name))
			return true;
	return false;
}

static void keep(struct kp_suggest *sg, struct kept *k, const char *transient)
{
	for (size_t i = 0; i < sg->n; i++) {
		if (sg->best[i].name != transient)
			continue;
		for (size_t slot = 0; slot <= KP_SUGGEST_MAX; slot++) {
			bool used = false;
			for (size_t j = 0; j < sg->n; j++)
				used |= sg->best[j].name == k->name[slot];
			if (!used) {
				memcpy(k->name[slot], transient, sg->best[i].len + 1);
				sg->best[i].name = k->name[slot];
				break;
			}
		}
	}
}

static void suggest_walk(struct kp_symtab *st, struct kp_suggest *sg)
{
	if (!kp_ok(kp_symtab_finalize(st)))
		return;
	static struct kept k;	// 6 KiB: off the stack
	struct kp_symtab_pos pos = { 0 };
	struct kp_symbol s;
	struct kp_error *err;
	// Names only: no extents (each a search of the source).
	while (!(err = next_merged(st, &pos, false, &s))) {
		size_t len = strlen(s.name);
		if (offered(sg, s.name))
			continue;
		kp_suggest_offer(sg, s.name, len, kp_suggest_chars(s.name, len));
		if (s.name == pos.name)
			keep(sg, &k, pos.name);
	}
	kp_error_destroy(err);
}

static struct kp_error *unknown_symbol(struct kp_symtab *st, const char *name, bool walk)
{
	struct kp_suggest sg;
	kp_suggest_init(&sg, name, strlen(name), KP_SUGGEST_MAX);
	if (walk) {
		suggest_walk(st, &sg);
	} else {
		for (size_t i = 0; i < st->nunames; i++) {
			const struct uname *u = &st->unames[i];
			if (u->best != NO_ENTRY)	// else a module name, not a symbol
				kp_suggest_offer(&sg, u->str, u->len, u->chars);
		}
	}
	char hint[KP_SUGGEST_MAX * 72 + 32];
	kp_suggest_format(&sg, hint, sizeof(hint));
	return kp_error_create(KP_ERR_NOT_FOUND, "unknown symbol '%s'%s", name, hint);
}

struct kp_error *kp_symtab_by_name(struct kp_symtab *st, const char *name,
				   struct kp_symbol *ret)
{
	struct kp_error *err = kp_symtab_finalize(st);
	if (err)
		return err;
	if (kp_symtab_find(st, name, ret))
		return NULL;
	// Suggestions come from every name, walked where a lazy source would
	// rather not be loaded.
	if (walkable(st))
		return unknown_symbol(st, name, true);
	if ((err = kp_symtab_complete(st)))
		return err;
	return unknown_symbol(st, name, false);
}
