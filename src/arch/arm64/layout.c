// SPDX-License-Identifier: MIT
// The layout one arm64 kernel runs with, read from its VMCOREINFO
// (arm64.h: struct arm64_layout).
#include <stdio.h>
#include <stdlib.h>

#include "arch/arm64/arm64.h"
#include "format/vmcoreinfo.h"

bool kp_arm64_layout(const struct kp_vmcoreinfo *vi, struct arm64_layout *ret, char *why,
		     size_t why_size)
{
	struct arm64_layout l = { 0 };
	int64_t n;
	uint64_t a;
	const char *page = kp_vmcoreinfo_get(vi, "PAGESIZE");
	unsigned long size = page ? strtoul(page, NULL, 10) : 0;
	l.page_shift = size == 4096 ? 12 : size == 16384 ? 14 : size == 65536 ? 16 : 0;
	if (!l.page_shift) {
		snprintf(why, why_size, "VMCOREINFO PAGESIZE is %s", page ? page : "missing");
		*ret = l;
		return false;
	}
	if (!kp_vmcoreinfo_number(vi, "VA_BITS", &n) || n < 36 || n > 52) {
		snprintf(why, why_size, "no valid NUMBER(VA_BITS) in VMCOREINFO");
		*ret = l;
		return false;
	}
	l.config_va_bits = (unsigned)n;
	l.va_bits = l.config_va_bits;
	// The size the kernel runs with: a 52-bit kernel falls back to 48 bits
	// (47 with 16 KiB pages) on CPUs without LPA2 (6.9+). With 64 KiB pages
	// swapper_pg_dir keeps the configured size (offset_ttbr1, 5.4+).
	if (l.page_shift != 16 && kp_vmcoreinfo_number(vi, "TCR_EL1_T1SZ", &n) && n >= 12 &&
	    n <= 28)
		l.va_bits = 64 - (unsigned)n;
	if (kp_vmcoreinfo_number(vi, "kimage_voffset", &n)) {
		l.kimage_voffset = (uint64_t)n;
		l.has_kimage_voffset = true;
	}
	if (kp_vmcoreinfo_number(vi, "PHYS_OFFSET", &n)) {
		l.phys_offset = (uint64_t)n;
		l.has_phys_offset = true;
	}
	if (kp_vmcoreinfo_number(vi, "KERNELPACMASK", &n))
		l.pac_mask = (uint64_t)n;
	if (kp_vmcoreinfo_symbol(vi, "swapper_pg_dir", &a))
		l.swapper_pg_dir = a;
	if (kp_vmcoreinfo_symbol(vi, "_stext", &a) || kp_vmcoreinfo_symbol(vi, "_text", &a))
		l.stext = a;
	const char *rel = kp_vmcoreinfo_get(vi, "OSRELEASE");
	unsigned major, minor;
	if (rel && sscanf(rel, "%u.%u", &major, &minor) == 2 && major < 256 && minor < 256)
		l.release = major << 8 | minor;
	*ret = l;
	if (!l.has_kimage_voffset) {
		snprintf(why, why_size, "no NUMBER(kimage_voffset) in VMCOREINFO");
		return false;
	}
	return true;
}
