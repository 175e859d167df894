// SPDX-License-Identifier: MIT
// The memory map: the struct page of a page frame, through the sparse
// memory model as VMCOREINFO describes it for dump tools (kernel/
// vmcore_info.c, crash_core.c before 6.9): SYMBOL(mem_section),
// LENGTH(mem_section) (the number of roots), SIZE(mem_section),
// OFFSET(mem_section.section_mem_map), NUMBER(SECTION_SIZE_BITS) (5.13+,
// 4f5aecdff25f) and NUMBER(MAX_PHYSMEM_BITS) (5.9+), SIZE(page).
//
// With SPARSEMEM_EXTREME (every x86-64 and arm64 distribution kernel)
// mem_section is a pointer to an array of root pointers (4.15+,
// 83e3c48729d9), each to PAGE_SIZE / sizeof(struct mem_section) sections,
// and VMCOREINFO's SYMBOL() gives the pointer's value; without it, the
// static array mem_section[NR_MEM_SECTIONS][1] itself.
// section_mem_map holds the memory map's address minus the section's
// first pfn, with flags in its low bits (__section_mem_map_addr()).
#include <inttypes.h>
#include <stdlib.h>

#include "arch/arch.h"
#include "core/kernel.h"
#include "core/layout.h"
#include "format/vmcoreinfo.h"
#include "linux/mm/mm.h"
#include "util/error.h"

// The first sections searched for the memory map's base (section 0 holds
// pfn 0 and is present on every machine kpeek knows; a hole there is
// passed over).
#define BASE_SEARCH 4096

struct memmap {
	struct kp_error *err;		// why there is no memory map
	uint64_t roots;			// the root array (extreme) or the section array
	bool extreme;
	uint64_t nroots, per_root;
	uint64_t nr_sections;		// NR_MEM_SECTIONS, 0 if unknown
	uint64_t ms_size, map_off;
	uint64_t page_struct;		// sizeof(struct page)
	unsigned page_shift, pfn_section_shift;
	uint64_t map_mask, has_map;
	bool vmemmap;			// one base for every section (SPARSEMEM_VMEMMAP)
	uint64_t base;
};

static void memmap_destroy(void *p)
{
	struct memmap *m = p;
	if (m && m->err != &kp_enomem)
		kp_error_destroy(m->err);
	free(m);
}

static unsigned log2u(uint64_t v)
{
	unsigned n = 0;
	while (v > 1) {
		v >>= 1;
		n++;
	}
	return n;
}

// The enumerators of include/linux/mmzone.h's section flags (6.0+,
// ed7802dd48f7 made them an enum BTF has): SECTION_HAS_MEM_MAP is bit 1
// and the flags end below SECTION_MAP_LAST_BIT, which was the mask bit
// (1UL << 4) in 5.10.
static void section_flags(struct kp_kernel *k, struct memmap *m)
{
	uint64_t last = 4, has = 1;
	kp_kernel_enum_value(k, "SECTION_MAP_LAST_BIT", &last);
	kp_kernel_enum_value(k, "SECTION_HAS_MEM_MAP_BIT", &has);
	if (last > 16)
		last = 4;
	m->map_mask = ~((1ULL << last) - 1);
	m->has_map = 1ULL << (has & 63);
}

static struct kp_error *setup(struct kp_kernel *k, struct memmap *m)
{
	const struct kp_vmcoreinfo *vi = kp_kernel_vmcoreinfo(k);
	int64_t bits, physbits;
	if (!vi)
		return kp_error_create(KP_ERR_UNSUPPORTED, "the memory map needs VMCOREINFO (mem_section), which the source lacks");
	if (!kp_vmcoreinfo_symbol(vi, "mem_section", &m->roots) || !kp_vmcoreinfo_length(vi, "mem_section", &m->nroots) ||
	    !kp_vmcoreinfo_size(vi, "mem_section", &m->ms_size) ||
	    !kp_vmcoreinfo_offset(vi, "mem_section", "section_mem_map", &m->map_off))
		return kp_error_create(KP_ERR_UNSUPPORTED, "VMCOREINFO has no mem_section (a kernel without SPARSEMEM?)");
	if (!kp_vmcoreinfo_number(vi, "SECTION_SIZE_BITS", &bits))
		return kp_error_create(KP_ERR_UNSUPPORTED, "VMCOREINFO has no NUMBER(SECTION_SIZE_BITS) (5.13+)");
	uint64_t page_size = kp_kernel_page_size(k);
	m->page_shift = log2u(page_size);
	if (!kp_vmcoreinfo_size(vi, "page", &m->page_struct)) {
		static const struct kp_struct_spec page_type = KP_TYPE_SPEC("struct page");
		const struct kp_struct_layout *l;
		struct kp_error *err = kp_kernel_layout(k, &page_type, &l);
		if (err)
			return kp_error_prefix(err, "sizeof(struct page)");
		m->page_struct = l->size;
	}
	if (bits <= m->page_shift || bits > 40 || !m->ms_size || m->ms_size > page_size || !m->nroots ||
	    m->nroots > (1u << 26) || m->map_off + 8 > m->ms_size || m->page_struct < 16 || m->page_struct > 512)
		return kp_error_create(KP_ERR_FORMAT, "VMCOREINFO's mem_section geometry is corrupt (SECTION_SIZE_BITS %" PRId64
				       ", %" PRIu64 " roots of %" PRIu64 "-byte sections, struct page of %" PRIu64 " bytes)",
				       bits, m->nroots, m->ms_size, m->page_struct);
	m->pfn_section_shift = (unsigned)bits - m->page_shift;
	if (kp_vmcoreinfo_number(vi, "MAX_PHYSMEM_BITS", &physbits) && physbits > bits && physbits <= 64)
		m->nr_sections = 1ULL << (physbits - bits);
	// LENGTH() is NR_SECTION_ROOTS: NR_MEM_SECTIONS without EXTREME.
	m->extreme = !(m->nr_sections && m->nroots == m->nr_sections);
	m->per_root = m->extreme ? page_size / m->ms_size : 1;
	section_flags(k, m);
	return NULL;
}

static struct kp_error *section_map(struct kp_kernel *k, const struct memmap *m, uint64_t nr, uint64_t *ret)
{
	uint64_t root = nr / m->per_root, at = m->roots, map;
	struct kp_error *err;
	if ((m->nr_sections && nr >= m->nr_sections) || root >= m->nroots)
		return kp_error_create(KP_ERR_NOT_FOUND, "memory section %" PRIu64 " is beyond the kernel's %" PRIu64,
				       nr, m->nr_sections ? m->nr_sections : m->nroots * m->per_root);
	if (m->extreme) {
		if ((err = kp_read_u64(k, m->roots + root * 8, &at)))
			return kp_error_prefix(err, "mem_section root %" PRIu64, root);
		if (!at) {
			*ret = 0;
			return NULL;
		}
	} else {
		at += root * m->per_root * m->ms_size;
	}
	if ((err = kp_read_u64(k, at + (nr % m->per_root) * m->ms_size + m->map_off, &map)))
		return kp_error_prefix(err, "memory section %" PRIu64, nr);
	*ret = map;
	return NULL;
}

// The base the memory map would have if it is virtually mapped: the first
// present section's decoded map.
static void find_base(struct kp_kernel *k, struct memmap *m)
{
	uint64_t limit = m->nroots * m->per_root;
	if (limit > BASE_SEARCH)
		limit = BASE_SEARCH;
	for (uint64_t nr = 0; nr < limit; nr++) {
		uint64_t map;
		struct kp_error *err = section_map(k, m, nr, &map);
		if (err) {
			kp_error_destroy(err);
			return;
		}
		if (map & m->has_map) {
			m->base = map & m->map_mask;
			m->vmemmap = kp_kernel_is_kernel_address(k, m->base);
			return;
		}
	}
}

static struct kp_error *get(struct kp_kernel *k, const struct memmap **ret)
{
	struct memmap *m = kp_kernel_slot(k, KP_KERNEL_SLOT_MEMMAP);
	if (!m) {
		if (!(m = calloc(1, sizeof(*m))))
			return &kp_enomem;
		if (!(m->err = setup(k, m)))
			find_base(k, m);
		kp_kernel_set_slot(k, KP_KERNEL_SLOT_MEMMAP, m, memmap_destroy);
	}
	if (m->err)
		return m->err == &kp_enomem ? m->err : kp_error_copy(m->err);
	*ret = m;
	return NULL;
}

struct kp_error *kp_lx_pfn_to_page(struct kp_kernel *k, uint64_t pfn, uint64_t *ret)
{
	const struct memmap *m;
	uint64_t map;
	struct kp_error *err = get(k, &m);
	if (!err && pfn >> (64 - m->page_shift))
		err = kp_error_create(KP_ERR_INVALID, "PFN 0x%" PRIx64 " is beyond 64-bit physical addresses", pfn);
	if (err || (err = section_map(k, m, pfn >> m->pfn_section_shift, &map)))
		return err;
	if (!(map & m->has_map))
		return kp_error_create(KP_ERR_NOT_FOUND, "PFN 0x%" PRIx64 " has no struct page (its memory section %"
				       PRIu64 " has no memory map)", pfn, pfn >> m->pfn_section_shift);
	*ret = (map & m->map_mask) + pfn * m->page_struct;
	return NULL;
}

bool kp_lx_vmemmap_pfn(struct kp_kernel *k, uint64_t address, uint64_t *pfn_ret, uint64_t *off_ret)
{
	const struct memmap *m;
	struct kp_error *err = get(k, &m);
	if (err) {
		kp_error_destroy(err);
		return false;
	}
	uint64_t span = (m->nr_sections ? m->nr_sections : m->nroots * m->per_root) << m->pfn_section_shift;
	if (!m->vmemmap || address < m->base || (address - m->base) / m->page_struct >= span)
		return false;
	uint64_t pfn = (address - m->base) / m->page_struct, page;
	// Only where the section has a map at this base: a hole's pages are
	// not a struct page.
	if (!kp_ok(kp_lx_pfn_to_page(k, pfn, &page)) || page != m->base + pfn * m->page_struct)
		return false;
	*pfn_ret = pfn;
	*off_ret = (address - m->base) % m->page_struct;
	return true;
}

uint64_t kp_lx_page_struct_size(struct kp_kernel *k)
{
	const struct memmap *m;
	struct kp_error *err = get(k, &m);
	if (err) {
		kp_error_destroy(err);
		return 0;
	}
	return m->page_struct;
}

bool kp_lx_phys_to_virt(struct kp_kernel *k, uint64_t paddr, uint64_t *ret)
{
	const struct kp_arch *a = kp_kernel_arch(k);
	return a->phys_to_virt && a->phys_to_virt(kp_kernel_arch_ctx(k), paddr, ret);
}

bool kp_phys_to_virt(struct kp_kernel *k, uint64_t paddr, uint64_t *ret)
{
	return kp_lx_phys_to_virt(k, paddr, ret);
}
