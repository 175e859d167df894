// SPDX-License-Identifier: MIT
// The helpers every command shares (cli.h): opening the kernel, one-line
// error messages, option and argument parsing, sizes, the task list.
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "cli.h"
#include "output.h"

// A part of a split dump opened alone: every error says so, where the
// library's message does not (a scan that found nothing in the frames the
// part lacks).
static char split_note[512];

struct kp_kernel *cli_kernel(struct cli *cli)
{
	if (cli->kernel)
		return cli->kernel;
	struct kp_kernel *k = NULL;
	struct kp_error *err = kp_kernel_open(&cli->open, &k);
	if (err) {
		cli_error(err);
		return NULL;
	}
	cli->kernel = k;
	// A part alone is opened with one -c (several parts make a set).
	const char *split = kp_kernel_split(k);
	if (split)
		snprintf(split_note, sizeof(split_note), "%s is %s", cli->open.core, split);
	return k;
}

// ---------------------------------------------------------------- messages

static void put_line(const char *s)
{
	for (const char *p = s; *p; p++)
		fputc(*p == '\n' || *p == '\r' ? ' ' : *p, stderr);
}

// "kpeek: [PREFIX: ]MESSAGE" on one line, always: a message with a newline
// would break that promise.
static int report(const char *prefix, const char *msg)
{
	fflush(stdout);	// keep stdout and stderr in order on a terminal
	fputs("kpeek: ", stderr);
	if (prefix) {
		put_line(prefix);
		fputs(": ", stderr);
	}
	put_line(msg);
	if (split_note[0] && !strstr(msg, "split dump")) {
		fputs(" (", stderr);
		put_line(split_note);
		fputc(')', stderr);
	}
	fputc('\n', stderr);
	return CLI_EXIT_ERROR;
}

int cli_error(struct kp_error *err)
{
	report(NULL, err ? kp_error_message(err) : "unknown error");
	kp_error_destroy(err);
	return CLI_EXIT_ERROR;
}

int cli_error_prefix(struct kp_error *err, const char *fmt, ...)
{
	char prefix[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(prefix, sizeof(prefix), fmt, ap);
	va_end(ap);
	report(prefix, kp_error_message(err));
	kp_error_destroy(err);
	return CLI_EXIT_ERROR;
}

int cli_fail(const char *fmt, ...)
{
	char msg[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return report(NULL, msg);
}

int cli_usage_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;
	fflush(stdout);
	fprintf(stderr, "kpeek %s: ", cmd);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, " (see kpeek %s --help)\n", cmd);
	return CLI_EXIT_ERROR;
}

// ---------------------------------------------------------------- options and arguments

int cli_json_help_options(struct cli *cli, const char *cmd, int argc, char **argv,
			  void (*print_usage)(void))
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":jh", opts, NULL)) != -1) {
		switch (c) {
		case 'j':
			cli->json = true;
			break;
		case 'h':
			print_usage();
			return 0;
		default:
			return cli_bad_option(cmd, c, argv);
		}
	}
	return -1;
}

int cli_format_options(struct cli *cli, const char *cmd, int argc, char **argv,
		       void (*print_usage)(void), unsigned *flags_ret)
{
	static const struct option opts[] = {
		{ "hex", no_argument, NULL, 'x' },
		{ "one-line", no_argument, NULL, '1' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	unsigned flags = 0;
	int c;
	opterr = 0;
	// '+': an expression such as -1 or -init_task.pid is not an option.
	while ((c = getopt_long(argc, argv, "+:xjh", opts, NULL)) != -1) {
		switch (c) {
		case 'x':
			flags |= KP_FORMAT_HEX;
			break;
		case '1':
			flags |= KP_FORMAT_ONE_LINE;
			break;
		case 'j':
			cli->json = true;
			break;
		case 'h':
			print_usage();
			return 0;
		default:
			return cli_bad_option(cmd, c, argv);
		}
	}
	*flags_ret = flags;
	return -1;
}

int cli_bad_option(const char *cmd, int c, char **argv)
{
	if (c == ':')
		return cli_usage_error(cmd, "option '%s' needs an argument", argv[optind - 1]);
	if (optopt)
		return cli_usage_error(cmd, "unknown option '-%c'", optopt);
	return cli_usage_error(cmd, "unknown option '%s'", argv[optind - 1]);
}

// 0x hex, or decimal; all of s must be used.
bool cli_parse_number(const char *s, uint64_t *ret)
{
	if (!*s || *s == '-' || *s == '+' || *s == ' ')
		return false;
	// Hex with 0x, else decimal (a leading 0 is not octal).
	int base = 10;
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		s += 2;
		if (!((*s >= '0' && *s <= '9') || (*s >= 'a' && *s <= 'f') || (*s >= 'A' && *s <= 'F')))
			return false;
	}
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, base);
	if (errno || *end)
		return false;
	*ret = v;
	return true;
}

bool cli_is_symbol_name(const char *s, size_t len)
{
	if (!len || (s[0] >= '0' && s[0] <= '9'))
		return false;
	for (size_t i = 0; i < len; i++) {
		char c = s[i];
		// C identifiers plus '.' (foo.cold, foo.isra.0) and '$'.
		if (!(c == '_' || c == '.' || c == '$' || (c >= 'a' && c <= 'z') ||
		      (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')))
			return false;
	}
	return true;
}

int cli_parse_address(struct cli *cli, const char *arg, uint64_t *ret)
{
	uint64_t v;
	if (cli_parse_number(arg, &v)) {
		*ret = v;
		return 0;
	}
	if (!*arg)
		return cli_fail("empty address");
	// SYMBOL, SYMBOL+OFF, SYMBOL-OFF: the last sign followed by a number.
	const char *op = NULL;
	uint64_t off = 0;
	for (const char *p = arg + 1; *p; p++)
		if ((*p == '+' || *p == '-') && cli_parse_number(p + 1, &off)) {
			op = p;
			break;
		}
	size_t len = op ? (size_t)(op - arg) : strlen(arg);
	if (!cli_is_symbol_name(arg, len))
		return cli_fail("invalid address '%s' (expected 0xHEX, DECIMAL or SYMBOL[+-OFFSET])",
				arg);
	struct kp_kernel *k = cli_kernel(cli);
	if (!k)
		return CLI_EXIT_ERROR;	// cli_kernel() said why
	char *name = strndup(arg, len);
	if (!name)
		return cli_fail("out of memory");
	struct kp_symbol sym;
	struct kp_error *err = kp_symbol_by_name(k, name, &sym);
	free(name);
	if (err)
		return cli_error(err);
	if (op && (*op == '-' ? off > sym.address : off > UINT64_MAX - sym.address))
		return cli_fail("address '%s' is outside the address space", arg);
	*ret = op && *op == '-' ? sym.address - off : sym.address + off;
	return 0;
}


// ---------------------------------------------------------------- sizes, tasks, time

void cli_human_size(uint64_t bytes, char *buf, size_t size)
{
	static const char *units[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };
	int u = 0;
	uint64_t whole = bytes;
	while (whole >= 1024 && u < 6) {
		whole /= 1024;
		u++;
	}
	if (u == 0) {
		snprintf(buf, size, "%" PRIu64 " B", bytes);
		return;
	}
	uint64_t unit = 1ULL << (10 * u);
	if (bytes % unit == 0) {
		snprintf(buf, size, "%" PRIu64 " %s", whole, units[u]);
		return;
	}
	snprintf(buf, size, "%.1f %s", (double)bytes / (double)unit, units[u]);
}

// Every task the iterator yields. A task that cannot be read whole (memory
// missing from a dump: KP_ERR_FAULT) is left out and counted in *bad, the
// first such error kept in *bad_err; any other error ends the walk.
bool cli_task_mem(struct kp_kernel *k, uint64_t task, struct kp_task_mem *ret, struct kp_error **err_ret)
{
	struct kp_error *err = kp_task_mem(k, task, ret);
	*err_ret = NULL;
	if (!err)
		return true;
	if (kp_error_code(err) == KP_ERR_INVALID || kp_error_code(err) == KP_ERR_NOT_FOUND)
		kp_error_destroy(err);
	else
		*err_ret = err;
	return false;
}

struct kp_error *cli_collect_tasks(struct kp_kernel *k, bool threads, struct kp_task **ret,
				   size_t *n_ret, struct cli_walk *walk)
{
	struct kp_task_iter *it;
	struct kp_error *err = kp_task_iter_create(k, threads ? KP_TASKS_THREADS : 0, &it);
	if (err)
		return err;
	struct kp_task *t = NULL;
	size_t n = 0, cap = 0;
	// The iterator's error is its last word: what came before it is the
	// partial answer, the error says where it stopped.
	for (;;) {
		const struct kp_task *task;
		err = kp_task_iter_next(it, &task);
		if (err || !task)
			break;
		if (n == cap) {
			size_t ncap = cap ? cap * 2 : 256;
			struct kp_task *nt = realloc(t, ncap * sizeof(*nt));
			if (!nt) {
				kp_task_iter_destroy(it);
				free(t);
				cli_fail("out of memory");
				exit(1);
			}
			t = nt;
			cap = ncap;
		}
		t[n++] = *task;
	}
	*walk = (struct cli_walk){ .st = { .sz = sizeof(walk->st) } };
	kp_task_iter_status(it, &walk->st);
	kp_task_iter_destroy(it);
	if (err && (!n || kp_error_code(err) == KP_ERR_NOMEM)) {
		free(t);
		return err;
	}
	walk->err = err;
	*ret = t;
	*n_ret = n;
	return NULL;
}

void cli_seconds(uint64_t ns, char *buf, size_t size)
{
	snprintf(buf, size, "%" PRIu64 ".%06" PRIu64, ns / 1000000000, ns % 1000000000 / 1000);
}

double cli_monotonic(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static bool shell_safe(const char *s, size_t n)
{
	if (!n)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!isalnum((unsigned char)s[i]) && !strchr("_@%+=:,./-", s[i]))
			return false;
	return true;
}

char *cli_shell_words(const char *buf, size_t len)
{
	// Worst case: every byte a quote, each 4 bytes ('\'') + 2 quotes + a space.
	char *out = malloc(len * 4 + 3 * (len + 1) + 1);
	if (!out)
		return NULL;
	size_t o = 0;
	for (size_t i = 0; i < len;) {
		size_t n = strnlen(buf + i, len - i);
		if (o)
			out[o++] = ' ';
		if (shell_safe(buf + i, n)) {
			memcpy(out + o, buf + i, n);
			o += n;
		} else {
			out[o++] = '\'';
			for (size_t j = 0; j < n; j++) {
				if (buf[i + j] == '\'') {
					memcpy(out + o, "'\\''", 4);
					o += 4;
				} else {
					out[o++] = buf[i + j];
				}
			}
			out[o++] = '\'';
		}
		i += n + 1;
	}
	out[o] = '\0';
	return out;
}

// Facts the source states twice that disagree (a forged or stale copy):
// JSON "disagreements"; text lines key: LINE, or "facts: LINE" if key is NULL.
void cli_disagreements(struct out *o, struct kp_kernel *k, const char *key)
{
	const struct kp_disagreement *d;
	size_t n = kp_kernel_disagreements(k, &d);
	if (out_is_json(o)) {
		out_begin_list(o, "disagreements");
		for (size_t i = 0; i < n; i++) {
			out_begin_object(o, NULL);
			out_kv_str(o, "fact", d[i].fact);
			out_kv_str(o, "used_source", d[i].used_source);
			out_kv_str(o, "used", d[i].used);
			out_kv_str(o, "other_source", d[i].other_source);
			out_kv_str(o, "other", d[i].other);
			out_end_object(o);
		}
		out_end_list(o);
		return;
	}
	for (size_t i = 0; i < n; i++) {
		char line[1024];
		snprintf(line, sizeof(line), "%s: %s says %s (used), %s says %s",
			 d[i].fact, d[i].used_source, d[i].used, d[i].other_source, d[i].other);
		if (key)
			out_kv_str(o, key, line);
		else
			out_text(o, "facts: %s\n", line);
	}
}
