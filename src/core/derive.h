// SPDX-License-Identifier: MIT
// Variables found by their shape when kallsyms does not name them
// (derive.c).
#ifndef KP_CORE_DERIVE_H
#define KP_CORE_DERIVE_H

#include <stdint.h>

struct kp_memory;
struct kp_symtab;
struct kp_types;

// Adds to st what it can find in the kernel image's virtual range
// [image_start, image_end) with the layouts of types; *added counts them.
// Fails only for out-of-memory.
struct kp_error *kp_derive_symbols(struct kp_memory *mem, struct kp_types *types,
				   uint64_t image_start, uint64_t image_end, struct kp_symtab *st,
				   unsigned *added);

#endif
