// SPDX-License-Identifier: MIT
// Segment maps per address space: a sorted array of non-overlapping segments,
// looked up by binary search. Segments are stored with an inclusive last
// address so that a segment can end at 0xffffffffffffffff.
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "io/memory.h"
#include "util/error.h"
#include "util/vec.h"
#include "util/le.h"

struct segment {
	uint64_t start;
	uint64_t last;		// inclusive
	kp_read_fn *fn;
	void *arg;
	uint64_t offset;	// source offset of start
};

struct space {
	struct segment *segs;
	size_t n, cap;
	// Segments added below the end of segs, in the order added, merged in
	// at the next lookup by settle(): added one by one, 10^5 headers in
	// descending order took seconds (each insert moved the whole array).
	struct segment *pend;
	size_t npend, cappend;
	struct kp_range *ranges;	// merged view, NULL until asked for
	size_t nranges;
	bool ranges_valid;
};

struct kp_memory {
	struct space spaces[2];
	kp_translate_fn *translate;
	void *translate_arg;
};

struct kp_error *kp_memory_create(struct kp_memory **ret)
{
	struct kp_memory *mem = calloc(1, sizeof(*mem));
	if (!mem)
		return &kp_enomem;
	*ret = mem;
	return NULL;
}

void kp_memory_destroy(struct kp_memory *mem)
{
	if (!mem)
		return;
	for (int i = 0; i < 2; i++) {
		free(mem->spaces[i].segs);
		free(mem->spaces[i].pend);
		free(mem->spaces[i].ranges);
	}
	free(mem);
}

static const char *space_name(enum kp_space space)
{
	return space == KP_PHYS ? "physical" : "virtual";
}

// Index of the first segment whose last address is >= address (n if none).
static size_t first_ending_at_or_after(const struct space *sp, uint64_t address)
{
	size_t lo = 0, hi = sp->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (sp->segs[mid].last < address)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static struct kp_error *reserve(struct space *sp, size_t extra)
{
	if (extra > SIZE_MAX - sp->n || !KP_VEC_RESERVE(sp->segs, sp->cap, sp->n + extra))
		return &kp_enomem;
	return NULL;
}

struct kp_error *kp_memory_add(struct kp_memory *mem, enum kp_space space,
			       uint64_t start, uint64_t size, kp_read_fn *fn,
			       void *arg, uint64_t offset)
{
	if (space != KP_VIRT && space != KP_PHYS)
		return kp_error_create(KP_ERR_INVALID, "invalid address space %d", (int)space);
	if (size == 0)
		return NULL;
	uint64_t last = start + (size - 1);
	if (last < start)
		return kp_error_create(KP_ERR_INVALID,
				       "%s range 0x%" PRIx64 " + 0x%" PRIx64
				       " wraps past the end of the address space",
				       space_name(space), start, size);
	struct space *sp = &mem->spaces[space];
	struct segment seg = { start, last, fn, arg, offset };
	if (!sp->npend && (!sp->n || sp->segs[sp->n - 1].last < start)) {
		// Past everything so far (the usual order): append.
		struct kp_error *err = reserve(sp, 1);
		if (err)
			return err;
		sp->segs[sp->n++] = seg;
	} else {
		if (!KP_VEC_RESERVE(sp->pend, sp->cappend, sp->npend + 1))
			return &kp_enomem;
		sp->pend[sp->npend++] = seg;
	}
	sp->ranges_valid = false;
	return NULL;
}

// ---------------------------------------------------------------- settle

// A segment to place, with its rank: the earlier added, the lower.
struct item {
	struct segment seg;
	size_t rank;
};

static int by_start(const void *a, const void *b)
{
	const struct item *x = a, *y = b;
	return x->seg.start < y->seg.start ? -1 : x->seg.start > y->seg.start;
}

static int by_value(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

// Min-heap of item indices by rank.
static void heap_push(size_t *heap, size_t *n, const struct item *items, size_t v)
{
	size_t i = (*n)++;
	heap[i] = v;
	while (i && items[heap[(i - 1) / 2]].rank > items[heap[i]].rank) {
		size_t p = (i - 1) / 2, t = heap[p];
		heap[p] = heap[i];
		heap[i] = t;
		i = p;
	}
}

static void heap_pop(size_t *heap, size_t *n, const struct item *items)
{
	heap[0] = heap[--*n];
	for (size_t i = 0;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i;
		if (l < *n && items[heap[l]].rank < items[heap[m]].rank)
			m = l;
		if (r < *n && items[heap[r]].rank < items[heap[m]].rank)
			m = r;
		if (m == i)
			break;
		size_t t = heap[m];
		heap[m] = heap[i];
		heap[i] = t;
		i = m;
	}
}

// Merges the pending segments into segs so that, where ranges overlap, the
// one added first wins (as if each were added alone, in order): one sweep
// over the sorted edges with a heap of the ranges covering the current
// point. O(n log n) time, O(n) memory for n segments.
static struct kp_error *settle(struct space *sp)
{
	if (!sp->npend)
		return NULL;
	size_t m = sp->n + sp->npend;
	struct item *items = calloc(m, sizeof(*items));
	uint64_t *edges = calloc(2 * m, sizeof(*edges));
	size_t *heap = calloc(m, sizeof(*heap));
	struct segment *out = calloc(2 * m, sizeof(*out));
	struct kp_error *err = NULL;
	if (!items || !edges || !heap || !out) {
		err = &kp_enomem;
		goto done;
	}
	size_t nedges = 0;
	for (size_t i = 0; i < m; i++) {
		items[i].seg = i < sp->n ? sp->segs[i] : sp->pend[i - sp->n];
		items[i].rank = i;
		edges[nedges++] = items[i].seg.start;
		if (items[i].seg.last != UINT64_MAX)
			edges[nedges++] = items[i].seg.last + 1;
	}
	qsort(items, m, sizeof(*items), by_start);
	qsort(edges, nedges, sizeof(*edges), by_value);
	size_t nout = 0, next = 0, nheap = 0;
	for (size_t e = 0; e < nedges; e++) {
		uint64_t at = edges[e];
		if (e + 1 < nedges && edges[e + 1] == at)
			continue;	// duplicates: the last of them stands for all
		while (next < m && items[next].seg.start <= at)
			heap_push(heap, &nheap, items, next++);
		while (nheap && items[heap[0]].seg.last < at)
			heap_pop(heap, &nheap, items);
		if (!nheap)
			continue;
		const struct segment *w = &items[heap[0]].seg;
		// Up to the next edge (the winner covers it: its own end is one).
		uint64_t last = e + 1 < nedges ? edges[e + 1] - 1 : w->last;
		struct segment piece = { at, last, w->fn, w->arg, w->offset + (at - w->start) };
		struct segment *prev = nout ? &out[nout - 1] : NULL;
		if (prev && prev->last + 1 == at && prev->fn == piece.fn && prev->arg == piece.arg &&
		    prev->offset + (at - prev->start) == piece.offset)
			prev->last = last;	// the same segment, cut by a lower one
		else
			out[nout++] = piece;
	}
	free(sp->segs);
	sp->segs = out;
	sp->n = nout;
	sp->cap = 2 * m;
	out = NULL;
	free(sp->pend);
	sp->pend = NULL;
	sp->npend = sp->cappend = 0;
	sp->ranges_valid = false;
done:
	free(items);
	free(edges);
	free(heap);
	free(out);
	return err;
}

struct kp_error *kp_memory_settle(struct kp_memory *mem)
{
	struct kp_error *err = settle(&mem->spaces[KP_VIRT]);
	return err ? err : settle(&mem->spaces[KP_PHYS]);
}

void kp_memory_set_translator(struct kp_memory *mem, kp_translate_fn *fn, void *arg)
{
	mem->translate = fn;
	mem->translate_arg = arg;
}

uint64_t kp_memory_fault_span(struct kp_memory *mem, uint64_t vaddr)
{
	uint64_t paddr, size;
	if (!mem->translate || kp_memory_has_segments(mem, KP_VIRT))
		return 0;
	struct kp_error *err = mem->translate(mem->translate_arg, vaddr, &paddr, &size);
	uint64_t n = err && err != &kp_enomem ? err->span : 0;
	kp_error_destroy(err);
	return n;
}

uint64_t kp_memory_fault_step(struct kp_memory *mem, uint64_t vaddr, uint64_t page, uint64_t left)
{
	uint64_t span = kp_memory_fault_span(mem, vaddr) & ~(page - 1);
	return span < page ? page : span < left ? span : left;
}

bool kp_memory_segment_at(struct kp_memory *mem, enum kp_space space, uint64_t address,
			  struct kp_segment_info *ret)
{
	if (space != KP_VIRT && space != KP_PHYS)
		return false;
	struct space *sp = &mem->spaces[space];
	if (settle(sp))
		return false;	// out of memory: kp_memory_settle() reports it
	size_t i = first_ending_at_or_after(sp, address);
	if (i == sp->n)
		return false;
	const struct segment *s = &sp->segs[i];
	*ret = (struct kp_segment_info){.start = s->start, .last = s->last, .fn = s->fn,
					.arg = s->arg, .offset = s->offset};
	return true;
}

bool kp_memory_has_segments(struct kp_memory *mem, enum kp_space space)
{
	if (space != KP_VIRT && space != KP_PHYS)
		return false;
	return mem->spaces[space].n > 0 || mem->spaces[space].npend > 0;
}

static struct kp_error *hole(enum kp_space space, uint64_t address)
{
	return kp_error_fault(address, "%s address 0x%" PRIx64 " is not in the memory source",
			      space_name(space), address);
}

// Reads through the translator: vaddr is in no virtual segment; limit is the
// last byte before the next virtual segment (or the end of the read).
static struct kp_error *read_translated(struct kp_memory *mem, uint64_t vaddr,
					uint8_t *buf, size_t count, size_t *done_ret)
{
	uint64_t paddr, size;
	struct kp_error *err = mem->translate(mem->translate_arg, vaddr, &paddr, &size);
	if (err)
		return err;
	if (size == 0)
		return kp_error_create(KP_ERR_FORMAT,
				       "translation of virtual address 0x%" PRIx64
				       " returned an empty range", vaddr);
	size_t chunk = size < count ? (size_t)size : count;
	err = kp_memory_read(mem, KP_PHYS, paddr, buf, chunk);
	if (err) {
		if (err->code == KP_ERR_FAULT && err->has_address &&
		    err->address >= paddr && err->address - paddr < chunk) {
			uint64_t pa = err->address, va = vaddr + (pa - paddr);
			// A page the source has but cannot give (excluded by
			// makedumpfile, corrupt) keeps the source's reason.
			struct kp_segment_info si;
			bool backed = kp_memory_segment_at(mem, KP_PHYS, pa, &si) && si.start <= pa;
			struct kp_error *wrapped = backed ?
				kp_error_fault(va, "virtual address 0x%" PRIx64 " (physical 0x%"
					       PRIx64 "): %s", va, pa, err->message) :
				kp_error_fault(va, "virtual address 0x%" PRIx64
					       " maps to physical 0x%" PRIx64
					       ", which is not in the memory source", va, pa);
			kp_error_destroy(err);
			return wrapped;
		}
		return err;
	}
	*done_ret = chunk;
	return NULL;
}

struct kp_error *kp_memory_read(struct kp_memory *mem, enum kp_space space,
				uint64_t address, void *buf, size_t count)
{
	if (space != KP_VIRT && space != KP_PHYS)
		return kp_error_create(KP_ERR_INVALID, "invalid address space %d", (int)space);
	if (count == 0)
		return NULL;
	if (address + (count - 1) < address)
		return kp_error_create(KP_ERR_FAULT, "%s read of %zu bytes at 0x%" PRIx64
				       " wraps past the end of the address space",
				       space_name(space), count, address);
	struct space *sp = &mem->spaces[space];
	if (sp->npend) {
		struct kp_error *serr = settle(sp);
		if (serr)
			return serr;
	}
	uint8_t *out = buf;
	size_t i = first_ending_at_or_after(sp, address);
	while (count > 0) {
		// Invariant: segs[i] is the first segment ending at or after address.
		const struct segment *s = i < sp->n ? &sp->segs[i] : NULL;
		if (s && s->start <= address) {
			uint64_t avail = s->last - address;	// bytes - 1
			size_t chunk = avail >= count - 1 ? count : (size_t)avail + 1;
			struct kp_error *err = s->fn(out, address, chunk,
						     s->offset + (address - s->start), s->arg);
			if (err)
				return err;
			out += chunk;
			count -= chunk;
			address += chunk;	// wraps only when count is now 0
			i++;
			continue;
		}
		if (space != KP_VIRT || !mem->translate)
			return hole(space, address);
		// Stop before the next virtual segment: segments win over translation.
		size_t want = count;
		if (s && s->start - address < want)
			want = (size_t)(s->start - address);
		size_t done = 0;
		struct kp_error *err = read_translated(mem, address, out, want, &done);
		if (err)
			return err;
		out += done;
		count -= done;
		address += done;
	}
	return NULL;
}

static struct kp_error *compute_ranges(struct space *sp)
{
	struct kp_range *r = NULL;
	size_t n = 0;
	if (sp->n) {
		r = malloc(sp->n * sizeof(*r));
		if (!r)
			return &kp_enomem;
	}
	// Ranges use an exclusive end: a segment reaching the top of the address
	// space is reported as ending at UINT64_MAX (the last byte is dropped).
	for (size_t i = 0; i < sp->n; i++) {
		const struct segment *s = &sp->segs[i];
		uint64_t end = s->last == UINT64_MAX ? UINT64_MAX : s->last + 1;
		if (n && r[n - 1].end == s->start)
			r[n - 1].end = end;
		else
			r[n++] = (struct kp_range){s->start, end};
	}
	free(sp->ranges);
	sp->ranges = r;
	sp->nranges = n;
	sp->ranges_valid = true;
	return NULL;
}

size_t kp_memory_ranges(struct kp_memory *mem, enum kp_space space,
			const struct kp_range **ret)
{
	if (space != KP_VIRT && space != KP_PHYS) {
		*ret = NULL;
		return 0;
	}
	struct space *sp = &mem->spaces[space];
	if (settle(sp) || (!sp->ranges_valid && compute_ranges(sp))) {
		*ret = NULL;
		return 0;
	}
	*ret = sp->ranges;
	return sp->nranges;
}

struct kp_error *kp_read_zero(void *buf, uint64_t address, size_t count,
			      uint64_t offset, void *arg)
{
	memset(buf, 0, count);
	return NULL;
}

struct kp_error *kp_read_buffer(void *buf, uint64_t address, size_t count,
				uint64_t offset, void *arg)
{
	memcpy(buf, (const uint8_t *)arg + offset, count);
	return NULL;
}

struct kp_error *kp_memory_read_u64(struct kp_memory *mem, enum kp_space space,
				    uint64_t address, uint64_t *ret)
{
	uint8_t b[8];
	struct kp_error *err = kp_memory_read(mem, space, address, b, sizeof(b));
	if (!err)
		*ret = kp_le64(b);
	return err;
}

#define MIN_PAGE 4096u

size_t kp_memory_read_partial(struct kp_memory *mem, enum kp_space space, uint64_t address,
			      void *buf, size_t size, bool stop_at_nul)
{
	uint8_t *out = buf;
	size_t got = 0;
	while (got < size) {
		uint64_t at = address + got;
		if (at < address)
			break;	// wrapped past the top of the address space
		size_t chunk = MIN_PAGE - (size_t)(at & (MIN_PAGE - 1));
		if (chunk > size - got)
			chunk = size - got;
		if (!kp_ok(kp_memory_read(mem, space, at, out + got, chunk)))
			break;
		if (stop_at_nul) {
			const uint8_t *nul = memchr(out + got, '\0', chunk);
			if (nul)
				return (size_t)(nul - out) + 1;
		}
		got += chunk;
	}
	return got;
}

bool kp_memory_read_cstr(struct kp_memory *mem, enum kp_space space, uint64_t address,
			 char *buf, size_t size)
{
	if (!size)
		return false;
	size_t got = kp_memory_read_partial(mem, space, address, buf, size - 1, true);
	buf[got] = '\0';
	return got > 0;
}
