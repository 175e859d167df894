// SPDX-License-Identifier: MIT
// kp_snapshot_write: the synthetic kernel (ELF with CPU notes, kdump-compressed)
// copied into a new ELF vmcore, kdump file or flattened stream (also through
// a pipe: kp_snapshot_write_fd) and re-opened: the same physical bytes, the same
// kernel facts and symbols, p_vaddr in the direct map, notes kept. Also a LiME
// image copied; a 64 MiB mostly-zero source giving a sparse file (st_blocks);
// progress calls; cancellation leaving no file (and no temporary); refusing
// an existing file; pages the source cannot read (kdump excluded pages).
#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test.h"
#include "collect.h"
#include "../gen/mklime.h"
#include "mkcore.h"
#include "mkkallsyms.h"
#include "mkkdump.h"
#include "mkpgtable.h"
#include "synthkernel.h"

static char dir[64];

static char *out_path(const char *name)
{
	char *p;
	if (asprintf(&p, "%s/%s", dir, name) < 0)
		abort();
	return p;
}

static char *write_file(const char *name, const void *buf, size_t len)
{
	char *p = out_path(name);
	if (mkcore_write_bytes(p, buf, len) < 0)
		abort();
	return p;
}

static size_t dir_entries(void)
{
	DIR *d = opendir(dir);
	size_t n = 0;
	struct dirent *e;
	while ((e = readdir(d)))
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n;
}

static struct kp_kernel *open_core(const char *path)
{
	KP_OPTS(kp_open_options, o, .core = path);
	struct kp_kernel *k = NULL;
	CHECK_OK(kp_kernel_open(&o, &k));
	return k;
}

// Physical ranges and every byte in them are equal.
static void check_same_memory(struct kp_kernel *a, struct kp_kernel *b)
{
	const struct kp_range *ra, *rb;
	size_t na = kp_kernel_ranges(a, KP_PHYS, &ra);
	size_t nb = kp_kernel_ranges(b, KP_PHYS, &rb);
	CHECK_U64(nb, na);
	for (size_t i = 0; i < na && i < nb; i++) {
		CHECK_U64(rb[i].start, ra[i].start);
		CHECK_U64(rb[i].end, ra[i].end);
		uint8_t x[4096], y[4096];
		for (uint64_t pa = ra[i].start; pa < ra[i].end; pa += sizeof(x)) {
			size_t n = ra[i].end - pa < sizeof(x) ? ra[i].end - pa : sizeof(x);
			struct kp_error *ea = kp_read(a, KP_PHYS, pa, x, n);
			if (ea) {
				// Unreadable in the source: lost in the copy, never data.
				CHECK(kp_error_code(ea) == KP_ERR_FAULT);
				kp_error_destroy(ea);
				CHECK_ERR(kp_read(b, KP_PHYS, pa, y, n), KP_ERR_FAULT, "was lost");
				continue;
			}
			CHECK_OK(kp_read(b, KP_PHYS, pa, y, n));
			if (memcmp(x, y, n)) {
				FAILF("physical 0x%" PRIx64 " differs", pa);
				return;
			}
		}
	}
}

struct prog {
	uint64_t calls, last_done, total;
	bool monotone;
	uint64_t cancel_after;	// set *cancel after this many calls (0: never)
	volatile int *cancel;
};

static void on_progress(uint64_t done, uint64_t total, void *arg)
{
	struct prog *p = arg;
	if (done < p->last_done)
		p->monotone = false;
	p->last_done = done;
	p->total = total;
	p->calls++;
	if (p->cancel_after && p->calls >= p->cancel_after)
		*p->cancel = 1;
}

static void check_phdrs(const char *path, uint64_t direct)
{
	FILE *f = fopen(path, "rb");
	Elf64_Ehdr eh;
	CHECK(f && fread(&eh, sizeof(eh), 1, f) == 1);
	if (!f)
		return;
	CHECK_U64(eh.e_type, ET_CORE);
	CHECK_U64(eh.e_machine, EM_X86_64);
	CHECK(eh.e_phnum >= 2);
	Elf64_Phdr ph[16];
	unsigned n = eh.e_phnum < 16 ? eh.e_phnum : 16;
	for (unsigned i = 0; i < n; i++) {
		fseek(f, (long)(eh.e_phoff + i * sizeof(ph[i])), SEEK_SET);
		CHECK(fread(&ph[i], sizeof(ph[i]), 1, f) == 1);
	}
	fclose(f);
	CHECK_U64(ph[0].p_type, PT_NOTE);
	// RAM loads at their direct-map addresses (when known), then, when the
	// kernel image is known, one load of it at its virtual address whose file
	// bytes are the RAM load's bytes for the same physical range.
	unsigned kimage = 0;
	for (unsigned i = 1; i < n; i++) {
		CHECK_U64(ph[i].p_type, PT_LOAD);
		CHECK_U64(ph[i].p_offset % 4096, ph[i].p_paddr % 4096);
		if (ph[i].p_vaddr >= 0xffffffff80000000ULL) {
			kimage++;
			CHECK_U64(i, n - 1);
			bool inside = false;
			for (unsigned j = 1; j < i; j++)
				if (ph[i].p_paddr >= ph[j].p_paddr &&
				    ph[i].p_paddr + ph[i].p_filesz <= ph[j].p_paddr + ph[j].p_filesz) {
					inside = true;
					CHECK_U64(ph[i].p_offset,
						  ph[j].p_offset + (ph[i].p_paddr - ph[j].p_paddr));
				}
			CHECK(inside);
		} else {
			CHECK_U64(ph[i].p_vaddr, direct ? direct + ph[i].p_paddr : 0);
		}
	}
	CHECK(kimage <= 1);
}

// The source kinds a copy in each format reads back as.
static const char *const kinds[] = {
	[KP_SNAPSHOT_ELF] = "ELF vmcore", [KP_SNAPSHOT_KDUMP] = "kdump-compressed (zlib)",
	[KP_SNAPSHOT_FLATTENED] = "kdump-compressed (flattened, zlib)",
};

// kp_snapshot_write_fd into a pipe, read by this process into path: a
// stream that is never sought.
static struct kp_error *write_through_pipe(struct kp_kernel *k, const char *path,
					   const struct kp_snapshot_options *opts, struct kp_snapshot_stats *st)
{
	int p[2];
	if (pipe(p) < 0)
		abort();
	pid_t pid = fork();
	if (pid == 0) {
		close(p[0]);
		struct kp_error *err = kp_snapshot_write_fd(k, p[1], "the pipe", opts, st);
		_exit(err ? 1 : 0);
	}
	close(p[1]);
	FILE *f = fopen(path, "w");
	char buf[65536];
	ssize_t n;
	while ((n = read(p[0], buf, sizeof(buf))) > 0)
		fwrite(buf, 1, (size_t)n, f);
	fclose(f);
	close(p[0]);
	int status;
	waitpid(pid, &status, 0);
	st->file_size = 0;	// the child's
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? NULL
		: kp_error_create(KP_ERR_OS, "the child's kp_snapshot_write_fd failed");
}

static void roundtrip(enum sk_format format, bool qemu_notes, enum kp_snapshot_format to, bool pipe)
{
	struct sk_opts so = {.format = format, .ntasks = 3, .cpus = qemu_notes ? 1 : 0};
	uint8_t *img;
	size_t len;
	sk_build(&so, &img, &len);
	char *src = write_file("synth.src", img, len);
	free(img);
	char *snap = out_path("synth.snap");
	struct kp_kernel *a = open_core(src);
	if (!a)
		goto out;
	struct prog p = {.monotone = true};
	KP_OPTS(kp_snapshot_options, opts, .progress = on_progress, .arg = &p, .format = to);
	KP_INIT(kp_snapshot_stats, st);
	struct stat sb;
	if (pipe) {
		CHECK_OK(write_through_pipe(a, snap, &opts, &st));
	} else {
		CHECK_OK(kp_snapshot_write(a, snap, &opts, &st));
		CHECK(p.calls >= 2 && p.monotone);
		CHECK_U64(p.last_done, p.total);
		CHECK_U64(st.bytes, p.total);
		CHECK_U64(st.data_bytes + st.zero_bytes, st.bytes);
		CHECK(stat(snap, &sb) == 0);
		CHECK_U64(sb.st_size, st.file_size);
		CHECK_U64(sb.st_mode & 0777, 0600);
	}
	if (to == KP_SNAPSHOT_ELF)
		check_phdrs(snap, SK_DIRECT);
	struct kp_kernel *b = open_core(snap);
	if (b) {
		check_same_memory(a, b);
		KP_INIT(kp_kernel_info, ia);
		KP_INIT(kp_kernel_info, ib);
		kp_kernel_get_info(a, &ia);
		kp_kernel_get_info(b, &ib);
		CHECK_STR(ib.source_kind, kinds[to]);
		CHECK_STR(ib.release, ia.release);
		CHECK_STR(ib.vmcoreinfo_source, "dump note");
		CHECK_U64(ib.kaslr_offset, ia.kaslr_offset);
		CHECK_U64(kpt_fact(b, "phys_base"), kpt_fact(a, "phys_base"));
		CHECK_U64(kpt_fact(b, "pgd"), kpt_fact(a, "pgd"));
		CHECK_U64(kpt_fact(b, "page_offset_base"), SK_DIRECT);
		CHECK_U64(ib.ncpus, ia.ncpus);
		CHECK_U64(ib.num_symbols, ia.num_symbols);
		struct kp_symbol sym;
		CHECK_OK(kp_symbol_by_name(b, "init_task", &sym));
		CHECK_U64(sym.address, SK_INIT_TASK);
		uint64_t v = 0;
		CHECK_OK(kp_read_u64(b, SK_JIFFIES, &v));
		CHECK_U64(v, 0x100003039);
		// The direct map (a virtual segment of the ELF copy).
		CHECK_OK(kp_read_u64(b, SK_DIRECT + (SK_JIFFIES - SK_TEXT), &v));
		CHECK_U64(v, 0x100003039);
		struct kp_task *tasks;
		size_t ntasks;
		CHECK_OK(kpt_tasks(b, false, &tasks, &ntasks));
		CHECK_U64(ntasks, 4);
		free(tasks);
		kp_kernel_destroy(b);
	}
	kp_kernel_destroy(a);
out:
	unlink(src);
	unlink(snap);
	free(src);
	free(snap);
	CHECK_U64(dir_entries(), 0);
}

TEST(roundtrip_elf_with_cpu_notes)
{
	roundtrip(SK_ELF, true, KP_SNAPSHOT_ELF, false);
}

TEST(roundtrip_kdump)
{
	roundtrip(SK_KDUMP, false, KP_SNAPSHOT_ELF, false);
}

// The kdump formats: a file of each, and the flattened one through a pipe.
TEST(roundtrip_to_kdump_and_flattened)
{
	roundtrip(SK_ELF, true, KP_SNAPSHOT_KDUMP, false);
	roundtrip(SK_KDUMP, false, KP_SNAPSHOT_FLATTENED, false);
	roundtrip(SK_ELF, true, KP_SNAPSHOT_FLATTENED, true);
}

// Only the flattened format streams; every compression reads back.
TEST(stream_format_and_compressions)
{
	static uint8_t mem[8 * 4096];
	static const char vmci[] = "OSRELEASE=6.1.0-kd\nPAGESIZE=4096\n";
	for (size_t i = 0; i < sizeof(mem); i++)
		mem[i] = (uint8_t)(i % 4096 < 2048 ? i / 4096 + 1 : i * 7);	// half compressible
	memset(mem + 5 * 4096, 0, 4096);
	struct mkkdump_opts ko = {.mem = mem, .npages = 8, .comp = MKK_ZLIB, .vmcoreinfo = vmci};
	uint8_t *img;
	size_t len;
	struct mkkdump_layout lay;
	mkkdump_build(&ko, &img, &len, &lay);
	char *src = write_file("c.src", img, len);
	free(img);
	struct kp_kernel *a = open_core(src);
	static const enum kp_snapshot_compression comps[] = { KP_SNAPSHOT_ZLIB, KP_SNAPSHOT_ZSTD,
							       KP_SNAPSHOT_UNCOMPRESSED };
	static const char *const kind[] = { "kdump-compressed (zlib)", "kdump-compressed (zstd)",
					    "kdump-compressed (uncompressed)" };
	for (size_t i = 0; a && i < 3; i++) {
		char *snap = out_path("c.snap");
		KP_OPTS(kp_snapshot_options, o, .format = KP_SNAPSHOT_KDUMP, .compression = comps[i]);
		KP_INIT(kp_snapshot_stats, st);
		CHECK_OK(kp_snapshot_write(a, snap, &o, &st));
		CHECK_U64(st.zero_bytes, 4096);
		struct kp_kernel *b = open_core(snap);
		if (b) {
			KP_INIT(kp_kernel_info, info);
			kp_kernel_get_info(b, &info);
			CHECK_STR(info.source_kind, kind[i]);
			check_same_memory(a, b);
			kp_kernel_destroy(b);
		}
		unlink(snap);
		free(snap);
	}
	if (a) {
		KP_OPTS(kp_snapshot_options, elf, .format = KP_SNAPSHOT_ELF);
		KP_INIT(kp_snapshot_stats, st);
		CHECK_ERR(kp_snapshot_write_fd(a, 1, "standard output", &elf, &st), KP_ERR_INVALID,
			  "only the flattened format");
		kp_kernel_destroy(a);
	}
	unlink(src);
	free(src);
	CHECK_U64(dir_entries(), 0);
}

TEST(copy_of_lime)
{
	static uint8_t m[0x6000];
	static const char vmci[] = "OSRELEASE=6.1.0-lime\nPAGESIZE=4096\n"
				   "SYMBOL(swapper_pg_dir)=ffffffff82000000\n"
				   "SYMBOL(init_top_pgt)=ffffffff82000000\n"
				   "KERNELOFFSET=0\n";
	memcpy(m + 0x1000, vmci, sizeof(vmci));
	memset(m + 0x4000, 0x5a, 0x1800);
	struct mklime *ml = mklime_create();
	mklime_add(ml, 0x100000, m, sizeof(m));
	mklime_add_avml(ml, 0x200000, m + 0x4000, 0x2000, NULL);
	uint8_t *img;
	size_t len;
	mklime_to_buffer(ml, &img, &len);
	mklime_destroy(ml);
	char *src = write_file("img.lime", img, len);
	free(img);
	char *snap = out_path("img.snap");
	struct kp_kernel *a = open_core(src);
	if (a) {
		KP_INIT(kp_snapshot_stats, st);
		CHECK_OK(kp_snapshot_write(a, snap, NULL, &st));
		CHECK_U64(st.ranges, 2);
		CHECK_U64(st.bytes, 0x8000);
		check_phdrs(snap, 0);	// page_offset_base unknown: p_vaddr 0
		struct kp_kernel *b = open_core(snap);
		if (b) {
			check_same_memory(a, b);
			KP_INIT(kp_kernel_info, ib);
			kp_kernel_get_info(b, &ib);
			CHECK_STR(ib.source_kind, "ELF vmcore (physical only)");
			CHECK_STR(ib.release, "6.1.0-lime");
			// The found text became the copy's note.
			CHECK_STR(ib.vmcoreinfo_source, "dump note");
			kp_kernel_destroy(b);
		}
		kp_kernel_destroy(a);
	}
	unlink(src);
	unlink(snap);
	free(src);
	free(snap);
}

// 64 MiB of physical memory, three data pages: a sparse source.
static char *big_sparse_source(void)
{
	static uint8_t page[4096];
	memset(page, 0x77, sizeof(page));
	struct mkcore *mc = mkcore_create();
	mkcore_add_vmcoreinfo(mc, "OSRELEASE=6.1.0-big\nPAGESIZE=4096\n");
	mkcore_add_load(mc, 0, 0, NULL, 64 << 20, 64 << 20);
	mkcore_add_load(mc, 0, 64 << 20, page, 4096, 4096);
	mkcore_add_load(mc, 0, 0x10000000, page, 4096, 4096);
	mkcore_add_load(mc, 0, 0x10002000, page, 4096, 4096);
	char *p = out_path("big.src");
	if (mkcore_write(mc, p) < 0)
		abort();
	mkcore_destroy(mc);
	return p;
}

TEST(sparse_output)
{
	char *src = big_sparse_source();
	char *snap = out_path("big.snap");
	struct kp_kernel *a = open_core(src);
	if (a) {
		KP_INIT(kp_snapshot_stats, st);
		CHECK_OK(kp_snapshot_write(a, snap, NULL, &st));
		CHECK_U64(st.ranges, 3);
		CHECK_U64(st.data_bytes, 3 * 4096);
		CHECK_U64(st.zero_bytes, 64 << 20);
		struct stat sb;
		CHECK(stat(snap, &sb) == 0);
		CHECK(sb.st_size > (64 << 20));
		// Headers + notes + three pages; allow for file-system granularity.
		if ((uint64_t)sb.st_blocks * 512 > (1 << 20))
			FAILF("snapshot uses %" PRIu64 " bytes on disk, expected under 1 MiB",
			      (uint64_t)sb.st_blocks * 512);
		struct kp_kernel *b = open_core(snap);
		if (b) {
			check_same_memory(a, b);
			kp_kernel_destroy(b);
		}
		kp_kernel_destroy(a);
	}
	unlink(src);
	unlink(snap);
	free(src);
	free(snap);
}

TEST(cancel_leaves_nothing)
{
	char *src = big_sparse_source();
	char *snap = out_path("big.snap");
	struct kp_kernel *a = open_core(src);
	if (a) {
		volatile int cancel = 0;
		struct prog p = {.monotone = true, .cancel_after = 3, .cancel = &cancel};
		KP_OPTS(kp_snapshot_options, opts, .progress = on_progress, .arg = &p,
						   .cancel = &cancel);
		CHECK_ERR(kp_snapshot_write(a, snap, &opts, NULL), KP_ERR_INTERRUPTED,
			  "interrupted at physical");
		CHECK(access(snap, F_OK) < 0 && errno == ENOENT);
		CHECK_U64(dir_entries(), 1);	// only the source
		// Cancelled before it starts.
		CHECK_ERR(kp_snapshot_write(a, snap, &opts, NULL), KP_ERR_INTERRUPTED, "");
		CHECK_U64(dir_entries(), 1);
		kp_kernel_destroy(a);
	}
	unlink(src);
	free(src);
	free(snap);
}

TEST(refuses_existing_and_bad_paths)
{
	char *src = big_sparse_source();
	char *snap = write_file("exists", "keep", 4);
	struct kp_kernel *a = open_core(src);
	if (a) {
		struct kp_error *err = kp_snapshot_write(a, snap, NULL, NULL);
		CHECK(err && err->errnum == EEXIST);
		if (err)
			CHECK(strstr(err->message, snap) != NULL);
		kp_error_destroy(err);
		struct stat sb;
		CHECK(stat(snap, &sb) == 0 && sb.st_size == 4);
		char *missing = out_path("no/such/dir/x");
		CHECK_ERR(kp_snapshot_write(a, missing, NULL, NULL), KP_ERR_OUTPUT, "no/such/dir");
		free(missing);
		char *k = out_path("k.snap");
		KP_OPTS(kp_snapshot_options, o, .format = (enum kp_snapshot_format)7);
		CHECK_ERR(kp_snapshot_write(a, k, &o, NULL), KP_ERR_INVALID, "unknown snapshot format 7");
		CHECK(access(k, F_OK) < 0);
		free(k);
		CHECK_ERR(kp_snapshot_write(a, "", NULL, NULL), KP_ERR_INVALID, "");
		CHECK_U64(dir_entries(), 2);
		kp_kernel_destroy(a);
	}
	unlink(src);
	unlink(snap);
	free(src);
	free(snap);
}

TEST(unreadable_pages_are_lost_not_zeros)
{
	// kdump with excluded pages (makedumpfile -d 31): they fault in the source.
	static uint8_t mem[16 * 4096], state[16];
	static const char vmci[] = "OSRELEASE=6.1.0-kd\nPAGESIZE=4096\n";
	for (size_t i = 0; i < sizeof(mem); i++)
		mem[i] = (uint8_t)(i / 4096 + 1);
	state[3] = MKK_EXCLUDED;
	state[9] = MKK_EXCLUDED;
	struct mkkdump_opts ko = {.mem = mem, .npages = 16, .comp = MKK_ZLIB, .state = state,
				  .dump_level = 31, .vmcoreinfo = vmci};
	uint8_t *img;
	size_t len;
	struct mkkdump_layout lay;
	mkkdump_build(&ko, &img, &len, &lay);
	char *src = write_file("kd.src", img, len);
	free(img);
	char *snap = out_path("kd.snap");
	struct kp_kernel *a = open_core(src);
	for (enum kp_snapshot_format to = KP_SNAPSHOT_ELF; a && to <= KP_SNAPSHOT_FLATTENED; to++) {
		KP_OPTS(kp_snapshot_options, o, .format = to);
		KP_INIT(kp_snapshot_stats, st);
		CHECK_OK(kp_snapshot_write(a, snap, &o, &st));
		CHECK_U64(st.unreadable_bytes, 2 * 4096);
		CHECK_U64(st.lost_ranges, 2);
		struct kp_kernel *b = open_core(snap);
		if (b) {
			check_same_memory(a, b);
			KP_INIT(kp_kernel_info, info);
			kp_kernel_get_info(b, &info);
			CHECK_U64(info.nlost, 2);
			if (info.nlost == 2) {
				CHECK_U64(info.lost[0].start, 3 * 4096);
				CHECK_U64(info.lost[0].end, 4 * 4096);
				CHECK_U64(info.lost[1].start, 9 * 4096);
			}
			// A snapshot of the snapshot keeps them lost.
			char *again = out_path("kd.snap2");
			KP_INIT(kp_snapshot_stats, st2);
			CHECK_OK(kp_snapshot_write(b, again, NULL, &st2));
			CHECK_U64(st2.lost_ranges, 2);
			unlink(again);
			free(again);
			uint8_t buf[4096];
			CHECK_OK(kp_read(b, KP_PHYS, 4 * 4096, buf, 4096));
			CHECK_U64(buf[0], 5);
			kp_kernel_destroy(b);
		}
		unlink(snap);
	}
	kp_kernel_destroy(a);
	unlink(src);
	unlink(snap);
	free(src);
	free(snap);
}

int main(void)
{
	const char *t = getenv("TMPDIR");
	snprintf(dir, sizeof(dir), "%s/kp-snapshot-XXXXXX", t && *t && strlen(t) < 40 ? t : "/tmp");
	if (!mkdtemp(dir))
		abort();
	RUN(roundtrip_elf_with_cpu_notes);
	RUN(roundtrip_kdump);
	RUN(roundtrip_to_kdump_and_flattened);
	RUN(stream_format_and_compressions);
	RUN(copy_of_lime);
	RUN(sparse_output);
	RUN(cancel_leaves_nothing);
	RUN(refuses_existing_and_bad_paths);
	RUN(unreadable_pages_are_lost_not_zeros);
	rmdir(dir);
	return TEST_SUMMARY();
}
