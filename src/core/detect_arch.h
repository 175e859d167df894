// SPDX-License-Identifier: MIT
// Which architecture a dump is (detect_arch.c).
#ifndef KP_CORE_DETECT_ARCH_H
#define KP_CORE_DETECT_ARCH_H

#include <stdbool.h>

struct kp_arch;
struct kp_memory;
struct kp_source;
struct kp_vmcoreinfo;

// The architecture of the dump at path (src, its memory mem, its VMCOREINFO
// vi or NULL), checked against want (--arch; NULL if not given). For
// physical_only (no virtual segments and no VMCOREINFO: the kernel is yet
// to be located) whose file says nothing, the first vmcoreinfo page in its
// RAM. Fails if a CPU note is one the architecture cannot read.
struct kp_error *kp_detect_arch(struct kp_memory *mem, const struct kp_source *src,
				const struct kp_vmcoreinfo *vi, const char *path,
				const char *want, bool physical_only,
				const struct kp_arch **ret);

#endif
