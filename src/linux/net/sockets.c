// SPDX-License-Identifier: MIT
// kp_socket_iter: the sockets of the kernel's hash tables, as ss -a lists
// them, each with the processes whose fd tables hold it:
//   - TCP: tcp_hashinfo's listening hash lhash2 (sockets by
//     inet_connection_sock.icsk_listen_portaddr_node, an hlist, up to 5.19;
//     by sk_nulls_node since 6.0) and its established hash ehash (full,
//     time-wait and request sockets, by sock_common.skc_nulls_node);
//   - UDP: udp_table.hash (sock_common.skc_node);
//   - raw: raw_v4_hashinfo and raw_v6_hashinfo .ht (skc_node, nulls since 6.1);
//   - unix: unix_socket_table[2 * 256] up to 5.16, each namespace's
//     net->unx.table.buckets[UNIX_HASH_SIZE = 512] since (skc_node).
// The tables are the global ones (per-namespace TCP and UDP tables,
// tcp_child_ehash_entries and udp_child_hash_entries, are not walked).
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "core/kernel.h"
#include "core/layout.h"
#include "linux/lib/hlist.h"
#include "linux/lib/list.h"
#include "linux/lib/walk.h"
#include "linux/net/net.h"
#include "util/error.h"
#include "util/vec.h"

#define MAX_SOCKETS (4u << 20)
#define MAX_BUCKETS (1u << 26)	// entries of one hash table: beyond, its mask is corrupt
#define UNIX_BUCKETS 512	// 2 * 256 (5.10), UNIX_HASH_SIZE (5.17+)

enum { H_EHASH, H_EHASH_MASK, H_LHASH2, H_LHASH2_MASK, H_N };
static const struct kp_member_spec hashinfo_members[H_N] = {
	[H_EHASH] = { .name = "ehash" }, [H_EHASH_MASK] = { .name = "ehash_mask" },
	[H_LHASH2] = { .name = "lhash2" }, [H_LHASH2_MASK] = { .name = "lhash2_mask" },
};
static const struct kp_struct_spec hashinfo_spec = KP_STRUCT_SPEC("struct inet_hashinfo", hashinfo_members);
static const struct kp_member_spec lbucket_members[] = { { .name = "nulls_head", .flags = KP_MEMBER_NOSPAN } };
static const struct kp_struct_spec lbucket_spec = KP_STRUCT_SPEC("struct inet_listen_hashbucket", lbucket_members);
// Listeners were on lhash2 by icsk_listen_portaddr_node up to 5.19, by
// sk_nulls_node since 6.0 (cae3873c5b3a).
static const struct kp_member_spec icsk_members[] = {
	{ .name = "icsk_listen_portaddr_node", .flags = KP_MEMBER_OPTIONAL | KP_MEMBER_NOSPAN },
};
static const struct kp_struct_spec icsk_spec = KP_STRUCT_SPEC("struct inet_connection_sock", icsk_members);
enum { K_NODE, K_NULLS, K_N };
static const struct kp_member_spec common_members[K_N] = {
	[K_NODE] = { .name = "skc_node", .flags = KP_MEMBER_NOSPAN },
	[K_NULLS] = { .name = "skc_nulls_node", .flags = KP_MEMBER_NOSPAN },
};
static const struct kp_struct_spec common_spec = KP_STRUCT_SPEC("struct sock_common", common_members);
enum { U_HASH, U_MASK, U_N };
static const struct kp_member_spec udp_members[U_N] = { [U_HASH] = { .name = "hash" }, [U_MASK] = { .name = "mask" } };
static const struct kp_struct_spec udp_spec = KP_STRUCT_SPEC("struct udp_table", udp_members);
static const struct kp_struct_spec hslot_spec = KP_TYPE_SPEC("struct udp_hslot");
static const struct kp_member_spec raw_members[] = { { .name = "ht", .flags = KP_MEMBER_NOSPAN } };
static const struct kp_struct_spec raw_spec = KP_STRUCT_SPEC("struct raw_hashinfo", raw_members);
enum { N_LIST, N_UNIX, N_N };
static const struct kp_member_spec net_members[N_N] = {
	[N_LIST] = { .name = "list", .flags = KP_MEMBER_NOSPAN },
	[N_UNIX] = { .name = "unx.table.buckets", .flags = KP_MEMBER_OPTIONAL | KP_MEMBER_NOSPAN },	// 5.17
};
static const struct kp_struct_spec net_spec = KP_STRUCT_SPEC("struct net", net_members);

struct entry {
	uint64_t sk;
	const char *netid;
};

// A (socket inode, PID) pair of some process's fd table.
struct holder {
	uint64_t inode;
	int32_t pid;
};

struct kp_socket_iter {
	struct kp_kernel *k;
	const struct kp_struct_layout *cl;
	struct entry *entries;
	size_t n, cap, next;
	struct holder *holders;
	size_t nholders, hcap;
	struct kp_lx_sock sock;
	struct kp_socket out;
	int32_t *pids;
	size_t pcap;
	struct kp_lx_walk walk;
	// The table being walked (for the chain callback).
	const char *netid;
	uint64_t node_off;
};

static struct kp_error *on_node(uint64_t node, void *arg)
{
	struct kp_socket_iter *it = arg;
	if (it->n >= MAX_SOCKETS)
		return kp_error_create(KP_ERR_LOOP, "more than %u sockets (corrupt tables?)", MAX_SOCKETS);
	if (!KP_VEC_RESERVE(it->entries, it->cap, it->n + 1))
		return &kp_enomem;
	it->entries[it->n++] = (struct entry){ node - it->node_off, it->netid };
	return NULL;
}

// The chains of nbuckets heads, stride bytes apart from first.
static struct kp_error *table(struct kp_socket_iter *it, uint64_t first, uint64_t nbuckets, uint64_t stride,
			      const char *netid, uint64_t node_off, const char *what)
{
	if (nbuckets > MAX_BUCKETS)
		return kp_error_create(KP_ERR_FORMAT, "%s: %" PRIu64 " buckets (corrupt mask?)", what, nbuckets);
	it->netid = netid;
	it->node_off = node_off;
	for (uint64_t b = 0; b < nbuckets; b++) {
		struct kp_error *err = kp_lx_hlist_walk(it->k, first + b * stride, MAX_SOCKETS, what, on_node, it);
		if (err)
			return err;
	}
	return NULL;
}

static struct kp_error *tcp(struct kp_socket_iter *it)
{
	static const struct kp_struct_spec *const specs[] = { &hashinfo_spec, &lbucket_spec, &icsk_spec };
	const struct kp_struct_layout *l[3];
	struct kp_symbol sym;
	uint8_t buf[128];
	struct kp_error *err;
	if (!kp_symbol_find(it->k, "tcp_hashinfo", &sym))
		return kp_kernel_no_symbol(it->k, "no symbol 'tcp_hashinfo'");
	if ((err = kp_kernel_layouts(it->k, specs, 3, l)) ||
	    (err = kp_kernel_read_struct(it->k, l[0], sym.address, buf, sizeof(buf))))
		return err;
	uint64_t lhash2 = kp_layout_u64(l[0], buf, H_LHASH2), ehash = kp_layout_u64(l[0], buf, H_EHASH);
	uint64_t lmask = kp_layout_u64(l[0], buf, H_LHASH2_MASK), emask = kp_layout_u64(l[0], buf, H_EHASH_MASK);
	uint64_t listen_off = kp_layout_has(l[2], 0) ? kp_layout_off(l[2], 0) : kp_layout_off(it->cl, K_NULLS);
	if ((lhash2 && (err = table(it, lhash2 + kp_layout_off(l[1], 0), lmask + 1, l[1]->size, "tcp",
				    listen_off, "tcp listening hash"))) ||
	    (ehash && (err = table(it, ehash, emask + 1, 8, "tcp", kp_layout_off(it->cl, K_NULLS),
				   "tcp established hash"))))
		return err;
	return NULL;
}

static struct kp_error *udp(struct kp_socket_iter *it)
{
	const struct kp_struct_layout *l, *hl;
	struct kp_symbol sym;
	uint64_t hash;
	uint32_t mask;
	struct kp_error *err;
	if (!kp_symbol_find(it->k, "udp_table", &sym))
		return NULL;	// no UDP
	if ((err = kp_kernel_layout(it->k, &udp_spec, &l)) || (err = kp_kernel_layout(it->k, &hslot_spec, &hl)) ||
	    (err = kp_read_u64(it->k, sym.address + kp_layout_off(l, U_HASH), &hash)) ||
	    (err = kp_read_u32(it->k, sym.address + kp_layout_off(l, U_MASK), &mask)))
		return kp_error_prefix(err, "udp_table");
	return table(it, hash, (uint64_t)mask + 1, hl->size, "udp", kp_layout_off(it->cl, K_NODE), "udp hash");
}

static struct kp_error *raw(struct kp_socket_iter *it)
{
	static const char *const names[] = { "raw_v4_hashinfo", "raw_v6_hashinfo" };
	const struct kp_struct_layout *l;
	struct kp_error *err = kp_kernel_layout(it->k, &raw_spec, &l);
	for (int i = 0; !err && i < 2; i++) {
		struct kp_symbol sym;
		if (kp_symbol_find(it->k, names[i], &sym))
			err = table(it, sym.address + kp_layout_off(l, 0), l->m[0].size / 8, 8, "raw",
				    kp_layout_off(it->cl, K_NODE), names[i]);
	}
	return err;
}

static struct kp_error *unix_tables(struct kp_socket_iter *it)
{
	const struct kp_struct_layout *l;
	struct kp_symbol sym;
	struct kp_error *err = kp_kernel_layout(it->k, &net_spec, &l);
	uint64_t off = kp_layout_off(it->cl, K_NODE);
	if (err)
		return err;
	if (!kp_layout_has(l, N_UNIX))
		return kp_symbol_find(it->k, "unix_socket_table", &sym) ?
			table(it, sym.address, UNIX_BUCKETS, 8, "unix", off, "unix_socket_table") : NULL;
	if (!kp_symbol_find(it->k, "net_namespace_list", &sym))
		return kp_error_create(KP_ERR_NOT_FOUND, "no net_namespace_list symbol");
	struct kp_list_iter *list;
	uint64_t node, buckets;
	bool done;
	if ((err = kp_lx_list_iter_create(it->k, sym.address, 0, "net_namespace_list", &list)))
		return err;
	while (!(err = kp_list_iter_next(list, &node, &done)) && !done) {
		uint64_t net = node - kp_layout_off(l, N_LIST);
		if ((err = kp_read_u64(it->k, net + kp_layout_off(l, N_UNIX), &buckets)) ||
		    (buckets && (err = table(it, buckets, UNIX_BUCKETS, 8, "unix", off, "unix hash"))))
			break;
	}
	kp_list_iter_destroy(list);
	return err;
}

static int by_inode(const void *a, const void *b)
{
	const struct holder *x = a, *y = b;
	if (x->inode != y->inode)
		return x->inode < y->inode ? -1 : 1;
	return (x->pid > y->pid) - (x->pid < y->pid);
}

// The sockets in the fd tables of every process (tasks that cannot be
// read are skipped: their sockets show no PID).
static struct kp_error *holders(struct kp_socket_iter *it)
{
	struct kp_task_iter *tasks;
	const struct kp_task *t;
	struct kp_error *err = kp_task_iter_create(it->k, 0, &tasks);
	if (err)
		return err;
	while (!(err = kp_task_iter_next(tasks, &t)) && t) {
		struct kp_fd_iter *fds;
		const struct kp_fd *f;
		if (t->kthread || !kp_ok(kp_fd_iter_create(it->k, t->address, &fds)))
			continue;
		int32_t pid = t->pid;
		while (!(err = kp_fd_iter_next(fds, &f)) && f) {
			if (strcmp(f->kind, "SOCK"))
				continue;
			if (!KP_VEC_RESERVE(it->holders, it->hcap, it->nholders + 1)) {
				err = &kp_enomem;
				break;
			}
			it->holders[it->nholders++] = (struct holder){ f->inode, pid };
		}
		kp_fd_iter_destroy(fds);
		if (err && err->code == KP_ERR_NOMEM)
			break;
		kp_error_destroy(err);
		err = NULL;
	}
	kp_task_iter_destroy(tasks);
	if (err && err->code == KP_ERR_NOMEM)
		return err;
	kp_error_destroy(err);
	if (it->nholders)	// none: holders is NULL, which qsort() may not be given
		qsort(it->holders, it->nholders, sizeof(*it->holders), by_inode);
	return NULL;
}

struct kp_error *kp_socket_iter_create(struct kp_kernel *k, struct kp_socket_iter **ret)
{
	struct kp_socket_iter *it = calloc(1, sizeof(*it));
	if (!it)
		return &kp_enomem;
	it->k = k;
	kp_lx_walk_init(&it->walk, k);
	struct kp_error *err = kp_kernel_layout(k, &common_spec, &it->cl);
	// Sockets come and go on a live system: passes over the tables.
	while (!err) {
		it->n = 0;
		if (!(err = tcp(it)) && !(err = udp(it)) && !(err = raw(it)) && !(err = unix_tables(it)))
			break;
		if (err->code == KP_ERR_NOMEM || !kp_lx_walk_restart(&it->walk))
			break;
		kp_error_destroy(err);
		err = NULL;
	}
	if (err && it->n && err->code != KP_ERR_NOMEM) {
		kp_lx_walk_stop(&it->walk, err);	// what came before stands
		err = NULL;
	}
	if (!err)
		err = holders(it);
	if (err) {
		kp_socket_iter_destroy(it);
		return err;
	}
	*ret = it;
	return NULL;
}

// The PIDs holding inode, into it->pids.
static struct kp_error *pids_of(struct kp_socket_iter *it, uint64_t inode)
{
	struct kp_socket *o = &it->out;
	struct holder key = { inode, INT32_MIN };
	size_t lo = 0, hi = it->nholders;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (by_inode(&it->holders[mid], &key) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	o->npids = 0;
	for (size_t i = lo; inode && i < it->nholders && it->holders[i].inode == inode; i++) {
		if (o->npids && it->pids[o->npids - 1] == it->holders[i].pid)
			continue;
		if (!KP_VEC_RESERVE(it->pids, it->pcap, o->npids + 1))
			return &kp_enomem;
		it->pids[o->npids++] = it->holders[i].pid;
	}
	o->pids = it->pids;
	return NULL;
}

struct kp_error *kp_socket_iter_next(struct kp_socket_iter *it, const struct kp_socket **ret)
{
	*ret = NULL;
	while (it->next < it->n) {
		const struct entry *e = &it->entries[it->next++];
		struct kp_error *err = kp_lx_sock_decode(it->k, e->sk, e->netid, &it->sock);
		if (!err) {
			struct kp_lx_sock *s = &it->sock;
			it->out = (struct kp_socket){ .sock = s->sock, .netid = s->netid, .state = s->state,
						      .family = s->family, .local = s->local, .peer = s->peer,
						      .inode = s->inode, .peer_inode = s->peer_inode, .netns = s->netns };
			if ((err = pids_of(it, s->inode)))
				return err;
			*ret = &it->out;
			return NULL;
		}
		if ((err = kp_lx_walk_unreadable(&it->walk, err)))
			return err;
	}
	return kp_lx_walk_finish(&it->walk);
}

void kp_socket_iter_status(const struct kp_socket_iter *it, struct kp_walk_status *ret)
{
	kp_lx_walk_status(&it->walk, ret);
}

void kp_socket_iter_destroy(struct kp_socket_iter *it)
{
	if (!it)
		return;
	kp_lx_walk_deinit(&it->walk);
	free(it->entries);
	free(it->holders);
	free(it->pids);
	free(it);
}
