// SPDX-License-Identifier: MIT
// A kernel's symbols as the public API gives them: by name, by address,
// symbolized ("name+off/size [module]") and in address order. Module
// symbols are read out of memory (linux/) only when a lookup first misses
// in the core kernel's, or when everything is asked for.
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "core/kernel_impl.h"
#include "symbols/symtab.h"
#include "util/error.h"

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
bool kp_kernel_load_late_symbols(struct kp_kernel *k)
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
			kp_kernel_add_symbol_source(k, "module symbols (incomplete)");
		else if (code != KP_ERR_UNSUPPORTED)
			kp_kernel_add_symbol_source(k, "(module symbols unreadable)");
		return added > 0;
	}
	kp_kernel_add_symbol_source(k, k->late_name);
	return added > 0;
}

#define NO_DATA_SYMBOLS "this kernel's kallsyms has functions only (built without CONFIG_KALLSYMS_ALL): " \
	"give its System.map with -m (from its -dbg package) for variables"

struct kp_error *kp_kernel_no_symbol(struct kp_kernel *k, const char *what)
{
	if (k->no_data_symbols)
		return kp_error_create(KP_ERR_NOT_FOUND, "%s: " NO_DATA_SYMBOLS, what);
	return kp_error_create(KP_ERR_NOT_FOUND, "%s", what);
}

struct kp_error *kp_symbol_by_name(struct kp_kernel *k, const char *name, struct kp_symbol *ret)
{
	if (kp_symbol_find(k, name, ret))
		return NULL;
	struct kp_error *err = kp_symtab_by_name(k->symtab, name, ret);
	if (err && err->code == KP_ERR_NOT_FOUND && k->no_data_symbols) {
		struct kp_error *why = err;
		err = kp_kernel_no_symbol(k, why->message);
		kp_error_destroy(why);
	}
	return err;
}

const char *kp_symbol_origin(struct kp_kernel *k, const struct kp_symbol *sym)
{
	return sym->module ? NULL : kp_symtab_origin(k->symtab, sym->name, sym->address);
}

bool kp_symbol_find(struct kp_kernel *k, const char *name, struct kp_symbol *ret)
{
	// The core kernel's symbol wins over a module's of the same name:
	// modules are read only for names the kernel does not have.
	if (kp_symtab_find(k->symtab, name, ret) ||
	    (kp_kernel_load_late_symbols(k) && kp_symtab_find(k->symtab, name, ret))) {
		kp_kernel_section_type(k, ret);
		return true;
	}
	return false;
}

bool kp_kernel_symbol_at(struct kp_kernel *k, uint64_t address, struct kp_symbol *ret)
{
	if (kp_ok(kp_symtab_by_address(k->symtab, address, ret)) ||
	    (kp_kernel_load_late_symbols(k) && kp_ok(kp_symtab_by_address(k->symtab, address, ret)))) {
		kp_kernel_section_type(k, ret);
		return true;
	}
	return false;
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
	struct kp_symtab_pos pos;
	struct kp_symbol sym;
};

struct kp_error *kp_symbol_iter_create(struct kp_kernel *k, struct kp_symbol_iter **ret)
{
	kp_kernel_load_late_symbols(k);
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
	struct kp_error *err = kp_symtab_next(it->kernel->symtab, &it->pos, &it->sym);
	if (err == &kp_not_found) {
		*ret = NULL;
		return NULL;
	}
	if (err)
		return err;
	kp_kernel_section_type(it->kernel, &it->sym);
	*ret = &it->sym;
	return NULL;
}

void kp_symbol_iter_destroy(struct kp_symbol_iter *it)
{
	free(it);
}
