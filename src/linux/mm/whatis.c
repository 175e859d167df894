// SPDX-License-Identifier: MIT
// kp_whatis: what an address is (crash's kmem ADDR, drgn's
// identify_address()), every fact that holds, most specific first: a
// task's stack or task_struct, a slab object, a symbol of the kernel or a
// module, a struct page of the memory map, the direct map, an area of the
// address space the architecture names, a physical page.
//
// A CPU's copy of a per-CPU variable lies at __per_cpu_offset[cpu] plus
// the variable's address in the template, __per_cpu_start..__per_cpu_end
// (zero-based on x86-64 until 6.14, in the image elsewhere). Each CPU's
// unit goes on past the static variables with the reserved and dynamic
// chunk (alloc_percpu()) to pcpu_unit_size bytes (mm/percpu.c): the
// layout kp_lx_percpu_layout() finds.
//
// A task's kernel stack is task->stack .. + THREAD_SIZE. THREAD_SIZE is
// no BTF fact (union thread_union is not in BTF); with CONFIG_VMAP_STACK
// (x86-64 and arm64 default, 4.9+) each stack is a vmalloc area whose
// stack_vm_area->nr_pages gives its size, and the tasks without one
// (init_task's static stack) have the size of the others.
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arch/arch.h"
#include "core/kernel.h"
#include "core/layout.h"
#include "linux/mm/mm.h"
#include "util/error.h"
#include "util/strbuf.h"

#define MAX_FACTS 10
// A symbol with no size owns at most this many bytes after it (kallsyms
// without sizes: the next symbol bounds it only where one follows).
#define UNSIZED_SPAN 4096

enum { T_STACK, T_VM_AREA, T_N };
static const struct kp_member_spec task_members[T_N] = {
	// Every kernel has it; a task_struct without one still bounds tasks.
	[T_STACK] = { .name = "stack", .flags = KP_MEMBER_OPTIONAL | KP_MEMBER_NOSPAN },
	// CONFIG_VMAP_STACK (4.9+, ba14a194a434).
	[T_VM_AREA] = { .name = "stack_vm_area", .flags = KP_MEMBER_OPTIONAL | KP_MEMBER_NOSPAN },
};
static const struct kp_struct_spec task_spec = KP_STRUCT_SPEC("struct task_struct", task_members);
enum { V_NR_PAGES, V_N };
static const struct kp_member_spec vm_members[V_N] = { [V_NR_PAGES] = { .name = "nr_pages" } };
static const struct kp_struct_spec vm_spec = KP_STRUCT_SPEC("struct vm_struct", vm_members);

struct whatis_impl {
	struct kp_whatis pub;
	struct kp_whatis_fact facts[MAX_FACTS];
	char cache[64];
	char percpu_name[128];
	char notes[3][1024];
	char memory[2][64];
};

static const char *const kind_names[] = {
	[KP_WHATIS_SYMBOL] = "symbol", [KP_WHATIS_MODULE] = "module", [KP_WHATIS_SLAB] = "slab",
	[KP_WHATIS_TASK] = "task", [KP_WHATIS_STACK] = "stack", [KP_WHATIS_PAGE] = "page",
	[KP_WHATIS_DIRECT] = "direct", [KP_WHATIS_REGION] = "region", [KP_WHATIS_PHYSICAL] = "physical",
	[KP_WHATIS_VMALLOC] = "vmalloc", [KP_WHATIS_PERCPU] = "percpu",
};

static struct kp_whatis_fact *add(struct whatis_impl *w, enum kp_whatis_kind kind)
{
	if (w->pub.nfacts == MAX_FACTS)
		return NULL;
	struct kp_whatis_fact *f = &w->facts[w->pub.nfacts++];
	f->kind = kind;
	f->kind_name = kind_names[kind];
	return f;
}

// Every check that could not be done is named, each with its error
// ("the task list: ...; the vmalloc areas: ..."): a reader knows which
// facts may be missing.
static void note(struct whatis_impl *w, struct kp_error *err, const char *what)
{
	if (!err)
		return;
	size_t len = strlen(w->notes[0]), room = sizeof(w->notes[0]) - len;
	if (room > strlen(what) + 8) {
		kp_str_fit(w->notes[0] + len, room, "%s%s: %s", len ? "; " : "", what, kp_error_message(err));
		w->pub.note = w->notes[0];
	}
	kp_error_destroy(err);
}

// err of a lookup: the absence it may well find (absent) is no fact and
// no note; anything else is said.
static void note_unless(struct whatis_impl *w, struct kp_error *err, bool absent, const char *what)
{
	if (absent)
		kp_error_destroy(err);
	else
		note(w, err, what);
}

static uint64_t stack_size(struct kp_kernel *k, const struct kp_struct_layout *vl, uint64_t area)
{
	uint8_t buf[32];
	if (!area || !vl || !kp_ok(kp_kernel_read_struct(k, vl, area, buf, sizeof(buf))))
		return 0;
	uint64_t n = kp_layout_u64(vl, buf, V_NR_PAGES);
	return n && n <= 64 ? n * kp_kernel_page_size(k) : 0;
}

struct task_hit {
	const struct kp_task *t;
	uint64_t stack, size;
	bool in_stack;
};

// The task whose task_struct or stack holds a; tasks without a stack size
// of their own wait for one learned from another task.
static struct kp_error *find_task(struct kp_kernel *k, uint64_t a, struct whatis_impl *w)
{
	const struct kp_struct_layout *tl, *vl = NULL;
	uint64_t tsize, learned = 0;
	struct kp_task_iter *it;
	struct kp_error *err = kp_kernel_layout(k, &task_spec, &tl);
	if (!err && kp_layout_has(tl, T_VM_AREA))
		err = kp_kernel_layout(k, &vm_spec, &vl);
	if (err || (err = kp_task_iter_create(k, KP_TASKS_THREADS, &it)))
		return err;
	tsize = tl->size;
	const struct kp_task *t;
	struct { uint64_t task, stack; int32_t pid; char comm[16]; } unsized = { 0 }, in = { 0 };
	bool found = false;
	while (!found && !(err = kp_task_iter_next(it, &t)) && t) {
		// BTF's sizeof can exceed what was allocated (drop_task_past_object):
		// of two task_structs that seem to hold a, the later one does.
		if (a >= t->address && a - t->address < tsize) {
			if (t->address > in.task) {
				in.task = t->address;
				in.pid = t->pid;
				memcpy(in.comm, t->comm, sizeof(in.comm));
			}
			continue;
		}
		// The two members lie far apart: two reads, not the span.
		uint64_t stack, area = 0;
		if (!kp_layout_has(tl, T_STACK) ||
		    !kp_ok(kp_read_u64(k, t->address + kp_layout_off(tl, T_STACK), &stack)) ||
		    (vl && !kp_ok(kp_read_u64(k, t->address + kp_layout_off(tl, T_VM_AREA), &area))))
			continue;
		uint64_t size = stack_size(k, vl, area);
		if (size && !learned)
			learned = size;
		if (!size && a >= stack && a - stack < (64u << 10) && !unsized.task) {
			unsized.task = t->address;
			unsized.stack = stack;
			unsized.pid = t->pid;
			memcpy(unsized.comm, t->comm, sizeof(unsized.comm));
		}
		if (size && a >= stack && a - stack < size) {
			struct kp_whatis_fact *f = add(w, KP_WHATIS_STACK);
			if (f) {
				f->task.task = t->address;
				f->task.pid = t->pid;
				memcpy(f->task.comm, t->comm, sizeof(f->task.comm));
				f->task.stack = stack;
				f->task.stack_size = size;
				f->task.from_top = stack + size - a;
			}
			found = true;
		}
	}
	kp_task_iter_destroy(it);
	struct kp_whatis_fact *f;
	if (!found && in.task && (f = add(w, KP_WHATIS_TASK))) {
		f->task.task = in.task;
		f->task.pid = in.pid;
		memcpy(f->task.comm, in.comm, sizeof(f->task.comm));
		f->offset = a - in.task;
		found = true;
	}
	if (!found && unsized.task && learned && a - unsized.stack < learned) {
		f = add(w, KP_WHATIS_STACK);
		if (f) {
			f->task.task = unsized.task;
			f->task.pid = unsized.pid;
			memcpy(f->task.comm, unsized.comm, sizeof(f->task.comm));
			f->task.stack = unsized.stack;
			f->task.stack_size = learned;
			f->task.from_top = unsized.stack + learned - a;
		}
	}
	return err;
}

static void symbol(struct kp_kernel *k, uint64_t a, struct whatis_impl *w)
{
	struct kp_symbol sym;
	if (!kp_kernel_symbol_at(k, a, &sym) || a < sym.address)
		return;
	uint64_t off = a - sym.address;
	enum kp_section sec = kp_kernel_section(k, a);
	// A symbol owns what its size says; without a size, only inside the
	// core kernel's sections or a little past a module's symbol.
	if (sym.size ? off >= sym.size : (sym.module ? off >= UNSIZED_SPAN : sec == KP_SEC_NONE))
		return;
	struct kp_whatis_fact *f = add(w, sym.module ? KP_WHATIS_MODULE : KP_WHATIS_SYMBOL);
	if (!f)
		return;
	f->sym = sym;
	f->offset = off;
	f->section = kp_section_name(sec);
}

// The static per-CPU variable holding template address t (start <= t <
// end), named in w. Zero-based per-CPU symbols (x86-64 until 6.14) lie
// below every kernel address, where no address lookup looks: they come
// first in address order, the iteration ends at the first symbol past t.
static bool percpu_symbol(struct kp_kernel *k, uint64_t t, uint64_t start, uint64_t end,
			  struct whatis_impl *w, struct kp_symbol *ret)
{
	struct kp_symbol_iter *it;
	const struct kp_symbol *s;
	struct kp_symbol best = { 0 };
	if (kp_kernel_symbol_at(k, t, ret) && ret->address >= start && ret->address <= t)
		return true;
	if (!kp_ok(kp_symbol_iter_create(k, &it)))
		return false;
	uint64_t next = end;
	while (kp_ok(kp_symbol_iter_next(it, &s)) && s) {
		if (s->address > t) {
			next = s->address < end ? s->address : end;
			break;
		}
		// __per_cpu_start shares its address with the first variable.
		if (s->address < start || s->module || !strncmp(s->name, "__per_cpu_", 10) ||
		    (best.name && s->address == best.address))
			continue;
		best = *s;
		snprintf(w->percpu_name, sizeof(w->percpu_name), "%s", s->name);
		best.name = w->percpu_name;
	}
	kp_symbol_iter_destroy(it);
	if (!best.name)
		return false;
	best.size = next - best.address;
	*ret = best;
	return true;
}

static void percpu(struct kp_kernel *k, uint64_t a, struct whatis_impl *w)
{
	struct kp_lx_percpu pl;
	uint64_t off;
	if (!kp_lx_percpu_layout(k, &pl))
		return;
	uint64_t start = pl.start, end = pl.start + pl.static_size;
	for (uint32_t cpu = 0; cpu < kp_kernel_nr_cpu_ids(k); cpu++) {
		struct kp_error *err = kp_kernel_per_cpu_offset(k, cpu, &off);
		if (err) {
			// A CPU that is not possible has no area.
			note_unless(w, err, kp_error_code(err) == KP_ERR_INVALID, "the per-CPU areas");
			continue;
		}
		uint64_t t = a - off;
		if (t < start || t - start >= pl.unit)
			continue;
		struct kp_whatis_fact *f = add(w, KP_WHATIS_PERCPU);
		if (!f)
			return;
		f->cpu = cpu;
		f->start = start + off;
		f->end = start + off + pl.unit;
		f->offset = t - start;
		struct kp_symbol sym;
		if (t < end && percpu_symbol(k, t, start, end, w, &sym) && (!sym.size || t - sym.address < sym.size)) {
			f->sym = sym;
			f->offset = t - sym.address;
		}
		return;
	}
}

static void slab(struct kp_kernel *k, uint64_t pa, struct whatis_impl *w)
{
	struct kp_lx_page lp;
	uint64_t pfn = pa / kp_kernel_page_size(k);
	struct kp_error *err = kp_lx_page_read(k, pfn, &lp);
	if (err) {
		// No struct page is no slab.
		note_unless(w, err, kp_error_code(err) == KP_ERR_NOT_FOUND || kp_error_code(err) == KP_ERR_UNSUPPORTED,
			    "the struct page");
		return;
	}
	if (!lp.slab)
		return;
	struct kp_whatis_fact f = { .kind = KP_WHATIS_SLAB, .kind_name = "slab" };
	err = kp_lx_slab_object(k, &lp, pa, &f, w->cache, sizeof(w->cache), w->notes[1], sizeof(w->notes[1]));
	if (err) {
		note(w, err, "the slab");
		return;
	}
	struct kp_whatis_fact *to = add(w, KP_WHATIS_SLAB);
	if (to)
		*to = f;
}

static void physical(struct kp_kernel *k, uint64_t pa, struct whatis_impl *w)
{
	const struct kp_range *r;
	size_t n = kp_kernel_ranges(k, KP_PHYS, &r);
	struct kp_whatis_fact *f = add(w, KP_WHATIS_PHYSICAL);
	uint64_t page;
	if (!f)
		return;
	f->paddr = pa;
	f->pfn = pa / kp_kernel_page_size(k);
	for (size_t i = 0; i < n; i++)
		if (pa >= r[i].start && pa < r[i].end)
			f->in_dump = true;
	f->has_page = kp_ok(kp_lx_pfn_to_page(k, f->pfn, &page));
	struct kp_error *err = kp_lx_iomem(k, pa, w->memory[0], sizeof(w->memory[0]), w->memory[1],
					   sizeof(w->memory[1]));
	if (err) {
		kp_str_fit(w->notes[2], sizeof(w->notes[2]), "/proc/iomem: %s", kp_error_message(err));
		f->note = w->notes[2];
		kp_error_destroy(err);
		return;
	}
	f->memory = w->memory[0][0] ? w->memory[0] : NULL;
	f->memory_detail = w->memory[1][0] ? w->memory[1] : NULL;
}

static void vmalloc_area(struct kp_kernel *k, uint64_t a, struct whatis_impl *w)
{
	struct kp_lx_vmalloc v;
	struct kp_error *err = kp_lx_vmalloc_area(k, a, &v);
	if (err) {
		note_unless(w, err, kp_error_code(err) == KP_ERR_NOT_FOUND, "the vmalloc areas");
		return;
	}
	struct kp_whatis_fact *f = add(w, KP_WHATIS_VMALLOC);
	if (!f)
		return;
	f->start = v.start;
	f->end = v.end;
	f->caller = v.caller;
	if (!v.caller || !kp_kernel_symbol_at(k, v.caller, &f->caller_sym))
		f->caller_sym.name = NULL;
}

static void regions(struct kp_kernel *k, uint64_t a, bool mapped, uint64_t pa, struct whatis_impl *w)
{
	uint64_t va, pfn, off, start, end;
	if (mapped && kp_lx_phys_to_virt(k, pa, &va) && va == a) {
		struct kp_whatis_fact *f = add(w, KP_WHATIS_DIRECT);
		if (f) {
			f->paddr = pa;
			f->pfn = pa / kp_kernel_page_size(k);
		}
		return;
	}
	if (kp_lx_vmemmap_pfn(k, a, &pfn, &off)) {
		struct kp_whatis_fact *f = add(w, KP_WHATIS_PAGE);
		if (f) {
			f->pfn = pfn;
			f->offset = off;
		}
		return;
	}
	const struct kp_arch *arch = kp_kernel_arch(k);
	const char *name = arch->region ? arch->region(kp_kernel_arch_ctx(k), a, &start, &end) : NULL;
	// Module memory is vmalloc'ed as well (module_alloc(), execmem_alloc()
	// since 6.10): /proc/vmallocinfo lists it, with its caller.
	if (name && (!strcmp(name, "vmalloc") || !strcmp(name, "modules")))
		vmalloc_area(k, a, w);
	struct kp_whatis_fact *f = name ? add(w, KP_WHATIS_REGION) : NULL;
	if (f) {
		f->region = name;
		f->start = start;
		f->end = end;
	}
}

// A task_struct is allocated at arch_task_struct_size, which BTF does not
// know: x86 ends it in the FPU state this CPU needs (6.1 on QEMU: 8392
// bytes, BTF's sizeof 9792). In a slab, an address past the task's object
// is another object's: the slab fact has the object's true bounds.
static void drop_task_past_object(struct whatis_impl *w)
{
	size_t task = w->pub.nfacts, slab = w->pub.nfacts;
	for (size_t i = 0; i < w->pub.nfacts; i++) {
		if (w->facts[i].kind == KP_WHATIS_TASK)
			task = i;
		else if (w->facts[i].kind == KP_WHATIS_SLAB)
			slab = i;
	}
	if (task == w->pub.nfacts || slab == w->pub.nfacts ||
	    w->facts[slab].slab.object == w->facts[task].task.task)
		return;
	memmove(&w->facts[task], &w->facts[task + 1], (w->pub.nfacts - task - 1) * sizeof(w->facts[0]));
	w->pub.nfacts--;
}

// No task_struct or kernel stack lies in the core kernel's text or
// read-only data (init_task and init_stack are in .data): whatis of a
// function or a constant does not walk the task list.
static bool may_hold_task(struct kp_kernel *k, uint64_t a)
{
	enum kp_section sec = kp_kernel_section(k, a);
	return sec != KP_SEC_TEXT && sec != KP_SEC_RODATA;
}

static struct kp_error *virtual(struct kp_kernel *k, uint64_t a, struct whatis_impl *w)
{
	KP_INIT(kp_vtop, t);
	struct kp_error *err = kp_vtop(k, a, &t);
	if (err)
		note(w, err, "the page tables");
	bool mapped = !err && t.present;
	if (may_hold_task(k, a) && (err = find_task(k, a, w)))
		note(w, err, "the task list");
	if (mapped)
		slab(k, t.paddr, w);
	drop_task_past_object(w);
	symbol(k, a, w);
	percpu(k, a, w);
	regions(k, a, mapped, t.paddr, w);
	return NULL;
}

struct kp_error *kp_whatis_create(struct kp_kernel *k, enum kp_space space, uint64_t address,
				  struct kp_whatis **ret)
{
	struct whatis_impl *w = calloc(1, sizeof(*w));
	if (!w)
		return &kp_enomem;
	w->pub.address = address;
	w->pub.space = space;
	w->pub.facts = w->facts;
	if (space == KP_PHYS) {
		uint64_t va;
		struct kp_error *err = NULL;
		bool mapped = kp_lx_phys_to_virt(k, address, &va);
		if (mapped && (err = find_task(k, va, w)))
			note(w, err, "the task list");
		slab(k, address, w);
		drop_task_past_object(w);
		// A per-CPU area embedded in the direct map (the first chunk).
		if (mapped)
			percpu(k, va, w);
		physical(k, address, w);
	} else {
		virtual(k, address, w);
	}
	*ret = &w->pub;
	return NULL;
}

void kp_whatis_destroy(struct kp_whatis *w)
{
	free(w);	// the first member of its whatis_impl
}
