// SPDX-License-Identifier: MIT
// The kernel's tables of exported symbols (__ksymtab, __ksymtab_gpl;
// include/linux/export.h), read for the variables a kallsyms of functions
// only (CONFIG_KALLSYMS_ALL=n) does not name: jiffies, avenrun, nr_cpu_ids,
// init_uts_ns, iomem_resource, init_net and every other exported one. The
// tables are kept whatever CONFIG_KALLSYMS_ALL says.
//
// With CONFIG_HAVE_ARCH_PREL32_RELOCATIONS (x86-64 and arm64, 4.19+:
// 7290d5809571, "module: use relative references for __ksymtab entries")
// an entry is three 32-bit offsets, each from its own field: to the value,
// to the name in __ksymtab_strings and (5.4+, 8651ec01daed, "module: add
// support for symbol namespaces") to the namespace string. The linker
// sorts each table by name (SORT(___ksymtab+*), 5.x). No symbol marks the
// tables without CONFIG_KALLSYMS_ALL, so they are found in rodata: an
// entry whose value is a function kallsyms names, under the entry's name,
// anchors a run of entries; the run is taken when its names are sorted,
// its functions agree with kallsyms and it has more than a handful of
// entries. Bound: two passes over rodata at most, an entry read a bounded
// number of times.
#include <stdlib.h>
#include <string.h>

#include "core/ksymtab.h"
#include "io/memory.h"
#include "symbols/symtab.h"
#include "util/error.h"
#include "util/le.h"

#define ENTRY 12		// value, name, namespace offsets
#define NAME_MAX_LEN 512		// KSYM_NAME_LEN since 6.1 (Rust's mangled names)
#define MIN_ENTRIES 16		// a run shorter than this is not taken
#define CHECKED 64		// functions of a run compared with kallsyms
#define TABLES 2		// __ksymtab and __ksymtab_gpl (5.12+; before, a few more, mostly empty)
#define WINDOW (1u << 20)	// the scan's
#define CACHED (256u << 10)	// each of the others'
#define WINDOWS 4		// the scan's, then entries and names elsewhere

// Rodata read a window at a time: the scan's, and the ones the entries of
// a run and their names (in __ksymtab_strings, away from the entries) are
// read from, reused in turn. A page the source lacks reads as zeros. Reads
// through a live /proc/kcore cost a system call each: never one per entry.
struct window {
	uint64_t va;	// [va, va + len) is in buf
	size_t len;
	uint8_t *buf;
};

struct scan {
	struct kp_memory *mem;
	struct kp_symtab *st;
	uint64_t text_lo, text_hi, image_lo, image_hi, ro_lo, ro_hi, bss_lo, bss_hi;
	bool ro_marked;		// kallsyms marks rodata: its variables are 'R'
	struct window win[WINDOWS];
	unsigned next;	// the cached window to replace next
};

static void fill(struct scan *s, struct window *w, uint64_t va, size_t size)
{
	w->va = va;
	w->len = s->ro_hi - va < size ? (size_t)(s->ro_hi - va) : size;
	// Page by page, so that a page the source lacks zeroes only itself.
	for (size_t off = 0, len; off < w->len; off += len) {
		len = 4096 - (size_t)((va + off) & 4095);
		len = w->len - off < len ? w->len - off : len;
		if (!kp_ok(kp_memory_read(s->mem, KP_VIRT, va + off, w->buf + off, len)))
			memset(w->buf + off, 0, len);
	}
}

static bool find_range(struct kp_symtab *st, const char *a, const char *b, uint64_t *lo,
		       uint64_t *hi)
{
	struct kp_symbol s, e;
	if (!kp_symtab_find(st, a, &s) || !kp_symtab_find(st, b, &e) || s.address >= e.address)
		return false;
	*lo = s.address;
	*hi = e.address;
	return true;
}

// n bytes at va, in rodata (callers check), from a window.
static bool read_at(struct scan *s, uint64_t va, void *buf, size_t n)
{
	if (va < s->ro_lo || va + n > s->ro_hi)
		return false;
	for (unsigned i = 0; i < WINDOWS; i++) {
		struct window *w = &s->win[i];
		if (va >= w->va && va - w->va + n <= w->len) {
			memcpy(buf, w->buf + (va - w->va), n);
			return true;
		}
	}
	struct window *w = &s->win[1 + s->next];
	s->next = (s->next + 1) % (WINDOWS - 1);
	fill(s, w, va & ~(uint64_t)(4096 - 1), CACHED);
	if (va - w->va + n > w->len)
		return false;
	memcpy(buf, w->buf + (va - w->va), n);
	return true;
}

// The target of the 32-bit offset at va (from va itself).
static bool rel(struct scan *s, uint64_t va, uint64_t *ret)
{
	uint8_t b[4];
	if (!read_at(s, va, b, 4))
		return false;
	*ret = va + (uint64_t)(int64_t)(int32_t)kp_le32(b);
	return true;
}

// The name of the entry at va into name[NAME_MAX_LEN + 1], if it is an
// identifier (C's, or a Rust mangled name) in the scanned range.
static bool entry_name(struct scan *s, uint64_t va, char *name)
{
	uint64_t at;
	if (!rel(s, va + 4, &at) || at < s->ro_lo || at >= s->ro_hi)
		return false;
	// Read up to the end of its page first: the next may be missing.
	size_t first = 4096 - (size_t)(at & 4095), n = 0;
	first = first < NAME_MAX_LEN ? first : NAME_MAX_LEN;
	if (!read_at(s, at, name, first))
		return false;
	if (first < NAME_MAX_LEN && !memchr(name, 0, first) &&
	    !read_at(s, at + first, name + first, NAME_MAX_LEN - first))
		return false;
	name[NAME_MAX_LEN] = 0;
	for (; name[n]; n++) {
		char c = name[n];
		if (!(c == '_' || c == '.' || (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') ||
		      (c >= 'A' && c <= 'Z')))
			return false;
	}
	return n > 0 && n < NAME_MAX_LEN;
}

static bool in_text(struct scan *s, uint64_t v)
{
	return v >= s->text_lo && v < s->text_hi;
}

// x86-64 links .data..percpu at 0: an exported per-CPU variable's value
// is its offset in the section (well below this), arm64's an image address.
#define MAX_PERCPU_OFFSET (16u << 20)

static bool plausible(struct scan *s, uint64_t va, char *name)
{
	uint64_t v;
	return rel(s, va, &v) && ((v >= s->image_lo && v < s->image_hi) || v < MAX_PERCPU_OFFSET) &&
	       entry_name(s, va, name);
}

// Whether kallsyms names a function by the entry's name at its value.
static bool anchors(struct scan *s, uint64_t va)
{
	char name[NAME_MAX_LEN + 1];
	uint64_t v;
	struct kp_symbol sym;
	return rel(s, va, &v) && in_text(s, v) && entry_name(s, va, name) &&
	       kp_symtab_find(s->st, name, &sym) && sym.address == v;
}

// Whether the entry at va may follow the one at prev: both plausible, and
// named after it (each table is sorted; __ksymtab_gpl follows __ksymtab).
static bool follows(struct scan *s, uint64_t prev, uint64_t va)
{
	char a[NAME_MAX_LEN + 1], b[NAME_MAX_LEN + 1];
	return plausible(s, prev, a) && plausible(s, va, b) && strcmp(a, b) < 0;
}

// Whether the sorted run [first, end) is a table: long enough, and its
// first CHECKED functions all as kallsyms has them.
static bool is_table(struct scan *s, uint64_t first, uint64_t end)
{
	if ((end - first) / ENTRY < MIN_ENTRIES)
		return false;
	unsigned checked = 0;
	uint64_t v;
	for (uint64_t va = first; va < end && checked < CHECKED; va += ENTRY) {
		if (rel(s, va, &v) && in_text(s, v)) {
			if (!anchors(s, va))
				return false;
			checked++;
		}
	}
	return checked > 0;
}

static char letter(const struct scan *s, uint64_t v)
{
	if (v >= s->ro_lo && v < s->ro_hi && s->ro_marked)
		return 'R';
	return v >= s->bss_lo && v < s->bss_hi ? 'B' : 'D';
}

// Adds the variables of the tables: the names st lacks are picked first,
// then added, so that no lookup meets a table changed since its last sort.
static struct kp_error *add_tables(struct scan *s, uint64_t runs[][2], size_t nruns,
				   unsigned *added)
{
	char name[NAME_MAX_LEN + 1];
	uint64_t v, count = 0;
	for (size_t i = 0; i < nruns; i++)
		count += (runs[i][1] - runs[i][0]) / ENTRY;
	uint64_t *pick = malloc(count * sizeof(*pick));
	if (!pick)
		return &kp_enomem;
	size_t n = 0;
	struct kp_symbol sym;
	for (size_t i = 0; i < nruns; i++)
		for (uint64_t va = runs[i][0]; va < runs[i][1]; va += ENTRY)
			if (rel(s, va, &v) && !in_text(s, v) && entry_name(s, va, name) &&
			    !kp_symtab_find(s->st, name, &sym))
				pick[n++] = va;
	struct kp_error *err = NULL;
	for (size_t i = 0; i < n && !err; i++) {
		if (rel(s, pick[i], &v) && entry_name(s, pick[i], name) &&
		    !(err = kp_symtab_add(s->st, name, strlen(name), v, letter(s, v), NULL)))
			(*added)++;
	}
	free(pick);
	return err;
}

// The runs found in [from, to) from window to window, TABLES at most.
static size_t find_tables(struct scan *s, uint64_t from, uint64_t to, uint64_t runs[TABLES][2])
{
	size_t n = 0;
	uint64_t va = from;
	while (va + ENTRY <= to && n < TABLES) {
		struct window *w = &s->win[0];
		fill(s, w, va, to - va < WINDOW ? (size_t)(to - va) : WINDOW);
		uint64_t next = va + w->len - (ENTRY - 4);
		for (; va < next && va + ENTRY <= to && n < TABLES; va += 4) {
			if (!anchors(s, va))
				continue;
			uint64_t first = va, end = va + ENTRY;
			while (first - ENTRY >= s->ro_lo && follows(s, first - ENTRY, first))
				first -= ENTRY;
			while (end + ENTRY <= s->ro_hi && follows(s, end - ENTRY, end))
				end += ENTRY;
			if (is_table(s, first, end)) {
				runs[n][0] = first;
				runs[n++][1] = end;
			}
			va = end - 4;	// its other entries anchor the same run
		}
		if (w->len < WINDOW)
			break;
	}
	return n;
}

struct kp_error *kp_ksymtab_add_variables(struct kp_memory *mem, uint64_t image_start,
					  uint64_t image_end, struct kp_symtab *st,
					  unsigned *added)
{
	struct scan s = { .mem = mem, .st = st, .image_lo = image_start, .image_hi = image_end };
	*added = 0;
	if (!find_range(st, "_stext", "_etext", &s.text_lo, &s.text_hi))
		return NULL;
	// Rodata follows the text (include/asm-generic/vmlinux.lds.h RO_DATA
	// after _etext on x86-64 and arm64); its markers are not always in
	// kallsyms (6.1 arm64 has neither).
	s.ro_marked = find_range(st, "__start_rodata", "__end_rodata", &s.ro_lo, &s.ro_hi);
	if (!s.ro_marked) {
		// Entries are 4-aligned; _etext need not be (x86-64: 0x...1f42).
		s.ro_lo = (s.text_hi + 3) & ~UINT64_C(3);
		s.ro_hi = s.text_hi + KP_KSYMTAB_MAX_RODATA;
	}
	if (!find_range(st, "__bss_start", "__bss_stop", &s.bss_lo, &s.bss_hi))
		s.bss_lo = s.bss_hi = 0;
	if (s.ro_hi > image_end)
		s.ro_hi = image_end;
	if (s.ro_lo >= s.ro_hi || s.ro_hi - s.ro_lo > KP_KSYMTAB_MAX_RODATA)
		return NULL;
	uint8_t *mem_all = malloc(WINDOW + (WINDOWS - 1) * (size_t)CACHED);
	if (!mem_all)
		return &kp_enomem;
	for (unsigned i = 0; i < WINDOWS; i++)
		s.win[i].buf = mem_all + (i ? WINDOW + (i - 1) * (size_t)CACHED : 0);
	// The kallsyms tables are the end of .rodata (kallsyms' object is
	// linked last) and __ksymtab follows .rodata: where VMCOREINFO names
	// them (6.0+), the tables are looked for after them first. Runs are
	// collected before anything is added: adding to st while it is looked
	// up would make every lookup sort it again.
	uint64_t runs[TABLES][2];
	struct kp_symbol last;
	size_t n = 0;
	if (kp_symtab_find(st, "kallsyms_token_index", &last) && last.address > s.ro_lo &&
	    last.address < s.ro_hi)
		n = find_tables(&s, last.address & ~UINT64_C(3), s.ro_hi, runs);
	if (!n)
		n = find_tables(&s, s.ro_lo, s.ro_hi, runs);
	struct kp_error *err = n ? add_tables(&s, runs, n, added) : NULL;
	free(mem_all);
	return err;
}
