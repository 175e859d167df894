// SPDX-License-Identifier: MIT
// kpeek page PFN|ADDR...: a page frame's struct page decoded (crash's kmem -p).
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "output.h"

static void usage(void)
{
	printf("Usage: kpeek [-c CORE] page [-p] [--json] PFN|ADDR...\n"
	       "Decodes the struct page of each page frame, as crash's kmem -p: its\n"
	       "flags by their enum pageflags names (lowercased, as page-types shows\n"
	       "them), the reference count, the map count (_mapcount + 1; none for a\n"
	       "typed page), the page type (buddy, slab, table...), the mapping (anon,\n"
	       "ksm, movable, a file's inode, or a slab's cache), the index, and the\n"
	       "compound page it belongs to (its head and order). The struct page is\n"
	       "found through the sparse memory model VMCOREINFO describes.\n"
	       "An operand is a page frame number (decimal or 0xHEX), or with -p a\n"
	       "physical address; a SYMBOL[+-OFFSET] or an address in the kernel's half\n"
	       "is a kernel virtual address, translated through the page tables.\n"
	       "\n"
	       "Exit status: 0 success, 2 a page that could not be decoded (said on stderr),\n"
	       "a usage error or output that could not be written.\n"
	       "\n"
	       "Options:\n"
	       "  -p, --physical  operands are physical addresses\n"
	       "  -j, --json      {\"pages\": [{\"query\", \"pfn\", \"page\", \"flags\",\n"
	       "                  \"flag_names\", \"refcount\", \"mapcount\", \"type\",\n"
	       "                  \"mapping\", \"mapping_kind\", \"inode\", \"ino\", \"index\",\n"
	       "                  \"head\", \"head_pfn\", \"compound\", \"tail\", \"order\",\n"
	       "                  \"slab_cache\", \"slab_cache_name\"}]}\n"
	       "  -h, --help      show this help\n"
	       "\n"
	       "Examples:\n"
	       "  kpeek -c vmcore page 0x1000\n"
	       "  kpeek -c vmcore page init_task\n");
}

void cli_page_summary(const struct kp_page *p, char *buf, size_t size)
{
	size_t n = 0;
	n += (size_t)snprintf(buf + n, size - n, "page 0x%" PRIx64 " flags", p->page);
	for (size_t i = 0; i < p->nflags && n < size; i++)
		n += (size_t)snprintf(buf + n, size - n, "%s%s", i ? "," : " ", p->flag_names[i]);
	if (!p->nflags && n < size)
		n += (size_t)snprintf(buf + n, size - n, " -");
	if (n < size)
		n += (size_t)snprintf(buf + n, size - n, " refcount %d", p->refcount);
	if (p->has_mapcount && n < size)
		n += (size_t)snprintf(buf + n, size - n, " mapcount %d", p->mapcount);
	if (p->type && n < size)
		n += (size_t)snprintf(buf + n, size - n, " type %s", p->type);
	if (p->slab_cache_name && n < size)
		n += (size_t)snprintf(buf + n, size - n, " cache %s", p->slab_cache_name);
	else if (p->mapping_kind && n < size)
		n += (size_t)snprintf(buf + n, size - n, " %s", p->mapping_kind);
	if (p->compound && n < size)
		snprintf(buf + n, size - n, " %s of order %u", p->tail ? "tail" : "head", p->order);
}

static void show_text(struct out *o, const struct kp_page *p)
{
	out_text(o, "PFN 0x%" PRIx64 ": struct page 0x%" PRIx64 "\n", p->pfn, p->page);
	out_text(o, "  flags     0x%" PRIx64 ":", p->flags);
	for (size_t i = 0; i < p->nflags; i++)
		out_text(o, " %s", p->flag_names[i]);
	out_text(o, "\n  refcount  %d\n", p->refcount);
	if (p->has_mapcount)
		out_text(o, "  mapcount  %d\n", p->mapcount);
	if (p->type)
		out_text(o, "  type      %s (page_type 0x%x)\n", p->type, p->page_type);
	if (p->slab_cache_name)
		out_text(o, "  slab      %s (kmem_cache 0x%" PRIx64 ")\n", p->slab_cache_name, p->slab_cache);
	else if (p->mapping_kind && p->inode)
		out_text(o, "  mapping   0x%" PRIx64 " %s: inode 0x%" PRIx64 " ino %" PRIu64 "\n", p->mapping,
			 p->mapping_kind, p->inode, p->ino);
	else if (p->mapping_kind)
		out_text(o, "  mapping   0x%" PRIx64 " %s\n", p->mapping, p->mapping_kind);
	if (!p->slab_cache_name)
		out_text(o, "  index     0x%" PRIx64 "\n", p->index);
	if (p->compound)
		out_text(o, "  compound  %s, head 0x%" PRIx64 " (PFN 0x%" PRIx64 "), order %u\n",
			 p->tail ? "tail" : "head", p->head, p->head_pfn, p->order);
}

void cli_page_json(struct out *o, const struct kp_page *p)
{
	out_kv_hex(o, "pfn", p->pfn);
	out_kv_hex(o, "page", p->page);
	out_kv_hex(o, "flags", p->flags);
	out_begin_list(o, "flag_names");
	for (size_t i = 0; i < p->nflags; i++)
		out_kv_str(o, NULL, p->flag_names[i]);
	out_end_list(o);
	out_kv_int(o, "refcount", p->refcount);
	out_kv_int_known(o, "mapcount", p->has_mapcount, p->mapcount);
	out_kv_str(o, "type", p->type);
	// A slab page's mapping and index words hold the slab's own data
	// (its cache, its freelist): not read, null (text leaves them out).
	out_kv_hex_known(o, "mapping", !p->slab_cache_name, p->mapping);
	out_kv_str(o, "mapping_kind", p->mapping_kind);
	out_kv_hex_known(o, "inode", p->inode != 0, p->inode);
	out_kv_int_known(o, "ino", p->inode != 0, (int64_t)p->ino);
	out_kv_hex_known(o, "index", !p->slab_cache_name, p->index);
	out_kv_hex(o, "head", p->head);
	out_kv_hex(o, "head_pfn", p->head_pfn);
	out_kv_bool(o, "compound", p->compound);
	out_kv_bool(o, "tail", p->tail);
	out_kv_uint(o, "order", p->order);
	out_kv_hex_known(o, "slab_cache", p->slab_cache != 0, p->slab_cache);
	out_kv_str(o, "slab_cache_name", p->slab_cache_name);
}

// A PFN, a physical address (-p) or a kernel virtual address.
static int pfn_of(struct cli *cli, struct kp_kernel *k, const char *arg, bool phys, uint64_t *ret)
{
	uint64_t v;
	bool number = cli_parse_number(arg, &v);
	// Kernel addresses have the top bit set on every architecture kpeek
	// reads; a PFN never has.
	if (number && !phys && !(v >> 63)) {
		*ret = v;
		return 0;
	}
	if (!number && (phys || cli_parse_address(cli, arg, &v)))
		return phys ? cli_usage_error("page", "'%s' is not a physical address", arg) : 1;
	struct kp_error *err = kp_page_pfn(k, phys ? KP_PHYS : KP_VIRT, v, ret);
	return err ? cli_error_prefix(err, "page %s", arg) : 0;
}

static int options(struct cli *cli, int argc, char **argv, bool *phys)
{
	static const struct option opts[] = {
		{ "physical", no_argument, NULL, 'p' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+:pjh", opts, NULL)) != -1) {
		switch (c) {
		case 'p':
			*phys = true;
			break;
		case 'j':
			cli->json = true;
			break;
		case 'h':
			usage();
			return 0;
		default:
			return cli_bad_option("page", c, argv);
		}
	}
	if (optind >= argc)
		return cli_usage_error("page", "expected PFN or ADDR");
	return -1;
}

int cmd_page(struct cli *cli, int argc, char **argv)
{
	bool phys = false;
	int status = options(cli, argc, argv, &phys);
	if (status >= 0)
		return status;
	struct kp_kernel *k = cli_kernel(cli);
	if (!k)
		return CLI_EXIT_ERROR;
	struct out *o = out_create(cli->json);
	if (out_is_json(o))
		out_begin_list(o, "pages");
	status = 0;
	for (int i = optind; i < argc; i++) {
		uint64_t pfn;
		struct kp_page *p;
		int st = pfn_of(cli, k, argv[i], phys, &pfn);
		struct kp_error *err = st ? NULL : kp_page_create(k, pfn, &p);
		if (err)
			st = cli_error_prefix(err, "page %s", argv[i]);
		if (st) {
			status = st > status ? st : status;
			continue;
		}
		if (out_is_json(o)) {
			out_begin_object(o, NULL);
			out_kv_str(o, "query", argv[i]);
			cli_page_json(o, p);
			out_end_object(o);
		} else {
			show_text(o, p);
		}
		kp_page_destroy(p);
	}
	if (out_is_json(o))
		out_end_list(o);
	out_destroy(o);
	return status;
}
