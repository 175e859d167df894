// SPDX-License-Identifier: MIT
// Reading a kernel's memory: the public kp_read*() and kp_vtop(), and the
// library's partial reads. All go through the one kp_memory of the handle
// (io/memory.c); none allocates on success.
#include <inttypes.h>
#include <string.h>

#include "arch/arch.h"
#include "core/kernel_impl.h"
#include "io/memory.h"
#include "util/error.h"
#include "util/le.h"
#include "util/opts.h"

size_t kp_kernel_read_partial(struct kp_kernel *k, uint64_t address, void *buf, size_t size,
			      bool stop_at_nul)
{
	return kp_memory_read_partial(k->mem, KP_VIRT, address, buf, size, stop_at_nul);
}

size_t kp_kernel_ranges(struct kp_kernel *k, enum kp_space space, const struct kp_range **ret)
{
	return kp_memory_ranges(k->mem, space, ret);
}

struct kp_error *kp_read(struct kp_kernel *k, enum kp_space space, uint64_t address,
			 void *buf, size_t len)
{
	return kp_memory_read(k->mem, space, address, buf, len);
}

// A live kernel writes a value while /proc/kcore copies it, and the copy
// need not be one load: two reads that agree are a value that was there
// whole. Bounded: a value that never reads the same twice is an error.
#define STABLE_TRIES 16

struct kp_error *kp_kernel_read_whole(struct kp_kernel *k, uint64_t address, void *buf,
				      size_t len)
{
	uint8_t again[KP_READ_WHOLE_MAX];
	struct kp_error *err = kp_memory_read(k->mem, KP_VIRT, address, buf, len);
	if (err || !k->src.live || len > sizeof(again))
		return err;
	for (int i = 0; i < STABLE_TRIES; i++) {
		if ((err = kp_memory_read(k->mem, KP_VIRT, address, again, len)))
			return err;
		if (!memcmp(again, buf, len))
			return NULL;
		memcpy(buf, again, len);
	}
	return kp_error_create(KP_ERR_UNSUPPORTED,
			       "the value at 0x%" PRIx64 " changed between every two of %d reads: "
			       "it cannot be read whole", address, STABLE_TRIES + 1);
}

#define DEFINE_READ(bits)                                                          \
	struct kp_error *kp_read_u##bits(struct kp_kernel *k, uint64_t address,    \
					 uint##bits##_t *ret)                      \
	{                                                                          \
		uint8_t b[bits / 8];                                               \
		struct kp_error *err = kp_memory_read(k->mem, KP_VIRT, address,    \
						      b, sizeof(b));               \
		if (!err)                                                          \
			*ret = (uint##bits##_t)kp_le(b, sizeof(b));                \
		return err;                                                        \
	}
DEFINE_READ(8)
DEFINE_READ(16)
DEFINE_READ(32)
DEFINE_READ(64)

struct kp_error *kp_read_cstr(struct kp_kernel *k, uint64_t address, char *buf, size_t size)
{
	if (!size)
		return kp_error_create(KP_ERR_INVALID, "kp_read_cstr: empty buffer");
	size_t got = kp_memory_read_partial(k->mem, KP_VIRT, address, buf, size - 1, true);
	if (got < size - 1 && (!got || buf[got - 1] != '\0')) {
		// Read again where it stopped, for the error that says why.
		char c;
		struct kp_error *err = kp_memory_read(k->mem, KP_VIRT, address + got, &c, 1);
		if (err)
			return err;
	}
	buf[got < size ? got : size - 1] = '\0';
	return NULL;
}

struct kp_error *kp_vtop(struct kp_kernel *k, uint64_t vaddr, struct kp_vtop *ret)
{
	KP_INIT(kp_vtop, v);
	struct kp_error *err = k->arch->vtop(k->arch_ctx, vaddr, &v);
	if (err)
		return err;
	if (!kp_out_copy(ret, &v, sizeof(v)))
		return kp_error_create(KP_ERR_INVALID, "struct kp_vtop: sz not set (use KP_INIT)");
	return NULL;
}
