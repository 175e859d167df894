// SPDX-License-Identifier: MIT
// kpeek diff EXPR DUMP1 [DUMP2]: evaluates one expression on two memory
// sources and shows whether (and where) the values differ, as diff(1) does:
// exit 0 same, 1 different, 2 trouble.
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "output.h"

#define CONTEXT 3
// Past this many cells the line diff gives up on a minimal edit script and
// shows the differing middle as removed-then-added (still correct).
#define MAX_LCS_CELLS (16u << 20)

static void usage(void)
{
	printf("Usage: kpeek [GLOBAL OPTIONS] diff [-x] [--one-line] [--json] EXPR DUMP1 [DUMP2]\n"
	       "Evaluates EXPR (as kpeek print does) in two memory sources and prints both\n"
	       "values as a unified diff when they differ. With one dump, the other side\n"
	       "is the global source: the -c dump, or the live kernel without -c.\n"
	       "Global -m/--kallsyms/--btf apply to both sides (same kernel build).\n"
	       "\n"
	       "Exit status: 0 the values are the same, 1 they differ, 2 an error: a dump\n"
	       "that cannot be opened, an expression that fails on either side, a usage\n"
	       "error, output that could not be written.\n"
	       "\n"
	       "Options:\n"
	       "  -x, --hex        integers in hexadecimal\n"
	       "      --one-line   structures and arrays on one line\n"
	       "  -j, --json       {\"expr\", \"same\", \"a\": {\"source\", \"type\", \"value\"}, \"b\": ...}\n"
	       "                   (a value cut by the output limits has \"truncated\": true,\n"
	       "                   \"not_shown\": N, \"limit\": \"output\"|\"depth\" beside it)\n"
	       "  -h, --help       show this help\n"
	       "\n"
	       "Examples:\n"
	       "  kpeek diff jiffies before.vmcore after.vmcore\n"
	       "  kpeek diff -x 'init_task.tasks' vmcore1 vmcore2\n"
	       "  kpeek -c vmcore1 diff 'avenrun' vmcore2\n"
	       "  kpeek diff '*(struct list_head *)&init_task.tasks' /var/crash/vmcore\n");
}

struct side {
	const char *name;	// what the user called the source
	struct kp_kernel *k;	// not owned when borrowed from cli
	bool owned;
	char *text;		// formatted value
	char *type;
	struct kp_format_cap cap;	// JSON: what the output limits left out
};

struct lines {
	char **v;
	size_t n;
};

static bool split(char *text, struct lines *ret)
{
	size_t n = 1;
	for (char *p = text; *p; p++)
		n += *p == '\n';
	ret->v = malloc(n * sizeof(*ret->v));
	if (!ret->v)
		return false;
	ret->n = 0;
	for (char *p = text;;) {
		char *nl = strchr(p, '\n');
		ret->v[ret->n++] = p;
		if (!nl)
			break;
		*nl = '\0';
		p = nl + 1;
		if (!*p)
			break;	// a trailing newline ends the last line
	}
	return true;
}

// An edit script: ops[i] is ' ', '-' or '+'; ia/ib index the lines.
struct edit {
	char op;
	size_t ia, ib;
};

// Common prefix and suffix, then an LCS table over the middle.
static struct edit *diff_lines(const struct lines *a, const struct lines *b, size_t *count_ret)
{
	size_t pre = 0, suf = 0;
	while (pre < a->n && pre < b->n && !strcmp(a->v[pre], b->v[pre]))
		pre++;
	while (suf < a->n - pre && suf < b->n - pre &&
	       !strcmp(a->v[a->n - 1 - suf], b->v[b->n - 1 - suf]))
		suf++;
	size_t na = a->n - pre - suf, nb = b->n - pre - suf;
	struct edit *e = malloc((a->n + b->n + 1) * sizeof(*e));
	if (!e)
		return NULL;
	size_t k = 0;
	for (size_t i = 0; i < pre; i++)
		e[k++] = (struct edit){' ', i, i};
	uint32_t *t = NULL;
	if (na && nb && (na + 1) * (nb + 1) <= MAX_LCS_CELLS)
		t = calloc((na + 1) * (nb + 1), sizeof(*t));
	if (t) {
		// t[i][j] = LCS length of a-middle[i..] and b-middle[j..].
		for (size_t i = na; i-- > 0;)
			for (size_t j = nb; j-- > 0;) {
				uint32_t *c = &t[i * (nb + 1) + j];
				if (!strcmp(a->v[pre + i], b->v[pre + j]))
					*c = t[(i + 1) * (nb + 1) + j + 1] + 1;
				else {
					uint32_t d = t[(i + 1) * (nb + 1) + j], r = t[i * (nb + 1) + j + 1];
					*c = d > r ? d : r;
				}
			}
		size_t i = 0, j = 0;
		while (i < na || j < nb) {
			if (i < na && j < nb && !strcmp(a->v[pre + i], b->v[pre + j])) {
				e[k++] = (struct edit){' ', pre + i++, pre + j++};
			} else if (j == nb || (i < na && t[(i + 1) * (nb + 1) + j] >=
							   t[i * (nb + 1) + j + 1])) {
				e[k++] = (struct edit){'-', pre + i++, pre + j};
			} else {
				e[k++] = (struct edit){'+', pre + i, pre + j++};
			}
		}
		free(t);
	} else {
		for (size_t i = 0; i < na; i++)
			e[k++] = (struct edit){'-', pre + i, pre};
		for (size_t j = 0; j < nb; j++)
			e[k++] = (struct edit){'+', pre + na, pre + j};
	}
	for (size_t i = 0; i < suf; i++)
		e[k++] = (struct edit){' ', a->n - suf + i, b->n - suf + i};
	*count_ret = k;
	return e;
}

static void print_range(char sign, size_t start, size_t len)
{
	// diff(1): "-l,s"; an empty range names the line before it.
	if (len == 1)
		printf(" %c%zu", sign, start + 1);
	else
		printf(" %c%zu,%zu", sign, len ? start + 1 : start, len);
}

static void print_unified(const struct side *a, const struct side *b, const char *expr,
			  const struct edit *e, size_t n, const struct lines *la,
			  const struct lines *lb)
{
	printf("--- %s\t%s\n+++ %s\t%s\n", a->name, expr, b->name, expr);
	size_t i = 0;
	while (i < n) {
		while (i < n && e[i].op == ' ')
			i++;
		if (i == n)
			break;
		// A hunk: from CONTEXT lines before the change up to the first run
		// of more than 2 * CONTEXT unchanged lines.
		size_t start = i > CONTEXT ? i - CONTEXT : 0, end = i;
		for (size_t same = 0; end < n; end++) {
			same = e[end].op == ' ' ? same + 1 : 0;
			if (same > 2 * CONTEXT)
				break;
		}
		// Trim trailing context to CONTEXT lines.
		size_t stop = end;
		size_t trail = 0;
		while (stop > i && e[stop - 1].op == ' ') {
			stop--;
			trail++;
		}
		stop += trail > CONTEXT ? CONTEXT : trail;
		size_t a0 = e[start].ia, b0 = e[start].ib, alen = 0, blen = 0;
		for (size_t k = start; k < stop; k++) {
			alen += e[k].op != '+';
			blen += e[k].op != '-';
		}
		printf("@@");
		print_range('-', a0, alen);
		print_range('+', b0, blen);
		printf(" @@\n");
		for (size_t k = start; k < stop; k++)
			printf("%c%s\n", e[k].op,
			       e[k].op == '+' ? lb->v[e[k].ib] : la->v[e[k].ia]);
		i = stop;
	}
}

static int eval_side(struct side *s, const char *expr, unsigned flags)
{
	struct kp_value *v = NULL;
	struct kp_error *err = kp_eval(s->k, expr, &v);
	if (!err)
		err = kp_value_format_capped(v, flags, &s->text, &s->cap);
	if (!err)
		err = kp_value_type_name(v, &s->type);
	kp_value_destroy(v);
	if (err) {
		cli_error_prefix(err, "%s: %s", s->name, expr);
		return 2;
	}
	return 0;
}

static struct kp_kernel *open_side(struct cli *cli, const char *path)
{
	struct kp_open_options o = cli->open;
	o.core = path;
	struct kp_kernel *k = NULL;
	struct kp_error *err = kp_kernel_open(&o, &k);
	if (err) {
		cli_error(err);
		return NULL;
	}
	return k;
}

static void json_side(struct out *o, const char *key, const struct side *s)
{
	out_begin_object(o, key);
	out_kv_str(o, "source", s->name);
	out_kv_str(o, "type", s->type);
	out_kv_json(o, "value", s->text, NULL);
	// A cap is said beside the value, as print --json says it.
	if (s->cap.truncated) {
		out_kv_bool(o, "truncated", true);
		out_kv_uint(o, "not_shown", s->cap.not_shown);
		out_kv_str(o, "limit", s->cap.limit);
	}
	out_end_object(o);
}

// Like diff(1), a value that did not change is not repeated when long.
static void print_same(const struct side *a, const struct side *b)
{
	size_t nl = 0;
	for (const char *p = a->text; *p; p++)
		nl += *p == '\n';
	if (!nl)
		printf("same in %s and %s: %s\n", a->name, b->name, a->text);
	else
		printf("same in %s and %s: (%s) of %zu lines\n", a->name, b->name,
		       a->type ? a->type : "value", nl + 1);
}

// The values' lines as a unified diff: CLI_EXIT_FINDING, or CLI_EXIT_ERROR
// when out of memory.
static int print_diff(const struct side *a, const struct side *b, const char *expr)
{
	struct lines la = { 0 }, lb = { 0 };
	char *ta = strdup(a->text), *tb = strdup(b->text);
	struct edit *e = NULL;
	size_t n;
	int status = CLI_EXIT_FINDING;
	if (!ta || !tb || !split(ta, &la) || !split(tb, &lb) || !(e = diff_lines(&la, &lb, &n))) {
		cli_fail("out of memory");
		status = 2;
	} else {
		print_unified(a, b, expr, e, n, &la, &lb);
	}
	free(e);
	free(la.v);
	free(lb.v);
	free(ta);
	free(tb);
	return status;
}

int cmd_diff(struct cli *cli, int argc, char **argv)
{
	unsigned flags;
	int opt_status = cli_format_options(cli, "diff", argc, argv, usage, &flags);
	if (opt_status >= 0)
		return opt_status;
	int nargs = argc - optind;
	if (nargs < 2 || nargs > 3)
		return cli_usage_error("diff", nargs < 2 ? "expected EXPR and DUMP1 [DUMP2]" :
					       "unexpected argument '%s'", argv[argc - 1]);
	const char *expr = argv[optind];
	struct side a = { .cap = { .sz = sizeof(a.cap) } }, b = { .cap = { .sz = sizeof(b.cap) } };
	if (nargs == 3) {
		a.name = argv[optind + 1];
		b.name = argv[optind + 2];
	} else {
		a.name = cli->open.core ? cli->open.core : "/proc/kcore";
		b.name = argv[optind + 1];
	}
	if (cli->json)
		flags |= KP_FORMAT_JSON | KP_FORMAT_ONE_LINE;

	int status = 2;
	if (nargs == 3) {
		a.k = open_side(cli, a.name);
		a.owned = true;
	} else {
		a.k = cli_kernel(cli);
	}
	if (!a.k)
		goto out;
	b.k = open_side(cli, b.name);
	b.owned = true;
	if (!b.k)
		goto out;
	if (eval_side(&a, expr, flags) || eval_side(&b, expr, flags))
		goto out;

	bool same = !strcmp(a.text, b.text);
	status = same ? 0 : CLI_EXIT_FINDING;
	if (cli->json) {
		struct out *o = out_create(true);
		out_kv_str(o, "expr", expr);
		out_kv_bool(o, "same", same);
		json_side(o, "a", &a);
		json_side(o, "b", &b);
		out_destroy(o);
	} else if (same) {
		print_same(&a, &b);
	} else {
		status = print_diff(&a, &b, expr);
	}
out:
	if (a.owned)
		kp_kernel_destroy(a.k);
	if (b.owned)
		kp_kernel_destroy(b.k);
	free(a.text);
	free(b.text);
	free(a.type);
	free(b.type);
	fflush(stdout);
	return status;
}
