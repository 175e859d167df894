// SPDX-License-Identifier: MIT
// A read-only input file, read with pread (never mapped: a dump truncated
// under a mapping raises SIGBUS, and mapped pages stay in the RSS). Small
// reads of regular files go through a small block cache. Never opened for
// writing.
#ifndef KP_FILE_H
#define KP_FILE_H

#include <sys/types.h>

#include <kpeek/kpeek.h>
#include "io/memory.h"

struct kp_file {
	char *path;
	int fd;
	uint64_t size;		// st_size; 0 for /proc files, whose size is not meaningful
	// Regular files only: /proc/kcore and devices change under us.
	struct kp_file_cache *cache;
	// /proc files: opened again after a fork (file.c says why), checked to
	// be the same file.
	bool reopen;
	unsigned generation;
	dev_t dev;
	ino_t ino;
};

struct kp_error *kp_file_open(const char *path, struct kp_file **ret);
void kp_file_destroy(struct kp_file *file);
// Reads exactly len bytes at offset; a short read fails with KP_ERR_FORMAT
// naming the file and offset ("truncated"), also when the file shrank since
// it was opened.
struct kp_error *kp_file_read(struct kp_file *file, uint64_t offset, void *buf,
			      size_t len);
// kp_read_fn over a struct kp_file (arg).
kp_read_fn kp_file_read_fn;
// Reads a whole small file (e.g. /proc/kallsyms, BTF) into a malloc'ed buffer
// (NUL-terminated; *len_ret excludes the NUL).
struct kp_error *kp_read_whole_file(const char *path, char **buf_ret, size_t *len_ret);

#endif
