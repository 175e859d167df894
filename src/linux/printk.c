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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/btf.h>

#include "core/kernel.h"
#include "format/vmcoreinfo.h"
#include "linux/linux.h"
#include "types/types.h"
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


static bool layout_ok(const struct kp_lx_prb_layout *l)
{
	return l->desc_size >= 24 && l->desc_size <= 4096 && l->info_size >= 24 &&
	       l->info_size <= 4096 && l->state_var + 8 <= l->desc_size &&
	       l->text_begin + 8 <= l->desc_size && l->text_next + 8 <= l->desc_size &&
	       l->seq + 8 <= l->info_size && l->ts_nsec + 8 <= l->info_size &&
	       l->text_len + 2 <= l->info_size && l->caller_id + 4 <= l->info_size &&
	       l->facility < l->info_size && l->flags_byte < l->info_size &&
	       l->flags_shift < 8 && l->level_shift < 8;
}

// Locates the text of a block in data; false if the positions are invalid.
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
	const uint8_t *blk = img->data + start;
	if ((kp_le64(blk) & DESC_ID_MASK) != id)
		return false;	// the block was overwritten by a newer record
	*text_ret = blk + 8;
	*size_ret = len - 8;
	return true;
}

struct kp_error *kp_lx_prb_decode(const struct kp_lx_prb_layout *l,
				  const struct kp_lx_prb_image *img, kp_lx_prb_fn *fn,
				  void *arg)
{
	if (!layout_ok(l))
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
	for (uint64_t i = 0; i < n; i++) {
		uint64_t id = (tail + i) & DESC_ID_MASK;
		uint64_t idx = id & (count - 1);
		const uint8_t *desc = img->descs + idx * l->desc_size;
		const uint8_t *info = img->infos + idx * l->info_size;
		uint64_t sv = kp_le64(desc + l->state_var);
		unsigned state = (unsigned)(sv >> DESC_STATE_SHIFT);
		if ((sv & DESC_ID_MASK) != id || (state != DESC_COMMITTED && state != DESC_FINALIZED))
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
			if (!block_text(img, id, begin, next, &text, &size) || size < text_len)
				continue;	// recycled or corrupt: the kernel skips it too
			rec.text = (const char *)text;
			rec.len = text_len;
		}
		struct kp_error *err = fn(&rec, arg);
		if (err)
			return err;
	}
	return NULL;
}

// ---------------------------------------------------------------- layout

// Member offset from BTF, else VMCOREINFO OFFSET(type.member).
static struct kp_error *off(struct kp_kernel *k, const char *type, const char *member,
			    uint64_t *ret)
{
	char name[64];
	snprintf(name, sizeof(name), "struct %s", type);
	struct kp_error *err = kp_member_offset(k, name, member, ret, NULL);
	if (!err)
		return NULL;
	const struct kp_vmcoreinfo *vi = kp_kernel_vmcoreinfo(k);
	if (vi && kp_vmcoreinfo_offset(vi, type, member, ret)) {
		kp_error_destroy(err);
		return NULL;
	}
	return kp_error_prefix(err, "printk ring buffer (no BTF or VMCOREINFO layout)");
}

static struct kp_error *size(struct kp_kernel *k, const char *type, uint64_t *ret)
{
	char name[64];
	snprintf(name, sizeof(name), "struct %s", type);
	struct kp_error *err = kp_type_size(k, name, ret);
	if (!err)
		return NULL;
	const struct kp_vmcoreinfo *vi = kp_kernel_vmcoreinfo(k);
	if (vi && kp_vmcoreinfo_size(vi, type, ret)) {
		kp_error_destroy(err);
		return NULL;
	}
	return kp_error_prefix(err, "printk ring buffer (no BTF or VMCOREINFO layout)");
}

// The flags:5 / level:3 bit-fields: from BTF, else where every kernel since
// 5.10 puts them (the byte after u8 facility, flags in the low bits).
static void bitfields(struct kp_kernel *k, struct kp_lx_prb_layout *l)
{
	l->flags_byte = l->text_len + 3;
	l->flags_shift = 0;
	l->level_shift = 5;
	struct kp_types *types = NULL;
	if (!kp_ok(kp_kernel_types(k, &types)))
		return;
	const struct btf *btf = kp_types_btf(types);
	int id = btf__find_by_name_kind(btf, "printk_info", BTF_KIND_STRUCT);
	if (id < 0)
		return;
	const struct btf_type *t = btf__type_by_id(btf, id);
	const struct btf_member *m = btf_members(t);
	int64_t flags_bit = -1, level_bit = -1;
	for (int i = 0; i < btf_vlen(t); i++) {
		const char *name = btf__name_by_offset(btf, m[i].name_off);
		if (!name)
			continue;
		if (!strcmp(name, "flags"))
			flags_bit = btf_member_bit_offset(t, i);
		else if (!strcmp(name, "level"))
			level_bit = btf_member_bit_offset(t, i);
	}
	if (flags_bit < 0 || level_bit < 0 || flags_bit / 8 != level_bit / 8)
		return;
	l->flags_byte = (uint64_t)flags_bit / 8;
	l->flags_shift = (unsigned)(flags_bit % 8);
	l->level_shift = (unsigned)(level_bit % 8);
}

struct kp_error *kp_lx_prb_layout(struct kp_kernel *k, struct kp_lx_prb_layout *ret)
{
	struct kp_lx_prb_layout l = {0};
	uint64_t begin, next, lpos;
	struct kp_error *err;
	if ((err = off(k, "printk_ringbuffer", "desc_ring", &l.desc_ring)) ||
	    (err = off(k, "printk_ringbuffer", "text_data_ring", &l.text_data_ring)) ||
	    (err = off(k, "prb_desc_ring", "count_bits", &l.count_bits)) ||
	    (err = off(k, "prb_desc_ring", "descs", &l.descs)) ||
	    (err = off(k, "prb_desc_ring", "infos", &l.infos)) ||
	    (err = off(k, "prb_desc_ring", "head_id", &l.head_id)) ||
	    (err = off(k, "prb_desc_ring", "tail_id", &l.tail_id)) ||
	    (err = off(k, "prb_data_ring", "size_bits", &l.size_bits)) ||
	    (err = off(k, "prb_data_ring", "data", &l.data)) ||
	    (err = size(k, "prb_desc", &l.desc_size)) ||
	    (err = off(k, "prb_desc", "state_var", &l.state_var)) ||
	    (err = off(k, "prb_desc", "text_blk_lpos", &lpos)) ||
	    (err = off(k, "prb_data_blk_lpos", "begin", &begin)) ||
	    (err = off(k, "prb_data_blk_lpos", "next", &next)) ||
	    (err = size(k, "printk_info", &l.info_size)) ||
	    (err = off(k, "printk_info", "seq", &l.seq)) ||
	    (err = off(k, "printk_info", "ts_nsec", &l.ts_nsec)) ||
	    (err = off(k, "printk_info", "text_len", &l.text_len)) ||
	    (err = off(k, "printk_info", "caller_id", &l.caller_id)))
		return err;
	l.text_begin = lpos + begin;
	l.text_next = lpos + next;
	// u8 facility directly follows u16 text_len (not in VMCOREINFO).
	if ((err = kp_member_offset(k, "struct printk_info", "facility", &l.facility, NULL))) {
		kp_error_destroy(err);
		l.facility = l.text_len + 2;
	}
	bitfields(k, &l);
	if (!layout_ok(&l))
		return kp_error_create(KP_ERR_FORMAT, "printk ring buffer: implausible struct layout (desc %llu bytes, info %llu bytes)",
				       (unsigned long long)l.desc_size, (unsigned long long)l.info_size);
	*ret = l;
	return NULL;
}

// ---------------------------------------------------------------- reading

struct kp_printk_iter {
	uint8_t *descs, *infos, *data;		// the ring buffer's arrays
	struct kp_printk_record *recs;		// decoded; texts point into data
	size_t n, cap, next;
};

static struct kp_error *collect(const struct kp_printk_record *rec, void *arg)
{
	struct kp_printk_iter *it = arg;
	if (!KP_VEC_RESERVE(it->recs, it->cap, it->n + 1))
		return &kp_enomem;
	it->recs[it->n++] = *rec;
	return NULL;
}

struct kp_error *kp_lx_printk_iter_create(struct kp_kernel *k, const struct kp_lx_prb_layout *l,
					  uint64_t prb, struct kp_printk_iter **ret)
{
	uint64_t dr = prb + l->desc_ring, tr = prb + l->text_data_ring;
	uint32_t count_bits, size_bits;
	uint64_t descs, infos, data;
	struct kp_lx_prb_image img = {0};
	struct kp_error *err;
	if ((err = kp_read_u32(k, dr + l->count_bits, &count_bits)) ||
	    (err = kp_read_u64(k, dr + l->descs, &descs)) ||
	    (err = kp_read_u64(k, dr + l->infos, &infos)) ||
	    (err = kp_read_u64(k, dr + l->head_id, &img.head_id)) ||
	    (err = kp_read_u64(k, dr + l->tail_id, &img.tail_id)) ||
	    (err = kp_read_u32(k, tr + l->size_bits, &size_bits)) ||
	    (err = kp_read_u64(k, tr + l->data, &data)))
		return kp_error_prefix(err, "reading struct printk_ringbuffer at 0x%llx",
				       (unsigned long long)prb);
	if (count_bits > MAX_COUNT_BITS || size_bits > MAX_SIZE_BITS || size_bits < 4)
		return kp_error_create(KP_ERR_FORMAT, "printk ring buffer at 0x%llx: implausible sizes (count_bits %u, size_bits %u)",
				       (unsigned long long)prb, count_bits, size_bits);
	img.count_bits = count_bits;
	img.size_bits = size_bits;
	uint64_t count = 1ULL << count_bits;
	size_t ndescs = count * l->desc_size, ninfos = count * l->info_size;
	size_t ndata = (size_t)1 << size_bits;
	// Within the fixed limits, a damaged header can still claim far more
	// than the dump holds: what it claims must fit in the source.
	uint64_t have = kp_kernel_memory_bytes(k);
	if (ndescs + ninfos + ndata > have)
		return kp_error_create(KP_ERR_FORMAT, "printk ring buffer at 0x%llx is corrupt: "
				       "its %zu bytes (count_bits %u, size_bits %u) are more than "
				       "the %llu bytes of memory in the source",
				       (unsigned long long)prb, ndescs + ninfos + ndata, count_bits,
				       size_bits, (unsigned long long)have);
	struct kp_printk_iter *it = calloc(1, sizeof(*it));
	if (!it)
		return &kp_enomem;
	it->descs = malloc(ndescs);
	it->infos = malloc(ninfos);
	it->data = malloc(ndata);
	if (!it->descs || !it->infos || !it->data) {
		err = &kp_enomem;
		goto out;
	}
	if ((err = kp_read(k, KP_VIRT, descs, it->descs, ndescs))) {
		err = kp_error_prefix(err, "reading printk descriptors at 0x%llx", (unsigned long long)descs);
		goto out;
	}
	if ((err = kp_read(k, KP_VIRT, infos, it->infos, ninfos))) {
		err = kp_error_prefix(err, "reading printk infos at 0x%llx", (unsigned long long)infos);
		goto out;
	}
	if ((err = kp_read(k, KP_VIRT, data, it->data, ndata))) {
		err = kp_error_prefix(err, "reading printk text at 0x%llx", (unsigned long long)data);
		goto out;
	}
	img.descs = it->descs;
	img.infos = it->infos;
	img.data = it->data;
	err = kp_lx_prb_decode(l, &img, collect, it);
out:
	if (err) {
		kp_printk_iter_destroy(it);
		return err;
	}
	// The descriptor arrays are not needed once decoded.
	free(it->descs);
	free(it->infos);
	it->descs = it->infos = NULL;
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
	*ret = it->next < it->n ? &it->recs[it->next++] : NULL;
	return NULL;
}

void kp_printk_iter_destroy(struct kp_printk_iter *it)
{
	if (!it)
		return;
	free(it->descs);
	free(it->infos);
	free(it->data);
	free(it->recs);
	free(it);
}
