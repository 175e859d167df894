// SPDX-License-Identifier: MIT
// Opening one file with one source backend (elf_core, kdump, lime), below
// kp_kernel_open, for tests of the formats themselves.
#ifndef KP_TEST_OPENSRC_H
#define KP_TEST_OPENSRC_H

#include "io/file.h"
#include "io/memory.h"
#include "format/source.h"

struct kp_opened_source {
	struct kp_file *file;
	struct kp_memory *mem;
	struct kp_source src;
};

// Opens path with ops into *o. On failure the file and memory are closed and
// NULL, and o->src is as ops->open left it (its contract: untouched), so a
// test can check that.
struct kp_error *kp_test_open_source(const struct kp_source_ops *ops, const char *path,
				     struct kp_opened_source *o);
void kp_test_close_source(struct kp_opened_source *o);

#endif
