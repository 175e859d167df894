// SPDX-License-Identifier: MIT
// kp_page: a page frame's struct page decoded (crash's kmem -p), and what
// the slab code asks of a page: its compound head and whether that is a
// slab.
//
// Whether a page is a slab changed three times (include/linux/page-flags.h):
//   - until 6.9, the PG_slab bit of page->flags (enum pageflags in BTF);
//   - 6.10-6.11 (46df8e73a4a3, "mm: free up PG_slab"), a page type: a bit
//     cleared in page_type under PAGE_TYPE_BASE 0xf0000000, the bit given
//     by VMCOREINFO as PAGE_SLAB_MAPCOUNT_VALUE = ~PG_slab;
//   - 6.12+ (4ffca5a96678, "mm: support only one page_type per page"), the
//     top byte of page_type is an enum pagetype (PGTY_slab) BTF names.
#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/kernel.h"
#include "core/layout.h"
#include "format/vmcoreinfo.h"
#include "linux/mm/mm.h"
#include "util/error.h"

#define PAGE_TYPE_BASE 0xf0000000u	// 4.18-6.11
#define PAGE_MAPCOUNT_RESERVE -128	// 4.18-6.11: page_type below it holds a type
#define MAX_ORDER_SANE 20
// page->mapping's low bits (PAGE_MAPPING_ANON, _MOVABLE, _KSM = both; 4.8+).
#define MAPPING_FLAGS 3u

enum { P_FLAGS, P_HEAD, P_REFCOUNT, P_MAPCOUNT, P_TYPE, P_MAPPING, P_INDEX, P_N };
static const struct kp_member_spec page_members[P_N] = {
	[P_FLAGS] = { .name = "flags" },
	// compound_info from 7.1 (the fake-head removal of the vmemmap
	// optimization): a tail page's value is its head's address + 1 or a
	// mask + 1 that takes the page's address to its head's.
	[P_HEAD] = { .name = "compound_head|compound_info" },
	[P_REFCOUNT] = { .name = "_refcount" },
	[P_MAPCOUNT] = { .name = "_mapcount" },
	// 4.18+ (6e292b9be7f4); shares _mapcount's word.
	[P_TYPE] = { .name = "page_type", .flags = KP_MEMBER_OPTIONAL },
	[P_MAPPING] = { .name = "mapping" },
	[P_INDEX] = { .name = "index|__folio_index", .flags = KP_MEMBER_OPTIONAL },
};
static const struct kp_struct_spec page_spec = KP_STRUCT_SPEC("struct page", page_members);
// The order of a compound page, in its first tail page: struct folio's
// _folio_order (5.16-6.5), the low byte of _flags_1 from 6.6 (ebc1baf5c9b4,
// "mm: free up a word in the first tail page"); struct page's
// compound_order before folios.
enum { F_ORDER, F_FLAGS1, F_N };
static const struct kp_member_spec folio_members[F_N] = {
	[F_ORDER] = { .name = "_folio_order", .flags = KP_MEMBER_OPTIONAL },
	[F_FLAGS1] = { .name = "_flags_1", .flags = KP_MEMBER_OPTIONAL },
};
static const struct kp_struct_spec folio_spec = KP_STRUCT_SPEC_OPTIONAL("struct folio", folio_members);
enum { O_ORDER, O_N };
static const struct kp_member_spec order_members[O_N] = {
	[O_ORDER] = { .name = "compound_order", .flags = KP_MEMBER_OPTIONAL },
};
static const struct kp_struct_spec order_spec = KP_STRUCT_SPEC("struct page", order_members);

enum { A_HOST, A_N };
static const struct kp_member_spec as_members[A_N] = { [A_HOST] = { .name = "host", .flags = KP_MEMBER_NOSPAN } };
static const struct kp_struct_spec as_spec = KP_STRUCT_SPEC("struct address_space", as_members);
enum { I_INO, I_N };
static const struct kp_member_spec inode_members[I_N] = { [I_INO] = { .name = "i_ino" } };
static const struct kp_struct_spec inode_spec = KP_STRUCT_SPEC("struct inode", inode_members);

struct page_impl {
	struct kp_page pub;
	const char *names[64];
	char name_buf[64][24];
	char type[24];
	char cache[64];
};

struct kp_error *kp_lx_page_read(struct kp_kernel *k, uint64_t pfn, struct kp_lx_page *ret)
{
	const struct kp_struct_layout *l;
	uint64_t page;
	uint8_t buf[128], hbuf[128];
	struct kp_error *err = kp_kernel_layout(k, &page_spec, &l);
	if (err || (err = kp_lx_pfn_to_page(k, pfn, &page)))
		return err;
	if ((err = kp_kernel_read_struct(k, l, page, buf, sizeof(buf))))
		return kp_error_prefix(err, "the struct page of PFN 0x%" PRIx64, pfn);
	struct kp_lx_page p = { .pfn = pfn, .page = page, .head = page, .head_pfn = pfn };
	p.flags = kp_layout_u64(l, buf, P_FLAGS);
	uint64_t ch = kp_layout_u64(l, buf, P_HEAD);
	// A tail page's compound_head is its head's address with bit 0 set.
	if (ch & 1) {
		uint64_t size = kp_lx_page_struct_size(k);
		p.tail = true;
		p.head = ch - 1;
		if (l->m[P_HEAD].alt == 1 && p.head > page)
			p.head = page & (ch - 1);
		if (p.head > page || !size || (page - p.head) % size || (page - p.head) / size > (1u << MAX_ORDER_SANE))
			return kp_error_create(KP_ERR_FORMAT, "the struct page of PFN 0x%" PRIx64 " at 0x%" PRIx64
					       " names 0x%" PRIx64 " its compound head (corrupt?)", pfn, page, p.head);
		p.head_pfn = pfn - (page - p.head) / size;
		if ((err = kp_kernel_read_struct(k, l, p.head, hbuf, sizeof(hbuf))))
			return kp_error_prefix(err, "the compound head of PFN 0x%" PRIx64, pfn);
	} else {
		memcpy(hbuf, buf, sizeof(buf));
	}
	p.head_flags = kp_layout_u64(l, hbuf, P_FLAGS);
	p.has_page_type = kp_layout_has(l, P_TYPE);
	p.page_type = (uint32_t)kp_layout_u64(l, buf, P_TYPE);
	p.head_page_type = (uint32_t)kp_layout_u64(l, hbuf, P_TYPE);
	p.refcount = (int32_t)kp_layout_s64(l, buf, P_REFCOUNT);
	p.mapcount = (int32_t)kp_layout_s64(l, buf, P_MAPCOUNT);
	p.mapping = kp_layout_u64(l, hbuf, P_MAPPING);
	p.index = kp_layout_u64(l, hbuf, P_INDEX) + (pfn - p.head_pfn);
	p.slab = kp_lx_page_type_is(k, &p, "slab");
	*ret = p;
	return NULL;
}

// Whether the page-type word t holds the type name in a 4.18-6.11 kernel:
// VMCOREINFO's PAGE_<NAME>_MAPCOUNT_VALUE is ~PG_<name>.
static bool type_value(struct kp_kernel *k, const char *name, uint32_t *bit_ret)
{
	const struct kp_vmcoreinfo *vi = kp_kernel_vmcoreinfo(k);
	char key[64];
	int64_t v;
	snprintf(key, sizeof(key), "PAGE_%s_MAPCOUNT_VALUE", name);
	for (char *c = key; *c; c++)
		*c = (char)toupper((unsigned char)*c);
	if (!vi || !kp_vmcoreinfo_number(vi, key, &v))
		return false;
	*bit_ret = ~(uint32_t)v;
	return true;
}

static bool type_bit(struct kp_kernel *k, uint32_t t, const char *name)
{
	uint32_t bit;
	return type_value(k, name, &bit) && (t & (PAGE_TYPE_BASE | bit)) == PAGE_TYPE_BASE;
}

void kp_lx_page_type_test(struct kp_kernel *k, const char *name, struct kp_lx_type_test *ret)
{
	char pg[40];
	uint64_t v;
	uint32_t bit;
	struct kp_lx_type_test t = { .how = KP_LX_TYPE_NONE };
	snprintf(pg, sizeof(pg), "PGTY_%s", name);
	if (kp_kernel_enum_value_in(k, "pagetype", pg, &v)) {
		t = (struct kp_lx_type_test){ .how = KP_LX_TYPE_PGTY, .v = v };
	} else {
		snprintf(pg, sizeof(pg), "PG_%s", name);
		if (kp_kernel_enum_value_in(k, "pageflags", pg, &v) && v < 64)
			t = (struct kp_lx_type_test){ .how = KP_LX_TYPE_FLAG, .v = v };
		else if (type_value(k, name, &bit))
			t = (struct kp_lx_type_test){ .how = KP_LX_TYPE_BIT, .v = bit };
	}
	*ret = t;
}

bool kp_lx_page_type_test_is(const struct kp_lx_type_test *t, uint64_t head_flags, bool has_type,
			     uint32_t head_page_type)
{
	switch (t->how) {
	case KP_LX_TYPE_PGTY:
		return has_type && head_page_type >> 24 == t->v;
	case KP_LX_TYPE_FLAG:
		return (head_flags >> t->v) & 1;
	case KP_LX_TYPE_BIT:
		return has_type && (head_page_type & (PAGE_TYPE_BASE | (uint32_t)t->v)) == PAGE_TYPE_BASE;
	default:
		return false;
	}
}

bool kp_lx_page_type_is(struct kp_kernel *k, const struct kp_lx_page *p, const char *name)
{
	struct kp_lx_type_test t;
	kp_lx_page_type_test(k, name, &t);
	return kp_lx_page_type_test_is(&t, p->head_flags, p->has_page_type, p->head_page_type);
}

// The name of the type the page-type word holds, NULL if none.
static const char *type_name(struct kp_kernel *k, uint32_t t, char *buf, size_t size)
{
	uint64_t v;
	if (kp_kernel_enum_value_in(k, "pagetype", "PGTY_mapcount_underflow", &v)) {
		// 6.12+: a type is a top byte below PGTY_mapcount_underflow that
		// is no (overflowed) mapcount.
		if ((int32_t)t >= (int32_t)((uint32_t)v << 24) || (t >> 24) < 0xf0)
			return NULL;
		const char *n = kp_kernel_enum_name(k, "pagetype", t >> 24);
		snprintf(buf, size, "%s", n && !strncmp(n, "PGTY_", 5) ? n + 5 : "unknown");
		return buf;
	}
	if ((int32_t)t >= PAGE_MAPCOUNT_RESERVE || (t & PAGE_TYPE_BASE) != PAGE_TYPE_BASE)
		return NULL;
	static const char *const known[] = { "buddy", "offline", "slab", "hugetlb", "table", "guard" };
	for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
		if (type_bit(k, t, known[i]))
			return known[i];
	snprintf(buf, size, "0x%x", t);
	return buf;
}

static void flag_names(struct kp_kernel *k, struct page_impl *pi)
{
	uint64_t nr = 0;
	struct kp_page *p = &pi->pub;
	if (!kp_kernel_enum_value_in(k, "pageflags", "__NR_PAGEFLAGS", &nr) || nr > 64)
		nr = 0;
	for (uint64_t bit = 0; bit < nr; bit++) {
		if (!((p->flags >> bit) & 1))
			continue;
		const char *n = kp_kernel_enum_name(k, "pageflags", bit);
		char *b = pi->name_buf[p->nflags];
		snprintf(b, sizeof(pi->name_buf[0]), "%s", n ? (strncmp(n, "PG_", 3) ? n : n + 3) : "?");
		if (!n)
			snprintf(b, sizeof(pi->name_buf[0]), "bit%" PRIu64, bit);
		for (; *b; b++)
			*b = (char)tolower((unsigned char)*b);
		pi->names[p->nflags] = pi->name_buf[p->nflags];
		p->nflags++;
	}
	p->flag_names = pi->names;
}

static struct kp_error *compound_order(struct kp_kernel *k, const struct kp_lx_page *lp, uint32_t *ret)
{
	const struct kp_struct_layout *fl, *ol;
	uint64_t first = lp->head + kp_lx_page_struct_size(k), v = 0;
	uint8_t buf[64];
	struct kp_error *err = kp_kernel_layout(k, &folio_spec, &fl);
	if (!err && fl->present && (kp_layout_has(fl, F_ORDER) || kp_layout_has(fl, F_FLAGS1))) {
		if (!(err = kp_kernel_read_struct(k, fl, lp->head, buf, sizeof(buf))))
			v = kp_layout_has(fl, F_ORDER) ? kp_layout_u64(fl, buf, F_ORDER) :
				kp_layout_u64(fl, buf, F_FLAGS1) & 0xff;
	} else if (!err && !(err = kp_kernel_layout(k, &order_spec, &ol)) && kp_layout_has(ol, O_ORDER)) {
		if (!(err = kp_kernel_read_struct(k, ol, first, buf, sizeof(buf))))
			v = kp_layout_u64(ol, buf, O_ORDER);
	}
	if (err)
		return kp_error_prefix(err, "the order of the compound page at 0x%" PRIx64, lp->head);
	if (v > MAX_ORDER_SANE)
		return kp_error_create(KP_ERR_FORMAT, "the compound page at 0x%" PRIx64 " has order %" PRIu64 " (corrupt?)",
				       lp->head, v);
	*ret = (uint32_t)v;
	return NULL;
}

// page->mapping: its low bits, or the address_space of a file's page.
static struct kp_error *mapping(struct kp_kernel *k, struct kp_page *p)
{
	static const char *const kinds[] = { "file", "anon", "movable", "ksm" };
	if (!p->mapping)
		return NULL;
	p->mapping_kind = kinds[p->mapping & MAPPING_FLAGS];
	if (p->mapping & MAPPING_FLAGS)
		return NULL;
	const struct kp_struct_layout *al, *il;
	uint8_t buf[64];
	struct kp_error *err = kp_kernel_layout(k, &as_spec, &al);
	if (!err && !(err = kp_read_u64(k, p->mapping + kp_layout_off(al, A_HOST), &p->inode)) && p->inode &&
	    !(err = kp_kernel_layout(k, &inode_spec, &il)) &&
	    !(err = kp_kernel_read_struct(k, il, p->inode, buf, sizeof(buf))))
		p->ino = kp_layout_u64(il, buf, I_INO);
	return err ? kp_error_prefix(err, "the mapping of PFN 0x%" PRIx64, p->pfn) : NULL;
}

static struct kp_error *fill(struct kp_kernel *k, struct page_impl *pi, const struct kp_lx_page *lp)
{
	struct kp_page *p = &pi->pub;
	p->pfn = lp->pfn;
	p->page = lp->page;
	p->flags = lp->flags;
	p->refcount = lp->refcount;
	p->page_type = lp->has_page_type ? lp->page_type : 0;
	p->type = lp->has_page_type ? type_name(k, lp->page_type, pi->type, sizeof(pi->type)) : NULL;
	if (lp->slab && !p->type)
		p->type = "slab";	// PG_slab (until 6.9) is a flag, not a type
	p->has_mapcount = !p->type && !lp->slab;
	p->mapcount = p->has_mapcount ? lp->mapcount + 1 : 0;
	p->head = lp->head;
	p->head_pfn = lp->head_pfn;
	p->tail = lp->tail;
	p->index = lp->index;
	flag_names(k, pi);
	uint64_t head_bit;
	bool head = kp_kernel_enum_value_in(k, "pageflags", "PG_head", &head_bit) && head_bit < 64 &&
		    (lp->head_flags >> head_bit) & 1;
	p->compound = lp->tail || head;
	struct kp_error *err = NULL;
	if (p->compound && head)
		err = compound_order(k, lp, &p->order);
	if (lp->slab) {
		p->mapping_kind = "slab";
		if (!err && !(err = kp_lx_slab_cache_of(k, lp->head, &p->slab_cache, pi->cache, sizeof(pi->cache))))
			p->slab_cache_name = pi->cache;
	} else {
		p->mapping = lp->mapping;
		if (!err)
			err = mapping(k, p);
	}
	return err;
}

struct kp_error *kp_page_create(struct kp_kernel *k, uint64_t pfn, struct kp_page **ret)
{
	struct kp_lx_page lp;
	struct kp_error *err = kp_lx_page_read(k, pfn, &lp);
	if (err)
		return err;
	struct page_impl *pi = calloc(1, sizeof(*pi));
	if (!pi)
		return &kp_enomem;
	if ((err = fill(k, pi, &lp))) {
		free(pi);
		return err;
	}
	*ret = &pi->pub;
	return NULL;
}

void kp_page_destroy(struct kp_page *p)
{
	free(p);	// the first member of its page_impl
}

struct kp_error *kp_page_pfn(struct kp_kernel *k, enum kp_space space, uint64_t address, uint64_t *ret)
{
	unsigned shift = 0;
	for (uint64_t s = kp_kernel_page_size(k); s > 1; s >>= 1)
		shift++;
	if (space == KP_PHYS) {
		*ret = address >> shift;
		return NULL;
	}
	KP_INIT(kp_vtop, t);
	struct kp_error *err = kp_vtop(k, address, &t);
	if (err)
		return err;
	if (!t.present)
		return kp_error_fault(address, "0x%" PRIx64 " is not mapped", address);
	*ret = t.paddr >> shift;
	return NULL;
}
