// SPDX-License-Identifier: MIT
// Variables a kallsyms of functions only does not name and the kernel does
// not export, found in the code of the functions that use them: each
// recipe names the variable, the functions (kallsyms has them) whose code
// forms its address (kp_arch.data_refs: arm64 ADRP+ADD/LDR, x86-64
// operands relative to the next instruction or absolute), and what must
// hold at the address. A variable is added only when exactly one of the
// addresses those functions form passes, so a wrong one is never taken:
//
//   modules       the list head of kernel/module/main.c (kernel/module.c
//                 before 5.19): a ring whose nodes are each a struct
//                 module's list, with a printable name and a valid state;
//   slab_caches   the list head of mm/slab_common.c: a ring of struct
//                 kmem_cache's list whose names are printable;
//   taint_flags   the table of kernel/panic.c: struct taint_flag entries
//                 whose first two are 'P'/'G' and 'F'/' ' (the
//                 proprietary and forced-load flags, TAINT_PROPRIETARY_MODULE
//                 0 and TAINT_FORCED_MODULE 1 since 2.6);
//   tainted_mask  the one variable get_taint() reads;
//   irq_desc_tree the one variable irq_to_desc() looks an IRQ up in: a
//   sparse_irqs   radix tree until 6.4, the maple tree sparse_irqs from
//                 6.5 (721255b9826b "genirq: Use a maple tree for interrupt
//                 descriptor management"), told apart by their flags;
//   chained_action the placeholder action of kernel/irq/chip.c, whose
//                 handler is bad_chained_irq();
//   module_kset   a pointer to the kset named "module";
//   nr_threads    the int loadavg_proc_show() prints, 1..PID_MAX_LIMIT;
//   kprobe_table  64 hlist heads, each empty or pointed back at;
//   ftrace_ops_list a chain of ftrace_ops ending at one whose func is
//                 ftrace_stub: ftrace_list_end, added too;
//   prog_idr      an idr (IDR_RT_MARKER flags) bpf_prog_by_id() reads;
//   __start___tracepoints_ptrs, __stop___tracepoints_ptrs the two addresses
//                 for_each_kernel_tracepoint() forms that bound a table of
//                 tracepoints (derive_tracepoints.c);
//   sys_call_table from the functions the architecture names, the table
//                 whose probe entries (kp_arch.syscall_probes) point at
//                 their handlers.
// Layouts come from BTF. Bound: 1 KiB of code from each of 3 functions a
// recipe, 64 candidates, each ring walked at most 65,536 nodes, a syscall
// table read up to 4,096 entries.
#include <stdio.h>
#include <string.h>

#include <bpf/btf.h>

#include "arch/arch.h"
#include "core/derive.h"
#include "core/derive_code.h"
#include "io/memory.h"
#include "symbols/symtab.h"
#include "types/types.h"
#include "util/error.h"

struct recipe {
	const char *name;
	char type;		// kallsyms letter
	const char *users[3];
	bool to_exit;		// the users are small: their code up to the first exit
	// Whether addr is the variable; NULL: any address in the image is,
	// when the users form only one.
	bool (*valid)(const struct ctx *c, uint64_t addr);
	// Its size in bytes where the symbol after it is not its end (kallsyms
	// of functions only: the next symbol may be far), 0 if unknown.
	uint64_t (*size)(const struct ctx *c, uint64_t addr);
};

// Whether head, in the image, heads a ring (an empty one too) whose nodes,
// outside the image, each pass node_ok.
static bool is_ring(const struct ctx *c, uint64_t head,
		    bool (*node_ok)(const struct ctx *c, uint64_t node))
{
	uint64_t node, prev = head, back;
	if (!kp_derive_in_image(c, head) || (head & 7) ||
	    !kp_ok(kp_memory_read_u64(c->mem, KP_VIRT, head, &node)))
		return false;
	for (unsigned i = 0; i <= MAX_RING; i++) {
		if (!kp_ok(kp_memory_read_u64(c->mem, KP_VIRT, node + 8, &back)) || back != prev)
			return false;
		if (node == head)
			return true;
		if (kp_derive_in_image(c, node) || !node_ok(c, node))
			return false;
		prev = node;
		if (!kp_ok(kp_memory_read_u64(c->mem, KP_VIRT, node, &node)))
			return false;
	}
	return false;
}

static bool module_node(const struct ctx *c, uint64_t node)
{
	const struct node_layout *l = &c->module;
	char buf[NAME_LEN];
	uint32_t st;
	return l->ok && node >= l->list &&
	       kp_ok(kp_memory_read(c->mem, KP_VIRT, node - l->list + l->name, buf, sizeof(buf))) &&
	       kp_derive_printable(buf, sizeof(buf)) &&
	       kp_ok(kp_memory_read(c->mem, KP_VIRT, node - l->list + l->state, &st, 4)) &&
	       st <= 3;	// MODULE_STATE_UNFORMED
}

static bool modules_ok(const struct ctx *c, uint64_t a)
{
	return is_ring(c, a, module_node);
}

static bool cache_node(const struct ctx *c, uint64_t node)
{
	const struct node_layout *l = &c->cache;
	uint64_t p;
	char buf[NAME_LEN];
	return l->ok && node >= l->list &&
	       kp_ok(kp_memory_read_u64(c->mem, KP_VIRT, node - l->list + l->name, &p)) &&
	       kp_ok(kp_memory_read(c->mem, KP_VIRT, p, buf, 1)) && buf[0] &&
	       kp_ok(kp_memory_read(c->mem, KP_VIRT, p, buf, sizeof(buf))) &&
	       kp_derive_printable(buf, sizeof(buf));
}

static bool slab_caches_ok(const struct ctx *c, uint64_t a)
{
	uint64_t next;
	// Never empty: kmem_cache itself is on it from boot.
	return is_ring(c, a, cache_node) && kp_ok(kp_memory_read_u64(c->mem, KP_VIRT, a, &next)) &&
	       next != a;
}

static bool taint_flags_ok(const struct ctx *c, uint64_t a)
{
	uint64_t t, f;
	uint32_t id;
	struct kp_error *err = kp_types_find(c->types, BTF_KIND_STRUCT, "taint_flag", &id);
	if (err) {
		kp_error_destroy(err);
		return false;
	}
	const struct btf_type *bt = btf__type_by_id(kp_types_btf(c->types), id);
	uint8_t e0[2], e1[2];
	return bt && bt->size && kp_derive_member_offset(c, "taint_flag", "c_true", &t) &&
	       kp_derive_member_offset(c, "taint_flag", "c_false", &f) && kp_derive_in_image(c, a) &&
	       kp_ok(kp_memory_read(c->mem, KP_VIRT, a + t, &e0[0], 1)) &&
	       kp_ok(kp_memory_read(c->mem, KP_VIRT, a + f, &e0[1], 1)) &&
	       kp_ok(kp_memory_read(c->mem, KP_VIRT, a + bt->size + t, &e1[0], 1)) &&
	       kp_ok(kp_memory_read(c->mem, KP_VIRT, a + bt->size + f, &e1[1], 1)) &&
	       e0[0] == 'P' && e0[1] == 'G' && e1[0] == 'F' && e1[1] == ' ';
}

// The architecture's syscall table: its probes' entries point at their
// handlers (by name, from kallsyms).
static bool syscall_table_ok(const struct ctx *c, uint64_t a)
{
	const struct kp_syscall_probe *p = c->arch->syscall_probes;
	struct kp_symbol sym;
	uint64_t entry;
	unsigned n = 0;
	if (!kp_derive_in_image(c, a) || (a & 7) || !p)
		return false;
	for (; p->handler; p++, n++)
		if (!kp_symtab_find(c->st, p->handler, &sym) ||
		    !kp_ok(kp_memory_read_u64(c->mem, KP_VIRT, a + 8ULL * p->nr, &entry)) ||
		    entry != sym.address)
			return false;
	return n > 0;
}

// The placeholder action of a chained interrupt: its handler is
// bad_chained_irq() (kernel/irq/chip.c, 4.4+).
static bool chained_action_ok(const struct ctx *c, uint64_t a)
{
	uint64_t handler, fn;
	struct kp_symbol sym;
	return kp_derive_in_image(c, a) && kp_derive_member_offset(c, "irqaction", "handler", &handler) &&
	       kp_symtab_find(c->st, "bad_chained_irq", &sym) &&
	       kp_ok(kp_memory_read_u64(c->mem, KP_VIRT, a + handler, &fn)) && fn == sym.address;
}

// The IRQ descriptor tree irq_to_desc() looks in: a radix tree (struct
// xarray) whose xa_flags are its GFP_KERNEL allocation flags until 6.4,
// the maple tree sparse_irqs from 6.5 (721255b9826b), whose ma_flags are
// MT_FLAGS_LOCK_EXTERN (0x300), the ALLOC_RANGE and height bits, nothing
// from 0x400 up. Told apart by those flags, each is named only as itself.
// The radix tree's are exactly GFP_KERNEL (RADIX_TREE(irq_desc_tree,
// GFP_KERNEL), never tagged): a test of its bits alone took the upper half
// of a pointer beside sparse_irqs on a 7.2 arm64 boot whose KASLR offset
// happened to set them (0xffff9ecf).
#define GFP_KERNEL_BITS 0xcc0u	// __GFP_IO | __GFP_FS | __GFP_RECLAIM
#define MT_FLAGS_LOCK_EXTERN 0x300u

static bool tree_flags(const struct ctx *c, uint64_t a, const char *type, const char *member,
		       uint32_t *ret)
{
	uint64_t off;
	return kp_derive_in_image(c, a) && kp_derive_member_offset(c, type, member, &off) &&
	       kp_ok(kp_memory_read(c->mem, KP_VIRT, a + off, ret, sizeof(*ret)));
}

static bool irq_desc_tree_ok(const struct ctx *c, uint64_t a)
{
	uint32_t flags;
	return tree_flags(c, a, "xarray", "xa_flags", &flags) && flags == GFP_KERNEL_BITS;
}

static bool sparse_irqs_ok(const struct ctx *c, uint64_t a)
{
	uint32_t flags;
	return tree_flags(c, a, "maple_tree", "ma_flags", &flags) &&
	       (flags & ~0x3ffu) == 0 && (flags & MT_FLAGS_LOCK_EXTERN) == MT_FLAGS_LOCK_EXTERN;
}

// The entries up to the first that is no kernel address (the top 12 bits
// set on x86-64 and arm64): a hook into a module or a trampoline keeps the
// table whole, the data after it (strings, other rodata) ends it.
#define MAX_SYSCALLS 4096
static uint64_t syscall_table_size(const struct ctx *c, uint64_t a)
{
	uint64_t n = 0, entry;
	while (n < MAX_SYSCALLS && kp_ok(kp_memory_read_u64(c->mem, KP_VIRT, a + 8 * n, &entry)) &&
	       (entry >> 52) == 0xfff)
		n++;
	return 8 * n;
}

// module_kset (kernel/params.c): a pointer to the kset of /sys/module,
// whose kobject is named "module".
static bool module_kset_ok(const struct ctx *c, uint64_t a)
{
	uint64_t kset, name_off, name;
	char buf[8];
	uint32_t id;
	struct kp_btf_member m;
	struct kp_error *err = kp_types_find(c->types, BTF_KIND_STRUCT, "kset", &id);
	if (!err)
		err = kp_types_member_path(c->types, id, "kobj.name", 9, &m);
	if (err) {
		kp_error_destroy(err);
		return false;
	}
	name_off = m.bit_offset / 8;
	return kp_derive_in_image(c, a) && !(a & 7) &&
	       kp_ok(kp_memory_read_u64(c->mem, KP_VIRT, a, &kset)) &&
	       kp_ok(kp_memory_read_u64(c->mem, KP_VIRT, kset + name_off, &name)) &&
	       kp_ok(kp_memory_read(c->mem, KP_VIRT, name, buf, 7)) && !memcmp(buf, "module", 7);
}

// nr_threads (kernel/fork.c): the int /proc/loadavg prints, between 1 (the
// idle task is not counted; init is) and PID_MAX_LIMIT (4M, 64-bit).
static bool nr_threads_ok(const struct ctx *c, uint64_t a)
{
	int32_t n;
	return kp_derive_in_image(c, a) && !(a & 3) && kp_ok(kp_memory_read(c->mem, KP_VIRT, a, &n, 4)) &&
	       n >= 1 && n <= 4 * 1024 * 1024;
}

// kprobe_table (kernel/kprobes.c): KPROBE_TABLE_SIZE (64) hlist heads,
// each empty or the first node's pprev pointing back at it.
#define KPROBE_TABLE_SIZE 64
static bool kprobe_table_ok(const struct ctx *c, uint64_t a)
{
	uint64_t heads[KPROBE_TABLE_SIZE], pprev;
	if (!kp_derive_in_image(c, a) || (a & 7) ||
	    !kp_ok(kp_memory_read(c->mem, KP_VIRT, a, heads, sizeof(heads))))
		return false;
	for (unsigned i = 0; i < KPROBE_TABLE_SIZE; i++)
		if (heads[i] && (!kp_ok(kp_memory_read_u64(c->mem, KP_VIRT, heads[i] + 8, &pprev)) ||
				 pprev != a + 8 * i))
			return false;
	return true;
}

// ftrace_list_end (kernel/trace/ftrace.c): the ftrace_ops that ends
// ftrace_ops_list, whose func is ftrace_stub.
static bool ftrace_end(const struct ctx *c, uint64_t ops)
{
	uint64_t func, fn;
	struct kp_symbol stub;
	return kp_derive_member_offset(c, "ftrace_ops", "func", &func) &&
	       kp_symtab_find(c->st, "ftrace_stub", &stub) &&
	       kp_ok(kp_memory_read_u64(c->mem, KP_VIRT, ops + func, &fn)) && fn == stub.address;
}

// ftrace_ops_list: a pointer to a chain of ftrace_ops linked by next that
// ends at ftrace_list_end (1,000 of them at most); *end: that end.
static bool ftrace_chain(const struct ctx *c, uint64_t a, uint64_t *end)
{
	uint64_t next, ops;
	if (!kp_derive_in_image(c, a) || (a & 7) ||
	    !kp_derive_member_offset(c, "ftrace_ops", "next", &next) ||
	    !kp_ok(kp_memory_read_u64(c->mem, KP_VIRT, a, &ops)))
		return false;
	for (unsigned i = 0; i < 1000; i++) {
		if (ops == a || !ops)
			return false;
		if (ftrace_end(c, ops)) {
			*end = ops;
			return kp_derive_in_image(c, ops);
		}
		if (!kp_ok(kp_memory_read_u64(c->mem, KP_VIRT, ops + next, &ops)))
			return false;
	}
	return false;
}

static bool ftrace_ops_list_ok(const struct ctx *c, uint64_t a)
{
	uint64_t end;
	return ftrace_chain(c, a, &end);
}

// prog_idr (kernel/bpf/syscall.c): a struct idr, whose radix tree's
// flags are IDR_RT_MARKER: ROOT_IS_IDR (4) and the IDR_FREE tag, one bit
// at __GFP_BITS_SHIFT (which moves between versions), nothing else
// (include/linux/idr.h); not the upper half of a pointer.
static bool prog_idr_ok(const struct ctx *c, uint64_t a)
{
	uint32_t flags, tag;
	if (!tree_flags(c, a, "xarray", "xa_flags", &flags))
		return false;
	tag = flags & ~4u;
	return (flags & 4) && tag >= 1u << 16 && !(tag & (tag - 1));
}

static const struct recipe recipes[] = {
	{ "modules", 'd', { "print_modules", "find_module_all", "m_start" }, false, modules_ok, NULL },
	{ "slab_caches", 'D', { "dump_unreclaimable_slab", "slab_start", "kmem_cache_destroy" }, false,
	  slab_caches_ok, NULL },
	{ "taint_flags", 'R', { "print_tainted", "module_flags_taint", NULL }, false, taint_flags_ok,
	  NULL },
	{ "tainted_mask", 'd', { "get_taint", NULL, NULL }, true, NULL, NULL },
	{ "irq_desc_tree", 'd', { "irq_to_desc", NULL, NULL }, true, irq_desc_tree_ok, NULL },
	{ "sparse_irqs", 'd', { "irq_to_desc", NULL, NULL }, true, sparse_irqs_ok, NULL },
	{ "chained_action", 'D', { "__irq_do_set_handler", "__irq_set_handler",
				   "irq_set_chained_handler_and_data" }, false, chained_action_ok, NULL },
	{ "module_kset", 'd', { "locate_module_kobject", "mod_sysfs_init", "mod_sysfs_setup" }, false,
	  module_kset_ok, NULL },
	{ "nr_threads", 'd', { "loadavg_proc_show", NULL, NULL }, true, nr_threads_ok, NULL },
	{ "kprobe_table", 'd', { "get_kprobe", NULL, NULL }, true, kprobe_table_ok, NULL },
	{ "ftrace_ops_list", 'D', { "arch_ftrace_ops_list_func", "ftrace_ops_list_func",
				    "__register_ftrace_function" }, false, ftrace_ops_list_ok, NULL },
	{ "prog_idr", 'd', { "bpf_prog_by_id", "bpf_prog_get_curr_or_next", NULL }, true, prog_idr_ok,
	  NULL },
	// users from kp_arch.syscall_table_users
	{ "sys_call_table", 'R', { NULL, NULL, NULL }, false, syscall_table_ok, syscall_table_size },
};

// The address of r's variable, 0 unless exactly one candidate passes;
// *by: the function whose code formed it.
static uint64_t find(const struct ctx *c, const struct kp_arch *arch, struct kp_symtab *st,
		     const struct recipe *r, const char **by)
{
	struct candidates cand;
	kp_derive_gather(c, st, r->valid == syscall_table_ok ? arch->syscall_table_users : r->users,
			 r->to_exit, &cand);
	uint64_t found = 0;
	for (size_t i = 0; i < cand.n; i++) {
		if (r->valid ? !r->valid(c, cand.at[i]) : !kp_derive_in_image(c, cand.at[i]))
			continue;
		if (found)
			return 0;
		found = cand.at[i];
		*by = cand.by[i];
	}
	return found;
}

struct kp_error *kp_derive_refs(struct kp_memory *mem, const struct kp_arch *arch,
				struct kp_types *types, uint64_t image_start, uint64_t image_end,
				struct kp_symtab *st, unsigned *added)
{
	if (!arch->data_refs)
		return NULL;
	struct ctx c = { .mem = mem, .types = types, .arch = arch, .st = st,
			 .image_lo = image_start, .image_hi = image_end };
	c.module.ok = kp_derive_member_offset(&c, "module", "list", &c.module.list) &&
		      kp_derive_member_offset(&c, "module", "name", &c.module.name) &&
		      kp_derive_member_offset(&c, "module", "state", &c.module.state);
	c.cache.ok = kp_derive_member_offset(&c, "kmem_cache", "list", &c.cache.list) &&
		     kp_derive_member_offset(&c, "kmem_cache", "name", &c.cache.name);
	uint64_t at[sizeof(recipes) / sizeof(recipes[0])];
	const char *by[sizeof(recipes) / sizeof(recipes[0])];
	struct kp_symbol sym;
	// All found before any is added: a lookup after an addition sorts the
	// table again.
	// ftrace_list_end is where ftrace_ops_list's chain ends.
	uint64_t ftrace_list_end = 0;
	for (size_t i = 0; i < sizeof(recipes) / sizeof(recipes[0]); i++) {
		at[i] = kp_symtab_find(st, recipes[i].name, &sym) ? 0 :
			find(&c, arch, st, &recipes[i], &by[i]);
		if (at[i] && recipes[i].valid == ftrace_ops_list_ok &&
		    (kp_symtab_find(st, "ftrace_list_end", &sym) ||
		     !ftrace_chain(&c, at[i], &ftrace_list_end)))
			ftrace_list_end = 0;
	}
	for (size_t i = 0; i < sizeof(recipes) / sizeof(recipes[0]); i++) {
		if (!at[i])
			continue;
		// A source each: sym says which function's code gave it.
		char origin[96];
		snprintf(origin, sizeof(origin), "references in %s", by[i]);
		struct kp_error *err = kp_symtab_next_source_origin(st, origin);
		if (!err)
			err = kp_symtab_add(st, recipes[i].name, strlen(recipes[i].name), at[i],
					    recipes[i].type, NULL);
		uint64_t size = recipes[i].size ? recipes[i].size(&c, at[i]) : 0;
		if (!err && size)
			err = kp_symtab_add_limit(st, at[i] + size);
		if (err)
			return err;
		(*added)++;
	}
	struct kp_error *err = kp_derive_tracepoints(&c, st, added);
	if (err || !ftrace_list_end)
		return err;
	err = kp_symtab_next_source_origin(st, "the end of ftrace_ops_list");
	if (!err && !(err = kp_symtab_add(st, "ftrace_list_end", 15, ftrace_list_end, 'D', NULL)))
		(*added)++;
	return err;
}
