// SPDX-License-Identifier: MIT
// kpeek print EXPR...: evaluates C-like expressions over symbols and BTF
// types and prints them with their type, as drgn does.
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "output.h"

static void usage(void)
{
	printf("Usage: kpeek [-c CORE] print [-x] [--one-line] [--json] EXPR...\n"
	       "Evaluates each C expression over kernel symbols and BTF types and prints\n"
	       "its value with its type, e.g. (char [16])\"swapper/0\". Expressions:\n"
	       "  init_task.comm   init_task.tasks.next   avenrun[0]   jiffies + 1\n"
	       "  &init_task   *(unsigned long *)0xffff...   (struct task_struct *)0xffff...\n"
	       "Pointers are shown with the symbol they point to. A failing expression\n"
	       "prints its error; the others are still printed.\n"
	       "Options come before the expressions; quote expressions for the shell and\n"
	       "put -- before one that starts with '-'.\n"
	       "\n"
	       "Exit status: 0 every expression printed, 2 one or more failed (one line on\n"
	       "stderr each), a usage error or output that could not be written.\n"
	       "\n"
	       "Options:\n"
	       "  -x, --hex        integers in hexadecimal\n"
	       "      --one-line   structures and arrays on one line\n"
	       "  -j, --json       one EXPR: {\"expr\", \"type\", \"value\"}; several:\n"
	       "                   {\"results\": [{\"expr\", \"type\", \"value\"}, ...]}\n"
	       "                   (\"value\" is the value as JSON; an expression that\n"
	       "                   failed has \"error\" instead; a value cut by the\n"
	       "                   output limits keeps its types and has \"truncated\":\n"
	       "                   true, \"not_shown\": N, \"limit\": \"output\"|\"depth\")\n"
	       "  -h, --help       show this help\n"
	       "\n"
	       "Examples:\n"
	       "  kpeek print init_task.comm\n"
	       "  kpeek print -x 'init_task.pid' 'avenrun[0]'\n"
	       "  kpeek print --one-line '*(struct list_head *)&init_task.tasks'\n");
}

// Prints one expression; returns its exit status.
static int print_one(struct kp_kernel *k, struct out *o, const char *expr, unsigned flags)
{
	struct kp_value *v = NULL;
	char *text = NULL, *type = NULL;
	KP_INIT(kp_format_cap, cap);
	struct kp_error *err = kp_eval(k, expr, &v);
	if (!err)
		err = kp_value_format_capped(v, flags, &text, &cap);
	if (!err && out_is_json(o))
		err = kp_value_type_name(v, &type);
	kp_value_destroy(v);
	if (out_is_json(o)) {
		out_kv_str(o, "expr", expr);
		if (err) {
			out_kv_str(o, "error", kp_error_message(err));
		} else {
			out_kv_str(o, "type", type);
			out_kv_json(o, "value", text, NULL);
			// A cap is said beside the value, which keeps its types.
			if (cap.truncated) {
				out_kv_bool(o, "truncated", true);
				out_kv_uint(o, "not_shown", cap.not_shown);
				out_kv_str(o, "limit", cap.limit);
			}
		}
	} else if (!err) {
		out_text(o, "%s\n", text);
	}
	free(text);
	free(type);
	return err ? cli_error_prefix(err, "%s", expr) : 0;
}

int cmd_print(struct cli *cli, int argc, char **argv)
{
	unsigned flags;
	int opt_status = cli_format_options(cli, "print", argc, argv, usage, &flags);
	if (opt_status >= 0)
		return opt_status;
	if (optind >= argc)
		return cli_usage_error("print", "expected EXPR");
	struct kp_kernel *k = cli_kernel(cli);
	if (!k)
		return CLI_EXIT_ERROR;
	if (cli->json)
		flags |= KP_FORMAT_JSON | KP_FORMAT_ONE_LINE;
	struct out *o = out_create(cli->json);
	bool many = argc - optind > 1;
	if (many && cli->json)
		out_begin_list(o, "results");
	int status = 0;
	for (int i = optind; i < argc; i++) {
		if (many && cli->json)
			out_begin_object(o, NULL);
		if (print_one(k, o, argv[i], flags))
			status = CLI_EXIT_ERROR;
		if (many && cli->json)
			out_end_object(o);
	}
	if (many && cli->json)
		out_end_list(o);
	out_destroy(o);
	return status;
}
