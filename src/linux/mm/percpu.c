// SPDX-License-Identifier: MIT
// The per-CPU layout: where the static per-CPU variables lie in the
// template (__per_cpu_start, and their size, __per_cpu_end - start) and the
// size of each CPU's unit (the static variables, the reserved and the
// dynamic area: mm/percpu.c's pcpu_unit_size), found once a handle:
//
//   the symbols    __per_cpu_start, __per_cpu_end and pcpu_unit_size, where
//                  kallsyms names them;
//   the boot log   for a kallsyms of functions only (no CONFIG_KALLSYMS_ALL:
//                  Debian's 6.1 arm64, where __per_cpu_start is recovered
//                  from BTF: core/derive.c), the line
//                  pcpu_embed_first_chunk() prints (since 2.6.30, x86-64 and
//                  arm64 alike), "percpu: Embedded P pages/cpu sS rR dD uU",
//                  S being __per_cpu_end - __per_cpu_start. It is taken only
//                  if S is the section's size (with __per_cpu_end known) or
//                  covers BTF's .data..percpu and ends within a page past it
//                  (the section's end is page-aligned where the kernel has
//                  .data..percpu..decrypted: x86-64 6.12 0x38100 -> 0x39000),
//                  and U holds S + R + D in whole pages: a garbled line or
//                  another boot's is never used.
//
// Bound: the log is read once, record by record, to its first such line.
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/kernel.h"
#include "linux/mm/mm.h"
#include "types/types.h"
#include "util/error.h"

// A per-CPU unit larger than this is not a kernel's (x86-64 and arm64
// units are tens to hundreds of KiB; PERCPU_DYNAMIC_SIZE_SHIFT).
#define MAX_PERCPU_UNIT (64u << 20)
#define EMBEDDED "percpu: Embedded "

struct percpu {
	bool known;
	struct kp_lx_percpu layout;
};

// A unit of u bytes holds need bytes: whole pages, not past what a
// kernel's unit can be.
static bool unit_holds(uint64_t u, uint64_t need, uint64_t page_size)
{
	return u >= need && u <= MAX_PERCPU_UNIT && page_size && u % page_size == 0;
}

bool kp_lx_percpu_line(const char *text, size_t len, uint64_t page_size, struct kp_lx_percpu_line *ret)
{
	char line[160];
	unsigned long long pages, s, r, d, u;
	if (len >= sizeof(line))
		return false;
	memcpy(line, text, len);
	line[len] = '\0';
	if (sscanf(line, EMBEDDED "%llu pages/cpu s%llu r%llu d%llu u%llu", &pages, &s, &r, &d, &u) != 5 ||
	    r > MAX_PERCPU_UNIT || d > MAX_PERCPU_UNIT || s > MAX_PERCPU_UNIT ||
	    !unit_holds(u, s + r + d, page_size))
		return false;
	ret->static_size = s;
	ret->unit = u;
	return true;
}

static bool log_line(struct kp_kernel *k, struct kp_lx_percpu_line *ret)
{
	struct kp_printk_iter *it;
	const struct kp_printk_record *r;
	bool found = false;
	if (!kp_ok(kp_printk_iter_create(k, &it)))
		return false;
	while (kp_ok(kp_printk_iter_next(it, &r)) && r) {
		if (r->len > strlen(EMBEDDED) && !memcmp(r->text, EMBEDDED, strlen(EMBEDDED))) {
			found = kp_lx_percpu_line(r->text, r->len, kp_kernel_page_size(k), ret);
			break;
		}
	}
	kp_printk_iter_destroy(it);
	return found;
}

static bool find(struct kp_kernel *k, struct kp_lx_percpu *ret)
{
	struct kp_symbol s;
	uint64_t end = 0, page = kp_kernel_page_size(k);
	uint32_t unit;
	if (kp_kernel_percpu_section(k, &ret->start, &end))
		ret->static_size = end - ret->start;
	else if (kp_ok(kp_symbol_by_name(k, "__per_cpu_start", &s)))
		ret->start = s.address;
	else
		return false;
	// An int (mm/percpu.c); read as the kernel stores it.
	if (end && kp_ok(kp_symbol_by_name(k, "pcpu_unit_size", &s)) &&
	    kp_ok(kp_read(k, KP_VIRT, s.address, &unit, sizeof(unit))) &&
	    unit_holds(unit, ret->static_size, page)) {
		ret->unit = unit;
		return true;
	}
	struct kp_lx_percpu_line line;
	struct kp_types *types;
	uint64_t extent = !end && kp_ok(kp_kernel_types(k, &types)) ? kp_types_percpu_extent(types) : 0;
	if (log_line(k, &line) && (end ? line.static_size == ret->static_size :
				   extent && line.static_size >= extent &&
				   line.static_size - extent < page)) {
		ret->static_size = line.static_size;
		ret->unit = line.unit;
		return true;
	}
	// The static variables alone.
	ret->unit = ret->static_size;
	return end != 0;
}

bool kp_lx_percpu_layout(struct kp_kernel *k, struct kp_lx_percpu *ret)
{
	struct percpu *p = kp_kernel_slot(k, KP_KERNEL_SLOT_PERCPU);
	if (!p) {
		if (!(p = calloc(1, sizeof(*p))))
			return false;
		p->known = find(k, &p->layout);
		kp_kernel_set_slot(k, KP_KERNEL_SLOT_PERCPU, p, free);
	}
	if (p->known)
		*ret = p->layout;
	return p->known;
}
