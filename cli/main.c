// SPDX-License-Identifier: MIT
// kpeek [GLOBAL OPTIONS] COMMAND [ARGS]: global options, the command table and
// the helpers every command shares (cli.h).
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cli.h"

static bool parse_u64(const char *s, uint64_t *ret);


static const struct cmd cmds[] = {
	{ "info", cmd_info, "", "show what the memory source is: kernel, KASLR, paging, symbols, BTF" },
	{ "sym", cmd_sym, "NAME|ADDR...", "look up symbols by name or address" },
	{ "rd", cmd_rd, "[-p] [-w 1|2|4|8] [-s] [-a] ADDR [LEN]", "hexdump kernel (or physical) memory" },
	{ "print", cmd_print, "[-x] [--one-line] EXPR...", "evaluate C expressions over symbols and BTF types" },
	{ "vtop", cmd_vtop, "ADDR...", "translate virtual addresses through the page tables" },
	{ "ps", cmd_ps, "[OPTIONS]", "list tasks" },
	{ "lsmod", cmd_lsmod, "[OPTIONS]", "list loaded kernel modules" },
	{ "loadavg", cmd_loadavg, "[OPTIONS]", "show the load average as /proc/loadavg" },
	{ "dmesg", cmd_dmesg, "[OPTIONS]", "print the kernel log (printk ring buffer)" },
	{ "bt", cmd_bt, "[PID|0xTASK...] [-a|--all] [--json]", "kernel stack traces of tasks and CPUs (ORC, no debuginfo)" },
	{ "panic", cmd_panic, "[--json]", "say why the kernel stopped: panic message, CPU, task, taint" },
	{ "watch", cmd_watch, "[OPTIONS] EXPR", "sample a value repeatedly (live source)" },
	{ "check", cmd_check, "[OPTIONS]", "check syscall tables for hooks" },
	{ "list", cmd_list, "[OPTIONS]", "walk a kernel linked list" },
	{ "diff", cmd_diff, "[-x] EXPR DUMP1 [DUMP2]", "compare an expression's value in two dumps" },
	{ "snapshot", cmd_snapshot, "-o FILE [OPTIONS]", "copy physical memory into a new ELF vmcore" },
};

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: kpeek [GLOBAL OPTIONS] COMMAND [ARGS]\n"
		"Read-only access to kernel memory from /proc/kcore or a crash dump.\n"
		"\n"
		"Global options (before the command):\n"
		"  -c, --core FILE        read this dump (ELF vmcore, QEMU dump, kdump-compressed)\n"
		"                         instead of the live /proc/kcore\n"
		"                         LiME and AVML images are recognized too\n"
		"      --raw[=BASE]       the -c file is raw physical memory from BASE (default 0)\n"
		"      --arch NAME        architecture of a raw or LiME image that does not say\n"
		"                         (x86_64 or arm64; default: detect)\n"
		"  -m, --system-map FILE  symbols from System.map (KASLR offset applied)\n"
		"      --kallsyms FILE    symbols from a kallsyms file (already relocated)\n"
		"      --btf FILE         raw BTF types (default: /sys/kernel/btf/vmlinux live,\n"
		"                         the kernel's .BTF section from memory for dumps)\n"
		"  -j, --json             print JSON (one document per command)\n"
		"  -h, --help             show this help; kpeek COMMAND --help for a command\n"
		"  -V, --version          show the version\n"
		"\n"
		"Commands (an unambiguous prefix is enough):\n");
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		fprintf(f, "  %-8s %s\n", cmds[i].name, cmds[i].summary);
	fprintf(f,
		"\n"
		"Every command takes --json and -h/--help.\n"
		"Examples:\n"
		"  kpeek info\n"
		"  kpeek -c vmcore sym avenrun\n"
		"  kpeek -c vmcore rd -w 8 -s init_task 64\n"
		"  kpeek print init_task.comm\n");
}

// ---------------------------------------------------------------- shared helpers

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
	return k;
}

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
	fputc('\n', stderr);
	return 1;
}

int cli_error(struct kp_error *err)
{
	report(NULL, err ? kp_error_message(err) : "unknown error");
	kp_error_destroy(err);
	return 1;
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
	return 1;
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
	return 2;
}

bool cli_wants_help(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--") == 0)
			break;
		if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0)
			return true;
	}
	return false;
}

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
struct kp_error *cli_collect_tasks(struct kp_kernel *k, bool threads, struct kp_task **ret,
				   size_t *n_ret, size_t *bad, struct kp_error **bad_err)
{
	struct kp_task_iter *it;
	struct kp_error *err = kp_task_iter_create(k, threads ? KP_TASKS_THREADS : 0, &it);
	if (err)
		return err;
	struct kp_task *t = NULL;
	size_t n = 0, cap = 0;
	*bad = 0;
	*bad_err = NULL;
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
	KP_INIT(kp_walk_status, st);
	kp_task_iter_status(it, &st);
	kp_task_iter_destroy(it);
	if (err && (!n || kp_error_code(err) == KP_ERR_NOMEM)) {
		free(t);
		return err;
	}
	if (err) {
		*bad = st.left_out ? st.left_out : 1;
		*bad_err = err;
	}
	*ret = t;
	*n_ret = n;
	return NULL;
}

bool cli_parse_number(const char *arg, uint64_t *ret)
{
	return parse_u64(arg, ret);
}

// Parses an unsigned number: 0x hex, or decimal; all of s must be used.
static bool parse_u64(const char *s, uint64_t *ret)
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

int cli_parse_address(struct cli *cli, const char *arg, uint64_t *ret)
{
	uint64_t v;
	if (parse_u64(arg, &v)) {
		*ret = v;
		return 0;
	}
	if (!*arg)
		return cli_fail("empty address");
	// SYMBOL, SYMBOL+OFF, SYMBOL-OFF: the last sign followed by a number.
	const char *op = NULL;
	uint64_t off = 0;
	for (const char *p = arg + 1; *p; p++)
		if ((*p == '+' || *p == '-') && parse_u64(p + 1, &off)) {
			op = p;
			break;
		}
	size_t len = op ? (size_t)(op - arg) : strlen(arg);
	bool valid = !(arg[0] >= '0' && arg[0] <= '9');
	for (size_t i = 0; i < len; i++) {
		char c = arg[i];
		// Symbol names: C identifiers plus '.' (foo.cold, foo.isra.0) and '$'.
		valid &= c == '_' || c == '.' || c == '$' || (c >= 'a' && c <= 'z') ||
			 (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
	}
	if (!valid)
		return cli_fail("invalid address '%s' (expected 0xHEX, DECIMAL or SYMBOL[+-OFFSET])",
				arg);
	struct kp_kernel *k = cli_kernel(cli);
	if (!k)
		return 1;	// cli_kernel() said why
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

// ---------------------------------------------------------------- main

static const struct cmd *find_cmd(const char *name, int *ambiguous)
{
	const struct cmd *found = NULL;
	size_t n = strlen(name);
	*ambiguous = 0;
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		if (strcmp(cmds[i].name, name) == 0)
			return &cmds[i];
		if (n && strncmp(cmds[i].name, name, n) == 0) {
			if (found)
				(*ambiguous)++;
			found = &cmds[i];
		}
	}
	return *ambiguous ? NULL : found;
}

// Exit status once stdout is flushed: a reader that went away is success.
static int finish(int status)
{
	if (fflush(stdout) != 0 || ferror(stdout)) {
		if (errno == EPIPE)
			return status;
		fprintf(stderr, "kpeek: error writing to stdout: %s\n", strerror(errno));
		return status ? status : 1;
	}
	return status;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "core", required_argument, NULL, 'c' },
		{ "system-map", required_argument, NULL, 'm' },
		{ "kallsyms", required_argument, NULL, 'K' },
		{ "btf", required_argument, NULL, 'B' },
		{ "raw", optional_argument, NULL, 'R' },
		{ "arch", required_argument, NULL, 'A' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	struct cli cli = { .open.sz = sizeof(cli.open) };
	int c;

	signal(SIGPIPE, SIG_IGN);
	if (isatty(STDOUT_FILENO))
		setvbuf(stdout, NULL, _IOLBF, 0);
	opterr = 0;
	// '+': stop at the command name; its options are the command's.
	while ((c = getopt_long(argc, argv, "+:c:m:jhV", opts, NULL)) != -1) {
		switch (c) {
		case 'c':
			cli.open.core = optarg;
			break;
		case 'm':
			cli.open.system_map = optarg;
			break;
		case 'K':
			cli.open.kallsyms = optarg;
			break;
		case 'B':
			cli.open.btf = optarg;
			break;
		case 'A':
			cli.open.arch = optarg;
			break;
		case 'R':
			cli.open.raw = true;
			if (optarg && !parse_u64(optarg, &cli.open.raw_base)) {
				fprintf(stderr, "kpeek: --raw=BASE needs a number, not '%s' (see kpeek --help)\n",
					optarg);
				return 2;
			}
			break;
		case 'j':
			cli.json = true;
			break;
		case 'h':
			usage(stdout);
			return finish(0);
		case 'V':
			// The CLI's own version and the library's it runs with.
			printf("kpeek %s (libkpeek %s)\n", KPEEK_VERSION_STRING, kp_version());
			return finish(0);
		case ':':
			fprintf(stderr, "kpeek: option '%s' needs an argument (see kpeek --help)\n",
				argv[optind - 1]);
			return 2;
		default:
			if (optopt)
				fprintf(stderr, "kpeek: unknown option '-%c' (see kpeek --help)\n", optopt);
			else
				fprintf(stderr, "kpeek: unknown option '%s' (see kpeek --help)\n",
					argv[optind - 1]);
			return 2;
		}
	}
	if (optind >= argc) {
		fprintf(stderr, "kpeek: no command given (see kpeek --help)\n");
		return 2;
	}
	int ambiguous;
	const struct cmd *cmd = find_cmd(argv[optind], &ambiguous);
	if (!cmd) {
		if (ambiguous)
			fprintf(stderr, "kpeek: ambiguous command '%s' (see kpeek --help)\n", argv[optind]);
		else
			fprintf(stderr, "kpeek: unknown command '%s' (see kpeek --help)\n", argv[optind]);
		return 2;
	}
	char **cargv = argv + optind;
	int cargc = argc - optind;
	// Commands see their own name as argv[0], whatever prefix was typed.
	cargv[0] = (char *)cmd->name;
	optind = 0;	// reset getopt for the command
	int status = cmd->fn(&cli, cargc, cargv);
	kp_kernel_destroy(cli.kernel);
	return finish(status);
}
