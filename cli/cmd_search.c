// SPDX-License-Identifier: MIT
// kpeek search: every address holding a value (under a mask) or a string
// (crash's search): in the kernel's memory through the direct map, in a
// process's user memory through its own page tables, or in physical
// memory. Each hit is followed by what its address is (whatis).
//
// Bounds: kp_search's (each physical page of the source once, a process's
// pages at most 2^28 of them, a string of at most KP_SEARCH_MAX_BYTES);
// -n stops at a number of hits.
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "output.h"
#include "search.h"

static void usage(void)
{
	printf("Usage: kpeek [-c CORE] search [-k | -u PID | -p] [--start A] [--end B]\n"
	       "                         [--mask M] [-w] [-n LIMIT] [--json] VALUE | -s STRING\n"
	       "Prints every address whose 8 bytes (4 with -w; aligned) equal VALUE\n"
	       "under the mask, or where STRING occurs, each followed by what the\n"
	       "address is (as whatis says it; for user memory, its mapping).\n"
	       "  -k  the kernel's memory (the default): every physical page of the\n"
	       "      source once, through the direct map (vmalloc memory is found at\n"
	       "      its direct-map alias, which whatis names)\n"
	       "  -u  the user memory of process PID, through its own page tables\n"
	       "      (pages not in memory are passed over)\n"
	       "  -p  physical memory\n"
	       "Kernel and physical memory are searched on every CPU, a slice each.\n"
	       "A progress line is shown on stderr when it is a terminal.\n"
	       "\n"
	       "Exit status: 0 success (hits or none), 2 an error (one line on stderr says\n"
	       "what and where), a usage error or output that could not be written.\n"
	       "\n"
	       "Options:\n"
	       "  -k, --kernel        search kernel memory (default)\n"
	       "  -u, --pid PID       search the user memory of PID\n"
	       "  -p, --physical      search physical memory\n"
	       "      --start A       only addresses from A\n"
	       "      --end B         only addresses below B\n"
	       "  -m, --mask M        compare VALUE & M with each word & M\n"
	       "  -w, --word          4-byte values\n"
	       "  -s, --string STR    search for the bytes of STR\n"
	       "  -n, --limit LIMIT   stop after LIMIT hits (said in the output)\n"
	       "  -J, --jobs N        search in N processes (default: one per CPU, each\n"
	       "                      with 64 MiB or more; 1: in this one)\n"
	       "  -j, --json          {\"hits\": [{\"address\", \"what\", \"what_error\"}],\n"
	       "                      \"limit\", \"truncated\", \"shown\", \"pages\",\n"
	       "                      \"pages_unreadable\", \"complete\"} (\"what\" null when\n"
	       "                      nothing is known; \"reason\", \"error\" when not complete)\n"
	       "  -h, --help          show this help\n"
	       "\n"
	       "Examples:\n"
	       "  kpeek -c vmcore search 0xffff8c76812a3c40\n"
	       "  kpeek -c vmcore search -u 1234 -s MARKER\n");
}

static int parse_number(const char *opt, const char *arg, uint64_t *ret)
{
	if (!cli_parse_number(arg, ret))
		return cli_usage_error("search", "%s takes a number (0xHEX or decimal), not '%s'", opt, arg);
	return -1;
}

static int operands(int argc, char **argv, struct search *s);

static int options(struct cli *cli, int argc, char **argv, struct search *s)
{
	static const struct option opts[] = {
		{ "kernel", no_argument, NULL, 'k' }, { "pid", required_argument, NULL, 'u' },
		{ "physical", no_argument, NULL, 'p' }, { "start", required_argument, NULL, 'S' },
		{ "end", required_argument, NULL, 'E' }, { "mask", required_argument, NULL, 'm' },
		{ "word", no_argument, NULL, 'w' }, { "string", required_argument, NULL, 's' },
		{ "limit", required_argument, NULL, 'n' }, { "jobs", required_argument, NULL, 'J' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' }, { NULL, 0, NULL, 0 },
	};
	int c, st = -1, modes = 0;
	uint64_t pid, jobs = 0;
	opterr = 0;
	while (st < 0 && (c = getopt_long(argc, argv, ":ku:pm:ws:n:J:jh", opts, NULL)) != -1) {
		switch (c) {
		case 'k':
			s->mode = SEARCH_KERNEL;
			modes++;
			break;
		case 'u':
			if ((st = parse_number("--pid", optarg, &pid)) < 0 && (pid == 0 || pid > INT32_MAX))
				st = cli_usage_error("search", "no process has PID %s", optarg);
			s->pid = (int32_t)pid;
			s->mode = SEARCH_USER;
			modes++;
			break;
		case 'p':
			s->mode = SEARCH_PHYS;
			modes++;
			break;
		case 'S':
			st = parse_number("--start", optarg, &s->start);
			break;
		case 'E':
			st = parse_number("--end", optarg, &s->end);
			break;
		case 'm':
			st = parse_number("--mask", optarg, &s->mask);
			break;
		case 'w':
			s->width = 4;
			break;
		case 's':
			s->str = optarg;
			s->slen = strlen(optarg);
			break;
		case 'n':
			if ((st = parse_number("--limit", optarg, &s->limit)) < 0 && !s->limit)
				st = cli_usage_error("search", "--limit takes a number above 0");
			break;
		case 'J':
			if ((st = parse_number("--jobs", optarg, &jobs)) < 0 && (jobs == 0 || jobs > 16))
				st = cli_usage_error("search", "--jobs takes a number from 1 to 16");
			s->jobs = (unsigned)jobs;
			break;
		case 'j':
			cli->json = true;
			break;
		case 'h':
			usage();
			return 0;
		default:
			return cli_bad_option("search", c, argv);
		}
	}
	if (st >= 0)
		return st;
	if (modes > 1)
		return cli_usage_error("search", "-k, -u and -p are exclusive");
	return operands(argc, argv, s);
}

// What the options leave: VALUE (or none after -s), and how they agree.
static int operands(int argc, char **argv, struct search *s)
{
	int st;
	if (s->str && !s->slen)
		return cli_usage_error("search", "-s takes a string that is not empty");
	if (s->slen > KP_SEARCH_MAX_BYTES)
		return cli_usage_error("search", "-s takes a string of at most %d bytes, not %zu", KP_SEARCH_MAX_BYTES,
				       s->slen);
	if (s->str ? optind != argc : optind + 1 != argc)
		return cli_usage_error("search", s->str ? "-s STRING takes no value" : "one VALUE or -s STRING");
	if (s->end && s->end <= s->start)
		return cli_usage_error("search", "--end must be above --start");
	if (!s->str && (st = parse_number("VALUE", argv[optind], &s->value)) >= 0)
		return st;
	if (s->width == 4) {
		s->mask &= 0xffffffffu;
		if (s->value > 0xffffffffu)
			return cli_usage_error("search", "-w takes a 32-bit value, not 0x%" PRIx64, s->value);
	}
	return -1;
}

// Why a search ended before its end, as cli_walk_json says it of a walk;
// NULL when it did not.
static const char *stop_reason(const struct search *s, struct kp_error *err, bool oom)
{
	if (s->bound)
		return "bound";
	if (oom || s->failed[0])
		return "error";
	if (!err)
		return NULL;
	switch (kp_error_code(err)) {
	case KP_ERR_FAULT: return "unreadable";
	case KP_ERR_FORMAT:
	case KP_ERR_LOOP: return "corrupt";
	default: return "error";
	}
}

// After the hits: the cap (the typed fields of print and sym: "truncated",
// "shown", "limit"; text keeps "stopped_at_limit"), the pages, and whether
// the search went to its end ("complete", with "reason" and "error" when not).
static void summary(struct search *s, struct kp_error *err, bool oom)
{
	bool json = out_is_json(s->o);
	if (json)
		out_kv_int_known(s->o, "limit", s->limit != 0, (int64_t)s->limit);
	else if (s->limit)
		out_kv_uint(s->o, "limit", s->limit);
	out_kv_bool(s->o, json ? "truncated" : "stopped_at_limit", s->capped);
	if (json)
		out_kv_uint(s->o, "shown", s->hits);
	out_kv_uint(s->o, "pages", s->pages);
	out_kv_uint(s->o, "pages_unreadable", s->unreadable);
	if (!json)
		return;
	const char *why = stop_reason(s, err, oom);
	out_kv_bool(s->o, "complete", !why);
	if (!why)
		return;
	char msg[160] = "";
	if (s->bound)
		snprintf(msg, sizeof(msg), "stopped at 0x%" PRIx64 " after %" PRIu64 " pages, the bound of a "
			 "process's search", s->bound_at, s->pages + s->unreadable);
	out_kv_str(s->o, "reason", why);
	out_kv_str(s->o, "error", s->bound ? msg : s->failed[0] ? s->failed : oom ? "out of memory" :
		   kp_error_message(err));
}

int cmd_search(struct cli *cli, int argc, char **argv)
{
	struct search s = { .mode = SEARCH_KERNEL, .width = 8, .mask = ~(uint64_t)0 };
	int status = options(cli, argc, argv, &s);
	if (status >= 0)
		return status;
	if (!(s.k = cli_kernel(cli)))
		return CLI_EXIT_ERROR;
	s.progress = isatty(STDERR_FILENO);
	s.o = out_create(cli->json);
	out_begin_list(s.o, "hits");
	bool oom = false;
	struct kp_error *err = search_run(&s, &oom);
	out_end_list(s.o);
	summary(&s, err, oom);
	out_destroy(s.o);
	if (err)
		return cli_error_prefix(err, "search");
	if (s.failed[0])
		return cli_fail("search: %s", s.failed);
	if (oom)
		return cli_fail("search: out of memory");
	if (s.bound)
		return cli_fail("search: incomplete: stopped at 0x%" PRIx64 " after %" PRIu64 " pages, the bound of "
				"a process's search", s.bound_at, s.pages + s.unreadable);
	return 0;
}
