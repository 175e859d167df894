// SPDX-License-Identifier: MIT
// Facts a source states more than once, compared. kpeek goes by one place
// for each fact (VMCOREINFO for the release, the KASLR offset and the page
// size); a forged or stale copy there (a second VMCOREINFO note, an edited
// vmcoreinfo page that a scan met first) would otherwise be believed
// silently. Each fact is compared here with the places the kernel itself
// keeps it, when they can be read cheaply, and every disagreement is
// listed (kp_kernel_disagreements()), never resolved silently:
//   - VMCOREINFO as a whole, against the kernel's own vmcoreinfo_data
//     (kernel/crash_core.c, vmcore_info.c since 6.9: the buffer the note is
//     copied from, CRASHTIME included) and against a second note;
//   - the release, against linux_banner and init_uts_ns.name.release;
//   - the KASLR offset, as VMCOREINFO's SYMBOL(_stext) against kallsyms'.
//   - the page size, against the architecture's.
#include <inttypes.h>
#include <linux/btf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/kernel_impl.h"
#include "format/vmcoreinfo.h"
#include "symbols/symtab.h"
#include "types/btf.h"
#include "types/types.h"
#include "util/error.h"
#include "util/vec.h"

// VMCOREINFO_BYTES is a page; 64 KiB pages are the largest.
#define MAX_VMCOREINFO (64u << 10)
// Each comparison adds at most one entry (about 6 in all): a bound anyway.
#define MAX_DISAGREEMENTS 16

static void add(struct kp_kernel *k, const char *fact, const char *used_source,
		const char *used, const char *other_source, const char *other)
{
	if (k->ndisagree == MAX_DISAGREEMENTS ||
	    !KP_VEC_RESERVE(k->disagree, k->disagree_cap, k->ndisagree + 1))
		return;
	struct kp_disagreement *d = &k->disagree[k->ndisagree];
	char *s[4] = { strdup(used_source), strdup(used), strdup(other_source), strdup(other) };
	if (!s[0] || !s[1] || !s[2] || !s[3]) {
		for (int i = 0; i < 4; i++)
			free(s[i]);
		return;
	}
	*d = (struct kp_disagreement){ fact, s[0], s[1], s[2], s[3] };
	k->ndisagree++;
}

// The keys both texts have with different values (a key one lacks is not a
// disagreement: kdump appends CRASHTIME to the note only at the crash): the
// first in full, how many others in its text, so that one forged copy is
// one entry however much of it was edited.
static void compare_vmcoreinfo(struct kp_kernel *k, const char *text, size_t len,
			       const char *where)
{
	struct kp_vmcoreinfo *other;
	if (!kp_ok(kp_vmcoreinfo_parse(text, len, &other)))
		return;
	const char *key, *value, *first = NULL, *first_used = NULL, *first_value = NULL;
	size_t ndiff = 0;
	for (size_t i = 0; kp_vmcoreinfo_entry(other, i, &key, &value); i++) {
		const char *used = kp_vmcoreinfo_get(k->vmcoreinfo, key);
		if (!used || !strcmp(used, value))
			continue;
		if (!ndiff++) {
			first = key;
			first_used = used;
			first_value = value;
		}
	}
	if (ndiff) {
		char u[192], o[256], src[300];
		snprintf(u, sizeof(u), "%s=%s", first, first_used);
		if (ndiff > 1)
			snprintf(o, sizeof(o), "%s=%s (and %zu more keys)", first, first_value,
				 ndiff - 1);
		else
			snprintf(o, sizeof(o), "%s=%s", first, first_value);
		snprintf(src, sizeof(src), "VMCOREINFO (%s)", k->vmcoreinfo_origin);
		add(k, "vmcoreinfo", src, u, where, o);
	}
	kp_vmcoreinfo_destroy(other);
}

// The kernel's own vmcoreinfo_data buffer, when its symbols say where.
static void kernel_vmcoreinfo(struct kp_kernel *k)
{
	struct kp_symbol data, size;
	uint64_t p, n;
	if (!kp_symtab_find(k->symtab, "vmcoreinfo_data", &data) ||
	    !kp_symtab_find(k->symtab, "vmcoreinfo_size", &size) ||
	    !kp_ok(kp_read_u64(k, data.address, &p)) || !kp_ok(kp_read_u64(k, size.address, &n)) ||
	    !p || !n || n > MAX_VMCOREINFO)
		return;
	char *text = malloc(n);
	if (!text)
		return;
	if (kp_ok(kp_read(k, KP_VIRT, p, text, n))) {
		char where[64];
		snprintf(where, sizeof(where), "vmcoreinfo_data at 0x%" PRIx64, p);
		compare_vmcoreinfo(k, text, n, where);
	}
	free(text);
}

// init_uts_ns.name.release, when BTF has the layout.
static void uts_release(struct kp_kernel *k)
{
	struct kp_symbol uts;
	struct kp_types *types;
	uint32_t ns;
	struct kp_btf_member m;
	char rel[65];
	if (!k->release || !kp_symtab_find(k->symtab, "init_uts_ns", &uts) ||
	    !kp_ok(kp_kernel_types(k, &types)) ||
	    !kp_ok(kp_types_find(types, BTF_KIND_STRUCT, "uts_namespace", &ns)) ||
	    !kp_ok(kp_types_member_path(types, ns, "name.release", 12, &m)) ||
	    kp_btf_size(kp_types_btf(types), m.type) != sizeof(rel) ||
	    !kp_memory_read_cstr(k->mem, KP_VIRT, uts.address + m.bit_offset / 8, rel, sizeof(rel)))
		return;
	if (strcmp(rel, k->release))
		add(k, "release", k->vmcoreinfo ? "VMCOREINFO OSRELEASE" : "linux_banner",
		    k->release, "init_uts_ns.name.release", rel);
}

static void compute(struct kp_kernel *k)
{
	k->disagree_done = true;
	const char *osrelease = k->vmcoreinfo ? kp_vmcoreinfo_get(k->vmcoreinfo, "OSRELEASE") : NULL;
	size_t n;
	const char *b = kp_banner_release(k->banner, &n);
	if (osrelease && b) {
		if (strlen(osrelease) != n || strncmp(osrelease, b, n)) {
			char rel[128];
			snprintf(rel, sizeof(rel), "%.*s", (int)(n < 127 ? n : 127), b);
			add(k, "release", "VMCOREINFO OSRELEASE", osrelease, "linux_banner", rel);
		}
	}
	uts_release(k);
	uint64_t vi_stext;
	struct kp_symbol stext;
	if (k->vmcoreinfo && kp_vmcoreinfo_symbol(k->vmcoreinfo, "_stext", &vi_stext) &&
	    kp_symtab_find(k->symtab, "_stext", &stext) && stext.type != '?' &&
	    stext.address != vi_stext) {
		char u[32], o[32];
		snprintf(u, sizeof(u), "0x%" PRIx64, vi_stext);
		snprintf(o, sizeof(o), "0x%" PRIx64, stext.address);
		add(k, "kaslr_offset", "VMCOREINFO SYMBOL(_stext)", u, "kallsyms _stext", o);
	}
	const char *ps = k->vmcoreinfo ? kp_vmcoreinfo_get(k->vmcoreinfo, "PAGESIZE") : NULL;
	uint64_t page = kp_kernel_page_size(k);
	if (ps && page && strtoull(ps, NULL, 10) != page) {
		char o[32];
		snprintf(o, sizeof(o), "%" PRIu64, page);
		add(k, "page_size", "page tables", o, "VMCOREINFO PAGESIZE", ps);
	}
	if (k->vmcoreinfo && k->src.vmcoreinfo_other)
		compare_vmcoreinfo(k, k->src.vmcoreinfo_other, k->src.vmcoreinfo_other_size,
				   "a second VMCOREINFO note");
	if (k->vmcoreinfo && k->scan_first) {
		char where[96];
		snprintf(where, sizeof(where), "the vmcoreinfo page at phys 0x%" PRIx64
			 " the scan met first", k->scan_first_pa);
		compare_vmcoreinfo(k, k->scan_first, k->scan_first_size, where);
	}
	if (k->vmcoreinfo)
		kernel_vmcoreinfo(k);
}

size_t kp_kernel_disagreements(struct kp_kernel *k, const struct kp_disagreement **ret)
{
	if (!k->disagree_done)
		compute(k);
	*ret = k->disagree;
	return k->ndisagree;
}

void kp_kernel_disagreements_free(struct kp_kernel *k)
{
	for (size_t i = 0; i < k->ndisagree; i++) {
		struct kp_disagreement *d = &k->disagree[i];
		free((char *)d->used_source);
		free((char *)d->used);
		free((char *)d->other_source);
		free((char *)d->other);
	}
	free(k->disagree);
}
