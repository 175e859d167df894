// SPDX-License-Identifier: MIT
// kdumpfile: libkdumpfile and libkpeek on the same kdump-compressed file,
// the measurements behind doc/dumps.md ("Why kpeek has its own kdump
// reader"). Not built by make bench (it needs libkdumpfile-dev):
//   make -C bench ../build/bench/kdumpfile
//   build/bench/kdumpfile [-n READS] DUMP [KERNEL_ADDRESS]
// For each library: whether it opens DUMP (and in how long), reads of all of
// physical memory in 1 MiB pieces (every piece either reads, or fails for
// both: a hole), READS random 8-byte physical reads (the same addresses for
// both, from the pieces that read), and an 8-byte read of KERNEL_ADDRESS
// (default: init_task, as libkpeek finds it) through the kernel's page
// tables. Times are the best of 3 passes, from a warm page cache.
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <kpeek/kpeek.h>
#include <libkdumpfile/kdumpfile.h>

#define PIECE (1u << 20)

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

// Physical reads through one library: 0 on success.
struct lib {
	const char *name;
	int (*read)(void *ctx, uint64_t addr, void *buf, size_t len);
	void *ctx;
};

static int kp_phys(void *ctx, uint64_t addr, void *buf, size_t len)
{
	struct kp_error *err = kp_read(ctx, KP_PHYS, addr, buf, len);
	kp_error_destroy(err);
	return err != NULL;
}

static int kdf_phys(void *ctx, uint64_t addr, void *buf, size_t len)
{
	size_t n = len;
	return kdump_read(ctx, KDUMP_MACHPHYSADDR, addr, buf, &n) != KDUMP_OK || n != len;
}

int main(int argc, char **argv)
{
	long nreads = 200000;
	int opt;
	while ((opt = getopt(argc, argv, "n:")) != -1) {
		if (opt != 'n')
			return 2;
		nreads = atol(optarg);
	}
	if (optind >= argc || nreads < 1) {
		fprintf(stderr, "usage: kdumpfile [-n READS] DUMP [KERNEL_ADDRESS]\n");
		return 2;
	}
	const char *path = argv[optind];

	// Opening.
	double t = now();
	KP_OPTS(kp_open_options, o, .core = path);
	struct kp_kernel *k;
	struct kp_error *err = kp_kernel_open(&o, &k);
	double kp_open = now() - t;
	if (err) {
		fprintf(stderr, "libkpeek: %s\n", kp_error_message(err));
		return 1;
	}
	// Not comparable with libkdumpfile's open: kp_kernel_open() also finds
	// the kernel (VMCOREINFO, page tables, kallsyms).
	printf("libkpeek:     kp_kernel_open %.1f ms (the file, then the kernel in it)\n",
	       kp_open * 1e3);
	int fd = open(path, O_RDONLY);
	if (fd < 0) {
		perror(path);
		return 1;
	}
	t = now();
	kdump_ctx_t *ctx = kdump_new();
	kdump_status st = ctx ? kdump_open_fd(ctx, fd) : KDUMP_ERR_SYSTEM;
	double kdf_open = now() - t;
	if (st != KDUMP_OK) {
		printf("libkdumpfile: open fails: %s\n", ctx ? kdump_get_err(ctx) : "kdump_new");
		return 0;
	}
	printf("libkdumpfile: kdump_open_fd %.1f ms (the file)\n", kdf_open * 1e3);

	// A kernel address through the page tables.
	uint64_t kaddr = 0;
	if (optind + 1 < argc) {
		kaddr = strtoull(argv[optind + 1], NULL, 0);
	} else {
		struct kp_symbol sym;
		if ((err = kp_symbol_by_name(k, "init_task", &sym))) {
			fprintf(stderr, "libkpeek: %s\n", kp_error_message(err));
			return 1;
		}
		kaddr = sym.address;
	}
	uint64_t v = 0;
	err = kp_read(k, KP_VIRT, kaddr, &v, 8);
	printf("libkpeek:     read 0x%" PRIx64 ": %s\n", kaddr,
	       err ? kp_error_message(err) : "ok");
	kp_error_destroy(err);
	kdump_set_string_attr(ctx, KDUMP_ATTR_OSTYPE, "linux");
	size_t n = 8;
	st = kdump_read(ctx, KDUMP_KVADDR, kaddr, &v, &n);
	printf("libkdumpfile: read 0x%" PRIx64 ": %s\n", kaddr,
	       st == KDUMP_OK ? "ok" : kdump_get_err(ctx));

	// The pieces of physical memory both read, up to the last one kpeek has.
	struct lib libs[2] = { { "libkpeek", kp_phys, k }, { "libkdumpfile", kdf_phys, ctx } };
	char *buf = malloc(PIECE);
	size_t cap = 1024, npieces = 0;
	uint64_t *pieces = malloc(cap * sizeof(*pieces));
	uint64_t holes = 0;
	for (uint64_t a = 0, misses = 0; misses < 4096; a += PIECE) {
		int bad0 = libs[0].read(libs[0].ctx, a, buf, PIECE);
		int bad1 = libs[1].read(libs[1].ctx, a, buf, PIECE);
		if (bad0 != bad1) {
			printf("0x%" PRIx64 ": %s reads it, %s does not\n", a,
			       bad0 ? libs[1].name : libs[0].name, bad0 ? libs[0].name : libs[1].name);
			return 1;
		}
		if (bad0) {
			misses++;
			holes++;
			continue;
		}
		misses = 0;
		if (npieces == cap)
			pieces = realloc(pieces, (cap *= 2) * sizeof(*pieces));
		pieces[npieces++] = a;
	}
	printf("memory: %zu MiB in 1 MiB pieces both read\n", npieces);

	// Reading all of it, then random 8-byte reads.
	uint64_t *addrs = malloc(nreads * sizeof(*addrs));
	srand(1);
	for (long i = 0; i < nreads; i++)
		addrs[i] = pieces[rand() % npieces] + ((uint64_t)rand() % (PIECE / 8)) * 8;
	for (int l = 0; l < 2; l++) {
		double best_all = 1e9, best_rand = 1e9;
		for (int pass = 0; pass < 3; pass++) {
			t = now();
			for (size_t i = 0; i < npieces; i++)
				libs[l].read(libs[l].ctx, pieces[i], buf, PIECE);
			double dt = now() - t;
			best_all = dt < best_all ? dt : best_all;
			t = now();
			for (long i = 0; i < nreads; i++)
				libs[l].read(libs[l].ctx, addrs[i], &v, 8);
			dt = now() - t;
			best_rand = dt < best_rand ? dt : best_rand;
		}
		printf("%-13s all memory %.0f MiB/s (%.2f s); %ld random 8-byte reads %.2f us each\n",
		       libs[l].name, npieces / best_all, best_all, nreads, best_rand / nreads * 1e6);
	}
	kdump_free(ctx);
	kp_kernel_destroy(k);
	free(buf);
	free(pieces);
	free(addrs);
	return 0;
}
