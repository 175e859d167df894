// SPDX-License-Identifier: MIT
// Module BTF (CONFIG_DEBUG_INFO_BTF_MODULES, 5.11+): each loaded module's
// split BTF over vmlinux's, added to the kernel's types when a type name
// misses (types.c kp_types_more()). Read as the kernel keeps it for
// /sys/kernel/btf/MODULE: kernel/bpf/btf.c's btf_modules list of
// struct btf_module {list, module, btf}, the raw BTF in struct btf's
// data/data_size. (struct module's btf_data is NULL once the module's init
// has run: do_init_module() clears it.) The same on dumps and live.
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "core/kernel.h"
#include "linux/module/module.h"
#include "types/layout.h"
#include "types/types.h"
#include "util/error.h"

// Bounds against corrupt memory: Debian's largest module BTF is a few
// hundred KiB; a kernel has at most a few thousand modules.
#define MAX_MODULE_BTF (64u << 20)
#define MAX_MODULES 65536

enum { BM_LIST, BM_BTF, BM_N };
static const struct kp_member_spec btf_module_members[BM_N] = {
	[BM_LIST] = { .name = "list" }, [BM_BTF] = { .name = "btf" },
};
static const struct kp_struct_spec btf_module_spec = KP_STRUCT_SPEC_OPTIONAL("struct btf_module", btf_module_members);
enum { B_DATA, B_DATA_SIZE, B_N };
static const struct kp_member_spec btf_members[B_N] = {
	[B_DATA] = { .name = "data" }, [B_DATA_SIZE] = { .name = "data_size" },
};
static const struct kp_struct_spec btf_spec = KP_STRUCT_SPEC_OPTIONAL("struct btf", btf_members);

bool kp_lx_module_btf(struct kp_kernel *k, struct kp_types *types)
{
	static const struct kp_struct_spec *const specs[] = { &btf_module_spec, &btf_spec };
	const struct kp_struct_layout *bl[2];
	struct kp_symbol head;
	struct kp_error *lerr = kp_types_struct_layout(types, specs[0], &bl[0]);
	if (!lerr)
		lerr = kp_types_struct_layout(types, specs[1], &bl[1]);
	kp_error_destroy(lerr);
	if (lerr || !bl[0]->present || !bl[1]->present) {
		kp_types_set_more_note(types, "no module BTF: CONFIG_DEBUG_INFO_BTF_MODULES (5.11+) is not set");
		return false;
	}
	uint64_t list = kp_layout_off(bl[0], BM_LIST), btf = kp_layout_off(bl[0], BM_BTF),
		 data = kp_layout_off(bl[1], B_DATA), data_size = kp_layout_off(bl[1], B_DATA_SIZE);
	struct kp_list_iter *it;
	if (!kp_symbol_find(k, "btf_modules", &head) ||
	    !kp_ok(kp_list_iter_create(k, head.address, 0, &it))) {
		kp_types_set_more_note(types, "module BTF: the btf_modules list is unknown or unreadable");
		return false;
	}
	kp_list_iter_set_limit(it, MAX_MODULES);
	size_t added = 0, unread = 0;
	// The first module whose BTF could not be read, and why (a filtered
	// dump may have left its pages out): said with a lookup that misses.
	struct kp_error *first = NULL;
	for (;;) {
		uint64_t node, b, d;
		uint32_t size;
		bool done;
		struct kp_error *err = kp_list_iter_next(it, &node, &done);
		if (err || done) {
			if (err && !first)
				first = kp_error_prefix(err, "the btf_modules list");
			else
				kp_error_destroy(err);
			break;
		}
		// A module whose BTF cannot be read costs its own types only.
		if ((err = kp_read_u64(k, node - list + btf, &b)) || !b ||
		    (err = kp_read_u64(k, b + data, &d)) || !d ||
		    (err = kp_read_u32(k, b + data_size, &size)) || !size || size > MAX_MODULE_BTF) {
			if (!err)
				err = kp_error_create(KP_ERR_FORMAT, "struct btf_module at 0x%" PRIx64
						      ": no BTF or one of %" PRIu32 " bytes", node - list,
						      b && d ? size : 0);
		} else {
			void *raw = malloc(size);
			if (!raw)
				break;
			if (!(err = kp_read(k, KP_VIRT, d, raw, size)))
				err = kp_types_add_split(types, raw, size, &added);
			free(raw);
		}
		if (err) {
			unread++;
			if (!first)
				first = err;
			else
				kp_error_destroy(err);
		}
	}
	kp_list_iter_destroy(it);
	char note[512];
	if (first)
		snprintf(note, sizeof(note), "%s; %zu module(s) unread, the first: %s",
			 added ? "nor in the BTF of the modules read" : "no module's BTF could be read",
			 unread, kp_error_message(first));
	else
		snprintf(note, sizeof(note), "nor in the modules' BTF");
	kp_types_set_more_note(types, note);
	kp_error_destroy(first);
	return added > 0;
}
