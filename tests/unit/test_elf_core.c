// SPDX-License-Identifier: MIT
// ELF cores and input files: physical-only and virtual+physical cores, zero
// fill, notes, corrupt headers (every truncation length, huge counts, offsets
// past EOF, overflowing note sizes), non-ELF and missing files, and a 64 GiB
// sparse dump that must open instantly.
#include <elf.h>
#include <errno.h>
#include <time.h>
#include <unistd.h>

#include "test.h"
#include "arch/x86_64/x86_64.h"
#include "opensrc.h"
#include "io/file.h"
#include "format/source.h"
#include "../gen/mkcore.h"

static struct kp_error *open_core(const char *path, struct kp_opened_source *o)
{
	return kp_test_open_source(&kp_elf_core_ops, path, o);
}

static void close_core(struct kp_opened_source *o)
{
	kp_test_close_source(o);
}

// Opens a core and closes it again; returns the error (NULL on success).
static struct kp_error *try_open(const char *path)
{
	struct kp_opened_source o;
	struct kp_error *err = open_core(path, &o);
	if (!err)
		close_core(&o);
	return err;
}

static void fill(uint8_t *buf, size_t len, uint8_t seed)
{
	for (size_t i = 0; i < len; i++)
		buf[i] = (uint8_t)(i * 7 + seed);
}

TEST(physical_only_core)
{
	static uint8_t data[0x2000];
	fill(data, sizeof(data), 1);
	struct mkcore *mc = mkcore_create();
	mkcore_add_load(mc, 0, 0x100000, data, sizeof(data), 0x3000);
	mkcore_add_load(mc, 0, 0, data, 0x1000, 0x1000);	// physical 0 is real
	// QEMU 7.2 without paging writes p_vaddr = p_paddr: still physical only.
	mkcore_add_load(mc, 0xc0000, 0xc0000, data, 0x1000, 0x1000);
	char *path = mkcore_write_tmp(mc);
	struct kp_opened_source o;
	CHECK_OK(open_core(path, &o));
	if (o.file) {
		CHECK_STR(o.src.kind, "ELF vmcore (physical only)");
		CHECK(!o.src.live);
		CHECK(!kp_memory_has_segments(o.mem, KP_VIRT));
		uint8_t buf[0x3000];
		CHECK_OK(kp_memory_read(o.mem, KP_PHYS, 0x100000, buf, 0x3000));
		CHECK(memcmp(buf, data, sizeof(data)) == 0);
		int zeros = 1;
		for (size_t i = 0x2000; i < 0x3000; i++)
			zeros &= buf[i] == 0;
		CHECK(zeros);
		CHECK_OK(kp_memory_read(o.mem, KP_PHYS, 0, buf, 16));
		CHECK(memcmp(buf, data, 16) == 0);
		struct kp_error *err = kp_memory_read(o.mem, KP_PHYS, 0x102ff8, buf, 16);
		CHECK(err && err->code == KP_ERR_FAULT && err->address == 0x103000);
		kp_error_destroy(err);
		const struct kp_range *r;
		CHECK_U64(kp_memory_ranges(o.mem, KP_PHYS, &r), 3);
		CHECK_U64(o.src.ncpus, 0);
		CHECK(o.src.vmcoreinfo == NULL);
		close_core(&o);
	}
	unlink(path);
	free(path);
	mkcore_destroy(mc);
}

TEST(kdump_style_virtual_and_physical)
{
	static uint8_t text[0x2000], ram[0x4000];
	fill(text, sizeof(text), 0x11);
	fill(ram, sizeof(ram), 0x99);
	struct mkcore *mc = mkcore_create();
	// Kernel text first, then RAM whose physical range overlaps the text.
	mkcore_add_load(mc, 0xffffffff81000000, 0x1000000, text, sizeof(text), sizeof(text));
	mkcore_add_load(mc, 0xffff888000fff000, 0xfff000, ram, sizeof(ram), sizeof(ram));
	mkcore_add_vmcoreinfo(mc, "OSRELEASE=6.1.0-57-amd64\nPAGESIZE=4096\n");
	char *path = mkcore_write_tmp(mc);
	struct kp_opened_source o;
	CHECK_OK(open_core(path, &o));
	if (o.file) {
		CHECK_STR(o.src.kind, "ELF vmcore");
		uint8_t buf[0x4000];
		CHECK_OK(kp_memory_read(o.mem, KP_VIRT, 0xffffffff81000010, buf, 4));
		CHECK(memcmp(buf, text + 0x10, 4) == 0);
		CHECK_OK(kp_memory_read(o.mem, KP_VIRT, 0xffff888000fff000, buf, 0x4000));
		CHECK(memcmp(buf, ram, 0x4000) == 0);
		// Physical: 0xfff000 from RAM, 0x1000000..0x1002000 from text (earlier
		// wins), 0x1002000.. from RAM again.
		CHECK_OK(kp_memory_read(o.mem, KP_PHYS, 0xfff000, buf, 0x4000));
		CHECK(memcmp(buf, ram, 0x1000) == 0);
		CHECK(memcmp(buf + 0x1000, text, 0x2000) == 0);
		CHECK(memcmp(buf + 0x3000, ram + 0x3000, 0x1000) == 0);
		CHECK_STR(o.src.vmcoreinfo, "OSRELEASE=6.1.0-57-amd64\nPAGESIZE=4096\n");
		CHECK_U64(o.src.vmcoreinfo_size, strlen(o.src.vmcoreinfo));
		const struct kp_range *r;
		CHECK_U64(kp_memory_ranges(o.mem, KP_PHYS, &r), 1);
		CHECK_U64(r[0].start, 0xfff000);
		CHECK_U64(r[0].end, 0x1003000);
		close_core(&o);
	}
	unlink(path);
	free(path);
	mkcore_destroy(mc);
}

TEST(kcore_style_paddr)
{
	static uint8_t page[0x1000];
	fill(page, sizeof(page), 3);
	struct mkcore *mc = mkcore_create();
	// vmalloc: p_paddr = (u64)-1 (fs/proc/kcore.c); RAM has __pa().
	mkcore_add_load(mc, 0xffffc90000000000, UINT64_MAX, page, 0x1000, 0x1000);
	mkcore_add_load(mc, 0xffff888000100000, 0x100000, page, 0x1000, 0x1000);
	char *path = mkcore_write_tmp(mc);
	struct kp_opened_source o;
	CHECK_OK(open_core(path, &o));
	if (o.file) {
		const struct kp_range *r;
		CHECK_U64(kp_memory_ranges(o.mem, KP_PHYS, &r), 1);
		CHECK_U64(r[0].start, 0x100000);
		CHECK_U64(kp_memory_ranges(o.mem, KP_VIRT, &r), 2);
		close_core(&o);
	}
	unlink(path);
	free(path);
	mkcore_destroy(mc);

	// Old kernels wrote p_paddr 0 for every kcore segment: not physical.
	mc = mkcore_create();
	mkcore_add_load(mc, 0xffffffff81000000, 0, page, 0x1000, 0x1000);
	mkcore_add_load(mc, 0xffff888000100000, 0, page, 0x1000, 0x1000);
	path = mkcore_write_tmp(mc);
	CHECK_OK(open_core(path, &o));
	if (o.file) {
		CHECK(!kp_memory_has_segments(o.mem, KP_PHYS));
		CHECK_STR(o.src.kind, "ELF vmcore");
		close_core(&o);
	}
	unlink(path);
	free(path);
	mkcore_destroy(mc);
}

TEST(notes_parsed)
{
	struct mkcore *mc = mkcore_create();
	mkcore_add_load(mc, 0, 0, NULL, 0x1000, 0x1000);
	mkcore_add_prstatus(mc, 1, 0xffffffff81001234, 0xffffc90000003f00, 0x10,
			    0xffff88801fa00000);
	mkcore_add_prstatus(mc, 2, 0xffffffff81005678, 0xffffc90000007f00, 0x10,
			    0xffff88801fb00000);
	// Some producers put unknown notes in between.
	mkcore_add_note(mc, "CORE", NT_PRPSINFO, "xxxxxxxx", 8);
	mkcore_add_note(mc, "LINUX", 0x202, "abc", 3);
	struct mkcore_qemu_cpu q0 = {
		.cr0 = 0x80050033, .cr3 = 0x1a0c000, .cr4 = 0x3506f0,
		.idt_base = 0xfffffe0000000000, .idt_limit = 0xfff,
		.gdt_base = 0xfffffe0000001000, .gs_base = 0xffff88801fa00000,
		.kernel_gs_base = 0x7f0000001000,
	};
	struct mkcore_qemu_cpu q1 = q0;
	q1.cr3 = 0x2b0d000;
	q1.old_layout = true;
	mkcore_add_qemu_cpu(mc, &q0);
	mkcore_add_qemu_cpu(mc, &q1);
	// A third QEMU note without PRSTATUS gets its own CPU slot.
	mkcore_add_qemu_cpu(mc, &q0);
	mkcore_add_vmcoreinfo(mc, "A=1\n");
	mkcore_add_vmcoreinfo(mc, "B=2\n");	// the first one wins
	char *path = mkcore_write_tmp(mc);
	struct kp_opened_source o;
	CHECK_OK(open_core(path, &o));
	if (o.file) {
		CHECK_U64(o.src.ncpus, 3);
		if (o.src.ncpus == 3) {
			// The notes are kept as the dump has them; the architecture
			// decodes them.
			const struct kp_cpu_notes *c = o.src.cpus;
			CHECK(c[0].prstatus && c[0].qemu);
			CHECK_U64(c[0].prstatus_len, 336);
			struct kp_regs r;
			struct x86_cpu x;
			CHECK(kp_x86_prstatus_regs(c[0].prstatus, c[0].prstatus_len, &r));
			CHECK_U64(r.pc, 0xffffffff81001234);
			CHECK_U64(r.sp, 0xffffc90000003f00);
			CHECK_U64(r.r[17], 0x10);	// cs
			CHECK(kp_x86_qemu_cpu(&c[0], &x));
			CHECK_U64(x.cr0, 0x80050033);
			CHECK_U64(x.cr3, 0x1a0c000);
			CHECK_U64(x.cr4, 0x3506f0);
			CHECK_U64(x.idt_base, 0xfffffe0000000000);
			CHECK_U64(x.idt_limit, 0xfff);
			CHECK_U64(x.gdt_base, 0xfffffe0000001000);
			CHECK_U64(x.gs_base, 0xffff88801fa00000);
			CHECK_U64(x.kernel_gs_base, 0x7f0000001000);
			CHECK(kp_x86_prstatus_regs(c[1].prstatus, c[1].prstatus_len, &r));
			CHECK_U64(r.pc, 0xffffffff81005678);
			CHECK(kp_x86_qemu_cpu(&c[1], &x));
			CHECK_U64(x.cr3, 0x2b0d000);
			CHECK_U64(x.kernel_gs_base, 0);	// old layout has none
			CHECK(!c[2].prstatus && c[2].qemu);
		}
		CHECK_STR(o.src.vmcoreinfo, "A=1\n");
		close_core(&o);
	}
	unlink(path);
	free(path);
	mkcore_destroy(mc);
}

TEST(notes_parse_direct)
{
	struct kp_source src = {0};
	// Empty, and short trailing padding, are fine.
	CHECK_OK(kp_notes_parse((const uint8_t *)"", 0, "t", 0, &src));
	uint8_t pad[11] = {0};
	CHECK_OK(kp_notes_parse(pad, sizeof(pad), "t", 0, &src));
	// All-zero headers (zero-filled note space) are skipped.
	uint8_t zeros[48] = {0};
	CHECK_OK(kp_notes_parse(zeros, sizeof(zeros), "t", 0, &src));
	// namesz/descsz that would overflow 32-bit arithmetic.
	uint8_t bad[32] = {0};
	uint32_t h[3] = {0xfffffffd, 0x10, 0};
	memcpy(bad, h, sizeof(h));
	CHECK_ERR(kp_notes_parse(bad, sizeof(bad), "core PT_NOTE #0", 0x200, &src),
		  KP_ERR_FORMAT, "core PT_NOTE #0: note at offset 0x200 (namesz 4294967293");
	uint32_t h2[3] = {5, 0xfffffff0, 0};
	memcpy(bad, h2, sizeof(h2));
	CHECK_ERR(kp_notes_parse(bad, sizeof(bad), "t", 0, &src), KP_ERR_FORMAT,
		  "runs past the end");
	// Missing final desc padding is tolerated: "QEMU"-less 1-byte desc.
	uint8_t one[12 + 8 + 1] = {0};
	uint32_t h3[3] = {5, 1, 7};
	memcpy(one, h3, sizeof(h3));
	memcpy(one + 12, "ABCD", 5);
	CHECK_OK(kp_notes_parse(one, sizeof(one), "t", 0, &src));
	// Short PRSTATUS and QEMU notes are kept; the architecture cannot
	// read them (kp_kernel_open says so for PRSTATUS: test_hostile).
	struct mkcore *mc = mkcore_create();
	mkcore_add_note(mc, "CORE", NT_PRSTATUS, zeros, 40);
	uint8_t qdesc[440] = {0};
	uint32_t qhdr[2] = {1, 10000};	// size larger than the note
	memcpy(qdesc, qhdr, sizeof(qhdr));
	mkcore_add_note(mc, "QEMU", 0, qdesc, sizeof(qdesc));
	uint8_t *img;
	size_t len;
	mkcore_to_buffer(mc, 1 << 20, &img, &len);
	uint64_t off = mkcore_notes_offset(mc);
	kp_source_deinit(&src);
	CHECK_OK(kp_notes_parse(img + off, len - off, "t", off, &src));
	CHECK_U64(src.ncpus, 1);
	if (src.ncpus == 1) {
		struct kp_regs r;
		struct x86_cpu x;
		CHECK_U64(src.cpus[0].prstatus_len, 40);
		CHECK_U64(src.cpus[0].prstatus_at, off);
		CHECK(!kp_x86_prstatus_regs(src.cpus[0].prstatus, src.cpus[0].prstatus_len, &r));
		CHECK(!kp_x86_qemu_cpu(&src.cpus[0], &x));
	}
	free(img);
	mkcore_destroy(mc);
	kp_source_deinit(&src);
	kp_source_deinit(NULL);
}

// Random mutations of a valid note segment must never crash (run under ASan).
TEST(notes_mutation_fuzz)
{
	struct mkcore *mc = mkcore_create();
	mkcore_add_vmcoreinfo(mc, "OSRELEASE=6.1\n");
	mkcore_add_prstatus(mc, 1, 1, 2, 3, 4);
	struct mkcore_qemu_cpu q = {.cr3 = 0x1000};
	mkcore_add_qemu_cpu(mc, &q);
	uint8_t *img;
	size_t len;
	mkcore_to_buffer(mc, 1 << 20, &img, &len);
	uint64_t off = mkcore_notes_offset(mc);
	size_t nlen = len - off;
	uint8_t *work = malloc(nlen);
	uint32_t seed = 1;
	int errors = 0;
	for (int iter = 0; iter < 20000; iter++) {
		memcpy(work, img + off, nlen);
		int flips = 1 + iter % 4;
		for (int f = 0; f < flips; f++) {
			seed = seed * 1103515245 + 12345;
			size_t pos = (seed >> 8) % nlen;
			seed = seed * 1103515245 + 12345;
			work[pos] = (uint8_t)(seed >> 16);
		}
		seed = seed * 1103515245 + 12345;
		size_t cut = iter % 3 ? nlen : (seed >> 8) % (nlen + 1);
		// Exact-size heap copy so ASan catches any overread.
		uint8_t *exact = malloc(cut ? cut : 1);
		memcpy(exact, work, cut);
		struct kp_source src = {0};
		struct kp_error *err = kp_notes_parse(exact, cut, "fuzz", 0, &src);
		if (err) {
			errors++;
			CHECK(err->code == KP_ERR_FORMAT || err->code == KP_ERR_NOMEM);
			kp_error_destroy(err);
		}
		if (src.vmcoreinfo)
			CHECK(strlen(src.vmcoreinfo) == src.vmcoreinfo_size);
		kp_source_deinit(&src);
		free(exact);
	}
	CHECK(errors > 0);
	free(work);
	free(img);
	mkcore_destroy(mc);
}

static struct mkcore *sample_core(void)
{
	static uint8_t data[0x1800];
	fill(data, sizeof(data), 5);
	struct mkcore *mc = mkcore_create();
	mkcore_add_vmcoreinfo(mc, "OSRELEASE=6.1\n");
	mkcore_add_prstatus(mc, 1, 1, 2, 3, 4);
	mkcore_add_load(mc, 0xffffffff81000000, 0x1000000, data, 0x1000, 0x1000);
	mkcore_add_load(mc, 0, 0x2000000, data, 0x1800, 0x2000);
	return mc;
}

TEST(truncated_at_every_length)
{
	struct mkcore *mc = sample_core();
	uint8_t *img;
	size_t len;
	mkcore_to_buffer(mc, 1 << 20, &img, &len);
	char *path = mkcore_write_tmp(mc);
	CHECK_OK(try_open(path));
	int bad = 0;
	// Every length up to the header end, then a sample through the data.
	for (size_t cut = 0; cut < len; cut += cut < 0x400 ? 1 : 61) {
		CHECK(mkcore_write_bytes(path, img, cut) == 0);
		struct kp_error *err = try_open(path);
		if (!err) {
			if (bad++ < 3)
				FAILF("opening a core truncated to %zu of %zu bytes succeeded",
				      cut, len);
			continue;
		}
		if ((err->code != KP_ERR_FORMAT || !strstr(err->message, "truncated") ||
		     !strstr(err->message, path)) && bad++ < 3)
			FAILF("truncated to %zu: %s %s", cut, kp_error_code_name(err->code),
			      err->message);
		kp_error_destroy(err);
	}
	// The exact message for a truncated segment.
	CHECK(mkcore_write_bytes(path, img, len - 1) == 0);
	char want[256];
	snprintf(want, sizeof(want),
		 "%s: truncated: PT_LOAD #2 needs bytes up to 0x%zx but the file has 0x%zx",
		 path, len, len - 1);
	struct kp_error *err = try_open(path);
	CHECK(err != NULL);
	if (err)
		CHECK_STR(err->message, want);
	kp_error_destroy(err);
	unlink(path);
	free(path);
	free(img);
	mkcore_destroy(mc);
}

static void put_u16(uint8_t *p, uint16_t v) { memcpy(p, &v, 2); }
static void put_u64(uint8_t *p, uint64_t v) { memcpy(p, &v, 8); }

// Writes img with a modification and returns the open error.
static struct kp_error *open_modified(const char *path, const uint8_t *img, size_t len,
				      size_t at, const void *bytes, size_t n)
{
	uint8_t *copy = malloc(len);
	memcpy(copy, img, len);
	memcpy(copy + at, bytes, n);
	CHECK(mkcore_write_bytes(path, copy, len) == 0);
	free(copy);
	return try_open(path);
}

TEST(corrupt_headers)
{
	struct mkcore *mc = sample_core();
	uint8_t *img;
	size_t len;
	mkcore_to_buffer(mc, 1 << 20, &img, &len);
	char *path = mkcore_write_tmp(mc);
	uint8_t b[8];
	// Huge e_phnum.
	put_u16(b, 0xfffe);
	CHECK_ERR(open_modified(path, img, len, offsetof(Elf64_Ehdr, e_phnum), b, 2),
		  KP_ERR_FORMAT, "truncated: 65534 program headers at 0x40");
	// e_phoff past EOF.
	put_u64(b, 0x7fffffffffff0000);
	CHECK_ERR(open_modified(path, img, len, offsetof(Elf64_Ehdr, e_phoff), b, 8),
		  KP_ERR_FORMAT, "program headers");
	put_u64(b, UINT64_MAX - 8);
	CHECK_ERR(open_modified(path, img, len, offsetof(Elf64_Ehdr, e_phoff), b, 8),
		  KP_ERR_FORMAT, "program headers");
	// Wrong e_phentsize.
	put_u16(b, 32);
	CHECK_ERR(open_modified(path, img, len, offsetof(Elf64_Ehdr, e_phentsize), b, 2),
		  KP_ERR_FORMAT, "e_phentsize 32, expected 56");
	// No program headers.
	put_u16(b, 0);
	CHECK_ERR(open_modified(path, img, len, offsetof(Elf64_Ehdr, e_phnum), b, 2),
		  KP_ERR_FORMAT, "no program headers");
	// PN_XNUM without a section header.
	put_u16(b, PN_XNUM);
	CHECK_ERR(open_modified(path, img, len, offsetof(Elf64_Ehdr, e_phnum), b, 2),
		  KP_ERR_FORMAT, "PN_XNUM");
	// A 32-bit and a big-endian ELF.
	b[0] = ELFCLASS32;
	CHECK_ERR(open_modified(path, img, len, EI_CLASS, b, 1), KP_ERR_UNSUPPORTED,
		  "ELF class 1");
	b[0] = ELFDATA2MSB;
	CHECK_ERR(open_modified(path, img, len, EI_DATA, b, 1), KP_ERR_UNSUPPORTED,
		  "big-endian");
	// PT_NOTE p_offset past EOF, and p_filesz absurd.
	uint64_t ph0 = mkcore_phoff(mc);
	put_u64(b, 0x100000000);
	CHECK_ERR(open_modified(path, img, len, ph0 + offsetof(Elf64_Phdr, p_offset), b, 8),
		  KP_ERR_FORMAT, "truncated: PT_NOTE #0 at 0x100000000");
	put_u64(b, 1ULL << 40);
	CHECK_ERR(open_modified(path, img, len, ph0 + offsetof(Elf64_Phdr, p_filesz), b, 8),
		  KP_ERR_FORMAT, "PT_NOTE segments exceed 64 MiB");
	// PT_LOAD p_offset + p_filesz overflowing, and p_vaddr + p_memsz wrapping.
	uint64_t ph1 = ph0 + sizeof(Elf64_Phdr);
	put_u64(b, UINT64_MAX - 0x10);
	CHECK_ERR(open_modified(path, img, len, ph1 + offsetof(Elf64_Phdr, p_offset), b, 8),
		  KP_ERR_FORMAT, "PT_LOAD #1: p_offset 0xffffffffffffffef + p_filesz 0x1000 overflows");
	CHECK_ERR(open_modified(path, img, len, ph1 + offsetof(Elf64_Phdr, p_vaddr), b, 8),
		  KP_ERR_FORMAT, "p_vaddr 0xffffffffffffffef + p_memsz 0x1000 wraps");
	CHECK_ERR(open_modified(path, img, len, ph1 + offsetof(Elf64_Phdr, p_paddr), b, 8),
		  KP_ERR_FORMAT, "p_paddr 0xffffffffffffffef");
	// Overflowing note sizes inside the segment.
	uint32_t sz[2] = {0xffffffff, 0xffffffff};
	CHECK_ERR(open_modified(path, img, len, mkcore_notes_offset(mc), sz, 8),
		  KP_ERR_FORMAT, "runs past the end of the note segment");
	unlink(path);
	free(path);
	free(img);
	mkcore_destroy(mc);
}

// Random mutations of the headers and notes of a whole core, then reads of
// every range: errors are fine, crashes and overreads (ASan) are not.
TEST(core_mutation_fuzz)
{
	struct mkcore *mc = sample_core();
	struct mkcore_qemu_cpu q = {.cr3 = 0x1000};
	mkcore_add_qemu_cpu(mc, &q);
	uint8_t *img;
	size_t len;
	mkcore_to_buffer(mc, 1 << 20, &img, &len);
	size_t hdr_len = mkcore_notes_offset(mc) + 0x400;	// headers + notes
	if (hdr_len > len)
		hdr_len = len;
	char *path = mkcore_write_tmp(mc);
	uint8_t *work = malloc(len);
	uint32_t seed = 7;
	int opened = 0;
	for (int iter = 0; iter < 3000; iter++) {
		memcpy(work, img, len);
		int flips = 1 + iter % 3;
		for (int f = 0; f < flips; f++) {
			seed = seed * 1103515245 + 12345;
			size_t pos = (seed >> 8) % hdr_len;
			seed = seed * 1103515245 + 12345;
			// Mostly small or all-ones bytes: they make sizes interesting.
			work[pos] = (seed >> 20) & 1 ? 0xff : (uint8_t)(seed >> 12);
		}
		CHECK(mkcore_write_bytes(path, work, len) == 0);
		struct kp_opened_source o;
		struct kp_error *err = open_core(path, &o);
		if (err) {
			CHECK(err->message && strchr(err->message, '\n') == NULL);
			kp_error_destroy(err);
			continue;
		}
		opened++;
		for (int space = KP_VIRT; space <= KP_PHYS; space++) {
			const struct kp_range *r;
			size_t n = kp_memory_ranges(o.mem, space, &r);
			for (size_t i = 0; i < n && i < 16; i++) {
				uint8_t buf[64];
				kp_error_destroy(kp_memory_read(o.mem, space, r[i].start, buf, 64));
				kp_error_destroy(kp_memory_read(o.mem, space, r[i].end - 8, buf, 16));
			}
		}
		close_core(&o);
	}
	CHECK(opened > 0);
	free(work);
	unlink(path);
	free(path);
	free(img);
	mkcore_destroy(mc);
}

TEST(load_offset_past_eof)
{
	struct mkcore *mc = mkcore_create();
	mkcore_add_load(mc, 0, 0, NULL, 0x1000, 0x1000);
	mkcore_add_load_raw(mc, 0, 0x100000, 1ULL << 40, 0x1000, 0x1000);
	char *path = mkcore_write_tmp(mc);
	char want[256];
	snprintf(want, sizeof(want),
		 "%s: truncated: PT_LOAD #1 needs bytes up to 0x10000001000 but the file has 0x2000",
		 path);
	struct kp_error *err = try_open(path);
	CHECK(err && err->code == KP_ERR_FORMAT);
	if (err)
		CHECK_STR(err->message, want);
	kp_error_destroy(err);
	unlink(path);
	free(path);
	mkcore_destroy(mc);
}

TEST(extended_numbering)
{
	struct mkcore *mc = sample_core();
	mkcore_set_xnum(mc, true);
	char *path = mkcore_write_tmp(mc);
	struct kp_opened_source o;
	CHECK_OK(open_core(path, &o));
	if (o.file) {
		uint8_t b;
		CHECK_OK(kp_memory_read(o.mem, KP_PHYS, 0x2001fff, &b, 1));
		CHECK_U64(b, 0);
		CHECK_STR(o.src.vmcoreinfo, "OSRELEASE=6.1\n");
		close_core(&o);
	}
	// A huge sh_info count.
	uint8_t *img;
	size_t len;
	mkcore_to_buffer(mc, 1 << 20, &img, &len);
	uint32_t huge = 0x7fffffff;
	CHECK_ERR(open_modified(path, img, len, 64 + 3 * sizeof(Elf64_Phdr) +
				offsetof(Elf64_Shdr, sh_info), &huge, 4),
		  KP_ERR_FORMAT, "2147483647 program headers (more than");
	uint64_t shoff = 1ULL << 50;
	CHECK_ERR(open_modified(path, img, len, offsetof(Elf64_Ehdr, e_shoff), &shoff, 8),
		  KP_ERR_FORMAT, "truncated: section header 0 (PN_XNUM) at 0x4000000000000");
	free(img);
	unlink(path);
	free(path);
	mkcore_destroy(mc);
}

TEST(not_a_core)
{
	char path[] = "/tmp/kp-notelf-XXXXXX";
	int fd = mkstemp(path);
	CHECK(fd >= 0);
	const char text[] = "hello, this is not an ELF file at all, not even close\n"
			    "hello, this is not an ELF file at all, not even close\n";
	CHECK(write(fd, text, sizeof(text)) == (ssize_t)sizeof(text));
	close(fd);
	CHECK(!kp_elf_core_ops.probe((const uint8_t *)text, sizeof(text)));
	CHECK(!kp_elf_core_ops.probe((const uint8_t *)"\177EL", 3));
	CHECK_ERR(try_open(path), KP_ERR_FORMAT, "not an ELF file");
	// An ELF executable (e.g. vmlinux) passed as a dump.
	struct mkcore *mc = sample_core();
	mkcore_set_type(mc, ET_EXEC, EM_X86_64);
	CHECK(mkcore_write(mc, path) == 0);
	CHECK_ERR(try_open(path), KP_ERR_FORMAT, "e_type 2 is not ET_CORE (ET_EXEC");
	// A core of a machine kpeek does not read: the format backend opens
	// it, the kernel handle says which machine it is.
	mkcore_set_type(mc, ET_CORE, EM_PPC64);
	CHECK(mkcore_write(mc, path) == 0);
	CHECK_OK(try_open(path));
	struct kp_kernel *k = NULL;
	KP_OPTS(kp_open_options, o, .core = path);
	CHECK_ERR(kp_kernel_open(&o, &k), KP_ERR_UNSUPPORTED, "ELF core for machine 21 (ppc64) is not supported");
	mkcore_destroy(mc);
	// Empty file.
	CHECK(mkcore_write_bytes(path, "", 0) == 0);
	CHECK_ERR(try_open(path), KP_ERR_FORMAT, "truncated: need 64 bytes at offset 0x0");
	unlink(path);
}

TEST(missing_file)
{
	struct kp_file *f = NULL;
	CHECK_ERR(kp_file_open("/nonexistent/kpeek-core", &f), KP_ERR_NOT_FOUND,
		  "/nonexistent/kpeek-core: No such file or directory");
	CHECK(f == NULL);
	char *buf = NULL;
	size_t len = 0;
	CHECK_ERR(kp_read_whole_file("/nonexistent/x", &buf, &len), KP_ERR_NOT_FOUND,
		  "/nonexistent/x: No such file or directory");
	CHECK_ERR(kp_file_open("/tmp", &f), KP_ERR_INVALID, "/tmp: is a directory");
	// Only where /proc/kcore is absent (as on the build hosts): never open the
	// host's kernel memory.
	if (access("/proc/kcore", F_OK) < 0 && errno == ENOENT)
		CHECK_ERR(kp_file_open("/proc/kcore", &f), KP_ERR_NOT_FOUND,
			  "/proc/kcore: this kernel has no /proc/kcore (CONFIG_PROC_KCORE=n,"
			  " or a container without it)");
	kp_file_destroy(NULL);
}

TEST(file_reads)
{
	char path[] = "/tmp/kp-file-XXXXXX";
	int fd = mkstemp(path);
	CHECK(fd >= 0);
	uint8_t data[1000];
	fill(data, sizeof(data), 9);
	CHECK(write(fd, data, sizeof(data)) == (ssize_t)sizeof(data));
	close(fd);
	struct kp_file *f = NULL;
	CHECK_OK(kp_file_open(path, &f));
	if (f) {
		CHECK(f->cache != NULL);
		CHECK_U64(f->size, 1000);
		uint8_t buf[100];
		CHECK_OK(kp_file_read(f, 900, buf, 100));
		CHECK(memcmp(buf, data + 900, 100) == 0);
		char want[200];
		snprintf(want, sizeof(want),
			 "%s: truncated: need 100 bytes at offset 0x384, file has 0x3e8", path);
		struct kp_error *err = kp_file_read(f, 900, buf, 100 + 0 * sizeof(buf)) ;
		CHECK(err == NULL);
		err = kp_file_read(f, 901, buf, 100);
		CHECK(err && err->code == KP_ERR_FORMAT);
		if (err) {
			snprintf(want, sizeof(want),
				 "%s: truncated: need 100 bytes at offset 0x385, file has 0x3e8",
				 path);
			CHECK_STR(err->message, want);
		}
		kp_error_destroy(err);
		CHECK_ERR(kp_file_read(f, UINT64_MAX, buf, 2), KP_ERR_FORMAT, "truncated");
		CHECK_OK(kp_file_read_fn(buf, 0, 10, 5, f));
		CHECK(memcmp(buf, data + 5, 10) == 0);
		kp_file_destroy(f);
	}
	char *whole = NULL;
	size_t len = 0;
	CHECK_OK(kp_read_whole_file(path, &whole, &len));
	CHECK_U64(len, 1000);
	if (whole) {
		CHECK(memcmp(whole, data, 1000) == 0);
		CHECK_U64(whole[1000], 0);
	}
	free(whole);
	// A /proc file reports st_size 0: read until EOF (and through pread).
	CHECK_OK(kp_read_whole_file("/proc/self/status", &whole, &len));
	CHECK(len > 0 && whole && strncmp(whole, "Name:", 5) == 0 && strlen(whole) == len);
	free(whole);
	CHECK_OK(kp_file_open("/proc/self/status", &f));
	if (f) {
		CHECK(f->cache == NULL);	// live contents: never cached
		CHECK_U64(f->size, 0);
		char buf[5];
		CHECK_OK(kp_file_read(f, 0, buf, 5));
		CHECK(memcmp(buf, "Name:", 5) == 0);
		CHECK_ERR(kp_file_read(f, 1 << 20, buf, 5), KP_ERR_FORMAT,
			  "file ends at 0x100000");
		kp_file_destroy(f);
	}
	// A file that shrinks while open (a dump still being copied, or
	// truncated under us): a clean error, never SIGBUS.
	{
		uint8_t big[3 * 4096];
		fill(big, sizeof(big), 3);
		CHECK(mkcore_write_bytes(path, big, sizeof(big)) == 0);
		CHECK_OK(kp_file_open(path, &f));
		uint8_t b[16];
		CHECK_OK(kp_file_read(f, 100, b, 16));
		CHECK(truncate(path, 4096) == 0);
		CHECK_ERR(kp_file_read(f, 2 * 4096 + 8, b, 16), KP_ERR_FORMAT, "file ends at");
		uint8_t *all = malloc(sizeof(big));
		CHECK_ERR(kp_file_read(f, 0, all, 2 * 4096), KP_ERR_FORMAT, "truncated");
		free(all);
		kp_file_destroy(f);
	}
	// Empty regular file: reads fail as truncated.
	CHECK(mkcore_write_bytes(path, "", 0) == 0);
	CHECK_OK(kp_file_open(path, &f));
	if (f) {
		char c;
		CHECK_ERR(kp_file_read(f, 0, &c, 1), KP_ERR_FORMAT, "truncated");
		kp_file_destroy(f);
	}
	CHECK_OK(kp_read_whole_file(path, &whole, &len));
	CHECK_U64(len, 0);
	free(whole);
	unlink(path);
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

TEST(sparse_64g_dump_opens_fast)
{
	const uint64_t size = 64ULL << 30;
	struct mkcore *mc = mkcore_create();
	mkcore_add_prstatus(mc, 1, 1, 2, 3, 4);
	mkcore_add_load(mc, 0, 0x100000000, NULL, size, size);
	char *path;
	const char *dir = getenv("TMPDIR");
	if (asprintf(&path, "%s/kp-sparse-XXXXXX", dir && *dir ? dir : "/tmp") < 0)
		abort();
	int fd = mkstemp(path);
	CHECK(fd >= 0);
	close(fd);
	if (mkcore_write(mc, path) < 0) {
		static char why[160];
		snprintf(why, sizeof(why), "cannot create a 64 GiB sparse file: %s", strerror(errno));
		unlink(path);
		free(path);
		mkcore_destroy(mc);
		SKIP(why);
	}
	double t0 = now();
	struct kp_opened_source o;
	CHECK_OK(open_core(path, &o));
	double t = now() - t0;
	if (t > 0.5)
		FAILF("opening a 64 GiB sparse dump took %.3f s", t);
	if (o.file) {
		uint64_t v = 1;
		CHECK_OK(kp_memory_read(o.mem, KP_PHYS, 0x100000000 + size - 8, &v, 8));
		CHECK_U64(v, 0);
		struct kp_error *err = kp_memory_read(o.mem, KP_PHYS,
						      0x100000000 + size - 4, &v, 8);
		CHECK(err && err->address == 0x100000000 + size);
		kp_error_destroy(err);
		close_core(&o);
	}
	unlink(path);
	free(path);
	mkcore_destroy(mc);
}

int main(void)
{
	RUN(physical_only_core);
	RUN(kdump_style_virtual_and_physical);
	RUN(kcore_style_paddr);
	RUN(notes_parsed);
	RUN(notes_parse_direct);
	RUN(notes_mutation_fuzz);
	RUN(truncated_at_every_length);
	RUN(corrupt_headers);
	RUN(core_mutation_fuzz);
	RUN(load_offset_past_eof);
	RUN(extended_numbering);
	RUN(not_a_core);
	RUN(missing_file);
	RUN(file_reads);
	RUN(sparse_64g_dump_opens_fast);
	return TEST_SUMMARY();
}
