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

// Without __start_BTF/__stop_BTF, a scan of the image for BTF headers.
// Memory the kernel freed (x86-64's text/rodata gap) may hold stale, partly
// overwritten copies of small BTFs (6.1: a dozen or more of bpf_preload's
// light skeleton) before the kernel's own, so every header is tried in turn
// until one parses, in one pass over the image. The bytes tried are bounded
// by twice the image (a header claiming more than what is left of it is not
// tried): the work stays proportional to the input.
struct scan {
	struct kp_memory *mem;
	uint64_t hi, budget;
	struct kp_error *first;	// the first candidate's error
	uint64_t at, size;
	struct btf *btf;
};

// Tries the header at va: true when the scan is over (found, or out of
// memory or budget).
static bool try_header(struct scan *sc, uint64_t va, const uint8_t *h)
{
	uint64_t size = header_size(h);
	if (!size || size > sc->hi - va)
		return false;
	if (size > sc->budget)
		return true;
	sc->budget -= size;
	struct kp_error *err = load_at(sc->mem, va, size, &sc->btf);
	if (!err) {
		sc->at = va;
		sc->size = size;
		return true;
	}
	if (err->code == KP_ERR_NOMEM) {	// the singleton, or a copy kp_error_prefix made
		kp_error_destroy(sc->first);
		sc->first = err;
		return true;
	}
	kp_error_keep_first(&sc->first, err);
	return false;
}

// Every 4-byte aligned header in virtual [lo, hi), read a block at a time
// (page by page where a block is partly mapped), until try_header says stop.
static void scan_headers(struct scan *sc, uint64_t lo, uint8_t *buf)
{
	uint64_t first = lo & ~(SCAN_PAGE - 1);
	for (uint64_t va = first; va < sc->hi && va >= first; va += SCAN_BLOCK) {
		uint64_t len = SCAN_BLOCK;
		bool whole = kp_ok(kp_memory_read(sc->mem, KP_VIRT, va, buf, len));
		for (uint64_t p = 0; p < len; p += SCAN_PAGE) {
			if (!whole && !kp_ok(kp_memory_read(sc->mem, KP_VIRT, va + p, buf + p, SCAN_PAGE))) {
				// A fault of the translation: the pages it spans too.
				p += kp_memory_fault_step(sc->mem, va + p, SCAN_PAGE, len - p) - SCAN_PAGE;
				continue;
			}
			for (uint64_t o = p; o + BTF_HDR <= p + SCAN_PAGE; o += 4)
				if (va + o >= lo && va + o < sc->hi && try_header(sc, va + o, buf + o))
					return;
		}
	}
}

static struct kp_error *scan_memory(struct kp_memory *mem, uint64_t image_start,
				    uint64_t image_end, uint64_t *start_ret, size_t *size_ret,
				    struct btf **ret)
{
	struct scan sc = { .mem = mem, .hi = image_end, .budget = 2 * (image_end - image_start) };
	uint8_t *buf = malloc(SCAN_BLOCK);
	if (!buf)
		return &kp_enomem;
	scan_headers(&sc, image_start, buf);
	free(buf);
	if (sc.btf) {
		kp_error_destroy(sc.first);
		*start_ret = sc.at;
		*size_ret = sc.size;
		*ret = sc.btf;
		return NULL;
	}
	return sc.first ? sc.first : kp_error_create(KP_ERR_NOT_FOUND,
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
