// SPDX-License-Identifier: MIT
// The kernel's kallsyms tables in memory as a lazy symbol source
// (kp_symtab_add_lazy): a question such as `print jiffies` needs a handful
// of names, not a table of ~150k decoded symbols (~30 MB of heap touched,
// most of a first answer's time in page faults: bench/README.md).
//
// One pass over kallsyms_names checks every record (the same rules and
// errors as the full decode) and keeps per symbol only where its record
// starts, its type letter and a slot in a hash of its name: about 10 bytes
// a symbol. The hash is polynomial, h = h * MULT + c, so that a token's
// share is computed once per token (h = h * MULT^len + hash(token)) and a
// record costs a multiply-add per token instead of a decode. A name lookup decodes the records of its hash
// chain; addresses are read from kallsyms_offsets when asked for, by
// binary search since the tables are in address order (checked here; the
// table is decoded whole otherwise, and when names collide too much).
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "io/memory.h"
#include "symbols/kallsyms_memory.h"
#include "util/bulk.h"
#include "util/error.h"
#include "util/hash.h"

// A slot: a tag of the name's hash above the symbol's index + 1.
#define INDEX_BITS 22
#define INDEX_MASK ((1u << INDEX_BITS) - 1)
_Static_assert(KP_KALLSYMS_MAX_SYMS < INDEX_MASK, "symbol index must fit a slot");
#define ADDR_CHUNK 512u
// Bytes read around a record a lookup decodes (most are under 40).
#define RECORD_WINDOW 256u
#define MULT 0x01000193u	// odd; FNV's prime
// A lookup that meets more symbols of its name (or its hash tag) than this
// hands over to the whole table, whose cost does not grow with repetition.
#define MAX_CHAIN_HITS 256
// Building gives up past this many probes per symbol on average (a good
// hash at load 2/3 needs about 2): linear probing of one repeated name is
// quadratic.
#define PROBE_BUDGET 16

struct token_hash {
	uint32_t h, pow;	// hash of the token's characters, MULT^length
};

struct index {
	struct kp_kallsyms_reader r;
	uint32_t *record;	// offset in kallsyms_names of record i
	// Address of symbol i, read once: a binary search over the tables
	// themselves is a read per probe, each a pread of /proc/kcore live.
	uint64_t *addrs;
	uint8_t *types;		// type letter of symbol i, | MAPPING for a mapping symbol
	uint32_t *slots;	// 0 = empty
	uint32_t cap, mask;
	char name[KP_KALLSYMS_MAX_NAME + 2];	// the last name found
	// Per token code: whole, and without its first character (the type
	// letter when the token starts a record); whether every character is
	// printable.
	struct token_hash whole[256], tail[256];
	bool printable[256];
};

// Set in types[i] for a mapping symbol (".LC4" of 5.10's kallsyms), which
// address lookups skip (kp_symtab_is_mapping_symbol()).
#define MAPPING 0x80u

// Whether symbol i, at a, is one an address lookup may give.
static bool addressable(const struct index *x, uint32_t i, uint64_t a)
{
	return !(x->types[i] & MAPPING) && kp_symtab_addressable(a, (char)x->types[i]);
}

static uint32_t hash_name(const char *s, size_t len)
{
	uint32_t h = 0;
	for (size_t i = 0; i < len; i++)
		h = h * MULT + (unsigned char)s[i];
	return kp_hash_fmix32(h);
}

static void index_destroy(void *ctx)
{
	struct index *x = ctx;
	kp_kallsyms_reader_close(&x->r);
	kp_bulk_free(x->record, (size_t)x->r.n * sizeof(*x->record));
	kp_bulk_free(x->addrs, (size_t)x->r.n * sizeof(*x->addrs));
	kp_bulk_free(x->types, x->r.n);
	kp_bulk_free(x->slots, (size_t)x->cap * sizeof(*x->slots));
	free(x);
}

// The first symbol whose address is above address (or_at: at or above);
// x->r.n if none.
static uint32_t first_above(const struct index *x, uint64_t address, bool or_at)
{
	uint32_t lo = 0, hi = x->r.n;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (x->addrs[mid] < address || (!or_at && x->addrs[mid] == address))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static int find(void *ctx, const char *name, struct kp_symbol *ret)
{
	struct index *x = ctx;
	size_t len = strlen(name);
	if (len > KP_KALLSYMS_MAX_NAME)
		return 0;
	unsigned hits = 0;
	uint32_t h = hash_name(name, len), tag = h >> INDEX_BITS;
	bool found = false;
	uint64_t best_addr = 0;
	char best_type = 0;
	char buf[KP_KALLSYMS_MAX_NAME + 2];
	for (uint32_t j = h & x->mask; x->slots[j]; j = (j + 1) & x->mask) {
		uint32_t s = x->slots[j];
		if (s >> INDEX_BITS != tag)
			continue;
		if (++hits > MAX_CHAIN_HITS)
			return -1;
		uint32_t i = (s & INDEX_MASK) - 1;
		uint64_t pos = x->record[i], addr = x->addrs[i];
		size_t got;
		struct kp_error *err = kp_kallsyms_reader_record(&x->r, i, &pos, buf, &got);
		if (err) {
			kp_error_destroy(err);
			continue;
		}
		if (got != len + 1 || memcmp(buf + 1, name, len))
			continue;
		// Global over local, then the lowest address; the chain holds
		// a name's symbols in index (= address) order.
		bool global = buf[0] >= 'A' && buf[0] <= 'Z';
		bool best_global = best_type >= 'A' && best_type <= 'Z';
		if (!found || (global && !best_global) ||
		    (global == best_global && addr < best_addr)) {
			found = true;
			best_addr = addr;
			best_type = buf[0];
		}
	}
	if (!found)
		return 0;
	memcpy(x->name, name, len + 1);
	*ret = (struct kp_symbol){ .name = x->name, .address = best_addr, .type = best_type };
	return 1;
}

static uint64_t next_address(void *ctx, uint64_t address)
{
	struct index *x = ctx;
	for (uint32_t i = first_above(x, address, false); i < x->r.n; i++)
		if (addressable(x, i, x->addrs[i]))
			return x->addrs[i];
	return 0;
}

// Decodes symbol i: its type letter in buf[0], its name from buf + 1,
// NUL-terminated; false when it cannot be read.
static bool decode(struct index *x, uint32_t i, char buf[KP_KALLSYMS_MAX_NAME + 2], size_t *len)
{
	uint64_t pos = x->record[i];
	struct kp_error *err = kp_kallsyms_reader_record(&x->r, i, &pos, buf, len);
	if (err) {
		kp_error_destroy(err);
		return false;
	}
	buf[*len] = '\0';
	return true;
}

// Symbol i, at a, as the lazy ops give it: the name in x->name.
static int give(struct index *x, uint32_t i, uint64_t a, struct kp_symbol *ret)
{
	char buf[KP_KALLSYMS_MAX_NAME + 2];
	size_t got;
	if (!decode(x, i, buf, &got))
		return -1;
	memcpy(x->name, buf + 1, got);
	*ret = (struct kp_symbol){ .name = x->name, .address = a, .type = buf[0] };
	return 1;
}

// Bound on the aliases of one address decoded to pick a non-marker.
#define MAX_ALIASES 64

static int at_or_below(void *ctx, uint64_t address, struct kp_symbol *ret)
{
	struct index *x = ctx;
	// The first symbol above address; then back to an addressable one.
	uint32_t i = first_above(x, address, false);
	while (i > 0 && !addressable(x, i - 1, x->addrs[i - 1]))
		i--;
	if (i == 0)
		return 0;
	uint64_t at = x->addrs[i - 1];
	// The aliases at that address, in source order: i - 1 back to first.
	uint32_t first = i - 1;
	while (first > 0 && i - first < MAX_ALIASES && x->addrs[first - 1] == at)
		first--;
	int found = 0;
	for (uint32_t j = first; j < i; j++) {
		if (!addressable(x, j, at))
			continue;
		size_t got;
		char buf[KP_KALLSYMS_MAX_NAME + 2];
		if (!decode(x, j, buf, &got))
			return -1;
		if (found && kp_symtab_is_marker(buf + 1))
			continue;
		memcpy(x->name, buf + 1, got);
		*ret = (struct kp_symbol){ .name = x->name, .address = at, .type = buf[0] };
		found = 1;
		if (!kp_symtab_is_marker(buf + 1))
			break;
	}
	return found;
}

static int alias(void *ctx, uint64_t address, size_t i, size_t *n, struct kp_symbol *ret)
{
	struct index *x = ctx;
	uint32_t first = first_above(x, address, true);
	size_t seen = 0;
	for (uint32_t j = first; j < x->r.n && x->addrs[j] == address; j++) {
		if (j - first >= MAX_ALIASES)
			return -1;
		if (addressable(x, j, address) && seen++ == i)
			return give(x, j, address, ret);
	}
	*n = seen;
	return 0;
}

static int lists(void *ctx, const char *name, uint64_t address)
{
	struct index *x = ctx;
	uint32_t first = first_above(x, address, true);
	size_t len = strlen(name);
	for (uint32_t j = first; j < x->r.n && x->addrs[j] == address; j++) {
		size_t got;
		char buf[KP_KALLSYMS_MAX_NAME + 2];
		if (j - first >= MAX_ALIASES || !decode(x, j, buf, &got))
			return -1;
		if (got == len + 1 && !memcmp(buf + 1, name, len))
			return 1;
	}
	return 0;
}

_Static_assert(KP_KALLSYMS_MAX_NAME <= KP_SYMTAB_MAX_NAME, "a record's name fits a position's");

static int record(void *ctx, size_t i, struct kp_symbol *ret)
{
	struct index *x = ctx;
	return i < x->r.n ? give(x, (uint32_t)i, x->addrs[i], ret) : 0;
}

static void count_types(void *ctx, size_t count[256])
{
	struct index *x = ctx;
	for (uint32_t i = 0; i < x->r.n; i++)
		count[x->types[i] & ~MAPPING]++;
}

static struct kp_error *load(void *ctx, struct kp_symtab *st)
{
	struct index *x = ctx;
	return kp_kallsyms_read_memory(x->r.mem, &x->r.t, st);
}

static const struct kp_symtab_lazy_ops index_ops = {
	.find = find,
	.next_address = next_address,
	.at_or_below = at_or_below,
	.alias = alias,
	.lists = lists,
	.record = record,
	.count_types = count_types,
	.load = load,
	.destroy = index_destroy,
};

// Reads every address into x->addrs; whether they never decrease.
static struct kp_error *sorted(struct index *x, bool *ret)
{
	struct kp_kallsyms_reader *r = &x->r;
	if (!(x->addrs = kp_bulk_alloc((size_t)r->n * sizeof(*x->addrs))))
		return &kp_enomem;
	uint64_t last = 0;
	for (uint32_t i = 0; i < r->n; i += ADDR_CHUNK) {
		uint32_t k = r->n - i < ADDR_CHUNK ? r->n - i : ADDR_CHUNK;
		uint64_t *a = x->addrs + i;
		struct kp_error *err = kp_kallsyms_reader_addresses(r, i, k, a);
		if (err)
			return err;
		for (uint32_t j = 0; j < k; last = a[j++]) {
			if (a[j] < last) {
				*ret = false;
				return NULL;
			}
		}
	}
	*ret = true;
	return NULL;
}

static void hash_tokens(struct index *x)
{
	const struct kp_kallsyms_reader *r = &x->r;
	for (int t = 0; t < 256; t++) {
		const char *str = r->tokens + r->index[t];
		struct token_hash w = { 0, 1 }, tl = { 0, 1 };
		x->printable[t] = true;
		for (size_t k = 0; k < r->toklen[t]; k++) {
			unsigned char c = str[k];
			x->printable[t] &= c > 0x20 && c < 0x7f;
			w.h = w.h * MULT + c;
			w.pow *= MULT;
			if (k) {
				tl.h = tl.h * MULT + c;
				tl.pow *= MULT;
			}
		}
		x->whole[t] = w;
		x->tail[t] = tl;
	}
}

// *clustered: the names collide so much (one name repeated, or names
// made to collide) that the index would cost more than the whole table.
static struct kp_error *build(struct index *x, uint32_t *hashes, bool *clustered)
{
	uint64_t probes = 0;
	*clustered = false;
	uint32_t n = x->r.n, cap = 1024;
	while (cap < n + n / 2)
		cap *= 2;
	x->record = kp_bulk_alloc((size_t)n * sizeof(*x->record));
	x->types = kp_bulk_alloc(n);
	x->slots = kp_bulk_alloc((size_t)cap * sizeof(*x->slots));
	x->cap = cap;
	if (!x->record || !x->types || !x->slots)
		return &kp_enomem;
	x->mask = cap - 1;
	hash_tokens(x);
	const struct kp_kallsyms_reader *r = &x->r;
	uint64_t pos = 0;
	for (uint32_t i = 0; i < n; i++) {
		if (pos > UINT32_MAX)
			return kp_error_create(KP_ERR_FORMAT,
					       "kallsyms_names at 0x%" PRIx64 ": symbol %" PRIu32 " starts past 4 GiB",
					       r->t.names, i);
		uint64_t rec = pos;
		const uint8_t *tok;
		size_t ntok;
		struct kp_error *err = kp_kallsyms_reader_tokens(&x->r, i, &pos, &tok, &ntok);
		if (err)
			return err;
		// The name is the expansion after its first character.
		uint32_t h = 0;
		size_t out = 0;
		bool ok = true;
		char type = 0, head[4] = "";	// the type and the name's first two
		for (size_t k = 0; k < ntok; k++) {
			uint8_t t = tok[k];
			size_t tl = r->toklen[t];
			if (!tl)
				continue;
			const struct token_hash *th = out ? &x->whole[t] : &x->tail[t];
			if (!out)
				type = r->tokens[r->index[t]];
			for (size_t c = 0; out + c < 3 && c < tl; c++)
				head[out + c] = r->tokens[r->index[t] + c];
			h = h * th->pow + th->h;
			ok &= x->printable[t];
			out += tl;
		}
		if (!ok || out < 2 || out > KP_KALLSYMS_MAX_NAME + 1) {
			// Broken: the full decode names what is wrong.
			char name[KP_KALLSYMS_MAX_NAME + 2];
			size_t len;
			err = kp_kallsyms_reader_record(&x->r, i, &rec, name, &len);
			return err ? err : kp_error_create(KP_ERR_FORMAT,
							   "kallsyms_names: symbol %" PRIu32 " is malformed", i);
		}
		x->record[i] = rec;
		x->types[i] = (uint8_t)type | (kp_symtab_is_mapping_symbol(head + 1) ? MAPPING : 0);
		hashes[i] = kp_hash_fmix32(h);
	}
	// Every slot probed is a cache miss in a table of a few MB: fetch
	// the slots of the symbols a few places ahead while inserting.
	const uint32_t ahead = 16;
	for (uint32_t i = 0; i < n && i < ahead; i++)
		__builtin_prefetch(&x->slots[hashes[i] & x->mask]);
	for (uint32_t i = 0; i < n; i++) {
		if (i + ahead < n)
			__builtin_prefetch(&x->slots[hashes[i + ahead] & x->mask]);
		uint32_t h = hashes[i], j = h & x->mask;
		for (; x->slots[j]; j = (j + 1) & x->mask) {
			if (++probes > PROBE_BUDGET * (uint64_t)n) {
				*clustered = true;
				return NULL;
			}
		}
		x->slots[j] = (h >> INDEX_BITS) << INDEX_BITS | (i + 1);
	}
	// From now on records are read one at a time.
	x->r.window = RECORD_WINDOW;
	return NULL;
}

struct kp_error *kp_kallsyms_attach(struct kp_memory *mem, const struct kp_kallsyms_tables *t,
				    struct kp_symtab *st)
{
	if (!kp_symtab_empty(st))
		return kp_kallsyms_read_memory(mem, t, st);
	struct index *x = calloc(1, sizeof(*x));
	if (!x)
		return &kp_enomem;
	struct kp_error *err = kp_kallsyms_reader_open(mem, t, &x->r);
	if (err) {
		free(x);
		return err;
	}
	bool in_order, clustered = false;
	if (!(err = sorted(x, &in_order)) && in_order) {
		size_t size = (size_t)x->r.n * sizeof(uint32_t);
		uint32_t *hashes = kp_bulk_alloc(size);
		err = hashes ? build(x, hashes, &clustered) : &kp_enomem;
		kp_bulk_free(hashes, size);
	}
	if (err) {
		index_destroy(x);
		return err;
	}
	if (!in_order || clustered) {
		index_destroy(x);
		return kp_kallsyms_read_memory(mem, t, st);
	}
	return kp_symtab_add_lazy(st, &index_ops, x);
}
