// SPDX-License-Identifier: MIT
// A split dump (makedumpfile --split) read as one: the synthetic kernel's
// kdump made as 3 parts, given in any order, reads as the whole dump; a part
// alone says what it is; a part missing, given twice, or not a part, or of
// another dump, is refused naming it (core/split.c, format/kdump.c).
#include <unistd.h>

#include "test.h"
#include "collect.h"
#include "synthkernel.h"

static char *write_tmp(const uint8_t *img, size_t len)
{
	const char *t = getenv("TMPDIR");
	char *path;
	if (asprintf(&path, "%s/kp-split-XXXXXX", t && *t ? t : "/tmp") < 0)
		abort();
	int fd = mkstemp(path);
	if (fd < 0 || write(fd, img, len) != (ssize_t)len)
		abort();
	close(fd);
	return path;
}

static char *part_file(unsigned i, unsigned n)
{
	struct sk_opts so = { .format = SK_KDUMP, .ntasks = 3, .split_parts = n, .split_part = i };
	uint8_t *img;
	size_t len;
	sk_build(&so, &img, &len);
	char *path = write_tmp(img, len);
	free(img);
	return path;
}

static struct kp_error *open_set(const char *const *paths, size_t n, struct kp_kernel **ret)
{
	KP_OPTS(kp_open_options, o, .cores = paths, .ncores = n, .core = paths[0]);
	return kp_kernel_open(&o, ret);
}

// Every physical byte of a and b is the same, and so are the tasks.
static void check_same(struct kp_kernel *a, struct kp_kernel *b)
{
	const struct kp_range *r;
	size_t n = kp_kernel_ranges(a, KP_PHYS, &r);
	static uint8_t x[4096], y[4096];
	for (size_t i = 0; i < n; i++)
		for (uint64_t pa = r[i].start; pa < r[i].end; pa += 4096) {
			struct kp_error *ea = kp_read(a, KP_PHYS, pa, x, 4096);
			struct kp_error *eb = kp_read(b, KP_PHYS, pa, y, 4096);
			CHECK((ea == NULL) == (eb == NULL));
			if (!ea && !eb && memcmp(x, y, 4096))
				FAILF("physical 0x%" PRIx64 " differs", pa);
			kp_error_destroy(ea);
			kp_error_destroy(eb);
		}
	struct kp_task *ta, *tb;
	size_t na, nb;
	CHECK_OK(kpt_tasks(a, false, &ta, &na));
	CHECK_OK(kpt_tasks(b, false, &tb, &nb));
	CHECK_U64(nb, na);
	free(ta);
	free(tb);
}

TEST(three_parts_in_any_order)
{
	struct sk_opts whole = { .format = SK_KDUMP, .ntasks = 3 };
	uint8_t *img;
	size_t len;
	sk_build(&whole, &img, &len);
	char *wpath = write_tmp(img, len);
	free(img);
	char *p[3] = { part_file(0, 3), part_file(1, 3), part_file(2, 3) };
	const char *order[3] = { p[2], p[0], p[1] };
	struct kp_kernel *a = NULL, *b = NULL;
	KP_OPTS(kp_open_options, wo, .core = wpath);
	CHECK_OK(kp_kernel_open(&wo, &a));
	CHECK_OK(open_set(order, 3, &b));
	if (a && b) {
		check_same(a, b);
		KP_INIT(kp_kernel_info, info);
		kp_kernel_get_info(b, &info);
		CHECK_U64(info.nfiles, 3);
		CHECK(info.split == NULL);
	}
	kp_kernel_destroy(a);
	kp_kernel_destroy(b);
	// A part missing, the same part twice, a whole dump among parts.
	const char *missing[2] = { p[0], p[2] };
	CHECK_ERR(open_set(missing, 2, &b), KP_ERR_INVALID, "are in none of the 2 parts given (a part is missing)");
	const char *twice[4] = { p[0], p[1], p[1], p[2] };
	CHECK_ERR(open_set(twice, 4, &b), KP_ERR_INVALID, "the same part twice?");
	const char *mixed[3] = { p[0], wpath, p[2] };
	CHECK_ERR(open_set(mixed, 3, &b), KP_ERR_INVALID, "is not a part of a split dump");
	// A part of another split (two parts, not three): its frames overlap.
	char *other = part_file(0, 2);
	const char *foreign[3] = { p[1], other, p[2] };
	CHECK_ERR(open_set(foreign, 3, &b), KP_ERR_INVALID, "overlaps");
	for (int i = 0; i < 3; i++) {
		unlink(p[i]);
		free(p[i]);
	}
	unlink(other);
	free(other);
	unlink(wpath);
	free(wpath);
}

// A part alone reads its own frames and says it is a part; what it lacks
// fails naming the split, or the open fails saying it is a part.
TEST(one_part_alone)
{
	for (unsigned i = 0; i < 3; i++) {
		char *p = part_file(i, 3);
		struct kp_kernel *k = NULL;
		KP_OPTS(kp_open_options, o, .core = p);
		struct kp_error *err = kp_kernel_open(&o, &k);
		if (err) {
			CHECK(strstr(kp_error_message(err), "is part of a split dump: page frames 0x") != NULL);
			kp_error_destroy(err);
		} else {
			KP_INIT(kp_kernel_info, info);
			kp_kernel_get_info(k, &info);
			CHECK(info.split && strstr(info.split, "the others were not given"));
			const struct kp_range *r;
			size_t n = kp_kernel_ranges(k, KP_PHYS, &r);
			uint8_t b[8];
			// Frame 0 is in part 0 only.
			struct kp_error *e = kp_read(k, KP_PHYS, n ? r[0].start : 0, b, 8);
			if (i == 0)
				CHECK(e == NULL);
			else
				CHECK(e && strstr(kp_error_message(e), "another file of the split dump"));
			kp_error_destroy(e);
			kp_kernel_destroy(k);
		}
		unlink(p);
		free(p);
	}
}

int main(void)
{
	RUN(three_parts_in_any_order);
	RUN(one_part_alone);
	return TEST_SUMMARY();
}
