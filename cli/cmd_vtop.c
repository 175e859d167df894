// SPDX-License-Identifier: MIT
// kpeek vtop ADDR...: virtual to physical translation, level by level.
#include <unistd.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include "cli.h"
#include "output.h"

static void usage(void)
{
	printf("Usage: kpeek [-c CORE] vtop [--json] ADDR...\n"
	       "Translates each kernel virtual address (0xHEX, DECIMAL or\n"
	       "SYMBOL[+-OFFSET]) through the kernel page tables and shows every level\n"
	       "walked: its kernel name (PGD, P4D with 5-level paging, PUD, PMD, PTE),\n"
	       "the physical address of the table, the index in it, the entry and the\n"
	       "entry's flags as the architecture names them, e.g. on x86-64:\n"
	       "  P present, RW writable, US user, PWT/PCD caching, A accessed, D dirty,\n"
	       "  PS large page (PUD, PMD), PAT (PTE), G global, NX no-execute\n"
	       "then the physical address and page size, or the level where the walk\n"
	       "stopped (\"not mapped at PMD (entry 0x0)\"). Sources with virtual segments\n"
	       "(/proc/kcore) may translate without page tables; the method is shown.\n"
	       "\n"
	       "Exit status: 0 every address mapped, 1 one or more not mapped (said on\n"
	       "stdout; also when another could not be translated), 2 an address not\n"
	       "translated (said on stderr), a usage error or output that could not be\n"
	       "written.\n"
	       "\n"
	       "Options:\n"
	       "  -j, --json   print {\"translations\": [{\"query\", \"address\", \"levels\",\n"
	       "               \"method\", \"steps\": [{\"level\", \"table\", \"index\",\n"
	       "               \"entry\", \"flags\": [\"P\", \"RW\", ...]}], \"present\", \"paddr\",\n"
	       "               and \"page_size\" or \"not_mapped_at\"}]}\n"
	       "  -h, --help   show this help\n"
	       "\n"
	       "Examples:\n"
	       "  kpeek vtop init_task\n"
	       "  kpeek vtop 0xffffffff81000000 jiffies\n");
}

static const struct column cols[] = {
	{ "LEVEL", COL_STR, false },
	{ "TABLE", COL_HEX, false },
	{ "INDEX", COL_UINT, false },
	{ "ENTRY", COL_HEX, false },
	{ "FLAGS", COL_STR, false },
};

// JSON steps: the flags as a list of their names ("P RW NX" in text), a
// level the library could not name as null.
static void json_steps(struct out *o, const struct kp_vtop_step *step, int nsteps)
{
	out_begin_list(o, "steps");
	for (int i = 0; i < nsteps; i++) {
		const struct kp_vtop_step *s = &step[i];
		out_begin_object(o, NULL);
		out_kv_str(o, "level", s->name);
		out_kv_hex(o, "table", s->table);
		out_kv_uint(o, "index", s->index);
		out_kv_hex(o, "entry", s->entry);
		out_begin_list(o, "flags");
		char flags[sizeof(s->flags)], *save = NULL;
		snprintf(flags, sizeof(flags), "%s", s->flags);
		for (char *f = strtok_r(flags, " ", &save); f; f = strtok_r(NULL, " ", &save))
			out_kv_str(o, NULL, f);
		out_end_list(o);
		out_end_object(o);
	}
	out_end_list(o);
}

// Prints one translation; returns CLI_EXIT_FINDING if the address is not
// mapped.
static int show(struct out *o, const char *arg, const struct kp_vtop *t)
{
	bool json = out_is_json(o);
	char size[32] = "";
	if (t->present)
		cli_human_size(t->page_size, size, sizeof(size));
	if (json) {
		out_begin_object(o, NULL);
		out_kv_str(o, "query", arg);
		out_kv_hex(o, "address", t->vaddr);
		out_kv_int(o, "levels", t->levels);
		out_kv_str(o, "method", t->method);
	} else {
		uint64_t n;
		if (cli_parse_number(arg, &n))
			out_text(o, "%016" PRIx64 ":\n", t->vaddr);
		else
			out_text(o, "%016" PRIx64 " (%s):\n", t->vaddr, arg);
	}
	int nsteps = t->nsteps < 0 ? 0 : t->nsteps > KP_VTOP_MAX_LEVELS ? KP_VTOP_MAX_LEVELS : t->nsteps;
	if (json) {
		json_steps(o, t->step, nsteps);
	} else if (nsteps) {
		out_table_begin(o, "steps", cols, 5);
		for (int i = 0; i < nsteps; i++) {
			const struct kp_vtop_step *s = &t->step[i];
			out_cell_str(o, s->name ? s->name : "?");
			out_cell_hex(o, s->table);
			out_cell_uint(o, s->index);
			out_cell_hex(o, s->entry);
			out_cell_str(o, s->flags);
		}
		out_table_end(o);
	}
	const char *where = nsteps ? t->step[nsteps - 1].name : NULL;
	uint64_t last = nsteps ? t->step[nsteps - 1].entry : 0;
	if (json) {
		out_kv_bool(o, "present", t->present);
		if (t->present) {
			out_kv_hex(o, "paddr", t->paddr);
			out_kv_uint(o, "page_size", t->page_size);
		} else {
			out_kv_str(o, "paddr", NULL);
			out_kv_str(o, "not_mapped_at", where);
		}
		out_end_object(o);
	} else if (t->present) {
		out_text(o, "  => physical 0x%" PRIx64 " (%s page%s%s)\n", t->paddr, size,
			 t->method && strcmp(t->method, "page tables") ? ", " : "",
			 t->method && strcmp(t->method, "page tables") ? t->method : "");
	} else if (where) {
		out_text(o, "  => not mapped at %s (entry 0x%" PRIx64 ")\n", where, last);
	} else {
		out_text(o, "  => not mapped\n");
	}
	return t->present ? 0 : CLI_EXIT_FINDING;
}

int cmd_vtop(struct cli *cli, int argc, char **argv)
{
	int opt_status = cli_json_help_options(cli, "vtop", argc, argv, usage);
	if (opt_status >= 0)
		return opt_status;
	if (optind >= argc)
		return cli_usage_error("vtop", "expected ADDR");
	struct kp_kernel *k = cli_kernel(cli);
	if (!k)
		return CLI_EXIT_ERROR;
	struct out *o = out_create(cli->json);
	if (cli->json)
		out_begin_list(o, "translations");
	bool found = false, failed = false;
	for (int i = optind; i < argc; i++) {
		uint64_t addr;
		KP_INIT(kp_vtop, t);
		if (cli_parse_address(cli, argv[i], &addr)) {
			failed = true;
			continue;
		}
		struct kp_error *err = kp_vtop(k, addr, &t);
		if (err) {
			failed = cli_error(err);
			continue;
		}
		if (!cli->json && i > optind)
			out_text(o, "\n");
		found |= show(o, argv[i], &t) != 0;
	}
	if (cli->json)
		out_end_list(o);
	out_destroy(o);
	// A finding outranks an error (kpeek --help): the error is on stderr.
	return found ? CLI_EXIT_FINDING : failed ? CLI_EXIT_ERROR : 0;
}
