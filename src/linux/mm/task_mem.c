// SPDX-License-Identifier: MIT
// kp_task_mem: a process's memory sizes as fs/proc/task_mmu.c's task_mem()
// prints them in /proc/PID/status (VmPeak..VmSwap), from its mm_struct.
//
// The resident-page counters, mm->rss_stat[MM_*]:
//   up to 6.1   struct mm_rss_stat { atomic_long_t count[NR_MM_COUNTERS]; },
//               plus per-thread deltas (task->rss_stat, SPLIT_RSS_COUNTING)
//               that the kernel folds in every 64 events and that /proc
//               never adds: kpeek does not either;
//   6.2+        struct percpu_counter rss_stat[NR_MM_COUNTERS]
//               (f1a7941243c1): count plus each CPU's s32 delta. 6.2..6.15
//               /proc shows count alone (percpu_counter_read_positive()),
//               6.16+ the sum (get_mm_counter_sum()); kpeek gives the sum,
//               the value the counter holds, which on those older kernels
//               can exceed /proc's by less than a batch per CPU.
// A counter below zero (a delta not yet folded in) is 0, as the kernel
// shows it.
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "core/kernel.h"
#include "core/layout.h"
#include "linux/mm/mm.h"
#include "types/types.h"
#include "util/error.h"

// More pages than 64-bit kernels map (2^52 bytes of 4 KB pages): a counter
// past it is not a count.
#define MAX_PAGES (1ull << 40)

enum {
	M_TOTAL_VM, M_LOCKED_VM, M_PINNED_VM, M_DATA_VM, M_EXEC_VM, M_STACK_VM, M_HIWATER_RSS,
	M_HIWATER_VM, M_START_CODE, M_END_CODE, M_RSS, M_PGTABLES, M_N
};
static const struct kp_member_spec mm_members[M_N] = {
	[M_TOTAL_VM] = { .name = "total_vm" },
	[M_LOCKED_VM] = { .name = "locked_vm" },
	// 5.1 (70f8a3ca68d3): an atomic64_t, the same 8 bytes.
	[M_PINNED_VM] = { .name = "pinned_vm" },
	[M_DATA_VM] = { .name = "data_vm" },
	[M_EXEC_VM] = { .name = "exec_vm" },
	[M_STACK_VM] = { .name = "stack_vm" },
	[M_HIWATER_RSS] = { .name = "hiwater_rss" },
	[M_HIWATER_VM] = { .name = "hiwater_vm" },
	[M_START_CODE] = { .name = "start_code" },
	[M_END_CODE] = { .name = "end_code" },
	// 6.2 (f1a7941243c1): an array of percpu_counter (alt 1).
	[M_RSS] = { .name = "rss_stat.count|rss_stat" },
	// 4.16 (af5b0f6a09e4); CONFIG_MMU.
	[M_PGTABLES] = { .name = "pgtables_bytes", .flags = KP_MEMBER_OPTIONAL },
};
static const struct kp_struct_spec mm_spec = KP_STRUCT_SPEC("struct mm_struct", mm_members);
enum { PC_COUNT, PC_COUNTERS, PC_N };
static const struct kp_member_spec pc_members[PC_N] = {
	[PC_COUNT] = { .name = "count" },
	[PC_COUNTERS] = { .name = "counters" },
};
static const struct kp_struct_spec pc_spec = KP_STRUCT_SPEC("struct percpu_counter", pc_members);

// A 6.2+ percpu_counter at address: percpu_counter_sum()'s value.
static struct kp_error *percpu_sum(struct kp_kernel *k, uint64_t address, const uint8_t *bytes,
				   int64_t *ret)
{
	const struct kp_struct_layout *l;
	struct kp_error *err = kp_kernel_layout(k, &pc_spec, &l);
	if (err)
		return err;
	int64_t sum = 0;
	uint64_t counters = 0;
	memcpy(&sum, bytes + kp_layout_off(l, PC_COUNT), sizeof(sum));
	memcpy(&counters, bytes + kp_layout_off(l, PC_COUNTERS), sizeof(counters));
	for (uint32_t cpu = 0, n = kp_kernel_nr_cpu_ids(k); cpu < n; cpu++) {
		uint64_t off;
		uint32_t v;
		if ((err = kp_kernel_per_cpu_offset(k, cpu, &off))) {
			if (err->code != KP_ERR_INVALID)
				return kp_error_prefix(err, "percpu_counter at 0x%" PRIx64, address);
			kp_error_destroy(err);	// not a possible CPU
			continue;
		}
		if ((err = kp_read_u32(k, counters + off, &v)))
			return kp_error_prefix(err, "CPU %u's part of the percpu_counter at 0x%" PRIx64, cpu,
					       address);
		sum += (int32_t)v;
	}
	*ret = sum;
	return NULL;
}

// The counters' indices: an anonymous enum (include/linux/mm_types_task.h)
// that only a scan of every BTF enum finds, so looked up once per kernel.
enum { C_FILE, C_ANON, C_SWAP, C_SHMEM, C_N };
static const char *const counter_names[C_N] = {
	[C_FILE] = "MM_FILEPAGES", [C_ANON] = "MM_ANONPAGES",
	[C_SWAP] = "MM_SWAPENTS", [C_SHMEM] = "MM_SHMEMPAGES",
};
struct counters {
	uint64_t at[C_N], n;	// indices, NR_MM_COUNTERS
};
static const char counters_key;	// its address keys the memo

static struct kp_error *counters_of(struct kp_kernel *k, const struct counters **ret)
{
	struct kp_types *types;
	struct kp_error *err = kp_kernel_types(k, &types);
	if (err)
		return err;
	const struct counters *memo = kp_types_memo_get(types, &counters_key);
	if (memo) {
		*ret = memo;
		return NULL;
	}
	struct counters c;
	if (!kp_kernel_enum_value(k, "NR_MM_COUNTERS", &c.n))
		return kp_error_create(KP_ERR_TYPE, "the kernel's BTF has no enumerator NR_MM_COUNTERS");
	for (unsigned i = 0; i < C_N; i++)
		if (!kp_kernel_enum_value(k, counter_names[i], &c.at[i]) || c.at[i] >= c.n)
			return kp_error_create(KP_ERR_TYPE, "the kernel's BTF has no enumerator %s below NR_MM_COUNTERS",
					       counter_names[i]);
	struct counters *copy = malloc(sizeof(*copy));
	if (!copy)
		return &kp_enomem;
	*copy = c;
	if (!kp_types_memo_put(types, &counters_key, copy)) {
		free(copy);
		return &kp_enomem;
	}
	*ret = copy;
	return NULL;
}

// Counter which (C_FILE..) of the mm at mm, whose span is in buf.
static struct kp_error *counter(struct kp_kernel *k, const struct kp_struct_layout *l, const uint8_t *buf,
				uint64_t mm, unsigned which, uint64_t *ret)
{
	const struct counters *c = NULL;
	struct kp_error *err = counters_of(k, &c);
	if (err)
		return err;
	uint64_t i = c->at[which], n = c->n;
	const char *name = counter_names[which];
	const struct kp_member_layout *m = &l->m[M_RSS];
	uint64_t stride = m->size / n;
	const uint8_t *at = kp_layout_ptr(l, buf, m->offset + i * stride, stride);
	if (!at || stride < 8)
		return kp_error_create(KP_ERR_TYPE, "mm_struct.rss_stat of %" PRIu64 " bytes holds no %" PRIu64
				       " counters", m->size, n);
	int64_t v = 0;
	if (m->alt == 0)
		memcpy(&v, at, sizeof(v));
	else if ((err = percpu_sum(k, mm + m->offset + i * stride, at, &v)))
		return err;
	if (v > (int64_t)MAX_PAGES)
		return kp_error_create(KP_ERR_FORMAT, "mm_struct at 0x%" PRIx64 ": its %s counter is %" PRId64
				       " pages: corrupt", mm, name, v);
	*ret = v < 0 ? 0 : (uint64_t)v;
	return NULL;
}

struct kp_error *kp_task_mem(struct kp_kernel *k, uint64_t task, struct kp_task_mem *ret)
{
	const struct kp_struct_layout *l;
	uint8_t buf[2048];
	uint64_t mm, anon, file, shmem, swap;
	struct kp_error *err;
	if ((err = kp_lx_task_mm(k, task, &mm)) || (err = kp_kernel_layout(k, &mm_spec, &l)) ||
	    (err = kp_kernel_read_struct(k, l, mm, buf, sizeof(buf))))
		return err;
	if ((err = counter(k, l, buf, mm, C_ANON, &anon)) ||
	    (err = counter(k, l, buf, mm, C_FILE, &file)) ||
	    (err = counter(k, l, buf, mm, C_SHMEM, &shmem)) ||
	    (err = counter(k, l, buf, mm, C_SWAP, &swap)))
		return err;
	uint64_t page = kp_kernel_page_size(k), kb = page >> 10;
	uint64_t total_vm = kp_layout_u64(l, buf, M_TOTAL_VM), rss = anon + file + shmem;
	uint64_t hiwater_vm = kp_layout_u64(l, buf, M_HIWATER_VM);
	uint64_t hiwater_rss = kp_layout_u64(l, buf, M_HIWATER_RSS);
	uint64_t exec = kp_layout_u64(l, buf, M_EXEC_VM) * page;
	// task_mem()'s split of executable areas: the program's text, up to
	// all of them, and the libraries' rest.
	uint64_t start = kp_layout_u64(l, buf, M_START_CODE) & ~(page - 1);
	uint64_t end = (kp_layout_u64(l, buf, M_END_CODE) + page - 1) & ~(page - 1);
	uint64_t text = end > start ? end - start : 0;
	if (text > exec)
		text = exec;
	const struct {
		const char *name;
		uint64_t pages;
	} sizes[] = { { "total_vm", total_vm }, { "hiwater_vm", hiwater_vm }, { "hiwater_rss", hiwater_rss } };
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		if (sizes[i].pages > MAX_PAGES)
			return kp_error_create(KP_ERR_FORMAT, "mm_struct at 0x%" PRIx64 ": its %s is %" PRIu64
					       " pages: corrupt", mm, sizes[i].name, sizes[i].pages);
	*ret = (struct kp_task_mem){
		.mm = mm,
		.vm_peak = (hiwater_vm > total_vm ? hiwater_vm : total_vm) * kb,
		.vm_size = total_vm * kb,
		.vm_lck = kp_layout_u64(l, buf, M_LOCKED_VM) * kb,
		.vm_pin = kp_layout_u64(l, buf, M_PINNED_VM) * kb,
		.vm_hwm = (hiwater_rss > rss ? hiwater_rss : rss) * kb,
		.vm_rss = rss * kb,
		.rss_anon = anon * kb,
		.rss_file = file * kb,
		.rss_shmem = shmem * kb,
		.vm_data = kp_layout_u64(l, buf, M_DATA_VM) * kb,
		.vm_stk = kp_layout_u64(l, buf, M_STACK_VM) * kb,
		.vm_exe = text >> 10,
		.vm_lib = (exec - text) >> 10,
		.vm_pte = kp_layout_has(l, M_PGTABLES) ? kp_layout_u64(l, buf, M_PGTABLES) >> 10 : UINT64_MAX,
		.vm_swap = swap * kb,
	};
	return NULL;
}

size_t kp_task_mem_lines(const struct kp_task_mem *m, struct kp_meminfo_item *ret)
{
	const struct kp_meminfo_item lines[KP_TASK_MEM_LINES] = {
		{ "VmPeak", m->vm_peak, true }, { "VmSize", m->vm_size, true },
		{ "VmLck", m->vm_lck, true }, { "VmPin", m->vm_pin, true },
		{ "VmHWM", m->vm_hwm, true }, { "VmRSS", m->vm_rss, true },
		{ "RssAnon", m->rss_anon, true }, { "RssFile", m->rss_file, true },
		{ "RssShmem", m->rss_shmem, true }, { "VmData", m->vm_data, true },
		{ "VmStk", m->vm_stk, true }, { "VmExe", m->vm_exe, true },
		{ "VmLib", m->vm_lib, true }, { "VmPTE", m->vm_pte, true },
		{ "VmSwap", m->vm_swap, true },
	};
	size_t n = 0;
	for (size_t i = 0; i < KP_TASK_MEM_LINES; i++)
		if (lines[i].value != UINT64_MAX)	// VmPTE of a kernel that does not count page tables
			ret[n++] = lines[i];
	return n;
}
