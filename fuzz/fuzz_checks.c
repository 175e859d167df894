// SPDX-License-Identifier: MIT
// What kpeek check parses without BTF: the xarray walker (the PID and BPF
// IDRs) over fuzzed memory, with both node sizes the kernel builds, and
// the architectures' decoders of a function's first branch and of an
// interrupt gate over fuzzed bytes. The whole checks run on fuzzed dumps
// in fuzz_kernel_open.
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "arch/arch.h"
#include "core/kernel.h"
#include "io/memory.h"
#include "linux/lib/xarray.h"
#include "symbols/symtab.h"

#define BASE 0xffff888000000000ULL

static struct kp_error *count(uint64_t index, uint64_t entry, void *arg)
{
	(void)index, (void)entry;
	(*(size_t *)arg)++;
	return NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct kp_branch b;
	uint64_t h;
	for (const struct kp_arch *const *a = kp_arches; *a; a++) {
		if ((*a)->entry_branch)
			(void)(*a)->entry_branch(data, size < 32 ? size : 32, 0xffffffff81000000ULL, &b);
		if ((*a)->vector_handler && size >= (*a)->vector_size)
			(void)(*a)->vector_handler(data, &h);
	}
	// Memory: the input at BASE; the xarray at BASE, its nodes anywhere in it.
	struct kp_memory *m;
	struct kp_symtab *st;
	struct kp_kernel *k;
	if (size < 16 || kp_memory_create(&m))
		return 0;
	if (kp_memory_add(m, KP_VIRT, BASE, size, kp_read_buffer, (void *)data, 0) ||
	    kp_symtab_create(&st)) {
		kp_memory_destroy(m);
		return 0;
	}
	if (kp_kernel_from_parts(m, st, &kp_arch_x86_64, NULL, &k))
		return 0;
	static const struct kp_lx_xa_layout layouts[] = {
		{ .xa_head = 8, .node_shift = 0, .node_slots = 0x28, .chunk = 64 },
		{ .xa_head = 8, .node_shift = 0, .node_slots = 0x28, .chunk = 16 },
	};
	for (size_t i = 0; i < 2; i++) {
		size_t n = 0;
		fuzz_drop(kp_lx_xa_walk(k, &layouts[i], BASE, count, &n));
	}
	kp_kernel_destroy(k);
	return 0;
}
