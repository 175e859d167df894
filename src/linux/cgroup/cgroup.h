// SPDX-License-Identifier: MIT
// Control groups: the cgroup v2 path of a task, as /proc/PID/cgroup's
// "0::" line shows it (cgroup.c).
#ifndef KP_LINUX_CGROUP_H
#define KP_LINUX_CGROUP_H

#include <stdbool.h>

#include <kpeek/kpeek.h>

// The path of the default-hierarchy cgroup of the task at task ("/",
// "/system.slice/x.service"), from the root of the hierarchy, into buf (at
// most size - 1 bytes). *visible_ret: whether /proc shows the line at all
// (cgroup2 has been mounted: cgrp_dfl_visible; true when the kernel does
// not say).
struct kp_error *kp_lx_task_cgroup(struct kp_kernel *kernel, uint64_t task, char *buf, size_t size,
				   bool *visible_ret);

#endif
