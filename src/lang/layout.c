// SPDX-License-Identifier: MIT
// kp_member_offset() and kp_type_size() of the public API: layouts by any C
// type name a user writes ("unsigned long[3]", "struct task_struct *"),
// parsed by the expression language's type names (lang/typename.c);
// results are cached by name (types/types.c), so asking again costs a hash.
// The library's own walkers declare their layouts in member tables
// instead (types/layout.h).
#include <string.h>

#include <bpf/btf.h>
#include <linux/btf.h>

#include "core/kernel.h"
#include "lang/typename.h"
#include "types/types.h"
#include "util/error.h"

static struct kp_error *layout(struct kp_kernel *k, const char *type, const char *member,
			       uint64_t *offset_ret, uint64_t *size_ret)
{
	struct kp_types *types = NULL;
	struct kp_error *err = kp_kernel_types(k, &types);
	if (err)
		return err;
	if (kp_types_layout_lookup(types, type, member, offset_ret, size_ret))
		return NULL;
	const struct btf *btf = kp_types_btf(types);
	uint32_t id;
	if ((err = kp_parse_type(types, type, &id)))
		return err;
	uint64_t offset = 0, size;
	if (*member) {
		struct kp_btf_member m;
		if ((err = kp_types_member_path(types, id, member, strlen(member), &m)))
			return err;
		offset = m.bit_offset / 8;
		size = m.bit_size ? (m.bit_offset % 8 + m.bit_size + 7) / 8 : kp_btf_size(btf, m.type);
	} else {
		size = kp_btf_size(btf, id);
		int kind = kp_btf_kind(btf, id);
		if (!size && kind != BTF_KIND_ARRAY && kind != BTF_KIND_STRUCT &&
		    kind != BTF_KIND_UNION)
			return kp_error_create(KP_ERR_TYPE, "%s has no size (%s)", type,
					       kind == BTF_KIND_FWD ? "only declared in BTF" :
					       "void or a function");
	}
	kp_types_layout_store(types, type, member, offset, size);
	*offset_ret = offset;
	*size_ret = size;
	return NULL;
}

struct kp_error *kp_member_offset(struct kp_kernel *k, const char *type, const char *member,
				  uint64_t *offset_ret, uint64_t *size_ret)
{
	if (!*member)
		return kp_error_create(KP_ERR_INVALID, "empty member name for %s", type);
	uint64_t offset, size;
	struct kp_error *err = layout(k, type, member, &offset, &size);
	if (err)
		return err;
	*offset_ret = offset;
	if (size_ret)
		*size_ret = size;
	return NULL;
}

struct kp_error *kp_type_size(struct kp_kernel *k, const char *type, uint64_t *ret)
{
	uint64_t offset, size;
	struct kp_error *err = layout(k, type, "", &offset, &size);
	if (!err)
		*ret = size;
	return err;
}
