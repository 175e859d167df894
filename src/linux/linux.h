// SPDX-License-Identifier: MIT
// Kernel-object helpers (lists, tasks, modules, printk, loadavg, syscalls):
// library-internal seams. Each public kp_* helper in kpeek.h is split into
// (1) a layout lookup from BTF (or VMCOREINFO) and (2) a walker/decoder that
// takes the layout explicitly, so unit tests can drive (2) over synthetic
// memory with hand-made layouts.
#ifndef KP_LINUX_H
#define KP_LINUX_H

#include <kpeek/kpeek.h>

#include "lang/layout.h"

// Bounds of the list walkers: no real kernel has this many tasks or
// modules; a list longer than this is corrupt or cyclic.
#define KP_LX_MAX_LIST (4u << 20)
#define KP_LX_MAX_TASKS (4u << 20)
#define KP_LX_MAX_MODULES 65536u

// Brent's cycle detector over a linked list: O(1) memory, finds a cycle that
// does not pass through the head within about twice its length.
struct kp_lx_loop {
	uint64_t saved;
	uint64_t power, steps;
};

static inline void kp_lx_loop_init(struct kp_lx_loop *l, uint64_t first)
{
	l->saved = first;
	l->power = 1;
	l->steps = 0;
}

// Call with each node address after the first; true if node was seen before.
static inline bool kp_lx_loop_step(struct kp_lx_loop *l, uint64_t node)
{
	if (node == l->saved)
		return true;
	if (++l->steps == l->power) {
		l->saved = node;
		l->power *= 2;
		l->steps = 0;
	}
	return false;
}

// Whether type has the member (kp_member_offset() without the error, and
// without loading module BTF for a type the kernel lacks).
static inline bool kp_lx_has_member(struct kp_kernel *k, const char *type, const char *member,
				    uint64_t *off_ret, uint64_t *size_ret)
{
	return kp_member_probe(k, type, member, off_ret, size_ret);
}

// The value of a C expression as a u64 (kp_eval() without the error).
static inline bool kp_lx_eval_u64(struct kp_kernel *k, const char *expr, uint64_t *ret)
{
	struct kp_value *v = NULL;
	struct kp_error *err = kp_eval(k, expr, &v);
	if (!err)
		err = kp_value_to_u64(v, ret);
	kp_value_destroy(v);
	kp_error_destroy(err);
	return !err;
}

// Grows [*lo, *hi) to cover [off, off + size): the span of a struct that
// holds every member a walker reads, so that one read gets them all.
static inline void kp_lx_span_add(uint64_t *lo, uint64_t *hi, uint64_t off, uint64_t size)
{
	if (off < *lo)
		*lo = off;
	if (off + size > *hi)
		*hi = off + size;
}

// kp_list_iter_create() with the list's name for messages ("task list").
struct kp_error *kp_lx_list_iter_create(struct kp_kernel *kernel, uint64_t head, unsigned flags,
					const char *what, struct kp_list_iter **ret);

// ---------------------------------------------------------------- tasks

// Offsets in struct task_struct (from BTF). *_size are member sizes in bytes.
struct kp_lx_task_layout {
	uint64_t tasks;			// struct list_head tasks
	uint64_t pid, tgid;		// pid_t
	uint64_t real_parent;		// struct task_struct *
	uint64_t state, state_size;	// __state (5.14+, u32) or state (long)
	uint64_t exit_state;		// int
	uint64_t flags, flags_size;	// PF_* (unsigned int)
	uint64_t comm;			// char [16]
	bool has_cpu;
	uint64_t cpu;			// thread_info.cpu (x86 5.16+) or cpu
	uint64_t signal;		// struct signal_struct *
	// Threads: signal->thread_head + task->thread_node (3.14+), else the
	// headless ring task->thread_group.
	bool has_thread_node;
	uint64_t thread_node;
	uint64_t signal_thread_head;	// offset in struct signal_struct
	bool has_thread_group;
	uint64_t thread_group;
	// Span [lo, hi) of task_struct covering every member above: one read per task.
	uint64_t lo, hi;
};

struct kp_error *kp_lx_task_layout(struct kp_kernel *kernel, struct kp_lx_task_layout *ret);
// Recomputes lo/hi from the offsets (the test helpers fill offsets by hand).
void kp_lx_task_layout_span(struct kp_lx_task_layout *l);
// kp_task_iter_create() with an explicit layout and init_task address.
struct kp_error *kp_lx_task_iter_create(struct kp_kernel *kernel,
					const struct kp_lx_task_layout *l, uint64_t init_task,
					unsigned flags, struct kp_task_iter **ret);
// /proc/PID/stat's state letter from __state and exit_state (6.1's
// __task_state_index()): "RSDTtXZPI".
char kp_lx_task_state_letter(uint64_t state, uint64_t exit_state);

// per_cpu(runqueues, cpu).curr: the task current on cpu (false if it
// cannot be read). Typed by a cast: BTF need not have runqueues as a VAR (5.10).
bool kp_lx_cpu_curr(struct kp_kernel *kernel, uint64_t cpu, uint64_t *ret);
// The NT_PRSTATUS descriptor (registers) of per_cpu(crash_notes, cpu), copied
// to buf (cap bytes); false where the crash did not save one (QEMU dumps,
// live kernels, a CPU that was not stopped) (crash_notes.c).
#define KP_LX_CRASH_NOTE_MAX 1024	// NT_PRSTATUS: 336 bytes on x86-64, 392 on arm64
bool kp_lx_crash_note(struct kp_kernel *kernel, uint64_t cpu, uint8_t *buf, size_t cap,
		      size_t *len_ret);

// What naming a task as /proc does needs (task_name.c); every member is
// optional (has_*: the kernel has it).
struct kp_lx_task_name_layout {
	bool has_kthread;
	uint64_t kthread_ptr;		// task_struct.worker_private or .set_child_tid
	uint64_t kthread_data;		// struct kthread.data (the worker of a kworker)
	bool has_full_name;
	uint64_t kthread_full_name;	// struct kthread.full_name (5.17+)
	bool has_worker;		// struct worker: desc, current_work, pool
	uint64_t worker_desc, worker_desc_size, worker_current_work, worker_pool;
	bool full_worker_id;		// 6.10+: format_worker_id()
	uint64_t worker_id, worker_rescue_wq, pool_cpu, pool_id, pool_attrs, attrs_nice;
	uint64_t wq_name, wq_name_size;
};

void kp_lx_task_name_layout(struct kp_kernel *kernel, struct kp_lx_task_name_layout *ret);
// The name of the task at task (flags: its PF_*, comm: its comm) as
// /proc/PID/stat shows it, into ret (at most size - 1 characters). On an
// error ret holds comm.
struct kp_error *kp_lx_task_name(struct kp_kernel *kernel, const struct kp_lx_task_name_layout *l,
		     uint64_t task, uint64_t flags, const char *comm, char *ret, size_t size);

// ---------------------------------------------------------------- modules

struct kp_lx_module_layout {
	uint64_t list;			// struct list_head list
	uint64_t name, name_size;	// char name[MODULE_NAME_LEN]
	uint64_t state;			// enum module_state (int)
	bool has_refcnt;
	uint64_t refcnt;		// atomic_t
	// <= 6.3: core_layout / init_layout (/ data_layout) struct module_layout;
	// 6.4+: mem[MOD_MEM_NUM_TYPES] struct module_memory. Either way a list
	// of {base pointer, unsigned int size} records whose sizes add up to
	// /proc/modules' size; base is the first record's (core text / MOD_TEXT).
	unsigned nlayouts;
	uint64_t layout_base[8];	// offset of each record's base (in struct module)
	uint64_t layout_size[8];	// offset of each record's size (unsigned int)
	// /proc/modules' used-by column: mod->source_list of struct module_use
	// (linked by their source_list, naming the user in ->source); and
	// "[permanent]" for init without exit (both CONFIG_MODULE_UNLOAD).
	bool has_uses;
	uint64_t source_list, use_source_list, use_source;
	bool has_init_exit;
	uint64_t init, exit;
	bool has_taints;
	uint64_t taints;		// unsigned long, TAINT_* bits
	uint64_t lo, hi;		// span to read per module
};

struct kp_error *kp_lx_module_layout(struct kp_kernel *kernel, struct kp_lx_module_layout *ret);
void kp_lx_module_layout_span(struct kp_lx_module_layout *l);
struct kp_error *kp_lx_module_iter_create(struct kp_kernel *kernel,
					  const struct kp_lx_module_layout *l, uint64_t modules_head,
					  struct kp_module_iter **ret);

// ---------------------------------------------------------------- printk

// Layout of the lockless ring buffer (5.10+, kernel/printk/printk_ringbuffer.h).
struct kp_lx_prb_layout {
	// struct printk_ringbuffer
	uint64_t desc_ring;		// struct prb_desc_ring
	uint64_t text_data_ring;	// struct prb_data_ring
	// struct prb_desc_ring
	uint64_t count_bits, descs, infos, head_id, tail_id;
	// struct prb_data_ring
	uint64_t size_bits, data;
	// struct prb_desc
	uint64_t desc_size, state_var, text_begin, text_next;
	// struct printk_info
	uint64_t info_size, seq, ts_nsec, text_len, caller_id;
	uint64_t facility;		// u8
	uint64_t flags_byte;		// byte holding flags:5 and level:3
	unsigned flags_shift, level_shift;
};

// The ring buffer's arrays copied out of memory.
struct kp_lx_prb_image {
	unsigned count_bits;		// descs: 1 << count_bits
	const uint8_t *descs;		// (1 << count_bits) * desc_size bytes
	const uint8_t *infos;		// (1 << count_bits) * info_size bytes
	uint64_t head_id, tail_id;
	unsigned size_bits;		// text data: 1 << size_bits
	const uint8_t *data;
};

struct kp_error *kp_lx_prb_layout(struct kp_kernel *kernel, struct kp_lx_prb_layout *ret);
typedef struct kp_error *kp_lx_prb_fn(const struct kp_printk_record *rec, void *arg);
// Decodes the records of an image, oldest first; pure (no memory reads).
struct kp_error *kp_lx_prb_decode(const struct kp_lx_prb_layout *l,
				  const struct kp_lx_prb_image *img, kp_lx_prb_fn *fn,
				  void *arg);
// kp_printk_iter_create() over the ring buffer at prb (struct
// printk_ringbuffer) with an explicit layout.
struct kp_error *kp_lx_printk_iter_create(struct kp_kernel *kernel,
					  const struct kp_lx_prb_layout *l, uint64_t prb,
					  struct kp_printk_iter **ret);


// ---------------------------------------------------------------- taint flags

#define KP_LX_MAX_TAINTS 64	// bits of the kernel's unsigned long taint mask

struct kp_lx_taint_table {
	unsigned count;			// TAINT_FLAGS_COUNT
	char c_true[KP_LX_MAX_TAINTS];	// letter when the bit is set
	char c_false[KP_LX_MAX_TAINTS];	// when it is not (usually ' ')
	bool module[KP_LX_MAX_TAINTS];	// shown for modules (module_flags_taint())
};
// taint_flags[] (taint.c). KP_ERR_NOT_FOUND without the table's symbol or
// types; the read's error, prefixed "taint_flags unreadable", otherwise.
struct kp_error *kp_lx_taint_table(struct kp_kernel *kernel, struct kp_lx_taint_table *ret);

// ---------------------------------------------------------------- module BTF

struct kp_types;
// Adds every loaded module's BTF to types (module_btf.c); true if any type
// was added. Installed with kp_kernel_set_late_types() by kp_kernel_open().
bool kp_lx_module_btf(struct kp_kernel *kernel, struct kp_types *types);

// ---------------------------------------------------------------- module symbols

// The symbols of every loaded module, as /proc/kallsyms lists them (each
// module's kallsyms symtab, strtab and typetab; upper case for what the
// module exports), added to st with the module's name; *added: how many.
struct kp_symtab;
struct kp_error *kp_lx_module_symbols(struct kp_kernel *kernel, struct kp_symtab *st,
				      size_t *added);


// One module's symbols (its struct module at mod, named name) into st:
// for a module missing from the modules list (module_map.c).
struct kp_error *kp_lx_module_symbols_at(struct kp_kernel *kernel, uint64_t mod,
					 const char *name, struct kp_symtab *st, size_t *added);

// ---------------------------------------------------------------- module map

struct kp_lx_range {
	uint64_t start, end;
};

// A module as seen from the modules list, mod_tree and sysfs (module_map.c).
struct kp_lx_mod {
	uint64_t address;		// struct module *
	char name[64];
	int32_t state;			// MODULE_STATE_*
	bool in_list, in_tree, in_sysfs;
	unsigned nranges;
	struct kp_lx_range ranges[8];	// its memory regions
};

struct kp_lx_module_map {
	struct kp_lx_mod *mods;
	size_t n, cap;
	bool have_tree, have_sysfs;	// whether those views were read
	char tree_why[160], sysfs_why[160];	// why not
	struct kp_symtab *hidden_syms;	// symbols of modules not in the list
};

// Fails only when the modules list itself cannot be walked.
struct kp_error *kp_lx_module_map_create(struct kp_kernel *kernel, struct kp_lx_module_map **ret);
void kp_lx_module_map_destroy(struct kp_lx_module_map *m);
// The module whose memory holds address; NULL if none (m may be NULL).
const struct kp_lx_mod *kp_lx_module_map_find(const struct kp_lx_module_map *m, uint64_t address);
// The symbol at address in a module missing from the list.
bool kp_lx_module_map_symbol(const struct kp_lx_module_map *m, uint64_t address,
			     struct kp_symbol *ret);

// ---------------------------------------------------------------- xarray

// struct xarray / struct xa_node (lib/xarray.c; the IDR is one since 4.20).
struct kp_lx_xa_layout {
	uint64_t xa_head;		// struct xarray
	uint64_t node_shift;		// struct xa_node: unsigned char shift
	uint64_t node_slots;		// void __rcu *slots[XA_CHUNK_SIZE]
	unsigned chunk;			// XA_CHUNK_SIZE (64, or 16 with BASE_SMALL)
};

struct kp_error *kp_lx_xa_layout(struct kp_kernel *kernel, struct kp_lx_xa_layout *ret);
typedef struct kp_error *kp_lx_xa_fn(uint64_t index, uint64_t entry, void *arg);
// Calls fn for every pointer entry (not NULL, value or internal entries)
// of the xarray at xa, in index order. Bounded: depth by the index width,
// nodes by KP_LX_MAX_XA_NODES.
#define KP_LX_MAX_XA_NODES (1u << 20)
struct kp_error *kp_lx_xa_walk(struct kp_kernel *kernel, const struct kp_lx_xa_layout *l,
			       uint64_t xa, kp_lx_xa_fn *fn, void *arg);

#endif
