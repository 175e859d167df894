// SPDX-License-Identifier: MIT
// libkpeek: read-only access to kernel memory from /proc/kcore and crash
// dumps, with symbols (kallsyms, System.map, VMCOREINFO), types (BTF) and
// page-table translation, on x86-64 and arm64.
//
// Conventions
//   Every function that can fail returns a struct kp_error *, NULL on
//   success; read it with the kp_error_* getters and free it with
//   kp_error_destroy(). Output parameters come last and are named ret /
//   *_ret; they are left untouched on failure. Handles are opaque;
//   *_destroy() accepts NULL. The library never writes to stdout or stderr,
//   never opens a memory source for writing and never changes libbpf's
//   process-wide settings.
//
// ABI
//   The soname is libkpeek.so.0; only the functions below are exported, in
//   version nodes KPEEK_0.1, KPEEK_0.2 (kp_json_quote), KPEEK_0.3 (kp_panic_get)
//   and KPEEK_0.4 (kp_stack_*). Structs the caller fills or allocates start
//   with a size field: set it with KP_INIT()/KP_OPTS() (sizeof of the
//   header you compiled against) and the library reads and writes only the
//   bytes your version knows. Structs the library returns by const pointer
//   (tasks, modules, records) are owned by the library and only ever grow at
//   the end.
//
// Threads
//   A struct kp_kernel and everything obtained from it (values, iterators)
//   must be used by one thread at a time; distinct kernels are independent.
//   kp_version(), kp_error_*() and kp_loadavg_format() are thread-safe.
#ifndef KPEEK_H
#define KPEEK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define KP_API __attribute__((visibility("default")))
#else
#define KP_API
#endif

// ---------------------------------------------------------------- version

#define KPEEK_VERSION_MAJOR 0
#define KPEEK_VERSION_MINOR 6
#define KPEEK_VERSION_PATCH 0
#define KPEEK_VERSION_STRING "0.6.0"

// The version of the library loaded at run time ("0.2.0"), which may be
// newer than the KPEEK_VERSION_* the caller was compiled with.
KP_API const char *kp_version(void);

// Declares a size-tagged struct: KP_OPTS(kp_open_options, o, .core = "vmcore");
#define KP_OPTS(TYPE, NAME, ...) \
	struct TYPE NAME = { .sz = sizeof(struct TYPE), __VA_ARGS__ }
#define KP_INIT(TYPE, NAME) struct TYPE NAME = { .sz = sizeof(struct TYPE) }

// ---------------------------------------------------------------- errors

enum kp_error_code {
	KP_ERR_NOMEM = 1,	// out of memory
	KP_ERR_NOT_FOUND,	// symbol, type, member or file not found
	KP_ERR_FAULT,		// address not backed by the source (hole, unmapped)
	KP_ERR_OS,		// system call failed; kp_error_errno() says why
	KP_ERR_FORMAT,		// truncated or corrupt input (ELF, BTF, kdump, kernel data)
	KP_ERR_INVALID,		// bad argument from the caller
	KP_ERR_TYPE,		// type error in an expression
	KP_ERR_SYNTAX,		// expression syntax error
	KP_ERR_PERMISSION,	// missing privilege (message names the capability)
	KP_ERR_UNSUPPORTED,	// valid input kpeek cannot handle (yet)
	KP_ERR_LOOP,		// cycle or runaway length in a kernel data structure
	KP_ERR_INTERRUPTED,	// stopped by the caller (e.g. SIGINT)
	// Since 0.6: the output the caller asked for could not be written or
	// created (kp_snapshot_write*: a full disk, a closed pipe, a file
	// size limit); kp_error_errno() says why.
	KP_ERR_OUTPUT,
};

struct kp_error;

KP_API enum kp_error_code kp_error_code(const struct kp_error *err);
// One line, no trailing newline, naming what was wrong and where (file,
// offset, address, symbol). Valid until kp_error_destroy().
KP_API const char *kp_error_message(const struct kp_error *err);
// errno for KP_ERR_OS and KP_ERR_PERMISSION from a system call, else 0.
KP_API int kp_error_errno(const struct kp_error *err);
// The first failing address of a KP_ERR_FAULT; false if there is none.
KP_API bool kp_error_address(const struct kp_error *err, uint64_t *ret);
KP_API void kp_error_destroy(struct kp_error *err);
// "NOT_FOUND" etc.
KP_API const char *kp_error_code_name(enum kp_error_code code);

// ---------------------------------------------------------------- kernel handle

struct kp_kernel;

enum kp_space {
	KP_VIRT = 0,	// kernel virtual addresses
	KP_PHYS = 1,	// physical addresses
};

struct kp_open_options {
	size_t sz;		// sizeof(struct kp_open_options): use KP_OPTS()
	const char *core;	// dump file; NULL = live /proc/kcore
	const char *system_map;	// System.map (unrelocated; KASLR offset applied)
	const char *kallsyms;	// kallsyms text file (already relocated)
	const char *btf;	// BTF file (raw, or an ELF with .BTF); default: the kernel's own
	bool raw;		// core is raw physical memory starting at raw_base (no probe)
	uint64_t raw_base;
	// Architecture of a source that does not say ("x86_64", "arm64"): raw
	// and LiME images without a vmcoreinfo page. NULL: detect.
	const char *arch;
	// The files of one split dump (makedumpfile --split), in any order,
	// read as one (0.6); core is then ignored. They must hold the same
	// dump (its VMCOREINFO and page frames) and, together, every frame.
	const char *const *cores;
	size_t ncores;
	// 0.6: use the btf, system_map and kallsyms files even when they
	// disagree with the dump (the BTF's task_struct does not put "swapper"
	// in init_task.comm, or init_task's tasks links do not point back; the
	// symbol file's linux_banner does not hold the banner); without it that
	// is an error naming the file.
	bool force;
};

// Opens a memory source, probing its format (ELF kcore/vmcore, kdump-
// compressed, LiME/AVML), detects the architecture and sets up address
// translation and symbols. BTF is loaded on first use. opts may be NULL.
KP_API struct kp_error *kp_kernel_open(const struct kp_open_options *opts,
				       struct kp_kernel **ret);
KP_API void kp_kernel_destroy(struct kp_kernel *kernel);

struct kp_range {
	uint64_t start;
	uint64_t end;	// exclusive
};

struct kp_kernel_info {
	size_t sz;			// use KP_INIT(kp_kernel_info, info)
	const char *path;		// the file read
	const char *source_kind;	// e.g. "live /proc/kcore", "ELF vmcore (physical only)"
	bool live;
	const char *arch;		// "x86_64", "arm64"
	uint64_t page_size;
	const char *release;		// uname -r of the kernel, NULL if unknown
	const char *banner;		// "Linux version ..." line, NULL if unknown
	bool has_vmcoreinfo;
	const char *vmcoreinfo_source;	// "dump note", "kcore note", "found in memory at phys 0x..."
	bool has_kaslr_offset;
	uint64_t kaslr_offset;
	// How the layout was checked when the dump had no VMCOREINFO note
	// (the architecture says against which registers), else NULL.
	const char *kaslr_check;
	int ncpus;			// CPUs with register notes in the dump (0 live)
	const char *symbol_sources;	// comma-separated, e.g. "kallsyms (memory), vmcoreinfo"
	size_t num_symbols;
	const char *btf_source;		// NULL until BTF is loaded (see kp_kernel_load_btf)
	size_t btf_types;
	uint32_t possible_cpus;		// nr_cpu_ids, 0 if unknown
	uint32_t online_cpus;		// CPUs in cpu_online_mask, 0 if unknown
	// A kpeek snapshot whose source could not give some pages lists them
	// as lost (kp_snapshot_write()): reads there fail (0.6).
	const struct kp_range *lost;	// physical ranges, owned by the handle
	size_t nlost;
	// The files read (0.6): more than 1 for a split dump's parts. A part
	// opened alone says so in split ("part of a split dump: page frames
	// 0x0-0x10000 of 0x20000; the others were not given"), else NULL:
	// reads of the frames it lacks fail naming them.
	size_t nfiles;
	const char *split;
};

// Fills *ret up to ret->sz bytes; strings are owned by the kernel handle.
KP_API void kp_kernel_get_info(struct kp_kernel *kernel, struct kp_kernel_info *ret);
// Since 0.6: the split field of kp_kernel_info alone, which reads nothing
// (kp_kernel_get_info() loads every symbol and type for its counts): what
// part of a split dump the file opened alone is, or NULL.
KP_API const char *kp_kernel_split(const struct kp_kernel *kernel);

// Since 0.6: a fact the source states in two places that do not agree: the
// release in VMCOREINFO and in linux_banner or init_uts_ns, VMCOREINFO
// against the kernel's own vmcoreinfo_data or a second note, the KASLR
// offset (VMCOREINFO's SYMBOL(_stext) against kallsyms'), the page size.
// kpeek goes by used; other is what the other place says. A forged or
// stale copy shows here; nothing is resolved silently.
struct kp_disagreement {
	const char *fact;		// "release", "vmcoreinfo", "kaslr_offset", "page_size"
	const char *used_source;	// e.g. "VMCOREINFO OSRELEASE"
	const char *used;
	const char *other_source;	// e.g. "linux_banner"
	const char *other;
};
// The disagreements (at most 16), computed on the first call (it may read
// memory and load BTF); the array is owned by kernel.
KP_API size_t kp_kernel_disagreements(struct kp_kernel *kernel,
				      const struct kp_disagreement **ret);

// A fact of the architecture's layout, for display: x86_64 has "phys_base",
// "paging levels", "page_offset_base", "pgd"; arm64 "VA bits",
// "kimage_voffset", "PHYS_OFFSET", "PAGE_OFFSET", "pgd".
struct kp_fact {
	const char *key;	// display name; JSON keys replace spaces with '_'
	enum kp_fact_kind {
		KP_FACT_INT,	// value as a decimal number
		KP_FACT_HEX,	// value as an address
		KP_FACT_STR,	// str
	} kind;
	bool known;		// false: the source does not say
	uint64_t value;
	const char *str;
};
// Fact i of the architecture (0-based); false past the last.
KP_API bool kp_kernel_arch_fact(struct kp_kernel *kernel, size_t i, struct kp_fact *ret);

// Ranges backed by the source in one address space; the array is owned by kernel.
KP_API size_t kp_kernel_ranges(struct kp_kernel *kernel, enum kp_space space,
			       const struct kp_range **ret);
// Loads BTF now (it is otherwise loaded lazily) so that errors can be reported.
KP_API struct kp_error *kp_kernel_load_btf(struct kp_kernel *kernel);

// ---------------------------------------------------------------- memory

// Reads exactly len bytes or fails; a fault names the first missing address.
KP_API struct kp_error *kp_read(struct kp_kernel *kernel, enum kp_space space,
				uint64_t address, void *buf, size_t len);
// Little-endian integers at a kernel virtual address.
KP_API struct kp_error *kp_read_u8(struct kp_kernel *kernel, uint64_t address, uint8_t *ret);
KP_API struct kp_error *kp_read_u16(struct kp_kernel *kernel, uint64_t address, uint16_t *ret);
KP_API struct kp_error *kp_read_u32(struct kp_kernel *kernel, uint64_t address, uint32_t *ret);
KP_API struct kp_error *kp_read_u64(struct kp_kernel *kernel, uint64_t address, uint64_t *ret);
// Reads a NUL-terminated string of at most size-1 bytes into buf (always
// terminated); a fault before the NUL is an error.
KP_API struct kp_error *kp_read_cstr(struct kp_kernel *kernel, uint64_t address,
				     char *buf, size_t size);

// ---------------------------------------------------------------- address translation

enum { KP_VTOP_MAX_LEVELS = 5 };

struct kp_vtop_step {
	const char *name;	// the kernel's name of the level: "PGD", "P4D", "PUD", "PMD", "PTE"
	uint64_t table;		// physical address of the table
	unsigned index;		// entry index in the table
	uint64_t entry;		// raw entry value
	char flags[64];		// the entry's flags as the architecture names them ("P RW NX")
};

struct kp_vtop {
	size_t sz;		// use KP_INIT(kp_vtop, v)
	uint64_t vaddr;
	int levels;		// levels of the page tables (x86-64 4 or 5, arm64 3-5)
	int nsteps;		// entries read (stops at the first not-present one)
	struct kp_vtop_step step[KP_VTOP_MAX_LEVELS];
	bool present;		// false: not mapped; the last step shows where it stopped
	uint64_t paddr;
	uint64_t page_size;	// of the mapping: a page or a block/huge page
	const char *method;	// "page tables"
};

// Translates a kernel virtual address. An unmapped address is not an error:
// ret->present is false. Errors mean the page tables themselves could not
// be read (or the source has none: KP_ERR_UNSUPPORTED).
KP_API struct kp_error *kp_vtop(struct kp_kernel *kernel, uint64_t vaddr, struct kp_vtop *ret);

// ---------------------------------------------------------------- symbols

// A frozen struct: it will not change in libkpeek.so.0.
struct kp_symbol {
	const char *name;	// owned by the kernel handle
	uint64_t address;
	uint64_t size;		// 0 if unknown
	char type;		// nm-style type letter ('T', 't', 'D', ...), '?' if unknown
	const char *module;	// NULL for the core kernel
};

// Unknown names fail with KP_ERR_NOT_FOUND and a message suggesting close names.
KP_API struct kp_error *kp_symbol_by_name(struct kp_kernel *kernel, const char *name,
					  struct kp_symbol *ret);
// The cheap lookup for optional symbols: false if unknown, no suggestions built.
KP_API bool kp_symbol_find(struct kp_kernel *kernel, const char *name, struct kp_symbol *ret);
// Since 0.6: how kpeek found a symbol that no symbol table names (a kernel
// built without CONFIG_KALLSYMS_ALL): "the table of exported symbols
// (__ksymtab)", "BTF's .data..percpu section", "references in FUNCTION", "a
// scan of the kernel image for its shape". NULL for a symbol of kallsyms,
// a System.map or VMCOREINFO. Valid as long as the kernel handle.
KP_API const char *kp_symbol_origin(struct kp_kernel *kernel, const struct kp_symbol *sym);
// The symbol containing address (or the nearest one below it, within its size
// when known). KP_ERR_NOT_FOUND if none.
KP_API struct kp_error *kp_symbol_by_address(struct kp_kernel *kernel, uint64_t address,
					     struct kp_symbol *ret);
// Formats "name+0xoff/0xsize [module]" into buf; returns false if no symbol.
KP_API bool kp_symbolize(struct kp_kernel *kernel, uint64_t address, char *buf, size_t size);

// Every symbol, in address order (symbols at one address in the order their
// source lists them, as /proc/kallsyms does); *ret is NULL at the end and
// valid until the next call.
struct kp_symbol_iter;
KP_API struct kp_error *kp_symbol_iter_create(struct kp_kernel *kernel,
					      struct kp_symbol_iter **ret);
KP_API struct kp_error *kp_symbol_iter_next(struct kp_symbol_iter *it,
					    const struct kp_symbol **ret);
KP_API void kp_symbol_iter_destroy(struct kp_symbol_iter *it);

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
//   container_of(p, struct task_struct, tasks)   per_cpu(runqueues, 1)
KP_API struct kp_error *kp_eval(struct kp_kernel *kernel, const char *expr,
				struct kp_value **ret);
// An lvalue of a named type at a kernel virtual address: type is a C type
// name ("struct task_struct", "unsigned long [3]", "struct list_head *").
KP_API struct kp_error *kp_value_at(struct kp_kernel *kernel, const char *type,
				    uint64_t address, struct kp_value **ret);
KP_API void kp_value_destroy(struct kp_value *value);

// Navigation (each returns a new value; the input is unchanged):
// a member designator of a struct/union or a pointer to one ("comm",
// "se.vruntime", "mem[0].base": C's . and -> alike);
KP_API struct kp_error *kp_value_member(struct kp_value *value, const char *member,
					struct kp_value **ret);
// element index of an array or pointer;
KP_API struct kp_error *kp_value_subscript(struct kp_value *value, int64_t index,
					   struct kp_value **ret);
// *value of a pointer;
KP_API struct kp_error *kp_value_deref(struct kp_value *value, struct kp_value **ret);
// &value of an lvalue;
KP_API struct kp_error *kp_value_address_of(struct kp_value *value, struct kp_value **ret);
// (type)value, C's cast (type is a C type name);
KP_API struct kp_error *kp_value_cast(struct kp_value *value, const char *type,
				      struct kp_value **ret);
// container_of(value, type, member): value points at member of a type.
KP_API struct kp_error *kp_value_container_of(struct kp_value *value, const char *type,
					      const char *member, struct kp_value **ret);

// Text of the value with its type, e.g. (char [16])"swapper/0". Caller frees *ret.
// Output that reaches a cap (depth, size) says so in the text ("<...>").
KP_API struct kp_error *kp_value_format(struct kp_value *value, unsigned flags, char **ret);
// Since 0.6: what a cap left out of a KP_FORMAT_JSON value. JSON keeps its
// types (an array of integers holds only integers; a value past the depth
// limit is null), so the cap is said here instead of inside the value.
struct kp_format_cap {
	size_t sz;		// use KP_INIT(kp_format_cap, cap)
	bool truncated;		// something was left out
	uint64_t not_shown;	// elements and members left out, values made null
	const char *limit;	// "output" or "depth" (static); NULL if not truncated
};
// kp_value_format(), and with KP_FORMAT_JSON what its caps left out (cap
// may be NULL). Since 0.6.
KP_API struct kp_error *kp_value_format_capped(struct kp_value *value, unsigned flags,
					       char **ret, struct kp_format_cap *cap);
// s (len bytes, NULs included) as a quoted JSON string, escaped as
// KP_FORMAT_JSON escapes strings read from memory: valid UTF-8 is kept;
// control characters (C0, DEL, C1 U+0080..U+009F) and bytes that are not
// UTF-8 become \u00XX. Caller frees *ret. Since 0.2.
KP_API struct kp_error *kp_json_quote(const void *s, size_t len, char **ret);
// C name of the value's type, e.g. "struct task_struct *". Caller frees *ret.
KP_API struct kp_error *kp_value_type_name(struct kp_value *value, char **ret);
// Integer, enum, bool or pointer value converted as C converts it to
// uint64_t / int64_t: signed types are sign-extended ((uint64_t)(int)-2 is
// 0xfffffffffffffffe), unsigned ones zero-extended.
KP_API struct kp_error *kp_value_to_u64(struct kp_value *value, uint64_t *ret);
KP_API struct kp_error *kp_value_to_s64(struct kp_value *value, int64_t *ret);
// The string a char array holds or a char pointer points to, at most size-1
// bytes, always NUL-terminated.
KP_API struct kp_error *kp_value_string(struct kp_value *value, char *buf, size_t size);
// Address of an lvalue; KP_ERR_TYPE if the value has none.
KP_API struct kp_error *kp_value_address(struct kp_value *value, uint64_t *ret);
// Size in bytes of the value's type.
KP_API uint64_t kp_value_size(struct kp_value *value);
// True if the value lives in kernel memory (an lvalue): kp_value_reread()
// then reads it again; a computed value (jiffies + 1) has no memory to reread.
KP_API bool kp_value_is_lvalue(struct kp_value *value);
// Re-reads an lvalue's bytes from memory (for watch): one read, no
// allocation. Writes up to size bytes into buf and the count into *len_ret.
// KP_ERR_TYPE for values that are not lvalues.
KP_API struct kp_error *kp_value_reread(struct kp_value *value, void *buf, size_t size,
					size_t *len_ret);

// Byte offset and size of a member designator ("tasks", "se.vruntime",
// "mem[0]") inside "struct NAME" / "union NAME" / a typedef name, from BTF.
// size_ret may be NULL.
KP_API struct kp_error *kp_member_offset(struct kp_kernel *kernel, const char *type,
					 const char *member, uint64_t *offset_ret,
					 uint64_t *size_ret);
// Size of a named type from BTF (e.g. "struct task_struct").
KP_API struct kp_error *kp_type_size(struct kp_kernel *kernel, const char *type,
				     uint64_t *ret);

// Types as objects (KPEEK_0.6), for bindings and type printers: a handle on
// one type of the kernel's BTF, valid while the kernel lives. Names a
// function returns as const char * stay valid until the next call on the
// same handle or its destroy.
struct kp_type;

// What a type is, after its qualifiers (const, volatile...); a typedef is
// KP_TYPE_TYPEDEF (kp_type_target() is what it names).
enum kp_type_kind {
	KP_TYPE_VOID,
	KP_TYPE_INT,
	KP_TYPE_BOOL,
	KP_TYPE_FLOAT,
	KP_TYPE_STRUCT,
	KP_TYPE_UNION,
	KP_TYPE_ENUM,
	KP_TYPE_TYPEDEF,
	KP_TYPE_POINTER,
	KP_TYPE_ARRAY,
	KP_TYPE_FUNCTION,
};

// The type a C type name names ("struct task_struct", "u64 *", "char [16]").
KP_API struct kp_error *kp_type_lookup(struct kp_kernel *kernel, const char *name,
				       struct kp_type **ret);
// The type of a value. KP_ERR_TYPE for a symbol without a type.
KP_API struct kp_error *kp_value_type(struct kp_value *value, struct kp_type **ret);
KP_API void kp_type_destroy(struct kp_type *type);
KP_API enum kp_type_kind kp_type_kind(const struct kp_type *type);
// C name of the type ("struct task_struct *"). Caller frees *ret.
KP_API struct kp_error *kp_type_name(const struct kp_type *type, char **ret);
// The name of a struct, union, enum, typedef or base type without its
// keyword ("task_struct", "u64", "int"); NULL if anonymous or a pointer,
// array or function.
KP_API const char *kp_type_tag(const struct kp_type *type);
// False for void, functions and structs BTF only declares.
KP_API bool kp_type_is_complete(const struct kp_type *type);
// sizeof; KP_ERR_TYPE for an incomplete type.
KP_API struct kp_error *kp_type_sizeof(const struct kp_type *type, uint64_t *ret);
// Signed integers and enums (typedefs looked through).
KP_API bool kp_type_is_signed(const struct kp_type *type);
// Elements of an array (typedefs looked through); 0 for a flexible array or
// a type that is no array.
KP_API uint64_t kp_type_length(const struct kp_type *type);
// What a pointer points to, an array's element, what a typedef names, a
// function's return type. KP_ERR_TYPE for other kinds.
KP_API struct kp_error *kp_type_target(const struct kp_type *type, struct kp_type **ret);
// A pointer to type.
KP_API struct kp_error *kp_type_pointer(const struct kp_type *type, struct kp_type **ret);
// Members of a struct or union, or enumerators of an enum (typedefs
// looked through); 0 for other kinds.
KP_API size_t kp_type_member_count(const struct kp_type *type);
struct kp_type_member {
	size_t sz;		// KP_INIT(kp_type_member, m)
	const char *name;	// NULL for an anonymous struct or union member
	uint64_t bit_offset;	// from the start of the type
	uint32_t bit_size;	// 0 unless a bitfield
};
// Member index (0-based, in declaration order, anonymous members as one
// member); its type into *type_ret unless type_ret is NULL.
KP_API struct kp_error *kp_type_member(const struct kp_type *type, size_t index,
				       struct kp_type_member *ret, struct kp_type **type_ret);
// Enumerator index of an enum: its name and value.
KP_API struct kp_error *kp_type_enumerator(const struct kp_type *type, size_t index,
					   const char **name_ret, int64_t *value_ret);
// An lvalue of type at a kernel virtual address (kp_value_at() by handle).
KP_API struct kp_error *kp_type_value_at(const struct kp_type *type, uint64_t address,
					 struct kp_value **ret);
// An rvalue of an integer, bool, enum or pointer type holding value
// (truncated to the type's size).
KP_API struct kp_error *kp_type_value_from_u64(const struct kp_type *type, uint64_t value,
					       struct kp_value **ret);
// (type)value, as kp_value_cast() with a handle.
KP_API struct kp_error *kp_value_cast_type(struct kp_value *value, const struct kp_type *type,
					   struct kp_value **ret);
// The value's bytes (kp_value_size() of them; an lvalue is read once),
// valid until the value is destroyed. KP_ERR_FAULT when unreadable.
KP_API struct kp_error *kp_value_bytes(struct kp_value *value, const void **ret);

// ---------------------------------------------------------------- lists

// Walks a kernel struct list_head list: from the head at address head,
// yields the address of every node (struct list_head) until the list
// returns to head.
//
// Every walk of kernel objects (lists, tasks, modules, the printk ring)
// ends with an answer or an error, and an error is its last word: once
// kp_*_iter_next() returns one, every later call says the walk is done.
// What was yielded before it is what the walk could read; the error names
// the structure and the address where it stopped. kp_*_iter_status() then
// says how the walk ended (struct kp_walk_status).
//
// In a dump every link is checked (next->prev must point back), so a
// corrupt or hostile list ends with KP_ERR_FORMAT or KP_ERR_LOOP naming the
// node instead of a wrong answer. A node the dump lacks (a page a filtered
// dump left out) ends the forward walk; the nodes behind it, still
// reachable backwards from the head, are yielded in their order before the
// KP_ERR_FAULT that names the missing node.
//
// On a live kernel (/proc/kcore) the list changes while it is read: the
// walk follows next pointers as the kernel's own RCU readers do, and
// starts again from the head when it meets a link that moved, up to
// KP_WALK_LIVE_PASSES passes; the answer is the first pass that met no
// change, else the last pass, marked KP_WALK_LIVE_CHANGED (not an error).
struct kp_list_iter;

enum kp_list_flags {
	// head is the first node of a list with no separate head (crash's
	// "list" without -H): it is yielded too, and the walk stops when it
	// comes back to it.
	KP_LIST_HEAD_IS_NODE = 1 << 0,
	// A singly linked list: each node starts with a next pointer and no
	// prev to check; a NULL next ends it (e.g. file_system_type.next).
	KP_LIST_SINGLE = 1 << 1,
};

KP_API struct kp_error *kp_list_iter_create(struct kp_kernel *kernel, uint64_t head,
					    unsigned flags, struct kp_list_iter **ret);
// The next node's address; *done_ret true (and *node_ret untouched) at the end.
KP_API struct kp_error *kp_list_iter_next(struct kp_list_iter *it, uint64_t *node_ret,
					  bool *done_ret);
// Stops the walk with KP_ERR_LOOP after max nodes (default: 4,194,304).
KP_API void kp_list_iter_set_limit(struct kp_list_iter *it, uint64_t max);
KP_API void kp_list_iter_destroy(struct kp_list_iter *it);

// How a walk ended, once its iterator said it was done (or returned its
// error): the same for every iterator (kp_list_iter_status(),
// kp_task_iter_status(), kp_module_iter_status(), kp_printk_iter_status()).
enum kp_walk_end {
	KP_WALK_COMPLETE,	// every object, from one consistent pass
	// A live kernel changed during every pass: the answer is one pass that
	// reached the end; it may miss objects created or freed meanwhile.
	KP_WALK_LIVE_CHANGED,
	// An error ended the walk early or left objects out (the iterator
	// returned it); what came before it was yielded.
	KP_WALK_STOPPED,
};
// A walk that reached its end may still return an error: objects yielded
// with a part that could not be read (counted in partial, flagged in the
// object, e.g. kp_task.name_partial); its end is then not KP_WALK_STOPPED.

// Passes a walk of a live kernel makes before it answers with a changed one.
#define KP_WALK_LIVE_PASSES 8

struct kp_walk_status {
	size_t sz;		// KP_INIT(kp_walk_status, ...)
	enum kp_walk_end end;
	unsigned restarts;	// passes started again because a live kernel changed
	uint64_t left_out;	// objects found but not read (their memory is not there)
	uint64_t partial;	// objects yielded with a part unread (KPEEK_0.6)
	// The walk stopped at the limit its caller set (kp_list_iter_set_limit):
	// its error is that limit, not the structure's fault (KPEEK_0.6).
	bool at_limit;
};

KP_API void kp_list_iter_status(const struct kp_list_iter *it, struct kp_walk_status *ret);

// ---------------------------------------------------------------- tasks

struct kp_task {
	uint64_t address;	// struct task_struct *
	int32_t pid;
	int32_t tgid;
	int32_t ppid;		// real_parent->tgid as ps(1) shows; -1 if the
				// parent's task_struct cannot be read
	char state;		// R S D T t X Z P I, as /proc/PID/stat
	int32_t cpu;
	uint64_t flags;		// PF_*
	char comm[16];
	bool kthread;		// PF_KTHREAD
	// The name /proc/PID/stat and ps(1) show: comm, or for kernel threads
	// the full name (5.17+) and a workqueue worker's "+desc"/"-desc"
	// ("kworker/0:1-events").
	char name[64];
	// The full name could not be read (a dump without the page holding it):
	// name is then comm, perhaps cut short, and the walk's error says why.
	bool name_partial;
};

struct kp_task_iter;

enum kp_task_flags {
	KP_TASKS_THREADS = 1 << 0,	// every thread, not only thread-group leaders
};

// Tasks in init_task.tasks order (each leader followed by its threads with
// KP_TASKS_THREADS).
KP_API struct kp_error *kp_task_iter_create(struct kp_kernel *kernel, unsigned flags,
					    struct kp_task_iter **ret);
// *ret is NULL at the end; it points into the iterator until the next call.
KP_API struct kp_error *kp_task_iter_next(struct kp_task_iter *it, const struct kp_task **ret);
KP_API void kp_task_iter_destroy(struct kp_task_iter *it);
KP_API void kp_task_iter_status(const struct kp_task_iter *it, struct kp_walk_status *ret);

// The task whose PID (in the initial PID namespace) is pid, threads
// included: its struct task_struct. KP_ERR_NOT_FOUND naming the PID.
KP_API struct kp_error *kp_task_by_pid(struct kp_kernel *kernel, int32_t pid, uint64_t *ret);

// ---------------------------------------------------------------- memory

// One line of /proc/meminfo (0.6).
struct kp_meminfo_item {
	const char *name;	// "MemTotal", "HugePages_Total"
	uint64_t value;
	bool kb;		// value in kB (else a count: HugePages_*)
};

// The lines of /proc/meminfo kpeek can compute for the kernel, in its
// order; a line whose inputs the kernel lacks or kpeek cannot read is not
// there (never 0).
struct kp_meminfo {
	size_t n;
	struct kp_meminfo_item *items;
};

KP_API struct kp_error *kp_meminfo_create(struct kp_kernel *kernel, struct kp_meminfo **ret);
KP_API void kp_meminfo_destroy(struct kp_meminfo *meminfo);

// A slab cache, as a line of /proc/slabinfo 2.1 (SLUB; 0.6).
struct kp_slab_cache {
	uint64_t address;	// struct kmem_cache *
	const char *name;
	uint64_t active_objs, num_objs;
	uint32_t objsize, objperslab, pagesperslab;
	uint64_t active_slabs, num_slabs;
};

struct kp_slab_iter;
// The caches of slab_caches, in its order.
KP_API struct kp_error *kp_slab_iter_create(struct kp_kernel *kernel, struct kp_slab_iter **ret);
// *ret is NULL at the end; it points into the iterator until the next call.
KP_API struct kp_error *kp_slab_iter_next(struct kp_slab_iter *it, const struct kp_slab_cache **ret);
KP_API void kp_slab_iter_status(const struct kp_slab_iter *it, struct kp_walk_status *ret);
KP_API void kp_slab_iter_destroy(struct kp_slab_iter *it);

// Every object of one SLUB cache, allocated or free (crash's kmem -S,
// drgn's slab_cache_for_each_allocated_object; 0.6): the slabs are found in
// the memory map (every page frame of the source whose struct page heads a
// slab of the cache: full slabs are on no list without SLUB debugging),
// their objects in slot order; an object is free when it is on its slab's
// freelist or on the freelist of a CPU whose slab it is (hardened freelist
// pointers decoded), or when it is in one of the cache's sheaves (6.18+:
// each CPU's main and spare sheaf, the nodes' barns' full sheaves), which
// /proc/slabinfo counts as active.
struct kp_slab_object {
	uint64_t address;	// the object's start (after its left red zone)
	uint64_t slab;		// struct slab * (struct page * before 5.17)
	uint64_t pfn;		// the slab's first page frame
	uint32_t index;		// the object's slot in the slab
	uint32_t objects;	// the slab's objects
	bool allocated;
};

struct kp_slab_object_iter;
// The cache is named (the first of slab_caches with that name) or, when
// name is NULL, at address cache. KP_ERR_NOT_FOUND when no cache has the name.
KP_API struct kp_error *kp_slab_object_iter_create(struct kp_kernel *kernel, const char *name, uint64_t cache,
						   struct kp_slab_object_iter **ret);
// The cache found: its struct kmem_cache *, name, object and slot size.
KP_API void kp_slab_object_iter_cache(const struct kp_slab_object_iter *it, uint64_t *cache_ret,
				      const char **name_ret, uint32_t *object_size_ret, uint32_t *slot_size_ret);
// *ret is NULL at the end; it points into the iterator until the next call.
// A slab whose freelist is corrupt (leaves the slab, loops) or cannot be
// read is left out and named in the error the walk ends with.
KP_API struct kp_error *kp_slab_object_iter_next(struct kp_slab_object_iter *it, const struct kp_slab_object **ret);
KP_API void kp_slab_object_iter_status(const struct kp_slab_object_iter *it, struct kp_walk_status *ret);
KP_API void kp_slab_object_iter_destroy(struct kp_slab_object_iter *it);

// ---------------------------------------------------------------- pages and addresses

// A page frame's struct page, decoded as crash's `kmem -p` and page-types
// show it (0.6). The struct page is found through the sparse memory model
// that VMCOREINFO describes (mem_section, SECTION_SIZE_BITS).
struct kp_page {
	uint64_t pfn;
	uint64_t page;		// struct page *
	uint64_t flags;		// page->flags (node, zone and section in its high bits)
	size_t nflags;
	// The PG_ flags set, named as enum pageflags names them, lowercased
	// without "PG_" ("locked", "slab", "head"), in bit order.
	const char *const *flag_names;
	int32_t refcount;	// _refcount
	bool has_mapcount;	// false for a typed page (page_type holds a type)
	int32_t mapcount;	// _mapcount + 1
	uint32_t page_type;	// the word _mapcount shares (0 if the kernel has none)
	const char *type;	// the type page_type holds ("buddy", "slab", "table"...), NULL if none
	uint64_t mapping;	// page->mapping, low bits included
	// What mapping is: "anon", "ksm", "movable" (its low bits), "file"
	// (an address_space), "slab" (slab pages keep their cache there or
	// beside it); NULL when it is 0.
	const char *mapping_kind;
	uint64_t inode;		// file: mapping->host (struct inode *), else 0
	uint64_t ino;		// file: the inode's i_ino
	uint64_t index;		// page->index (file offset in pages, or the anon index)
	uint64_t head;		// the compound head's struct page * (page itself if not a tail)
	uint64_t head_pfn;
	bool compound;		// part of a compound page (its head or a tail)
	bool tail;
	uint32_t order;		// the compound page's order (0 if not compound)
	uint64_t slab_cache;	// slab pages: struct kmem_cache * (0 otherwise)
	const char *slab_cache_name;
};

// The struct page of pfn, decoded. KP_ERR_NOT_FOUND if the kernel has no
// struct page for it (no memory section, or one without a memory map).
KP_API struct kp_error *kp_page_create(struct kp_kernel *kernel, uint64_t pfn, struct kp_page **ret);
KP_API void kp_page_destroy(struct kp_page *page);
// The page frame number of an address: a physical one (KP_PHYS) or a
// kernel virtual one, translated through the page tables.
KP_API struct kp_error *kp_page_pfn(struct kp_kernel *kernel, enum kp_space space, uint64_t address,
				    uint64_t *ret);

// The direct map's (linear map's) address of a physical address; false if
// the architecture cannot say (0.6).
KP_API bool kp_phys_to_virt(struct kp_kernel *kernel, uint64_t paddr, uint64_t *ret);

// What an address is (0.6), one fact of kp_whatis_create(): crash's
// `kmem ADDR`, drgn's identify_address().
enum kp_whatis_kind {
	KP_WHATIS_SYMBOL,	// in the core kernel's image: sym, offset, section
	KP_WHATIS_MODULE,	// in a module: sym (sym.module names it), offset
	KP_WHATIS_SLAB,		// in a slab object: slab
	KP_WHATIS_TASK,		// in a task_struct: task
	KP_WHATIS_STACK,	// in a task's kernel stack: task
	KP_WHATIS_PAGE,		// in the memory map (vmemmap): the struct page of pfn, offset
	KP_WHATIS_DIRECT,	// in the direct map: pfn, paddr
	KP_WHATIS_REGION,	// in an area of the address space: region, start, end
	KP_WHATIS_PHYSICAL,	// a physical address: pfn, paddr, in_dump, has_page, memory
	KP_WHATIS_VMALLOC,	// in a vmalloc area: start, end, caller, caller_sym
	// In a CPU's per-CPU area: cpu; sym and offset for a static per-CPU
	// variable (sym.name NULL past them: the area's dynamic part, offset
	// from start); [start, end) the CPU's unit.
	KP_WHATIS_PERCPU,
};

enum kp_slab_state {
	KP_SLAB_ALLOCATED,
	KP_SLAB_FREE,		// on the slab's freelist, a CPU's freelist for it, or in a sheaf
	KP_SLAB_UNKNOWN,	// a freelist could not be read or is corrupt: note says why
	KP_SLAB_OUTSIDE,	// in the slab but in no object (its unused tail)
};

struct kp_whatis_fact {
	enum kp_whatis_kind kind;
	const char *kind_name;		// "symbol", "module", "slab", "task", "stack", "page", "direct", "region", "physical", "vmalloc", "percpu"
	struct kp_symbol sym;		// symbol, module
	uint64_t offset;		// symbol, module, percpu: from sym.address; page: in the struct page
	const char *section;		// symbol: "text", "rodata", "data", "init", "bss"; NULL if unknown
	struct {
		uint64_t cache;		// struct kmem_cache *
		const char *cache_name;
		uint64_t slab;		// struct slab * (struct page * before 5.17)
		uint64_t object;	// the object's start
		int64_t offset;		// address - object (negative in its left red zone)
		uint32_t object_size;	// s->object_size
		uint32_t slot_size;	// s->size: the object with its metadata
		enum kp_slab_state state;
	} slab;
	struct {
		uint64_t task;		// struct task_struct *
		int32_t pid;
		char comm[16];
		uint64_t stack;		// stack: task->stack (its lowest address)
		uint64_t stack_size;
		uint64_t from_top;	// stack: stack + stack_size - address
	} task;
	uint64_t pfn, paddr;		// page, direct, physical
	bool in_dump;			// physical: the source holds the byte
	bool has_page;			// physical: the kernel has a struct page for pfn
	const char *region;		// region: "vmalloc", "modules", "fixmap"...
	uint64_t start, end;		// region, vmalloc, percpu: [start, end) (vmalloc: as /proc/vmallocinfo, guard page included)
	uint64_t caller;		// vmalloc: the caller that made the area, 0 if none (vm_map_ram)
	struct kp_symbol caller_sym;	// vmalloc: its symbol (name NULL if unknown)
	// physical: the top-level entry of /proc/iomem (iomem_resource)
	// holding it ("System RAM", "Reserved", "PCI Bus 0000:00"...) and the
	// innermost one below it ("Kernel code"; NULL if none), NULL if none
	// or unknown.
	const char *memory, *memory_detail;
	const char *note;		// why part of the fact is unknown, or NULL
	uint32_t cpu;			// percpu: the CPU whose copy holds the address
};

struct kp_whatis {
	uint64_t address;
	enum kp_space space;
	size_t nfacts;
	const struct kp_whatis_fact *facts;	// most specific first
	// Every walk that could not be done, each with its error ("the task
	// list: ...; the vmalloc areas: ..."), NULL if everything was checked.
	const char *note;
};

// Every fact kpeek can establish about a kernel virtual (KP_VIRT) or a
// physical (KP_PHYS) address; no fact is not an error. Slab objects are
// SLUB's; tasks are those of the task list (threads included).
KP_API struct kp_error *kp_whatis_create(struct kp_kernel *kernel, enum kp_space space, uint64_t address,
					 struct kp_whatis **ret);
KP_API void kp_whatis_destroy(struct kp_whatis *whatis);

// ---------------------------------------------------------------- network

// A network interface, as `ip addr` and /proc/net/dev show it (0.6).
struct kp_netdev {
	uint64_t address;	// struct net_device *
	uint64_t netns;		// the inode number of its network namespace
	int32_t index;
	char name[16];
	uint32_t flags;		// dev->flags: IFF_UP, IFF_LOOPBACK... (uapi/linux/if.h)
	uint32_t mtu;
	uint8_t mac[32];
	uint32_t mac_len;
	size_t naddrs;
	const char *const *addrs;	// "10.0.0.1/24", "fe80::1/64": IPv4 first
	// rx/tx counters, when kpeek knows where the kernel keeps them for the
	// driver: stats_source says which ("stats", "lstats", "stats+tstats",
	// "stats+dstats"); a driver with counters of its own has none.
	bool has_stats;
	const char *stats_source;
	uint64_t rx_bytes, rx_packets, tx_bytes, tx_packets;
	size_t addrs_not_shown;	// addresses past the first 256, not in addrs
};

struct kp_netdev_iter;
// The interfaces of every network namespace, namespaces in
// net_namespace_list order, interfaces in each one's dev_base_head order.
KP_API struct kp_error *kp_netdev_iter_create(struct kp_kernel *kernel, struct kp_netdev_iter **ret);
// *ret is NULL at the end; it points into the iterator until the next call.
KP_API struct kp_error *kp_netdev_iter_next(struct kp_netdev_iter *it, const struct kp_netdev **ret);
KP_API void kp_netdev_iter_status(const struct kp_netdev_iter *it, struct kp_walk_status *ret);
KP_API void kp_netdev_iter_destroy(struct kp_netdev_iter *it);

// A socket, as a line of `ss -a -p` (0.6).
struct kp_socket {
	uint64_t sock;		// struct sock * (inet_timewait_sock, request_sock)
	const char *netid;	// "tcp", "udp", "raw", "u_str", "u_dgr", "u_seq"
	const char *state;	// ss's names: "ESTAB", "LISTEN", "UNCONN", "TIME-WAIT"...
	uint16_t family;	// AF_INET, AF_INET6, AF_UNIX
	// "10.0.0.1:80", "[::1]:22", "0.0.0.0:*" (port 0 as *); a unix
	// socket's path, "@name" (abstract) or "*"; raw: ADDRESS:PROTOCOL.
	const char *local, *peer;
	uint64_t inode;		// its socket inode; 0 for time-wait and request sockets
	uint64_t peer_inode;	// unix: the peer's inode (0: none)
	uint64_t netns;		// the inode number of its network namespace
	size_t npids;
	const int32_t *pids;	// the processes whose fd tables hold it
};

struct kp_socket_iter;
// The sockets of the kernel's tables: TCP (listening, then established and
// time-wait), UDP, raw (IPv4 and IPv6), then unix.
KP_API struct kp_error *kp_socket_iter_create(struct kp_kernel *kernel, struct kp_socket_iter **ret);
// *ret is NULL at the end; it points into the iterator until the next call.
KP_API struct kp_error *kp_socket_iter_next(struct kp_socket_iter *it, const struct kp_socket **ret);
KP_API void kp_socket_iter_status(const struct kp_socket_iter *it, struct kp_walk_status *ret);
KP_API void kp_socket_iter_destroy(struct kp_socket_iter *it);

// ---------------------------------------------------------------- interrupts

// An interrupt descriptor, as a line of /proc/interrupts (0.6).
struct kp_irq {
	uint64_t desc;		// struct irq_desc *
	uint32_t irq;
	uint32_t nr_irqs;	// IRQ numbers are below it
	uint32_t ncpus;		// nr_cpu_ids: counts has one per CPU number
	const uint64_t *counts;	// kstat_irqs per CPU (0 for a CPU not possible)
	uint64_t total;
	// irq_data.chip->name; "-" for a chip without a name, NULL without a
	// chip (/proc/interrupts: "None").
	const char *chip;
	// The function the chip prints its name with instead (irq_print_chip,
	// GICv2's gic_irq_print_chip: "GIC-0"), a symbol or hex; NULL if none.
	const char *chip_print;
	bool has_hwirq;		// in an IRQ domain: hwirq is its number there
	uint64_t hwirq;
	const char *handler;	// desc->name, the flow ("edge", "fasteoi"); NULL if none
	size_t nactions;
	const char *const *actions;	// the handlers' names, desc->action's order
	// What /proc/interrupts leaves out: the line is hidden (IRQ_HIDDEN,
	// 5.11+), or its only action is the chained_action placeholder (a
	// chained handler; listed when it counted).
	bool hidden, chained;
};

struct kp_irq_iter;
// Every IRQ descriptor (the sparse tree or the irq_desc array), in IRQ
// order; those /proc/interrupts hides too (kp_irq_shown() tells).
KP_API struct kp_error *kp_irq_iter_create(struct kp_kernel *kernel, struct kp_irq_iter **ret);
// *ret is NULL at the end; it points into the iterator until the next call.
KP_API struct kp_error *kp_irq_iter_next(struct kp_irq_iter *it, const struct kp_irq **ret);
KP_API void kp_irq_iter_status(const struct kp_irq_iter *it, struct kp_walk_status *ret);
KP_API void kp_irq_iter_destroy(struct kp_irq_iter *it);
// Whether /proc/interrupts lists q (kernel/irq/proc.c show_interrupts()):
// not hidden, and a real handler or a count.
KP_API bool kp_irq_shown(const struct kp_irq *q);

// ---------------------------------------------------------------- run queues

// A task on a run queue (0.6).
struct kp_rq_task {
	uint64_t task;		// struct task_struct *
	int32_t pid;
	char comm[16];
	// The scheduling class: "dl", "rt", "fair", and for the current task
	// also "stop", "ext", "idle" (its sched_class); "?" if unknown.
	const char *sched_class;
	int32_t prio;		// task->prio: 0-99 real-time, 100-139 normal
	uint64_t vruntime;	// fair tasks: se.vruntime (ns)
};

// What one CPU's run queue holds (0.6).
struct kp_rq {
	uint32_t cpu;
	uint64_t rq;		// struct rq *
	uint32_t nr_running;	// rq->nr_running
	struct kp_rq_task current;	// rq->curr (the idle task when idle)
	// The queued tasks in the order the scheduler would pick them: the
	// deadline tree, the real-time priority lists, then the fair tree,
	// task groups' queues in place of their entities.
	size_t nqueued;
	const struct kp_rq_task *queued;
};

struct kp_runq_iter;
// The run queues of the possible CPUs, in CPU order.
KP_API struct kp_error *kp_runq_iter_create(struct kp_kernel *kernel, struct kp_runq_iter **ret);
// *ret is NULL at the end; it points into the iterator until the next call.
KP_API struct kp_error *kp_runq_iter_next(struct kp_runq_iter *it, const struct kp_rq **ret);
KP_API void kp_runq_iter_status(const struct kp_runq_iter *it, struct kp_walk_status *ret);
KP_API void kp_runq_iter_destroy(struct kp_runq_iter *it);

// When a task last ran (0.6), as crash's ps -m tells how long a task has
// not run: its se.exec_start, which the scheduler sets from the task clock
// of its CPU's run queue each time it charges the task (last as it leaves
// the CPU), and that clock now. ns; a sleeping task's since is how long it
// has slept (on a dump: up to when the dump was taken; the clock of an
// idle CPU stands still until the CPU wakes, so since can be short).
struct kp_task_last_ran {
	int32_t cpu;		// the CPU it last ran on (task_cpu())
	uint64_t exec_start;	// task->se.exec_start (as /proc/PID/sched)
	uint64_t clock_task;	// per_cpu(runqueues, cpu).clock_task
	uint64_t since;		// clock_task - exec_start, 0 if not after
};
KP_API struct kp_error *kp_task_last_ran(struct kp_kernel *kernel, uint64_t task,
					 struct kp_task_last_ran *ret);

// A process's memory sizes, as /proc/PID/status shows them (0.6), in kB.
// The resident counters are the kernel's own (mm->rss_stat): summed with
// their per-CPU parts on 6.2+, where /proc up to 6.15 shows the shared
// part alone and so can be lower by less than a batch per CPU.
struct kp_task_mem {
	uint64_t mm;		// struct mm_struct *
	uint64_t vm_peak, vm_size, vm_lck, vm_pin, vm_hwm, vm_rss;
	uint64_t rss_anon, rss_file, rss_shmem;
	uint64_t vm_data, vm_stk, vm_exe, vm_lib;
	uint64_t vm_pte;	// UINT64_MAX: the kernel does not count page tables
	uint64_t vm_swap;
};
// The memory of the task at task (struct task_struct *): KP_ERR_INVALID
// for a kernel thread, KP_ERR_NOT_FOUND for a task whose memory is gone
// (it exited), as kp_user_create().
KP_API struct kp_error *kp_task_mem(struct kp_kernel *kernel, uint64_t task, struct kp_task_mem *ret);
// The lines of m as /proc/PID/status prints them, in its order ("VmPeak"
// .. "VmSwap", kb set; VmPTE left out where the kernel does not count page
// tables): ret holds KP_TASK_MEM_LINES items; returns how many it filled.
#define KP_TASK_MEM_LINES 15
KP_API size_t kp_task_mem_lines(const struct kp_task_mem *m, struct kp_meminfo_item *ret);

// ---------------------------------------------------------------- user memory

// A process's user memory, read through its own page tables (mm->pgd),
// never the kernel's (0.6).
struct kp_user;

// The user memory of the task at task (struct task_struct *). A kernel
// thread has none: KP_ERR_INVALID saying so.
KP_API struct kp_error *kp_user_create(struct kp_kernel *kernel, uint64_t task,
				       struct kp_user **ret);
// size bytes at the user address. A page that is not in memory (never
// touched, swapped out, a file page not in the page cache, or not in the
// dump) is KP_ERR_FAULT naming the address, never zeros.
KP_API struct kp_error *kp_user_read(struct kp_user *user, uint64_t address, void *buf,
				     size_t size);
KP_API void kp_user_destroy(struct kp_user *user);

// The bytes of /proc/PID/cmdline and /proc/PID/environ of the task: the
// arguments (or environment) each followed by a NUL, as the kernel's own
// files give them (a process that rewrote its arguments, as setproctitle()
// does, gives what the kernel would); those of a task that exited (its
// memory released) are empty, as the kernel's files read, and a kernel
// thread's are an error. Malloc'ed, NUL-terminated beyond *len_ret.
KP_API struct kp_error *kp_task_cmdline(struct kp_kernel *kernel, uint64_t task, char **ret,
					size_t *len_ret);
KP_API struct kp_error *kp_task_environ(struct kp_kernel *kernel, uint64_t task, char **ret,
					size_t *len_ret);
// The path of a file as /proc shows it (d_path() from PID 1's root): mnt
// a struct vfsmount *, dentry a struct dentry * (a struct path's two
// members); " (deleted)" after an unlinked file, "pipe:[1234]" and the like
// for pseudo files. Caller frees *ret. KPEEK_0.6.
KP_API struct kp_error *kp_d_path(struct kp_kernel *kernel, uint64_t mnt, uint64_t dentry,
				  char **ret);

// ---------------------------------------------------------------- memory maps

// One mapping of a process, as a line of /proc/PID/maps (0.6).
struct kp_vma {
	uint64_t address;	// struct vm_area_struct *
	uint64_t start, end;
	uint64_t flags;		// VM_*
	char perms[5];		// "r-xp": read, write, execute, shared or private
	uint64_t offset;	// in the file, bytes
	uint32_t dev_major, dev_minor;	// of the file's inode
	uint64_t inode;
	uint64_t file;		// struct file *, 0 for an anonymous mapping
	// The file's path (d_path from PID 1's root, " (deleted)" after an
	// unlinked file), or what the kernel calls the mapping ("[heap]",
	// "[stack]", "[vdso]", "[vvar]", "[vsyscall]"), or "".
	const char *path;
};

struct kp_vma_iter;
// The mappings of the task at task, in address order (maple tree 6.1+,
// mmap list before), then the gate VMA where the kernel has one. A kernel
// thread has none: KP_ERR_INVALID.
KP_API struct kp_error *kp_vma_iter_create(struct kp_kernel *kernel, uint64_t task,
					   struct kp_vma_iter **ret);
// *ret is NULL at the end; it points into the iterator until the next call.
KP_API struct kp_error *kp_vma_iter_next(struct kp_vma_iter *it, const struct kp_vma **ret);
KP_API void kp_vma_iter_status(const struct kp_vma_iter *it, struct kp_walk_status *ret);
KP_API void kp_vma_iter_destroy(struct kp_vma_iter *it);

// ---------------------------------------------------------------- search

// kp_search_create(): crash's `search`, drgn has none (0.6). Where: the
// kernel's virtual memory (the direct map's view of every physical page
// of the source, each once), one process's mappings through its own page
// tables, or physical memory.
enum kp_search_space { KP_SEARCH_KERNEL, KP_SEARCH_USER, KP_SEARCH_PHYS };

struct kp_search_status;
struct kp_search_spec {
	size_t sz;			// use KP_INIT(kp_search_spec, spec)
	enum kp_search_space space;
	int32_t pid;			// KP_SEARCH_USER: the process
	// What: the bytes (any length from 1 to KP_SEARCH_MAX_BYTES), or with
	// bytes NULL, a value of width bytes (8 or 4, little-endian) at every
	// multiple of width whose bits equal value's but those set in ignore
	// (crash's search -m).
	const void *bytes;
	size_t nbytes;
	uint64_t value, ignore;
	unsigned width;
	uint64_t start, end;		// the addresses searched (end 0: no end)
	// Kernel and physical: the slice [phys_lo, phys_hi) of physical memory
	// (phys_hi 0: to the end) whose hits are this search's; a string that
	// starts in it and ends past it is found (search workers, one slice each).
	uint64_t phys_lo, phys_hi;
	// Called with the counters before each block (at most 256 KiB) is
	// searched: a progress line, a deadline; false ends the search there,
	// as if it had reached the end. NULL: none.
	bool (*block_fn)(void *arg, const struct kp_search_status *status);
	void *block_arg;
};
#define KP_SEARCH_MAX_BYTES 4096

struct kp_search_status {
	size_t sz;			// use KP_INIT(kp_search_status, st)
	uint64_t bytes_total;		// kernel and physical: of the whole source, 0 for a process
	uint64_t bytes_done;		// of those, passed (searched or not readable)
	uint64_t pages;			// pages searched
	uint64_t unreadable;		// pages passed over: not in memory, not in the dump
	// A process's search stops after 2^28 pages of its mappings (1 TiB
	// of 4 KiB pages): a sparse reservation is not walked to its end.
	bool bound;
	uint64_t bound_at;		// the first address not searched
};

struct kp_search_hit {
	uint64_t address;		// virtual (kernel, process) or physical
	const struct kp_vma *vma;	// a process's: the mapping holding it
};

struct kp_search;
KP_API struct kp_error *kp_search_create(struct kp_kernel *kernel, const struct kp_search_spec *spec,
					 struct kp_search **ret);
// The next hit in address order (*ret NULL at the end); it points into the
// search until the next call. A page that cannot be read is passed over
// and counted; an error is the search's last word (a process whose
// mappings cannot be walked).
KP_API struct kp_error *kp_search_next(struct kp_search *search, const struct kp_search_hit **ret);
KP_API void kp_search_status(const struct kp_search *search, struct kp_search_status *ret);
KP_API void kp_search_destroy(struct kp_search *search);

// ---------------------------------------------------------------- open files

// One open file of a process, as /proc/PID/fd/N and fdinfo show it (0.6).
struct kp_fd {
	int32_t fd;
	uint64_t file;		// struct file *
	uint32_t flags;		// f_flags (O_*), as fdinfo's "flags:" (octal there)
	uint64_t pos;		// f_pos
	uint64_t inode;		// inode number
	const char *kind;	// "REG", "DIR", "CHR", "BLK", "FIFO", "SOCK", "LNK" or "?"
	// What the fd's link shows: a path (" (deleted)" after an unlinked
	// file), "pipe:[INO]", "socket:[INO]", "anon_inode:[eventpoll]"...
	const char *target;
};

struct kp_fd_iter;
// The open files of the task at task, by fd. A task without a files_struct
// (it exited) is KP_ERR_INVALID; an fd table larger than the kernel allows
// is KP_ERR_FORMAT.
KP_API struct kp_error *kp_fd_iter_create(struct kp_kernel *kernel, uint64_t task,
					    struct kp_fd_iter **ret);
KP_API struct kp_error *kp_fd_iter_next(struct kp_fd_iter *it, const struct kp_fd **ret);
KP_API void kp_fd_iter_status(const struct kp_fd_iter *it, struct kp_walk_status *ret);
KP_API void kp_fd_iter_destroy(struct kp_fd_iter *it);

// ---------------------------------------------------------------- mounts

// One mount of a mount namespace, as a line of /proc/PID/mountinfo (0.6).
struct kp_mount {
	uint64_t address;	// struct mount *
	int32_t id, parent_id;
	uint32_t dev_major, dev_minor;	// of its super block
	const char *root;	// the root of the mount inside its file system
	const char *mount_point;	// from the task's root
	const char *options;	// per-mount: "rw,nosuid,relatime"
	// The optional fields: "shared:N", "master:N", "unbindable", separated
	// by spaces; "" if none (propagate_from is not known).
	const char *propagation;
	const char *fstype;	// "ext4", "fuse.sshfs"
	const char *source;	// "/dev/vda1", "none"
	// The generic super options only ("rw", "ro,sync"...): a file
	// system's own options are made by its code, not known from memory.
	const char *super_options;
};

struct kp_mount_iter;
// The mounts of the mount namespace of the task at task (0: PID 1's), in
// mountinfo order, mount points relative to that task's root; mounts
// outside its root are left out, as /proc does.
KP_API struct kp_error *kp_mount_iter_create(struct kp_kernel *kernel, uint64_t task,
					     struct kp_mount_iter **ret);
// *ret is NULL at the end; it points into the iterator until the next call.
KP_API struct kp_error *kp_mount_iter_next(struct kp_mount_iter *it, const struct kp_mount **ret);
KP_API void kp_mount_iter_status(const struct kp_mount_iter *it, struct kp_walk_status *ret);
KP_API void kp_mount_iter_destroy(struct kp_mount_iter *it);

// ---------------------------------------------------------------- identity

// A task's namespaces, in /proc/PID/ns's order (0.6).
enum kp_ns {
	KP_NS_NET,
	KP_NS_UTS,
	KP_NS_IPC,
	KP_NS_PID,
	KP_NS_PID_FOR_CHILDREN,
	KP_NS_USER,
	KP_NS_MNT,
	KP_NS_CGROUP,
	KP_NS_TIME,		// 5.6+
	KP_NS_TIME_FOR_CHILDREN,
	KP_NS_COUNT
};
// The name of its link in /proc/PID/ns ("pid_for_children"); NULL out of range.
KP_API const char *kp_ns_name(enum kp_ns ns);
// Its type, as the link's target starts ("pid" for pid_for_children).
KP_API const char *kp_ns_type(enum kp_ns ns);

// PID namespace levels a task can be seen from: the initial one and
// MAX_PID_NS_LEVEL (32) nested.
#define KP_PID_LEVELS 33

// Who a task is: what /proc/PID/status, /proc/PID/ns and /proc/PID/cgroup
// say about it, seen from the initial namespaces (0.6). Allocated by the
// library (fields may be added at the end).
struct kp_task_status {
	uint64_t task;		// struct task_struct *
	uint64_t cred;		// task->real_cred (what /proc shows), struct cred *
	uint64_t subjective_cred;	// task->cred (what the task acts as)
	char name[64];		// as kp_task.name
	char state;		// R S D T t X Z P I
	int32_t umask;		// -1: no fs_struct (the task exited)
	int32_t tgid, pid, ppid, tracer_pid;
	uint32_t uid[4], gid[4];	// real, effective, saved, file system
	uint32_t fd_size;	// the fd table's max_fds; 0: no files_struct
	uint32_t ngroups;
	const uint32_t *groups;	// supplementary groups
	// The task's IDs in each PID namespace it is seen from, the initial
	// one first: pid_levels entries each (0 where the process group or
	// session was made in an outer namespace).
	uint32_t pid_levels;
	int32_t ns_tgid[KP_PID_LEVELS], ns_pid[KP_PID_LEVELS];
	int32_t ns_pgid[KP_PID_LEVELS], ns_sid[KP_PID_LEVELS];
	int32_t threads;	// 0: the task exited (no sighand)
	// Signal sets, bit N-1 for signal N.
	uint64_t sig_pending, sig_shared_pending, sig_blocked, sig_ignored, sig_caught;
	uint64_t cap_inheritable, cap_permitted, cap_effective, cap_bounding, cap_ambient;
	bool no_new_privs;
	int32_t seccomp;	// mode 0-2; -1: no CONFIG_SECCOMP
	int32_t seccomp_filters;	// -1: not counted (before 5.9)
	uint64_t voluntary_ctxt_switches, nonvoluntary_ctxt_switches;
	uint64_t ns[KP_NS_COUNT];	// inode numbers; 0: not there
	// The cgroup v2 path ("/" for the root), as /proc/PID/cgroup's "0::"
	// line; NULL when /proc shows no such line (cgroup2 never mounted).
	const char *cgroup;
};

// The status of the task at task (struct task_struct *).
KP_API struct kp_error *kp_task_status_create(struct kp_kernel *kernel, uint64_t task,
					      struct kp_task_status **ret);
KP_API void kp_task_status_destroy(struct kp_task_status *status);

// ---------------------------------------------------------------- modules

struct kp_module {
	uint64_t address;	// struct module *
	char name[64];
	uint64_t base;		// start of core text
	uint64_t size;		// as /proc/modules
	int32_t refcnt;		// -1 without CONFIG_MODULE_UNLOAD (no refcnt)
	int32_t state;		// MODULE_STATE_*
	char state_name[16];	// "Live", "Loading", "Unloading"
	// The names of the modules that use this one, each followed by a comma
	// as /proc/modules prints them ("9pnet_virtio,9p,"); "" if none; NULL
	// if they could not all be read (the walk's error says why).
	const char *used_by;
	bool permanent;		// init without exit: cannot be unloaded
	char taints[24];	// taint letters as /proc/modules shows them ("OE")
};

struct kp_module_iter;

// Modules in the order of the kernel's modules list (as /proc/modules).
KP_API struct kp_error *kp_module_iter_create(struct kp_kernel *kernel,
					      struct kp_module_iter **ret);
KP_API struct kp_error *kp_module_iter_next(struct kp_module_iter *it,
					    const struct kp_module **ret);
KP_API void kp_module_iter_destroy(struct kp_module_iter *it);
KP_API void kp_module_iter_status(const struct kp_module_iter *it, struct kp_walk_status *ret);

// ---------------------------------------------------------------- load average

struct kp_loadavg {
	size_t sz;		// use KP_INIT(kp_loadavg, la)
	uint64_t avenrun[3];	// fixed point, FSHIFT = 11
	uint32_t running;	// runnable tasks (nr_running), 0 if unknown
	uint32_t total;		// all threads, 0 if unknown
	int32_t last_pid;	// -1 if unknown
	// Since 0.5: running and total were read (a dump's idle kernel has
	// nr_running 0: 0 alone does not say unknown).
	bool has_running;
	bool has_total;
};

KP_API struct kp_error *kp_loadavg(struct kp_kernel *kernel, struct kp_loadavg *ret);
// "0.42" as /proc/loadavg prints avenrun[i] (LOAD_INT.LOAD_FRAC).
KP_API void kp_loadavg_format(uint64_t avenrun, char buf[16]);

// ---------------------------------------------------------------- panic

// Why the kernel stopped, as crash's `sys` and the kernel's own console
// tell it: from panic_cpu, the printk ring, the run queue of the panicking
// CPU, tainted_mask and VMCOREINFO's CRASHTIME.
// Since 0.6: what kind of crash it was, from the kernel's own wording of
// the panic message and of the record that led to it (the order below is
// the order kpeek tries them in; doc/signature.md).
enum kp_panic_kind {
	KP_PANIC_NONE,		// no panic: a running kernel, or a dump of one
	KP_PANIC_CALL,		// a panic() call with a message of its own
	KP_PANIC_OOPS,		// an oops: a fault in the kernel ("Oops", "BUG: unable to
				// handle", "general protection fault", "Internal error")
	KP_PANIC_BUG,		// BUG(): "kernel BUG at FILE:LINE!"
	KP_PANIC_WARN,		// a WARN() turned panic by panic_on_warn
	KP_PANIC_OOM,		// "Out of memory" with panic_on_oom
	KP_PANIC_HUNG_TASK,	// "hung_task: blocked tasks" (hung_task_panic)
	KP_PANIC_SOFT_LOCKUP,	// "softlockup: hung tasks" (softlockup_panic)
	KP_PANIC_HARD_LOCKUP,	// "Hard LOCKUP" (hardlockup_panic)
	KP_PANIC_RCU_STALL,	// "RCU Stall" (panic_on_rcu_stall)
	KP_PANIC_SYSRQ,		// echo c > /proc/sysrq-trigger, or the SysRq key
	KP_PANIC_NMI,		// an NMI (unknown_nmi_panic, panic_on_io_nmi, ...)
	KP_PANIC_MCE,		// a machine check
};
// "none", "panic", "oops", "BUG", "warning", "OOM", "hung task", "soft
// lockup", "hard lockup", "RCU stall", "sysrq", "NMI", "machine check";
// NULL for a value outside the enum.
KP_API const char *kp_panic_kind_name(enum kp_panic_kind kind);

struct kp_panic {
	size_t sz;		// sizeof(struct kp_panic): use KP_INIT()
	bool panicked;		// panic_cpu names a CPU
	int cpu;		// the panicking CPU, -1 if none
	// "Kernel panic - not syncing: ..." (the last such record), "" if the
	// ring has none; oops: the record that led to it ("BUG: ...",
	// "Oops: ...", "sysrq: Trigger a crash"), "" if none. A kernel that
	// crashed (panic_cpu set) with no panic record went to kdump from an
	// oops (crash_kexec() in oops_end()): oops is then the last such record.
	char message[256];
	char oops[256];
	uint64_t ts_nsec;	// printk time of message (else of that oops), 0 if none
	uint32_t caller_id;	// printk caller of the same record (task id, or CPU | 1 << 31)
	bool has_task;		// the task current on cpu
	uint64_t task;
	int32_t pid;
	char comm[16];
	uint64_t tainted_mask;
	char taint[72];		// "Not tainted" or "Tainted: G   W", as print_tainted()
	bool has_crash_time;	// VMCOREINFO CRASHTIME (kdump vmcores)
	int64_t crash_time;	// seconds since the epoch
	// Since 0.5: the other CPUs whose registers the crash saved in their
	// crash_notes (kdump stops them with an NMI on x86-64, an IPI on
	// arm64), as a CPU list ("1,3-5"), "" if none (QEMU dumps, live).
	int ncpus_stopped;
	char cpus_stopped[64];
	// Since 0.5: panic_cpu (or tainted_mask) could not be read (a kernel
	// whose kallsyms has no variables: Debian's 6.1 arm64): cpu, pid,
	// comm and taint are the kernel's own "CPU: N PID: P Comm: C ..." line
	// that followed the panic record in the log, and task the task of that
	// PID (has_task false for PID 0, the idle task).
	bool from_log;
	bool has_tainted_mask;	// since 0.5: tainted_mask was read (else 0)
	// Since 0.6: VMCOREINFO has a CRASHTIME that is not a time (not a
	// decimal number, or outside 1970..9999): has_crash_time is false.
	bool crash_time_invalid;
	enum kp_panic_kind kind;	// since 0.6
	// Since 0.6: why the task current on cpu could not be read (its run
	// queue, or its task_struct: a page a dump lacks), "" if it could.
	// task is then rq->curr (0 if the run queue was unreadable), and pid
	// and comm the log's "CPU: N PID: P Comm: C" line for cpu (has_task),
	// if the log has one.
	char task_error[512];
};
KP_API struct kp_error *kp_panic_get(struct kp_kernel *kernel, struct kp_panic *ret);

// Since 0.6: what identifies a crash's bug and not the machine, the boot
// or the dump's format, for grouping a fleet's dumps (doc/signature.md
// states the rules so that other tools can compute the same): the kind,
// the message with numbers, addresses and task names normalized away, and
// the first meaningful functions of the stack that crashed (of the first
// blocked task for a hung task), hashed with 64-bit FNV-1a.
#define KP_SIGNATURE_FRAMES 5
struct kp_signature {
	size_t sz;		// use KP_INIT(kp_signature, sig)
	enum kp_panic_kind kind;	// KP_PANIC_NONE: no signature (hash 0)
	char title[256];	// the normalized message
	unsigned nframes;
	char frames[KP_SIGNATURE_FRAMES][128];
	// The stack the frames come from could not be unwound (a raw dump
	// without CPU registers): the signature holds kind and title only.
	bool no_stack;
	char stack_error[512];	// why, when no_stack
	uint64_t hash;
	// The title as the kernel printed it: the first record of the oops
	// ("BUG: kernel NULL pointer dereference, address: 0000000000000000"
	// where kp_panic.oops is the "Oops: 0002 [#1] ..." after it), else the
	// panic message without "Kernel panic - not syncing: ".
	char record[256];
};
// panic: what kp_panic_get() gave (the caller has it already), or NULL to
// read it here.
KP_API struct kp_error *kp_signature_get(struct kp_kernel *kernel, const struct kp_panic *panic,
					 struct kp_signature *ret);

// ---------------------------------------------------------------- stacks

enum kp_frame_flags {
	// pc is where the CPU was (a CPU's registers, an exception frame),
	// not a return address.
	KP_FRAME_EXACT = 1 << 0,
	// The frame was entered by an exception or interrupt: regs holds the
	// registers it saved (struct pt_regs at regs_address). Also the first
	// frame of a stack unwound from a CPU's registers (a dump's CPU note,
	// kdump's crash_notes): regs are those, regs_address 0.
	KP_FRAME_REGS = 1 << 1,
	// The last frame: the user-space context the kernel was entered from
	// (the pt_regs of a system call or exception from user mode).
	KP_FRAME_USER = 1 << 2,
	// Found by a fallback (frame pointers where there was no unwind
	// information): not reliable, nor is any frame after it.
	KP_FRAME_UNRELIABLE = 1 << 3,
};

struct kp_frame {
	uint64_t pc;
	uint64_t sp;		// the stack pointer while pc ran
	unsigned flags;		// KP_FRAME_*
	uint64_t regs_address;	// KP_FRAME_REGS: where the registers were saved
	unsigned nregs;		// KP_FRAME_REGS: registers in regs, named by reg_names
	const uint64_t *regs;
	const char *const *reg_names;
};

struct kp_stack;

// Loads what unwinding needs (x86-64: the ORC tables and their format;
// layouts from BTF) once per kernel: an error here means no stack of this
// kernel can be unwound. The kp_stack_*_create calls do it implicitly.
KP_API struct kp_error *kp_stack_prepare(struct kp_kernel *kernel);
// The kernel stack of a task (struct task_struct *), innermost frame first:
// from its CPU's registers when the source has them (CPU notes of a dump)
// and the task was running there, else from where the scheduler switched it
// out. Live, a running task cannot be unwound (KP_ERR_UNSUPPORTED). x86-64
// unwinds with the kernel's ORC tables read from memory.
KP_API struct kp_error *kp_stack_task_create(struct kp_kernel *kernel, uint64_t task,
					     struct kp_stack **ret);
// The stack of whatever CPU cpu was running, from its registers in the dump.
KP_API struct kp_error *kp_stack_cpu_create(struct kp_kernel *kernel, int cpu,
					    struct kp_stack **ret);
// The frames; *ret points into the stack.
KP_API size_t kp_stack_frames(const struct kp_stack *stack, const struct kp_frame **ret);
// Where the unwind started ("registers of CPU 1 (dump note)", "where the
// scheduler switched it out").
KP_API const char *kp_stack_origin(const struct kp_stack *stack);
// Why it ended: the end of the stack, the entry from user mode, or (with
// *complete_ret false) why it could not go on: a corrupt or unreadable
// frame, a runaway stack (more than 1024 frames).
KP_API const char *kp_stack_end(const struct kp_stack *stack, bool *complete_ret);
// The task whose stack it is (0 if unknown) and the CPU it ran on (-1 if
// it was not running).
KP_API uint64_t kp_stack_task(const struct kp_stack *stack);
KP_API int kp_stack_cpu(const struct kp_stack *stack);
KP_API void kp_stack_destroy(struct kp_stack *stack);

// ---------------------------------------------------------------- kernel log

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

struct kp_printk_iter;

// The finalized records of the printk ring buffer, oldest first.
KP_API struct kp_error *kp_printk_iter_create(struct kp_kernel *kernel,
					      struct kp_printk_iter **ret);
KP_API struct kp_error *kp_printk_iter_next(struct kp_printk_iter *it,
					    const struct kp_printk_record **ret);
KP_API void kp_printk_iter_destroy(struct kp_printk_iter *it);
KP_API void kp_printk_iter_status(const struct kp_printk_iter *it, struct kp_walk_status *ret);

// ---------------------------------------------------------------- syscall check

struct kp_syscall_entry {
	const char *table;	// "sys_call_table", "ia32_sys_call_table", "x64_sys_call", ...
	unsigned nr;		// table index, or offset in a dispatcher function
	uint64_t target;
	struct kp_symbol sym;	// sym.name NULL if no symbol
	bool ok;		// points into core kernel text at an expected symbol
	const char *why;	// reason when !ok
};

struct kp_syscall_iter;

// Every entry of the syscall tables and every call of the dispatcher
// functions the architecture has.
KP_API struct kp_error *kp_syscall_iter_create(struct kp_kernel *kernel,
					       struct kp_syscall_iter **ret);
KP_API struct kp_error *kp_syscall_iter_next(struct kp_syscall_iter *it,
					     const struct kp_syscall_entry **ret);
KP_API void kp_syscall_iter_destroy(struct kp_syscall_iter *it);

// ---------------------------------------------------------------- integrity checks

// What a rootkit leaves in kernel memory, found by comparing the kernel's
// own views of itself (kpeek check). One finding per suspicious object.
enum kp_finding_kind {
	KP_FINDING_SUSPICIOUS = 0,	// what the check looks for
	// A live kernel only: an object in a transition (a task exiting, a
	// module being loaded or unloaded) or a finding a second run of the
	// check did not see again: possibly a race with the kernel, not a
	// finding (the check's status does not count it).
	KP_FINDING_LIVE_RACE,
};

struct kp_finding {
	const char *object;	// what was examined: "sys_call_table[62]", "module kp_rootkit"
	uint64_t address;	// the address in question (a handler, a task, module memory)
	struct kp_symbol sym;	// the symbol at address; name NULL if none
	const char *module;	// module whose memory holds address, NULL if none
	bool hidden_module;	// that module is missing from the modules list
	const char *why;	// why it is suspicious; NULL for an entry that is fine
	enum kp_finding_kind kind;	// since 0.6
};

enum kp_check_status {
	KP_CHECK_CLEAN = 0,	// looked at everything it checks, found nothing (a live
				// kernel's races are listed as KP_FINDING_LIVE_RACE)
	KP_CHECK_FOUND,		// kp_check_count() findings
	KP_CHECK_CANNOT,	// could not decide: kp_check_reason() says why
	KP_CHECK_NOT_APPLICABLE,	// nothing to check on this architecture (reason says why)
};

enum kp_check_flags {
	KP_CHECK_ALL = 1 << 0,	// also list what is fine (why NULL)
};

struct kp_check;

// The names of the checks, NULL-ended ("syscalls", "modules", ...).
KP_API const char *const *kp_check_names(void);
// One line saying what the check compares; NULL for an unknown name.
KP_API const char *kp_check_description(const char *name);
// Runs one check. Unknown names fail (KP_ERR_NOT_FOUND); a check that
// cannot decide on this kernel is not an error: its status says so. On a
// live kernel a check that finds something runs again, up to three times
// over two seconds: a finding is kept only if every run sees it, else it
// becomes a KP_FINDING_LIVE_RACE.
KP_API struct kp_error *kp_check_run(struct kp_kernel *kernel, const char *name, unsigned flags,
				     struct kp_check **ret);
KP_API const char *kp_check_name(const struct kp_check *check);
KP_API enum kp_check_status kp_check_status(const struct kp_check *check);
// Why the check could not decide (KP_CHECK_CANNOT) or does not apply, else NULL.
KP_API const char *kp_check_reason(const struct kp_check *check);
// Findings (and with KP_CHECK_ALL the entries that are fine), in order.
KP_API size_t kp_check_count(const struct kp_check *check);
KP_API const struct kp_finding *kp_check_finding(const struct kp_check *check, size_t i);
// Findings beyond the cap (KP_CHECK_MAX_FINDINGS) that were counted, not kept.
#define KP_CHECK_MAX_FINDINGS 4096
KP_API size_t kp_check_dropped(const struct kp_check *check);
// Lines saying what was compared ("23 modules: ..."), in order.
KP_API size_t kp_check_summary_count(const struct kp_check *check);
KP_API const char *kp_check_summary(const struct kp_check *check, size_t i);
KP_API void kp_check_destroy(struct kp_check *check);

// ---------------------------------------------------------------- snapshots

enum kp_snapshot_format {
	KP_SNAPSHOT_ELF = 0,	// ELF vmcore: ET_CORE, one PT_LOAD per physical range
	KP_SNAPSHOT_KDUMP,	// kdump-compressed, standard layout (makedumpfile's)
	KP_SNAPSHOT_FLATTENED,	// kdump-compressed as a flattened stream (0.6)
};

// How the kdump formats store a page (0.6): zlib by default; a page that
// does not get smaller is stored as it is.
enum kp_snapshot_compression {
	KP_SNAPSHOT_ZLIB = 0,
	KP_SNAPSHOT_ZSTD,
	KP_SNAPSHOT_UNCOMPRESSED,
};

// done/total in bytes of memory; called after every chunk read (often: the
// caller throttles its display).
typedef void kp_snapshot_progress_fn(uint64_t done, uint64_t total, void *arg);

struct kp_snapshot_options {
	size_t sz;		// use KP_OPTS(kp_snapshot_options, o, ...)
	enum kp_snapshot_format format;
	kp_snapshot_progress_fn *progress;	// may be NULL
	void *arg;
	// Polled between chunks; nonzero stops the snapshot with KP_ERR_INTERRUPTED.
	// A signal handler's volatile sig_atomic_t flag (an int on Linux).
	const volatile int *cancel;	// may be NULL
	enum kp_snapshot_compression compression;	// the kdump formats (0.6)
};

struct kp_snapshot_stats {
	size_t sz;		// use KP_INIT(kp_snapshot_stats, st)
	uint64_t ranges;	// PT_LOAD segments written
	uint64_t bytes;		// memory bytes covered
	uint64_t data_bytes;	// non-zero pages written
	uint64_t zero_bytes;	// all-zero pages left as holes
	uint64_t unreadable_bytes;	// pages the source could not read (holes, listed as lost)
	uint64_t file_size;
	// Ranges of those pages, listed in the snapshot's "KPEEK" note: kpeek
	// reads them back as lost (a fault naming them), never as data (0.6).
	uint64_t lost_ranges;
};

// Copies the physical memory of the source into a new dump file at path
// (mode 0600, never replacing an existing file): the data goes to a temporary
// "PATH.tmp-XXXXXX" in the same directory, renamed to path on success and
// removed on any failure or cancellation. The ELF vmcore has one PT_LOAD per
// physical range (p_paddr = physical, p_vaddr = direct-map address when
// known, else 0), a PT_LOAD of the kernel image at its virtual address, and
// a PT_NOTE with the source's VMCOREINFO and CPU notes as the source had
// them; all-zero pages are not written (sparse file). opts and ret may be
// NULL; *ret is filled on success.
KP_API struct kp_error *kp_snapshot_write(struct kp_kernel *kernel, const char *path,
					  const struct kp_snapshot_options *opts,
					  struct kp_snapshot_stats *ret);
// The kdump formats: a header, bitmaps, one descriptor per page and the
// pages (zero pages share one), as makedumpfile writes them; the pages the
// source could not give are RAM not dumped, listed in a "KPEEK" note.
// Ranges must be whole pages of the kernel's page size.
//
// The flattened format (KP_SNAPSHOT_FLATTENED, the only one) to fd, a pipe
// or any file open for writing, never sought (0.6): `snapshot -o - | ssh`.
// name is what messages call the output ("-"). On failure the stream is
// cut short: its reader finds no end marker.
KP_API struct kp_error *kp_snapshot_write_fd(struct kp_kernel *kernel, int fd, const char *name,
					     const struct kp_snapshot_options *opts,
					     struct kp_snapshot_stats *ret);

#ifdef __cplusplus
}
#endif

#endif
