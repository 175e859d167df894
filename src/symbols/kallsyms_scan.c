// SPDX-License-Identifier: MIT
// The kernel's kallsyms tables found in its image by their shape, for
// dumps that do not say where they are (no VMCOREINFO, or one that names no
// kallsyms table, as 5.10's). Layout: see kallsyms.c. The order of the
// tables (scripts/kallsyms.c write_src()), measured on Debian's kernels:
//   5.10:       kallsyms_offsets, kallsyms_relative_base, kallsyms_num_syms,
//               kallsyms_names, kallsyms_markers, kallsyms_token_table,
//               kallsyms_token_index
//   6.1 stable: the same with kallsyms_seqs_of_names (u8[3][n], from 6.2)
//               between kallsyms_markers and kallsyms_token_table
//   6.12:       kallsyms_num_syms, kallsyms_names, kallsyms_markers,
//               kallsyms_token_table, kallsyms_token_index,
//               kallsyms_offsets, kallsyms_relative_base,
//               kallsyms_seqs_of_names
//   7.2:        the same without kallsyms_relative_base (the offsets are
//               PC-relative)
// Every label is aligned to 8 bytes up to 6.12 (ALGN) and to 4 in 7.2.
// The token table and its index are the signature: 256 NUL-terminated
// strings whose offsets the u16[256] index lists exactly.
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "symbols/kallsyms.h"
#include "symbols/kallsyms_scan.h"
#include "util/error.h"

#define PAGE 4096ULL
#define PMD_SIZE (1ULL << 21)
#define MAX_SYMS 4000000u
#define MAX_LAST_TOKEN 256
// Longest kallsyms_names record (6.1): two length bytes and 0x3fff tokens.
#define MAX_RECORD (2 + 0x3fff)

static uint64_t align_up(uint64_t v, uint64_t a)
{
	return (v + a - 1) & ~(a - 1);
}

// kallsyms_token_index (u16[256]) at b[q]: offsets of 256 NUL-terminated
// strings that must be kallsyms_token_table, 4-byte aligned, ending (with
// zero padding to the index's alignment) right before q. Returns the
// table's offset in b or -1.
static long token_signature(const uint8_t *b, size_t n, size_t q)
{
	uint16_t idx[256];
	if (q + 512 > n)
		return -1;
	for (int i = 0; i < 256; i++) {
		idx[i] = b[q + 2 * i] | b[q + 2 * i + 1] << 8;
		if (i == 0 ? idx[0] != 0 : idx[i] <= idx[i - 1])
			return -1;
	}
	size_t last = idx[255];
	if (q < last + 1)
		return -1;
	for (size_t t = (q - last - 1) & ~3UL;; t -= 4) {
		// The last token: NUL-terminated, then zeros up to q (.balign).
		size_t z = t + last;
		while (z < q && b[z])
			z++;
		if (z < q && z + 8 >= q) {
			bool good = true;
			for (size_t k = z + 1; k < q && good; k++)
				good = b[k] == 0;
			for (int i = 1; i < 256 && good; i++) {
				good = b[t + idx[i] - 1] == 0 &&
				       !memchr(b + t + idx[i - 1], '\0', idx[i] - idx[i - 1] - 1);
			}
			if (good)
				return (long)t;
		}
		if (t < 4 || q - t > last + 8 + MAX_LAST_TOKEN)
			return -1;
	}
}

// Walks n kallsyms_names records in w[0, size) (6.1 length rule, see
// kallsyms.c). Returns the table's size, or 0 if it does not fit.
static uint64_t walk_names(const uint8_t *w, uint64_t size, uint32_t n, uint32_t *marks,
			   uint32_t nmarks, uint64_t *budget)
{
	uint64_t pos = 0;
	for (uint32_t i = 0; i < n; i++) {
		if (!*budget)
			return 0;
		--*budget;
		if ((i & 255) == 0 && (i >> 8) < nmarks)
			marks[i >> 8] = (uint32_t)pos;
		if (pos >= size)
			return 0;
		uint64_t len = w[pos], hdr = 1;
		if (len & 0x80) {
			if (pos + 1 >= size || w[pos + 1] & 0x80)
				return 0;
			len = (len & 0x7f) | (uint64_t)w[pos + 1] << 7;
			hdr = 2;
		}
		if (len == 0 || pos > UINT32_MAX)
			return 0;
		pos += hdr + len;
	}
	return pos <= size ? pos : 0;
}

// Reads s32[n] at o; NULL on a fault or out of memory.
static int32_t *read_offsets(struct kp_memory *mem, uint64_t o, uint32_t n)
{
	int32_t *offs = malloc((size_t)n * 4);
	if (offs && !kp_ok(kp_memory_read(mem, KP_VIRT, o, offs, (size_t)n * 4))) {
		free(offs);
		offs = NULL;
	}
	return offs;
}

// kallsyms_offsets (s32[n]) at o with kallsyms_relative_base at rb_addr,
// decoded either way (kallsyms.c), must be sorted by address, as
// scripts/kallsyms.c sorts them; relative_base a kernel address.
static bool offsets_fit(struct kp_memory *mem, uint64_t lo, uint64_t o, uint64_t rb_addr,
			uint32_t n)
{
	uint64_t rb;
	if (!kp_ok(kp_memory_read(mem, KP_VIRT, rb_addr, &rb, sizeof(rb))) || rb < lo)
		return false;
	int32_t *offs = read_offsets(mem, o, n);
	if (!offs)
		return false;
	// Absolute-percpu when any is negative (kallsyms.c).
	bool percpu = false;
	for (uint32_t i = 0; i < n && !percpu; i++)
		percpu = offs[i] < 0;
	uint64_t prev = 0;
	bool good = true;
	for (uint32_t i = 0; good && i < n; i++) {
		uint64_t a = !percpu ? rb + (uint32_t)offs[i] :
			     offs[i] >= 0 ? (uint64_t)offs[i] : rb - 1 - (int64_t)offs[i];
		good = a >= prev;
		prev = a;
	}
	free(offs);
	return good && prev >= lo;
}

// PC-relative kallsyms_offsets at o (7.x): every decoded address a kernel
// one, sorted.
static bool pc_relative_fit(struct kp_memory *mem, uint64_t lo, uint64_t o, uint32_t n)
{
	int32_t *offs = read_offsets(mem, o, n);
	if (!offs)
		return false;
	uint64_t prev = lo;
	bool good = true;
	for (uint32_t i = 0; good && i < n; i++) {
		uint64_t a = o + 4ULL * i + (int64_t)offs[i];
		good = a >= prev;
		prev = a;
	}
	free(offs);
	return good;
}

static bool addresses_fit(struct kp_memory *mem, uint64_t lo, uint64_t a, uint32_t n)
{
	uint64_t *v = malloc((size_t)n * 8);
	if (!v)
		return false;
	bool good = kp_ok(kp_memory_read(mem, KP_VIRT, a, v, (size_t)n * 8));
	for (uint32_t i = 1; good && i < n; i++)
		good = v[i] >= v[i - 1];
	good = good && v[n - 1] >= lo;
	free(v);
	return good;
}

// kallsyms_num_syms (u32) comes right before kallsyms_names: 4 bytes
// before where labels are 4-aligned (7.2), 8 where they are 8-aligned
// (the u32, then zero padding). After the names (aligned likewise) come
// kallsyms_markers, u32 offsets of every 256th record, and
// kallsyms_token_table follows, directly or after kallsyms_seqs_of_names
// (6.1 stable). So, from the token table at tt back through w (window
// [tt - wlen, tt)): a candidate num_syms is confirmed by walking its
// records into markers that list them. *align_ret: the labels' alignment.
static bool names_before(const uint8_t *w, uint64_t wlen, uint64_t tt, uint64_t *names_ret,
			 uint32_t *n_ret, unsigned *align_ret)
{
	uint32_t *marks = NULL;
	bool found = false;
	// Hostile memory could make every position a candidate whose records
	// walk far: bound the total work (a real table takes one walk of n).
	uint64_t budget = 4ULL * MAX_SYMS;
	for (uint64_t back = 8; back <= wlen && !found && budget; back += 4) {
		const uint8_t *p = w + wlen - back;	// num_syms candidate
		uint32_t n, pad;
		memcpy(&n, p, 4);
		memcpy(&pad, p + 4, 4);
		if (n == 0 || n > MAX_SYMS)
			continue;
		uint32_t nm = (n + 255) / 256;
		uint32_t *nmarks = realloc(marks, (size_t)nm * 4);
		if (!nmarks)
			break;
		marks = nmarks;
		for (unsigned align = 4; align <= 8 && !found; align += 4) {
			uint64_t gap = align;	// num_syms to names
			if (align == 8 && (pad || (tt - back) % 8 || back < 16))
				continue;
			uint64_t size = back - gap;	// bytes from names to tt
			uint64_t len = walk_names(p + gap, size, n, marks, nm, &budget);
			if (!len)
				continue;
			uint64_t m = align_up(len, align);	// markers, relative to names
			uint64_t mend = m + 4ULL * nm;
			if (mend > size)
				continue;
			if (align_up(mend, align) != size &&
			    align_up(mend, align) + align_up(3ULL * n, align) != size)
				continue;
			found = !memcmp(p + gap + m, marks, (size_t)nm * 4);
			if (found) {
				*names_ret = tt - size;
				*n_ret = n;
				*align_ret = align;
			}
		}
	}
	free(marks);
	return found;
}

// From kallsyms_token_table at tt (kallsyms_token_index at ti): names and
// num_syms before it; the addresses before num_syms (5.10, 6.1) or after
// the token index (6.12, 7.2), or absolute (CONFIG_KALLSYMS_BASE_RELATIVE=n).
#define NAMES_WINDOW (32ULL << 20)
#define WINDOW_CHUNK (1ULL << 20)
static bool tables_from_tokens(struct kp_memory *mem, uint64_t lo, uint64_t tt, uint64_t ti,
			       struct kp_kallsyms_tables *ret)
{
	// The window grows backwards from tt in chunks until a read fails.
	uint8_t *w = malloc(NAMES_WINDOW);
	if (!w)
		return false;
	uint64_t wlen = 0;
	while (wlen < NAMES_WINDOW && tt - wlen - WINDOW_CHUNK < tt &&
	       kp_ok(kp_memory_read(mem, KP_VIRT, tt - wlen - WINDOW_CHUNK,
				 w + NAMES_WINDOW - wlen - WINDOW_CHUNK, WINDOW_CHUNK)))
		wlen += WINDOW_CHUNK;
	if (wlen < NAMES_WINDOW) {
		// The last partial chunk, page by page (tt need not be page-aligned).
		while (wlen < NAMES_WINDOW && tt - wlen - PAGE < tt &&
		       kp_ok(kp_memory_read(mem, KP_VIRT, tt - wlen - PAGE,
					 w + NAMES_WINDOW - wlen - PAGE, PAGE)))
			wlen += PAGE;
	}
	uint64_t s;
	uint32_t n;
	unsigned align;
	bool found = names_before(w + NAMES_WINDOW - wlen, wlen, tt, &s, &n, &align);
	free(w);
	if (!found)
		return false;
	memset(ret, 0, sizeof(*ret));
	ret->names = s;
	ret->num_syms = s - align;
	ret->token_table = tt;
	ret->token_index = ti;
	uint64_t num = s - align;
	uint64_t rb = num - 8, o = rb - align_up(4ULL * n, 8);	// 5.10, 6.1
	uint64_t o2 = align_up(ti + 512, align), rb2 = align_up(o2 + 4ULL * n, 8);	// 6.12
	uint64_t a = num - 8ULL * n;
	if (align == 8 && offsets_fit(mem, lo, o, rb, n)) {
		ret->offsets = o;
		ret->relative_base = rb;
	} else if (align == 8 && offsets_fit(mem, lo, o2, rb2, n)) {
		ret->offsets = o2;
		ret->relative_base = rb2;
	} else if (pc_relative_fit(mem, lo, o2, n)) {
		ret->offsets = o2;
	} else if (align == 8 && addresses_fit(mem, lo, a, n)) {
		ret->addresses = a;
	} else {
		return false;
	}
	return true;
}

// Each candidate reads up to 32 MiB before it; a real image has one.
#define MAX_TOKEN_CANDIDATES 8

// Looks for the banner and the token signature in buf[0, have) (virtual
// base), from offset 'from' on (what is before was seen with less context).
static void scan_run(struct kp_memory *mem, uint64_t lo, const uint8_t *buf, size_t have, size_t from,
		     uint64_t base, struct kp_image_scan *ret)
{
	static const char banner[] = "Linux version ";
	if (!ret->banner) {
		size_t b0 = from > sizeof(banner) ? from - sizeof(banner) : 0;
		const uint8_t *hit = b0 < have ? memmem(buf + b0, have - b0, banner,
							  sizeof(banner) - 1) : NULL;
		if (hit && hit + sizeof(banner) < buf + have &&
		    hit[sizeof(banner) - 1] >= '0' && hit[sizeof(banner) - 1] <= '9')
			ret->banner = base + (hit - buf);
	}
	// The index's first entry (0) is 4-aligned; the whole index must lie
	// inside buf.
	size_t q0 = from > 512 ? (from - 512) & ~3UL : 0;
	for (size_t q = q0; q + 512 <= have && !ret->has_tables; q += 4) {
		if (buf[q] | buf[q + 1] || !(buf[q + 2] | buf[q + 3]))
			continue;
		long t = token_signature(buf, have, q);
		if (t < 0 || ret->candidates >= MAX_TOKEN_CANDIDATES)
			continue;
		ret->candidates++;
		if (tables_from_tokens(mem, lo, base + t, base + q, &ret->tables))
			ret->has_tables = true;
	}
}

// Reads virtual [start, end) in 2 MiB blocks (page by page where a block is
// partly mapped), keeping a tail of the previous block so that the token
// signature is seen across block edges. Holes (the text/rodata gap is
// unmapped since 4.17) split the image into runs scanned separately.
#define TAIL (16 * 1024)
struct kp_error *kp_locate_scan_image(struct kp_memory *mem, uint64_t start, uint64_t end,
				      uint64_t min_addr, struct kp_image_scan *ret)
{
	uint8_t *buf = malloc(TAIL + PMD_SIZE);
	if (!buf)
		return &kp_enomem;
	memset(ret, 0, sizeof(*ret));
	size_t have = 0;	// bytes in buf, ending at va
	start &= ~(PAGE - 1);
	for (uint64_t va = start; va < end && va >= start && !ret->has_tables;) {
		uint64_t blk = PMD_SIZE - (va & (PMD_SIZE - 1));
		if (blk > end - va)
			blk = end - va;
		if (have > TAIL) {
			memmove(buf, buf + have - TAIL, TAIL);
			have = TAIL;
		}
		size_t from = have;
		if (kp_ok(kp_memory_read(mem, KP_VIRT, va, buf + have, blk))) {
			have += blk;
		} else {
			for (uint64_t p = 0; p + PAGE <= blk && !ret->has_tables; p += PAGE) {
				if (kp_ok(kp_memory_read(mem, KP_VIRT, va + p, buf + have, PAGE))) {
					have += PAGE;
					continue;
				}
				scan_run(mem, min_addr, buf, have, from, va + p - have, ret);
				have = 0;
				from = 0;
				// A fault of the translation: the pages it spans too.
				p += kp_memory_fault_step(mem, va + p, PAGE, blk - p) - PAGE;
			}
		}
		va += blk;
		if (!ret->has_tables)
			scan_run(mem, min_addr, buf, have, from, va - have, ret);
	}
	free(buf);
	return NULL;
}

struct kp_error *kp_locate_kallsyms(struct kp_memory *mem, uint64_t start, uint64_t end,
				    uint64_t min_addr, struct kp_kallsyms_tables *ret)
{
	struct kp_image_scan s;
	struct kp_error *err = kp_locate_scan_image(mem, start, end, min_addr, &s);
	if (err)
		return err;
	if (!s.has_tables)
		return kp_error_create(KP_ERR_NOT_FOUND,
				       "no kallsyms tables (kallsyms_token_table/kallsyms_token_index) in the kernel image at 0x%" PRIx64 "-0x%" PRIx64,
				       start, end);
	*ret = s.tables;
	return NULL;
}

