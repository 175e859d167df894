// SPDX-License-Identifier: MIT
// The SLUB object an address lies in (mm/slub.c): its cache, its start and
// whether it is free. The object of a slab holding address a is slot
// (a - slab_address) / s->size, its start that slot + s->red_left_pad (the
// left red zone of SLAB_RED_ZONE caches, 4.6+). It is free when it is on
// the slab's freelist, or on the freelist of a CPU whose current slab is
// this one (kmem_cache_cpu: freelist and slab, page before 5.17,
// bb192ed9aa71). A freelist's next pointer is at object + s->offset; with
// CONFIG_SLAB_FREELIST_HARDENED (kmem_cache has random) it is stored as
// ptr ^ s->random ^ swab(its own address) (5.7+, 1ad53d9fa3f6, in every
// stable branch since; ptr ^ random ^ address before).
//
// Bounds: a freelist is followed for at most the slab's objects entries
// (15 bits of slab->objects); one that is longer, meets an object twice,
// or points outside the slab's objects is corrupt.
#include <byteswap.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/kernel.h"
#include "core/layout.h"
#include "linux/mm/mm.h"
#include "util/error.h"
#include "util/strbuf.h"

enum { C_NAME, C_SIZE, C_OBJSIZE, C_OFFSET, C_RANDOM, C_RED_LEFT, C_CPU_SLAB, C_OO, C_N };
static const struct kp_member_spec cache_members[C_N] = {
	[C_NAME] = { .name = "name" },
	[C_SIZE] = { .name = "size" },
	[C_OBJSIZE] = { .name = "object_size" },
	[C_OFFSET] = { .name = "offset" },
	[C_RANDOM] = { .name = "random", .flags = KP_MEMBER_OPTIONAL },
	[C_RED_LEFT] = { .name = "red_left_pad", .flags = KP_MEMBER_OPTIONAL },
	// Not with CONFIG_SLUB_TINY (6.2+).
	[C_CPU_SLAB] = { .name = "cpu_slab", .flags = KP_MEMBER_OPTIONAL },
	// order << 16 | objects of a new slab (OO_SHIFT): no slab holds more.
	[C_OO] = { .name = "oo" },
};
static const struct kp_struct_spec cache_spec = KP_STRUCT_SPEC("struct kmem_cache", cache_members);
enum { S_CACHE, S_FREELIST, S_OBJECTS, S_N };
static const struct kp_member_spec slab_members[S_N] = {
	[S_CACHE] = { .name = "slab_cache" },
	[S_FREELIST] = { .name = "freelist" },
	[S_OBJECTS] = { .name = "objects" },
};
// struct slab since 5.17 (d122019bf061), the same members in struct page before.
static const struct kp_struct_spec slab_spec = KP_STRUCT_SPEC_OPTIONAL("struct slab", slab_members);
static const struct kp_struct_spec page_slab_spec = KP_STRUCT_SPEC("struct page", slab_members);
enum { K_FREELIST, K_SLAB, K_N };
static const struct kp_member_spec cpu_members[K_N] = {
	[K_FREELIST] = { .name = "freelist" },
	[K_SLAB] = { .name = "slab|page" },
};
static const struct kp_struct_spec cpu_spec = KP_STRUCT_SPEC_OPTIONAL("struct kmem_cache_cpu", cpu_members);

static struct kp_error *slab_layout(struct kp_kernel *k, const struct kp_struct_layout **ret)
{
	struct kp_error *err = kp_kernel_layout(k, &slab_spec, ret);
	if (!err && !(*ret)->present)
		err = kp_kernel_layout(k, &page_slab_spec, ret);
	return err;
}

struct kp_error *kp_lx_slab_cache_of(struct kp_kernel *k, uint64_t slab, uint64_t *cache_ret, char *name,
				     size_t size)
{
	const struct kp_struct_layout *l, *cl;
	uint8_t buf[128], cbuf[512];
	struct kp_error *err = slab_layout(k, &l);
	if (err || (err = kp_kernel_layout(k, &cache_spec, &cl)) ||
	    (err = kp_kernel_read_struct(k, l, slab, buf, sizeof(buf))))
		return err;
	uint64_t cache = kp_layout_u64(l, buf, S_CACHE);
	if ((err = kp_kernel_read_struct(k, cl, cache, cbuf, sizeof(cbuf))) ||
	    (err = kp_read_cstr(k, kp_layout_u64(cl, cbuf, C_NAME), name, size)))
		return kp_error_prefix(err, "the cache of slab 0x%" PRIx64, slab);
	*cache_ret = cache;
	return NULL;
}

struct kp_error *kp_lx_slab_read(struct kp_kernel *k, uint64_t slab, uint64_t *cache_ret, uint64_t *freelist_ret,
				 uint64_t *objects_ret)
{
	const struct kp_struct_layout *l;
	uint8_t buf[128];
	struct kp_error *err = slab_layout(k, &l);
	if (err || (err = kp_kernel_read_struct(k, l, slab, buf, sizeof(buf))))
		return err ? kp_error_prefix(err, "slab 0x%" PRIx64, slab) : NULL;
	*cache_ret = kp_layout_u64(l, buf, S_CACHE);
	*freelist_ret = kp_layout_u64(l, buf, S_FREELIST);
	*objects_ret = kp_layout_u64(l, buf, S_OBJECTS);
	return NULL;
}

// Marks the objects of one freelist; what names it in errors.
static struct kp_error *walk(struct kp_kernel *k, const struct kp_lx_slab_cache *c, uint64_t slab, uint64_t base,
			     uint64_t objects, uint8_t *free, uint64_t p, const char *what)
{
	uint64_t n = 0, end = base + objects * c->size;
	while (p) {
		uint64_t slot = p - base - c->red_left;
		if (p < base + c->red_left || p >= end || slot % c->size)
			return kp_error_create(KP_ERR_FORMAT, "%s of slab 0x%" PRIx64 " points at 0x%" PRIx64
					       ", no object of the slab (corrupt?)", what, slab, p);
		uint64_t i = slot / c->size;
		if (free[i] || ++n > objects)
			return kp_error_create(KP_ERR_LOOP, "%s of slab 0x%" PRIx64 " meets object 0x%" PRIx64
					       " twice (corrupt)", what, slab, p);
		free[i] = 1;
		uint64_t at = p + c->offset, next;
		struct kp_error *err = kp_read_u64(k, at, &next);
		if (err)
			return kp_error_prefix(err, "%s of slab 0x%" PRIx64, what, slab);
		p = c->hardened ? next ^ c->random ^ bswap_64(at) : next;
	}
	return NULL;
}

// The freelists of the CPUs whose current slab is this one.
static struct kp_error *cpu_freelists(struct kp_kernel *k, const struct kp_lx_slab_cache *c, uint64_t slab,
				      uint64_t base, uint64_t objects, uint8_t *free)
{
	const struct kp_struct_layout *l;
	struct kp_error *err = kp_kernel_layout(k, &cpu_spec, &l);
	if (err || !l->present || !c->cpu_slab)
		return err;
	uint32_t n = kp_kernel_nr_cpu_ids(k);
	for (uint32_t cpu = 0; cpu < n; cpu++) {
		uint8_t buf[64];
		bool possible;
		if ((err = kp_kernel_read_per_cpu_struct(k, l, c->cpu_slab, cpu, buf, sizeof(buf), &possible)))
			return kp_error_prefix(err, "the per-CPU freelists");
		if (!possible || kp_layout_u64(l, buf, K_SLAB) != slab)
			continue;
		char what[48];
		snprintf(what, sizeof(what), "CPU %u's freelist", cpu);
		if ((err = walk(k, c, slab, base, objects, free, kp_layout_u64(l, buf, K_FREELIST), what)))
			return err;
	}
	return NULL;
}

struct kp_error *kp_lx_slab_free_map(struct kp_kernel *k, const struct kp_lx_slab_cache *c, uint64_t slab,
				     uint64_t base, uint64_t objects, uint64_t freelist, uint8_t *free)
{
	struct kp_error *err = walk(k, c, slab, base, objects, free, freelist, "the freelist");
	return err ? err : cpu_freelists(k, c, slab, base, objects, free);
}

struct kp_error *kp_lx_slab_cache_read(struct kp_kernel *k, uint64_t cache, struct kp_lx_slab_cache *ret)
{
	const struct kp_struct_layout *cl;
	uint8_t cbuf[512];
	struct kp_lx_slab_cache c = { .cache = cache };
	struct kp_error *err = kp_kernel_layout(k, &cache_spec, &cl);
	if (err || (err = kp_kernel_read_struct(k, cl, cache, cbuf, sizeof(cbuf))) ||
	    (err = kp_read_cstr(k, kp_layout_u64(cl, cbuf, C_NAME), c.name, sizeof(c.name))))
		return err ? kp_error_prefix(err, "kmem_cache 0x%" PRIx64, cache) : NULL;
	c.size = kp_layout_u64(cl, cbuf, C_SIZE);
	c.offset = kp_layout_u64(cl, cbuf, C_OFFSET);
	c.red_left = kp_layout_u64(cl, cbuf, C_RED_LEFT);
	c.hardened = kp_layout_has(cl, C_RANDOM);
	c.random = kp_layout_u64(cl, cbuf, C_RANDOM);
	c.cpu_slab = kp_layout_u64(cl, cbuf, C_CPU_SLAB);
	c.object_size = (uint32_t)kp_layout_u64(cl, cbuf, C_OBJSIZE);
	c.max_objects = (uint32_t)kp_layout_u64(cl, cbuf, C_OO) & 0xffff;
	if (!c.size || c.size > (64u << 20) || c.red_left >= c.size || c.offset + 8 > c.size)
		return kp_error_create(KP_ERR_FORMAT, "kmem_cache %s at 0x%" PRIx64 ": object size %" PRIu64
				       ", freelist offset %" PRIu64 " (corrupt?)", c.name, cache, c.size, c.offset);
	*ret = c;
	return NULL;
}

struct kp_error *kp_lx_slab_object(struct kp_kernel *k, const struct kp_lx_page *lp, uint64_t paddr,
				   struct kp_whatis_fact *f, char *name, size_t name_size, char *note,
				   size_t note_size)
{
	struct kp_lx_slab_cache c;
	uint64_t cache, freelist, objects, base, page_size = kp_kernel_page_size(k);
	struct kp_error *err = kp_lx_slab_read(k, lp->head, &cache, &freelist, &objects);
	if (err || (err = kp_lx_slab_cache_read(k, cache, &c)))
		return err;
	snprintf(name, name_size, "%s", c.name);
	f->slab.cache = cache;
	f->slab.cache_name = name;
	f->slab.object_size = c.object_size;
	f->slab.slot_size = (uint32_t)c.size;
	if (!kp_lx_phys_to_virt(k, lp->head_pfn * page_size, &base))
		return kp_error_create(KP_ERR_UNSUPPORTED, "the direct map's address of PFN 0x%" PRIx64 " is unknown",
				       lp->head_pfn);
	uint64_t in = paddr - lp->head_pfn * page_size, i = in / c.size;
	f->slab.slab = lp->head;
	if (i >= objects) {
		f->slab.state = KP_SLAB_OUTSIDE;
		f->slab.object = 0;
		f->slab.offset = (int64_t)(in - objects * c.size);
		return NULL;
	}
	f->slab.object = base + i * c.size + c.red_left;
	f->slab.offset = (int64_t)(base + in - f->slab.object);
	uint8_t *map = calloc(objects, 1);
	if (!map)
		return &kp_enomem;
	err = kp_lx_slab_free_map(k, &c, lp->head, base, objects, freelist, map);
	// An object on a freelist read whole is free, whatever else failed.
	bool is_free = map[i];
	free(map);
	if (!is_free && !err) {
		uint64_t *sheaved;
		size_t n;
		if (!(err = kp_lx_sheaf_objects(k, cache, &sheaved, &n))) {
			is_free = kp_lx_sheaf_has(sheaved, n, f->slab.object);
			free(sheaved);
		}
	}
	if (err == &kp_enomem)
		return err;
	f->slab.state = is_free ? KP_SLAB_FREE : err ? KP_SLAB_UNKNOWN : KP_SLAB_ALLOCATED;
	if (err && !is_free) {
		kp_str_fit(note, note_size, "%s", kp_error_message(err));
		f->note = note;
	}
	kp_error_destroy(err);
	return NULL;
}
