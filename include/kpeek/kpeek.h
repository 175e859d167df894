// SPDX-License-Identifier: MIT
// libkpeek: read-only access to kernel memory from /proc/kcore and crash dumps,
// with symbols (kallsyms, System.map, VMCOREINFO), types (BTF) and x86-64
// address translation.
//
// Conventions: every function that can fail returns a struct kp_error *, NULL on
// success. Output parameters come last and are named ret / *_ret; they are left
// untouched on failure. Handles are opaque; *_destroy() accepts NULL. The library
// never writes to stdout or stderr and never opens a memory source for writing.
#ifndef KPEEK_H
#define KPEEK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

// ---------------------------------------------------------------- errors

enum kp_error_code {
	KP_ERR_NOMEM = 1,	// out of memory (kp_enomem singleton)
	KP_ERR_NOT_FOUND,	// symbol, type, member or file not found
	KP_ERR_FAULT,		// address not backed by the source (hole, unmapped)
	KP_ERR_OS,		// system call failed; errnum says why
	KP_ERR_FORMAT,		// truncated or corrupt input (ELF, BTF, kdump, ...)
	KP_ERR_INVALID,		// bad argument from the caller
	KP_ERR_TYPE,		// type error in an expression
	KP_ERR_SYNTAX,		// expression syntax error
	KP_ERR_PERMISSION,	// missing privilege (message names the capability)
	KP_ERR_UNSUPPORTED,	// valid input kpeek cannot handle (yet)
	KP_ERR_LOOP,		// cycle or runaway length in a kernel data structure
	KP_ERR_INTERRUPTED,	// stopped by the caller (e.g. SIGINT)
};

struct kp_error {
	enum kp_error_code code;
	int errnum;		// errno for KP_ERR_OS, else 0
	bool has_address;
	uint64_t address;	// first failing address for KP_ERR_FAULT
	char *message;		// one line, no trailing newline
};

// Static singletons: never freed (kp_error_destroy() ignores them).
extern struct kp_error kp_enomem;
extern struct kp_error kp_not_found;

struct kp_error *kp_error_create(enum kp_error_code code, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
// KP_ERR_FAULT with the address recorded.
struct kp_error *kp_error_fault(uint64_t address, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
// KP_ERR_OS; the message gets ": strerror(errnum)" appended. Maps EPERM/EACCES
// to KP_ERR_PERMISSION (errnum kept).
struct kp_error *kp_error_os(int errnum, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
// Returns err with "PREFIX: " prepended to its message (consumes err; copies a
// singleton). Never fails: on out-of-memory the original error is returned.
struct kp_error *kp_error_prefix(struct kp_error *err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void kp_error_destroy(struct kp_error *err);
const char *kp_error_code_name(enum kp_error_code code);

// ---------------------------------------------------------------- kernel handle

struct kp_kernel;

enum kp_space {
	KP_VIRT = 0,	// kernel virtual addresses
	KP_PHYS = 1,	// physical addresses
};

struct kp_open_options {
	const char *core;	// dump file; NULL = live /proc/kcore
	const char *system_map;	// System.map (unrelocated; KASLR offset applied)
	const char *kallsyms;	// kallsyms text file (already relocated)
	const char *btf;	// raw BTF file (default: /sys/kernel/btf/vmlinux live, .BTF from memory for dumps)
	bool raw;		// core is raw physical memory starting at raw_base (no probe)
	uint64_t raw_base;
};

// Opens a memory source, probing its format (ELF kcore/vmcore, kdump-compressed),
// and sets up address translation and symbols. BTF is loaded on first use.
struct kp_error *kp_kernel_open(const struct kp_open_options *opts,
				struct kp_kernel **ret);
void kp_kernel_destroy(struct kp_kernel *kernel);

struct kp_range {
	uint64_t start;
	uint64_t end;	// exclusive
};

struct kp_kernel_info {
	const char *path;		// the file read
	const char *source_kind;	// e.g. "live /proc/kcore", "ELF vmcore (physical only)"
	bool live;
	const char *release;		// uname -r of the kernel, NULL if unknown
	const char *banner;		// "Linux version ..." line, NULL if unknown
	bool has_vmcoreinfo;
	const char *vmcoreinfo_source;	// "dump note", "kcore note", "found in memory at phys 0x..."
	bool has_kaslr_offset;
	uint64_t kaslr_offset;
	bool has_phys_base;
	uint64_t phys_base;
	int paging_levels;		// 4 or 5, 0 if unknown
	bool has_page_offset_base;
	uint64_t page_offset_base;	// start of the direct map
	bool has_pgd;
	uint64_t pgd_phys;		// physical address of the kernel's top page table
	int ncpus;			// CPUs with register notes in the dump (0 live)
	const char *symbol_sources;	// comma-separated, e.g. "kallsyms (memory), vmcoreinfo"
	size_t num_symbols;
	const char *btf_source;		// NULL until BTF is loaded (see kp_kernel_load_btf)
	size_t btf_types;
	// How KASLR offset and page tables were checked when the dump had no
	// VMCOREINFO note ("verified against IDT and CR3 of CPU 0"), else NULL.
	const char *kaslr_check;
};

// Fills *ret; strings are owned by the kernel handle.
void kp_kernel_get_info(struct kp_kernel *kernel, struct kp_kernel_info *ret);
// Ranges backed by the source in one address space; the array is owned by kernel.
size_t kp_kernel_ranges(struct kp_kernel *kernel, enum kp_space space,
			const struct kp_range **ret);
// Loads BTF now (it is otherwise loaded lazily) so that errors can be reported.
struct kp_error *kp_kernel_load_btf(struct kp_kernel *kernel);

// ---------------------------------------------------------------- memory

// Reads exactly len bytes or fails; a fault names the first missing address.
struct kp_error *kp_read(struct kp_kernel *kernel, enum kp_space space,
			 uint64_t address, void *buf, size_t len);
struct kp_error *kp_read_u8(struct kp_kernel *kernel, uint64_t address, uint8_t *ret);
struct kp_error *kp_read_u16(struct kp_kernel *kernel, uint64_t address, uint16_t *ret);
struct kp_error *kp_read_u32(struct kp_kernel *kernel, uint64_t address, uint32_t *ret);
struct kp_error *kp_read_u64(struct kp_kernel *kernel, uint64_t address, uint64_t *ret);
// Reads a NUL-terminated string of at most size-1 bytes into buf (always terminated).
struct kp_error *kp_read_cstr(struct kp_kernel *kernel, uint64_t address,
			      char *buf, size_t size);

// ---------------------------------------------------------------- address translation

enum { KP_VTOP_MAX_LEVELS = 5 };

struct kp_vtop_step {
	const char *name;	// kernel names: "PGD" (top), "P4D" (5-level only), "PUD", "PMD", "PTE"
	uint64_t table;		// physical address of the table
	unsigned index;		// entry index in the table
	uint64_t entry;		// raw entry value
};

struct kp_vtop {
	uint64_t vaddr;
	int levels;		// paging levels walked (4 or 5); 0 if no page tables were used
	int nsteps;		// entries read (stops at the first not-present one)
	struct kp_vtop_step step[KP_VTOP_MAX_LEVELS];
	bool present;		// false: not mapped; the last step shows where it stopped
	uint64_t paddr;
	uint64_t page_size;	// 4 KiB, 2 MiB or 1 GiB
	const char *method;	// "page tables", "kcore segment", ...
};

// Translates a kernel virtual address. An unmapped address is not an error:
// ret->present is false. Errors mean the page tables themselves could not be read.
struct kp_error *kp_vtop(struct kp_kernel *kernel, uint64_t vaddr, struct kp_vtop *ret);

// ---------------------------------------------------------------- symbols

struct kp_symbol {
	const char *name;	// owned by the kernel handle
	uint64_t address;
	uint64_t size;		// 0 if unknown
	char type;		// nm-style type letter ('T', 't', 'D', ...), '?' if unknown
	const char *module;	// NULL for the core kernel
};

// Unknown names fail with KP_ERR_NOT_FOUND and a message suggesting close names.
struct kp_error *kp_symbol_by_name(struct kp_kernel *kernel, const char *name,
				   struct kp_symbol *ret);
// The symbol containing address (or the nearest one below it, within its size
// when known). KP_ERR_NOT_FOUND if none.
struct kp_error *kp_symbol_by_address(struct kp_kernel *kernel, uint64_t address,
				      struct kp_symbol *ret);
// Formats "name+0xoff/0xsize [module]" into buf; returns false if no symbol.
bool kp_symbolize(struct kp_kernel *kernel, uint64_t address, char *buf, size_t size);

// ---------------------------------------------------------------- types and values

struct kp_value;

enum kp_format_flags {
	KP_FORMAT_JSON = 1 << 0,	// JSON instead of C-like text
	KP_FORMAT_HEX = 1 << 1,		// integers in hex
	KP_FORMAT_NO_SYMBOLS = 1 << 2,	// do not symbolize pointers
	KP_FORMAT_ONE_LINE = 1 << 3,	// no newlines / indentation
};

// Evaluates a C-like expression over kernel symbols and BTF types:
//   init_task.comm   init_task.tasks.next   *(unsigned long *)0xffff...
//   avenrun[0]       (struct task_struct *)0xffff...   &init_task   jiffies + 1
struct kp_error *kp_eval(struct kp_kernel *kernel, const char *expr,
			 struct kp_value **ret);
void kp_value_destroy(struct kp_value *value);
// Text of the value with its type, e.g. (char [16])"swapper/0". Caller frees *ret.
struct kp_error *kp_value_format(struct kp_value *value, unsigned flags, char **ret);
// C name of the value's type, e.g. "struct task_struct *". Caller frees *ret.
struct kp_error *kp_value_type_name(struct kp_value *value, char **ret);
// Integer, enum, bool or pointer value, zero/sign-extended to 64 bits.
struct kp_error *kp_value_to_u64(struct kp_value *value, uint64_t *ret);
// Address of an lvalue; KP_ERR_TYPE if the value has none.
struct kp_error *kp_value_address(struct kp_value *value, uint64_t *ret);
// Size in bytes of the value's type.
uint64_t kp_value_size(struct kp_value *value);
// Re-reads the value's bytes from memory (for watch): one read, no allocation.
// Writes up to size bytes into buf and the count into *len_ret.
struct kp_error *kp_value_reread(struct kp_value *value, void *buf, size_t size,
				 size_t *len_ret);

// Byte offset and size of a member path ("tasks", "se.vruntime", "mem[0]") inside
// "struct NAME" / "union NAME" / a typedef name, from BTF.
struct kp_error *kp_member_offset(struct kp_kernel *kernel, const char *type,
				  const char *member, uint64_t *offset_ret,
				  uint64_t *size_ret);
// Size of a named type from BTF (e.g. "struct task_struct").
struct kp_error *kp_type_size(struct kp_kernel *kernel, const char *type,
			      uint64_t *ret);

// ---------------------------------------------------------------- kernel objects

struct kp_task {
	uint64_t address;	// struct task_struct *
	int32_t pid;
	int32_t tgid;
	int32_t ppid;		// real_parent->tgid as ps(1) shows
	char state;		// R S D T t X Z P I, as /proc/PID/stat
	int32_t cpu;
	uint64_t flags;		// PF_*
	char comm[16];
	bool kthread;		// PF_KTHREAD
};

// Every task (thread-group leaders, or all threads when threads is true), in
// init_task.tasks order. Caller frees *tasks_ret.
struct kp_error *kp_tasks(struct kp_kernel *kernel, bool threads,
			  struct kp_task **tasks_ret, size_t *count_ret);

struct kp_module {
	uint64_t address;	// struct module *
	char name[64];
	uint64_t base;		// start of core text
	uint64_t size;		// as /proc/modules
	int32_t refcnt;
	int32_t state;		// MODULE_STATE_*
	char state_name[16];	// "Live", "Loading", "Unloading"
};

struct kp_error *kp_modules(struct kp_kernel *kernel, struct kp_module **mods_ret,
			    size_t *count_ret);

struct kp_loadavg {
	uint64_t avenrun[3];	// fixed point, FSHIFT = 11
	uint32_t running;	// runnable tasks (nr_running), 0 if unknown
	uint32_t total;		// all threads, 0 if unknown
	int32_t last_pid;	// -1 if unknown
};

struct kp_error *kp_loadavg(struct kp_kernel *kernel, struct kp_loadavg *ret);
// "0.42" as /proc/loadavg prints avenrun[i] (LOAD_INT.LOAD_FRAC).
void kp_loadavg_format(uint64_t avenrun, char buf[16]);

struct kp_printk_record {
	uint64_t seq;
	uint64_t ts_nsec;
	int level;		// 0-7
	int facility;
	uint32_t caller_id;
	bool cont;		// LOG_CONT
	const char *text;	// not NUL-terminated; len bytes
	size_t len;
};

typedef struct kp_error *kp_printk_fn(const struct kp_printk_record *rec, void *arg);
// Calls fn for each finalized record in the printk ring buffer, oldest first.
struct kp_error *kp_printk_each(struct kp_kernel *kernel, kp_printk_fn *fn, void *arg);

struct kp_syscall_entry {
	const char *table;	// "sys_call_table", "ia32_sys_call_table", "x64_sys_call", ...
	unsigned nr;
	uint64_t target;
	struct kp_symbol sym;	// sym.name NULL if no symbol
	bool ok;		// points into core kernel text at an expected symbol
	const char *why;	// reason when !ok
};

typedef struct kp_error *kp_syscall_fn(const struct kp_syscall_entry *entry, void *arg);
// Checks every syscall table / dispatcher found; fn is called for every entry.
struct kp_error *kp_check_syscalls(struct kp_kernel *kernel, kp_syscall_fn *fn,
				   void *arg);

// ---------------------------------------------------------------- snapshots

enum kp_snapshot_format {
	KP_SNAPSHOT_ELF = 0,	// ELF vmcore: ET_CORE, one PT_LOAD per physical range
	KP_SNAPSHOT_KDUMP,	// kdump-compressed (not implemented yet: KP_ERR_UNSUPPORTED)
};

// done/total in bytes of memory; called after every chunk read (often: the
// caller throttles its display).
typedef void kp_snapshot_progress_fn(uint64_t done, uint64_t total, void *arg);

struct kp_snapshot_options {
	enum kp_snapshot_format format;
	kp_snapshot_progress_fn *progress;	// may be NULL
	void *arg;
	// Polled between chunks; nonzero stops the snapshot with KP_ERR_INTERRUPTED.
	// A signal handler's volatile sig_atomic_t flag (an int on Linux).
	const volatile int *cancel;	// may be NULL
};

struct kp_snapshot_stats {
	uint64_t ranges;	// PT_LOAD segments written
	uint64_t bytes;		// memory bytes covered
	uint64_t data_bytes;	// non-zero pages written
	uint64_t zero_bytes;	// all-zero pages left as holes
	uint64_t unreadable_bytes;	// pages the source could not read (left as zeros)
	uint64_t file_size;
};

// Copies the physical memory of the source into a new dump file at path
// (mode 0600, never replacing an existing file): the data goes to a temporary
// "PATH.tmp-XXXXXX" in the same directory, renamed to path on success and
// removed on any failure or cancellation. The ELF vmcore has one PT_LOAD per
// physical range (p_paddr = physical, p_vaddr = direct-map address when
// page_offset_base is known, else 0), a PT_NOTE with the source's VMCOREINFO
// and the CPU register notes; all-zero pages are not written (sparse file).
// *ret (may be NULL) is filled on success.
struct kp_error *kp_snapshot_write(struct kp_kernel *kernel, const char *path,
				   const struct kp_snapshot_options *opts,
				   struct kp_snapshot_stats *ret);

#ifdef __cplusplus
}
#endif

#endif
