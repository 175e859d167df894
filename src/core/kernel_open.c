// SPDX-License-Identifier: MIT
// Opening a kernel handle, in the order each step needs the one before:
// the memory source (a dump format of format/formats.c, or a raw image),
// VMCOREINFO (the dump's note, else located in memory: locate.c), the
// architecture (detect_arch.c) and its address translation, the symbols
// (symbols_load.c), the banner; BTF is loaded on first use (kernel.c).
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arch/arch.h"
#include "core/detect_arch.h"
#include "core/kernel_impl.h"
#include "core/locate.h"
#include "format/source.h"
#include "format/vmcoreinfo.h"
#include "io/file.h"
#include "io/memory.h"
#include "symbols/symtab.h"
#include "types/types.h"
#include "util/error.h"
#include "util/opts.h"

#define KCORE_PATH "/proc/kcore"

static struct kp_error *open_source(struct kp_kernel *k, const char *path,
				    const struct kp_open_options *opts)
{
	struct kp_error *err = kp_file_open(path, &k->file);
	if (err)
		return err;
	if (opts->raw)
		return kp_raw_open(k->file, opts->raw_base, k->mem, &k->src);
	if ((err = kp_source_probe_open(k->file, k->mem, &k->src)) || !k->src.split)
		return err;
	// A part of a split dump alone: what it holds is read, the rest says
	// it is in the parts not given.
	snprintf(k->split, sizeof(k->split), "part of a split dump: page frames 0x%" PRIx64 "-0x%" PRIx64
		 " of 0x%" PRIx64 "; the others were not given (-c each part)", k->src.split_start,
		 k->src.split_end, k->src.split_max);
	return kp_source_add_elsewhere(&k->src, k->mem);
}

// The parts of a split dump after the first: opened into k->part_*, their
// frames sorted and checked against the first's.
static struct kp_error *open_parts(struct kp_kernel *k, const struct kp_open_options *opts)
{
	size_t n = opts->ncores - 1;
	if (!(k->part_files = calloc(n, sizeof(*k->part_files))) ||
	    !(k->part_srcs = calloc(n, sizeof(*k->part_srcs))))
		return &kp_enomem;
	for (size_t i = 0; i < n; i++, k->nparts++) {
		struct kp_error *err = kp_file_open(opts->cores[i + 1], &k->part_files[i]);
		if (!err)
			err = kp_source_probe_open(k->part_files[i], k->mem, &k->part_srcs[i]);
		if (err)
			return err;
	}
	return kp_split_check(k);
}

static struct kp_error *open_source_set(struct kp_kernel *k, const struct kp_open_options *opts)
{
	if (opts->raw)
		return kp_error_create(KP_ERR_INVALID, "--raw reads one file, not %zu", opts->ncores);
	struct kp_error *err = kp_file_open(opts->cores[0], &k->file);
	if (!err)
		err = kp_source_probe_open(k->file, k->mem, &k->src);
	if (!err)
		err = open_parts(k, opts);
	// Where no part given holds a frame, its own part's error says so.
	if (!err)
		err = kp_source_add_elsewhere(&k->src, k->mem);
	for (size_t i = 0; !err && i < k->nparts; i++)
		err = kp_source_add_elsewhere(&k->part_srcs[i], k->mem);
	return err;
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
	size_t n;
	const char *rel = kp_banner_release(buf, &n);
	if (!k->release && rel)
		k->release = strndup(rel, n);
}

static struct kp_error *parse_vmcoreinfo(struct kp_kernel *k, const char *path)
{
	struct kp_error *err = kp_vmcoreinfo_parse(k->src.vmcoreinfo, k->src.vmcoreinfo_size,
						   &k->vmcoreinfo);
	return err ? kp_error_prefix(err, "%s: VMCOREINFO", path) : NULL;
}

// A physical-only dump without VMCOREINFO: the VMCOREINFO found in its
// memory or reconstructed (locate.c) stands for the missing note.
static struct kp_error *locate_kernel(struct kp_kernel *k, const char *path,
				      const struct kp_open_options *opts, const uint64_t *only)
{
	struct kp_locate_result loc;
	struct kp_error *err = kp_locate_kernel(k->mem, &k->src, k->arch, opts, only, &loc);
	if (err)
		return kp_error_prefix(err, "%s", path);
	k->src.vmcoreinfo = loc.vmcoreinfo;
	k->src.vmcoreinfo_size = loc.vmcoreinfo_size;
	k->vmcoreinfo_found = loc.found;
	k->vmcoreinfo_pa = loc.pa;
	snprintf(k->vmcoreinfo_origin, sizeof(k->vmcoreinfo_origin), "%.100s%s", loc.origin,
		 k->vmcoreinfo_ignored ? " (the dump's VMCOREINFO note has no OSRELEASE: "
		 "ignored)" : "");
	snprintf(k->kaslr_check, sizeof(k->kaslr_check), "%s", loc.verified);
	return parse_vmcoreinfo(k, path);
}

// only: NULL, or the one physical page a dump without the note may take
// its VMCOREINFO from (no scan).
static struct kp_error *kernel_open(struct kp_kernel *k, const struct kp_open_options *opts,
				    const uint64_t *only)
{
	const char *path = opts->ncores > 1 ? opts->cores[0] : opts->core ? opts->core : KCORE_PATH;
	struct kp_error *err = kp_memory_create(&k->mem);
	if (err)
		return err;
	if ((err = kp_symtab_create(&k->symtab)))
		return err;
	err = opts->ncores > 1 ? open_source_set(k, opts) : open_source(k, path, opts);
	if (err || (err = kp_memory_settle(k->mem)))
		return err;
	if (k->src.vmcoreinfo) {
		snprintf(k->vmcoreinfo_origin, sizeof(k->vmcoreinfo_origin), "%s",
			 k->src.live ? "kcore note" : "dump note");
		if ((err = parse_vmcoreinfo(k, path)))
			return err;
		// Every kernel's VMCOREINFO starts with OSRELEASE: a note without
		// it (empty, or not VMCOREINFO text) is as good as none, and must
		// not stop the search of memory for the real one.
		if (!kp_vmcoreinfo_get(k->vmcoreinfo, "OSRELEASE")) {
			kp_vmcoreinfo_destroy(k->vmcoreinfo);
			k->vmcoreinfo = NULL;
			free(k->src.vmcoreinfo);
			k->src.vmcoreinfo = NULL;
			k->src.vmcoreinfo_size = 0;
			k->vmcoreinfo_ignored = true;
			snprintf(k->vmcoreinfo_origin, sizeof(k->vmcoreinfo_origin),
				 "none (the %s has no OSRELEASE: ignored)",
				 k->src.live ? "kcore note" : "dump's VMCOREINFO note");
		}
	}
	bool locate = !k->vmcoreinfo && !kp_memory_has_segments(k->mem, KP_VIRT);
	if ((err = kp_detect_arch(k->mem, &k->src, k->vmcoreinfo, path, opts->arch, locate,
				  &k->arch)))
		return err;
	if (locate && (err = locate_kernel(k, path, opts, only)))
		return err;
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
	k->force = opts->force;
	if ((err = kp_kernel_load_symbols(k, opts)))
		return err;
	k->arch->symbols_loaded(k->arch_ctx, k->symtab);
	read_banner(k);
	if (opts->btf && !(k->btf_path = strdup(opts->btf)))
		return &kp_enomem;
	if (k->no_data_symbols) {
		if ((err = kp_kernel_derive_symbols(k)))
			return err;
		// Again, with the variables found: x86-64's direct map starts at
		// page_offset_base, which __ksymtab names.
		k->arch->symbols_loaded(k->arch_ctx, k->symtab);
	}
	return NULL;
}

// The physical address of the page the kernel's vmcoreinfo_data points to
// (crash_save_vmcoreinfo_init(), 4.13+), if its symbols say.
static bool own_page(struct kp_kernel *k, uint64_t *ret)
{
	struct kp_symbol data;
	uint64_t p;
	KP_INIT(kp_vtop, v);
	if (!kp_symtab_find(k->symtab, "vmcoreinfo_data", &data) ||
	    !kp_ok(kp_read_u64(k, data.address, &p)) || !p ||
	    !kp_ok(kp_vtop(k, p, &v)) || !v.present || (v.paddr & 4095))
		return false;
	*ret = v.paddr;
	return true;
}

// A scan takes the first page that looks right and passes the CPU
// registers' check, and a forged copy placed below the kernel's own passes
// both. Where the kernel opened with the scanned page says its vmcoreinfo
// is another page, it is opened again from that page and kept if that one
// says the same of itself: the page met first is then a disagreement
// (facts.c), never the answer. Else k stays as it is.
static struct kp_kernel *prefer_own_page(struct kp_kernel *k, const struct kp_open_options *opts)
{
	uint64_t own, again;
	if (!k->vmcoreinfo_found || !own_page(k, &own) || own == k->vmcoreinfo_pa)
		return k;
	struct kp_kernel *k2 = calloc(1, sizeof(*k2));
	if (!k2)
		return k;
	struct kp_error *err = kernel_open(k2, opts, &own);
	if (err || k2->vmcoreinfo_pa != own || !own_page(k2, &again) || again != own) {
		kp_error_destroy(err);
		kp_kernel_destroy(k2);
		return k;
	}
	k2->scan_first = k->src.vmcoreinfo;
	k2->scan_first_size = k->src.vmcoreinfo_size;
	k2->scan_first_pa = k->vmcoreinfo_pa;
	k->src.vmcoreinfo = NULL;
	size_t n = strlen(k2->vmcoreinfo_origin);
	snprintf(k2->vmcoreinfo_origin + n, sizeof(k2->vmcoreinfo_origin) - n,
		 ", the page vmcoreinfo_data points to; the scan met phys 0x%" PRIx64 " first",
		 k2->scan_first_pa);
	kp_kernel_destroy(k);
	return k2;
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
	err = kernel_open(k, &opts, NULL);
	if (!err)
		k = prefer_own_page(k, &opts);
	if (err && k->split[0])
		err = kp_error_prefix(err, "%s is %s", opts.core, k->split);
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
	// The BTF of a kernel assembled from parts (tests, fuzzers) is part of
	// the assembly, not a user's side file to be checked against it.
	k->force = true;
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
	free(k->scan_first);
	kp_kernel_disagreements_free(k);
	kp_memory_destroy(k->mem);
	kp_source_deinit(&k->src);
	kp_file_destroy(k->file);
	for (size_t i = 0; i < k->nparts; i++) {
		kp_source_deinit(&k->part_srcs[i]);
		kp_file_destroy(k->part_files[i]);
	}
	free(k->part_srcs);
	free(k->part_files);
	free(k->release);
	free(k->banner);
	free(k);
}
