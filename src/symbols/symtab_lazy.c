// SPDX-License-Identifier: MIT
// The lazy source of a symbol table (kp_symtab_add_lazy): the kernel's
// compressed kallsyms in memory (kallsyms_index.c) answers by-name lookups
// without being loaded, so that the first answer does not pay for 150k
// symbols. Whatever needs every symbol (address lookups, iteration, counts,
// the suggestions for an unknown name) first loads it whole, in its place
// as the first source (kp_symtab_complete).
#include <string.h>

#include "symbols/symtab_impl.h"
#include "util/error.h"

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
	if (!kp_symtab_intern_pending(st))
		return &kp_enomem;
	size_t before = st->nentries;
	bool finalized = st->finalized;
	uint16_t source = st->source;
	st->source = st->lazy_source;
	struct kp_error *err = st->lazy->load(st->lazy_ctx, st);
	st->source = source;
	if (!err && !kp_symtab_intern_pending(st))
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

struct kp_error *kp_symtab_complete(struct kp_symtab *st)
{
	struct kp_error *err = load_lazy(st);
	return err ? err : kp_symtab_finalize(st);
}

// The lazy source's symbols and the table's own, less those of its own the
// lazy source lists at the same address (the duplicates loading drops);
// false when the source would rather be loaded.
static bool count_lazy(struct kp_symtab *st, size_t *ret)
{
	size_t count[256], n = 0;
	if (!st->lazy || !st->lazy->lists || !kp_ok(kp_symtab_finalize(st)))
		return false;
	memset(count, 0, sizeof(count));
	st->lazy->count_types(st->lazy_ctx, count);
	for (size_t t = 0; t < 256; t++)
		n += count[t];
	for (size_t i = 0; i < st->nentries; i++) {
		const struct entry *e = &st->entries[i];
		int dup = st->lazy->lists(st->lazy_ctx, st->unames[e->name].str, e->address);
		if (dup < 0)
			return false;
		n += !dup;
	}
	*ret = n;
	return true;
}

size_t kp_symtab_count(struct kp_symtab *st)
{
	size_t n;
	if (count_lazy(st, &n))
		return n;
	struct kp_error *err = kp_symtab_complete(st);	// drops duplicates; on error counts them
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
