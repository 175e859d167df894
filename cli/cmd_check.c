// SPDX-License-Identifier: MIT
// kpeek check [NAME...]: the integrity checks of the library (kp_check_*),
// each printed as its findings, its summary and a verdict.
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include "cli.h"
#include "output.h"

static void usage(void)
{
	printf("Usage: kpeek [-c CORE] check [-v] [--json] [NAME...]\n"
	       "Looks for what rootkits change in kernel memory by comparing the kernel's\n"
	       "own views of itself, live or in a dump, with BTF and kallsyms only.\n"
	       "Without NAME every check runs. Checks:\n");
	for (const char *const *n = kp_check_names(); *n; n++)
		printf("  %-12s %s\n", *n, kp_check_description(*n));
	printf("\n"
	       "Each finding is one line: CHECK: OBJECT: ADDRESS [SYMBOL [MODULE]]: WHY,\n"
	       "where ADDRESS is what the object points at (a handler, a task, module\n"
	       "memory). Then the check's summary lines and its verdict: \"nothing\n"
	       "suspicious\", \"N suspicious\", \"cannot check: WHY\" (it could not decide:\n"
	       "missing symbols or types, unreadable memory) or \"not applicable\".\n"
	       "On a live kernel a check that finds something runs again, up to three\n"
	       "times over two seconds: what a later run does not see, and objects in\n"
	       "a transition (a task exiting, a module loading or unloading), are\n"
	       "listed as \"possibly a live race\" and not counted as suspicious.\n"
	       "\n"
	       "Exit status: 0 nothing suspicious, 1 something found (also when another\n"
	       "check could not decide: the output says which), 2 nothing found but a check\n"
	       "could not decide, or an error: a usage error, a source that cannot be\n"
	       "opened, output that could not be written.\n"
	       "\n"
	       "Options:\n"
	       "  -v, --verbose   also print every object that is fine\n"
	       "  -j, --json      {\"checks\": [{name, status, reason, summary: [...],\n"
	       "                  findings: [{object, address, symbol, module,\n"
	       "                  hidden_module, why, kind: \"suspicious\" or\n"
	       "                  \"live-race\"}], and past the cap: truncated: true,\n"
	       "                  not_shown: N, limit: N}], \"found\": N, \"races\": N,\n"
	       "                  \"disagreements\": [{fact, used_source, used,\n"
	       "                  other_source, other}]}\n"
	       "  -h, --help      show this help\n"
	       "\n"
	       "Examples:\n"
	       "  kpeek check\n"
	       "  kpeek -c vmcore check modules tasks\n"
	       "  kpeek check -v syscalls\n");
}

static const char *const status_names[] = { "clean", "found", "cannot", "not-applicable" };

static void symbol_text(const struct kp_finding *f, char *buf, size_t size)
{
	buf[0] = '\0';
	if (!f->sym.name)
		return;
	uint64_t off = f->address - f->sym.address;
	if (f->module)
		snprintf(buf, size, "%s+0x%" PRIx64 " [%s]", f->sym.name, off, f->module);
	else
		snprintf(buf, size, "%s+0x%" PRIx64, f->sym.name, off);
}

static bool suspicious(const struct kp_finding *f)
{
	return f->why && f->kind == KP_FINDING_SUSPICIOUS;
}

static bool race(const struct kp_finding *f)
{
	return f->why && f->kind == KP_FINDING_LIVE_RACE;
}

static void print_check(struct out *o, const struct kp_check *c)
{
	const char *name = kp_check_name(c);
	enum kp_check_status st = kp_check_status(c);
	size_t n = kp_check_count(c), found = 0;
	for (size_t i = 0; i < n; i++)
		found += suspicious(kp_check_finding(c, i));
	if (out_is_json(o)) {
		out_begin_object(o, NULL);
		out_kv_str(o, "name", name);
		out_kv_str(o, "status", status_names[st]);
		out_kv_str(o, "reason", kp_check_reason(c));
		out_begin_list(o, "summary");
		for (size_t i = 0; i < kp_check_summary_count(c); i++)
			out_kv_str(o, NULL, kp_check_summary(c, i));
		out_end_list(o);
		out_begin_list(o, "findings");
		for (size_t i = 0; i < n; i++) {
			const struct kp_finding *f = kp_check_finding(c, i);
			char sym[320];
			symbol_text(f, sym, sizeof(sym));
			out_begin_object(o, NULL);
			out_kv_str(o, "object", f->object);
			out_kv_hex(o, "address", f->address);
			out_kv_str(o, "symbol", sym[0] ? sym : NULL);
			out_kv_str(o, "module", f->module);
			out_kv_bool(o, "hidden_module", f->hidden_module);
			out_kv_str(o, "why", f->why);
			out_kv_str(o, "kind", !f->why ? NULL : race(f) ? "live-race" : "suspicious");
			out_end_object(o);
		}
		out_end_list(o);
		// Findings past the cap: the typed fields of every capped listing.
		if (kp_check_dropped(c)) {
			out_kv_bool(o, "truncated", true);
			out_kv_uint(o, "not_shown", kp_check_dropped(c));
			out_kv_uint(o, "limit", KP_CHECK_MAX_FINDINGS);
		}
		out_end_object(o);
		return;
	}
	for (size_t i = 0; i < n; i++) {
		const struct kp_finding *f = kp_check_finding(c, i);
		char sym[320];
		symbol_text(f, sym, sizeof(sym));
		out_text(o, "%s: %s: 0x%016" PRIx64 "%s%s%s%s%s\n", name, f->object, f->address,
			 sym[0] ? " " : "", sym, f->why ? ": " : "", race(f) ? "possibly a live race: " : "",
			 f->why ? f->why : "");
	}
	if (kp_check_dropped(c))
		out_text(o, "%s: %zu more not shown (at most %d are kept)\n", name,
			 kp_check_dropped(c), KP_CHECK_MAX_FINDINGS);
	for (size_t i = 0; i < kp_check_summary_count(c); i++)
		out_text(o, "%s: %s\n", name, kp_check_summary(c, i));
	found += kp_check_dropped(c);
	if (st == KP_CHECK_FOUND)
		out_text(o, "%s: %zu suspicious\n", name, found);
	if (st == KP_CHECK_CANNOT || (st == KP_CHECK_FOUND && kp_check_reason(c)))
		out_text(o, "%s: cannot check: %s\n", name, kp_check_reason(c));
	else if (st == KP_CHECK_NOT_APPLICABLE)
		out_text(o, "%s: not applicable: %s\n", name, kp_check_reason(c));
	else if (st == KP_CHECK_CLEAN)
		out_text(o, "%s: nothing suspicious\n", name);
}

int cmd_check(struct cli *cli, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "verbose", no_argument, NULL, 'v' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	bool verbose = false;
	int opt;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, ":vjh", opts, NULL)) != -1) {
		switch (opt) {
		case 'v': verbose = true; break;
		case 'j': cli->json = true; break;
		case 'h': usage(); return 0;
		default: return cli_bad_option("check", opt, argv);
		}
	}
	const char *const *all = kp_check_names();
	for (int i = optind; i < argc; i++) {
		if (kp_check_description(argv[i]))
			continue;
		char known[256] = "";
		size_t len = 0;
		for (const char *const *n = all; *n && len < sizeof(known); n++)
			len += (size_t)snprintf(known + len, sizeof(known) - len, "%s%s",
						n == all ? "" : ", ", *n);
		return cli_usage_error("check", "unknown check '%s' (known: %s)", argv[i], known);
	}
	struct kp_kernel *k = cli_kernel(cli);
	if (!k)
		return 2;	// cli_kernel() said why
	struct out *o = out_create(cli->json);
	if (out_is_json(o))
		out_begin_list(o, "checks");
	bool found = false, cannot = false;
	struct kp_error *err = NULL;
	size_t nfound = 0, nraces = 0;
	for (size_t i = 0;; i++) {
		const char *name = optind < argc ? (optind + (int)i < argc ? argv[optind + i] : NULL) : all[i];
		if (!name)
			break;
		struct kp_check *c;
		if ((err = kp_check_run(k, name, verbose ? KP_CHECK_ALL : 0, &c)))
			break;
		print_check(o, c);
		enum kp_check_status st = kp_check_status(c);
		found |= st == KP_CHECK_FOUND;
		cannot |= st == KP_CHECK_CANNOT || (st == KP_CHECK_FOUND && kp_check_reason(c));
		for (size_t j = 0; j < kp_check_count(c); j++) {
			nfound += suspicious(kp_check_finding(c, j));
			nraces += race(kp_check_finding(c, j));
		}
		nfound += kp_check_dropped(c);
		kp_check_destroy(c);
	}
	if (out_is_json(o)) {
		out_end_list(o);
		out_kv_uint(o, "found", nfound);
		out_kv_uint(o, "races", nraces);
	}
	// A warning, not a finding: the dump states a fact twice, differently.
	cli_disagreements(o, k, NULL);
	out_destroy(o);
	if (err)
		return cli_error(err), 2;
	// A finding outranks a check that could not decide (kpeek --help).
	return found ? CLI_EXIT_FINDING : cannot ? CLI_EXIT_ERROR : 0;
}
