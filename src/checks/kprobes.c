// SPDX-License-Identifier: MIT
// check kprobes: every registered kprobe (kernel/kprobes.c: kprobe_table,
// KPROBE_TABLE_SIZE hlist heads of struct kprobe linked by ->hlist) runs
// its pre/post handlers when the probed instruction executes. A rootkit
// registers one to watch or change what a function sees. An aggregate
// probe (several kprobes at one address) has pre_handler
// aggr_pre_handler and the real ones on its ->list; a kretprobe has
// pre_handler pre_handler_kretprobe and its handlers in the struct
// kretprobe around the kprobe. A handler outside kernel text is reported
// with the function it probes.
#include <inttypes.h>
#include <stdio.h>

#include "checks/check.h"
#include "core/layout.h"
#include "linux/lib/list.h"
#include "util/error.h"

// include/linux/kprobes.h: KPROBE_HASH_BITS 6, unchanged since 2.6.
#define KPROBE_TABLE_SIZE 64u
#define MAX_KPROBES 65536u

struct layout {
	uint64_t hlist, list, addr, pre, post;
	uint64_t rp_kp, rp_handler, rp_entry;	// struct kretprobe
	bool has_rp_entry;
	uint64_t aggr, kretprobe;		// the kernel's own pre_handlers
};

struct walk {
	struct layout l;
	kp_ck_kprobe_fn *fn;		// addresses only (kp_ck_kprobe_addrs)
	void *arg;
	unsigned count;
};

enum { K_HLIST, K_LIST, K_ADDR, K_PRE, K_POST, K_N };
static const struct kp_member_spec kprobe_members[K_N] = {
	[K_HLIST] = { .name = "hlist" }, [K_LIST] = { .name = "list" }, [K_ADDR] = { .name = "addr" },
	[K_PRE] = { .name = "pre_handler" }, [K_POST] = { .name = "post_handler" },
};
static const struct kp_struct_spec kprobe_spec = KP_STRUCT_SPEC("struct kprobe", kprobe_members);
enum { R_KP, R_HANDLER, R_ENTRY, R_N };
static const struct kp_member_spec kretprobe_members[R_N] = {
	[R_KP] = { .name = "kp" }, [R_HANDLER] = { .name = "handler" }, [R_ENTRY] = { .name = "entry_handler" },
};
static const struct kp_struct_spec kretprobe_spec = KP_STRUCT_SPEC_OPTIONAL("struct kretprobe", kretprobe_members);

static struct kp_error *get_layout(struct kp_kernel *k, struct layout *l)
{
	static const struct kp_struct_spec *const specs[] = { &kprobe_spec, &kretprobe_spec };
	const struct kp_struct_layout *sl[2];
	struct kp_error *err = kp_kernel_layouts(k, specs, 2, sl);
	if (err)
		return err;
	l->hlist = kp_layout_off(sl[0], K_HLIST);
	l->list = kp_layout_off(sl[0], K_LIST);
	l->addr = kp_layout_off(sl[0], K_ADDR);
	l->pre = kp_layout_off(sl[0], K_PRE);
	l->post = kp_layout_off(sl[0], K_POST);
	if (sl[1]->present) {
		l->rp_kp = kp_layout_off(sl[1], R_KP);
		l->rp_handler = kp_layout_off(sl[1], R_HANDLER);
		l->rp_entry = kp_layout_off(sl[1], R_ENTRY);
		l->has_rp_entry = true;
	}
	struct kp_symbol s;
	l->aggr = kp_symbol_find(k, "aggr_pre_handler", &s) ? s.address : 0;
	l->kretprobe = kp_symbol_find(k, "pre_handler_kretprobe", &s) ? s.address : 0;
	return NULL;
}

static struct kp_error *handler(struct kp_ck *c, struct walk *w, uint64_t kp, uint64_t addr,
				const char *what, uint64_t h)
{
	if (!h)
		return NULL;
	char where[160], why[256] = "", at[160];
	struct kp_symbol s;
	if (kp_ck_symbol(c, addr, &s))
		snprintf(at, sizeof(at), "%s+0x%" PRIx64, s.name, addr - s.address);
	else
		snprintf(at, sizeof(at), "0x%" PRIx64, addr);
	if (!kp_ck_in_text(c, h)) {
		kp_ck_where(c, h, where, sizeof(where));
		snprintf(why, sizeof(why), "%s in %s", what, where);
	}
	(void)w;
	return kp_ck_add(c, h, NULL, why[0] ? why : NULL, "kprobe 0x%" PRIx64 " on %s (%s)", kp, at,
			 what);
}

static struct kp_error *one(struct kp_ck *c, struct walk *w, uint64_t kp)
{
	struct kp_kernel *k = c->k;
	const struct layout *l = &w->l;
	uint64_t addr, pre, post;
	struct kp_error *err;
	if ((err = kp_read_u64(k, kp + l->addr, &addr)) ||
	    (err = kp_read_u64(k, kp + l->pre, &pre)) ||
	    (err = kp_read_u64(k, kp + l->post, &post)))
		return kp_error_prefix(err, "kprobe at 0x%" PRIx64, kp);
	if (++w->count > MAX_KPROBES)
		return kp_error_create(KP_ERR_LOOP, "more than %u kprobes (corrupt?)", MAX_KPROBES);
	if (w->fn)
		return w->fn(c, kp, addr, w->arg);
	if (pre && pre == l->kretprobe && l->rp_handler) {
		uint64_t rp = kp - l->rp_kp, h, eh = 0;
		if ((err = kp_read_u64(k, rp + l->rp_handler, &h)) ||
		    (l->has_rp_entry && (err = kp_read_u64(k, rp + l->rp_entry, &eh))))
			return kp_error_prefix(err, "kretprobe at 0x%" PRIx64, rp);
		if ((err = handler(c, w, kp, addr, "kretprobe handler", h)) ||
		    (err = handler(c, w, kp, addr, "kretprobe entry_handler", eh)))
			return err;
		return NULL;
	}
	if ((err = handler(c, w, kp, addr, "pre_handler", pre)))
		return err;
	return handler(c, w, kp, addr, "post_handler", post);
}

static struct kp_error *walk(struct kp_ck *c, struct walk *w)
{
	struct kp_kernel *k = c->k;
	struct kp_symbol table;
	if (!kp_symbol_find(k, "kprobe_table", &table))
		return kp_error_create(KP_ERR_NOT_FOUND, "no kprobe_table symbol (no CONFIG_KPROBES, or kallsyms without variables)");
	struct kp_error *err = get_layout(k, &w->l);
	if (err)
		return err;
	for (unsigned i = 0; i < KPROBE_TABLE_SIZE; i++) {
		uint64_t node;
		if ((err = kp_read_u64(k, table.address + 8 * i, &node)))
			return kp_error_prefix(err, "kprobe_table[%u]", i);
		for (unsigned depth = 0; node; depth++) {
			if (depth > MAX_KPROBES)
				return kp_error_create(KP_ERR_LOOP, "kprobe_table[%u]: cyclic", i);
			uint64_t kp = node - w->l.hlist;
			uint64_t pre;
			if ((err = kp_read_u64(k, kp + w->l.pre, &pre)))
				return kp_error_prefix(err, "kprobe at 0x%" PRIx64, kp);
			if (pre && pre == w->l.aggr) {
				// The probes sharing this address, on its ->list.
				struct kp_list_iter *it;
				if ((err = kp_lx_list_iter_create(k, kp + w->l.list, 0, "aggregated kprobes", &it)))
					return err;
				for (;;) {
					uint64_t n;
					bool done;
					if ((err = kp_list_iter_next(it, &n, &done)) || done)
						break;
					if ((err = one(c, w, n - w->l.list)))
						break;
				}
				kp_list_iter_destroy(it);
			} else {
				err = one(c, w, kp);
			}
			if (err || (err = kp_read_u64(k, node, &node)))
				return err;
		}
	}
	return NULL;
}

struct kp_error *kp_ck_kprobe_addrs(struct kp_ck *c, kp_ck_kprobe_fn *fn, void *arg)
{
	struct walk w = { .fn = fn, .arg = arg };
	return walk(c, &w);
}

struct kp_error *kp_ck_kprobes(struct kp_ck *c)
{
	struct walk w = {0};
	struct kp_error *err = walk(c, &w);
	if (err)
		return kp_ck_cannot_err(c, err, NULL);
	return kp_ck_summary(c, "%u kprobes registered", w.count);
}
