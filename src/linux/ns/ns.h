// SPDX-License-Identifier: MIT
// Namespaces: the ones a task is in, as /proc/PID/ns names them (ns.c).
#ifndef KP_LINUX_NS_H
#define KP_LINUX_NS_H

#include <kpeek/kpeek.h>

// The inode numbers (ns_common.inum) of the namespaces of a task whose
// nsproxy, cred->user_ns and active PID namespace (the one its struct pid
// was allocated in) are given, into ret[KP_NS_*]: 0 for a namespace the
// kernel does not have (time before 5.6) or that is not there (a NULL
// nsproxy: the task exited).
struct kp_error *kp_lx_namespaces(struct kp_kernel *kernel, uint64_t nsproxy, uint64_t user_ns,
				  uint64_t pid_ns, uint64_t ret[KP_NS_COUNT]);

#endif
