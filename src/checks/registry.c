// SPDX-License-Identifier: MIT
// The integrity checks kpeek knows (kpeek check) and how one is run: the
// kernel text bounds and the module map every check leans on, then the
// check's own function (one file each in this folder).
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "checks/check.h"
#include "core/kernel.h"
#include "format/source.h"
#include "linux/module/module.h"
#include "util/error.h"

// name, function, what it compares (kpeek check --help), in run order.
#define CHECKS(X)                                                                                  \
	X(syscalls, "syscall tables and dispatchers point at syscall handlers in kernel text")       \
	X(modules, "the modules list, mod_tree and sysfs name the same modules")                     \
	X(tasks, "the task and thread lists, the PID tables, the children lists and the CPUs' current tasks agree") \
	X(creds, "user tasks have credentials of their own process, counted, and euid 0 only from a set-uid-root exec") \
	X(ftrace, "ftrace callbacks are kernel or listed-module code")                                \
	X(kprobes, "kprobe handlers are kernel code")                                                \
	X(tracepoints, "tracepoint probes are kernel code")                                          \
	X(text, "syscall handlers and functions rootkits hook start without a branch out of kernel text") \
	X(idt, "interrupt vectors point into kernel text")                                           \
	X(bpf, "loaded BPF programs, and those calling helpers that write user memory or signal")

#define ENTRY(name, what) { #name, kp_ck_##name, what },
static const struct {
	const char *name;
	kp_ck_fn *fn;
	const char *what;
} checks[] = { CHECKS(ENTRY) };

#define NAME(name, what) #name,
static const char *const names[] = { CHECKS(NAME) NULL };

#define NCHECKS (sizeof(checks) / sizeof(checks[0]))

const char *const *kp_check_names(void)
{
	return names;
}

const char *kp_check_description(const char *name)
{
	for (size_t i = 0; i < NCHECKS; i++)
		if (name && !strcmp(name, checks[i].name))
			return checks[i].what;
	return NULL;
}

// _stext.._etext: on both architectures the core kernel's code, entry
// code included (x86-64 .entry.text, arm64 .entry.text).
static bool text_bounds(struct kp_ck *c)
{
	struct kp_symbol s, e;
	if ((!kp_symbol_find(c->k, "_stext", &s) && !kp_symbol_find(c->k, "_text", &s)) ||
	    !kp_symbol_find(c->k, "_etext", &e) || e.address <= s.address)
		return false;
	c->stext = s.address;
	c->etext = e.address;
	return true;
}

// One run of check i into a new result.
static struct kp_error *run(struct kp_kernel *k, size_t i, unsigned flags, struct kp_check **ret)
{
	struct kp_check *out = kp_ck_result_create(checks[i].name);
	if (!out)
		return &kp_enomem;
	struct kp_ck c = { .k = k, .arch = kp_kernel_arch(k), .flags = flags, .out = out,
			   .live = kp_kernel_source(k)->live };
	struct kp_error *err = NULL;
	if (!text_bounds(&c)) {
		kp_ck_cannot(&c, "no _stext/_etext symbols (where kernel text is)");
	} else {
		err = kp_lx_module_map_create(k, &c.mods);
		if (err && err->code != KP_ERR_NOMEM) {
			// Modules are then unknown: every check that needs them says so.
			snprintf(c.mods_why, sizeof(c.mods_why), "%s", kp_error_message(err));
			kp_error_destroy(err);
			err = NULL;
			c.mods = NULL;
		}
		if (!err)
			err = checks[i].fn(&c);
	}
	kp_lx_module_map_destroy(c.mods);
	if (err) {
		kp_check_destroy(out);
		return err;
	}
	*ret = out;
	return NULL;
}

// A live kernel's finding stands only if every confirming run finds it
// again, each after a longer wait: a module load or a fork-exit takes
// milliseconds on hardware but can take most of a second on a loaded
// emulated CPU (a QEMU TCG guest under churn confirmed an exiting task
// after the single 200 ms wait there was); what a rootkit did stays.
static const long confirm_delay_ns[] = { 200000000L, 500000000L, 1000000000L };

struct kp_error *kp_check_run(struct kp_kernel *k, const char *name, unsigned flags,
			      struct kp_check **ret)
{
	size_t i;
	for (i = 0; i < NCHECKS && (!name || strcmp(name, checks[i].name)); i++)
		;
	if (i == NCHECKS)
		return kp_error_create(KP_ERR_NOT_FOUND, "unknown check '%s'", name ? name : "(null)");
	struct kp_check *out, *again;
	struct kp_error *err = run(k, i, flags, &out);
	if (err)
		return err;
	for (size_t r = 0; r < sizeof(confirm_delay_ns) / sizeof(confirm_delay_ns[0]) && kp_kernel_source(k)->live &&
			   kp_check_status(out) == KP_CHECK_FOUND; r++) {
		struct timespec delay = { confirm_delay_ns[r] / 1000000000L, confirm_delay_ns[r] % 1000000000L };
		nanosleep(&delay, NULL);
		if ((err = run(k, i, flags, &again))) {
			kp_check_destroy(out);
			return err;
		}
		kp_ck_confirm(out, again);
		kp_check_destroy(again);
	}
	*ret = out;
	return NULL;
}
