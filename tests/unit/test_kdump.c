// SPDX-License-Identifier: MIT
// kdump-compressed dumps: reads across page and hole edges for every
// compression (raw, zlib, lzo, snappy, zstd, mixed), the flattened format
// (shuffled, overlapping and gapped records) against the standard layout,
// excluded pages, header versions 1-6, notes and VMCOREINFO, split dumps, the
// decompressed-page cache, the probe. Corrupt input: test_kdump_corrupt.c.
#include <elf.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include "test.h"
#include "kdump_test.h"
#include "arch/x86_64/x86_64.h"
#include "io/file.h"
#include "format/kdump_cache.h"
#include "format/source.h"
#include "../gen/mkcore.h"
#include "../gen/mkkdump.h"

// Checks reads of [addr, addr + len) against mem and the page states: the
// first page that is a hole or (unless zero_excluded) excluded must fail
// with a fault at its first byte in the range.
static void check_range(struct kp_opened_source *o, const uint8_t *mem, const uint8_t *state,
			bool zero_excluded, uint64_t addr, size_t len)
{
	static uint8_t got[4 * BS];
	uint64_t bad = UINT64_MAX;
	for (uint64_t a = addr; a < addr + len; a = (a / BS + 1) * BS) {
		uint8_t st = state[a / BS];
		if (st == MKK_HOLE || (st == MKK_EXCLUDED && !zero_excluded)) {
			bad = a;
			break;
		}
	}
	struct kp_error *err = kp_memory_read(o->mem, KP_PHYS, addr, got, len);
	if (bad == UINT64_MAX) {
		if (err) {
			FAILF("read 0x%" PRIx64 "+%zu: %s", addr, len, err->message);
			kp_error_destroy(err);
			return;
		}
		for (size_t i = 0; i < len; i++) {
			uint64_t a = addr + i;
			uint8_t want = state[a / BS] == MKK_EXCLUDED ? 0 : mem[a];
			if (got[i] != want) {
				FAILF("read 0x%" PRIx64 "+%zu: byte at 0x%" PRIx64
				      " is 0x%02x, expected 0x%02x", addr, len, a, got[i], want);
				return;
			}
		}
		return;
	}
	if (!err) {
		FAILF("read 0x%" PRIx64 "+%zu succeeded, expected a fault at 0x%" PRIx64,
		      addr, len, bad);
		return;
	}
	if (err->code != KP_ERR_FAULT || !err->has_address || err->address != bad)
		FAILF("read 0x%" PRIx64 "+%zu: expected a fault at 0x%" PRIx64 ", got %s "
		      "at 0x%" PRIx64 " (%s)", addr, len, bad, kp_error_code_name(err->code),
		      err->address, err->message);
	if (state[bad / BS] == MKK_EXCLUDED && !strstr(err->message, "excluded"))
		FAILF("excluded page message: %s", err->message);
	kp_error_destroy(err);
}

static void check_all_reads(struct kp_opened_source *o, const uint8_t *mem, const uint8_t *state,
			    bool zero_excluded)
{
	static const size_t offs[] = {0, 1, 100, BS - 8, BS - 1};
	static const size_t lens[] = {1, 8, 333, BS, BS + 1, 3 * BS};
	for (uint64_t pfn = 0; pfn < NPAGES; pfn++)
		for (size_t i = 0; i < sizeof(offs) / sizeof(offs[0]); i++)
			for (size_t j = 0; j < sizeof(lens) / sizeof(lens[0]); j++) {
				uint64_t a = pfn * BS + offs[i];
				if (a + lens[j] <= (uint64_t)NPAGES * BS)
					check_range(o, mem, state, zero_excluded, a, lens[j]);
			}
}

static void roundtrip(enum mkkdump_comp comp, const uint8_t *page_comp, const char *kind)
{
	uint8_t *mem = make_mem(NPAGES), state[NPAGES];
	make_state(state);
	struct mkkdump_opts opts = {.mem = mem, .npages = NPAGES, .state = state,
				    .comp = comp, .page_comp = page_comp, .dump_level = 31};
	uint8_t *img;
	size_t len;
	struct mkkdump_layout lay;
	build(&opts, &img, &len, &lay);
	struct kp_opened_source o;
	CHECK_OK(open_buf(img, len, &o));
	if (o.mem) {
		CHECK_STR(o.src.kind, kind);
		check_all_reads(&o, mem, state, false);
		// The physical ranges are the RAM runs (holes excluded).
		const struct kp_range *r;
		size_t n = kp_memory_ranges(o.mem, KP_PHYS, &r);
		CHECK_U64(n, 3);
		if (n == 3) {
			CHECK_U64(r[0].start, 0);
			CHECK_U64(r[0].end, 5 * BS);
			CHECK_U64(r[1].start, 6 * BS);
			CHECK_U64(r[1].end, 20 * BS);
			CHECK_U64(r[2].start, 24 * BS);
			CHECK_U64(r[2].end, (NPAGES - 1) * BS);
		}
		close_dump(&o);
	}
	// The same through the flattened format.
	uint8_t *flat;
	size_t flen;
	struct mkkdump_flat_opts fo = {.record_max = 5000, .shuffle = true,
				       .rewrite_header = true, .skip_zero_blocks = true};
	mkkdump_flatten(img, len, &fo, &flat, &flen);
	CHECK_OK(open_buf(flat, flen, &o));
	if (o.mem) {
		CHECK(strstr(o.src.kind, "flattened") != NULL);
		check_all_reads(&o, mem, state, false);
		close_dump(&o);
	}
	free(flat);
	free(img);
	free(mem);
}

TEST(roundtrip_raw) { roundtrip(MKK_RAW, NULL, "kdump-compressed (uncompressed)"); }
TEST(roundtrip_zlib) { roundtrip(MKK_ZLIB, NULL, "kdump-compressed (zlib)"); }
TEST(roundtrip_lzo) { roundtrip(MKK_LZO, NULL, "kdump-compressed (lzo)"); }
TEST(roundtrip_snappy) { roundtrip(MKK_SNAPPY, NULL, "kdump-compressed (snappy)"); }
TEST(roundtrip_zstd) { roundtrip(MKK_ZSTD, NULL, "kdump-compressed (zstd)"); }

TEST(roundtrip_mixed_compression)
{
	uint8_t comp[NPAGES];
	for (int i = 0; i < NPAGES; i++)
		comp[i] = (uint8_t)(i % 5);
	roundtrip(MKK_ZLIB, comp, "kdump-compressed (zlib)");
}

// Flattened and standard layouts of the same dump read identically, and the
// kind names the format and compression.
TEST(flattened_equals_standard)
{
	uint8_t *mem = make_mem(NPAGES);
	struct mkkdump_opts opts = {.mem = mem, .npages = NPAGES, .comp = MKK_ZLIB,
				    .share_zero_pages = true, .dump_level = 1};
	uint8_t *img, *flat;
	size_t len, flen;
	build(&opts, &img, &len, NULL);
	static const struct mkkdump_flat_opts fos[] = {
		{0}, {.record_max = 100}, {.shuffle = true}, {.rewrite_header = true},
		{.record_max = 4096, .shuffle = true, .rewrite_header = true,
		 .skip_zero_blocks = true},
	};
	struct kp_opened_source s;
	CHECK_OK(open_buf(img, len, &s));
	for (size_t k = 0; k < sizeof(fos) / sizeof(fos[0]) && s.mem; k++) {
		mkkdump_flatten(img, len, &fos[k], &flat, &flen);
		struct kp_opened_source f;
		CHECK_OK(open_buf(flat, flen, &f));
		if (f.mem) {
			CHECK_STR(f.src.kind, "kdump-compressed (flattened, zlib)");
			static uint8_t a[NPAGES * BS], b[NPAGES * BS];
			CHECK_OK(kp_memory_read(s.mem, KP_PHYS, 0, a, sizeof(a)));
			CHECK_OK(kp_memory_read(f.mem, KP_PHYS, 0, b, sizeof(b)));
			CHECK(memcmp(a, b, sizeof(a)) == 0);
			CHECK(memcmp(a, mem, sizeof(a)) == 0);
			close_dump(&f);
		}
		free(flat);
	}
	if (s.mem)
		close_dump(&s);
	free(img);
	free(mem);
}

// makedumpfile -d 1 drops zero pages only: they read as zeros. With other
// dump levels an excluded page may have held anything: it faults.
TEST(excluded_pages)
{
	uint8_t *mem = make_mem(NPAGES), state[NPAGES];
	make_state(state);
	for (int i = 0; i < NPAGES; i++)
		if (state[i] == MKK_EXCLUDED)
			memset(mem + i * BS, 0, BS);
	struct mkkdump_opts opts = {.mem = mem, .npages = NPAGES, .state = state,
				    .comp = MKK_ZSTD, .dump_level = 1};
	uint8_t *img;
	size_t len;
	build(&opts, &img, &len, NULL);
	struct kp_opened_source o;
	CHECK_OK(open_buf(img, len, &o));
	if (o.mem) {
		check_all_reads(&o, mem, state, true);
		close_dump(&o);
	}
	free(img);
	opts.dump_level = 17;
	build(&opts, &img, &len, NULL);
	CHECK_OK(open_buf(img, len, &o));
	if (o.mem) {
		uint8_t b[8];
		CHECK_ERR(kp_memory_read(o.mem, KP_PHYS, 30 * BS + 8, b, 8), KP_ERR_FAULT,
			  "page 0x1e000 was excluded from the dump (makedumpfile -d 17)");
		close_dump(&o);
	}
	free(img);
	free(mem);
}

// Extracts the PT_NOTE bytes of an mkcore image.
static uint8_t *core_notes(struct mkcore *mc, size_t *len_ret)
{
	uint8_t *img;
	size_t len;
	mkcore_to_buffer(mc, 1 << 20, &img, &len);
	Elf64_Phdr ph;
	memcpy(&ph, img + mkcore_phoff(mc), sizeof(ph));
	uint8_t *notes = malloc(ph.p_filesz);
	memcpy(notes, img + ph.p_offset, ph.p_filesz);
	*len_ret = ph.p_filesz;
	free(img);
	return notes;
}

TEST(notes_vmcoreinfo_phys_base)
{
	uint8_t *mem = make_mem(NPAGES);
	struct mkcore *mc = mkcore_create();
	mkcore_add_prstatus(mc, 1, 0xffffffff81000000ULL, 0xffffc90000003f00ULL, 0x10, 0);
	mkcore_add_prstatus(mc, 2, 0xffffffff81000010ULL, 0xffffc90000007f00ULL, 0x10, 0);
	struct mkcore_qemu_cpu cpu = {.cr3 = 0x1234000, .idt_base = 0xfffffe0000000000ULL};
	mkcore_add_qemu_cpu(mc, &cpu);
	size_t nlen;
	uint8_t *notes = core_notes(mc, &nlen);
	mkcore_destroy(mc);
	const char *vmci = "OSRELEASE=6.1.0-test\nNUMBER(phys_base)=-123\n";
	struct mkkdump_opts opts = {.mem = mem, .npages = NPAGES, .comp = MKK_LZO,
				    .vmcoreinfo = vmci, .notes = notes, .notes_size = nlen,
				    .phys_base = 0xfffffff8e8dda67cULL};
	uint8_t *img;
	size_t len;
	build(&opts, &img, &len, NULL);
	struct kp_opened_source o;
	CHECK_OK(open_buf(img, len, &o));
	if (o.mem) {
		CHECK_STR(o.src.vmcoreinfo, vmci);
		CHECK_U64(o.src.vmcoreinfo_size, strlen(vmci));
		CHECK_U64(o.src.ncpus, 2);
		if (o.src.ncpus == 2) {
			struct kp_regs r;
			struct x86_cpu x;
			CHECK(kp_x86_prstatus_regs(o.src.cpus[1].prstatus, o.src.cpus[1].prstatus_len, &r));
			CHECK_U64(r.pc, 0xffffffff81000010ULL);
			CHECK(kp_x86_qemu_cpu(&o.src.cpus[0], &x));
			CHECK_U64(x.cr3, 0x1234000);
		}
		CHECK(o.src.has_phys_base);
		CHECK_U64(o.src.phys_base, 0xfffffff8e8dda67cULL);
		close_dump(&o);
	}
	free(img);
	// makedumpfile's phys_base 0 is a value; QEMU's phys_base is never
	// trusted (0 when unknown, else NUMBER(phys_base) misparsed as hex).
	opts.vmcoreinfo = NULL;
	opts.phys_base = 0;
	for (int qemu = 0; qemu < 2; qemu++) {
		opts.qemu_utsname = qemu;
		opts.phys_base = qemu ? 0xfffffff8e8dda67cULL : 0;
		build(&opts, &img, &len, NULL);
		CHECK_OK(open_buf(img, len, &o));
		if (o.mem) {
			CHECK(!o.src.vmcoreinfo);
			CHECK(o.src.has_phys_base == !qemu);
			CHECK_U64(o.src.phys_base, 0);
			close_dump(&o);
		}
		free(img);
	}
	opts.qemu_utsname = false;
	// Notes that are corrupt fail the open.
	notes[4] = 0xff;	// descsz of the first note
	notes[5] = 0xff;
	opts.notes = notes;
	build(&opts, &img, &len, NULL);
	CHECK_ERR(try_open(img, len), KP_ERR_FORMAT, "note");
	free(img);
	free(notes);
	free(mem);
}

// Versions 1-5 lack later sub-header fields: VMCOREINFO needs >= 3, notes
// >= 4, and max_mapnr is the 32-bit header field before 6.
TEST(header_versions)
{
	uint8_t *mem = make_mem(NPAGES);
	for (int v = 1; v <= 7; v++) {
		struct mkkdump_opts opts = {.mem = mem, .npages = NPAGES, .comp = MKK_SNAPPY,
					    .header_version = v, .vmcoreinfo = "A=1\n"};
		uint8_t *img;
		size_t len;
		build(&opts, &img, &len, NULL);
		struct kp_opened_source o;
		CHECK_OK(open_buf(img, len, &o));
		if (o.mem) {
			CHECK(v >= 3 ? o.src.vmcoreinfo && strcmp(o.src.vmcoreinfo, "A=1\n") == 0
				     : !o.src.vmcoreinfo);
			static uint8_t got[NPAGES * BS];
			CHECK_OK(kp_memory_read(o.mem, KP_PHYS, 0, got, sizeof(got)));
			CHECK(memcmp(got, mem, sizeof(got)) == 0);
			close_dump(&o);
		}
		free(img);
	}
	free(mem);
}

// A split dump holds pfns [start_pfn, end_pfn): page_desc indexes count from
// start_pfn; its segments hold those frames only, and the rest of its RAM,
// added by kp_source_add_elsewhere(), says the frames are in another file.
TEST(split_dump)
{
	uint8_t *mem = make_mem(NPAGES);
	struct mkkdump_opts opts = {.mem = mem, .npages = NPAGES, .comp = MKK_ZLIB,
				    .split = true, .start_pfn = 16, .end_pfn = 40};
	uint8_t *img;
	size_t len;
	build(&opts, &img, &len, NULL);
	struct kp_opened_source o;
	CHECK_OK(open_buf(img, len, &o));
	if (o.mem) {
		static uint8_t got[24 * BS];
		CHECK_OK(kp_memory_read(o.mem, KP_PHYS, 16 * BS, got, sizeof(got)));
		CHECK(memcmp(got, mem + 16 * BS, sizeof(got)) == 0);
		CHECK(o.src.split && o.src.split_start == 16 && o.src.split_end == 40 &&
		      o.src.split_max == NPAGES && o.src.split_page_size == BS);
		CHECK_ERR(kp_memory_read(o.mem, KP_PHYS, 40 * BS, got, 1), KP_ERR_FAULT,
			  "not in the memory source");
		CHECK_OK(kp_source_add_elsewhere(&o.src, o.mem));
		CHECK_OK(kp_memory_read(o.mem, KP_PHYS, 16 * BS, got, sizeof(got)));
		CHECK(memcmp(got, mem + 16 * BS, sizeof(got)) == 0);
		CHECK_ERR(kp_memory_read(o.mem, KP_PHYS, 40 * BS, got, 1), KP_ERR_FAULT,
			  "another file of the split dump");
		CHECK_ERR(kp_memory_read(o.mem, KP_PHYS, 15 * BS, got, 1), KP_ERR_FAULT,
			  "another file of the split dump");
		close_dump(&o);
	}
	free(img);
	free(mem);
}

// Small reads within a page decompress it once; LRU eviction after as many
// other pages as the cache holds (KP_KDUMP_CACHE_BYTES); whole-page reads
// bypass the cache.
TEST(page_cache)
{
	uint32_t slots = KP_KDUMP_CACHE_BYTES / BS;
	if (slots < KP_KDUMP_CACHE_MIN_SLOTS)
		slots = KP_KDUMP_CACHE_MIN_SLOTS;
	if (slots > KP_KDUMP_CACHE_MAX_SLOTS)
		slots = KP_KDUMP_CACHE_MAX_SLOTS;
	const int others = (int)slots + 72, first = 50, last = first + others - 1;
	const int n = last + 20;
	uint8_t *mem = calloc(n, BS);
	for (int p = 0; p < n; p++)
		for (int i = 0; i < BS; i++)
			mem[(size_t)p * BS + i] = (uint8_t)(i / 64 + p);
	struct mkkdump_opts opts = {.mem = mem, .npages = n, .comp = MKK_ZLIB};
	uint8_t *img;
	size_t len;
	build(&opts, &img, &len, NULL);
	struct kp_opened_source o;
	CHECK_OK(open_buf(img, len, &o));
	if (!o.mem)
		goto out;
	uint64_t hits, misses, v;
	for (int i = 0; i < BS; i += 8)
		CHECK_OK(kp_memory_read(o.mem, KP_PHYS, 7 * BS + i, &v, 8));
	kp_kdump_cache_stats(&o.src, &hits, &misses);
	CHECK_U64(misses, 1);
	CHECK_U64(hits, BS / 8 - 1);
	// More other pages than the cache holds evict page 7 ...
	for (int p = first; p <= last; p++)
		CHECK_OK(kp_memory_read(o.mem, KP_PHYS, (uint64_t)p * BS, &v, 8));
	CHECK_OK(kp_memory_read(o.mem, KP_PHYS, 7 * BS, &v, 8));
	kp_kdump_cache_stats(&o.src, &hits, &misses);
	CHECK_U64(misses, 2 + (uint64_t)others);
	// ... but the slots - 1 most recent survive, in LRU order.
	for (int p = last; p > last - ((int)slots - 1); p--)
		CHECK_OK(kp_memory_read(o.mem, KP_PHYS, (uint64_t)p * BS + 16, &v, 8));
	kp_kdump_cache_stats(&o.src, &hits, &misses);
	CHECK_U64(misses, 2 + (uint64_t)others);
	// Reading a page that was touched keeps it: alternate two pages.
	for (int k = 0; k < 10; k++)
		CHECK_OK(kp_memory_read(o.mem, KP_PHYS, (uint64_t)(k & 1 ? 7 : last) * BS, &v, 8));
	kp_kdump_cache_stats(&o.src, &hits, &misses);
	CHECK_U64(misses, 2 + (uint64_t)others);
	// A whole-page read of an uncached page decompresses straight into the
	// caller's buffer and leaves the cache alone.
	static uint8_t page[2 * BS];
	CHECK_OK(kp_memory_read(o.mem, KP_PHYS, (uint64_t)(last + 10) * BS, page, 2 * BS));
	CHECK(memcmp(page, mem + (size_t)(last + 10) * BS, 2 * BS) == 0);
	CHECK_OK(kp_memory_read(o.mem, KP_PHYS, (uint64_t)(last + 10) * BS, &v, 8));
	kp_kdump_cache_stats(&o.src, &hits, &misses);
	CHECK_U64(misses, 2 + (uint64_t)others + 3);
	close_dump(&o);
out:
	free(img);
	free(mem);
}

TEST(probe)
{
	static const uint8_t kdump[] = "KDUMP   \x06", flat[] = "makedumpfile\0\0\0\0";
	CHECK(kp_kdump_ops.probe(kdump, 8));
	CHECK(kp_kdump_ops.probe(flat, 16));
	CHECK(kp_kdump_ops.probe((const uint8_t *)"DISKDUMP", 8));
	CHECK(!kp_kdump_ops.probe(kdump, 7));
	CHECK(!kp_kdump_ops.probe(flat, 12));
	CHECK(!kp_kdump_ops.probe((const uint8_t *)"makedumpfileX", 13));
	CHECK(!kp_kdump_ops.probe((const uint8_t *)"\x7f" "ELF\2\1\1\0", 8));
}

// A zlib page by libdeflate (where it loads: libdeflate0 is a dependency)
// and by zlib alone: the same bytes, the same answers for a stream of more
// than a block, of fewer bytes, and corrupt ones (its data, its checksum).
TEST(zlib_pages_by_libdeflate_and_by_zlib)
{
	static uint8_t page[BS], two[2 * BS], out[BS];
	for (size_t i = 0; i < sizeof(page); i++)
		page[i] = (uint8_t)(i * 7 + i / 100);
	uint8_t z[2 * BS], zbig[512], zsmall[256];
	uLongf zl = sizeof(z), zbl = sizeof(zbig), zsl = sizeof(zsmall);
	CHECK(compress2(z, &zl, page, sizeof(page), 6) == Z_OK);
	CHECK(compress2(zbig, &zbl, two, sizeof(two), 6) == Z_OK);
	CHECK(compress2(zsmall, &zsl, page, 100, 6) == Z_OK);
	for (int zlib_only = 0; zlib_only < 2; zlib_only++) {
		struct kp_kdump_decomp d = { .zlib_only = zlib_only };
		size_t n = 0;
		memset(out, 0, sizeof(out));
		CHECK_OK(kp_kdump_decompress(&d, DUMP_DH_COMPRESSED_ZLIB, z, zl, out, BS, &n));
		CHECK(n == BS && !memcmp(out, page, BS));
		CHECK(zlib_only ? !d.deflate && d.zs_ready : d.deflate && !d.zs_ready);
		CHECK_OK(kp_kdump_decompress(&d, DUMP_DH_COMPRESSED_ZLIB, zbig, zbl, out, BS, &n));
		CHECK(n == SIZE_MAX);
		CHECK_OK(kp_kdump_decompress(&d, DUMP_DH_COMPRESSED_ZLIB, zsmall, zsl, out, BS, &n));
		CHECK_U64(n, 100);
		uint8_t bad[sizeof(z)];
		memcpy(bad, z, zl);
		bad[zl - 1] ^= 1;	// the Adler-32 at its end
		CHECK_ERR(kp_kdump_decompress(&d, DUMP_DH_COMPRESSED_ZLIB, bad, zl, out, BS, &n), KP_ERR_FORMAT,
			  "zlib data is corrupt");
		memcpy(bad, z, zl);
		bad[0] = 0x55;		// not a zlib header
		CHECK_ERR(kp_kdump_decompress(&d, DUMP_DH_COMPRESSED_ZLIB, bad, zl, out, BS, &n), KP_ERR_FORMAT,
			  "zlib data is corrupt");
		// The stream cut short.
		CHECK_ERR(kp_kdump_decompress(&d, DUMP_DH_COMPRESSED_ZLIB, z, zl / 2, out, BS, &n), KP_ERR_FORMAT,
			  "zlib data is corrupt");
		kp_kdump_decomp_deinit(&d);
	}
}

int main(void)
{
	RUN(probe);
	RUN(zlib_pages_by_libdeflate_and_by_zlib);
	RUN(roundtrip_raw);
	RUN(roundtrip_zlib);
	RUN(roundtrip_lzo);
	RUN(roundtrip_snappy);
	RUN(roundtrip_zstd);
	RUN(roundtrip_mixed_compression);
	RUN(flattened_equals_standard);
	RUN(excluded_pages);
	RUN(notes_vmcoreinfo_phys_base);
	RUN(header_versions);
	RUN(split_dump);
	RUN(page_cache);
	return TEST_SUMMARY();
}
