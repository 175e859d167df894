// SPDX-License-Identifier: MIT
// kp_netdev_iter: the network interfaces of every network namespace
// (net_namespace_list, each net's dev_base_head list of
// net_device.dev_list), each decoded by dev_info.c.
#include <arpa/inet.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/kernel.h"
#include "core/layout.h"
#include "linux/lib/list.h"
#include "linux/lib/walk.h"
#include "linux/net/net.h"
#include "util/error.h"

#define MAX_ADDRS 256	// addresses shown per interface

static const struct kp_member_spec dev_members[] = { { .name = "dev_list", .flags = KP_MEMBER_NOSPAN } };
static const struct kp_struct_spec dev_spec = KP_STRUCT_SPEC("struct net_device", dev_members);
enum { N_LIST, N_DEVS, N_INUM, N_N };
static const struct kp_member_spec net_members[N_N] = {
	[N_LIST] = { .name = "list", .flags = KP_MEMBER_NOSPAN },
	[N_DEVS] = { .name = "dev_base_head", .flags = KP_MEMBER_NOSPAN },
	[N_INUM] = { .name = "ns.inum" },
};
static const struct kp_struct_spec net_spec = KP_STRUCT_SPEC("struct net", net_members);

struct kp_netdev_iter {
	struct kp_kernel *k;
	const struct kp_struct_layout *dl, *nl;
	uint64_t *devs, *netns;		// every interface found, with its namespace's inode
	size_t n, cap, next;
	struct kp_netdev dev;
	char addr_buf[MAX_ADDRS][64];
	const char *addrs[MAX_ADDRS];
	struct kp_lx_walk walk;
};

static struct kp_error *add(struct kp_netdev_iter *it, uint64_t dev, uint64_t inum)
{
	if (it->n == it->cap) {
		size_t cap = it->cap ? it->cap * 2 : 64;
		uint64_t *d = realloc(it->devs, cap * sizeof(*d)), *s;
		if (!d)
			return &kp_enomem;
		it->devs = d;
		if (!(s = realloc(it->netns, cap * sizeof(*s))))
			return &kp_enomem;
		it->netns = s;
		it->cap = cap;
	}
	it->devs[it->n] = dev;
	it->netns[it->n++] = inum;
	return NULL;
}

// Every net_device of the namespace at net.
static struct kp_error *namespace(struct kp_netdev_iter *it, uint64_t net)
{
	struct kp_list_iter *list;
	uint32_t inum;
	uint64_t node;
	bool done;
	struct kp_error *err = kp_read_u32(it->k, net + kp_layout_off(it->nl, N_INUM), &inum);
	if (err)
		return kp_error_prefix(err, "struct net at 0x%" PRIx64, net);
	if ((err = kp_lx_list_iter_create(it->k, net + kp_layout_off(it->nl, N_DEVS), 0, "dev_base_head", &list)))
		return err;
	while (!(err = kp_list_iter_next(list, &node, &done)) && !done &&
	       !(err = add(it, node - kp_layout_off(it->dl, 0), inum)))
		;
	kp_list_iter_destroy(list);
	return err;
}

static struct kp_error *collect(struct kp_netdev_iter *it)
{
	struct kp_symbol sym;
	struct kp_list_iter *list;
	uint64_t node;
	bool done;
	if (!kp_symbol_find(it->k, "net_namespace_list", &sym))
		return kp_kernel_no_symbol(it->k, "no symbol 'net_namespace_list'");
	struct kp_error *err = kp_lx_list_iter_create(it->k, sym.address, 0, "net_namespace_list", &list);
	if (err)
		return err;
	it->n = 0;
	while (!(err = kp_list_iter_next(list, &node, &done)) && !done &&
	       !(err = namespace(it, node - kp_layout_off(it->nl, N_LIST))))
		;
	kp_list_iter_destroy(list);
	return err;
}

struct kp_error *kp_netdev_iter_create(struct kp_kernel *k, struct kp_netdev_iter **ret)
{
	struct kp_netdev_iter *it = calloc(1, sizeof(*it));
	if (!it)
		return &kp_enomem;
	it->k = k;
	kp_lx_walk_init(&it->walk, k);
	struct kp_error *err = kp_kernel_layout(k, &dev_spec, &it->dl);
	if (!err)
		err = kp_kernel_layout(k, &net_spec, &it->nl);
	// Interfaces come and go on a live system: passes.
	while (!err && (err = collect(it))) {
		if (err->code == KP_ERR_NOMEM || !kp_lx_walk_restart(&it->walk))
			break;
		kp_error_destroy(err);
		err = NULL;
	}
	if (err && it->n && err->code != KP_ERR_NOMEM) {
		kp_lx_walk_stop(&it->walk, err);
		err = NULL;
	}
	if (err) {
		kp_netdev_iter_destroy(it);
		return err;
	}
	*ret = it;
	return NULL;
}

// Adds "ADDRESS/PREFIX".
static void put_addr(struct kp_netdev_iter *it, int family, const void *addr, unsigned prefix)
{
	size_t i = it->dev.naddrs;
	char text[INET6_ADDRSTRLEN];
	if (i == MAX_ADDRS) {
		it->dev.addrs_not_shown++;
		return;
	}
	if (!inet_ntop(family, addr, text, sizeof(text)))
		return;
	snprintf(it->addr_buf[i], sizeof(it->addr_buf[i]), "%s/%u", text, prefix);
	it->addrs[i] = it->addr_buf[i];
	it->dev.naddrs++;
}

static void on_addr(void *arg, int family, const void *addr, unsigned prefix)
{
	put_addr(arg, family, addr, prefix);
}

struct kp_error *kp_netdev_iter_next(struct kp_netdev_iter *it, const struct kp_netdev **ret)
{
	*ret = NULL;
	while (it->next < it->n) {
		size_t i = it->next++;
		struct kp_error *err = kp_lx_netdev_decode(it->k, it->devs[i], &it->dev);
		if (!err) {
			it->dev.netns = it->netns[i];
			it->dev.naddrs = 0;
			it->dev.addrs_not_shown = 0;
			it->dev.addrs = it->addrs;
			err = kp_lx_netdev_addrs(it->k, it->devs[i], on_addr, it);
		}
		if (!err) {
			*ret = &it->dev;
			return NULL;
		}
		if ((err = kp_lx_walk_unreadable(&it->walk, err)))
			return err;
	}
	return kp_lx_walk_finish(&it->walk);
}

void kp_netdev_iter_status(const struct kp_netdev_iter *it, struct kp_walk_status *ret)
{
	kp_lx_walk_status(&it->walk, ret);
}

void kp_netdev_iter_destroy(struct kp_netdev_iter *it)
{
	if (!it)
		return;
	kp_lx_walk_deinit(&it->walk);
	free(it->devs);
	free(it->netns);
	free(it);
}
