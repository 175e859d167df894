// SPDX-License-Identifier: MIT
// check ftrace: every registered struct ftrace_ops (kernel/trace/ftrace.c:
// ftrace_ops_list, linked by ->next, ending at &ftrace_list_end) names a
// callback ftrace calls at the entry of the functions in its filter hash.
// The ftrace-hook family of rootkits registers one (with IPMODIFY to
// redirect the function); the kernel's own (function tracer, kprobes on
// ftrace, perf, BPF trampolines, livepatch) have callbacks in kernel text.
// A callback outside kernel text is reported with the functions it hooks.
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "checks/check.h"
#include "core/layout.h"
#include "util/error.h"
#include "util/le.h"

#define MAX_OPS 4096u
#define MAX_HASH_BITS 20u	// FTRACE_HASH_MAX_BITS is 12
#define MAX_HASH_ENTRIES (1u << 20)	// every function of a kernel, with room
#define MAX_NAMED 4		// hooked functions named per finding

struct layout {
	uint64_t func, next, saved_func, func_hash, trampoline;
	bool has_saved_func, has_trampoline;
	uint64_t filter_hash;		// struct ftrace_ops_hash
	uint64_t size_bits, buckets, count;	// struct ftrace_hash
	uint64_t entry_ip;		// struct ftrace_func_entry (hlist first)
};

enum { O_FUNC, O_NEXT, O_FUNC_HASH, O_SAVED_FUNC, O_TRAMPOLINE, O_N };
static const struct kp_member_spec ops_members[O_N] = {
	[O_FUNC] = { .name = "func" }, [O_NEXT] = { .name = "next" }, [O_FUNC_HASH] = { .name = "func_hash" },
	[O_SAVED_FUNC] = { .name = "saved_func", .flags = KP_MEMBER_OPTIONAL },
	[O_TRAMPOLINE] = { .name = "trampoline", .flags = KP_MEMBER_OPTIONAL },
};
static const struct kp_struct_spec ops_spec = KP_STRUCT_SPEC("struct ftrace_ops", ops_members);
static const struct kp_member_spec ops_hash_members[] = { { .name = "filter_hash" } };
static const struct kp_struct_spec ops_hash_spec = KP_STRUCT_SPEC("struct ftrace_ops_hash", ops_hash_members);
enum { H_SIZE_BITS, H_BUCKETS, H_COUNT, H_N };
static const struct kp_member_spec hash_members[H_N] = {
	[H_SIZE_BITS] = { .name = "size_bits" }, [H_BUCKETS] = { .name = "buckets" }, [H_COUNT] = { .name = "count" },
};
static const struct kp_struct_spec hash_spec = KP_STRUCT_SPEC("struct ftrace_hash", hash_members);
static const struct kp_member_spec entry_members[] = { { .name = "ip" } };
static const struct kp_struct_spec entry_spec = KP_STRUCT_SPEC("struct ftrace_func_entry", entry_members);

static struct kp_error *get_layout(struct kp_kernel *k, struct layout *l)
{
	static const struct kp_struct_spec *const specs[] = { &ops_spec, &ops_hash_spec, &hash_spec, &entry_spec };
	const struct kp_struct_layout *sl[4];
	struct kp_error *err = kp_kernel_layouts(k, specs, 4, sl);
	if (err)
		return err;
	l->func = kp_layout_off(sl[0], O_FUNC);
	l->next = kp_layout_off(sl[0], O_NEXT);
	l->func_hash = kp_layout_off(sl[0], O_FUNC_HASH);
	l->has_saved_func = kp_layout_has(sl[0], O_SAVED_FUNC);
	l->saved_func = kp_layout_off(sl[0], O_SAVED_FUNC);
	l->has_trampoline = kp_layout_has(sl[0], O_TRAMPOLINE);
	l->trampoline = kp_layout_off(sl[0], O_TRAMPOLINE);
	l->filter_hash = kp_layout_off(sl[1], 0);
	l->size_bits = kp_layout_off(sl[2], H_SIZE_BITS);
	l->buckets = kp_layout_off(sl[2], H_BUCKETS);
	l->count = kp_layout_off(sl[2], H_COUNT);
	l->entry_ip = kp_layout_off(sl[3], 0);
	return NULL;
}

struct kp_error *kp_ck_ftrace_ops(struct kp_ck *c, kp_ck_ftrace_fn *fn, kp_ck_ftrace_ip_fn *ip_fn,
				  void *arg)
{
	struct kp_kernel *k = c->k;
	struct kp_symbol head, end;
	if (!kp_symbol_find(k, "ftrace_ops_list", &head) || !kp_symbol_find(k, "ftrace_list_end", &end))
		return kp_error_create(KP_ERR_NOT_FOUND, "no ftrace_ops_list/ftrace_list_end symbols (no CONFIG_FUNCTION_TRACER, or kallsyms without variables)");
	struct layout l;
	struct kp_error *err = get_layout(k, &l);
	if (err)
		return err;
	uint64_t ops;
	if ((err = kp_read_u64(k, head.address, &ops)))
		return kp_error_prefix(err, "ftrace_ops_list");
	for (unsigned n = 0; ops && ops != end.address; n++) {
		if (n == MAX_OPS)
			return kp_error_create(KP_ERR_LOOP, "ftrace_ops_list: more than %u ftrace_ops (corrupt or cyclic?)", MAX_OPS);
		struct kp_ck_ftrace_ops o = { .address = ops };
		uint64_t hash = 0, next;
		if ((err = kp_read_u64(k, ops + l.func, &o.func)) ||
		    (l.has_saved_func && (err = kp_read_u64(k, ops + l.saved_func, &o.saved_func))) ||
		    (l.has_trampoline && (err = kp_read_u64(k, ops + l.trampoline, &o.trampoline))) ||
		    (err = kp_read_u64(k, ops + l.func_hash, &hash)) ||
		    (err = kp_read_u64(k, ops + l.next, &next)))
			return kp_error_prefix(err, "ftrace_ops at 0x%" PRIx64, ops);
		uint64_t filter = 0;
		if (hash && (err = kp_read_u64(k, hash + l.filter_hash, &filter)))
			return kp_error_prefix(err, "ftrace_ops at 0x%" PRIx64 ": func_hash", ops);
		if (filter) {
			uint64_t bits, buckets;
			if ((err = kp_read_u64(k, filter + l.size_bits, &bits)) ||
			    (err = kp_read_u64(k, filter + l.buckets, &buckets)) ||
			    (err = kp_read_u64(k, filter + l.count, &o.nfuncs)))
				return kp_error_prefix(err, "ftrace_hash at 0x%" PRIx64, filter);
			if (bits > MAX_HASH_BITS)
				return kp_error_create(KP_ERR_FORMAT, "ftrace_hash at 0x%" PRIx64 ": %" PRIu64 " size bits (corrupt?)", filter, bits);
			if (o.nfuncs > MAX_HASH_ENTRIES)
				return kp_error_create(KP_ERR_FORMAT, "ftrace_hash at 0x%" PRIx64 ": %" PRIu64 " entries (corrupt?)", filter, o.nfuncs);
			// The first entries name the hooks; with ip_fn every entry
			// (at most count of them, as the hash says).
			uint64_t seen = 0;
			for (uint64_t b = 0; buckets && b < (UINT64_C(1) << bits) &&
					     (ip_fn || o.nnamed < MAX_NAMED); b++) {
				uint64_t node, ip;
				if ((err = kp_read_u64(k, buckets + 8 * b, &node)))
					return kp_error_prefix(err, "ftrace_hash at 0x%" PRIx64, filter);
				for (; node; seen++) {
					if (seen >= o.nfuncs)
						return kp_error_create(KP_ERR_FORMAT, "ftrace_hash at 0x%" PRIx64 ": more entries than its count %" PRIu64 " (corrupt or cyclic?)", filter, o.nfuncs);
					if ((err = kp_read_u64(k, node + l.entry_ip, &ip)) ||
					    (err = kp_read_u64(k, node, &node)))
						return kp_error_prefix(err, "ftrace_hash at 0x%" PRIx64, filter);
					if (o.nnamed < MAX_NAMED)
						o.funcs[o.nnamed++] = ip;
					if (ip_fn && (err = ip_fn(c, ip, arg)))
						return err;
					if (!ip_fn && o.nnamed == MAX_NAMED)
						break;
				}
			}
		}
		o.all = !filter || !o.nfuncs;
		if ((err = fn(c, &o, arg)))
			return err;
		ops = next;
	}
	return NULL;
}

static struct kp_error *on_ops(struct kp_ck *c, const struct kp_ck_ftrace_ops *o, void *arg)
{
	unsigned *count = arg;
	(*count)++;
	uint64_t bad = !kp_ck_trusted_code(c, o->func) ? o->func :
		o->saved_func && !kp_ck_trusted_code(c, o->saved_func) ? o->saved_func : 0;
	char hooks[400] = "";
	size_t len = 0;
	for (unsigned i = 0; i < o->nnamed && len < sizeof(hooks); i++) {
		struct kp_symbol s;
		if (kp_ck_symbol(c, o->funcs[i], &s))
			len += (size_t)snprintf(hooks + len, sizeof(hooks) - len, "%s%s+0x%" PRIx64,
						i ? ", " : "", s.name, o->funcs[i] - s.address);
		else
			len += (size_t)snprintf(hooks + len, sizeof(hooks) - len, "%s0x%" PRIx64,
						i ? ", " : "", o->funcs[i]);
	}
	if (len < sizeof(hooks) && o->nfuncs > o->nnamed)
		snprintf(hooks + len, sizeof(hooks) - len, "%s%" PRIu64 " more", len ? " and " : "",
			 o->nfuncs - o->nnamed);
	if (o->all)
		snprintf(hooks, sizeof(hooks), "every function");
	char why[256] = "", where[160];
	if (bad) {
		kp_ck_where(c, bad, where, sizeof(where));
		snprintf(why, sizeof(why), "callback in %s", where);
	}
	return kp_ck_add(c, bad ? bad : o->func, NULL, bad ? why : NULL,
			 "ftrace_ops 0x%" PRIx64 " on %s", o->address, hooks);
}

struct kp_error *kp_ck_ftrace(struct kp_ck *c)
{
	unsigned count = 0;
	struct kp_error *err = kp_ck_ftrace_ops(c, on_ops, NULL, &count);
	if (err)
		return kp_ck_cannot_err(c, err, NULL);
	return kp_ck_summary(c, "%u ftrace_ops registered", count);
}
