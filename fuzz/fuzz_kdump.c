// kdump-compressed and flattened headers, bitmaps, descriptors and pages.
#include "fuzz.h"
#include "io/file.h"
#include "io/memory.h"
#include "format/source.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[64];
	int fd = fuzz_memfd(data, size, path);
	if (fd < 0)
		return 0;
	struct kp_file *file = NULL;
	struct kp_memory *mem = NULL;
	struct kp_source src = { 0 };
	if (kp_file_open(path, &file) || kp_memory_create(&mem))
		goto out;
	if (!kp_kdump_ops.probe(data, size))
		goto out;
	struct kp_error *err = kp_kdump_ops.open(file, mem, &src);
	if (!err) {
		const struct kp_range *r;
		size_t n = kp_memory_ranges(mem, KP_PHYS, &r);
		for (size_t i = 0; i < n && i < 64; i++) {
			uint8_t buf[8192];
			kp_error_destroy(kp_memory_read(mem, KP_PHYS, r[i].start, buf, sizeof(buf)));
		}
	}
	kp_error_destroy(err);
	kp_source_deinit(&src);
out:
	kp_memory_destroy(mem);
	kp_file_destroy(file);
	close(fd);
	return 0;
}
