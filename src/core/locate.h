// Finding the kernel in dumps that do not say where it is: physical-only dumps
// without a VMCOREINFO note (QEMU dump-guest-memory without -device vmcoreinfo).
#ifndef KP_LOCATE_H
#define KP_LOCATE_H

#include "io/memory.h"
#include "format/source.h"
#include "symbols/kallsyms.h"

struct kp_locate_result {
	// VMCOREINFO text (malloc'ed, NUL-terminated): the kernel's own
	// vmcoreinfo page found in memory, or text reconstructed from the CPU
	// registers and the kernel image (KERNELOFFSET, NUMBER(phys_base),
	// NUMBER(pgtable_l5_enabled), SYMBOL(swapper_pg_dir), the kallsyms
	// tables) that kernel_open reads as if it were the note.
	char *vmcoreinfo;
	size_t vmcoreinfo_size;
	char origin[160];	// "found in memory at phys 0x...", "reconstructed from ..."
	char verified[192];	// "verified against IDT and CR3 of CPU 0", "not verified: ..."
};

// For a source with physical memory only and no VMCOREINFO note. Scans
// physical memory for the vmcoreinfo page and checks each candidate against
// the registers of the first CPU with control registers (CR3 page tables must
// map swapper_pg_dir where the candidate says, IDT vector 0 must point at
// asm_exc_divide_error); rejects stale candidates and, when none is left,
// derives everything from the registers, the kernel image and the symbol
// files in opts. mem's translator is left unset. Fills *ret on success.
struct kp_error *kp_locate_kernel(struct kp_memory *mem, const struct kp_source *src,
				  const struct kp_open_options *opts,
				  struct kp_locate_result *ret);

// Pieces, for tests.

// Finds the next plausible vmcoreinfo page at or after physical *pa (a page
// boundary): on success *text_ret is a malloc'ed NUL-terminated copy and *pa
// its address. KP_ERR_NOT_FOUND when there is none.
struct kp_error *kp_locate_vmcoreinfo_page(struct kp_memory *mem, uint64_t *pa,
					   char **text_ret, size_t *len_ret);

// What a scan of the kernel image found (locate_kallsyms.c).
struct kp_image_scan {
	struct kp_kallsyms_tables tables;
	bool has_tables;
	uint64_t banner;	// "Linux version " in the image, 0 if not seen
	unsigned candidates;	// token signatures followed up
};
// Reads virtual [start, end) through mem (unmapped parts skipped) for the
// kallsyms tables and the banner. Fails only for out-of-memory.
struct kp_error *kp_locate_scan_image(struct kp_memory *mem, uint64_t start, uint64_t end,
				      struct kp_image_scan *ret);

// Finds the kernel's kallsyms tables (6.1 layout, and the 6.2+ one with the
// offsets after kallsyms_token_index) by the kallsyms_token_table /
// kallsyms_token_index signature in virtual [start, end), read through mem.
struct kp_error *kp_locate_kallsyms(struct kp_memory *mem, uint64_t start, uint64_t end,
				    struct kp_kallsyms_tables *ret);

#endif
