// SPDX-License-Identifier: MIT
// A process's memory: its mm_struct, its user memory read through its own
// page tables (user.c), and what /proc/PID/cmdline and environ show
// (cmdline.c).
#ifndef KP_LINUX_MM_H
#define KP_LINUX_MM_H

#include <kpeek/kpeek.h>

#include "types/layout.h"

// struct mm_struct as the walkers read it.
enum kp_lx_mm_member {
	KP_LX_MM_PGD,		// pgd_t *
	KP_LX_MM_ARG_START,
	KP_LX_MM_ARG_END,
	KP_LX_MM_ENV_START,
	KP_LX_MM_ENV_END,
	KP_LX_MM_N
};
extern const struct kp_struct_spec kp_lx_mm_spec;

// The mm_struct of the task at task; KP_ERR_INVALID naming the task when
// it has none (a kernel thread, or a task that exited).
struct kp_error *kp_lx_task_mm(struct kp_kernel *kernel, uint64_t task, uint64_t *ret);

// The largest argument or environment area kpeek reads (the kernel's own
// limit is a quarter of the stack rlimit; beyond this it is corrupt).
#define KP_LX_MAX_ARGS (32u << 20)

// The sum of every zone's low watermark (and boost), in pages, as
// si_mem_available() takes it (zones.c); false if it cannot be read.
bool kp_lx_low_watermarks(struct kp_kernel *kernel, int64_t *ret);

#endif
