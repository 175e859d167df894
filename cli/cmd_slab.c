// SPDX-License-Identifier: MIT
// kpeek slab: every object of a slab cache, allocated or free (crash's
// kmem -S), or with --allocated only the live objects' addresses.
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "output.h"

static void usage(void)
{
	printf("Usage: kpeek [-c CORE] slab [--allocated] [--json] CACHE\n"
	       "Lists every object of the SLUB cache CACHE (a name as /proc/slabinfo\n"
	       "shows it, or a struct kmem_cache address): its slab, the slab's first\n"
	       "page frame, the object's address and whether it is allocated or free.\n"
	       "The slabs are found in the memory map (every page frame of the source\n"
	       "heading a slab of the cache); an object is free when it is on its\n"
	       "slab's freelist or on the freelist of a CPU using the slab (hardened\n"
	       "freelist pointers decoded) or in one of the cache's sheaves (7.x:\n"
	       "the CPUs' main and spare sheaves, the nodes' full ones), which\n"
	       "/proc/slabinfo counts as active.\n"
	       "\n"
	       "Exit status: 0 success, 2 an error or an incomplete listing (a slab whose\n"
	       "freelist is corrupt or unreadable is left out and named), a usage error or\n"
	       "output that could not be written.\n"
	       "\n"
	       "Options:\n"
	       "  -a, --allocated only the allocated objects' addresses, one per line\n"
	       "  -j, --json      {\"cache\", \"name\", \"object_size\", \"slot_size\",\n"
	       "                  \"objects\": [{slab, pfn, object, state}], \"slabs\",\n"
	       "                  \"allocated\", \"free\", \"complete\"}; with --allocated\n"
	       "                  \"objects\" lists addresses\n"
	       "  -h, --help      show this help\n"
	       "\n"
	       "Examples:\n"
	       "  kpeek -c vmcore slab kmalloc-256\n"
	       "  kpeek -c vmcore slab --allocated task_struct | head\n");
}

static int options(struct cli *cli, int argc, char **argv, bool *allocated)
{
	static const struct option opts[] = {
		{ "allocated", no_argument, NULL, 'a' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":ajh", opts, NULL)) != -1) {
		switch (c) {
		case 'a':
			*allocated = true;
			break;
		case 'j':
			cli->json = true;
			break;
		case 'h':
			usage();
			return 0;
		default:
			return cli_bad_option("slab", c, argv);
		}
	}
	if (optind + 1 != argc)
		return cli_usage_error("slab", optind < argc ? "one cache, not '%s'" : "a cache name is needed%s",
				       optind < argc ? argv[optind + 1] : "");
	return -1;
}

struct counts {
	uint64_t slabs, allocated, free, last_slab;
};

static void one(struct out *o, const struct kp_slab_object *obj, bool allocated_only, struct counts *n)
{
	if (obj->slab != n->last_slab || !n->slabs) {
		n->slabs++;
		n->last_slab = obj->slab;
	}
	obj->allocated ? n->allocated++ : n->free++;
	if (allocated_only) {
		if (!obj->allocated)
			return;
		if (out_is_json(o))
			out_kv_hex(o, NULL, obj->address);
		else
			out_text(o, "0x%016" PRIx64 "\n", obj->address);
		return;
	}
	out_cell_hex(o, obj->slab);
	out_cell_hex(o, obj->pfn);
	out_cell_hex(o, obj->address);
	out_cell_str(o, obj->allocated ? "allocated" : "free");
}

int cmd_slab(struct cli *cli, int argc, char **argv)
{
	bool allocated_only = false;
	int status = options(cli, argc, argv, &allocated_only);
	if (status >= 0)
		return status;
	struct kp_kernel *k = cli_kernel(cli);
	if (!k)
		return CLI_EXIT_ERROR;
	const char *arg = argv[optind], *name = arg;
	uint64_t cache = 0;
	if (cli_parse_number(arg, &cache))
		name = NULL;
	struct kp_slab_object_iter *it;
	struct kp_error *err = kp_slab_object_iter_create(k, name, cache, &it);
	if (err)
		return cli_error_prefix(err, "slab %s", arg);
	const char *cname;
	uint32_t objsize, slot;
	kp_slab_object_iter_cache(it, &cache, &cname, &objsize, &slot);
	struct out *o = out_create(cli->json);
	if (!allocated_only || out_is_json(o)) {
		out_kv_hex(o, "cache", cache);
		out_kv_str(o, "name", cname);
		out_kv_uint(o, "object_size", objsize);
		out_kv_uint(o, "slot_size", slot);
	}
	static const struct column cols[] = {
		{ "SLAB", COL_HEX, false }, { "PFN", COL_HEX, false },
		{ "OBJECT", COL_HEX, false }, { "STATE", COL_STR, true },
	};
	if (!allocated_only)
		out_table_begin(o, "objects", cols, 4);
	else if (out_is_json(o))
		out_begin_list(o, "objects");
	struct counts n = { 0 };
	const struct kp_slab_object *obj;
	while (!(err = kp_slab_object_iter_next(it, &obj)) && obj)
		one(o, obj, allocated_only, &n);
	if (!allocated_only)
		out_table_end(o);
	else if (out_is_json(o))
		out_end_list(o);
	if (!allocated_only || out_is_json(o)) {
		out_kv_uint(o, "slabs", n.slabs);
		out_kv_uint(o, "allocated", n.allocated);
		out_kv_uint(o, "free", n.free);
	}
	struct cli_walk w = { .st = { .sz = sizeof(w.st) }, .err = err };
	kp_slab_object_iter_status(it, &w.st);
	kp_slab_object_iter_destroy(it);
	if (out_is_json(o))
		cli_walk_json(o, &w);
	out_destroy(o);
	return cli_walk_end("slab", "slab objects", &w);
}
