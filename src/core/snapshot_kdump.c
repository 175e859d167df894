// SPDX-License-Identifier: MIT
// kpeek snapshot in the kdump-compressed format (format/kdump_layout.h),
// standard or flattened (a stream of records: `snapshot -o -`), read back by
// kpeek, crash and makedumpfile -R.
//
// Layout, in blocks of the kernel's page size:
//   block 0      disk_dump_header (written first)
//   block 1      kdump_sub_header (written last: the notes' place is known
//                only then)
//   bitmaps      RAM and dumped pages (written last: lost pages are known
//                only then)
//   page_desc[]  one per dumped page, written after each chunk's data
//   page data    a zero page all zero pages share (as makedumpfile writes
//                it), then each page compressed, or raw where that is not
//                smaller
//   the tail     VMCOREINFO, then the notes: the source's, and kpeek's
//                "KPEEK" note of the pages the source could not give, which
//                are RAM but not dumped (kpeek reads them back as lost).
// A flattened stream writes the same offsets as records, in that order; its
// reader replays or indexes them.
#include <elf.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <zlib.h>
#include <zstd.h>

#include "arch/arch.h"
#include "core/kernel.h"
#include "core/snapshot.h"
#include "format/codecs.h"
#include "format/kdump.h"
#include "format/kdump_layout.h"
#include "format/source.h"
#include "util/error.h"

#define MAX_BITMAP (1ULL << 30)

struct kdw {
	struct snap_copy *c;
	uint32_t bs;			// block (page) size
	uint64_t max_pfn;
	uint64_t bitmap_len;		// one bitmap, whole blocks
	uint8_t *ram, *dumped;		// the bitmaps
	uint64_t pd_off, ndesc;		// descriptors written so far
	uint64_t data_off;		// where the next page's data goes
	uint64_t zero_off;		// the shared zero page
	uint32_t flags;			// DUMP_DH_COMPRESSED_*
	uint8_t *data, *descs, *packed;	// a chunk's data and descriptors; one page packed
	size_t packed_cap;
	ZSTD_CCtx *zstd;
	const struct kp_zstd *z;	// zstd's functions, when it compresses
};

static void put32(uint8_t *p, uint32_t v)
{
	memcpy(p, &v, 4);	// the target's order: little-endian, as the host's
}

static void put64(uint8_t *p, uint64_t v)
{
	memcpy(p, &v, 8);
}

// One page packed into w->packed: its size, 0 if compressing does not make
// it smaller (stored raw).
static size_t pack(struct kdw *w, const uint8_t *page)
{
	if (w->flags & DUMP_DH_COMPRESSED_ZLIB) {
		uLongf len = (uLongf)w->packed_cap;
		if (compress2(w->packed, &len, page, w->bs, Z_BEST_SPEED) == Z_OK && len < w->bs)
			return (size_t)len;
	} else if (w->flags & DUMP_DH_COMPRESSED_ZSTD) {
		size_t len = w->z->compress(w->zstd, w->packed, w->packed_cap, page, w->bs, 1);
		if (!w->z->is_error(len) && len < w->bs)
			return len;
	}
	return 0;
}

static void set_bit(uint8_t *map, uint64_t pfn)
{
	map[pfn / 8] |= (uint8_t)(1u << (pfn % 8));
}

// The pages of one chunk read into c->buf from physical pa: their data, then
// their descriptors.
static struct kp_error *write_chunk(struct kdw *w, uint64_t pa, size_t len)
{
	struct snap_copy *c = w->c;
	size_t data_len = 0, ndesc = 0, per = w->bs / SNAP_PAGE;
	uint64_t data_at = w->data_off;
	for (size_t off = 0; off < len; off += w->bs) {
		uint64_t pfn = (pa + off) / w->bs;
		set_bit(w->ram, pfn);
		bool lost = false;
		for (size_t i = 0; i < per; i++)
			lost |= c->lost_page[off / SNAP_PAGE + i];
		if (lost)
			continue;
		set_bit(w->dumped, pfn);
		uint8_t *d = w->descs + 24 * ndesc++;
		const uint8_t *page = c->buf + off;
		if (snap_page_is_zero(page, w->bs)) {
			c->st.zero_bytes += w->bs;
			put64(d, w->zero_off), put32(d + 8, w->bs), put32(d + 12, 0), put64(d + 16, 0);
			continue;
		}
		c->st.data_bytes += w->bs;
		size_t n = pack(w, page);
		memcpy(w->data + data_len, n ? w->packed : page, n ? n : w->bs);
		put64(d, data_at + data_len), put32(d + 8, n ? (uint32_t)n : w->bs);
		put32(d + 12, n ? w->flags : 0), put64(d + 16, 0);
		data_len += n ? n : w->bs;
	}
	struct kp_error *err = NULL;
	if (data_len)
		err = snap_write_at(c->out, w->data, data_len, data_at);
	if (!err && ndesc)
		err = snap_write_at(c->out, w->descs, 24 * ndesc, w->pd_off + 24 * w->ndesc);
	w->data_off += data_len;
	w->ndesc += ndesc;
	return err;
}

static struct kp_error *copy_ranges(struct kdw *w, const struct kp_range *r, size_t n)
{
	struct snap_copy *c = w->c;
	if (c->opts->progress)
		c->opts->progress(0, c->total, c->opts->arg);
	for (size_t i = 0; i < n; i++) {
		for (uint64_t pa = r[i].start; pa < r[i].end;) {
			size_t len = r[i].end - pa < SNAP_CHUNK ? (size_t)(r[i].end - pa) : SNAP_CHUNK;
			struct kp_error *err = snap_read_chunk(c, pa, len);
			if (err)
				return kp_error_prefix(err, "snapshot: reading physical 0x%" PRIx64, pa);
			if ((err = write_chunk(w, pa, len)) || (err = snap_chunk_done(c, pa, len)))
				return err;
			pa += len;
		}
	}
	return NULL;
}

// disk_dump_header: what the reader needs first (status, block size, the
// bitmaps' size), utsname from the kernel (crash and kpeek take the
// architecture from its machine).
static struct kp_error *write_header(struct kdw *w, struct kp_kernel *k, uint32_t ncpus)
{
	uint8_t *dh = calloc(1, w->bs);
	if (!dh)
		return &kp_enomem;
	KP_INIT(kp_kernel_info, info);
	kp_kernel_get_info(k, &info);
	memcpy(dh, KDUMP_SIGNATURE, 8);
	put32(dh + DH_VERSION, DH_HEADER_VERSION);
	const char *machine = kp_kernel_arch(k)->elf_machine == EM_AARCH64 ? "aarch64" : "x86_64";
	memcpy(dh + DH_UTSNAME, "Linux", 5);
	if (info.release)
		strncpy((char *)dh + DH_UTSNAME + 2 * 65, info.release, 64);
	memcpy(dh + DH_MACHINE, machine, strlen(machine));
	struct timeval tv;
	gettimeofday(&tv, NULL);
	put64(dh + DH_TIMESTAMP, (uint64_t)tv.tv_sec);
	put64(dh + DH_TIMESTAMP + 8, (uint64_t)tv.tv_usec);
	put32(dh + DH_STATUS, w->flags);
	put32(dh + DH_BLOCK_SIZE, w->bs);
	put32(dh + DH_SUB_HDR_SIZE, 1);
	put32(dh + DH_BITMAP_BLOCKS, (uint32_t)(2 * w->bitmap_len / w->bs));
	put32(dh + DH_MAX_MAPNR, w->max_pfn > UINT32_MAX ? UINT32_MAX : (uint32_t)w->max_pfn);
	put32(dh + DH_NR_CPUS, ncpus);
	struct kp_error *err = snap_write_at(w->c->out, dh, w->bs, 0);
	free(dh);
	return err;
}

// What the sub-header's phys_base means to crash and makedumpfile: x86-64's
// phys_base, arm64's PHYS_OFFSET (both from the kernel's own layout).
static uint64_t phys_base(struct kp_kernel *k)
{
	const struct kp_arch *arch = kp_kernel_arch(k);
	const struct kp_fact *facts;
	size_t n = arch->facts ? arch->facts(kp_kernel_arch_ctx(k), &facts) : 0;
	for (size_t i = 0; i < n; i++)
		if (facts[i].known && (!strcmp(facts[i].key, "phys_base") ||
				       !strcmp(facts[i].key, "PHYS_OFFSET")))
			return facts[i].value;
	return 0;
}

// The tail (VMCOREINFO, the notes with kpeek's lost pages), the sub-header
// that finds it, and the bitmaps.
static struct kp_error *write_tail(struct kdw *w, struct kp_kernel *k)
{
	struct snap_copy *c = w->c;
	const struct kp_source *src = kp_kernel_source(k);
	struct snap_notes nb = {0};
	struct kp_error *err = snap_build_notes(src, &nb);
	uint8_t *lost = c->nlost ? malloc(16 * c->nlost) : NULL;
	if (!err && c->nlost && !lost)
		err = &kp_enomem;
	for (size_t i = 0; !err && i < c->nlost; i++)
		put64(lost + 16 * i, c->lost[i].start), put64(lost + 16 * i + 8, c->lost[i].end);
	if (!err && c->nlost && !snap_note_add(&nb, KP_NOTE_NAME, KP_NT_LOST, lost, 16 * c->nlost))
		err = &kp_enomem;
	free(lost);
	uint64_t vi_off = w->data_off, vi_size = src->vmcoreinfo ? src->vmcoreinfo_size : 0;
	uint64_t note_off = (vi_off + vi_size + 7) & ~7ULL;
	uint8_t *sh = calloc(1, w->bs);
	if (!err && !sh)
		err = &kp_enomem;
	if (!err && vi_size)
		err = snap_write_at(c->out, src->vmcoreinfo, vi_size, vi_off);
	if (!err && nb.len)
		err = snap_write_at(c->out, nb.buf, nb.len, note_off);
	if (!err) {
		put64(sh + SH_PHYS_BASE, phys_base(k));
		put64(sh + SH_END_PFN, w->max_pfn), put64(sh + SH_END_PFN_64, w->max_pfn);
		put64(sh + SH_OFFSET_VMCOREINFO, vi_size ? vi_off : 0), put64(sh + SH_SIZE_VMCOREINFO, vi_size);
		put64(sh + SH_OFFSET_NOTE, nb.len ? note_off : 0), put64(sh + SH_SIZE_NOTE, nb.len);
		put64(sh + SH_MAX_MAPNR_64, w->max_pfn);
		err = snap_write_at(c->out, sh, w->bs, w->bs);
	}
	if (!err)
		err = snap_write_at(c->out, w->ram, w->bitmap_len, 2ULL * w->bs);
	if (!err)
		err = snap_write_at(c->out, w->dumped, w->bitmap_len, 2ULL * w->bs + w->bitmap_len);
	c->st.file_size = note_off + nb.len;
	free(sh);
	free(nb.buf);
	return err;
}

// The geometry: block size, pfns, where descriptors and data start.
static struct kp_error *lay_out(struct kdw *w, struct kp_kernel *k, const struct kp_range *r, size_t n)
{
	uint64_t ps = kp_kernel_page_size(k);
	w->bs = ps >= SNAP_PAGE && ps <= SNAP_CHUNK ? (uint32_t)ps : (uint32_t)SNAP_PAGE;
	uint64_t pages = 0;
	for (size_t i = 0; i < n; i++) {
		if ((r[i].start | r[i].end) & (w->bs - 1))
			return kp_error_create(KP_ERR_UNSUPPORTED, "%s: physical range 0x%" PRIx64 "-0x%" PRIx64
					       " is not in whole pages of %u bytes: the kdump format cannot hold it "
					       "(use --format elf)", w->c->out->path, r[i].start, r[i].end, w->bs);
		pages += (r[i].end - r[i].start) / w->bs;
	}
	w->max_pfn = r[n - 1].end / w->bs;
	w->bitmap_len = ((w->max_pfn + 7) / 8 + w->bs - 1) / w->bs * w->bs;
	// The bitmaps are built in memory: 1 GiB each covers 32 TiB of 4 KiB
	// frames, where a hostile source's range far up would ask for more.
	if (w->bitmap_len > MAX_BITMAP || 2 * w->bitmap_len / w->bs > UINT32_MAX)
		return kp_error_create(KP_ERR_UNSUPPORTED, "%s: %" PRIu64 " page frames are too many for the kdump "
				       "format's bitmaps", w->c->out->path, w->max_pfn);
	w->pd_off = 2ULL * w->bs + 2 * w->bitmap_len;
	w->zero_off = (w->pd_off + 24 * pages + w->bs - 1) / w->bs * w->bs;
	w->data_off = w->zero_off + w->bs;
	struct kp_error *err;
	if ((w->flags & DUMP_DH_COMPRESSED_ZSTD) && (err = kp_codec_zstd(&w->z)))
		return err;
	size_t bound = compressBound(w->bs), zb = w->z ? w->z->compress_bound(w->bs) : 0;
	w->packed_cap = bound > zb ? bound : zb;
	w->ram = calloc(1, w->bitmap_len);
	w->dumped = calloc(1, w->bitmap_len);
	w->data = malloc(SNAP_CHUNK);
	w->descs = malloc(24 * (SNAP_CHUNK / w->bs));
	w->packed = malloc(w->packed_cap);
	if (!w->ram || !w->dumped || !w->data || !w->descs || !w->packed)
		return &kp_enomem;
	if (w->z && !(w->zstd = w->z->create_c()))
		return &kp_enomem;
	return NULL;
}

struct kp_error *snap_write_kdump(struct kp_kernel *k, struct snap_out *out,
				  const struct kp_snapshot_options *opts, struct kp_snapshot_stats *ret)
{
	const struct kp_range *r;
	size_t n = kp_memory_ranges(kp_kernel_memory(k), KP_PHYS, &r);
	if (n == 0)
		return kp_error_create(KP_ERR_UNSUPPORTED, "%s: cannot snapshot: the source has no physical memory",
				       out->path);
	struct snap_copy c = { .mem = kp_kernel_memory(k), .out = out, .opts = opts };
	struct kdw w = { .c = &c };
	w.flags = opts->compression == KP_SNAPSHOT_ZSTD ? DUMP_DH_COMPRESSED_ZSTD :
		  opts->compression == KP_SNAPSHOT_UNCOMPRESSED ? 0 : DUMP_DH_COMPRESSED_ZLIB;
	for (size_t i = 0; i < n; i++)
		c.total += r[i].end - r[i].start;
	c.st.ranges = n;
	c.st.bytes = c.total;
	uint8_t *zero = NULL;
	struct kp_error *err = lay_out(&w, k, r, n);
	if (!err && !(c.buf = malloc(SNAP_CHUNK)))
		err = &kp_enomem;
	if (!err && out->flat)
		err = snap_flat_begin(out);
	if (!err)
		err = write_header(&w, k, (uint32_t)kp_kernel_source(k)->ncpus);
	if (!err && !(zero = calloc(1, w.bs)))
		err = &kp_enomem;
	if (!err)
		err = snap_write_at(out, zero, w.bs, w.zero_off);
	if (!err)
		err = copy_ranges(&w, r, n);
	if (!err)
		err = write_tail(&w, k);
	if (!err && out->flat)
		err = snap_flat_end(out);
	c.st.lost_ranges = c.nlost;
	if (out->flat)
		c.st.file_size = out->pos;
	free(zero), free(c.buf), free(c.lost);
	free(w.ram), free(w.dumped), free(w.data), free(w.descs), free(w.packed);
	if (w.zstd)
		w.z->free_c(w.zstd);
	if (!err) {
		size_t sz = ret->sz;
		*ret = c.st;
		ret->sz = sz;
	}
	return err;
}
