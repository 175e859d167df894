// SPDX-License-Identifier: MIT
// The integrity checks (kpeek check): one file per check, each a function
// that compares the kernel's own views of one kind of object and adds a
// finding per object that does not fit. check.c runs them and keeps what
// every check needs: the kernel text bounds, the module map (listed and
// hidden modules, linux/module_map.c) and the naming of an address.
#ifndef KP_CHECKS_CHECK_H
#define KP_CHECKS_CHECK_H

#include <kpeek/kpeek.h>

struct kp_arch;
struct kp_lx_module_map;

struct kp_ck {
	struct kp_kernel *k;
	const struct kp_arch *arch;
	unsigned flags;			// KP_CHECK_*
	bool live;			// a live kernel: views change while read
	uint64_t stext, etext;		// core kernel text
	struct kp_lx_module_map *mods;	// NULL if the modules list cannot be read
	char mods_why[200];		// why not
	struct kp_check *out;
};

// Adds a finding (why NULL: an entry that is fine, kept with KP_CHECK_ALL
// only) about the object named by object_fmt; address is named by sym, or
// when sym is NULL by kp_ck_symbol().
struct kp_error *kp_ck_add(struct kp_ck *c, uint64_t address, const struct kp_symbol *sym,
			   const char *why, const char *object_fmt, ...)
	__attribute__((format(printf, 5, 6)));
// A finding of a live kernel's transition (KP_FINDING_LIVE_RACE): listed,
// not counted as suspicious.
struct kp_error *kp_ck_add_race(struct kp_ck *c, uint64_t address, const char *why,
				const char *object_fmt, ...) __attribute__((format(printf, 4, 5)));
// A live kernel's second run (second) confirms the findings of the first
// (first): a suspicious finding second does not have (same object and
// reason) becomes a race; the status follows.
void kp_ck_confirm(struct kp_check *first, const struct kp_check *second);
// A summary line.
struct kp_error *kp_ck_summary(struct kp_ck *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
// The check cannot decide: why (the check's function then returns NULL).
void kp_ck_cannot(struct kp_ck *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
// Nothing to check on this architecture: why.
void kp_ck_not_applicable(struct kp_ck *c, const char *why);
// kp_ck_cannot() with an error's message (consumed), after "what: " if
// what is not NULL; NOMEM is returned.
struct kp_error *kp_ck_cannot_err(struct kp_ck *c, struct kp_error *err, const char *what);

bool kp_ck_in_text(const struct kp_ck *c, uint64_t address);
// The symbol at address, from the kernel's tables or a hidden module's.
bool kp_ck_symbol(struct kp_ck *c, uint64_t address, struct kp_symbol *ret);
// Where address points, for a finding's reason: "kernel text", "module
// 'x'", "module 'x', which is not in the modules list", "no module
// (vmalloc or data)".
void kp_ck_where(struct kp_ck *c, uint64_t address, char *buf, size_t size);
// Whether address is code a hook may legitimately point at: core kernel
// text or a module in the modules list.
bool kp_ck_trusted_code(struct kp_ck *c, uint64_t address);

// One registered struct ftrace_ops (ftrace.c), for the checks that must
// tell ftrace's own patching from a hook.
struct kp_ck_ftrace_ops {
	uint64_t address, func, saved_func, trampoline;
	uint64_t nfuncs;		// functions in its filter
	bool all;			// no filter: it traces every function
	unsigned nnamed;
	uint64_t funcs[4];		// the first of them
};
typedef struct kp_error *kp_ck_ftrace_fn(struct kp_ck *c, const struct kp_ck_ftrace_ops *o,
					 void *arg);
typedef struct kp_error *kp_ck_ftrace_ip_fn(struct kp_ck *c, uint64_t ip, void *arg);
// fn for every registered ftrace_ops; ip_fn (may be NULL) first for every
// function its filter holds.
struct kp_error *kp_ck_ftrace_ops(struct kp_ck *c, kp_ck_ftrace_fn *fn, kp_ck_ftrace_ip_fn *ip_fn,
				  void *arg);

// The address of every registered kprobe (kprobes.c).
typedef struct kp_error *kp_ck_kprobe_fn(struct kp_ck *c, uint64_t kprobe, uint64_t addr,
					 void *arg);
struct kp_error *kp_ck_kprobe_addrs(struct kp_ck *c, kp_ck_kprobe_fn *fn, void *arg);

// A set of addresses: add, then sort (duplicates dropped), then look up.
struct kp_ck_addrs {
	uint64_t *v;
	size_t n, cap;
};
bool kp_ck_addrs_add(struct kp_ck_addrs *s, uint64_t address);
void kp_ck_addrs_sort(struct kp_ck_addrs *s);
bool kp_ck_addrs_has(const struct kp_ck_addrs *s, uint64_t address);
void kp_ck_addrs_free(struct kp_ck_addrs *s);

// An empty result named name (registry.c runs the check into it).
struct kp_check *kp_ck_result_create(const char *name);

typedef struct kp_error *kp_ck_fn(struct kp_ck *c);

kp_ck_fn kp_ck_syscalls, kp_ck_modules, kp_ck_tasks, kp_ck_creds, kp_ck_ftrace, kp_ck_kprobes,
	kp_ck_tracepoints, kp_ck_text, kp_ck_idt, kp_ck_bpf;

#endif
