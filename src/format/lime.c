// SPDX-License-Identifier: MIT
// LiME and AVML memory images: a sequence of ranges, each a 32-byte header
// {u32 magic, u32 version, u64 start, u64 end (inclusive), u64 reserved}
// followed by the range's bytes.
//
// LiME (504ensicsLabs/LiME, format=lime): magic "EMiL" (0x4C694D45), version 1,
// one header per "System RAM" resource, raw bytes. Its other formats carry no
// header ("padded": RAM from physical 0 with holes zero-filled; "raw": ranges
// concatenated) and are read with --raw.
// AVML (microsoft/avml, --compress): magic "AVML" (0x4C4D5641), version 2. Ranges
// are split into blocks of at most 16 MiB, all-zero blocks are left out, and
// each block's bytes are a framed snappy stream followed by a u64 with the
// stream's length. AVML without --compress writes LiME version 1.
//
// Version 1 ranges are plain file segments. For version 2 the framed chunks
// (at most 64 KiB of data each) are indexed at open (one header read per
// chunk); reads decompress the chunk holding the address into a one-chunk
// cache. The index has an entry for the first chunk of each range, and after
// that for a data chunk only once 64 KiB of data or ENTRY_EVERY chunks have
// passed since the last entry: AVML's own 64 KiB chunks all get one, while a
// hostile stream of tiny chunks costs an index of a few bytes per KiB of
// file, and a read walks at most ENTRY_EVERY chunk headers from its entry.
// A file may have at most MAX_RANGES ranges (SECURITY.md).
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


#include "format/codecs.h"
#include "format/source.h"
#include "util/error.h"
#include "util/vec.h"
#include "util/le.h"

#define LIME_MAGIC 0x4C694D45U	// "EMiL" little-endian
#define AVML_MAGIC 0x4C4D5641U	// "AVML" little-endian
#define HEADER_SIZE 32
// Snappy framing format: chunks carry at most 65536 bytes of data.
#define SNAPPY_MAX_CHUNK 65536U
#define SNAPPY_MAX_CHUNK_LEN (SNAPPY_MAX_CHUNK + 4)	// uncompressed chunk + CRC
#define ENTRY_EVERY 64
// A machine's memory map has tens of System RAM ranges, and AVML splits them
// into 16 MiB blocks: 2^18 ranges is 4 TiB of AVML blocks, and bounds the
// index of a hostile image of tiny ranges to ~40 MB.
#define MAX_RANGES (1u << 18)
// x86-64 MAXPHYADDR is at most 52 bits.
#define PHYS_LIMIT (1ULL << 52)

struct range {
	uint64_t start, size;
	uint64_t header_off;	// for messages
	uint64_t data_off;	// v1: file offset of the bytes
	uint64_t ubase;		// v2: offset in the concatenated uncompressed data
	bool compressed;
};

// One snappy chunk of a version 2 block.
struct chunk {
	uint64_t uoff;		// offset in the concatenated uncompressed data
	uint64_t foff;		// file offset of the chunk's CRC + data
	uint32_t len;		// bytes at foff (CRC included)
	uint32_t ulen;
	bool compressed;
};

struct lime {
	struct kp_file *file;
	struct chunk *chunks;	// the index (see the top), in uoff order
	size_t nchunks, cap;
	size_t since_entry;	// while indexing: chunks since the last entry
	// One decompressed chunk: readers walk memory mostly in order.
	uint8_t *cache;
	struct chunk cur;	// the chunk in cache; cur.ulen 0 when empty
	uint8_t *in;		// the chunk being read, as in the file (CRC first)
};

// CRC-32C (Castagnoli), reflected, as the snappy framing format checksums use.
static uint32_t crc32c_table[256];

static void crc32c_init(void)
{
	if (crc32c_table[1])
		return;
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;
		for (int k = 0; k < 8; k++)
			c = c & 1 ? (c >> 1) ^ 0x82F63B78U : c >> 1;
		crc32c_table[i] = c;
	}
}

static uint32_t snappy_masked_crc(const uint8_t *p, size_t len)
{
	uint32_t c = 0xffffffffU;
	for (size_t i = 0; i < len; i++)
		c = crc32c_table[(c ^ p[i]) & 0xff] ^ (c >> 8);
	c = ~c;
	return ((c >> 15) | (c << 17)) + 0xa282ead8U;
}

static bool lime_probe(const uint8_t *head, size_t len)
{
	if (len < 8)
		return false;
	uint32_t magic = kp_le32(head);
	return magic == LIME_MAGIC || magic == AVML_MAGIC;
}

static void lime_destroy(void *priv)
{
	struct lime *l = priv;
	if (!l)
		return;
	free(l->chunks);
	free(l->cache);
	free(l->in);
	free(l);
}

static struct kp_error *add_chunk(struct lime *l, const struct chunk *c)
{
	if (!KP_VEC_RESERVE(l->chunks, l->cap, l->nchunks + 1))
		return &kp_enomem;
	l->chunks[l->nchunks++] = *c;
	return NULL;
}

// The data chunk of the snappy framing format (type 0x00 compressed, 0x01
// not) whose 4-byte header at pos says len, as a struct chunk at uoff; an
// error when it is malformed or holds more than 64 KiB or than left bytes.
static struct kp_error *data_chunk(struct lime *l, uint64_t pos, uint8_t type, uint32_t len,
				   uint64_t uoff, uint64_t left, struct chunk *ret)
{
	const char *path = l->file->path;
	if (len < 4 || len > SNAPPY_MAX_CHUNK_LEN * 2)
		return kp_error_create(KP_ERR_FORMAT,
				       "%s: snappy chunk at 0x%" PRIx64
				       " has bad length %" PRIu32, path, pos, len);
	size_t ulen = len - 4;
	if (type == 0x00) {
		uint8_t h[10];
		size_t n = len - 4 < 10 ? len - 4 : 10;
		struct kp_error *err = kp_file_read(l->file, pos + 8, h, n);
		if (err)
			return err;
		// The varint preamble of the compressed block says its size.
		const struct kp_snappy *snappy;
		if ((err = kp_codec_snappy(&snappy)))
			return err;
		if (snappy->uncompressed_length((const char *)h, n, &ulen) != SNAPPY_OK)
			ulen = SIZE_MAX;
	}
	if (ulen > SNAPPY_MAX_CHUNK || ulen > left)
		return kp_error_create(KP_ERR_FORMAT,
				       "%s: snappy chunk at 0x%" PRIx64
				       " holds %s bytes (block has 0x%" PRIx64
				       " left, chunks hold at most 64 KiB)", path, pos,
				       ulen == SIZE_MAX ? "an unreadable number of" :
				       "too many", left);
	*ret = (struct chunk){
		.uoff = uoff, .foff = pos + 4, .len = len, .ulen = (uint32_t)ulen,
		.compressed = type == 0x00,
	};
	return NULL;
}

// Indexes the data chunk at pos (see data_chunk()) when it starts a range or
// enough has passed since the last entry; *ulen_ret is how many bytes of
// the block it holds (have so far).
static struct kp_error *index_data_chunk(struct lime *l, const struct range *r, uint64_t pos,
					 uint8_t type, uint32_t len, uint64_t have,
					 size_t *ulen_ret)
{
	struct chunk c;
	struct kp_error *err = data_chunk(l, pos, type, len, r->ubase + have, r->size - have, &c);
	if (err)
		return err;
	const struct chunk *last = l->nchunks ? &l->chunks[l->nchunks - 1] : NULL;
	if (c.ulen && (!have || !last || l->since_entry >= ENTRY_EVERY ||
		       c.uoff - last->uoff >= SNAPPY_MAX_CHUNK)) {
		if ((err = add_chunk(l, &c)))
			return err;
		l->since_entry = 0;
	}
	*ulen_ret = c.ulen;
	return NULL;
}

// The u64 after a block's stream at pos: the stream's length.
static struct kp_error *check_stream_length(struct kp_file *f, const struct range *r,
					    uint64_t pos)
{
	uint8_t sz[8];
	if (f->size - pos < 8)
		return kp_error_create(KP_ERR_FORMAT,
				       "%s: truncated: AVML block length after the stream at 0x%"
				       PRIx64 " is missing", f->path, pos);
	struct kp_error *err = kp_file_read(f, pos, sz, 8);
	if (err)
		return err;
	if (kp_le64(sz) != pos - r->data_off)
		return kp_error_create(KP_ERR_FORMAT,
				       "%s: AVML block at 0x%" PRIx64 ": stream length field at 0x%"
				       PRIx64 " says 0x%" PRIx64 " but the stream has 0x%" PRIx64
				       " bytes", f->path, r->header_off, pos, kp_le64(sz),
				       pos - r->data_off);
	return NULL;
}

// Walks the framed snappy stream of a version 2 block at r->data_off, indexing
// its chunks, and checks the u64 stream length that follows it. *end_ret is the
// file offset after that length.
static struct kp_error *index_stream(struct lime *l, struct range *r, uint64_t *end_ret)
{
	struct kp_file *f = l->file;
	const char *path = f->path;
	uint64_t pos = r->data_off, have = 0;
	bool seen_id = false;
	while (have < r->size) {
		uint8_t h[4];
		l->since_entry++;
		if (f->size - pos < 4)
			return kp_error_create(KP_ERR_FORMAT,
					       "%s: truncated: AVML block at 0x%" PRIx64
					       " (range header at 0x%" PRIx64 ") has 0x%" PRIx64
					       " of 0x%" PRIx64 " bytes when the file ends", path,
					       r->data_off, r->header_off, have, r->size);
		struct kp_error *err = kp_file_read(f, pos, h, 4);
		if (err)
			return err;
		uint8_t type = h[0];
		uint32_t len = h[1] | (uint32_t)h[2] << 8 | (uint32_t)h[3] << 16;
		if (len > f->size - pos - 4)
			return kp_error_create(KP_ERR_FORMAT,
					       "%s: truncated: snappy chunk at 0x%" PRIx64
					       " of %" PRIu32 " bytes runs past the end of the file",
					       path, pos, len);
		if (type == 0xff) {
			uint8_t id[6];
			err = kp_file_read(f, pos + 4, id, len == 6 ? 6 : 0);
			if (err)
				return err;
			if (len != 6 || memcmp(id, "sNaPpY", 6))
				return kp_error_create(KP_ERR_FORMAT,
						       "%s: bad snappy stream identifier at 0x%"
						       PRIx64, path, pos);
			seen_id = true;
		} else if (type == 0x00 || type == 0x01) {
			if (!seen_id)
				return kp_error_create(KP_ERR_FORMAT,
						       "%s: snappy chunk at 0x%" PRIx64
						       " before the stream identifier", path, pos);
			size_t ulen = 0;	// gcc -O2 cannot see index_data_chunk() sets it
			if ((err = index_data_chunk(l, r, pos, type, len, have, &ulen)))
				return err;
			have += ulen;
		} else if (type < 0x80) {
			return kp_error_create(KP_ERR_FORMAT,
					       "%s: reserved unskippable snappy chunk type 0x%02x"
					       " at 0x%" PRIx64, path, type, pos);
		}
		// 0x80-0xfe: padding and skippable chunks.
		pos += 4 + (uint64_t)len;
	}
	struct kp_error *err = check_stream_length(f, r, pos);
	if (err)
		return err;
	*end_ret = pos + 8;
	return NULL;
}

// Decompresses chunk c into the cache (checking its CRC).
static struct kp_error *load_chunk(struct lime *l, const struct chunk *c)
{
	struct kp_file *f = l->file;
	struct kp_error *err = kp_file_read(f, c->foff, l->in, c->len);
	if (err)
		return err;
	const uint8_t *in = l->in;
	l->cur.ulen = 0;
	const uint8_t *data;
	if (c->compressed) {
		const struct kp_snappy *snappy;
		if ((err = kp_codec_snappy(&snappy)))
			return err;
		size_t n = SNAPPY_MAX_CHUNK;
		if (snappy->uncompress((const char *)in + 4, c->len - 4, (char *)l->cache, &n) !=
		    SNAPPY_OK || n != c->ulen)
			return kp_error_create(KP_ERR_FORMAT,
					       "%s: snappy chunk at 0x%" PRIx64 " is corrupt",
					       f->path, c->foff - 4);
		data = l->cache;
	} else {
		data = in + 4;
	}
	if (snappy_masked_crc(data, c->ulen) != kp_le32(in))
		return kp_error_create(KP_ERR_FORMAT,
				       "%s: snappy chunk at 0x%" PRIx64 ": CRC-32C mismatch",
				       f->path, c->foff - 4);
	if (data != l->cache)
		memcpy(l->cache, data, c->ulen);
	l->cur = *c;
	return NULL;
}

// The chunk holding uncompressed offset off, at most ENTRY_EVERY chunks after
// index entry e (the last at or below off); false if there is none.
static struct kp_error *walk_to(struct lime *l, const struct chunk *e, uint64_t off,
				struct chunk *ret, bool *found)
{
	uint64_t pos = e->foff - 4, u = e->uoff;
	*found = false;
	for (unsigned step = 0; step <= ENTRY_EVERY && u <= off; step++) {
		uint8_t h[4];
		struct kp_error *err = kp_file_read(l->file, pos, h, 4);
		if (err)
			return err;
		uint32_t len = h[1] | (uint32_t)h[2] << 8 | (uint32_t)h[3] << 16;
		if (h[0] == 0x00 || h[0] == 0x01) {
			if ((err = data_chunk(l, pos, h[0], len, u, SNAPPY_MAX_CHUNK, ret)))
				return err;
			if (off - u < ret->ulen) {
				*found = true;
				return NULL;
			}
			u += ret->ulen;
		} else if (h[0] < 0x80) {
			break;	// the stream's end (indexing checked every chunk in it)
		}
		pos += 4 + (uint64_t)len;
	}
	return NULL;
}

// kp_read_fn of version 2 ranges: offset is in the concatenated uncompressed data.
static struct kp_error *avml_read(void *buf, uint64_t address, size_t count,
				  uint64_t offset, void *arg)
{
	struct lime *l = arg;
	uint8_t *out = buf;
	while (count) {
		if (!l->cur.ulen || offset < l->cur.uoff || offset - l->cur.uoff >= l->cur.ulen) {
			// Last entry starting at or below offset.
			size_t lo = 0, hi = l->nchunks;
			while (hi - lo > 1) {
				size_t mid = lo + (hi - lo) / 2;
				if (l->chunks[mid].uoff <= offset)
					lo = mid;
				else
					hi = mid;
			}
			struct chunk c;
			bool found = false;
			struct kp_error *err = NULL;
			if (l->nchunks && offset >= l->chunks[lo].uoff)
				err = walk_to(l, &l->chunks[lo], offset, &c, &found);
			if (!err && !found)
				return kp_error_fault(address, "%s: physical address 0x%" PRIx64
						      " has no data in the AVML image",
						      l->file->path, address);
			if (err || (err = load_chunk(l, &c)))
				return kp_error_prefix(err, "reading physical 0x%" PRIx64, address);
		}
		size_t in = (size_t)(offset - l->cur.uoff);
		size_t n = l->cur.ulen - in;
		if (n > count)
			n = count;
		memcpy(out, l->cache + in, n);
		out += n;
		offset += n;
		address += n;
		count -= n;
	}
	return NULL;
}

static int range_cmp(const void *a, const void *b)
{
	const struct range *x = a, *y = b;
	return x->start < y->start ? -1 : x->start > y->start;
}

// The range header at pos: a LiME (version 1) or AVML (version 2) range of
// physical memory below 2^52 (end inclusive); ret->ubase is not set.
static struct kp_error *read_range_header(struct kp_file *f, uint64_t pos, struct range *ret)
{
	const char *path = f->path;
	uint8_t h[HEADER_SIZE];
	if (f->size - pos < HEADER_SIZE)
		return kp_error_create(KP_ERR_FORMAT,
				       "%s: truncated: range header at 0x%" PRIx64
				       " needs 32 bytes, the file has 0x%" PRIx64 " left",
				       path, pos, f->size - pos);
	struct kp_error *err = kp_file_read(f, pos, h, sizeof(h));
	if (err)
		return err;
	uint32_t magic = kp_le32(h), version = kp_le32(h + 4);
	uint64_t start = kp_le64(h + 8), end = kp_le64(h + 16);
	if (magic != LIME_MAGIC && magic != AVML_MAGIC)
		return kp_error_create(KP_ERR_FORMAT,
				       "%s: bad magic 0x%08" PRIx32 " in range header at 0x%"
				       PRIx64 " (expected EMiL or AVML)", path, magic, pos);
	if (!((magic == LIME_MAGIC && version == 1) ||
	      (magic == AVML_MAGIC && version == 2)))
		return kp_error_create(KP_ERR_UNSUPPORTED,
				       "%s: %s range header at 0x%" PRIx64
				       " has version %" PRIu32 " (supported: LiME 1, AVML 2)",
				       path, magic == LIME_MAGIC ? "LiME" : "AVML", pos,
				       version);
	if (end < start || end >= PHYS_LIMIT)
		return kp_error_create(KP_ERR_FORMAT,
				       "%s: range header at 0x%" PRIx64 ": bad range 0x%"
				       PRIx64 "-0x%" PRIx64 " (end is inclusive, %s)", path,
				       pos, start, end, end < start ? "before the start" :
				       "beyond 52-bit physical addresses");
	*ret = (struct range){
		.start = start, .size = end - start + 1, .header_off = pos,
		.data_off = pos + HEADER_SIZE, .compressed = version == 2,
	};
	return NULL;
}

// Past the bytes of range r to the next header (*pos): an AVML stream is
// indexed (*ubase: where the next one's uncompressed data starts), LiME
// bytes must be in the file.
static struct kp_error *skip_range_data(struct lime *l, struct range *r, uint64_t *ubase,
					uint64_t *pos)
{
	struct kp_file *f = l->file;
	if (r->compressed) {
		if (r->size > UINT64_MAX - *ubase)
			return kp_error_create(KP_ERR_FORMAT,
					       "%s: AVML ranges add up to more than 2^64 bytes"
					       " (header at 0x%" PRIx64 ")", f->path, r->header_off);
		*ubase += r->size;
		return index_stream(l, r, pos);
	}
	if (r->size > f->size - r->data_off)
		return kp_error_create(KP_ERR_FORMAT,
				       "%s: truncated: range 0x%" PRIx64 "-0x%" PRIx64
				       " (header at 0x%" PRIx64 ") needs bytes up to 0x%"
				       PRIx64 ", the file has 0x%" PRIx64, f->path, r->start,
				       r->start + r->size - 1, r->header_off,
				       r->data_off + r->size, f->size);
	*pos = r->data_off + r->size;
	return NULL;
}

// Ranges may come in any order but must not overlap.
static struct kp_error *check_overlaps(const char *path, const struct range *ranges, size_t n)
{
	struct range *sorted = malloc(n * sizeof(*sorted));
	if (!sorted)
		return &kp_enomem;
	memcpy(sorted, ranges, n * sizeof(*sorted));
	qsort(sorted, n, sizeof(*sorted), range_cmp);
	struct kp_error *err = NULL;
	for (size_t i = 1; i < n && !err; i++)
		if (sorted[i].start - sorted[i - 1].start < sorted[i - 1].size)
			err = kp_error_create(KP_ERR_FORMAT,
					      "%s: range at 0x%" PRIx64 " (header at 0x%" PRIx64
					      ") overlaps the one at 0x%" PRIx64
					      " (header at 0x%" PRIx64 ")", path,
					      sorted[i].start, sorted[i].header_off,
					      sorted[i - 1].start, sorted[i - 1].header_off);
	free(sorted);
	return err;
}

static struct kp_error *parse(struct lime *l, struct range **ranges_ret, size_t *n_ret,
			      bool *avml_ret)
{
	struct kp_file *f = l->file;
	struct range *ranges = NULL;
	size_t n = 0, cap = 0;
	uint64_t ubase = 0;
	bool avml = false;
	struct kp_error *err = NULL;
	for (uint64_t pos = 0; pos < f->size;) {
		struct range r;
		if ((err = read_range_header(f, pos, &r)))
			break;
		if (n == MAX_RANGES) {
			err = kp_error_create(KP_ERR_FORMAT,
					      "%s: more than %u ranges (range header at 0x%"
					      PRIx64 "): a memory map has far fewer; not read as "
					      "an image", f->path, MAX_RANGES, pos);
			break;
		}
		if (!KP_VEC_RESERVE(ranges, cap, n + 1)) {
			err = &kp_enomem;
			break;
		}
		r.ubase = ubase;
		ranges[n++] = r;
		avml |= r.compressed;
		if ((err = skip_range_data(l, &ranges[n - 1], &ubase, &pos)))
			break;
	}
	if (!err && n == 0)
		err = kp_error_create(KP_ERR_FORMAT, "%s: LiME image has no ranges", f->path);
	if (!err)
		err = check_overlaps(f->path, ranges, n);
	if (err) {
		free(ranges);
		return err;
	}
	*ranges_ret = ranges;
	*n_ret = n;
	*avml_ret = avml;
	return NULL;
}

static struct kp_error *lime_open(struct kp_file *file, struct kp_memory *mem,
				  struct kp_source *src)
{
	if (!file->size)
		return kp_error_create(KP_ERR_UNSUPPORTED,
				       "%s: a LiME image must be a regular, non-empty file",
				       file->path);
	crc32c_init();
	struct lime *l = calloc(1, sizeof(*l));
	if (!l)
		return &kp_enomem;
	l->file = file;
	struct range *ranges = NULL;
	size_t n = 0;
	bool avml = false;
	struct kp_error *err = parse(l, &ranges, &n, &avml);
	if (!err && avml) {
		l->cache = malloc(SNAPPY_MAX_CHUNK);
		if (!l->cache || !(l->in = malloc(SNAPPY_MAX_CHUNK_LEN * 2)))
			err = &kp_enomem;
	}
	for (size_t i = 0; i < n && !err; i++) {
		const struct range *r = &ranges[i];
		if (r->compressed)
			err = kp_memory_add(mem, KP_PHYS, r->start, r->size, avml_read, l,
					    r->ubase);
		else
			err = kp_memory_add(mem, KP_PHYS, r->start, r->size, kp_file_read_fn,
					    file, r->data_off);
	}
	free(ranges);
	if (err) {
		lime_destroy(l);
		return err;
	}
	memset(src, 0, sizeof(*src));
	src->kind = avml ? "AVML image (snappy)" : "LiME image";
	src->priv = l;
	src->destroy = lime_destroy;
	return NULL;
}

const struct kp_source_ops kp_lime_ops = {
	.name = "LiME/AVML",
	.probe = lime_probe,
	.open = lime_open,
};
