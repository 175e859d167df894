// The kernel handle: probes the memory source, then derives what the rest of
// kpeek needs from it (VMCOREINFO facts, page tables, symbols).
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/btf.h>

#include "symbols/kallsyms.h"
#include "core/kernel.h"
#include "core/locate.h"
#include "arch/x86_64/pgtable.h"

#define KCORE_PATH "/proc/kcore"
#define KALLSYMS_PATH "/proc/kallsyms"

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

// x86-64: the kernel image is mapped at __START_KERNEL_map + (physical - phys_base).
static bool kernel_image_pa(struct kp_kernel *k, uint64_t va, uint64_t *ret)
{
	if (!k->has_phys_base || va < KP_START_KERNEL_MAP ||
	    va - KP_START_KERNEL_MAP >= KP_KERNEL_IMAGE_SIZE)
		return false;
	*ret = va - KP_START_KERNEL_MAP + k->phys_base;
	return true;
}

static void read_vmcoreinfo_facts(struct kp_kernel *k)
{
	struct kp_vmcoreinfo *vi = k->vmcoreinfo;
	int64_t num;
	uint64_t addr;

	if (kp_vmcoreinfo_kerneloffset(vi, &k->kaslr_offset))
		k->has_kaslr_offset = true;
	if (kp_vmcoreinfo_number(vi, "phys_base", &num)) {
		k->phys_base = (uint64_t)num;
		k->has_phys_base = true;
	}
	if (kp_vmcoreinfo_number(vi, "pgtable_l5_enabled", &num))
		k->paging_levels = num ? 5 : 4;
	const char *rel = kp_vmcoreinfo_get(vi, "OSRELEASE");
	if (rel && !k->release)
		k->release = strdup(rel);
	if ((kp_vmcoreinfo_symbol(vi, "init_top_pgt", &addr) ||
	     kp_vmcoreinfo_symbol(vi, "swapper_pg_dir", &addr)) &&
	    kernel_image_pa(k, addr, &k->pgd_phys))
		k->has_pgd = true;
}

// CR4.LA57 (bit 12) of any CPU in the dump's register notes.
static void levels_from_cpus(struct kp_kernel *k)
{
	for (size_t i = 0; i < k->src.ncpus; i++) {
		if (k->src.cpus[i].has_control && (k->src.cpus[i].cr0 & 1)) {
			k->paging_levels = (k->src.cpus[i].cr4 & (1 << 12)) ? 5 : 4;
			return;
		}
	}
}

static void add_source_name(struct kp_kernel *k, const char *name)
{
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
	if (!err)
		add_source_name(k, name);
	return err;
}

static bool vmcoreinfo_tables(struct kp_kernel *k, struct kp_kallsyms_tables *t)
{
	struct kp_vmcoreinfo *vi = k->vmcoreinfo;
	memset(t, 0, sizeof(*t));
	if (!vi || !kp_vmcoreinfo_symbol(vi, "kallsyms_names", &t->names) ||
	    !kp_vmcoreinfo_symbol(vi, "kallsyms_num_syms", &t->num_syms) ||
	    !kp_vmcoreinfo_symbol(vi, "kallsyms_token_table", &t->token_table) ||
	    !kp_vmcoreinfo_symbol(vi, "kallsyms_token_index", &t->token_index))
		return false;
	if (kp_vmcoreinfo_symbol(vi, "kallsyms_offsets", &t->offsets) &&
	    kp_vmcoreinfo_symbol(vi, "kallsyms_relative_base", &t->relative_base))
		return true;
	return kp_vmcoreinfo_symbol(vi, "kallsyms_addresses", &t->addresses);
}

static void add_vmcoreinfo_symbols(struct kp_kernel *k)
{
	const char *key, *value;
	for (size_t i = 0; kp_vmcoreinfo_entry(k->vmcoreinfo, i, &key, &value); i++) {
		size_t klen = strlen(key);
		if (klen < 9 || strncmp(key, "SYMBOL(", 7) || key[klen - 1] != ')')
			continue;
		char *end;
		uint64_t addr = strtoull(value, &end, 16);
		if (*end || end == value)
			continue;
		struct kp_error *err = kp_symtab_add(k->symtab, key + 7, klen - 8, addr, '?', NULL);
		if (err)
			kp_error_destroy(err);
	}
}

// KASLR offset for an unrelocated System.map: VMCOREINFO's KERNELOFFSET, else
// the distance between _text in the symbols already loaded and its link address.
static uint64_t system_map_bias(struct kp_kernel *k)
{
	if (k->has_kaslr_offset)
		return k->kaslr_offset;
	struct kp_symbol sym;
	struct kp_error *err = kp_symtab_by_name(k->symtab, "_text", &sym);
	if (err) {
		kp_error_destroy(err);
		return 0;
	}
	return sym.address - KP_DEFAULT_KERNEL_START;
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
		err = load_text_symbols(k, KALLSYMS_PATH, 0, KALLSYMS_PATH);
		if (!err)
			have_full = true;
		else
			kp_error_destroy(err);
	}

	struct kp_kallsyms_tables t;
	if (!have_full && vmcoreinfo_tables(k, &t)) {
		err = kp_kallsyms_read_memory(k->mem, &t, k->symtab);
		if (err)
			return kp_error_prefix(err, "kallsyms tables in memory");
		add_source_name(k, "kallsyms (memory)");
		have_full = true;
	}

	if (opts->system_map) {
		char *text;
		size_t len;
		err = kp_read_whole_file(opts->system_map, &text, &len);
		if (err)
			return err;
		err = kp_kallsyms_parse_text(text, len, system_map_bias(k),
					     opts->system_map, k->symtab);
		free(text);
		if (err)
			return err;
		add_source_name(k, "System.map");
	}

	if (k->vmcoreinfo) {
		add_vmcoreinfo_symbols(k);
		add_source_name(k, "vmcoreinfo");
	}
	return kp_symtab_finalize(k->symtab);
}

static bool read_symbol_u64(struct kp_kernel *k, const char *name, uint64_t *ret)
{
	struct kp_symbol sym;
	struct kp_error *err = kp_symtab_by_name(k->symtab, name, &sym);
	if (!err)
		err = kp_memory_read(k->mem, KP_VIRT, sym.address, ret, sizeof(*ret));
	if (err) {
		kp_error_destroy(err);
		return false;
	}
	return true;
}

static void read_banner(struct kp_kernel *k)
{
	struct kp_symbol sym;
	char buf[512];
	struct kp_error *err = kp_symtab_by_name(k->symtab, "linux_banner", &sym);
	if (!err)
		err = kp_read_cstr(k, sym.address, buf, sizeof(buf));
	if (err) {
		kp_error_destroy(err);
		return;
	}
	buf[strcspn(buf, "\n")] = '\0';
	k->banner = strdup(buf);
	// "Linux version 6.1.0-57-amd64 (debian-kernel@...) ..."
	if (!k->release && !strncmp(buf, "Linux version ", 14)) {
		size_t n = strcspn(buf + 14, " ");
		k->release = strndup(buf + 14, n);
	}
}

static struct kp_error *setup_page_tables(struct kp_kernel *k)
{
	if (!k->has_pgd || !kp_memory_has_segments(k->mem, KP_PHYS))
		return NULL;
	if (!k->paging_levels)
		k->paging_levels = 4;
	struct kp_error *err = kp_pgtable_create(k->mem, k->pgd_phys, k->paging_levels,
						 &k->pgtable);
	if (err)
		return err;
	kp_memory_set_translator(k->mem, kp_pgtable_translate, k->pgtable);
	return NULL;
}

static struct kp_error *kernel_open(struct kp_kernel *k, const struct kp_open_options *opts)
{
	const char *path = opts->core ? opts->core : KCORE_PATH;
	struct kp_error *err = kp_memory_create(&k->mem);
	if (err)
		return err;
	err = kp_symtab_create(&k->symtab);
	if (err)
		return err;
	err = open_source(k, path, opts);
	if (err)
		return err;
	if (k->src.has_phys_base) {
		k->phys_base = k->src.phys_base;
		k->has_phys_base = true;
	}
	if (k->src.vmcoreinfo) {
		snprintf(k->vmcoreinfo_origin, sizeof(k->vmcoreinfo_origin), "%s",
			 k->src.live ? "kcore note" : "dump note");
	} else if (!kp_memory_has_segments(k->mem, KP_VIRT)) {
		struct kp_locate_result loc;
		err = kp_locate_kernel(k->mem, &k->src, opts, &loc);
		if (err)
			return kp_error_prefix(err, "%s", path);
		k->src.vmcoreinfo = loc.vmcoreinfo;
		k->src.vmcoreinfo_size = loc.vmcoreinfo_size;
		snprintf(k->vmcoreinfo_origin, sizeof(k->vmcoreinfo_origin), "%s", loc.origin);
		snprintf(k->kaslr_check, sizeof(k->kaslr_check), "%s", loc.verified);
	}
	if (k->src.vmcoreinfo) {
		err = kp_vmcoreinfo_parse(k->src.vmcoreinfo, k->src.vmcoreinfo_size,
					  &k->vmcoreinfo);
		if (err)
			return kp_error_prefix(err, "%s: VMCOREINFO", path);
		read_vmcoreinfo_facts(k);
	}
	if (!k->paging_levels)
		levels_from_cpus(k);
	err = setup_page_tables(k);
	if (err)
		return err;
	err = load_symbols(k, opts);
	if (err)
		return err;
	if (read_symbol_u64(k, "page_offset_base", &k->page_offset_base))
		k->has_page_offset_base = true;
	read_banner(k);
	if (opts->btf) {
		k->btf_path = strdup(opts->btf);
		if (!k->btf_path)
			return &kp_enomem;
	}
	return NULL;
}

struct kp_error *kp_kernel_open(const struct kp_open_options *opts, struct kp_kernel **ret)
{
	static const struct kp_open_options defaults;
	struct kp_kernel *k = calloc(1, sizeof(*k));
	if (!k)
		return &kp_enomem;
	struct kp_error *err = kernel_open(k, opts ? opts : &defaults);
	if (err) {
		kp_kernel_destroy(k);
		return err;
	}
	*ret = k;
	return NULL;
}

void kp_kernel_destroy(struct kp_kernel *k)
{
	if (!k)
		return;
	kp_btf_types_destroy(k->types);
	btf__free(k->btf);
	kp_error_destroy(k->btf_error);
	free(k->btf_source);
	free(k->btf_path);
	kp_symtab_destroy(k->symtab);
	kp_pgtable_destroy(k->pgtable);
	kp_vmcoreinfo_destroy(k->vmcoreinfo);
	kp_memory_destroy(k->mem);
	kp_source_deinit(&k->src);
	kp_file_destroy(k->file);
	free(k->release);
	free(k->banner);
	free(k);
}

void kp_kernel_get_info(struct kp_kernel *k, struct kp_kernel_info *ret)
{
	memset(ret, 0, sizeof(*ret));
	ret->path = k->file->path;
	ret->source_kind = k->src.kind;
	ret->live = k->src.live;
	ret->release = k->release;
	ret->banner = k->banner;
	ret->has_vmcoreinfo = k->vmcoreinfo != NULL;
	ret->vmcoreinfo_source = k->vmcoreinfo ? k->vmcoreinfo_origin : NULL;
	ret->has_kaslr_offset = k->has_kaslr_offset;
	ret->kaslr_check = k->kaslr_check[0] ? k->kaslr_check : NULL;
	ret->kaslr_offset = k->kaslr_offset;
	ret->has_phys_base = k->has_phys_base;
	ret->phys_base = k->phys_base;
	ret->paging_levels = k->paging_levels;
	ret->has_page_offset_base = k->has_page_offset_base;
	ret->page_offset_base = k->page_offset_base;
	ret->has_pgd = k->has_pgd;
	ret->pgd_phys = k->pgd_phys;
	ret->ncpus = (int)k->src.ncpus;
	ret->symbol_sources = k->symbol_sources;
	ret->num_symbols = kp_symtab_count(k->symtab);
	ret->btf_source = k->btf_source;
	ret->btf_types = k->btf ? btf__type_cnt(k->btf) - 1 : 0;
}

size_t kp_kernel_ranges(struct kp_kernel *k, enum kp_space space, const struct kp_range **ret)
{
	return kp_memory_ranges(k->mem, space, ret);
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
		uint##bits##_t v;                                                  \
		struct kp_error *err = kp_memory_read(k->mem, KP_VIRT, address,    \
						      &v, sizeof(v));              \
		if (!err)                                                          \
			*ret = v;                                                  \
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
	size_t have = 0;
	// Read up to page boundaries so a short string at the end of a mapping
	// does not fault on bytes past its NUL.
	while (have < size - 1) {
		uint64_t addr = address + have;
		size_t chunk = 4096 - (addr & 4095);
		if (chunk > size - 1 - have)
			chunk = size - 1 - have;
		struct kp_error *err = kp_memory_read(k->mem, KP_VIRT, addr, buf + have, chunk);
		if (err)
			return err;
		void *nul = memchr(buf + have, '\0', chunk);
		if (nul)
			return NULL;
		have += chunk;
	}
	buf[size - 1] = '\0';
	return NULL;
}

struct kp_error *kp_vtop(struct kp_kernel *k, uint64_t vaddr, struct kp_vtop *ret)
{
	if (k->pgtable)
		return kp_pgtable_walk(k->pgtable, vaddr, ret);
	return kp_error_create(KP_ERR_UNSUPPORTED,
			       "cannot translate 0x%" PRIx64 ": no page tables (the source has no physical memory or no VMCOREINFO with swapper_pg_dir)",
			       vaddr);
}

struct kp_error *kp_symbol_by_name(struct kp_kernel *k, const char *name, struct kp_symbol *ret)
{
	return kp_symtab_by_name(k->symtab, name, ret);
}

struct kp_error *kp_symbol_by_address(struct kp_kernel *k, uint64_t address,
				      struct kp_symbol *ret)
{
	return kp_symtab_by_address(k->symtab, address, ret);
}

bool kp_symbolize(struct kp_kernel *k, uint64_t address, char *buf, size_t size)
{
	struct kp_symbol sym;
	struct kp_error *err = kp_symtab_by_address(k->symtab, address, &sym);
	if (err) {
		kp_error_destroy(err);
		return false;
	}
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
