// SPDX-License-Identifier: MIT
// Facts about x86-64 Linux shared by the files of src/arch/x86_64/.
#ifndef KP_ARCH_X86_64_H
#define KP_ARCH_X86_64_H

#include "arch/arch.h"
#include "format/source.h"

// The kernel image mapping (arch/x86/include/asm/page_64_types.h).
#define X86_START_KERNEL_MAP 0xffffffff80000000ULL	// __START_KERNEL_map
#define X86_KERNEL_IMAGE_SIZE (1ULL << 30)		// KERNEL_IMAGE_SIZE with KASLR
#define X86_DEFAULT_KERNEL_START 0xffffffff81000000ULL	// _text without KASLR
#define X86_PAGE_SIZE 4096ULL

// Control registers (Intel SDM vol. 3A, 2.5).
#define X86_CR0_PG (1ULL << 31)
#define X86_CR4_LA57 (1ULL << 12)
#define X86_CR3_ADDR_MASK 0x000ffffffffff000ULL
#define X86_CR3_PTI_USER (1ULL << 12)	// PTI: the user PGD is the kernel's + 4 KiB

// What a QEMU CPU note says of one x86-64 CPU beyond PRSTATUS.
struct x86_cpu {
	uint64_t cr0, cr3, cr4;
	uint64_t idt_base, idt_limit;
	uint64_t gdt_base;
	uint64_t gs_base, kernel_gs_base;
};

// Registers of an NT_PRSTATUS note (regs.c), named by kp_x86_reg_names.
bool kp_x86_prstatus_regs(const uint8_t *desc, size_t len, struct kp_regs *ret);
extern const char *const kp_x86_reg_names[];
// Decodes QEMU's CPU state note (QEMUCPUState) of CPU notes n; false if
// there is none or it is too short.
bool kp_x86_qemu_cpu(const struct kp_cpu_notes *n, struct x86_cpu *ret);
// Flag names of a page-table entry at level lvl (0 = PTE).
void kp_x86_pte_flags(uint64_t entry, int lvl, char *buf, size_t size);

// Locating the kernel without VMCOREINFO (locate.c).
struct kp_error *kp_x86_locator_create(struct kp_memory *mem, const struct kp_source *src,
				       struct kp_locator **ret);
void kp_x86_locator_destroy(struct kp_locator *l);
struct kp_error *kp_x86_locator_check(struct kp_locator *l, const struct kp_open_options *opts,
				      const char *text, size_t len, char *verified,
				      size_t verified_size);
struct kp_error *kp_x86_locator_derive(struct kp_locator *l, const struct kp_open_options *opts,
				       struct kp_locate_result *ret);

// The ORC unwinder (orc.c, orc_unwind.c): kp_arch.unwind_* of arch/unwind.h.
struct kp_error *kp_x86_unwinder_create(const struct kp_arch_ctx *ctx, const struct kp_unwind_env *env,
				       struct kp_unwinder **ret);
void kp_x86_unwinder_destroy(struct kp_unwinder *u);
struct kp_error *kp_x86_unwind_sleeping(struct kp_unwinder *u, uint64_t task,
					struct kp_unwind_frame *ret);
struct kp_error *kp_x86_unwind_step(struct kp_unwinder *u, struct kp_unwind_frame *f,
				    const char **end_ret);

// hooks.c: kp_arch.entry_branch and .vector_handler.
bool kp_x86_entry_branch(const uint8_t *code, size_t size, uint64_t addr, struct kp_branch *ret);
bool kp_x86_vector_handler(const uint8_t *gate, uint64_t *ret);
void kp_x86_data_refs(const uint8_t *code, size_t size, uint64_t addr, bool to_exit,
		      void (*fn)(uint64_t target, void *arg), void *arg);

#endif
