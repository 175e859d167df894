// SPDX-License-Identifier: MIT
// The process walkers over hostile memory: the synthetic kernel with
// processes (tests/gen/synthprocs.h: user page tables, argument areas,
// maple trees of VMAs, fd tables, mounts on a list or in an rbtree,
// credentials), its bytes rewritten by the input, then user memory reads,
// cmdline and environ, the VMA, fd and mount iterators, the status of each
// task, check creds, and the maple tree and rbtree walkers themselves.
//
// Input: one byte of flags (bit 0: the mounts in an rbtree, 6.8+), then
// records of [page, offset low, offset high, length, bytes...] that write
// the bytes at that offset (12 bits) of one of the pages the walkers read:
// the data page (init_task, init_cred, the [vdso] mapping), the tasks'
// page, and the 32 pages of the processes. A record stops at the end of its
// page (the bytes after that start the next record); a short last record
// writes what there is.
#include <elf.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "synthkernel.h"
#include "synthprocs.h"
#include "linux/lib/maple.h"
#include "linux/lib/rbtree.h"

#define NPAGES 34

static const struct sk_opts forms[2] = {
	{ .format = SK_ELF, .ntasks = 3, .procs = SK_PROCS_LIST },
	{ .format = SK_ELF, .ntasks = 3, .procs = SK_PROCS_RBTREE },
};
static uint8_t *image[2];
static size_t image_len[2];
static size_t page_off[2][NPAGES];	// file offset of each page the input may write

static uint64_t page_pa(unsigned i)
{
	return i < 2 ? 0x1000 * (uint64_t)(i + 1) : SKP_MM(0) + 0x1000 * (uint64_t)(i - 2);
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
	sk_die("a page of the processes is not in the dump");
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

static struct kp_error *count_entry(uint64_t first, uint64_t last, uint64_t entry, void *arg)
{
	(void)first, (void)last, (void)entry;
	(*(size_t *)arg)++;
	return NULL;
}

static struct kp_error *count_node(uint64_t node, void *arg)
{
	(void)node;
	(*(size_t *)arg)++;
	return NULL;
}

static void task(struct kp_kernel *k, uint64_t t)
{
	static const uint64_t at[] = { SKP_U_TEXT, SKP_ARG_START, SKP_U_PAGE_B - 8, SKP_U_NEVER - 8,
				       SKP_U_SWAPPED, SKP_U_HUGE + SKP_HUGE_MARK };
	struct kp_user *u;
	if (fuzz_ok(kp_user_create(k, t, &u))) {
		uint8_t buf[64];
		for (size_t i = 0; i < sizeof(at) / sizeof(at[0]); i++)
			fuzz_drop(kp_user_read(u, at[i], buf, sizeof(buf)));
		kp_user_destroy(u);
	}
	char *s;
	size_t n;
	if (fuzz_ok(kp_task_cmdline(k, t, &s, &n)))
		free(s);
	if (fuzz_ok(kp_task_environ(k, t, &s, &n)))
		free(s);
	DRAIN(kp_vma_iter, kp_vma_iter_create(k, t, &it_), kp_vma_iter_next, kp_vma_iter_destroy, kp_vma);
	DRAIN(kp_fd_iter, kp_fd_iter_create(k, t, &it_), kp_fd_iter_next, kp_fd_iter_destroy, kp_fd);
	struct kp_task_status *st;
	if (fuzz_ok(kp_task_status_create(k, t, &st)))
		kp_task_status_destroy(st);
	struct kp_task_mem mem;
	fuzz_drop(kp_task_mem(k, t, &mem));
}

static void exercise(struct kp_kernel *k, const struct sk_opts *o)
{
	if (!fuzz_ok(kp_kernel_load_btf(k)))
		return;
	for (unsigned i = 0; i <= o->ntasks; i++)
		task(k, sk_task_va(o, i));
	DRAIN(kp_mount_iter, kp_mount_iter_create(k, 0, &it_), kp_mount_iter_next, kp_mount_iter_destroy,
	      kp_mount);
	DRAIN(kp_mount_iter, kp_mount_iter_create(k, sk_task_va(o, 2), &it_), kp_mount_iter_next,
	      kp_mount_iter_destroy, kp_mount);
	struct kp_check *c;
	if (fuzz_ok(kp_check_run(k, "creds", KP_CHECK_ALL, &c)))
		kp_check_destroy(c);
	size_t n = 0;
	for (unsigned mm = 0; mm < 2; mm++)
		fuzz_drop(kp_lx_mt_walk(k, SKP_VA(SKP_MM(mm) + SKP_MM_MT), 1u << 20, count_entry, &n));
	fuzz_drop(kp_lx_rb_walk(k, SKP_VA(SKP_MNT_NS), 1u << 20, count_node, &n));
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
		exercise(k, &forms[f]);
		kp_kernel_destroy(k);
	}
	close(fd);
	return 0;
}
