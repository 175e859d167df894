// SPDX-License-Identifier: MIT
// Where a kernel's BTF comes from: a --btf file, /sys/kernel/btf/vmlinux of
// the live kernel, or the kernel's own .BTF section (__start_BTF ..
// __stop_BTF, CONFIG_DEBUG_INFO_BTF, 5.2+) read out of its memory.
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/btf.h>

#include "core/btf_source.h"
#include "io/memory.h"
#include "symbols/symtab.h"
#include "types/btf_load.h"
#include "types/types.h"
#include "util/bulk.h"
#include "util/error.h"

#define LIVE_BTF "/sys/kernel/btf/vmlinux"

// struct btf_header (include/uapi/linux/btf.h): magic 0xeB9F, version 1,
// flags, hdr_len, type_off, type_len, str_off, str_len. The kernel's own
// BTF has its types first, then its strings.

#define BTF_HDR 24
#define SCAN_BLOCK (2ULL << 20)
#define SCAN_PAGE 4096ULL

// The size of the BTF whose header is at h, 0 if h is none.
static uint64_t header_size(const uint8_t *h)
{
	uint32_t hdr_len, type_off, type_len, str_off, str_len;
	if ((h[0] | h[1] << 8) != BTF_MAGIC || h[2] != 1 || h[3] != 0)
		return 0;
	memcpy(&hdr_len, h + 4, 4);
	memcpy(&type_off, h + 8, 4);
	memcpy(&type_len, h + 12, 4);
	memcpy(&str_off, h + 16, 4);
	memcpy(&str_len, h + 20, 4);
	if (hdr_len != BTF_HDR || type_off != 0 || !type_len || str_off != type_len || !str_len)
		return 0;
	uint64_t size = (uint64_t)hdr_len + str_off + str_len;
	return size <= KP_BTF_MAX_SIZE ? size : 0;
}

// The first BTF header in virtual [lo, hi), 4-byte aligned, read a block at
// a time (page by page where a block is partly mapped).
static bool scan_header(struct kp_memory *mem, uint64_t lo, uint64_t hi, uint64_t *at,
			uint64_t *size)
{
	uint8_t *buf = malloc(SCAN_BLOCK);
	if (!buf)
		return false;
	bool found = false;
	for (uint64_t va = lo & ~(SCAN_PAGE - 1); va < hi && va >= lo && !found; va += SCAN_BLOCK) {
		uint64_t len = SCAN_BLOCK;
		bool whole = kp_ok(kp_memory_read(mem, KP_VIRT, va, buf, len));
		for (uint64_t p = 0; p < len && !found; p += SCAN_PAGE) {
			if (!whole && !kp_ok(kp_memory_read(mem, KP_VIRT, va + p, buf + p, SCAN_PAGE))) {
				// A fault of the translation: the pages it spans too.
				p += kp_memory_fault_step(mem, va + p, SCAN_PAGE, len - p) - SCAN_PAGE;
				continue;
			}
			for (uint64_t o = p; o + BTF_HDR <= p + SCAN_PAGE && !found; o += 4) {
				*size = header_size(buf + o);
				if (*size) {
					*at = va + o;
					found = true;
				}
			}
		}
	}
	free(buf);
	return found;
}

static struct kp_error *from_memory(struct kp_memory *mem, struct kp_symtab *st,
				    uint64_t image_start, uint64_t image_end,
				    uint64_t *start_ret, size_t *size_ret, struct btf **ret)
{
	struct kp_symbol start, stop;
	if (!st || !kp_symtab_find(st, "__start_BTF", &start) ||
	    !kp_symtab_find(st, "__stop_BTF", &stop)) {
		uint64_t size;
		if (image_end <= image_start ||
		    !scan_header(mem, image_start, image_end, &start.address, &size))
			return kp_error_create(KP_ERR_NOT_FOUND,
					       "no BTF: no symbols __start_BTF/__stop_BTF, and no BTF header in the kernel image at 0x%" PRIx64 "-0x%" PRIx64 "; pass --btf FILE",
					       image_start, image_end);
		stop.address = start.address + size;
	}
	if (stop.address <= start.address || stop.address - start.address > KP_BTF_MAX_SIZE)
		return kp_error_create(KP_ERR_FORMAT,
				       "no BTF: bad .BTF bounds __start_BTF=0x%" PRIx64
				       " __stop_BTF=0x%" PRIx64 "; pass --btf FILE",
				       start.address, stop.address);
	size_t size = stop.address - start.address;
	void *buf = kp_bulk_alloc(size);
	if (!buf)
		return &kp_enomem;
	struct kp_error *err = kp_memory_read(mem, KP_VIRT, start.address, buf, size);
	if (err) {
		kp_bulk_free(buf, size);
		return kp_error_prefix(err, "no BTF: reading .BTF at 0x%" PRIx64 " (%zu bytes) "
				       "(pass --btf FILE)", start.address, size);
	}
	char where[128];
	snprintf(where, sizeof(where), ".BTF in memory at 0x%" PRIx64, start.address);
	err = kp_btf_from_blob(buf, size, where, ret);
	kp_bulk_free(buf, size);
	if (!err) {
		*start_ret = start.address;
		*size_ret = size;
	}
	return err;
}

struct kp_error *kp_btf_source_load(struct kp_memory *mem, struct kp_symtab *st, bool live,
				    const char *btf_path, uint64_t image_start,
				    uint64_t image_end, struct kp_types **ret)
{
	struct btf *btf = NULL;
	char source[256];
	struct kp_error *err;
	if (btf_path) {
		if ((err = kp_btf_from_file(btf_path, &btf)))
			return err;
		snprintf(source, sizeof(source), "%s", btf_path);
	} else {
		struct kp_error *live_err = NULL;
		if (live) {
			live_err = kp_btf_from_file(LIVE_BTF, &btf);
			if (!live_err)
				snprintf(source, sizeof(source), "%s", LIVE_BTF);
		}
		if (!btf) {
			uint64_t start = 0;
			size_t size = 0;
			err = from_memory(mem, st, image_start, image_end, &start, &size, &btf);
			if (err) {
				if (live_err) {
					err = kp_error_prefix(err, "%s", kp_error_message(live_err));
					kp_error_destroy(live_err);
				}
				return err;
			}
			kp_error_destroy(live_err);
			snprintf(source, sizeof(source), ".BTF in memory (0x%" PRIx64 ", %.1f MB)",
				 start, size / 1e6);
		}
	}
	return kp_types_create(btf, source, ret);
}
