// SPDX-License-Identifier: MIT
// The SLUB freelist decoder (linux/mm/slab_object.c kp_lx_slab_free_map)
// over hostile slabs: the synthetic kernel's system (tests/gen/synthsys.h)
// with the input as its free page (SKS_FREE, a slab through the direct
// map), decoded with a cache geometry the input chooses.
//
// Input: 24 bytes of geometry (slot size, left red zone, freelist offset,
// objects: 2 bytes each; flags: bit 0 hardened; 7 spare; random: 8 bytes),
// the freelist head's offset in the page + 1 (2 bytes; 0: an empty
// freelist), then the page's bytes.
#include <elf.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "synthkernel.h"
#include "synthsys.h"
#include "linux/mm/mm.h"

#define HDR 26

static const struct sk_opts form = { .format = SK_ELF, .ntasks = 12, .procs = SK_PROCS_LIST, .sys = SK_SYS_NEW };
static uint8_t *image;
static size_t image_len, page_off;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc, (void)argv;
	sk_build(&form, &image, &image_len);
	Elf64_Ehdr eh;
	memcpy(&eh, image, sizeof(eh));
	for (unsigned i = 0; i < eh.e_phnum; i++) {
		Elf64_Phdr ph;
		memcpy(&ph, image + eh.e_phoff + i * sizeof(ph), sizeof(ph));
		if (ph.p_type == PT_LOAD && SKS_FREE >= ph.p_paddr && SKS_FREE + 4096 <= ph.p_paddr + ph.p_filesz)
			page_off = ph.p_offset + (SKS_FREE - ph.p_paddr);
	}
	if (!page_off)
		sk_die("the free page is not in the dump");
	return 0;
}

static uint64_t le(const uint8_t *p, unsigned n)
{
	uint64_t v = 0;
	for (unsigned i = 0; i < n; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < HDR || size > HDR + 4096)
		return 0;
	struct kp_lx_slab_cache c = { .cache = 1, .size = le(data, 2), .red_left = le(data + 2, 2),
				      .offset = le(data + 4, 2), .hardened = data[8] & 1, .random = le(data + 16, 8) };
	uint64_t objects = le(data + 6, 2) & 0x7fff, head = le(data + 24, 2);
	// The geometry kp_lx_slab_cache_read() lets through.
	if (!c.size || c.red_left >= c.size || c.offset + 8 > c.size || !objects)
		return 0;
	uint8_t *img = malloc(image_len), *map = calloc(objects, 1);
	if (!img || !map) {
		free(img);
		free(map);
		return 0;
	}
	memcpy(img, image, image_len);
	memcpy(img + page_off, data + HDR, size - HDR);
	char path[64];
	int fd = fuzz_memfd(img, image_len, path);
	free(img);
	if (fd >= 0) {
		KP_OPTS(kp_open_options, opts, .core = path);
		struct kp_kernel *k;
		uint64_t base = SKP_VA(SKS_FREE);
		if (fuzz_ok(kp_kernel_open(&opts, &k))) {
			fuzz_drop(kp_lx_slab_free_map(k, &c, 0x1234, base, objects, head ? base + head - 1 : 0, map));
			kp_kernel_destroy(k);
		}
		close(fd);
	}
	free(map);
	return 0;
}
