// SPDX-License-Identifier: MIT
// kpeek rd: hexdump of kernel virtual or physical memory, after crash's rd.
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "output.h"

enum {
	LINE = 16,			// bytes per text line
	CHUNK = 4096,			// bytes per read
	STR_DEFAULT = 4096,		// -a without LEN: longest string shown
};
// JSON holds the whole dump in memory (hex string + values): keep it sane.
#define JSON_MAX (16ULL << 20)
#define LEN_MAX (1ULL << 40)

static void usage(void)
{
	printf("Usage: kpeek [-c CORE] rd [-p | --pid PID] [-w 1|2|4|8] [-s] [-a] [--json] ADDR [LEN]\n"
	       "Hexdumps LEN bytes of memory at ADDR, 16 bytes a line: the address, the\n"
	       "bytes grouped into little-endian values of the -w width, and their ASCII.\n"
	       "ADDR is 0xHEX, DECIMAL or SYMBOL[+-OFFSET]. LEN is a byte count (0xHEX or\n"
	       "DECIMAL, suffix k or M for KiB or MiB), rounded up to whole values; as in\n"
	       "crash, the default is one value (8 bytes with the default -w 8).\n"
	       "A read that runs into memory the source does not have prints the bytes\n"
	       "up to the hole, then an error naming the first missing address.\n"
	       "\n"
	       "Exit status: 0 success, 2 an error (a hole: the bytes before it are\n"
	       "printed), a usage error or output that could not be written.\n"
	       "\n"
	       "Options:\n"
	       "  -p, --physical     ADDR is a physical address (a number, not a symbol)\n"
	       "      --pid PID      ADDR is a user address of process PID, read through its\n"
	       "                     own page tables; a page not in memory (swapped out,\n"
	       "                     never touched, not in the dump) is an error naming it\n"
	       "  -w, --width N      value width in bytes: 1, 2, 4 or 8 (default 8)\n"
	       "  -s, --symbols      show values that are kernel addresses as\n"
	       "                     symbol+0xoff (needs width 8; no ASCII column)\n"
	       "  -a, --ascii        print the NUL-terminated string at ADDR (at most LEN\n"
	       "                     bytes, default %d)\n"
	       "  -j, --json         print {\"address\", \"space\", \"width\", \"length\",\n"
	       "                     \"complete\", \"bytes\": \"hex\", \"values\": [\"0x...\"]}\n"
	       "                     (\"symbols\" with -s; with -a {\"address\", \"space\",\n"
	       "                     \"string\", \"length\", \"complete\"} and, cut at LEN,\n"
	       "                     \"truncated\": true, \"shown\": LEN); space is \"virtual\",\n"
	       "                     \"physical\" or \"user\", with \"pid\" then; at most 16 MiB\n"
	       "  -h, --help         show this help\n"
	       "\n"
	       "Examples:\n"
	       "  kpeek rd -w 8 -s init_task 64\n"
	       "  kpeek rd -w 1 linux_banner 0x40\n"
	       "  kpeek rd -a linux_banner\n"
	       "  kpeek rd -p 0x1000 4k\n"
	       "  kpeek rd --pid 1 -a 0x7ffd5e6c1f20\n", STR_DEFAULT);
}

static bool parse_len(const char *arg, uint64_t *ret)
{
	char num[32];
	size_t n = strlen(arg);
	uint64_t mult = 1;
	if (n && n < sizeof(num)) {
		char last = arg[n - 1];
		// A trailing hex digit is part of the number (0x1b): suffixes only
		// after a decimal number.
		bool hex = n > 2 && arg[0] == '0' && (arg[1] == 'x' || arg[1] == 'X');
		if (!hex && (last == 'k' || last == 'K'))
			mult = 1024;
		else if (!hex && (last == 'm' || last == 'M'))
			mult = 1024 * 1024;
	}
	if (n >= sizeof(num) || n == 0)
		return false;
	memcpy(num, arg, n + 1);
	if (mult > 1)
		num[n - 1] = '\0';
	uint64_t v;
	if (!cli_parse_number(num, &v) || v > LEN_MAX / mult)
		return false;
	*ret = v * mult;
	return true;
}

static uint64_t value_at(const uint8_t *p, int width)
{
	uint64_t v = 0;
	for (int i = width - 1; i >= 0; i--)
		v = (v << 8) | p[i];
	return v;
}

// Kernel addresses are in the upper half; symbolize only those.
static bool symbolize(struct kp_kernel *k, uint64_t v, char *buf, size_t size)
{
	return v >= 0xffff800000000000ULL && kp_symbolize(k, v, buf, size);
}

struct rd {
	struct kp_kernel *k;
	struct out *o;
	enum kp_space space;
	int width;
	bool syms;
	int32_t pid;		// --pid: the process whose user memory is read
	struct kp_user *user;	// its user memory, else NULL
};

static struct kp_error *rd_read(struct rd *rd, uint64_t addr, void *buf, size_t len)
{
	if (rd->user)
		return kp_user_read(rd->user, addr, buf, len);
	return kp_read(rd->k, rd->space, addr, buf, len);
}

static const char *space_name(const struct rd *rd)
{
	return rd->user ? "user" : rd->space == KP_PHYS ? "physical" : "virtual";
}

// One text line of n bytes (n <= LINE, a multiple of the width) at addr.
static void text_line(struct rd *rd, uint64_t addr, const uint8_t *p, size_t n)
{
	char line[LINE * 80 + 64];
	size_t len = 0;
	len += (size_t)snprintf(line + len, sizeof(line) - len, "%016" PRIx64 ": ", addr);
	for (size_t i = 0; i < n; i += (size_t)rd->width) {
		uint64_t v = value_at(p + i, rd->width);
		char sym[256];
		if (rd->syms && symbolize(rd->k, v, sym, sizeof(sym)))
			len += (size_t)snprintf(line + len, sizeof(line) - len, " %-16s", sym);
		else
			len += (size_t)snprintf(line + len, sizeof(line) - len, " %0*" PRIx64,
						2 * rd->width, v);
		if (len >= sizeof(line))
			len = sizeof(line) - 1;
	}
	if (!rd->syms) {
		// Pad a short last line so that the ASCII column lines up.
		size_t missing = (LINE - n) / (size_t)rd->width * (size_t)(2 * rd->width + 1);
		len += (size_t)snprintf(line + len, sizeof(line) - len, "%*s   ", (int)missing, "");
		for (size_t i = 0; i < n && len + 1 < sizeof(line); i++)
			line[len++] = p[i] >= 0x20 && p[i] < 0x7f ? (char)p[i] : '.';
		line[len] = '\0';
	} else {
		while (len > 0 && line[len - 1] == ' ')
			line[--len] = '\0';
	}
	out_text(rd->o, "%s\n", line);
}

// Reads what can be read of [addr, addr + len) into buf: *got_ret bytes (a
// multiple of unit) and the error that stopped it, if any. len is at most a
// page, so finding where a hole starts takes at most a page of reads.
static struct kp_error *read_some(struct rd *rd, uint64_t addr, uint8_t *buf, size_t len,
				  size_t *got_ret, size_t unit)
{
	struct kp_error *err = rd_read(rd, addr, buf, len);
	if (!err) {
		*got_ret = len;
		return NULL;
	}
	kp_error_destroy(err);
	err = NULL;
	// Find where the hole starts, one value at a time.
	size_t got = 0;
	while (got < len) {
		err = rd_read(rd, addr + got, buf + got, unit);
		if (err)
			break;
		got += unit;
	}
	*got_ret = got;
	return err;
}

// Reads the string at addr (at most max bytes, stopping at a NUL or at the
// first byte that cannot be read) into a buffer that grows with what is
// read, a page at a time: memory follows the string, not max. *nul_ret:
// the string ended at its NUL (not at max or at unreadable memory).
static struct kp_error *read_string(struct rd *rd, uint64_t addr, uint64_t max, char **ret,
				    bool *nomem_ret, bool *nul_ret)
{
	char *buf = NULL;
	size_t got = 0, cap = 0;
	struct kp_error *err = NULL;
	while (got < max) {
		uint64_t at = addr + got;
		size_t want = CHUNK - (size_t)(at % CHUNK);	// up to the page end
		if (want > max - got)
			want = (size_t)(max - got);
		if (got + want + 1 > cap) {
			size_t ncap = cap ? 2 * cap : CHUNK + 1;
			while (ncap < got + want + 1)
				ncap *= 2;
			char *nb = realloc(buf, ncap);
			if (!nb) {
				free(buf);
				*nomem_ret = true;
				return NULL;
			}
			buf = nb;
			cap = ncap;
		}
		size_t n;
		err = read_some(rd, at, (uint8_t *)buf + got, want, &n, 1);
		char *nul = memchr(buf + got, '\0', n);
		got = nul ? (size_t)(nul - buf) : got + n;
		*nul_ret = nul != NULL;
		if (nul || err)
			break;
	}
	if (err && got == 0) {
		free(buf);
		return err;	// not even the first byte
	}
	kp_error_destroy(err);
	if (!buf && !(buf = malloc(1))) {
		*nomem_ret = true;
		return NULL;
	}
	buf[got] = '\0';
	*ret = buf;
	return NULL;
}

// The string at addr; no document when not even its first byte is read
// (said on stderr, as for any error).
static int rd_string(struct rd *rd, bool json, uint64_t addr, uint64_t max)
{
	char *buf = NULL;
	bool nomem = false, nul = false;
	struct kp_error *err = read_string(rd, addr, max, &buf, &nomem, &nul);
	if (err)
		return cli_error(err);
	if (nomem)
		return cli_fail("out of memory");
	rd->o = out_create(json);
	if (out_is_json(rd->o)) {
		out_kv_hex(rd->o, "address", addr);
		out_kv_str(rd->o, "space", space_name(rd));
		if (rd->user)
			out_kv_int(rd->o, "pid", rd->pid);
		out_kv_str(rd->o, "string", buf);
		out_kv_uint(rd->o, "length", strlen(buf));
		// Not the whole string: cut at LEN (a cap, said as caps are), or
		// stopped by memory that cannot be read.
		out_kv_bool(rd->o, "complete", nul);
		if (!nul && strlen(buf) == max) {
			out_kv_bool(rd->o, "truncated", true);
			out_kv_uint(rd->o, "shown", max);
		}
	} else {
		size_t n = strlen(buf);
		out_text(rd->o, "%016" PRIx64 ":  %s%s", addr, buf,
			 n && buf[n - 1] == '\n' ? "" : "\n");
	}
	out_destroy(rd->o);
	free(buf);
	return 0;
}

static void json_dump(struct rd *rd, uint64_t addr, const uint8_t *p, size_t n, uint64_t asked)
{
	struct out *o = rd->o;
	out_kv_hex(o, "address", addr);
	out_kv_str(o, "space", space_name(rd));
	if (rd->user)
		out_kv_int(o, "pid", rd->pid);
	out_kv_int(o, "width", rd->width);
	out_kv_uint(o, "length", n);
	out_kv_bool(o, "complete", n == asked);
	char *hex = malloc(2 * n + 1);
	if (!hex) {
		out_kv_str(o, "bytes", NULL);
	} else {
		for (size_t i = 0; i < n; i++)
			sprintf(hex + 2 * i, "%02x", p[i]);
		hex[2 * n] = '\0';
		out_kv_str(o, "bytes", hex);
		free(hex);
	}
	out_begin_list(o, "values");
	for (size_t i = 0; i + (size_t)rd->width <= n; i += (size_t)rd->width)
		out_kv_hex(o, NULL, value_at(p + i, rd->width));
	out_end_list(o);
	if (rd->syms) {
		out_begin_list(o, "symbols");
		for (size_t i = 0; i + (size_t)rd->width <= n; i += (size_t)rd->width) {
			char sym[256];
			bool ok = symbolize(rd->k, value_at(p + i, rd->width), sym, sizeof(sym));
			out_kv_str(o, NULL, ok ? sym : NULL);
		}
		out_end_list(o);
	}
}

// What rd was asked for besides struct rd: the address (a physical one is
// parsed here, a virtual one may be a symbol), the length, -a.
struct rd_args {
	const char *addr_arg;
	uint64_t addr, len;
	bool len_given, ascii, by_pid;
};

// -1 to go on, else the exit status.
static int parse_args(struct cli *cli, int argc, char **argv, struct rd *rd, struct rd_args *a)
{
	static const struct option opts[] = {
		{ "physical", no_argument, NULL, 'p' },
		{ "pid", required_argument, NULL, 'P' },
		{ "width", required_argument, NULL, 'w' },
		{ "symbols", no_argument, NULL, 's' },
		{ "ascii", no_argument, NULL, 'a' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	bool width_given = false;
	int c;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":pw:sajh", opts, NULL)) != -1) {
		switch (c) {
		case 'p':
			rd->space = KP_PHYS;
			break;
		case 'P': {
			uint64_t pid;
			if (!cli_parse_number(optarg, &pid) || pid > INT32_MAX)
				return cli_usage_error("rd", "--pid takes a process ID, not '%s'", optarg);
			rd->pid = (int32_t)pid;
			a->by_pid = true;
			break;
		}
		case 'w':
			if (strcmp(optarg, "1") && strcmp(optarg, "2") && strcmp(optarg, "4") &&
			    strcmp(optarg, "8"))
				return cli_usage_error("rd", "width must be 1, 2, 4 or 8, not '%s'", optarg);
			rd->width = atoi(optarg);
			width_given = true;
			break;
		case 's':
			rd->syms = true;
			break;
		case 'a':
			a->ascii = true;
			break;
		case 'j':
			cli->json = true;
			break;
		case 'h':
			usage();
			return 0;
		default:
			return cli_bad_option("rd", c, argv);
		}
	}
	if (optind >= argc)
		return cli_usage_error("rd", "expected ADDR");
	if (argc - optind > 2)
		return cli_usage_error("rd", "unexpected argument '%s'", argv[optind + 2]);
	if (rd->syms && width_given && rd->width != 8)
		return cli_usage_error("rd", "-s needs width 8");
	if (rd->syms && a->ascii)
		return cli_usage_error("rd", "-s and -a exclude each other");
	a->addr_arg = argv[optind];
	a->len_given = argc - optind == 2;
	if (a->len_given && !parse_len(argv[optind + 1], &a->len))
		return cli_usage_error("rd", "invalid length '%s' (expected a byte count such as 64, 0x40, 4k, 1M)",
				       argv[optind + 1]);
	if (rd->space == KP_PHYS && a->by_pid)
		return cli_usage_error("rd", "-p and --pid exclude each other");
	if (rd->syms && a->by_pid)
		return cli_usage_error("rd", "-s and --pid exclude each other");
	if ((rd->space == KP_PHYS || a->by_pid) && !cli_parse_number(a->addr_arg, &a->addr))
		return cli_usage_error("rd", "%s takes a %s address (0xHEX or DECIMAL), not '%s'",
				       a->by_pid ? "--pid" : "-p", a->by_pid ? "user" : "physical",
				       a->addr_arg);
	return -1;
}

// The hexdump of [addr, addr + len): text lines as the bytes are read, or
// one JSON object at the end. The error that stopped it, if any.
static struct kp_error *hexdump(struct rd *rd, uint64_t addr, uint64_t len, bool json,
				uint8_t *buf)
{
	struct kp_error *err = NULL;
	uint64_t done = 0;
	while (done < len) {
		size_t chunk = len - done < CHUNK ? (size_t)(len - done) : CHUNK;
		uint8_t *p = json ? buf + done : buf;
		size_t got;
		err = read_some(rd, addr + done, p, chunk, &got, (size_t)rd->width);
		if (!json)
			for (size_t i = 0; i < got; i += LINE)
				text_line(rd, addr + done + i, p + i, got - i < LINE ? got - i : LINE);
		done += got;
		if (err)
			break;
	}
	if (json)
		json_dump(rd, addr, buf, (size_t)done, len);
	return err;
}

int cmd_rd(struct cli *cli, int argc, char **argv)
{
	struct rd rd = { .space = KP_VIRT, .width = 8 };
	struct rd_args a = { 0 };
	int status = parse_args(cli, argc, argv, &rd, &a);
	if (status >= 0)
		return status;
	rd.k = cli_kernel(cli);
	if (!rd.k)
		return CLI_EXIT_ERROR;
	if (rd.space == KP_VIRT && !a.by_pid && cli_parse_address(cli, a.addr_arg, &a.addr))
		return CLI_EXIT_ERROR;
	if (a.by_pid) {
		uint64_t task;
		struct kp_error *err = kp_task_by_pid(rd.k, rd.pid, &task);
		if (!err)
			err = kp_user_create(rd.k, task, &rd.user);
		if (err)
			return cli_error_prefix(err, "rd --pid %d", rd.pid);
	}
	if (a.ascii) {
		status = rd_string(&rd, cli->json, a.addr, a.len_given && a.len ? a.len : STR_DEFAULT);
		kp_user_destroy(rd.user);
		return status;
	}
	uint64_t len = a.len_given ? a.len : (uint64_t)rd.width;
	len = (len + (uint64_t)rd.width - 1) / (uint64_t)rd.width * (uint64_t)rd.width;
	if (len && a.addr + len - 1 < a.addr)
		status = cli_usage_error("rd", "0x%" PRIx64 " + %" PRIu64 " bytes runs past the end of the address space",
					 a.addr, len);
	else if (cli->json && len > JSON_MAX)
		status = cli_usage_error("rd", "--json dumps at most 16 MiB, not %" PRIu64 " bytes", len);
	uint8_t *buf = status >= 0 ? NULL : malloc(cli->json ? (len ? len : 1) : CHUNK);
	if (status < 0 && !buf)
		status = cli_fail("out of memory");
	if (status >= 0) {
		kp_user_destroy(rd.user);
		return status;
	}
	rd.o = out_create(cli->json);
	struct kp_error *err = hexdump(&rd, a.addr, len, cli->json, buf);
	free(buf);
	out_destroy(rd.o);
	kp_user_destroy(rd.user);
	return err ? cli_error(err) : 0;
}
