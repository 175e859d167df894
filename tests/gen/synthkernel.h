// SPDX-License-Identifier: MIT
// The one synthetic x86-64 "kernel" of kpeek's tests: unit tests, the CLI
// goldens (tests/tools/mksynthdump), the fuzz seeds (tests/tools/mkseeds)
// and the fuzz harnesses all build it here. Physical memory with 4-level
// page tables, the kernel's in-memory kallsyms tables, a .BTF blob between
// __start_BTF and __stop_BTF, VMCOREINFO (as a note and as the vmcoreinfo
// page in RAM), CPU notes, init_task and a task list that can be made to
// loop, a hole in the image and a vmalloc mapping. Aborts on failure: this
// is test code.
//
// Physical layout (the kernel image is mapped 2 MiB at SK_TEXT -> phys 0,
// the direct map 1 GiB at SK_DIRECT -> phys 0):
//   0x00000 text (int3, a nop sled at 0x100)
//   0x01000 data: banner, avenrun, jiffies, pointers, init_task (+0x200)
//   0x02000 tasks 1.. (32 x 0x80)     0x03000 the vmcoreinfo page
//   0x04000 kallsyms tables           0x0c000 BTF
//   0x10000 page tables (7 pages used) 0x1c000 the page vmalloc maps
//   0x1d000 a hole (no PT_LOAD or LiME range covers it)   RAM ends at 0x20000
// With processes (sk_opts.procs, synthprocs.h) task_struct grows to 0x100
// bytes (16 tasks at most) and RAM goes on to 0x40000 with their world.
// With the system too (sk_opts.sys, synthsys.h) task_struct grows to 0x200
// bytes, the tasks move to 0x40000 and RAM goes on to 0x60000.
#ifndef KPT_SYNTHKERNEL_H
#define KPT_SYNTHKERNEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mkkallsyms.h"

#define SK_KASLR UINT64_C(0x1e000000)
#define SK_TEXT (UINT64_C(0xffffffff81000000) + SK_KASLR)
#define SK_DIRECT UINT64_C(0xffff888000000000)
#define SK_VMALLOC UINT64_C(0xffffc90000000000)
#define SK_PHYS_BASE (UINT64_C(0) - (SK_TEXT - UINT64_C(0xffffffff80000000)))
#define SK_DATA (SK_TEXT + 0x1000)
#define SK_BANNER (SK_DATA + 0x000)
#define SK_AVENRUN (SK_DATA + 0x100)
#define SK_JIFFIES (SK_DATA + 0x120)
#define SK_POB (SK_DATA + 0x128)
#define SK_PTRS (SK_DATA + 0x140)
#define SK_PARTS (SK_DATA + 0x160)
#define SK_PIDTYPE (SK_DATA + 0x168)
#define SK_FLAG (SK_DATA + 0x16c)
#define SK_NR_CPU_IDS (SK_DATA + 0x170)	// unsigned int: 4 possible CPUs
#define SK_ONLINE_MASK (SK_DATA + 0x178)	// __cpu_online_mask: CPUs 0 and 2
#define SK_EVIL (SK_DATA + 0x180)
#define SK_VMCOREINFO_DATA (SK_DATA + 0x1e0)	// pointer to the vmcoreinfo page
#define SK_VMCOREINFO_SIZE (SK_DATA + 0x1e8)	// and its text's length
#define SK_INIT_TASK (SK_DATA + 0x200)
#define SK_SIGNAL (SK_DATA + 0x300)
#define SK_TASKS_PA UINT64_C(0x2000)
#define SK_MAX_TASKS 32
#define SK_VMCOREINFO_PA UINT64_C(0x3000)
#define SK_KALLSYMS (SK_TEXT + 0x4000)
#define SK_BTF (SK_TEXT + 0xa000)
#define SK_BTF_MAX 0x6000
#define SK_PGT (SK_TEXT + 0x10000)
#define SK_VMALLOC_PA UINT64_C(0x1c000)
#define SK_HOLE (SK_TEXT + 0x1d000)
#define SK_HOLE_END (SK_TEXT + 0x1e000)
#define SK_RAM UINT64_C(0x20000)

// struct task_struct of the synthetic BTF (kpeek takes every offset from BTF).
#define SK_T_STATE 0x00
#define SK_T_FLAGS 0x04
#define SK_T_EXIT_STATE 0x08
#define SK_T_TASKS 0x10
#define SK_T_PID 0x20
#define SK_T_TGID 0x24
#define SK_T_REAL_PARENT 0x28
#define SK_T_PARENT 0x30
#define SK_T_SIGNAL 0x38
#define SK_T_COMM 0x40
#define SK_T_THREAD_GROUP 0x50
#define SK_T_PRIO 0x60	// bitfields prio:7, policy:3
#define SK_T_MM 0x68	// NULL (synthprocs.h puts its own at 0x80)
#define SK_T_SIZE 0x80

enum sk_format {
	SK_ELF,		// physical-only ELF core with a VMCOREINFO note
	SK_ELF_NO_NOTE,	// the same without the note (found by scanning RAM)
	SK_KDUMP,	// kdump-compressed (zlib)
	SK_KDUMP_FLAT,	// makedumpfile's flattened form of it
	SK_LIME,	// LiME version 1: two ranges
	SK_RAW,		// raw physical memory from 0 (kpeek --raw)
};

enum sk_loop {
	SK_LOOP_NONE,
	SK_LOOP_TASKS,		// the last task's tasks.next points back at task 1
	SK_LOOP_SELF,		// the last task's tasks.next points at itself
	SK_LOOP_THREADS,	// task 1's thread_group ring never returns to it
	SK_LOOP_NULL,		// the last task's tasks.next is NULL
	SK_LOOP_MIDDLE,		// the last task's tasks.next points 8 bytes into init_task.tasks
};

// Processes (synthprocs.h): tasks 1 and 2 are processes with memory,
// files, mounts and credentials, tasks 3 on kernel threads.
enum sk_procs {
	SK_PROCS_NONE,
	SK_PROCS_LIST,		// mounts on the namespace's list (up to 6.7)
	SK_PROCS_RBTREE,	// mounts in the namespace's rbtree (6.8+)
};

// The system (synthsys.h): run queues, memory counters, slab caches,
// network, sockets and IRQs, of a recent kernel or an older one.
enum sk_sys {
	SK_SYS_NONE,
	SK_SYS_NEW,		// struct slab, irqstat, sparse_irqs, ... (6.10+)
	SK_SYS_OLD,		// struct page, unsigned int kstat_irqs, irq_desc[], ... (5.10)
};

struct sk_opts {
	enum sk_format format;
	unsigned ntasks;	// besides init_task, at most SK_MAX_TASKS
	enum sk_loop loop;
	unsigned cpus;		// CPUs with NT_PRSTATUS + QEMU notes (ELF only)
	enum sk_procs procs;
	// Called with the physical memory [0, sk_ram_end(o)) once it is
	// built, before the dump is made of it: where tests and fuzzers put
	// what they want to see read.
	void (*edit)(uint8_t *mem, void *arg);
	void *edit_arg;
	enum sk_sys sys;	// needs procs and ntasks >= 12
	// SK_KDUMP: part split_part of split_parts (more than 1) of a split
	// dump, each holding an equal share of the page frames, as
	// makedumpfile --split makes them.
	unsigned split_parts, split_part;
};

struct kp_kernel;
struct kp_error;

void sk_die(const char *what) __attribute__((noreturn));
void sk_put64(uint8_t *m, uint64_t pa, uint64_t v);
void sk_put32(uint8_t *m, uint64_t pa, uint32_t v);
// The end of RAM, the size of a task_struct, and the addresses of task i
// (0: init_task) of o.
uint64_t sk_ram_end(const struct sk_opts *o);
uint64_t sk_task_size(const struct sk_opts *o);
uint64_t sk_task_va(const struct sk_opts *o, unsigned i);
uint64_t sk_task_pa(const struct sk_opts *o, unsigned i);
// A BTF with the task_struct above and a little of everything the type code
// handles: typedefs, qualifiers, bitfields, unions, enums, functions, VARs;
// with o->procs, the types of the process walkers too (synthprocs.h).
// Raw bytes; caller frees.
void *sk_btf_raw(const struct sk_opts *o, uint32_t *size_ret);
// VMCOREINFO text of the synthetic kernel whose kallsyms tables are ks
// (static buffer).
const char *sk_vmcoreinfo(const struct kp_mkkallsyms *ks);
// Builds the dump image in memory; caller frees *buf_ret.
void sk_build(const struct sk_opts *o, uint8_t **buf_ret, size_t *len_ret);
// Builds it into an in-memory file and opens it with kp_kernel_open (not
// SK_RAW).
struct kp_error *sk_open(const struct sk_opts *o, struct kp_kernel **ret);
// Writes an ELF dump of o and its side files into dir: synth.core,
// synth.kallsyms (the symbols as a kallsyms file), synth.btf (raw BTF) and
// synth.layout (the addresses above as shell assignments, derived ones too:
// shells cannot do arithmetic on kernel addresses).
void sk_write_files(const char *dir, const struct sk_opts *o);

#endif
