// SPDX-License-Identifier: MIT
// The memory zones of the online nodes (for_each_zone(): every zone of
// every online pglist_data, populated or not), for si_mem_available()'s
// sum of low watermarks. The nodes are node_data[] (CONFIG_NUMA, x86-64
// and arm64 Debian kernels) with node_states[N_ONLINE], or contig_page_data.
#include <inttypes.h>

#include "core/layout.h"
#include "linux/mm/mm.h"
#include "util/error.h"

#define MAX_NODES 1024	// MAX_NUMNODES (NODES_SHIFT 10)

static const struct kp_member_spec pgdat_members[] = { { .name = "node_zones", .flags = KP_MEMBER_NOSPAN } };
static const struct kp_struct_spec pgdat_spec = KP_STRUCT_SPEC("struct pglist_data", pgdat_members);
enum { Z_WATERMARK, Z_BOOST, Z_N };
static const struct kp_member_spec zone_members[Z_N] = {
	[Z_WATERMARK] = { .name = "_watermark", .flags = KP_MEMBER_NOSPAN },	// 5.0 (1c30844d2dfe)
	[Z_BOOST] = { .name = "watermark_boost", .flags = KP_MEMBER_OPTIONAL | KP_MEMBER_NOSPAN },
};
static const struct kp_struct_spec zone_spec = KP_STRUCT_SPEC("struct zone", zone_members);
static const struct kp_struct_spec nodemask_spec = KP_TYPE_SPEC("nodemask_t");

// low_wmark_pages() of every zone of the node at pgdat, added to *sum.
static bool node_low(struct kp_kernel *k, uint64_t pgdat, uint64_t wmark_low, int64_t *sum)
{
	const struct kp_struct_layout *pl, *zl;
	if (!kp_ok(kp_kernel_layout(k, &pgdat_spec, &pl)) || !kp_ok(kp_kernel_layout(k, &zone_spec, &zl)) ||
	    !zl->size)
		return false;
	uint64_t nzones = pl->m[0].size / zl->size;
	for (uint64_t z = 0; z < nzones && z < 8; z++) {
		uint64_t zone = pgdat + kp_layout_off(pl, 0) + z * zl->size, low, boost = 0;
		if (!kp_ok(kp_read_u64(k, zone + kp_layout_off(zl, Z_WATERMARK) + wmark_low * 8, &low)) ||
		    (kp_layout_has(zl, Z_BOOST) && !kp_ok(kp_read_u64(k, zone + kp_layout_off(zl, Z_BOOST), &boost))))
			return false;
		*sum += (int64_t)(low + boost);
	}
	return true;
}

bool kp_lx_low_watermarks(struct kp_kernel *k, int64_t *ret)
{
	struct kp_symbol sym, states;
	uint64_t wmark_low, online;
	const struct kp_struct_layout *ml;
	int64_t sum = 0;
	if (!kp_kernel_enum_value_in(k, "zone_watermarks", "WMARK_LOW", &wmark_low) || wmark_low > 8)
		return false;
	if (!kp_symbol_find(k, "node_data", &sym)) {
		if (!kp_symbol_find(k, "contig_page_data", &sym) || !node_low(k, sym.address, wmark_low, &sum))
			return false;
		*ret = sum;
		return true;
	}
	if (!kp_symbol_find(k, "node_states", &states) || !kp_ok(kp_kernel_layout(k, &nodemask_spec, &ml)) ||
	    !kp_kernel_enum_value_in(k, "node_states", "N_ONLINE", &online) || online > 16 ||
	    ml->size == 0 || ml->size > MAX_NODES / 8)
		return false;
	uint64_t mask[MAX_NODES / 64] = { 0 };
	if (!kp_ok(kp_read(k, KP_VIRT, states.address + online * ml->size, mask, ml->size)))
		return false;
	for (uint64_t node = 0; node < ml->size * 8; node++) {
		uint64_t pgdat;
		if (!(mask[node / 64] >> (node % 64) & 1))
			continue;
		if (!kp_ok(kp_read_u64(k, sym.address + node * 8, &pgdat)) || !pgdat ||
		    !node_low(k, pgdat, wmark_low, &sum))
			return false;
	}
	*ret = sum;
	return true;
}
