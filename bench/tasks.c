// SPDX-License-Identifier: MIT
// tasks: the floor under `kpeek ps`: open the dump and read the given
// task_structs, nothing else. bench/run compares a fresh `kpeek ps` with a
// fresh run of this on the addresses ps printed (the goal: ps of 2,000
// tasks within 2x of reading those task_structs).
//   tasks DUMP SIZE < ADDRESSES     (one hex address per line)
//   tasks=N bytes=N open_ms=M read_ms=M
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <kpeek/kpeek.h>

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: tasks DUMP SIZE < ADDRESSES\n");
		return 2;
	}
	size_t size = strtoull(argv[2], NULL, 0);
	uint64_t *addrs = NULL;
	size_t n = 0, cap = 0;
	char line[64];
	while (fgets(line, sizeof(line), stdin)) {
		if (n == cap) {
			cap = cap ? 2 * cap : 1024;
			addrs = realloc(addrs, cap * sizeof(*addrs));
			if (!addrs)
				return 1;
		}
		addrs[n++] = strtoull(line, NULL, 16);
	}
	char *buf = malloc(size ? size : 1);
	if (!buf || !size)
		return 1;
	double t0 = now_ms();
	KP_OPTS(kp_open_options, o, .core = argv[1]);
	struct kp_kernel *k;
	struct kp_error *err = kp_kernel_open(&o, &k);
	if (err) {
		fprintf(stderr, "tasks: %s\n", kp_error_message(err));
		return 1;
	}
	double t1 = now_ms();
	uint64_t bytes = 0, sum = 0;
	for (size_t i = 0; i < n; i++) {
		err = kp_read(k, KP_VIRT, addrs[i], buf, size);
		if (err) {
			fprintf(stderr, "tasks: task_struct at 0x%" PRIx64 ": %s\n", addrs[i],
				kp_error_message(err));
			return 1;
		}
		bytes += size;
		sum += (unsigned char)buf[0];
	}
	double t2 = now_ms();
	printf("tasks=%zu bytes=%" PRIu64 " open_ms=%.2f read_ms=%.2f sum=%" PRIu64 "\n", n,
	       bytes, t1 - t0, t2 - t1, sum);
	kp_kernel_destroy(k);
	free(buf);
	free(addrs);
	return 0;
}
