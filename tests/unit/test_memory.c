// SPDX-License-Identifier: MIT
// Segment maps: reads across edges, holes, overlapping adds, the translator
// path and the top of the 64-bit address space.
#include <time.h>

#include "test.h"
#include "io/memory.h"

// A reader that returns byte (offset & 0xff) ^ tag, so tests can tell which
// segment and which source offset served each byte.
static struct kp_error *read_pattern(void *buf, uint64_t address, size_t count,
				     uint64_t offset, void *arg)
{
	uint8_t tag = (uint8_t)(uintptr_t)arg;
	for (size_t i = 0; i < count; i++)
		((uint8_t *)buf)[i] = (uint8_t)((offset + i) & 0xff) ^ tag;
	return NULL;
}

static uint8_t pat(uint64_t offset, uint8_t tag)
{
	return (uint8_t)(offset & 0xff) ^ tag;
}

static struct kp_memory *new_mem(void)
{
	struct kp_memory *mem = NULL;
	CHECK_OK(kp_memory_create(&mem));
	return mem;
}

TEST(read_across_segment_edges)
{
	struct kp_memory *mem = new_mem();
	uint8_t a[16], b[16];
	for (int i = 0; i < 16; i++) {
		a[i] = (uint8_t)i;
		b[i] = (uint8_t)(0x80 + i);
	}
	CHECK_OK(kp_memory_add(mem, KP_PHYS, 0x1000, 16, kp_read_buffer, a, 0));
	CHECK_OK(kp_memory_add(mem, KP_PHYS, 0x1010, 16, kp_read_buffer, b, 0));
	uint8_t buf[32];
	CHECK_OK(kp_memory_read(mem, KP_PHYS, 0x1008, buf, 16));
	for (int i = 0; i < 8; i++) {
		CHECK_U64(buf[i], 8 + i);
		CHECK_U64(buf[8 + i], 0x80 + i);
	}
	CHECK_OK(kp_memory_read(mem, KP_PHYS, 0x1000, buf, 32));
	CHECK_U64(buf[31], 0x8f);
	// Virtual space is separate.
	CHECK_ERR(kp_memory_read(mem, KP_VIRT, 0x1000, buf, 1), KP_ERR_FAULT,
		  "virtual address 0x1000 is not in the memory source");
	CHECK(kp_memory_has_segments(mem, KP_PHYS));
	CHECK(!kp_memory_has_segments(mem, KP_VIRT));
	const struct kp_range *r;
	CHECK_U64(kp_memory_ranges(mem, KP_PHYS, &r), 1);
	CHECK_U64(r[0].start, 0x1000);
	CHECK_U64(r[0].end, 0x1020);
	kp_memory_destroy(mem);
}

TEST(hole_names_first_missing_address)
{
	struct kp_memory *mem = new_mem();
	CHECK_OK(kp_memory_add(mem, KP_PHYS, 0x1000, 0x1000, read_pattern, NULL, 0));
	CHECK_OK(kp_memory_add(mem, KP_PHYS, 0x3000, 0x1000, read_pattern, NULL, 0));
	uint8_t buf[0x3000];
	struct kp_error *err = kp_memory_read(mem, KP_PHYS, 0x1ff0, buf, 0x20);
	CHECK(err && err->code == KP_ERR_FAULT && err->has_address);
	if (err) {
		CHECK_U64(err->address, 0x2000);
		CHECK_STR(err->message, "physical address 0x2000 is not in the memory source");
	}
	kp_error_destroy(err);
	err = kp_memory_read(mem, KP_PHYS, 0x500, buf, 4);
	CHECK(err && err->has_address && err->address == 0x500);
	kp_error_destroy(err);
	err = kp_memory_read(mem, KP_PHYS, 0x4000, buf, 4);
	CHECK(err && err->has_address && err->address == 0x4000);
	kp_error_destroy(err);
	CHECK_OK(kp_memory_read(mem, KP_PHYS, 0x3ff0, buf, 0x10));
	CHECK_OK(kp_memory_read(mem, KP_PHYS, 0x1234, buf, 0));
	const struct kp_range *r;
	CHECK_U64(kp_memory_ranges(mem, KP_PHYS, &r), 2);
	kp_memory_destroy(mem);
}

TEST(overlapping_add_earlier_wins)
{
	struct kp_memory *mem = new_mem();
	void *A = (void *)(uintptr_t)0x10, *B = (void *)(uintptr_t)0x20,
	     *C = (void *)(uintptr_t)0x40;
	CHECK_OK(kp_memory_add(mem, KP_VIRT, 0x100, 0x100, read_pattern, A, 0));
	CHECK_OK(kp_memory_add(mem, KP_VIRT, 0x300, 0x100, read_pattern, B, 0));
	// C spans both and the gaps around them; source offset 0x1000 at 0x0.
	CHECK_OK(kp_memory_add(mem, KP_VIRT, 0x0, 0x500, read_pattern, C, 0x1000));
	uint8_t buf[0x500];
	CHECK_OK(kp_memory_read(mem, KP_VIRT, 0, buf, sizeof(buf)));
	int bad = 0;
	for (uint64_t a = 0; a < 0x500; a++) {
		uint8_t want;
		if (a >= 0x100 && a < 0x200)
			want = pat(a - 0x100, 0x10);
		else if (a >= 0x300 && a < 0x400)
			want = pat(a - 0x300, 0x20);
		else
			want = pat(0x1000 + a, 0x40);
		if (buf[a] != want && bad++ < 3)
			FAILF("byte at 0x%" PRIx64 ": want 0x%x got 0x%x", a, want, buf[a]);
	}
	// A range entirely inside an existing one adds nothing.
	CHECK_OK(kp_memory_add(mem, KP_VIRT, 0x120, 0x10, read_pattern, B, 0));
	CHECK_OK(kp_memory_read(mem, KP_VIRT, 0x120, buf, 1));
	CHECK_U64(buf[0], pat(0x20, 0x10));
	const struct kp_range *r;
	CHECK_U64(kp_memory_ranges(mem, KP_VIRT, &r), 1);
	CHECK_U64(r[0].start, 0);
	CHECK_U64(r[0].end, 0x500);
	// The cache is recomputed after an add.
	CHECK_OK(kp_memory_add(mem, KP_VIRT, 0x1000, 0x10, read_pattern, A, 0));
	CHECK_U64(kp_memory_ranges(mem, KP_VIRT, &r), 2);
	CHECK_U64(r[1].start, 0x1000);
	CHECK_U64(r[1].end, 0x1010);
	kp_memory_destroy(mem);
}

// Randomized adds against a byte-map model.
TEST(random_adds_match_model)
{
	enum { SPACE = 4096 };
	static uint8_t model[SPACE];	// tag of the owning add, 0 = hole
	static uint16_t model_off[SPACE];
	uint32_t seed = 12345;
	for (int round = 0; round < 20; round++) {
		memset(model, 0, sizeof(model));
		struct kp_memory *mem = new_mem();
		for (int k = 1; k <= 60; k++) {
			seed = seed * 1103515245 + 12345;
			uint64_t start = (seed >> 8) % SPACE;
			seed = seed * 1103515245 + 12345;
			uint64_t size = (seed >> 8) % 200;
			if (start + size > SPACE)
				size = SPACE - start;
			uint64_t off = (uint64_t)k * 1000;
			CHECK_OK(kp_memory_add(mem, KP_PHYS, start, size, read_pattern,
					       (void *)(uintptr_t)k, off));
			for (uint64_t a = start; a < start + size; a++) {
				if (!model[a]) {
					model[a] = (uint8_t)k;
					model_off[a] = (uint16_t)(off + a - start);
				}
			}
		}
		int bad = 0;
		for (uint64_t a = 0; a < SPACE; a++) {
			uint8_t b;
			struct kp_error *err = kp_memory_read(mem, KP_PHYS, a, &b, 1);
			if (!model[a]) {
				if (!err && bad++ < 3)
					FAILF("round %d: 0x%" PRIx64 " should be a hole", round, a);
			} else if (err || b != pat(model_off[a], model[a])) {
				if (bad++ < 3)
					FAILF("round %d: byte 0x%" PRIx64 " wrong", round, a);
			}
			kp_error_destroy(err);
		}
		// Ranges: sorted, disjoint, non-adjacent, and equal to the model.
		const struct kp_range *r;
		size_t n = kp_memory_ranges(mem, KP_PHYS, &r);
		size_t covered = 0, want = 0;
		for (size_t i = 0; i < n; i++) {
			CHECK(r[i].start < r[i].end);
			if (i)
				CHECK(r[i].start > r[i - 1].end);
			for (uint64_t a = r[i].start; a < r[i].end; a++)
				covered += model[a] != 0;
		}
		for (uint64_t a = 0; a < SPACE; a++)
			want += model[a] != 0;
		CHECK_U64(covered, want);
		kp_memory_destroy(mem);
	}
}

// Translator: virtual page v maps to physical page (v ^ 1) for v < 16;
// virtual page 5 is unmapped.
static struct kp_error *toy_translate(void *arg, uint64_t vaddr, uint64_t *paddr_ret,
				      uint64_t *size_ret)
{
	(*(int *)arg)++;
	uint64_t page = vaddr >> 12;
	if (page >= 16 || page == 5)
		return kp_error_fault(vaddr, "virtual address 0x%" PRIx64 " is not mapped",
				      vaddr);
	*paddr_ret = ((page ^ 1) << 12) | (vaddr & 0xfff);
	*size_ret = 0x1000 - (vaddr & 0xfff);
	return NULL;
}

TEST(translator_path)
{
	struct kp_memory *mem = new_mem();
	int calls = 0;
	// Physical pages 0..11 present (page 12+ missing).
	CHECK_OK(kp_memory_add(mem, KP_PHYS, 0, 12 * 0x1000, read_pattern, NULL, 0));
	// A virtual segment over virtual page 2 wins over translation.
	CHECK_OK(kp_memory_add(mem, KP_VIRT, 0x2000, 0x1000, read_pattern,
			       (void *)(uintptr_t)0x55, 0));
	uint8_t buf[0x3000];
	CHECK_ERR(kp_memory_read(mem, KP_VIRT, 0x0, buf, 1), KP_ERR_FAULT,
		  "virtual address 0x0 is not in the memory source");
	kp_memory_set_translator(mem, toy_translate, &calls);
	// 0x1800..0x3800: page 1 -> phys page 0, page 2 = segment, page 3 -> phys 2.
	CHECK_OK(kp_memory_read(mem, KP_VIRT, 0x1800, buf, 0x2000));
	CHECK_U64(buf[0], pat(0x800, 0));
	CHECK_U64(buf[0x7ff], pat(0xfff, 0));
	CHECK_U64(buf[0x800], pat(0, 0x55));
	CHECK_U64(buf[0x17ff], pat(0xfff, 0x55));
	CHECK_U64(buf[0x1800], pat(0x2000, 0));
	CHECK_U64(calls, 2);
	// Translator faults propagate with their address.
	struct kp_error *err = kp_memory_read(mem, KP_VIRT, 0x4ffe, buf, 4);
	CHECK(err && err->code == KP_ERR_FAULT && err->has_address && err->address == 0x5000);
	if (err)
		CHECK(strstr(err->message, "0x5000 is not mapped") != NULL);
	kp_error_destroy(err);
	// Virtual page 13 maps to physical page 12, which is not in the source:
	// the fault names the virtual address and the physical one.
	err = kp_memory_read(mem, KP_VIRT, 0xd010, buf, 4);
	CHECK(err && err->code == KP_ERR_FAULT && err->has_address && err->address == 0xd010);
	if (err)
		CHECK_STR(err->message, "virtual address 0xd010 maps to physical 0xc010,"
			  " which is not in the memory source");
	kp_error_destroy(err);
	// Physical reads never translate.
	CHECK_ERR(kp_memory_read(mem, KP_PHYS, 0xc000, buf, 1), KP_ERR_FAULT,
		  "physical address 0xc000");
	kp_memory_destroy(mem);
}

// A source that has a page but cannot give it (as makedumpfile-excluded pages).
static struct kp_error *read_excluded(void *buf, uint64_t address, size_t count,
				      uint64_t offset, void *arg)
{
	return kp_error_fault(address, "physical page 0x%" PRIx64 " was excluded",
			      address & ~(uint64_t)0xfff);
}

TEST(translated_fault_keeps_the_source_reason)
{
	struct kp_memory *mem = new_mem();
	int calls = 0;
	CHECK_OK(kp_memory_add(mem, KP_PHYS, 0, 0x1000, read_pattern, NULL, 0));
	CHECK_OK(kp_memory_add(mem, KP_PHYS, 0x1000, 0x1000, read_excluded, NULL, 0));
	kp_memory_set_translator(mem, toy_translate, &calls);
	uint8_t buf[8];
	// Virtual page 0 -> physical page 1, backed by a segment that faults.
	struct kp_error *err = kp_memory_read(mem, KP_VIRT, 0x10, buf, sizeof(buf));
	CHECK(err && err->code == KP_ERR_FAULT && err->has_address && err->address == 0x10);
	if (err)
		CHECK_STR(err->message, "virtual address 0x10 (physical 0x1010): "
			  "physical page 0x1000 was excluded");
	kp_error_destroy(err);
	kp_memory_destroy(mem);
}

TEST(top_of_address_space)
{
	struct kp_memory *mem = new_mem();
	uint64_t top = UINT64_MAX;
	// Ends exactly at the last byte.
	CHECK_OK(kp_memory_add(mem, KP_VIRT, top - 0xff, 0x100, read_pattern, NULL, 0));
	// Wrapping past the top is refused.
	CHECK_ERR(kp_memory_add(mem, KP_VIRT, top - 0xf, 0x20, read_pattern, NULL, 0),
		  KP_ERR_INVALID, "wraps");
	// Size 0 is a no-op.
	CHECK_OK(kp_memory_add(mem, KP_VIRT, top, 0, read_pattern, NULL, 0));
	uint8_t buf[0x100];
	CHECK_OK(kp_memory_read(mem, KP_VIRT, top - 0xff, buf, 0x100));
	CHECK_U64(buf[0xff], 0xff);
	CHECK_OK(kp_memory_read(mem, KP_VIRT, top, buf, 1));
	CHECK_U64(buf[0], 0xff);
	CHECK_ERR(kp_memory_read(mem, KP_VIRT, top, buf, 2), KP_ERR_FAULT, "wraps");
	// Overlap clipping at the top: the new range only fills below.
	CHECK_OK(kp_memory_add(mem, KP_VIRT, top - 0x1ff, 0x200, read_pattern,
			       (void *)(uintptr_t)0x77, 0));
	CHECK_OK(kp_memory_read(mem, KP_VIRT, top - 0x1ff, buf, 2));
	CHECK_U64(buf[0], pat(0, 0x77));
	CHECK_OK(kp_memory_read(mem, KP_VIRT, top - 0x100, buf, 2));
	CHECK_U64(buf[0], pat(0xff, 0x77));
	CHECK_U64(buf[1], pat(0, 0));
	// Whole-space segment in the other space.
	CHECK_OK(kp_memory_add(mem, KP_PHYS, 0, UINT64_MAX, read_pattern, NULL, 0));
	CHECK_OK(kp_memory_add(mem, KP_PHYS, 0, UINT64_MAX, read_pattern, NULL, 0));
	CHECK_OK(kp_memory_add(mem, KP_PHYS, top, 1, read_pattern, (void *)(uintptr_t)1, 0));
	CHECK_OK(kp_memory_read(mem, KP_PHYS, top - 1, buf, 2));
	CHECK_U64(buf[0], pat(top - 1, 0));
	CHECK_U64(buf[1], pat(0, 1));
	const struct kp_range *r;
	CHECK_U64(kp_memory_ranges(mem, KP_PHYS, &r), 1);
	CHECK_U64(r[0].start, 0);
	CHECK_U64(r[0].end, UINT64_MAX);
	CHECK_U64(kp_memory_ranges(mem, KP_VIRT, &r), 1);
	CHECK_U64(r[0].start, top - 0x1ff);
	CHECK_U64(r[0].end, UINT64_MAX);
	kp_memory_destroy(mem);
}

TEST(zero_reader_and_bad_space)
{
	struct kp_memory *mem = new_mem();
	CHECK_OK(kp_memory_add(mem, KP_PHYS, 0x10, 0x10, kp_read_zero, NULL, 0));
	uint8_t buf[16];
	memset(buf, 0xaa, sizeof(buf));
	CHECK_OK(kp_memory_read(mem, KP_PHYS, 0x10, buf, 16));
	for (int i = 0; i < 16; i++)
		CHECK_U64(buf[i], 0);
	CHECK_ERR(kp_memory_add(mem, (enum kp_space)7, 0, 1, kp_read_zero, NULL, 0),
		  KP_ERR_INVALID, "address space");
	CHECK_ERR(kp_memory_read(mem, (enum kp_space)7, 0, buf, 1), KP_ERR_INVALID,
		  "address space");
	kp_memory_destroy(mem);
	kp_memory_destroy(NULL);
}

// Many ascending adds (a kdump with many runs) stay fast.
TEST(many_ascending_adds)
{
	struct kp_memory *mem = new_mem();
	for (uint64_t i = 0; i < 200000; i++)
		CHECK_OK(kp_memory_add(mem, KP_PHYS, i * 0x2000, 0x1000, kp_read_zero, NULL, 0));
	uint8_t b;
	CHECK_OK(kp_memory_read(mem, KP_PHYS, 12345 * 0x2000 + 7, &b, 1));
	CHECK_ERR(kp_memory_read(mem, KP_PHYS, 12345 * 0x2000 + 0x1000, &b, 1),
		  KP_ERR_FAULT, "physical address 0x6073000 is not");
	const struct kp_range *r;
	CHECK_U64(kp_memory_ranges(mem, KP_PHYS, &r), 200000);
	kp_memory_destroy(mem);
}

// Descending and interleaved orders (hostile ELF headers) are as fast as
// ascending ones: one sort when the map is first used, not an insert each.
TEST(many_descending_adds)
{
	struct kp_memory *mem = new_mem();
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (uint64_t i = 200000; i-- > 0;)
		CHECK_OK(kp_memory_add(mem, KP_PHYS, i * 0x2000, 0x1000, kp_read_zero, NULL, 0));
	// The same ranges again, shifted: they only fill the gaps.
	for (uint64_t i = 200000; i-- > 0;)
		CHECK_OK(kp_memory_add(mem, KP_PHYS, i * 0x2000 + 0x800, 0x1000, read_pattern,
				       NULL, 0x10));
	uint8_t b[2];
	CHECK_OK(kp_memory_read(mem, KP_PHYS, 12345 * 0x2000 + 0xfff, b, 2));
	CHECK_U64(b[0], 0);
	CHECK_U64(b[1], pat(0x810, 0));
	clock_gettime(CLOCK_MONOTONIC, &t1);
	double dt = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	if (dt > 2.0)
		FAILF("400000 descending adds took %.2f s", dt);
	const struct kp_range *r;
	CHECK_U64(kp_memory_ranges(mem, KP_PHYS, &r), 200000);
	kp_memory_destroy(mem);
}

int main(void)
{
	RUN(read_across_segment_edges);
	RUN(hole_names_first_missing_address);
	RUN(overlapping_add_earlier_wins);
	RUN(random_adds_match_model);
	RUN(translator_path);
	RUN(translated_fault_keeps_the_source_reason);
	RUN(top_of_address_space);
	RUN(zero_reader_and_bad_space);
	RUN(many_ascending_adds);
	RUN(many_descending_adds);
	return TEST_SUMMARY();
}
