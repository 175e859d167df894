// SPDX-License-Identifier: MIT
// kpeek snapshot: copies the source's physical memory into a new dump (ELF,
// kdump or a flattened stream: kp_snapshot_write, kp_snapshot_write_fd),
// with a progress bar and clean Ctrl-C handling.
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "cli.h"
#include "output.h"

static volatile sig_atomic_t stop_signal;

static void on_signal(int sig)
{
	stop_signal = sig;
}

static void usage(void)
{
	printf("Usage: kpeek [-c CORE] snapshot -o FILE|- [--format elf|kdump|flattened]\n"
	       "                        [--compress zlib|zstd|none] [--quiet] [--allow-holes] [--json]\n"
	       "Copies the physical memory of the source (the live kernel's System RAM\n"
	       "from /proc/kcore by default, or any dump opened with -c) into a new dump\n"
	       "that kpeek -c, crash and drgn can read. The ELF vmcore (the default) has\n"
	       "one PT_LOAD per RAM range (p_paddr physical, p_vaddr the direct-map\n"
	       "address) and a PT_NOTE with VMCOREINFO and the CPU notes; its all-zero\n"
	       "pages are not written: the file is sparse. The kdump format is\n"
	       "makedumpfile's (each page compressed, zero pages shared); flattened is\n"
	       "the same as a stream of records that never seeks, what `-o -` writes to\n"
	       "standard output (never a terminal): `| ssh host 'cat > live.flat'`, or\n"
	       "`| makedumpfile -R live.kdump` to make it a standard kdump file.\n"
	       "FILE must not exist; it is created with mode 0600 and appears only\n"
	       "when complete (the data goes to FILE.tmp-XXXXXX, removed on error or Ctrl-C).\n"
	       "Pages the source cannot give (a filtered dump's excluded pages, a damaged\n"
	       "one's) are never copied as data: the snapshot lists them as lost (a note\n"
	       "kpeek reads back: reading them later fails and names them), and without\n"
	       "--allow-holes the command says how many and exits 2.\n"
	       "\n"
	       "Exit status: 0 success, 2 an error reading the source (FILE is not created;\n"
	       "a stream is cut short, without its end marker), pages lost without\n"
	       "--allow-holes (the snapshot is complete, the lost pages listed in it), a\n"
	       "usage error, output that could not be created or written (a missing folder,\n"
	       "a full disk, a closed pipe, a file size limit; FILE is not created), 128+N\n"
	       "stopped by signal N (Ctrl-C, SIGTERM, SIGHUP...; FILE is not created).\n"
	       "\n"
	       "Options:\n"
	       "  -o, --output FILE   the dump to create (required); - for standard output\n"
	       "                      (the flattened format)\n"
	       "  -f, --format FMT    elf (default for a FILE), kdump or flattened\n"
	       "      --compress ALG  the kdump formats' pages: zlib (default), zstd or none\n"
	       "  -q, --quiet         no progress bar and no summary\n"
	       "      --allow-holes   pages the source cannot give are not an error\n"
	       "  -j, --json          print the summary as JSON: {\"file\", \"format\",\n"
	       "                      \"ranges\", \"bytes\", \"data_bytes\", \"zero_bytes\",\n"
	       "                      \"unreadable_bytes\", \"lost_ranges\", \"file_size\",\n"
	       "                      \"disk_bytes\", \"seconds\"} (to standard error with -o -)\n"
	       "  -h, --help          show this help\n"
	       "\n"
	       "Examples:\n"
	       "  kpeek snapshot -o /var/tmp/live.vmcore\n"
	       "  kpeek -c vmcore.kdump snapshot -q -o vmcore.elf\n"
	       "  kpeek snapshot -q -o - | zstd > live.flat.zst\n"
	       "  kpeek snapshot -o - | makedumpfile -R live.kdump\n");
}

struct progress {
	double start, last;
	bool shown;
};

static void show_progress(uint64_t done, uint64_t total, void *arg)
{
	struct progress *p = arg;
	double t = cli_monotonic();
	// At most ~10 updates a second, and always the last one.
	if (done < total && t - p->last < 0.1)
		return;
	p->last = t;
	double elapsed = t - p->start;
	double rate = elapsed > 0 ? (double)done / elapsed : 0;
	char d[32], tot[32], eta[32] = "--:--";
	cli_human_size(done, d, sizeof(d));
	cli_human_size(total, tot, sizeof(tot));
	if (rate > 0 && done > 0) {
		uint64_t s = (uint64_t)((double)(total - done) / rate + 0.5);
		snprintf(eta, sizeof(eta), "%" PRIu64 ":%02" PRIu64, s / 60, s % 60);
	}
	int pct = total ? (int)(done * 100 / total) : 100;
	char bar[21];
	for (int i = 0; i < 20; i++)
		bar[i] = i < pct / 5 ? '#' : '.';
	bar[20] = '\0';
	fprintf(stderr, "\r\033[K[%s] %3d%%  %s / %s  %.1f MB/s  ETA %s", bar, pct, d, tot,
		rate / 1e6, eta);
	fflush(stderr);
	p->shown = true;
}

// The names of the formats and compressions, by their enum values.
static const char *const formats[] = { "elf", "kdump", "flattened", NULL };
static const char *const compressions[] = { "zlib", "zstd", "none", NULL };

static int lookup(const char *const *names, const char *name)
{
	for (int i = 0; names[i]; i++)
		if (strcmp(names[i], name) == 0)
			return i;
	return -1;
}

// -1 to go on, else the exit status.
static int parse_options(struct cli *cli, int argc, char **argv, struct kp_snapshot_options *so,
			 const char **output, bool *quiet, bool *allow_holes)
{
	static const struct option opts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "allow-holes", no_argument, NULL, 'H' },
		{ "format", required_argument, NULL, 'f' },
		{ "compress", required_argument, NULL, 'C' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c, f;
	bool format = false;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":o:qf:jh", opts, NULL)) != -1) {
		switch (c) {
		case 'o': *output = optarg; break;
		case 'q': *quiet = true; break;
		case 'H': *allow_holes = true; break;
		case 'f':
			if ((f = lookup(formats, optarg)) < 0)
				return cli_usage_error("snapshot", "unknown format '%s' (elf, kdump or flattened)",
						       optarg);
			so->format = (enum kp_snapshot_format)f;
			format = true;
			break;
		case 'C':
			if ((f = lookup(compressions, optarg)) < 0)
				return cli_usage_error("snapshot", "unknown compression '%s' (zlib, zstd or none)",
						       optarg);
			so->compression = (enum kp_snapshot_compression)f;
			break;
		case 'j': cli->json = true; break;
		case 'h': usage(); return 0;
		default: return cli_bad_option("snapshot", c, argv);
		}
	}
	if (optind < argc)
		return cli_usage_error("snapshot", "unexpected argument '%s'", argv[optind]);
	if (!*output)
		return cli_usage_error("snapshot", "no output file (-o FILE)");
	if (strcmp(*output, "-") == 0) {
		if (format && so->format != KP_SNAPSHOT_FLATTENED)
			return cli_usage_error("snapshot", "-o - writes the flattened format only "
					       "(the others seek)");
		so->format = KP_SNAPSHOT_FLATTENED;
		if (isatty(STDOUT_FILENO))
			return cli_usage_error("snapshot", "-o -: standard output is a terminal");
	}
	return -1;
}

// Every signal whose default action ends the process stops the write
// instead, so FILE.tmp-XXXXXX (memory contents) never stays behind.
static const int stops[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE, SIGALRM,
			     SIGUSR1, SIGUSR2, SIGVTALRM, SIGPROF };
enum { NSTOPS = sizeof(stops) / sizeof(stops[0]) };

struct saved_signals {
	struct sigaction old[NSTOPS], xfsz;
};

static void catch_signals(struct saved_signals *saved)
{
	// No SA_RESTART: a blocked read or write returns and the flag is seen.
	struct sigaction sa = { .sa_handler = on_signal };
	sigemptyset(&sa.sa_mask);
	for (int i = 0; i < NSTOPS; i++)
		sigaction(stops[i], &sa, &saved->old[i]);
	// A write past RLIMIT_FSIZE raises SIGXFSZ, whose default action kills
	// the process and leaves FILE.tmp-XXXXXX behind. Ignored, the write
	// fails with EFBIG instead: one error naming the file, temp file removed.
	struct sigaction ign = { .sa_handler = SIG_IGN };
	sigemptyset(&ign.sa_mask);
	sigaction(SIGXFSZ, &ign, &saved->xfsz);
}

static void restore_signals(const struct saved_signals *saved)
{
	for (int i = 0; i < NSTOPS; i++)
		sigaction(stops[i], &saved->old[i], NULL);
	sigaction(SIGXFSZ, &saved->xfsz, NULL);
}

static void print_summary(struct out *o, const char *output, enum kp_snapshot_format format,
			  const struct kp_snapshot_stats *st, double seconds)
{
	struct stat sb;
	bool stream = strcmp(output, "-") == 0;
	bool disk_known = !stream && stat(output, &sb) == 0;
	uint64_t disk = disk_known ? (uint64_t)sb.st_blocks * 512 : 0;
	if (out_is_json(o)) {
		out_kv_str(o, "file", output);
		out_kv_str(o, "format", formats[format]);
		out_kv_uint(o, "ranges", st->ranges);
		out_kv_uint(o, "bytes", st->bytes);
		out_kv_uint(o, "data_bytes", st->data_bytes);
		out_kv_uint(o, "zero_bytes", st->zero_bytes);
		out_kv_uint(o, "unreadable_bytes", st->unreadable_bytes);
		out_kv_uint(o, "lost_ranges", st->lost_ranges);
		out_kv_uint(o, "file_size", st->file_size);
		out_kv_int_known(o, "disk_bytes", disk_known, (int64_t)disk);	// a stream has none
		char secs[32];
		snprintf(secs, sizeof(secs), "%.3f", seconds);
		out_kv_json(o, "seconds", secs, secs);
		return;
	}
	char b[32], d[32], z[32], du[32];
	cli_human_size(st->bytes, b, sizeof(b));
	cli_human_size(st->data_bytes, d, sizeof(d));
	cli_human_size(st->zero_bytes, z, sizeof(z));
	cli_human_size(disk, du, sizeof(du));
	if (format == KP_SNAPSHOT_ELF)
		out_text(o, "%s: %s of memory in %" PRIu64 " range%s, %s written, %s of zero "
			 "pages left as holes (%s on disk), %.1f s\n", output, b, st->ranges,
			 st->ranges == 1 ? "" : "s", d, z, du, seconds);
	else {
		char fs[32];
		cli_human_size(st->file_size, fs, sizeof(fs));
		out_text(o, "%s: %s of memory in %" PRIu64 " range%s (%s), %s of data and %s of zero "
			 "pages in %s, %.1f s\n", stream ? "standard output" : output, b, st->ranges,
			 st->ranges == 1 ? "" : "s", formats[format], d, z, fs, seconds);
	}
	if (st->unreadable_bytes) {
		char u[32];
		cli_human_size(st->unreadable_bytes, u, sizeof(u));
		out_text(o, "%s: %s in %" PRIu64 " range%s could not be read from the source: "
			 "listed in it as lost\n", output, u, st->lost_ranges,
			 st->lost_ranges == 1 ? "" : "s");
	}
}

int cmd_snapshot(struct cli *cli, int argc, char **argv)
{
	const char *output = NULL;
	bool quiet = false, allow_holes = false;
	KP_OPTS(kp_snapshot_options, so, .format = KP_SNAPSHOT_ELF);
	int status = parse_options(cli, argc, argv, &so, &output, &quiet, &allow_holes);
	if (status >= 0)
		return status;
	struct kp_kernel *k = cli_kernel(cli);
	if (!k)
		return CLI_EXIT_ERROR;

	struct progress prog = { .start = cli_monotonic() };
	if (!quiet && isatty(STDERR_FILENO)) {
		so.progress = show_progress;
		so.arg = &prog;
	}
	so.cancel = &stop_signal;
	struct saved_signals saved;
	catch_signals(&saved);
	KP_INIT(kp_snapshot_stats, st);
	bool stream = strcmp(output, "-") == 0;
	struct kp_error *err = stream ? kp_snapshot_write_fd(k, STDOUT_FILENO, "standard output", &so, &st)
				      : kp_snapshot_write(k, output, &so, &st);
	restore_signals(&saved);
	double seconds = cli_monotonic() - prog.start;
	if (prog.shown) {
		fputs(err ? "\n" : "\r\033[K", stderr);
		fflush(stderr);
	}
	if (err) {
		int sig = stop_signal;
		status = cli_error(err);
		return sig ? 128 + sig : status;
	}
	if (!quiet || cli->json) {
		// The summary of a stream goes where the progress bar went.
		struct out *o = stream ? out_create_file(cli->json, stderr) : out_create(cli->json);
		print_summary(o, output, so.format, &st, seconds);
		out_destroy(o);
	}
	if (st.lost_ranges && !allow_holes)
		return cli_fail("snapshot: %" PRIu64 " bytes in %" PRIu64 " range%s of the source could not be read "
				"(listed in %s as lost; --allow-holes accepts that)", st.unreadable_bytes,
				st.lost_ranges, st.lost_ranges == 1 ? "" : "s",
				stream ? "the stream" : output);
	return 0;
}
