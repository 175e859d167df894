// SPDX-License-Identifier: MIT
// kpeek irq: the interrupt descriptors, as /proc/interrupts.
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "output.h"

static void usage(void)
{
	printf("Usage: kpeek [-c CORE] irq [-a] [--json]\n"
	       "Prints the interrupt descriptors as /proc/interrupts does: the IRQ number,\n"
	       "its count on each CPU below nr_cpu_ids (desc->kstat_irqs), the chip's\n"
	       "name (None without a chip), the hardware IRQ number in its domain, the\n"
	       "flow handler's name (-edge, -fasteoi) and the names of the handlers\n"
	       "(irqaction). Like /proc/interrupts, a descriptor with no handler (or\n"
	       "only a chained one) and no count, or one the kernel hides (IRQ_HIDDEN:\n"
	       "arm64's IPIs) is left out unless -a is given. A chip that prints its\n"
	       "own name (GICv2's \"GIC-0\") is shown as \"-\": kpeek names the function\n"
	       "in JSON (chip_print); JSON's chip is null for a chip without a name or\n"
	       "no chip (has_chip false). The architecture's own lines\n"
	       "(NMI, LOC, ...) are not interrupt descriptors and are not shown.\n"
	       "\n"
	       "Exit status: 0 success, 2 an error or an incomplete listing (one line on\n"
	       "stderr), a usage error or output that could not be written.\n"
	       "\n"
	       "Options:\n"
	       "  -a, --all       every descriptor, also those without handler and count\n"
	       "  -j, --json      {\"cpus\": N, \"irqs\": [{irq, counts, total, chip,\n"
	       "                  has_chip, chip_print, hwirq, handler, name, actions, hidden,\n"
	       "                  chained, desc}], \"complete\": bool}; name\n"
	       "                  is the handlers' names as one string (\"a, b\")\n"
	       "  -h, --help      show this help\n"
	       "\n"
	       "Examples:\n"
	       "  kpeek -c vmcore irq\n"
	       "  kpeek irq -j | jq '.irqs[] | select(.total > 1000)'\n");
}

// The field width of IRQ numbers (show_interrupts(): 3 digits or more).
static int precision(uint32_t nr_irqs)
{
	int prec = 3;
	for (uint64_t j = 1000; prec < 10 && j <= nr_irqs; j *= 10)
		prec++;
	return prec;
}

static void text_line(struct out *o, const struct kp_irq *q, int prec)
{
	out_text(o, "%*u: ", prec, q->irq);
	for (uint32_t c = 0; c < q->ncpus; c++)
		out_text(o, "%10" PRIu64 " ", q->counts[c]);
	out_text(o, " %8s", q->chip ? q->chip : "None");
	if (q->has_hwirq)
		out_text(o, " %*" PRIu64, prec, q->hwirq);
	else
		out_text(o, " %*s", prec, "");
	if (q->handler)
		out_text(o, "-%-8s", q->handler);
	for (size_t i = 0; i < q->nactions; i++)
		out_text(o, "%s%s", i ? ", " : "  ", q->actions[i]);
	out_text(o, "\n");
}

static void json_line(struct out *o, const struct kp_irq *q)
{
	out_begin_object(o, NULL);
	out_kv_uint(o, "irq", q->irq);
	out_begin_list(o, "counts");
	for (uint32_t c = 0; c < q->ncpus; c++)
		out_kv_uint(o, NULL, q->counts[c]);
	out_end_list(o);
	out_kv_uint(o, "total", q->total);
	// The kernel prints "-" for a chip without a name: JSON says null, and
	// has_chip tells it from no chip at all ("None").
	out_kv_str(o, "chip", q->chip && strcmp(q->chip, "-") ? q->chip : NULL);
	out_kv_bool(o, "has_chip", q->chip != NULL);
	out_kv_str(o, "chip_print", q->chip_print);
	if (q->has_hwirq)
		out_kv_uint(o, "hwirq", q->hwirq);
	else
		out_kv_str(o, "hwirq", NULL);
	out_kv_str(o, "handler", q->handler);
	size_t len = 1;
	for (size_t i = 0; i < q->nactions; i++)
		len += strlen(q->actions[i]) + 2;
	char *name = malloc(len);
	if (name) {
		name[0] = '\0';
		for (size_t i = 0; i < q->nactions; i++) {
			if (i)
				strcat(name, ", ");
			strcat(name, q->actions[i]);
		}
	}
	out_kv_str(o, "name", name);
	free(name);
	out_begin_list(o, "actions");
	for (size_t i = 0; i < q->nactions; i++)
		out_kv_str(o, NULL, q->actions[i]);
	out_end_list(o);
	out_kv_bool(o, "hidden", q->hidden);
	out_kv_bool(o, "chained", q->chained);
	out_kv_hex(o, "desc", q->desc);
	out_end_object(o);
}

static int options(struct cli *cli, int argc, char **argv, bool *all_ret)
{
	static const struct option opts[] = {
		{ "all", no_argument, NULL, 'a' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":ajh", opts, NULL)) != -1) {
		switch (c) {
		case 'a':
			*all_ret = true;
			break;
		case 'j':
			cli->json = true;
			break;
		case 'h':
			usage();
			return 0;
		default:
			return cli_bad_option("irq", c, argv);
		}
	}
	if (optind < argc)
		return cli_usage_error("irq", "unexpected argument '%s'", argv[optind]);
	return -1;
}

int cmd_irq(struct cli *cli, int argc, char **argv)
{
	bool all = false;
	int status = options(cli, argc, argv, &all);
	if (status >= 0)
		return status;
	struct kp_kernel *k = cli_kernel(cli);
	if (!k)
		return CLI_EXIT_ERROR;
	struct kp_irq_iter *it;
	struct kp_error *err = kp_irq_iter_create(k, &it);
	if (err)
		return cli_error_prefix(err, "irq");
	struct out *o = out_create(cli->json);
	const struct kp_irq *q;
	bool header = false;
	uint32_t ncpus = 0;
	int prec = 3;
	if (out_is_json(o))
		out_begin_list(o, "irqs");
	while (!(err = kp_irq_iter_next(it, &q)) && q) {
		if (!all && !kp_irq_shown(q))
			continue;
		ncpus = q->ncpus;
		if (out_is_json(o)) {
			json_line(o, q);
			continue;
		}
		if (!header) {
			prec = precision(q->nr_irqs);
			out_text(o, "%*s", prec + 8, "");
			for (uint32_t c = 0; c < q->ncpus; c++)
				out_text(o, "CPU%-8u", c);
			out_text(o, "\n");
			header = true;
		}
		text_line(o, q, prec);
	}
	struct cli_walk w = { .st = { .sz = sizeof(w.st) }, .err = err };
	kp_irq_iter_status(it, &w.st);
	kp_irq_iter_destroy(it);
	if (out_is_json(o)) {
		out_end_list(o);
		// No descriptor shown: the CPU count was not read (null, not 0).
		out_kv_int_known(o, "cpus", ncpus, ncpus);
		cli_walk_json(o, &w);
	}
	out_destroy(o);
	return cli_walk_end("irq", "interrupt descriptors", &w);
}
