// SPDX-License-Identifier: MIT
// readall: reads every physical range of a dump through libkpeek (kp_read in
// CHUNK-byte pieces, default 1 MiB) and prints the throughput:
//   readall [-c CHUNK] [-n PASSES] DUMP
//   bytes=N seconds=S mib_per_s=R ranges=N faults=N open_ms=M passes=N
// open_ms is kp_kernel_open alone; seconds is the median time of one pass
// over all ranges (the reads only; the first pass is not a warm-up). A chunk that
// faults (a hole inside a range, e.g. a page a kdump filter excluded) is
// counted and skipped, so the total still covers every range.
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include <kpeek/kpeek.h>

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	size_t chunk = 1 << 20;
	int opt, passes = 1;
	while ((opt = getopt(argc, argv, "c:n:")) != -1) {
		if (opt == 'c')
			chunk = strtoull(optarg, NULL, 0);
		else if (opt == 'n')
			passes = atoi(optarg);
		else
			return 2;
	}
	if (optind + 1 != argc || chunk == 0 || passes < 1 || passes > 100) {
		fprintf(stderr, "usage: readall [-c CHUNK] [-n PASSES] DUMP\n");
		return 2;
	}
	char *buf = malloc(chunk);
	if (!buf)
		return 1;
	KP_OPTS(kp_open_options, o, .core = argv[optind]);
	struct kp_kernel *k;
	double t0 = now_s();
	struct kp_error *err = kp_kernel_open(&o, &k);
	double t_open = now_s() - t0;
	if (err) {
		fprintf(stderr, "readall: %s\n", kp_error_message(err));
		return 1;
	}
	const struct kp_range *r;
	size_t n = kp_kernel_ranges(k, KP_PHYS, &r);
	uint64_t total = 0, faults = 0, sum = 0;
	double times[100];
	for (int p = 0; p < passes; p++) {
		total = faults = 0;
		t0 = now_s();
		for (size_t i = 0; i < n; i++) {
			for (uint64_t a = r[i].start; a < r[i].end;) {
				size_t len = r[i].end - a < chunk ? r[i].end - a : chunk;
				err = kp_read(k, KP_PHYS, a, buf, len);
				if (err) {
					faults++;
					kp_error_destroy(err);
				} else {
					// Touch the data as a consumer would.
					sum += (unsigned char)buf[0] + (unsigned char)buf[len - 1];
				}
				total += len;
				a += len;
			}
		}
		times[p] = now_s() - t0;
	}
	// Median pass (insertion sort: at most 100 values).
	for (int i = 1; i < passes; i++)
		for (int j = i; j > 0 && times[j - 1] > times[j]; j--) {
			double t = times[j];
			times[j] = times[j - 1];
			times[j - 1] = t;
		}
	double secs = passes % 2 ? times[passes / 2]
				 : (times[passes / 2 - 1] + times[passes / 2]) / 2;
	printf("bytes=%" PRIu64 " seconds=%.4f mib_per_s=%.1f ranges=%zu faults=%" PRIu64
	       " open_ms=%.2f passes=%d sum=%" PRIu64 "\n",
	       total, secs, secs > 0 ? total / secs / (1 << 20) : 0.0, n, faults,
	       t_open * 1e3, passes, sum);
	kp_kernel_destroy(k);
	free(buf);
	return 0;
}
