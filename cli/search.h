// SPDX-License-Identifier: MIT
// The scan behind kpeek search (search.c): the memory of one space, block
// by block, each hit printed with what its address is.
#ifndef KPEEK_CLI_SEARCH_H
#define KPEEK_CLI_SEARCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <kpeek/kpeek.h>

enum search_mode { SEARCH_KERNEL, SEARCH_USER, SEARCH_PHYS };

struct out;
struct search {
	struct kp_kernel *k;
	struct out *o;
	enum search_mode mode;
	int32_t pid;
	uint64_t value, mask;
	unsigned width;			// 8 or 4
	const char *str;		// -s, else NULL
	size_t slen;
	uint64_t start, end;		// end 0: no end
	uint64_t limit, hits;		// limit 0: none
	bool capped;			// stopped at the limit
	uint64_t pages, unreadable;	// pages searched, pages passed over
	bool progress;			// a progress line on stderr
	bool bound;			// user: stopped at MAX_USER_PAGES, at bound_at
	uint64_t bound_at;
	// Internal: the string's bytes before the current block (a match
	// across a page boundary) and where they end.
	uint8_t *carry;
	size_t ncarry;
	uint64_t carry_end;
	uint64_t total, done;		// bytes, for the progress line
	double last;
	const struct kp_vma *vma;	// user: the mapping searched
};

// Searches the space; an error that ended it (what was found before it
// was printed); *oom when memory ran out.
struct kp_error *search_run(struct search *s, bool *oom);

#endif
