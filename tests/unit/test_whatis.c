// SPDX-License-Identifier: MIT
// kp_whatis (linux/mm/whatis.c) of per-CPU addresses on the synthetic
// kernel's per-CPU areas (tests/gen/synthsys.h): zero-based per-CPU
// symbols as x86-64 has them until 6.14, CPUs 0-2 possible, each area
// SKS_PCPU_UNIT bytes (pcpu_unit_size) with its static variables below
// SKS_PC_END. Every value expected is one the generator wrote.
#include "test.h"
#include "linux/mm/mm.h"
#include "synthkernel.h"
#include "synthsys.h"

#define VA(pa) SKP_VA(pa)

static struct kp_kernel *open_sys(const struct sks_word *edit)
{
	struct sk_opts o = { .format = SK_ELF, .ntasks = 12, .procs = SK_PROCS_LIST, .sys = SK_SYS_NEW,
			     .edit = edit ? sks_put_words : NULL, .edit_arg = (void *)edit };
	struct kp_kernel *k = NULL;
	CHECK_OK(sk_open(&o, &k));
	return k;
}

// The percpu fact of a, or NULL.
static const struct kp_whatis_fact *percpu_fact(const struct kp_whatis *w)
{
	for (size_t i = 0; i < w->nfacts; i++)
		if (w->facts[i].kind == KP_WHATIS_PERCPU)
			return &w->facts[i];
	return NULL;
}

struct want {
	uint64_t address;
	bool percpu;
	uint32_t cpu;
	const char *symbol;	// NULL: past the static variables
	uint64_t offset, size;
};

static void check(struct kp_kernel *k, const struct want *c)
{
	struct kp_whatis *w = NULL;
	CHECK_OK(kp_whatis_create(k, KP_VIRT, c->address, &w));
	if (!w)
		return;
	const struct kp_whatis_fact *f = percpu_fact(w);
	CHECK(!f == !c->percpu);
	if (f && c->percpu) {
		CHECK_STR(f->kind_name, "percpu");
		CHECK_U64(f->cpu, c->cpu);
		CHECK(!f->sym.name == !c->symbol);
		if (f->sym.name && c->symbol)
			CHECK_STR(f->sym.name, c->symbol);
		CHECK_U64(f->offset, c->offset);
		CHECK_U64(f->start, VA(SKS_PCPU(c->cpu)));
		CHECK_U64(f->end - f->start, c->size);
	}
	kp_whatis_destroy(w);
}

TEST(per_cpu_variables_and_areas)
{
	struct kp_kernel *k = open_sys(NULL);
	if (!k)
		return;
	const struct want cases[] = {
		// CPU 1's runqueues + 8, CPU 2's first byte of runqueues.
		{ VA(SKS_RQ(1)) + 8, true, 1, "runqueues", 8, SKS_PCPU_UNIT },
		{ VA(SKS_RQ(2)), true, 2, "runqueues", 0, SKS_PCPU_UNIT },
		// Past the static variables: the area's dynamic part.
		{ VA(SKS_PCPU(0)) + SKS_PC_END + 0x10, true, 0, NULL, SKS_PC_END + 0x10, SKS_PCPU_UNIT },
		// CPU 3 has an offset but is not possible: no area.
		{ VA(SKS_PCPU(3)) + SKS_PC_RQ, false, 0, NULL, 0, 0 },
		// Outside every area.
		{ VA(SKS_GROUPS) + 0x10, false, 0, NULL, 0, 0 },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		printf("  0x%" PRIx64 "\n", cases[i].address);
		check(k, &cases[i]);
	}
	kp_kernel_destroy(k);
}

// A pcpu_unit_size past any kernel's (64 MiB) is not believed: the area
// is the static variables' alone.
TEST(an_impossible_unit_size_is_not_believed)
{
	uint64_t slot = 0;
	for (size_t i = 0; sks_scalars[i].name; i++)
		if (!strcmp(sks_scalars[i].name, "pcpu_unit_size"))
			slot = SKS_SCALARS + 8 * i;
	CHECK(slot != 0);
	const struct sks_word edit[] = { { slot, 0x7fffffff, 4 }, { 0 } };
	struct kp_kernel *k = open_sys(edit);
	if (!k)
		return;
	check(k, &(struct want){ VA(SKS_RQ(1)), true, 1, "runqueues", 0, SKS_PC_END });
	check(k, &(struct want){ VA(SKS_PCPU(1)) + SKS_PC_END + 0x10, false, 0, NULL, 0, 0 });
	kp_kernel_destroy(k);
}

// A kallsyms of functions only has no pcpu_unit_size: the boot log's line
// as pcpu_embed_first_chunk() prints it gives the static size (checked
// by linux/mm/percpu.c against the section's) and the unit size, if the
// unit holds the static, reserved and dynamic sizes in whole pages.
TEST(sizes_of_the_boot_log_line)
{
	static const struct {
		const char *line;
		uint64_t page_size, static_size, unit;	// unit 0: not taken
	} cases[] = {
		{ "percpu: Embedded 20 pages/cpu s42600 r8192 d31128 u81920", 4096, 42600, 81920 },
		{ "percpu: Embedded 64 pages/cpu s233472 r8192 d20480 u262144", 4096, 233472, 262144 },
		// A unit that cannot hold its parts, or is no whole page.
		{ "percpu: Embedded 20 pages/cpu s42600 r8192 d31128 u73728", 4096, 0, 0 },
		{ "percpu: Embedded 20 pages/cpu s42600 r8192 d31128 u81921", 4096, 0, 0 },
		{ "percpu: Embedded 20 pages/cpu s42600 r8192 d31128 u81920", 65536, 0, 0 },
		{ "percpu: Embedded 20 pages/cpu s42600 r8192 d31128 u81920", 0, 0, 0 },
		// Past any kernel's (64 MiB), sums that wrap, cut short, another allocator.
		{ "percpu: Embedded 20 pages/cpu s42600 r8192 d31128 u134217728", 4096, 0, 0 },
		{ "percpu: Embedded 1 pages/cpu s42600 r18446744073709551615 d1 u81920", 4096, 0, 0 },
		{ "percpu: Embedded 1 pages/cpu s18446744073709551615 r8192 d8192 u81920", 4096, 0, 0 },
		{ "percpu: Embedded 20 pages/cpu s42600 r8192 d31128", 4096, 0, 0 },
		{ "percpu: 20 4K pages/cpu s42600 r8192 d31128", 4096, 0, 0 },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct kp_lx_percpu_line got = { 0, 0 };
		printf("  %s\n", cases[i].line);
		bool ok = kp_lx_percpu_line(cases[i].line, strlen(cases[i].line), cases[i].page_size, &got);
		CHECK(ok == (cases[i].unit != 0));
		CHECK_U64(got.static_size, cases[i].static_size);
		CHECK_U64(got.unit, cases[i].unit);
	}
	// Not NUL-terminated: the record's length bounds it.
	const char *more = "percpu: Embedded 20 pages/cpu s42600 r8192 d31128 u81920999";
	struct kp_lx_percpu_line got = { 0, 0 };
	CHECK(kp_lx_percpu_line(more, strlen(more) - 3, 4096, &got));
	CHECK_U64(got.unit, 81920);
}

int main(void)
{
	RUN(per_cpu_variables_and_areas);
	RUN(an_impossible_unit_size_is_not_believed);
	RUN(sizes_of_the_boot_log_line);
	return TEST_SUMMARY();
}
