// SPDX-License-Identifier: MIT
// hlist and hlist_nulls chains (include/linux/list.h, list_nulls.h): a
// head's first pointer and each node's next pointer, both the first member
// of their structs; hlist_nulls ends at a marker with bit 0 set instead of
// NULL. Bounded by max and Brent's cycle detector.
#include <inttypes.h>

#include "linux/lib/hlist.h"
#include "linux/lib/list.h"
#include "util/error.h"

struct kp_error *kp_lx_hlist_walk(struct kp_kernel *k, uint64_t head, uint64_t max, const char *what,
				  kp_lx_hlist_fn *fn, void *arg)
{
	uint64_t node, n = 0;
	struct kp_lx_loop loop;
	struct kp_error *err = kp_read_u64(k, head, &node);
	if (err)
		return kp_error_prefix(err, "%s: chain head at 0x%" PRIx64, what, head);
	kp_lx_loop_init(&loop, node);
	while (node && !(node & 1)) {
		if (++n > max)
			return kp_error_create(KP_ERR_LOOP, "%s: the chain at 0x%" PRIx64 " has more than %" PRIu64
					       " nodes (corrupt?)", what, head, max);
		if ((err = fn(node, arg)))
			return err;
		uint64_t at = node;
		if ((err = kp_read_u64(k, at, &node)))
			return kp_error_prefix(err, "%s: node at 0x%" PRIx64, what, at);
		if (node && !(node & 1) && kp_lx_loop_step(&loop, node))
			return kp_error_create(KP_ERR_LOOP, "%s: the chain at 0x%" PRIx64 " loops at 0x%" PRIx64
					       " (corrupt)", what, head, node);
	}
	return NULL;
}
