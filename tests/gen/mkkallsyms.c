// SPDX-License-Identifier: MIT
// Synthetic in-memory kallsyms tables (see mkkallsyms.h).
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "mkkallsyms.h"
#include "util/error.h"

#define KSYM_NAME_LEN 512	// 6.1
#define MAX_TOKEN 64		// expansion length cap of one generated token

struct gsym {
	uint64_t address;
	size_t seq;		// input position, for a stable sort
	uint8_t *tok;		// token codes; starts as type + name
	size_t len;
};

static int cmp_sym(const void *a, const void *b)
{
	const struct gsym *x = a, *y = b;
	if (x->address != y->address)
		return x->address < y->address ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static size_t align_up(size_t x, size_t a)
{
	return (x + a - 1) & ~(a - 1);
}

static const struct kp_mkkallsyms_sym *sort_syms;

// kallsyms_seqs_of_names order: by name, then address (scripts/kallsyms.c
// compare_names()).
static int cmp_name(const void *a, const void *b)
{
	const struct gsym *x = *(const struct gsym *const *)a, *y = *(const struct gsym *const *)b;
	int c = strcmp(sort_syms[x->seq].name, sort_syms[y->seq].name);
	if (c)
		return c;
	return x->address < y->address ? -1 : x->address > y->address;
}

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = v;
	p[1] = v >> 8;
}

static void put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = v >> (8 * i);
}

static void put64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = v >> (8 * i);
}

// scripts/kallsyms.c's table compression, simplified: repeatedly give the most
// frequent adjacent pair of tokens a free code.
static void compress(struct gsym *s, size_t n, char table[256][MAX_TOKEN + 1],
		     unsigned max_tokens, unsigned *ntokens_ret)
{
	bool used[256] = {false};
	for (size_t i = 0; i < n; i++)
		for (size_t k = 0; k < s[i].len; k++)
			used[s[i].tok[k]] = true;
	for (int c = 0; c < 256; c++) {
		table[c][0] = used[c] ? (char)c : '\0';
		table[c][1] = '\0';
	}
	size_t tlen[256];
	for (int c = 0; c < 256; c++)
		tlen[c] = strlen(table[c]);
	uint32_t *count = malloc(65536 * sizeof(*count));
	unsigned ntokens = 0;
	for (int c = 1; count && c < 256 && ntokens < max_tokens; c++) {
		if (used[c])
			continue;
		memset(count, 0, 65536 * sizeof(*count));
		for (size_t i = 0; i < n; i++)
			for (size_t k = 0; k + 1 < s[i].len; k++)
				count[s[i].tok[k] | s[i].tok[k + 1] << 8]++;
		uint32_t best = 0, best_count = 1;
		for (uint32_t p = 0; p < 65536; p++) {
			if (count[p] > best_count && tlen[p & 0xff] + tlen[p >> 8] <= MAX_TOKEN) {
				best = p;
				best_count = count[p];
			}
		}
		if (best_count < 2)
			break;
		uint8_t a = best & 0xff, b = best >> 8;
		strcpy(table[c], table[a]);
		strcat(table[c], table[b]);
		tlen[c] = tlen[a] + tlen[b];
		used[c] = true;
		ntokens++;
		for (size_t i = 0; i < n; i++) {
			size_t w = 0;
			for (size_t k = 0; k < s[i].len; k++) {
				if (k + 1 < s[i].len && s[i].tok[k] == a && s[i].tok[k + 1] == b) {
					s[i].tok[w++] = c;
					k++;
				} else {
					s[i].tok[w++] = s[i].tok[k];
				}
			}
			s[i].len = w;
		}
	}
	free(count);
	*ntokens_ret = ntokens;
}

struct kp_error *kp_mkkallsyms_build(const struct kp_mkkallsyms_sym *syms, size_t n,
				     uint64_t base, unsigned flags,
				     struct kp_mkkallsyms *ret)
{
	if (n == 0 || n > UINT32_MAX)
		return kp_error_create(KP_ERR_INVALID, "mkkallsyms: %zu symbols", n);
	struct gsym *s = calloc(n, sizeof(*s));
	if (!s)
		return &kp_enomem;
	uint32_t *seq_of = NULL;
	struct kp_error *err = NULL;
	for (size_t i = 0; i < n; i++) {
		size_t len = strlen(syms[i].name);
		if (len == 0 || len >= KSYM_NAME_LEN) {
			err = kp_error_create(KP_ERR_INVALID,
					      "mkkallsyms: symbol %zu: name of %zu characters", i, len);
			goto out;
		}
		s[i].address = syms[i].address;
		s[i].seq = i;
		s[i].len = len + 1;
		s[i].tok = malloc(len + 1);
		if (!s[i].tok) {
			err = &kp_enomem;
			goto out;
		}
		s[i].tok[0] = syms[i].type;
		memcpy(s[i].tok + 1, syms[i].name, len);
	}
	qsort(s, n, sizeof(*s), cmp_sym);

	bool pcrel = flags & KP_MKKALLSYMS_PC_RELATIVE;
	bool last = pcrel || (flags & KP_MKKALLSYMS_TABLES_LAST);
	bool seqs = last || (flags & KP_MKKALLSYMS_SEQS);
	bool absolute = (flags & KP_MKKALLSYMS_ABSOLUTE) && !pcrel;
	bool percpu = !absolute && !pcrel && !(flags & KP_MKKALLSYMS_NO_PERCPU);
	size_t A = pcrel ? 4 : 8;	// the labels' alignment
	uint64_t relative_base = 0;
	if (!absolute && !pcrel) {
		size_t i = 0;
		while (percpu && i < n && s[i].address < 0x100000000ULL)
			i++;
		if (i == n) {
			err = kp_error_create(KP_ERR_INVALID, "mkkallsyms: only per-CPU symbols");
			goto out;
		}
		relative_base = s[i].address;
	}
	// seqs_of_names[k]: the address-order index of the k-th name.
	if (seqs) {
		struct gsym **byname = malloc(n * sizeof(*byname));
		seq_of = malloc(n * sizeof(*seq_of));
		if (!byname || !seq_of) {
			free(byname);
			free(seq_of);
			err = &kp_enomem;
			goto out;
		}
		for (size_t i = 0; i < n; i++)
			byname[i] = &s[i];
		sort_syms = syms;
		qsort(byname, n, sizeof(*byname), cmp_name);
		for (size_t i = 0; i < n; i++)
			seq_of[i] = (uint32_t)(byname[i] - s);
		free(byname);
	}

	char table[256][MAX_TOKEN + 1];
	unsigned ntokens;
	compress(s, n, table,
		 flags & KP_MKKALLSYMS_NO_COMPRESSION ? 0 :
		 flags & KP_MKKALLSYMS_FEW_TOKENS ? 32 : 256, &ntokens);

	size_t names_size = 0;
	unsigned long_records = 0;
	for (size_t i = 0; i < n; i++) {
		names_size += s[i].len + (s[i].len > 0x7f ? 2 : 1);
		long_records += s[i].len > 0x7f;
	}
	size_t table_size = 0;
	for (int c = 0; c < 256; c++)
		table_size += strlen(table[c]) + 1;
	size_t nmarkers = (n + 255) / 256;

	// The order of scripts/kallsyms.c write_src(): offsets (or addresses)
	// and relative_base first up to 6.1, after the token index since (then
	// seqs_of_names last); seqs_of_names between markers and token table in
	// 6.1 stable kernels.
	size_t addr_bytes = absolute ? n * 8 : n * 4;
	size_t off_addrs = 0, off_base = 0, off_seqs = 0, off_num = 0, pos = 0;
	if (!last) {
		pos = addr_bytes;
		if (!absolute) {
			off_base = align_up(pos, A);
			pos = off_base + 8;
		}
		off_num = align_up(pos, A);
	}
	size_t off_names = align_up(off_num + 4, A);
	size_t off_markers = align_up(off_names + names_size, A);
	pos = off_markers + nmarkers * 4;
	if (seqs && !last) {
		off_seqs = align_up(pos, A);
		pos = off_seqs + 3 * n;
	}
	size_t off_table = align_up(pos, A);
	size_t off_index = align_up(off_table + table_size, A);
	size_t size = off_index + 512;
	if (last) {
		off_addrs = align_up(size, A);
		pos = off_addrs + addr_bytes;
		if (!pcrel) {
			off_base = align_up(pos, A);
			pos = off_base + 8;
		}
		off_seqs = align_up(pos, A);
		size = off_seqs + 3 * n;
	}

	uint8_t *buf = calloc(1, size);
	if (!buf) {
		err = &kp_enomem;
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		uint64_t a = s[i].address;
		if (absolute) {
			put64(buf + off_addrs + 8 * i, a);
			continue;
		}
		int64_t o;
		if (pcrel) {
			// Relative to the entry itself ("kallsyms: Get rid of
			// kallsyms relative base").
			o = (int64_t)(a - (base + off_addrs + 4 * i));
			if (o < INT32_MIN || o > INT32_MAX)
				goto range;
		} else if (!percpu) {
			if (a - relative_base > UINT32_MAX)
				goto range;
			o = (int64_t)(a - relative_base);
		} else if (a < 0x100000000ULL) {
			if (a > INT32_MAX)
				goto range;
			o = (int64_t)a;
		} else {
			if (a - relative_base > INT32_MAX)
				goto range;
			o = -(int64_t)(a - relative_base) - 1;
		}
		put32(buf + off_addrs + 4 * i, (uint32_t)o);
		continue;
range:
		err = kp_error_create(KP_ERR_INVALID,
				      "mkkallsyms: address 0x%" PRIx64 " out of range of relative base 0x%" PRIx64,
				      a, relative_base);
		free(buf);
		goto out;
	}
	if (!absolute && !pcrel)
		put64(buf + off_base, relative_base);
	for (size_t i = 0; seqs && i < n; i++) {
		buf[off_seqs + 3 * i] = seq_of[i] >> 16;
		buf[off_seqs + 3 * i + 1] = seq_of[i] >> 8;
		buf[off_seqs + 3 * i + 2] = seq_of[i];
	}
	put32(buf + off_num, n);
	size_t w = off_names;
	for (size_t i = 0; i < n; i++) {
		if (i % 256 == 0)
			put32(buf + off_markers + 4 * (i / 256), w - off_names);
		if (s[i].len > 0x7f) {
			buf[w++] = (s[i].len & 0x7f) | 0x80;
			buf[w++] = (s[i].len >> 7) & 0x7f;
		} else {
			buf[w++] = s[i].len;
		}
		memcpy(buf + w, s[i].tok, s[i].len);
		w += s[i].len;
	}
	size_t t = off_table;
	for (int c = 0; c < 256; c++) {
		put16(buf + off_index + 2 * c, t - off_table);
		size_t l = strlen(table[c]);
		memcpy(buf + t, table[c], l + 1);
		t += l + 1;
	}

	memset(ret, 0, sizeof(*ret));
	ret->buf = buf;
	ret->size = size;
	ret->base = base;
	ret->tables.num_syms = base + off_num;
	ret->tables.names = base + off_names;
	ret->tables.token_table = base + off_table;
	ret->tables.token_index = base + off_index;
	if (absolute) {
		ret->tables.addresses = base + off_addrs;
	} else {
		ret->tables.offsets = base + off_addrs;
		ret->tables.relative_base = pcrel ? 0 : base + off_base;
	}
	ret->seqs = seqs ? base + off_seqs : 0;
	ret->markers = base + off_markers;
	ret->relative_base = relative_base;
	ret->names_size = names_size;
	ret->ntokens = ntokens;
	ret->long_records = long_records;
out:
	free(seq_of);
	for (size_t i = 0; i < n; i++)
		free(s[i].tok);
	free(s);
	return err;
}

void kp_mkkallsyms_deinit(struct kp_mkkallsyms *k)
{
	if (!k)
		return;
	free(k->buf);
	k->buf = NULL;
}
