// SPDX-License-Identifier: MIT
// kp_search (linux/mm/search.c) on the synthetic kernel with processes
// (tests/gen/synthprocs.h): every expected hit is a byte string or value
// the generator or the test's edit wrote at a known address.
#include "test.h"
#include "synthkernel.h"
#include "synthprocs.h"

static const struct sk_opts base = { .format = SK_ELF, .ntasks = 3, .procs = SK_PROCS_LIST };

// Free RAM the tests write into (synthprocs.h: 0x32000-0x3e000).
#define VALUE_PA (SKP_FREE + 0x100)
#define VALUE UINT64_C(0x5e4c4ba1cafe4321)
#define NEAR_PA (SKP_FREE + 0x200)	// VALUE but its low byte
#define NEAR UINT64_C(0x5e4c4ba1cafe43ff)
#define WORD_PA (SKP_FREE + 0x304)	// a 4-byte value at a 4-byte boundary
#define WORD UINT32_C(0xfeedc0de)
#define MARK "KPSEARCH!"
#define MARK_PA (SKP_FREE + 0x1000 - 4)	// across the page boundary at SKP_FREE + 0x1000

static void edit(uint8_t *m, void *arg)
{
	uint64_t v = VALUE, n = NEAR;
	uint32_t w = WORD;
	memcpy(m + VALUE_PA, &v, 8);
	memcpy(m + NEAR_PA, &n, 8);
	memcpy(m + WORD_PA, &w, 4);
	memcpy(m + MARK_PA, MARK, sizeof(MARK) - 1);
}

static struct kp_kernel *kernel(void)
{
	struct sk_opts o = base;
	o.edit = edit;
	struct kp_kernel *k = NULL;
	CHECK_OK(sk_open(&o, &k));
	return k;
}

// Every hit of spec, at most max of them, into got; how many.
static size_t hits(struct kp_kernel *k, const struct kp_search_spec *spec, uint64_t *got, size_t max)
{
	struct kp_search *s;
	size_t n = 0;
	CHECK_OK(kp_search_create(k, spec, &s));
	if (!s)
		return 0;
	const struct kp_search_hit *h;
	struct kp_error *err;
	while (!(err = kp_search_next(s, &h)) && h) {
		if (n < max)
			got[n] = h->address;
		n++;
		if (spec->space == KP_SEARCH_USER && (!h->vma || h->address < h->vma->start ||
						     h->address >= h->vma->end))
			FAILF("hit 0x%" PRIx64 " is not in the mapping it names", h->address);
	}
	CHECK_OK(err);
	kp_search_destroy(s);
	return n;
}

static void check_hits(struct kp_kernel *k, const struct kp_search_spec *spec, const uint64_t *want,
		       size_t nwant)
{
	uint64_t got[8];
	size_t n = hits(k, spec, got, 8);
	CHECK_U64(n, nwant);
	for (size_t i = 0; i < n && i < nwant; i++)
		CHECK_U64(got[i], want[i]);
}

TEST(values_under_the_ignored_bits)
{
	struct kp_kernel *k = kernel();
	if (!k)
		return;
	KP_INIT(kp_search_spec, sp);
	sp.space = KP_SEARCH_PHYS;
	sp.value = VALUE;
	sp.width = 8;
	check_hits(k, &sp, (const uint64_t[]){ VALUE_PA }, 1);
	sp.ignore = 0xff;
	check_hits(k, &sp, (const uint64_t[]){ VALUE_PA, NEAR_PA }, 2);
	// The kernel's view: the same bytes at their direct-map addresses.
	sp.space = KP_SEARCH_KERNEL;
	check_hits(k, &sp, (const uint64_t[]){ SK_DIRECT + VALUE_PA, SK_DIRECT + NEAR_PA }, 2);
	// A 4-byte value at a 4-byte boundary that is not an 8-byte one.
	sp.space = KP_SEARCH_PHYS;
	sp.value = WORD;
	sp.ignore = 0;
	sp.width = 4;
	check_hits(k, &sp, (const uint64_t[]){ WORD_PA }, 1);
	sp.width = 8;
	check_hits(k, &sp, NULL, 0);
	kp_kernel_destroy(k);
}

TEST(strings_across_blocks_and_slices)
{
	struct kp_kernel *k = kernel();
	if (!k)
		return;
	KP_INIT(kp_search_spec, sp);
	sp.space = KP_SEARCH_PHYS;
	sp.bytes = MARK;
	sp.nbytes = sizeof(MARK) - 1;
	check_hits(k, &sp, (const uint64_t[]){ MARK_PA }, 1);
	// A slice ending inside the string finds it (its start is the
	// slice's); the slice after it does not.
	sp.phys_hi = SKP_FREE + 0x1000;
	check_hits(k, &sp, (const uint64_t[]){ MARK_PA }, 1);
	sp.phys_lo = SKP_FREE + 0x1000;
	sp.phys_hi = 0;
	check_hits(k, &sp, NULL, 0);
	// --start and --end: a hit is where the string starts.
	sp.phys_lo = 0;
	sp.start = MARK_PA + 1;
	check_hits(k, &sp, NULL, 0);
	sp.start = MARK_PA;
	sp.end = MARK_PA + 1;
	check_hits(k, &sp, (const uint64_t[]){ MARK_PA }, 1);
	kp_kernel_destroy(k);
}

// Task 1's arguments cross from user page A into page B, which lies below
// A in physical memory: found in its memory, not in physical memory; the
// 2 MiB mapping of physical 0 shows page A's bytes a second time.
TEST(a_process_memory_through_its_page_tables)
{
	struct kp_kernel *k = kernel();
	if (!k)
		return;
	KP_INIT(kp_search_spec, sp);
	sp.space = KP_SEARCH_USER;
	sp.pid = 1;
	sp.bytes = "echo hi";
	sp.nbytes = 7;
	check_hits(k, &sp, (const uint64_t[]){ SKP_ARG_START + 11 }, 1);
	sp.space = KP_SEARCH_PHYS;
	sp.pid = 0;
	check_hits(k, &sp, NULL, 0);
	sp.space = KP_SEARCH_USER;
	sp.pid = 1;
	sp.bytes = "/bin/sh";
	check_hits(k, &sp, (const uint64_t[]){ SKP_U_HUGE + SKP_UPAGE_A + 0xff0, SKP_ARG_START }, 2);
	// Mappings below start or from end on are passed by, not read.
	sp.start = SKP_ARG_START;
	check_hits(k, &sp, (const uint64_t[]){ SKP_ARG_START }, 1);
	sp.start = 0;
	sp.end = SKP_ARG_START;
	check_hits(k, &sp, (const uint64_t[]){ SKP_U_HUGE + SKP_UPAGE_A + 0xff0 }, 1);
	sp.end = 0;
	struct kp_search *s;
	CHECK_OK(kp_search_create(k, &sp, &s));
	const struct kp_search_hit *h;
	while (!kp_search_next(s, &h) && h)
		;
	KP_INIT(kp_search_status, st);
	kp_search_status(s, &st);
	// The huge mapping past RAM, the stack's untouched and swapped pages.
	CHECK(st.unreadable > 0 && st.pages > 0 && !st.bound);
	kp_search_destroy(s);
	kp_kernel_destroy(k);
}

static bool stop_at_once(void *arg, const struct kp_search_status *st)
{
	(*(unsigned *)arg)++;
	return false;
}

TEST(the_caller_ends_a_search)
{
	struct kp_kernel *k = kernel();
	if (!k)
		return;
	unsigned calls = 0;
	KP_INIT(kp_search_spec, sp);
	sp.space = KP_SEARCH_PHYS;
	sp.bytes = MARK;
	sp.nbytes = sizeof(MARK) - 1;
	sp.block_fn = stop_at_once;
	sp.block_arg = &calls;
	check_hits(k, &sp, NULL, 0);
	CHECK_U64(calls, 1);
	kp_kernel_destroy(k);
}

TEST(specs_that_cannot_be_searched)
{
	struct kp_kernel *k = kernel();
	struct kp_search *s = NULL;
	if (!k)
		return;
	static const struct {
		struct kp_search_spec spec;
		const char *why;
	} bad[] = {
		{ { .sz = sizeof(struct kp_search_spec), .width = 3 }, "a value is 8 or 4 bytes wide" },
		{ { .sz = sizeof(struct kp_search_spec), .width = 4, .value = 0x100000000 }, "never found" },
		{ { .sz = sizeof(struct kp_search_spec), .bytes = "x", .nbytes = KP_SEARCH_MAX_BYTES + 1 },
		  "a string of 1 to 4096 bytes" },
		{ { .sz = sizeof(struct kp_search_spec), .bytes = "x", .nbytes = 0 }, "a string of 1" },
		{ { .sz = sizeof(struct kp_search_spec), .width = 8, .start = 2, .end = 1 },
		  "end must be above start" },
		{ { .sz = sizeof(struct kp_search_spec), .width = 8, .space = KP_SEARCH_USER },
		  "needs its PID" },
		{ { .sz = sizeof(struct kp_search_spec), .width = 8, .space = KP_SEARCH_USER, .pid = 1,
		    .phys_hi = 0x1000 }, "no slice" },
		{ { .sz = sizeof(struct kp_search_spec), .width = 8, .space = 7 }, "space is not" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		CHECK_ERR(kp_search_create(k, &bad[i].spec, &s), KP_ERR_INVALID, bad[i].why);
	CHECK_ERR(kp_search_create(k, NULL, &s), KP_ERR_INVALID, "none given");
	KP_INIT(kp_search_spec, sp);
	sp.space = KP_SEARCH_USER;
	sp.pid = 99;
	sp.width = 8;
	struct kp_error *err = kp_search_create(k, &sp, &s);	// no such process
	CHECK(err && kp_error_code(err) == KP_ERR_NOT_FOUND && s == NULL);
	kp_error_destroy(err);
	kp_kernel_destroy(k);
}

int main(void)
{
	RUN(values_under_the_ignored_bits);
	RUN(strings_across_blocks_and_slices);
	RUN(a_process_memory_through_its_page_tables);
	RUN(the_caller_ends_a_search);
	RUN(specs_that_cannot_be_searched);
	return TEST_SUMMARY();
}
