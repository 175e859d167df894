// SPDX-License-Identifier: MIT
// A split dump (makedumpfile --split) read as one: its parts, given in any
// order, must be the same dump (VMCOREINFO, page size, page frames) and
// cover every frame once. kernel_open.c opens them; this checks them.
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "core/kernel_impl.h"
#include "format/source.h"
#include "io/file.h"
#include "util/error.h"

struct part {
	const struct kp_source *src;
	const char *path;
};

static int by_start(const void *a, const void *b)
{
	const struct part *x = a, *y = b;
	return x->src->split_start < y->src->split_start ? -1 : x->src->split_start > y->src->split_start;
}

// Part i against the first: the same dump.
static struct kp_error *same_dump(const struct part *first, const struct part *p)
{
	const struct kp_source *a = first->src, *b = p->src;
	if (!b->split)
		return kp_error_create(KP_ERR_INVALID, "%s is not a part of a split dump (makedumpfile --split): "
				       "give one dump, or every part of one", p->path);
	if (b->split_max != a->split_max || b->split_page_size != a->split_page_size)
		return kp_error_create(KP_ERR_INVALID, "%s and %s are parts of different dumps: 0x%" PRIx64
				       " and 0x%" PRIx64 " page frames of %" PRIu64 " and %" PRIu64 " bytes",
				       first->path, p->path, a->split_max, b->split_max, a->split_page_size,
				       b->split_page_size);
	if (a->vmcoreinfo_size != b->vmcoreinfo_size ||
	    (a->vmcoreinfo && memcmp(a->vmcoreinfo, b->vmcoreinfo, a->vmcoreinfo_size)))
		return kp_error_create(KP_ERR_INVALID, "%s and %s are parts of different dumps: their VMCOREINFO "
				       "differs", first->path, p->path);
	return NULL;
}

// The parts in frame order: each begins where the one before ends, from 0
// to the last frame.
static struct kp_error *cover(const struct part *p, size_t n)
{
	uint64_t at = 0, max = p[0].src->split_max;
	for (size_t i = 0; i < n; i++) {
		const struct kp_source *s = p[i].src;
		if (s->split_start > at)
			return kp_error_create(KP_ERR_INVALID, "split dump: page frames 0x%" PRIx64 "-0x%" PRIx64
					       " are in none of the %zu parts given (a part is missing)",
					       at, s->split_start, n);
		if (s->split_start < at)
			return kp_error_create(KP_ERR_INVALID, "split dump: %s (page frames 0x%" PRIx64 "-0x%"
					       PRIx64 ") overlaps %s (up to 0x%" PRIx64 "): the same part twice?",
					       p[i].path, s->split_start, s->split_end, p[i - 1].path, at);
		at = s->split_end;
	}
	if (at < max)
		return kp_error_create(KP_ERR_INVALID, "split dump: page frames 0x%" PRIx64 "-0x%" PRIx64
				       " are in none of the %zu parts given (a part is missing)", at, max, n);
	return NULL;
}

struct kp_error *kp_split_check(struct kp_kernel *k)
{
	size_t n = 1 + k->nparts;
	struct part *p = calloc(n, sizeof(*p));
	if (!p)
		return &kp_enomem;
	p[0] = (struct part){ &k->src, k->file->path };
	for (size_t i = 0; i < k->nparts; i++)
		p[1 + i] = (struct part){ &k->part_srcs[i], k->part_files[i]->path };
	struct kp_error *err = !k->src.split ? same_dump(&p[1], &p[0]) : NULL;
	for (size_t i = 1; !err && i < n; i++)
		err = same_dump(&p[0], &p[i]);
	if (!err) {
		qsort(p, n, sizeof(*p), by_start);
		err = cover(p, n);
	}
	free(p);
	return err;
}
