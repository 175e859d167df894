// SPDX-License-Identifier: GPL-2.0
// kp_crash: a test module for kpeek's panic and bt, built and loaded by the
// QEMU suite like kp_rootkit. Its init calls panic() three functions deep,
// so that the Call Trace the kernel prints (the oracle) has module frames
// ("kp_crash_level3+0x.../0x... [kp_crash]") above the module loader's.
// With oops=1 the deepest function writes through a NULL pointer instead:
// an oops, whose pt_regs the kernel prints and (kdump) saves in the crash
// notes.
#include <linux/module.h>

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("kpeek test module: panic() or an oops from a module (QEMU suite only)");

static bool oops;
module_param(oops, bool, 0);
MODULE_PARM_DESC(oops, "write through a NULL pointer instead of calling panic()");

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
	panic("kp_crash: panic from a module at depth %d", depth);
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

static int __init kp_crash_init(void)
{
	return kp_crash_level1(1) ? 0 : -EINVAL;
}
module_init(kp_crash_init);
