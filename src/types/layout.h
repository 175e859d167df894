// SPDX-License-Identifier: MIT
// Struct layouts declared by the code that reads them: a walker of kernel
// objects says, in one static table, which members of which struct it
// needs (required or optional, with the names they had in older kernels);
// the table is resolved against the kernel's BTF once per kernel and kept
// with its types, and the walker reads the span of the struct that holds
// every member it needs with one read.
//
//   enum { T_PID, T_STATE, T_CPU, T_N };
//   static const struct kp_member_spec task_members[T_N] = {
//           [T_PID] = { .name = "pid" },
//           // 5.14 renamed the long 'state' to unsigned int '__state'.
//           [T_STATE] = { .name = "__state|state" },
//           [T_CPU] = { .name = "thread_info.cpu|cpu", .flags = KP_MEMBER_OPTIONAL },
//   };
//   static const struct kp_struct_spec task_spec =
//           KP_STRUCT_SPEC("struct task_struct", task_members);
//
// Names are member designators (kp_types_member_path: "se.vruntime",
// "mem[0].base"); '|' separates alternatives tried in order, the first the
// kernel has wins (kp_member_layout.alt says which).
#ifndef KP_TYPES_LAYOUT_H
#define KP_TYPES_LAYOUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct kp_error;
struct kp_types;

enum kp_member_flags {
	// Some kernels lack it: resolved as not present instead of an error.
	KP_MEMBER_OPTIONAL = 1u << 0,
	// Needed for its offset only (a list_head to subtract, a member of an
	// embedded struct read elsewhere): left out of the span.
	KP_MEMBER_NOSPAN = 1u << 1,
};

struct kp_member_spec {
	const char *name;
	unsigned flags;
};

enum kp_struct_flags {
	// Some kernels lack the whole type: a layout with present false and
	// every member absent, instead of an error.
	KP_STRUCT_OPTIONAL = 1u << 0,
};

struct kp_struct_spec {
	const char *type;	// "struct task_struct", "union xx", or a typedef name
	const struct kp_member_spec *members;
	unsigned n;
	unsigned flags;
};

#define KP_STRUCT_SPEC(type, members) \
	{ (type), (members), sizeof(members) / sizeof((members)[0]), 0 }
// A type whose size is all that is needed (a typedef: "tracepoint_ptr_t").
#define KP_TYPE_SPEC(type) { (type), NULL, 0, 0 }
#define KP_STRUCT_SPEC_OPTIONAL(type, members) \
	{ (type), (members), sizeof(members) / sizeof((members)[0]), KP_STRUCT_OPTIONAL }

struct kp_member_layout {
	uint64_t offset;	// bytes from the start of the struct
	uint64_t size;		// bytes (a bitfield: the bytes that hold it)
	uint32_t bit_offset;	// a bitfield's first bit in the byte at offset
	uint32_t bit_size;	// 0 unless a bitfield
	uint32_t type;		// BTF type id of the member (0 when hand-made)
	uint8_t alt;		// which of the '|' alternatives the kernel has
	bool present;
};

struct kp_struct_layout {
	const struct kp_struct_spec *spec;
	bool present;		// the kernel has the type
	uint64_t size;		// sizeof the struct
	// [lo, hi): the bytes of the struct that hold every present member
	// without KP_MEMBER_NOSPAN; hi == lo when there is none.
	uint64_t lo, hi;
	struct kp_member_layout m[];	// spec->n, in the spec's order
};

// The layout of spec in types, resolved on the first call and cached with
// types (keyed by the spec's address, so specs are static). Looks only at
// the kernel's own BTF, never loading module BTF. A required member or
// type the kernel lacks is KP_ERR_TYPE naming it.
struct kp_error *kp_types_struct_layout(struct kp_types *types, const struct kp_struct_spec *spec,
					const struct kp_struct_layout **ret);

// One member named at run time (the unwinders ask for theirs through a
// callback): false if the kernel lacks the type ("struct X", "union X" or
// a typedef name) or the member. Not cached: for setup, not for loops.
bool kp_types_member_probe(struct kp_types *types, const char *type, const char *member,
			   uint64_t *offset_ret, uint64_t *size_ret);

// A layout made by hand (unit tests over synthetic memory): members[i]
// with present set are taken as they are, the span is computed. The
// result is freed with free().
struct kp_error *kp_struct_layout_manual(const struct kp_struct_spec *spec, uint64_t size,
					 const struct kp_member_layout *members,
					 struct kp_struct_layout **ret);

// The member's value in a copy of the struct's span (buf holds bytes
// lo..hi of the struct): an unsigned integer of its size (at most 8 bytes;
// a bitfield's bits), 0 if the member is absent.
uint64_t kp_layout_u64(const struct kp_struct_layout *l, const void *buf, unsigned member);
// The same, sign-extended from the member's size.
int64_t kp_layout_s64(const struct kp_struct_layout *l, const void *buf, unsigned member);
// A pointer to the member's bytes in the span copy (NULL if it is absent
// or outside the span).
const uint8_t *kp_layout_at(const struct kp_struct_layout *l, const void *buf, unsigned member);
// size bytes at offset off of the struct in the span copy (derived
// offsets: an array element's member); NULL outside the span.
const uint8_t *kp_layout_ptr(const struct kp_struct_layout *l, const void *buf, uint64_t off,
			     uint64_t size);
// Whether the member is there (in this kernel).
static inline bool kp_layout_has(const struct kp_struct_layout *l, unsigned member)
{
	return l->m[member].present;
}
static inline uint64_t kp_layout_off(const struct kp_struct_layout *l, unsigned member)
{
	return l->m[member].offset;
}
static inline uint64_t kp_layout_span(const struct kp_struct_layout *l)
{
	return l->hi - l->lo;
}

#endif
