// SPDX-License-Identifier: MIT
// Variables a kallsyms of functions only (CONFIG_KALLSYMS_ALL=n, Debian's
// 6.1 arm64) does not name, found by what they are rather than by name:
//
//   init_task  the task_struct in the kernel image whose comm is
//              "swapper/0" and pid 0, whose tasks list is consistent
//              (tasks.next->prev and tasks.prev->next point back at it),
//              and whose real_parent is itself (layout from BTF);
//   per-CPU    every per-CPU variable BTF names, from the section's
//              address the exported ones agree on (add_percpu());
//   the variables functions refer to (derive_refs.c).
//
// Each is added as a symbol only if exactly one candidate passes, so a
// wrong one is never taken: the kernel's own init_task is the only
// task_struct in the image.
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/btf.h>

#include "core/derive.h"
#include "io/memory.h"
#include "symbols/symtab.h"
#include "types/types.h"
#include "util/error.h"
#include "util/le.h"

#define BLOCK (2ULL << 20)
#define PAGE 4096ULL

struct task_layout {
	uint64_t comm, pid, tasks, real_parent, size;
};

static bool member(struct kp_types *types, uint32_t id, const char *name, uint64_t *off)
{
	struct kp_btf_member m;
	struct kp_error *err = kp_types_member_path(types, id, name, strlen(name), &m);
	if (err) {
		kp_error_destroy(err);
		return false;
	}
	*off = m.bit_offset / 8;
	return true;
}

static bool layout(struct kp_types *types, struct task_layout *l)
{
	uint32_t id;
	struct kp_error *err = kp_types_find(types, BTF_KIND_STRUCT, "task_struct", &id);
	if (err) {
		kp_error_destroy(err);
		return false;
	}
	const struct btf_type *t = btf__type_by_id(kp_types_btf(types), id);
	l->size = t ? t->size : 0;
	return l->size && member(types, id, "comm", &l->comm) && member(types, id, "pid", &l->pid) &&
	       member(types, id, "tasks", &l->tasks) &&
	       member(types, id, "real_parent", &l->real_parent);
}

// Whether the task_struct at task is init_task.
static bool is_init_task(struct kp_memory *mem, const struct task_layout *l, uint64_t task)
{
	uint8_t comm[16];
	uint32_t pid;
	uint64_t parent, next, prev, back;
	return kp_ok(kp_memory_read(mem, KP_VIRT, task + l->comm, comm, sizeof(comm))) &&
	       !memcmp(comm, "swapper/0", 10) &&
	       kp_ok(kp_memory_read(mem, KP_VIRT, task + l->pid, &pid, 4)) && pid == 0 &&
	       kp_ok(kp_memory_read_u64(mem, KP_VIRT, task + l->real_parent, &parent)) &&
	       parent == task &&
	       kp_ok(kp_memory_read_u64(mem, KP_VIRT, task + l->tasks, &next)) &&
	       kp_ok(kp_memory_read_u64(mem, KP_VIRT, task + l->tasks + 8, &prev)) &&
	       kp_ok(kp_memory_read_u64(mem, KP_VIRT, next + 8, &back)) &&
	       back == task + l->tasks &&
	       kp_ok(kp_memory_read_u64(mem, KP_VIRT, prev, &back)) && back == task + l->tasks;
}

// Every place in [lo, hi) where "swapper/0\0" sits at comm's offset of an
// 8-aligned task_struct that passes is_init_task(); *n counts them.
static uint64_t scan_init_task(struct kp_memory *mem, const struct task_layout *l, uint64_t lo,
			       uint64_t hi, unsigned *n)
{
	static const char want[] = "swapper/0";
	uint8_t *buf = malloc(BLOCK);
	uint64_t found = 0;
	*n = 0;
	if (!buf)
		return 0;
	for (uint64_t va = lo & ~(PAGE - 1); va < hi && va >= lo; va += BLOCK) {
		bool whole = kp_ok(kp_memory_read(mem, KP_VIRT, va, buf, BLOCK));
		for (uint64_t p = 0; p < BLOCK; p += PAGE) {
			if (!whole && !kp_ok(kp_memory_read(mem, KP_VIRT, va + p, buf + p, PAGE)))
				continue;
			const uint8_t *at = buf + p, *end = buf + p + PAGE;
			while ((at = memmem(at, end - at, want, sizeof(want))) != NULL) {
				uint64_t comm = va + (uint64_t)(at - buf);
				uint64_t task = comm - l->comm;
				if ((task & 7) == 0 && comm >= l->comm && is_init_task(mem, l, task)) {
					found = task;
					++*n;
				}
				at++;
			}
		}
	}
	free(buf);
	return found;
}

// ---------------------------------------------------------------- per-CPU

// Per-CPU variables: BTF's DATASEC ".data..percpu" gives each one's offset
// in the section (pahole encodes every per-CPU variable, 1.18+), and the
// exported ones (EXPORT_PER_CPU_SYMBOL: cpu_number, irq_stat, kstat, ...)
// have their addresses from __ksymtab: those must all put the section at
// one address, and then every per-CPU variable has its own.
#define MIN_AGREE 2

static bool percpu_base(struct kp_symtab *st, const struct btf *btf,
			const struct btf_type *sec, uint64_t *ret)
{
	const struct btf_var_secinfo *vi = btf_var_secinfos(sec);
	unsigned agree = 0;
	uint64_t base = 0;
	struct kp_symbol sym;
	for (unsigned i = 0; i < btf_vlen(sec); i++, vi++) {
		const struct btf_type *v = btf__type_by_id(btf, vi->type);
		const char *name = v ? btf__name_by_offset(btf, v->name_off) : NULL;
		if (!name || !kp_symtab_find(st, name, &sym) || sym.address < vi->offset)
			continue;
		if (agree && sym.address - vi->offset != base)
			return false;
		base = sym.address - vi->offset;
		agree++;
	}
	*ret = base;
	return agree >= MIN_AGREE;
}

static struct kp_error *add_percpu(struct kp_types *types, struct kp_symtab *st, unsigned *added)
{
	const struct btf *btf = kp_types_btf(types);
	int32_t id = btf__find_by_name_kind(btf, ".data..percpu", BTF_KIND_DATASEC);
	const struct btf_type *sec = id > 0 ? btf__type_by_id(btf, (uint32_t)id) : NULL;
	uint64_t base;
	if (!sec || !percpu_base(st, btf, sec, &base))
		return NULL;
	kp_symtab_next_source(st);
	struct kp_error *err = kp_symtab_set_origin(st, "BTF's .data..percpu section");
	if (err)
		return err;
	// Picked before any is added: a lookup after an addition sorts again.
	uint32_t n = btf_vlen(sec), *pick = malloc(n * sizeof(*pick) + 1);
	if (!pick)
		return &kp_enomem;
	uint32_t npick = 0;
	const struct btf_var_secinfo *vi = btf_var_secinfos(sec);
	struct kp_symbol sym;
	for (uint32_t i = 0; i < n; i++) {
		const struct btf_type *v = btf__type_by_id(btf, vi[i].type);
		const char *name = v ? btf__name_by_offset(btf, v->name_off) : NULL;
		if (name && *name && !kp_symtab_find(st, name, &sym))
			pick[npick++] = i;
	}
	for (uint32_t i = 0; i < npick && !err; i++) {
		const struct btf_type *v = btf__type_by_id(btf, vi[pick[i]].type);
		const char *name = btf__name_by_offset(btf, v->name_off);
		if (!(err = kp_symtab_add(st, name, strlen(name), base + vi[pick[i]].offset, 'D', NULL)))
			(*added)++;
	}
	free(pick);
	return err;
}

// ---------------------------------------------------------------- all

struct kp_error *kp_derive_symbols(struct kp_memory *mem, const struct kp_arch *arch,
				   struct kp_types *types, uint64_t image_start, uint64_t image_end,
				   struct kp_symtab *st, unsigned *added)
{
	struct kp_symbol sym;
	struct task_layout l;
	struct kp_error *err;
	*added = 0;
	if ((err = add_percpu(types, st, added)))
		return err;
	if ((err = kp_derive_refs(mem, arch, types, image_start, image_end, st, added)))
		return err;
	if (!kp_symtab_find(st, "init_task", &sym) && layout(types, &l)) {
		unsigned n;
		uint64_t task = scan_init_task(mem, &l, image_start, image_end, &n);
		if (n == 1) {
			kp_symtab_next_source(st);
			if ((err = kp_symtab_set_origin(st, "a scan of the kernel image for its shape")) ||
			    (err = kp_symtab_add(st, "init_task", 9, task, 'D', NULL)))
				return err;
			(*added)++;
		}
	}
	return NULL;
}
