// SPDX-License-Identifier: MIT
// arm64 without a VMCOREINFO note. QEMU's arm64 dumps carry each CPU's
// general registers (NT_PRSTATUS) but no system register: no TTBR1, so
// nothing says where the page tables are but the kernel's own vmcoreinfo
// page in RAM (core/locate.c finds it). A page found there is checked
// against the CPUs' registers: every CPU that was in the kernel has a pc
// the page's tables (swapper_pg_dir - kimage_voffset) map to its image
// (pc - kimage_voffset). Without such a page the kernel cannot be located.
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arch/arm64/arm64.h"
#include "arch/arm64/pgtable.h"
#include "format/vmcoreinfo.h"
#include "util/error.h"

#define MAX_CPUS 64

struct kp_locator {
	struct kp_memory *mem;
	unsigned ncpus;
	uint64_t pc[MAX_CPUS];
};

struct kp_error *kp_arm64_locator_create(struct kp_memory *mem, const struct kp_source *src,
					 struct kp_locator **ret)
{
	struct kp_locator *l = calloc(1, sizeof(*l));
	if (!l)
		return &kp_enomem;
	l->mem = mem;
	for (size_t i = 0; i < src->ncpus && l->ncpus < MAX_CPUS; i++) {
		struct kp_regs r;
		if (src->cpus[i].prstatus &&
		    kp_arm64_prstatus_regs(src->cpus[i].prstatus, src->cpus[i].prstatus_len, &r))
			l->pc[l->ncpus++] = r.pc;
	}
	if (!l->ncpus) {
		free(l);
		return kp_error_create(KP_ERR_NOT_FOUND, "no CPU registers (NT_PRSTATUS) in the dump");
	}
	*ret = l;
	return NULL;
}

void kp_arm64_locator_destroy(struct kp_locator *l)
{
	free(l);
}

struct kp_error *kp_arm64_locator_check(struct kp_locator *l, const struct kp_open_options *opts,
					const char *text, size_t len, char *verified,
					size_t verified_size)
{
	struct kp_vmcoreinfo *vi;
	struct kp_error *err = kp_vmcoreinfo_parse(text, len, &vi);
	if (err)
		return err;
	struct arm64_layout lay;
	char why[160];
	if (!kp_arm64_layout(vi, &lay, why, sizeof(why)) || !lay.swapper_pg_dir) {
		kp_vmcoreinfo_destroy(vi);
		return kp_error_create(KP_ERR_FORMAT, "not an arm64 vmcoreinfo page: %s",
				       lay.swapper_pg_dir ? why : "no swapper_pg_dir");
	}
	kp_vmcoreinfo_destroy(vi);
	struct arm64_pgtable *pt;
	err = kp_arm64_pgtable_create(l->mem, lay.swapper_pg_dir - lay.kimage_voffset,
				      lay.page_shift, lay.va_bits, &pt);
	if (err)
		return err;
	unsigned checked = 0;
	for (unsigned i = 0; i < l->ncpus && !err; i++) {
		uint64_t pc = l->pc[i];
		if ((pc >> lay.va_bits) != (~0ULL >> lay.va_bits) || pc < lay.stext)
			continue;	// in user space, or not in the image
		KP_INIT(kp_vtop, v);
		err = kp_arm64_pgtable_walk(pt, pc, &v);
		if (err)
			break;
		if (!v.present || v.paddr != pc - lay.kimage_voffset)
			err = kp_error_create(KP_ERR_FORMAT,
					      "CPU %u's pc 0x%" PRIx64 " %s in its page tables, not to 0x%" PRIx64 " (pc - kimage_voffset)",
					      i, pc, v.present ? "maps elsewhere" : "is not mapped",
					      pc - lay.kimage_voffset);
		checked++;
	}
	kp_arm64_pgtable_destroy(pt);
	if (err)
		return err;
	if (checked)
		snprintf(verified, verified_size,
			 "verified: the pc of %u CPU(s) maps to the kernel image through its page tables",
			 checked);
	else
		snprintf(verified, verified_size, "not verified: no CPU was in the kernel image");
	return NULL;
}

struct kp_error *kp_arm64_locator_derive(struct kp_locator *l,
					 const struct kp_open_options *opts,
					 struct kp_locate_result *ret)
{
	return kp_error_create(KP_ERR_NOT_FOUND,
			       "no VMCOREINFO note and no vmcoreinfo page in memory: an arm64 dump carries no system register (TTBR1) to find the page tables with");
}
