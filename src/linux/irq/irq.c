// SPDX-License-Identifier: MIT
// kp_irq_iter: the interrupt descriptors, as /proc/interrupts
// (kernel/irq/proc.c show_interrupts()) and crash's irq show them.
//
// Where the descriptors are (kernel/irq/irqdesc.c), by version:
//   CONFIG_SPARSE_IRQ (Debian's x86-64 and arm64): the radix tree
//   irq_desc_tree, indexed by IRQ number, until 6.4; the maple tree
//   sparse_irqs from 6.5 (721255b9826b, "genirq: Use a maple tree for
//   interrupt descriptor management"). Without it: the array
//   irq_desc[NR_IRQS]. nr_irqs bounds them all.
// Per-CPU counts: desc->kstat_irqs, an unsigned int per CPU until 6.9, a
// struct irqstat (its cnt) from 6.10 (86d2a2f51fba, "genirq: Avoid
// summation loops for /proc/interrupts").
// What /proc/interrupts hides: a descriptor without a handler, or whose
// handler is the chained_action placeholder (irq_desc_is_chained()), and
// no count; and since 5.11 ("genirq: Allow interrupts to be excluded from
// /proc/interrupts", used by arm64 for its IPIs, which it prints as IPI0..)
// every descriptor with IRQ_HIDDEN in its settings (irq_settings_is_hidden()).
// A chip may print its own name (irq_print_chip(), GICv2's "GIC-0" since
// 6.0): kpeek names the function, it cannot run it.
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/kernel.h"
#include "core/layout.h"
#include "linux/lib/maple.h"
#include "linux/lib/walk.h"
#include "linux/lib/xarray.h"
#include "util/error.h"
#include "util/vec.h"

#define MAX_IRQS (1u << 20)	// beyond any NR_IRQS + IRQ_BITMAP_BITS slack
#define MAX_ACTIONS 256		// handlers sharing one line
#define MAX_CPUS 8192		// CONFIG_NR_CPUS of MAXSMP
#define NAME_MAX 64

enum { D_IRQ, D_HWIRQ, D_CHIP, D_DOMAIN, D_KSTAT, D_ACTION, D_NAME, D_STATUS, D_N };
static const struct kp_member_spec desc_members[D_N] = {
	[D_IRQ] = { .name = "irq_data.irq" },
	[D_HWIRQ] = { .name = "irq_data.hwirq" },
	[D_CHIP] = { .name = "irq_data.chip" },
	[D_DOMAIN] = { .name = "irq_data.domain", .flags = KP_MEMBER_OPTIONAL },
	[D_KSTAT] = { .name = "kstat_irqs" },
	[D_ACTION] = { .name = "action" },
	[D_NAME] = { .name = "name" },
	[D_STATUS] = { .name = "status_use_accessors" },
};
static const struct kp_struct_spec desc_spec = KP_STRUCT_SPEC("struct irq_desc", desc_members);
enum { C_NAME, C_PRINT, C_N };
static const struct kp_member_spec chip_members[C_N] = {
	[C_NAME] = { .name = "name" },
	[C_PRINT] = { .name = "irq_print_chip" },
};
static const struct kp_struct_spec chip_spec = KP_STRUCT_SPEC("struct irq_chip", chip_members);
enum { A_NEXT, A_NAME, A_N };
static const struct kp_member_spec action_members[A_N] = {
	[A_NEXT] = { .name = "next" },
	[A_NAME] = { .name = "name" },
};
static const struct kp_struct_spec action_spec = KP_STRUCT_SPEC("struct irqaction", action_members);
static const struct kp_member_spec irqstat_members[] = { { .name = "cnt" } };
static const struct kp_struct_spec irqstat_spec = KP_STRUCT_SPEC_OPTIONAL("struct irqstat", irqstat_members);

struct entry {
	uint64_t irq, desc;
};

struct kp_irq_iter {
	struct kp_kernel *k;
	const struct kp_struct_layout *dl, *cl, *al;
	uint64_t cnt_off;		// of the count in a CPU's kstat_irqs entry
	uint32_t ncpus, nr_irqs;
	uint64_t hidden_bit;		// IRQ_HIDDEN (5.11+); 0 before
	uint64_t chained_action;	// &chained_action; 0 if unknown
	struct entry *e;		// the descriptors, in IRQ order
	size_t n, cap, next;
	struct kp_irq irq;
	uint64_t *counts;
	bool *possible;			// per CPU below nr_cpu_ids
	char chip[NAME_MAX], handler[NAME_MAX], chip_print[NAME_MAX];
	char (*names)[NAME_MAX];
	const char **actions;
	struct kp_lx_walk walk;
};

static struct kp_error *add(struct kp_irq_iter *it, uint64_t irq, uint64_t desc)
{
	if (it->n >= it->nr_irqs)
		return kp_error_create(KP_ERR_LOOP, "more IRQ descriptors than nr_irqs %u (corrupt?)",
				       it->nr_irqs);
	if (irq >= it->nr_irqs)
		return kp_error_create(KP_ERR_FORMAT, "IRQ descriptor 0x%" PRIx64 " at index %" PRIu64
				       ", not below nr_irqs %u (corrupt?)", desc, irq, it->nr_irqs);
	if (!KP_VEC_RESERVE(it->e, it->cap, it->n + 1))
		return &kp_enomem;
	it->e[it->n++] = (struct entry){ irq, desc };
	return NULL;
}

static struct kp_error *on_xa(uint64_t index, uint64_t entry, void *arg)
{
	return add(arg, index, entry);
}

static struct kp_error *on_mt(uint64_t first, uint64_t last, uint64_t entry, void *arg)
{
	if (first != last)
		return kp_error_create(KP_ERR_FORMAT, "sparse_irqs: descriptor 0x%" PRIx64 " for IRQs %" PRIu64
				       "-%" PRIu64 " (corrupt?)", entry, first, last);
	return add(arg, first, entry);
}

// The descriptors by IRQ number: the maple tree, the radix tree or the array.
static struct kp_error *collect(struct kp_irq_iter *it)
{
	struct kp_symbol s;
	if (kp_symbol_find(it->k, "sparse_irqs", &s))
		return kp_lx_mt_walk(it->k, s.address, it->nr_irqs, on_mt, it);
	if (kp_symbol_find(it->k, "irq_desc_tree", &s)) {
		struct kp_lx_xa_layout xa;
		struct kp_error *err = kp_lx_xa_layout(it->k, &xa);
		return err ? err : kp_lx_xa_walk(it->k, &xa, s.address, on_xa, it);
	}
	if (kp_symbol_find(it->k, "irq_desc", &s) && s.type != 't' && s.type != 'T') {
		// irq_desc[NR_IRQS]: nr_irqs is at most its length, which the
		// symbol's extent gives when the symbols tell it.
		if (s.size && (uint64_t)it->nr_irqs * it->dl->size > s.size)
			return kp_error_create(KP_ERR_FORMAT, "nr_irqs %u: more descriptors than the %" PRIu64
					       " bytes of irq_desc hold (corrupt?)", it->nr_irqs, s.size);
		for (uint32_t i = 0; i < it->nr_irqs; i++) {
			struct kp_error *err = add(it, i, s.address + i * it->dl->size);
			if (err)
				return err;
		}
		return NULL;
	}
	return kp_error_create(KP_ERR_NOT_FOUND, "no sparse_irqs, irq_desc_tree or irq_desc symbol "
			       "(the IRQ descriptors)");
}

static struct kp_error *setup(struct kp_irq_iter *it)
{
	static const struct kp_struct_spec *const specs[] = { &desc_spec, &chip_spec, &action_spec };
	const struct kp_struct_layout *l[3], *stat;
	struct kp_error *err = kp_kernel_layouts(it->k, specs, 3, l);
	if (err || (err = kp_kernel_layout(it->k, &irqstat_spec, &stat)))
		return err;
	it->dl = l[0], it->cl = l[1], it->al = l[2];
	it->cnt_off = stat->present ? kp_layout_off(stat, 0) : 0;
	struct kp_symbol s;
	uint32_t nr;
	// total_nr_irqs since 6.13 (irq_get_nr_irqs() reads it).
	if (!kp_symbol_find(it->k, "nr_irqs", &s) && !kp_symbol_find(it->k, "total_nr_irqs", &s))
		return kp_kernel_no_symbol(it->k, "no symbol 'nr_irqs' (or 'total_nr_irqs')");
	if ((err = kp_read_u32(it->k, s.address, &nr)))
		return kp_error_prefix(err, "nr_irqs");
	if (nr > MAX_IRQS)
		return kp_error_create(KP_ERR_FORMAT, "nr_irqs is %u, above %u (corrupt?)", nr, MAX_IRQS);
	it->nr_irqs = nr;
	if (kp_kernel_enum_value(it->k, "IRQ_HIDDEN", &it->hidden_bit) && !it->hidden_bit)
		return kp_error_create(KP_ERR_FORMAT, "IRQ_HIDDEN is 0 in the kernel's BTF");
	if (kp_symbol_find(it->k, "chained_action", &s))
		it->chained_action = s.address;
	it->ncpus = kp_kernel_nr_cpu_ids(it->k);
	if (!it->ncpus || it->ncpus > MAX_CPUS)
		return kp_error_create(KP_ERR_FORMAT, "nr_cpu_ids is %u (unreadable or corrupt)", it->ncpus);
	if (!(it->counts = calloc(it->ncpus, sizeof(*it->counts))) ||
	    !(it->possible = calloc(it->ncpus, sizeof(*it->possible))) ||
	    !(it->names = calloc(MAX_ACTIONS, sizeof(*it->names))) ||
	    !(it->actions = calloc(MAX_ACTIONS, sizeof(*it->actions))))
		return &kp_enomem;
	for (uint32_t cpu = 0; cpu < it->ncpus; cpu++)
		it->possible[cpu] = kp_ok(kp_kernel_check_cpu(it->k, cpu));
	return collect(it);
}

struct kp_error *kp_irq_iter_create(struct kp_kernel *k, struct kp_irq_iter **ret)
{
	struct kp_irq_iter *it = calloc(1, sizeof(*it));
	if (!it)
		return &kp_enomem;
	it->k = k;
	kp_lx_walk_init(&it->walk, k);
	struct kp_error *err = setup(it);
	if (err) {
		kp_irq_iter_destroy(it);
		return kp_error_prefix(err, "IRQ descriptors");
	}
	*ret = it;
	return NULL;
}

static struct kp_error *rdname(struct kp_kernel *k, uint64_t p, char *buf, const char *what)
{
	struct kp_error *err = kp_read_cstr(k, p, buf, NAME_MAX);
	return err ? kp_error_prefix(err, "%s at 0x%" PRIx64, what, p) : NULL;
}

// desc->action and its ->next chain into it->irq.actions.
static struct kp_error *read_actions(struct kp_irq_iter *it, uint64_t action)
{
	size_t n = 0;
	while (action) {
		uint8_t buf[64];
		struct kp_error *err;
		if (n == MAX_ACTIONS)
			return kp_error_create(KP_ERR_LOOP, "more than %u irqactions (corrupt?)", MAX_ACTIONS);
		if ((err = kp_kernel_read_struct(it->k, it->al, action, buf, sizeof(buf))))
			return err;
		uint64_t name = kp_layout_u64(it->al, buf, A_NAME);
		it->names[n][0] = '\0';
		if (name && (err = rdname(it->k, name, it->names[n], "irqaction name")))
			return err;
		it->actions[n] = it->names[n];
		n++;
		action = kp_layout_u64(it->al, buf, A_NEXT);
	}
	it->irq.nactions = n;
	return NULL;
}

static struct kp_error *read_counts(struct kp_irq_iter *it, uint64_t kstat)
{
	uint64_t total = 0;
	for (uint32_t cpu = 0; cpu < it->ncpus; cpu++) {
		uint64_t off;
		uint32_t cnt = 0;
		struct kp_error *err;
		// A CPU that is not possible has no per-CPU area: 0, as the
		// kernel, which never counts on it.
		if (kstat && it->possible[cpu]) {
			if ((err = kp_kernel_per_cpu_offset(it->k, cpu, &off)) ||
			    (err = kp_read_u32(it->k, kstat + off + it->cnt_off, &cnt)))
				return kp_error_prefix(err, "kstat_irqs of CPU %u", cpu);
		}
		it->counts[cpu] = cnt;
		total += cnt;
	}
	it->irq.total = total;
	return NULL;
}

// The chip's name and the function that prints it instead, if any.
static struct kp_error *read_chip(struct kp_irq_iter *it, uint64_t chip)
{
	struct kp_irq *q = &it->irq;
	uint8_t buf[512];
	it->chip[0] = it->chip_print[0] = '\0';
	q->chip = NULL;
	q->chip_print = NULL;
	if (!chip)
		return NULL;
	struct kp_error *err = kp_kernel_read_struct(it->k, it->cl, chip, buf, sizeof(buf));
	if (err)
		return kp_error_prefix(err, "irq_chip");
	uint64_t cname = kp_layout_u64(it->cl, buf, C_NAME), print = kp_layout_u64(it->cl, buf, C_PRINT);
	if (cname && (err = rdname(it->k, cname, it->chip, "irq_chip name")))
		return err;
	q->chip = cname ? it->chip : "-";
	struct kp_symbol s;
	if (print) {
		if (!kp_ok(kp_symbol_by_address(it->k, print, &s)) || s.address != print)
			snprintf(it->chip_print, sizeof(it->chip_print), "0x%" PRIx64, print);
		else
			snprintf(it->chip_print, sizeof(it->chip_print), "%s", s.name);
		q->chip_print = it->chip_print;
	}
	return NULL;
}

static struct kp_error *decode(struct kp_irq_iter *it, const struct entry *e)
{
	const struct kp_struct_layout *l = it->dl;
	uint8_t buf[1024];
	struct kp_error *err = kp_kernel_read_struct(it->k, l, e->desc, buf, sizeof(buf));
	if (err)
		return err;
	struct kp_irq *q = &it->irq;
	*q = (struct kp_irq){ .desc = e->desc, .irq = (uint32_t)e->irq, .nr_irqs = it->nr_irqs, .ncpus = it->ncpus,
			      .counts = it->counts, .actions = it->actions };
	uint64_t irq = kp_layout_u64(l, buf, D_IRQ);
	if (irq != e->irq)
		return kp_error_create(KP_ERR_FORMAT, "irq_desc at 0x%" PRIx64 " says IRQ %" PRIu64
				       ", found at %" PRIu64 " (corrupt?)", e->desc, irq, e->irq);
	q->hwirq = kp_layout_u64(l, buf, D_HWIRQ);
	q->has_hwirq = kp_layout_u64(l, buf, D_DOMAIN) != 0;	// printed only with a domain
	uint64_t action = kp_layout_u64(l, buf, D_ACTION), status = kp_layout_u64(l, buf, D_STATUS);
	q->hidden = (status & it->hidden_bit) != 0;
	q->chained = action && action == it->chained_action;
	uint64_t name = kp_layout_u64(l, buf, D_NAME);
	if ((err = read_chip(it, kp_layout_u64(l, buf, D_CHIP))))
		return err;
	if (name && (err = rdname(it->k, name, it->handler, "irq_desc name")))
		return err;
	q->handler = name ? it->handler : NULL;
	if ((err = read_counts(it, kp_layout_u64(l, buf, D_KSTAT))))
		return err;
	return read_actions(it, action);
}

struct kp_error *kp_irq_iter_next(struct kp_irq_iter *it, const struct kp_irq **ret)
{
	*ret = NULL;
	while (it->next < it->n) {
		const struct entry *e = &it->e[it->next++];
		struct kp_error *err = decode(it, e);
		if (!err) {
			*ret = &it->irq;
			return NULL;
		}
		if ((err = kp_lx_walk_unreadable(&it->walk, kp_error_prefix(err, "IRQ %" PRIu64, e->irq))))
			return err;
	}
	return kp_lx_walk_finish(&it->walk);
}

void kp_irq_iter_status(const struct kp_irq_iter *it, struct kp_walk_status *ret)
{
	kp_lx_walk_status(&it->walk, ret);
}

void kp_irq_iter_destroy(struct kp_irq_iter *it)
{
	if (!it)
		return;
	kp_lx_walk_deinit(&it->walk);
	free(it->e);
	free(it->counts);
	free(it->possible);
	free(it->names);
	free(it->actions);
	free(it);
}

bool kp_irq_shown(const struct kp_irq *q)
{
	return !q->hidden && ((q->nactions && !q->chained) || q->total);
}
