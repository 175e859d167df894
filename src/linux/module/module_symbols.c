// SPDX-License-Identifier: MIT
// The symbols of loaded modules, read out of memory the way /proc/kallsyms
// lists them (kernel/module/kallsyms.c, module_get_kallsym(); 5.10:
// kernel/module.c):
//
//   struct module.kallsyms -> struct mod_kallsyms { Elf_Sym *symtab;
//     unsigned int num_symtab; char *strtab; char *typetab; }
//     (typetab since 5.0, "kallsyms: store type information in its own
//     array"; after init the pointer is &mod->core_kallsyms, the symbols
//     that outlive the module's init sections);
//   symbol i: name strtab + symtab[i].st_name, value symtab[i].st_value,
//     type typetab[i] (nm's letter in lower case), upper case when the
//     module exports the name at that value in mod->syms[num_syms]
//     (is_exported()); symbols without a name are not listed.
//
// Layouts come from BTF; Elf64_Sym falls back to the ELF ABI's (it is a
// file format, not a kernel structure) when BTF lacks struct elf64_sym.
#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/kernel.h"
#include "core/layout.h"
#include "linux/module/module.h"
#include "symbols/symtab.h"
#include "util/error.h"
#include "util/le.h"

// Bounds for corrupt dumps: the largest Debian modules have ~10k symbols.
#define MAX_MODULE_SYMBOLS (1u << 20)
#define MAX_MODULE_EXPORTS (1u << 16)
#define MAX_STRTAB (64u << 20)
#define KSYM_NAME_LEN 512	// include/linux/kallsyms.h, 6.1+ (128 before)

enum { MK_SYMTAB, MK_NUM, MK_STRTAB, MK_TYPETAB, MK_N };
static const struct kp_member_spec kallsyms_members[MK_N] = {
	[MK_SYMTAB] = { .name = "symtab" },
	[MK_NUM] = { .name = "num_symtab" },
	[MK_STRTAB] = { .name = "strtab" },
	[MK_TYPETAB] = { .name = "typetab" },	// 5.0+
};
static const struct kp_struct_spec kallsyms_spec = KP_STRUCT_SPEC_OPTIONAL("struct mod_kallsyms", kallsyms_members);

enum { SYM_NAME, SYM_VALUE, SYM_N };
static const struct kp_member_spec sym_members[SYM_N] = {
	[SYM_NAME] = { .name = "st_name" }, [SYM_VALUE] = { .name = "st_value" },
};
static const struct kp_struct_spec sym_spec = KP_STRUCT_SPEC_OPTIONAL("struct elf64_sym", sym_members);

// CONFIG_HAVE_ARCH_PREL32_RELOCATIONS (x86-64, arm64): 32-bit offsets from
// the fields themselves (alternative 0), else pointers.
enum { KS_VALUE, KS_NAME, KS_N };
static const struct kp_member_spec ksym_members[KS_N] = {
	[KS_VALUE] = { .name = "value_offset|value" }, [KS_NAME] = { .name = "name_offset|name" },
};
static const struct kp_struct_spec ksym_spec = KP_STRUCT_SPEC_OPTIONAL("struct kernel_symbol", ksym_members);

struct layout {
	struct kp_lx_module_layout mod;
	uint64_t kallsyms;			// struct module
	uint64_t syms, num_syms;
	bool has_exports;
	uint64_t ks_symtab, ks_num, ks_strtab, ks_typetab;	// struct mod_kallsyms
	uint64_t sym_size, st_name, st_value;	// Elf64_Sym
	uint64_t ksym_size, ksym_value, ksym_name;	// struct kernel_symbol
	bool ksym_prel;		// value_offset/name_offset relative to themselves
};

struct export {
	uint64_t value;
	char *name;
};

static struct kp_error *unsupported(struct kp_error *why)
{
	struct kp_error *err = kp_error_create(KP_ERR_UNSUPPORTED, "module symbols: %s",
					       why->message);
	kp_error_destroy(why);
	return err;
}

// KP_ERR_UNSUPPORTED when BTF does not describe module symbols (a kernel
// without CONFIG_MODULES or CONFIG_KALLSYMS).
static struct kp_error *get_layout(struct kp_kernel *k, struct layout *l)
{
	static const struct kp_struct_spec *const specs[] = { &kallsyms_spec, &sym_spec, &ksym_spec };
	const struct kp_struct_layout *sl[3];
	struct kp_error *err = kp_lx_module_layout(k, &l->mod);
	if (!err)
		err = kp_kernel_layouts(k, specs, 3, sl);
	if (err)
		return unsupported(err);
	const struct kp_struct_layout *ml = l->mod.mod, *ks = sl[0], *sym = sl[1], *ksym = sl[2];
	if (!kp_layout_has(ml, KP_LX_M_KALLSYMS) || !ks->present)
		return kp_error_create(KP_ERR_UNSUPPORTED, "module symbols: no struct mod_kallsyms (CONFIG_KALLSYMS)");
	l->kallsyms = kp_layout_off(ml, KP_LX_M_KALLSYMS);
	l->ks_symtab = kp_layout_off(ks, MK_SYMTAB);
	l->ks_num = kp_layout_off(ks, MK_NUM);
	l->ks_strtab = kp_layout_off(ks, MK_STRTAB);
	l->ks_typetab = kp_layout_off(ks, MK_TYPETAB);
	if (sym->present) {
		l->sym_size = sym->size;
		l->st_name = kp_layout_off(sym, SYM_NAME);
		l->st_value = kp_layout_off(sym, SYM_VALUE);
	} else {
		// A file format, not a kernel structure: the ELF-64 Object File
		// Format's Symbol Table entry when BTF lacks it.
		l->sym_size = 24;
		l->st_name = 0;
		l->st_value = 8;
	}
	if (l->sym_size < 16 || l->sym_size > 64 || l->st_name + 4 > l->sym_size ||
	    l->st_value + 8 > l->sym_size)
		return kp_error_create(KP_ERR_UNSUPPORTED, "struct elf64_sym of %" PRIu64 " bytes",
				       l->sym_size);
	l->has_exports = kp_layout_has(ml, KP_LX_M_SYMS) && kp_layout_has(ml, KP_LX_M_NUM_SYMS) &&
			 ksym->present && ksym->size <= 64 && ksym->m[KS_VALUE].alt == ksym->m[KS_NAME].alt;
	if (l->has_exports) {
		l->syms = kp_layout_off(ml, KP_LX_M_SYMS);
		l->num_syms = kp_layout_off(ml, KP_LX_M_NUM_SYMS);
		l->ksym_size = ksym->size;
		l->ksym_prel = ksym->m[KS_VALUE].alt == 0;
		l->ksym_value = kp_layout_off(ksym, KS_VALUE);
		l->ksym_name = kp_layout_off(ksym, KS_NAME);
	}
	return NULL;
}

static int cmp_export(const void *a, const void *b)
{
	const struct export *x = a, *y = b;
	return x->value < y->value ? -1 : x->value > y->value;
}

static void free_exports(struct export *e, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(e[i].name);
	free(e);
}

// The module's exports (mod->syms), sorted by value.
static struct kp_error *read_exports(struct kp_kernel *k, const struct layout *l, uint64_t mod,
				     const char *name, struct export **ret, size_t *n_ret)
{
	*ret = NULL;
	*n_ret = 0;
	if (!l->has_exports)
		return NULL;
	uint64_t syms;
	uint32_t n;
	struct kp_error *err;
	if ((err = kp_read_u64(k, mod + l->syms, &syms)) ||
	    (err = kp_read_u32(k, mod + l->num_syms, &n)))
		return err;
	if (!n)
		return NULL;
	if (n > MAX_MODULE_EXPORTS)
		return kp_error_create(KP_ERR_FORMAT, "module %s: %" PRIu32 " exports (corrupt?)",
				       name, n);
	uint8_t *raw = malloc((size_t)n * l->ksym_size);
	struct export *e = calloc(n, sizeof(*e));
	if (!raw || !e) {
		free(raw);
		free(e);
		return &kp_enomem;
	}
	if ((err = kp_read(k, KP_VIRT, syms, raw, (size_t)n * l->ksym_size)))
		goto fail;
	for (uint32_t i = 0; i < n; i++) {
		const uint8_t *ks = raw + (size_t)i * l->ksym_size;
		uint64_t at = syms + (uint64_t)i * l->ksym_size, name_addr;
		if (l->ksym_prel) {
			e[i].value = at + l->ksym_value + (int64_t)(int32_t)kp_le32(ks + l->ksym_value);
			name_addr = at + l->ksym_name + (int64_t)(int32_t)kp_le32(ks + l->ksym_name);
		} else {
			e[i].value = kp_le64(ks + l->ksym_value);
			name_addr = kp_le64(ks + l->ksym_name);
		}
		char buf[KSYM_NAME_LEN];
		if ((err = kp_read_cstr(k, name_addr, buf, sizeof(buf))))
			goto fail;
		if (!(e[i].name = strdup(buf))) {
			err = &kp_enomem;
			goto fail;
		}
	}
	free(raw);
	qsort(e, n, sizeof(*e), cmp_export);
	*ret = e;
	*n_ret = n;
	return NULL;
fail:
	free(raw);
	free_exports(e, n);
	return kp_error_prefix(err, "module %s: exported symbols at 0x%" PRIx64, name, syms);
}

static bool exported(const struct export *e, size_t n, const char *name, uint64_t value)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (e[mid].value < value)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < n && e[lo].value == value; lo++)
		if (!strcmp(e[lo].name, name))
			return true;
	return false;
}

// A module's kallsyms tables copied out of memory (struct mod_kallsyms).
struct tables {
	uint64_t ks, symtab, strtab, typetab;
	uint32_t n;
	uint8_t *syms;		// n Elf64_Sym
	uint8_t *types;		// n type letters
	char *strs;		// strtab up to the end of its furthest name
	size_t got;		// bytes of strs read
};

static void tables_free(struct tables *t)
{
	free(t->syms);
	free(t->types);
	free(t->strs);
}

// The header of the module's mod_kallsyms; t->n 0 if it has none.
static struct kp_error *read_header(struct kp_kernel *k, const struct layout *l, uint64_t mod,
				    struct tables *t)
{
	struct kp_error *err;
	if ((err = kp_read_u64(k, mod + l->kallsyms, &t->ks)))
		return err;
	if (!t->ks)
		return NULL;	// built without symbols
	if ((err = kp_read_u64(k, t->ks + l->ks_symtab, &t->symtab)) ||
	    (err = kp_read_u32(k, t->ks + l->ks_num, &t->n)) ||
	    (err = kp_read_u64(k, t->ks + l->ks_strtab, &t->strtab)) ||
	    (err = kp_read_u64(k, t->ks + l->ks_typetab, &t->typetab)))
		return kp_error_prefix(err, "struct mod_kallsyms at 0x%" PRIx64, t->ks);
	if (t->n > MAX_MODULE_SYMBOLS)
		return kp_error_create(KP_ERR_FORMAT,
				       "struct mod_kallsyms at 0x%" PRIx64 ": %" PRIu32 " symbols (corrupt?)",
				       t->ks, t->n);
	return NULL;
}

// The symbol and type arrays, and the string table as far as its names go.
static struct kp_error *read_tables(struct kp_kernel *k, const struct layout *l, struct tables *t)
{
	struct kp_error *err;
	if (!(t->syms = malloc((size_t)t->n * l->sym_size)) || !(t->types = malloc(t->n)))
		return &kp_enomem;
	if ((err = kp_read(k, KP_VIRT, t->symtab, t->syms, (size_t)t->n * l->sym_size)))
		return kp_error_prefix(err, "symtab at 0x%" PRIx64, t->symtab);
	if ((err = kp_read(k, KP_VIRT, t->typetab, t->types, t->n)))
		return kp_error_prefix(err, "typetab at 0x%" PRIx64, t->typetab);
	uint32_t max_name = 0;
	for (uint32_t i = 0; i < t->n; i++) {
		uint32_t off = kp_le32(t->syms + (size_t)i * l->sym_size + l->st_name);
		if (off > max_name)
			max_name = off;
	}
	if (max_name > MAX_STRTAB)
		return kp_error_create(KP_ERR_FORMAT, "a name %" PRIu32 " bytes into strtab at 0x%" PRIx64 " (corrupt?)",
				       max_name, t->strtab);
	// The names end where the last one's NUL is: read up to the longest
	// name past the furthest start, as far as memory goes.
	size_t want = (size_t)max_name + KSYM_NAME_LEN;
	if (!(t->strs = malloc(want)))
		return &kp_enomem;
	t->got = kp_kernel_read_partial(k, t->strtab, t->strs, want, false);
	return NULL;
}

// The named symbols of the tables into st, upper case where exported.
static struct kp_error *add_symbols(const struct layout *l, const struct tables *t,
				    const struct export *exports, size_t nexports,
				    const char *module, struct kp_symtab *st, size_t *added)
{
	for (uint32_t i = 0; i < t->n; i++) {
		const uint8_t *sym = t->syms + (size_t)i * l->sym_size;
		uint32_t off = kp_le32(sym + l->st_name);
		const char *name = t->strs + off;
		const char *end = off < t->got ? memchr(name, '\0', t->got - off) : NULL;
		if (!end)
			return kp_error_create(KP_ERR_FORMAT,
					       "symbol %" PRIu32 ": name at strtab 0x%" PRIx64 "+%" PRIu32 " unreadable or longer than %d bytes",
					       i, t->strtab, off, KSYM_NAME_LEN);
		if (end == name)
			continue;	// /proc/kallsyms skips nameless symbols
		uint64_t value = kp_le64(sym + l->st_value);
		char type = isprint(t->types[i]) ? (char)t->types[i] : '?';
		if (exported(exports, nexports, name, value))
			type = (char)toupper((unsigned char)type);
		struct kp_error *err = kp_symtab_add(st, name, end - name, value, type, module);
		if (err)
			return err;
		(*added)++;
	}
	return NULL;
}

// A limit at base + size of each {base, size} pair at these offsets in
// mod (a NULL base: a region freed, as init text is).
static struct kp_error *add_limits(struct kp_kernel *k, uint64_t mod, const uint64_t *bases,
				   const uint64_t *sizes, unsigned n, struct kp_symtab *st)
{
	for (unsigned i = 0; i < n; i++) {
		uint64_t base;
		uint32_t size;
		struct kp_error *err;
		if (kp_ok(kp_read_u64(k, mod + bases[i], &base)) && base &&
		    kp_ok(kp_read_u32(k, mod + sizes[i], &size)) && size &&
		    (err = kp_symtab_add_limit(st, base + size)))
			return err;
	}
	return NULL;
}

// Where the module's memory regions end, and within them its core and init
// text: a module's symbol extends no further, as the kernel's %pS looks a
// module address up within the region that holds it (6.12 arm64 places one
// module's rodata just below another's text: without the limit, the last
// note of one named the other's first bytes).
static struct kp_error *add_region_limits(struct kp_kernel *k, const struct layout *l, uint64_t mod,
					  struct kp_symtab *st)
{
	struct kp_error *err = add_limits(k, mod, l->mod.region_base, l->mod.region_size, l->mod.nregions, st);
	return err ? err : add_limits(k, mod, l->mod.text_base, l->mod.text_size, l->mod.ntext, st);
}

// One module's symbols into st.
static struct kp_error *module_symbols(struct kp_kernel *k, const struct layout *l,
				       const struct kp_module *m, struct kp_symtab *st,
				       size_t *added)
{
	struct tables t = { 0 };
	struct export *exports = NULL;
	size_t nexports = 0;
	struct kp_error *err = read_header(k, l, m->address, &t);
	if (!err && t.n && !(err = read_tables(k, l, &t)) &&
	    !(err = read_exports(k, l, m->address, m->name, &exports, &nexports)) &&
	    !(err = add_symbols(l, &t, exports, nexports, m->name, st, added)))
		err = add_region_limits(k, l, m->address, st);
	tables_free(&t);
	free_exports(exports, nexports);
	return err;
}

struct kp_error *kp_lx_module_symbols(struct kp_kernel *k, struct kp_symtab *st, size_t *added)
{
	struct layout l = {0};
	struct kp_error *err = get_layout(k, &l);
	if (err)
		return err;
	struct kp_module_iter *it;
	if ((err = kp_module_iter_create(k, &it)))
		return err;
	// A module whose tables are corrupt costs its own symbols only; the
	// first such error is returned once the others are in.
	struct kp_error *first = NULL;
	bool m_err = false;	// a module's error that ends the load
	for (;;) {
		const struct kp_module *m;
		if ((err = kp_module_iter_next(it, &m)) || !m)
			break;
		if ((err = module_symbols(k, &l, m, st, added))) {
			err = kp_error_prefix(err, "module %s (struct module at 0x%" PRIx64 ")",
					      m->name, m->address);
			if (err->code != KP_ERR_FORMAT && err->code != KP_ERR_FAULT) {
				m_err = true;
				break;
			}
			if (!first)
				first = err;
			else
				kp_error_destroy(err);
			err = NULL;
		}
	}
	kp_module_iter_destroy(it);
	if (err && !first && err->code != KP_ERR_NOMEM && !m_err) {
		first = err;	// the modules list's own last word: after every module it gave
		err = NULL;
	}
	if (err) {
		kp_error_destroy(first);
		return err;
	}
	return first;
}

struct kp_error *kp_lx_module_symbols_at(struct kp_kernel *k, uint64_t mod, const char *name,
					 struct kp_symtab *st, size_t *added)
{
	struct layout l = {0};
	struct kp_error *err = get_layout(k, &l);
	if (err)
		return err;
	struct kp_module m = { .address = mod };
	snprintf(m.name, sizeof(m.name), "%s", name);
	return module_symbols(k, &l, &m, st, added);
}
