// SPDX-License-Identifier: MIT
// kpeek list: walks a linked list, like crash's list command.
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "output.h"

#define DEFAULT_LIMIT 1000000u

static void usage(void)
{
	printf("Usage: kpeek [-c CORE] list [-H] [-o STRUCT.MEMBER|OFFSET] [-s STRUCT[.MEMBER[,MEMBER...]]]\n"
	       "                  [-n LIMIT] [--json] ADDR|SYMBOL\n"
	       "Follows the next pointers of a linked list and prints each entry's address.\n"
	       "  without -H   ADDR is the first entry (a structure); its next pointer is at\n"
	       "               the -o offset (default 0). The walk ends at a NULL pointer or\n"
	       "               when it comes back to ADDR.\n"
	       "When the -o member is a struct list_head (and with -H) every link is checked\n"
	       "(next->prev must point back): a corrupt list is an error naming the node.\n"
	       "  -H           ADDR is a struct list_head that heads the list and is not an\n"
	       "               entry itself (e.g. 'modules'): entries are\n"
	       "               the nodes after it until the walk is back at ADDR.\n"
	       "With -o STRUCT.MEMBER (the struct list_head inside each entry) or a number,\n"
	       "entry addresses are container addresses: node - offset.\n"
	       "\n"
	       "Exit status: 0 success, 2 an error (one line on stderr says what and where),\n"
	       "a usage error or output that could not be written.\n"
	       "\n"
	       "Options:\n"
	       "  -H, --head            ADDR is a list head, not an entry\n"
	       "  -o, --offset M        STRUCT.MEMBER (from BTF) or a byte offset\n"
	       "  -s, --struct S        print members of each entry: STRUCT.MEMBER[,MEMBER...]\n"
	       "                        (or STRUCT alone for the whole structure)\n"
	       "  -n, --limit N         stop with an error after N entries (default %u)\n"
	       "  -j, --json            {\"entries\": [{\"address\", \"members\": {...}}], \"complete\"}\n"
	       "                        (a walk that stopped early: \"complete\": false, \"reason\",\n"
	       "                        \"error\"; members cut by the output limits: \"truncated\":\n"
	       "                        true, \"not_shown\": N, \"limit\" beside \"members\")\n"
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
	uint64_t entries;	// walked so far
};

// JSON: what the output limits left out of an entry's members, said beside
// "members" (whose keys are the members' names) as print --json says it.
static void json_cap(struct out *o, const struct kp_format_cap *cap)
{
	if (!cap->truncated)
		return;
	out_kv_bool(o, "truncated", true);
	out_kv_uint(o, "not_shown", cap->not_shown);
	out_kv_str(o, "limit", cap->limit);
}

static struct kp_error *print_members(struct list *l, uint64_t entry)
{
	int n = l->whole ? 1 : l->nmembers;
	KP_INIT(kp_format_cap, all);
	if (!n)
		return NULL;
	struct kp_value *obj;
	struct kp_error *err = kp_value_at(l->k, l->stype, entry, &obj);
	if (err)
		return err;
	if (out_is_json(l->o))
		out_begin_object(l->o, "members");
	for (int i = 0; i < n && !err; i++) {
		struct kp_value *v = obj;
		if (!l->whole && (err = kp_value_member(obj, l->members[i], &v)))
			break;
		char *text;
		unsigned flags = out_is_json(l->o) ? KP_FORMAT_JSON | KP_FORMAT_ONE_LINE : 0;
		KP_INIT(kp_format_cap, cap);
		err = kp_value_format_capped(v, flags, &text, &cap);
		all.not_shown += cap.not_shown;
		if (cap.truncated && (!all.limit || !strcmp(cap.limit, "depth")))
			all.limit = cap.limit;
		if (v != obj)
			kp_value_destroy(v);
		if (err)
			break;
		const char *key = l->whole ? "value" : l->members[i];
		if (out_is_json(l->o))
			out_kv_json(l->o, key, text, text);
		else if (l->whole)
			out_text(l->o, "%s\n", text);
		else
			out_text(l->o, "  %s = %s\n", key, text);
		free(text);
	}
	kp_value_destroy(obj);
	if (out_is_json(l->o)) {
		out_end_object(l->o);
		all.truncated = all.not_shown > 0;
		json_cap(l->o, &all);
	}
	return err;
}

// Whether member of struct type is a struct list_head (a doubly linked list
// whose links can be checked).
static bool is_list_head(struct kp_kernel *k, const char *type, const char *member)
{
	struct kp_value *obj, *m;
	char *name = NULL;
	if (kp_value_at(k, type, 0, &obj))
		return false;
	struct kp_error *err = kp_value_member(obj, member, &m);
	kp_value_destroy(obj);
	if (err) {
		kp_error_destroy(err);
		return false;
	}
	err = kp_value_type_name(m, &name);
	kp_value_destroy(m);
	bool yes = !err && !strcmp(name, "struct list_head");
	kp_error_destroy(err);
	free(name);
	return yes;
}

struct list_opts {
	bool head_mode;
	const char *offset_arg, *struct_arg;
	uint64_t limit;
};

// -1 to go on (ADDR at argv[optind]), else the exit status.
static int parse_options(struct cli *cli, int argc, char **argv, struct list_opts *lo)
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
	int c;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":Ho:s:n:jh", opts, NULL)) != -1) {
		switch (c) {
		case 'H': lo->head_mode = true; break;
		case 'o': lo->offset_arg = optarg; break;
		case 's': lo->struct_arg = optarg; break;
		case 'n':
			if (!cli_parse_number(optarg, &lo->limit) || !lo->limit)
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
	return -1;
}

// -o: the offset of the list node in an entry (a number or STRUCT.MEMBER),
// whether that member is a struct list_head (*doubly) and, without -s, the
// entries' type. 0, or the exit status after saying why not.
static int resolve_offset(struct list *l, const struct list_opts *lo, uint64_t *offset,
			  bool *doubly)
{
	if (!lo->offset_arg || cli_parse_number(lo->offset_arg, offset))
		return 0;
	const char *arg = lo->offset_arg, *dot = strchr(arg, '.');
	if (!dot || dot == arg || !dot[1])
		return cli_usage_error("list", "invalid -o '%s' (STRUCT.MEMBER or a number)", arg);
	char tn[128];
	type_name(arg, (size_t)(dot - arg), tn, sizeof(tn));
	struct kp_error *err = kp_member_offset(l->k, tn, dot + 1, offset, NULL);
	if (err)
		return cli_error(err);
	*doubly |= is_list_head(l->k, tn, dot + 1);
	if (!lo->struct_arg)
		snprintf(l->stype, sizeof(l->stype), "%s", tn);
	return 0;
}

// -s STRUCT[.MEMBER,...]: the entries' type and the members to print, in
// sdup (a copy of the argument the member names point into).
static void parse_struct(struct list *l, char *sdup)
{
	char *dot = strchr(sdup, '.');
	if (dot)
		*dot = '\0';
	type_name(sdup, strlen(sdup), l->stype, sizeof(l->stype));
	if (dot) {
		char *save = NULL;
		for (char *m = strtok_r(dot + 1, ",", &save); m && l->nmembers < 64;
		     m = strtok_r(NULL, ",", &save))
			l->members[l->nmembers++] = m;
	}
	l->whole = !l->nmembers;
}

// Prints every entry the iterator yields; the error that ended the walk.
static struct kp_error *walk(struct list *l, struct kp_list_iter *it, uint64_t offset)
{
	struct kp_error *err;
	if (out_is_json(l->o))
		out_begin_list(l->o, "entries");
	for (;;) {
		uint64_t node;
		bool done;
		if ((err = kp_list_iter_next(it, &node, &done)) || done)
			break;
		uint64_t entry = node - offset;
		l->entries++;
		if (out_is_json(l->o)) {
			out_begin_object(l->o, NULL);
			out_kv_hex(l->o, "address", entry);
		} else {
			out_text(l->o, "%" PRIx64 "\n", entry);
		}
		if (l->nmembers || l->whole)
			err = print_members(l, entry);
		if (out_is_json(l->o))
			out_end_object(l->o);
		if (err)
			break;
	}
	if (out_is_json(l->o))
		out_end_list(l->o);
	return err;
}

int cmd_list(struct cli *cli, int argc, char **argv)
{
	struct list_opts lo = { .limit = DEFAULT_LIMIT };
	int status = parse_options(cli, argc, argv, &lo);
	if (status >= 0)
		return status;
	struct list l = { 0 };
	l.k = cli_kernel(cli);
	if (!l.k)
		return CLI_EXIT_ERROR;
	uint64_t offset = 0;
	bool doubly = lo.head_mode;
	if ((status = resolve_offset(&l, &lo, &offset, &doubly)))
		return status;
	char *sdup = NULL;
	if (lo.struct_arg) {
		if (!(sdup = strdup(lo.struct_arg)))
			return cli_fail("out of memory");
		parse_struct(&l, sdup);
	}
	uint64_t start;
	if ((status = cli_parse_address(cli, argv[optind], &start))) {
		free(sdup);
		return status;
	}
	// Head mode starts at the head's next; otherwise the first node is
	// start + offset.
	unsigned flags = (lo.head_mode ? 0 : KP_LIST_HEAD_IS_NODE) | (doubly ? 0 : KP_LIST_SINGLE);
	struct kp_list_iter *it;
	struct kp_error *err = kp_list_iter_create(l.k, lo.head_mode ? start : start + offset, flags, &it);
	if (err) {
		free(sdup);
		return cli_error(err);
	}
	kp_list_iter_set_limit(it, lo.limit);
	l.o = out_create(cli->json);
	struct cli_walk w = { .st = { .sz = sizeof(w.st) }, .err = walk(&l, it, offset) };
	kp_list_iter_status(it, &w.st);
	// A list longer than -n allows is a cap of the output, not a corrupt list.
	w.at_limit = w.st.at_limit;
	kp_list_iter_destroy(it);
	if (out_is_json(l.o))
		cli_walk_json(l.o, &w);
	out_destroy(l.o);
	free(sdup);
	if (w.err && kp_error_code(w.err) == KP_ERR_LOOP)
		return cli_error_prefix(w.err, "list (-n raises the limit of %" PRIu64 " entries)", lo.limit);
	return cli_walk_end("list", "entries", &w);
}
