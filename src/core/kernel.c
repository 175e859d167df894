// SPDX-License-Identifier: MIT
// The kernel handle's accessors (kernel.h) and its BTF, loaded on first use.
// The handle is opened in kernel_open.c; its symbols are loaded in
// symbols_load.c and looked up in symbols_lookup.c; its reads are
// kernel_read.c's and what info says about it kernel_info.c's.
#include "arch/arch.h"
#include "core/btf_source.h"
#include "core/kernel_impl.h"
#include "types/types.h"
#include "util/error.h"

void *kp_kernel_slot(struct kp_kernel *k, enum kp_kernel_slot_id id)
{
	return k->slots[id].obj;
}

void kp_kernel_set_slot(struct kp_kernel *k, enum kp_kernel_slot_id id, void *obj,
			void (*destroy)(void *obj))
{
	if (k->slots[id].destroy)
		k->slots[id].destroy(k->slots[id].obj);
	k->slots[id].obj = obj;
	k->slots[id].destroy = destroy;
}

struct kp_memory *kp_kernel_memory(struct kp_kernel *k)
{
	return k->mem;
}

const struct kp_source *kp_kernel_source(struct kp_kernel *k)
{
	return &k->src;
}

const struct kp_arch *kp_kernel_arch(struct kp_kernel *k)
{
	return k->arch;
}

struct kp_arch_ctx *kp_kernel_arch_ctx(struct kp_kernel *k)
{
	return k->arch_ctx;
}

struct kp_symtab *kp_kernel_symtab(struct kp_kernel *k)
{
	return k->symtab;
}

const struct kp_vmcoreinfo *kp_kernel_vmcoreinfo(struct kp_kernel *k)
{
	return k->vmcoreinfo;
}

bool kp_kernel_kaslr_offset(struct kp_kernel *k, uint64_t *ret)
{
	if (k->has_kaslr_offset)
		*ret = k->kaslr_offset;
	return k->has_kaslr_offset;
}

uint64_t kp_kernel_page_size(struct kp_kernel *k)
{
	return k->arch->page_size(k->arch_ctx);
}

bool kp_kernel_is_kernel_address(struct kp_kernel *k, uint64_t address)
{
	return k->arch->kernel_address(k->arch_ctx, address);
}

static bool more_types(void *ctx, struct kp_types *types)
{
	struct kp_kernel *k = ctx;
	return k->late_types(k, types);
}

void kp_kernel_set_late_types(struct kp_kernel *k, kp_kernel_late_types_fn *fn)
{
	k->late_types = fn;
	if (k->types)
		kp_types_set_more(k->types, more_types, k);
}

struct kp_error *kp_kernel_types(struct kp_kernel *k, struct kp_types **ret)
{
	if (!k->types && !k->types_error) {
		uint64_t start, end;
		k->arch->image_range(k->arch_ctx, &start, &end);
		struct kp_error *err = kp_btf_source_load(k->mem, k->symtab, k->src.live,
							  k->btf_path, start, end, &k->types);
		if (!err && k->btf_path && !k->force &&
		    (err = kp_kernel_check_btf_file(k, k->types))) {
			kp_types_destroy(k->types);
			k->types = NULL;
		}
		if (err == &kp_enomem)
			return err;	// not remembered: may succeed later
		k->types_error = err;
		if (!err && k->late_types)
			kp_types_set_more(k->types, more_types, k);
	}
	if (k->types_error)
		return kp_error_copy(k->types_error);
	*ret = k->types;
	return NULL;
}

struct kp_error *kp_kernel_load_btf(struct kp_kernel *kernel)
{
	struct kp_types *types = NULL;
	return kp_kernel_types(kernel, &types);
}
