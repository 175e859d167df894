// SPDX-License-Identifier: MIT
// Struct layouts from declarative member tables (layout.h): resolved
// against BTF once per kernel, cached with its types, read from one copy of
// the struct's span.
#include <stdlib.h>
#include <string.h>

#include <bpf/btf.h>
#include <linux/btf.h>

#include "types/layout.h"
#include "types/types.h"
#include "util/error.h"
#include "util/le.h"

// The BTF type a spec names: "struct X", "union X", or a typedef name.
static struct kp_error *find_type(struct kp_types *types, const char *name, uint32_t *ret)
{
	if (strncmp(name, "struct ", 7) == 0)
		return kp_types_find(types, BTF_KIND_STRUCT, name + 7, ret);
	if (strncmp(name, "union ", 6) == 0)
		return kp_types_find(types, BTF_KIND_UNION, name + 6, ret);
	return kp_types_find(types, BTF_KIND_TYPEDEF, name, ret);
}

// The first of the '|'-separated alternatives of name that the type has.
static struct kp_error *resolve_member(struct kp_types *types, uint32_t id, const char *type,
				       const char *name, struct kp_member_layout *ret)
{
	const struct btf *btf = kp_types_btf(types);
	struct kp_error *first = NULL;
	unsigned alt = 0;
	for (const char *p = name;; alt++) {
		const char *bar = strchr(p, '|');
		size_t len = bar ? (size_t)(bar - p) : strlen(p);
		struct kp_btf_member m;
		struct kp_error *err = kp_types_member_path(types, id, p, len, &m);
		if (!err) {
			kp_error_destroy(first);
			struct kp_member_layout l = {
				.offset = m.bit_offset / 8,
				.bit_offset = m.bit_size ? (uint32_t)(m.bit_offset % 8) : 0,
				.bit_size = m.bit_size,
				.type = m.type,
				.alt = (uint8_t)alt,
				.present = true,
			};
			l.size = m.bit_size ? (l.bit_offset + m.bit_size + 7) / 8 : kp_btf_size(btf, m.type);
			*ret = l;
			return NULL;
		}
		if (err->code != KP_ERR_TYPE && err->code != KP_ERR_SYNTAX) {
			kp_error_destroy(first);
			return err;
		}
		kp_error_keep_first(&first, err);
		if (!bar)
			break;
		p = bar + 1;
	}
	if (alt == 0)
		return first;
	kp_error_destroy(first);
	return kp_error_create(KP_ERR_TYPE, "%s has none of the members %s", type, name);
}

bool kp_types_member_probe(struct kp_types *types, const char *type, const char *member,
			   uint64_t *offset_ret, uint64_t *size_ret)
{
	uint32_t id;
	struct kp_member_layout m;
	struct kp_error *err = find_type(types, type, &id);
	if (!err)
		err = resolve_member(types, id, type, member, &m);
	if (err) {
		kp_error_destroy(err);
		return false;
	}
	if (offset_ret)
		*offset_ret = m.offset;
	if (size_ret)
		*size_ret = m.size;
	return true;
}

static void span(struct kp_struct_layout *l)
{
	uint64_t lo = UINT64_MAX, hi = 0;
	for (unsigned i = 0; i < l->spec->n; i++) {
		const struct kp_member_layout *m = &l->m[i];
		if (!m->present || (l->spec->members[i].flags & KP_MEMBER_NOSPAN))
			continue;
		if (m->offset < lo)
			lo = m->offset;
		if (m->offset + m->size > hi)
			hi = m->offset + m->size;
	}
	l->lo = lo == UINT64_MAX ? 0 : lo;
	l->hi = lo == UINT64_MAX ? 0 : hi;
}

static struct kp_struct_layout *alloc_layout(const struct kp_struct_spec *spec)
{
	struct kp_struct_layout *l = calloc(1, sizeof(*l) + spec->n * sizeof(l->m[0]));
	if (l)
		l->spec = spec;
	return l;
}

static struct kp_error *resolve(struct kp_types *types, const struct kp_struct_spec *spec,
				struct kp_struct_layout **ret)
{
	struct kp_struct_layout *l = alloc_layout(spec);
	if (!l)
		return &kp_enomem;
	uint32_t id;
	struct kp_error *err = find_type(types, spec->type, &id);
	if (err && err->code == KP_ERR_NOT_FOUND && (spec->flags & KP_STRUCT_OPTIONAL)) {
		kp_error_destroy(err);
		*ret = l;
		return NULL;
	}
	if (err)
		goto fail;
	l->present = true;
	l->size = kp_btf_size(kp_types_btf(types), id);
	for (unsigned i = 0; i < spec->n; i++) {
		const struct kp_member_spec *ms = &spec->members[i];
		err = resolve_member(types, id, spec->type, ms->name, &l->m[i]);
		if (err && err->code == KP_ERR_TYPE && (ms->flags & KP_MEMBER_OPTIONAL)) {
			kp_error_destroy(err);
			err = NULL;
		}
		if (err)
			goto fail;
		if (l->m[i].size > l->size || l->m[i].offset > l->size - l->m[i].size) {
			err = kp_error_create(KP_ERR_FORMAT, "corrupt BTF: %s.%s lies outside the %llu-byte struct",
					      spec->type, ms->name, (unsigned long long)l->size);
			goto fail;
		}
	}
	span(l);
	*ret = l;
	return NULL;
fail:
	free(l);
	return err;
}

struct kp_error *kp_types_struct_layout(struct kp_types *types, const struct kp_struct_spec *spec,
					const struct kp_struct_layout **ret)
{
	const struct kp_struct_layout *cached = kp_types_memo_get(types, spec);
	if (cached) {
		*ret = cached;
		return NULL;
	}
	struct kp_struct_layout *l = NULL;
	struct kp_error *err = resolve(types, spec, &l);
	if (err)
		return err;
	if (!kp_types_memo_put(types, spec, l)) {
		free(l);
		return &kp_enomem;
	}
	*ret = l;
	return NULL;
}

struct kp_error *kp_struct_layout_manual(const struct kp_struct_spec *spec, uint64_t size,
					 const struct kp_member_layout *members,
					 struct kp_struct_layout **ret)
{
	struct kp_struct_layout *l = alloc_layout(spec);
	if (!l)
		return &kp_enomem;
	l->present = true;
	l->size = size;
	for (unsigned i = 0; i < spec->n; i++)
		if (members[i].present)
			l->m[i] = members[i];
	span(l);
	*ret = l;
	return NULL;
}

const uint8_t *kp_layout_ptr(const struct kp_struct_layout *l, const void *buf, uint64_t off,
			     uint64_t size)
{
	if (off < l->lo || off > l->hi || size > l->hi - off)
		return NULL;
	return (const uint8_t *)buf + (off - l->lo);
}

const uint8_t *kp_layout_at(const struct kp_struct_layout *l, const void *buf, unsigned member)
{
	const struct kp_member_layout *m = &l->m[member];
	if (!m->present || m->offset < l->lo || m->offset + m->size > l->hi)
		return NULL;
	return (const uint8_t *)buf + (m->offset - l->lo);
}

uint64_t kp_layout_u64(const struct kp_struct_layout *l, const void *buf, unsigned member)
{
	const struct kp_member_layout *m = &l->m[member];
	const uint8_t *p = kp_layout_at(l, buf, member);
	if (!p)
		return 0;
	if (!m->bit_size)
		return kp_le(p, m->size > 8 ? 8 : m->size);
	// A bitfield: its bytes as a little-endian integer, shifted and masked.
	uint64_t v = 0;
	for (uint64_t i = 0; i < m->size && i < 8; i++)
		v |= (uint64_t)p[i] << (8 * i);
	v >>= m->bit_offset;
	return m->bit_size >= 64 ? v : v & ((1ULL << m->bit_size) - 1);
}

int64_t kp_layout_s64(const struct kp_struct_layout *l, const void *buf, unsigned member)
{
	const struct kp_member_layout *m = &l->m[member];
	uint64_t v = kp_layout_u64(l, buf, member);
	unsigned bits = m->bit_size ? m->bit_size : (unsigned)(m->size > 8 ? 64 : m->size * 8);
	if (bits == 0 || bits >= 64)
		return (int64_t)v;
	uint64_t sign = 1ULL << (bits - 1);
	return (int64_t)((v ^ sign) - sign);
}
