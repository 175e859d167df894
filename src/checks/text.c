// SPDX-License-Identifier: MIT
// check text: an inline hook overwrites the first bytes of a function with
// a branch to the rootkit's code (jmp rel32, movabs+jmp, push+ret; on
// arm64 b or ldr+br). The kernel itself patches function entries too:
// ftrace turns the fentry nop into a call to ftrace_caller (kernel text)
// or to an ops' trampoline (allocated memory), kprobes put a breakpoint
// there or, optimized, a jmp to a detour buffer. So a branch at a
// function's entry is reported when it leaves kernel text, unless it is
// one of those: a call to a registered ftrace_ops' trampoline, or any
// branch at an address a registered kprobe owns (the kprobes check looks
// at its handlers). The architecture decodes the entry (kp_arch.entry_branch).
//
// Functions checked: every syscall handler the tables and dispatchers
// point at, and the functions rootkits are known to hook (below), where
// the kernel has them.
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arch/arch.h"
#include "checks/check.h"
#include "core/kernel.h"
#include "linux/module/module.h"
#include "util/error.h"
#include "util/le.h"
#include "util/vec.h"

#define ENTRY_BYTES 32
// The patch site ftrace uses is the first instruction after the landing
// pad (x86-64 endbr64, arm64 bti c and mov x9, x30).
#define FENTRY_SITE_MAX 8

// Hooked by Diamorphine, Reptile, KoviD, the ftrace-hook family and
// keyloggers: directory listing (hide files), /proc/net (hide sockets),
// packet sockets (hide traffic), credentials, program loading, input.
static const char *const hooked[] = {
	"filldir", "filldir64", "fillonedir", "compat_filldir", "compat_fillonedir",
	"iterate_dir", "proc_pid_readdir", "proc_root_readdir", "proc_pid_lookup",
	"tcp4_seq_show", "tcp6_seq_show", "udp4_seq_show", "udp6_seq_show",
	"packet_rcv", "packet_rcv_spkt", "tpacket_rcv",
	"vfs_read", "vfs_write", "vfs_statx", "do_sys_openat2", "do_sys_open",
	"inet_ioctl", "kill_pid_info", "find_task_by_vpid",
	"commit_creds", "prepare_creds", "override_creds",
	"load_elf_binary", "do_execveat_common", "audit_log_start",
	"account_process_tick", "input_event", "kbd_event", "n_tty_receive_buf",
	"tty_read", "seq_read", "copy_process", "do_exit",
	NULL,
};

struct known {
	struct kp_ck_addrs trampolines;	// ftrace_ops trampolines
	struct kp_ck_addrs traced;	// functions in an ftrace_ops filter
	bool trace_all;			// an ftrace_ops without a filter
	struct kp_ck_addrs kprobes;	// kprobed addresses
	bool ftrace_known;
};

static struct kp_error *on_traced(struct kp_ck *c, uint64_t ip, void *arg)
{
	struct known *k = arg;
	(void)c;
	return kp_ck_addrs_add(&k->traced, ip) ? NULL : &kp_enomem;
}

static struct kp_error *on_ftrace(struct kp_ck *c, const struct kp_ck_ftrace_ops *o, void *arg)
{
	struct known *k = arg;
	(void)c;
	k->trace_all |= o->all;
	if (!o->trampoline)
		return NULL;
	return kp_ck_addrs_add(&k->trampolines, o->trampoline) ? NULL : &kp_enomem;
}

static struct kp_error *on_kprobe(struct kp_ck *c, uint64_t kprobe, uint64_t addr, void *arg)
{
	struct known *k = arg;
	(void)c;
	(void)kprobe;
	return kp_ck_addrs_add(&k->kprobes, addr) ? NULL : &kp_enomem;
}

static struct kp_error *collect(struct kp_ck *c, struct kp_ck_addrs *f)
{
	struct kp_syscall_iter *it;
	struct kp_error *err = kp_syscall_iter_create(c->k, &it);
	if (!err) {
		const struct kp_syscall_entry *e;
		while (!(err = kp_syscall_iter_next(it, &e)) && e)
			if (kp_ck_in_text(c, e->target) && !kp_ck_addrs_add(f, e->target)) {
				err = &kp_enomem;
				break;
			}
		kp_syscall_iter_destroy(it);
		if (err)
			return err;
	} else if (err == &kp_enomem) {
		return err;
	} else {
		kp_error_destroy(err);	// no syscall tables: the named functions still count
	}
	for (const char *const *n = hooked; *n; n++) {
		struct kp_symbol s;
		if (kp_symbol_find(c->k, *n, &s) && kp_ck_in_text(c, s.address) && !kp_ck_addrs_add(f, s.address))
			return &kp_enomem;
	}
	kp_ck_addrs_sort(f);
	return NULL;
}

static const char *const kinds[] = { "jmp", "call", "breakpoint" };

// What the check learns from ftrace and kprobes before looking at entries.
static struct kp_error *learn(struct kp_ck *c, struct known *k, bool *kprobes_known)
{
	struct kp_error *err = kp_ck_ftrace_ops(c, on_ftrace, on_traced, k);
	k->ftrace_known = !err;
	if (err == &kp_enomem)
		return err;
	kp_error_destroy(err);
	err = kp_ck_kprobe_addrs(c, on_kprobe, k);
	*kprobes_known = !err;
	if (err == &kp_enomem)
		return err;
	kp_error_destroy(err);
	kp_ck_addrs_sort(&k->trampolines);
	kp_ck_addrs_sort(&k->kprobes);
	kp_ck_addrs_sort(&k->traced);
	return NULL;
}

// Why the branch b at the entry of fn is a hook (into why; *target the
// address to report); false if it is the kernel's own (kprobes, ftrace,
// BPF trampolines) or an ftrace call kpeek cannot tell (counted).
static bool judge(struct kp_ck *c, const struct known *k, bool kprobes_known, uint64_t fn,
		  const struct kp_branch *b, char *why, size_t size, uint64_t *target,
		  size_t *unknown_calls)
{
	bool kprobed = kp_ck_addrs_has(&k->kprobes, b->at) || kp_ck_addrs_has(&k->kprobes, fn);
	*target = b->target;
	if (b->kind == KP_BRANCH_TRAP) {
		if (kprobed)
			return false;
		snprintf(why, size, "%s (%s) at the entry, and no kprobe registered there%s",
			 kinds[b->kind], b->insn, kprobes_known ? "" : " (kprobes unreadable)");
		*target = b->at;
		return true;
	}
	if (b->indirect && !kp_ok(kp_read_u64(c->k, b->target, target)))
		*target = 0;
	if (kp_ck_in_text(c, *target) || kprobed)
		return false;
	if (b->kind == KP_BRANCH_CALL && kp_ck_addrs_has(&k->trampolines, *target))
		return false;	// ftrace tracing it (the ftrace check looks at who)
	// A call at ftrace's patch site of a function an ftrace_ops traces,
	// into allocated code no module owns: a BPF trampoline (direct call)
	// or ftrace's own.
	if (b->kind == KP_BRANCH_CALL && b->at - fn <= FENTRY_SITE_MAX &&
	    (k->trace_all || kp_ck_addrs_has(&k->traced, fn)) &&
	    !kp_lx_module_map_find(c->mods, *target))
		return false;
	if (b->kind == KP_BRANCH_CALL && !k->ftrace_known && !kp_lx_module_map_find(c->mods, *target)) {
		(*unknown_calls)++;	// maybe an ftrace trampoline: cannot tell
		return false;
	}
	char where[160];
	kp_ck_where(c, *target, where, sizeof(where));
	snprintf(why, size, "%s (%s) at the entry to %s", kinds[b->kind], b->insn, where);
	return true;
}

struct kp_error *kp_ck_text(struct kp_ck *c)
{
	if (!c->arch->entry_branch) {
		kp_ck_cannot(c, "kpeek cannot decode function entries on %s", c->arch->name);
		return NULL;
	}
	struct known k = {0};
	struct kp_ck_addrs f = {0};
	size_t branches = 0, unknown_calls = 0;
	bool kprobes_known;
	struct kp_error *err;
	if ((err = learn(c, &k, &kprobes_known)) || (err = collect(c, &f)))
		goto out;
	if (!f.n) {
		kp_ck_cannot(c, "no syscall handler and none of the functions rootkits hook has a symbol in kernel text");
		goto out;
	}
	for (size_t i = 0; i < f.n; i++) {
		uint8_t code[ENTRY_BYTES];
		uint64_t fn = f.v[i], target;
		size_t got = kp_kernel_read_partial(c->k, fn, code, sizeof(code), false);
		struct kp_branch b;
		if (!got || !c->arch->entry_branch(code, got, fn, &b))
			continue;
		branches++;
		char why[300], name[200];
		if (!judge(c, &k, kprobes_known, fn, &b, why, sizeof(why), &target, &unknown_calls))
			continue;
		struct kp_symbol s;
		if (kp_ck_symbol(c, fn, &s))
			snprintf(name, sizeof(name), "%s+0x%" PRIx64, s.name, b.at - s.address);
		else
			snprintf(name, sizeof(name), "0x%" PRIx64, b.at);
		if ((err = kp_ck_add(c, target, NULL, why, "%s", name)))
			goto out;
	}
	err = kp_ck_summary(c, "%zu functions checked (syscall handlers and %zu functions rootkits hook), "
			    "%zu start with a branch; %zu ftrace trampolines, %zu kprobes known",
			    f.n, sizeof(hooked) / sizeof(hooked[0]) - 1, branches, k.trampolines.n, k.kprobes.n);
	if (!err && unknown_calls)
		kp_ck_cannot(c, "%zu functions call allocated code at their entry and ftrace_ops cannot be read to tell ftrace trampolines from hooks",
			     unknown_calls);
out:
	kp_ck_addrs_free(&k.trampolines);
	kp_ck_addrs_free(&k.traced);
	kp_ck_addrs_free(&k.kprobes);
	kp_ck_addrs_free(&f);
	return err;
}
