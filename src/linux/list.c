// SPDX-License-Identifier: MIT
// The one walker of the kernel's doubly linked lists (struct list_head,
// include/linux/types.h: next, then prev), behind kp_list_iter of kpeek.h
// and every kernel-object iterator.
//
// Memory a rootkit edited or a damaged dump may make a list lie: a link into
// the middle of a node, a cycle that never returns to the head, a NULL. So
// every step checks the list's own invariant, next->prev == node, which
// costs nothing (one 16-byte read per node gets both pointers), finds a
// cycle that does not pass through the head with Brent's algorithm in O(1)
// memory, and stops after a bound far above any real kernel's lists.
//
// A node whose memory the source lacks breaks the forward walk; the nodes
// behind it are still reachable from the head's prev pointer. The walk then
// collects them backwards (prev->next checked the same way), bounded by
// what is left of the limit, and yields them in list order.
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "linux/linux.h"
#include "util/error.h"
#include "util/le.h"
#include "util/vec.h"

struct kp_list_iter {
	struct kp_kernel *k;
	const char *what;	// "task list", for messages
	uint64_t head;		// where the walk ends
	uint64_t head_prev;	// head->prev, checked against the last node
	uint64_t node;		// the node to yield next (== head at the end)
	uint64_t prev;		// the node yielded last (head at the start)
	uint64_t count, max;
	bool head_is_node;	// head is yielded too (KP_LIST_HEAD_IS_NODE)
	bool single;		// next pointers only (KP_LIST_SINGLE)
	bool started, done;
	struct kp_lx_loop loop;
	// After a fault: the missing node, and the nodes behind it collected
	// backwards from the head (yielded from the end of the array).
	bool broken;
	uint64_t missing;
	uint64_t *tail;
	size_t ntail;
	struct kp_error *pending;	// a second gap, reported after the tail
};

struct kp_error *kp_lx_list_iter_create(struct kp_kernel *k, uint64_t head, unsigned flags,
					const char *what, struct kp_list_iter **ret)
{
	uint8_t b[16] = { 0 };
	bool single = flags & KP_LIST_SINGLE;
	struct kp_error *err = kp_read(k, KP_VIRT, head, b, single ? 8 : 16);
	if (err)
		return kp_error_prefix(err, "%s: reading the list head at 0x%" PRIx64, what, head);
	struct kp_list_iter *it = calloc(1, sizeof(*it));
	if (!it)
		return &kp_enomem;
	it->k = k;
	it->what = what;
	it->head = head;
	it->head_prev = kp_le64(b + 8);
	it->head_is_node = flags & KP_LIST_HEAD_IS_NODE;
	it->single = single;
	it->node = it->head_is_node ? head : kp_le64(b);
	it->prev = it->head_is_node ? it->head_prev : head;
	it->max = KP_LX_MAX_LIST;
	kp_lx_loop_init(&it->loop, head);
	*ret = it;
	return NULL;
}

struct kp_error *kp_list_iter_create(struct kp_kernel *k, uint64_t head, unsigned flags,
				     struct kp_list_iter **ret)
{
	return kp_lx_list_iter_create(k, head, flags, "list", ret);
}

void kp_list_iter_set_limit(struct kp_list_iter *it, uint64_t max)
{
	it->max = max;
}

void kp_list_iter_destroy(struct kp_list_iter *it)
{
	if (!it)
		return;
	free(it->tail);
	kp_error_destroy(it->pending);
	free(it);
}

// After the forward walk broke at it->missing: the nodes from the head's
// prev back to the one after the missing node, each checked against the
// one after it (node->next must be it). Stops at a second gap (kept as
// it->pending) or a corrupt link (returned).
static struct kp_error *collect_tail(struct kp_list_iter *it)
{
	uint64_t after = it->head, node = it->head_prev;
	size_t cap = 0;
	while (node != it->missing) {
		if (node == it->prev || node == it->head || !node)
			break;	// nothing between the gap and the head, or a bad link
		if (it->count + it->ntail >= it->max)
			return kp_error_create(KP_ERR_LOOP,
					       "%s does not end after %" PRIu64 " entries (at 0x%" PRIx64 ", read backwards)",
					       it->what, it->count + it->ntail, node);
		uint8_t b[16];
		struct kp_error *err = kp_read(it->k, KP_VIRT, node, b, 16);
		if (err) {
			it->pending = kp_error_prefix(err, "%s: reading the node at 0x%" PRIx64 " (before 0x%" PRIx64 ", read backwards)",
						      it->what, node, after);
			break;
		}
		if (kp_le64(b) != after)
			return kp_error_create(KP_ERR_FORMAT,
					       "%s is corrupt: 0x%" PRIx64 "'s prev pointer is 0x%" PRIx64 ", whose next pointer is 0x%" PRIx64,
					       it->what, after, node, kp_le64(b));
		if (!KP_VEC_RESERVE(it->tail, cap, it->ntail + 1))
			return &kp_enomem;
		it->tail[it->ntail++] = node;
		after = node;
		node = kp_le64(b + 8);
	}
	return NULL;
}

struct kp_error *kp_list_iter_next(struct kp_list_iter *it, uint64_t *node_ret, bool *done_ret)
{
	if (it->done) {
		*done_ret = true;
		return NULL;
	}
	if (it->broken) {
		if (it->ntail) {
			*node_ret = it->tail[--it->ntail];
			it->count++;
			*done_ret = false;
			return NULL;
		}
		it->done = true;
		*done_ret = true;
		struct kp_error *err = it->pending;
		it->pending = NULL;
		return err;
	}
	uint64_t node = it->node;
	if ((node == it->head && (it->started || !it->head_is_node)) || (!node && it->single)) {
		// Back at the head: the last node must be what head->prev says.
		if (!it->single && it->head_prev != it->prev)
			return kp_error_create(KP_ERR_FORMAT,
					       "%s is corrupt: it returns to the head 0x%" PRIx64
					       " from 0x%" PRIx64 ", but head->prev is 0x%" PRIx64,
					       it->what, it->head, it->prev, it->head_prev);
		it->done = true;
		*done_ret = true;
		return NULL;
	}
	if (!node)
		return kp_error_create(KP_ERR_FORMAT,
				       "%s is corrupt: node 0x%" PRIx64 " has a NULL next pointer",
				       it->what, it->prev);
	if (it->count >= it->max)
		return kp_error_create(KP_ERR_LOOP,
				       "%s does not end after %" PRIu64 " entries (at 0x%" PRIx64 ")",
				       it->what, it->count, node);
	uint8_t b[16] = { 0 };
	struct kp_error *err = kp_read(it->k, KP_VIRT, node, b, it->single ? 8 : 16);
	if (err) {
		err = kp_error_prefix(err, "%s: reading the node at 0x%" PRIx64 " (after 0x%" PRIx64 ")",
				      it->what, node, it->prev);
		if (err->code != KP_ERR_FAULT || it->single) {
			it->done = err->code == KP_ERR_FAULT;
			return err;
		}
		// Go on from the other end: the nodes behind the missing one.
		it->broken = true;
		it->missing = node;
		struct kp_error *corrupt = collect_tail(it);
		if (corrupt) {
			kp_error_destroy(err);
			it->done = true;
			return corrupt;
		}
		return err;
	}
	uint64_t next = kp_le64(b), prev = kp_le64(b + 8);
	if (!it->single && prev != it->prev)
		return kp_error_create(KP_ERR_FORMAT,
				       "%s is corrupt: 0x%" PRIx64 " points to 0x%" PRIx64
				       ", whose prev pointer is 0x%" PRIx64 " (a link into the middle of a node, or an unlinked one)",
				       it->what, it->prev, node, prev);
	// With the back links checked a cycle can only be a singly linked
	// list's; checked after them, so that a doubly linked list's says
	// which link is wrong.
	if (it->started && kp_lx_loop_step(&it->loop, node))
		return kp_error_create(KP_ERR_LOOP,
				       "%s does not end after %" PRIu64 " entries (loop at 0x%" PRIx64 ")",
				       it->what, it->count, node);
	it->started = true;
	it->count++;
	it->prev = node;
	it->node = next;
	*node_ret = node;
	*done_ret = false;
	return NULL;
}
