// SPDX-License-Identifier: MIT
// kp_vma_iter: a process's memory mappings as /proc/PID/maps lists them
// (fs/proc/task_mmu.c show_map_vma()): the VMAs of its mm_struct, in the
// maple tree mm->mm_mt since 6.1 (lib/maple.c), on the mm->mmap list linked
// by vm_next before; then, where the kernel has one, the gate VMA every
// process shows last (x86-64's [vsyscall], get_gate_vma()). Each is named
// as the kernel names it: a file's path (d_path, " (deleted)"), a special
// mapping's own name ([vdso], [vvar]: vm_ops->name is
// special_mapping_name() and vm_private_data a struct vm_special_mapping),
// [heap] over start_brk..brk, [stack] over start_stack.
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arch/arch.h"
#include "core/kernel.h"
#include "core/layout.h"
#include "linux/fs/fs.h"
#include "linux/lib/maple.h"
#include "linux/lib/walk.h"
#include "linux/mm/mm.h"
#include "util/error.h"
#include "util/vec.h"

#define VM_READ 0x1u		// include/linux/mm.h
#define VM_WRITE 0x2u
#define VM_EXEC 0x4u
#define VM_MAYSHARE 0x80u
#define MAX_VMAS (1u << 20)	// DEFAULT_MAX_MAP_COUNT is 65530; sysctl can raise it

enum { V_START, V_END, V_FLAGS, V_PGOFF, V_FILE, V_OPS, V_PRIVATE, V_NEXT, V_N };
static const struct kp_member_spec vma_members[V_N] = {
	[V_START] = { .name = "vm_start" },
	[V_END] = { .name = "vm_end" },
	// 6.3 made vm_flags a const alias of __vm_flags.
	[V_FLAGS] = { .name = "__vm_flags|vm_flags" },
	[V_PGOFF] = { .name = "vm_pgoff" },
	[V_FILE] = { .name = "vm_file" },
	[V_OPS] = { .name = "vm_ops" },
	[V_PRIVATE] = { .name = "vm_private_data" },
	[V_NEXT] = { .name = "vm_next", .flags = KP_MEMBER_OPTIONAL },	// up to 6.0
};
static const struct kp_struct_spec vma_spec = KP_STRUCT_SPEC("struct vm_area_struct", vma_members);
enum { MM_MT, MM_MMAP, MM_COUNT, MM_START_BRK, MM_BRK, MM_START_STACK, MM_N };
static const struct kp_member_spec mm_members[MM_N] = {
	[MM_MT] = { .name = "mm_mt", .flags = KP_MEMBER_OPTIONAL | KP_MEMBER_NOSPAN },	// 6.1+
	[MM_MMAP] = { .name = "mmap", .flags = KP_MEMBER_OPTIONAL },			// up to 6.0
	[MM_COUNT] = { .name = "map_count" },
	[MM_START_BRK] = { .name = "start_brk" },
	[MM_BRK] = { .name = "brk" },
	[MM_START_STACK] = { .name = "start_stack" },
};
static const struct kp_struct_spec mm_spec = KP_STRUCT_SPEC("struct mm_struct", mm_members);
enum { F_MNT, F_DENTRY, F_N };
static const struct kp_member_spec file_members[F_N] = {
	[F_MNT] = { .name = "f_path.mnt" }, [F_DENTRY] = { .name = "f_path.dentry" },
};
static const struct kp_struct_spec file_spec = KP_STRUCT_SPEC("struct file", file_members);
static const struct kp_member_spec ops_members[] = { { .name = "name" } };
static const struct kp_struct_spec ops_spec = KP_STRUCT_SPEC("struct vm_operations_struct", ops_members);
static const struct kp_member_spec special_members[] = { { .name = "name" } };
static const struct kp_struct_spec special_spec = KP_STRUCT_SPEC("struct vm_special_mapping", special_members);

struct kp_vma_iter {
	struct kp_kernel *k;
	const struct kp_struct_layout *vl, *ml, *fl, *ol, *sl;
	uint64_t mm, start_brk, brk, start_stack;
	uint32_t map_count;
	uint64_t special_name;		// special_mapping_name(), 0 if unknown
	uint64_t gate;			// the gate VMA, 0 if none
	const char *gate_name;
	struct kp_lx_root root;
	bool has_root;
	uint64_t *vmas;			// the pass's vm_area_struct addresses
	size_t n, cap, next;
	struct kp_vma vma;
	char path[KP_LX_PATH_MAX + 16];
	struct kp_lx_walk walk;
};

// One more VMA of the pass: the mm's own, at most map_count of them, or
// (gate) the gate VMA after them.
static struct kp_error *add(struct kp_vma_iter *it, uint64_t vma, bool gate)
{
	if (it->n >= MAX_VMAS || it->n >= (size_t)it->map_count + gate)
		return kp_error_create(KP_ERR_LOOP, "mm_struct 0x%" PRIx64 ": more VMAs than its map_count %u (corrupt?)",
				       it->mm, it->map_count);
	if (!KP_VEC_RESERVE(it->vmas, it->cap, it->n + 1))
		return &kp_enomem;
	it->vmas[it->n++] = vma;
	return NULL;
}

static struct kp_error *on_entry(uint64_t first, uint64_t last, uint64_t entry, void *arg)
{
	(void)first, (void)last;
	return add(arg, entry, false);
}

// One pass over the mm's VMAs into it->vmas.
static struct kp_error *collect(struct kp_vma_iter *it)
{
	it->n = 0;
	if (kp_layout_has(it->ml, MM_MT))
		return kp_lx_mt_walk(it->k, it->mm + kp_layout_off(it->ml, MM_MT), it->map_count,
				     on_entry, it);
	if (!kp_layout_has(it->ml, MM_MMAP) || !kp_layout_has(it->vl, V_NEXT))
		return kp_error_create(KP_ERR_UNSUPPORTED, "mm_struct has neither mm_mt nor mmap");
	uint64_t vma;
	struct kp_error *err = kp_read_u64(it->k, it->mm + kp_layout_off(it->ml, MM_MMAP), &vma);
	while (!err && vma && !(err = add(it, vma, false)))
		err = kp_read_u64(it->k, vma + kp_layout_off(it->vl, V_NEXT), &vma);
	return err;
}

static struct kp_error *read_mm(struct kp_vma_iter *it)
{
	uint8_t buf[2048];
	const struct kp_struct_layout *l = it->ml;
	if (kp_layout_span(l) > sizeof(buf))
		return kp_error_create(KP_ERR_UNSUPPORTED, "mm_struct span of %" PRIu64 " bytes", kp_layout_span(l));
	struct kp_error *err = kp_read(it->k, KP_VIRT, it->mm + l->lo, buf, kp_layout_span(l));
	if (err)
		return kp_error_prefix(err, "reading mm_struct at 0x%" PRIx64, it->mm);
	it->map_count = (uint32_t)kp_layout_u64(l, buf, MM_COUNT);
	it->start_brk = kp_layout_u64(l, buf, MM_START_BRK);
	it->brk = kp_layout_u64(l, buf, MM_BRK);
	it->start_stack = kp_layout_u64(l, buf, MM_START_STACK);
	if (it->map_count > MAX_VMAS)
		return kp_error_create(KP_ERR_FORMAT, "mm_struct 0x%" PRIx64 ": map_count %u (corrupt?)",
				       it->mm, it->map_count);
	return NULL;
}

struct kp_error *kp_vma_iter_create(struct kp_kernel *k, uint64_t task, struct kp_vma_iter **ret)
{
	static const struct kp_struct_spec *const specs[] = { &vma_spec, &mm_spec, &file_spec,
							       &ops_spec, &special_spec };
	const struct kp_struct_layout *l[5];
	struct kp_vma_iter *it = calloc(1, sizeof(*it));
	if (!it)
		return &kp_enomem;
	it->k = k;
	kp_lx_walk_init(&it->walk, k);
	struct kp_error *err = kp_kernel_layouts(k, specs, 5, l);
	if (!err && (err = kp_lx_task_mm(k, task, &it->mm)) && err->code == KP_ERR_NOT_FOUND) {
		// A task that exited (exit_mm()): no VMA, as its /proc/PID/maps
		// is empty (m_start() finds no mm), gate VMA included.
		kp_error_destroy(err);
		*ret = it;
		return NULL;
	}
	if (err) {
		kp_vma_iter_destroy(it);
		return err;
	}
	it->vl = l[0], it->ml = l[1], it->fl = l[2], it->ol = l[3], it->sl = l[4];
	struct kp_symbol sym;
	it->special_name = kp_symbol_find(k, "special_mapping_name", &sym) ? sym.address : 0;
	it->has_root = kp_ok(kp_lx_init_root(k, &it->root));
	// A live process maps and unmaps while its tree is read: passes.
	for (;;) {
		if (!(err = read_mm(it)) && !(err = collect(it)))
			break;
		if (err->code == KP_ERR_NOMEM || !kp_lx_walk_restart(&it->walk))
			break;
		kp_error_destroy(err);
	}
	if (err && it->n && err->code != KP_ERR_NOMEM) {
		kp_lx_walk_stop(&it->walk, err);	// what came before stands
		err = NULL;
	}
	if (err) {
		kp_vma_iter_destroy(it);
		return err;
	}
	// The gate VMA (x86-64's vsyscall page) is every process's last line.
	const struct kp_arch *arch = kp_kernel_arch(k);
	if (arch->gate_vma && arch->gate_vma(kp_kernel_arch_ctx(k), &it->gate, &it->gate_name) &&
	    (err = add(it, it->gate, true)))
		kp_lx_walk_stop(&it->walk, err);
	*ret = it;
	return NULL;
}

// The name /proc/PID/maps shows for a VMA without a file.
static const char *anon_name(struct kp_vma_iter *it, const uint8_t *buf, const struct kp_vma *v)
{
	uint64_t ops = kp_layout_u64(it->vl, buf, V_OPS), name_fn;
	uint64_t priv = kp_layout_u64(it->vl, buf, V_PRIVATE), name;
	if (ops && it->special_name && priv &&
	    kp_ok(kp_read_u64(it->k, ops + kp_layout_off(it->ol, 0), &name_fn)) &&
	    name_fn == it->special_name &&
	    kp_ok(kp_read_u64(it->k, priv + kp_layout_off(it->sl, 0), &name)) &&
	    kp_ok(kp_read_cstr(it->k, name, it->path, 64)))
		return it->path;
	if (v->start <= it->brk && v->end >= it->start_brk)
		return "[heap]";
	if (v->start <= it->start_stack && v->end >= it->start_stack)
		return "[stack]";
	return "";
}

static struct kp_error *decode(struct kp_vma_iter *it, uint64_t at)
{
	const struct kp_struct_layout *l = it->vl;
	uint8_t buf[512];
	if (kp_layout_span(l) > sizeof(buf))
		return kp_error_create(KP_ERR_UNSUPPORTED, "vm_area_struct span of %" PRIu64 " bytes", kp_layout_span(l));
	struct kp_error *err = kp_read(it->k, KP_VIRT, at + l->lo, buf, kp_layout_span(l));
	if (err)
		return kp_error_prefix(err, "reading vm_area_struct at 0x%" PRIx64, at);
	struct kp_vma *v = &it->vma;
	*v = (struct kp_vma){ .address = at };
	v->start = kp_layout_u64(l, buf, V_START);
	v->end = kp_layout_u64(l, buf, V_END);
	v->flags = kp_layout_u64(l, buf, V_FLAGS);
	v->file = kp_layout_u64(l, buf, V_FILE);
	snprintf(v->perms, sizeof(v->perms), "%c%c%c%c", v->flags & VM_READ ? 'r' : '-',
		 v->flags & VM_WRITE ? 'w' : '-', v->flags & VM_EXEC ? 'x' : '-',
		 v->flags & VM_MAYSHARE ? 's' : 'p');
	v->path = "";
	if (!v->file) {
		v->path = at == it->gate ? it->gate_name : anon_name(it, buf, v);
		return NULL;
	}
	v->offset = kp_layout_u64(l, buf, V_PGOFF) * kp_kernel_page_size(it->k);
	uint64_t mnt, dentry;
	uint32_t dev;
	if ((err = kp_read_u64(it->k, v->file + kp_layout_off(it->fl, F_MNT), &mnt)) ||
	    (err = kp_read_u64(it->k, v->file + kp_layout_off(it->fl, F_DENTRY), &dentry)) ||
	    (err = kp_lx_dentry_inode(it->k, dentry, &dev, &v->inode)))
		return kp_error_prefix(err, "the file of vm_area_struct 0x%" PRIx64, at);
	// The kernel's dev_t: 12 bits of major, 20 of minor (MINORBITS).
	v->dev_major = dev >> 20;
	v->dev_minor = dev & 0xfffff;
	if (!it->has_root)
		return kp_error_create(KP_ERR_NOT_FOUND, "no root to make paths from");
	if ((err = kp_lx_d_path(it->k, &it->root, mnt, dentry, it->path, sizeof(it->path))))
		return kp_error_prefix(err, "the path of vm_area_struct 0x%" PRIx64, at);
	v->path = it->path;
	return NULL;
}

struct kp_error *kp_vma_iter_next(struct kp_vma_iter *it, const struct kp_vma **ret)
{
	*ret = NULL;
	while (it->next < it->n) {
		struct kp_error *err = decode(it, it->vmas[it->next++]);
		if (!err) {
			*ret = &it->vma;
			return NULL;
		}
		if ((err = kp_lx_walk_unreadable(&it->walk, err)))
			return err;
	}
	return kp_lx_walk_finish(&it->walk);
}

void kp_vma_iter_status(const struct kp_vma_iter *it, struct kp_walk_status *ret)
{
	kp_lx_walk_status(&it->walk, ret);
}

void kp_vma_iter_destroy(struct kp_vma_iter *it)
{
	if (!it)
		return;
	free(it->vmas);
	kp_lx_walk_deinit(&it->walk);
	free(it);
}
