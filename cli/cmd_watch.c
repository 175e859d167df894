// SPDX-License-Identifier: MIT
// kpeek watch EXPR: samples a value and prints it when its bytes change.
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "cli.h"
#include "output.h"

#define MAX_WATCH_SIZE (16u << 20)

static void usage(void)
{
	printf("Usage: kpeek [-c CORE] watch [-i INTERVAL] [-n COUNT] [--all] [--json] EXPR\n"
	       "Evaluates EXPR once (see kpeek print), then re-reads its bytes every\n"
	       "INTERVAL with one read and no allocation, and prints\n"
	       "  HH:MM:SS.mmm  VALUE\n"
	       "for the first sample and whenever the bytes change. Integers and pointers\n"
	       "are decoded from the sampled bytes; other types are formatted from a fresh\n"
	       "evaluation when they change. Stops after COUNT samples or on Ctrl-C, then\n"
	       "prints a summary: samples, changes, duration and rate. On a dump (nothing\n"
	       "changes) the default COUNT is 1.\n"
	       "\n"
	       "Exit status: 0 success, 2 an error (one line on stderr says what and where),\n"
	       "a usage error or output that could not be written.\n"
	       "\n"
	       "Options:\n"
	       "  -i, --interval T   time between samples: 10ms, 1s, 100us, 500ns, 0.5 (seconds);\n"
	       "                     0 = as fast as possible (default 1s)\n"
	       "  -n, --count N      stop after N samples (default: until Ctrl-C)\n"
	       "  -a, --all          print every sample, not only changes\n"
	       "  -j, --json         {\"samples\": [{time, value}], \"samples_taken\", \"changes\",\n"
	       "                     \"duration_s\", \"rate\", \"interrupted\", \"error\"}\n"
	       "  -h, --help         show this help\n"
	       "\n"
	       "Examples:\n"
	       "  kpeek watch jiffies\n"
	       "  kpeek watch -i 0 -n 1000000 'avenrun[0]'\n");
}

static volatile sig_atomic_t stop;

static void on_sigint(int sig)
{
	(void)sig;
	stop = 1;
}

// "10ms", "1s", "100us", "5ns", "0.5" (seconds) -> nanoseconds.
static bool parse_interval(const char *s, uint64_t *ret)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (errno || end == s || v < 0 || !isfinite(v))
		return false;
	double mult;
	if (!*end || !strcmp(end, "s"))
		mult = 1e9;
	else if (!strcmp(end, "ms"))
		mult = 1e6;
	else if (!strcmp(end, "us"))
		mult = 1e3;
	else if (!strcmp(end, "ns"))
		mult = 1;
	else if (!strcmp(end, "m") || !strcmp(end, "min"))
		mult = 60e9;
	else
		return false;
	double ns = v * mult;
	if (ns > 86400e9 * 365)
		return false;
	*ret = (uint64_t)ns;
	return true;
}

enum kind { K_OTHER, K_UNSIGNED, K_SIGNED, K_POINTER };

// How to decode the sampled bytes directly, from the type's C name.
static enum kind classify(const char *type, uint64_t size)
{
	if (size != 1 && size != 2 && size != 4 && size != 8)
		return K_OTHER;
	size_t n = strlen(type);
	if (n && type[n - 1] == '*')
		return K_POINTER;
	static const char *const uns[] = {
		"unsigned", "u8", "u16", "u32", "u64", "__u8", "__u16", "__u32", "__u64",
		"size_t", "uintptr_t", "bool", "_Bool", "uint8_t", "uint16_t", "uint32_t",
		"uint64_t", "gfp_t", "dev_t", "ino_t", "umode_t",
	};
	static const char *const sig[] = {
		"int", "long", "long int", "long long", "long long int", "short", "short int",
		"char", "signed char", "s8", "s16", "s32", "s64", "__s8", "__s16", "__s32",
		"__s64", "ssize_t", "pid_t", "time64_t", "ktime_t", "loff_t", "int8_t",
		"int16_t", "int32_t", "int64_t", "clock_t", "time_t",
	};
	if (strpbrk(type, "[("))
		return K_OTHER;	// arrays, function pointers
	if (strstr(type, "unsigned"))
		return K_UNSIGNED;	// BTF spells them "long unsigned int"
	for (size_t i = 0; i < sizeof(uns) / sizeof(uns[0]); i++)
		if (!strncmp(type, uns[i], strlen(uns[i])) &&
		    (!type[strlen(uns[i])] || type[strlen(uns[i])] == ' '))
			return K_UNSIGNED;
	for (size_t i = 0; i < sizeof(sig) / sizeof(sig[0]); i++)
		if (!strcmp(type, sig[i]))
			return K_SIGNED;
	return K_OTHER;
}

static uint64_t decode(const uint8_t *b, uint64_t size, bool sign)
{
	uint64_t v = 0;
	for (uint64_t i = size; i-- > 0;)	// kernel memory is little-endian
		v = v << 8 | b[i];
	if (sign && size < 8 && (v >> (size * 8 - 1) & 1))
		v |= ~0ULL << (size * 8);
	return v;
}

static void now_text(char buf[32])
{
	struct timespec ts;
	struct tm tm;
	clock_gettime(CLOCK_REALTIME, &ts);
	localtime_r(&ts.tv_sec, &tm);
	snprintf(buf, 32, "%02d:%02d:%02d.%03ld", tm.tm_hour, tm.tm_min, tm.tm_sec,
		 ts.tv_nsec / 1000000);
}

struct watch {
	struct kp_kernel *k;
	const char *expr;
	struct out *o;
	enum kind kind;
	uint64_t size;
	struct kp_value *v;	// the expression's value, when it is an lvalue
};

// One sample of the value into cur (size bytes). An lvalue is read again
// (one read, no allocation); a computed value ("jiffies >> 1") has no
// memory of its own, so the expression is evaluated again.
static struct kp_error *sample(struct watch *w, uint8_t *cur, size_t *len_ret)
{
	if (w->v)
		return kp_value_reread(w->v, cur, w->size, len_ret);
	struct kp_value *v;
	struct kp_error *err = kp_eval(w->k, w->expr, &v);
	if (err)
		return err;
	uint64_t x = 0;
	if (w->kind != K_OTHER && !(err = kp_value_to_u64(v, &x))) {
		for (uint64_t i = 0; i < w->size; i++)
			cur[i] = (uint8_t)(x >> (8 * i));
		*len_ret = w->size;
	} else if (!err) {
		// Not a number: compare the formatted text instead.
		char *text;
		if (!(err = kp_value_format(v, KP_FORMAT_ONE_LINE, &text))) {
			size_t n = strlen(text);
			memset(cur, 0, w->size);
			memcpy(cur, text, n < w->size ? n : w->size);
			*len_ret = w->size;
			free(text);
		}
	}
	kp_value_destroy(v);
	return err;
}

static struct kp_error *print_sample(struct watch *w, const uint8_t *bytes)
{
	char when[32], num[40], *text = NULL;
	now_text(when);
	struct kp_error *err = NULL;
	const char *json = NULL, *plain = NULL;
	if (w->kind != K_OTHER) {
		uint64_t v = decode(bytes, w->size, w->kind == K_SIGNED);
		if (w->kind == K_POINTER)
			snprintf(num, sizeof(num), out_is_json(w->o) ? "\"0x%" PRIx64 "\"" : "0x%" PRIx64, v);
		else if (w->kind == K_SIGNED)
			snprintf(num, sizeof(num), "%" PRId64, (int64_t)v);
		else
			snprintf(num, sizeof(num), "%" PRIu64, v);
		json = plain = num;
	} else {
		struct kp_value *v;
		if ((err = kp_eval(w->k, w->expr, &v)))
			return err;
		unsigned flags = KP_FORMAT_ONE_LINE | (out_is_json(w->o) ? KP_FORMAT_JSON : 0);
		err = kp_value_format(v, flags, &text);
		kp_value_destroy(v);
		if (err)
			return err;
		json = plain = text;
	}
	if (out_is_json(w->o)) {
		out_begin_object(w->o, NULL);
		out_kv_str(w->o, "time", when);
		out_kv_json(w->o, "value", json, plain);
		out_end_object(w->o);
	} else {
		out_text(w->o, "%s  %s\n", when, plain);
	}
	out_flush(w->o);
	free(text);
	return NULL;
}

struct watch_opts {
	uint64_t interval;	// ns
	uint64_t count;		// samples, 0 = until Ctrl-C
	bool all, count_given;
};

// Options and EXPR (argv[optind]): -1 to go on, else the exit status.
static int parse_options(struct cli *cli, int argc, char **argv, struct watch_opts *wo)
{
	static const struct option opts[] = {
		{ "interval", required_argument, NULL, 'i' },
		{ "count", required_argument, NULL, 'n' },
		{ "all", no_argument, NULL, 'a' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":i:n:ajh", opts, NULL)) != -1) {
		switch (c) {
		case 'i':
			if (!parse_interval(optarg, &wo->interval))
				return cli_usage_error("watch", "invalid interval '%s' (e.g. 10ms, 1s, 100us, 0)", optarg);
			break;
		case 'n':
			if (!cli_parse_number(optarg, &wo->count) || !wo->count)
				return cli_usage_error("watch", "invalid count '%s' (a positive number)", optarg);
			wo->count_given = true;
			break;
		case 'a': wo->all = true; break;
		case 'j': cli->json = true; break;
		case 'h': usage(); return 0;
		default: return cli_bad_option("watch", c, argv);
		}
	}
	if (optind >= argc)
		return cli_usage_error("watch", "expected EXPR");
	if (optind + 1 < argc)
		return cli_usage_error("watch", "unexpected argument '%s' (quote an expression with spaces)",
				       argv[optind + 1]);
	return -1;
}

// Evaluates w->expr once: its size and how to decode it into w; *v_ret is
// the value (the caller's). 0, or the exit status after saying why not.
static int prepare(struct watch *w, struct kp_value **v_ret)
{
	struct kp_value *v;
	struct kp_error *err = kp_eval(w->k, w->expr, &v);
	if (err)
		return cli_error(err);
	w->size = kp_value_size(v);
	if (w->size == 0 || w->size > MAX_WATCH_SIZE) {
		kp_value_destroy(v);
		return cli_fail("watch: '%s' is %" PRIu64 " bytes (1 to %u supported)", w->expr,
				w->size, MAX_WATCH_SIZE);
	}
	char *tname = NULL;
	err = kp_value_type_name(v, &tname);
	if (err) {
		kp_error_destroy(err);
		w->kind = K_OTHER;
	} else {
		w->kind = classify(tname, w->size);
	}
	free(tname);
	*v_ret = v;
	return 0;
}

// Sleeps until the next sample is due (*next, advanced by interval).
static void wait_next(struct timespec *next, uint64_t interval)
{
	next->tv_nsec += (long)(interval % 1000000000ULL);
	next->tv_sec += (time_t)(interval / 1000000000ULL) + next->tv_nsec / 1000000000L;
	next->tv_nsec %= 1000000000L;
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	// Fell behind (slow reads, suspended): restart the schedule.
	if (now.tv_sec > next->tv_sec + 1)
		*next = now;
	while (!stop && clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, next, NULL) == EINTR)
		;
}

// Samples until count, Ctrl-C or an error (returned), printing the first
// sample and the changes (every sample with all).
static struct kp_error *run(struct watch *w, const struct watch_opts *wo, uint8_t *cur,
			    uint8_t *prev, uint64_t *samples, uint64_t *changes)
{
	struct kp_error *err = NULL;
	struct timespec next;
	clock_gettime(CLOCK_MONOTONIC, &next);
	while (!stop && (!wo->count || *samples < wo->count)) {
		size_t len;
		if ((err = sample(w, cur, &len)))
			break;
		++*samples;
		bool changed = *samples == 1 || memcmp(cur, prev, len);
		if (changed && *samples > 1)
			++*changes;
		if (changed || wo->all) {
			if ((err = print_sample(w, cur)))
				break;
			memcpy(prev, cur, len);
		}
		if (wo->count && *samples >= wo->count)
			break;
		if (wo->interval)
			wait_next(&next, wo->interval);
	}
	return err;
}

// err: what stopped the sampling (JSON "error"; the caller says it on stderr).
static void print_summary(struct out *o, uint64_t samples, uint64_t changes, double dur,
			  const struct kp_error *err)
{
	if (out_is_json(o)) {
		out_end_list(o);
		out_kv_uint(o, "samples_taken", samples);
		out_kv_uint(o, "changes", changes);
		char buf[64];
		snprintf(buf, sizeof(buf), "%.6f", dur);
		out_kv_json(o, "duration_s", buf, buf);
		// No time elapsed: no rate (null, not 0).
		snprintf(buf, sizeof(buf), "%.1f", dur > 0 ? (double)samples / dur : 0.0);
		if (dur > 0)
			out_kv_json(o, "rate", buf, buf);
		else
			out_kv_str(o, "rate", NULL);
		out_kv_bool(o, "interrupted", stop != 0);
		out_kv_str(o, "error", err ? kp_error_message(err) : NULL);
	} else {
		out_text(o, "%" PRIu64 " samples, %" PRIu64 " changes in %.3f s (%.0f samples/s)%s\n",
			 samples, changes, dur, dur > 0 ? (double)samples / dur : 0.0,
			 stop ? ", interrupted" : "");
	}
}

int cmd_watch(struct cli *cli, int argc, char **argv)
{
	struct watch_opts wo = { .interval = 1000000000ULL };
	int status = parse_options(cli, argc, argv, &wo);
	if (status >= 0)
		return status;
	struct kp_kernel *k = cli_kernel(cli);
	if (!k)
		return CLI_EXIT_ERROR;
	struct watch w = { .k = k, .expr = argv[optind] };
	struct kp_value *v = NULL;
	if ((status = prepare(&w, &v)))
		return status;
	KP_INIT(kp_kernel_info, info);
	kp_kernel_get_info(k, &info);
	if (!wo.count_given && !info.live)
		wo.count = 1;
	uint8_t *cur = malloc(w.size), *prev = malloc(w.size);
	if (!cur || !prev) {
		free(cur);
		free(prev);
		kp_value_destroy(v);
		return cli_fail("out of memory");
	}
	if (kp_value_is_lvalue(v)) {
		w.v = v;
	} else {
		kp_value_destroy(v);
		v = NULL;
	}
	struct sigaction sa = { .sa_handler = on_sigint }, old_sa;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, &old_sa);
	w.o = out_create(cli->json);
	if (out_is_json(w.o))
		out_begin_list(w.o, "samples");
	uint64_t samples = 0, changes = 0;
	double t0 = cli_monotonic();
	struct kp_error *err = run(&w, &wo, cur, prev, &samples, &changes);
	double dur = cli_monotonic() - t0;
	sigaction(SIGINT, &old_sa, NULL);
	print_summary(w.o, samples, changes, dur, err);
	out_destroy(w.o);
	free(cur);
	free(prev);
	kp_value_destroy(v);
	stop = 0;
	return err ? cli_error(err) : 0;
}
