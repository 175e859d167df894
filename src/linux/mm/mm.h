// SPDX-License-Identifier: MIT
// A process's memory: its mm_struct, its user memory read through its own
// page tables (user.c), and what /proc/PID/cmdline and environ show
// (cmdline.c).
#ifndef KP_LINUX_MM_H
#define KP_LINUX_MM_H

#include <kpeek/kpeek.h>

#include "types/layout.h"

// struct mm_struct as the walkers read it.
enum kp_lx_mm_member {
	KP_LX_MM_PGD,		// pgd_t *
	KP_LX_MM_ARG_START,
	KP_LX_MM_ARG_END,
	KP_LX_MM_ENV_START,
	KP_LX_MM_ENV_END,
	KP_LX_MM_N
};
extern const struct kp_struct_spec kp_lx_mm_spec;

// The mm_struct of the task at task; KP_ERR_INVALID naming the task when
// it has none (a kernel thread, or a task that exited).
struct kp_error *kp_lx_task_mm(struct kp_kernel *kernel, uint64_t task, uint64_t *ret);

// The largest argument or environment area kpeek reads (the kernel's own
// limit is a quarter of the stack rlimit; beyond this it is corrupt).
#define KP_LX_MAX_ARGS (32u << 20)

// The sum of every zone's low watermark (and boost), in pages, as
// si_mem_available() takes it (zones.c); false if it cannot be read.
bool kp_lx_low_watermarks(struct kp_kernel *kernel, int64_t *ret);

// The memory map (memmap.c): the struct page of pfn, through the sparse
// memory model VMCOREINFO describes; KP_ERR_NOT_FOUND if it has none.
struct kp_error *kp_lx_pfn_to_page(struct kp_kernel *kernel, uint64_t pfn, uint64_t *ret);
// Whether address lies in a virtually mapped memory map (vmemmap): the
// PFN whose struct page holds it, and the offset in that struct page.
bool kp_lx_vmemmap_pfn(struct kp_kernel *kernel, uint64_t address, uint64_t *pfn_ret, uint64_t *off_ret);
// sizeof(struct page); 0 without a memory map.
uint64_t kp_lx_page_struct_size(struct kp_kernel *kernel);
// The direct map's address of paddr; false if the architecture cannot say.
bool kp_lx_phys_to_virt(struct kp_kernel *kernel, uint64_t paddr, uint64_t *ret);

// A page frame as the slab and page code read it (page.c).
struct kp_lx_page {
	uint64_t pfn, page;		// the frame and its struct page
	uint64_t head, head_pfn;	// its compound head (itself if not a tail)
	bool tail;
	uint64_t flags, head_flags;
	bool has_page_type;
	uint32_t page_type, head_page_type;
	int32_t refcount, mapcount;
	uint64_t mapping, index;	// the head's (index: this page's offset)
	bool slab;			// the head is a slab
};
struct kp_error *kp_lx_page_read(struct kp_kernel *kernel, uint64_t pfn, struct kp_lx_page *ret);
// Whether the page's head has the page type name ("slab", "buddy"): the
// PG_ flag, the page-type bit or the PGTY_ byte, as the kernel keeps it.
bool kp_lx_page_type_is(struct kp_kernel *kernel, const struct kp_lx_page *page, const char *name);
// The same test looked up once, for many pages: how this kernel keeps the
// type name, then whether a head page's flags and page_type hold it.
struct kp_lx_type_test {
	enum { KP_LX_TYPE_NONE, KP_LX_TYPE_PGTY, KP_LX_TYPE_FLAG, KP_LX_TYPE_BIT } how;
	uint64_t v;	// the PGTY_ value, the PG_ bit, or the page-type bit
};
void kp_lx_page_type_test(struct kp_kernel *kernel, const char *name, struct kp_lx_type_test *ret);
bool kp_lx_page_type_test_is(const struct kp_lx_type_test *t, uint64_t head_flags, bool has_type,
			     uint32_t head_page_type);

// Slab objects (slab_object.c): the cache of a slab, and the object of a
// slab page that holds paddr, its state read from the freelists. A
// freelist that cannot be read or is corrupt leaves the state unknown and
// says why in note (f->note points to it); errors are for the slab and
// its cache.
struct kp_error *kp_lx_slab_cache_of(struct kp_kernel *kernel, uint64_t slab, uint64_t *cache_ret,
				     char *name, size_t size);
struct kp_whatis_fact;
// A SLUB cache as its objects are found: slot size, the left red zone,
// where the freelist pointer is and how it is hidden.
struct kp_lx_slab_cache {
	uint64_t cache;			// struct kmem_cache *
	uint64_t size, red_left, offset;
	bool hardened;			// CONFIG_SLAB_FREELIST_HARDENED: random is the key
	uint64_t random;
	uint64_t cpu_slab;		// per-CPU kmem_cache_cpu *, 0 without (SLUB_TINY, 7.x sheaves)
	uint32_t object_size, max_objects;
	char name[64];
};
struct kp_error *kp_lx_slab_cache_read(struct kp_kernel *kernel, uint64_t cache, struct kp_lx_slab_cache *ret);
// A slab's cache, freelist head and object count (struct slab, struct page before 5.17).
struct kp_error *kp_lx_slab_read(struct kp_kernel *kernel, uint64_t slab, uint64_t *cache_ret, uint64_t *freelist_ret,
				 uint64_t *objects_ret);
// Sets map[i] for each object i of the slab (objects slots from base) on
// its freelist or on the freelist of a CPU whose slab it is; a freelist
// that leaves the slab or meets an object twice is an error naming the
// slab (KP_ERR_FORMAT, KP_ERR_LOOP), one that cannot be read a fault.
struct kp_error *kp_lx_slab_free_map(struct kp_kernel *kernel, const struct kp_lx_slab_cache *c, uint64_t slab,
				     uint64_t base, uint64_t objects, uint64_t freelist, uint8_t *map);
// The objects a cache keeps free in sheaves (sheaves.c, 6.18+): sorted,
// malloc'ed (NULL and 0 without sheaves); kp_lx_sheaf_has() looks one up.
struct kp_error *kp_lx_sheaf_objects(struct kp_kernel *kernel, uint64_t cache, uint64_t **ret, size_t *n_ret);
bool kp_lx_sheaf_has(const uint64_t *objects, size_t n, uint64_t object);
struct kp_error *kp_lx_slab_object(struct kp_kernel *kernel, const struct kp_lx_page *page, uint64_t paddr,
				   struct kp_whatis_fact *f, char *name, size_t name_size, char *note,
				   size_t note_size);

// The busy vmalloc area holding an address (vmalloc.c), as
// /proc/vmallocinfo shows it: [start, end) and the caller from its
// vm_struct (vm 0: a vm_map_ram area, the vmap_area's range, no caller).
// KP_ERR_NOT_FOUND when no area holds it.
struct kp_lx_vmalloc {
	uint64_t area, vm;		// struct vmap_area *, struct vm_struct *
	uint64_t start, end, caller;
};
struct kp_error *kp_lx_vmalloc_area(struct kp_kernel *kernel, uint64_t address, struct kp_lx_vmalloc *ret);

// The per-CPU layout (percpu.c): the static variables at start ..
// start + static_size of the template, each CPU's unit unit bytes (the
// static variables, the reserved and the dynamic area); false if unknown.
struct kp_lx_percpu {
	uint64_t start, static_size, unit;
};
bool kp_lx_percpu_layout(struct kp_kernel *kernel, struct kp_lx_percpu *ret);
// The sizes of a boot log line "percpu: Embedded P pages/cpu sS rR dD uU"
// of len bytes, if U holds S + R + D in whole pages of page_size.
struct kp_lx_percpu_line {
	uint64_t static_size, unit;
};
bool kp_lx_percpu_line(const char *text, size_t len, uint64_t page_size, struct kp_lx_percpu_line *ret);

// The /proc/iomem entries holding a physical address (iomem.c): the top
// level's name in top ("System RAM", "Reserved"), the innermost below it in
// inner; "" where none holds it.
struct kp_error *kp_lx_iomem(struct kp_kernel *kernel, uint64_t paddr, char *top, size_t top_size, char *inner,
			     size_t inner_size);

#endif
