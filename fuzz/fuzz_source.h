// SPDX-License-Identifier: MIT
// The shape every dump-format harness shares: the input as a file, probed
// and opened by one source backend, then reads at the start and end of
// every range it mapped (first 64 ranges).
#ifndef KP_FUZZ_SOURCE_H
#define KP_FUZZ_SOURCE_H

#include "fuzz.h"
#include "format/source.h"
#include "io/file.h"
#include "io/memory.h"

static inline int fuzz_source(const struct kp_source_ops *ops, const uint8_t *data, size_t size)
{
	char path[64];
	int fd = fuzz_memfd(data, size, path);
	if (fd < 0)
		return 0;
	struct kp_file *file = NULL;
	struct kp_memory *mem = NULL;
	struct kp_source src = { 0 };
	if (!kp_file_open(path, &file) && !kp_memory_create(&mem) && ops->probe(data, size) &&
	    fuzz_ok(ops->open(file, mem, &src))) {
		for (int space = KP_VIRT; space <= KP_PHYS; space++) {
			const struct kp_range *r;
			size_t n = kp_memory_ranges(mem, space, &r);
			for (size_t i = 0; i < n && i < 64; i++) {
				static uint8_t buf[8192];
				fuzz_drop(kp_memory_read(mem, space, r[i].start, buf, sizeof(buf)));
				fuzz_drop(kp_memory_read(mem, space, r[i].end - 8, buf, 16));
			}
		}
		kp_source_deinit(&src);
	}
	kp_memory_destroy(mem);
	kp_file_destroy(file);
	close(fd);
	return 0;
}

#endif
