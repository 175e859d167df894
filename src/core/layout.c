// SPDX-License-Identifier: MIT
// Layouts, enumerators and per-CPU offsets of a kernel (layout.h).
#include <inttypes.h>

#include "core/kernel.h"
#include "core/layout.h"
#include "symbols/symtab.h"
#include "types/types.h"
#include "util/error.h"

struct kp_error *kp_kernel_layout(struct kp_kernel *k, const struct kp_struct_spec *spec,
				  const struct kp_struct_layout **ret)
{
	struct kp_types *types;
	struct kp_error *err = kp_kernel_types(k, &types);
	if (err)
		return err;
	return kp_types_struct_layout(types, spec, ret);
}

struct kp_error *kp_kernel_layouts(struct kp_kernel *k, const struct kp_struct_spec *const *specs,
				   size_t n, const struct kp_struct_layout **ret)
{
	for (size_t i = 0; i < n; i++) {
		struct kp_error *err = kp_kernel_layout(k, specs[i], &ret[i]);
		if (err)
			return err;
	}
	return NULL;
}

struct kp_error *kp_kernel_read_struct(struct kp_kernel *k, const struct kp_struct_layout *l,
				       uint64_t address, void *buf, size_t size)
{
	if (kp_layout_span(l) > size)
		return kp_error_create(KP_ERR_UNSUPPORTED, "%s: %" PRIu64 " bytes to read, more than %zu",
				       l->spec->type, kp_layout_span(l), size);
	struct kp_error *err = kp_read(k, KP_VIRT, address + l->lo, buf, kp_layout_span(l));
	if (err)
		return kp_error_prefix(err, "reading %s at 0x%" PRIx64, l->spec->type, address);
	return NULL;
}

bool kp_kernel_member_probe(struct kp_kernel *k, const char *type, const char *member,
			    uint64_t *offset_ret, uint64_t *size_ret)
{
	struct kp_types *types;
	struct kp_error *err = kp_kernel_types(k, &types);
	if (err) {
		kp_error_destroy(err);
		return false;
	}
	return kp_types_member_probe(types, type, member, offset_ret, size_ret);
}

bool kp_kernel_enum_value(struct kp_kernel *k, const char *name, uint64_t *ret)
{
	struct kp_types *types;
	uint32_t type;
	struct kp_error *err = kp_kernel_types(k, &types);
	if (err) {
		kp_error_destroy(err);
		return false;
	}
	return kp_types_enumerator(types, name, &type, ret);
}

bool kp_kernel_enum_value_in(struct kp_kernel *k, const char *name, const char *enumerator,
			     uint64_t *ret)
{
	struct kp_types *types;
	struct kp_error *err = kp_kernel_types(k, &types);
	if (err) {
		kp_error_destroy(err);
		return false;
	}
	return kp_types_enum_value(types, name, enumerator, ret);
}

const char *kp_kernel_enum_name(struct kp_kernel *k, const char *name, uint64_t value)
{
	struct kp_types *types;
	struct kp_error *err = kp_kernel_types(k, &types);
	if (err) {
		kp_error_destroy(err);
		return NULL;
	}
	return kp_types_enumerator_name(types, name, value);
}

struct kp_error *kp_kernel_read_per_cpu_struct(struct kp_kernel *k, const struct kp_struct_layout *l,
					       uint64_t ptr, uint32_t cpu, void *buf, size_t size,
					       bool *possible_ret)
{
	uint64_t off;
	struct kp_error *err = kp_kernel_check_cpu(k, cpu);
	*possible_ret = !err;
	if (err) {
		kp_error_destroy(err);
		return NULL;
	}
	if ((err = kp_kernel_per_cpu_offset(k, cpu, &off)))
		return err;
	return kp_kernel_read_struct(k, l, ptr + off, buf, size);
}

struct kp_error *kp_kernel_per_cpu_offset(struct kp_kernel *k, uint64_t cpu, uint64_t *ret)
{
	struct kp_symbol sym;
	struct kp_error *err = kp_kernel_check_cpu(k, cpu);
	if (err)
		return err;
	if (!kp_symtab_find(kp_kernel_symtab(k), "__per_cpu_offset", &sym))
		return kp_error_create(KP_ERR_NOT_FOUND, "no symbol __per_cpu_offset (per-CPU areas)");
	if ((err = kp_read_u64(k, sym.address + cpu * 8, ret)))
		return kp_error_prefix(err, "__per_cpu_offset[%" PRIu64 "]", cpu);
	return NULL;
}
