// SPDX-License-Identifier: MIT
// A hand-built struct kp_kernel for BTF, value and expression tests: one
// buffer-backed virtual segment, a symbol table and test BTF (see mkbtf.h).
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/btf.h>

#include "arch/arch.h"
#include "core/kernel.h"
#include "io/memory.h"
#include "symbols/symtab.h"
#include "types/types.h"
#include "mkbtf.h"

// The test's side of a synthetic kernel: its memory buffer and BTF file,
// found from the kernel handle (tests make a handful at a time).
struct mkk {
	struct kp_kernel *k;
	uint8_t *buf;
	char *btf_file;
	struct mkk *next;
};

static struct mkk *all;

static struct mkk *find(struct kp_kernel *k)
{
	for (struct mkk *m = all; m; m = m->next)
		if (m->k == k)
			return m;
	abort();
}

static void must_ok(struct kp_error *err, const char *what)
{
	if (err) {
		fprintf(stderr, "mkk: %s: %s\n", what, kp_error_message(err));
		abort();
	}
}

struct kp_kernel *mkk_create(enum mkk_btf mode, const void *blob, size_t size)
{
	struct mkk *m = calloc(1, sizeof(*m));
	if (!m)
		abort();
	m->buf = calloc(1, MKK_SIZE);
	if (!m->buf)
		abort();
	struct kp_memory *mem;
	struct kp_symtab *st;
	must_ok(kp_memory_create(&mem), "memory");
	must_ok(kp_memory_add(mem, KP_VIRT, MKK_BASE, MKK_SIZE, kp_read_buffer, m->buf, 0),
		"segment");
	must_ok(kp_symtab_create(&st), "symtab");
	void *own = NULL;
	if (!blob && mode != MKK_BTF_NONE && mode != MKK_BTF_PATH) {
		own = mkbtf_build(&size);
		blob = own;
	}
	const char *path = NULL;
	if (mode == MKK_BTF_FILE)
		path = m->btf_file = mkbtf_write_tmp(blob, size);
	else if (mode == MKK_BTF_PATH)
		path = blob;
	must_ok(kp_kernel_from_parts(mem, st, &kp_arch_x86_64, path, &m->k), "kernel");
	m->next = all;
	all = m;
	if (mode == MKK_BTF_MEMORY || mode == MKK_BTF_UNNAMED) {
		if (size > MKK_SIZE - MKK_BTF_OFF)
			abort();
		memcpy(m->buf + MKK_BTF_OFF, blob, size);
	}
	if (mode == MKK_BTF_MEMORY) {
		mkk_symbol(m->k, "__start_BTF", MKK_BASE + MKK_BTF_OFF, 'R');
		mkk_symbol(m->k, "__stop_BTF", MKK_BASE + MKK_BTF_OFF + size, 'R');
	}
	free(own);
	return m->k;
}

void mkk_destroy(struct kp_kernel *k)
{
	if (!k)
		return;
	struct mkk *m = find(k), **pp;
	for (pp = &all; *pp != m; pp = &(*pp)->next)
		;
	*pp = m->next;
	kp_kernel_destroy(k);
	if (m->btf_file) {
		unlink(m->btf_file);
		free(m->btf_file);
	}
	free(m->buf);
	free(m);
}

struct kp_types *mkk_types(struct kp_kernel *k)
{
	struct kp_types *types;
	must_ok(kp_kernel_types(k, &types), "types");
	return types;
}

struct btf *mkk_btf(struct kp_kernel *k)
{
	return kp_types_btf(mkk_types(k));
}

const char *mkk_btf_path(struct kp_kernel *k)
{
	return find(k)->btf_file;
}

uint8_t *mkk_mem(struct kp_kernel *k)
{
	return find(k)->buf;
}

void mkk_symbol(struct kp_kernel *k, const char *name, uint64_t address, char type)
{
	must_ok(kp_symtab_add(kp_kernel_symtab(k), name, strlen(name), address, type, NULL), name);
}

void mkk_put(struct kp_kernel *k, uint64_t address, const void *bytes, size_t len)
{
	if (address < MKK_BASE || address - MKK_BASE + len > MKK_SIZE)
		abort();
	memcpy(mkk_mem(k) + (address - MKK_BASE), bytes, len);
}

void mkk_put_u64(struct kp_kernel *k, uint64_t address, uint64_t v)
{
	mkk_put(k, address, &v, 8);
}

void mkk_put_u32(struct kp_kernel *k, uint64_t address, uint32_t v)
{
	mkk_put(k, address, &v, 4);
}

static void put_task(struct kp_kernel *k, uint64_t t, int pid, const char *comm,
		     uint64_t next, uint64_t prev, uint64_t parent)
{
	mkk_put_u32(k, t + 0, 1);			// __state
	mkk_put_u32(k, t + 4, 0xfffffffe);		// a_int = -2
	mkk_put_u64(k, t + 8, next);			// tasks.next
	mkk_put_u64(k, t + 16, prev);			// tasks.prev
	mkk_put_u32(k, t + 24, (uint32_t)pid);		// pid
	mkk_put_u32(k, t + 28, (uint32_t)pid);		// tgid
	mkk_put(k, t + 32, comm, strlen(comm));		// comm
	// flag_a = 1, flag_b = 5, neg = -3: bits 0, 1-3, 4-7 of byte 48.
	uint8_t bits = 1 | (5 << 1) | (0xd << 4);
	mkk_put(k, t + 48, &bits, 1);
	mkk_put_u64(k, t + 56, parent);			// parent
	mkk_put_u32(k, t + 64, 64);			// state = TASK_DEAD
	uint8_t on = 1;
	mkk_put(k, t + 68, &on, 1);			// on_cpu
	mkk_put_u64(k, t + 72, 1234567);		// utime
	mkk_put_u32(k, t + 80, 7);			// x
	mkk_put_u32(k, t + 84, (uint32_t)-8);		// y
	mkk_put_u64(k, t + 88, MKK_DO_THING);		// fn
	mkk_put_u64(k, t + 96, MKK_BANNER);		// name
}

struct kp_kernel *mkk_scene(void)
{
	return mkk_scene_btf(NULL, 0);
}

struct kp_kernel *mkk_scene_btf(const void *blob, size_t size)
{
	struct kp_kernel *k = mkk_create(MKK_BTF_FILE, blob, size);
	put_task(k, MKK_INIT_TASK, 0, "swapper/0", MKK_OTHER_TASK + 8, MKK_OTHER_TASK + 8,
		 MKK_INIT_TASK);
	put_task(k, MKK_OTHER_TASK, 1, "init", MKK_INIT_TASK + 8, MKK_INIT_TASK + 8,
		 MKK_INIT_TASK);
	mkk_symbol(k, "init_task", MKK_INIT_TASK, 'D');
	mkk_symbol(k, "other_task", MKK_OTHER_TASK, 'd');
	mkk_put_u64(k, MKK_JIFFIES, 4294967296ULL + 5);
	mkk_symbol(k, "jiffies", MKK_JIFFIES, 'D');
	mkk_put_u64(k, MKK_AVENRUN, 1);
	mkk_put_u64(k, MKK_AVENRUN + 8, 2);
	mkk_symbol(k, "avenrun", MKK_AVENRUN, 'D');
	const char *banner = "Linux version 6.1.0-test\n";
	mkk_put(k, MKK_BANNER, banner, strlen(banner) + 1);
	mkk_symbol(k, "linux_banner", MKK_BANNER, 'R');
	mkk_symbol(k, "banner_end", MKK_BANNER + 0x40, 'R');
	mkk_put_u64(k, MKK_GLOBAL, (uint64_t)-5);
	mkk_symbol(k, "global_counter", MKK_GLOBAL, 'D');
	mkk_put_u64(k, MKK_MYSTERY, 0x1122334455667788ULL);
	mkk_symbol(k, "mystery", MKK_MYSTERY, 'd');
	mkk_put_u64(k, MKK_PERCPU_OFFSET, MKK_PERCPU_AREA);
	mkk_symbol(k, "__per_cpu_offset", MKK_PERCPU_OFFSET, 'D');
	mkk_put_u32(k, MKK_PERCPU_AREA + MKK_RUNQUEUE_CNT, 42);
	mkk_symbol(k, "runqueue_cnt", MKK_RUNQUEUE_CNT, 'D');
	mkk_symbol(k, "do_thing", MKK_DO_THING, 'T');
	mkk_symbol(k, "schedule", MKK_SCHEDULE, 'T');
	mkk_symbol(k, "_etext", MKK_SCHEDULE + 0x100, 'T');
	return k;
}
