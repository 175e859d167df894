// SPDX-License-Identifier: MIT
// The kernel handle: probes the memory source, chooses the architecture,
// then derives what the rest of kpeek needs from them (VMCOREINFO facts,
// address translation, symbols; BTF on first use).
#include <elf.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/btf.h>

#include "arch/arch.h"
#include "core/btf_source.h"
#include "core/derive.h"
#include "core/kernel.h"
#include "core/locate.h"
#include "format/source.h"
#include "format/vmcoreinfo.h"
#include "io/file.h"
#include "io/memory.h"
#include "symbols/kallsyms.h"
#include "symbols/kallsyms_scan.h"
#include "symbols/symtab.h"
#include "types/types.h"
#include "util/error.h"
#include "util/le.h"
#include "util/opts.h"

#define KCORE_PATH "/proc/kcore"
#define KALLSYMS_PATH "/proc/kallsyms"
// CONFIG_NR_CPUS is at most 8192 on every architecture kpeek supports.
#define MAX_CPUS 8192

struct kp_kernel {
	struct kp_file *file;
	struct kp_memory *mem;
	struct kp_source src;
	const struct kp_arch *arch;
	struct kp_arch_ctx *arch_ctx;
	struct kp_vmcoreinfo *vmcoreinfo;	// NULL if the source has none
	struct kp_symtab *symtab;

	bool has_kaslr_offset;
	uint64_t kaslr_offset;
	char *release;
	char *banner;
	char symbol_sources[128];
	// The kernel's kallsyms names functions only (CONFIG_KALLSYMS_ALL=n,
	// e.g. Debian's 6.1 arm64) and nothing else gave data symbols.
	bool no_data_symbols;
	char vmcoreinfo_origin[160];		// "dump note", "found in memory at ..."
	char kaslr_check[192];			// how the architecture checked the layout

	// BTF, loaded on first use by kp_kernel_types().
	struct kp_types *types;
	struct kp_error *types_error;		// remembered failure of the first load
	char *btf_path;				// --btf override

	// Symbols a higher layer reads when a lookup first needs them (module
	// symbols out of memory: linux/open.c). Not when a kallsyms text
	// (/proc/kallsyms, --kallsyms) gave them already.
	kp_kernel_late_symbols_fn *late_symbols;
	kp_kernel_late_types_fn *late_types;
	const char *late_name;
	bool late_done, text_symbols;

	// State a higher layer keeps for this handle (kp_kernel_slot()).
	struct {
		void *obj;
		void (*destroy)(void *obj);
	} slots[KP_KERNEL_NSLOTS];
};

static const struct kp_source_ops *const source_ops[] = {
	&kp_elf_core_ops,
	&kp_kdump_ops,
	&kp_lime_ops,
};

static struct kp_error *open_source(struct kp_kernel *k, const char *path,
				    const struct kp_open_options *opts)
{
	struct kp_error *err = kp_file_open(path, &k->file);
	if (err)
		return err;
	if (opts->raw)
		return kp_raw_open(k->file, opts->raw_base, k->mem, &k->src);

	uint8_t head[4096];
	ssize_t n = pread(k->file->fd, head, sizeof(head), 0);
	if (n < 0)
		return kp_error_os(errno, "%s", path);
	if (n == 0)
		return kp_error_create(KP_ERR_FORMAT, "%s: empty file, not a dump", path);

	for (size_t i = 0; i < sizeof(source_ops) / sizeof(source_ops[0]); i++) {
		if (source_ops[i]->probe(head, n))
			return source_ops[i]->open(k->file, k->mem, &k->src);
	}
	char magic[3 * 8 + 1] = "";
	size_t pos = 0;
	for (ssize_t i = 0; i < n && i < 8; i++)
		pos += snprintf(magic + pos, sizeof(magic) - pos, "%s%02x", i ? " " : "",
				head[i]);
	// Raw images have no header to probe: say how to open one.
	return kp_error_create(KP_ERR_FORMAT,
			       "%s: not an ELF core, kdump-compressed dump, LiME or AVML image "
			       "(starts with %s); use --raw[=BASE] for a raw physical memory image",
			       path, magic);
}

// ---------------------------------------------------------------- architecture

static const char *arch_names(void)
{
	static char buf[128];
	size_t pos = 0;
	for (size_t i = 0; kp_arches[i] && pos < sizeof(buf); i++)
		pos += snprintf(buf + pos, sizeof(buf) - pos, "%s%s", i ? ", " : "",
				kp_arches[i]->name);
	return buf;
}

// What the file itself says: ELF e_machine, a kdump header's machine, the
// VMCOREINFO note. NULL with *err NULL when it says nothing.
static const struct kp_arch *arch_from_source(struct kp_kernel *k, const char *path,
					      struct kp_error **err)
{
	*err = NULL;
	if (k->src.elf_machine) {
		const struct kp_arch *a = kp_arch_by_elf_machine(k->src.elf_machine);
		if (!a)
			*err = kp_error_create(KP_ERR_UNSUPPORTED,
					       "%s: ELF core for machine %u (%s) is not supported (kpeek reads %s)",
					       path, k->src.elf_machine,
					       kp_elf_machine_name(k->src.elf_machine), arch_names());
		return a;
	}
	if (k->src.machine[0]) {
		const struct kp_arch *a = kp_arch_by_uts_machine(k->src.machine);
		if (a)
			return a;
		// QEMU 7.2 writes "Unknown" for aarch64: fall through to VMCOREINFO.
	}
	if (k->vmcoreinfo)
		return kp_arch_by_vmcoreinfo(k->vmcoreinfo);
	return NULL;
}

static struct kp_error *choose_arch(struct kp_kernel *k, const char *path,
				    const struct kp_open_options *opts)
{
	struct kp_error *err;
	const struct kp_arch *a = arch_from_source(k, path, &err);
	if (err)
		return err;
	if (opts->arch) {
		const struct kp_arch *want = kp_arch_by_name(opts->arch);
		if (!want)
			return kp_error_create(KP_ERR_INVALID,
					       "unknown architecture '%s' (kpeek reads %s)",
					       opts->arch, arch_names());
		if (a && a != want)
			return kp_error_create(KP_ERR_INVALID,
					       "%s is an %s dump, not %s", path, a->name, want->name);
		a = want;
	}
	if (!a && k->src.machine[0])
		return kp_error_create(KP_ERR_UNSUPPORTED,
				       "%s: kdump dump of machine '%s' is not supported (kpeek reads %s)",
				       path, k->src.machine, arch_names());
	if (!a)
		return kp_error_create(KP_ERR_NOT_FOUND,
				       "%s: cannot tell the architecture (no ELF header, kdump machine or VMCOREINFO says it): pass --arch (%s)",
				       path, arch_names());
	k->arch = a;
	return NULL;
}

// A physical-only source with no VMCOREINFO and no architecture in its
// header (LiME, raw): the first vmcoreinfo page in RAM says which kernel.
// Without one, and without CPU notes, nothing can locate the kernel.
static struct kp_error *arch_from_memory(struct kp_kernel *k, const char *path)
{
	uint64_t pa = 0;
	char *text;
	size_t len;
	struct kp_vmcoreinfo *vi;
	struct kp_error *err = kp_locate_vmcoreinfo_page(k->mem, &pa, &text, &len);
	if (err) {
		if (kp_error_code(err) != KP_ERR_NOT_FOUND || k->src.ncpus)
			return err;
		struct kp_error *why = kp_error_create(KP_ERR_NOT_FOUND,
			"%s: no VMCOREINFO note, %s, and no CPU registers in the dump: cannot locate the kernel without VMCOREINFO",
			path, kp_error_message(err));
		kp_error_destroy(err);
		return why;
	}
	if (kp_ok(kp_vmcoreinfo_parse(text, len, &vi))) {
		k->arch = kp_arch_by_vmcoreinfo(vi);
		kp_vmcoreinfo_destroy(vi);
	}
	free(text);
	return NULL;
}

// Every CPU note must be one the architecture can read: a truncated note
// is a damaged dump, said at open rather than when a command needs it.
static struct kp_error *check_cpu_notes(struct kp_kernel *k, const char *path)
{
	for (size_t i = 0; i < k->src.ncpus; i++) {
		const struct kp_cpu_notes *n = &k->src.cpus[i];
		struct kp_regs regs;
		if (n->prstatus && !k->arch->prstatus_regs(n->prstatus, n->prstatus_len, &regs))
			return kp_error_create(KP_ERR_FORMAT,
					       "%s: CORE NT_PRSTATUS note at offset 0x%" PRIx64
					       " has %zu bytes, too short for %s",
					       path, n->prstatus_at, n->prstatus_len, k->arch->name);
	}
	return NULL;
}

// ---------------------------------------------------------------- symbols

static bool late_symbols(struct kp_kernel *k);

// Called after each source of symbols: the next one is another source.
static void add_source_name(struct kp_kernel *k, const char *name)
{
	kp_symtab_next_source(k->symtab);
	size_t len = strlen(k->symbol_sources);
	snprintf(k->symbol_sources + len, sizeof(k->symbol_sources) - len, "%s%s",
		 len ? ", " : "", name);
}

static struct kp_error *load_text_symbols(struct kp_kernel *k, const char *path,
					  uint64_t bias, const char *name)
{
	char *text;
	size_t len;
	struct kp_error *err = kp_read_whole_file(path, &text, &len);
	if (err)
		return err;
	err = kp_kallsyms_parse_text(text, len, bias, path, k->symtab);
	free(text);
	if (!err) {
		add_source_name(k, name);
		k->text_symbols = true;
	}
	return err;
}

// Whether VMCOREINFO entry key is SYMBOL(name): name into buf.
static bool vmcoreinfo_symbol_name(const char *key, char *buf, size_t size)
{
	size_t klen = strlen(key);
	if (klen < 9 || klen - 8 >= size || strncmp(key, "SYMBOL(", 7) || key[klen - 1] != ')')
		return false;
	memcpy(buf, key + 7, klen - 8);
	buf[klen - 8] = '\0';
	return true;
}

// VMCOREINFO's SYMBOL()s as symbols of type '?', for the names no other
// source has: the others already have their real type. mem_section is left
// out: VMCOREINFO_SYMBOL_ARRAY() writes the address of the array it points
// to (SPARSEMEM_EXTREME allocates it at boot, 4.15+), not its own.
static struct kp_error *add_vmcoreinfo_symbols(struct kp_kernel *k)
{
	const char *key, *value;
	size_t n = 0;
	while (kp_vmcoreinfo_entry(k->vmcoreinfo, n, &key, &value))
		n++;
	bool *add = calloc(n ? n : 1, sizeof(*add));
	if (!add)
		return &kp_enomem;
	// Decide first, add after: a lookup between additions would sort the
	// table again each time.
	char name[128];
	struct kp_symbol sym;
	for (size_t i = 0; i < n && kp_vmcoreinfo_entry(k->vmcoreinfo, i, &key, &value); i++)
		add[i] = vmcoreinfo_symbol_name(key, name, sizeof(name)) &&
			 strcmp(name, "mem_section") && !kp_symtab_find(k->symtab, name, &sym);
	struct kp_error *err = NULL;
	for (size_t i = 0; i < n && !err && kp_vmcoreinfo_entry(k->vmcoreinfo, i, &key, &value); i++) {
		char *end;
		uint64_t addr = strtoull(value, &end, 16);
		if (!add[i] || *end || end == value)
			continue;
		vmcoreinfo_symbol_name(key, name, sizeof(name));
		err = kp_symtab_add(k->symtab, name, strlen(name), addr, '?', NULL);
	}
	free(add);
	return err;
}

// KASLR offset for an unrelocated System.map: VMCOREINFO's KERNELOFFSET, else
// the distance between _text in the symbols already loaded and its link address.
static uint64_t system_map_bias(struct kp_kernel *k)
{
	if (k->has_kaslr_offset)
		return k->kaslr_offset;
	struct kp_symbol sym;
	if (!kp_symtab_find(k->symtab, "_text", &sym))
		return 0;
	return sym.address - k->arch->link_text;
}

// Whether the symbols are all but functions: a kallsyms without
// CONFIG_KALLSYMS_ALL has a few data symbols at most (VMCOREINFO adds its
// '?' ones, which say nothing).
static bool lacks_data_symbols(struct kp_kernel *k)
{
	size_t count[256];
	kp_symtab_count_types(k->symtab, count);
	size_t text = count['t'] + count['T'] + count['w'] + count['W'];
	size_t data = count['d'] + count['D'] + count['b'] + count['B'] + count['r'] +
		      count['R'] + count['v'] + count['V'];
	return text > 1000 && data * 200 < text;
}

static struct kp_error *load_symbols(struct kp_kernel *k, const struct kp_open_options *opts)
{
	struct kp_error *err;
	bool have_full = false;

	if (opts->kallsyms) {
		err = load_text_symbols(k, opts->kallsyms, 0, opts->kallsyms);
		if (err)
			return err;
		have_full = true;
	} else if (k->src.live) {
		// /proc/kallsyms also lists module symbols; the in-memory tables
		// below are the fallback when kptr_restrict hides its addresses.
		if (kp_ok(load_text_symbols(k, KALLSYMS_PATH, 0, KALLSYMS_PATH)))
			have_full = true;
	}

	struct kp_kallsyms_tables t;
	if (!have_full && kp_kallsyms_tables_from_vmcoreinfo(k->vmcoreinfo, &t)) {
		err = kp_kallsyms_attach(k->mem, &t, k->symtab);
		if (err)
			return kp_error_prefix(err, "kallsyms tables in memory");
		add_source_name(k, "kallsyms (memory)");
		have_full = true;
	}
	if (!have_full) {
		// VMCOREINFO names the tables since 6.0 ("kallsyms: add
		// kallsyms_... to vmcoreinfo"): before (5.10), find them in the
		// image, from _stext on when it is known.
		uint64_t start, end, stext;
		k->arch->image_range(k->arch_ctx, &start, &end);
		if (kp_vmcoreinfo_symbol(k->vmcoreinfo, "_stext", &stext) && stext > start &&
		    stext < end)
			start = stext;
		err = kp_locate_kallsyms(k->mem, start, end, start, &t);
		if (!err) {
			err = kp_kallsyms_attach(k->mem, &t, k->symtab);
			if (err)
				return kp_error_prefix(err, "kallsyms tables found in the image at 0x%" PRIx64,
						       t.token_table);
			add_source_name(k, "kallsyms (memory, found in the image)");
			have_full = true;
		} else if (err->code == KP_ERR_NOT_FOUND) {
			kp_error_destroy(err);
		} else {
			return err;
		}
	}

	if (opts->system_map) {
		char *text;
		size_t len;
		err = kp_read_whole_file(opts->system_map, &text, &len);
		if (err)
			return err;
		err = kp_kallsyms_parse_text(text, len, system_map_bias(k), opts->system_map,
					     k->symtab);
		free(text);
		if (err)
			return err;
		add_source_name(k, "System.map");
	}

	if (k->vmcoreinfo) {
		if ((err = add_vmcoreinfo_symbols(k)))
			return err;
		add_source_name(k, "vmcoreinfo");
	}
	if ((err = kp_symtab_finalize(k->symtab)))
		return err;
	k->no_data_symbols = lacks_data_symbols(k);
	return NULL;
}

// A kallsyms of functions only: the variables kpeek's commands start from,
// found by their shape (core/derive.c) with the kernel's BTF.
static struct kp_error *derive_symbols(struct kp_kernel *k)
{
	struct kp_types *types;
	if (!kp_ok(kp_kernel_types(k, &types)))
		return NULL;	// no BTF: the commands say so when they need it
	uint64_t start, end;
	unsigned added;
	k->arch->image_range(k->arch_ctx, &start, &end);
	struct kp_error *err = kp_derive_symbols(k->mem, types, start, end, k->symtab, &added);
	if (err)
		return err;
	if (added)
		add_source_name(k, "init_task found by its shape");
	return kp_symtab_finalize(k->symtab);
}

static void read_banner(struct kp_kernel *k)
{
	struct kp_symbol sym;
	char buf[512];
	if (!kp_symtab_find(k->symtab, "linux_banner", &sym) ||
	    !kp_memory_read_cstr(k->mem, KP_VIRT, sym.address, buf, sizeof(buf)))
		return;
	buf[strcspn(buf, "\n")] = '\0';
	k->banner = strdup(buf);
	// "Linux version 6.1.0-57-amd64 (debian-kernel@...) ..."
	if (!k->release && !strncmp(buf, "Linux version ", 14)) {
		size_t n = strcspn(buf + 14, " ");
		k->release = strndup(buf + 14, n);
	}
}

// ---------------------------------------------------------------- open

static struct kp_error *kernel_open(struct kp_kernel *k, const struct kp_open_options *opts)
{
	const char *path = opts->core ? opts->core : KCORE_PATH;
	struct kp_error *err = kp_memory_create(&k->mem);
	if (err)
		return err;
	if ((err = kp_symtab_create(&k->symtab)))
		return err;
	if ((err = open_source(k, path, opts)) || (err = kp_memory_settle(k->mem)))
		return err;
	if (k->src.vmcoreinfo) {
		snprintf(k->vmcoreinfo_origin, sizeof(k->vmcoreinfo_origin), "%s",
			 k->src.live ? "kcore note" : "dump note");
		if ((err = kp_vmcoreinfo_parse(k->src.vmcoreinfo, k->src.vmcoreinfo_size,
					       &k->vmcoreinfo)))
			return kp_error_prefix(err, "%s: VMCOREINFO", path);
	}
	bool locate = !k->vmcoreinfo && !kp_memory_has_segments(k->mem, KP_VIRT);
	if ((err = choose_arch(k, path, opts))) {
		if (!locate || kp_error_code(err) != KP_ERR_NOT_FOUND)
			return err;
		struct kp_error *why = arch_from_memory(k, path);
		if (why) {
			kp_error_destroy(err);
			return why;
		}
		if (!k->arch)
			return err;
		kp_error_destroy(err);
	}
	if ((err = check_cpu_notes(k, path)))
		return err;
	if (locate) {
		struct kp_locate_result loc;
		err = kp_locate_kernel(k->mem, &k->src, k->arch, opts, &loc);
		if (err)
			return kp_error_prefix(err, "%s", path);
		k->src.vmcoreinfo = loc.vmcoreinfo;
		k->src.vmcoreinfo_size = loc.vmcoreinfo_size;
		snprintf(k->vmcoreinfo_origin, sizeof(k->vmcoreinfo_origin), "%s", loc.origin);
		snprintf(k->kaslr_check, sizeof(k->kaslr_check), "%s", loc.verified);
		if ((err = kp_vmcoreinfo_parse(k->src.vmcoreinfo, k->src.vmcoreinfo_size,
					       &k->vmcoreinfo)))
			return kp_error_prefix(err, "%s: VMCOREINFO", path);
	}
	if (k->vmcoreinfo) {
		if (kp_vmcoreinfo_kerneloffset(k->vmcoreinfo, &k->kaslr_offset))
			k->has_kaslr_offset = true;
		const char *rel = kp_vmcoreinfo_get(k->vmcoreinfo, "OSRELEASE");
		if (rel)
			k->release = strdup(rel);
	}
	struct kp_arch_input in = { .mem = k->mem, .src = &k->src, .vmcoreinfo = k->vmcoreinfo };
	if ((err = k->arch->create(&in, &k->arch_ctx)))
		return err;
	if ((err = load_symbols(k, opts)))
		return err;
	k->arch->symbols_loaded(k->arch_ctx, k->symtab);
	read_banner(k);
	if (opts->btf && !(k->btf_path = strdup(opts->btf)))
		return &kp_enomem;
	if (k->no_data_symbols)
		return derive_symbols(k);
	return NULL;
}

struct kp_error *kp_kernel_open_core(const struct kp_open_options *user_opts,
				     struct kp_kernel **ret)
{
	struct kp_open_options opts;
	struct kp_error *err = kp_opts_copy(user_opts, &opts, sizeof(opts), "kp_open_options");
	if (err)
		return err;
	struct kp_kernel *k = calloc(1, sizeof(*k));
	if (!k)
		return &kp_enomem;
	err = kernel_open(k, &opts);
	if (err) {
		kp_kernel_destroy(k);
		return err;
	}
	*ret = k;
	return NULL;
}

struct kp_error *kp_kernel_from_parts(struct kp_memory *mem, struct kp_symtab *st,
				      const struct kp_arch *arch, const char *btf_path,
				      struct kp_kernel **ret)
{
	struct kp_kernel *k = calloc(1, sizeof(*k));
	if (!k) {
		kp_memory_destroy(mem);
		kp_symtab_destroy(st);
		return &kp_enomem;
	}
	k->mem = mem;
	k->symtab = st;
	k->arch = arch;
	k->src.kind = "synthetic";
	struct kp_arch_input in = { .mem = mem, .src = &k->src };
	struct kp_error *err = arch->create(&in, &k->arch_ctx);
	if (!err && btf_path && !(k->btf_path = strdup(btf_path)))
		err = &kp_enomem;
	if (err) {
		kp_kernel_destroy(k);
		return err;
	}
	arch->symbols_loaded(k->arch_ctx, st);
	*ret = k;
	return NULL;
}

void kp_kernel_set_live(struct kp_kernel *k, bool live)
{
	k->src.live = live;
}

void kp_kernel_destroy(struct kp_kernel *k)
{
	if (!k)
		return;
	for (size_t i = 0; i < KP_KERNEL_NSLOTS; i++)
		if (k->slots[i].destroy)
			k->slots[i].destroy(k->slots[i].obj);
	kp_types_destroy(k->types);
	kp_error_destroy(k->types_error);
	free(k->btf_path);
	kp_symtab_destroy(k->symtab);
	if (k->arch && k->arch_ctx)
		k->arch->destroy(k->arch_ctx);
	kp_vmcoreinfo_destroy(k->vmcoreinfo);
	kp_memory_destroy(k->mem);
	kp_source_deinit(&k->src);
	kp_file_destroy(k->file);
	free(k->release);
	free(k->banner);
	free(k);
}

// ---------------------------------------------------------------- accessors

void *kp_kernel_slot(struct kp_kernel *k, enum kp_kernel_slot_id id)
{
	return k->slots[id].obj;
}

void kp_kernel_set_slot(struct kp_kernel *k, enum kp_kernel_slot_id id, void *obj,
			void (*destroy)(void *obj))
{
	if (k->slots[id].destroy)
		k->slots[id].destroy(k->slots[id].obj);
	k->slots[id].obj = obj;
	k->slots[id].destroy = destroy;
}

struct kp_memory *kp_kernel_memory(struct kp_kernel *k)
{
	return k->mem;
}

const struct kp_source *kp_kernel_source(struct kp_kernel *k)
{
	return &k->src;
}

const struct kp_arch *kp_kernel_arch(struct kp_kernel *k)
{
	return k->arch;
}

struct kp_arch_ctx *kp_kernel_arch_ctx(struct kp_kernel *k)
{
	return k->arch_ctx;
}

struct kp_symtab *kp_kernel_symtab(struct kp_kernel *k)
{
	return k->symtab;
}

const struct kp_vmcoreinfo *kp_kernel_vmcoreinfo(struct kp_kernel *k)
{
	return k->vmcoreinfo;
}

bool kp_kernel_kaslr_offset(struct kp_kernel *k, uint64_t *ret)
{
	if (k->has_kaslr_offset)
		*ret = k->kaslr_offset;
	return k->has_kaslr_offset;
}

uint64_t kp_kernel_page_size(struct kp_kernel *k)
{
	return k->arch->page_size(k->arch_ctx);
}

bool kp_kernel_is_kernel_address(struct kp_kernel *k, uint64_t address)
{
	return k->arch->kernel_address(k->arch_ctx, address);
}

static bool more_types(void *ctx, struct kp_types *types)
{
	struct kp_kernel *k = ctx;
	return k->late_types(k, types);
}

void kp_kernel_set_late_types(struct kp_kernel *k, kp_kernel_late_types_fn *fn)
{
	k->late_types = fn;
	if (k->types)
		kp_types_set_more(k->types, more_types, k);
}

struct kp_error *kp_kernel_types(struct kp_kernel *k, struct kp_types **ret)
{
	if (!k->types && !k->types_error) {
		uint64_t start, end;
		k->arch->image_range(k->arch_ctx, &start, &end);
		struct kp_error *err = kp_btf_source_load(k->mem, k->symtab, k->src.live,
							  k->btf_path, start, end, &k->types);
		if (err == &kp_enomem)
			return err;	// not remembered: may succeed later
		k->types_error = err;
		if (!err && k->late_types)
			kp_types_set_more(k->types, more_types, k);
	}
	if (k->types_error)
		return kp_error_copy(k->types_error);
	*ret = k->types;
	return NULL;
}

size_t kp_kernel_read_partial(struct kp_kernel *k, uint64_t address, void *buf, size_t size,
			      bool stop_at_nul)
{
	return kp_memory_read_partial(k->mem, KP_VIRT, address, buf, size, stop_at_nul);
}

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

// ---------------------------------------------------------------- public API

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
	late_symbols(k);	// the count and sources include them
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
	};
	info.online_cpus = online_cpus(k, info.possible_cpus);
	kp_out_copy(ret, &info, sizeof(info));
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

size_t kp_kernel_ranges(struct kp_kernel *k, enum kp_space space, const struct kp_range **ret)
{
	return kp_memory_ranges(k->mem, space, ret);
}

struct kp_error *kp_kernel_load_btf(struct kp_kernel *kernel)
{
	struct kp_types *types = NULL;
	return kp_kernel_types(kernel, &types);
}

struct kp_error *kp_read(struct kp_kernel *k, enum kp_space space, uint64_t address,
			 void *buf, size_t len)
{
	return kp_memory_read(k->mem, space, address, buf, len);
}

#define DEFINE_READ(bits)                                                          \
	struct kp_error *kp_read_u##bits(struct kp_kernel *k, uint64_t address,    \
					 uint##bits##_t *ret)                      \
	{                                                                          \
		uint8_t b[bits / 8];                                               \
		struct kp_error *err = kp_memory_read(k->mem, KP_VIRT, address,    \
						      b, sizeof(b));               \
		if (!err)                                                          \
			*ret = (uint##bits##_t)kp_le(b, sizeof(b));                \
		return err;                                                        \
	}
DEFINE_READ(8)
DEFINE_READ(16)
DEFINE_READ(32)
DEFINE_READ(64)

struct kp_error *kp_read_cstr(struct kp_kernel *k, uint64_t address, char *buf, size_t size)
{
	if (!size)
		return kp_error_create(KP_ERR_INVALID, "kp_read_cstr: empty buffer");
	size_t got = kp_memory_read_partial(k->mem, KP_VIRT, address, buf, size - 1, true);
	if (got < size - 1 && (!got || buf[got - 1] != '\0')) {
		// Read again where it stopped, for the error that says why.
		char c;
		struct kp_error *err = kp_memory_read(k->mem, KP_VIRT, address + got, &c, 1);
		if (err)
			return err;
	}
	buf[got < size ? got : size - 1] = '\0';
	return NULL;
}

struct kp_error *kp_vtop(struct kp_kernel *k, uint64_t vaddr, struct kp_vtop *ret)
{
	KP_INIT(kp_vtop, v);
	struct kp_error *err = k->arch->vtop(k->arch_ctx, vaddr, &v);
	if (err)
		return err;
	if (!kp_out_copy(ret, &v, sizeof(v)))
		return kp_error_create(KP_ERR_INVALID, "struct kp_vtop: sz not set (use KP_INIT)");
	return NULL;
}

void kp_kernel_set_late_symbols(struct kp_kernel *k, kp_kernel_late_symbols_fn *fn,
				const char *name)
{
	if (k->text_symbols)
		return;
	k->late_symbols = fn;
	k->late_name = name;
}

// Loads the late symbols once. A failure leaves the other symbols as they
// were: lookups then miss what only the late source has, and the list of
// symbol sources (info) says so.
static bool late_symbols(struct kp_kernel *k)
{
	if (!k->late_symbols || k->late_done)
		return false;
	k->late_done = true;
	kp_symtab_next_source(k->symtab);
	size_t added = 0;
	struct kp_error *err = k->late_symbols(k, k->symtab, &added);
	if (err) {
		// A kernel whose types describe no module symbols has none to
		// list; a list that cannot be found or read is said.
		enum kp_error_code code = err->code;
		kp_error_destroy(err);
		if (added)
			add_source_name(k, "module symbols (incomplete)");
		else if (code != KP_ERR_UNSUPPORTED)
			add_source_name(k, "(module symbols unreadable)");
		return added > 0;
	}
	add_source_name(k, k->late_name);
	return added > 0;
}

struct kp_error *kp_symbol_by_name(struct kp_kernel *k, const char *name, struct kp_symbol *ret)
{
	if (kp_symbol_find(k, name, ret))
		return NULL;
	struct kp_error *err = kp_symtab_by_name(k->symtab, name, ret);
	if (err && err->code == KP_ERR_NOT_FOUND && k->no_data_symbols) {
		struct kp_error *why = err;
		err = kp_error_create(KP_ERR_NOT_FOUND,
				      "%s: this kernel's kallsyms has functions only (built without CONFIG_KALLSYMS_ALL): give its System.map with -m (from its -dbg package) for variables",
				      why->message);
		kp_error_destroy(why);
	}
	return err;
}

bool kp_symbol_find(struct kp_kernel *k, const char *name, struct kp_symbol *ret)
{
	// The core kernel's symbol wins over a module's of the same name:
	// modules are read only for names the kernel does not have.
	if (kp_symtab_find(k->symtab, name, ret))
		return true;
	return late_symbols(k) && kp_symtab_find(k->symtab, name, ret);
}

bool kp_kernel_symbol_at(struct kp_kernel *k, uint64_t address, struct kp_symbol *ret)
{
	if (kp_ok(kp_symtab_by_address(k->symtab, address, ret)))
		return true;
	return late_symbols(k) && kp_ok(kp_symtab_by_address(k->symtab, address, ret));
}

struct kp_error *kp_symbol_by_address(struct kp_kernel *k, uint64_t address,
				      struct kp_symbol *ret)
{
	if (kp_kernel_symbol_at(k, address, ret))
		return NULL;
	struct kp_error *err = kp_symtab_by_address(k->symtab, address, ret);
	if (err == &kp_not_found)
		return kp_error_create(KP_ERR_NOT_FOUND, "no symbol at 0x%" PRIx64, address);
	return err;
}

bool kp_symbolize(struct kp_kernel *k, uint64_t address, char *buf, size_t size)
{
	struct kp_symbol sym;
	if (!kp_kernel_symbol_at(k, address, &sym))
		return false;
	int n;
	if (sym.size)
		n = snprintf(buf, size, "%s+0x%" PRIx64 "/0x%" PRIx64, sym.name,
			     address - sym.address, sym.size);
	else
		n = snprintf(buf, size, "%s+0x%" PRIx64, sym.name, address - sym.address);
	if (sym.module && n >= 0 && (size_t)n < size)
		snprintf(buf + n, size - n, " [%s]", sym.module);
	return true;
}

struct kp_symbol_iter {
	struct kp_kernel *kernel;
	size_t next;
	struct kp_symbol sym;
};

struct kp_error *kp_symbol_iter_create(struct kp_kernel *k, struct kp_symbol_iter **ret)
{
	late_symbols(k);
	struct kp_error *err = kp_symtab_finalize(k->symtab);
	if (err)
		return err;
	struct kp_symbol_iter *it = calloc(1, sizeof(*it));
	if (!it)
		return &kp_enomem;
	it->kernel = k;
	*ret = it;
	return NULL;
}

struct kp_error *kp_symbol_iter_next(struct kp_symbol_iter *it, const struct kp_symbol **ret)
{
	if (!kp_symtab_at(it->kernel->symtab, it->next, &it->sym)) {
		*ret = NULL;
		return NULL;
	}
	it->next++;
	*ret = &it->sym;
	return NULL;
}

void kp_symbol_iter_destroy(struct kp_symbol_iter *it)
{
	free(it);
}
