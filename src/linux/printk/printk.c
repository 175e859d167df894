// SPDX-License-Identifier: MIT
// kp_printk_iter: the lockless printk ring buffer (5.10+).
//
// The ring buffer (kernel/printk/printk_ringbuffer.h) is three arrays:
//   descs[1 << count_bits]  struct prb_desc { atomic_long_t state_var;
//                           struct prb_data_blk_lpos text_blk_lpos; }
//   infos[1 << count_bits]  struct printk_info { seq, ts_nsec, text_len,
//                           facility, flags:5, level:3, caller_id, dev_info }
//   data[1 << size_bits]    text blocks { unsigned long id; char text[]; }
// A descriptor's id is its position in an endless sequence; its index is
// id & (count - 1). state_var holds the id in its low 62 bits and the state
// in its top two (0 reserved, 1 committed, 2 finalized, 3 reusable); a
// state_var whose id differs from the one expected means the slot has been
// recycled. Records live from tail_id to head_id.
//
// Text positions ("lpos") are also endless: index = lpos & (size - 1) and
// the wrap count is lpos >> size_bits. A block lies in [begin, next). A block
// that would cross the end of the array is stored at index 0 instead (its id
// is also written at begin), so then the bytes are data[0, next & (size-1)).
// Both lpos odd means no data block: 0x3 an empty text, 0x1 the text was lost.
//
// Committed records (the newest one, while a continuation may still extend
// it) are shown as well as finalized ones: in a dump they are as complete
// as they will ever be.
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/kernel.h"
#include "core/layout.h"
#include "format/vmcoreinfo.h"
#include "linux/lib/walk.h"
#include "linux/printk/printk.h"
#include "util/error.h"
#include "util/le.h"
#include "util/vec.h"

#define DESC_STATE_SHIFT 62
#define DESC_ID_MASK ((1ULL << DESC_STATE_SHIFT) - 1)
#define DESC_COMMITTED 1
#define DESC_FINALIZED 2
#define LPOS_NO_DATA 0x3
#define LOG_CONT 8	// enum printk_info_flags (5.10+)

// Sanity limits: the kernel allows log_buf_len up to 2 GiB but no real
// configuration comes near these.
#define MAX_COUNT_BITS 22
#define MAX_SIZE_BITS 28



static bool lost(const struct kp_lx_prb_lost *m, uint64_t off, uint64_t len)
{
	if (!m->pages || !len)
		return false;
	for (uint64_t p = (m->skew + off) / KP_LX_PRB_PAGE; p <= (m->skew + off + len - 1) / KP_LX_PRB_PAGE; p++)
		if (m->pages[p])
			return true;
	return false;
}

// Locates the text of a block in data (NULL if it lies on a page the
// source lacks); false if the positions are invalid.
static bool block_text(const struct kp_lx_prb_image *img, uint64_t id, uint64_t begin,
		       uint64_t next, const uint8_t **text_ret, size_t *size_ret)
{
	uint64_t size = 1ULL << img->size_bits;
	unsigned sb = img->size_bits;
	uint64_t start, len;
	if ((begin & 7) || (next & 7))
		return false;
	if (next - begin == 0 || next - begin > size)
		return false;
	// Same wrap: a regular block. (Comparing next - 1 also admits a block
	// ending exactly at the end of the array, which kernels since 6.18's
	// "don't needlessly wrap data blocks" write.)
	if (begin >> sb == (next - 1) >> sb && begin < next) {
		start = begin & (size - 1);
		len = next - begin;
	} else if ((begin + size) >> sb == (next - 1) >> sb) {
		start = 0;
		len = next & (size - 1);
		if (!len)
			len = size;
	} else {
		return false;
	}
	if (len < 8 || start + len > size)
		return false;
	if (lost(&img->data_lost, start, len)) {
		*text_ret = NULL;
		*size_ret = 0;
		return true;
	}
	const uint8_t *blk = img->data + start;
	if ((kp_le64(blk) & DESC_ID_MASK) != id)
		return false;	// the block was overwritten by a newer record
	*text_ret = blk + 8;
	*size_ret = len - 8;
	return true;
}

struct kp_error *kp_lx_prb_decode(const struct kp_lx_prb_layout *l,
				  const struct kp_lx_prb_image *img, kp_lx_prb_fn *fn,
				  void *arg, struct kp_lx_prb_stats *stats)
{
	*stats = (struct kp_lx_prb_stats){ 0 };
	if (!kp_lx_prb_layout_ok(l))
		return kp_error_create(KP_ERR_FORMAT, "printk ring buffer: implausible struct layout");
	if (img->count_bits > MAX_COUNT_BITS || img->size_bits > MAX_SIZE_BITS ||
	    img->size_bits < 4)
		return kp_error_create(KP_ERR_FORMAT, "printk ring buffer: implausible sizes (count_bits %u, size_bits %u)",
				       img->count_bits, img->size_bits);
	uint64_t count = 1ULL << img->count_bits;
	uint64_t head = img->head_id & DESC_ID_MASK, tail = img->tail_id & DESC_ID_MASK;
	uint64_t n = ((head - tail) & DESC_ID_MASK) + 1;
	if (n > count) {
		// A torn or corrupt tail: the ring cannot hold more than count
		// records, so start at the oldest one that can still exist.
		n = count;
		tail = (head - (count - 1)) & DESC_ID_MASK;
	}
	stats->descs = n;
	for (uint64_t i = 0; i < n; i++) {
		uint64_t id = (tail + i) & DESC_ID_MASK;
		uint64_t idx = id & (count - 1);
		const uint8_t *desc = img->descs + idx * l->desc_size;
		const uint8_t *info = img->infos + idx * l->info_size;
		if (lost(&img->descs_lost, idx * l->desc_size, l->desc_size) ||
		    lost(&img->infos_lost, idx * l->info_size, l->info_size)) {
			if (!stats->unread++)
				stats->first_unread = id;
			continue;
		}
		uint64_t sv = kp_le64(desc + l->state_var);
		unsigned state = (unsigned)(sv >> DESC_STATE_SHIFT);
		if ((sv & DESC_ID_MASK) != id) {
			// Every descriptor from tail to head holds its own id (the
			// tail's may be recycled under a writer): one that does not
			// is a ring read at the wrong place or damaged.
			if (!stats->bad_ids++)
				stats->first_bad = id;
			continue;
		}
		if (state != DESC_COMMITTED && state != DESC_FINALIZED)
			continue;
		uint64_t begin = kp_le64(desc + l->text_begin), next = kp_le64(desc + l->text_next);
		struct kp_printk_record rec = {
			.seq = kp_le64(info + l->seq),
			.ts_nsec = kp_le64(info + l->ts_nsec),
			.facility = info[l->facility],
			.level = (info[l->flags_byte] >> l->level_shift) & 7,
			.caller_id = kp_le32(info + l->caller_id),
			.cont = (info[l->flags_byte] >> l->flags_shift) & LOG_CONT,
			.text = "",
			.len = 0,
		};
		size_t text_len = kp_le16(info + l->text_len);
		if ((begin & 1) && (next & 1)) {
			if (begin != LPOS_NO_DATA || next != LPOS_NO_DATA)
				continue;	// text lost (FAILED_LPOS)
		} else {
			const uint8_t *text;
			size_t size;
			if (!block_text(img, id, begin, next, &text, &size))
				continue;	// recycled or corrupt: the kernel skips it too
			if (!text) {
				if (!stats->unread++)
					stats->first_unread = id;
				continue;
			}
			if (size < text_len)
				continue;
			rec.text = (const char *)text;
			rec.len = text_len;
		}
		struct kp_error *err = fn(&rec, arg);
		if (err)
			return err;
		stats->records++;
	}
	return NULL;
}

// ---------------------------------------------------------------- reading

struct kp_printk_iter {
	uint8_t *descs, *infos, *data;		// the ring buffer's arrays
	uint8_t *lost[3];			// their pages the source lacks (or NULL)
	struct kp_error *hole;			// why the first of them could not be read
	struct kp_printk_record *recs;		// decoded; texts point into data
	size_t n, cap, next;
	struct kp_lx_walk walk;
};

static struct kp_error *collect(const struct kp_printk_record *rec, void *arg)
{
	struct kp_printk_iter *it = arg;
	if (!KP_VEC_RESERVE(it->recs, it->cap, it->n + 1))
		return &kp_enomem;
	it->recs[it->n++] = *rec;
	return NULL;
}

// The ring's header: where its arrays are and how large they are.
struct ring {
	struct kp_lx_prb_image img;
	uint64_t descs, infos, data;
	size_t ndescs, ninfos, ndata;
};

static struct kp_error *read_header(struct kp_kernel *k, const struct kp_lx_prb_layout *l,
				    uint64_t prb, struct ring *r)
{
	uint64_t dr = prb + l->desc_ring, tr = prb + l->text_data_ring;
	uint32_t count_bits, size_bits;
	struct kp_error *err;
	*r = (struct ring){ 0 };
	if ((err = kp_read_u32(k, dr + l->count_bits, &count_bits)) ||
	    (err = kp_read_u64(k, dr + l->descs, &r->descs)) ||
	    (err = kp_read_u64(k, dr + l->infos, &r->infos)) ||
	    (err = kp_read_u64(k, dr + l->head_id, &r->img.head_id)) ||
	    (err = kp_read_u64(k, dr + l->tail_id, &r->img.tail_id)) ||
	    (err = kp_read_u32(k, tr + l->size_bits, &size_bits)) ||
	    (err = kp_read_u64(k, tr + l->data, &r->data)))
		return kp_error_prefix(err, "reading struct printk_ringbuffer at 0x%" PRIx64, prb);
	if (count_bits > MAX_COUNT_BITS || size_bits > MAX_SIZE_BITS || size_bits < 4)
		return kp_error_create(KP_ERR_FORMAT, "printk ring buffer at 0x%" PRIx64 ": implausible sizes (count_bits %u, size_bits %u)",
				       prb, count_bits, size_bits);
	r->img.count_bits = count_bits;
	r->img.size_bits = size_bits;
	uint64_t count = 1ULL << count_bits;
	r->ndescs = count * l->desc_size;
	r->ninfos = count * l->info_size;
	r->ndata = (size_t)1 << size_bits;
	// Within the fixed limits, a damaged header can still claim far more
	// than the dump holds: what it claims must fit in the source.
	uint64_t have = kp_kernel_memory_bytes(k);
	if (r->ndescs + r->ninfos + r->ndata > have)
		return kp_error_create(KP_ERR_FORMAT, "printk ring buffer at 0x%" PRIx64 " is corrupt: "
				       "its %zu bytes (count_bits %u, size_bits %u) are more than "
				       "the %" PRIu64 " bytes of memory in the source",
				       prb, r->ndescs + r->ninfos + r->ndata, count_bits, size_bits, have);
	return NULL;
}

// Copies one of the ring's arrays. A source that lacks some of its pages
// (a filtered or damaged dump) gives the others: the missing ones are
// marked in *lost_ret (allocated) and their records left out by the
// decoder; it->hole says why the first could not be read. An array of
// which no page can be read is an error.
static struct kp_error *read_array(struct kp_kernel *k, struct kp_printk_iter *it, const char *what,
				   uint64_t va, uint8_t *buf, size_t n, uint8_t **lost_ret,
				   struct kp_lx_prb_lost *m)
{
	*m = (struct kp_lx_prb_lost){ 0 };
	struct kp_error *err = kp_read(k, KP_VIRT, va, buf, n);
	if (!err || err->code != KP_ERR_FAULT)
		return err ? kp_error_prefix(err, "reading printk %s at 0x%" PRIx64, what, va) : NULL;
	uint64_t skew = va % KP_LX_PRB_PAGE, npages = (skew + n + KP_LX_PRB_PAGE - 1) / KP_LX_PRB_PAGE;
	uint8_t *pages = calloc(npages, 1);
	if (!pages) {
		kp_error_destroy(err);
		return &kp_enomem;
	}
	size_t read = 0;
	for (uint64_t p = 0, off = 0; off < n; p++) {
		size_t len = (size_t)(KP_LX_PRB_PAGE - (p ? 0 : skew));
		if (len > n - off)
			len = n - off;
		struct kp_error *e = kp_read(k, KP_VIRT, va + off, buf + off, len);
		if (e) {
			pages[p] = 1;
			memset(buf + off, 0, len);
			if (!it->hole && e->code == KP_ERR_FAULT)
				it->hole = kp_error_prefix(e, "reading printk %s at 0x%" PRIx64, what, va);
			else
				kp_error_destroy(e);
		} else {
			read += len;
		}
		off += len;
	}
	if (!read) {
		free(pages);
		return kp_error_prefix(err, "reading printk %s at 0x%" PRIx64, what, va);
	}
	kp_error_destroy(err);
	free(*lost_ret);
	*lost_ret = pages;
	*m = (struct kp_lx_prb_lost){ .pages = pages, .skew = skew };
	return NULL;
}

// Copies the ring's arrays into the iterator and decodes them.
static struct kp_error *read_ring(struct kp_kernel *k, const struct kp_lx_prb_layout *l,
				  struct kp_printk_iter *it, struct ring *r,
				  struct kp_lx_prb_stats *stats)
{
	struct kp_error *err;
	it->n = 0;
	kp_error_destroy(it->hole);
	it->hole = NULL;
	if ((err = read_array(k, it, "descriptors", r->descs, it->descs, r->ndescs, &it->lost[0],
			      &r->img.descs_lost)) ||
	    (err = read_array(k, it, "infos", r->infos, it->infos, r->ninfos, &it->lost[1],
			      &r->img.infos_lost)) ||
	    (err = read_array(k, it, "text", r->data, it->data, r->ndata, &it->lost[2],
			      &r->img.data_lost)))
		return err;
	r->img.descs = it->descs;
	r->img.infos = it->infos;
	r->img.data = it->data;
	return kp_lx_prb_decode(l, &r->img, collect, it, stats);
}

// What the decoded ring says about itself: no valid descriptor at all is
// a ring read at the wrong place (an error, never an empty log); some
// invalid ones are records left out.
static struct kp_error *judge(uint64_t prb, const struct ring *r, const struct kp_lx_prb_stats *st)
{
	if (!st->bad_ids)
		return NULL;
	return kp_error_create(KP_ERR_FORMAT,
			       "printk ring buffer at 0x%" PRIx64 " is corrupt: %" PRIu64 " of the %" PRIu64
			       " descriptors from tail_id 0x%" PRIx64 " to head_id 0x%" PRIx64
			       " do not hold their own id (the first: id 0x%" PRIx64 ", descriptor array at 0x%" PRIx64 ")",
			       prb, st->bad_ids, st->descs, r->img.tail_id, r->img.head_id, st->first_bad, r->descs);
}

// Records on pages the source lacks (it->hole, unread of them): left out,
// the walk says where the first page was; none readable at all is an error.
static struct kp_error *account_holes(struct kp_printk_iter *it, uint64_t unread)
{
	struct kp_error *hole = it->hole;
	it->hole = NULL;
	if (!hole)
		return NULL;
	if (!it->n)
		return hole;
	uint64_t bad = it->walk.left_out;
	kp_lx_walk_left_out(&it->walk, kp_error_prefix(hole, "%" PRIu64 " records left out", unread));
	it->walk.left_out = bad + unread;
	return NULL;
}

struct kp_error *kp_lx_printk_iter_create(struct kp_kernel *k, const struct kp_lx_prb_layout *l,
					  uint64_t prb, struct kp_printk_iter **ret)
{
	struct ring r;
	struct kp_error *err = read_header(k, l, prb, &r);
	if (err)
		return err;
	struct kp_printk_iter *it = calloc(1, sizeof(*it));
	if (!it)
		return &kp_enomem;
	kp_lx_walk_init(&it->walk, k);
	it->descs = malloc(r.ndescs);
	it->infos = malloc(r.ninfos);
	it->data = malloc(r.ndata);
	if (!it->descs || !it->infos || !it->data) {
		kp_printk_iter_destroy(it);
		return &kp_enomem;
	}
	// A live kernel writes the ring while it is copied: a pass whose
	// descriptors do not all hold their ids is read again, header and all.
	uint64_t unread = 0;
	for (;;) {
		struct kp_lx_prb_stats st = { 0 };
		err = read_ring(k, l, it, &r, &st);
		unread = st.unread;
		struct kp_error *bad = err ? NULL : judge(prb, &r, &st);
		if (!err && !bad)
			break;
		if ((!err || err->code != KP_ERR_NOMEM) && kp_lx_walk_restart(&it->walk)) {
			size_t sizes = r.ndescs + r.ninfos + r.ndata;
			kp_error_destroy(err);
			kp_error_destroy(bad);
			if (!(err = read_header(k, l, prb, &r)) && r.ndescs + r.ninfos + r.ndata != sizes)
				err = kp_error_create(KP_ERR_FORMAT, "printk ring buffer at 0x%" PRIx64 " changed its size while read",
						      prb);
			if (err)
				break;
			continue;
		}
		if (err)
			break;
		if (!st.records) {
			err = bad;	// nothing valid: an error, never an empty log
			break;
		}
		if (it->walk.live) {
			kp_error_destroy(bad);
			kp_lx_walk_changed(&it->walk);
		} else {
			// The valid records stand; the others are left out.
			kp_lx_walk_left_out(&it->walk, bad);
			it->walk.left_out = st.bad_ids;
		}
		break;
	}
	if (!err)
		err = account_holes(it, unread);
	if (err) {
		kp_printk_iter_destroy(it);
		return err;
	}
	// The descriptor arrays are not needed once decoded.
	free(it->descs);
	free(it->infos);
	it->descs = it->infos = NULL;
	for (int i = 0; i < 3; i++) {
		free(it->lost[i]);
		it->lost[i] = NULL;
	}
	*ret = it;
	return NULL;
}

struct kp_error *kp_printk_iter_create(struct kp_kernel *k, struct kp_printk_iter **ret)
{
	struct kp_lx_prb_layout l;
	struct kp_symbol sym;
	uint64_t prb;
	struct kp_error *err = kp_lx_prb_layout(k, &l);
	if (err)
		return err;
	// prb points at printk_rb_static, or printk_rb_dynamic once
	// setup_log_buf() has moved the log to a bigger buffer (log_buf_len=).
	if ((err = kp_symbol_by_name(k, "prb", &sym)))
		return kp_error_prefix(err, "printk ring buffer (5.10+ kernels)");
	if ((err = kp_read_u64(k, sym.address, &prb)))
		return kp_error_prefix(err, "reading prb at 0x%llx", (unsigned long long)sym.address);
	return kp_lx_printk_iter_create(k, &l, prb, ret);
}

struct kp_error *kp_printk_iter_next(struct kp_printk_iter *it, const struct kp_printk_record **ret)
{
	if (it->next < it->n) {
		*ret = &it->recs[it->next++];
		return NULL;
	}
	*ret = NULL;
	return kp_lx_walk_finish(&it->walk);
}

void kp_printk_iter_status(const struct kp_printk_iter *it, struct kp_walk_status *ret)
{
	kp_lx_walk_status(&it->walk, ret);
}

void kp_printk_iter_destroy(struct kp_printk_iter *it)
{
	if (!it)
		return;
	free(it->descs);
	free(it->infos);
	free(it->data);
	free(it->recs);
	for (int i = 0; i < 3; i++)
		free(it->lost[i]);
	kp_error_destroy(it->hole);
	kp_lx_walk_deinit(&it->walk);
	free(it);
}
