// SPDX-License-Identifier: MIT
// Finding the kernel in a physical-only dump that carries no VMCOREINFO note
// (QEMU dump-guest-memory without -device vmcoreinfo, a cleared note, LiME
// and raw images).
//
// 1. The note is only the way the text reaches the dump; the text itself lives
//    in the guest's RAM. Since Linux 4.13 ("kexec: move vmcoreinfo out of the
//    kernel's .bss section"), crash_save_vmcoreinfo_init() fills a page from
//    get_zeroed_page() (vmcoreinfo_data) with "OSRELEASE=...\nPAGESIZE=..." at
//    boot on every kernel with CONFIG_CRASH_CORE, whether or not a dump device
//    is configured. The text starts at a page boundary, so reading the first
//    bytes of every physical page finds it.
// 2. A page found that way may be stale (left by the kernel that ran before a
//    kexec), so the architecture checks it against the CPU registers in the
//    dump's notes (kp_arch.locator_check).
// 3. Without a usable page, the architecture derives everything from the
//    registers and the kernel image (kp_arch.locator_derive).
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/locate.h"
#include "io/file.h"
#include "util/error.h"

// Pages are scanned 4 KiB at a time: the smallest page of every
// architecture, and the alignment of the page the kernel fills.
#define PAGE 4096ULL
#define SCAN_MAX_PAGES (1ULL << 22)	// 16 GiB of physical memory

static const char prefix[] = "OSRELEASE=";

// ---------------------------------------------------------------- vmcoreinfo page

static bool plausible(const char *text, size_t len)
{
	// Printable text lines only, with the keys crash_save_vmcoreinfo_init()
	// writes on every architecture.
	for (size_t i = 0; i < len; i++) {
		unsigned char c = text[i];
		if (c != '\n' && (c < 0x20 || c > 0x7e))
			return false;
	}
	return memmem(text, len, "\nPAGESIZE=", 10) &&
	       memmem(text, len, "SYMBOL(swapper_pg_dir)=", 23);
}

// A page-aligned candidate at pa: the whole page must read and look right.
static struct kp_error *try_page(struct kp_memory *mem, uint64_t pa, char **text_ret,
				 size_t *len_ret)
{
	char head[sizeof(prefix) - 1];
	// Excluded or unreadable pages cannot hold it.
	if (!kp_ok(kp_memory_read(mem, KP_PHYS, pa, head, sizeof(head))) ||
	    memcmp(head, prefix, sizeof(head)))
		return &kp_not_found;
	char *page = malloc(PAGE + 1);
	if (!page)
		return &kp_enomem;
	if (!kp_ok(kp_memory_read(mem, KP_PHYS, pa, page, PAGE))) {
		free(page);
		return &kp_not_found;
	}
	page[PAGE] = '\0';
	size_t len = strlen(page);
	if (!plausible(page, len)) {
		free(page);
		return &kp_not_found;
	}
	*text_ret = page;
	*len_ret = len;
	return NULL;
}

// Where the next file data at or after source offset off lies, within a
// segment read from a plain file: [*data, *hole). False if there is none
// before end. Without SEEK_DATA support everything is data.
static bool next_data(const struct kp_file *f, uint64_t off, uint64_t end, uint64_t *data,
		      uint64_t *hole)
{
	off_t d = lseek(f->fd, (off_t)off, SEEK_DATA);
	if (d < 0) {
		if (errno == ENXIO)
			return false;	// only a hole up to EOF
		*data = off;
		*hole = end;
		return true;
	}
	if ((uint64_t)d >= end)
		return false;
	off_t h = lseek(f->fd, d, SEEK_HOLE);
	*data = (uint64_t)d;
	*hole = h < 0 || (uint64_t)h > end ? end : (uint64_t)h;
	return true;
}

struct kp_error *kp_locate_vmcoreinfo_page(struct kp_memory *mem, uint64_t *pa,
					   char **text_ret, size_t *len_ret)
{
	struct kp_segment_info seg;
	uint64_t scanned = 0;
	uint64_t a = (*pa + PAGE - 1) & ~(PAGE - 1);
	// Segment by segment: zero-filled tails (p_memsz > p_filesz) cannot
	// hold it and holes of sparse files need not be read (reading them
	// through the mapping costs a zeroed page-cache page each).
	while (a >= *pa && kp_memory_segment_at(mem, KP_PHYS, a, &seg)) {
		uint64_t from = a > seg.start ? a : (seg.start + PAGE - 1) & ~(PAGE - 1);
		uint64_t to = seg.last;	// inclusive
		if (seg.last == UINT64_MAX)
			return kp_error_create(KP_ERR_NOT_FOUND, "no vmcoreinfo page in the dump's memory");
		a = seg.last + 1;
		if (seg.fn == kp_read_zero || from > to || to - from < PAGE - 1)
			continue;
		uint64_t end = to - PAGE + 2;	// pages start below end
		while (from < end) {
			uint64_t stop = end;
			if (seg.fn == kp_file_read_fn) {
				uint64_t data, hole, base = seg.offset - seg.start;
				if (!next_data(seg.arg, from + base, end + base, &data, &hole))
					break;
				from = (data - base + PAGE - 1) & ~(PAGE - 1);
				stop = hole - base;
			}
			for (; from < stop; from += PAGE) {
				// The page is allocated early at boot, low in RAM
				// (20 MiB into a 512 MiB guest); bound the scan of
				// what hostile dumps claim to hold.
				if (++scanned > SCAN_MAX_PAGES)
					return kp_error_create(KP_ERR_NOT_FOUND,
							       "no vmcoreinfo page in the first %llu GiB of the dump's memory (scanned up to phys 0x%" PRIx64 ")",
							       SCAN_MAX_PAGES * PAGE >> 30, from);
				struct kp_error *err = try_page(mem, from, text_ret, len_ret);
				if (!err) {
					*pa = from;
					return NULL;
				}
				if (err != &kp_not_found)
					return err;
			}
		}
	}
	return kp_error_create(KP_ERR_NOT_FOUND, "no vmcoreinfo page in the dump's memory");
}

// ---------------------------------------------------------------- driver

// One search for the kernel: the locator that checks candidate pages
// against the CPU registers, and what the search met on the way.
struct search {
	struct kp_memory *mem;
	const struct kp_arch *arch;
	const struct kp_open_options *opts;
	struct kp_locator *l;
	struct kp_error *regs_err;	// why there is no locator (nothing to check against)
	struct kp_error *scan_err;	// why the scan ended without a page
	struct kp_error *rejected;	// why the first rejected page was stale ...
	uint64_t rejected_pa;		// ... and where it was
	unsigned nrejected;
	bool exact;			// the page at the start only: no scan
};

// Scans physical memory from *pa for a vmcoreinfo page the locator
// accepts, or any page when there is no locator: fills res->vmcoreinfo and
// res->verified, *pa where it was. Finding none is no error: res->vmcoreinfo
// stays NULL and s->scan_err says why.
static struct kp_error *find_page(struct search *s, uint64_t *pa, struct kp_locate_result *res)
{
	for (;; *pa += PAGE) {
		char *text;
		size_t len;
		struct kp_error *err = s->exact ? try_page(s->mem, *pa, &text, &len)
						: kp_locate_vmcoreinfo_page(s->mem, pa, &text, &len);
		if (err == &kp_not_found)
			err = kp_error_create(KP_ERR_NOT_FOUND, "no vmcoreinfo page at phys 0x%" PRIx64, *pa);
		if (err) {
			if (err->code != KP_ERR_NOT_FOUND)
				return err;
			s->scan_err = err;
			return NULL;
		}
		if (s->regs_err) {
			// Nothing to check it against: take it as it is.
			res->vmcoreinfo = text;
			res->vmcoreinfo_size = len;
			snprintf(res->verified, sizeof(res->verified), "not verified: %s",
				 s->regs_err->message);
			return NULL;
		}
		struct kp_error *why = s->arch->locator_check(s->l, s->opts, text, len, res->verified,
							      sizeof(res->verified));
		if (!why) {
			res->vmcoreinfo = text;
			res->vmcoreinfo_size = len;
			return NULL;
		}
		free(text);
		if (why == &kp_enomem)
			return why;
		if (!s->rejected) {
			s->rejected = why;
			s->rejected_pa = *pa;
		} else {
			kp_error_destroy(why);
		}
		s->nrejected++;
		if (s->exact)
			return NULL;
	}
}

// No usable page: the architecture derives everything from the CPU
// registers, if there are any.
static struct kp_error *without_page(struct search *s, struct kp_locate_result *res)
{
	if (s->regs_err)
		return kp_error_create(s->regs_err->code, "no VMCOREINFO note, %s, and %s: "
				       "cannot locate the kernel without VMCOREINFO",
				       s->scan_err ? s->scan_err->message : "no vmcoreinfo page",
				       s->regs_err->message);
	return s->arch->locator_derive(s->l, s->opts, res);
}

struct kp_error *kp_locate_kernel(struct kp_memory *mem, const struct kp_source *src,
				  const struct kp_arch *arch, const struct kp_open_options *opts,
				  const uint64_t *only, struct kp_locate_result *ret)
{
	struct search s = { .mem = mem, .arch = arch, .opts = opts, .exact = only != NULL };
	s.regs_err = arch->locator_create(mem, src, &s.l);
	if (s.regs_err == &kp_enomem)
		return s.regs_err;

	struct kp_locate_result res = {0};
	uint64_t pa = only ? *only : 0;
	struct kp_error *err = find_page(&s, &pa, &res);
	if (!err && res.vmcoreinfo) {
		snprintf(res.origin, sizeof(res.origin), "found in memory at phys 0x%" PRIx64, pa);
		res.found = true;
		res.pa = pa;
	} else if (!err && only) {
		err = kp_error_create(KP_ERR_NOT_FOUND, "%s", s.rejected ? s.rejected->message
				      : s.scan_err ? s.scan_err->message : "no vmcoreinfo page");
	} else if (!err) {
		err = without_page(&s, &res);
	}
	if (!err && s.rejected) {
		size_t n = strlen(res.verified);
		snprintf(res.verified + n, sizeof(res.verified) - n,
			 "; rejected %u stale vmcoreinfo page(s), first at phys 0x%" PRIx64,
			 s.nrejected, s.rejected_pa);
	}
	if (!err) {
		*ret = res;
		res.vmcoreinfo = NULL;
	}
	if (err && s.rejected)
		err = kp_error_prefix(err, "vmcoreinfo page at phys 0x%" PRIx64 " rejected (%s); then",
				      s.rejected_pa, s.rejected->message);
	kp_error_destroy(s.rejected);
	kp_error_destroy(s.regs_err);
	kp_error_destroy(s.scan_err);
	free(res.vmcoreinfo);
	if (s.l)
		arch->locator_destroy(s.l);
	return err;
}
