// SPDX-License-Identifier: MIT
// kp_slab_iter: the SLUB caches of slab_caches as /proc/slabinfo 2.1 shows
// them (mm/slub.c get_slabinfo()): per cache, over its kmem_cache_nodes,
// nr_slabs and total_objects (CONFIG_SLUB_DEBUG counters), and the free
// objects of the slabs on each node's partial list (objects - inuse);
// geometry from s->size and s->oo (order << 16 | objects). Slabs are
// struct slab since 5.17 (d122019bf061), struct page before: the same
// member names (slab_list, inuse, objects), which BTF places.
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "core/kernel.h"
#include "core/layout.h"
#include "linux/lib/list.h"
#include "linux/lib/walk.h"
#include "linux/mm/mm.h"
#include "util/error.h"

#define OO_SHIFT 16	// mm/slub.c
#define MAX_NODES 1024	// MAX_NUMNODES
#define NAME_MAX 64

enum { C_NAME, C_SIZE, C_OO, C_NODE, C_NODE1, C_LIST, C_N };
static const struct kp_member_spec cache_members[C_N] = {
	[C_NAME] = { .name = "name" },
	[C_SIZE] = { .name = "size" },
	[C_OO] = { .name = "oo" },
	// node[MAX_NUMNODES] of pointers, or (7.x, with the sheaves' barns)
	// per_node[MAX_NUMNODES] of structs holding the pointer as .node: the
	// second element's place gives the stride.
	[C_NODE] = { .name = "per_node[0].node|node", .flags = KP_MEMBER_NOSPAN },
	[C_NODE1] = { .name = "per_node[1].node", .flags = KP_MEMBER_NOSPAN | KP_MEMBER_OPTIONAL },
	[C_LIST] = { .name = "list", .flags = KP_MEMBER_NOSPAN },
};
static const struct kp_struct_spec cache_spec = KP_STRUCT_SPEC("struct kmem_cache", cache_members);
enum { N_NR_SLABS, N_TOTAL, N_PARTIAL, N_NR_PARTIAL, N_N };
static const struct kp_member_spec node_members[N_N] = {
	[N_NR_SLABS] = { .name = "nr_slabs" },
	[N_TOTAL] = { .name = "total_objects" },
	[N_PARTIAL] = { .name = "partial", .flags = KP_MEMBER_NOSPAN },
	[N_NR_PARTIAL] = { .name = "nr_partial" },
};
static const struct kp_struct_spec node_spec = KP_STRUCT_SPEC("struct kmem_cache_node", node_members);
enum { S_LIST, S_INUSE, S_OBJECTS, S_N };
static const struct kp_member_spec slab_members[S_N] = {
	[S_LIST] = { .name = "slab_list", .flags = KP_MEMBER_NOSPAN },
	[S_INUSE] = { .name = "inuse" },
	[S_OBJECTS] = { .name = "objects" },
};
static const struct kp_struct_spec slab_spec = KP_STRUCT_SPEC_OPTIONAL("struct slab", slab_members);
static const struct kp_struct_spec page_spec = KP_STRUCT_SPEC("struct page", slab_members);

struct kp_slab_iter {
	struct kp_kernel *k;
	const struct kp_struct_layout *cl, *nl, *sl;
	uint32_t nodes;			// nr_node_ids
	struct kp_list_iter *list;
	struct kp_slab_cache cache;
	char name[NAME_MAX];
	struct kp_lx_walk walk;
};

// The free objects of the slabs on a node's partial list.
static struct kp_error *partial_free(struct kp_slab_iter *it, uint64_t node, uint64_t nr_partial,
				     uint64_t *ret)
{
	const struct kp_struct_layout *l = it->sl;
	struct kp_list_iter *list;
	uint64_t at, free = 0;
	bool done;
	struct kp_error *err = kp_lx_list_iter_create(it->k, node + kp_layout_off(it->nl, N_PARTIAL), 0,
						      "slab partial list", &list);
	if (err)
		return err;
	kp_list_iter_set_limit(list, nr_partial + 1);
	while (!(err = kp_list_iter_next(list, &at, &done)) && !done) {
		uint8_t buf[64];
		uint64_t slab = at - kp_layout_off(l, S_LIST);
		if ((err = kp_kernel_read_struct(it->k, l, slab, buf, sizeof(buf))))
			break;
		uint64_t objects = kp_layout_u64(l, buf, S_OBJECTS), inuse = kp_layout_u64(l, buf, S_INUSE);
		if (inuse > objects) {
			err = kp_error_create(KP_ERR_FORMAT, "slab at 0x%" PRIx64 ": %" PRIu64 " objects in use of %"
					      PRIu64 " (corrupt?)", slab, inuse, objects);
			break;
		}
		free += objects - inuse;
	}
	kp_list_iter_destroy(list);
	if (!err)
		*ret = free;
	return err;
}

static struct kp_error *decode(struct kp_slab_iter *it, uint64_t cache)
{
	const struct kp_struct_layout *l = it->cl;
	uint8_t buf[512];
	struct kp_error *err = kp_kernel_read_struct(it->k, l, cache, buf, sizeof(buf));
	if (err)
		return err;
	struct kp_slab_cache *c = &it->cache;
	memset(c, 0, sizeof(*c));
	c->address = cache;
	if ((err = kp_read_cstr(it->k, kp_layout_u64(l, buf, C_NAME), it->name, sizeof(it->name))))
		return kp_error_prefix(err, "the name of kmem_cache 0x%" PRIx64, cache);
	c->name = it->name;
	c->objsize = (uint32_t)kp_layout_u64(l, buf, C_SIZE);
	uint32_t oo = (uint32_t)kp_layout_u64(l, buf, C_OO);
	c->objperslab = oo & ((1u << OO_SHIFT) - 1);
	c->pagesperslab = 1u << (oo >> OO_SHIFT > 20 ? 20 : oo >> OO_SHIFT);
	uint64_t nr_objs = 0, nr_free = 0;
	uint64_t stride = l->m[C_NODE].alt == 0 && kp_layout_has(l, C_NODE1)
				  ? kp_layout_off(l, C_NODE1) - kp_layout_off(l, C_NODE) : 8;
	for (uint32_t n = 0; n < it->nodes; n++) {
		uint64_t node, nbuf[16];
		if ((err = kp_read_u64(it->k, cache + kp_layout_off(l, C_NODE) + n * stride, &node)))
			return kp_error_prefix(err, "kmem_cache %s", it->name);
		if (!node)
			continue;
		if ((err = kp_kernel_read_struct(it->k, it->nl, node, nbuf, sizeof(nbuf))))
			return kp_error_prefix(err, "kmem_cache %s", it->name);
		uint64_t free;
		if ((err = partial_free(it, node, kp_layout_u64(it->nl, nbuf, N_NR_PARTIAL), &free)))
			return kp_error_prefix(err, "kmem_cache %s", it->name);
		c->num_slabs += kp_layout_u64(it->nl, nbuf, N_NR_SLABS);
		nr_objs += kp_layout_u64(it->nl, nbuf, N_TOTAL);
		nr_free += free;
	}
	c->num_objs = nr_objs;
	c->active_objs = nr_free > nr_objs ? 0 : nr_objs - nr_free;
	c->active_slabs = c->num_slabs;
	return NULL;
}

struct kp_error *kp_slab_iter_create(struct kp_kernel *k, struct kp_slab_iter **ret)
{
	struct kp_symbol sym, nr;
	struct kp_slab_iter *it = calloc(1, sizeof(*it));
	if (!it)
		return &kp_enomem;
	it->k = k;
	kp_lx_walk_init(&it->walk, k);
	uint32_t nodes = 1;
	struct kp_error *err = NULL;
	if (!kp_symbol_find(k, "slab_caches", &sym))
		err = kp_kernel_no_symbol(k, "no symbol 'slab_caches'");
	if (!err && !(err = kp_kernel_layout(k, &cache_spec, &it->cl)) &&
	    !(err = kp_kernel_layout(k, &node_spec, &it->nl)) && !(err = kp_kernel_layout(k, &slab_spec, &it->sl)) &&
	    !it->sl->present)
		err = kp_kernel_layout(k, &page_spec, &it->sl);
	if (!err && kp_symbol_find(k, "nr_node_ids", &nr) && (err = kp_read_u32(k, nr.address, &nodes)))
		err = kp_error_prefix(err, "nr_node_ids");
	if (!err && (nodes == 0 || nodes > MAX_NODES))
		err = kp_error_create(KP_ERR_FORMAT, "nr_node_ids is %u (corrupt?)", nodes);
	if (!err)
		err = kp_lx_list_iter_create(k, sym.address, 0, "slab_caches", &it->list);
	if (err) {
		kp_slab_iter_destroy(it);
		return err;
	}
	it->nodes = nodes;
	*ret = it;
	return NULL;
}

struct kp_error *kp_slab_iter_next(struct kp_slab_iter *it, const struct kp_slab_cache **ret)
{
	*ret = NULL;
	for (;;) {
		uint64_t node;
		bool done;
		struct kp_error *err = kp_list_iter_next(it->list, &node, &done);
		if (err) {
			kp_lx_walk_stop(&it->walk, err);
			break;
		}
		if (done)
			break;
		if (!(err = decode(it, node - kp_layout_off(it->cl, C_LIST)))) {
			*ret = &it->cache;
			return NULL;
		}
		if ((err = kp_lx_walk_unreadable(&it->walk, err)))
			return err;
	}
	return kp_lx_walk_finish(&it->walk);
}

void kp_slab_iter_status(const struct kp_slab_iter *it, struct kp_walk_status *ret)
{
	kp_lx_walk_status(&it->walk, ret);
}

void kp_slab_iter_destroy(struct kp_slab_iter *it)
{
	if (!it)
		return;
	kp_list_iter_destroy(it->list);
	kp_lx_walk_deinit(&it->walk);
	free(it);
}
