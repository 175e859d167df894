// SPDX-License-Identifier: MIT
// vtop: cached translations per second on a dump, over a fixed set of
// pseudo-random kernel addresses (reproducible: fixed seed), through the
// public API only:
//   vtop [-n TRANSLATIONS] [-s SETSIZE] DUMP
// The set mixes direct-map addresses (the architecture's page_offset_base /
// PAGE_OFFSET fact + a random physical address in RAM) and kernel-image
// addresses (_text.._end). One warm-up pass fills the page-table cache;
// then it times
//   kp_vtop      the full per-level record, and
//   read         an 8-byte kp_read_u64 at each address: the translation
//                every virtual read makes (last-page fast path, then the
//                same cached walk) plus the copy
// and prints one line per method: method=NAME translations=N seconds=S
// per_s=R mapped=N.
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include <string.h>

#include <kpeek/kpeek.h>

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
	KP_OPTS(kp_open_options, o, .core = argv[optind]);
	struct kp_kernel *k;
	struct kp_error *err = kp_kernel_open(&o, &k);
	if (err) {
		fprintf(stderr, "vtop: %s\n", kp_error_message(err));
		return 1;
	}
	struct kp_symbol text, end;
	struct kp_fact f;
	uint64_t direct = 0;
	for (size_t i = 0; kp_kernel_arch_fact(k, i, &f); i++)
		if (f.known && f.kind == KP_FACT_HEX &&
		    (!strcmp(f.key, "page_offset_base") || !strcmp(f.key, "PAGE_OFFSET")))
			direct = f.value;
	if (!direct || !kp_symbol_find(k, "_text", &text) || !kp_symbol_find(k, "_end", &end)) {
		fprintf(stderr, "vtop: %s: no direct map base or _text/_end\n", argv[optind]);
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
				addrs[i] = direct + r[j].start + off;
				break;
			}
			off -= len;
		}
	}

	// Warm-up pass: fills the table cache.
	KP_INIT(kp_vtop, v);
	uint64_t mapped = 0, sink = 0;
	for (size_t i = 0; i < setsize; i++) {
		if ((err = kp_vtop(k, addrs[i], &v))) {
			fprintf(stderr, "vtop: 0x%" PRIx64 ": %s\n", addrs[i], kp_error_message(err));
			return 1;
		}
	}

	double t0 = now_s();
	for (uint64_t i = 0; i < count; i++) {
		err = kp_vtop(k, addrs[i % setsize], &v);
		if (err)
			return 1;
		mapped += v.present;
		sink += v.paddr;
	}
	double secs = now_s() - t0;
	printf("method=kp_vtop translations=%" PRIu64 " seconds=%.4f per_s=%.0f mapped=%" PRIu64 "\n",
	       count, secs, count / secs, mapped);

	mapped = 0;
	t0 = now_s();
	for (uint64_t i = 0; i < count; i++) {
		uint64_t x;
		err = kp_read_u64(k, addrs[i % setsize], &x);
		if (err) {
			kp_error_destroy(err);
			continue;
		}
		mapped++;
		sink += x;
	}
	secs = now_s() - t0;
	printf("method=read translations=%" PRIu64 " seconds=%.4f per_s=%.0f mapped=%" PRIu64 "\n",
	       count, secs, count / secs, mapped);
	if (sink == 42)
		printf("\n");
	free(addrs);
	kp_kernel_destroy(k);
	return 0;
}
