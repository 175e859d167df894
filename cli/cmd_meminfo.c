// SPDX-License-Identifier: MIT
// kpeek meminfo: /proc/meminfo as the kernel would have printed it.
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "output.h"

static void usage(void)
{
	printf("Usage: kpeek [-c CORE] meminfo [--json]\n"
	       "Prints the lines of /proc/meminfo kpeek can compute for the kernel, in\n"
	       "its order and format, from the kernel's own counters (vm_node_stat,\n"
	       "vm_zone_stat, _totalram_pages, the swap and overcommit variables, the\n"
	       "zones' watermarks for MemAvailable, the block devices' page cache for\n"
	       "Buffers, hstates for the HugePages lines), computed as that kernel\n"
	       "version does. A line whose inputs the kernel does not have (CmaTotal\n"
	       "without CONFIG_CMA) or kpeek cannot read is left out, never shown as 0;\n"
	       "VmallocTotal, the zswap, transparent huge page and DirectMap lines are\n"
	       "not computed.\n"
	       "\n"
	       "Exit status: 0 success, 2 an error (one line on stderr says what and where),\n"
	       "a usage error or output that could not be written.\n"
	       "\n"
	       "Options:\n"
	       "  -j, --json   {\"meminfo\": {\"MemTotal\": N, ...}} (kB, or a count for\n"
	       "               HugePages_*)\n"
	       "  -h, --help   show this help\n"
	       "\n"
	       "Examples:\n"
	       "  kpeek -c vmcore meminfo\n"
	       "  kpeek meminfo --json\n");
}

int cmd_meminfo(struct cli *cli, int argc, char **argv)
{
	int opt_status = cli_json_help_options(cli, "meminfo", argc, argv, usage);
	if (opt_status >= 0)
		return opt_status;
	if (optind < argc)
		return cli_usage_error("meminfo", "unexpected argument '%s'", argv[optind]);
	struct kp_kernel *k = cli_kernel(cli);
	if (!k)
		return CLI_EXIT_ERROR;
	struct kp_meminfo *mi;
	struct kp_error *err = kp_meminfo_create(k, &mi);
	if (err)
		return cli_error_prefix(err, "meminfo");
	struct out *o = out_create(cli->json);
	if (out_is_json(o))
		out_begin_object(o, "meminfo");
	for (size_t i = 0; i < mi->n; i++) {
		const struct kp_meminfo_item *it = &mi->items[i];
		if (out_is_json(o)) {
			out_kv_uint(o, it->name, it->value);
			continue;
		}
		// fs/proc/meminfo.c: "Name:" padded to 16 columns and the value
		// in 8; the longer names (HardwareCorrupted, HugePages_*) to 19
		// and 5.
		char label[32];
		snprintf(label, sizeof(label), "%s:", it->name);
		bool wide = strlen(label) > 15 || !it->kb;
		out_text(o, "%-*s%*" PRIu64 "%s\n", wide ? 19 : 16, label, wide ? 5 : 8, it->value,
			 it->kb ? " kB" : "");
	}
	if (out_is_json(o))
		out_end_object(o);
	out_destroy(o);
	kp_meminfo_destroy(mi);
	return 0;
}
