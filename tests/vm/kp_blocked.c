// SPDX-License-Identifier: MIT
// The blocked role of kp_proc [kp_blocked] (issue 37: kpeek report lists
// the tasks in D state and since when they have not run): a process that
// stays in D state for ever. It vforks a child that neither execs nor
// exits; the parent then waits for it in wait_for_vfork_done(), killable
// (TASK_KILLABLE, 5.10's wait_for_completion_killable(); 6.1+ adds
// TASK_FREEZABLE), which /proc/PID/stat shows as D. It never runs again,
// so its se.exec_start (/proc/PID/sched) holds still for the truth.
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "kp_proc.h"

void role_blocked(void)
{
	prctl(PR_SET_NAME, "kp_blocked", 0, 0, 0);
	ready("blocked %d\n", getpid());
	// The child runs on the parent's memory until it execs or exits: it
	// only calls pause(), never returns.
	if (vfork() == 0)
		for (;;)
			pause();
	_exit(1);	// vfork failed, or the child went: the suite sees no D task
}
