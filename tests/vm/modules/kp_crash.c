// SPDX-License-Identifier: GPL-2.0
// kp_crash: a test module for kpeek's panic and bt, built and loaded by the
// QEMU suite like kp_rootkit. Its init calls panic() three functions deep,
// so that the Call Trace the kernel prints (the oracle) has module frames
// ("kp_crash_level3+0x.../0x... [kp_crash]") above the module loader's.
// With oops=1 the deepest function writes through a NULL pointer instead:
// an oops, whose pt_regs the kernel prints and (kdump) saves in the crash
// notes. With softirq=1 the three functions run in a timer's callback
// (TIMER_SOFTIRQ) while init spins with preemption off on the same CPU:
// the panic is on the IRQ stack, in softirq context, above the interrupt
// frame of a task interrupted in this module's init.
#include <linux/jiffies.h>
#include <linux/module.h>
#include <linux/timer.h>

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("kpeek test module: panic() or an oops from a module (QEMU suite only)");

static bool oops;
module_param(oops, bool, 0);
MODULE_PARM_DESC(oops, "write through a NULL pointer instead of calling panic()");
static bool softirq;
module_param(softirq, bool, 0);
MODULE_PARM_DESC(softirq, "crash in a timer callback (softirq) interrupting init");

// Volatile: the compiler may not prove the store faults and drop it.
static int *volatile kp_crash_null;

// noinline and a use of each result: every level keeps its own frame
// (no inlining, no tail call).
static noinline int kp_crash_level3(int depth)
{
	if (oops) {
		*kp_crash_null = depth;
		return depth;
	}
	panic("kp_crash: panic from a module at depth %d%s", depth,
	      in_serving_softirq() ? " in softirq" : "");
}

static noinline int kp_crash_level2(int depth)
{
	int r = kp_crash_level3(depth + 1);

	barrier();
	return r + 1;
}

static noinline int kp_crash_level1(int depth)
{
	int r = kp_crash_level2(depth + 1);

	barrier();
	return r + 1;
}

static struct timer_list kp_crash_timer;
static volatile bool kp_crash_fired;

static void kp_crash_timer_fn(struct timer_list *t)
{
	kp_crash_fired = true;
	kp_crash_level1(1);
}

// Spins (no sleep: the CPU must be in this task when the timer's
// interrupt comes) for at most two seconds of jiffies.
static noinline int kp_crash_spin(void)
{
	unsigned long end = jiffies + 2 * HZ;

	preempt_disable();
	mod_timer(&kp_crash_timer, jiffies + 1);
	while (!kp_crash_fired && time_before(jiffies, end))
		cpu_relax();
	preempt_enable();
	del_timer_sync(&kp_crash_timer);
	return kp_crash_fired ? 0 : -ETIMEDOUT;
}

static int __init kp_crash_init(void)
{
	if (softirq) {
		// Pinned: fired by this CPU, the one init spins on.
		timer_setup(&kp_crash_timer, kp_crash_timer_fn, TIMER_PINNED);
		return kp_crash_spin();
	}
	return kp_crash_level1(1) ? 0 : -EINVAL;
}
module_init(kp_crash_init);
