// SPDX-License-Identifier: MIT
// The one walker of the kernel's doubly linked lists (struct list_head,
// include/linux/types.h: next, then prev), behind kp_list_iter of kpeek.h
// and every kernel-object iterator.
//
// A walk is one pass over the list collecting node addresses, then the
// nodes are yielded: so that a live kernel's list can be read again from
// the head when it changed under the pass, and the answer is one pass.
//
// In a dump, memory a rootkit edited or a damaged dump may make a list lie:
// a link into the middle of a node, a cycle that never returns to the head,
// a NULL. So every step checks the list's own invariant, next->prev ==
// node, which costs nothing (one 16-byte read per node gets both pointers),
// finds a cycle that does not pass through the head with Brent's algorithm
// in O(1) memory, and stops after a bound far above any real kernel's
// lists. A node whose memory the dump lacks breaks the forward walk; the
// nodes behind it are still reachable from the head's prev pointer, so the
// pass collects them backwards (prev->next checked the same way), bounded
// by what is left of the limit, and the walk ends with the fault.
//
// A live kernel's readers follow next pointers under RCU and never look at
// prev (list_del_rcu() leaves a removed node's next intact and poisons its
// prev): a pass does the same, and notes a back link that does not match
// as a change. A pass that meets a change, a fault or a cycle starts again
// (walk.h); the first pass that met nothing is the answer.
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "linux/lib/list.h"
#include "linux/lib/walk.h"
#include "util/error.h"
#include "util/le.h"
#include "util/vec.h"

struct kp_list_iter {
	struct kp_kernel *k;
	const char *what;	// "task list", for messages
	uint64_t head;		// where the walk ends
	uint64_t max;
	bool limited;		// max is the caller's (kp_list_iter_set_limit)
	bool head_is_node;	// head is yielded too (KP_LIST_HEAD_IS_NODE)
	bool single;		// next pointers only (KP_LIST_SINGLE)
	bool collected;
	uint64_t *nodes;	// the pass's nodes, in list order
	size_t n, cap, pos;
	struct kp_lx_walk walk;
};

// How a pass ended.
enum pass {
	PASS_CLEAN,		// back at the head, every link as it should be
	PASS_CHANGED,		// live: back at the head, but a back link moved
	PASS_BROKEN,		// *err says why
};

struct kp_error *kp_lx_list_iter_create(struct kp_kernel *k, uint64_t head, unsigned flags,
					const char *what, struct kp_list_iter **ret)
{
	struct kp_list_iter *it = calloc(1, sizeof(*it));
	if (!it)
		return &kp_enomem;
	it->k = k;
	it->what = what;
	it->head = head;
	it->head_is_node = flags & KP_LIST_HEAD_IS_NODE;
	it->single = flags & KP_LIST_SINGLE;
	it->max = KP_LX_MAX_LIST;
	kp_lx_walk_init(&it->walk, k);
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
	it->limited = true;
}

void kp_list_iter_destroy(struct kp_list_iter *it)
{
	if (!it)
		return;
	free(it->nodes);
	kp_lx_walk_deinit(&it->walk);
	free(it);
}

void kp_list_iter_status(const struct kp_list_iter *it, struct kp_walk_status *ret)
{
	kp_lx_walk_status(&it->walk, ret);
}

static bool push(struct kp_list_iter *it, uint64_t node)
{
	if (!KP_VEC_RESERVE(it->nodes, it->cap, it->n + 1))
		return false;
	it->nodes[it->n++] = node;
	return true;
}

// Past the caller's limit the walk ends at that limit; past the default
// one the list runs away (a cycle the walk cannot tell from length).
static struct kp_error *too_long(struct kp_list_iter *it, uint64_t at, const char *how)
{
	it->walk.at_limit = it->limited;
	return kp_error_create(KP_ERR_LOOP, "%s does not end after %" PRIu64 " entries (at 0x%" PRIx64 "%s)",
			       it->what, it->max, at, how);
}

// After the forward pass broke at missing (a dump): the nodes from the
// head's prev back to the one after the missing node, each checked against
// the one after it (node->next must be it), appended in list order. Stops
// at a second gap (the fault at missing stays the walk's error) or at a
// link that does not point back (corrupt: that is the error then); the
// nodes collected are kept either way.
static struct kp_error *collect_tail(struct kp_list_iter *it, uint64_t head_prev,
				     uint64_t missing, uint64_t last)
{
	size_t from = it->n;
	uint64_t after = it->head, node = head_prev;
	struct kp_error *err = NULL;
	while (node != missing && node != last && node != it->head && node) {
		if (it->n >= it->max) {
			err = too_long(it, node, ", read backwards");
			break;
		}
		uint8_t b[16];
		if (!kp_ok(kp_read(it->k, KP_VIRT, node, b, 16)))
			break;
		if (kp_le64(b) != after) {
			err = kp_error_create(KP_ERR_FORMAT,
					      "%s is corrupt: 0x%" PRIx64 "'s prev pointer is 0x%" PRIx64 ", whose next pointer is 0x%" PRIx64,
					      it->what, after, node, kp_le64(b));
			break;
		}
		if (!push(it, node))
			return &kp_enomem;
		after = node;
		node = kp_le64(b + 8);
	}
	// Collected from the end backwards: put them in list order.
	for (size_t i = from, j = it->n ? it->n - 1 : 0; i < j; i++, j--) {
		uint64_t t = it->nodes[i];
		it->nodes[i] = it->nodes[j];
		it->nodes[j] = t;
	}
	return err;
}

// One pass from the head, collecting nodes into it->nodes.
static enum pass pass(struct kp_list_iter *it, struct kp_error **err)
{
	bool live = it->walk.live, changed = false;
	uint8_t b[16] = { 0 };
	it->n = 0;
	if ((*err = kp_read(it->k, KP_VIRT, it->head, b, it->single ? 8 : 16))) {
		*err = kp_error_prefix(*err, "%s: reading the list head at 0x%" PRIx64, it->what, it->head);
		return PASS_BROKEN;
	}
	uint64_t head_prev = kp_le64(b + 8);
	uint64_t node = it->head_is_node ? it->head : kp_le64(b);
	uint64_t prev = it->head_is_node ? head_prev : it->head;
	struct kp_lx_loop loop;
	kp_lx_loop_init(&loop, it->head);
	bool started = false;
	for (;;) {
		if ((node == it->head && (started || !it->head_is_node)) || (!node && it->single)) {
			// Back at the head: the last node must be what head->prev says.
			if (!it->single && head_prev != prev) {
				if (live)
					return PASS_CHANGED;
				*err = kp_error_create(KP_ERR_FORMAT,
						       "%s is corrupt: it returns to the head 0x%" PRIx64
						       " from 0x%" PRIx64 ", but head->prev is 0x%" PRIx64,
						       it->what, it->head, prev, head_prev);
				return PASS_BROKEN;
			}
			return changed ? PASS_CHANGED : PASS_CLEAN;
		}
		if (!node) {
			*err = kp_error_create(KP_ERR_FORMAT, "%s is corrupt: node 0x%" PRIx64 " has a NULL next pointer",
					       it->what, prev);
			return PASS_BROKEN;
		}
		if (it->n >= it->max) {
			*err = too_long(it, node, "");
			return PASS_BROKEN;
		}
		if ((*err = kp_read(it->k, KP_VIRT, node, b, it->single ? 8 : 16))) {
			*err = kp_error_prefix(*err, "%s: reading the node at 0x%" PRIx64 " (after 0x%" PRIx64 ")",
					       it->what, node, prev);
			if (!live && !it->single && (*err)->code == KP_ERR_FAULT) {
				struct kp_error *tail = collect_tail(it, head_prev, node, prev);
				if (tail) {
					kp_error_destroy(*err);
					*err = tail;
				}
			}
			return PASS_BROKEN;
		}
		uint64_t next = kp_le64(b), back = kp_le64(b + 8);
		if (!it->single && back != prev) {
			if (!live) {
				*err = kp_error_create(KP_ERR_FORMAT,
						       "%s is corrupt: 0x%" PRIx64 " points to 0x%" PRIx64
						       ", whose prev pointer is 0x%" PRIx64 " (a link into the middle of a node, or an unlinked one)",
						       it->what, prev, node, back);
				return PASS_BROKEN;
			}
			changed = true;	// removed or inserted under the pass
		}
		// With the back links checked a cycle can only be a singly linked
		// list's (or a live one's); checked after them, so that a doubly
		// linked list's says which link is wrong.
		if (started && kp_lx_loop_step(&loop, node)) {
			*err = kp_error_create(KP_ERR_LOOP, "%s does not end after %zu entries (loop at 0x%" PRIx64 ")",
					       it->what, it->n, node);
			return PASS_BROKEN;
		}
		if (!push(it, node)) {
			*err = &kp_enomem;
			return PASS_BROKEN;
		}
		started = true;
		prev = node;
		node = next;
	}
}

// The walk's passes: one in a dump, until one meets no change on a live
// kernel. The nodes are the last pass's.
static void collect(struct kp_list_iter *it)
{
	it->collected = true;
	for (;;) {
		struct kp_error *err = NULL;
		enum pass p = pass(it, &err);
		if (p == PASS_CLEAN)
			return;
		if (err && err->code == KP_ERR_NOMEM) {
			kp_lx_walk_stop(&it->walk, err);
			return;
		}
		if (kp_lx_walk_restart(&it->walk)) {
			kp_error_destroy(err);
			continue;
		}
		if (p == PASS_CHANGED)
			kp_lx_walk_changed(&it->walk);
		else
			kp_lx_walk_stop(&it->walk, err);
		return;
	}
}

struct kp_error *kp_list_iter_next(struct kp_list_iter *it, uint64_t *node_ret, bool *done_ret)
{
	if (!it->collected)
		collect(it);
	if (it->pos < it->n) {
		*node_ret = it->nodes[it->pos++];
		*done_ret = false;
		return NULL;
	}
	*done_ret = true;
	return kp_lx_walk_finish(&it->walk);
}
