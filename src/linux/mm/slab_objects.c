// SPDX-License-Identifier: MIT
// kp_slab_object_iter: every object of one SLUB cache, allocated or free
// (crash's kmem -S, drgn's slab_cache_for_each_allocated_object()).
//
// The slabs are found in the memory map, as drgn finds them: without SLUB
// debugging a full slab is on no list (mm/slub.c keeps only partial slabs
// on kmem_cache_node.partial and the CPUs' slabs in kmem_cache_cpu), so
// every page frame of the source is visited once and a head page that is
// a slab (page_type_is slab: PG_slab until 6.9, the page type after) whose
// slab_cache is the cache is one of its slabs. struct page is read 64 at a
// time (the memory map is contiguous within a memory section, and sections
// hold at least 2^15 pages). An object is free when it is on the slab's
// freelist or the freelist of a CPU whose slab it is (slab_object.c), or
// in one of the cache's sheaves (7.x, sheaves.c).
//
// Bounds: the page frames of the source's physical ranges, each once; a
// slab holds at most its cache's oo objects (else it is not the cache's
// slab: corrupt); each freelist at most the slab's objects entries.
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "core/kernel.h"
#include "core/layout.h"
#include "linux/lib/walk.h"
#include "linux/mm/mm.h"
#include "util/error.h"

#define CHUNK 64	// struct pages read at once; a power of two below a section

enum { P_FLAGS, P_HEAD, P_TYPE, P_N };
static const struct kp_member_spec page_members[P_N] = {
	[P_FLAGS] = { .name = "flags" },
	// compound_info from 7.1: bit 0 still says a tail page (page.c).
	[P_HEAD] = { .name = "compound_head|compound_info" },
	// 4.18+ (6e292b9be7f4).
	[P_TYPE] = { .name = "page_type", .flags = KP_MEMBER_OPTIONAL },
};
static const struct kp_struct_spec page_spec = KP_STRUCT_SPEC("struct page", page_members);
enum { S_CACHE, S_FREELIST, S_OBJECTS, S_N };
static const struct kp_member_spec slab_members[S_N] = {
	[S_CACHE] = { .name = "slab_cache" },
	[S_FREELIST] = { .name = "freelist" },
	[S_OBJECTS] = { .name = "objects" },
};
// struct slab since 5.17 (d122019bf061), the same members in struct page before.
static const struct kp_struct_spec slab_spec = KP_STRUCT_SPEC_OPTIONAL("struct slab", slab_members);
static const struct kp_struct_spec page_slab_spec = KP_STRUCT_SPEC("struct page", slab_members);

struct kp_slab_object_iter {
	struct kp_kernel *k;
	const struct kp_struct_layout *pl, *sl;
	struct kp_lx_type_test is_slab;
	struct kp_lx_slab_cache cache;
	uint64_t page_struct, page_size;
	const struct kp_range *ranges;
	size_t nranges, range;
	uint64_t pfn, next_pfn;		// the next page frame to look at
	uint8_t *chunk;			// CHUNK struct pages from chunk_pfn
	uint64_t chunk_pfn;
	bool chunk_ok;
	uint8_t *map;			// the current slab's free objects
	uint64_t *sheaved;		// the objects free in sheaves (7.x), sorted
	size_t nsheaved;
	struct kp_slab_object obj;	// the current slab's last object yielded
	uint32_t next;			// its next slot
	uint64_t base;			// its first byte
	bool in_slab;
	struct kp_lx_walk walk;
};

static struct kp_error *find_cache(struct kp_kernel *k, const char *name, uint64_t *ret)
{
	struct kp_slab_iter *it;
	const struct kp_slab_cache *c;
	struct kp_error *err = kp_slab_iter_create(k, &it);
	if (err)
		return err;
	while (!(err = kp_slab_iter_next(it, &c)) && c)
		if (!strcmp(c->name, name))
			break;
	if (!err && c)
		*ret = c->address;
	else if (!err)
		err = kp_error_create(KP_ERR_NOT_FOUND, "no slab cache named '%s' on slab_caches", name);
	kp_slab_iter_destroy(it);
	return err;
}

struct kp_error *kp_slab_object_iter_create(struct kp_kernel *k, const char *name, uint64_t cache,
					    struct kp_slab_object_iter **ret)
{
	struct kp_slab_object_iter *it = calloc(1, sizeof(*it));
	if (!it)
		return &kp_enomem;
	it->k = k;
	kp_lx_walk_init(&it->walk, k);
	it->page_size = kp_kernel_page_size(k);
	it->page_struct = kp_lx_page_struct_size(k);
	struct kp_error *err = NULL;
	if (name)
		err = find_cache(k, name, &cache);
	if (!err && !(err = kp_kernel_layout(k, &page_spec, &it->pl)) &&
	    !(err = kp_kernel_layout(k, &slab_spec, &it->sl)) && !it->sl->present)
		err = kp_kernel_layout(k, &page_slab_spec, &it->sl);
	if (!err && (!it->page_struct || it->pl->hi > it->page_struct || it->sl->hi > it->page_struct))
		err = kp_error_create(KP_ERR_UNSUPPORTED, "slab objects need the memory map (struct page), which "
				      "the source does not describe");
	if (!err)
		err = kp_lx_slab_cache_read(k, cache, &it->cache);
	if (!err && !(it->chunk = malloc(CHUNK * it->page_struct)))
		err = &kp_enomem;
	if (!err)
		err = kp_lx_sheaf_objects(k, it->cache.cache, &it->sheaved, &it->nsheaved);
	if (err) {
		kp_slab_object_iter_destroy(it);
		return err;
	}
	kp_lx_page_type_test(k, "slab", &it->is_slab);
	it->nranges = kp_kernel_ranges(k, KP_PHYS, &it->ranges);
	if (it->nranges)
		it->pfn = it->ranges[0].start / it->page_size;
	*ret = it;
	return NULL;
}

void kp_slab_object_iter_cache(const struct kp_slab_object_iter *it, uint64_t *cache_ret, const char **name_ret,
			       uint32_t *object_size_ret, uint32_t *slot_size_ret)
{
	*cache_ret = it->cache.cache;
	*name_ret = it->cache.name;
	*object_size_ret = it->cache.object_size;
	*slot_size_ret = (uint32_t)it->cache.size;
}

// The struct page of pfn from the chunk that holds it (read on the way);
// NULL when there is none: no memory map there, or it cannot be read.
static const uint8_t *page_of(struct kp_slab_object_iter *it, uint64_t pfn, struct kp_error **err_ret)
{
	uint64_t first = pfn & ~(uint64_t)(CHUNK - 1), page;
	*err_ret = NULL;
	if (first != it->chunk_pfn || !it->chunk_ok) {
		struct kp_error *err = kp_lx_pfn_to_page(it->k, first, &page);
		it->chunk_pfn = first;
		it->chunk_ok = !err && kp_ok(kp_read(it->k, KP_VIRT, page, it->chunk, CHUNK * it->page_struct));
		if (err && kp_error_code(err) != KP_ERR_NOT_FOUND)
			*err_ret = err;
		else
			kp_error_destroy(err);
	}
	if (it->chunk_ok)
		return it->chunk + (pfn - first) * it->page_struct;
	// The chunk as a whole cannot be read (a hole at its end): this page alone.
	struct kp_error *err = kp_lx_pfn_to_page(it->k, pfn, &page);
	if (err && kp_error_code(err) == KP_ERR_NOT_FOUND) {
		kp_error_destroy(err);
		return NULL;
	}
	if (err || (err = kp_read(it->k, KP_VIRT, page, it->chunk, it->page_struct))) {
		*err_ret = err ? kp_error_prefix(err, "the struct page of PFN 0x%" PRIx64, pfn) : NULL;
		return NULL;
	}
	it->chunk_pfn = ~(uint64_t)0;	// the buffer no longer holds a chunk
	return it->chunk;
}

// Whether pfn heads a slab of the cache; its freelist and objects if so.
static bool is_cache_slab(struct kp_slab_object_iter *it, const uint8_t *p, uint64_t *freelist, uint64_t *objects)
{
	const uint8_t *ps = p + it->pl->lo, *ss = p + it->sl->lo;
	if (kp_layout_u64(it->pl, ps, P_HEAD) & 1)
		return false;
	if (!kp_lx_page_type_test_is(&it->is_slab, kp_layout_u64(it->pl, ps, P_FLAGS), kp_layout_has(it->pl, P_TYPE),
				     (uint32_t)kp_layout_u64(it->pl, ps, P_TYPE)))
		return false;
	if (kp_layout_u64(it->sl, ss, S_CACHE) != it->cache.cache)
		return false;
	*freelist = kp_layout_u64(it->sl, ss, S_FREELIST);
	*objects = kp_layout_u64(it->sl, ss, S_OBJECTS);
	return true;
}

// Starts the slab at pfn: its free objects marked in it->map.
static struct kp_error *start_slab(struct kp_slab_object_iter *it, uint64_t pfn, uint64_t freelist,
				   uint64_t objects)
{
	uint64_t slab, base;
	struct kp_error *err = kp_lx_pfn_to_page(it->k, pfn, &slab);
	if (err)
		return err;
	if (!objects || objects > it->cache.max_objects)
		return kp_error_create(KP_ERR_FORMAT, "slab 0x%" PRIx64 " (PFN 0x%" PRIx64 ") of kmem_cache %s holds %"
				       PRIu64 " objects, its cache at most %u (corrupt?)", slab, pfn, it->cache.name,
				       objects, it->cache.max_objects);
	if (!kp_lx_phys_to_virt(it->k, pfn * it->page_size, &base))
		return kp_error_create(KP_ERR_UNSUPPORTED, "the direct map's address of PFN 0x%" PRIx64 " is unknown",
				       pfn);
	free(it->map);
	if (!(it->map = calloc(objects, 1)))
		return &kp_enomem;
	if ((err = kp_lx_slab_free_map(it->k, &it->cache, slab, base, objects, freelist, it->map)))
		return kp_error_prefix(err, "kmem_cache %s", it->cache.name);
	it->obj = (struct kp_slab_object){ .slab = slab, .pfn = pfn, .objects = (uint32_t)objects };
	it->base = base;
	it->next = 0;
	it->in_slab = true;
	return NULL;
}

// The next page frame of the source's ranges; false after the last.
static bool next_pfn(struct kp_slab_object_iter *it, uint64_t *ret)
{
	while (it->range < it->nranges) {
		const struct kp_range *r = &it->ranges[it->range];
		uint64_t end = (r->end + it->page_size - 1) / it->page_size;
		if (it->pfn < r->start / it->page_size)
			it->pfn = r->start / it->page_size;
		if (it->pfn < end) {
			*ret = it->pfn++;
			return true;
		}
		it->range++;
	}
	return false;
}

// Finds the next slab of the cache; false at the end of the memory.
static struct kp_error *find_slab(struct kp_slab_object_iter *it, bool *found)
{
	uint64_t pfn, freelist, objects;
	*found = false;
	while (next_pfn(it, &pfn)) {
		struct kp_error *err;
		const uint8_t *p = page_of(it, pfn, &err);
		if (err && (err = kp_lx_walk_unreadable(&it->walk, err)))
			return err;
		if (!p || !is_cache_slab(it, p, &freelist, &objects))
			continue;
		if (!(err = start_slab(it, pfn, freelist, objects))) {
			*found = true;
			return NULL;
		}
		if ((err = kp_lx_walk_unreadable(&it->walk, err)))
			return err;
	}
	return NULL;
}

struct kp_error *kp_slab_object_iter_next(struct kp_slab_object_iter *it, const struct kp_slab_object **ret)
{
	*ret = NULL;
	if (it->walk.finished)
		return NULL;
	for (;;) {
		if (it->in_slab && it->next < it->obj.objects) {
			struct kp_slab_object *o = &it->obj;
			o->index = it->next++;
			o->address = it->base + o->index * it->cache.size + it->cache.red_left;
			o->allocated = !it->map[o->index] && !kp_lx_sheaf_has(it->sheaved, it->nsheaved, o->address);
			*ret = o;
			return NULL;
		}
		it->in_slab = false;
		bool found;
		struct kp_error *err = find_slab(it, &found);
		if (err)
			return err;
		if (!found)
			return kp_lx_walk_finish(&it->walk);
	}
}

void kp_slab_object_iter_status(const struct kp_slab_object_iter *it, struct kp_walk_status *ret)
{
	kp_lx_walk_status(&it->walk, ret);
}

void kp_slab_object_iter_destroy(struct kp_slab_object_iter *it)
{
	if (!it)
		return;
	free(it->chunk);
	free(it->map);
	free(it->sheaved);
	kp_lx_walk_deinit(&it->walk);
	free(it);
}
