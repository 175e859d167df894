// SPDX-License-Identifier: MIT
// kp_slab_iter (linux/mm/slab.c) on the synthetic kernel's caches
// (tests/gen/synthsys.h): /proc/slabinfo's numbers computed here from the
// nodes and partial slabs the generator wrote.
#include "sys_open.h"

static void check_cache(const struct kp_slab_cache *c, unsigned i)
{
	const struct sks_cache *w = &sks_caches[i];
	uint64_t slabs = w->nr_slabs[0] + w->nr_slabs[1], objs = w->total[0] + w->total[1], free = 0;
	for (unsigned p = 0; p < w->npartial; p++)
		free += w->partial[p].objects - w->partial[p].inuse;
	CHECK_U64(c->address, SKP_VA(SKS_CACHE(i)));
	CHECK_STR(c->name, w->name);
	CHECK_U64(c->objsize, w->size);
	CHECK_U64(c->objperslab, w->oo & 0xffff);
	CHECK_U64(c->pagesperslab, 1u << (w->oo >> 16));
	CHECK_U64(c->num_objs, objs);
	CHECK_U64(c->active_objs, objs - free);
	CHECK_U64(c->num_slabs, slabs);
	CHECK_U64(c->active_slabs, slabs);
}

// The caches yielded (a bit each), the error that ended the walk, its status.
static struct kp_error *walk(struct kp_kernel *k, unsigned *seen, struct kp_walk_status *st)
{
	struct kp_slab_iter *it;
	const struct kp_slab_cache *c;
	struct kp_error *err = kp_slab_iter_create(k, &it);
	*seen = 0;
	if (err)
		return err;
	while (!(err = kp_slab_iter_next(it, &c)) && c) {
		unsigned i = (unsigned)((c->address - SKP_VA(SKS_CACHE(0))) / 0x300);
		CHECK(i < SKS_NCACHES && !(*seen >> i & 1) && *seen >> i == 0);	// in list order, once
		if (i < SKS_NCACHES) {
			*seen |= 1u << i;
			check_cache(c, i);
		}
	}
	kp_slab_iter_status(it, st);
	kp_slab_iter_destroy(it);
	return err;
}

TEST(caches_of_both_generations)
{
	for (enum sk_sys sys = SK_SYS_NEW; sys <= SK_SYS_OLD; sys++) {
		struct kp_kernel *k = sys_open(sys, NULL);
		KP_INIT(kp_walk_status, st);
		unsigned seen;
		if (!k)
			return;
		CHECK_OK(walk(k, &seen, &st));
		CHECK_U64(seen, 0x7);
		CHECK(st.end == KP_WALK_COMPLETE && st.left_out == 0);
		kp_kernel_destroy(k);
	}
}

struct hostile {
	const char *what;
	struct sks_word edit[3];
	unsigned seen;
	enum kp_error_code code;
	const char *message;
	uint64_t left_out;
};

TEST(hostile_caches)
{
	uint64_t kn0 = SKS_KNODE(0);	// kmalloc-64's node 0: two partial slabs
	const struct hostile cases[] = {
		// slab_caches: the last cache's next back at the first.
		{ "list cycle", { { SKS_CACHE(2) + SKS_CACHE_LIST, SKP_VA(SKS_CACHE(0) + SKS_CACHE_LIST), 8 } }, 0x7,
		  KP_ERR_FORMAT, "slab_caches is corrupt", 0 },
		// More partial slabs than nr_partial says.
		{ "nr_partial", { { kn0 + SKS_KNODE_NR_PARTIAL, 0, 8 } }, 0x6, KP_ERR_LOOP, "kmalloc-64", 1 },
		// A partial list looping on itself within its bound.
		{ "partial cycle", { { SKS_SLABP(1) + SKS_SLAB_LIST, SKP_VA(SKS_SLABP(1) + SKS_SLAB_LIST), 8 } }, 0x6,
		  KP_ERR_FORMAT, "slab partial list", 1 },
		// More objects in use than the slab holds.
		{ "inuse", { { SKS_SLABP(0) + SKS_SLAB_COUNTERS, 65 | 64 << 16, 4 } }, 0x6, KP_ERR_FORMAT,
		  "65 objects in use of 64", 1 },
		// task_struct's node 0 points nowhere.
		{ "unmapped", { { SKS_CACHE(1) + SKS_CACHE_NODE, UNMAPPED, 8 } }, 0x5, KP_ERR_FAULT,
		  "0xffffc90000400000", 1 },
		// dentry's name is on a page the dump lacks.
		{ "no page", { { SKS_CACHE(2) + SKS_CACHE_NAME, SK_HOLE, 8 } }, 0x3, KP_ERR_FAULT,
		  "the name of kmem_cache", 1 },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct hostile *c = &cases[i];
		struct kp_kernel *k = sys_open(SK_SYS_NEW, c->edit);
		KP_INIT(kp_walk_status, st);
		unsigned seen;
		if (!k)
			return;
		printf("  %s\n", c->what);
		CHECK_ERR(walk(k, &seen, &st), c->code, c->message);
		CHECK_U64(seen, c->seen);
		CHECK(st.end == KP_WALK_STOPPED);
		CHECK_U64(st.left_out, c->left_out);
		kp_kernel_destroy(k);
	}
}

TEST(absurd_node_counts_and_missing_caches_are_errors)
{
	const struct sks_word nodes[] = { { SKS_NR_NODE_IDS, 5000, 4 }, { 0, 0, 0 } };
	struct kp_kernel *k = sys_open(SK_SYS_NEW, nodes);
	struct kp_slab_iter *it = NULL;
	if (!k)
		return;
	CHECK_ERR(kp_slab_iter_create(k, &it), KP_ERR_FORMAT, "nr_node_ids is 5000");
	kp_kernel_destroy(k);
	if (!(k = sys_open(SK_SYS_NONE, NULL)))
		return;
	CHECK_ERR(kp_slab_iter_create(k, &it), KP_ERR_NOT_FOUND, "no symbol 'slab_caches'");
	CHECK(it == NULL);
	kp_kernel_destroy(k);
}

int main(void)
{
	RUN(caches_of_both_generations);
	RUN(hostile_caches);
	RUN(absurd_node_counts_and_missing_caches_are_errors);
	return TEST_SUMMARY();
}
