// SPDX-License-Identifier: MIT
// kpeek check syscalls: syscall tables and dispatchers must point at syscall
// handlers in core kernel text.
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include "cli.h"
#include "output.h"

static void usage(void)
{
	printf("Usage: kpeek [-c CORE] check [-v] [--json] syscalls\n"
	       "Checks sys_call_table, ia32_sys_call_table and x32_sys_call_table (each\n"
	       "entry must be the start of a __x64_sys_* / __ia32_sys_* / *compat_sys_* /\n"
	       "sys_ni_syscall handler inside _stext.._etext) and, where they exist, the\n"
	       "x64_sys_call / ia32_sys_call / x32_sys_call dispatchers (6.9+, 6.1.x stable):\n"
	       "their direct call/jmp targets must be in kernel text. Dispatcher call sites\n"
	       "are found by scanning for E8/E9 opcodes whose rel32 target is exactly the\n"
	       "start of a symbol (no instruction decoder): a hook into code without any\n"
	       "symbol is not seen there. Prints each anomaly, then one summary line per\n"
	       "table. Exit status 1 if anything is anomalous.\n"
	       "\n"
	       "Options:\n"
	       "  -v, --verbose   print every entry, not only the anomalies\n"
	       "  -j, --json      {\"tables\": [{name, entries, anomalies}], \"entries\":\n"
	       "                  [{table, nr, target, symbol, module, ok, why}]}\n"
	       "                  (entries: the anomalies, or all with -v)\n"
	       "  -h, --help      show this help\n"
	       "\n"
	       "Examples:\n"
	       "  kpeek check syscalls\n"
	       "  kpeek -c vmcore check -v syscalls\n");
}

enum { MAX_TABLES = 8 };

struct check {
	struct out *o;
	bool verbose;
	struct kp_kernel *k;
	struct { const char *name; unsigned entries, bad; } t[MAX_TABLES];
	int nt;
	unsigned bad;
	// JSON entries are printed after the table summary: collect text lines
	// now and print them directly; JSON goes into the "entries" list.
};

static bool is_dispatcher(const char *table)
{
	return !strstr(table, "_table");
}

static void on_entry(struct check *c, const struct kp_syscall_entry *e)
{
	int i;
	for (i = 0; i < c->nt && strcmp(c->t[i].name, e->table); i++)
		;
	if (i == c->nt && c->nt < MAX_TABLES)
		c->t[c->nt++].name = e->table;
	if (i < MAX_TABLES) {
		c->t[i].entries++;
		c->t[i].bad += !e->ok;
	}
	c->bad += !e->ok;
	if (e->ok && !c->verbose)
		return;
	char where[96], sym[256] = "";
	if (is_dispatcher(e->table))
		snprintf(where, sizeof(where), "%s+0x%x", e->table, e->nr);
	else
		snprintf(where, sizeof(where), "%s[%u]", e->table, e->nr);
	if (e->sym.name) {
		uint64_t off = e->target - e->sym.address;
		if (e->sym.module)
			snprintf(sym, sizeof(sym), " %s+0x%" PRIx64 " [%s]", e->sym.name, off, e->sym.module);
		else
			snprintf(sym, sizeof(sym), " %s+0x%" PRIx64, e->sym.name, off);
	}
	if (out_is_json(c->o)) {
		out_begin_object(c->o, NULL);
		out_kv_str(c->o, "table", e->table);
		out_kv_uint(c->o, "nr", e->nr);
		out_kv_hex(c->o, "target", e->target);
		out_kv_str(c->o, "symbol", e->sym.name ? sym + 1 : NULL);
		out_kv_str(c->o, "module", e->sym.module);
		out_kv_bool(c->o, "ok", e->ok);
		out_kv_str(c->o, "why", e->why);
		out_end_object(c->o);
	} else {
		out_text(c->o, "%s: 0x%016" PRIx64 "%s%s%s\n", where, e->target, sym,
			 e->ok ? "" : ": ", e->ok ? "" : e->why);
	}
}

int cmd_check(struct cli *cli, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "verbose", no_argument, NULL, 'v' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct check c = { 0 };
	int opt;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, ":vjh", opts, NULL)) != -1) {
		switch (opt) {
		case 'v': c.verbose = true; break;
		case 'j': cli->json = true; break;
		case 'h': usage(); return 0;
		default: return cli_bad_option("check", opt, argv);
		}
	}
	if (optind >= argc)
		return cli_usage_error("check", "expected what to check: syscalls");
	if (strcmp(argv[optind], "syscalls"))
		return cli_usage_error("check", "unknown check '%s' (known: syscalls)", argv[optind]);
	if (optind + 1 < argc)
		return cli_usage_error("check", "unexpected argument '%s'", argv[optind + 1]);
	struct kp_kernel *k = cli_kernel(cli);
	if (!k)
		return 1;
	c.k = k;
	struct kp_syscall_iter *it;
	struct kp_error *err = kp_syscall_iter_create(k, &it);
	if (err)
		return cli_error(err);
	c.o = out_create(cli->json);
	if (out_is_json(c.o))
		out_begin_list(c.o, "entries");
	const struct kp_syscall_entry *e;
	while (!(err = kp_syscall_iter_next(it, &e)) && e)
		on_entry(&c, e);
	kp_syscall_iter_destroy(it);
	if (out_is_json(c.o)) {
		out_end_list(c.o);
		out_begin_list(c.o, "tables");
		for (int i = 0; i < c.nt; i++) {
			out_begin_object(c.o, NULL);
			out_kv_str(c.o, "name", c.t[i].name);
			out_kv_uint(c.o, "entries", c.t[i].entries);
			out_kv_uint(c.o, "anomalies", c.t[i].bad);
			out_end_object(c.o);
		}
		out_end_list(c.o);
		out_kv_bool(c.o, "ok", !err && !c.bad);
	} else {
		for (int i = 0; i < c.nt; i++) {
			bool disp = is_dispatcher(c.t[i].name);
			const char *what = disp ? "call targets checked" : "entries";
			if (!c.t[i].bad)
				out_text(c.o, "%s: %u %s, all point to %s in kernel text\n", c.t[i].name,
					 c.t[i].entries, what, disp ? "kernel functions" : "syscall handlers");
			else
				out_text(c.o, "%s: %u %s, %u anomalous\n", c.t[i].name, c.t[i].entries,
					 what, c.t[i].bad);
		}
	}
	out_destroy(c.o);
	if (err)
		return cli_error(err);
	return c.bad ? 1 : 0;
}
