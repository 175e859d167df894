// kp_check_syscalls: are the syscall tables and dispatchers intact?
//
// Tables (sys_call_table, ia32_sys_call_table, x32_sys_call_table) are arrays
// of function pointers; every entry must be the start of a syscall handler
// in core kernel text (_stext.._etext). A rootkit that hooks a syscall by
// overwriting an entry shows up as an entry pointing into a module, into
// vmalloc space or into the middle of a function.
//
// Since the branch-history mitigation (mainline 6.9, backported to 6.1.x
// stable among others) x86-64 dispatches through x64_sys_call() and
// friends: a switch compiled (-fno-jump-tables) into compares and direct
// call/jmp rel32 instructions, so sys_call_table is only used by tracing.
// We do not decode x86 instruction lengths. Instead every E8 (call rel32) /
// E9 (jmp rel32) byte in the function is taken as a candidate, and its
// target is kept only if it is exactly the start of a symbol: random bytes
// almost never land on one, real calls always do. Such a target in core
// text is fine (the handlers, return thunks, ...); one that is the start of
// a module symbol is reported, and so is (when module symbols are not known,
// as with a dump's in-memory kallsyms) a 16-byte aligned target inside a
// loaded module's memory: function starts are 16-byte aligned, and a random
// rel32 rarely lands aligned inside the few MiB of modules. A hooked call
// into code that is neither (e.g. a vmalloc'ed trampoline) is not detected
// by this heuristic; sys_call_table entries are checked exactly.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "linux/linux.h"

#define MAX_TABLE_ENTRIES 2048u	// x86-64 has ~460 syscalls
#define MAX_DISPATCHER_SIZE (256u << 10)

bool kp_lx_syscall_name_ok(const char *name)
{
	// 4.17+ pt_regs wrappers, their compat forms, and the plain names of
	// older kernels (sys_read, compat_sys_*, ptregs_/stub_ trampolines).
	static const char *const prefixes[] = {
		"__x64_sys_", "__ia32_sys_", "__ia32_compat_sys_", "__x64_compat_sys_",
		"__x32_compat_sys_", "sys_", "compat_sys_", "ptregs_sys_", "stub_",
	};
	if (!name)
		return false;
	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (!strncmp(name, prefixes[i], strlen(prefixes[i])) && name[strlen(prefixes[i])])
			return true;
	return false;
}

struct check {
	struct kp_kernel *k;
	uint64_t stext, etext;
	kp_syscall_fn *fn;
	void *arg;
	// Loaded modules: symbol tables often lack module symbols (a dump's
	// in-memory kallsyms covers the core kernel only), so module memory is
	// recognized by address too.
	struct kp_module *mods;
	size_t nmods;
};

static const char *module_at(const struct check *c, uint64_t addr)
{
	for (size_t i = 0; i < c->nmods; i++)
		if (addr >= c->mods[i].base && addr - c->mods[i].base < c->mods[i].size)
			return c->mods[i].name;
	return NULL;
}

static bool sym_lookup(struct kp_kernel *k, const char *name, struct kp_symbol *ret)
{
	struct kp_error *err = kp_symbol_by_name(k, name, ret);
	kp_error_destroy(err);
	return !err;
}

// Size of a symbol: from the symbol table, else the distance to the next one.
static uint64_t sym_size(struct kp_kernel *k, const struct kp_symbol *sym)
{
	if (sym->size)
		return sym->size;
	struct kp_symbol s;
	struct kp_error *err = kp_symbol_by_address(k, sym->address, &s);
	kp_error_destroy(err);
	return err ? 0 : s.size;
}

// Classifies target; fills e->sym, e->ok and e->why. why strings are static
// or point into a per-check buffer.
static void classify(struct check *c, struct kp_syscall_entry *e, char *why, size_t why_size)
{
	struct kp_error *err = kp_symbol_by_address(c->k, e->target, &e->sym);
	if (err) {
		kp_error_destroy(err);
		memset(&e->sym, 0, sizeof(e->sym));
	}
	bool in_text = e->target >= c->stext && e->target < c->etext;
	const char *mod = e->sym.name && e->sym.module ? e->sym.module : module_at(c, e->target);
	e->ok = false;
	if (mod) {
		snprintf(why, why_size, "points into module '%s'", mod);
		e->why = why;
	} else if (!in_text) {
		e->why = e->target ? "not in kernel text" : "NULL entry";
	} else if (!e->sym.name || e->sym.address != e->target ||
		   !kp_lx_syscall_name_ok(e->sym.name)) {
		e->why = "not at a syscall entry point";
	} else {
		e->ok = true;
		e->why = NULL;
	}
}

static struct kp_error *check_table(struct check *c, const char *name, bool *found)
{
	struct kp_symbol sym;
	if (!sym_lookup(c->k, name, &sym))
		return NULL;
	*found = true;
	uint64_t n = sym_size(c->k, &sym) / 8;
	if (n == 0 || n > MAX_TABLE_ENTRIES)
		n = n ? MAX_TABLE_ENTRIES : 0;
	if (!n)
		return kp_error_create(KP_ERR_NOT_FOUND, "%s at 0x%llx: size unknown",
				       name, (unsigned long long)sym.address);
	uint64_t *table = malloc(n * 8);
	if (!table)
		return &kp_enomem;
	struct kp_error *err = kp_read(c->k, KP_VIRT, sym.address, table, n * 8);
	if (err) {
		free(table);
		return kp_error_prefix(err, "reading %s at 0x%llx", name,
				       (unsigned long long)sym.address);
	}
	// The symbol size is the distance to the next symbol: drop the zero
	// padding after the last entry.
	while (n > 1 && table[n - 1] == 0)
		n--;
	for (uint64_t i = 0; i < n && !err; i++) {
		char why[96];
		struct kp_syscall_entry e = {.table = name, .nr = (unsigned)i, .target = table[i]};
		classify(c, &e, why, sizeof(why));
		err = c->fn(&e, c->arg);
	}
	free(table);
	return err;
}

static int32_t get_s32(const uint8_t *p)
{
	int32_t v;
	memcpy(&v, p, 4);
	return v;
}

static struct kp_error *check_dispatcher(struct check *c, const char *name, bool *found)
{
	struct kp_symbol sym;
	if (!sym_lookup(c->k, name, &sym))
		return NULL;
	*found = true;
	uint64_t size = sym_size(c->k, &sym);
	if (size < 5)
		return kp_error_create(KP_ERR_NOT_FOUND, "%s at 0x%llx: size unknown",
				       name, (unsigned long long)sym.address);
	if (size > MAX_DISPATCHER_SIZE)
		size = MAX_DISPATCHER_SIZE;
	uint8_t *code = malloc(size);
	if (!code)
		return &kp_enomem;
	struct kp_error *err = kp_read(c->k, KP_VIRT, sym.address, code, size);
	if (err) {
		free(code);
		return kp_error_prefix(err, "reading %s at 0x%llx", name,
				       (unsigned long long)sym.address);
	}
	for (uint64_t i = 0; i + 5 <= size && !err; i++) {
		if (code[i] != 0xe8 && code[i] != 0xe9)
			continue;
		uint64_t target = sym.address + i + 5 + (uint64_t)(int64_t)get_s32(code + i + 1);
		struct kp_symbol t;
		struct kp_error *e2 = kp_symbol_by_address(c->k, target, &t);
		if (e2)
			memset(&t, 0, sizeof(t));
		kp_error_destroy(e2);
		bool at_symbol = !e2 && t.address == target;
		bool in_text = target >= c->stext && target < c->etext;
		const char *mod = at_symbol && t.module ? t.module : NULL;
		// Without module symbols: a 16-byte aligned target (function
		// alignment) inside a loaded module's memory.
		if (!mod && !(target & 15))
			mod = module_at(c, target);
		if (!mod && (!at_symbol || !in_text))
			continue;	// not a call: the bytes belong to another instruction
		char why[96];
		struct kp_syscall_entry e = {.table = name, .nr = (unsigned)i, .target = target};
		if (at_symbol)
			e.sym = t;
		if (mod) {
			snprintf(why, sizeof(why), "points into module '%s'", mod);
			e.why = why;
		} else {
			e.ok = true;
		}
		err = c->fn(&e, c->arg);
	}
	free(code);
	return err;
}

struct kp_error *kp_check_syscalls(struct kp_kernel *k, kp_syscall_fn *fn, void *arg)
{
	struct check c = {.k = k, .fn = fn, .arg = arg};
	struct kp_symbol s;
	if (!sym_lookup(k, "_stext", &s) && !sym_lookup(k, "_text", &s))
		return kp_error_create(KP_ERR_NOT_FOUND, "syscall check: no _stext symbol (kernel text start)");
	c.stext = s.address;
	if (!sym_lookup(k, "_etext", &s))
		return kp_error_create(KP_ERR_NOT_FOUND, "syscall check: no _etext symbol (kernel text end)");
	c.etext = s.address;
	if (c.etext <= c.stext)
		return kp_error_create(KP_ERR_FORMAT, "syscall check: _etext 0x%llx is not above _stext 0x%llx",
				       (unsigned long long)c.etext, (unsigned long long)c.stext);
	static const char *const tables[] = {"sys_call_table", "ia32_sys_call_table", "x32_sys_call_table"};
	static const char *const dispatchers[] = {"x64_sys_call", "ia32_sys_call", "x32_sys_call"};
	bool found = false;
	struct kp_error *err = kp_modules(k, &c.mods, &c.nmods);
	if (err) {
		// Without the module list, module symbols still identify hooks.
		kp_error_destroy(err);
		c.mods = NULL;
		c.nmods = 0;
	}
	err = NULL;
	for (size_t i = 0; i < 3 && !err; i++)
		err = check_table(&c, tables[i], &found);
	for (size_t i = 0; i < 3 && !err; i++)
		err = check_dispatcher(&c, dispatchers[i], &found);
	free(c.mods);
	if (!err && !found)
		return kp_error_create(KP_ERR_NOT_FOUND, "syscall check: no sys_call_table or x64_sys_call symbol");
	return err;
}
