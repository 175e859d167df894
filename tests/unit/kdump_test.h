// SPDX-License-Identifier: MIT
// What the kdump format's tests share (test_kdump.c: reading;
// test_kdump_corrupt.c: corrupt input): an image opened from a temporary
// file, pages of mixed compressibility, the page states of a dump with
// holes and excluded pages. After test.h (its checks).
#ifndef KP_TEST_KDUMP_TEST_H
#define KP_TEST_KDUMP_TEST_H

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "opensrc.h"
#include "format/source.h"
#include "../gen/mkkdump.h"

#define BS 4096
#define NPAGES 64

static inline struct kp_error *open_buf(const uint8_t *img, size_t len, struct kp_opened_source *o)
{
	memset(o, 0, sizeof(*o));
	char path[] = "/tmp/kpeek-test-kdump-XXXXXX";
	int fd = mkstemp(path);
	if (fd < 0 || write(fd, img, len) != (ssize_t)len) {
		FAILF("cannot write %s", path);
		abort();
	}
	close(fd);
	struct kp_error *err = kp_test_open_source(&kp_kdump_ops, path, o);
	unlink(path);
	if (err)
		CHECK(!o->src.vmcoreinfo && !o->src.cpus && !o->src.priv);
	return err;
}

static inline void close_dump(struct kp_opened_source *o)
{
	kp_test_close_source(o);
}

static inline struct kp_error *try_open(const uint8_t *img, size_t len)
{
	struct kp_opened_source o;
	struct kp_error *err = open_buf(img, len, &o);
	if (!err)
		close_dump(&o);
	return err;
}

static uint64_t rng = 88172645463325252ULL;

static inline uint64_t next_rand(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

// Pages of different compressibility: zero, text-like, random, sparse, ramp.
static inline uint8_t *make_mem(uint64_t npages)
{
	uint8_t *mem = calloc(npages, BS);
	for (uint64_t p = 0; p < npages; p++) {
		uint8_t *pg = mem + p * BS;
		switch (p % 5) {
		case 0:
			break;
		case 1:
			for (int i = 0; i < BS; i++)
				pg[i] = (uint8_t)"kpeek reads kdump pages "[(i + p) % 24];
			break;
		case 2:
			for (int i = 0; i < BS; i++)
				pg[i] = (uint8_t)next_rand();
			break;
		case 3:
			pg[p % BS] = (uint8_t)(p + 1);
			pg[BS - 1] = 0x5a;
			break;
		case 4:
			for (int i = 0; i < BS; i++)
				pg[i] = (uint8_t)(i / 16 + p);
			break;
		}
	}
	return mem;
}

// Holes at 5 and 20-23, excluded pages at 30 and 47, the rest dumped.
static inline void make_state(uint8_t *state)
{
	memset(state, MKK_DUMPED, NPAGES);
	state[5] = MKK_HOLE;
	for (int i = 20; i < 24; i++)
		state[i] = MKK_HOLE;
	state[30] = MKK_EXCLUDED;
	state[47] = MKK_EXCLUDED;
	state[NPAGES - 1] = MKK_HOLE;
}

static inline void build(const struct mkkdump_opts *opts, uint8_t **img, size_t *len,
		  struct mkkdump_layout *lay)
{
	mkkdump_build(opts, img, len, lay);
}

#endif
