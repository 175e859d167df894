// SPDX-License-Identifier: MIT
// struct kp_types, shared by types.c (the working BTF, synthesized types,
// VARs, layouts) and types_split.c (module BTF added to it).
#ifndef KP_TYPES_IMPL_H
#define KP_TYPES_IMPL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "types/types.h"

struct synth {
	int kind;		// BTF_KIND_PTR, _ARRAY, _CONST, _FUNC_PROTO
	uint32_t ref, n;
	uint32_t id;
};

struct var {
	const char *name;	// in the BTF string section
	uint32_t type;
	bool percpu;
};

#define LAYOUT_CACHE 64

struct kp_types {
	struct btf *base;
	struct btf *work;	// split BTF over base with synthesized types
	char *source;
	size_t nbase;
	uint32_t base_strs;	// bytes of the base's string section
	struct synth *synth;
	size_t nsynth, synth_cap;
	uint32_t ints[4][2];	// [1,2,4,8 bytes][signed]
	struct var *vars;	// sorted by name
	size_t nvars;
	bool vars_indexed;
	// Layouts asked for by name: "TYPE\0MEMBER" -> (offset, size),
	// direct-mapped. Kernel helpers ask the same few dozen layouts again
	// and again (every task, every module); a hit is a hash and a compare.
	struct {
		char *key;
		size_t key_len;
		uint64_t offset, size;
	} layouts[LAYOUT_CACHE];
	// Results keyed by the address of what asked (kp_types_memo_*): the
	// struct layouts of layout.c, one per static spec.
	struct memo {
		const void *key;
		void *value;
	} *memo;
	size_t nmemo, memo_cap;
	kp_types_more_fn *more;
	void *more_ctx;
	bool more_done;
	char *more_note;
};

#endif
