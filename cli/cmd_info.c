// SPDX-License-Identifier: MIT
// kpeek info: what the memory source is and what kpeek made of it.
#include <unistd.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include "cli.h"
#include "output.h"

static void usage(void)
{
	printf("Usage: kpeek [-c CORE] info [--json]\n"
	       "Shows the memory source (kind, path), the kernel (release, banner), the\n"
	       "KASLR offset, the architecture's paging facts (x86-64: phys_base, paging\n"
	       "levels, page_offset_base, the kernel page table pgd; arm64: VA bits, page\n"
	       "size, paging levels, kimage_voffset, PHYS_OFFSET, PAGE_OFFSET, pgd, PAC\n"
	       "mask), the CPUs (possible and online as the kernel counts them, and those\n"
	       "whose registers the dump holds), the virtual and physical ranges the\n"
	       "source backs, where symbols came from and how many, and the BTF source.\n"
	       "BTF is loaded to report on it; if it cannot be, info says\n"
	       "\"BTF: unavailable (reason)\" and still succeeds.\n"
	       "\n"
	       "Exit status: 0 success (BTF unavailable too), 2 the source could not be\n"
	       "opened, a usage error or output that could not be written.\n"
	       "\n"
	       "Options:\n"
	       "  -j, --json   print one JSON object\n"
	       "  -h, --help   show this help\n"
	       "\n"
	       "Example:\n"
	       "  kpeek -c vmcore info\n");
}

static void ranges(struct out *o, struct kp_kernel *k, enum kp_space space)
{
	static const struct column text_cols[] = {
		{ "START", COL_HEX, false },
		{ "END", COL_HEX, false },
		{ "SIZE", COL_STR, false },
	};
	static const struct column json_cols[] = {
		{ "START", COL_HEX, false },
		{ "END", COL_HEX, false },
		{ "SIZE", COL_UINT, false },
	};
	const struct kp_range *r = NULL;
	size_t n = kp_kernel_ranges(k, space, &r);
	uint64_t total = 0;
	for (size_t i = 0; i < n; i++)
		total += r[i].end - r[i].start;
	char human[32];
	const char *name = space == KP_PHYS ? "Physical" : "Virtual";
	bool json = out_is_json(o);
	if (!n && !json) {
		out_text(o, "\n%s address ranges: none%s\n", name,
			 space == KP_VIRT ? " (translated through the page tables)" : "");
		return;
	}
	cli_human_size(total, human, sizeof(human));
	out_text(o, "\n%s address ranges (%zu, %s):\n", name, n, human);
	out_table_begin(o, space == KP_PHYS ? "physical_ranges" : "virtual_ranges",
			json ? json_cols : text_cols, 3);
	for (size_t i = 0; i < n; i++) {
		out_cell_hex(o, r[i].start);
		out_cell_hex(o, r[i].end);
		if (json) {
			out_cell_uint(o, r[i].end - r[i].start);
		} else {
			cli_human_size(r[i].end - r[i].start, human, sizeof(human));
			out_cell_str(o, human);
		}
	}
	out_table_end(o);
}

// The source, the kernel, VMCOREINFO and KASLR.
static void print_kernel(struct out *o, const struct kp_kernel_info *info)
{
	bool json = out_is_json(o);
	out_kv_str(o, json ? "source_kind" : "source", info->source_kind);
	out_kv_str(o, "path", info->path);
	// A split dump read as a set, or one of its parts alone.
	if (info->nfiles > 1)
		out_kv_uint(o, "parts", info->nfiles);
	if (info->split)
		out_kv_str(o, "split", info->split);
	out_kv_bool(o, "live", info->live);
	out_kv_str(o, "release", info->release);
	out_kv_str(o, "banner", info->banner);
	if (json)
		out_kv_str(o, "vmcoreinfo", info->has_vmcoreinfo ? info->vmcoreinfo_source : NULL);
	else
		out_kv_str(o, "vmcoreinfo", info->has_vmcoreinfo ? info->vmcoreinfo_source : "none");
	if (!json && info->has_kaslr_offset && info->kaslr_check) {
		char buf[256];
		snprintf(buf, sizeof(buf), "0x%" PRIx64 " (%s)", info->kaslr_offset, info->kaslr_check);
		out_kv_str(o, "KASLR offset", buf);
	} else {
		out_kv_hex_known(o, json ? "kaslr_offset" : "KASLR offset", info->has_kaslr_offset,
				 info->kaslr_offset);
	}
	if (json && info->kaslr_check)
		out_kv_str(o, "kaslr_check", info->kaslr_check);
}

// The architecture's own facts, in its order.
static void print_arch_facts(struct out *o, struct kp_kernel *k)
{
	bool json = out_is_json(o);
	struct kp_fact f;
	for (size_t i = 0; kp_kernel_arch_fact(k, i, &f); i++) {
		char key[64];
		snprintf(key, sizeof(key), "%s", f.key);
		for (char *p = key; json && *p; p++)
			*p = *p == ' ' ? '_' : *p;
		if (f.kind == KP_FACT_HEX)
			out_kv_hex_known(o, key, f.known, f.value);
		else if (f.kind == KP_FACT_STR)
			out_kv_str(o, key, f.known ? f.str : json ? NULL : "unknown");
		else
			out_kv_int_known(o, key, f.known, (int64_t)f.value);
	}
}

// The library's "kallsyms (memory, found in the image), vmcoreinfo" as a
// JSON list: split at ", " outside parentheses; the --kallsyms or
// System.map file given (a path may hold ", ") is one item whole.
static void symbol_sources(struct out *o, const char *s, const struct kp_open_options *opts)
{
	const char *files[] = { opts->kallsyms, opts->system_map };
	out_begin_list(o, "symbol_sources");
	while (s && *s) {
		size_t n = 0;
		for (size_t i = 0; i < 2 && !n; i++)
			if (files[i] && !strncmp(s, files[i], strlen(files[i])) &&
			    (!s[strlen(files[i])] || !strncmp(s + strlen(files[i]), ", ", 2)))
				n = strlen(files[i]);
		for (int depth = 0; !n || s[n]; n++) {
			if (!s[n] || (!depth && !strncmp(s + n, ", ", 2)))
				break;
			depth += s[n] == '(' ? 1 : s[n] == ')' && depth ? -1 : 0;
		}
		char item[128];
		snprintf(item, sizeof(item), "%.*s", (int)n, s);
		out_kv_str(o, NULL, item);
		s += n;
		s += !strncmp(s, ", ", 2) ? 2 : 0;
	}
	out_end_list(o);
}

// CPUs, symbols and BTF (btf_err: why it could not be loaded).
static void print_counts(struct out *o, const struct kp_kernel_info *info,
			 const struct kp_error *btf_err, const struct kp_open_options *opts)
{
	if (out_is_json(o)) {
		out_kv_int_known(o, "possible_cpus", info->possible_cpus, info->possible_cpus);
		out_kv_int_known(o, "online_cpus", info->online_cpus, info->online_cpus);
		out_kv_int(o, "cpu_notes", info->ncpus);
		symbol_sources(o, info->symbol_sources, opts);
		out_kv_uint(o, "symbols", info->num_symbols);
		out_begin_object(o, "btf");
		out_kv_bool(o, "available", !btf_err);
		if (btf_err) {
			out_kv_str(o, "error", kp_error_message(btf_err));
		} else {
			out_kv_str(o, "source", info->btf_source);
			out_kv_uint(o, "types", info->btf_types);
		}
		out_end_object(o);
		return;
	}
	char buf[1024], possible[16] = "?", online[16] = "?";
	if (info->possible_cpus)
		snprintf(possible, sizeof(possible), "%u", info->possible_cpus);
	if (info->online_cpus)
		snprintf(online, sizeof(online), "%u", info->online_cpus);
	int n = snprintf(buf, sizeof(buf), "%s possible, %s online", possible, online);
	if (!info->live)
		snprintf(buf + n, sizeof(buf) - n, ", %d with registers in the dump's notes",
			 info->ncpus);
	out_kv_str(o, "CPUs", buf);
	snprintf(buf, sizeof(buf), "%zu (%s)", info->num_symbols,
		 info->symbol_sources && *info->symbol_sources ? info->symbol_sources : "none");
	out_kv_str(o, "symbols", buf);
	if (btf_err)
		snprintf(buf, sizeof(buf), "unavailable (%s)", kp_error_message(btf_err));
	else
		snprintf(buf, sizeof(buf), "%zu types from %s", info->btf_types,
			 info->btf_source ? info->btf_source : "?");
	out_kv_str(o, "BTF", buf);
}

// What a kpeek snapshot of this memory could not read from its own source.
static void lost(struct out *o, const struct kp_kernel_info *info)
{
	uint64_t bytes = 0;
	for (size_t i = 0; i < info->nlost; i++)
		bytes += info->lost[i].end - info->lost[i].start;
	if (out_is_json(o)) {
		out_begin_list(o, "lost");
		for (size_t i = 0; i < info->nlost; i++) {
			out_begin_object(o, NULL);
			out_kv_hex(o, "start", info->lost[i].start);
			out_kv_hex(o, "end", info->lost[i].end);
			out_end_object(o);
		}
		out_end_list(o);
		return;
	}
	if (!info->nlost)
		return;
	char b[32], line[160];
	cli_human_size(bytes, b, sizeof(b));
	snprintf(line, sizeof(line), "%s in %zu range%s (physical 0x%" PRIx64 "-0x%" PRIx64 "%s), "
		 "unreadable in the snapshot's source", b, info->nlost, info->nlost == 1 ? "" : "s",
		 info->lost[0].start, info->lost[0].end, info->nlost > 1 ? ", ..." : "");
	out_kv_str(o, "lost", line);
}

int cmd_info(struct cli *cli, int argc, char **argv)
{
	int opt_status = cli_json_help_options(cli, "info", argc, argv, usage);
	if (opt_status >= 0)
		return opt_status;
	if (optind < argc)
		return cli_usage_error("info", "unexpected argument '%s'", argv[optind]);

	struct kp_kernel *k = cli_kernel(cli);
	if (!k)
		return CLI_EXIT_ERROR;
	struct kp_error *btf_err = kp_kernel_load_btf(k);
	KP_INIT(kp_kernel_info, info);
	kp_kernel_get_info(k, &info);

	struct out *o = out_create(cli->json);
	print_kernel(o, &info);
	print_arch_facts(o, k);
	print_counts(o, &info, btf_err, &cli->open);
	kp_error_destroy(btf_err);
	cli_disagreements(o, k, "DISAGREES");
	lost(o, &info);
	ranges(o, k, KP_VIRT);
	ranges(o, k, KP_PHYS);
	out_destroy(o);
	return 0;
}
