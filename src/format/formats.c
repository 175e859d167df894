// SPDX-License-Identifier: MIT
// The list of dump formats kpeek can open, and the probe that picks one for
// a file. Adding a format: write src/format/NAME.c with its struct
// kp_source_ops (source.h), declare the ops in source.h, add them to
// formats[] below and name the format in the error of kp_source_probe_open().
// Raw images have no header to recognise, so they are not in the list: the
// caller asks for them (--raw, kp_raw_open()).
#include <errno.h>
#include <stdio.h>
#include <unistd.h>

#include "format/source.h"
#include "util/error.h"

// In the order they are probed: the first whose probe() accepts the head of
// the file opens it.
static const struct kp_source_ops *const formats[] = {
	&kp_elf_core_ops,	// ELF cores: /proc/kcore, kdump vmcores, QEMU dump-guest-memory
	&kp_kdump_ops,		// kdump-compressed (makedumpfile), flattened or not
	&kp_lime_ops,		// LiME and AVML images
};

struct kp_error *kp_source_probe_open(struct kp_file *file, struct kp_memory *mem,
				      struct kp_source *src)
{
	uint8_t head[4096];
	ssize_t n = pread(file->fd, head, sizeof(head), 0);
	if (n < 0)
		return kp_error_os(errno, "%s", file->path);
	if (n == 0)
		return kp_error_create(KP_ERR_FORMAT, "%s: empty file, not a dump", file->path);

	for (size_t i = 0; i < sizeof(formats) / sizeof(formats[0]); i++) {
		if (formats[i]->probe(head, n))
			return formats[i]->open(file, mem, src);
	}
	char magic[3 * 8 + 1] = "";
	size_t pos = 0;
	for (ssize_t i = 0; i < n && i < 8; i++)
		pos += snprintf(magic + pos, sizeof(magic) - pos, "%s%02x", i ? " " : "",
				head[i]);
	// Raw images have no header to probe: say how to open one.
	return kp_error_create(KP_ERR_FORMAT,
			       "%s: not an ELF core, kdump-compressed dump, LiME or AVML image "
			       "(starts with %s); use --raw[=BASE] for a raw physical memory image",
			       file->path, magic);
}
