// SPDX-License-Identifier: MIT
// Raw physical memory images (--raw[=BASE]): the file at a base address,
// bounds (base past 52 bits, empty files), and kp_kernel_open with raw = true
// finding the kernel in the image; without raw the file is not probed as one.
#include <stdlib.h>
#include <unistd.h>

#include "test.h"
#include "io/file.h"
#include "format/source.h"
#include "../gen/mkcore.h"

static char *write_tmp(const void *buf, size_t len)
{
	char *p = strdup("/tmp/kp_test_raw_XXXXXX");
	int fd = mkstemp(p);
	if (fd < 0)
		abort();
	close(fd);
	if (mkcore_write_bytes(p, buf, len) < 0)
		abort();
	return p;
}

static struct kp_error *raw_open(const char *path, uint64_t base, struct kp_memory **mem_ret,
				 struct kp_file **file_ret, struct kp_source *src)
{
	struct kp_file *file;
	struct kp_error *err = kp_file_open(path, &file);
	if (err)
		return err;
	struct kp_memory *mem;
	err = kp_memory_create(&mem);
	if (!err)
		err = kp_raw_open(file, base, mem, src);
	if (err) {
		kp_memory_destroy(mem);
		kp_file_destroy(file);
		return err;
	}
	*mem_ret = mem;
	*file_ret = file;
	return NULL;
}

TEST(base_and_reads)
{
	static uint8_t m[0x5000];
	for (size_t i = 0; i < sizeof(m); i++)
		m[i] = (uint8_t)(i * 31 + 1);
	char *path = write_tmp(m, sizeof(m));
	uint64_t bases[] = {0, 0x100000, 0x123};
	for (size_t b = 0; b < 3; b++) {
		struct kp_memory *mem = NULL;
		struct kp_file *file = NULL;
		struct kp_source src = {0};
		CHECK_OK(raw_open(path, bases[b], &mem, &file, &src));
		if (!mem)
			continue;
		CHECK_STR(src.kind, "raw physical memory");
		const struct kp_range *r;
		CHECK_U64(kp_memory_ranges(mem, KP_PHYS, &r), 1);
		CHECK_U64(r[0].start, bases[b]);
		CHECK_U64(r[0].end, bases[b] + sizeof(m));
		uint8_t buf[0x100];
		CHECK_OK(kp_memory_read(mem, KP_PHYS, bases[b] + 0x4f00, buf, 0x100));
		CHECK(memcmp(buf, m + 0x4f00, 0x100) == 0);
		CHECK_ERR(kp_memory_read(mem, KP_PHYS, bases[b] + 0x4f00, buf, 0x101),
			  KP_ERR_FAULT, "");
		kp_source_deinit(&src);
		kp_memory_destroy(mem);
		kp_file_destroy(file);
	}
	unlink(path);
	free(path);
}

TEST(bounds)
{
	static uint8_t m[0x1000];
	char *path = write_tmp(m, sizeof(m));
	struct kp_memory *mem;
	struct kp_file *file;
	struct kp_source src;
	CHECK_ERR(raw_open(path, UINT64_MAX - 0x10, &mem, &file, &src), KP_ERR_INVALID,
		  "physical address space");
	CHECK_ERR(raw_open(path, (1ULL << 52) - 0x800, &mem, &file, &src), KP_ERR_INVALID,
		  "base 0xffffffffff800");
	unlink(path);
	free(path);
	path = write_tmp(m, 0);
	CHECK_ERR(raw_open(path, 0, &mem, &file, &src), KP_ERR_UNSUPPORTED, "non-empty");
	unlink(path);
	free(path);
}

TEST(kernel_open_raw)
{
	static uint8_t m[0x8000];
	static const char vmci[] = "OSRELEASE=6.1.0-raw\nPAGESIZE=4096\n"
				   "SYMBOL(swapper_pg_dir)=ffffffff82000000\n"
				   "SYMBOL(init_top_pgt)=ffffffff82000000\n"
				   "KERNELOFFSET=0\n";
	memcpy(m + 0x2000, vmci, sizeof(vmci));
	char *path = write_tmp(m, sizeof(m));
	KP_OPTS(kp_open_options, opts, .core = path, .raw = true, .raw_base = 0x1000000);
	struct kp_kernel *k = NULL;
	CHECK_OK(kp_kernel_open(&opts, &k));
	if (k) {
		KP_INIT(kp_kernel_info, info);
		kp_kernel_get_info(k, &info);
		CHECK_STR(info.source_kind, "raw physical memory");
		CHECK_STR(info.release, "6.1.0-raw");
		CHECK_STR(info.vmcoreinfo_source, "found in memory at phys 0x1002000");
		kp_kernel_destroy(k);
	}
	// Not probed without --raw.
	opts.raw = false;
	k = NULL;
	CHECK_ERR(kp_kernel_open(&opts, &k), KP_ERR_FORMAT, "not an ELF core");
	unlink(path);
	free(path);
}

int main(void)
{
	RUN(base_and_reads);
	RUN(bounds);
	RUN(kernel_open_raw);
	return TEST_SUMMARY();
}
