// SPDX-License-Identifier: MIT
// vtop: cached x86-64 translations per second on a dump, over a fixed set of
// pseudo-random kernel addresses (reproducible: fixed seed):
//   vtop [-n TRANSLATIONS] [-s SETSIZE] DUMP
// The set mixes direct-map addresses (page_offset_base + a random physical
// address in RAM) and kernel-image addresses (_text.._end). One warm-up pass
// fills the page-table cache; then it times
//   kp_vtop              the public call (full per-level record), and
//   kp_pgtable_translate what kp_read uses for virtual addresses (last-page
//                        fast path, then the same cached walk)
// and prints one line per method: method=NAME translations=N seconds=S
// per_s=R mapped=N plus the cache counters.
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include <kpeek/kpeek.h>
#include "core/kernel.h"
#include "arch/x86_64/pgtable.h"

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static uint64_t rng = 0x9e3779b97f4a7c15ULL;

static uint64_t next_rand(void)
{
	// xorshift64*
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return rng * 0x2545f4914f6cdd1dULL;
}

static void stats_line(struct kp_pgtable *pt, const struct kp_pgtable_stats *before)
{
	struct kp_pgtable_stats s;
	kp_pgtable_get_stats(pt, &s);
	printf(" walks=%" PRIu64 " fast_hits=%" PRIu64 " table_hits=%" PRIu64
	       " table_reads=%" PRIu64 " entry_reads=%" PRIu64 "\n",
	       s.walks - before->walks, s.fast_hits - before->fast_hits,
	       s.table_hits - before->table_hits, s.table_reads - before->table_reads,
	       s.entry_reads - before->entry_reads);
}

int main(int argc, char **argv)
{
	uint64_t count = 10000000;
	size_t setsize = 4096;
	int opt;
	while ((opt = getopt(argc, argv, "n:s:")) != -1) {
		if (opt == 'n')
			count = strtoull(optarg, NULL, 0);
		else if (opt == 's')
			setsize = strtoull(optarg, NULL, 0);
		else
			return 2;
	}
	if (optind + 1 != argc || !setsize || !count) {
		fprintf(stderr, "usage: vtop [-n TRANSLATIONS] [-s SETSIZE] DUMP\n");
		return 2;
	}
	struct kp_open_options o = {.core = argv[optind]};
	struct kp_kernel *k;
	struct kp_error *err = kp_kernel_open(&o, &k);
	if (err) {
		fprintf(stderr, "vtop: %s\n", err->message);
		return 1;
	}
	struct kp_kernel_info info;
	kp_kernel_get_info(k, &info);
	struct kp_symbol text, end;
	if (!k->pgtable || !info.has_page_offset_base ||
	    (err = kp_symbol_by_name(k, "_text", &text)) ||
	    (err = kp_symbol_by_name(k, "_end", &end))) {
		fprintf(stderr, "vtop: %s: no page tables, page_offset_base or _text/_end%s%s\n",
			argv[optind], err ? ": " : "", err ? err->message : "");
		return 1;
	}
	const struct kp_range *r;
	size_t nr = kp_kernel_ranges(k, KP_PHYS, &r);
	uint64_t ram = 0;
	for (size_t i = 0; i < nr; i++)
		ram += r[i].end - r[i].start;
	uint64_t *addrs = malloc(setsize * sizeof(*addrs));
	if (!addrs || !ram)
		return 1;
	for (size_t i = 0; i < setsize; i++) {
		if (i % 4 == 3) {	// a quarter in the kernel image
			addrs[i] = text.address + next_rand() % (end.address - text.address);
			continue;
		}
		uint64_t off = next_rand() % ram;
		for (size_t j = 0; j < nr; j++) {
			uint64_t len = r[j].end - r[j].start;
			if (off < len) {
				addrs[i] = info.page_offset_base + r[j].start + off;
				break;
			}
			off -= len;
		}
	}

	// Warm-up pass: fills the table cache.
	struct kp_vtop v;
	uint64_t mapped = 0, sink = 0;
	for (size_t i = 0; i < setsize; i++) {
		if ((err = kp_vtop(k, addrs[i], &v))) {
			fprintf(stderr, "vtop: 0x%" PRIx64 ": %s\n", addrs[i], err->message);
			return 1;
		}
	}

	struct kp_pgtable_stats before;
	kp_pgtable_get_stats(k->pgtable, &before);
	double t0 = now_s();
	for (uint64_t i = 0; i < count; i++) {
		err = kp_vtop(k, addrs[i % setsize], &v);
		if (err)
			return 1;
		mapped += v.present;
		sink += v.paddr;
	}
	double secs = now_s() - t0;
	printf("method=kp_vtop translations=%" PRIu64 " seconds=%.4f per_s=%.0f mapped=%" PRIu64,
	       count, secs, count / secs, mapped);
	stats_line(k->pgtable, &before);

	kp_pgtable_get_stats(k->pgtable, &before);
	mapped = 0;
	t0 = now_s();
	for (uint64_t i = 0; i < count; i++) {
		uint64_t pa, size;
		err = kp_pgtable_translate(k->pgtable, addrs[i % setsize], &pa, &size);
		if (err) {
			kp_error_destroy(err);
			continue;
		}
		mapped++;
		sink += pa;
	}
	secs = now_s() - t0;
	printf("method=translate translations=%" PRIu64 " seconds=%.4f per_s=%.0f mapped=%" PRIu64,
	       count, secs, count / secs, mapped);
	stats_line(k->pgtable, &before);
	if (sink == 42)
		printf("\n");
	free(addrs);
	kp_kernel_destroy(k);
	return 0;
}
