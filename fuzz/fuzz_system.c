// SPDX-License-Identifier: MIT
// The system walkers over hostile memory: the synthetic kernel with its
// system (tests/gen/synthsys.h: run queues, memory counters, slab caches,
// network namespaces, interfaces and sockets, IRQs), its bytes rewritten by
// the input, then the run queue, meminfo, slab, interface, socket and IRQ
// walkers, and whatis of a per-CPU variable, a per-CPU area past its static
// variables, a slab object and a task (virtual and physical).
//
// Input: one byte of flags (bit 0: the older kernel generation, struct page,
// unsigned int kstat_irqs, the irq_desc array...), then records of [page,
// offset low, offset high, length, bytes...] that write the bytes at that
// offset (12 bits) of one of the pages the walkers read: the data page
// (init_task) and the system's 16 pages (tasks, per-CPU areas, task groups,
// globals, unix table, slab, network, sockets, files, IRQs, names). A
// record stops at the end of its page; a short last record writes what
// there is.
#include <elf.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "synthkernel.h"
#include "synthsys.h"

#define NPAGES 17

static const struct sk_opts forms[2] = {
	{ .format = SK_ELF, .ntasks = 12, .procs = SK_PROCS_LIST, .sys = SK_SYS_NEW },
	{ .format = SK_ELF, .ntasks = 12, .procs = SK_PROCS_LIST, .sys = SK_SYS_OLD },
};
static uint8_t *image[2];
static size_t image_len[2];
static size_t page_off[2][NPAGES];	// file offset of each page the input may write

static uint64_t page_pa(unsigned i)
{
	return i == 0 ? 0x1000 : SKS_TASKS + 0x1000 * (uint64_t)(i - 1);
}

// The offset in the ELF dump of physical address pa (the whole page must be
// in one PT_LOAD).
static size_t file_offset(const uint8_t *img, size_t len, uint64_t pa)
{
	Elf64_Ehdr eh;
	memcpy(&eh, img, sizeof(eh));
	for (unsigned i = 0; i < eh.e_phnum; i++) {
		Elf64_Phdr ph;
		memcpy(&ph, img + eh.e_phoff + i * sizeof(ph), sizeof(ph));
		if (ph.p_type == PT_LOAD && pa >= ph.p_paddr && pa + 4096 <= ph.p_paddr + ph.p_filesz &&
		    ph.p_offset + (pa - ph.p_paddr) + 4096 <= len)
			return ph.p_offset + (pa - ph.p_paddr);
	}
	sk_die("a page of the system is not in the dump");
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc, (void)argv;
	for (int f = 0; f < 2; f++) {
		sk_build(&forms[f], &image[f], &image_len[f]);
		for (unsigned i = 0; i < NPAGES; i++)
			page_off[f][i] = file_offset(image[f], image_len[f], page_pa(i));
	}
	return 0;
}

// Walks an iterator to its end, or to 4096 items (each walker is bounded
// on its own; this keeps one input quick).
#define DRAIN(iter, create, next, destroy, type)                               \
	do {                                                                   \
		struct iter *it_;                                              \
		if (fuzz_ok(create)) {                                         \
			const struct type *x_;                                 \
			for (int i_ = 0; i_ < 4096 && fuzz_ok(next(it_, &x_)) && x_; i_++) \
				;                                              \
			destroy(it_);                                          \
		}                                                              \
	} while (0)

static void exercise(struct kp_kernel *k)
{
	if (!fuzz_ok(kp_kernel_load_btf(k)))
		return;
	DRAIN(kp_runq_iter, kp_runq_iter_create(k, &it_), kp_runq_iter_next, kp_runq_iter_destroy, kp_rq);
	struct kp_meminfo *mi;
	if (fuzz_ok(kp_meminfo_create(k, &mi)))
		kp_meminfo_destroy(mi);
	DRAIN(kp_slab_iter, kp_slab_iter_create(k, &it_), kp_slab_iter_next, kp_slab_iter_destroy, kp_slab_cache);
	DRAIN(kp_netdev_iter, kp_netdev_iter_create(k, &it_), kp_netdev_iter_next, kp_netdev_iter_destroy,
	      kp_netdev);
	DRAIN(kp_socket_iter, kp_socket_iter_create(k, &it_), kp_socket_iter_next, kp_socket_iter_destroy,
	      kp_socket);
	DRAIN(kp_irq_iter, kp_irq_iter_create(k, &it_), kp_irq_iter_next, kp_irq_iter_destroy, kp_irq);
	static const uint64_t at[] = { SKS_RQ(1) + 8, SKS_PCPU(0) + SKS_PC_END + 0x10, SKS_SLAB + 0x40,
				       SKS_TASKS + 0x10 };
	for (size_t i = 0; i < sizeof(at) / sizeof(at[0]); i++) {
		struct kp_whatis *w;
		if (fuzz_ok(kp_whatis_create(k, i & 1 ? KP_PHYS : KP_VIRT, i & 1 ? at[i] : SKP_VA(at[i]), &w)))
			kp_whatis_destroy(w);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1 || size > 65536)
		return 0;
	int f = data[0] & 1;
	uint8_t *img = malloc(image_len[f]);
	if (!img)
		return 0;
	memcpy(img, image[f], image_len[f]);
	for (size_t at = 1; at + 4 <= size;) {
		unsigned page = data[at] % NPAGES, off = (data[at + 1] | data[at + 2] << 8) & 0xfff;
		size_t len = data[at + 3];
		at += 4;
		if (len > size - at)
			len = size - at;
		if (len > 4096 - off)
			len = 4096 - off;
		memcpy(img + page_off[f][page] + off, data + at, len);
		at += len;
	}
	char path[64];
	int fd = fuzz_memfd(img, image_len[f], path);
	free(img);
	if (fd < 0)
		return 0;
	KP_OPTS(kp_open_options, opts, .core = path);
	struct kp_kernel *k;
	if (fuzz_ok(kp_kernel_open(&opts, &k))) {
		exercise(k);
		kp_kernel_destroy(k);
	}
	close(fd);
	return 0;
}
