// SPDX-License-Identifier: MIT
// Page-table walks over fuzzed physical memory: cycles, self-references,
// huge-page bits everywhere, entries pointing outside memory. The input is a
// struct fuzz_pgtable_hdr (formats.h), then physical memory from address 0.
#include <string.h>

#include "fuzz.h"
#include "formats.h"
#include "arch/x86_64/pgtable.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_pgtable_hdr h;
	if (size < sizeof(h) + 8)
		return 0;
	memcpy(&h, data, sizeof(h));
	int levels = (h.five_level & 1) ? 5 : 4;
	uint64_t va = h.vaddr;
	const uint8_t *phys = data + sizeof(h);
	size_t len = size - sizeof(h);
	struct kp_memory *mem;
	if (kp_memory_create(&mem))
		return 0;
	struct kp_pgtable *pt = NULL;
	struct kp_error *err = kp_memory_add(mem, KP_PHYS, 0, len, kp_read_buffer,
					     (void *)phys, 0);
	if (!err)
		err = kp_pgtable_create(mem, h.root, levels, &pt);
	if (!err) {
		struct kp_vtop vt;
		for (int i = 0; i < 4; i++) {
			fuzz_drop(kp_pgtable_walk(pt, va, &vt));
			va = (va << 9) | (va >> 55);
		}
		kp_memory_set_translator(mem, kp_pgtable_translate, pt);
		uint8_t buf[256];
		va = h.vaddr;
		fuzz_drop(kp_memory_read(mem, KP_VIRT, va, buf, sizeof(buf)));
		// Across a page edge (two translations, the fast path and the cache).
		fuzz_drop(kp_memory_read(mem, KP_VIRT, (va | 0xfff) - 7, buf, 16));
		fuzz_drop(kp_memory_read(mem, KP_VIRT, va, buf, 8));
		kp_pgtable_flush(pt);
		fuzz_drop(kp_pgtable_walk(pt, h.vaddr, &vt));
	}
	kp_error_destroy(err);
	kp_pgtable_destroy(pt);
	kp_memory_destroy(mem);
	return 0;
}
