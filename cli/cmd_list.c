// kpeek list: walks a linked list, like crash's list command.
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "output.h"
#include "linux/linux.h"

#define DEFAULT_LIMIT 1000000u

static void usage(void)
{
	printf("Usage: kpeek [-c CORE] list [-H] [-o STRUCT.MEMBER|OFFSET] [-s STRUCT[.MEMBER[,MEMBER...]]]\n"
	       "                  [-n LIMIT] [--json] ADDR|SYMBOL\n"
	       "Follows the next pointers of a linked list and prints each entry's address.\n"
	       "  without -H   ADDR is the first entry (a structure); its next pointer is at\n"
	       "               the -o offset (default 0). The walk ends at a NULL pointer or\n"
	       "               when it comes back to ADDR.\n"
	       "  -H           ADDR is a struct list_head that heads the list and is not an\n"
	       "               entry itself (e.g. 'modules'): entries are\n"
	       "               the nodes after it until the walk is back at ADDR.\n"
	       "With -o STRUCT.MEMBER (the struct list_head inside each entry) or a number,\n"
	       "entry addresses are container addresses: node - offset.\n"
	       "\n"
	       "Options:\n"
	       "  -H, --head            ADDR is a list head, not an entry\n"
	       "  -o, --offset M        STRUCT.MEMBER (from BTF) or a byte offset\n"
	       "  -s, --struct S        print members of each entry: STRUCT.MEMBER[,MEMBER...]\n"
	       "                        (or STRUCT alone for the whole structure)\n"
	       "  -n, --limit N         stop with an error after N entries (default %u)\n"
	       "  -j, --json            {\"entries\": [{address, members: {...}}]}\n"
	       "  -h, --help            show this help\n"
	       "A cycle that does not return to the start is an error naming where.\n"
	       "\n"
	       "Examples:\n"
	       "  kpeek list -o task_struct.tasks -s task_struct.pid,comm init_task\n"
	       "  kpeek list -H -o module.list -s module.name modules\n", DEFAULT_LIMIT);
}

// "task_struct" -> "struct task_struct"; names with a space are kept.
static void type_name(const char *s, size_t len, char *buf, size_t size)
{
	if (memchr(s, ' ', len))
		snprintf(buf, size, "%.*s", (int)len, s);
	else
		snprintf(buf, size, "struct %.*s", (int)len, s);
}

struct list {
	struct kp_kernel *k;
	struct out *o;
	char stype[128];
	char *members[64];
	int nmembers;
	bool whole;
};

static struct kp_error *print_members(struct list *l, uint64_t entry)
{
	int n = l->whole ? 1 : l->nmembers;
	if (!n)
		return NULL;
	if (out_is_json(l->o))
		out_begin_object(l->o, "members");
	for (int i = 0; i < n; i++) {
		char expr[512];
		if (l->whole)
			snprintf(expr, sizeof(expr), "*(%s *)0x%" PRIx64, l->stype, entry);
		else
			snprintf(expr, sizeof(expr), "((%s *)0x%" PRIx64 ")->%s", l->stype, entry,
				 l->members[i]);
		struct kp_value *v;
		struct kp_error *err = kp_eval(l->k, expr, &v);
		if (err)
			return err;
		char *text;
		unsigned flags = out_is_json(l->o) ? KP_FORMAT_JSON | KP_FORMAT_ONE_LINE : 0;
		err = kp_value_format(v, flags, &text);
		kp_value_destroy(v);
		if (err)
			return err;
		const char *key = l->whole ? "value" : l->members[i];
		if (out_is_json(l->o))
			out_kv_json(l->o, key, text, text);
		else if (l->whole)
			out_text(l->o, "%s\n", text);
		else
			out_text(l->o, "  %s = %s\n", key, text);
		free(text);
	}
	if (out_is_json(l->o))
		out_end_object(l->o);
	return NULL;
}

int cmd_list(struct cli *cli, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "head", no_argument, NULL, 'H' },
		{ "offset", required_argument, NULL, 'o' },
		{ "struct", required_argument, NULL, 's' },
		{ "limit", required_argument, NULL, 'n' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	bool head_mode = false;
	const char *offset_arg = NULL, *struct_arg = NULL;
	uint64_t limit = DEFAULT_LIMIT;
	int c;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":Ho:s:n:jh", opts, NULL)) != -1) {
		switch (c) {
		case 'H': head_mode = true; break;
		case 'o': offset_arg = optarg; break;
		case 's': struct_arg = optarg; break;
		case 'n':
			if (!cli_parse_number(optarg, &limit) || !limit)
				return cli_usage_error("list", "invalid limit '%s'", optarg);
			break;
		case 'j': cli->json = true; break;
		case 'h': usage(); return 0;
		default: return cli_bad_option("list", c, argv);
		}
	}
	if (optind >= argc)
		return cli_usage_error("list", "expected ADDR or SYMBOL");
	if (optind + 1 < argc)
		return cli_usage_error("list", "unexpected argument '%s'", argv[optind + 1]);
	struct list l = { 0 };
	char *sdup = NULL;
	int status = 0;
	struct kp_error *err = NULL;
	struct kp_kernel *k = cli_kernel(cli);
	if (!k)
		return 1;
	l.k = k;
	uint64_t offset = 0;
	if (offset_arg && !cli_parse_number(offset_arg, &offset)) {
		const char *dot = strchr(offset_arg, '.');
		if (!dot || dot == offset_arg || !dot[1])
			return cli_usage_error("list", "invalid -o '%s' (STRUCT.MEMBER or a number)", offset_arg);
		char tn[128];
		type_name(offset_arg, (size_t)(dot - offset_arg), tn, sizeof(tn));
		if ((err = kp_member_offset(k, tn, dot + 1, &offset, NULL)))
			return cli_error(err);
		if (!struct_arg)
			snprintf(l.stype, sizeof(l.stype), "%s", tn);
	}
	if (struct_arg) {
		sdup = strdup(struct_arg);
		if (!sdup)
			return cli_error(&kp_enomem);
		char *dot = strchr(sdup, '.');
		if (dot)
			*dot = '\0';
		type_name(sdup, strlen(sdup), l.stype, sizeof(l.stype));
		if (dot) {
			char *save = NULL;
			for (char *m = strtok_r(dot + 1, ",", &save); m && l.nmembers < 64;
			     m = strtok_r(NULL, ",", &save))
				l.members[l.nmembers++] = m;
		}
		l.whole = !l.nmembers;
	}
	uint64_t start;
	if ((err = cli_parse_address(cli, argv[optind], &start))) {
		free(sdup);
		return cli_error(err);
	}
	l.o = out_create(cli->json);
	if (out_is_json(l.o))
		out_begin_list(l.o, "entries");
	// Node addresses: head mode starts at the head's next; otherwise the
	// first node is start + offset.
	uint64_t stop_at = head_mode ? start : start + offset, node;
	if (head_mode) {
		if ((err = kp_read_u64(k, start, &node))) {
			err = kp_error_prefix(err, "reading list head at 0x%" PRIx64, start);
			goto out;
		}
	} else {
		node = start + offset;
	}
	struct kp_lx_loop loop;
	kp_lx_loop_init(&loop, stop_at);
	bool first = true;
	for (uint64_t n = 0;; n++) {
		if (head_mode ? node == stop_at : (!first && node == stop_at))
			break;
		if (!node)
			break;	// NULL-terminated list
		if (n >= limit) {
			err = kp_error_create(KP_ERR_LOOP, "list does not end after %" PRIu64 " entries (at 0x%" PRIx64 "; raise -n)",
					      limit, node);
			goto out;
		}
		if (!first && kp_lx_loop_step(&loop, node)) {
			err = kp_error_create(KP_ERR_LOOP, "list does not end: loop at 0x%" PRIx64 " after %" PRIu64 " entries",
					      node, n);
			goto out;
		}
		first = false;
		uint64_t entry = node - offset;
		if (out_is_json(l.o)) {
			out_begin_object(l.o, NULL);
			out_kv_hex(l.o, "address", entry);
		} else {
			out_text(l.o, "%" PRIx64 "\n", entry);
		}
		if (l.nmembers || l.whole)
			err = print_members(&l, entry);
		if (out_is_json(l.o))
			out_end_object(l.o);
		if (err)
			goto out;
		if ((err = kp_read_u64(k, node, &node))) {
			err = kp_error_prefix(err, "reading the next pointer of entry 0x%" PRIx64, entry);
			goto out;
		}
	}
out:
	if (out_is_json(l.o))
		out_end_list(l.o);
	out_destroy(l.o);
	free(sdup);
	if (err)
		status = cli_error(err);
	return status;
}
