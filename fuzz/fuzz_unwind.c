// SPDX-License-Identifier: MIT
// Stack unwinding over fuzzed memory: x86-64 ORC tables and stacks (every
// format), arm64 frame records. The input is a struct fuzz_unwind_hdr
// (formats.h), then memory laid over the generated scene of
// tests/gen/mkstack.h. The walk is bounded here as linux/stack.c bounds it.
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "formats.h"
#include "arch/arm64/arm64.h"
#include "arch/unwind.h"
#include "arch/x86_64/x86_64.h"
#include "io/memory.h"
#include "mkstack.h"
#include "symbols/symtab.h"

#define MAX_STEPS 2048

static bool no_module(void *arg, uint64_t address, uint64_t *ret)
{
	(void)arg, (void)address, (void)ret;
	return false;
}

// arm64 members: cpu_context at 0x100 (pc, fp, sp), pt_regs as 6.13 lays it.
static bool arm64_member(void *arg, const char *type, const char *m, uint64_t *off,
			 uint64_t *size)
{
	static const struct {
		const char *type, *m;
		uint64_t off;
	} t[] = {
		{ "struct task_struct", "thread.cpu_context.pc", 0x100 },
		{ "struct task_struct", "thread.cpu_context.fp", 0x108 },
		{ "struct task_struct", "thread.cpu_context.sp", 0x110 },
		{ "struct pt_regs", "regs", 0 },
		{ "struct pt_regs", "sp", 248 },
		{ "struct pt_regs", "pc", 256 },
		{ "struct pt_regs", "pstate", 264 },
		{ "struct pt_regs", "stackframe", 320 },
		{ "struct pt_regs", "stackframe.type", 336 },
	};
	(void)arg;
	if (size)
		*size = 8;
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (!strcmp(t[i].type, type) && !strcmp(t[i].m, m))
			return *off = t[i].off, true;
	return false;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_unwind_hdr h;
	if (size < sizeof(h))
		return 0;
	memcpy(&h, data, sizeof(h));
	bool arm64 = h.arch & 1;
	int version = h.version % 5;
	static const char *const releases[] = { NULL, "6.1.0", "6.3.0", "6.12.0", "7.2.0" };
	uint8_t *img = malloc(MKSTACK_SIZE);
	if (!img)
		return 0;
	mkstack_image(img, version ? version : 3, !version, false);
	size_t n = size - sizeof(h) < MKSTACK_SIZE ? size - sizeof(h) : MKSTACK_SIZE;
	memcpy(img, data + sizeof(h), n);
	struct kp_memory *mem = NULL;
	struct kp_symtab *st = NULL;
	struct kp_unwinder *u = NULL;
	struct kp_error *err = kp_memory_create(&mem);
	if (!err)
		err = kp_memory_add(mem, KP_VIRT, MKSTACK_BASE, MKSTACK_SIZE, kp_read_buffer, img, 0);
	if (!err)
		err = kp_symtab_create(&st);
	if (err)
		goto out;
	mkstack_symbols(st, !version);
	struct kp_unwind_env env = { mem, st, releases[version] ? releases[version] : "", NULL,
				     arm64 ? arm64_member : mkstack_member, no_module };
	if (arm64)
		err = kp_arm64_unwinder_new(h.va_bits, &env, &u);
	else
		err = kp_x86_unwinder_create(NULL, &env, &u);
	if (err)
		goto out;
	struct kp_unwind_frame f;
	err = arm64 ? kp_arm64_unwind_sleeping(u, h.task, &f) : kp_x86_unwind_sleeping(u, h.task, &f);
	for (int i = 0; !err && i < MAX_STEPS; i++) {
		const char *end = NULL;
		err = arm64 ? kp_arm64_unwind_step(u, &f, &end) : kp_x86_unwind_step(u, &f, &end);
		if (end)
			break;
	}
out:
	kp_error_destroy(err);
	if (u) {
		if (arm64)
			kp_arm64_unwinder_destroy(u);
		else
			kp_x86_unwinder_destroy(u);
	}
	kp_symtab_destroy(st);
	kp_memory_destroy(mem);
	free(img);
	return 0;
}
