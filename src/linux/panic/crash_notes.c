// SPDX-License-Identifier: MIT
// per_cpu(crash_notes, cpu): the ELF note the kernel's crash path writes for
// each CPU (kernel/crash_core.c, crash_save_cpu(): one NT_PRSTATUS "CORE"
// note with the registers at the crash; the crashing CPU's from
// __crash_kexec(), the others' from the NMI (x86-64) or IPI (arm64) that
// stopped them). crash_notes is a note_buf_t __percpu pointer; the buffers
// are zero until a crash, so only a kdump vmcore has them. The crash
// kernel's /proc/vmcore copies them into its PT_NOTE, but leaves out empty
// ones, so there the n-th note is not always CPU n: memory says which CPU
// each belongs to.
#include <inttypes.h>
#include <string.h>

#include "core/layout.h"
#include "linux/panic/panic.h"
#include "util/error.h"
#include "util/le.h"

#define NT_PRSTATUS 1

bool kp_lx_crash_note(struct kp_kernel *k, uint64_t cpu, uint8_t *buf, size_t cap, size_t *len_ret)
{
	struct kp_symbol sym;
	uint64_t notes, off;
	uint8_t h[20];
	// crash_notes holds a __percpu pointer: the note of cpu is at it plus
	// the CPU's per-CPU offset.
	if (!kp_symbol_find(k, "crash_notes", &sym) || !kp_ok(kp_read_u64(k, sym.address, &notes)) ||
	    !notes || !kp_ok(kp_kernel_per_cpu_offset(k, cpu, &off)) ||
	    !kp_ok(kp_read(k, KP_VIRT, notes + off, h, sizeof(h))))
		return false;
	uint64_t at = notes + off;
	// Elf64_Nhdr {n_namesz, n_descsz, n_type}, "CORE\0" padded to 8.
	uint32_t namesz = kp_le32(h), descsz = kp_le32(h + 4), type = kp_le32(h + 8);
	if (namesz != 5 || type != NT_PRSTATUS || memcmp(h + 12, "CORE", 5) || !descsz ||
	    descsz > cap || !kp_ok(kp_read(k, KP_VIRT, at + sizeof(h), buf, descsz)))
		return false;
	*len_ret = descsz;
	return true;
}
