// SPDX-License-Identifier: MIT
// Raw physical memory images (dd of /dev/mem or /dev/fmem, LiME format=padded,
// a hypervisor's RAM file): the whole file is physical memory from a base
// address. Nothing identifies such a file, so there is no probe: the caller asks
// for it (--raw[=BASE]).
#include <inttypes.h>
#include <string.h>

#include "format/source.h"
#include "util/error.h"

struct kp_error *kp_raw_open(struct kp_file *file, uint64_t base, struct kp_memory *mem,
			     struct kp_source *src)
{
	if (!file->size)
		return kp_error_create(KP_ERR_UNSUPPORTED,
				       "%s: a raw memory image must be a regular, non-empty file",
				       file->path);
	// x86-64 MAXPHYADDR is at most 52 bits.
	if (base >= (1ULL << 52) || file->size > (1ULL << 52) - base)
		return kp_error_create(KP_ERR_INVALID,
				       "%s: raw image of 0x%" PRIx64 " bytes at base 0x%" PRIx64
				       " runs past the end of the physical address space",
				       file->path, file->size, base);
	struct kp_error *err = kp_memory_add(mem, KP_PHYS, base, file->size, kp_file_read_fn,
					     file, 0);
	if (err)
		return err;
	memset(src, 0, sizeof(*src));
	src->kind = "raw physical memory";
	return NULL;
}
