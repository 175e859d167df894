// SPDX-License-Identifier: MIT
// Where a kernel's symbols come from, read when it is opened, in this order
// (the first source of a name wins; info lists the sources):
//   1. a kallsyms text given with --kallsyms;
//   2. else the kernel's own compressed kallsyms tables in memory, named by
//      VMCOREINFO (6.0+) or found in the image (before), live as on a
//      dump: looked up where they lie, never all decoded (a 7.2
//      /proc/kallsyms is 9 MB of text, 25 MB and 150 ms to parse);
//      /proc/kallsyms when live and they cannot be found;
//   3. a System.map (--system-map), relocated by the KASLR offset;
//   4. VMCOREINFO's SYMBOL() entries, for names nothing else has.
// Module symbols come later, on the first lookup that misses
// (symbols_lookup.c). A kallsyms of functions only gets its variables by
// their shape (kp_kernel_derive_symbols()).
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arch/arch.h"
#include "core/derive.h"
#include "core/ksymtab.h"
#include "core/kernel_impl.h"
#include "format/vmcoreinfo.h"
#include "io/file.h"
#include "symbols/kallsyms.h"
#include "symbols/kallsyms_scan.h"
#include "symbols/symtab.h"
#include "util/error.h"

#define KALLSYMS_PATH "/proc/kallsyms"

void kp_kernel_add_symbol_source(struct kp_kernel *k, const char *name)
{
	kp_symtab_next_source(k->symtab);
	size_t len = strlen(k->symbol_sources);
	snprintf(k->symbol_sources + len, sizeof(k->symbol_sources) - len, "%s%s",
		 len ? ", " : "", name);
}

// A symbol file given by the user must be this kernel's: its linux_banner
// (moved by bias, as its other addresses) must hold the banner, which every
// kernel keeps in rodata. A file of another build or of another boot (a
// different KASLR offset) points elsewhere. Without linux_banner in the
// file there is nothing to check it against.
static struct kp_error *check_symbol_file(struct kp_kernel *k, const char *text, size_t len,
					  uint64_t bias, const char *path)
{
	uint64_t addr;
	char buf[sizeof(KP_BANNER_PREFIX)];
	if (k->force || !kp_kallsyms_text_find(text, len, bias, "linux_banner", &addr))
		return NULL;
	struct kp_error *err = kp_read(k, KP_VIRT, addr, buf, sizeof(buf) - 1);
	buf[sizeof(buf) - 1] = '\0';
	if (!err && !strcmp(buf, KP_BANNER_PREFIX))
		return NULL;
	struct kp_error *why = kp_error_create(KP_ERR_INVALID, "%s: not this kernel's symbols: "
					       "its linux_banner, 0x%" PRIx64 ", %s; give the "
					       "file of the kernel (and boot) that wrote the dump, or "
					       "--force to use it anyway", path, addr,
					       err ? "cannot be read in the dump" :
					       "does not hold \"Linux version \"");
	kp_error_destroy(err);
	return why;
}

static struct kp_error *load_text_symbols(struct kp_kernel *k, const char *path,
					  uint64_t bias, const char *name)
{
	char *text;
	size_t len;
	struct kp_error *err = kp_read_whole_file(path, &text, &len);
	if (err)
		return err;
	// A malformed file is said first; then whether it is this kernel's.
	err = kp_kallsyms_parse_text(text, len, bias, path, false, k->symtab);
	if (!err && strcmp(path, KALLSYMS_PATH))
		err = check_symbol_file(k, text, len, bias, path);
	free(text);
	if (!err) {
		kp_kernel_add_symbol_source(k, name);
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

// 2. The kernel's compressed kallsyms tables in memory; nothing added (and
// no error, *found false) when they cannot be found.
static struct kp_error *load_kallsyms_memory(struct kp_kernel *k, bool *found)
{
	struct kp_kallsyms_tables t;
	struct kp_error *err;
	if (kp_kallsyms_tables_from_vmcoreinfo(k->vmcoreinfo, &t)) {
		err = kp_kallsyms_attach(k->mem, &t, k->symtab);
		if (err)
			return kp_error_prefix(err, "kallsyms tables in memory");
		kp_kernel_add_symbol_source(k, "kallsyms (memory)");
		*found = true;
		return NULL;
	}
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
		kp_kernel_add_symbol_source(k, "kallsyms (memory, found in the image)");
		*found = true;
	} else if (err->code == KP_ERR_NOT_FOUND) {
		kp_error_destroy(err);
	} else {
		return err;
	}
	return NULL;
}

// 3. A System.map: unrelocated addresses, moved by the KASLR offset.
static struct kp_error *load_system_map(struct kp_kernel *k, const char *path)
{
	char *text;
	size_t len;
	struct kp_error *err = kp_read_whole_file(path, &text, &len);
	if (err)
		return err;
	err = kp_kallsyms_parse_text(text, len, system_map_bias(k), path, true, k->symtab);
	if (!err)
		err = check_symbol_file(k, text, len, system_map_bias(k), path);
	free(text);
	if (err)
		return err;
	kp_kernel_add_symbol_source(k, "System.map");
	return NULL;
}

struct kp_error *kp_kernel_load_symbols(struct kp_kernel *k, const struct kp_open_options *opts)
{
	bool found = false;
	struct kp_error *err = NULL;
	if (opts->kallsyms)
		err = load_text_symbols(k, opts->kallsyms, 0, opts->kallsyms);
	else
		err = load_kallsyms_memory(k, &found);
	// /proc/kallsyms also lists module symbols; with kptr_restrict its
	// addresses are zeros and it adds nothing.
	if (!err && !opts->kallsyms && !found && k->src.live)
		kp_error_destroy(load_text_symbols(k, KALLSYMS_PATH, 0, KALLSYMS_PATH));
	if (!err && opts->system_map)
		err = load_system_map(k, opts->system_map);
	if (err)
		return err;
	// 4. VMCOREINFO's SYMBOL()s.
	if (k->vmcoreinfo) {
		if ((err = add_vmcoreinfo_symbols(k)))
			return err;
		kp_kernel_add_symbol_source(k, "vmcoreinfo");
	}
	if ((err = kp_symtab_finalize(k->symtab)))
		return err;
	k->no_data_symbols = lacks_data_symbols(k);
	return NULL;
}

// A kallsyms of functions only: the variables kpeek's commands start from,
// from the kernel's tables of exported symbols (core/ksymtab.c) and found
// by their shape (core/derive.c) with the kernel's BTF.
struct kp_error *kp_kernel_derive_symbols(struct kp_kernel *k)
{
	uint64_t start, end;
	unsigned added;
	k->arch->image_range(k->arch_ctx, &start, &end);
	struct kp_error *err = kp_symtab_next_source_origin(k->symtab, "the table of exported symbols "
							     "(__ksymtab)");
	if (!err)
		err = kp_ksymtab_add_variables(k->mem, start, end, k->symtab, &added);
	if (err)
		return err;
	if (added) {
		kp_kernel_add_symbol_source(k, "exported variables (__ksymtab)");
		if ((err = kp_symtab_finalize(k->symtab)))
			return err;
	}
	struct kp_types *types;
	if (!kp_ok(kp_kernel_types(k, &types)))
		return NULL;	// no BTF: the commands say so when they need it
	if ((err = kp_derive_symbols(k->mem, k->arch, k->arch_ctx, types, start, end, k->symtab,
				     &added)))
		return err;
	if (added)
		kp_kernel_add_symbol_source(k, "variables found by their shape");
	return kp_symtab_finalize(k->symtab);
}
