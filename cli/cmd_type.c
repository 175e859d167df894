// SPDX-License-Identifier: MIT
// kpeek type NAME: a type from BTF with every member's offset and size, as
// pahole and crash's "struct -o" show them (libkpeek's struct kp_type).
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "output.h"

// Anonymous members inside anonymous members: the kernel nests 3-4 deep;
// a hostile BTF could loop.
#define MAX_DEPTH 16

static void usage(void)
{
	printf("Usage: kpeek [-c CORE] type [--json] NAME...\n"
	       "Prints a type of the kernel's BTF, NAME being a C type name whose\n"
	       "words may be separate arguments (struct task_struct, u64, \"char *\"):\n"
	       "its kind and size, and for a struct or union every member as pahole\n"
	       "and crash's struct -o show it:\n"
	       "  OFFSET  SIZE  MEMBER  TYPE\n"
	       "OFFSET is the byte offset from the start of the type (BYTE:BIT for a\n"
	       "bitfield, whose MEMBER is NAME:WIDTH); the members of an anonymous\n"
	       "struct or union follow it, indented, with their offsets from the start\n"
	       "of the outer type. An enum lists its enumerators, a typedef, pointer or\n"
	       "array names its target type (and an array its length).\n"
	       "\n"
	       "Exit status: 0 success, 2 an unknown type or a type kpeek cannot read (one\n"
	       "line on stderr), a usage error or output that could not be written.\n"
	       "\n"
	       "Options:\n"
	       "  -j, --json   {\"name\", \"kind\", \"size\" (null if none), \"target\",\n"
	       "               \"length\", \"members\": [{\"name\" (null if anonymous),\n"
	       "               \"type\", \"offset\", \"bit_offset\", \"bit_size\", \"size\",\n"
	       "               \"members\" (an anonymous member's)}], \"enumerators\":\n"
	       "               [{\"name\", \"value\"}]}\n"
	       "  -h, --help   show this help\n"
	       "\n"
	       "Examples:\n"
	       "  kpeek -c vmcore type struct task_struct\n"
	       "  kpeek type --json struct list_head\n");
}

static const char *const kind_names[] = {
	[KP_TYPE_VOID] = "void", [KP_TYPE_INT] = "int", [KP_TYPE_BOOL] = "bool",
	[KP_TYPE_FLOAT] = "float", [KP_TYPE_STRUCT] = "struct", [KP_TYPE_UNION] = "union",
	[KP_TYPE_ENUM] = "enum", [KP_TYPE_TYPEDEF] = "typedef", [KP_TYPE_POINTER] = "pointer",
	[KP_TYPE_ARRAY] = "array", [KP_TYPE_FUNCTION] = "function",
};

static char *name_of(const struct kp_type *t)
{
	char *s = NULL;
	struct kp_error *err = kp_type_name(t, &s);
	kp_error_destroy(err);
	return s ? s : strdup("?");
}

static bool anonymous_aggregate(const struct kp_type *mt, const char *name)
{
	enum kp_type_kind k = kp_type_kind(mt);
	return !name && (k == KP_TYPE_STRUCT || k == KP_TYPE_UNION);
}

static int members(struct out *o, const struct kp_type *t, uint64_t base_bits, int depth);

// One member; its own members follow when it is an anonymous aggregate.
static int member(struct out *o, const struct kp_type *t, size_t i, uint64_t base_bits, int depth)
{
	KP_INIT(kp_type_member, m);
	struct kp_type *mt = NULL;
	struct kp_error *err = kp_type_member(t, i, &m, &mt);
	if (err)
		return cli_error(err);
	char *name = m.name ? strdup(m.name) : NULL;	// m.name lasts until t's next call
	char *tname = name_of(mt);
	uint64_t size = 0, bits = base_bits + m.bit_offset;
	bool sized = true;
	if ((err = kp_type_sizeof(mt, &size))) {
		kp_error_destroy(err);
		sized = false;	// a flexible array member, a declared-only struct
	}
	if (m.bit_size)
		size = (bits % 8 + m.bit_size + 7) / 8;
	int status = 0;
	if (out_is_json(o)) {
		out_begin_object(o, NULL);
		out_kv_str(o, "name", name);
		out_kv_str(o, "type", tname);
		out_kv_uint(o, "offset", bits / 8);
		out_kv_uint(o, "bit_offset", bits);
		out_kv_uint(o, "bit_size", m.bit_size);
		out_kv_int_known(o, "size", sized || m.bit_size, (int64_t)size);
	} else {
		char off[32], sz[24], mem[160];
		if (m.bit_size)
			snprintf(off, sizeof(off), "%" PRIu64 ":%" PRIu64, bits / 8, bits % 8);
		else
			snprintf(off, sizeof(off), "%" PRIu64, bits / 8);
		if (sized || m.bit_size)
			snprintf(sz, sizeof(sz), "%" PRIu64, size);
		else
			snprintf(sz, sizeof(sz), "-");
		int n = snprintf(mem, sizeof(mem), "%*s%s", 2 * depth, "",
				 name ? name : "(anonymous)");
		if (m.bit_size && n > 0 && (size_t)n < sizeof(mem))
			snprintf(mem + n, sizeof(mem) - (size_t)n, ":%" PRIu32, m.bit_size);
		out_text(o, "%-8s %6s  %-24s %s\n", off, sz, mem, tname);
	}
	if (anonymous_aggregate(mt, name) && depth < MAX_DEPTH) {
		if (out_is_json(o))
			out_begin_list(o, "members");
		status = members(o, mt, bits, depth + 1);
		if (out_is_json(o))
			out_end_list(o);
	}
	if (out_is_json(o))
		out_end_object(o);
	free(name);
	free(tname);
	kp_type_destroy(mt);
	return status;
}

static int members(struct out *o, const struct kp_type *t, uint64_t base_bits, int depth)
{
	int status = 0;
	size_t n = kp_type_member_count(t);
	for (size_t i = 0; i < n && !status; i++)
		status = member(o, t, i, base_bits, depth);
	return status;
}

static int enumerators(struct out *o, const struct kp_type *t)
{
	size_t n = kp_type_member_count(t);
	if (out_is_json(o))
		out_begin_list(o, "enumerators");
	for (size_t i = 0; i < n; i++) {
		const char *name;
		int64_t v;
		struct kp_error *err = kp_type_enumerator(t, i, &name, &v);
		if (err)
			return cli_error(err);
		if (out_is_json(o)) {
			out_begin_object(o, NULL);
			out_kv_str(o, "name", name);
			out_kv_int(o, "value", v);
			out_end_object(o);
		} else {
			out_text(o, "  %s = %" PRId64 "\n", name, v);
		}
	}
	if (out_is_json(o))
		out_end_list(o);
	return 0;
}

// The head: name, kind, size, target, length.
static void head(struct out *o, const struct kp_type *t, const char *name)
{
	enum kp_type_kind kind = kp_type_kind(t);
	uint64_t size = 0;
	struct kp_error *err = kp_type_sizeof(t, &size);
	bool sized = !err;
	kp_error_destroy(err);
	struct kp_type *target = NULL;
	char *tname = NULL;
	if (!(err = kp_type_target(t, &target)))
		tname = name_of(target);
	kp_error_destroy(err);
	bool array = kind == KP_TYPE_ARRAY;
	if (out_is_json(o)) {
		out_kv_str(o, "name", name);
		out_kv_str(o, "kind", kind_names[kind]);
		out_kv_int_known(o, "size", sized, (int64_t)size);
		out_kv_str(o, "target", tname);
		out_kv_int_known(o, "length", array, (int64_t)kp_type_length(t));
	} else {
		out_text(o, "%s: %s", name, kind_names[kind]);
		if (tname)
			out_text(o, " of %s", tname);
		if (array)
			out_text(o, ", %" PRIu64 " elements", kp_type_length(t));
		if (sized)
			out_text(o, ", size %" PRIu64 " (0x%" PRIx64 ")\n", size, size);
		else
			out_text(o, ", no size\n");
	}
	free(tname);
	kp_type_destroy(target);
}

static int show(struct out *o, struct kp_type *t, const char *name)
{
	head(o, t, name);
	enum kp_type_kind kind = kp_type_kind(t);
	struct kp_type *r = NULL;
	// A typedef of a struct ("pgd_t") shows the struct's members.
	if (kp_type_member_count(t) && kind == KP_TYPE_TYPEDEF) {
		struct kp_type *cur = t;
		while (kp_type_kind(cur) == KP_TYPE_TYPEDEF) {
			struct kp_type *next = NULL;
			struct kp_error *err = kp_type_target(cur, &next);
			if (cur != t)
				kp_type_destroy(cur);
			if (err)
				return cli_error(err);
			cur = next;
		}
		r = cur;
		kind = kp_type_kind(r);
	}
	const struct kp_type *base = r ? r : t;
	int status = 0;
	if (kind == KP_TYPE_ENUM) {
		status = enumerators(o, base);
	} else if (kind == KP_TYPE_STRUCT || kind == KP_TYPE_UNION) {
		if (out_is_json(o))
			out_begin_list(o, "members");
		else
			out_text(o, "%-8s %6s  %-24s %s\n", "OFFSET", "SIZE", "MEMBER", "TYPE");
		status = members(o, base, 0, 0);
		if (out_is_json(o))
			out_end_list(o);
	}
	kp_type_destroy(r);
	return status;
}

int cmd_type(struct cli *cli, int argc, char **argv)
{
	int opt_status = cli_json_help_options(cli, "type", argc, argv, usage);
	if (opt_status >= 0)
		return opt_status;
	if (optind >= argc)
		return cli_usage_error("type", "expected a type NAME");
	size_t len = 1;
	for (int i = optind; i < argc; i++)
		len += strlen(argv[i]) + 1;
	char *name = calloc(1, len);
	if (!name)
		return cli_fail("out of memory");
	for (int i = optind; i < argc; i++) {
		if (i > optind)
			strcat(name, " ");
		strcat(name, argv[i]);
	}
	struct kp_kernel *k = cli_kernel(cli);
	struct kp_type *t = NULL;
	struct kp_error *err = k ? kp_type_lookup(k, name, &t) : NULL;
	int status = !k ? CLI_EXIT_ERROR : err ? cli_error(err) : 0;
	if (!status) {
		struct out *o = out_create(cli->json);
		char *full = name_of(t);
		status = show(o, t, full);
		free(full);
		out_destroy(o);
	}
	kp_type_destroy(t);
	free(name);
	return status;
}
