// SPDX-License-Identifier: MIT
// kpeek search's hits: the library's kp_search (src/linux/mm/search.c)
// run in this process or a worker's slice, each hit with what its address
// is (whatis, or a process's mapping), printed or recorded for the parent.
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "output.h"
#include "search.h"

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
static bool hit(struct search *s, const struct kp_search_hit *h)
{
	char what[512];
	enum search_what known = WHAT_KNOWN;
	what[0] = '\0';
	if (s->mode == SEARCH_USER)
		snprintf(what, sizeof(what), "%" PRIx64 "-%" PRIx64 " %s %s", h->vma->start, h->vma->end,
			 h->vma->perms, h->vma->path);
	else if (s->records && s->limit)
		known = WHAT_LATER;
	else
		known = search_whatis(s, h->address, what, sizeof(what));
	if (!s->records)
		return search_print(s, h->address, known, what);
	return search_record_write(s, h->address, known, what) && counted(s);
}

static void counters(struct search *s, const struct kp_search_status *st)
{
	s->total = st->bytes_total;
	s->done = st->bytes_done;
	s->pages = st->pages;
	s->unreadable = st->unreadable;
	s->bound = st->bound;
	s->bound_at = st->bound_at;
}

// Before each block: the progress line; a worker stops once one before it
// reached the limit.
static bool on_block(void *arg, const struct kp_search_status *st)
{
	struct search *s = arg;
	counters(s, st);
	search_progress(s);
	return !s->shared || search_worker_goes_on(s);
}

// The library's search of what the options ask (a worker: its slice).
static struct kp_error *create(struct search *s, struct kp_search **ret)
{
	KP_INIT(kp_search_spec, sp);
	sp.space = s->mode == SEARCH_USER ? KP_SEARCH_USER : s->mode == SEARCH_PHYS ? KP_SEARCH_PHYS :
		   KP_SEARCH_KERNEL;
	sp.pid = s->pid;
	sp.bytes = s->str;
	sp.nbytes = s->slen;
	sp.value = s->value;
	sp.ignore = ~s->mask;
	sp.width = s->width;
	sp.start = s->start;
	sp.end = s->end;
	sp.phys_lo = s->pa_lo;
	sp.phys_hi = s->pa_hi;
	sp.block_fn = on_block;
	sp.block_arg = s;
	return kp_search_create(s->k, &sp, ret);
}

struct kp_error *search_run(struct search *s, bool *oom)
{
	struct kp_search *search;
	struct kp_error *err = create(s, &search);
	if (err)
		return err;
	// The spec and the source hold: the workers search, if any (each
	// creates its own search of its slice; this one is not used then).
	if (s->mode != SEARCH_USER && !s->shared && search_jobs(s, oom)) {
		kp_search_destroy(search);
		return NULL;
	}
	const struct kp_search_hit *h;
	while (!(err = kp_search_next(search, &h)) && h && hit(s, h))
		;
	KP_INIT(kp_search_status, st);
	kp_search_status(search, &st);
	counters(s, &st);
	search_progress_end(s);
	kp_search_destroy(search);
	return err;
}
