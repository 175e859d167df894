// SPDX-License-Identifier: MIT
// ptime: runs a command several times and prints its wall-clock times and
// peak RSS, measured with wait4() (the same rusage GNU time's %M reports).
//   ptime [-n RUNS] [-w WARMUP] [-o FILE] [-i FILE] -- COMMAND [ARGS...]
// stdout of the first measured run goes to FILE (-o, default /dev/null), the
// others' to /dev/null; stderr is kept. stdin comes from FILE (-i, e.g. a crash
// command script) or /dev/null. Prints one line:
//   runs=N rc=RC median_ms=M min_ms=M max_ms=M cpu_ms=C maxrss_kb=K times_ms=a,b,c
// cpu_ms is the median user+system CPU time (wall time suffers from other
// load on a shared machine; CPU time much less).
// rc is the exit status of the last run (128+signal if killed); maxrss_kb the
// largest peak RSS of any run. Static build: it also runs inside the guest.
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static double median(double *v, int n);

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static int run_once(char **argv, const char *in, const char *out, double *ms_ret,
		    double *cpu_ret, long *rss_ret)
{
	double t0 = now_ms();
	pid_t pid = fork();
	if (pid < 0) {
		perror("ptime: fork");
		exit(2);
	}
	if (pid == 0) {
		int fi = open(in, O_RDONLY);
		int fo = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fi < 0 || fo < 0) {
			fprintf(stderr, "ptime: cannot open %s: %s\n", fi < 0 ? in : out,
				strerror(errno));
			_exit(126);
		}
		dup2(fi, 0);
		dup2(fo, 1);
		close(fi);
		close(fo);
		execvp(argv[0], argv);
		fprintf(stderr, "ptime: cannot run %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	int status;
	struct rusage ru;
	while (wait4(pid, &status, 0, &ru) < 0) {
		if (errno != EINTR) {
			perror("ptime: wait4");
			exit(2);
		}
	}
	*ms_ret = now_ms() - t0;
	*rss_ret = ru.ru_maxrss;
	*cpu_ret = (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 +
		   (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3;
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}

static double median(double *v, int n)
{
	double s[1000];
	memcpy(s, v, sizeof(double) * n);
	qsort(s, n, sizeof(double), cmp_double);
	return n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

int main(int argc, char **argv)
{
	int runs = 5, warmup = 1, opt;
	const char *in = "/dev/null", *out = "/dev/null";
	while ((opt = getopt(argc, argv, "+n:w:o:i:")) != -1) {
		switch (opt) {
		case 'n':
			runs = atoi(optarg);
			break;
		case 'w':
			warmup = atoi(optarg);
			break;
		case 'o':
			out = optarg;
			break;
		case 'i':
			in = optarg;
			break;
		default:
			return 2;
		}
	}
	if (optind >= argc || runs < 1 || runs > 1000 || warmup < 0) {
		fprintf(stderr, "usage: ptime [-n RUNS] [-w WARMUP] [-o FILE] [-i FILE] -- CMD...\n");
		return 2;
	}
	char **cmd = argv + optind;
	double ms[1000], cpu[1000];
	long rss, maxrss = 0;
	int rc = 0;
	for (int i = 0; i < warmup; i++)
		rc = run_once(cmd, in, "/dev/null", &ms[0], &cpu[0], &rss);
	for (int i = 0; i < runs; i++) {
		rc = run_once(cmd, in, i == 0 ? out : "/dev/null", &ms[i], &cpu[i], &rss);
		if (rss > maxrss)
			maxrss = rss;
	}
	double sorted[1000];
	memcpy(sorted, ms, sizeof(double) * runs);
	qsort(sorted, runs, sizeof(double), cmp_double);
	printf("runs=%d rc=%d median_ms=%.2f min_ms=%.2f max_ms=%.2f cpu_ms=%.2f maxrss_kb=%ld times_ms=",
	       runs, rc, median(ms, runs), sorted[0], sorted[runs - 1], median(cpu, runs), maxrss);
	for (int i = 0; i < runs; i++)
		printf("%s%.2f", i ? "," : "", ms[i]);
	printf("\n");
	return 0;
}
