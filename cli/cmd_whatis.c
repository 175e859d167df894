// SPDX-License-Identifier: MIT
// kpeek whatis ADDR...: what each address is (crash's kmem ADDR, drgn's
// identify_address).
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "output.h"

static void usage(void)
{
	printf("Usage: kpeek [-c CORE] whatis [-p] [--json] ADDR...\n"
	       "Says what each kernel virtual address (0xHEX, DECIMAL or\n"
	       "SYMBOL[+-OFFSET]), or with -p physical address, is: every fact that\n"
	       "holds, most specific first:\n"
	       "  task      inside a task_struct (PID, command, offset)\n"
	       "  stack     inside a task's kernel stack (PID, command, bytes below its top)\n"
	       "  slab      inside a SLUB object: cache, object start, offset, object\n"
	       "            size, allocated or free (on its slab's or a CPU's freelist,\n"
	       "            hardened freelists decoded)\n"
	       "  symbol    in the kernel image: symbol+offset and section\n"
	       "  module    in a module: its symbol+offset\n"
	       "  percpu    in a CPU's per-CPU area: the per-CPU variable+offset and\n"
	       "            the CPU, or the area's offset past the static variables\n"
	       "            (alloc_percpu() memory)\n"
	       "  page      in the memory map: the struct page of a PFN\n"
	       "  direct    in the direct map: its PFN and the page's summary\n"
	       "  vmalloc   in a vmalloc area: its start, size (guard page included)\n"
	       "            and caller, as /proc/vmallocinfo shows them\n"
	       "  region    in an area the architecture names (x86-64: vmalloc,\n"
	       "            cpu_entry_area, modules, fixmap, vsyscall; arm64: linear\n"
	       "            map, vmalloc, vmemmap, modules, fixmap, PCI I/O)\n"
	       "  physical  (-p) its PFN, whether the dump holds it and the kernel has a\n"
	       "            struct page for it, and what /proc/iomem says of it (System\n"
	       "            RAM, Reserved, a device; the innermost entry after '>')\n"
	       "An address nothing is known of says so. Tasks are those of the task\n"
	       "list; slab objects need the memory map of VMCOREINFO (mem_section).\n"
	       "\n"
	       "Exit status: 0 success, 2 an address that could not be read or a check\n"
	       "that could not be done for one (its answer may lack a fact; said on\n"
	       "stderr), a usage error or output that could not be written.\n"
	       "\n"
	       "Options:\n"
	       "  -p, --physical  addresses are physical\n"
	       "  -j, --json      {\"addresses\": [{\"query\", \"address\", \"physical\",\n"
	       "                  \"facts\": [{\"kind\", ...}], \"note\"}]}: slab facts\n"
	       "                  have \"slab\": {\"cache\", \"cache_name\", \"slab\", \"object\",\n"
	       "                  \"offset\", \"size\", \"slot_size\", \"allocated\"} (null\n"
	       "                  when unknown, with \"note\"); task and stack facts\n"
	       "                  \"task\": {\"task\", \"pid\", \"comm\"} (stack: \"stack\",\n"
	       "                  \"stack_size\", \"from_top\"); symbol and module facts\n"
	       "                  \"symbol\", \"offset\", \"module\", \"section\"; page, direct\n"
	       "                  and physical facts \"pfn\" (\"page\": a page's summary;\n"
	       "                  physical: \"memory\", \"memory_detail\" from /proc/iomem);\n"
	       "                  vmalloc facts \"start\", \"size\", \"caller\",\n"
	       "                  \"caller_symbol\"; percpu facts \"cpu\", \"symbol\" (null\n"
	       "                  past the static variables), \"offset\", \"start\", \"size\"\n"
	       "  -h, --help      show this help\n"
	       "\n"
	       "Examples:\n"
	       "  kpeek -c vmcore whatis 0xffff8c76812a3c40\n"
	       "  kpeek -c vmcore whatis -p 0x1000000\n");
}

static const char *state_name(enum kp_slab_state s)
{
	switch (s) {
	case KP_SLAB_ALLOCATED:
		return "allocated";
	case KP_SLAB_FREE:
		return "free";
	case KP_SLAB_OUTSIDE:
		return "in no object (the slab's unused tail)";
	default:
		return "allocated or free: unknown";
	}
}

static void slab_text(struct out *o, const struct kp_whatis_fact *f)
{
	if (f->slab.state == KP_SLAB_OUTSIDE) {
		out_text(o, "  slab      %s slab 0x%" PRIx64 ": %s\n", f->slab.cache_name, f->slab.slab,
			 state_name(f->slab.state));
		return;
	}
	out_text(o, "  slab      %s object 0x%" PRIx64 "%s%" PRIx64 " of %u bytes, %s (slab 0x%" PRIx64 ")\n",
		 f->slab.cache_name, f->slab.object, f->slab.offset < 0 ? "-0x" : "+0x",
		 (uint64_t)(f->slab.offset < 0 ? -f->slab.offset : f->slab.offset), f->slab.object_size,
		 state_name(f->slab.state), f->slab.slab);
}

// The caller of a vmalloc area as /proc/vmallocinfo prints it (%pS).
static void caller_name(const struct kp_whatis_fact *f, char *buf, size_t size)
{
	snprintf(buf, size, "%s+0x%" PRIx64 "%s%s%s", f->caller_sym.name, f->caller - f->caller_sym.address,
		 f->caller_sym.module ? " [" : "", f->caller_sym.module ? f->caller_sym.module : "",
		 f->caller_sym.module ? "]" : "");
}

static void vmalloc_json(struct out *o, const struct kp_whatis_fact *f)
{
	char buf[320];
	out_kv_hex(o, "start", f->start);
	out_kv_uint(o, "size", f->end - f->start);
	// An area without a caller (vm_map_ram) has null, not "0x0".
	out_kv_hex_known(o, "caller", f->caller != 0, f->caller);
	if (f->caller_sym.name)
		caller_name(f, buf, sizeof(buf));
	out_kv_str(o, "caller_symbol", f->caller_sym.name ? buf : NULL);
}

static void page_line(struct out *o, struct kp_kernel *k, uint64_t pfn)
{
	struct kp_page *p;
	char buf[512];
	struct kp_error *err = kp_page_create(k, pfn, &p);
	if (err) {
		// JSON: "page" null and why, as the text says it.
		if (out_is_json(o)) {
			out_kv_str(o, "page", NULL);
			out_kv_str(o, "page_error", kp_error_message(err));
		} else {
			out_text(o, "            (page: %s)\n", kp_error_message(err));
		}
		kp_error_destroy(err);
		return;
	}
	if (out_is_json(o)) {
		out_begin_object(o, "page");
		cli_page_json(o, p);
		out_end_object(o);
		out_kv_str(o, "page_error", NULL);
	} else {
		cli_page_summary(p, buf, sizeof(buf));
		out_text(o, "            %s\n", buf);
	}
	kp_page_destroy(p);
}

static void fact_text(struct out *o, struct kp_kernel *k, const struct kp_whatis_fact *f)
{
	switch (f->kind) {
	case KP_WHATIS_SLAB:
		slab_text(o, f);
		break;
	case KP_WHATIS_TASK:
		out_text(o, "  task      task_struct 0x%" PRIx64 "+0x%" PRIx64 " of PID %d (%s)\n", f->task.task,
			 f->offset, f->task.pid, f->task.comm);
		break;
	case KP_WHATIS_STACK:
		out_text(o, "  stack     of PID %d (%s): 0x%" PRIx64 " bytes below its top (stack 0x%" PRIx64
			 ", 0x%" PRIx64 " bytes)\n", f->task.pid, f->task.comm, f->task.from_top, f->task.stack,
			 f->task.stack_size);
		break;
	case KP_WHATIS_SYMBOL:
	case KP_WHATIS_MODULE:
		out_text(o, "  %-9s %s+0x%" PRIx64, f->kind_name, f->sym.name, f->offset);
		if (f->sym.module)
			out_text(o, " [%s]", f->sym.module);
		out_text(o, f->section ? " (%s)\n" : "\n", f->section);
		break;
	case KP_WHATIS_PERCPU:
		if (f->sym.name)
			out_text(o, "  percpu    %s+0x%" PRIx64 " of CPU %" PRIu32 "\n", f->sym.name, f->offset, f->cpu);
		else
			out_text(o, "  percpu    CPU %" PRIu32 "'s area 0x%" PRIx64 "-0x%" PRIx64 " +0x%" PRIx64
				 " (past its static variables)\n", f->cpu, f->start, f->end, f->offset);
		break;
	case KP_WHATIS_PAGE:
		out_text(o, "  page      struct page of PFN 0x%" PRIx64 " +0x%" PRIx64 "\n", f->pfn, f->offset);
		break;
	case KP_WHATIS_DIRECT:
		out_text(o, "  direct    PFN 0x%" PRIx64 " (physical 0x%" PRIx64 ")\n", f->pfn, f->paddr);
		page_line(o, k, f->pfn);
		break;
	case KP_WHATIS_REGION:
		out_text(o, "  region    %s (0x%" PRIx64 "-0x%" PRIx64 ")\n", f->region, f->start, f->end);
		break;
	case KP_WHATIS_VMALLOC: {
		char buf[320] = "";
		if (f->caller_sym.name)
			caller_name(f, buf, sizeof(buf));
		else if (f->caller)
			snprintf(buf, sizeof(buf), "0x%" PRIx64, f->caller);
		out_text(o, "  vmalloc   0x%" PRIx64 "-0x%" PRIx64 " %" PRIu64 " bytes%s%s\n", f->start, f->end,
			 f->end - f->start, f->caller ? ", caller " : " (vm_map_ram)", buf);
		break;
	}
	case KP_WHATIS_PHYSICAL:
		out_text(o, "  physical  PFN 0x%" PRIx64 ", %s, %s\n", f->pfn,
			 f->in_dump ? "in the dump" : "not in the dump",
			 f->has_page ? "RAM the kernel maps (it has a struct page)" : "no struct page");
		if (f->memory)
			out_text(o, "            iomem: %s%s%s\n", f->memory, f->memory_detail ? " > " : "",
				 f->memory_detail ? f->memory_detail : "");
		if (f->has_page)
			page_line(o, k, f->pfn);
		break;
	}
	if (f->note)
		out_text(o, "            (%s)\n", f->note);
}

static void task_json(struct out *o, const struct kp_whatis_fact *f)
{
	out_begin_object(o, "task");
	out_kv_hex(o, "task", f->task.task);
	out_kv_int(o, "pid", f->task.pid);
	out_kv_str(o, "comm", f->task.comm);
	out_end_object(o);
	if (f->kind == KP_WHATIS_TASK) {
		out_kv_uint(o, "offset", f->offset);
	} else {
		out_kv_hex(o, "stack", f->task.stack);
		out_kv_uint(o, "stack_size", f->task.stack_size);
		out_kv_uint(o, "from_top", f->task.from_top);
	}
}

static void fact_json(struct out *o, struct kp_kernel *k, const struct kp_whatis_fact *f)
{
	out_begin_object(o, NULL);
	out_kv_str(o, "kind", f->kind_name);
	switch (f->kind) {
	case KP_WHATIS_SLAB:
		out_begin_object(o, "slab");
		out_kv_hex(o, "cache", f->slab.cache);
		out_kv_str(o, "cache_name", f->slab.cache_name);
		out_kv_hex(o, "slab", f->slab.slab);
		out_kv_hex_known(o, "object", f->slab.state != KP_SLAB_OUTSIDE, f->slab.object);
		out_kv_int(o, "offset", f->slab.offset);
		out_kv_uint(o, "size", f->slab.object_size);
		out_kv_uint(o, "slot_size", f->slab.slot_size);
		if (f->slab.state == KP_SLAB_ALLOCATED || f->slab.state == KP_SLAB_FREE)
			out_kv_bool(o, "allocated", f->slab.state == KP_SLAB_ALLOCATED);
		else
			out_kv_str(o, "allocated", NULL);
		out_end_object(o);
		break;
	case KP_WHATIS_TASK:
	case KP_WHATIS_STACK:
		task_json(o, f);
		break;
	case KP_WHATIS_SYMBOL:
	case KP_WHATIS_MODULE:
		out_kv_str(o, "symbol", f->sym.name);
		out_kv_hex(o, "symbol_address", f->sym.address);
		out_kv_uint(o, "offset", f->offset);
		out_kv_str(o, "module", f->sym.module);
		out_kv_str(o, "section", f->section);
		break;
	case KP_WHATIS_PERCPU:
		out_kv_uint(o, "cpu", f->cpu);
		out_kv_str(o, "symbol", f->sym.name);
		out_kv_uint(o, "offset", f->offset);
		out_kv_hex(o, "start", f->start);
		out_kv_uint(o, "size", f->end - f->start);
		break;
	case KP_WHATIS_PAGE:
		out_kv_hex(o, "pfn", f->pfn);
		out_kv_uint(o, "offset", f->offset);
		break;
	case KP_WHATIS_DIRECT:
	case KP_WHATIS_PHYSICAL:
		out_kv_hex(o, "pfn", f->pfn);
		out_kv_hex(o, "paddr", f->paddr);
		if (f->kind == KP_WHATIS_PHYSICAL) {
			out_kv_bool(o, "in_dump", f->in_dump);
			out_kv_bool(o, "has_page", f->has_page);
			out_kv_str(o, "memory", f->memory);
			out_kv_str(o, "memory_detail", f->memory_detail);
		}
		if (f->kind == KP_WHATIS_DIRECT || f->has_page) {
			page_line(o, k, f->pfn);
		} else {
			// No struct page: "page" is there, null, in every such fact.
			out_kv_str(o, "page", NULL);
			out_kv_str(o, "page_error", NULL);
		}
		break;
	case KP_WHATIS_REGION:
		out_kv_str(o, "region", f->region);
		out_kv_hex(o, "start", f->start);
		out_kv_hex(o, "end", f->end);
		break;
	case KP_WHATIS_VMALLOC:
		vmalloc_json(o, f);
		break;
	}
	out_kv_str(o, "note", f->note);
	out_end_object(o);
}

void cli_whatis_fact(struct out *o, struct kp_kernel *k, const struct kp_whatis_fact *f)
{
	if (out_is_json(o))
		fact_json(o, k, f);
	else
		fact_text(o, k, f);
}

static void show(struct out *o, struct kp_kernel *k, const char *arg, const struct kp_whatis *w)
{
	bool json = out_is_json(o);
	if (json) {
		out_begin_object(o, NULL);
		out_kv_str(o, "query", arg);
		out_kv_hex(o, "address", w->address);
		out_kv_bool(o, "physical", w->space == KP_PHYS);
		out_begin_list(o, "facts");
	} else {
		out_text(o, "%s%016" PRIx64 ":\n", w->space == KP_PHYS ? "physical " : "", w->address);
	}
	for (size_t i = 0; i < w->nfacts; i++)
		cli_whatis_fact(o, k, &w->facts[i]);
	if (json) {
		out_end_list(o);
		out_kv_str(o, "note", w->note);
		out_end_object(o);
		return;
	}
	if (!w->nfacts)
		out_text(o, "  nothing known\n");
	if (w->note)
		out_text(o, "  (not checked: %s)\n", w->note);
}

int cmd_whatis(struct cli *cli, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "physical", no_argument, NULL, 'p' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	bool phys = false;
	int c;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+:pjh", opts, NULL)) != -1) {
		if (c == 'p')
			phys = true;
		else if (c == 'j')
			cli->json = true;
		else if (c == 'h')
			return usage(), 0;
		else
			return cli_bad_option("whatis", c, argv);
	}
	if (optind >= argc)
		return cli_usage_error("whatis", "expected ADDR");
	struct kp_kernel *k = cli_kernel(cli);
	if (!k)
		return CLI_EXIT_ERROR;
	struct out *o = out_create(cli->json);
	if (out_is_json(o))
		out_begin_list(o, "addresses");
	int status = 0;
	for (int i = optind; i < argc; i++) {
		uint64_t a;
		struct kp_whatis *w;
		int st = phys ? (cli_parse_number(argv[i], &a) ? 0 : cli_usage_error("whatis", "'%s' is not a physical address", argv[i]))
			: cli_parse_address(cli, argv[i], &a);
		struct kp_error *err = st ? NULL : kp_whatis_create(k, phys ? KP_PHYS : KP_VIRT, a, &w);
		if (err)
			st = cli_error_prefix(err, "whatis %s", argv[i]);
		if (st) {
			status = st > status ? st : status;
			continue;
		}
		show(o, k, argv[i], w);
		// A walk that could not be done (the task list, the vmalloc
		// areas, the page tables) may have left out a fact that holds.
		if (w->note)
			status = cli_fail("whatis %s: incomplete: not checked: %s", argv[i], w->note);
		kp_whatis_destroy(w);
	}
	if (out_is_json(o))
		out_end_list(o);
	out_destroy(o);
	return status;
}
