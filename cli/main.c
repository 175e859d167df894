// SPDX-License-Identifier: MIT
// kpeek [GLOBAL OPTIONS] COMMAND [ARGS]: the global options, the command
// table and the exit status.
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cli.h"

static const struct cmd cmds[] = {
	{ "info", cmd_info, "show what the memory source is: kernel, KASLR, paging, symbols, BTF" },
	{ "sym", cmd_sym, "look up symbols by name or address" },
	{ "rd", cmd_rd, "hexdump kernel (or physical) memory" },
	{ "print", cmd_print, "evaluate C expressions over symbols and BTF types" },
	{ "type", cmd_type, "show a BTF type with every member's offset and size" },
	{ "vtop", cmd_vtop, "translate virtual addresses through the page tables" },
	{ "whatis", cmd_whatis, "say what addresses are: slab object, task, stack, symbol, page" },
	{ "page", cmd_page, "decode page frames' struct page" },
	{ "search", cmd_search, "find a value or a string in kernel, user or physical memory" },
	{ "ps", cmd_ps, "list tasks" },
	{ "env", cmd_env, "print a process's environment, as /proc/PID/environ" },
	{ "maps", cmd_maps, "print a process's memory mappings, as /proc/PID/maps" },
	{ "files", cmd_files, "list a process's open files, as /proc/PID/fd" },
	{ "status", cmd_status, "print who a process is, as /proc/PID/status, ns and cgroup" },
	{ "mount", cmd_mount, "list mounts, as /proc/PID/mountinfo" },
	{ "runq", cmd_runq, "list each CPU's running and queued tasks" },
	{ "meminfo", cmd_meminfo, "show memory usage as /proc/meminfo" },
	{ "slabinfo", cmd_slabinfo, "list slab caches as /proc/slabinfo" },
	{ "slab", cmd_slab, "list a slab cache's objects, allocated or free" },
	{ "net", cmd_net, "list network interfaces of every namespace" },
	{ "sockets", cmd_sockets, "list sockets as ss -a -p" },
	{ "irq", cmd_irq, "list interrupt descriptors as /proc/interrupts" },
	{ "lsmod", cmd_lsmod, "list loaded kernel modules" },
	{ "loadavg", cmd_loadavg, "show the load average as /proc/loadavg" },
	{ "dmesg", cmd_dmesg, "print the kernel log (printk ring buffer)" },
	{ "bt", cmd_bt, "kernel stack traces of tasks and CPUs, without debuginfo" },
	{ "panic", cmd_panic, "say why the kernel stopped: panic message, CPU, task, taint" },
	{ "report", cmd_report, "triage a dump in one page: why, stack, log, memory, signature" },
	{ "watch", cmd_watch, "sample a value repeatedly (live source)" },
	{ "check", cmd_check, "look for rootkit changes: the kernel's own views of itself compared" },
	{ "list", cmd_list, "walk a kernel linked list" },
	{ "diff", cmd_diff, "compare an expression's value in two dumps" },
	{ "snapshot", cmd_snapshot, "copy physical memory into a new ELF vmcore" },
};
#define NCMDS (sizeof(cmds) / sizeof(cmds[0]))

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: kpeek [GLOBAL OPTIONS] COMMAND [ARGS]\n"
		"Read-only access to kernel memory from /proc/kcore or a crash dump.\n"
		"\n"
		"Global options (before the command):\n"
		"  -c, --core FILE        read this dump instead of the live /proc/kcore: an ELF\n"
		"                         vmcore (kdump, QEMU), a kdump-compressed dump (flat\n"
		"                         too), a LiME or AVML image; given once per part, the\n"
		"                         parts of a split dump (what makedumpfile splits)\n"
		"      --raw[=BASE]       -c FILE is raw physical memory from BASE (default 0)\n"
		"      --arch NAME        architecture of a raw or LiME image that does not say\n"
		"                         (x86_64 or arm64; default: detect)\n"
		"  -m, --system-map FILE  symbols from System.map (KASLR offset applied)\n"
		"      --kallsyms FILE    symbols from a kallsyms file (already relocated)\n"
		"      --btf FILE         BTF types: raw BTF, or an ELF file with a .BTF section\n"
		"                         (a vmlinux); default: the live kernel's\n"
		"                         /sys/kernel/btf/vmlinux, a dump's .BTF from its memory\n"
		"      --force            use the --btf, -m and --kallsyms files even if the dump\n"
		"                         disagrees with them, with a warning\n"
		"  -j, --json             print JSON (one document per command)\n"
		"  -h, --help             show this help; kpeek COMMAND --help for a command\n"
		"  -V, --version          show the version\n"
		"\n"
		"Commands (an unambiguous prefix is enough):\n");
	for (size_t i = 0; i < NCMDS; i++)
		fprintf(f, "  %-8s %s\n", cmds[i].name, cmds[i].summary);
	fprintf(f,
		"\n"
		"Every command takes --json and -h/--help.\n"
		"\n"
		"Exit status:\n"
		"  0  success: the whole answer (every command follows this rule), and\n"
		"     nothing found where a command looks for something\n"
		"  1  a finding, for the commands that look for one: check found something\n"
		"     suspicious, diff's values differ, vtop's address is not mapped, report\n"
		"     --strict's checks found something; a finding outranks an error\n"
		"  2  an error: one line on stderr says what and where (file, offset,\n"
		"     address or symbol); a bad input, a walk or stack that stopped before\n"
		"     its end, a usage error, output that could not be written\n"
		"  A command stopped by a signal exits with 128 plus the signal number.\n"
		"\n"
		"Examples:\n"
		"  kpeek info\n"
		"  kpeek -c vmcore sym avenrun\n"
		"  kpeek -c vmcore rd -w 8 -s init_task 64\n"
		"  kpeek print init_task.comm\n");
}

// ---------------------------------------------------------------- main

static int cmp_cmd_name(const void *a, const void *b)
{
	return strcmp((*(const struct cmd *const *)a)->name, (*(const struct cmd *const *)b)->name);
}

// The command called name, or the only one name is a prefix of. NULL if
// none; if several, NULL and *nfound > 1 of them in found[] by name.
static const struct cmd *find_cmd(const char *name, const struct cmd *found[NCMDS],
				  size_t *nfound)
{
	size_t n = strlen(name);
	*nfound = 0;
	for (size_t i = 0; i < NCMDS; i++) {
		if (strcmp(cmds[i].name, name) == 0)
			return &cmds[i];
		if (n && strncmp(cmds[i].name, name, n) == 0)
			found[(*nfound)++] = &cmds[i];
	}
	if (*nfound == 1)
		return found[0];
	qsort(found, *nfound, sizeof(*found), cmp_cmd_name);
	return NULL;
}

// "kpeek: ambiguous command 'l': list, loadavg or lsmod (see kpeek --help)",
// one line.
static int ambiguous(const char *name, const struct cmd *const *found, size_t n)
{
	fprintf(stderr, "kpeek: ambiguous command '%s': ", name);
	for (size_t i = 0; i < n; i++)
		fprintf(stderr, "%s%s", i == 0 ? "" : i + 1 < n ? ", " : " or ", found[i]->name);
	fprintf(stderr, " (see kpeek --help)\n");
	return 2;
}

// The exit status once stdout is flushed: 2 if the output could not be
// written, whatever the command found (a diff or a check whose report was
// lost gives no answer), except to a reader that went away (kpeek ps |
// head), which is no error.
static int finish(int status)
{
	if (fflush(stdout) != 0 || ferror(stdout)) {
		if (errno == EPIPE)
			return status;
		fprintf(stderr, "kpeek: error writing to stdout: %s\n", strerror(errno));
		return 2;
	}
	return status;
}

// The global options into cli: -1 to go on (the command is argv[optind]),
// else the exit status.
static int parse_global_options(struct cli *cli, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "core", required_argument, NULL, 'c' },
		{ "system-map", required_argument, NULL, 'm' },
		{ "kallsyms", required_argument, NULL, 'K' },
		{ "btf", required_argument, NULL, 'B' },
		{ "force", no_argument, NULL, 'F' },
		{ "raw", optional_argument, NULL, 'R' },
		{ "arch", required_argument, NULL, 'A' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	int c;
	opterr = 0;
	// '+': stop at the command name; its options are the command's.
	while ((c = getopt_long(argc, argv, "+:c:m:jhV", opts, NULL)) != -1) {
		switch (c) {
		case 'c':
			if (cli->open.ncores == sizeof(cli->cores) / sizeof(cli->cores[0])) {
				fprintf(stderr, "kpeek: more than %zu -c files\n", cli->open.ncores);
				return 2;
			}
			cli->cores[cli->open.ncores++] = optarg;
			cli->open.core = cli->cores[0];
			cli->open.cores = cli->cores;
			break;
		case 'm':
			cli->open.system_map = optarg;
			break;
		case 'K':
			cli->open.kallsyms = optarg;
			break;
		case 'B':
			cli->open.btf = optarg;
			break;
		case 'F':
			cli->open.force = true;
			break;
		case 'A':
			cli->open.arch = optarg;
			break;
		case 'R':
			cli->open.raw = true;
			if (optarg && !cli_parse_number(optarg, &cli->open.raw_base)) {
				fprintf(stderr, "kpeek: --raw=BASE needs a number, not '%s' (see kpeek --help)\n",
					optarg);
				return 2;
			}
			break;
		case 'j':
			cli->json = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case 'V':
			// The CLI's own version and the library's it runs with.
			printf("kpeek %s (libkpeek %s)\n", KPEEK_VERSION_STRING, kp_version());
			return 0;
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
	return -1;
}

int main(int argc, char **argv)
{
	struct cli cli = { .open.sz = sizeof(cli.open) };
	signal(SIGPIPE, SIG_IGN);
	if (isatty(STDOUT_FILENO))
		setvbuf(stdout, NULL, _IOLBF, 0);
	int status = parse_global_options(&cli, argc, argv);
	if (status >= 0)
		return finish(status);
	const struct cmd *found[NCMDS];
	size_t nfound;
	const struct cmd *cmd = find_cmd(argv[optind], found, &nfound);
	if (!cmd && nfound)
		return ambiguous(argv[optind], found, nfound);
	if (!cmd) {
		fprintf(stderr, "kpeek: unknown command '%s' (see kpeek --help)\n", argv[optind]);
		return 2;
	}
	char **cargv = argv + optind;
	int cargc = argc - optind;
	// Commands see their own name as argv[0], whatever prefix was typed.
	cargv[0] = (char *)cmd->name;
	optind = 0;	// reset getopt for the command
	const char *side[] = { cli.open.btf, cli.open.system_map, cli.open.kallsyms };
	for (size_t i = 0; cli.open.force && i < sizeof(side) / sizeof(side[0]); i++)
		if (side[i])
			fprintf(stderr, "kpeek: warning: --force: %s is used without checking it "
				"against the dump\n", side[i]);
	status = cmd->fn(&cli, cargc, cargv);
	kp_kernel_destroy(cli.kernel);
	return finish(status);
}
