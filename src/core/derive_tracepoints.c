// SPDX-License-Identifier: MIT
// The bounds of the core kernel's table of tracepoints for a kallsyms of
// functions only (check tracepoints reads it), from the addresses
// for_each_kernel_tracepoint() forms.
#include <stdlib.h>

#include <bpf/btf.h>

#include "core/derive_code.h"
#include "io/memory.h"
#include "types/types.h"
#include "util/error.h"

// __start___tracepoints_ptrs .. __stop___tracepoints_ptrs: the two
// addresses for_each_kernel_tracepoint() forms, the table between them of
// tracepoint_ptr_t (an int offset from the entry with PREL32 relocations,
// else a pointer: BTF's size of the typedef) to struct tracepoint in the
// image whose names are printable; 16 to 65,536 of them. The code forms
// more than the two bounds (arm64: start + 4, the loop's second entry; the
// addresses of single entries), so the pairs that bound such a table are
// joined, and taken when the whole is one table.
#define MIN_TRACEPOINTS 16
#define MAX_TRACEPOINTS 65536

static bool tracepoint_at(const struct ctx *c, uint64_t entry, uint64_t size, uint64_t name_off)
{
	uint64_t tp, name;
	int32_t rel;
	char buf[NAME_LEN];
	if (size == 4) {
		if (!kp_ok(kp_memory_read(c->mem, KP_VIRT, entry, &rel, 4)))
			return false;
		tp = entry + (uint64_t)(int64_t)rel;
	} else if (!kp_ok(kp_memory_read_u64(c->mem, KP_VIRT, entry, &tp))) {
		return false;
	}
	return kp_derive_in_image(c, tp) && !(tp & 7) &&
	       kp_ok(kp_memory_read_u64(c->mem, KP_VIRT, tp + name_off, &name)) &&
	       kp_ok(kp_memory_read(c->mem, KP_VIRT, name, buf, 1)) && buf[0] &&
	       kp_ok(kp_memory_read(c->mem, KP_VIRT, name, buf, sizeof(buf))) &&
	       kp_derive_printable(buf, sizeof(buf));
}

// The end of the run of entries from lo that are tracepoints, at most
// MAX_TRACEPOINTS of them.
static uint64_t tracepoint_run(const struct ctx *c, uint64_t lo, uint64_t size, uint64_t name_off)
{
	uint64_t e = lo;
	while ((e - lo) / size < MAX_TRACEPOINTS && kp_derive_in_image(c, e) &&
	       tracepoint_at(c, e, size, name_off))
		e += size;
	return e;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

// *lo, *hi: the lowest and highest candidates that bound tables (runs of
// MIN_TRACEPOINTS or more from one candidate to another), if all between
// them is one run; else false. Runs are walked once: a candidate inside
// the run of a lower one, on its stride, shares its end; 2 *
// MAX_TRACEPOINTS entries are read at most, all runs together.
static bool tracepoint_bounds(const struct ctx *c, uint64_t *cand, size_t n, uint64_t *lo,
			      uint64_t *hi)
{
	uint32_t id;
	uint64_t name_off;
	struct kp_error *err = kp_types_find(c->types, BTF_KIND_TYPEDEF, "tracepoint_ptr_t", &id);
	int64_t size = err ? -1 : btf__resolve_size(kp_types_btf(c->types), id);
	kp_error_destroy(err);
	if ((size != 4 && size != 8) || !kp_derive_member_offset(c, "tracepoint", "name", &name_off))
		return false;
	qsort(cand, n, sizeof(*cand), cmp_u64);
	uint64_t run_lo = 0, run_end = 0, min_lo = 0, max_hi = 0, sz = (uint64_t)size, read = 0;
	for (size_t i = 0; i < n; i++) {
		if (cand[i] % sz)
			continue;
		if (!(run_end && cand[i] >= run_lo && cand[i] <= run_end && (cand[i] - run_lo) % sz == 0)) {
			run_lo = cand[i];
			run_end = tracepoint_run(c, run_lo, sz, name_off);
			if ((read += (run_end - run_lo) / sz + 1) > 2 * MAX_TRACEPOINTS)
				return false;
		}
		for (size_t j = i + 1; j < n; j++) {
			if (cand[j] > run_end || (cand[j] - cand[i]) % sz ||
			    (cand[j] - cand[i]) / sz < MIN_TRACEPOINTS)
				continue;
			if (!max_hi)
				min_lo = cand[i];
			else if (cand[i] > max_hi || (cand[i] - min_lo) % sz)
				return false;	// two tables apart, not one
			max_hi = cand[j] > max_hi ? cand[j] : max_hi;
		}
	}
	if (!max_hi)
		return false;
	*lo = min_lo;
	*hi = max_hi;
	return true;
}

struct kp_error *kp_derive_tracepoints(const struct ctx *c, struct kp_symtab *st, unsigned *added)
{
	static const char *const users[] = { "for_each_kernel_tracepoint", NULL, NULL };
	struct candidates cand;
	struct kp_symbol sym;
	uint64_t lo, hi;
	if (kp_symtab_find(st, "__start___tracepoints_ptrs", &sym))
		return NULL;
	kp_derive_gather(c, st, users, false, &cand);
	if (!tracepoint_bounds(c, cand.at, cand.n, &lo, &hi))
		return NULL;
	struct kp_error *err = kp_symtab_next_source_origin(st, "references in "
							     "for_each_kernel_tracepoint");
	if (!err && !(err = kp_symtab_add(st, "__start___tracepoints_ptrs", 26, lo, 'D', NULL)))
		err = kp_symtab_add(st, "__stop___tracepoints_ptrs", 25, hi, 'D', NULL);
	if (!err)
		*added += 2;
	return err;
}
