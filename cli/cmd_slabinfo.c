// SPDX-License-Identifier: MIT
// kpeek slabinfo: the slab caches, as /proc/slabinfo 2.1.
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "output.h"

static void usage(void)
{
	printf("Usage: kpeek [-c CORE] slabinfo [--sort name|size] [--json]\n"
	       "Prints the SLUB caches of slab_caches as /proc/slabinfo (version 2.1)\n"
	       "does: name, active_objs, num_objs, objsize, objperslab, pagesperslab,\n"
	       "tunables (0 with SLUB) and slabdata (active_slabs, num_slabs,\n"
	       "sharedavail), from each cache's per-node counters and the free objects\n"
	       "of its partial slabs (objects on CPU slabs count as active, as in the\n"
	       "kernel). Merged caches are under the name /proc/slabinfo uses.\n"
	       "\n"
	       "Exit status: 0 success, 2 an error or an incomplete listing (one line on\n"
	       "stderr), a usage error or output that could not be written.\n"
	       "\n"
	       "Options:\n"
	       "  -s, --sort KEY  name (the default) or size (total bytes, largest first)\n"
	       "  -j, --json      {\"caches\": [{name, active_objs, num_objs, objsize,\n"
	       "                  objperslab, pagesperslab, active_slabs, num_slabs,\n"
	       "                  cache}], \"complete\": bool}\n"
	       "  -h, --help      show this help\n"
	       "\n"
	       "Examples:\n"
	       "  kpeek -c vmcore slabinfo --sort size | head\n");
}

struct row {
	struct kp_slab_cache c;
	char *name;
};

static int by_name(const void *a, const void *b)
{
	return strcmp(((const struct row *)a)->name, ((const struct row *)b)->name);
}

static int by_size(const void *a, const void *b)
{
	const struct row *x = a, *y = b;
	uint64_t sx = x->c.num_objs * x->c.objsize, sy = y->c.num_objs * y->c.objsize;
	return sx != sy ? (sx < sy ? 1 : -1) : strcmp(x->name, y->name);
}

static void print(struct out *o, const struct row *rows, size_t n)
{
	if (!out_is_json(o)) {
		out_text(o, "slabinfo - version: 2.1\n# name            <active_objs> <num_objs> <objsize> "
			 "<objperslab> <pagesperslab> : tunables <limit> <batchcount> <sharedfactor> : "
			 "slabdata <active_slabs> <num_slabs> <sharedavail>\n");
		for (size_t i = 0; i < n; i++) {
			const struct kp_slab_cache *c = &rows[i].c;
			out_text(o, "%-17s %6" PRIu64 " %6" PRIu64 " %6u %4u %4u : tunables %4u %4u %4u : "
				 "slabdata %6" PRIu64 " %6" PRIu64 " %6u\n", rows[i].name, c->active_objs,
				 c->num_objs, c->objsize, c->objperslab, c->pagesperslab, 0, 0, 0,
				 c->active_slabs, c->num_slabs, 0);
		}
		return;
	}
	out_begin_list(o, "caches");
	for (size_t i = 0; i < n; i++) {
		const struct kp_slab_cache *c = &rows[i].c;
		out_begin_object(o, NULL);
		out_kv_str(o, "name", rows[i].name);
		out_kv_uint(o, "active_objs", c->active_objs);
		out_kv_uint(o, "num_objs", c->num_objs);
		out_kv_uint(o, "objsize", c->objsize);
		out_kv_uint(o, "objperslab", c->objperslab);
		out_kv_uint(o, "pagesperslab", c->pagesperslab);
		out_kv_uint(o, "active_slabs", c->active_slabs);
		out_kv_uint(o, "num_slabs", c->num_slabs);
		out_kv_hex(o, "cache", c->address);
		out_end_object(o);
	}
	out_end_list(o);
}

static int options(struct cli *cli, int argc, char **argv, bool *size_ret)
{
	static const struct option opts[] = {
		{ "sort", required_argument, NULL, 's' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":s:jh", opts, NULL)) != -1) {
		switch (c) {
		case 's':
			if (strcmp(optarg, "name") && strcmp(optarg, "size"))
				return cli_usage_error("slabinfo", "--sort takes name or size, not '%s'", optarg);
			*size_ret = !strcmp(optarg, "size");
			break;
		case 'j':
			cli->json = true;
			break;
		case 'h':
			usage();
			return 0;
		default:
			return cli_bad_option("slabinfo", c, argv);
		}
	}
	if (optind < argc)
		return cli_usage_error("slabinfo", "unexpected argument '%s'", argv[optind]);
	return -1;
}

int cmd_slabinfo(struct cli *cli, int argc, char **argv)
{
	bool by_bytes = false;
	int status = options(cli, argc, argv, &by_bytes);
	if (status >= 0)
		return status;
	struct kp_kernel *k = cli_kernel(cli);
	if (!k)
		return CLI_EXIT_ERROR;
	struct kp_slab_iter *it;
	struct kp_error *err = kp_slab_iter_create(k, &it);
	if (err)
		return cli_error_prefix(err, "slabinfo");
	struct row *rows = NULL;
	size_t n = 0, cap = 0;
	const struct kp_slab_cache *c;
	while (!(err = kp_slab_iter_next(it, &c)) && c) {
		if (n == cap) {
			cap = cap ? cap * 2 : 256;
			struct row *r = realloc(rows, cap * sizeof(*rows));
			if (!r)
				break;
			rows = r;
		}
		rows[n].c = *c;
		if (!(rows[n].name = strdup(c->name)))
			break;
		n++;
	}
	struct cli_walk w = { .st = { .sz = sizeof(w.st) }, .err = err };
	kp_slab_iter_status(it, &w.st);
	kp_slab_iter_destroy(it);
	qsort(rows, n, sizeof(*rows), by_bytes ? by_size : by_name);
	struct out *o = out_create(cli->json);
	print(o, rows, n);
	if (out_is_json(o))
		cli_walk_json(o, &w);
	out_destroy(o);
	for (size_t i = 0; i < n; i++)
		free(rows[i].name);
	free(rows);
	return cli_walk_end("slabinfo", "slab caches", &w);
}
