// SPDX-License-Identifier: MIT
// kpeek lsmod: the loaded modules, as /proc/modules / lsmod(8) show them.
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "output.h"

static void usage(void)
{
	printf("Usage: kpeek [-c CORE] lsmod [--json]\n"
	       "Lists the modules of the kernel's 'modules' list, newest first, with the\n"
	       "columns of /proc/modules: NAME, SIZE (bytes: the sum of the module's memory\n"
	       "areas), REFCNT (module_refcount(), - without CONFIG_MODULE_UNLOAD),\n"
	       "USED_BY (the modules using it, \"a,b,\", \"[permanent],\" if it cannot be\n"
	       "unloaded, \"-\" if neither, \"?\" if they could not be read; in JSON an\n"
	       "array of names, null if unread, beside a boolean \"permanent\"),\n"
	       "STATE (Live, Loading, Unloading), BASE (start of the core text) and TAINTS\n"
	       "(the module's taint letters, as \"(OE)\"); then\n"
	       "MODULE, the struct module address. Modules still being set up\n"
	       "(MODULE_STATE_UNFORMED) are skipped, as in /proc/modules.\n"
	       "\n"
	       "Exit status: 0 success, 2 an error or an incomplete listing (one line on\n"
	       "stderr says what and where), a usage error or output that could not be\n"
	       "written.\n"
	       "\n"
	       "Options:\n"
	       "  -j, --json   {\"modules\": [{name, size, refcnt, used_by: [names] (null\n"
	       "               if unread), permanent, state, base, taints, module}],\n"
	       "               \"complete\": bool}\n"
	       "  -h, --help   show this help\n"
	       "\n"
	       "Examples:\n"
	       "  kpeek lsmod\n"
	       "  kpeek -c vmcore lsmod --json\n");
}

// One module as JSON: used_by is an array of the users' names (null when
// they could not be read), not /proc/modules' "a,b," / "-" cell; a kernel
// without CONFIG_MODULE_UNLOAD records no users: [] (and refcnt null).
static void json_row(struct out *o, const struct kp_module *m, const char *taints)
{
	out_begin_object(o, NULL);
	out_kv_str(o, "name", m->name);
	out_kv_uint(o, "size", m->size);
	out_kv_int_known(o, "refcnt", m->refcnt >= 0, m->refcnt);
	if (m->used_by) {
		out_begin_list(o, "used_by");
		for (const char *p = m->used_by, *comma; (comma = strchr(p, ',')); p = comma + 1) {
			char name[sizeof(m->name)];
			snprintf(name, sizeof(name), "%.*s", (int)(comma - p), p);
			out_kv_str(o, NULL, name);
		}
		out_end_list(o);
	} else {
		out_kv_str(o, "used_by", NULL);
	}
	out_kv_bool(o, "permanent", m->permanent);
	out_kv_str(o, "state", m->state_name);
	out_kv_hex(o, "base", m->base);
	out_kv_str(o, "taints", taints);
	out_kv_hex(o, "module", m->address);
	out_end_object(o);
}

int cmd_lsmod(struct cli *cli, int argc, char **argv)
{
	int opt_status = cli_json_help_options(cli, "lsmod", argc, argv, usage);
	if (opt_status >= 0)
		return opt_status;
	if (optind < argc)
		return cli_usage_error("lsmod", "unexpected argument '%s'", argv[optind]);
	struct kp_kernel *k = cli_kernel(cli);
	if (!k)
		return CLI_EXIT_ERROR;
	struct kp_module_iter *it;
	struct kp_error *err = kp_module_iter_create(k, &it);
	if (err)
		return cli_error(err);
	static const struct column cols[] = {
		{ "NAME", COL_STR, true }, { "SIZE", COL_UINT, false },
		{ "REFCNT", COL_INT, false }, { "USED_BY", COL_STR, true },
		{ "STATE", COL_STR, true }, { "BASE", COL_HEX, false },
		{ "TAINTS", COL_STR, true }, { "MODULE", COL_HEX, false },
	};
	struct out *o = out_create(cli->json);
	if (out_is_json(o))
		out_begin_list(o, "modules");
	else
		out_table_begin(o, "modules", cols, 8);
	const struct kp_module *m;
	while (!(err = kp_module_iter_next(it, &m)) && m) {
		char taints[32] = "";
		if (m->taints[0])
			snprintf(taints, sizeof(taints), "(%s)", m->taints);
		if (out_is_json(o)) {
			json_row(o, m, taints);
			continue;
		}
		// print_unload_info() of kernel/module/main.c.
		// Users that could not be read: unknown (null, "?"), never "-".
		char *used;
		if (asprintf(&used, "%s%s", m->used_by ? m->used_by : "?",
			     m->permanent ? "[permanent]," : "") < 0) {
			kp_module_iter_destroy(it);
			out_destroy(o);
			return cli_fail("out of memory");
		}
		out_cell_str(o, m->name);
		out_cell_uint(o, m->size);
		// No CONFIG_MODULE_UNLOAD (refcnt -1): /proc/modules prints "-".
		out_cell_int_known(o, m->refcnt >= 0, m->refcnt);
		out_cell_str(o, used[0] ? used : "-");
		free(used);
		out_cell_str(o, m->state_name);
		out_cell_hex(o, m->base);
		out_cell_str(o, taints);
		out_cell_hex(o, m->address);
	}
	struct cli_walk walk = { .st = { .sz = sizeof(walk.st) }, .err = err };
	kp_module_iter_status(it, &walk.st);
	kp_module_iter_destroy(it);
	if (out_is_json(o)) {
		out_end_list(o);
		cli_walk_json(o, &walk);
	} else {
		out_table_end(o);
	}
	out_destroy(o);
	return cli_walk_end("lsmod", "modules", &walk);
}
