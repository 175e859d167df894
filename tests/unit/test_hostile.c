// SPDX-License-Identifier: MIT
// Hostile dumps through the whole open path (kp_kernel_open) and the walkers:
// looping task lists, huge sparse dumps, overlapping segments, absurd counts,
// truncation and damage at every header. Every case must end quickly with an
// error naming what was wrong (or succeed), never hang or crash; run under
// ASan+UBSan as well. The synthetic kernel is fuzz/synthkernel.h.
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "test.h"
#include "collect.h"
#include "mkcore.h"
#include "mkkallsyms.h"
#include "mkkdump.h"
#include "mkpgtable.h"
#include "synthkernel.h"

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static char *tmp_path(const char *tag)
{
	char *path;
	const char *dir = getenv("TMPDIR");
	if (asprintf(&path, "%s/kp-hostile-%s-XXXXXX", dir && *dir ? dir : "/tmp", tag) < 0)
		abort();
	int fd = mkstemp(path);
	if (fd < 0)
		abort();
	close(fd);
	return path;
}

static char *write_tmp(const char *tag, const void *buf, size_t len)
{
	char *path = tmp_path(tag);
	if (mkcore_write_bytes(path, buf, len) < 0)
		abort();
	return path;
}

static struct kp_error *open_path(const char *path, struct kp_kernel **ret)
{
	KP_OPTS(kp_open_options, o, .core = path);
	return kp_kernel_open(&o, ret);
}

static char *write_synth(const struct sk_opts *o)
{
	uint8_t *buf;
	size_t len;
	sk_build(o, &buf, &len);
	char *path = write_tmp("synth", buf, len);
	free(buf);
	return path;
}

// Opens a synthetic kernel and lists its tasks; returns the kp_tasks error.
static struct kp_error *synth_tasks(const struct sk_opts *o, bool threads, size_t *n_ret,
				    double *secs_ret)
{
	char *path = write_synth(o);
	struct kp_kernel *k = NULL;
	struct kp_error *err = open_path(path, &k);
	*n_ret = 0;
	if (!err) {
		struct kp_task *tasks = NULL;
		double t0 = now();
		err = kpt_tasks(k, threads, &tasks, n_ret);
		*secs_ret = now() - t0;
		free(tasks);
		kp_kernel_destroy(k);
	} else {
		err = kp_error_prefix(err, "open");
	}
	unlink(path);
	free(path);
	return err;
}

// ---------------------------------------------------------------- task lists

TEST(task_list_sane)
{
	struct sk_opts o = { .format = SK_ELF, .ntasks = 5 };
	size_t n;
	double t;
	CHECK_OK(synth_tasks(&o, false, &n, &t));
	CHECK_U64(n, 6);
	CHECK_OK(synth_tasks(&o, true, &n, &t));
	CHECK_U64(n, 6);
	o.format = SK_KDUMP;
	CHECK_OK(synth_tasks(&o, true, &n, &t));
	CHECK_U64(n, 6);
}

static void check_loop(enum sk_loop loop, bool threads, enum kp_error_code code,
		       const char *substr)
{
	struct sk_opts o = { .format = SK_ELF, .ntasks = 6, .loop = loop };
	size_t n;
	double t = 0;
	struct kp_error *err = synth_tasks(&o, threads, &n, &t);
	if (!err) {
		FAILF("loop %d: kp_tasks succeeded with %zu tasks, expected %s", loop, n,
		      kp_error_code_name(code));
		return;
	}
	if (err->code != code || !strstr(err->message, substr))
		FAILF("loop %d: expected %s containing \"%s\", got %s: %s", loop,
		      kp_error_code_name(code), substr, kp_error_code_name(err->code),
		      err->message);
	if (t > 1.0)
		FAILF("loop %d: took %.2f s to give up", loop, t);
	kp_error_destroy(err);
}

// A cycle that does not pass through the head re-enters a node whose prev
// link points elsewhere: the walker names the broken link at once.
TEST(task_list_cycle_not_through_head_is_corrupt)
{
	check_loop(SK_LOOP_TASKS, false, KP_ERR_FORMAT, "task list is corrupt");
}

TEST(task_list_self_loop_is_corrupt)
{
	check_loop(SK_LOOP_SELF, false, KP_ERR_FORMAT, "task list is corrupt");
}

TEST(thread_ring_cycle_is_corrupt)
{
	check_loop(SK_LOOP_THREADS, true, KP_ERR_FORMAT, "thread list is corrupt");
	// Without threads the leaders' list is fine.
	struct sk_opts o = { .format = SK_ELF, .ntasks = 6, .loop = SK_LOOP_THREADS };
	size_t n;
	double t;
	CHECK_OK(synth_tasks(&o, false, &n, &t));
	CHECK_U64(n, 7);
}

TEST(task_list_null_link_is_format_error)
{
	check_loop(SK_LOOP_NULL, false, KP_ERR_FORMAT, "NULL");
}

// ---------------------------------------------------------------- huge and sparse

// The synthetic kernel, then a 64 GiB hole-only segment above 4 GiB.
// NULL, or why the test could not run here.
static const char *sparse_64g(bool with_note)
{
	const uint64_t size = 64ULL << 30;
	struct sk_opts so = { .format = SK_ELF };
	uint8_t *img;
	size_t len;
	sk_build(&so, &img, &len);
	// Reuse the synthetic kernel's memory: its PT_LOADs.
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)img;
	const Elf64_Phdr *ph = (const Elf64_Phdr *)(img + eh->e_phoff);
	struct mkcore *mc = mkcore_create();
	if (with_note) {
		const char *vmci = (const char *)memmem(img, len, "OSRELEASE=", 10);
		CHECK(vmci != NULL);
		if (vmci)
			mkcore_add_vmcoreinfo(mc, vmci);
	}
	int loads = 0;
	for (int i = 0; i < eh->e_phnum; i++) {
		if (ph[i].p_type != PT_LOAD)
			continue;
		mkcore_add_load(mc, 0, ph[i].p_paddr, img + ph[i].p_offset, ph[i].p_filesz,
				ph[i].p_memsz);
		loads++;
	}
	CHECK(loads > 0);
	mkcore_add_load(mc, 0, 0x100000000ULL, NULL, size, size);
	char *path = tmp_path("sparse");
	static char why[160];
	const char *skip = NULL;
	if (mkcore_write(mc, path) < 0) {
		snprintf(why, sizeof(why), "cannot create a 64 GiB sparse file: %s", strerror(errno));
		skip = why;
	} else {
		double t0 = now();
		struct kp_kernel *k = NULL;
		struct kp_error *err = open_path(path, &k);
		double t = now() - t0;
		CHECK_OK(err);
		if (t > 0.5)
			FAILF("kp_kernel_open of a 64 GiB sparse dump (%s VMCOREINFO note) took %.2f s",
			      with_note ? "with" : "without", t);
		if (!err) {
			uint64_t v = 1;
			CHECK_OK(kp_read(k, KP_PHYS, 0x100000000ULL + size - 8, &v, 8));
			CHECK_U64(v, 0);
			struct kp_task *tasks = NULL;
			size_t n = 0;
			CHECK_OK(kpt_tasks(k, false, &tasks, &n));
			CHECK_U64(n, 1);
			free(tasks);
			kp_kernel_destroy(k);
		}
	}
	unlink(path);
	free(path);
	mkcore_destroy(mc);
	free(img);
	return skip;
}

TEST(sparse_64g_dump_with_note_opens_fast)
{
	const char *skip = sparse_64g(true);
	if (skip)
		SKIP(skip);
}

TEST(sparse_64g_dump_without_note_opens_fast)
{
	const char *skip = sparse_64g(false);
	if (skip)
		SKIP(skip);
}

// Runs fn in a child process killed after secs: a hang fails the test instead
// of hanging the suite. Returns the child's exit status, -1 if it was killed.
static int run_bounded(void (*fn)(const char *), const char *arg, unsigned secs)
{
	fflush(stdout);
	pid_t pid = fork();
	if (pid < 0)
		abort();
	if (pid == 0) {
		alarm(secs);
		fn(arg);
		_exit(0);
	}
	int st;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void open_and_close(const char *path)
{
	struct kp_kernel *k = NULL;
	struct kp_error *err = open_path(path, &k);
	if (err)
		kp_error_destroy(err);
	else
		kp_kernel_destroy(k);
}

// memsz far beyond filesz (2^62 bytes of zeros) and no VMCOREINFO anywhere:
// looking for the vmcoreinfo page must not scan every zero page.
TEST(huge_zero_fill_segment_without_vmcoreinfo)
{
	struct mkcore *mc = mkcore_create();
	static uint8_t page[4096];
	mkcore_add_load(mc, 0, 0, page, sizeof(page), 1ULL << 62);
	uint8_t *buf;
	size_t len;
	mkcore_to_buffer(mc, 1 << 20, &buf, &len);
	char *path = write_tmp("zerofill", buf, len);
	double t0 = now();
	int st = run_bounded(open_and_close, path, 5);
	if (st != 0)
		FAILF("kp_kernel_open of a %zu-byte dump with a 2^62-byte zero-filled segment "
		      "%s after %.1f s (src/locate.c scans every page)", len,
		      st < 0 ? "was killed" : "failed", now() - t0);
	unlink(path);
	free(path);
	free(buf);
	mkcore_destroy(mc);
}

// 64 GiB of zero-filled memory without VMCOREINFO: the scan is bounded by
// what the dump has, and must still be quick.
TEST(sparse_64g_dump_without_any_vmcoreinfo)
{
	const uint64_t size = 64ULL << 30;
	struct mkcore *mc = mkcore_create();
	mkcore_add_load(mc, 0, 0, NULL, size, size);
	char *path = tmp_path("sparse0");
	if (mkcore_write(mc, path) < 0) {
		static char why[160];
		snprintf(why, sizeof(why), "cannot create a 64 GiB sparse file: %s", strerror(errno));
		unlink(path);
		free(path);
		mkcore_destroy(mc);
		SKIP(why);
	} else {
		double t0 = now();
		int st = run_bounded(open_and_close, path, 5);
		double t = now() - t0;
		if (st != 0 || t > 2.0)
			FAILF("kp_kernel_open of a 64 GiB sparse dump without VMCOREINFO %s after %.1f s",
			      st < 0 ? "was killed" : st ? "failed" : "returned", t);
	}
	unlink(path);
	free(path);
	mkcore_destroy(mc);
}

// ---------------------------------------------------------------- overlaps

TEST(overlapping_segments_first_wins)
{
	static uint8_t a[8192], b[8192];
	memset(a, 0xaa, sizeof(a));
	memset(b, 0xbb, sizeof(b));
	struct mkcore *mc = mkcore_create();
	mkcore_add_vmcoreinfo(mc, "OSRELEASE=6.1.0\nPAGESIZE=4096\n");
	mkcore_add_load(mc, 0xffffffff81000000ULL, 0x1000000, a, sizeof(a), sizeof(a));
	// Overlaps the second half of the first and runs past it.
	mkcore_add_load(mc, 0xffffffff81001000ULL, 0x1001000, b, sizeof(b), sizeof(b));
	// Entirely inside the first.
	mkcore_add_load(mc, 0xffffffff81000800ULL, 0x1000800, b, 16, 16);
	// The same range as the first, many times.
	for (int i = 0; i < 1000; i++)
		mkcore_add_load(mc, 0xffffffff81000000ULL, 0x1000000, b, 64, 64);
	uint8_t *buf;
	size_t len;
	mkcore_to_buffer(mc, 32 << 20, &buf, &len);
	char *path = write_tmp("overlap", buf, len);
	struct kp_kernel *k = NULL;
	CHECK_OK(open_path(path, &k));
	if (k) {
		uint8_t v[16];
		CHECK_OK(kp_read(k, KP_VIRT, 0xffffffff81000800ULL, v, 16));
		CHECK_U64(v[0], 0xaa);
		CHECK_OK(kp_read(k, KP_VIRT, 0xffffffff81001ff8ULL, v, 16));
		CHECK_U64(v[0], 0xaa);
		CHECK_U64(v[8], 0xbb);
		CHECK_OK(kp_read(k, KP_PHYS, 0x1002ff8, v, 8));
		CHECK_U64(v[7], 0xbb);
		const struct kp_range *r;
		size_t n = kp_kernel_ranges(k, KP_VIRT, &r);
		CHECK_U64(n, 1);
		if (n == 1) {
			CHECK_U64(r[0].start, 0xffffffff81000000ULL);
			CHECK_U64(r[0].end, 0xffffffff81003000ULL);
		}
		kp_kernel_destroy(k);
	}
	unlink(path);
	free(path);
	free(buf);
	mkcore_destroy(mc);
}

// ---------------------------------------------------------------- absurd counts

// Patches one header field of an image and expects a quick, clean failure.
static void expect_open_error(const char *what, const uint8_t *img, size_t len,
			      enum kp_error_code code, const char *substr)
{
	char *path = write_tmp("absurd", img, len);
	double t0 = now();
	struct kp_kernel *k = NULL;
	struct kp_error *err = open_path(path, &k);
	double t = now() - t0;
	if (!err) {
		FAILF("%s: kp_kernel_open succeeded, expected %s", what, kp_error_code_name(code));
		kp_kernel_destroy(k);
	} else {
		if ((code && err->code != code) || (substr && !strstr(err->message, substr)))
			FAILF("%s: expected %s containing \"%s\", got %s: %s", what,
			      kp_error_code_name(code), substr ? substr : "",
			      kp_error_code_name(err->code), err->message);
		kp_error_destroy(err);
	}
	if (t > 1.0)
		FAILF("%s: took %.2f s", what, t);
	unlink(path);
	free(path);
}

TEST(absurd_elf_counts)
{
	struct sk_opts so = { .format = SK_ELF, .cpus = 1 };
	uint8_t *img;
	size_t len;
	sk_build(&so, &img, &len);
	uint8_t *c = malloc(len);
	Elf64_Ehdr *eh = (Elf64_Ehdr *)c;

	memcpy(c, img, len);
	eh->e_phnum = 0xfffe;
	expect_open_error("e_phnum 0xfffe", c, len, KP_ERR_FORMAT, "truncated");

	memcpy(c, img, len);
	eh->e_phoff = UINT64_MAX - 8;
	expect_open_error("e_phoff near 2^64", c, len, KP_ERR_FORMAT, NULL);

	// PN_XNUM with section header 0 claiming 4 billion program headers.
	memcpy(c, img, len);
	eh->e_phnum = PN_XNUM;
	eh->e_shoff = 0x100;	// inside the file: any bytes, sh_info patched below
	eh->e_shentsize = sizeof(Elf64_Shdr);
	uint32_t big = 0xffffffffu;
	memcpy(c + 0x100 + offsetof(Elf64_Shdr, sh_info), &big, 4);
	expect_open_error("PN_XNUM 0xffffffff", c, len, KP_ERR_FORMAT, NULL);

	// Program headers: a note segment of 2^40 bytes, a load past EOF.
	memcpy(c, img, len);
	Elf64_Phdr *ph = (Elf64_Phdr *)(c + eh->e_phoff);
	CHECK_U64(ph[0].p_type, PT_NOTE);
	ph[0].p_filesz = 1ULL << 40;
	expect_open_error("PT_NOTE of 2^40 bytes", c, len, KP_ERR_FORMAT, NULL);

	memcpy(c, img, len);
	ph[1].p_offset = UINT64_MAX - 0x1000;
	expect_open_error("PT_LOAD p_offset near 2^64", c, len, KP_ERR_FORMAT, NULL);

	memcpy(c, img, len);
	ph[1].p_paddr = UINT64_MAX - 0x1000;
	ph[1].p_memsz = 0x10000;
	expect_open_error("PT_LOAD wrapping the address space", c, len, KP_ERR_FORMAT, "wraps");

	// A note with namesz/descsz near 2^32.
	memcpy(c, img, len);
	uint32_t huge = 0xfffffff0u;
	memcpy(c + ph[0].p_offset, &huge, 4);
	expect_open_error("note namesz 0xfffffff0", c, len, KP_ERR_FORMAT, "runs past");
	memcpy(c, img, len);
	memcpy(c + ph[0].p_offset + 4, &huge, 4);
	expect_open_error("note descsz 0xfffffff0", c, len, KP_ERR_FORMAT, "runs past");

	free(c);
	free(img);
}

// Rewrites "KEY=VALUE" in the VMCOREINFO note of an image in place (same length
// or shorter, padded with newlines).
static bool patch_vmcoreinfo(uint8_t *img, size_t len, const char *key, const char *value)
{
	uint8_t *p = memmem(img, len, key, strlen(key));
	if (!p)
		return false;
	uint8_t *v = p + strlen(key);
	uint8_t *end = memchr(v, '\n', len - (size_t)(v - img));
	if (!end || (size_t)(end - v) < strlen(value))
		return false;
	memset(v, '\n', (size_t)(end - v));
	memcpy(v, value, strlen(value));
	return true;
}

TEST(absurd_kallsyms_and_btf_bounds)
{
	struct sk_opts so = { .format = SK_ELF };
	uint8_t *img;
	size_t len;
	sk_build(&so, &img, &len);
	uint8_t *c = malloc(len);

	// kallsyms_num_syms = 0xffffffff: the tables would be far larger than memory.
	memcpy(c, img, len);
	uint8_t *vmci = memmem(c, len, "SYMBOL(kallsyms_num_syms)=", 26);
	CHECK(vmci != NULL);
	// The note comes before the memory: the second copy is the RAM page.
	uint64_t num_va = 0;
	if (vmci)
		num_va = strtoull((char *)vmci + 26, NULL, 16);
	// The kernel image starts at the load's file offset; SK_TEXT maps to
	// physical 0.
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)img;
	const Elf64_Phdr *ph = (const Elf64_Phdr *)(img + eh->e_phoff);
	uint64_t mem_off = ph[1].p_offset;
	if (num_va) {
		uint32_t n = 0xffffffffu;
		memcpy(c + mem_off + (num_va - SK_TEXT), &n, 4);
		expect_open_error("kallsyms_num_syms 0xffffffff", c, len, 0, "kallsyms");
	}

	// VMCOREINFO lying about the page tables and the kallsyms tables.
	static const struct { const char *key, *value; } lies[] = {
		{ "SYMBOL(init_top_pgt)=", "ffffffffbffff000" },
		{ "SYMBOL(kallsyms_names)=", "ffffffffffffffff" },
		{ "SYMBOL(kallsyms_token_index)=", "0" },
		{ "NUMBER(phys_base)=", "-1" },
		{ "NUMBER(pgtable_l5_enabled)=", "1" },
	};
	for (size_t i = 0; i < sizeof(lies) / sizeof(lies[0]); i++) {
		memcpy(c, img, len);
		CHECK(patch_vmcoreinfo(c, len, lies[i].key, lies[i].value));
		char *p = write_tmp("vmci", c, len);
		struct kp_kernel *kk = NULL;
		double t0 = now();
		struct kp_error *err = open_path(p, &kk);
		if (!err) {
			struct kp_task *tasks = NULL;
			size_t nt;
			kp_error_destroy(kpt_tasks(kk, false, &tasks, &nt));
			free(tasks);
			kp_kernel_destroy(kk);
		}
		kp_error_destroy(err);
		if (now() - t0 > 1.0)
			FAILF("VMCOREINFO %s%s: took %.2f s", lies[i].key, lies[i].value, now() - t0);
		unlink(p);
		free(p);
	}

	// Truncated BTF: a header claiming a type section past the end.
	memcpy(c, img, len);
	uint8_t *btf = c + mem_off + (SK_BTF - SK_TEXT);
	uint32_t type_len = 0x7fffffff;
	memcpy(btf + 12, &type_len, 4);	// struct btf_header.type_len
	char *path = write_tmp("btf", c, len);
	struct kp_kernel *k = NULL;
	CHECK_OK(open_path(path, &k));
	if (k) {
		struct kp_error *err = kp_kernel_load_btf(k);
		CHECK_ERR(err, KP_ERR_FORMAT, "BTF type section");
		struct kp_value *v = NULL;
		err = kp_eval(k, "init_task.comm", &v);
		CHECK(err != NULL);
		kp_error_destroy(err);
		kp_value_destroy(v);
		kp_kernel_destroy(k);
	}
	unlink(path);
	free(path);
	free(c);
	free(img);
}

TEST(absurd_kdump_counts)
{
	struct sk_opts so = { .format = SK_KDUMP };
	uint8_t *img;
	size_t len;
	sk_build(&so, &img, &len);
	uint8_t *c = malloc(len);
	// struct disk_dump_header (makedumpfile diskdump_mod.h): signature[8],
	// header_version (int, 8), utsname (6 x 65 = 390, 12), timestamp (16,
	// 8-aligned at 408), status (424), block_size (428), sub_hdr_size (432),
	// bitmap_blocks (436), max_mapnr (440), total_ram_blocks, device_blocks,
	// written_blocks, current_cpu, nr_cpus.
	static const struct { size_t off; uint32_t v; const char *what; } patches[] = {
		{ 428, 0x7fffffff, "block_size 2^31" },
		{ 428, 0, "block_size 0" },
		{ 428, 3, "block_size 3" },
		{ 432, 0x7fffffff, "sub_hdr_size 2^31" },
		{ 436, 0x7fffffff, "bitmap_blocks 2^31" },
		{ 440, 0xffffffff, "max_mapnr 2^32" },
	};
	for (size_t i = 0; i < sizeof(patches) / sizeof(patches[0]); i++) {
		memcpy(c, img, len);
		memcpy(c + patches[i].off, &patches[i].v, 4);
		char *path = write_tmp("kdump", c, len);
		double t0 = now();
		struct kp_kernel *k = NULL;
		struct kp_error *err = open_path(path, &k);
		double t = now() - t0;
		if (err) {
			CHECK(err->message && *err->message);
			kp_error_destroy(err);
		} else {
			// Accepted (a field kpeek does not rely on): reads must stay sane.
			uint8_t buf[64];
			kp_error_destroy(kp_read(k, KP_PHYS, 0, buf, sizeof(buf)));
			kp_kernel_destroy(k);
		}
		if (t > 1.0)
			FAILF("%s: took %.2f s", patches[i].what, t);
		unlink(path);
		free(path);
	}
	free(c);
	free(img);
}

// A flattened kdump of tiny records would index to many times its size:
// the record count is bounded by the file size, and a first record that
// writes no KDUMP header stops the open before any indexing.
TEST(flattened_record_flood)
{
	struct sk_opts so = { .format = SK_KDUMP };
	uint8_t *img, *flat;
	size_t len, flen;
	sk_build(&so, &img, &len);
	mkkdump_flatten(img, len, &(struct mkkdump_flat_opts){ .record_max = 1 }, &flat, &flen);
	char *path = write_tmp("flood", flat, flen);
	double t0 = now();
	struct kp_kernel *k = NULL;
	CHECK_ERR(open_path(path, &k), KP_ERR_FORMAT, "records at offset");
	if (now() - t0 > 1.0)
		FAILF("a flood of %zu records took %.2f s to refuse", len, now() - t0);
	unlink(path);
	free(path);
	free(flat);
	// Page-sized records and smaller ones down to 256 bytes are fine.
	mkkdump_flatten(img, len, &(struct mkkdump_flat_opts){ .record_max = 256 }, &flat, &flen);
	path = write_tmp("flood", flat, flen);
	CHECK_OK(open_path(path, &k));
	kp_kernel_destroy(k);
	unlink(path);
	free(path);
	// Not a dump: junk where the header goes.
	memset(flat + 4096 + 16, 'x', 8);
	path = write_tmp("flood", flat, flen);
	CHECK_ERR(open_path(path, &k), KP_ERR_FORMAT,
		  "no KDUMP signature: flattened dump record 0 at offset 0x1000");
	unlink(path);
	free(path);
	free(flat);
	free(img);
}

// ---------------------------------------------------------------- truncation and damage

// Every prefix (at a stride) and a deterministic set of byte flips of each
// synthetic format: open, and when that works, the first things commands do.
static void damage(enum sk_format fmt)
{
	struct sk_opts so = { .format = fmt, .ntasks = 3, .cpus = 1 };
	uint8_t *img;
	size_t len;
	sk_build(&so, &img, &len);
	char *path = tmp_path("damage");
	unsigned opened = 0, tries = 0;
	uint8_t *c = malloc(len);
	uint64_t rng = 0x9e3779b97f4a7c15ULL + fmt;
	for (int round = 0; round < 300; round++) {
		size_t n = len;
		memcpy(c, img, len);
		if (round < 100) {
			// Prefixes: dense in the headers, sparse later.
			n = round < 64 ? (size_t)round * 37 : len * (size_t)(round - 63) / 37;
			if (n > len)
				n = len;
		} else {
			for (int f = 0; f < 4; f++) {
				rng ^= rng << 13;
				rng ^= rng >> 7;
				rng ^= rng << 17;
				// Mostly the first 8 KiB (headers, notes, bitmaps, descriptors).
				size_t at = (rng >> 8) % (f < 3 && len > 8192 ? 8192 : len);
				c[at] ^= (uint8_t)(1u << (rng & 7)) | (f == 3 ? 0xff : 0);
			}
		}
		if (mkcore_write_bytes(path, c, n) < 0)
			abort();
		tries++;
		struct kp_kernel *k = NULL;
		double t0 = now();
		struct kp_error *err = open_path(path, &k);
		if (err) {
			if (!err->message || !*err->message || strchr(err->message, '\n'))
				FAILF("round %d: error message is not one line: \"%s\"", round,
				      err->message ? err->message : "(null)");
			kp_error_destroy(err);
		} else {
			opened++;
			struct kp_task *tasks = NULL;
			size_t nt;
			kp_error_destroy(kpt_tasks(k, true, &tasks, &nt));
			free(tasks);
			struct kp_value *v = NULL;
			if (!(err = kp_eval(k, "init_task.comm", &v))) {
				char *s = NULL;
				kp_error_destroy(kp_value_format(v, 0, &s));
				free(s);
				kp_value_destroy(v);
			}
			kp_error_destroy(err);
			kp_kernel_destroy(k);
		}
		double t = now() - t0;
		if (t > 1.0)
			FAILF("round %d (%zu bytes): took %.2f s", round, n, t);
	}
	CHECK(opened > 0 && opened < tries);
	unlink(path);
	free(path);
	free(c);
	free(img);
}

TEST(damaged_elf_core)
{
	damage(SK_ELF);
}

TEST(damaged_elf_core_without_note)
{
	damage(SK_ELF_NO_NOTE);
}

TEST(damaged_kdump)
{
	damage(SK_KDUMP);
}

TEST(damaged_flattened_kdump)
{
	damage(SK_KDUMP_FLAT);
}

// ---------------------------------------------------------------- not dumps

TEST(not_dumps)
{
	char *path = write_tmp("empty", "", 0);
	struct kp_kernel *k = NULL;
	CHECK_ERR(open_path(path, &k), KP_ERR_FORMAT, "empty");
	unlink(path);
	free(path);
	path = write_tmp("text", "hello world\n", 12);
	CHECK_ERR(open_path(path, &k), KP_ERR_FORMAT, "not an ELF core");
	unlink(path);
	free(path);
	CHECK_ERR(open_path("/", &k), KP_ERR_INVALID, "directory");
	CHECK_ERR(open_path("/nonexistent/kpeek-dump", &k), KP_ERR_NOT_FOUND, "nonexistent");
	// A FIFO is not seekable: the open must fail, not block or misparse.
	char *fifo = tmp_path("fifo");
	unlink(fifo);
	if (mkfifo(fifo, 0600) == 0) {
		// Opening a FIFO for reading blocks until a writer appears; keep
		// one end open so the open returns, with nothing written.
		int wfd = open(fifo, O_RDWR | O_NONBLOCK);
		struct kp_error *err = open_path(fifo, &k);
		CHECK(err != NULL);
		if (err)
			kp_error_destroy(err);
		else
			kp_kernel_destroy(k);
		if (wfd >= 0)
			close(wfd);
		unlink(fifo);
	}
	free(fifo);
}

int main(void)
{
	RUN(task_list_sane);
	RUN(task_list_cycle_not_through_head_is_corrupt);
	RUN(task_list_self_loop_is_corrupt);
	RUN(thread_ring_cycle_is_corrupt);
	RUN(task_list_null_link_is_format_error);
	RUN(sparse_64g_dump_with_note_opens_fast);
	RUN(sparse_64g_dump_without_note_opens_fast);
	RUN(huge_zero_fill_segment_without_vmcoreinfo);
	RUN(sparse_64g_dump_without_any_vmcoreinfo);
	RUN(overlapping_segments_first_wins);
	RUN(absurd_elf_counts);
	RUN(absurd_kallsyms_and_btf_bounds);
	RUN(absurd_kdump_counts);
	RUN(flattened_record_flood);
	RUN(damaged_elf_core);
	RUN(damaged_elf_core_without_note);
	RUN(damaged_kdump);
	RUN(damaged_flattened_kdump);
	RUN(not_dumps);
	return TEST_SUMMARY();
}
