// SPDX-License-Identifier: MIT
// Shared bits of the libFuzzer harnesses: each fuzz_*.c defines
// LLVMFuzzerTestOneInput for one parser.
#ifndef KP_FUZZ_H
#define KP_FUZZ_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#include <kpeek/kpeek.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

// Puts the input in an anonymous in-memory file and returns a path that opens
// it (/proc/self/fd/N), so file-based parsers see exactly these bytes.
static inline int fuzz_memfd(const uint8_t *data, size_t size, char path[64])
{
	int fd = memfd_create("fuzz", MFD_CLOEXEC);
	if (fd < 0)
		return -1;
	size_t off = 0;
	while (off < size) {
		ssize_t n = write(fd, data + off, size - off);
		if (n <= 0) {
			close(fd);
			return -1;
		}
		off += n;
	}
	snprintf(path, 64, "/proc/self/fd/%d", fd);
	return fd;
}

// Errors are the expected outcome for most inputs; drop them.
static inline void fuzz_drop(struct kp_error *err)
{
	kp_error_destroy(err);
}

// True if the call succeeded; frees its error otherwise.
static inline bool fuzz_ok(struct kp_error *err)
{
	kp_error_destroy(err);
	return !err;
}

#endif
