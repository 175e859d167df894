// SPDX-License-Identifier: MIT
// "Did you mean" suggestions: the closest names to a misspelled query, for
// unknown symbols, struct members and commands alike. Candidates are ranked
// by optimal-string-alignment Damerau-Levenshtein distance within a bound
// that grows with the query (1 up to 3 characters, 2 up to 7, else 3), then
// names that start with the query, then names that contain it; ties sort by
// name. Candidates are offered one by one, so the caller walks its own table.
#ifndef KP_UTIL_SUGGEST_H
#define KP_UTIL_SUGGEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define KP_SUGGEST_MAX 5

struct kp_suggest {
	const char *query;
	size_t len;
	unsigned bound;
	uint64_t chars;		// kp_suggest_chars() of the query
	size_t max;		// suggestions kept (<= KP_SUGGEST_MAX)
	size_t n;
	struct {
		const char *name;	// the caller's string: must outlive the suggestion
		size_t len;
		unsigned rank;
	} best[KP_SUGGEST_MAX];
};

// Keeps at most max (1..KP_SUGGEST_MAX) suggestions for query[0, len).
void kp_suggest_init(struct kp_suggest *s, const char *query, size_t len, size_t max);
// The set of character classes of a string, a cheap prefilter: every class
// one string has and the other lacks costs at least one edit. Tables that
// offer many candidates precompute it per name.
uint64_t kp_suggest_chars(const char *str, size_t len);
// Offers one candidate; chars is kp_suggest_chars(name, len).
void kp_suggest_offer(struct kp_suggest *s, const char *name, size_t len, uint64_t chars);
// Writes " (did you mean: a, b?)" (or "" with no suggestion) into buf.
void kp_suggest_format(const struct kp_suggest *s, char *buf, size_t size);

#endif
