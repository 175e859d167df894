// SPDX-License-Identifier: MIT
// Variables found by their shape when kallsyms does not name them
// (derive.c).
#ifndef KP_CORE_DERIVE_H
#define KP_CORE_DERIVE_H

#include <stdint.h>

struct kp_arch;
struct kp_arch_ctx;
struct kp_memory;
struct kp_symtab;
struct kp_types;

// Adds to st what it can find in the kernel image's virtual range
// [image_start, image_end) with the layouts of types and the code decoding
// of arch; *added counts them. Fails only for out-of-memory.
struct kp_error *kp_derive_symbols(struct kp_memory *mem, const struct kp_arch *arch,
				   const struct kp_arch_ctx *actx, struct kp_types *types,
				   uint64_t image_start, uint64_t image_end, struct kp_symtab *st,
				   unsigned *added);

// The lowest linux_banner of release and version in [lo, hi), 0 if none
// (derive.c).
uint64_t kp_derive_banner(struct kp_memory *mem, const char *release, const char *version,
			  uint64_t lo, uint64_t hi);

// derive_refs.c: the variables kp_arch.data_refs finds in the code of the
// functions that use them, as kp_derive_symbols() adds them.
struct kp_error *kp_derive_refs(struct kp_memory *mem, const struct kp_arch *arch,
				struct kp_types *types, uint64_t image_start, uint64_t image_end,
				struct kp_symtab *st, unsigned *added);

#endif
