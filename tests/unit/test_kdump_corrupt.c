// SPDX-License-Identifier: MIT
// kdump-compressed dumps, corrupt input: truncation at every header byte
// and every flattened record, huge or bad header fields, page descriptors
// pointing past EOF, size mismatches, corrupt compressed data, a dump
// cut short, random damage. Reading good dumps: test_kdump.c.
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include "test.h"
#include "kdump_test.h"
#include "format/source.h"
#include "../gen/mkkdump.h"

// The zlib dump of mem the header tests cut and patch (VMCOREINFO "X=1").
static void build_zlib(const uint8_t *mem, uint8_t **img, size_t *len, struct mkkdump_layout *lay)
{
	struct mkkdump_opts opts = {.mem = mem, .npages = NPAGES, .comp = MKK_ZLIB, .vmcoreinfo = "X=1\n"};
	build(&opts, img, len, lay);
}

// Cutting the file anywhere in the header, sub-header, bitmaps or page_desc
// table fails the open with a format error; cutting the page data fails the
// reads of the pages cut.
TEST(truncation)
{
	uint8_t *mem = make_mem(NPAGES);
	uint8_t *img;
	size_t len;
	struct mkkdump_layout lay;
	build_zlib(mem, &img, &len, &lay);
	uint64_t pd_end = lay.page_desc + lay.ndumped * 24;
	for (uint64_t cut = 0; cut < pd_end; cut += cut < 600 || cut + 64 > pd_end ? 1 : 61) {
		// Bytes after the header in its block are padding and never read.
		if (cut >= 464 && cut < BS)
			continue;
		if (cut < 8) {
			CHECK(!kp_kdump_ops.probe(img, cut));
			continue;
		}
		struct kp_error *err = try_open(img, cut);
		if (!err || err->code != KP_ERR_FORMAT) {
			FAILF("cut at %" PRIu64 ": %s", cut, err ? err->message : "opened");
			kp_error_destroy(err);
			break;
		}
		kp_error_destroy(err);
	}
	// Cut inside the data of the last page.
	struct kp_opened_source o;
	CHECK_OK(open_buf(img, len - 10, &o));
	if (o.mem) {
		uint8_t b[BS];
		CHECK_OK(kp_memory_read(o.mem, KP_PHYS, 0, b, BS));
		CHECK_ERR(kp_memory_read(o.mem, KP_PHYS, (NPAGES - 1) * BS, b, 8),
			  KP_ERR_FORMAT, "past the end of the file");
		CHECK_ERR(kp_memory_read(o.mem, KP_PHYS, (NPAGES - 1) * BS, b, 8),
			  KP_ERR_FORMAT, ": pfn 0x3f (page_desc at 0x");
		close_dump(&o);
	}
	// The flattened stream cut at every record header and inside records.
	uint8_t *flat;
	size_t flen;
	struct mkkdump_flat_opts fo = {.record_max = 3000};
	mkkdump_flatten(img, len, &fo, &flat, &flen);
	for (uint64_t cut = 13; cut < flen; cut += cut < 4200 ? 7 : 1499) {
		struct kp_error *err = try_open(flat, cut);
		if (!err || err->code != KP_ERR_FORMAT) {
			FAILF("flattened cut at %" PRIu64 ": %s", cut,
			      err ? err->message : "opened");
			kp_error_destroy(err);
			break;
		}
		kp_error_destroy(err);
	}
	CHECK_ERR(try_open(flat, flen - 16), KP_ERR_FORMAT, "no end marker");
	free(flat);
	free(img);
	free(mem);
}

static void put32(uint8_t *p, uint32_t v)
{
	memcpy(p, &v, 4);
}

static void put64(uint8_t *p, uint64_t v)
{
	memcpy(p, &v, 8);
}

// Corrupts a copy of img with fn and expects open (or, if read_pfn >= 0, a
// read of that page) to fail with code and substr.
static void expect_bad(const uint8_t *img, size_t len, void (*fn)(uint8_t *, void *),
		       void *arg, int read_pfn, enum kp_error_code code, const char *substr)
{
	uint8_t *c = malloc(len);
	memcpy(c, img, len);
	fn(c, arg);
	if (read_pfn < 0) {
		CHECK_ERR(try_open(c, len), code, substr);
	} else {
		struct kp_opened_source o;
		CHECK_OK(open_buf(c, len, &o));
		if (o.mem) {
			uint8_t b[16];
			CHECK_ERR(kp_memory_read(o.mem, KP_PHYS, (uint64_t)read_pfn * BS + 4,
						 b, 16), code, substr);
			close_dump(&o);
		}
	}
	free(c);
}

struct patch {
	uint64_t off;
	uint64_t value;
	int width;	// 4 or 8
};

static void apply_patch(uint8_t *c, void *arg)
{
	const struct patch *p = arg;
	if (p->width == 4)
		put32(c + p->off, (uint32_t)p->value);
	else
		put64(c + p->off, p->value);
}

TEST(corrupt_headers)
{
	uint8_t *mem = make_mem(NPAGES);
	uint8_t *img;
	size_t len;
	struct mkkdump_layout lay;
	build_zlib(mem, &img, &len, &lay);
	struct {
		struct patch p;
		enum kp_error_code code;
		const char *msg;
	} cases[] = {
		{{428, 0, 4}, KP_ERR_FORMAT, "block size 0 is not a power of two"},
		{{428, 3000, 4}, KP_ERR_FORMAT, "block size 3000"},
		{{428, 1U << 30, 4}, KP_ERR_FORMAT, "block size"},
		{{436, 0xffffffff, 4}, KP_ERR_FORMAT, "bitmap of 4294967295 blocks"},
		{{436, 0, 4}, KP_ERR_FORMAT, "bitmap of 0 blocks"},
		{{432, 0x80000000, 4}, KP_ERR_FORMAT, "sub-header size"},
		{{432, 0, 4}, KP_ERR_FORMAT, "sub-header size 0"},
		{{432, 100000, 4}, KP_ERR_FORMAT, "truncated"},
		{{8, 0, 4}, KP_ERR_FORMAT, "header version 0"},
		{{8, 0x06000000, 4}, KP_ERR_FORMAT, "big-endian"},
		{{0, 0x2020202020202020ULL, 8}, KP_ERR_FORMAT, "no KDUMP signature"},
		{{0, 0x504d55444b534944ULL, 8}, KP_ERR_UNSUPPORTED, "diskdump"},	// "DISKDUMP"
		// max_mapnr_64 far beyond the bitmap: clamped, the pd table is
		// then checked against the file.
		{{lay.sub_header + 56, 1ULL << 40, 8}, KP_ERR_FORMAT, "notes at"},
		{{lay.sub_header + 40, 1ULL << 40, 8}, KP_ERR_FORMAT, "VMCOREINFO at"},
		{{lay.sub_header + 32, UINT64_MAX - 2, 8}, KP_ERR_FORMAT, "VMCOREINFO at"},
		{{lay.sub_header + 88, NPAGES + 1, 8}, KP_ERR_FORMAT, "split pfn range"},
	};
	put32(img + lay.sub_header + 12, 1);	// split: every case below is a split dump
	put64(img + lay.sub_header + 88, NPAGES);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		expect_bad(img, len, apply_patch, &cases[i].p, -1, cases[i].code, cases[i].msg);
	put32(img + lay.sub_header + 12, 0);

	// A larger max_mapnr is clamped to the bitmap; a smaller one hides pages.
	struct patch p = {lay.sub_header + 96, 1ULL << 40, 8};
	uint8_t *c = malloc(len);
	memcpy(c, img, len);
	apply_patch(c, &p);
	struct kp_opened_source o;
	CHECK_OK(open_buf(c, len, &o));
	if (o.mem)
		close_dump(&o);
	p.value = 10;
	memcpy(c, img, len);
	apply_patch(c, &p);
	CHECK_OK(open_buf(c, len, &o));
	if (o.mem) {
		uint8_t b[8];
		CHECK_OK(kp_memory_read(o.mem, KP_PHYS, 9 * BS, b, 8));
		CHECK_ERR(kp_memory_read(o.mem, KP_PHYS, 10 * BS, b, 8), KP_ERR_FAULT, "0xa000");
		close_dump(&o);
	}
	free(c);
	free(img);
	free(mem);
}

struct pd_patch {
	uint64_t pd;		// page_desc offset
	uint64_t offset;	// new data offset, or UINT64_MAX to keep
	uint32_t size, flags;	// UINT32_MAX to keep
};

static void apply_pd(uint8_t *c, void *arg)
{
	const struct pd_patch *p = arg;
	if (p->offset != UINT64_MAX)
		put64(c + p->pd, p->offset);
	if (p->size != UINT32_MAX)
		put32(c + p->pd + 8, p->size);
	if (p->flags != UINT32_MAX)
		put32(c + p->pd + 12, p->flags);
}

static void flip_data(uint8_t *c, void *arg)
{
	const uint64_t *off = arg;
	for (int i = 0; i < 24; i++)
		c[off[0] + 4 + i] ^= 0x5b;
}

// A copy of img whose page 1 (page descriptor at pd1, data at data1) holds
// the zl bytes of z, opened into *o; the caller frees it after closing.
static uint8_t *open_with_data1(const uint8_t *img, size_t len, uint64_t pd1, uint64_t data1,
				const void *z, size_t zl, struct kp_opened_source *o)
{
	uint8_t *c = malloc(len);
	memcpy(c, img, len);
	memcpy(c + data1, z, zl);
	put32(c + pd1 + 8, (uint32_t)zl);
	CHECK_OK(open_buf(c, len, o));
	return c;
}

// Page 1 is text-like (compressible), page 2 random (stored raw), page 4 a ramp.
TEST(corrupt_page_descriptors)
{
	uint8_t *mem = make_mem(NPAGES);
	for (int comp = MKK_ZLIB; comp <= MKK_ZSTD; comp++) {
		struct mkkdump_opts opts = {.mem = mem, .npages = NPAGES, .comp = comp};
		uint8_t *img;
		size_t len;
		struct mkkdump_layout lay;
		build(&opts, &img, &len, &lay);
		uint64_t pd1 = mkkdump_pd(&lay, 1), pd2 = mkkdump_pd(&lay, 2);
		uint64_t data1;
		uint32_t size1;
		memcpy(&data1, img + pd1, 8);
		memcpy(&size1, img + pd1 + 8, 4);
		CHECK(size1 < BS);
		struct pd_patch cases[] = {
			{pd1, len, UINT32_MAX, UINT32_MAX},
			{pd1, UINT64_MAX - 10, UINT32_MAX, UINT32_MAX},
			{pd1, UINT64_MAX, 0, UINT32_MAX},
			{pd1, UINT64_MAX, BS + 1, UINT32_MAX},
			{pd1, UINT64_MAX, UINT32_MAX, 0x3},
			{pd2, UINT64_MAX, BS - 1, UINT32_MAX},
			{pd1, UINT64_MAX, size1 - 1, UINT32_MAX},
		};
		const char *msgs[] = {"past the end of the file", "past the end of the file",
				      "data size 0", "exceeds the block size",
				      "more than one compression flag",
				      "uncompressed data size differs", "pfn 0x1"};
		for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
			expect_bad(img, len, apply_pd, &cases[i], i == 5 ? 2 : 1,
				   KP_ERR_FORMAT, msgs[i]);
		expect_bad(img, len, flip_data, &data1, 1, KP_ERR_FORMAT, "pfn 0x1");

		// A valid stream longer than a block.
		if (comp == MKK_ZSTD) {
			static uint8_t two[2 * BS];
			uint8_t z[512];
			size_t zl = ZSTD_compress(z, sizeof(z), two, sizeof(two), 1);
			CHECK(!ZSTD_isError(zl) && zl < size1);
			struct kp_opened_source o;
			uint8_t *c = open_with_data1(img, len, pd1, data1, z, zl, &o);
			if (o.mem) {
				uint64_t v;
				CHECK_ERR(kp_memory_read(o.mem, KP_PHYS, BS, &v, 8), KP_ERR_FORMAT,
					  "decompresses to more than the block size 4096");
				close_dump(&o);
			}
			free(c);
		}
		// A valid stream of the wrong length: 100 bytes, not a block.
		if (comp == MKK_ZLIB) {
			uint8_t small[100] = {1, 2, 3}, z[256];
			uLongf zl = sizeof(z);
			compress2(z, &zl, small, sizeof(small), 9);
			struct kp_opened_source o;
			uint8_t *c = open_with_data1(img, len, pd1, data1, z, zl, &o);
			if (o.mem) {
				uint64_t v;
				CHECK_ERR(kp_memory_read(o.mem, KP_PHYS, BS, &v, 8), KP_ERR_FORMAT,
					  "decompresses to 100 bytes, not the block size 4096");
				// The failed slot is not cached as good data.
				CHECK_ERR(kp_memory_read(o.mem, KP_PHYS, BS, &v, 8), KP_ERR_FORMAT,
					  "decompresses to 100 bytes");
				// Other pages still read.
				CHECK_OK(kp_memory_read(o.mem, KP_PHYS, 4 * BS, &v, 8));
				close_dump(&o);
			}
			free(c);
		}
		free(img);
	}
	free(mem);
}

// A dump the writer could not finish (DUMP_DH_COMPRESSED_INCOMPLETE):
// page_desc entries left zero are reported as not written.
TEST(incomplete_dump)
{
	uint8_t *mem = make_mem(NPAGES);
	struct mkkdump_opts opts = {.mem = mem, .npages = NPAGES, .comp = MKK_ZLIB};
	uint8_t *img;
	size_t len;
	struct mkkdump_layout lay;
	build(&opts, &img, &len, &lay);
	put32(img + 424, 0x1 | 0x8);
	memset(img + mkkdump_pd(&lay, 40), 0, 24 * (lay.ndumped - 40));
	struct kp_opened_source o;
	CHECK_OK(open_buf(img, len, &o));
	if (o.mem) {
		uint64_t v;
		CHECK_OK(kp_memory_read(o.mem, KP_PHYS, 39 * BS, &v, 8));
		CHECK_ERR(kp_memory_read(o.mem, KP_PHYS, 41 * BS, &v, 8), KP_ERR_FAULT,
			  "incomplete");
		close_dump(&o);
	}
	free(img);
	free(mem);
}

static void put_be64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (56 - 8 * i));
}

TEST(corrupt_flattened)
{
	uint8_t *mem = make_mem(8);
	struct mkkdump_opts opts = {.mem = mem, .npages = 8, .comp = MKK_ZLIB};
	uint8_t *img, *flat;
	size_t len, flen;
	build(&opts, &img, &len, NULL);
	struct mkkdump_flat_opts fo = {0};
	mkkdump_flatten(img, len, &fo, &flat, &flen);
	uint8_t *c = malloc(flen);
	struct {
		uint64_t off, value;
		const char *msg;
	} cases[] = {
		{16, 2, "type 2"},
		{24, 0, "version 0"},
		{4096, 1ULL << 63, "bad offset"},		// negative offset
		{4104, 1ULL << 62, "bad offset"},		// size past EOF
		{4104, UINT64_MAX - 5, "bad offset"},		// negative size
		{4096, INT64_MAX - 10, "bad offset"},		// offset + size overflows
		{4096, 4096, "no KDUMP signature"},		// header lands elsewhere
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		memcpy(c, flat, flen);
		put_be64(c + cases[i].off, cases[i].value);
		CHECK_ERR(try_open(c, flen), KP_ERR_FORMAT, cases[i].msg);
	}
	free(c);
	// A record far out makes the logical file huge; nothing is allocated
	// for the gap and the dump still reads.
	uint8_t *c2 = malloc(flen + 17);
	memcpy(c2, flat, flen - 16);
	put_be64(c2 + flen - 16, 1ULL << 60);
	put_be64(c2 + flen - 8, 1);
	c2[flen] = 0x77;
	put_be64(c2 + flen + 1, UINT64_MAX);
	put_be64(c2 + flen + 9, UINT64_MAX);
	struct kp_opened_source o;
	CHECK_OK(open_buf(c2, flen + 17, &o));
	if (o.mem) {
		static uint8_t got[8 * BS];
		CHECK_OK(kp_memory_read(o.mem, KP_PHYS, 0, got, sizeof(got)));
		CHECK(memcmp(got, mem, sizeof(got)) == 0);
		close_dump(&o);
	}
	free(c2);
	// The message names the file and the record.
	c2 = malloc(flen);
	memcpy(c2, flat, flen);
	put_be64(c2 + 4096 + 8, 1ULL << 40);
	CHECK_ERR(try_open(c2, flen), KP_ERR_FORMAT, "flattened dump record 0 at offset 0x1000");
	CHECK_ERR(try_open(c2, flen), KP_ERR_FORMAT, "/tmp/kpeek-test-kdump-");
	free(c2);
	free(flat);
	free(img);
	free(mem);
}

// Random damage to the metadata and page data must never crash (ASan run).
TEST(random_damage)
{
	uint8_t *mem = make_mem(NPAGES);
	uint8_t comp[NPAGES], state[NPAGES];
	for (int i = 0; i < NPAGES; i++)
		comp[i] = (uint8_t)(i % 5);
	make_state(state);
	struct mkkdump_opts opts = {.mem = mem, .npages = NPAGES, .comp = MKK_ZLIB,
				    .page_comp = comp, .state = state, .dump_level = 1,
				    .vmcoreinfo = "X=1\n"};
	uint8_t *img;
	size_t len;
	struct mkkdump_layout lay;
	build(&opts, &img, &len, &lay);
	uint8_t *c = malloc(len);
	static uint8_t buf[NPAGES * BS];
	for (int iter = 0; iter < 300; iter++) {
		memcpy(c, img, len);
		int n = 1 + (int)(next_rand() % 8);
		for (int k = 0; k < n; k++) {
			uint64_t r = next_rand();
			uint64_t off = r % 3 == 0 ? r % 512 : r % 3 == 1 ? lay.page_desc + r % (lay.data - lay.page_desc) : r % len;
			c[off] ^= (uint8_t)(1 + (next_rand() % 255));
		}
		struct kp_opened_source o;
		struct kp_error *err = open_buf(c, len, &o);
		if (err) {
			kp_error_destroy(err);
			continue;
		}
		for (uint64_t a = 0; a < NPAGES * BS; a += BS) {
			if (next_rand() % 4 == 0)
				continue;
			err = kp_memory_read(o.mem, KP_PHYS, a + next_rand() % 100, buf,
					     1 + next_rand() % (2 * BS));
			kp_error_destroy(err);
		}
		close_dump(&o);
	}
	free(c);
	// The same on the flattened stream, record headers included.
	uint8_t *flat;
	size_t flen;
	struct mkkdump_flat_opts fo = {.record_max = 2000, .shuffle = true};
	mkkdump_flatten(img, len, &fo, &flat, &flen);
	c = malloc(flen);
	for (int iter = 0; iter < 300; iter++) {
		memcpy(c, flat, flen);
		int n = 1 + (int)(next_rand() % 4);
		for (int k = 0; k < n; k++) {
			uint64_t r = next_rand();
			uint64_t off = r % 2 ? 4096 + (r >> 8) % 2016 * 16 % (flen - 4096)
					     : r % flen;
			c[off] ^= (uint8_t)(1 + (next_rand() % 255));
		}
		struct kp_opened_source o;
		struct kp_error *err = open_buf(c, flen, &o);
		if (err) {
			kp_error_destroy(err);
			continue;
		}
		for (uint64_t a = 0; a < NPAGES * BS; a += 3 * BS)
			kp_error_destroy(kp_memory_read(o.mem, KP_PHYS, a, buf, 2 * BS));
		close_dump(&o);
	}
	free(c);
	free(flat);
	free(img);
	free(mem);
}

int main(void)
{
	RUN(truncation);
	RUN(corrupt_headers);
	RUN(corrupt_page_descriptors);
	RUN(incomplete_dump);
	RUN(corrupt_flattened);
	RUN(random_damage);
	return TEST_SUMMARY();
}
