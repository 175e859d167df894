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
// Headers tried in turn when no symbol bounds .BTF: memory the kernel freed
// (x86-64's text/rodata gap) may hold a stale, partly overwritten copy
// before the real one (6.1 with a kallsyms of functions only).
#define SCAN_TRIES 8

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
// a time (page by page where a block is partly mapped); lo may be anywhere
// in a page.
static bool scan_header(struct kp_memory *mem, uint64_t lo, uint64_t hi, uint64_t *at,
			uint64_t *size)
{
	uint8_t *buf = malloc(SCAN_BLOCK);
	if (!buf)
		return false;
	bool found = false;
	uint64_t first = lo & ~(SCAN_PAGE - 1);
	for (uint64_t va = first; va < hi && va >= first && !found; va += SCAN_BLOCK) {
		uint64_t len = SCAN_BLOCK;
		bool whole = kp_ok(kp_memory_read(mem, KP_VIRT, va, buf, len));
		for (uint64_t p = 0; p < len && !found; p += SCAN_PAGE) {
			if (!whole && !kp_ok(kp_memory_read(mem, KP_VIRT, va + p, buf + p, SCAN_PAGE))) {
				// A fault of the translation: the pages it spans too.
				p += kp_memory_fault_step(mem, va + p, SCAN_PAGE, len - p) - SCAN_PAGE;
				continue;
			}
			for (uint64_t o = p; o + BTF_HDR <= p + SCAN_PAGE && !found; o += 4) {
				if (va + o < lo)
					continue;
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

// The BTF of size bytes at start, read and parsed.
static struct kp_error *load_at(struct kp_memory *mem, uint64_t start, uint64_t size,
				struct btf **ret)
{
	void *buf = kp_bulk_alloc(size);
	if (!buf)
		return &kp_enomem;
	struct kp_error *err = kp_memory_read(mem, KP_VIRT, start, buf, size);
	if (err) {
		kp_bulk_free(buf, size);
		return kp_error_prefix(err, "no BTF: reading .BTF at 0x%" PRIx64 " (%" PRIu64 " bytes) "
				       "(pass --btf FILE)", start, size);
	}
	char where[128];
	snprintf(where, sizeof(where), ".BTF in memory at 0x%" PRIx64, start);
	err = kp_btf_from_blob(buf, size, where, ret);
	kp_bulk_free(buf, size);
	return err;
}

// Without __start_BTF/__stop_BTF: the first header in the image whose BTF
// parses, SCAN_TRIES tried at most; the first one's error if none does.
static struct kp_error *scan_memory(struct kp_memory *mem, uint64_t image_start,
				    uint64_t image_end, uint64_t *start_ret, size_t *size_ret,
				    struct btf **ret)
{
	struct kp_error *first = NULL;
	uint64_t at, size, lo = image_start;
	for (unsigned i = 0; i < SCAN_TRIES && lo < image_end &&
			     scan_header(mem, lo, image_end, &at, &size); i++) {
		struct kp_error *err = load_at(mem, at, size, ret);
		if (!err) {
			kp_error_destroy(first);
			*start_ret = at;
			*size_ret = size;
			return NULL;
		}
		if (err->code == KP_ERR_NOMEM) {
			kp_error_destroy(first);
			return err;
		}
		kp_error_keep_first(&first, err);
		lo = at + 4;
	}
	return first ? first : kp_error_create(KP_ERR_NOT_FOUND,
		"no BTF: no symbols __start_BTF/__stop_BTF, and no BTF header in the kernel image at 0x%" PRIx64 "-0x%" PRIx64 "; pass --btf FILE",
		image_start, image_end);
}

static struct kp_error *from_memory(struct kp_memory *mem, struct kp_symtab *st,
				    uint64_t image_start, uint64_t image_end,
				    uint64_t *start_ret, size_t *size_ret, struct btf **ret)
{
	struct kp_symbol start, stop;
	if (!st || !kp_symtab_find(st, "__start_BTF", &start) ||
	    !kp_symtab_find(st, "__stop_BTF", &stop)) {
		if (image_end <= image_start)
			return kp_error_create(KP_ERR_NOT_FOUND,
					       "no BTF: no symbols __start_BTF/__stop_BTF, and no kernel image range; pass --btf FILE");
		return scan_memory(mem, image_start, image_end, start_ret, size_ret, ret);
	}
	if (stop.address <= start.address || stop.address - start.address > KP_BTF_MAX_SIZE)
		return kp_error_create(KP_ERR_FORMAT,
				       "no BTF: bad .BTF bounds __start_BTF=0x%" PRIx64
				       " __stop_BTF=0x%" PRIx64 "; pass --btf FILE",
				       start.address, stop.address);
	struct kp_error *err = load_at(mem, start.address, stop.address - start.address, ret);
	if (!err) {
		*start_ret = start.address;
		*size_ret = stop.address - start.address;
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
