// SPDX-License-Identifier: MIT
// kpeek sym NAME|ADDR...: symbols by name (address, type, size) or by
// address (name+0xoff/0xsize [module], as the kernel's %pS prints); sym -l:
// every symbol, as /proc/kallsyms lists them.
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "cli.h"
#include "output.h"

static void usage(void)
{
	printf("Usage: kpeek [-c CORE] sym [--json] NAME|ADDR...\n"
	       "       kpeek [-c CORE] sym [--json] -l\n"
	       "       kpeek [-c CORE] sym --prefix PREFIX\n"
	       "Looks up each argument:\n"
	       "  NAME          prints \"ADDRESS TYPE NAME (SIZE bytes) [module]\" (nm style;\n"
	       "                the size is left out when unknown)\n"
	       "  ADDR          0xHEX, DECIMAL or SYMBOL+-OFFSET; prints\n"
	       "                \"ADDRESS: name+0xoff/0xsize [module]\" like the kernel's %%pS\n"
	       "An unknown name fails with close names suggested; the other arguments are\n"
	       "still looked up. A variable no symbol table names (a kernel built without\n"
	       "CONFIG_KALLSYMS_ALL) ends with how kpeek found it (\", recovered from\n"
	       "references in get_taint\"; JSON \"recovered\", null for the others).\n"
	       "\n"
	       "Exit status: 0 every argument found, 2 one or more not (one line on stderr\n"
	       "each), a usage error or output that could not be written.\n"
	       "\n"
	       "Options:\n"
	       "  -l, --list   every symbol in address order, as /proc/kallsyms lists them:\n"
	       "               \"ADDRESS TYPE NAME\" and, for module symbols, \"\\t[module]\"\n"
	       "  -p, --prefix PREFIX\n"
	       "               the names that start with PREFIX, sorted, each once, at most\n"
	       "               1000 (shell completion uses it; past that, a last line\n"
	       "               says so, JSON \"truncated\": true, \"shown\": 1000)\n"
	       "  -j, --json   print {\"symbols\": [...]}, one object per argument found\n"
	       "               (or per symbol with -l)\n"
	       "  -h, --help   show this help\n"
	       "\n"
	       "Examples:\n"
	       "  kpeek sym avenrun init_task\n"
	       "  kpeek sym 0xffffffff81000000 schedule+0x10\n"
	       "  kpeek -c vmcore sym -l | grep ' [Tt] '\n");
}

static void json_symbol(struct out *o, struct kp_kernel *k, const struct kp_symbol *sym)
{
	out_kv_str(o, "name", sym->name);
	out_kv_hex(o, "address", sym->address);
	if (sym->size)
		out_kv_uint(o, "size", sym->size);
	else
		out_kv_str(o, "size", NULL);
	char type[2] = { sym->type, '\0' };
	out_kv_str(o, "type", type);
	out_kv_str(o, "module", sym->module);
	out_kv_str(o, "recovered", kp_symbol_origin(k, sym));
}

static int by_name(struct out *o, struct kp_kernel *k, const char *name)
{
	struct kp_symbol sym;
	struct kp_error *err = kp_symbol_by_name(k, name, &sym);
	if (err)
		return cli_error(err);
	if (out_is_json(o)) {
		out_begin_object(o, NULL);
		out_kv_str(o, "query", name);
		json_symbol(o, k, &sym);
		out_end_object(o);
		return 0;
	}
	char size[48] = "", mod[80] = "";
	if (sym.size)
		snprintf(size, sizeof(size), " (%" PRIu64 " bytes)", sym.size);
	if (sym.module)
		snprintf(mod, sizeof(mod), " [%s]", sym.module);
	const char *origin = kp_symbol_origin(k, &sym);
	out_text(o, "%016" PRIx64 " %c %s%s%s%s%s\n", sym.address, sym.type, sym.name, size, mod,
		 origin ? ", recovered from " : "", origin ? origin : "");
	return 0;
}

// What an address without a symbol is instead (kpeek whatis's first fact),
// for the error line: "; it is in the direct map (PFN 0x1f2)"; "" if nothing.
static void instead(struct kp_kernel *k, uint64_t addr, char *buf, size_t size)
{
	struct kp_whatis *w;
	buf[0] = '\0';
	struct kp_error *err = kp_whatis_create(k, KP_VIRT, addr, &w);
	if (err) {
		kp_error_destroy(err);
		return;
	}
	const struct kp_whatis_fact *f = w->nfacts ? &w->facts[0] : NULL;
	if (!f)
		;
	else if (f->kind == KP_WHATIS_SLAB)
		snprintf(buf, size, "; it is in a %s object", f->slab.cache_name);
	else if (f->kind == KP_WHATIS_TASK || f->kind == KP_WHATIS_STACK)
		snprintf(buf, size, "; it is in the %s of PID %d (%s)",
			 f->kind == KP_WHATIS_TASK ? "task_struct" : "kernel stack", f->task.pid, f->task.comm);
	else if (f->kind == KP_WHATIS_DIRECT)
		snprintf(buf, size, "; it is in the direct map (PFN 0x%" PRIx64 ")", f->pfn);
	else if (f->kind == KP_WHATIS_PAGE)
		snprintf(buf, size, "; it is in the struct page of PFN 0x%" PRIx64, f->pfn);
	else if (f->kind == KP_WHATIS_REGION)
		snprintf(buf, size, "; it is in the %s area", f->region);
	kp_whatis_destroy(w);
}

static int by_address(struct out *o, struct cli *cli, struct kp_kernel *k, const char *arg)
{
	uint64_t addr;
	if (cli_parse_address(cli, arg, &addr))
		return CLI_EXIT_ERROR;
	struct kp_symbol sym;
	char text[512];
	struct kp_error *err = kp_symbol_by_address(k, addr, &sym);
	if (err) {
		// The error names the address; the argument only when it said more.
		char hex[32];
		snprintf(hex, sizeof(hex), "0x%" PRIx64, addr);
		char more[160];
		instead(k, addr, more, sizeof(more));
		int status = strcasecmp(arg, hex) ? cli_fail("sym %s: %s%s", arg, kp_error_message(err), more)
						  : cli_fail("sym: %s%s", kp_error_message(err), more);
		kp_error_destroy(err);
		return status;
	}
	if (!kp_symbolize(k, addr, text, sizeof(text)))
		snprintf(text, sizeof(text), "%s+0x%" PRIx64, sym.name, addr - sym.address);
	if (out_is_json(o)) {
		out_begin_object(o, NULL);
		out_kv_str(o, "query", arg);
		out_kv_hex(o, "query_address", addr);
		out_kv_str(o, "text", text);
		json_symbol(o, k, &sym);
		// A number, as bt and whatis give a frame's offset; not an address.
		out_kv_uint(o, "offset", addr - sym.address);
		out_end_object(o);
		return 0;
	}
	out_text(o, "%016" PRIx64 ": %s\n", addr, text);
	return 0;
}

static int list_all(struct out *o, struct kp_kernel *k)
{
	struct kp_symbol_iter *it;
	struct kp_error *err = kp_symbol_iter_create(k, &it);
	if (err)
		return cli_error(err);
	const struct kp_symbol *sym;
	while (!(err = kp_symbol_iter_next(it, &sym)) && sym) {
		if (out_is_json(o)) {
			out_begin_object(o, NULL);
			json_symbol(o, k, sym);
			out_end_object(o);
		} else if (sym->module) {
			out_text(o, "%016" PRIx64 " %c %s\t[%s]\n", sym->address, sym->type,
				 sym->name, sym->module);
		} else {
			out_text(o, "%016" PRIx64 " %c %s\n", sym->address, sym->type, sym->name);
		}
	}
	kp_symbol_iter_destroy(it);
	return err ? cli_error(err) : 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

enum { MAX_NAMES = 1000 };

// The names that start with prefix, sorted and unique; a cap is said: in
// text as a last line, in JSON by *capped (the list holds names only).
static int list_prefix(struct out *o, struct kp_kernel *k, const char *prefix, bool *capped)
{
	struct kp_symbol_iter *it;
	struct kp_error *err = kp_symbol_iter_create(k, &it);
	if (err)
		return cli_error(err);
	size_t plen = strlen(prefix), n = 0, cap = 0;
	char **names = NULL;
	const struct kp_symbol *sym;
	bool nomem = false;
	while (!nomem && !(err = kp_symbol_iter_next(it, &sym)) && sym) {
		if (strncmp(sym->name, prefix, plen))
			continue;
		if (n == cap) {
			size_t ncap = cap ? 2 * cap : 64;
			char **nn = realloc(names, ncap * sizeof(*names));
			if (!nn) {
				nomem = true;
				break;
			}
			names = nn;
			cap = ncap;
		}
		if (!(names[n] = strdup(sym->name)))
			nomem = true;
		else
			n++;
	}
	kp_symbol_iter_destroy(it);
	int status = err ? cli_error(err) : nomem ? cli_fail("out of memory") : 0;
	if (!status && n) {
		qsort(names, n, sizeof(*names), cmp_str);
		size_t shown = 0;
		for (size_t i = 0; i < n; i++) {
			if (i && !strcmp(names[i], names[i - 1]))
				continue;
			if (shown++ == MAX_NAMES) {
				*capped = true;
				out_text(o, "... (more than %d names)\n", MAX_NAMES);
				break;
			}
			if (out_is_json(o))
				out_kv_str(o, NULL, names[i]);
			else
				out_text(o, "%s\n", names[i]);
		}
	}
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	return status;
}

int cmd_sym(struct cli *cli, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "list", no_argument, NULL, 'l' },
		{ "prefix", required_argument, NULL, 'p' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	bool list = false;
	const char *prefix = NULL;
	int c;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":lp:jh", opts, NULL)) != -1) {
		switch (c) {
		case 'l': list = true; break;
		case 'p': prefix = optarg; break;
		case 'j': cli->json = true; break;
		case 'h': usage(); return 0;
		default: return cli_bad_option("sym", c, argv);
		}
	}
	if ((list || prefix) && optind < argc)
		return cli_usage_error("sym", "%s takes no NAME or ADDR ('%s')",
				       list ? "-l" : "--prefix", argv[optind]);
	if (list && prefix)
		return cli_usage_error("sym", "-l and --prefix do not go together");
	if (!list && !prefix && optind >= argc)
		return cli_usage_error("sym", "expected NAME or ADDR");
	struct kp_kernel *k = cli_kernel(cli);
	if (!k)
		return CLI_EXIT_ERROR;
	struct out *o = out_create(cli->json);
	if (cli->json)
		out_begin_list(o, "symbols");
	int status = 0;
	bool capped = false;
	if (list)
		status = list_all(o, k);
	else if (prefix)
		status = list_prefix(o, k, prefix, &capped);
	for (int i = optind; i < argc; i++) {
		int st = cli_is_symbol_name(argv[i], strlen(argv[i])) ? by_name(o, k, argv[i])
						: by_address(o, cli, k, argv[i]);
		if (st)
			status = st;
	}
	if (cli->json)
		out_end_list(o);
	if (cli->json && capped) {
		out_kv_bool(o, "truncated", true);
		out_kv_uint(o, "shown", MAX_NAMES);
	}
	out_destroy(o);
	return status;
}
