// SPDX-License-Identifier: MIT
// Finding the kernel's kallsyms tables in its image by their shape, for
// dumps whose VMCOREINFO does not name them (kallsyms_scan.c).
#ifndef KP_SYMBOLS_KALLSYMS_SCAN_H
#define KP_SYMBOLS_KALLSYMS_SCAN_H

#include "symbols/kallsyms.h"

// What a scan of the kernel image found.
struct kp_image_scan {
	struct kp_kallsyms_tables tables;
	bool has_tables;
	uint64_t banner;	// "Linux version " in the image, 0 if not seen
	unsigned candidates;	// token signatures followed up
};

// Reads virtual [start, end) through mem (unmapped parts skipped) for the
// kallsyms tables and the banner; the tables' addresses must lie at or
// above min_addr (the kernel's half of the address space). Fails only for
// out-of-memory.
struct kp_error *kp_locate_scan_image(struct kp_memory *mem, uint64_t start, uint64_t end,
				      uint64_t min_addr, struct kp_image_scan *ret);

// The kallsyms tables in virtual [start, end); KP_ERR_NOT_FOUND if none.
struct kp_error *kp_locate_kallsyms(struct kp_memory *mem, uint64_t start, uint64_t end,
				    uint64_t min_addr, struct kp_kallsyms_tables *ret);

#endif
