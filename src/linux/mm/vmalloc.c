// SPDX-License-Identifier: MIT
// The vmalloc area holding an address, as /proc/vmallocinfo shows it
// (mm/vmalloc.c): the busy struct vmap_areas are on vmap_area_list until
// 6.8, on each vmap node's busy.head list from 6.9 (d093602919ad, "mm:
// vmalloc: Move vmap_area_list/root into per-node": the static array
// vmap_nodes of nr_vmap_nodes nodes); an area's vm (struct vm_struct)
// gives the address, size (the guard page included, as vmallocinfo prints
// it) and the caller, NULL for vm_map_ram areas.
//
// Bounds: each list at most MAX_AREAS areas, nr_vmap_nodes at most 1024.
#include <inttypes.h>

#include "core/kernel.h"
#include "core/layout.h"
#include "linux/lib/list.h"
#include "linux/mm/mm.h"
#include "util/error.h"

#define MAX_AREAS (1u << 20)
#define MAX_VMAP_NODES 1024

enum { A_START, A_END, A_LIST, A_VM, A_N };
static const struct kp_member_spec area_members[A_N] = {
	[A_START] = { .name = "va_start" },
	[A_END] = { .name = "va_end" },
	[A_LIST] = { .name = "list", .flags = KP_MEMBER_NOSPAN },
	[A_VM] = { .name = "vm" },
};
static const struct kp_struct_spec area_spec = KP_STRUCT_SPEC("struct vmap_area", area_members);
enum { V_ADDR, V_SIZE, V_CALLER, V_N };
static const struct kp_member_spec vm_members[V_N] = {
	[V_ADDR] = { .name = "addr" },
	[V_SIZE] = { .name = "size" },
	[V_CALLER] = { .name = "caller" },
};
static const struct kp_struct_spec vm_spec = KP_STRUCT_SPEC("struct vm_struct", vm_members);
enum { N_HEAD, N_N };
static const struct kp_member_spec node_members[N_N] = {
	[N_HEAD] = { .name = "busy.head", .flags = KP_MEMBER_NOSPAN },
};
static const struct kp_struct_spec node_spec = KP_STRUCT_SPEC_OPTIONAL("struct vmap_node", node_members);

// The area of list head holding a, if any (*found).
static struct kp_error *in_list(struct kp_kernel *k, const struct kp_struct_layout *al, uint64_t head, uint64_t a,
				struct kp_lx_vmalloc *ret, bool *found)
{
	struct kp_list_iter *it;
	uint64_t node;
	bool done;
	struct kp_error *err = kp_lx_list_iter_create(k, head, 0, "vmap_area list", &it);
	if (err)
		return err;
	kp_list_iter_set_limit(it, MAX_AREAS);
	while (!*found && !(err = kp_list_iter_next(it, &node, &done)) && !done) {
		uint8_t buf[128];
		uint64_t va = node - kp_layout_off(al, A_LIST);
		if ((err = kp_kernel_read_struct(k, al, va, buf, sizeof(buf))))
			break;
		uint64_t start = kp_layout_u64(al, buf, A_START), end = kp_layout_u64(al, buf, A_END);
		if (a >= start && a < end) {
			*ret = (struct kp_lx_vmalloc){ .area = va, .start = start, .end = end,
						       .vm = kp_layout_u64(al, buf, A_VM) };
			*found = true;
		}
	}
	kp_list_iter_destroy(it);
	return err;
}

static struct kp_error *vm_struct(struct kp_kernel *k, struct kp_lx_vmalloc *v)
{
	const struct kp_struct_layout *l;
	uint8_t buf[128];
	struct kp_error *err = kp_kernel_layout(k, &vm_spec, &l);
	if (err || (err = kp_kernel_read_struct(k, l, v->vm, buf, sizeof(buf))))
		return err;
	v->start = kp_layout_u64(l, buf, V_ADDR);
	v->end = v->start + kp_layout_u64(l, buf, V_SIZE);
	v->caller = kp_layout_u64(l, buf, V_CALLER);
	return NULL;
}

struct kp_error *kp_lx_vmalloc_area(struct kp_kernel *k, uint64_t a, struct kp_lx_vmalloc *ret)
{
	const struct kp_struct_layout *al, *nl;
	struct kp_symbol sym, nr;
	bool found = false;
	struct kp_error *err = kp_kernel_layout(k, &area_spec, &al);
	if (err || (err = kp_kernel_layout(k, &node_spec, &nl)))
		return err;
	if (nl->present && kp_symbol_find(k, "vmap_nodes", &sym)) {
		uint64_t nodes;
		uint32_t n = 1;
		if ((err = kp_read_u64(k, sym.address, &nodes)) ||
		    (kp_symbol_find(k, "nr_vmap_nodes", &nr) && (err = kp_read_u32(k, nr.address, &n))))
			return kp_error_prefix(err, "vmap_nodes");
		if (!n || n > MAX_VMAP_NODES)
			return kp_error_create(KP_ERR_FORMAT, "nr_vmap_nodes is %u (corrupt?)", n);
		for (uint32_t i = 0; !err && !found && i < n; i++)
			err = in_list(k, al, nodes + i * nl->size + kp_layout_off(nl, N_HEAD), a, ret, &found);
	} else if (!nl->present && kp_symbol_find(k, "vmap_area_list", &sym)) {
		err = in_list(k, al, sym.address, a, ret, &found);
	} else {
		return kp_kernel_no_symbol(k, nl->present ? "no symbol 'vmap_nodes'" : "no symbol 'vmap_area_list'");
	}
	if (err)
		return err;
	if (!found)
		return kp_error_create(KP_ERR_NOT_FOUND, "0x%" PRIx64 " is in no vmalloc area", a);
	if (ret->vm && (err = vm_struct(k, ret)))
		return kp_error_prefix(err, "the vm_struct of vmap_area 0x%" PRIx64, ret->area);
	return NULL;
}
