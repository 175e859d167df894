// SPDX-License-Identifier: MIT
// The types of one kernel: its BTF (read-only, from a file or its memory),
// a working split BTF on top of it where kpeek synthesizes the types that
// expressions need (pointers, arrays, const, integers), the index of BTF
// VARs, and the cache of layouts asked for by name.
//
// Type pointers from btf__type_by_id() into the split part move when a type
// is added, so never keep one across kp_types_pointer_to() and friends.
// Pointers into the base move too when kp_types_int_type() has to add an
// integer type (libbpf then converts the base to its modifiable form): no
// cache may keep base pointers other than the VAR index, which it drops.
// Not thread-safe: lookups fill caches.
#ifndef KP_TYPES_TYPES_H
#define KP_TYPES_TYPES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "types/btf.h"

struct kp_types;

// Takes base (freed by kp_types_destroy, also on failure); source describes
// where it came from ("/sys/kernel/btf/vmlinux", ".BTF in memory (...)").
struct kp_error *kp_types_create(struct btf *base, const char *source, struct kp_types **ret);
void kp_types_destroy(struct kp_types *types);
// The working BTF: every type id kpeek hands around is an id in it.
struct btf *kp_types_btf(const struct kp_types *types);
const char *kp_types_source(const struct kp_types *types);
// Types of the kernel's own BTF (without the synthesized ones).
size_t kp_types_count(const struct kp_types *types);

// Types synthesized in (or found in) the working BTF.
struct kp_error *kp_types_pointer_to(struct kp_types *types, uint32_t target, uint32_t *ret);
struct kp_error *kp_types_array_of(struct kp_types *types, uint32_t elem, uint32_t nelems,
				   uint32_t *ret);
// An integer type of size bytes (1, 2, 4, 8) and signedness, preferring the C
// names (int, unsigned long, ...).
struct kp_error *kp_types_int_type(struct kp_types *types, unsigned size, bool is_signed,
				   uint32_t *ret);
struct kp_error *kp_types_const_of(struct kp_types *types, uint32_t type, uint32_t *ret);
// A function prototype "void ()" for functions BTF knows nothing about.
struct kp_error *kp_types_unknown_func(struct kp_types *types, uint32_t *ret);

// First type of kind (BTF_KIND_*) named name. KP_ERR_NOT_FOUND.
struct kp_error *kp_types_find(struct kp_types *types, int kind, const char *name,
			       uint32_t *ret);
// The enum type and value of enumerator name (ENUM or ENUM64); false if
// no enum has it.
bool kp_types_enumerator(struct kp_types *types, const char *name, uint32_t *type_ret,
			 uint64_t *value_ret);
// The name of value in the enum named name (no "enum "); NULL if the
// kernel has no such enum or no enumerator of that value.
const char *kp_types_enumerator_name(struct kp_types *types, const char *name, uint64_t value);
// The value of enumerator enumerator_name of the enum named name (no
// "enum "); false if there is no such enum or enumerator.
bool kp_types_enum_value(struct kp_types *types, const char *name, const char *enumerator_name,
			 uint64_t *ret);
// BTF's DATASEC of the per-CPU variables, ".data..percpu" (pahole 1.18+
// encodes every one, with its offset in the section); NULL if none.
const struct btf_type *kp_types_percpu_datasec(struct kp_types *types);
// Its size (where its last variable ends, at least); 0 if none.
uint64_t kp_types_percpu_extent(struct kp_types *types);
// VAR of a global or per-CPU variable from a DATASEC. false if none.
bool kp_types_var(struct kp_types *types, const char *name, uint32_t *type_ret,
		  bool *percpu_ret);

// ---------------------------------------------------------------- module types

// Appends a module's split BTF (data, size bytes: raw BTF whose ids and
// strings continue the kernel's) to the working BTF, renumbering its own
// type ids; its types are found by name after the kernel's. *added: how
// many types. Nothing is added if the BTF does not parse; a type that
// names an id past the module's is KP_ERR_FORMAT.
struct kp_error *kp_types_add_split(struct kp_types *types, const void *data, size_t size,
				    size_t *added);
// What adds more types when a lookup by name misses (the kernel's modules:
// linux/module_btf.c through core/kernel.c), run at most once by
// kp_types_more(); true if it added any.
typedef bool kp_types_more_fn(void *ctx, struct kp_types *types);
void kp_types_set_more(struct kp_types *types, kp_types_more_fn *fn, void *ctx);
bool kp_types_more(struct kp_types *types);
// Why kp_types_more() added nothing, for a lookup's error ("no module BTF:
// ..."); NULL if it has not run. The callback sets it (copied).
void kp_types_set_more_note(struct kp_types *types, const char *note);
const char *kp_types_more_note(const struct kp_types *types);

// ---------------------------------------------------------------- members and layouts

// Walks a member designator ("tasks", "se.vruntime", "mem[0].x") from type:
// the result's bit_offset is from the start of type (member.c).
struct kp_error *kp_types_member_path(struct kp_types *types, uint32_t type, const char *path,
				      size_t len, struct kp_btf_member *ret);
// The cache of layouts asked for by name (kp_member_offset() and
// kp_type_size(), lang/layout.c): (type name, member designator or "") ->
// (offset, size). Lookups allocate nothing.
bool kp_types_layout_lookup(struct kp_types *types, const char *type, const char *member,
			    uint64_t *offset_ret, uint64_t *size_ret);
void kp_types_layout_store(struct kp_types *types, const char *type, const char *member,
			   uint64_t offset, uint64_t size);

// Values computed once per kernel and kept with its types, keyed by the
// address of what asked (a static spec): NULL if none. put takes value
// (freed with free() when types is destroyed); false on out-of-memory,
// value then still the caller's.
void *kp_types_memo_get(const struct kp_types *types, const void *key);
bool kp_types_memo_put(struct kp_types *types, const void *key, void *value);

#endif
