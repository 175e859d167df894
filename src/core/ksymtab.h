// SPDX-License-Identifier: MIT
// Exported variables from the kernel's __ksymtab tables, for a kallsyms of
// functions only (ksymtab.c).
#ifndef KP_CORE_KSYMTAB_H
#define KP_CORE_KSYMTAB_H

#include <stdint.h>

struct kp_memory;
struct kp_symtab;

// How much of the kernel image after its text is scanned for the tables
// when kallsyms does not mark rodata (Debian's rodata is 5-12 MiB).
#define KP_KSYMTAB_MAX_RODATA (32ULL << 20)

// Adds to st, as symbols of type D, B or R, the exported variables of the
// tables found in rodata (between st's __start_rodata and __end_rodata)
// whose values lie in [image_start, image_end); names st already has are
// left alone. *added counts them. Fails only for out-of-memory; no table
// found adds nothing.
struct kp_error *kp_ksymtab_add_variables(struct kp_memory *mem, uint64_t image_start,
					  uint64_t image_end, struct kp_symtab *st,
					  unsigned *added);

#endif
