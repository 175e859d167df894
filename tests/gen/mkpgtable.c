// SPDX-License-Identifier: MIT
// Synthetic x86-64 page tables from a text spec (see mkpgtable.h).
#include <ctype.h>
#include <endian.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "mkpgtable.h"
#include "util/error.h"

#define PAGE 4096ULL
#define ENTRY_P 0x1ULL
#define ENTRY_PS 0x80ULL
#define PHYS_MASK 0x000ffffffffff000ULL
#define TABLE_FLAGS 0x063ULL	// _KERNPG_TABLE: P RW A D
#define LEAF_FLAGS 0x163ULL	// __PAGE_KERNEL: P RW A D G
#define NX (1ULL << 63)

static struct kp_error *layout(struct kp_mkpgtable *pg)
{
	if (pg->buf)
		return NULL;
	if (pg->tables < pg->ram || pg->tables % PAGE)
		return kp_error_create(KP_ERR_INVALID,
				       "table area 0x%" PRIx64 " overlaps RAM [0, 0x%" PRIx64
				       ") or is not 4K aligned", pg->tables, pg->ram);
	if (pg->max_tables < 1 || pg->max_tables > (1u << 20))
		return kp_error_create(KP_ERR_INVALID, "maxtables %u out of range",
				       pg->max_tables);
	if (pg->tables > (1ULL << 33))
		return kp_error_create(KP_ERR_INVALID, "table area 0x%" PRIx64
				       " too high for a synthetic buffer", pg->tables);
	pg->size = pg->tables + pg->max_tables * PAGE;
	pg->buf = calloc(1, pg->size);
	if (!pg->buf)
		return &kp_enomem;
	for (uint64_t pa = 0; pa + 8 <= pg->ram; pa += 8) {
		uint64_t w = htole64(kp_mkpgtable_pattern(pa));
		memcpy(pg->buf + pa, &w, 8);
	}
	pg->root = pg->tables;
	pg->ntables = 1;
	return NULL;
}

static struct kp_error *alloc_table(struct kp_mkpgtable *pg, uint64_t *ret)
{
	if (pg->ntables >= pg->max_tables)
		return kp_error_create(KP_ERR_INVALID, "out of table pages (maxtables %u)",
				       pg->max_tables);
	*ret = pg->tables + pg->ntables++ * PAGE;
	return NULL;
}

static bool in_buffer(const struct kp_mkpgtable *pg, uint64_t table)
{
	return table < pg->size && pg->size - table >= PAGE;
}

static uint64_t load(const struct kp_mkpgtable *pg, uint64_t table, unsigned index)
{
	uint64_t w;
	memcpy(&w, pg->buf + table + 8 * index, 8);
	return le64toh(w);
}

static void store(struct kp_mkpgtable *pg, uint64_t table, unsigned index, uint64_t v)
{
	uint64_t w = htole64(v);
	memcpy(pg->buf + table + 8 * index, &w, 8);
}

static unsigned index_of(uint64_t va, int lvl)
{
	return (unsigned)(va >> (12 + 9 * lvl)) & 511;
}

static bool canonical(const struct kp_mkpgtable *pg, uint64_t va)
{
	int shift = 64 - (pg->levels == 5 ? 57 : 48);
	return (uint64_t)((int64_t)(va << shift) >> shift) == va;
}

// The table holding va's entry at internal level lvl (0 = PTE), creating
// missing tables above it when create is set.
static struct kp_error *descend(struct kp_mkpgtable *pg, uint64_t va, int lvl,
				bool create, uint64_t *ret)
{
	struct kp_error *err = layout(pg);
	if (err)
		return err;
	if (lvl < 0 || lvl >= pg->levels)
		return kp_error_create(KP_ERR_INVALID, "level %d out of range 1..%d",
				       lvl + 1, pg->levels);
	if (!canonical(pg, va))
		return kp_error_create(KP_ERR_INVALID,
				       "0x%" PRIx64 " is not canonical with %d levels",
				       va, pg->levels);
	uint64_t table = pg->root;
	for (int l = pg->levels - 1; l > lvl; l--) {
		unsigned idx = index_of(va, l);
		uint64_t e = load(pg, table, idx);
		if (!(e & ENTRY_P)) {
			if (!create)
				return &kp_not_found;
			uint64_t t = 0;
			err = alloc_table(pg, &t);
			if (err)
				return err;
			store(pg, table, idx, t | TABLE_FLAGS);
			table = t;
			continue;
		}
		if ((l == 1 || l == 2) && (e & ENTRY_PS))
			return kp_error_create(KP_ERR_INVALID,
					       "0x%" PRIx64 " is already mapped by a %s page",
					       va, l == 1 ? "2M" : "1G");
		table = e & PHYS_MASK;
		if (!in_buffer(pg, table))
			return kp_error_create(KP_ERR_INVALID,
					       "table 0x%" PRIx64 " for 0x%" PRIx64
					       " is outside the generated memory", table, va);
	}
	*ret = table;
	return NULL;
}

struct kp_error *kp_mkpgtable_map(struct kp_mkpgtable *pg, uint64_t va, uint64_t pa,
				  uint64_t page_size, uint64_t extra)
{
	int lvl = page_size == PAGE ? 0 : page_size == (1ULL << 21) ? 1 :
		  page_size == (1ULL << 30) ? 2 : -1;
	if (lvl < 0)
		return kp_error_create(KP_ERR_INVALID, "page size 0x%" PRIx64
				       " is not 4K, 2M or 1G", page_size);
	if ((va | pa) & (page_size - 1))
		return kp_error_create(KP_ERR_INVALID, "0x%" PRIx64 " -> 0x%" PRIx64
				       " is not aligned to the page size", va, pa);
	if (pa & ~PHYS_MASK)
		return kp_error_create(KP_ERR_INVALID, "physical address 0x%" PRIx64
				       " is beyond 52 bits", pa);
	uint64_t table;
	struct kp_error *err = descend(pg, va, lvl, true, &table);
	if (err)
		return err;
	unsigned idx = index_of(va, lvl);
	uint64_t old = load(pg, table, idx);
	if (lvl > 0 && (old & ENTRY_P) && !(old & ENTRY_PS))
		return kp_error_create(KP_ERR_INVALID, "0x%" PRIx64
				       " already has a page table below this level", va);
	store(pg, table, idx, pa | LEAF_FLAGS | (lvl ? ENTRY_PS : 0) | extra);
	return NULL;
}

struct kp_error *kp_mkpgtable_set(struct kp_mkpgtable *pg, uint64_t va, int level,
				  uint64_t value)
{
	uint64_t table;
	struct kp_error *err = descend(pg, va, level - 1, true, &table);
	if (err)
		return err;
	store(pg, table, index_of(va, level - 1), value);
	return NULL;
}

struct kp_error *kp_mkpgtable_table(struct kp_mkpgtable *pg, uint64_t va, int level,
				    uint64_t *ret)
{
	return descend(pg, va, level - 1, true, ret);
}

struct kp_error *kp_mkpgtable_entry(struct kp_mkpgtable *pg, uint64_t va, int level,
				    uint64_t *ret)
{
	uint64_t table;
	struct kp_error *err = descend(pg, va, level - 1, false, &table);
	if (err)
		return err;
	*ret = load(pg, table, index_of(va, level - 1));
	return NULL;
}

struct kp_error *kp_mkpgtable_add_to(struct kp_mkpgtable *pg, struct kp_memory *mem)
{
	struct kp_error *err = layout(pg);
	if (err)
		return err;
	return kp_memory_add(mem, KP_PHYS, 0, pg->size, kp_read_buffer, pg->buf, 0);
}

// ------------------------------------------------------------------ parser

static bool parse_num(const char *s, uint64_t *ret)
{
	if (!isdigit((unsigned char)*s))
		return false;
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 0);
	if (errno)
		return false;
	unsigned shift = 0;
	switch (*end) {
	case 'k': case 'K': shift = 10; end++; break;
	case 'm': case 'M': shift = 20; end++; break;
	case 'g': case 'G': shift = 30; end++; break;
	}
	if (*end || (shift && v > (UINT64_MAX >> shift)))
		return false;
	*ret = (uint64_t)v << shift;
	return true;
}

static int parse_level(const struct kp_mkpgtable *pg, const char *s)
{
	if (!strcasecmp(s, "PTE"))
		return 1;
	if (!strcasecmp(s, "PMD"))
		return 2;
	if (!strcasecmp(s, "PUD"))
		return 3;
	if (!strcasecmp(s, "P4D"))
		return pg->levels == 5 ? 4 : -1;
	if (!strcasecmp(s, "PGD"))
		return pg->levels;
	uint64_t v;
	if (parse_num(s, &v) && v >= 1 && v <= (uint64_t)pg->levels)
		return (int)v;
	return -1;
}

enum { MAX_TOKENS = 12 };

static struct kp_error *line_error(int line, const char *what, const char *tok)
{
	return kp_error_create(KP_ERR_INVALID, "pgtable spec line %d: %s%s%s%s", line,
			       what, tok ? " \"" : "", tok ? tok : "", tok ? "\"" : "");
}

static struct kp_error *do_line(struct kp_mkpgtable *pg, int line, char **tok, int n)
{
	const char *cmd = tok[0];
	uint64_t a, b, c;
	bool setup = !strcmp(cmd, "levels") || !strcmp(cmd, "ram") ||
		     !strcmp(cmd, "tables") || !strcmp(cmd, "maxtables");
	if (setup) {
		if (n != 2)
			return line_error(line, "expected one argument to", cmd);
		if (pg->buf)
			return line_error(line, "must come before the first map or set:", cmd);
		if (!parse_num(tok[1], &a))
			return line_error(line, "bad number", tok[1]);
		if (!strcmp(cmd, "levels")) {
			if (a != 4 && a != 5)
				return line_error(line, "levels must be 4 or 5, not", tok[1]);
			pg->levels = (int)a;
		} else if (!strcmp(cmd, "ram")) {
			if (a > (1ULL << 32))
				return line_error(line, "ram above 4G is too big:", tok[1]);
			pg->ram = a;
			if (!pg->tables_set && pg->tables < ((a + PAGE - 1) & ~(PAGE - 1)))
				pg->tables = (a + PAGE - 1) & ~(PAGE - 1);
		} else if (!strcmp(cmd, "tables")) {
			pg->tables = a;
			pg->tables_set = true;
		} else {
			if (a < 1 || a > (1u << 20))
				return line_error(line, "maxtables out of range:", tok[1]);
			pg->max_tables = (unsigned)a;
		}
		return NULL;
	}
	struct kp_error *err = NULL;
	if (!strcmp(cmd, "map")) {
		if (n < 4)
			return line_error(line, "usage: map VA PA 4K|2M|1G [COUNT] [nx] [pat] [flags=BITS]", NULL);
		if (!parse_num(tok[1], &a))
			return line_error(line, "bad virtual address", tok[1]);
		if (!parse_num(tok[2], &b))
			return line_error(line, "bad physical address", tok[2]);
		if (!parse_num(tok[3], &c) || (c != PAGE && c != (1ULL << 21) && c != (1ULL << 30)))
			return line_error(line, "page size must be 4K, 2M or 1G, not", tok[3]);
		uint64_t count = 1, extra = 0;
		bool pat = false;
		for (int i = 4; i < n; i++) {
			if (!strcmp(tok[i], "nx"))
				extra |= NX;
			else if (!strcmp(tok[i], "pat"))
				pat = true;
			else if (!strncmp(tok[i], "flags=", 6)) {
				uint64_t f;
				if (!parse_num(tok[i] + 6, &f))
					return line_error(line, "bad flags", tok[i]);
				extra |= f;
			} else if (i == 4 && parse_num(tok[i], &count)) {
				if (count == 0 || count > (1u << 20))
					return line_error(line, "page count out of range:", tok[i]);
			} else {
				return line_error(line, "unknown map option", tok[i]);
			}
		}
		if (pat)
			extra |= c == PAGE ? ENTRY_PS : 1ULL << 12;
		for (uint64_t i = 0; i < count && !err; i++)
			err = kp_mkpgtable_map(pg, a + i * c, b + i * c, c, extra);
	} else if (!strcmp(cmd, "set")) {
		if (n != 4)
			return line_error(line, "usage: set VA LEVEL VALUE", NULL);
		if (!parse_num(tok[1], &a))
			return line_error(line, "bad virtual address", tok[1]);
		int level = parse_level(pg, tok[2]);
		if (level < 0)
			return line_error(line, "bad level", tok[2]);
		if (!parse_num(tok[3], &b))
			return line_error(line, "bad entry value", tok[3]);
		err = kp_mkpgtable_set(pg, a, level, b);
	} else {
		return line_error(line, "unknown directive", cmd);
	}
	return kp_error_prefix(err, "pgtable spec line %d", line);
}

struct kp_error *kp_mkpgtable_apply(struct kp_mkpgtable *pg, const char *spec)
{
	int line = 0;
	const char *p = spec;
	while (*p) {
		line++;
		const char *eol = strchr(p, '\n');
		size_t len = eol ? (size_t)(eol - p) : strlen(p);
		char buf[512];
		if (len >= sizeof(buf))
			return line_error(line, "line too long", NULL);
		memcpy(buf, p, len);
		buf[len] = '\0';
		p += len + (eol ? 1 : 0);
		char *hash = strchr(buf, '#');
		if (hash)
			*hash = '\0';
		char *tok[MAX_TOKENS], *save;
		int n = 0;
		for (char *t = strtok_r(buf, " \t\r", &save); t; t = strtok_r(NULL, " \t\r", &save)) {
			if (n == MAX_TOKENS)
				return line_error(line, "too many words", NULL);
			tok[n++] = t;
		}
		if (n == 0)
			continue;
		struct kp_error *err = do_line(pg, line, tok, n);
		if (err)
			return err;
	}
	return NULL;
}

struct kp_error *kp_mkpgtable_create(const char *spec, struct kp_mkpgtable **ret)
{
	struct kp_mkpgtable *pg = calloc(1, sizeof(*pg));
	if (!pg)
		return &kp_enomem;
	pg->levels = 4;
	pg->tables = PAGE;
	pg->max_tables = 512;
	struct kp_error *err = kp_mkpgtable_apply(pg, spec ? spec : "");
	if (!err)
		err = layout(pg);
	if (err) {
		kp_mkpgtable_destroy(pg);
		return err;
	}
	*ret = pg;
	return NULL;
}

void kp_mkpgtable_destroy(struct kp_mkpgtable *pg)
{
	if (!pg)
		return;
	free(pg->buf);
	free(pg);
}
