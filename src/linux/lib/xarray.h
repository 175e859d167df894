// SPDX-License-Identifier: MIT
// The xarray walker (xarray.c; the IDR is one since 4.20).
#ifndef KP_LINUX_LIB_XARRAY_H
#define KP_LINUX_LIB_XARRAY_H

#include <kpeek/kpeek.h>

// struct xarray / struct xa_node (lib/xarray.c).
struct kp_lx_xa_layout {
	uint64_t xa_head;		// struct xarray
	uint64_t node_shift;		// struct xa_node: unsigned char shift
	uint64_t node_slots;		// void __rcu *slots[XA_CHUNK_SIZE]
	unsigned chunk;			// XA_CHUNK_SIZE (64, or 16 with BASE_SMALL)
};

struct kp_error *kp_lx_xa_layout(struct kp_kernel *kernel, struct kp_lx_xa_layout *ret);
typedef struct kp_error *kp_lx_xa_fn(uint64_t index, uint64_t entry, void *arg);
// Calls fn for every pointer entry (not NULL, value or internal entries)
// of the xarray at xa, in index order. Bounded: depth by the index width,
// nodes by KP_LX_MAX_XA_NODES.
#define KP_LX_MAX_XA_NODES (1u << 20)
struct kp_error *kp_lx_xa_walk(struct kp_kernel *kernel, const struct kp_lx_xa_layout *l,
			       uint64_t xa, kp_lx_xa_fn *fn, void *arg);

#endif
