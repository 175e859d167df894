// SPDX-License-Identifier: MIT
// kpeek dmesg: the kernel log from the printk ring buffer.
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "output.h"

static const char *const level_names[8] = {
	"emerg", "alert", "crit", "err", "warn", "notice", "info", "debug",
};

static void usage(void)
{
	printf("Usage: kpeek [-c CORE] dmesg [-t] [-l LEVEL[,LEVEL...]] [-r] [--json]\n"
	       "Prints the records of the printk ring buffer (Linux 5.10+), oldest first,\n"
	       "as the kernel's syslog interface prints them (dmesg(1), busybox dmesg):\n"
	       "  [    1.234567] text\n"
	       "A record holding several lines prints each with the record's timestamp.\n"
	       "Continuation lines (pr_cont) are already joined into their record by the\n"
	       "kernel; a continuation it could not join is its own line, as in dmesg.\n"
	       "The newest record is shown even when only committed (not yet finalized).\n"
	       "\n"
	       "Exit status: 0 success, 2 an error (one line on stderr says what and where),\n"
	       "a usage error or output that could not be written.\n"
	       "\n"
	       "Options:\n"
	       "  -t, --notime          no timestamps\n"
	       "  -l, --level LIST      only these levels: names (emerg alert crit err warn\n"
	       "                        notice info debug) or numbers 0-7, comma-separated\n"
	       "  -r, --raw             prefix each line with <PRI> (facility * 8 + level)\n"
	       "  -j, --json            {\"records\": [{seq, time, ts_nsec, level, facility,\n"
	       "                        caller_id, cont, text}]}\n"
	       "  -h, --help            show this help\n"
	       "\n"
	       "Examples:\n"
	       "  kpeek -c vmcore dmesg\n"
	       "  kpeek dmesg -l err,warn\n"
	       "  kpeek -c vmcore dmesg -t -r\n");
}

static bool parse_levels(const char *arg, unsigned *mask)
{
	char *copy = strdup(arg), *save = NULL;
	if (!copy)
		return false;
	*mask = 0;
	bool ok = true;
	for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		int lvl = -1;
		if (tok[0] >= '0' && tok[0] <= '7' && !tok[1])
			lvl = tok[0] - '0';
		for (int i = 0; i < 8 && lvl < 0; i++)
			if (!strcmp(tok, level_names[i]))
				lvl = i;
		if (lvl < 0 && !strcmp(tok, "warning"))
			lvl = 4;
		if (lvl < 0 && !strcmp(tok, "error"))
			lvl = 3;
		if (lvl < 0) {
			ok = false;
			break;
		}
		*mask |= 1u << lvl;
	}
	free(copy);
	return ok && *mask;
}

struct dmesg {
	struct out *o;
	bool notime, raw;
	unsigned levels;
};

static void print_record(struct dmesg *d, const struct kp_printk_record *rec)
{
	if (!(d->levels >> (rec->level & 7) & 1))
		return;
	char time[32];
	cli_seconds(rec->ts_nsec, time, sizeof(time));
	if (out_is_json(d->o)) {
		char *text = strndup(rec->text, rec->len);
		if (!text) {
			cli_fail("out of memory");
			exit(1);
		}
		out_begin_object(d->o, NULL);
		out_kv_uint(d->o, "seq", rec->seq);
		out_kv_json(d->o, "time", time, time);
		out_kv_uint(d->o, "ts_nsec", rec->ts_nsec);
		out_kv_int(d->o, "level", rec->level);
		out_kv_int(d->o, "facility", rec->facility);
		out_kv_uint(d->o, "caller_id", rec->caller_id);
		out_kv_bool(d->o, "cont", rec->cont);
		out_kv_str(d->o, "text", text);
		out_end_object(d->o);
		free(text);
		return;
	}
	char prefix[64];
	int len = 0;
	if (d->raw)
		len = snprintf(prefix, sizeof(prefix), "<%d>", rec->facility * 8 + rec->level);
	if (!d->notime)
		snprintf(prefix + len, sizeof(prefix) - (size_t)len, "[%12s] ", time);
	// One output line per line of the record, each with the prefix.
	const char *p = rec->text, *end = rec->text + rec->len;
	do {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *stop = nl ? nl : end;
		out_text(d->o, "%s%.*s\n", prefix, (int)(stop - p), p);
		p = nl ? nl + 1 : end;
	} while (p < end);
}

int cmd_dmesg(struct cli *cli, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "notime", no_argument, NULL, 't' },
		{ "level", required_argument, NULL, 'l' },
		{ "raw", no_argument, NULL, 'r' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct dmesg d = { .levels = 0xff };
	int c;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":tl:rjh", opts, NULL)) != -1) {
		switch (c) {
		case 't': d.notime = true; break;
		case 'l':
			if (!parse_levels(optarg, &d.levels))
				return cli_usage_error("dmesg", "invalid level list '%s' (names emerg..debug or 0-7)", optarg);
			break;
		case 'r': d.raw = true; break;
		case 'j': cli->json = true; break;
		case 'h': usage(); return 0;
		default: return cli_bad_option("dmesg", c, argv);
		}
	}
	if (optind < argc)
		return cli_usage_error("dmesg", "unexpected argument '%s'", argv[optind]);
	struct kp_kernel *k = cli_kernel(cli);
	if (!k)
		return CLI_EXIT_ERROR;
	struct kp_printk_iter *it;
	struct kp_error *err = kp_printk_iter_create(k, &it);
	if (err)
		return cli_error(err);
	d.o = out_create(cli->json);
	if (out_is_json(d.o))
		out_begin_list(d.o, "records");
	const struct kp_printk_record *rec;
	while (!(err = kp_printk_iter_next(it, &rec)) && rec)
		print_record(&d, rec);
	struct cli_walk walk = { .st = { .sz = sizeof(walk.st) }, .err = err };
	kp_printk_iter_status(it, &walk.st);
	kp_printk_iter_destroy(it);
	if (out_is_json(d.o)) {
		out_end_list(d.o);
		cli_walk_json(d.o, &walk);
	}
	out_destroy(d.o);
	return cli_walk_end("dmesg", "records", &walk);
}
