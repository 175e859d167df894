// SPDX-License-Identifier: MIT
// The SLUB freelist decoder (linux/mm/slab_object.c kp_lx_slab_free_map)
// on freelists this test writes into the synthetic kernel's free RAM
// (SKS_FREE, through the direct map): plain and hardened pointers
// (CONFIG_SLAB_FREELIST_HARDENED: ptr ^ s->random ^ swab(the pointer's own
// address), 5.7+), a left red zone, and the corrupt ones: a loop, a
// pointer out of the slab, one between objects, one the dump lacks.
#include <byteswap.h>

#include "sys_open.h"
#include "linux/mm/mm.h"

#define SLAB_PA SKS_FREE
#define BASE SKP_VA(SLAB_PA)
#define NOBJ 8
#define SLOT 0x40
#define FP_OFF 0x20	// where the freelist pointer sits in an object
#define RANDOM UINT64_C(0x5a5aa5a5deadbeef)

struct layout {
	bool hardened;
	uint64_t red_left;
};

static uint64_t obj(const struct layout *l, unsigned i)
{
	return BASE + i * SLOT + l->red_left;
}

// The stored form of next at the object holding it, by the kernel's rule.
static uint64_t stored(const struct layout *l, uint64_t at, uint64_t next)
{
	return l->hardened ? next ^ RANDOM ^ bswap_64(at) : next;
}

// Edits making the chain order[0] -> order[1] -> ... -> last (an address,
// 0 to end it), each pointer stored at its object + FP_OFF.
static void chain(const struct layout *l, const unsigned *order, unsigned n, uint64_t last, struct sks_word *ret)
{
	for (unsigned i = 0; i < n; i++) {
		uint64_t at = obj(l, order[i]) + FP_OFF, next = i + 1 < n ? obj(l, order[i + 1]) : last;
		ret[i] = (struct sks_word){ at - SK_DIRECT, stored(l, at, next), 8 };
	}
	ret[n] = (struct sks_word){ 0, 0, 0 };
}

static struct kp_error *decode(const struct sks_word *edit, const struct layout *l, uint64_t head, uint8_t *map)
{
	struct kp_kernel *k = sys_open(SK_SYS_NEW, edit);
	if (!k)
		return kp_error_create(KP_ERR_INVALID, "no kernel");
	struct kp_lx_slab_cache c = { .cache = 1, .size = SLOT, .red_left = l->red_left, .offset = FP_OFF,
				      .hardened = l->hardened, .random = RANDOM, .object_size = SLOT };
	memset(map, 0, NOBJ);
	struct kp_error *err = kp_lx_slab_free_map(k, &c, 0x1234, BASE, NOBJ, head, map);
	kp_kernel_destroy(k);
	return err;
}

TEST(free_objects_plain_hardened_and_red_zoned)
{
	static const unsigned order[] = { 5, 2, 7, 0 };
	const struct layout layouts[] = { { false, 0 }, { true, 0 }, { true, 0x10 }, { false, 0x10 } };
	for (size_t i = 0; i < sizeof(layouts) / sizeof(layouts[0]); i++) {
		const struct layout *l = &layouts[i];
		struct sks_word edit[8];
		uint8_t map[NOBJ];
		chain(l, order, 4, 0, edit);
		printf("  hardened %d, red zone 0x%x\n", l->hardened, (unsigned)l->red_left);
		CHECK_OK(decode(edit, l, obj(l, order[0]), map));
		for (unsigned o = 0; o < NOBJ; o++)
			CHECK_U64(map[o], o == 0 || o == 2 || o == 5 || o == 7);
		// An empty freelist: every object allocated.
		CHECK_OK(decode(edit, l, 0, map));
		for (unsigned o = 0; o < NOBJ; o++)
			CHECK_U64(map[o], 0);
	}
}

TEST(hardened_pointers_read_plain_are_corrupt)
{
	static const unsigned order[] = { 1, 3 };
	const struct layout hard = { true, 0 }, plain = { false, 0 };
	struct sks_word edit[4];
	uint8_t map[NOBJ];
	chain(&hard, order, 2, 0, edit);
	// Read without the key, the first stored pointer leads nowhere.
	CHECK_ERR(decode(edit, &plain, obj(&plain, 1), map), KP_ERR_FORMAT, "no object of the slab");
}

TEST(corrupt_freelists_name_the_slab)
{
	const struct layout layouts[] = { { false, 0 }, { true, 0 } };
	for (size_t i = 0; i < 2; i++) {
		const struct layout *l = &layouts[i];
		struct sks_word edit[8];
		uint8_t map[NOBJ];
		static const unsigned loop[] = { 4, 6, 1 };
		chain(l, loop, 3, obj(l, 6), edit);	// 4 -> 6 -> 1 -> 6
		CHECK_ERR(decode(edit, l, obj(l, 4), map), KP_ERR_LOOP, "the freelist of slab 0x1234 meets object");
		static const unsigned self[] = { 3 };
		chain(l, self, 1, obj(l, 3), edit);	// 3 -> 3
		CHECK_ERR(decode(edit, l, obj(l, 3), map), KP_ERR_LOOP, "meets object");
		chain(l, self, 1, BASE + NOBJ * SLOT, edit);	// past the last object
		CHECK_ERR(decode(edit, l, obj(l, 3), map), KP_ERR_FORMAT, "slab 0x1234 points at");
		chain(l, self, 1, obj(l, 2) + 8, edit);	// inside an object
		CHECK_ERR(decode(edit, l, obj(l, 3), map), KP_ERR_FORMAT, "no object of the slab");
		chain(l, self, 1, BASE - SLOT, edit);	// before the slab
		CHECK_ERR(decode(edit, l, obj(l, 3), map), KP_ERR_FORMAT, "no object of the slab");
	}
	// The head itself outside the slab.
	const struct layout l = { false, 0 };
	struct sks_word none[1] = { { 0, 0, 0 } };
	uint8_t map[NOBJ];
	CHECK_ERR(decode(none, &l, SKP_VA(SK_HOLE), map), KP_ERR_FORMAT, "the freelist of slab 0x1234");
}

int main(void)
{
	RUN(free_objects_plain_hardened_and_red_zoned);
	RUN(hardened_pointers_read_plain_are_corrupt);
	RUN(corrupt_freelists_name_the_slab);
	return TEST_SUMMARY();
}
