// SPDX-License-Identifier: MIT
// makedumpfile's flattened format (makedumpfile -F; QEMU 7.2 writes it): a
// 4 KiB header, then {offset, size} records (big-endian) that, replayed in
// order, write the standard kdump-compressed layout that kdump.c reads. The
// records are indexed instead of reassembled: kp_flat_index() reads only their
// headers and resolves them into disjoint pieces of the logical file, which
// kp_flat_read() and kp_flat_file_offset() look up by binary search.
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "format/kdump_flat.h"
#include "util/error.h"
#include "util/vec.h"

// makedumpfile.h
#define FLAT_HEADER_SIZE 4096
#define FLAT_TYPE 1
#define FLAT_RECORD_HEADER 16
#define FLAT_END (-1)
// Record count bound: MIN_RECORD_LIMIT plus one per MIN_AVERAGE_RECORD bytes.
#define MIN_RECORD_LIMIT 4096
#define MIN_AVERAGE_RECORD 256

static uint64_t be64(const uint8_t *p)
{
	uint64_t v = 0;
	for (int i = 0; i < 8; i++)
		v = v << 8 | p[i];
	return v;
}

struct record {
	uint64_t start, end, foff;
	size_t seq;
};

static int record_cmp(const void *a, const void *b)
{
	const struct record *x = a, *y = b;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

// Max-heap of record indexes by seq (later records overwrite earlier ones).
static void heap_push(size_t *heap, size_t *n, const struct record *r, size_t i)
{
	size_t k = (*n)++;
	while (k > 0 && r[heap[(k - 1) / 2]].seq < r[i].seq) {
		heap[k] = heap[(k - 1) / 2];
		k = (k - 1) / 2;
	}
	heap[k] = i;
}

static void heap_pop(size_t *heap, size_t *n, const struct record *r)
{
	size_t last = heap[--(*n)], k = 0;
	for (;;) {
		size_t c = 2 * k + 1;
		if (c >= *n)
			break;
		if (c + 1 < *n && r[heap[c + 1]].seq > r[heap[c]].seq)
			c++;
		if (r[heap[c]].seq <= r[last].seq)
			break;
		heap[k] = heap[c];
		k = c;
	}
	if (*n > 0)
		heap[k] = last;
}

static void emit_piece(struct kp_flat_piece *out, size_t *n, uint64_t start, uint64_t end,
		       uint64_t foff)
{
	if (*n > 0) {
		struct kp_flat_piece *prev = &out[*n - 1];
		if (prev->end == start && prev->foff + (prev->end - prev->start) == foff) {
			prev->end = end;
			return;
		}
	}
	out[(*n)++] = (struct kp_flat_piece){start, end, foff};
}

// Turns records (sorted by start, then seq) into disjoint pieces where the
// latest record covering each byte wins, as replaying them would.
static struct kp_error *resolve_records(struct record *r, size_t n, struct kp_flat_piece **ret,
					size_t *nret)
{
	struct kp_flat_piece *out = NULL;
	uint64_t *pts = NULL;
	size_t *heap = NULL;
	bool overlap = false;
	for (size_t i = 1; i < n && !overlap; i++)
		overlap = r[i].start < r[i - 1].end;
	if (n > 0 && (n > SIZE_MAX / 2 / sizeof(*out) || n > SIZE_MAX / 2 / sizeof(*pts)))
		return &kp_enomem;
	// Each elementary interval yields at most one piece: at most 2n - 1.
	out = malloc((overlap ? 2 * n : n + 1) * sizeof(*out));
	if (!out)
		return &kp_enomem;
	size_t nout = 0;
	if (!overlap) {
		for (size_t i = 0; i < n; i++)
			emit_piece(out, &nout, r[i].start, r[i].end, r[i].foff);
		goto done;
	}
	pts = malloc(2 * n * sizeof(*pts));
	heap = malloc(n * sizeof(*heap));
	if (!pts || !heap) {
		free(out);
		free(pts);
		free(heap);
		return &kp_enomem;
	}
	size_t npts = 0;
	for (size_t i = 0; i < n; i++) {
		pts[npts++] = r[i].start;
		pts[npts++] = r[i].end;
	}
	qsort(pts, npts, sizeof(*pts), u64_cmp);
	size_t nheap = 0, next = 0;
	for (size_t k = 0; k + 1 < npts; k++) {
		uint64_t p = pts[k];
		if (p == pts[k + 1])
			continue;
		while (next < n && r[next].start <= p)
			heap_push(heap, &nheap, r, next++);
		while (nheap > 0 && r[heap[0]].end <= p)
			heap_pop(heap, &nheap, r);
		if (nheap > 0) {
			const struct record *w = &r[heap[0]];
			emit_piece(out, &nout, p, pts[k + 1], w->foff + (p - w->start));
		}
	}
	free(pts);
	free(heap);
done:
	*ret = out;
	*nret = nout;
	return NULL;
}

// The file header (type and version), and the first record's bytes when
// it writes the kdump header.
static struct kp_error *check_header(struct kp_file *f)
{
	uint8_t hdr[32];
	struct kp_error *err = kp_file_read(f, 0, hdr, sizeof(hdr));
	if (err)
		return kp_error_prefix(err, "flattened dump header");
	uint64_t type = be64(hdr + 16), version = be64(hdr + 24);
	if (type != FLAT_TYPE)
		return kp_error_create(KP_ERR_FORMAT,
				       "%s: flattened dump header at offset 0x10: type %" PRIu64
				       ", expected %d (big-endian)", f->path, type, FLAT_TYPE);
	if (version == 0)
		return kp_error_create(KP_ERR_FORMAT,
				       "%s: flattened dump header at offset 0x18: version 0",
				       f->path);
	// makedumpfile and QEMU write the kdump header first: when record 0
	// writes offset 0, check the signature before indexing the rest, so a
	// file that is no dump is refused before its records are counted
	// (records may come in any order, so one that does not is indexed).
	uint8_t first[FLAT_RECORD_HEADER + 8];
	if ((err = kp_file_read(f, FLAT_HEADER_SIZE, first, sizeof(first)))) {
		kp_error_destroy(err);	// too short: the walk of the records says where
		return NULL;
	}
	if (be64(first) == 0 && be64(first + 8) >= 8 &&
	    memcmp(first + FLAT_RECORD_HEADER, "KDUMP   ", 8) != 0 &&
	    memcmp(first + FLAT_RECORD_HEADER, "DISKDUMP", 8) != 0)
		return kp_error_create(KP_ERR_FORMAT,
				       "%s: no KDUMP signature: flattened dump record 0 at offset "
				       "0x%x writes other bytes at offset 0", f->path,
				       FLAT_HEADER_SIZE);
	return NULL;
}

// The headers of the records up to the end marker, those with data into
// *recs (the caller frees it, also on failure), in file order.
static struct kp_error *read_records(struct kp_file *f, struct record **recs, size_t *n_ret)
{
	// Writers emit page-sized records (makedumpfile's and QEMU's write
	// caches); a flood of tiny ones would make the index many times the
	// file. Bound the count by the file size.
	uint64_t max_records = MIN_RECORD_LIMIT + (f->size ? f->size : UINT64_MAX / 2) /
		MIN_AVERAGE_RECORD;
	size_t n = 0, cap = 0;
	uint64_t pos = FLAT_HEADER_SIZE;
	for (uint64_t seen = 0;; seen++) {
		if (seen >= max_records)
			return kp_error_create(KP_ERR_FORMAT,
					       "%s: flattened dump has more than %" PRIu64
					       " records at offset 0x%" PRIx64 " (at most one per %d bytes "
					       "of file is accepted)", f->path, max_records, pos,
					       MIN_AVERAGE_RECORD);
		uint8_t rh[FLAT_RECORD_HEADER];
		struct kp_error *err = kp_file_read(f, pos, rh, sizeof(rh));
		if (err)
			return kp_error_prefix(err, "flattened dump: no end marker after %zu records",
					       n);
		int64_t off = (int64_t)be64(rh), size = (int64_t)be64(rh + 8);
		if (off == FLAT_END)
			break;
		uint64_t data = pos + FLAT_RECORD_HEADER;
		if (off < 0 || size < 0 || size > INT64_MAX - off ||
		    (f->size && (uint64_t)size > f->size - data))
			return kp_error_create(KP_ERR_FORMAT,
					       "%s: flattened dump record %zu at offset 0x%" PRIx64
					       ": bad offset 0x%" PRIx64 " or size 0x%" PRIx64
					       " (file size 0x%" PRIx64 ")", f->path, n, pos,
					       (uint64_t)off, (uint64_t)size, f->size);
		if (size > 0) {
			if (!KP_VEC_RESERVE(*recs, cap, n + 1))
				return &kp_enomem;
			(*recs)[n] = (struct record){(uint64_t)off, (uint64_t)off + (uint64_t)size,
						     data, n};
			n++;
		}
		pos = data + (uint64_t)size;
	}
	*n_ret = n;
	return NULL;
}

struct kp_error *kp_flat_index(struct kp_file *f, struct kp_flat *ret)
{
	struct kp_error *err = check_header(f);
	if (err)
		return err;
	struct record *recs = NULL;
	size_t n = 0;
	struct kp_flat_piece *pieces;
	size_t npieces;
	err = read_records(f, &recs, &n);
	if (!err && n)	// recs is NULL when there are none (qsort needs a valid pointer)
		qsort(recs, n, sizeof(*recs), record_cmp);
	if (!err)
		err = resolve_records(recs, n, &pieces, &npieces);
	free(recs);
	if (err)
		return err;
	*ret = (struct kp_flat){f, pieces, npieces, npieces ? pieces[npieces - 1].end : 0};
	return NULL;
}

void kp_flat_deinit(struct kp_flat *flat)
{
	free(flat->pieces);
}

// Index of the first piece ending after off (npieces if none).
static size_t piece_after(const struct kp_flat *flat, uint64_t off)
{
	size_t lo = 0, hi = flat->npieces;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (flat->pieces[mid].end <= off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

struct kp_error *kp_flat_read(const struct kp_flat *flat, uint64_t off, void *buf,
			      size_t len)
{
	if (off > flat->size || len > flat->size - off)
		return kp_error_create(KP_ERR_FORMAT,
				       "%s: truncated: need %zu bytes at logical offset 0x%"
				       PRIx64 " of the flattened dump, which ends at 0x%"
				       PRIx64, flat->file->path, len, off, flat->size);
	uint8_t *out = buf;
	size_t lo = piece_after(flat, off);
	while (len > 0) {
		const struct kp_flat_piece *p = lo < flat->npieces ? &flat->pieces[lo] : NULL;
		size_t n;
		if (!p || off < p->start) {
			n = p && p->start - off < len ? (size_t)(p->start - off) : len;
			memset(out, 0, n);
		} else {
			n = p->end - off < len ? (size_t)(p->end - off) : len;
			struct kp_error *err = kp_file_read(flat->file, p->foff + (off - p->start),
							    out, n);
			if (err)
				return err;
			lo++;
		}
		out += n;
		off += n;
		len -= n;
	}
	return NULL;
}

bool kp_flat_file_offset(const struct kp_flat *flat, uint64_t off, size_t len,
			 uint64_t *ret)
{
	size_t lo = piece_after(flat, off);
	if (lo < flat->npieces && flat->pieces[lo].start <= off &&
	    len <= flat->pieces[lo].end - off) {
		*ret = flat->pieces[lo].foff + (off - flat->pieces[lo].start);
		return true;
	}
	return false;
}
