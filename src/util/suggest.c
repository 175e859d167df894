// SPDX-License-Identifier: MIT
// "Did you mean" suggestions (suggest.h).
#include <stdio.h>
#include <string.h>

#include "util/suggest.h"

#define MAX_QUERY 64	// longer queries get only prefix/substring suggestions

// 64 classes: a-z, 0-9, A-Z, '_' and everything else.
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

uint64_t kp_suggest_chars(const char *str, size_t len)
{
	uint64_t set = 0;
	for (size_t i = 0; i < len; i++)
		set |= 1ULL << char_class((unsigned char)str[i]);
	return set;
}

void kp_suggest_init(struct kp_suggest *s, const char *query, size_t len, size_t max)
{
	memset(s, 0, sizeof(*s));
	s->query = query;
	s->len = len;
	s->bound = len <= 3 ? 1 : len <= 7 ? 2 : 3;
	s->chars = kp_suggest_chars(query, len);
	s->max = max < 1 ? 1 : max > KP_SUGGEST_MAX ? KP_SUGGEST_MAX : max;
}

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
		prev[j] = j <= bound ? (unsigned)j : big;
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
				v = (unsigned)i;
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

static int cmp_name(const char *a, size_t alen, const char *b, size_t blen)
{
	int c = memcmp(a, b, alen < blen ? alen : blen);
	return c ? c : (alen > blen) - (alen < blen);
}

static void keep(struct kp_suggest *s, const char *name, size_t len, unsigned rank)
{
	if (s->n == s->max) {
		const typeof(s->best[0]) *last = &s->best[s->max - 1];
		if (rank > last->rank ||
		    (rank == last->rank && cmp_name(name, len, last->name, last->len) >= 0))
			return;
		s->n--;
	}
	size_t i = s->n;
	while (i > 0 && (s->best[i - 1].rank > rank ||
			 (s->best[i - 1].rank == rank &&
			  cmp_name(s->best[i - 1].name, s->best[i - 1].len, name, len) > 0))) {
		s->best[i] = s->best[i - 1];
		i--;
	}
	s->best[i].name = name;
	s->best[i].len = len;
	s->best[i].rank = rank;
	s->n++;
}

void kp_suggest_offer(struct kp_suggest *s, const char *name, size_t len, uint64_t chars)
{
	if (!s->len || (len == s->len && !memcmp(name, s->query, len)))
		return;
	unsigned bound = s->bound;
	unsigned missing = __builtin_popcountll(s->chars & ~chars);
	unsigned extra = __builtin_popcountll(chars & ~s->chars);
	bool near = s->len <= MAX_QUERY && missing <= bound && extra <= bound &&
		    (len > s->len ? len - s->len : s->len - len) <= bound;
	if (!near && (missing || s->len < 3 || len <= s->len))
		return;
	unsigned d = near ? bounded_distance(s->query, s->len, name, len, bound) : bound + 1;
	if (d <= bound) {
		keep(s, name, len, d);
	} else if (s->len >= 3 && len > s->len && !missing) {
		if (memcmp(name, s->query, s->len) == 0)
			keep(s, name, len, bound + 1);
		else if (memmem(name, len, s->query, s->len))
			keep(s, name, len, bound + 2);
	}
}

void kp_suggest_format(const struct kp_suggest *s, char *buf, size_t size)
{
	if (!size)
		return;
	buf[0] = '\0';
	if (!s->n)
		return;
	size_t pos = 0;
	int w = snprintf(buf, size, " (did you mean: ");
	if (w < 0 || (size_t)w >= size)
		return;
	pos = (size_t)w;
	for (size_t i = 0; i < s->n; i++) {
		w = snprintf(buf + pos, size - pos, "%s%.*s", i ? ", " : "",
			     (int)(s->best[i].len > 64 ? 64 : s->best[i].len), s->best[i].name);
		if (w < 0 || (size_t)w >= size - pos) {
			buf[pos] = '\0';
			break;
		}
		pos += (size_t)w;
	}
	snprintf(buf + pos, size - pos, "?)");
}
