// SPDX-License-Identifier: MIT
// mkbtf: test BTF mimicking kernel types, built with libbpf's btf__add_*:
//   ints (int, unsigned int, long int, long unsigned int, char, unsigned char,
//   _Bool, long long unsigned int), typedefs __u64 -> u64, __kernel_pid_t ->
//   pid_t, pgd_t (typedef of an anonymous struct), struct list_head,
//   enum task_state, enum64 big_enum, int (*)(int), a FUNC do_thing, and
//   struct task_struct (MKBTF_TASK_SIZE bytes):
//     0   unsigned int __state
//     4   union { int a_int; unsigned int a_uint; }          (anonymous)
//     8   struct list_head tasks
//     24  pid_t pid
//     28  pid_t tgid
//     32  char comm[16]
//     48  unsigned int flag_a:1, flag_b:3; int neg:4         (kflag bitfields)
//     56  struct task_struct *parent
//     64  enum task_state state
//     68  _Bool on_cpu
//     72  u64 utime
//     80  struct { int x; int y; }                           (anonymous)
//     88  int (*fn)(int)
//     96  const char *name
//   struct printk_ringbuffer { unsigned long a; }, struct cpumask,
//   struct uts_namespace { char sysname[65]; }
//   VARs: global_counter (long, ".data"), runqueue_cnt (int, ".data..percpu").
// Every function aborts on failure: this is test code.
#ifndef MKBTF_H
#define MKBTF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MKBTF_TASK_SIZE 104

// Raw BTF blob (malloc'ed) and its size.
void *mkbtf_build(size_t *size_ret);
// Hostile but parseable BTF: struct evil (anonymous members containing
// themselves), typedef evil_fn (a prototype with 200 parameters of its own
// pointer type), cyc_t (pointer cycle), loop_t (typedef cycle), struct
// dangling (member of a nonexistent type id).
// dangling: also a member and an array element of type ids that do not exist.
void *mkbtf_build_hostile(bool dangling, size_t *size_ret);
// Writes blob to a temporary file; returns the malloc'ed path.
char *mkbtf_write_tmp(const void *blob, size_t size);

// A synthetic kernel for BTF/value/expression tests: one virtual memory
// segment at MKK_BASE (MKK_SIZE bytes, zero-filled, writable through
// mkk_mem()), a symbol table, and BTF either from a file (btf_path) or
// placed in memory between __start_BTF / __stop_BTF.
#define MKK_BASE 0xffffffff82000000ULL
#define MKK_SIZE 0x20000u
#define MKK_BTF_OFF 0x10000u	// where the in-memory .BTF goes

// MKK_BTF_PATH: blob is the path of a BTF file to load (it may not exist).
// MKK_BTF_UNNAMED: .BTF in memory without __start_BTF/__stop_BTF symbols.
enum mkk_btf { MKK_BTF_FILE, MKK_BTF_MEMORY, MKK_BTF_NONE, MKK_BTF_PATH, MKK_BTF_UNNAMED };

struct kp_kernel;

// blob NULL: mkbtf_build(). The blob is copied.
struct kp_kernel *mkk_create(enum mkk_btf mode, const void *blob, size_t size);
void mkk_destroy(struct kp_kernel *k);
// The kernel's types (its BTF loaded); aborts if they cannot be loaded.
struct kp_types *mkk_types(struct kp_kernel *k);
// Its working BTF (kp_types_btf(mkk_types(k))).
struct btf *mkk_btf(struct kp_kernel *k);
// The BTF file of an MKK_BTF_FILE kernel.
const char *mkk_btf_path(struct kp_kernel *k);
uint8_t *mkk_mem(struct kp_kernel *k);	// byte 0 is MKK_BASE
void mkk_symbol(struct kp_kernel *k, const char *name, uint64_t address, char type);
// Writes a little-endian value at address (inside the segment).
void mkk_put(struct kp_kernel *k, uint64_t address, const void *bytes, size_t len);
void mkk_put_u64(struct kp_kernel *k, uint64_t address, uint64_t v);
void mkk_put_u32(struct kp_kernel *k, uint64_t address, uint32_t v);

// The standard scene of test_value/test_expr (addresses below): init_task
// (pid 0, comm "swapper/0") and other_task (pid 1, "init", untyped symbol)
// linked through tasks, jiffies, avenrun, linux_banner, global_counter (VAR),
// mystery (untyped), do_thing and schedule (text), __per_cpu_offset.
#define MKK_INIT_TASK (MKK_BASE + 0x1000)
#define MKK_OTHER_TASK (MKK_BASE + 0x2000)
#define MKK_JIFFIES (MKK_BASE + 0x3000)
#define MKK_AVENRUN (MKK_BASE + 0x3010)
#define MKK_BANNER (MKK_BASE + 0x3100)
#define MKK_GLOBAL (MKK_BASE + 0x3200)
#define MKK_MYSTERY (MKK_BASE + 0x3300)
#define MKK_PERCPU_OFFSET (MKK_BASE + 0x3400)
#define MKK_PERCPU_AREA (MKK_BASE + 0x4000)	// CPU 0's per-CPU area
#define MKK_RUNQUEUE_CNT 0x20			// per-CPU symbol address
#define MKK_DO_THING 0xffffffff81000100ULL
#define MKK_SCHEDULE 0xffffffff81000200ULL
struct kp_kernel *mkk_scene(void);
// The same scene over other BTF (e.g. a corrupted copy of mkbtf_build()).
struct kp_kernel *mkk_scene_btf(const void *blob, size_t size);

#endif
