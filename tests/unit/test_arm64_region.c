// SPDX-License-Identifier: MIT
// The arm64 kernel address-space areas whatis names, for the layouts Debian
// builds: 48-bit VA before and after the 6.9 rework, and a 52-bit kernel
// running with 52 and with 48 bits. Every boundary below was worked out by
// hand from the kernel's macros of that release (arch/arm64/include/asm/
// memory.h, pgtable.h) for a 64-byte struct page, not from region.c.
#include "test.h"
#include "arch/arm64/arm64.h"

struct want {
	uint64_t addr;
	const char *name;	// NULL: in no area
	uint64_t start, end;
};

static void check(const struct arm64_layout *l, const struct want *w, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		uint64_t start = 0, end = 0;
		const char *name = kp_arm64_region(l, w[i].addr, &start, &end);
		if (!w[i].name) {
			if (name)
				FAILF("%#" PRIx64 ": want no area, got %s", w[i].addr, name);
			continue;
		}
		if (!name || strcmp(name, w[i].name)) {
			FAILF("%#" PRIx64 ": want %s, got %s", w[i].addr, w[i].name, name ? name : "none");
			continue;
		}
		CHECK_U64(start, w[i].start);
		CHECK_U64(end, w[i].end);
	}
}

#define N(a) (sizeof(a) / sizeof((a)[0]))

// 6.1, 48-bit: VMEMMAP_START = -(1 << 42), vmalloc ends 256 MiB below it,
// the PCI I/O space ends 8 MiB below it, FIXADDR_TOP 32 MiB below it.
TEST(va48_before_6_9)
{
	struct arm64_layout l = { .page_shift = 12, .va_bits = 48, .config_va_bits = 48,
				  .release = 6 << 8 | 1 };
	const struct want w[] = {
		{ 0xffff000012345000, "linear map", 0xffff000000000000, 0xffff800000000000 },
		{ 0xffff800000010000, "modules", 0xffff800000000000, 0xffff800008000000 },
		{ 0xffff800008000000, "vmalloc", 0xffff800008000000, 0xfffffbfff0000000 },
		{ 0xfffffbffefffffff, "vmalloc", 0xffff800008000000, 0xfffffbfff0000000 },
		{ 0xfffffbfffe800000, "PCI I/O", 0xfffffbfffe800000, 0xfffffbffff800000 },
		{ 0xfffffc0000001000, "vmemmap", 0xfffffc0000000000, 0xfffffe0000000000 },
		{ 0xfffffe0000000000, NULL, 0, 0 },
		{ 0x0000aaaabbbb0000, NULL, 0, 0 },
	};
	check(&l, w, N(w));
}

// 6.12, 48-bit: VMEMMAP_END = -1 GiB, the map 2^35 pages * 64 bytes below
// it, vmalloc (from MODULES_END, 2 GiB of modules) ending 8 MiB below the
// map, PCI I/O 8 MiB above its end, the fixmap up to -8 MiB.
TEST(va48_from_6_9)
{
	struct arm64_layout l = { .page_shift = 12, .va_bits = 48, .config_va_bits = 48,
				  .release = 6 << 8 | 12 };
	const struct want w[] = {
		{ 0xffff800080000000, "vmalloc", 0xffff800080000000, 0xfffffdffbf800000 },
		{ 0xfffffdffbf800000, NULL, 0, 0 },
		{ 0xfffffdffc0000040, "vmemmap", 0xfffffdffc0000000, 0xffffffffc0000000 },
		{ 0xffffffffc0800000, "PCI I/O", 0xffffffffc0800000, 0xffffffffc1800000 },
		{ 0xfffffffffe000000, "fixmap", 0xffffffffc1800000, 0xffffffffff800000 },
	};
	check(&l, w, N(w));
}

// 6.12 built for 52 bits (PAGE_OFFSET = -(1 << 52)), run with 52: the map
// covers the whole linear range, 0x3e0000000000 bytes below -1 GiB.
TEST(va52_running_52)
{
	struct arm64_layout l = { .page_shift = 12, .va_bits = 52, .config_va_bits = 52,
				  .release = 6 << 8 | 12 };
	const struct want w[] = {
		{ 0xfff0000000001000, "linear map", 0xfff0000000000000, 0xffff800000000000 },
		{ 0xffffc1ffbf7ff000, "vmalloc", 0xffff800080000000, 0xffffc1ffbf800000 },
		{ 0xffffc1ffc0000000, "vmemmap", 0xffffc1ffc0000000, 0xffffffffc0000000 },
	};
	check(&l, w, N(w));
}

// The same kernel run with 48 bits (the CPU lacks LPA2): the map's low
// (2^52 - 2^48) / 4096 * 64 = 0x3c0000000000 bytes are unused and vmalloc
// reaches 8 MiB below the part in use (32697ff38287). A module loaded by
// 6.12 on such a machine lay at 0xffffd277946aa000, inside vmalloc.
TEST(va52_running_48)
{
	struct arm64_layout l = { .page_shift = 12, .va_bits = 48, .config_va_bits = 52,
				  .release = 6 << 8 | 12 };
	const struct want w[] = {
		{ 0xffffd277946aa000, "vmalloc", 0xffff800080000000, 0xfffffdffbf800000 },
		{ 0xfffffdffc0000000, "vmemmap", 0xfffffdffc0000000, 0xffffffffc0000000 },
		{ 0xffffffffc1000000, "PCI I/O", 0xffffffffc0800000, 0xffffffffc1800000 },
	};
	check(&l, w, N(w));
}

TEST(unknown_layout)
{
	uint64_t s = 0, e = 0;
	struct arm64_layout none = { .page_shift = 12, .va_bits = 48, .config_va_bits = 48 };
	CHECK(!kp_arm64_region(&none, 0xffff800080000000, &s, &e));
	struct arm64_layout wide = { .page_shift = 12, .va_bits = 56, .config_va_bits = 56,
				     .release = 6 << 8 | 12 };
	CHECK(!kp_arm64_region(&wide, 0xffff800080000000, &s, &e));
}

int main(void)
{
	RUN(va48_before_6_9);
	RUN(va48_from_6_9);
	RUN(va52_running_52);
	RUN(va52_running_48);
	RUN(unknown_layout);
	return TEST_SUMMARY();
}
