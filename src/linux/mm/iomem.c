// SPDX-License-Identifier: MIT
// The /proc/iomem entries holding a physical address (kernel/resource.c):
// the tree of struct resource under iomem_resource (child, sibling), each
// [start, end] inclusive with a name. What /proc/iomem's top level says is
// whether it is RAM ("System RAM"), reserved ("Reserved") or a device's.
//
// Bounds: at most MAX_SIBLINGS entries a level and MAX_DEPTH levels; names
// of at most the caller's buffer.
#include <inttypes.h>
#include <stdio.h>

#include "core/kernel.h"
#include "core/layout.h"
#include "linux/mm/mm.h"
#include "util/error.h"

#define MAX_SIBLINGS 65536
#define MAX_DEPTH 32

enum { R_START, R_END, R_NAME, R_SIBLING, R_CHILD, R_N };
static const struct kp_member_spec res_members[R_N] = {
	[R_START] = { .name = "start" },
	[R_END] = { .name = "end" },
	[R_NAME] = { .name = "name" },
	[R_SIBLING] = { .name = "sibling" },
	[R_CHILD] = { .name = "child" },
};
static const struct kp_struct_spec res_spec = KP_STRUCT_SPEC("struct resource", res_members);

struct kp_error *kp_lx_iomem(struct kp_kernel *k, uint64_t pa, char *top, size_t top_size, char *inner,
			     size_t inner_size)
{
	const struct kp_struct_layout *l;
	struct kp_symbol sym;
	uint8_t buf[128];
	if (!kp_symbol_find(k, "iomem_resource", &sym))
		return kp_kernel_no_symbol(k, "no symbol 'iomem_resource'");
	struct kp_error *err = kp_kernel_layout(k, &res_spec, &l);
	if (err || (err = kp_kernel_read_struct(k, l, sym.address, buf, sizeof(buf))))
		return err ? kp_error_prefix(err, "iomem_resource") : NULL;
	uint64_t r = kp_layout_u64(l, buf, R_CHILD);
	unsigned depth = 0, n = 0;
	top[0] = inner[0] = '\0';
	while (r && depth < MAX_DEPTH) {
		if (++n > MAX_SIBLINGS)
			return kp_error_create(KP_ERR_LOOP, "iomem resource 0x%" PRIx64 ": more than %u siblings (corrupt?)",
					       r, MAX_SIBLINGS);
		if ((err = kp_kernel_read_struct(k, l, r, buf, sizeof(buf))))
			return kp_error_prefix(err, "iomem resource");
		uint64_t start = kp_layout_u64(l, buf, R_START), end = kp_layout_u64(l, buf, R_END);
		if (pa < start || pa > end) {
			r = kp_layout_u64(l, buf, R_SIBLING);
			continue;
		}
		char *to = depth ? inner : top;
		if ((err = kp_read_cstr(k, kp_layout_u64(l, buf, R_NAME), to, depth ? inner_size : top_size)))
			return kp_error_prefix(err, "the name of iomem resource 0x%" PRIx64, r);
		r = kp_layout_u64(l, buf, R_CHILD);
		depth++;
		n = 0;
	}
	return NULL;
}
