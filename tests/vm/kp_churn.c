// SPDX-License-Identifier: MIT
// Guest workload of the suite's live churn checks (tests/vm/suite/churn.py):
// "kp_churn" forks children ("kp_churn_child") and starts threads
// ("kp_churn_thr") that exit at once, in a loop, until killed, so that the
// task and thread lists change under every live walk. Built statically by
// tests/vm/mkinitrd. With an argument N: at most N forks a second (the
// default, 0, is as fast as it can).
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void *thread(void *arg)
{
	(void)arg;
	prctl(PR_SET_NAME, "kp_churn_thr", 0, 0, 0);
	return NULL;
}

int main(int argc, char **argv)
{
	long rate = argc > 1 ? atol(argv[1]) : 0;
	struct timespec pause = { 0, rate > 0 ? 1000000000L / rate : 0 };

	prctl(PR_SET_NAME, "kp_churn", 0, 0, 0);
	for (;;) {
		pid_t pid = fork();
		if (pid == 0) {
			prctl(PR_SET_NAME, "kp_churn_child", 0, 0, 0);
			_exit(0);
		}
		pthread_t t;
		if (pthread_create(&t, NULL, thread, NULL) == 0)
			pthread_join(t, NULL);
		if (pid > 0)
			waitpid(pid, NULL, 0);
		else
			perror("kp_churn: fork");
		if (pause.tv_nsec)
			nanosleep(&pause, NULL);
	}
}
