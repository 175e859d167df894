// SPDX-License-Identifier: MIT
// The maple tree walker (lib/maple_tree.c, 6.1+: the VMAs of an mm_struct).
//
// struct maple_tree { ..., void *ma_root; unsigned int ma_flags; }: ma_root
// is NULL, one entry (the range 0..0), or an internal node pointer: an
// encoded node ("enode") tagged as xarray internal (low bits 10). An enode
// is the node's address (nodes are 256-byte aligned) with the node type in
// bits 3..6: maple_dense 0, maple_leaf_64 1, maple_range_64 2,
// maple_arange_64 3 (enum maple_type); dense and leaf nodes are leaves.
// A range_64 node (leaf or not) has pivot[15] and slot[16], an arange_64
// node pivot[9], slot[10] and gap[10] (BTF gives where they are): slot i
// covers the indexes from the previous pivot + 1 to pivot[i], the last slot
// up to the node's own maximum, and a pivot of 0 after the first slot ends
// the node's data. A non-leaf slot is a child enode.
#include <inttypes.h>
#include <string.h>

#include "core/layout.h"
#include "linux/lib/maple.h"
#include "util/error.h"
#include "util/le.h"

#define NODE_MASK 0xffULL	// MAPLE_NODE_MASK: nodes are 256-byte aligned
#define TYPE_SHIFT 3		// MAPLE_NODE_TYPE_SHIFT
#define TYPE_MASK 0xfULL
enum { DENSE, LEAF_64, RANGE_64, ARANGE_64 };
#define MAX_HEIGHT 31		// MAPLE_HEIGHT_MAX
#define MAX_SLOTS 32

static const struct kp_member_spec tree_members[] = { { .name = "ma_root" } };
static const struct kp_struct_spec tree_spec = KP_STRUCT_SPEC("struct maple_tree", tree_members);
enum { R_PIVOT, R_SLOT, R_N };
static const struct kp_member_spec range_members[R_N] = {
	[R_PIVOT] = { .name = "pivot" }, [R_SLOT] = { .name = "slot" },
};
static const struct kp_struct_spec range_spec = KP_STRUCT_SPEC("struct maple_range_64", range_members);
static const struct kp_struct_spec arange_spec = KP_STRUCT_SPEC("struct maple_arange_64", range_members);
enum { N_MR64, N_MA64, N_N };
static const struct kp_member_spec node_members[N_N] = {
	[N_MR64] = { .name = "mr64" }, [N_MA64] = { .name = "ma64" },
};
static const struct kp_struct_spec node_spec = KP_STRUCT_SPEC("struct maple_node", node_members);

struct walk {
	struct kp_kernel *k;
	const struct kp_struct_layout *tree, *range, *arange, *node;
	kp_lx_mt_fn *fn;
	void *arg;
	uint64_t nodes, max_nodes;
};

static bool is_node(uint64_t entry)
{
	return (entry & 3) == 2 && entry > 4096;
}

// Where node type's pivots and slots are, and how many (from BTF).
static void geometry(const struct walk *w, unsigned type, uint64_t *pivots, unsigned *npivots,
		     uint64_t *slots, unsigned *nslots)
{
	const struct kp_struct_layout *l = type == ARANGE_64 ? w->arange : w->range;
	uint64_t base = kp_layout_off(w->node, type == ARANGE_64 ? N_MA64 : N_MR64);
	*pivots = base + kp_layout_off(l, R_PIVOT);
	*npivots = (unsigned)(l->m[R_PIVOT].size / 8);
	*slots = base + kp_layout_off(l, R_SLOT);
	*nslots = (unsigned)(l->m[R_SLOT].size / 8);
}

static struct kp_error *walk_node(struct walk *w, uint64_t enode, uint64_t min, uint64_t max,
				  int depth)
{
	uint64_t node = enode & ~NODE_MASK;
	unsigned type = (unsigned)(enode >> TYPE_SHIFT & TYPE_MASK);
	// depth counts from 0 at the root: MAX_HEIGHT levels are depths
	// 0..MAX_HEIGHT - 1 (the kernel's height counts a root leaf as 1).
	if (depth >= MAX_HEIGHT || ++w->nodes > w->max_nodes)
		return kp_error_create(KP_ERR_LOOP, "maple tree: deeper than %d or more than %" PRIu64 " nodes (corrupt?) at node 0x%" PRIx64,
				       MAX_HEIGHT, w->max_nodes, node);
	if (type != LEAF_64 && type != RANGE_64 && type != ARANGE_64)
		return kp_error_create(KP_ERR_FORMAT, "maple tree: node 0x%" PRIx64 " of type %u (corrupt?)", node, type);
	uint64_t poff, soff;
	unsigned np, ns;
	geometry(w, type, &poff, &np, &soff, &ns);
	if (ns == 0 || ns > MAX_SLOTS || np >= ns)
		return kp_error_create(KP_ERR_UNSUPPORTED, "maple tree: %u slots, %u pivots", ns, np);
	uint8_t piv[MAX_SLOTS * 8], slot[MAX_SLOTS * 8];
	struct kp_error *err;
	if ((err = kp_read(w->k, KP_VIRT, node + poff, piv, np * 8)) ||
	    (err = kp_read(w->k, KP_VIRT, node + soff, slot, ns * 8)))
		return kp_error_prefix(err, "maple tree node 0x%" PRIx64, node);
	uint64_t lo = min;
	for (unsigned i = 0; i < ns; i++) {
		uint64_t hi = i < np ? kp_le64(piv + 8 * i) : max;
		if (i && i < np && hi == 0)
			break;	// the end of the node's data
		if (hi < lo || hi > max)
			return kp_error_create(KP_ERR_FORMAT, "maple tree node 0x%" PRIx64 ": pivot %u is 0x%" PRIx64
					       ", outside 0x%" PRIx64 "-0x%" PRIx64 " (corrupt?)", node, i, hi, lo, max);
		uint64_t entry = kp_le64(slot + 8 * i);
		if (entry && type == LEAF_64)
			err = w->fn(lo, hi, entry, w->arg);
		else if (entry)
			err = walk_node(w, entry, lo, hi, depth + 1);
		if (err)
			return err;
		if (hi == max)
			break;
		lo = hi + 1;
	}
	return NULL;
}

struct kp_error *kp_lx_mt_walk(struct kp_kernel *k, uint64_t tree, uint64_t max_entries,
			       kp_lx_mt_fn *fn, void *arg)
{
	static const struct kp_struct_spec *const specs[] = { &tree_spec, &range_spec, &arange_spec,
							       &node_spec };
	const struct kp_struct_layout *l[4];
	struct kp_error *err = kp_kernel_layouts(k, specs, 4, l);
	if (err)
		return kp_error_prefix(err, "maple tree");
	// A node holds at least two entries: a tree of n entries has fewer
	// than n nodes; twice that is still bounded by what it holds.
	struct walk w = { k, l[0], l[1], l[2], l[3], fn, arg, 0, 2 * max_entries + 16 };
	uint64_t root;
	if ((err = kp_read_u64(k, tree + kp_layout_off(w.tree, 0), &root)))
		return kp_error_prefix(err, "maple tree at 0x%" PRIx64, tree);
	if (!root)
		return NULL;
	if (!is_node(root))
		return fn(0, 0, root, arg);	// a single entry at index 0
	return walk_node(&w, root & ~2ULL, 0, UINT64_MAX, 0);
}
