// SPDX-License-Identifier: MIT
// Queries on one BTF (libbpf's struct btf): stripping typedefs and
// qualifiers, sizes and kinds, C integer names, members through anonymous
// members, and C type names. Pure functions of the BTF: no kernel, no memory.
//
// Kernel type ids handed around by kpeek are ids in a kernel's working BTF
// (types.h), a split BTF over the kernel's own that holds the types kpeek
// synthesizes; base ids are valid in it unchanged.
#ifndef KP_TYPES_BTF_H
#define KP_TYPES_BTF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct btf;
struct kp_error;

// Skips typedef, const, volatile, restrict and type_tag.
uint32_t kp_btf_strip(const struct btf *btf, uint32_t id);
// Skips qualifiers (const, volatile, restrict, type_tag), keeps typedefs.
uint32_t kp_btf_strip_cv(const struct btf *btf, uint32_t id);
// Size in bytes; 0 for void, functions and incomplete types. Sizes that
// overflow 64 bits (an array of 2^32 arrays of 2^32 longs) are also 0: use
// kp_btf_size_checked() where that must be an error.
uint64_t kp_btf_size(const struct btf *btf, uint32_t id);
// The same, failing with KP_ERR_TYPE when the size overflows 64 bits.
struct kp_error *kp_btf_size_checked(const struct btf *btf, uint32_t id, uint64_t *ret);
// Kind of the stripped type (BTF_KIND_*), 0 (void) when id is 0 or invalid.
int kp_btf_kind(const struct btf *btf, uint32_t id);
bool kp_btf_is_signed(const struct btf *btf, uint32_t id);	// ints and enums
bool kp_btf_is_scalar(const struct btf *btf, uint32_t id);	// int, enum, ptr, float
bool kp_btf_is_integer(const struct btf *btf, uint32_t id);	// int, enum
bool kp_btf_is_char(const struct btf *btf, uint32_t id);	// 1-byte char-named int
bool kp_btf_is_bool(const struct btf *btf, uint32_t id);

// Integer type whose normalized C name matches ("unsigned long" finds GCC's
// "long unsigned int"); false if none.
bool kp_btf_find_int(const struct btf *btf, const char *cname, uint32_t *ret);
// Canonical C name of an integer type name ("long unsigned int" -> "unsigned
// long"); false if name is not made of C integer keywords.
bool kp_btf_int_cname(const char *name, char *out, size_t size);

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

// C name of a type: "struct task_struct *", "char [16]", "int (*)(void)"
// (type_name.c).
struct kp_error *kp_btf_type_name(const struct btf *btf, uint32_t id, char **ret);
// Same, with a declarator (a member or variable name) placed where C puts it.
struct kp_error *kp_btf_decl_name(const struct btf *btf, uint32_t id, const char *decl,
				  char **ret);

#endif
