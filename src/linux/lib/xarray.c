// SPDX-License-Identifier: MIT
// Walks an xarray (include/linux/xarray.h, 4.20+; the IDR of PIDs and BPF
// objects is one). An entry is a pointer (low bits 00), a value (bit 0
// set) or internal (low bits 10): internal entries above 4096 are nodes
// (node + 2), below are sibling and retry markers. A node holds
// XA_CHUNK_SIZE slots and the shift of its index bits; a child's shift is
// the parent's minus XA_CHUNK_SHIFT, so the depth is bounded by 64 bits.
#include <inttypes.h>
#include <stdlib.h>

#include "core/layout.h"
#include "linux/lib/xarray.h"
#include "util/error.h"
#include "util/le.h"

#define MAX_CHUNK 256u

static const struct kp_member_spec xa_members[] = { { .name = "xa_head" } };
static const struct kp_struct_spec xa_spec = KP_STRUCT_SPEC("struct xarray", xa_members);
enum { N_SHIFT, N_SLOTS, N_N };
static const struct kp_member_spec node_members[N_N] = {
	[N_SHIFT] = { .name = "shift" }, [N_SLOTS] = { .name = "slots" },
};
static const struct kp_struct_spec node_spec = KP_STRUCT_SPEC("struct xa_node", node_members);

struct kp_error *kp_lx_xa_layout(struct kp_kernel *k, struct kp_lx_xa_layout *ret)
{
	static const struct kp_struct_spec *const specs[] = { &xa_spec, &node_spec };
	const struct kp_struct_layout *xl[2];
	struct kp_lx_xa_layout l = {0};
	struct kp_error *err = kp_kernel_layouts(k, specs, 2, xl);
	if (err)
		return kp_error_prefix(err, "xarray");
	l.xa_head = kp_layout_off(xl[0], 0);
	l.node_shift = kp_layout_off(xl[1], N_SHIFT);
	l.node_slots = kp_layout_off(xl[1], N_SLOTS);
	l.chunk = (unsigned)(xl[1]->m[N_SLOTS].size / 8);
	if (l.chunk < 2 || l.chunk > MAX_CHUNK || (l.chunk & (l.chunk - 1)))
		return kp_error_create(KP_ERR_UNSUPPORTED, "xarray: %u slots per node", l.chunk);
	*ret = l;
	return NULL;
}

struct walk {
	struct kp_kernel *k;
	const struct kp_lx_xa_layout *l;
	unsigned chunk_shift;
	size_t nodes;
	kp_lx_xa_fn *fn;
	void *arg;
};

static bool is_node(uint64_t entry)
{
	return (entry & 3) == 2 && entry > 4096;
}

static struct kp_error *walk_node(struct walk *w, uint64_t node, uint64_t base, int want_shift)
{
	const struct kp_lx_xa_layout *l = w->l;
	if (++w->nodes > KP_LX_MAX_XA_NODES)
		return kp_error_create(KP_ERR_LOOP, "xarray: more than %u nodes (corrupt?)",
				       KP_LX_MAX_XA_NODES);
	uint8_t shift;
	uint8_t slots[MAX_CHUNK * 8];
	struct kp_error *err;
	if ((err = kp_read(w->k, KP_VIRT, node + l->node_shift, &shift, 1)) ||
	    (err = kp_read(w->k, KP_VIRT, node + l->node_slots, slots, (size_t)l->chunk * 8)))
		return kp_error_prefix(err, "xa_node at 0x%" PRIx64, node);
	if (shift % w->chunk_shift || shift >= 64 || (want_shift >= 0 && shift != want_shift))
		return kp_error_create(KP_ERR_FORMAT, "xa_node at 0x%" PRIx64 ": shift %u (corrupt?)",
				       node, shift);
	for (unsigned i = 0; i < l->chunk; i++) {
		uint64_t e = kp_le64(slots + (size_t)i * 8);
		uint64_t index = base + ((uint64_t)i << shift);
		if (!e || (e & 1))
			continue;
		if (is_node(e)) {
			if (!shift)
				return kp_error_create(KP_ERR_FORMAT, "xa_node at 0x%" PRIx64 ": a node below the last level (corrupt?)", node);
			if ((err = walk_node(w, e - 2, index, shift - (int)w->chunk_shift)))
				return err;
		} else if ((e & 3) == 0 && (err = w->fn(index, e, w->arg))) {
			return err;
		}
	}
	return NULL;
}

struct kp_error *kp_lx_xa_walk(struct kp_kernel *k, const struct kp_lx_xa_layout *l, uint64_t xa,
			       kp_lx_xa_fn *fn, void *arg)
{
	uint64_t head;
	struct kp_error *err = kp_read_u64(k, xa + l->xa_head, &head);
	if (err)
		return kp_error_prefix(err, "xarray at 0x%" PRIx64, xa);
	struct walk w = { k, l, (unsigned)__builtin_ctz(l->chunk), 0, fn, arg };
	if (!head || (head & 1))
		return NULL;
	if (is_node(head))
		return walk_node(&w, head - 2, 0, -1);
	if ((head & 3) == 0)
		return fn(0, head, arg);	// a lone entry at index 0
	return NULL;
}
