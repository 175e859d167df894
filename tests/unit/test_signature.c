// SPDX-License-Identifier: MIT
// The kind of a crash and its signature (linux/panic/signature.c): the
// kernel's own wordings, 5.10..7.2 (x86-64 and arm64), classified; the
// title rules of doc/signature.md; and the hash of its worked examples,
// which were computed apart from kpeek (Python, FNV-1a as the document
// states it).
#include <stdio.h>
#include <string.h>

#include "test.h"
#include "linux/panic/panic.h"

struct kind_case {
	const char *message, *oops;
	enum kp_panic_kind want;
};

TEST(kinds_from_the_kernels_wording)
{
	static const struct kind_case cases[] = {
		{ "Kernel panic - not syncing: sysrq triggered crash", "sysrq: Trigger a crash", KP_PANIC_SYSRQ },
		{ "", "Oops: 0002 [#1] PREEMPT SMP NOPTI", KP_PANIC_OOPS },
		{ "Kernel panic - not syncing: Fatal exception", "Internal error: Oops: 0000000096000045 [#1] SMP",
		  KP_PANIC_OOPS },
		{ "Kernel panic - not syncing: Fatal exception", "kernel BUG at mm/slub.c:431!", KP_PANIC_BUG },
		{ "Kernel panic - not syncing: Out of memory: system-wide panic_on_oom is enabled", "",
		  KP_PANIC_OOM },
		{ "Kernel panic - not syncing: System is deadlocked on memory", "", KP_PANIC_OOM },
		{ "Kernel panic - not syncing: hung_task: blocked tasks", "", KP_PANIC_HUNG_TASK },
		{ "Kernel panic - not syncing: softlockup: hung tasks", "watchdog: BUG: soft lockup - CPU#0 stuck for 22s!",
		  KP_PANIC_SOFT_LOCKUP },
		{ "Kernel panic - not syncing: Hard LOCKUP", "", KP_PANIC_HARD_LOCKUP },
		{ "Kernel panic - not syncing: RCU Stall", "", KP_PANIC_RCU_STALL },
		{ "Kernel panic - not syncing: kernel: panic_on_warn set ...", "", KP_PANIC_WARN },
		{ "Kernel panic - not syncing: panic_on_warn set ...", "", KP_PANIC_WARN },
		{ "Kernel panic - not syncing: NMI: Not continuing", "", KP_PANIC_NMI },
		{ "Kernel panic - not syncing: Fatal machine check", "", KP_PANIC_MCE },
		{ "Kernel panic - not syncing: kp_crash: panic from a module at depth 3", "", KP_PANIC_CALL },
		{ "Kernel panic - not syncing: Attempted to kill init! exitcode=0x00000009", "", KP_PANIC_CALL },
		{ "", "", KP_PANIC_NONE },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct kind_case *c = &cases[i];
		// As kp_panic.message holds it: "Kernel panic - not syncing: " first.
		const char *m = c->message;
		enum kp_panic_kind got = kp_lx_panic_kind(m, c->oops, m[0] || c->oops[0]);
		if (got != c->want)
			FAILF("%s / %s: kind %s, want %s", c->message, c->oops, kp_panic_kind_name(got),
			      kp_panic_kind_name(c->want));
	}
	CHECK(kp_panic_kind_name(KP_PANIC_MCE + 1) == NULL);
	CHECK_STR(kp_panic_kind_name(KP_PANIC_HUNG_TASK), "hung task");
}

TEST(titles_lose_numbers_addresses_names_and_configuration)
{
	static const char *const cases[][2] = {
		{ "BUG: kernel NULL pointer dereference, address: 0000000000000000",
		  "BUG: kernel NULL pointer dereference, address: N" },
		{ "Oops: 0002 [#1] PREEMPT SMP NOPTI", "Oops: N" },
		{ "general protection fault, probably for non-canonical address 0xdead000000000100: 0000 [#1] SMP PTI",
		  "general protection fault, probably for non-canonical address X: N" },
		{ "kernel BUG at mm/slub.c:431!", "kernel BUG at mm/slub.c:N!" },
		{ "Unable to handle kernel paging request at virtual address ffff800080000000",
		  "Unable to handle kernel paging request at virtual address X" },
		{ "INFO: task kworker/0:1:123 blocked for more than 120 seconds.",
		  "INFO: task ?:N blocked for more than N seconds." },
		{ "INFO: task sh:77 blocked for more than 122 seconds.", "INFO: task ?:N blocked for more than N seconds." },
		// 7.2's words for a task in io_schedule().
		{ "INFO: task dd:183 blocked in I/O wait for more than 2 seconds.",
		  "INFO: task ?:N blocked in I/O wait for more than N seconds." },
		{ "CPU: 1 PID: 116 Comm: kp_spin Not tainted", "CPU: N PID: N Comm: ? Not tainted" },
		{ "ext4 error on x86_64   with  spaces ", "ext4 error on x86_64 with spaces" },
		{ "watchdog: BUG: soft lockup - CPU#0 stuck for 22s!", "watchdog: BUG: soft lockup - CPU#N stuck for Ns!" },
		{ "Comm: kp_spin", "Comm: ?" },
		{ "deadbeef cafe 0x", "X cafe Nx" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char out[256];
		kp_lx_signature_title(cases[i][0], out, sizeof(out));
		CHECK_STR(out, cases[i][1]);
	}
	// Bounded by the output, however long the input.
	char big[4096], out[32];
	memset(big, '7', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	kp_lx_signature_title(big, out, sizeof(out));
	CHECK_STR(out, "N");
	memset(big, 'a', sizeof(big) - 1);
	kp_lx_signature_title(big, out, sizeof(out));
	CHECK(strlen(out) < sizeof(out));
}

// doc/signature.md's examples.
TEST(hash_of_the_documented_examples)
{
	struct kp_signature s = { .sz = sizeof(s), .kind = KP_PANIC_SYSRQ, .nframes = 5 };
	strcpy(s.title, "sysrq: Trigger a crash");
	const char *f[] = { "sysrq_handle_crash", "__handle_sysrq", "write_sysrq_trigger", "proc_reg_write", "vfs_write" };
	for (int i = 0; i < 5; i++)
		strcpy(s.frames[i], f[i]);
	kp_lx_signature_hash(&s);
	CHECK_U64(s.hash, 0x495f13615104420fULL);
	struct kp_signature o = { .sz = sizeof(o), .kind = KP_PANIC_OOPS, .nframes = 5 };
	strcpy(o.title, "BUG: kernel NULL pointer dereference, address: N");
	const char *g[] = { "kp_crash_level3", "kp_crash_level2", "kp_crash_level1", "kp_crash_init", "do_one_initcall" };
	for (int i = 0; i < 5; i++)
		strcpy(o.frames[i], g[i]);
	kp_lx_signature_hash(&o);
	CHECK_U64(o.hash, 0x4108e7a1cf0bbd25ULL);
	// A frame fewer is another signature.
	o.nframes = 4;
	kp_lx_signature_hash(&o);
	CHECK(o.hash != 0x4108e7a1cf0bbd25ULL);
}

struct frames_case {
	enum kp_panic_kind kind;
	bool blocked;
	const char *stack;	// innermost first; "!" before a frame entered by an interrupt
	const char *want;
};

// The stacks of real crashes (the QEMU suite's consoles and dumps).
TEST(frames_from_where_panic_took_over)
{
	static const struct frames_case cases[] = {
		// 6.1 arm64: kp_crash's panic in softirq, the dump taken while a
		// timer interrupted panic()'s delay loop.
		{ KP_PANIC_CALL, false,
		  "arch_counter_read ktime_get clockevents_program_event tick_program_event hrtimer_interrupt "
		  "arch_timer_handler_virt handle_percpu_devid_irq generic_handle_domain_irq gic_handle_irq "
		  "call_on_irq_stack do_interrupt_handler el1_interrupt el1h_64_irq_handler el1h_64_irq "
		  "!__delay_cycles __delay __const_udelay panic kp_crash_level3 kp_crash_level2 kp_crash_level1 "
		  "kp_crash_timer_fn call_timer_fn __run_timers",
		  "kp_crash_level3 kp_crash_level2 kp_crash_level1 kp_crash_timer_fn call_timer_fn" },
		// The same caught in the delay loop itself.
		{ KP_PANIC_CALL, false,
		  "__delay_cycles __delay __const_udelay panic kp_crash_level3 kp_crash_level2 kp_crash_level1 "
		  "kp_crash_timer_fn call_timer_fn __run_timers",
		  "kp_crash_level3 kp_crash_level2 kp_crash_level1 kp_crash_timer_fn call_timer_fn" },
		// x86-64 kdump of an oops: crash_kexec() from oops_end(), the
		// fault's exception frame, then the function that faulted.
		{ KP_PANIC_OOPS, false,
		  "__crash_kexec crash_kexec oops_end page_fault_oops exc_page_fault asm_exc_page_fault "
		  "!kp_crash_level3 kp_crash_level2 kp_crash_level1 kp_crash_init do_one_initcall do_init_module",
		  "kp_crash_level3 kp_crash_level2 kp_crash_level1 kp_crash_init do_one_initcall" },
		// x86-64 unknown NMI: what the NMI interrupted is not the bug.
		{ KP_PANIC_NMI, false,
		  "delay_tsc panic nmi_panic unknown_nmi_error default_do_nmi exc_nmi end_repeat_nmi "
		  "!default_idle default_idle_call do_idle",
		  "unknown_nmi_error default_do_nmi exc_nmi" },
		// A soft lockup: the watchdog's interrupt is passed over to reach
		// the code that did not stop.
		{ KP_PANIC_SOFT_LOCKUP, false,
		  "delay_tsc panic watchdog_timer_fn __hrtimer_run_queues hrtimer_interrupt "
		  "__sysvec_apic_timer_interrupt sysvec_apic_timer_interrupt asm_sysvec_apic_timer_interrupt "
		  "!spin_forever kp_init do_one_initcall",
		  "spin_forever kp_init do_one_initcall" },
		// An OOM in a user page fault: the page allocator and the fault's
		// way in are passed over, on x86-64 and arm64 alike (one bug,
		// one signature).
		{ KP_PANIC_OOM, false,
		  "__crash_kexec panic out_of_memory __alloc_pages_slowpath __alloc_pages_noprof "
		  "alloc_pages_mpol_noprof vma_alloc_folio_noprof do_anonymous_page __handle_mm_fault "
		  "handle_mm_fault do_user_addr_fault exc_page_fault asm_exc_page_fault",
		  "do_anonymous_page __handle_mm_fault handle_mm_fault" },
		{ KP_PANIC_OOM, false,
		  "__delay __const_udelay panic out_of_memory __alloc_pages_noprof alloc_pages_mpol_noprof "
		  "folio_alloc_mpol_noprof vma_alloc_folio_noprof vma_alloc_zeroed_movable_folio "
		  "do_anonymous_page __handle_mm_fault handle_mm_fault do_page_fault do_translation_fault "
		  "do_mem_abort el0_da el0t_64_sync_handler el0t_64_sync",
		  "do_anonymous_page __handle_mm_fault handle_mm_fault" },
		// A hung task: the blocked task's stack, past the scheduler.
		{ KP_PANIC_HUNG_TASK, true,
		  "__switch_to __schedule schedule schedule_timeout msleep kp_init do_one_initcall do_init_module "
		  "load_module __do_sys_finit_module",
		  "msleep kp_init do_one_initcall do_init_module load_module" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct kp_lx_sig_frame f[64];
		size_t n = 0;
		char buf[1024];
		snprintf(buf, sizeof(buf), "%s", cases[i].stack);
		for (char *save, *w = strtok_r(buf, " ", &save); w && n < 64; w = strtok_r(NULL, " ", &save)) {
			f[n].entered = w[0] == '!';
			f[n].user = false;
			snprintf(f[n].name, sizeof(f[n].name), "%s", w + f[n].entered);
			n++;
		}
		struct kp_signature sig = { .sz = sizeof(sig), .kind = cases[i].kind };
		kp_lx_signature_frames(f, n, cases[i].blocked, &sig);
		char got[1024] = "";
		for (unsigned j = 0; j < sig.nframes; j++)
			snprintf(got + strlen(got), sizeof(got) - strlen(got), "%s%s", j ? " " : "", sig.frames[j]);
		CHECK_STR(got, cases[i].want);
	}
}

int main(void)
{
	RUN(kinds_from_the_kernels_wording);
	RUN(titles_lose_numbers_addresses_names_and_configuration);
	RUN(hash_of_the_documented_examples);
	RUN(frames_from_where_panic_took_over);
	return TEST_SUMMARY();
}
