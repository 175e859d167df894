// SPDX-License-Identifier: MIT
// LiME and AVML images: version 1 ranges (with holes, padded from 0), AVML
// framed snappy (compressed and stored chunks, padding, several blocks, reads
// across chunk and block edges), kp_kernel_open finding the kernel in a LiME
// image, and hostile headers: every truncation length, bad magic, versions,
// end < start, overlaps, ranges past EOF, stream length and CRC mismatches.
#include <stdlib.h>
#include <unistd.h>

#include "test.h"
#include "opensrc.h"
#include "io/file.h"
#include "format/source.h"
#include "../gen/mkcore.h"
#include "../gen/mklime.h"


static char *tmp_path(void)
{
	char *p = strdup("/tmp/kp_test_lime_XXXXXX");
	int fd = mkstemp(p);
	if (fd < 0)
		abort();
	close(fd);
	return p;
}

static struct kp_error *open_image(const char *path, struct kp_opened_source *o)
{
	return kp_test_open_source(&kp_lime_ops, path, o);
}

static void close_image(struct kp_opened_source *o)
{
	kp_test_close_source(o);
}

// Writes the image and opens it; returns the error (NULL: *o is open).
static struct kp_error *open_ml(struct mklime *ml, char **path_ret, struct kp_opened_source *o)
{
	uint8_t *img;
	size_t len;
	mklime_to_buffer(ml, &img, &len);
	char *path = tmp_path();
	if (mkcore_write_bytes(path, img, len) < 0)
		abort();
	free(img);
	*path_ret = path;
	return open_image(path, o);
}

static struct kp_error *try_bytes(const uint8_t *img, size_t len)
{
	char *path = tmp_path();
	if (mkcore_write_bytes(path, img, len) < 0)
		abort();
	struct kp_opened_source o;
	struct kp_error *err = open_image(path, &o);
	if (!err)
		close_image(&o);
	unlink(path);
	free(path);
	return err;
}

static void fill(uint8_t *buf, size_t len, uint32_t seed)
{
	// Compressible but not constant.
	for (size_t i = 0; i < len; i++)
		buf[i] = (uint8_t)((i / 64) * 13 + seed + (i % 7 == 0 ? i : 0));
}

TEST(probe)
{
	static const uint8_t lime[8] = {0x45, 0x4d, 0x69, 0x4c, 1, 0, 0, 0};
	static const uint8_t avml[8] = {0x41, 0x56, 0x4d, 0x4c, 2, 0, 0, 0};
	CHECK(kp_lime_ops.probe(lime, 8));
	CHECK(kp_lime_ops.probe(avml, 8));
	CHECK(!kp_lime_ops.probe(lime, 3));
	CHECK(!kp_lime_ops.probe((const uint8_t *)"\177ELF\2\1\1\0", 8));
}

TEST(lime_ranges)
{
	static uint8_t a[0x3000], b[0x1000];
	fill(a, sizeof(a), 1);
	fill(b, sizeof(b), 2);
	struct mklime *ml = mklime_create();
	mklime_add(ml, 0x1000, a, sizeof(a));
	mklime_add(ml, 0x100000, b, sizeof(b));
	char *path;
	struct kp_opened_source o;
	CHECK_OK(open_ml(ml, &path, &o));
	if (o.file) {
		CHECK_STR(o.src.kind, "LiME image");
		const struct kp_range *r;
		CHECK_U64(kp_memory_ranges(o.mem, KP_PHYS, &r), 2);
		CHECK_U64(r[0].start, 0x1000);
		CHECK_U64(r[0].end, 0x4000);
		CHECK_U64(r[1].start, 0x100000);
		CHECK_U64(r[1].end, 0x101000);
		CHECK(!kp_memory_has_segments(o.mem, KP_VIRT));
		uint8_t buf[0x3000];
		CHECK_OK(kp_memory_read(o.mem, KP_PHYS, 0x1000, buf, sizeof(a)));
		CHECK(memcmp(buf, a, sizeof(a)) == 0);
		CHECK_OK(kp_memory_read(o.mem, KP_PHYS, 0x100800, buf, 0x800));
		CHECK(memcmp(buf, b + 0x800, 0x800) == 0);
		CHECK_ERR(kp_memory_read(o.mem, KP_PHYS, 0x3ff0, buf, 0x20), KP_ERR_FAULT,
			  "0x4000");
		close_image(&o);
	}
	unlink(path);
	free(path);
	mklime_destroy(ml);
}

TEST(lime_padded_single_range)
{
	// A single range from 0 with the holes zero-filled (what "padded" output
	// looks like once given a header, e.g. by conversion tools).
	static uint8_t m[0x10000];
	fill(m, sizeof(m), 3);
	memset(m + 0x4000, 0, 0x2000);
	struct mklime *ml = mklime_create();
	mklime_add(ml, 0, m, sizeof(m));
	char *path;
	struct kp_opened_source o;
	CHECK_OK(open_ml(ml, &path, &o));
	if (o.file) {
		uint8_t buf[sizeof(m)];
		CHECK_OK(kp_memory_read(o.mem, KP_PHYS, 0, buf, sizeof(m)));
		CHECK(memcmp(buf, m, sizeof(m)) == 0);
		close_image(&o);
	}
	unlink(path);
	free(path);
	mklime_destroy(ml);
}

TEST(avml_compressed)
{
	size_t n = 0x50000;	// 5 chunks of 64 KiB
	uint8_t *a = malloc(n), *buf = malloc(n);
	fill(a, n, 4);
	static uint8_t b[0x3000];
	fill(b, sizeof(b), 5);
	struct mklime *ml = mklime_create();
	mklime_add_avml(ml, 0x100000, a, n, &(struct mklime_avml){.padding = true});
	// The next block continues the range (AVML splits at 16 MiB), with small
	// stored chunks.
	mklime_add_avml(ml, 0x100000 + n, b, sizeof(b),
			&(struct mklime_avml){.chunk = 0x1000, .uncompressed = true});
	mklime_add(ml, 0x1000, b, 0x1000);	// a LiME range may be mixed in
	char *path;
	struct kp_opened_source o;
	CHECK_OK(open_ml(ml, &path, &o));
	if (o.file) {
		CHECK_STR(o.src.kind, "AVML image (snappy)");
		const struct kp_range *r;
		CHECK_U64(kp_memory_ranges(o.mem, KP_PHYS, &r), 2);
		CHECK_U64(r[1].start, 0x100000);
		CHECK_U64(r[1].end, 0x100000 + n + sizeof(b));
		CHECK_OK(kp_memory_read(o.mem, KP_PHYS, 0x100000, buf, n));
		CHECK(memcmp(buf, a, n) == 0);
		// Across a chunk edge, backwards (cache misses), and across blocks.
		CHECK_OK(kp_memory_read(o.mem, KP_PHYS, 0x100000 + 0x2fff0, buf, 0x20));
		CHECK(memcmp(buf, a + 0x2fff0, 0x20) == 0);
		CHECK_OK(kp_memory_read(o.mem, KP_PHYS, 0x100000 + 0x10, buf, 8));
		CHECK(memcmp(buf, a + 0x10, 8) == 0);
		CHECK_OK(kp_memory_read(o.mem, KP_PHYS, 0x100000 + n - 0x10, buf, 0x1020));
		CHECK(memcmp(buf, a + n - 0x10, 0x10) == 0);
		CHECK(memcmp(buf + 0x10, b, 0x1010) == 0);
		CHECK_OK(kp_memory_read(o.mem, KP_PHYS, 0x1000, buf, 0x1000));
		CHECK(memcmp(buf, b, 0x1000) == 0);
		close_image(&o);
	}
	unlink(path);
	free(path);
	mklime_destroy(ml);
	free(a);
	free(buf);
}

// Chunks of a few bytes (compressed and stored): the index keeps one entry
// per ENTRY_EVERY chunks and a read walks the headers from it; every byte,
// read one at a time in a scattered order, is the one written.
TEST(avml_tiny_chunks)
{
	size_t n = 0x5000;
	uint8_t *a = malloc(n);
	fill(a, n, 6);
	struct mklime *ml = mklime_create();
	mklime_add_avml(ml, 0x10000, a, n, &(struct mklime_avml){.chunk = 3});
	mklime_add_avml(ml, 0x10000 + n, a, n,
			&(struct mklime_avml){.chunk = 1, .uncompressed = true, .padding = true});
	char *path;
	struct kp_opened_source o;
	CHECK_OK(open_ml(ml, &path, &o));
	if (o.file) {
		bool same = true;
		for (size_t k = 0; k < 2 * n && same; k++) {
			size_t i = (k * 7919) % (2 * n);	// 7919 is prime: every i once
			uint8_t b;
			CHECK_OK(kp_memory_read(o.mem, KP_PHYS, 0x10000 + i, &b, 1));
			same = b == a[i % n];
		}
		CHECK(same);
		uint8_t b;
		struct kp_error *err = kp_memory_read(o.mem, KP_PHYS, 0x10000 + 2 * n, &b, 1);
		CHECK(err != NULL);
		kp_error_destroy(err);
		close_image(&o);
	}
	unlink(path);
	free(path);
	mklime_destroy(ml);
	free(a);
}

TEST(avml_bad_crc)
{
	static uint8_t a[0x2000];
	fill(a, sizeof(a), 6);
	struct mklime *ml = mklime_create();
	mklime_add_avml(ml, 0, a, sizeof(a), &(struct mklime_avml){.bad_crc = true});
	char *path;
	struct kp_opened_source o;
	CHECK_OK(open_ml(ml, &path, &o));
	if (o.file) {
		uint8_t buf[16];
		CHECK_ERR(kp_memory_read(o.mem, KP_PHYS, 0x10, buf, 16), KP_ERR_FORMAT,
			  "CRC-32C mismatch");
		close_image(&o);
	}
	unlink(path);
	free(path);
	mklime_destroy(ml);
}

static struct kp_error *try_ml(struct mklime *ml)
{
	uint8_t *img;
	size_t len;
	mklime_to_buffer(ml, &img, &len);
	struct kp_error *err = try_bytes(img, len);
	free(img);
	mklime_destroy(ml);
	return err;
}

TEST(bad_headers)
{
	static uint8_t a[0x1000];
	struct mklime *ml;

	ml = mklime_create();
	mklime_add_header(ml, 0x4C694D45, 1, 0x2000, 0x1fff);
	CHECK_ERR(try_ml(ml), KP_ERR_FORMAT, "before the start");

	ml = mklime_create();
	mklime_add_header(ml, 0x4C694D45, 1, 0, UINT64_MAX);
	CHECK_ERR(try_ml(ml), KP_ERR_FORMAT, "beyond 52-bit");

	ml = mklime_create();
	mklime_add_header(ml, 0x4C694D45, 2, 0, 0xfff);
	mklime_add_bytes(ml, a, sizeof(a));
	CHECK_ERR(try_ml(ml), KP_ERR_UNSUPPORTED, "version 2");

	ml = mklime_create();
	mklime_add(ml, 0, a, sizeof(a));
	mklime_add_header(ml, 0x12345678, 1, 0x1000, 0x1fff);
	CHECK_ERR(try_ml(ml), KP_ERR_FORMAT, "bad magic 0x12345678 in range header at 0x1020");

	ml = mklime_create();
	mklime_add(ml, 0, a, sizeof(a));
	mklime_add(ml, 0x800, a, sizeof(a));
	CHECK_ERR(try_ml(ml), KP_ERR_FORMAT, "overlaps");

	ml = mklime_create();
	mklime_add(ml, 0x10000, a, sizeof(a));
	mklime_add(ml, 0x8000, NULL, 0x8001);	// ends one byte into the first
	CHECK_ERR(try_ml(ml), KP_ERR_FORMAT, "overlaps");

	ml = mklime_create();
	mklime_add_header(ml, 0x4C694D45, 1, 0, 0xffffff);
	mklime_add_bytes(ml, a, sizeof(a));
	CHECK_ERR(try_ml(ml), KP_ERR_FORMAT, "truncated");

	ml = mklime_create();
	mklime_add(ml, 0, a, sizeof(a));
	mklime_add_bytes(ml, a, 5);	// trailing bytes: not a header
	CHECK_ERR(try_ml(ml), KP_ERR_FORMAT, "range header at 0x1020 needs 32 bytes");

	ml = mklime_create();
	mklime_add_avml(ml, 0, a, sizeof(a), &(struct mklime_avml){.size_delta = 1});
	CHECK_ERR(try_ml(ml), KP_ERR_FORMAT, "stream length field");

	// A reserved unskippable chunk type.
	ml = mklime_create();
	mklime_add_header(ml, 0x4C4D5641, 2, 0, 0xfff);
	mklime_add_bytes(ml, "\xff\x06\x00\x00sNaPpY\x05\x00\x00\x00", 14);
	CHECK_ERR(try_ml(ml), KP_ERR_FORMAT, "reserved unskippable");

	// Data before the stream identifier.
	ml = mklime_create();
	mklime_add_header(ml, 0x4C4D5641, 2, 0, 0xfff);
	mklime_add_bytes(ml, "\x01\x08\x00\x00\0\0\0\0abcd", 12);
	CHECK_ERR(try_ml(ml), KP_ERR_FORMAT, "before the stream identifier");

	// A chunk holding more than the block.
	ml = mklime_create();
	mklime_add_header(ml, 0x4C4D5641, 2, 0, 0x3);
	mklime_add_bytes(ml, "\xff\x06\x00\x00sNaPpY\x01\x09\x00\x00\0\0\0\0abcde", 23);
	CHECK_ERR(try_ml(ml), KP_ERR_FORMAT, "too many");
}

// Every prefix of valid images must fail cleanly (ASan checks the reads).
TEST(every_truncation)
{
	static uint8_t a[0x3000];
	fill(a, sizeof(a), 7);
	for (int avml = 0; avml < 2; avml++) {
		struct mklime *ml = mklime_create();
		if (avml) {
			mklime_add_avml(ml, 0x1000, a, sizeof(a),
					&(struct mklime_avml){.chunk = 0x800});
			mklime_add_avml(ml, 0x8000, a, 0x1000,
					&(struct mklime_avml){.uncompressed = true});
		} else {
			mklime_add(ml, 0x1000, a, sizeof(a));
			mklime_add(ml, 0x8000, a, 0x1000);
		}
		uint8_t *img;
		size_t len;
		mklime_to_buffer(ml, &img, &len);
		mklime_destroy(ml);
		CHECK_OK(try_bytes(img, len));
		int failures = 0;
		for (size_t cut = 1; cut < len; cut += avml ? 1 : 7) {
			struct kp_error *err = try_bytes(img, cut);
			if (!err) {
				// A cut exactly at a range boundary is a valid, shorter image.
				continue;
			}
			if (err->code != KP_ERR_FORMAT) {
				if (failures++ < 3)
					FAILF("cut at %zu: %s", cut, err->message);
			}
			kp_error_destroy(err);
		}
		free(img);
	}
}

TEST(kernel_open_finds_vmcoreinfo)
{
	// kernel.c scans the physical pages for the vmcoreinfo page.
	static uint8_t m[0x8000];
	static const char vmci[] = "OSRELEASE=6.1.0-lime\nPAGESIZE=4096\n"
				   "SYMBOL(swapper_pg_dir)=ffffffff82000000\n"
				   "SYMBOL(init_top_pgt)=ffffffff82000000\n"
				   "KERNELOFFSET=0\n";
	memcpy(m + 0x3000, vmci, sizeof(vmci));
	struct mklime *ml = mklime_create();
	mklime_add(ml, 0x100000, m, sizeof(m));
	uint8_t *img;
	size_t len;
	mklime_to_buffer(ml, &img, &len);
	mklime_destroy(ml);
	char *path = tmp_path();
	mkcore_write_bytes(path, img, len);
	free(img);
	KP_OPTS(kp_open_options, opts, .core = path);
	struct kp_kernel *k = NULL;
	CHECK_OK(kp_kernel_open(&opts, &k));
	if (k) {
		KP_INIT(kp_kernel_info, info);
		kp_kernel_get_info(k, &info);
		CHECK_STR(info.source_kind, "LiME image");
		CHECK_STR(info.release, "6.1.0-lime");
		CHECK_STR(info.vmcoreinfo_source, "found in memory at phys 0x103000");
		kp_kernel_destroy(k);
	}
	unlink(path);
	free(path);
}

int main(void)
{
	RUN(probe);
	RUN(lime_ranges);
	RUN(lime_padded_single_range);
	RUN(avml_compressed);
	RUN(avml_tiny_chunks);
	RUN(avml_bad_crc);
	RUN(bad_headers);
	RUN(every_truncation);
	RUN(kernel_open_finds_vmcoreinfo);
	return TEST_SUMMARY();
}
