// SPDX-License-Identifier: MIT
// In-order walk of a red-black tree (include/linux/rbtree.h): from the
// root, down the left children with an explicit stack, then each node and
// its right subtree. Parent pointers are not followed, so a corrupt tree
// cannot send the walk back up into a loop; the stack's depth and the
// node count bound it.
#include <inttypes.h>

#include "core/layout.h"
#include "linux/lib/rbtree.h"
#include "util/error.h"

#define MAX_DEPTH 64

enum { R_RIGHT, R_LEFT, R_N };
static const struct kp_member_spec node_members[R_N] = {
	[R_RIGHT] = { .name = "rb_right" }, [R_LEFT] = { .name = "rb_left" },
};
static const struct kp_struct_spec node_spec = KP_STRUCT_SPEC("struct rb_node", node_members);
static const struct kp_member_spec root_members[] = { { .name = "rb_node" } };
static const struct kp_struct_spec root_spec = KP_STRUCT_SPEC("struct rb_root", root_members);

struct kp_error *kp_lx_rb_walk(struct kp_kernel *k, uint64_t root, uint64_t max_nodes,
			       kp_lx_rb_fn *fn, void *arg)
{
	const struct kp_struct_layout *nl, *rl;
	uint64_t stack[MAX_DEPTH], node, seen = 0;
	unsigned depth = 0;
	struct kp_error *err;
	if ((err = kp_kernel_layout(k, &node_spec, &nl)) || (err = kp_kernel_layout(k, &root_spec, &rl)))
		return err;
	if ((err = kp_read_u64(k, root + kp_layout_off(rl, 0), &node)))
		return kp_error_prefix(err, "rb_root at 0x%" PRIx64, root);
	for (;;) {
		while (node) {
			if (depth == MAX_DEPTH)
				return kp_error_create(KP_ERR_FORMAT, "rb_root at 0x%" PRIx64 ": deeper than %d at node 0x%"
						       PRIx64 " (corrupt?)", root, MAX_DEPTH, node);
			stack[depth++] = node;
			if ((err = kp_read_u64(k, node + kp_layout_off(nl, R_LEFT), &node)))
				return kp_error_prefix(err, "rb_node at 0x%" PRIx64, stack[depth - 1]);
		}
		if (!depth)
			return NULL;
		node = stack[--depth];
		if (++seen > max_nodes)
			return kp_error_create(KP_ERR_LOOP, "rb_root at 0x%" PRIx64 ": more than %" PRIu64
					       " nodes (corrupt?)", root, max_nodes);
		if ((err = fn(node, arg)))
			return err;
		uint64_t at = node;
		if ((err = kp_read_u64(k, at + kp_layout_off(nl, R_RIGHT), &node)))
			return kp_error_prefix(err, "rb_node at 0x%" PRIx64, at);
	}
}
