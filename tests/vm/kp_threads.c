// SPDX-License-Identifier: MIT
// Guest workload for the QEMU suite: one process "kp_threads" with three named
// threads that sleep, so that thread listings have something to show (busybox
// cannot create threads). Built statically by tests/vm/mkinitrd.
#include <pthread.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <unistd.h>

static void *sleeper(void *arg)
{
	char name[16];

	snprintf(name, sizeof(name), "kp_thr_%d", (int)(long)arg);
	prctl(PR_SET_NAME, name, 0, 0, 0);
	for (;;)
		pause();
	return NULL;
}

int main(void)
{
	pthread_t t;

	prctl(PR_SET_NAME, "kp_threads", 0, 0, 0);
	for (long i = 1; i <= 3; i++)
		if (pthread_create(&t, NULL, sleeper, (void *)i) != 0) {
			perror("kp_threads: pthread_create");
			return 1;
		}
	for (;;)
		pause();
}
