// SPDX-License-Identifier: MIT
// Loading a kernel's BTF into its types (btf_source.c).
#ifndef KP_CORE_BTF_SOURCE_H
#define KP_CORE_BTF_SOURCE_H

#include <stdbool.h>

struct kp_memory;
struct kp_symtab;
struct kp_types;

// btf_path (a --btf file) if given; else /sys/kernel/btf/vmlinux when live;
// else the .BTF section between the symbols __start_BTF and __stop_BTF,
// read through mem; without those symbols (a kallsyms of functions only),
// the first valid BTF whose header is found in the kernel image's virtual
// range [image_start, image_end).
struct kp_error *kp_btf_source_load(struct kp_memory *mem, struct kp_symtab *st, bool live,
				    const char *btf_path, uint64_t image_start,
				    uint64_t image_end, struct kp_types **ret);

#endif
