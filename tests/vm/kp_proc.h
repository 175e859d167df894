// SPDX-License-Identifier: MIT
// What kp_proc.c, kp_net.c and kp_truth.c share: paths, the fd of the
// ready pipe, the readings' entry points and the roles' shared steps.
#ifndef KP_PROC_H
#define KP_PROC_H

#define SELF "/usr/bin/kp_proc"
#define READY_FD 200 // where a role finds the pipe to start, across exec
#define WORK "/tmp/kp_proc"
#define NS_MNT "/tmp/kp ns"
#define NS_RO "/tmp/kp_ro"

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x00000080
#endif
#ifndef PR_CAP_AMBIENT
#define PR_CAP_AMBIENT 47
#define PR_CAP_AMBIENT_RAISE 2
#endif

// kp_proc truth DIR TAG PID...: every process's /proc files the process
// checks compare (tests/vm/suite/process.py), as proc.TAG.PID.*.
int kp_truth(const char *dir, const char *tag, int npids, char **pids);
// kp_proc sys DIR TAG [NSPID...]: the system's (meminfo, slabinfo,
// interrupts, net, socket fds, interfaces), as sys.TAG.*.
int kp_sys(const char *dir, const char *tag, int npids, char **pids);

// The roles' shared steps (kp_proc.c).
void ready(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void fail(const char *role, const char *what) __attribute__((noreturn));
void sleep_forever(void) __attribute__((noreturn));

// The net role (kp_net.c): sockets of every family and kind the system
// checks compare, then sleeps.
void role_net(void);
// The blocked role (kp_blocked.c): in D state for ever, on a vfork child.
void role_blocked(void) __attribute__((noreturn));

#endif
