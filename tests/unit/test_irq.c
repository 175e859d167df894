// SPDX-License-Identifier: MIT
// kp_irq_iter (linux/irq/irq.c) on the synthetic kernel's IRQs
// (tests/gen/synthsys.h, synthsys.c's irqs()): IRQ 0 and 1 edge on the
// IO-APIC, 9 fasteoi and shared; the maple tree sparse_irqs (new) or the
// irq_desc array (old).
#include "sys_open.h"

struct want {
	uint32_t irq;
	const char *chip, *handler;
	bool has_hwirq;
	uint64_t hwirq, counts[4];
	const char *actions[2];
};

static const struct want irqs[] = {
	{ 0, "IO-APIC", "edge", true, 2, { 100, 20, 3, 0 }, { "timer" } },
	{ 1, "IO-APIC", "edge", true, 1, { 5, 0, 0, 0 }, { "i8042" } },
	{ 9, "-", "fasteoi", false, 9, { 0, 0, 7, 0 }, { "acpi", "shared" } },
};

static enum sk_sys generation;

static void check_irq(const struct kp_irq *q)
{
	const struct want *w = NULL;
	for (size_t i = 0; i < 3; i++)
		if (irqs[i].irq == q->irq)
			w = &irqs[i];
	// The array is a global; the tree's descriptors are allocated.
	CHECK_U64(q->desc, generation == SK_SYS_OLD ? SKS_IMG(SKS_DESC(q->irq)) : SKP_VA(SKS_DESC(q->irq)));
	CHECK_U64(q->nr_irqs, SKS_NR_IRQS_VALUE);
	CHECK_U64(q->ncpus, 4);
	if (!w) {	// the array's other descriptors: nothing
		CHECK(!q->chip && !q->handler && q->nactions == 0 && q->total == 0);
		return;
	}
	CHECK_STR(q->chip, w->chip);
	CHECK_STR(q->handler, w->handler);
	CHECK(q->has_hwirq == w->has_hwirq);
	CHECK_U64(q->hwirq, w->hwirq);
	uint64_t total = 0;
	for (unsigned cpu = 0; cpu < 4; cpu++) {
		CHECK_U64(q->counts[cpu], w->counts[cpu]);	// CPU 3 is not possible: 0
		total += w->counts[cpu];
	}
	CHECK_U64(q->total, total);
	size_t n = w->actions[1] ? 2 : 1;
	CHECK_U64(q->nactions, n);
	for (size_t i = 0; i < n && i < q->nactions; i++)
		CHECK_STR(q->actions[i], w->actions[i]);
}

// The IRQs yielded (a bit each), the error, the status.
static struct kp_error *walk(struct kp_kernel *k, uint32_t *seen, struct kp_walk_status *st)
{
	struct kp_irq_iter *it;
	const struct kp_irq *q;
	struct kp_error *err = kp_irq_iter_create(k, &it);
	*seen = 0;
	if (err)
		return err;
	while (!(err = kp_irq_iter_next(it, &q)) && q) {
		CHECK(q->irq < 32 && *seen >> q->irq == 0);	// in IRQ order, once
		*seen |= 1u << (q->irq & 31);
		check_irq(q);
	}
	kp_irq_iter_status(it, st);
	kp_irq_iter_destroy(it);
	return err;
}

TEST(irqs_of_both_generations)
{
	for (enum sk_sys sys = SK_SYS_NEW; sys <= SK_SYS_OLD; sys++) {
		struct kp_kernel *k = sys_open(generation = sys, NULL);
		KP_INIT(kp_walk_status, st);
		uint32_t seen;
		if (!k)
			return;
		CHECK_OK(walk(k, &seen, &st));
		CHECK_U64(seen, sys == SK_SYS_NEW ? 0x203 : 0xffff);	// the tree's three, or the whole array
		CHECK(st.end == KP_WALK_COMPLETE && st.left_out == 0);
		kp_kernel_destroy(k);
	}
}

struct hostile {
	const char *what;
	struct sks_word edit[3];
	uint32_t seen;
	enum kp_error_code code;
	const char *message;
};

TEST(hostile_descriptors)
{
	const struct hostile cases[] = {
		// IRQ 9's action chain loops: bounded, IRQ 9 left out.
		{ "action cycle", { { SKS_ACTION(3) + SKS_ACTION_NEXT, SKP_VA(SKS_ACTION(2)), 8 } }, 0x3, KP_ERR_LOOP,
		  "more than 256 irqactions" },
		// A descriptor that says it is another IRQ.
		{ "wrong irq", { { SKS_DESC(1) + SKS_DESC_IRQ, 7, 4 } }, 0x201, KP_ERR_FORMAT,
		  "says IRQ 7, found at 1" },
		// IRQ 1's chip points nowhere.
		{ "unmapped", { { SKS_DESC(1) + SKS_DESC_CHIP, UNMAPPED, 8 } }, 0x201, KP_ERR_FAULT,
		  "0xffffc90000400000" },
		// IRQ 0's flow name is on a page the dump lacks.
		{ "no page", { { SKS_DESC(0) + SKS_DESC_NAME, SK_HOLE, 8 } }, 0x202, KP_ERR_FAULT, "IRQ 0" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct hostile *c = &cases[i];
		struct kp_kernel *k = sys_open(generation = SK_SYS_NEW, c->edit);
		KP_INIT(kp_walk_status, st);
		uint32_t seen;
		if (!k)
			return;
		printf("  %s\n", c->what);
		CHECK_ERR(walk(k, &seen, &st), c->code, c->message);
		CHECK_U64(seen, c->seen);
		CHECK(st.end == KP_WALK_STOPPED && st.left_out == 1);
		kp_kernel_destroy(k);
	}
}

// What /proc/interrupts leaves out and kp_irq_shown() tells: IRQ 1 hidden
// (IRQ_HIDDEN in its settings), IRQ 0's only action the chained_action
// placeholder and then no count, and the chip that prints its own name.
TEST(hidden_chained_and_printed_chips)
{
	struct kp_symbol print;
	const struct sks_word edit[] = {
		{ SKS_DESC(1) + SKS_DESC_STATUS, SKS_IRQ_HIDDEN | 0x400, 4 },
		{ SKS_DESC(0) + SKS_DESC_ACTION, SKS_IMG(SKS_CHAINED_ACTION), 8 },
		{ SKS_PCPU(0) + SKS_PC_KSTAT(0), 0, 4 }, { SKS_PCPU(1) + SKS_PC_KSTAT(0), 0, 4 },
		{ SKS_PCPU(2) + SKS_PC_KSTAT(0), 0, 4 },
		{ 0, 0, 0 },
	};
	struct kp_kernel *k = sys_open(SK_SYS_NEW, edit);
	if (!k)
		return;
	struct kp_irq_iter *it;
	const struct kp_irq *q;
	uint32_t shown = 0, hidden = 0, chained = 0;
	CHECK_OK(kp_symbol_by_name(k, "ioapic_chip", &print));
	CHECK_OK(kp_irq_iter_create(k, &it));
	while (it && kp_ok(kp_irq_iter_next(it, &q)) && q) {
		shown |= kp_irq_shown(q) << q->irq;
		hidden |= q->hidden << q->irq;
		chained |= q->chained << q->irq;
		CHECK(!q->chip_print);	// none of the chips prints itself
	}
	kp_irq_iter_destroy(it);
	CHECK_U64(shown, 0x200);
	CHECK_U64(hidden, 0x2);
	CHECK_U64(chained, 0x1);
	kp_kernel_destroy(k);
	// IRQ 9's chip (no name) prints itself with the function at
	// ioapic_chip's address (any symbol will do): named, chip still "-".
	const struct sks_word printer[] = {
		{ SKS_CHIP(1) + SKS_CHIP_PRINT, print.address, 8 }, { 0, 0, 0 }
	};
	if (!(k = sys_open(SK_SYS_NEW, printer)))
		return;
	CHECK_OK(kp_irq_iter_create(k, &it));
	while (it && kp_ok(kp_irq_iter_next(it, &q)) && q)
		if (q->irq == 9) {
			CHECK_STR(q->chip, "-");
			CHECK_STR(q->chip_print, "ioapic_chip");
		}
	kp_irq_iter_destroy(it);
	kp_kernel_destroy(k);
}

// Counts beyond the kernel's own bound, and kernels without descriptors.
TEST(bounds_and_missing_descriptors)
{
	struct kp_irq_iter *it = NULL;
	// IRQ 9 in a tree whose nr_irqs is 5.
	const struct sks_word few[] = { { SKS_NR_IRQS, 5, 4 }, { 0, 0, 0 } };
	struct kp_kernel *k = sys_open(SK_SYS_NEW, few);
	if (!k)
		return;
	CHECK_ERR(kp_irq_iter_create(k, &it), KP_ERR_FORMAT, "at index 9, not below nr_irqs 5");
	kp_kernel_destroy(k);
	// Only two descriptors allowed: the third is one too many.
	const struct sks_word two[] = { { SKS_NR_IRQS, 2, 4 }, { 0, 0, 0 } };
	if (!(k = sys_open(SK_SYS_NEW, two)))
		return;
	CHECK_ERR(kp_irq_iter_create(k, &it), KP_ERR_LOOP, "more IRQ descriptors than nr_irqs 2");
	kp_kernel_destroy(k);
	// More descriptors than the irq_desc array holds (NR_IRQS 16).
	const struct sks_word more[] = { { SKS_NR_IRQS, 17, 4 }, { 0, 0, 0 } };
	if (!(k = sys_open(SK_SYS_OLD, more)))
		return;
	CHECK_ERR(kp_irq_iter_create(k, &it), KP_ERR_FORMAT,
		  "nr_irqs 17: more descriptors than the 2048 bytes of irq_desc hold");
	kp_kernel_destroy(k);
	const struct sks_word huge[] = { { SKS_NR_IRQS, 1u << 21, 4 }, { 0, 0, 0 } };
	if (!(k = sys_open(SK_SYS_OLD, huge)))
		return;
	CHECK_ERR(kp_irq_iter_create(k, &it), KP_ERR_FORMAT, "nr_irqs is 2097152");
	kp_kernel_destroy(k);
	if (!(k = sys_open(SK_SYS_NONE, NULL)))
		return;
	CHECK_ERR(kp_irq_iter_create(k, &it), KP_ERR_NOT_FOUND, "struct irq_desc");
	CHECK(it == NULL);
	kp_kernel_destroy(k);
}

int main(void)
{
	RUN(irqs_of_both_generations);
	RUN(hostile_descriptors);
	RUN(hidden_chained_and_printed_chips);
	RUN(bounds_and_missing_descriptors);
	return TEST_SUMMARY();
}
