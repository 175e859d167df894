// SPDX-License-Identifier: MIT
// kp_user_*: a process's user memory, read through its own page tables
// (mm->pgd, walked by the architecture's uspace walker), never through the
// kernel's. A page that is not in memory (never touched, swapped out, a
// file page not in the page cache) is an error naming the address and what
// its page-table entry says, never zeros.
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "arch/arch.h"
#include "core/kernel.h"
#include "core/layout.h"
#include "linux/mm/mm.h"
#include "linux/sched/sched.h"
#include "util/error.h"

#define PF_KTHREAD 0x00200000u	// include/linux/sched.h

static const struct kp_member_spec mm_members[KP_LX_MM_N] = {
	[KP_LX_MM_PGD] = { .name = "pgd" },
	[KP_LX_MM_ARG_START] = { .name = "arg_start" },
	[KP_LX_MM_ARG_END] = { .name = "arg_end" },
	[KP_LX_MM_ENV_START] = { .name = "env_start" },
	[KP_LX_MM_ENV_END] = { .name = "env_end" },
};
const struct kp_struct_spec kp_lx_mm_spec = KP_STRUCT_SPEC("struct mm_struct", mm_members);

enum { T_MM, T_PID, T_FLAGS, T_N };
static const struct kp_member_spec task_members[T_N] = {
	[T_MM] = { .name = "mm" }, [T_PID] = { .name = "pid" }, [T_FLAGS] = { .name = "flags" },
};
static const struct kp_struct_spec task_spec = KP_STRUCT_SPEC("struct task_struct", task_members);

struct kp_user {
	struct kp_kernel *k;
	const struct kp_arch *arch;
	struct kp_uspace *us;
	int32_t pid;
};

struct kp_error *kp_lx_task_mm(struct kp_kernel *k, uint64_t task, uint64_t *ret)
{
	const struct kp_struct_layout *l;
	uint64_t mm;
	uint32_t pid = 0, flags = 0;
	struct kp_error *err = kp_kernel_layout(k, &task_spec, &l);
	if (err)
		return err;
	if ((err = kp_read_u64(k, task + kp_layout_off(l, T_MM), &mm)))
		return kp_error_prefix(err, "reading task_struct at 0x%" PRIx64, task);
	if (!mm) {
		kp_ok(kp_read_u32(k, task + kp_layout_off(l, T_PID), &pid));
		kp_ok(kp_read_u32(k, task + kp_layout_off(l, T_FLAGS), &flags));
		// NOT_FOUND for a task whose memory is gone (exit_mm()): what
		// was in it, its arguments, is nothing now, as /proc says.
		return kp_error_create(flags & PF_KTHREAD ? KP_ERR_INVALID : KP_ERR_NOT_FOUND,
				       "task %d (task_struct 0x%" PRIx64 ") %s", (int32_t)pid, task,
				       flags & PF_KTHREAD ? "is a kernel thread: it has no user memory" :
				       "has no user memory (it exited)");
	}
	*ret = mm;
	return NULL;
}

struct kp_error *kp_user_create(struct kp_kernel *k, uint64_t task, struct kp_user **ret)
{
	const struct kp_arch *arch = kp_kernel_arch(k);
	const struct kp_struct_layout *ml;
	uint64_t mm, pgd;
	uint32_t pid = 0;
	struct kp_error *err;
	if (!arch->uspace_create)
		return kp_error_create(KP_ERR_UNSUPPORTED, "kpeek cannot read user memory on %s", arch->name);
	if ((err = kp_lx_task_mm(k, task, &mm)) || (err = kp_kernel_layout(k, &kp_lx_mm_spec, &ml)))
		return err;
	if ((err = kp_read_u64(k, mm + kp_layout_off(ml, KP_LX_MM_PGD), &pgd)))
		return kp_error_prefix(err, "mm_struct at 0x%" PRIx64, mm);
	KP_INIT(kp_vtop, v);
	if ((err = kp_vtop(k, pgd, &v)))
		return kp_error_prefix(err, "the page tables of mm_struct 0x%" PRIx64, mm);
	if (!v.present)
		return kp_error_fault(pgd, "the page tables of mm_struct 0x%" PRIx64 " (pgd 0x%" PRIx64 ") are not mapped",
				      mm, pgd);
	struct kp_user *u = calloc(1, sizeof(*u));
	if (!u)
		return &kp_enomem;
	u->k = k;
	u->arch = arch;
	if ((err = arch->uspace_create(kp_kernel_arch_ctx(k), v.paddr, &u->us))) {
		free(u);
		return err;
	}
	const struct kp_struct_layout *tl;
	if (kp_ok(kp_kernel_layout(k, &task_spec, &tl)))
		kp_ok(kp_read_u32(k, task + kp_layout_off(tl, T_PID), &pid));
	u->pid = (int32_t)pid;
	*ret = u;
	return NULL;
}

void kp_user_destroy(struct kp_user *u)
{
	if (!u)
		return;
	u->arch->uspace_destroy(u->us);
	free(u);
}

// The physical address of addr and the bytes contiguous from it.
static struct kp_error *translate(struct kp_user *u, uint64_t addr, uint64_t *pa, uint64_t *len)
{
	struct kp_vtop v = { .sz = sizeof(v) };
	struct kp_error *err = u->arch->uspace_walk(u->us, addr, &v);
	if (err)
		return kp_error_prefix(err, "user memory of pid %d", u->pid);
	if (!v.present) {
		uint64_t entry = v.nsteps ? v.step[v.nsteps - 1].entry : 0;
		return kp_error_fault(addr, "user address 0x%" PRIx64 " of pid %d is not in memory (%s)",
				      addr, u->pid, entry ? "swapped out or not accessible: page-table entry is not present" :
				      "never touched, or a file page not in the page cache");
	}
	*pa = v.paddr;
	*len = v.page_size - (addr & (v.page_size - 1));
	return NULL;
}

struct kp_error *kp_user_read(struct kp_user *u, uint64_t address, void *buf, size_t size)
{
	uint8_t *out = buf;
	while (size) {
		uint64_t pa, n;
		struct kp_error *err = translate(u, address, &pa, &n);
		if (err)
			return err;
		if (n > size)
			n = size;
		if ((err = kp_read(u->k, KP_PHYS, pa, out, n)))
			return kp_error_prefix(err, "user address 0x%" PRIx64 " of pid %d", address, u->pid);
		out += n;
		address += n;
		size -= n;
	}
	return NULL;
}
