// SPDX-License-Identifier: MIT
// Finding the kernel in dumps that do not say where it is: physical-only
// dumps without a VMCOREINFO note (locate.c; the architecture's part is its
// kp_arch.locator_*).
#ifndef KP_CORE_LOCATE_H
#define KP_CORE_LOCATE_H

#include "arch/arch.h"
#include "format/source.h"

// For a source with physical memory only and no VMCOREINFO note: scans
// physical memory for the vmcoreinfo page and has arch check each candidate
// against the CPU registers; rejects stale candidates and, when none is
// left, has arch derive everything from the registers, the kernel image and
// the symbol files in opts. With only, the page at physical *only is the one
// candidate (no scan, no derivation): KP_ERR_NOT_FOUND if it is not a
// vmcoreinfo page the architecture accepts. Fills *ret on success.
struct kp_error *kp_locate_kernel(struct kp_memory *mem, const struct kp_source *src,
				  const struct kp_arch *arch, const struct kp_open_options *opts,
				  const uint64_t *only, struct kp_locate_result *ret);

// Finds the next plausible vmcoreinfo page at or after physical *pa (a page
// boundary): on success *text_ret is a malloc'ed NUL-terminated copy and *pa
// its address. KP_ERR_NOT_FOUND when there is none.
struct kp_error *kp_locate_vmcoreinfo_page(struct kp_memory *mem, uint64_t *pa,
					   char **text_ret, size_t *len_ret);

#endif
