// SPDX-License-Identifier: MIT
// The kind of a crash (kp_panic.kind), from the kernel's own wording of the
// panic message and the record that started the crash (doc/signature.md
// lists the rules: the kind is part of the signature).
#include <string.h>

#include "linux/panic/panic.h"

static const char *const kind_names[] = {
	[KP_PANIC_NONE] = "none",
	[KP_PANIC_CALL] = "panic",
	[KP_PANIC_OOPS] = "oops",
	[KP_PANIC_BUG] = "BUG",
	[KP_PANIC_WARN] = "warning",
	[KP_PANIC_OOM] = "OOM",
	[KP_PANIC_HUNG_TASK] = "hung task",
	[KP_PANIC_SOFT_LOCKUP] = "soft lockup",
	[KP_PANIC_HARD_LOCKUP] = "hard lockup",
	[KP_PANIC_RCU_STALL] = "RCU stall",
	[KP_PANIC_SYSRQ] = "sysrq",
	[KP_PANIC_NMI] = "NMI",
	[KP_PANIC_MCE] = "machine check",
};

const char *kp_panic_kind_name(enum kp_panic_kind kind)
{
	return (unsigned)kind < sizeof(kind_names) / sizeof(kind_names[0]) ? kind_names[kind] : NULL;
}

static bool starts(const char *s, const char *prefix)
{
	return !strncmp(s, prefix, strlen(prefix));
}

// The kernel's wording, 5.10..7.2: mm/oom_kill.c ("Out of memory: %s
// panic_on_oom is enabled", "System is deadlocked on memory"),
// kernel/hung_task.c, kernel/watchdog.c ("softlockup: hung tasks"),
// kernel/watchdog_perf.c and arch/x86 ("Hard LOCKUP"; 6.6+ buddy detector
// "hardlockup: ..."), kernel/rcu/tree_stall.h ("RCU Stall"),
// kernel/panic.c ("panic_on_warn set ...", 6.2+ "%s: panic_on_warn set"),
// drivers/tty/sysrq.c ("sysrq triggered crash"; the record "sysrq: Trigger a
// crash"), arch/x86/kernel/nmi.c ("NMI: Not continuing", "NMI IOCK error:
// Not continuing"), arch/x86/kernel/cpu/mce ("Fatal machine check", "Machine
// check ..."), arch/*/kernel/traps.c ("Fatal exception"), lib/bug.c.
enum kp_panic_kind kp_lx_panic_kind(const char *message, const char *oops, bool panicked)
{
	// kp_panic.message is the record: "Kernel panic - not syncing: " first.
	const char *m = message, *o = oops;
	if (starts(m, "Kernel panic - not syncing: "))
		m += strlen("Kernel panic - not syncing: ");
	if (strstr(m, "Out of memory") || strstr(m, "System is deadlocked on memory"))
		return KP_PANIC_OOM;
	if (starts(m, "hung_task: blocked tasks"))
		return KP_PANIC_HUNG_TASK;
	if (starts(m, "softlockup: hung tasks") || starts(o, "watchdog: BUG: soft lockup"))
		return KP_PANIC_SOFT_LOCKUP;
	if (strstr(m, "Hard LOCKUP") || starts(m, "hardlockup:"))
		return KP_PANIC_HARD_LOCKUP;
	if (starts(m, "RCU Stall"))
		return KP_PANIC_RCU_STALL;
	if (strstr(m, "panic_on_warn set"))
		return KP_PANIC_WARN;
	if (starts(m, "sysrq triggered crash") || starts(o, "sysrq: Trigger a crash"))
		return KP_PANIC_SYSRQ;
	if (strstr(m, "machine check") || strstr(m, "Machine check"))
		return KP_PANIC_MCE;
	if (starts(m, "NMI") || strstr(m, " NMI "))
		return KP_PANIC_NMI;
	if (starts(o, "kernel BUG at "))
		return KP_PANIC_BUG;
	if (o[0] || starts(m, "Fatal exception"))
		return KP_PANIC_OOPS;
	if (m[0] || panicked)
		return KP_PANIC_CALL;
	return KP_PANIC_NONE;
}
