// SPDX-License-Identifier: MIT
// What kp_kernel_get_info() says about a kernel (the facts gathered at open,
// its CPUs, its symbols' sources), the architecture's own facts, and the
// CPUs a per-CPU access may name.
#include <inttypes.h>

#include "arch/arch.h"
#include "core/kernel_impl.h"
#include "io/file.h"
#include "io/memory.h"
#include "symbols/symtab.h"
#include "types/types.h"
#include "util/error.h"
#include "util/opts.h"

// CONFIG_NR_CPUS is at most 8192 on every architecture kpeek supports.
#define MAX_CPUS 8192

// nr_cpu_ids, 0 if it cannot be read.
static uint32_t nr_cpu_ids(struct kp_kernel *k)
{
	struct kp_symbol sym;
	uint32_t v;
	if (kp_symtab_find(k->symtab, "nr_cpu_ids", &sym) &&
	    kp_ok(kp_memory_read(k->mem, KP_VIRT, sym.address, &v, sizeof(v))) && v <= MAX_CPUS)
		return v;
	return 0;
}

// The CPUs of cpu_online_mask below nr, 0 if it cannot be read.
static uint32_t online_cpus(struct kp_kernel *k, uint32_t nr)
{
	struct kp_symbol sym;
	if (!nr || !kp_symtab_find(k->symtab, "__cpu_online_mask", &sym))
		return 0;
	uint32_t n = 0;
	for (uint32_t w = 0; w < (nr + 63) / 64; w++) {
		uint64_t word;
		if (!kp_ok(kp_memory_read_u64(k->mem, KP_VIRT, sym.address + w * 8, &word)))
			return 0;
		if (nr - w * 64 < 64)
			word &= (1ULL << (nr - w * 64)) - 1;
		n += (uint32_t)__builtin_popcountll(word);
	}
	return n;
}

uint32_t kp_kernel_nr_cpu_ids(struct kp_kernel *k)
{
	return nr_cpu_ids(k);
}

struct kp_error *kp_kernel_check_cpu(struct kp_kernel *k, uint64_t cpu)
{
	// nr_cpu_ids bounds the per-CPU offsets array; a CPU below it may still
	// be impossible (a hole in cpu_possible_mask), its area never set up.
	struct kp_symbol sym;
	uint32_t nr = nr_cpu_ids(k);
	if (!nr)
		nr = MAX_CPUS;
	if (cpu >= nr)
		return kp_error_create(KP_ERR_INVALID, "CPU %" PRIu64 " does not exist (nr_cpu_ids is %u)",
				       cpu, nr);
	uint64_t word;
	if (kp_symtab_find(k->symtab, "__cpu_possible_mask", &sym) &&
	    kp_ok(kp_memory_read_u64(k->mem, KP_VIRT, sym.address + cpu / 64 * 8, &word)) &&
	    !(word >> (cpu % 64) & 1))
		return kp_error_create(KP_ERR_INVALID,
				       "CPU %" PRIu64 " is not a possible CPU (not in __cpu_possible_mask)",
				       cpu);
	return NULL;
}

const char *kp_version(void)
{
	return KPEEK_VERSION_STRING;
}

const char *kp_kernel_release(struct kp_kernel *k)
{
	return k->release;
}

void kp_kernel_get_info(struct kp_kernel *k, struct kp_kernel_info *ret)
{
	kp_kernel_load_late_symbols(k);	// the count and sources include them
	struct kp_kernel_info info = {
		.sz = sizeof(info),
		.path = k->file ? k->file->path : "(synthetic)",
		.source_kind = k->src.kind,
		.live = k->src.live,
		.arch = k->arch->name,
		.page_size = kp_kernel_page_size(k),
		.release = k->release,
		.banner = k->banner,
		.has_vmcoreinfo = k->vmcoreinfo != NULL,
		.vmcoreinfo_source = k->vmcoreinfo ? k->vmcoreinfo_origin : NULL,
		.has_kaslr_offset = k->has_kaslr_offset,
		.kaslr_offset = k->kaslr_offset,
		.kaslr_check = k->kaslr_check[0] ? k->kaslr_check : NULL,
		.ncpus = (int)k->src.ncpus,
		.symbol_sources = k->symbol_sources,
		.num_symbols = kp_symtab_count(k->symtab),
		.btf_source = k->types ? kp_types_source(k->types) : NULL,
		.btf_types = k->types ? kp_types_count(k->types) : 0,
		.possible_cpus = nr_cpu_ids(k),
		.lost = k->src.lost,
		.nlost = k->src.nlost,
		.nfiles = (k->file ? 1 : 0) + k->nparts,
		.split = kp_kernel_split(k),
	};
	info.online_cpus = online_cpus(k, info.possible_cpus);
	kp_out_copy(ret, &info, sizeof(info));
}

const char *kp_kernel_split(const struct kp_kernel *k)
{
	return k->split[0] ? k->split : NULL;
}

bool kp_kernel_arch_fact(struct kp_kernel *k, size_t i, struct kp_fact *ret)
{
	const struct kp_fact *facts;
	size_t n = k->arch->facts(k->arch_ctx, &facts);
	if (i >= n)
		return false;
	*ret = facts[i];
	return true;
}

uint64_t kp_kernel_memory_bytes(struct kp_kernel *k)
{
	const struct kp_range *r;
	size_t n = kp_memory_ranges(k->mem, KP_PHYS, &r);
	if (!n)
		n = kp_memory_ranges(k->mem, KP_VIRT, &r);
	uint64_t total = 0;
	for (size_t i = 0; i < n; i++)
		total += r[i].end - r[i].start;
	return total;
}
