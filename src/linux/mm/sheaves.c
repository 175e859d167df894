// SPDX-License-Identifier: MIT
// The free objects a SLUB cache keeps in sheaves (mm/slub.c, 6.18+ for
// caches that asked for them, 7.0+ for every cache: "slab: replace cpu
// (partial) slabs with sheaves"): arrays of object pointers, each CPU's
// main and spare sheaf (struct slub_percpu_sheaves, per CPU at
// s->cpu_sheaves) and the full sheaves of each node's barn
// (s->per_node[n].barn->sheaves_full, linked through barn_list). Their
// objects are free to the allocator although their slab counts them in
// use, as /proc/slabinfo does. The rcu_free sheaf holds objects waiting
// for an RCU grace period: not free yet.
//
// Bounds: a sheaf at most s->sheaf_capacity (at most 65536) objects; a
// barn's list at most its nr_full + 1 sheaves; 1024 nodes.
#include <inttypes.h>
#include <stdlib.h>

#include "core/kernel.h"
#include "core/layout.h"
#include "linux/lib/list.h"
#include "linux/mm/mm.h"
#include "util/error.h"

#define MAX_CAPACITY 65536
#define MAX_NODES 1024

enum { C_SHEAVES, C_CAPACITY, C_BARN, C_BARN1, C_N };
static const struct kp_member_spec cache_members[C_N] = {
	[C_SHEAVES] = { .name = "cpu_sheaves", .flags = KP_MEMBER_OPTIONAL },
	[C_CAPACITY] = { .name = "sheaf_capacity", .flags = KP_MEMBER_OPTIONAL },
	[C_BARN] = { .name = "per_node[0].barn", .flags = KP_MEMBER_NOSPAN | KP_MEMBER_OPTIONAL },
	[C_BARN1] = { .name = "per_node[1].barn", .flags = KP_MEMBER_NOSPAN },
};
static const struct kp_struct_spec cache_spec = KP_STRUCT_SPEC_OPTIONAL("struct kmem_cache", cache_members);
enum { P_MAIN, P_SPARE, P_N };
static const struct kp_member_spec pcs_members[P_N] = {
	[P_MAIN] = { .name = "main" },
	[P_SPARE] = { .name = "spare" },
};
static const struct kp_struct_spec pcs_spec = KP_STRUCT_SPEC("struct slub_percpu_sheaves", pcs_members);
enum { S_LIST, S_SIZE, S_OBJECTS, S_N };
static const struct kp_member_spec sheaf_members[S_N] = {
	[S_LIST] = { .name = "barn_list", .flags = KP_MEMBER_NOSPAN },
	[S_SIZE] = { .name = "size" },
	[S_OBJECTS] = { .name = "objects", .flags = KP_MEMBER_NOSPAN },
};
static const struct kp_struct_spec sheaf_spec = KP_STRUCT_SPEC("struct slab_sheaf", sheaf_members);
enum { B_FULL, B_NR_FULL, B_N };
static const struct kp_member_spec barn_members[B_N] = {
	[B_FULL] = { .name = "sheaves_full", .flags = KP_MEMBER_NOSPAN },
	[B_NR_FULL] = { .name = "nr_full" },
};
static const struct kp_struct_spec barn_spec = KP_STRUCT_SPEC("struct node_barn", barn_members);

struct objs {
	uint64_t *v;
	size_t n, cap;
};

static struct kp_error *sheaf(struct kp_kernel *k, const struct kp_struct_layout *sl, uint64_t at, uint32_t capacity,
			      struct objs *o)
{
	uint8_t buf[64];
	struct kp_error *err = kp_kernel_read_struct(k, sl, at, buf, sizeof(buf));
	if (err)
		return kp_error_prefix(err, "slab_sheaf");
	uint64_t size = kp_layout_u64(sl, buf, S_SIZE);
	if (size > capacity)
		return kp_error_create(KP_ERR_FORMAT, "slab_sheaf 0x%" PRIx64 " holds %" PRIu64 " objects, its cache's "
				       "sheaves %u (corrupt?)", at, size, capacity);
	if (o->n + size > o->cap) {
		size_t cap = (o->n + size) * 2;
		uint64_t *v = realloc(o->v, cap * sizeof(*v));
		if (!v)
			return &kp_enomem;
		o->v = v;
		o->cap = cap;
	}
	if (size && (err = kp_read(k, KP_VIRT, at + kp_layout_off(sl, S_OBJECTS), o->v + o->n, size * 8)))
		return kp_error_prefix(err, "the objects of slab_sheaf 0x%" PRIx64, at);
	o->n += size;
	return NULL;
}

static struct kp_error *barn(struct kp_kernel *k, const struct kp_struct_layout *sl, uint64_t at, uint32_t capacity,
			     struct objs *o)
{
	const struct kp_struct_layout *bl;
	uint8_t buf[64];
	struct kp_list_iter *it;
	uint64_t node;
	bool done;
	struct kp_error *err = kp_kernel_layout(k, &barn_spec, &bl);
	if (err || (err = kp_kernel_read_struct(k, bl, at, buf, sizeof(buf))) ||
	    (err = kp_lx_list_iter_create(k, at + kp_layout_off(bl, B_FULL), 0, "node_barn sheaves_full", &it)))
		return err;
	kp_list_iter_set_limit(it, kp_layout_u64(bl, buf, B_NR_FULL) + 1);
	while (!(err = kp_list_iter_next(it, &node, &done)) && !done)
		if ((err = sheaf(k, sl, node - kp_layout_off(sl, S_LIST), capacity, o)))
			break;
	kp_list_iter_destroy(it);
	return err;
}

static int cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static struct kp_error *collect(struct kp_kernel *k, uint64_t cache, struct objs *o)
{
	const struct kp_struct_layout *cl, *pl, *sl;
	uint8_t cbuf[512];
	uint64_t moff, msize;
	// No sheaves before 6.18 (and no per_node array for the spec's paths).
	if (!kp_kernel_member_probe(k, "struct kmem_cache", "cpu_sheaves", &moff, &msize))
		return NULL;
	struct kp_error *err = kp_kernel_layout(k, &cache_spec, &cl);
	if (err || !cl->present || !kp_layout_has(cl, C_SHEAVES) || !kp_layout_has(cl, C_BARN))
		return err;
	if ((err = kp_kernel_read_struct(k, cl, cache, cbuf, sizeof(cbuf))))
		return err;
	uint64_t pcs = kp_layout_u64(cl, cbuf, C_SHEAVES);
	uint32_t capacity = (uint32_t)kp_layout_u64(cl, cbuf, C_CAPACITY);
	if (!pcs || !capacity)
		return NULL;	// a cache without sheaves (6.18-6.19: most)
	if (capacity > MAX_CAPACITY)
		return kp_error_create(KP_ERR_FORMAT, "sheaf_capacity %u (corrupt?)", capacity);
	if ((err = kp_kernel_layout(k, &pcs_spec, &pl)) || (err = kp_kernel_layout(k, &sheaf_spec, &sl)))
		return err;
	uint32_t n = kp_kernel_nr_cpu_ids(k);
	for (uint32_t cpu = 0; cpu < n; cpu++) {
		uint8_t buf[64];
		bool possible;
		if ((err = kp_kernel_read_per_cpu_struct(k, pl, pcs, cpu, buf, sizeof(buf), &possible)))
			return kp_error_prefix(err, "CPU %u's sheaves", cpu);
		if (!possible)
			continue;
		for (unsigned m = P_MAIN; m <= P_SPARE; m++) {
			uint64_t at = kp_layout_u64(pl, buf, m);
			if (at && (err = sheaf(k, sl, at, capacity, o)))
				return kp_error_prefix(err, "CPU %u's sheaves", cpu);
		}
	}
	struct kp_symbol nr;
	uint32_t nodes = 1;
	if (kp_symbol_find(k, "nr_node_ids", &nr) && (err = kp_read_u32(k, nr.address, &nodes)))
		return kp_error_prefix(err, "nr_node_ids");
	if (nodes > MAX_NODES)
		return kp_error_create(KP_ERR_FORMAT, "nr_node_ids is %u (corrupt?)", nodes);
	uint64_t stride = kp_layout_has(cl, C_BARN1) ? kp_layout_off(cl, C_BARN1) - kp_layout_off(cl, C_BARN) : 0;
	for (uint32_t node = 0; node < nodes && (node == 0 || stride); node++) {
		uint64_t b;
		if ((err = kp_read_u64(k, cache + kp_layout_off(cl, C_BARN) + node * stride, &b)))
			return kp_error_prefix(err, "the barn of node %u", node);
		if (b && (err = barn(k, sl, b, capacity, o)))
			return kp_error_prefix(err, "the barn of node %u", node);
	}
	return NULL;
}

struct kp_error *kp_lx_sheaf_objects(struct kp_kernel *k, uint64_t cache, uint64_t **ret, size_t *n_ret)
{
	struct objs o = { 0 };
	struct kp_error *err = collect(k, cache, &o);
	if (err) {
		free(o.v);
		return err == &kp_enomem ? err : kp_error_prefix(err, "the sheaves of kmem_cache 0x%" PRIx64, cache);
	}
	if (o.n)
		qsort(o.v, o.n, sizeof(*o.v), cmp);
	*ret = o.v;
	*n_ret = o.n;
	return NULL;
}

bool kp_lx_sheaf_has(const uint64_t *objects, size_t n, uint64_t object)
{
	return n && bsearch(&object, objects, n, sizeof(*objects), cmp);
}
