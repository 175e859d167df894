// SPDX-License-Identifier: MIT
// mkcore: builds synthetic x86-64 ELF cores (ET_CORE, ELF64 little-endian)
// for tests: PT_LOAD segments, VMCOREINFO, NT_PRSTATUS and QEMU CPU notes.
//
//   struct mkcore *mc = mkcore_create();
//   mkcore_add_load(mc, 0, 0x100000, page, 4096, 4096);	// physical only
//   mkcore_add_vmcoreinfo(mc, "OSRELEASE=6.1.0\nKERNELOFFSET=1e000000\n");
//   mkcore_add_prstatus(mc, 1, rip, rsp, 0x10, gs_base);
//   struct mkcore_qemu_cpu cpu = {.cr3 = 0x1234000, .idt_base = ...};
//   mkcore_add_qemu_cpu(mc, &cpu);
//   char *path = mkcore_write_tmp(mc);	// ... kp_kernel_open(path) ...
//   unlink(path); free(path); mkcore_destroy(mc);
//
// File layout: Ehdr, Phdrs (one PT_NOTE first if any note was added, then the
// PT_LOADs in the order added), [section header 0 with PN_XNUM], the note
// segment, then each load's file bytes at a 4 KiB-aligned offset. Loads
// without data are holes in the file (sparse), so huge dumps are cheap.
// Every function aborts on out-of-memory: this is test code.
#ifndef MKCORE_H
#define MKCORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct mkcore;

struct mkcore *mkcore_create(void);
void mkcore_destroy(struct mkcore *mc);

// A PT_LOAD: p_vaddr = vaddr, p_paddr = paddr (0 / UINT64_MAX as the producer
// would write them), filesz bytes in the file, memsz >= filesz in memory
// (the rest reads as zeros). data (filesz bytes) is copied; NULL = zeros,
// left as a hole in the file.
void mkcore_add_load(struct mkcore *mc, uint64_t vaddr, uint64_t paddr,
		     const void *data, uint64_t filesz, uint64_t memsz);
// Like mkcore_add_load but with an explicit p_offset (nothing is written for
// it: for headers pointing anywhere, e.g. past EOF). Returns the index.
size_t mkcore_add_load_raw(struct mkcore *mc, uint64_t vaddr, uint64_t paddr,
			   uint64_t offset, uint64_t filesz, uint64_t memsz);

// An ELF note (name is NUL-terminated in the note; namesz counts the NUL),
// 4-byte aligned, in the single PT_NOTE segment, in the order added.
void mkcore_add_note(struct mkcore *mc, const char *name, uint32_t type,
		     const void *desc, size_t len);
// "VMCOREINFO" note, type 0, desc = text (no NUL added).
void mkcore_add_vmcoreinfo(struct mkcore *mc, const char *text);
// "CORE" NT_PRSTATUS, x86-64 struct elf_prstatus (336 bytes): pr_pid and
// pr_reg rip, rsp, cs, gs_base; other registers 0.
void mkcore_add_prstatus(struct mkcore *mc, uint32_t pid, uint64_t rip, uint64_t rsp,
			 uint64_t cs, uint64_t gs_base);

// "QEMU" note (QEMUCPUState, QEMU target/i386/arch_dump.c version 1).
struct mkcore_qemu_cpu {
	uint64_t rip, rsp, rflags;
	uint64_t cr0, cr2, cr3, cr4;
	uint64_t idt_base, gdt_base;
	uint32_t idt_limit, gdt_limit;
	uint64_t gs_base, kernel_gs_base;
	uint32_t cs_selector;
	bool old_layout;	// 432-byte state without kernel_gs_base (QEMU < 5.0)
};
void mkcore_add_qemu_cpu(struct mkcore *mc, const struct mkcore_qemu_cpu *cpu);

// Header knobs for negative tests.
void mkcore_set_type(struct mkcore *mc, uint16_t e_type, uint16_t e_machine);
// Use PN_XNUM extended numbering (e_phnum = 0xffff, count in shdr 0's sh_info).
void mkcore_set_xnum(struct mkcore *mc, bool xnum);

// Writes the core; returns 0, or -1 with errno set.
int mkcore_write(struct mkcore *mc, const char *path);
// Writes to a new file under $TMPDIR (or /tmp); returns its malloc'ed path.
char *mkcore_write_tmp(struct mkcore *mc);
// The whole file in memory (holes as zeros), e.g. for fuzzing or truncation
// loops. Aborts if the image is larger than max_len. Caller frees *buf_ret.
void mkcore_to_buffer(struct mkcore *mc, size_t max_len, uint8_t **buf_ret,
		      size_t *len_ret);

// Byte offsets in the written file (valid after any of the write calls):
// the program headers and the note segment, for corrupting them in tests.
uint64_t mkcore_phoff(const struct mkcore *mc);
uint64_t mkcore_notes_offset(const struct mkcore *mc);
// Offset in the file of load i's data.
uint64_t mkcore_load_offset(const struct mkcore *mc, size_t i);

// Writes len bytes to path (a helper for tests that corrupt images);
// returns 0 or -1.
int mkcore_write_bytes(const char *path, const void *buf, size_t len);

#endif
