// SPDX-License-Identifier: MIT
// mkkdump: writes a kdump-compressed dump of a raw physical memory image (pfn 0
// at offset 0), e.g. for fuzzing seeds and scripts.
//   mkkdump [-c raw|zlib|lzo|snappy|zstd] [-F] [-q] [-i VMCOREINFO-FILE] [-x PFN] IN OUT
// -F writes the flattened format, -q QEMU's header style (empty utsname, zero
// pages sharing one descriptor), -x leaves page PFN out as makedumpfile -d
// excludes a page (RAM, not in the dump). Trailing bytes short of a page are
// dropped.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <kpeek/kpeek.h>
#include "io/file.h"
#include "../gen/mkcore.h"
#include "../gen/mkkdump.h"

static int usage(void)
{
	fprintf(stderr, "usage: mkkdump [-c raw|zlib|lzo|snappy|zstd] [-F] [-q] "
			"[-i VMCOREINFO-FILE] [-x PFN] IN OUT\n");
	return 2;
}

int main(int argc, char **argv)
{
	static const char *const names[] = {"raw", "zlib", "lzo", "snappy", "zstd"};
	struct mkkdump_opts o = {.comp = MKK_ZLIB, .dump_level = 1};
	bool flat = false;
	char *vmcoreinfo = NULL;
	long excluded = -1;
	int c;
	while ((c = getopt(argc, argv, "c:Fqi:x:")) != -1) {
		switch (c) {
		case 'c': {
			int i = 0;
			while (i < 5 && strcmp(optarg, names[i]) != 0)
				i++;
			if (i == 5)
				return usage();
			o.comp = (enum mkkdump_comp)i;
			break;
		}
		case 'F':
			flat = true;
			break;
		case 'q':
			o.qemu_utsname = o.share_zero_pages = true;
			break;
		case 'i': {
			size_t len;
			struct kp_error *err = kp_read_whole_file(optarg, &vmcoreinfo, &len);
			if (err) {
				fprintf(stderr, "mkkdump: %s\n", kp_error_message(err));
				return 1;
			}
			o.vmcoreinfo = vmcoreinfo;
			break;
		}
		case 'x':
			excluded = strtol(optarg, NULL, 0);
			break;
		default:
			return usage();
		}
	}
	if (argc - optind != 2)
		return usage();
	char *mem;
	size_t len;
	struct kp_error *err = kp_read_whole_file(argv[optind], &mem, &len);
	if (err) {
		fprintf(stderr, "mkkdump: %s\n", kp_error_message(err));
		return 1;
	}
	o.mem = (const uint8_t *)mem;
	o.npages = len / 4096;
	uint8_t *state = NULL;
	if (excluded >= 0 && (size_t)excluded < o.npages) {
		if (!(state = calloc(o.npages, 1)))
			return 1;
		state[excluded] = MKK_EXCLUDED;
		o.state = state;
		o.dump_level = 31;
	}
	uint8_t *img;
	size_t ilen;
	mkkdump_build(&o, &img, &ilen, NULL);
	if (flat) {
		uint8_t *f;
		size_t flen;
		struct mkkdump_flat_opts fo = {0};
		mkkdump_flatten(img, ilen, &fo, &f, &flen);
		free(img);
		img = f;
		ilen = flen;
	}
	if (mkcore_write_bytes(argv[optind + 1], img, ilen) < 0) {
		perror(argv[optind + 1]);
		return 1;
	}
	free(img);
	free(mem);
	free(state);
	free(vmcoreinfo);
	return 0;
}
