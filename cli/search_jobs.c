// SPDX-License-Identifier: MIT
// kpeek search on every core: physical memory cut into one slice per
// worker, each a forked process that searches its slice through its own
// copy of the kernel handle (a kdump's decompression and caches are per
// process; /proc/kcore is opened again in each, whose reads would
// otherwise share the kernel's buffer of one open file: src/io/file.c),
// writes its hits with what they are to a temporary file, and shows its
// counters in shared memory. The parent draws the progress line, then
// prints the workers' hits in slice order: the output is the search of one
// process, the same bytes.
//
// Bounds: at most MAX_JOBS workers, no slice under MIN_SLICE unless -J
// asks; a worker stops at -n hits of its own, and once a worker before it
// reached the limit; the records are the hits, each at most 64 KiB.
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "search.h"

#define MAX_JOBS 16
#define MIN_SLICE (64ull << 20)	// bytes a worker is worth
#define SLICE_ALIGN (256u << 10)	// kp_search's block (src/linux/mm/search.c): blocks never span slices

bool search_record_write(struct search *s, uint64_t addr, int known, const char *what)
{
	uint16_t len = (uint16_t)strnlen(what, 0xffff);
	uint8_t kind = (uint8_t)known;
	return fwrite(&addr, sizeof(addr), 1, s->records) == 1 && fwrite(&kind, 1, 1, s->records) == 1 &&
	       fwrite(&len, sizeof(len), 1, s->records) == 1 && fwrite(what, 1, len, s->records) == len;
}

bool search_worker_goes_on(struct search *s)
{
	struct search_shared *me = s->shared;
	__atomic_store_n(&me->done, s->done, __ATOMIC_RELAXED);
	__atomic_store_n(&me->hits, s->hits, __ATOMIC_RELAXED);
	for (unsigned w = 0; w < s->worker; w++)
		if (__atomic_load_n(&(me - s->worker + w)->capped, __ATOMIC_RELAXED))
			return false;
	return true;
}

// The number of workers: -J, else one per online CPU and MIN_SLICE of
// memory; under 2, none.
static unsigned jobs(const struct search *s, uint64_t total)
{
	uint64_t slices = total / (s->jobs ? SLICE_ALIGN : MIN_SLICE);
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	uint64_t n = s->jobs ? s->jobs : cpus > 0 ? (uint64_t)cpus : 1;
	n = n < slices ? n : slices;
	return n > MAX_JOBS ? MAX_JOBS : n < 2 ? 0 : (unsigned)n;
}

// cut[w]: the physical address worker w starts at (cut[n]: 0, the end),
// each after an equal share of the bytes, on a SLICE_ALIGN boundary.
static void slices(const struct kp_range *r, size_t nr, uint64_t total, unsigned n, uint64_t *cut)
{
	uint64_t seen = 0;
	unsigned w = 1;
	cut[0] = 0;
	// Every share ends before total: each w < n is cut in some range.
	for (size_t i = 0; i < nr && w < n; i++) {
		while (w < n && seen + (r[i].end - r[i].start) > total / n * w) {
			uint64_t pa = r[i].start + (total / n * w - seen);
			pa -= pa % SLICE_ALIGN;
			cut[w] = pa > cut[w - 1] ? pa : cut[w - 1];
			w++;
		}
		seen += r[i].end - r[i].start;
	}
	cut[n] = 0;
}

static void worker(struct search *s, unsigned w, const uint64_t *cut, struct search_shared *shared)
{
	prctl(PR_SET_PDEATHSIG, SIGKILL);	// no search goes on for a parent gone
	s->worker = w;
	s->shared = &shared[w];
	s->pa_lo = cut[w];
	s->pa_hi = cut[w + 1];
	s->progress = false;
	bool oom = false;
	// A search of physical memory ends with no error (pages it cannot read
	// are counted) but one that could not start (out of memory).
	struct kp_error *err = search_run(s, &oom);
	if (err)
		snprintf(shared[w].error, sizeof(shared[w].error), "worker %u: %s", w, kp_error_message(err));
	kp_error_destroy(err);
	shared[w].pages = s->pages;
	shared[w].unreadable = s->unreadable;
	shared[w].hits = s->hits;
	shared[w].capped = s->capped;
	shared[w].oom = oom;
	_exit(fflush(s->records) == 0 && !ferror(s->records) ? 0 : 3);
}

// Waits for the workers, drawing the progress line; false (with what
// went wrong in why) if one did not end well.
static bool wait_all(struct search *s, const pid_t *pids, unsigned n, struct search_shared *shared,
		     char *why, size_t size)
{
	unsigned left = n;
	bool ok = true;
	while (left) {
		int status;
		pid_t pid = waitpid(-1, &status, WNOHANG);
		if (pid < 0 && errno != EINTR)
			break;
		if (pid <= 0) {
			s->done = s->hits = 0;
			for (unsigned w = 0; w < n; w++) {
				s->done += __atomic_load_n(&shared[w].done, __ATOMIC_RELAXED);
				s->hits += __atomic_load_n(&shared[w].hits, __ATOMIC_RELAXED);
			}
			search_progress(s);
			nanosleep(&(struct timespec){ .tv_nsec = 50000000 }, NULL);
			continue;
		}
		left--;
		for (unsigned w = 0; w < n; w++)
			if (pids[w] == pid && ok && !(WIFEXITED(status) && WEXITSTATUS(status) == 0)) {
				ok = false;
				if (WIFSIGNALED(status))
					snprintf(why, size, "worker %u (PID %d) was killed by signal %d", w, (int)pid,
						 WTERMSIG(status));
				else
					snprintf(why, size, "worker %u (PID %d) could not write its hits to a temporary "
						 "file", w, (int)pid);
			}
	}
	s->hits = 0;
	return ok;
}

// Prints worker files' hits in slice order, up to the limit.
static bool print_records(struct search *s, FILE *const *files, unsigned n)
{
	char what[0x10000];
	for (unsigned w = 0; w < n; w++) {
		rewind(files[w]);
		uint64_t addr;
		uint8_t kind;
		uint16_t len;
		while (fread(&addr, sizeof(addr), 1, files[w]) == 1) {
			if (fread(&kind, 1, 1, files[w]) != 1 || fread(&len, sizeof(len), 1, files[w]) != 1 ||
			    fread(what, 1, len, files[w]) != len)
				return false;
			what[len] = '\0';
			if (kind == WHAT_LATER)
				kind = (uint8_t)search_whatis(s, addr, what, sizeof(what));
			if (!search_print(s, addr, kind, what))
				return true;
		}
	}
	return true;
}

// Stops the workers started before one could not be: the search is then
// done in this process.
static void abandon(struct search *s, const pid_t *pids, unsigned started, struct search_shared *shared)
{
	char why[160];
	for (unsigned w = 0; w < started; w++)
		kill(pids[w], SIGKILL);
	wait_all(s, pids, started, shared, why, sizeof(why));
	s->done = s->total = 0;
}

bool search_jobs(struct search *s, bool *oom)
{
	const struct kp_range *r;
	size_t nr = kp_kernel_ranges(s->k, KP_PHYS, &r);
	uint64_t total = 0, cut[MAX_JOBS + 1];
	for (size_t i = 0; i < nr; i++)
		total += r[i].end - r[i].start;
	unsigned n = jobs(s, total);
	if (!n)
		return false;
	slices(r, nr, total, n, cut);
	struct search_shared *shared = mmap(NULL, n * sizeof(*shared), PROT_READ | PROT_WRITE,
					    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (shared == MAP_FAILED)
		return false;
	memset(shared, 0, n * sizeof(*shared));
	FILE *files[MAX_JOBS] = { NULL };
	pid_t pids[MAX_JOBS];
	unsigned started = 0;
	s->total = total;	// for the progress line
	fflush(NULL);	// nothing buffered is written twice
	while (started < n && (files[started] = tmpfile()) && (pids[started] = fork()) >= 0) {
		if (!pids[started]) {
			s->records = files[started];
			worker(s, started, cut, shared);
		}
		started++;
	}
	if (started < n)
		abandon(s, pids, started, shared);
	else if (wait_all(s, pids, n, shared, s->failed, sizeof(s->failed)) && !print_records(s, files, n))
		snprintf(s->failed, sizeof(s->failed), "the workers' hits could not be read back");
	search_progress_end(s);
	for (unsigned w = 0; w < n; w++) {
		if (files[w])
			fclose(files[w]);
		if (started == n) {
			s->pages += shared[w].pages;
			s->unreadable += shared[w].unreadable;
			*oom |= shared[w].oom;
			if (shared[w].error[0] && !s->failed[0])
				snprintf(s->failed, sizeof(s->failed), "%s", shared[w].error);
		}
	}
	munmap(shared, n * sizeof(*shared));
	return started == n;
}
