// SPDX-License-Identifier: MIT
// kp_rusage FILE COMMAND [ARGS...]: runs COMMAND and writes the peak resident
// set of it and of every descendant it waited for (wait4()'s ru_maxrss, KiB:
// what GNU time's %M reports) to FILE; exits as COMMAND did (128+signal when
// killed). The guest's kp() runs every live kpeek through it, so the suite can
// hold each command to the memory budget of issue 38 on the live kernel
// (busybox has no time -v). Built statically by tests/vm/mkinitrd.
#include <stdio.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	struct rusage ru;
	pid_t pid;
	int status;
	FILE *f;

	if (argc < 3) {
		fprintf(stderr, "usage: kp_rusage FILE COMMAND [ARGS...]\n");
		return 2;
	}
	pid = fork();
	if (pid < 0) {
		perror("kp_rusage: fork");
		return 126;
	}
	if (pid == 0) {
		execvp(argv[2], argv + 2);
		perror(argv[2]);
		_exit(127);
	}
	if (wait4(pid, &status, 0, &ru) < 0) {
		perror("kp_rusage: wait4");
		return 126;
	}
	f = fopen(argv[1], "w");
	if (f) {
		fprintf(f, "%ld\n", ru.ru_maxrss);
		fclose(f);
	}
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
