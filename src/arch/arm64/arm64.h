// SPDX-License-Identifier: MIT
// Facts about arm64 Linux shared by the files of src/arch/arm64/.
#ifndef KP_ARCH_ARM64_H
#define KP_ARCH_ARM64_H

#include "arch/arch.h"
#include "format/source.h"

// The layout one kernel runs with, from VMCOREINFO (arch/arm64/kernel/
// vmcore_info.c, crash_core.c before 6.9): NUMBER(VA_BITS) and
// NUMBER(kimage_voffset) since 4.12 (20a166243328, "arm64: kdump: add
// VMCOREINFO's for user-space tools"), NUMBER(TCR_EL1_T1SZ) since 5.9
// (bbdbc11804ff), NUMBER(KERNELPACMASK) with pointer authentication (5.7).
struct arm64_layout {
	unsigned page_shift;	// 12, 14 or 16 (PAGESIZE)
	unsigned va_bits;	// the kernel's runtime VA size (64 - T1SZ, else VA_BITS)
	unsigned config_va_bits;	// VA_BITS as configured
	uint64_t kimage_voffset;	// kernel image virtual - physical
	uint64_t phys_offset;	// PHYS_OFFSET: physical start of the linear map
	uint64_t pac_mask;	// KERNELPACMASK, 0 without pointer authentication
	bool has_kimage_voffset, has_phys_offset;
	uint64_t swapper_pg_dir;	// virtual, 0 if unknown
	uint64_t stext;		// virtual _stext (or _text), 0 if unknown
	unsigned release;	// OSRELEASE as major << 8 | minor, 0 if unknown
};

// Reads what VMCOREINFO says; false if it is not an arm64 one with the
// page size, VA size and kimage_voffset a page-table walk needs (why in
// why[]).
bool kp_arm64_layout(const struct kp_vmcoreinfo *vi, struct arm64_layout *ret, char *why,
		     size_t why_size);
// PAGE_OFFSET: -(1 << VA_BITS) as configured (the flipped layout of 5.4,
// "arm64: mm: Flip kernel VA space"). A 52-bit kernel running with 48 bits
// keeps it and moves PHYS_OFFSET instead (arm64_memblock_init()), so the
// linear map is (pa - PHYS_OFFSET) | PAGE_OFFSET either way.
static inline uint64_t kp_arm64_page_offset(const struct arm64_layout *l)
{
	return ~0ULL << l->config_va_bits;
}

// The area of the kernel's address space a lies in (region.c): "linear
// map", "modules", "vmalloc", "vmemmap", "PCI I/O", "fixmap"; NULL if none.
const char *kp_arm64_region(const struct arm64_layout *l, uint64_t a, uint64_t *start, uint64_t *end);

// Registers of an NT_PRSTATUS note (regs.c), named by kp_arm64_reg_names.
bool kp_arm64_prstatus_regs(const uint8_t *desc, size_t len, struct kp_regs *ret);
extern const char *const kp_arm64_reg_names[];
// Attribute names of a translation table descriptor at level lvl (0 = last).
void kp_arm64_desc_flags(uint64_t desc, int lvl, bool lpa2, char *buf, size_t size);

// Locating the kernel without a VMCOREINFO note (locate.c).
struct kp_error *kp_arm64_locator_create(struct kp_memory *mem, const struct kp_source *src,
					 struct kp_locator **ret);
void kp_arm64_locator_destroy(struct kp_locator *l);
struct kp_error *kp_arm64_locator_check(struct kp_locator *l, const struct kp_open_options *opts,
					const char *text, size_t len, char *verified,
					size_t verified_size);
struct kp_error *kp_arm64_locator_derive(struct kp_locator *l,
					 const struct kp_open_options *opts,
					 struct kp_locate_result *ret);

// The frame-record unwinder (unwind.c): kp_arch.unwind_* of arch/unwind.h,
// for the kernel's VA size (64 - T1SZ).
struct kp_error *kp_arm64_unwinder_new(unsigned va_bits, const struct kp_unwind_env *env,
				       struct kp_unwinder **ret);
void kp_arm64_unwinder_destroy(struct kp_unwinder *u);
struct kp_error *kp_arm64_unwind_sleeping(struct kp_unwinder *u, uint64_t task,
					  struct kp_unwind_frame *ret);
struct kp_error *kp_arm64_unwind_step(struct kp_unwinder *u, struct kp_unwind_frame *f,
				      const char **end_ret);

// hooks.c: kp_arch.entry_branch and kp_arch.data_refs.
bool kp_arm64_entry_branch(const uint8_t *code, size_t size, uint64_t addr, struct kp_branch *ret);
struct kp_memory;
bool kp_arm64_text_start(struct kp_memory *mem, uint64_t stext, uint64_t *ret);
void kp_arm64_data_refs(const uint8_t *code, size_t size, uint64_t addr, bool to_exit,
			void (*fn)(uint64_t target, void *arg), void *arg);

#endif
