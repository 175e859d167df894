// SPDX-License-Identifier: MIT
// kpeek search (search.c) over the library's kp_search: each hit printed
// with what its address is, in this process or in workers (search_jobs.c).
#ifndef KPEEK_CLI_SEARCH_H
#define KPEEK_CLI_SEARCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <kpeek/kpeek.h>

enum search_mode { SEARCH_KERNEL, SEARCH_USER, SEARCH_PHYS };
// What is known of a hit's address.
// WHAT_LATER: a worker's hit whose whatis its parent asks (search -n:
// only the hits printed are worth one).
enum search_what { WHAT_KNOWN, WHAT_NOTHING, WHAT_ERROR, WHAT_LATER };

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
	bool bound;			// user: stopped at the library's bound, at bound_at
	uint64_t bound_at;
	uint64_t total, done;		// bytes, for the progress line
	double last;
	unsigned jobs;			// -J: workers (0: from the CPUs and the size)
	// A worker of search_jobs.c: the physical slice [pa_lo, pa_hi) (pa_hi
	// 0: to the end), its hits written to records for the parent to print
	// in order, its counters shown to the parent in shared.
	uint64_t pa_lo, pa_hi;
	FILE *records;
	struct search_shared *shared;
	unsigned worker;
	char failed[160];		// why the workers' search failed, "" if it did not
};

// What a worker shows its parent (search_jobs.c), in shared memory.
struct search_shared {
	uint64_t done, pages, unreadable, hits;
	bool capped, oom;
	char error[160];	// why its search could not start, "" if it did
};

// The progress line on stderr (at most twice a second), and its end.
void search_progress(struct search *s);
void search_progress_end(struct search *s);
// Searches the space; an error that ended it (what was found before it
// was printed); *oom when the workers' memory ran out.
struct kp_error *search_run(struct search *s, bool *oom);
// What the kernel address (physical with -p) is, in one line into buf.
enum search_what search_whatis(struct search *s, uint64_t addr, char *buf, size_t size);
// Prints a hit (the parent, or a search in one process); false once the
// limit is reached. known: enum search_what.
bool search_print(struct search *s, uint64_t addr, int known, const char *what);
// A worker's hit, for its parent (false if it could not be written).
bool search_record_write(struct search *s, uint64_t addr, int known, const char *what);
// Whether a worker goes on: not once a worker before it reached the limit
// (the first hits are all before), and it shows its progress.
bool search_worker_goes_on(struct search *s);
// search_run() in workers, each a process with its slice of physical
// memory, when the source is large and the machine has cores to spare (or
// -J asks): false if it did not run (then search_run() does the search);
// s->failed says why if a worker failed.
bool search_jobs(struct search *s, bool *oom);

#endif
