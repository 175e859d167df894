// SPDX-License-Identifier: MIT
// Shared state of the kpeek CLI, the command table entries and the helpers
// every command shares (cli.c).
#ifndef KPEEK_CLI_H
#define KPEEK_CLI_H

#include <stdbool.h>
#include <kpeek/kpeek.h>

struct cli {
	struct kp_open_options open;	// from global options -c/-m/--kallsyms/--btf
	// Every -c: more than one are the parts of a split dump (open.cores).
	const char *cores[256];
	bool json;			// --json (global or per command)
	struct kp_kernel *kernel;	// opened on first cli_kernel()
};

// The exit statuses, one rule for every command (kpeek --help).
enum {
	CLI_EXIT_OK = 0,	// success; no finding
	// A finding, where the command looks for one: check found something
	// suspicious, diff's values differ, vtop's address is not mapped,
	// report --strict's checks found something.
	CLI_EXIT_FINDING = 1,
	// Any error: usage, a file, a read, a walk that stopped before its
	// end, output that could not be written.
	CLI_EXIT_ERROR = 2,
};

struct cmd {
	const char *name;
	int (*fn)(struct cli *cli, int argc, char **argv);	// argv[0] = command name
	const char *summary;	// one line for `kpeek --help`
};

// Opens the kernel named by the global options (once). On failure prints the
// error and returns NULL; the command then returns cli_fail().
struct kp_kernel *cli_kernel(struct cli *cli);
// Prints "kpeek: MESSAGE" on stderr, destroys err, returns CLI_EXIT_ERROR.
int cli_error(struct kp_error *err);
// The same with "PREFIX: " before the message.
int cli_error_prefix(struct kp_error *err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
// Prints "kpeek: formatted message" on stderr, returns CLI_EXIT_ERROR (a failure that
// is not the library's: bad input found by the CLI, out of memory).
int cli_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
// Prints "kpeek CMD: formatted message" on stderr, returns CLI_EXIT_ERROR
// (usage error).
int cli_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
// Parses a number (0x hex, decimal) or SYMBOL[+-OFFSET] into a virtual
// address: 0, or the exit status after printing why not.
int cli_parse_address(struct cli *cli, const char *arg, uint64_t *ret);
// Option parsing of the commands whose only options are -j/--json and
// -h/--help: returns -1 to go on (operands start at optind), else the exit
// status the command returns (0 after printing usage, 2 for a bad option).
int cli_json_help_options(struct cli *cli, const char *cmd, int argc, char **argv,
			  void (*print_usage)(void));
// The same for commands that print values (print, diff): also -x/--hex and
// --one-line, returned as KP_FORMAT_* flags. Options end at the first
// operand, so an expression such as -1 is not taken for one.
int cli_format_options(struct cli *cli, const char *cmd, int argc, char **argv,
		       void (*print_usage)(void), unsigned *flags_ret);
// After getopt_long() returned '?' or ':' (opterr = 0): prints the one-line
// usage error for cmd and returns 2.
int cli_bad_option(const char *cmd, int c, char **argv);
// Parses an unsigned number: 0x hex or decimal, nothing else.
bool cli_parse_number(const char *arg, uint64_t *ret);
// Whether the len bytes at s can be a symbol name: a C identifier, '.'
// (foo.cold, foo.isra.0) and '$' allowed.
bool cli_is_symbol_name(const char *s, size_t len);
// The NUL-separated words of buf[0, len) (a /proc/PID/cmdline) as one line
// a shell would read back as those words: a word of only safe characters
// as it is, any other in single quotes. Malloc'ed; NULL on out of memory.
char *cli_shell_words(const char *buf, size_t len);
// "512 MiB", "1.5 GiB", "4 KiB", "100 B".
void cli_human_size(uint64_t bytes, char *buf, size_t size);
// A command about processes given by PID (pids.c): `kpeek NAME [--json]
// PID...`, with several PIDs a block each ("PID:" before it in text, an
// object in a list under "processes" in JSON, "pid" in each).
struct out;
struct cli_pid_cmd {
	const char *name;	// "maps"
	const char *key;	// the JSON key of a block's answer, null for a PID in error
	void (*usage)(void);
	// Prints the answer for the task; its exit status (1 after an error
	// line, the JSON key then null).
	int (*one)(struct kp_kernel *kernel, struct out *o, int32_t pid, uint64_t task);
};
int cli_pid_command(struct cli *cli, const struct cli_pid_cmd *cmd, int argc, char **argv);
// How a walk of kernel objects ended (walk.c): the iterator's status and
// its last word (an error, owned, NULL if none).
struct cli_walk {
	struct kp_walk_status st;
	struct kp_error *err;
	bool at_limit;	// err is the command's own limit, not the object's fault
};
struct out;
// Whether the listing is the whole answer (a complete walk).
bool cli_walk_complete(const struct cli_walk *w);
// JSON fields beside a listing: "complete", and when false "reason"
// ("live-changed", "unreadable", "corrupt", "limit" or "error"), "error" (the
// message, null for a live kernel's change), "left_out" and "restarts".
void cli_walk_json(struct out *o, const struct cli_walk *w);
// After the listing: a walk that stopped prints "kpeek: CMD: incomplete:
// ERROR" and returns CLI_EXIT_ERROR (w->err is consumed); a live kernel's change prints
// one line saying the list (of objects, "tasks") may miss some and
// returns 0; a complete walk prints nothing and returns 0.
int cli_walk_end(const char *cmd, const char *objects, struct cli_walk *w);
// Every task the iterator yields (threads too with threads), in list order,
// malloc'ed, and how the walk ended in *walk: what came before an error is
// returned with it. An error before any task is returned.
struct kp_error *cli_collect_tasks(struct kp_kernel *k, bool threads, struct kp_task **ret,
				   size_t *n_ret, struct cli_walk *walk);
// A task's memory sizes (kp_task_mem()) into ret: true; false with *err_ret
// NULL for a kernel thread or a task whose memory is gone (it has none, as
// /proc shows it), false with the error for one that could not be read.
bool cli_task_mem(struct kp_kernel *k, uint64_t task, struct kp_task_mem *ret, struct kp_error **err_ret);
// A printk time as the kernel prints it: seconds and microseconds, "12.345678".
void cli_seconds(uint64_t ns, char *buf, size_t size);
// Seconds on the monotonic clock (durations, rates).
double cli_monotonic(void);

// A frame as "name+0xoff/0xsize [module]" (the kernel's %pB: a return
// address is named by the call before it), its pc if no symbol has it; and
// as a JSON object {"pc", "sp", "symbol", ...} in a list (frames.c).
struct kp_frame;
void cli_frame_name(struct kp_kernel *k, const struct kp_frame *f, char *buf, size_t size);
void cli_frame_json(struct kp_kernel *k, struct out *o, const struct kp_frame *f);
// One fact of kp_whatis as whatis prints it: "  kind  ..." lines in text, an
// object in a list in JSON (cmd_whatis.c).
struct kp_whatis_fact;
void cli_whatis_fact(struct out *o, struct kp_kernel *k, const struct kp_whatis_fact *f);
int cmd_info(struct cli *cli, int argc, char **argv);
int cmd_sym(struct cli *cli, int argc, char **argv);
int cmd_rd(struct cli *cli, int argc, char **argv);
int cmd_print(struct cli *cli, int argc, char **argv);
int cmd_type(struct cli *cli, int argc, char **argv);
int cmd_vtop(struct cli *cli, int argc, char **argv);
int cmd_ps(struct cli *cli, int argc, char **argv);
int cmd_env(struct cli *cli, int argc, char **argv);
int cmd_maps(struct cli *cli, int argc, char **argv);
int cmd_files(struct cli *cli, int argc, char **argv);
int cmd_status(struct cli *cli, int argc, char **argv);
int cmd_mount(struct cli *cli, int argc, char **argv);
int cmd_irq(struct cli *cli, int argc, char **argv);
int cmd_runq(struct cli *cli, int argc, char **argv);
int cmd_meminfo(struct cli *cli, int argc, char **argv);
int cmd_slabinfo(struct cli *cli, int argc, char **argv);
int cmd_slab(struct cli *cli, int argc, char **argv);
int cmd_search(struct cli *cli, int argc, char **argv);
int cmd_page(struct cli *cli, int argc, char **argv);
int cmd_whatis(struct cli *cli, int argc, char **argv);
int cmd_net(struct cli *cli, int argc, char **argv);
int cmd_sockets(struct cli *cli, int argc, char **argv);
int cmd_lsmod(struct cli *cli, int argc, char **argv);
int cmd_loadavg(struct cli *cli, int argc, char **argv);
int cmd_panic(struct cli *cli, int argc, char **argv);
int cmd_report(struct cli *cli, int argc, char **argv);
int cmd_bt(struct cli *cli, int argc, char **argv);
int cmd_dmesg(struct cli *cli, int argc, char **argv);
int cmd_watch(struct cli *cli, int argc, char **argv);
int cmd_check(struct cli *cli, int argc, char **argv);
int cmd_list(struct cli *cli, int argc, char **argv);
int cmd_snapshot(struct cli *cli, int argc, char **argv);
int cmd_diff(struct cli *cli, int argc, char **argv);

// A page's struct page in one line ("page 0x... flags slab,head refcount 1
// type slab cache kmalloc-256"), and as JSON members (cmd_page.c).
void cli_page_summary(const struct kp_page *p, char *buf, size_t size);
void cli_page_json(struct out *o, const struct kp_page *p);
// Facts the source states twice that disagree (kp_kernel_disagreements()):
// JSON "disagreements": [...]; in text, "key: ..." lines (or "facts: ..."
// lines when key is NULL).
void cli_disagreements(struct out *o, struct kp_kernel *k, const char *key);

#endif
