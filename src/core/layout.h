// SPDX-License-Identifier: MIT
// What the walkers of kernel objects (src/linux, src/checks) ask of a
// kernel's types: struct layouts from their member tables, enumerator
// values, and per-CPU areas. Loads the kernel's BTF on first use.
#ifndef KP_CORE_LAYOUT_H
#define KP_CORE_LAYOUT_H

#include <kpeek/kpeek.h>

#include "types/layout.h"

// kp_types_struct_layout() over the kernel's types.
struct kp_error *kp_kernel_layout(struct kp_kernel *kernel, const struct kp_struct_spec *spec,
				  const struct kp_struct_layout **ret);
// Several layouts at once (ret[i] of specs[i]); the first error.
struct kp_error *kp_kernel_layouts(struct kp_kernel *kernel, const struct kp_struct_spec *const *specs,
				   size_t n, const struct kp_struct_layout **ret);
// The span of the struct at address (bytes l->lo..l->hi) into buf, which
// holds size bytes: KP_ERR_UNSUPPORTED if the span does not fit, a read
// error naming the struct and address.
struct kp_error *kp_kernel_read_struct(struct kp_kernel *kernel, const struct kp_struct_layout *l,
				       uint64_t address, void *buf, size_t size);
// kp_types_member_probe() over the kernel's types.
bool kp_kernel_member_probe(struct kp_kernel *kernel, const char *type, const char *member,
			    uint64_t *offset_ret, uint64_t *size_ret);
// The value of the enumerator name (MOD_TEXT, WORKER_ID_LEN) in the
// kernel's BTF; false if the kernel has no such enumerator.
bool kp_kernel_enum_value(struct kp_kernel *kernel, const char *name, uint64_t *ret);
// The value of enumerator in the kernel's enum name (no "enum "): NR_SHMEM
// of node_stat_item; false if it has no such enum or enumerator.
bool kp_kernel_enum_value_in(struct kp_kernel *kernel, const char *name, const char *enumerator,
			     uint64_t *ret);
// The name of value in the kernel's enum name (no "enum "): "BPF_PROG_TYPE_KPROBE";
// NULL if there is none.
const char *kp_kernel_enum_name(struct kp_kernel *kernel, const char *name, uint64_t value);
// __per_cpu_offset[cpu]: what a per-CPU variable's address is offset by in
// that CPU's area. KP_ERR_INVALID for a CPU that is not possible.
struct kp_error *kp_kernel_per_cpu_offset(struct kp_kernel *kernel, uint64_t cpu, uint64_t *ret);
// CPU cpu's copy of the per-CPU struct l at ptr (a __percpu pointer) read
// into buf; *possible_ret false (and buf untouched) for a CPU that is not
// possible, which is no error.
struct kp_error *kp_kernel_read_per_cpu_struct(struct kp_kernel *kernel, const struct kp_struct_layout *l,
					       uint64_t ptr, uint32_t cpu, void *buf, size_t size,
					       bool *possible_ret);

#endif
