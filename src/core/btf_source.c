// Where a kernel's BTF comes from: a --btf file, /sys/kernel/btf/vmlinux of
// the live kernel, or the kernel's own .BTF section (__start_BTF ..
// __stop_BTF, CONFIG_DEBUG_INFO_BTF, 5.2+) read out of its memory.
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/btf.h>

#include "core/btf_source.h"
#include "io/memory.h"
#include "symbols/symtab.h"
#include "types/btf_load.h"
#include "types/types.h"
#include "util/error.h"

#define LIVE_BTF "/sys/kernel/btf/vmlinux"

static struct kp_error *from_memory(struct kp_memory *mem, struct kp_symtab *st,
				    uint64_t *start_ret, size_t *size_ret, struct btf **ret)
{
	struct kp_symbol start, stop;
	if (!st || !kp_symtab_find(st, "__start_BTF", &start) ||
	    !kp_symtab_find(st, "__stop_BTF", &stop))
		return kp_error_create(KP_ERR_NOT_FOUND,
				       "no BTF: symbols __start_BTF/__stop_BTF not found; pass --btf FILE");
	if (stop.address <= start.address || stop.address - start.address > KP_BTF_MAX_SIZE)
		return kp_error_create(KP_ERR_FORMAT,
				       "no BTF: bad .BTF bounds __start_BTF=0x%" PRIx64
				       " __stop_BTF=0x%" PRIx64 "; pass --btf FILE",
				       start.address, stop.address);
	size_t size = stop.address - start.address;
	void *buf = malloc(size);
	if (!buf)
		return &kp_enomem;
	struct kp_error *err = kp_memory_read(mem, KP_VIRT, start.address, buf, size);
	if (err) {
		free(buf);
		return kp_error_prefix(err, "no BTF: reading .BTF at 0x%" PRIx64 " (%zu bytes) "
				       "(pass --btf FILE)", start.address, size);
	}
	char where[128];
	snprintf(where, sizeof(where), ".BTF in memory at 0x%" PRIx64, start.address);
	err = kp_btf_from_blob(buf, size, where, ret);
	free(buf);
	if (!err) {
		*start_ret = start.address;
		*size_ret = size;
	}
	return err;
}

struct kp_error *kp_btf_source_load(struct kp_memory *mem, struct kp_symtab *st, bool live,
				    const char *btf_path, struct kp_types **ret)
{
	struct btf *btf = NULL;
	char source[256];
	struct kp_error *err;
	if (btf_path) {
		if ((err = kp_btf_from_file(btf_path, &btf)))
			return err;
		snprintf(source, sizeof(source), "%s", btf_path);
	} else {
		struct kp_error *live_err = NULL;
		if (live) {
			live_err = kp_btf_from_file(LIVE_BTF, &btf);
			if (!live_err)
				snprintf(source, sizeof(source), "%s", LIVE_BTF);
		}
		if (!btf) {
			uint64_t start = 0;
			size_t size = 0;
			err = from_memory(mem, st, &start, &size, &btf);
			if (err) {
				if (live_err) {
					err = kp_error_prefix(err, "%s", kp_error_message(live_err));
					kp_error_destroy(live_err);
				}
				return err;
			}
			kp_error_destroy(live_err);
			snprintf(source, sizeof(source), ".BTF in memory (0x%" PRIx64 ", %.1f MB)",
				 start, size / 1e6);
		}
	}
	return kp_types_create(btf, source, ret);
}
