// SPDX-License-Identifier: GPL-2.0
// kp_crash: a test module for kpeek's panic and bt, built and loaded by the
// QEMU suite like kp_rootkit. Its init calls panic() three functions deep,
// so that the Call Trace the kernel prints (the oracle) has module frames
// ("kp_crash_level3+0x.../0x... [kp_crash]") above the module loader's.
#include <linux/module.h>

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("kpeek test module: panic() from a module (QEMU suite only)");

// noinline and a use of each result: every level keeps its own frame
// (no inlining, no tail call).
static noinline int kp_crash_level3(int depth)
{
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
