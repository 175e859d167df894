// SPDX-License-Identifier: MIT
// kdump-compressed dumps: reads across page and hole edges for every
// compression (raw, zlib, lzo, snappy, zstd, mixed), the flattened format
// (shuffled, overlapping and gapped records) against the standard layout,
// excluded pages, header versions 1-6, notes and VMCOREINFO, split dumps, the
// decompressed-page cache, and corrupt input: truncation at every header byte
// and every flattened record, huge or bad header fields, page descriptors
// pointing past EOF, size mismatches, corrupt compressed data, random damage.
#include <elf.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include "test.h"
#include "arch/x86_64/x86_64.h"
#include "opensrc.h"
#include "io/file.h"
#include "format/kdump_cache.h"
#include "format/source.h"
#include "../gen/mkcore.h"
#include "../gen/mkkdump.h"

#define BS 4096
#define NPAGES 64

static struct kp_error *open_buf(const uint8_t *img, size_t len, struct kp_opened_source *o)
{
	memset(o, 0, sizeof(*o));
	char path[] = "/tmp/kpeek-test-kdump-XXXXXX";
	int fd = mkstemp(path);
	if (fd < 0 || write(fd, img, len) != (ssize_t)len) {
		FAILF("cannot write %s", path);
		abort();
	}
	close(fd);
	struct kp_error *err = kp_test_open_source(&kp_kdump_ops, path, o);
	unlink(path);
	if (err)
		CHECK(!o->src.vmcoreinfo && !o->src.cpus && !o->src.priv);
	return err;
}

static void close_dump(struct kp_opened_source *o)
{
	kp_test_close_source(o);
}

static struct kp_error *try_open(const uint8_t *img, size_t len)
{
	struct kp_opened_source o;
	struct kp_error *err = open_buf(img, len, &o);
	if (!err)
		close_dump(&o);
	return err;
}

static uint64_t rng = 88172645463325252ULL;

static uint64_t next_rand(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

// Pages of different compressibility: zero, text-like, random, sparse, ramp.
static uint8_t *make_mem(uint64_t npages)
{
	uint8_t *mem = calloc(npages, BS);
	for (uint64_t p = 0; p < npages; p++) {
		uint8_t *pg = mem + p * BS;
		switch (p % 5) {
		case 0:
			break;
		case 1:
			for (int i = 0; i < BS; i++)
				pg[i] = (uint8_t)"kpeek reads kdump pages "[(i + p) % 24];
			break;
		case 2:
			for (int i = 0; i < BS; i++)
				pg[i] = (uint8_t)next_rand();
			break;
		case 3:
			pg[p % BS] = (uint8_t)(p + 1);
			pg[BS - 1] = 0x5a;
			break;
		case 4:
			for (int i = 0; i < BS; i++)
				pg[i] = (uint8_t)(i / 16 + p);
			break;
		}
	}
	return mem;
}

// Holes at 5 and 20-23, excluded pages at 30 and 47, the rest dumped.
static void make_state(uint8_t *state)
{
	memset(state, MKK_DUMPED, NPAGES);
	state[5] = MKK_HOLE;
	for (int i = 20; i < 24; i++)
		state[i] = MKK_HOLE;
	state[30] = MKK_EXCLUDED;
	state[47] = MKK_EXCLUDED;
	state[NPAGES - 1] = MKK_HOLE;
}

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

static void build(const struct mkkdump_opts *opts, uint8_t **img, size_t *len,
		  struct mkkdump_layout *lay)
{
	mkkdump_build(opts, img, len, lay);
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

// Cutting the file anywhere in the header, sub-header, bitmaps or page_desc
// table fails the open with a format error; cutting the page data fails the
// reads of the pages cut.
TEST(truncation)
{
	uint8_t *mem = make_mem(NPAGES);
	struct mkkdump_opts opts = {.mem = mem, .npages = NPAGES, .comp = MKK_ZLIB,
				    .vmcoreinfo = "X=1\n"};
	uint8_t *img;
	size_t len;
	struct mkkdump_layout lay;
	build(&opts, &img, &len, &lay);
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
	struct mkkdump_opts opts = {.mem = mem, .npages = NPAGES, .comp = MKK_ZLIB,
				    .vmcoreinfo = "X=1\n"};
	uint8_t *img;
	size_t len;
	struct mkkdump_layout lay;
	build(&opts, &img, &len, &lay);
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
			uint8_t *c = malloc(len);
			memcpy(c, img, len);
			memcpy(c + data1, z, zl);
			put32(c + pd1 + 8, (uint32_t)zl);
			struct kp_opened_source o;
			CHECK_OK(open_buf(c, len, &o));
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
			uint8_t *c = malloc(len);
			memcpy(c, img, len);
			memcpy(c + data1, z, zl);
			put32(c + pd1 + 8, (uint32_t)zl);
			struct kp_opened_source o;
			CHECK_OK(open_buf(c, len, &o));
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

int main(void)
{
	RUN(probe);
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
	RUN(truncation);
	RUN(corrupt_headers);
	RUN(corrupt_page_descriptors);
	RUN(incomplete_dump);
	RUN(corrupt_flattened);
	RUN(random_damage);
	return TEST_SUMMARY();
}
