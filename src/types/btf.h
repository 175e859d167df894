// BTF of the kernel: loading and validation, type helpers (stripping typedefs
// and qualifiers, member lookup through anonymous members, printing C type
// names; parsing them is typename.c's), types synthesized on demand (pointers,
// arrays) and the per-kernel caches. Variable types: vartypes.c.
//
// All type ids handed around by btf.c, value.c and expr.c are ids in the
// kernel's "working" BTF (kp_btf_work()): a split BTF over the loaded kernel
// BTF that holds the types kpeek synthesized. Base ids are valid in it
// unchanged. Type pointers from btf__type_by_id() into the split part move
// when a type is added, so never keep one across kp_btf_pointer_to() etc.
// Pointers into the base move too when kp_btf_int_type() has to add an
// integer type (libbpf 1.1 then converts the base to its modifiable form): no
// cache may keep base pointers other than the VAR index, which it drops.
#ifndef KP_BTF_H
#define KP_BTF_H

#include <kpeek/kpeek.h>

struct btf;
struct btf_type;
struct kp_kernel;

// Checks a raw BTF blob's header and section bounds; where names the source
// in errors ("BTF file /x", ".BTF in memory"). KP_ERR_FORMAT when corrupt.
struct kp_error *kp_btf_validate(const void *data, size_t size, const char *where);

// The working BTF (loads the kernel BTF if needed).
struct kp_error *kp_btf_work(struct kp_kernel *kernel, struct btf **ret);

// Skips typedef, const, volatile, restrict and type_tag.
uint32_t kp_btf_strip(const struct btf *btf, uint32_t id);
// Skips qualifiers (const, volatile, restrict, type_tag), keeps typedefs.
uint32_t kp_btf_strip_cv(const struct btf *btf, uint32_t id);
// Size in bytes; 0 for void, functions and incomplete types.
uint64_t kp_btf_size(const struct btf *btf, uint32_t id);
// Kind of the stripped type (BTF_KIND_*), 0 (void) when id is 0 or invalid.
int kp_btf_kind(const struct btf *btf, uint32_t id);
bool kp_btf_is_signed(const struct btf *btf, uint32_t id);	// ints and enums
bool kp_btf_is_scalar(const struct btf *btf, uint32_t id);	// int, enum, ptr, float
bool kp_btf_is_integer(const struct btf *btf, uint32_t id);	// int, enum
bool kp_btf_is_char(const struct btf *btf, uint32_t id);	// 1-byte char-named int
bool kp_btf_is_bool(const struct btf *btf, uint32_t id);

// Type synthesized in (or found in) the working BTF.
struct kp_error *kp_btf_pointer_to(struct kp_kernel *kernel, uint32_t target,
				   uint32_t *ret);
struct kp_error *kp_btf_array_of(struct kp_kernel *kernel, uint32_t elem,
				 uint32_t nelems, uint32_t *ret);
// An integer type of size bytes (1, 2, 4, 8) and signedness, preferring the C
// names (int, unsigned long, ...).
struct kp_error *kp_btf_int_type(struct kp_kernel *kernel, unsigned size,
				 bool is_signed, uint32_t *ret);
// const-qualified type.
struct kp_error *kp_btf_const_of(struct kp_kernel *kernel, uint32_t type, uint32_t *ret);
// A function prototype "void ()" for functions BTF knows nothing about.
struct kp_error *kp_btf_unknown_func(struct kp_kernel *kernel, uint32_t *ret);

// First type of kind named name (kind BTF_KIND_*). KP_ERR_NOT_FOUND.
struct kp_error *kp_btf_find(struct kp_kernel *kernel, int kind, const char *name,
			     uint32_t *ret);
// Integer type whose normalized C name matches ("unsigned long" finds GCC's
// "long unsigned int"); false if none.
bool kp_btf_find_int(const struct btf *btf, const char *cname, uint32_t *ret);

// C name of a type: "struct task_struct *", "char [16]", "int (*)(void)".
struct kp_error *kp_btf_type_name(const struct btf *btf, uint32_t id, char **ret);
// Same, with a declarator (a member or variable name) placed where C puts it.
struct kp_error *kp_btf_decl_name(const struct btf *btf, uint32_t id, const char *decl,
				  char **ret);

struct kp_btf_member {
	uint32_t type;		// member type id
	uint64_t bit_offset;	// from the start of the outer struct
	uint32_t bit_size;	// 0 unless a bitfield
};

// Member name (len bytes) of struct/union id (stripped), searching anonymous
// struct/union members too. Unknown: KP_ERR_TYPE naming the type, with close
// member names suggested.
struct kp_error *kp_btf_member(const struct btf *btf, uint32_t id, const char *name,
			       size_t len, struct kp_btf_member *ret);

// VAR of a global or per-CPU variable from a DATASEC. false if none.
bool kp_btf_var(struct kp_kernel *kernel, const char *name, uint32_t *type_ret,
		bool *percpu_ret);
// Canonical C name of an integer type name ("long unsigned int" -> "unsigned
// long"); false if name is not made of C integer keywords.
bool kp_btf_int_cname(const char *name, char *out, size_t size);

// ---------------------------------------------------------------- string builder
// A growable NUL-terminated string; after an allocation failure it stays
// failed and kp_sb_take() returns NULL.
struct kp_sb {
	char *buf;
	size_t len, cap;
	bool failed;
};

void kp_sb_printf(struct kp_sb *sb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void kp_sb_putn(struct kp_sb *sb, const char *s, size_t n);
bool kp_sb_reserve(struct kp_sb *sb, size_t extra);
char *kp_sb_take(struct kp_sb *sb);	// caller frees; NULL if failed
void kp_sb_free(struct kp_sb *sb);

// ---------------------------------------------------------------- caches
// (struct kp_kernel.types; btf.c and vartypes.c)

struct kp_synth {
	int kind;		// BTF_KIND_PTR, _ARRAY, _CONST, _FUNC_PROTO
	uint32_t ref, n;
	uint32_t id;
};

struct kp_var {
	const char *name;	// in the BTF string section
	uint32_t type;
	bool percpu;
};

#define KP_LAYOUT_CACHE 64

struct kp_layout {
	char *key;		// "TYPE\0MEMBER" (member "" for kp_type_size)
	size_t key_len;
	uint64_t offset, size;
};

struct kp_btf_types {
	struct btf *work;	// split BTF over kernel->btf with synthesized types
	struct kp_synth *synth;
	size_t nsynth, synth_cap;
	uint32_t ints[4][2];	// [1,2,4,8 bytes][signed]
	struct kp_var *vars;	// sorted by name
	size_t nvars;
	bool vars_indexed;
	struct kp_layout layout[KP_LAYOUT_CACHE];
};

#endif
