// SPDX-License-Identifier: MIT
// Layouts by C type name for the library's own helpers (layout.c); the
// public kp_member_offset() and kp_type_size() are in kpeek.h.
#ifndef KP_LANG_LAYOUT_H
#define KP_LANG_LAYOUT_H

#include <kpeek/kpeek.h>

// kp_member_offset() for layouts that may not exist in this kernel: false
// instead of an error, and a type the kernel's BTF lacks is not looked for
// in the modules' (which a miss would load).
bool kp_member_probe(struct kp_kernel *kernel, const char *type, const char *member,
		     uint64_t *offset_ret, uint64_t *size_ret);

#endif
