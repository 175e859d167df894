// SPDX-License-Identifier: MIT
// kp_search: crash's search. Memory is read in windows, a window being a
// block of physical memory (kernel: at its direct-map address), a page of
// one when the block cannot be read whole, or a page of a process's
// mapping read through its page tables; each window is scanned for a value
// at every multiple of its width, or for a byte string, whose last
// nbytes - 1 bytes are carried into the next window when it follows on
// (a string across a page boundary).
//
// Bounds: each physical page of the source once (kernel, physical); each
// page of the process's mappings once and at most MAX_USER_PAGES of them;
// a string of at most KP_SEARCH_MAX_BYTES; memory: one block and one carry.
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <kpeek/kpeek.h>

#include "util/error.h"
#include "util/opts.h"

#define BLOCK (256u << 10)		// bytes read at once, a multiple of every page size
#define PAGE_MAX (64u << 10)		// the largest page size kpeek knows
#define MAX_USER_PAGES (1ULL << 28)	// 1 TiB of 4 KiB pages

struct kp_search {
	struct kp_kernel *k;
	struct kp_search_spec spec;
	uint8_t *bytes;			// the string (spec.bytes copied), or NULL
	uint64_t page;
	struct kp_search_status st;
	struct kp_search_hit hit;
	// The window: win[0, wlen) at address wbase; scanned from pos. A
	// block is read at data, past room in buf for the carried bytes.
	uint8_t *buf, *win, *data;
	size_t wlen, pos;
	uint64_t wbase;
	uint8_t *carry;			// the last nbytes - 1 bytes of the window before
	size_t ncarry;
	uint64_t carry_end;		// where they end (0: none)
	bool ended;
	// Kernel, physical: the range and block next; a block that could not
	// be read whole is read page by page from sub_pa to sub_end.
	const struct kp_range *r;
	size_t nr, ri;
	uint64_t pa, sub_pa, sub_end;
	bool tail;			// the bytes past phys_hi: hits from tail_from are not ours
	uint64_t tail_from;
	// Process: its memory, its mappings, the mapping and page next.
	struct kp_user *u;
	struct kp_vma_iter *vit;
	const struct kp_vma *vma;
	uint64_t va;
};

// Where the bytes at pa are searched: their direct-map address (kernel);
// false if they have none.
static bool address_of(struct kp_search *s, uint64_t pa, uint64_t *ret)
{
	if (s->spec.space != KP_SEARCH_KERNEL) {
		*ret = pa;
		return true;
	}
	return kp_phys_to_virt(s->k, pa, ret);
}

static bool wanted(const struct kp_search *s, uint64_t addr, uint64_t len)
{
	return addr + len > s->spec.start && (!s->spec.end || addr < s->spec.end);
}

// The block's bytes just read at address addr become the window, after
// the carried bytes when they end where it starts; false if the caller's
// block_fn ends the search.
static bool window(struct kp_search *s, uint64_t addr, size_t len)
{
	size_t keep = s->bytes && s->carry_end == addr ? s->ncarry : 0;
	s->win = s->data - keep;
	if (keep)
		memcpy(s->win, s->carry, keep);
	s->wlen = keep + len;
	s->wbase = addr - keep;
	s->pos = 0;
	if (s->bytes) {
		size_t n = s->spec.nbytes - 1 < s->wlen ? s->spec.nbytes - 1 : s->wlen;
		memcpy(s->carry, s->win + s->wlen - n, n);
		s->ncarry = n;
		s->carry_end = s->wbase + s->wlen;
	}
	return !s->spec.block_fn || s->spec.block_fn(s->spec.block_arg, &s->st);
}

// A window of one page of a block that could not be read whole.
static bool next_sub_page(struct kp_search *s, bool *ret)
{
	while (s->sub_pa < s->sub_end) {
		uint64_t pa = s->sub_pa, at;
		size_t n = s->sub_end - pa < s->page ? (size_t)(s->sub_end - pa) : (size_t)s->page;
		s->sub_pa += n;
		struct kp_error *err = kp_read(s->k, KP_PHYS, pa, s->data, n);
		s->st.bytes_done += n;
		if (err) {
			kp_error_destroy(err);
			s->st.unreadable++;
			continue;
		}
		s->st.pages++;
		address_of(s, pa, &at);	// the block's address was known
		*ret = window(s, at, n);
		return true;
	}
	return false;
}

// The bytes past phys_hi that end a string starting before it: the next
// slice's own hits start there.
static bool tail_window(struct kp_search *s)
{
	uint64_t at, hi = s->spec.phys_hi;
	if (s->tail || !s->bytes || !hi || !address_of(s, hi, &at))
		return false;
	s->tail = true;
	s->tail_from = at;
	struct kp_error *err = kp_read(s->k, KP_PHYS, hi, s->data, s->spec.nbytes - 1);
	if (err) {
		kp_error_destroy(err);
		return false;
	}
	window(s, at, s->spec.nbytes - 1);
	return true;
}

// Where range ri ends within the slice.
static uint64_t range_end(const struct kp_search *s)
{
	uint64_t end = s->r[s->ri].end;
	return s->spec.phys_hi && s->spec.phys_hi < end ? s->spec.phys_hi : end;
}

// The next window of physical memory; false at the end.
static bool next_phys(struct kp_search *s)
{
	for (;;) {
		bool go;
		if (next_sub_page(s, &go))
			return go;
		while (s->ri < s->nr) {
			uint64_t lo = s->r[s->ri].start > s->spec.phys_lo ? s->r[s->ri].start : s->spec.phys_lo;
			if (s->pa < lo)
				s->pa = lo;
			if (s->pa < range_end(s))
				break;
			s->ri++;
		}
		if (s->ri == s->nr)
			return tail_window(s);
		uint64_t hi = range_end(s);
		uint64_t pa = s->pa, n = BLOCK - pa % BLOCK, at;
		if (n > hi - pa)
			n = hi - pa;
		s->pa += n;
		if (!address_of(s, pa, &at) || !wanted(s, at, n)) {
			s->st.bytes_done += n;
			continue;
		}
		struct kp_error *err = kp_read(s->k, KP_PHYS, pa, s->data, n);
		if (err) {
			kp_error_destroy(err);
			s->sub_pa = pa;
			s->sub_end = pa + n;
			continue;
		}
		s->st.bytes_done += n;
		s->st.pages += (n + s->page - 1) / s->page;
		return window(s, at, n);
	}
}

// The next window of the process's mappings; false at the end (or the
// bound), *err when its mappings cannot be walked.
static bool next_user(struct kp_search *s, struct kp_error **err)
{
	for (;;) {
		if (!s->vma || s->va >= s->vma->end) {
			if ((*err = kp_vma_iter_next(s->vit, &s->vma)) || !s->vma)
				return false;
			// A hit names the mapping it starts in: no string is
			// carried from one mapping into the next.
			s->carry_end = 0;
			s->va = s->vma->start;
		}
		// Outside [start, end): on to start, or past the mapping.
		if (s->va + s->page <= s->spec.start)
			s->va = s->spec.start - s->spec.start % s->page;
		if ((s->spec.end && s->va >= s->spec.end) || s->va >= s->vma->end) {
			s->va = s->vma->end;
			continue;
		}
		uint64_t va = s->va;
		s->va += s->page;
		if (s->st.pages + s->st.unreadable >= MAX_USER_PAGES) {
			s->st.bound = true;
			s->st.bound_at = va;
			return false;
		}
		struct kp_error *e = kp_user_read(s->u, va, s->data, s->page);
		if (e) {
			kp_error_destroy(e);
			s->st.unreadable++;
			continue;
		}
		s->st.pages++;
		return window(s, va, s->page);
	}
}

// The next hit in the window, from pos; false if there is none.
static bool scan(struct kp_search *s)
{
	const struct kp_search_spec *sp = &s->spec;
	if (s->bytes) {
		const uint8_t *p;
		while (s->pos < s->wlen &&
		       (p = memmem(s->win + s->pos, s->wlen - s->pos, s->bytes, sp->nbytes))) {
			s->pos = (size_t)(p - s->win) + 1;
			s->hit.address = s->wbase + (uint64_t)(p - s->win);
			if (wanted(s, s->hit.address, 1) && !(s->tail && s->hit.address >= s->tail_from))
				return true;
		}
		s->pos = s->wlen;
		return false;
	}
	uint64_t want = sp->value & ~sp->ignore;
	for (; s->pos + sp->width <= s->wlen; s->pos += sp->width) {
		uint64_t v = 0;
		for (unsigned i = 0; i < sp->width; i++)
			v |= (uint64_t)s->win[s->pos + i] << (8 * i);
		if ((v & ~sp->ignore) == want && wanted(s, s->wbase + s->pos, 1)) {
			s->hit.address = s->wbase + s->pos;
			s->pos += sp->width;
			return true;
		}
	}
	return false;
}

struct kp_error *kp_search_next(struct kp_search *s, const struct kp_search_hit **ret)
{
	*ret = NULL;
	struct kp_error *err = NULL;
	while (!s->ended) {
		if (scan(s)) {
			s->hit.vma = s->spec.space == KP_SEARCH_USER ? s->vma : NULL;
			*ret = &s->hit;
			return NULL;
		}
		if (!(s->spec.space == KP_SEARCH_USER ? next_user(s, &err) : next_phys(s)))
			s->ended = true;
	}
	return err;
}

void kp_search_status(const struct kp_search *s, struct kp_search_status *ret)
{
	struct kp_search_status st = s->st;
	st.sz = sizeof(st);
	kp_out_copy(ret, &st, sizeof(st));
}

void kp_search_destroy(struct kp_search *s)
{
	if (!s)
		return;
	kp_vma_iter_destroy(s->vit);
	kp_user_destroy(s->u);
	free(s->bytes);
	free(s->carry);
	free(s->buf);
	free(s);
}

// The spec's parts that do not agree, in one line; NULL if they do.
static const char *spec_problem(const struct kp_search_spec *sp)
{
	if (sp->space != KP_SEARCH_KERNEL && sp->space != KP_SEARCH_USER && sp->space != KP_SEARCH_PHYS)
		return "space is not KP_SEARCH_KERNEL, KP_SEARCH_USER or KP_SEARCH_PHYS";
	if (sp->bytes && (!sp->nbytes || sp->nbytes > KP_SEARCH_MAX_BYTES))
		return "a string of 1 to 4096 bytes (KP_SEARCH_MAX_BYTES) is searched";
	if (!sp->bytes && sp->width != 8 && sp->width != 4)
		return "a value is 8 or 4 bytes wide";
	if (!sp->bytes && sp->width == 4 && (sp->value & ~sp->ignore) > 0xffffffffu)
		return "a 4-byte value above 0xffffffff is never found";
	if (sp->end && sp->end <= sp->start)
		return "end must be above start";
	if (sp->phys_hi && sp->phys_hi <= sp->phys_lo)
		return "phys_hi must be above phys_lo";
	if (sp->space == KP_SEARCH_USER && (sp->phys_lo || sp->phys_hi))
		return "a process's search has no slice of physical memory";
	if (sp->space == KP_SEARCH_USER && sp->pid <= 0)
		return "a process's search needs its PID";
	return NULL;
}

static struct kp_error *open_user(struct kp_search *s)
{
	uint64_t task;
	struct kp_error *err = kp_task_by_pid(s->k, s->spec.pid, &task);
	if (err || (err = kp_user_create(s->k, task, &s->u)))
		return err;
	return kp_vma_iter_create(s->k, task, &s->vit);
}

static struct kp_error *open_phys(struct kp_search *s)
{
	uint64_t va;
	s->nr = kp_kernel_ranges(s->k, KP_PHYS, &s->r);
	for (size_t i = 0; i < s->nr; i++)
		s->st.bytes_total += s->r[i].end - s->r[i].start;
	if (s->spec.space == KP_SEARCH_KERNEL && s->nr && !kp_phys_to_virt(s->k, s->r[0].start, &va))
		return kp_error_create(KP_ERR_UNSUPPORTED, "kernel memory is searched through the direct map, "
				       "whose address the source does not give (search physical memory instead)");
	return NULL;
}

struct kp_error *kp_search_create(struct kp_kernel *k, const struct kp_search_spec *spec, struct kp_search **ret)
{
	struct kp_search_spec sp;
	const char *why;
	if (!spec)
		return kp_error_create(KP_ERR_INVALID, "kp_search_spec: none given");
	struct kp_error *err = kp_opts_copy(spec, &sp, sizeof(sp), "kp_search_spec");
	if (err)
		return err;
	if ((why = spec_problem(&sp)))
		return kp_error_create(KP_ERR_INVALID, "kp_search_spec: %s", why);
	struct kp_search *s = calloc(1, sizeof(*s));
	if (!s)
		return &kp_enomem;
	s->k = k;
	s->spec = sp;
	s->st.sz = sizeof(s->st);
	KP_INIT(kp_kernel_info, info);
	kp_kernel_get_info(k, &info);
	s->page = info.page_size && info.page_size <= PAGE_MAX ? info.page_size : 4096;
	size_t room = sp.bytes ? sp.nbytes - 1 : 0;
	if (!(s->buf = malloc(room + BLOCK)) || (sp.bytes && (!(s->bytes = malloc(sp.nbytes)) ||
							       !(s->carry = malloc(room + 1))))) {
		kp_search_destroy(s);
		return &kp_enomem;
	}
	s->data = s->buf + room;
	s->win = s->data;
	if (sp.bytes)
		memcpy(s->bytes, sp.bytes, sp.nbytes);
	s->spec.bytes = NULL;	// the caller's, not kept
	if ((err = sp.space == KP_SEARCH_USER ? open_user(s) : open_phys(s))) {
		kp_search_destroy(s);
		return err;
	}
	*ret = s;
	return NULL;
}
