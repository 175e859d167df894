// SPDX-License-Identifier: MIT
// The scan of kpeek search: physical ranges of the source (kernel memory is
// their direct-map view, each physical page once), or a process's mappings
// page by page through its own page tables.
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "output.h"
#include "search.h"

#define BLOCK (256u << 10)		// bytes read at once
#define PAGE_MAX (64u << 10)		// the largest page size kpeek knows
// Pages of a process's mappings looked at, at most (1 TiB of 4 KiB pages):
// a sparse reservation of terabytes is not walked to its end.
#define MAX_USER_PAGES (1ULL << 28)

void search_progress_end(struct search *s)
{
	if (s->progress)
		fprintf(stderr, "\r\033[K");
}

void search_progress(struct search *s)
{
	if (!s->progress)
		return;
	double now = cli_monotonic();
	if (now - s->last < 0.5)
		return;
	s->last = now;
	if (s->total)
		fprintf(stderr, "\rsearch: %" PRIu64 " of %" PRIu64 " MiB, %" PRIu64 " hits", s->done >> 20,
			s->total >> 20, s->hits);
	else
		fprintf(stderr, "\rsearch: %" PRIu64 " pages, %" PRIu64 " hits", s->pages, s->hits);
}

enum search_what search_whatis(struct search *s, uint64_t addr, char *buf, size_t size)
{
	struct kp_whatis *w;
	struct kp_error *err = kp_whatis_create(s->k, s->mode == SEARCH_PHYS ? KP_PHYS : KP_VIRT, addr, &w);
	if (err) {
		snprintf(buf, size, "%s", kp_error_message(err));
		kp_error_destroy(err);
		return WHAT_ERROR;
	}
	enum search_what ret = w->nfacts ? WHAT_KNOWN : WHAT_NOTHING;
	if (w->nfacts) {
		const struct kp_whatis_fact *f = &w->facts[0];
		switch (f->kind) {
		case KP_WHATIS_SLAB:
			snprintf(buf, size, "slab %s object 0x%" PRIx64 "%s%" PRIx64 ", %s", f->slab.cache_name,
				 f->slab.object, f->slab.offset < 0 ? "-0x" : "+0x",
				 (uint64_t)(f->slab.offset < 0 ? -f->slab.offset : f->slab.offset),
				 f->slab.state == KP_SLAB_ALLOCATED ? "allocated" :
				 f->slab.state == KP_SLAB_FREE ? "free" : "state unknown");
			break;
		case KP_WHATIS_TASK:
		case KP_WHATIS_STACK:
			snprintf(buf, size, "%s of PID %d (%s)", f->kind == KP_WHATIS_TASK ? "task_struct" : "stack",
				 f->task.pid, f->task.comm);
			break;
		case KP_WHATIS_SYMBOL:
		case KP_WHATIS_MODULE:
			snprintf(buf, size, "%s %s+0x%" PRIx64 "%s%s%s", f->kind_name, f->sym.name, f->offset,
				 f->sym.module ? " [" : "", f->sym.module ? f->sym.module : "", f->sym.module ? "]" : "");
			break;
		case KP_WHATIS_REGION:
			snprintf(buf, size, "region %s", f->region);
			break;
		case KP_WHATIS_PERCPU:
			if (f->sym.name)
				snprintf(buf, size, "percpu %s+0x%" PRIx64 " of CPU %" PRIu32, f->sym.name, f->offset,
					 f->cpu);
			else
				snprintf(buf, size, "percpu area of CPU %" PRIu32 "+0x%" PRIx64, f->cpu, f->offset);
			break;
		case KP_WHATIS_VMALLOC:
			snprintf(buf, size, "vmalloc 0x%" PRIx64 "-0x%" PRIx64 "%s%s", f->start, f->end,
				 f->caller_sym.name ? " of " : "", f->caller_sym.name ? f->caller_sym.name : "");
			break;
		default:
			snprintf(buf, size, "%s PFN 0x%" PRIx64, f->kind_name, f->pfn);
			break;
		}
	}
	kp_whatis_destroy(w);
	return ret;
}

// One more hit; false once the limit is reached.
static bool counted(struct search *s)
{
	s->hits++;
	if (s->limit && s->hits >= s->limit) {
		s->capped = true;
		return false;
	}
	return true;
}

bool search_print(struct search *s, uint64_t addr, int known, const char *what)
{
	if (out_is_json(s->o)) {
		// Nothing known, or whatis failed: "what" is null (never "-"),
		// "what_error" says why it failed.
		out_begin_object(s->o, NULL);
		out_kv_hex(s->o, "address", addr);
		out_kv_str(s->o, "what", known == WHAT_KNOWN ? what : NULL);
		out_kv_str(s->o, "what_error", known == WHAT_ERROR ? what : NULL);
		out_end_object(s->o);
	} else {
		out_text(s->o, known == WHAT_ERROR ? "%016" PRIx64 ": (whatis: %s)\n" : "%016" PRIx64 ": %s\n",
			 addr, known == WHAT_NOTHING ? "-" : what);
	}
	return counted(s);
}

// A hit: printed, or a worker's record for its parent; false once the
// limit is reached (or a worker cannot write its record).
static bool hit(struct search *s, uint64_t addr)
{
	if (addr < s->start || (s->end && addr >= s->end) || (s->tail && addr >= s->tail_from))
		return true;
	char what[512];
	enum search_what known = WHAT_KNOWN;
	what[0] = '\0';
	if (s->mode == SEARCH_USER)
		snprintf(what, sizeof(what), "%" PRIx64 "-%" PRIx64 " %s %s", s->vma->start, s->vma->end,
			 s->vma->perms, s->vma->path);
	else if (s->records && s->limit)
		known = WHAT_LATER;
	else
		known = search_whatis(s, addr, what, sizeof(what));
	if (!s->records)
		return search_print(s, addr, known, what);
	return search_record_write(s, addr, known, what) && counted(s);
}

static bool scan_value(struct search *s, uint64_t addr, const uint8_t *buf, size_t len)
{
	uint64_t want = s->value & s->mask;
	for (size_t off = 0; off + s->width <= len; off += s->width) {
		uint64_t v = 0;
		for (unsigned i = 0; i < s->width; i++)
			v |= (uint64_t)buf[off + i] << (8 * i);
		if ((v & s->mask) == want && !hit(s, addr + off))
			return false;
	}
	return true;
}

// The string in the carried bytes and buf: matches that start before the
// block too (across a page boundary); the last slen-1 bytes carried on.
static bool scan_string(struct search *s, uint64_t addr, const uint8_t *buf, size_t len)
{
	if (s->carry_end != addr)
		s->ncarry = 0;
	size_t n = s->ncarry + len;
	uint8_t *w = malloc(n);
	if (!w)
		return false;
	memcpy(w, s->carry, s->ncarry);
	memcpy(w + s->ncarry, buf, len);
	uint64_t base = addr - s->ncarry;
	bool go = true;
	for (const uint8_t *p = w; go && (p = memmem(p, n - (size_t)(p - w), s->str, s->slen)); p++)
		go = hit(s, base + (uint64_t)(p - w));
	size_t keep = s->slen - 1 < n ? s->slen - 1 : n;
	memcpy(s->carry, w + n - keep, keep);
	s->ncarry = keep;
	s->carry_end = addr + len;
	free(w);
	return go;
}

static bool scan(struct search *s, uint64_t addr, const uint8_t *buf, size_t len)
{
	s->done += len;
	search_progress(s);
	if (s->shared && !search_worker_goes_on(s))
		return false;
	return s->str ? scan_string(s, addr, buf, len) : scan_value(s, addr, buf, len);
}

// Whether [addr, addr + len) can hold a hit within --start/--end.
static bool wanted(const struct search *s, uint64_t addr, uint64_t len)
{
	return addr + len > s->start && (!s->end || addr < s->end);
}

// One block of physical memory; page by page where it cannot be read whole.
static bool phys_block(struct search *s, uint8_t *buf, uint64_t pa, uint64_t len, uint64_t page)
{
	uint64_t at = pa;
	if (s->mode == SEARCH_KERNEL && !kp_phys_to_virt(s->k, pa, &at))
		return true;
	if (!wanted(s, at, len)) {
		s->done += len;
		return true;
	}
	struct kp_error *err = kp_read(s->k, KP_PHYS, pa, buf, len);
	if (!err) {
		s->pages += (len + page - 1) / page;
		return scan(s, at, buf, len);
	}
	kp_error_destroy(err);
	for (uint64_t off = 0; off < len; off += page) {
		uint64_t n = len - off < page ? len - off : page;
		if ((err = kp_read(s->k, KP_PHYS, pa + off, buf, n))) {
			kp_error_destroy(err);
			s->unreadable++;
			s->done += n;
			continue;
		}
		s->pages++;
		if (!scan(s, at + off, buf, n))
			return false;
	}
	return true;
}

// A worker's string may go on past its slice: the bytes after pa_hi that
// end a match starting before it (the next worker's own matches start
// there, and are not its).
static void string_tail(struct search *s, uint8_t *buf)
{
	uint64_t at = s->pa_hi;
	if (!s->str || !s->pa_hi || (s->mode == SEARCH_KERNEL && !kp_phys_to_virt(s->k, s->pa_hi, &at)))
		return;
	struct kp_error *err = kp_read(s->k, KP_PHYS, s->pa_hi, buf, s->slen - 1);
	if (err) {
		kp_error_destroy(err);
		return;
	}
	s->tail = true;
	s->tail_from = at;
	scan_string(s, at, buf, s->slen - 1);
}

static struct kp_error *search_phys(struct search *s, uint8_t *buf)
{
	const struct kp_range *r;
	size_t nr = kp_kernel_ranges(s->k, KP_PHYS, &r);
	KP_INIT(kp_kernel_info, info);
	kp_kernel_get_info(s->k, &info);
	uint64_t page = info.page_size ? info.page_size : 4096;
	for (size_t i = 0; i < nr; i++)
		s->total += r[i].end - r[i].start;
	for (size_t i = 0; i < nr; i++) {
		uint64_t lo = r[i].start > s->pa_lo ? r[i].start : s->pa_lo;
		uint64_t hi = s->pa_hi && s->pa_hi < r[i].end ? s->pa_hi : r[i].end;
		for (uint64_t pa = lo; pa < hi;) {
			uint64_t n = BLOCK - pa % BLOCK;
			if (n > hi - pa)
				n = hi - pa;
			if (!phys_block(s, buf, pa, n, page))
				return NULL;
			pa += n;
		}
	}
	string_tail(s, buf);
	return NULL;
}

static struct kp_error *search_vma(struct search *s, struct kp_user *u, uint8_t *buf, uint64_t page)
{
	for (uint64_t va = s->vma->start; va < s->vma->end; va += page) {
		if (!wanted(s, va, page))
			continue;
		if (s->pages + s->unreadable >= MAX_USER_PAGES) {
			s->bound = true;
			s->bound_at = va;
			return NULL;
		}
		struct kp_error *err = kp_user_read(u, va, buf, page);
		if (err) {
			kp_error_destroy(err);
			s->unreadable++;
			continue;
		}
		s->pages++;
		if (!scan(s, va, buf, page))
			return NULL;
	}
	return NULL;
}

static struct kp_error *search_user(struct search *s, uint8_t *buf)
{
	uint64_t task;
	struct kp_user *u;
	struct kp_vma_iter *it;
	KP_INIT(kp_kernel_info, info);
	kp_kernel_get_info(s->k, &info);
	uint64_t page = info.page_size && info.page_size <= PAGE_MAX ? info.page_size : 4096;
	struct kp_error *err = kp_task_by_pid(s->k, s->pid, &task);
	if (err || (err = kp_user_create(s->k, task, &u)))
		return err;
	if ((err = kp_vma_iter_create(s->k, task, &it))) {
		kp_user_destroy(u);
		return err;
	}
	const struct kp_vma *v;
	while (!(err = kp_vma_iter_next(it, &v)) && v) {
		s->vma = v;
		if ((err = search_vma(s, u, buf, page)) || s->capped || s->bound)
			break;
	}
	kp_vma_iter_destroy(it);
	kp_user_destroy(u);
	return err;
}

struct kp_error *search_run(struct search *s, bool *oom)
{
	if (s->mode != SEARCH_USER && !s->shared && search_jobs(s, oom))
		return NULL;	// done by workers
	uint8_t *buf = malloc(BLOCK);
	if (!buf || (s->str && !(s->carry = malloc(s->slen)))) {
		free(buf);
		*oom = true;
		return NULL;
	}
	struct kp_error *err = s->mode == SEARCH_USER ? search_user(s, buf) : search_phys(s, buf);
	search_progress_end(s);
	free(s->carry);
	free(buf);
	return err;
}
