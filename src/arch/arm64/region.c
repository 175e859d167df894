// SPDX-License-Identifier: MIT
// The areas of the arm64 kernel address space whatis names
// (arch/arm64/include/asm/memory.h and pgtable.h, the flipped layout of
// 5.4+): the linear map [PAGE_OFFSET, PAGE_END = -(1 << (VA_BITS_MIN - 1))),
// VA_BITS_MIN being 48 for a 52-bit kernel; the modules from PAGE_END,
// 128 MiB until 6.4 and 2 GiB from 6.5 (3e35d303ab7d, "arm64: module:
// rework module VA range selection"), the kernel image at their end
// (KIMAGE_VADDR = MODULES_END) inside vmalloc, which ends 256 MiB below
// VMEMMAP_START. The memory map holds a 64-byte struct page (Debian's;
// STRUCT_PAGE_MAX_SHIFT 6) for every page of the linear map's range:
//   - until 6.8, VMEMMAP_START = -(1 << (VA_BITS - 6)), the PCI I/O space
//     (16 MiB) ending 8 MiB below it and FIXADDR_TOP 32 MiB below it;
//   - from 6.9 ("arm64: mm: Move fixmap region above vmemmap region"),
//     VMEMMAP_END = -1 GiB, the PCI I/O space 8 MiB above it, FIXADDR_TOP
//     = -8 MiB and vmalloc ending 8 MiB below the memory map; with
//     32697ff38287 ("arm64: mm: Reclaim unused vmemmap region for vmalloc
//     use", 6.9) a 52-bit kernel running with fewer bits (vabits_actual,
//     va_bits here) leaves the low part of the memory map unused, for the
//     linear map's range it does not have, and vmalloc reaches up to
//     8 MiB below the part in use.
// The fixmap is named from the end of the area above it (vmalloc's end
// before 6.9, PCI I/O's from 6.9) to FIXADDR_TOP: its exact start depends
// on the configuration.
#include "arch/arm64/arm64.h"

#define SZ_1M (1ULL << 20)
#define SZ_1G (1ULL << 30)
#define PCI_IO_SIZE (16 * SZ_1M)
#define PAGE_STRUCT_SHIFT 6

const char *kp_arm64_region(const struct arm64_layout *l, uint64_t a, uint64_t *start, uint64_t *end)
{
	unsigned min = l->config_va_bits > 48 ? 48 : l->config_va_bits;
	if (!l->config_va_bits || l->config_va_bits > 52 || !l->release)
		return NULL;
	uint64_t page_offset = ~0ULL << l->config_va_bits, page_end = ~0ULL << (min - 1);
	uint64_t modules_end = page_end + (l->release >= (6 << 8 | 5) ? 2 * SZ_1G : 128 * SZ_1M);
	uint64_t vmemmap_size = ((page_end - page_offset) >> l->page_shift) << PAGE_STRUCT_SHIFT;
	uint64_t vmemmap_start, pci_start, fixmap_start, fixaddr_top;
	uint64_t vmalloc_end;
	bool new = l->release >= (6 << 8 | 9);
	if (new) {
		unsigned actual = l->va_bits && l->va_bits < l->config_va_bits ? l->va_bits : l->config_va_bits;
		uint64_t unused = (((~0ULL << actual) - page_offset) >> l->page_shift) << PAGE_STRUCT_SHIFT;
		vmemmap_start = -SZ_1G - vmemmap_size + unused;
		vmemmap_size -= unused;
		vmalloc_end = vmemmap_start - 8 * SZ_1M;
		pci_start = -SZ_1G + 8 * SZ_1M;
		fixmap_start = pci_start + PCI_IO_SIZE;
		fixaddr_top = -8 * SZ_1M;
	} else {
		vmemmap_start = ~0ULL << (l->config_va_bits - (l->page_shift - PAGE_STRUCT_SHIFT));
		pci_start = vmemmap_start - 8 * SZ_1M - PCI_IO_SIZE;
		fixaddr_top = vmemmap_start - 32 * SZ_1M;
		fixmap_start = vmemmap_start - 256 * SZ_1M;
		vmalloc_end = vmemmap_start - 256 * SZ_1M;
	}
	const struct { const char *name; uint64_t start, end; } r[] = {
		{ "linear map", page_offset, page_end },
		{ "modules", page_end, modules_end },
		{ "vmalloc", modules_end, vmalloc_end },
		{ "fixmap", fixmap_start, fixaddr_top },
		{ "PCI I/O", pci_start, pci_start + PCI_IO_SIZE },
		{ "vmemmap", vmemmap_start, vmemmap_start + vmemmap_size },
	};
	for (size_t i = 0; i < sizeof(r) / sizeof(r[0]); i++)
		if (a >= r[i].start && a < r[i].end) {
			*start = r[i].start;
			*end = r[i].end;
			return r[i].name;
		}
	return NULL;
}
