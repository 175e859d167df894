// SPDX-License-Identifier: MIT
// kp_syscall_iter: are the syscall tables and dispatchers intact?
//
// Tables (the architecture names them: sys_call_table, ia32_sys_call_table,
// ...) are arrays of function pointers; every entry must be the start of a
// syscall handler in core kernel text (_stext.._etext). A rootkit that
// hooks a syscall by overwriting an entry shows up as an entry pointing
// into a module, into vmalloc space or into the middle of a function.
//
// Dispatchers (x86-64's x64_sys_call() since the branch-history
// mitigation, 6.9 and 6.1.x stable) call the handlers directly; the
// architecture lists their direct call targets (kp_arch.call_targets), and
// a target is kept only if it is exactly the start of a symbol. Such a
// target in core text is fine (the handlers, return thunks, ...); one that
// is the start of a module symbol is reported, and so is (when module
// symbols are not known, as with a dump's in-memory kallsyms) a 16-byte
// aligned target inside a loaded module's memory: function starts are
// 16-byte aligned, and a random rel32 rarely lands aligned inside the few
// MiB of modules. A hooked call into code that is neither (e.g. a
// vmalloc'ed trampoline) is not detected this way; table entries are
// checked exactly.
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arch/arch.h"
#include "core/kernel.h"
#include "linux/module/module.h"
#include "symbols/symtab.h"
#include "util/error.h"
#include "util/le.h"
#include "util/vec.h"

#define MAX_TABLE_ENTRIES 2048u	// x86-64 has ~460 syscalls, arm64 ~450
#define MAX_DISPATCHER_SIZE (256u << 10)

struct entry {
	struct kp_syscall_entry e;
	bool own_why;		// e.why is why[] (set when yielded: entries move)
	char why[160];
};

struct kp_syscall_iter {
	struct kp_kernel *k;
	const struct kp_arch *arch;
	uint64_t stext, etext;
	// Loaded modules, listed or hidden (module_map.c): module memory is
	// recognized by address, and a hidden module's functions named.
	struct kp_lx_module_map *map;
	struct entry *entries;
	size_t n, cap, next;
	struct kp_error *err;	// of a call_targets callback
	const char *table;	// dispatcher being scanned
	uint64_t table_addr;
};

static const char *module_at(const struct kp_syscall_iter *it, uint64_t addr)
{
	const struct kp_lx_mod *m = kp_lx_module_map_find(it->map, addr);
	return m ? m->name : NULL;
}

// "points into module 'x'", and whether the module hides from the list.
static void module_why(const struct kp_syscall_iter *it, struct entry *en, const char *mod)
{
	const struct kp_lx_mod *m = kp_lx_module_map_find(it->map, en->e.target);
	snprintf(en->why, sizeof(en->why), "points into module '%s'%s", mod,
		 m && !m->in_list ? ", which is not in the modules list" : "");
	en->own_why = true;
}

// Size of a symbol: from the symbol table, else the distance to the next one.
static uint64_t sym_size(struct kp_kernel *k, const struct kp_symbol *sym)
{
	if (sym->size)
		return sym->size;
	struct kp_symbol s;
	return kp_kernel_symbol_at(k, sym->address, &s) ? s.size : 0;
}

static struct entry *add(struct kp_syscall_iter *it, const char *table, unsigned nr,
			 uint64_t target)
{
	if (!KP_VEC_RESERVE(it->entries, it->cap, it->n + 1))
		return NULL;
	struct entry *en = &it->entries[it->n++];
	memset(en, 0, sizeof(*en));
	en->e.table = table;
	en->e.nr = nr;
	en->e.target = target;
	return en;
}

// Classifies a table entry: its symbol, ok, why.
static void classify(struct kp_syscall_iter *it, struct entry *en)
{
	struct kp_syscall_entry *e = &en->e;
	if (!kp_lx_module_map_symbol(it->map, e->target, &e->sym) &&
	    !kp_kernel_symbol_at(it->k, e->target, &e->sym))
		memset(&e->sym, 0, sizeof(e->sym));
	// The kernel's pick among aliases may be the body (__do_sys_pause) of
	// an entry point (__x64_sys_pause) at the same address: name that.
	struct kp_symbol alias;
	for (size_t i = 0; e->sym.name && e->sym.address == e->target &&
			   !it->arch->syscall_handler_name(e->sym.name) &&
			   kp_symtab_alias(kp_kernel_symtab(it->k), e->target, i, &alias); i++)
		if (it->arch->syscall_handler_name(alias.name))
			e->sym = alias;
	bool in_text = e->target >= it->stext && e->target < it->etext;
	const char *mod = e->sym.name && e->sym.module ? e->sym.module : module_at(it, e->target);
	e->ok = false;
	if (mod) {
		module_why(it, en, mod);
	} else if (!in_text) {
		e->why = e->target ? "not in kernel text" : "NULL entry";
	} else if (!e->sym.name || e->sym.address != e->target ||
		   !it->arch->syscall_handler_name(e->sym.name)) {
		e->why = "not at a syscall entry point";
	} else {
		e->ok = true;
		e->why = NULL;
	}
}

static struct kp_error *check_table(struct kp_syscall_iter *it, const char *name, bool *found)
{
	struct kp_symbol sym;
	if (!kp_symbol_find(it->k, name, &sym))
		return NULL;
	*found = true;
	uint64_t n = sym_size(it->k, &sym) / 8;
	if (n > MAX_TABLE_ENTRIES)
		n = MAX_TABLE_ENTRIES;
	if (!n)
		return kp_error_create(KP_ERR_NOT_FOUND, "%s at 0x%" PRIx64 ": size unknown",
				       name, sym.address);
	uint8_t *table = malloc(n * 8);
	if (!table)
		return &kp_enomem;
	struct kp_error *err = kp_read(it->k, KP_VIRT, sym.address, table, n * 8);
	if (err) {
		free(table);
		return kp_error_prefix(err, "reading %s at 0x%" PRIx64, name, sym.address);
	}
	// The symbol size is the distance to the next symbol: drop the zero
	// padding after the last entry.
	while (n > 1 && kp_le64(table + (n - 1) * 8) == 0)
		n--;
	for (uint64_t i = 0; i < n; i++) {
		struct entry *en = add(it, name, (unsigned)i, kp_le64(table + i * 8));
		if (!en) {
			free(table);
			return &kp_enomem;
		}
		classify(it, en);
	}
	free(table);
	return NULL;
}

static void on_call(uint64_t target, uint64_t at, void *arg)
{
	struct kp_syscall_iter *it = arg;
	if (it->err)
		return;
	struct kp_symbol t;
	bool at_symbol = (kp_lx_module_map_symbol(it->map, target, &t) ||
			  kp_kernel_symbol_at(it->k, target, &t)) && t.address == target;
	bool in_text = target >= it->stext && target < it->etext;
	const char *mod = at_symbol && t.module ? t.module : NULL;
	// Without module symbols: a 16-byte aligned target (function
	// alignment) inside a loaded module's memory.
	if (!mod && !(target & 15))
		mod = module_at(it, target);
	if (!mod && (!at_symbol || !in_text))
		return;	// not a call: the bytes belong to another instruction
	struct entry *en = add(it, it->table, (unsigned)(at - it->table_addr), target);
	if (!en) {
		it->err = &kp_enomem;
		return;
	}
	if (at_symbol)
		en->e.sym = t;
	if (mod) {
		module_why(it, en, mod);
	} else {
		en->e.ok = true;
	}
}

static struct kp_error *check_dispatcher(struct kp_syscall_iter *it, const char *name,
					 bool *found)
{
	struct kp_symbol sym;
	if (!it->arch->call_targets || !kp_symbol_find(it->k, name, &sym))
		return NULL;
	*found = true;
	uint64_t size = sym_size(it->k, &sym);
	if (size < 5)
		return kp_error_create(KP_ERR_NOT_FOUND, "%s at 0x%" PRIx64 ": size unknown",
				       name, sym.address);
	if (size > MAX_DISPATCHER_SIZE)
		size = MAX_DISPATCHER_SIZE;
	uint8_t *code = malloc(size);
	if (!code)
		return &kp_enomem;
	struct kp_error *err = kp_read(it->k, KP_VIRT, sym.address, code, size);
	if (err) {
		free(code);
		return kp_error_prefix(err, "reading %s at 0x%" PRIx64, name, sym.address);
	}
	it->table = name;
	it->table_addr = sym.address;
	it->arch->call_targets(code, size, sym.address, on_call, it);
	free(code);
	err = it->err;
	it->err = NULL;
	return err;
}

static struct kp_error *collect_modules(struct kp_syscall_iter *it)
{
	// Without the module list, module symbols still identify hooks.
	struct kp_error *err = kp_lx_module_map_create(it->k, &it->map);
	if (err == &kp_enomem)
		return err;
	kp_error_destroy(err);
	return NULL;
}

static struct kp_error *check(struct kp_syscall_iter *it)
{
	struct kp_symbol s;
	if (!kp_symbol_find(it->k, "_stext", &s) && !kp_symbol_find(it->k, "_text", &s))
		return kp_error_create(KP_ERR_NOT_FOUND, "syscall check: no _stext symbol (kernel text start)");
	it->stext = s.address;
	if (!kp_symbol_find(it->k, "_etext", &s))
		return kp_error_create(KP_ERR_NOT_FOUND, "syscall check: no _etext symbol (kernel text end)");
	it->etext = s.address;
	if (it->etext <= it->stext)
		return kp_error_create(KP_ERR_FORMAT, "syscall check: _etext 0x%" PRIx64 " is not above _stext 0x%" PRIx64,
				       it->etext, it->stext);
	struct kp_error *err = collect_modules(it);
	bool found = false;
	for (const char *const *t = it->arch->syscall_tables; !err && *t; t++)
		err = check_table(it, *t, &found);
	for (const char *const *d = it->arch->syscall_dispatchers; !err && d && *d; d++)
		err = check_dispatcher(it, *d, &found);
	if (!err && !found) {
		// The lookup says why it is missing (a kernel whose kallsyms has
		// functions only names the fix).
		struct kp_symbol table;
		err = kp_symbol_by_name(it->k, it->arch->syscall_tables[0], &table);
		return err ? kp_error_prefix(err, "syscall check") :
			kp_error_create(KP_ERR_NOT_FOUND, "syscall check: no %s symbol",
					it->arch->syscall_tables[0]);
	}
	return err;
}

struct kp_error *kp_syscall_iter_create(struct kp_kernel *k, struct kp_syscall_iter **ret)
{
	struct kp_syscall_iter *it = calloc(1, sizeof(*it));
	if (!it)
		return &kp_enomem;
	it->k = k;
	it->arch = kp_kernel_arch(k);
	struct kp_error *err = check(it);
	if (err) {
		kp_syscall_iter_destroy(it);
		return err;
	}
	*ret = it;
	return NULL;
}

struct kp_error *kp_syscall_iter_next(struct kp_syscall_iter *it,
				      const struct kp_syscall_entry **ret)
{
	if (it->next == it->n) {
		*ret = NULL;
		return NULL;
	}
	struct entry *en = &it->entries[it->next++];
	if (en->own_why)
		en->e.why = en->why;
	*ret = &en->e;
	return NULL;
}

void kp_syscall_iter_destroy(struct kp_syscall_iter *it)
{
	if (!it)
		return;
	kp_lx_module_map_destroy(it->map);
	free(it->entries);
	free(it);
}
