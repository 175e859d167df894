// Types by name, member designators and cached layouts (types.h). The kernel
// helpers of src/linux ask for layouts by name ("struct task_struct",
// "tasks"), never by hard-coded offsets, so they follow every kernel's BTF.
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/btf.h>
#include <linux/btf.h>

#include "types/layout.h"
#include "types/types.h"
#include "util/error.h"

#define MAX_NAME 128

void kp_layout_cache_clear(struct kp_layout_cache *c)
{
	for (size_t i = 0; i < KP_LAYOUT_CACHE; i++)
		free(c->slot[i].key);
	memset(c, 0, sizeof(*c));
}

struct kp_error *kp_types_member_path(struct kp_types *t, uint32_t type, const char *path,
				      size_t len, struct kp_btf_member *ret)
{
	const struct btf *btf = kp_types_btf(t);
	struct kp_btf_member acc = { .type = type };
	size_t i = 0;
	bool need_name = true;
	while (i < len) {
		if (need_name || path[i] == '.') {
			if (!need_name)
				i++;
			size_t j = i;
			while (j < len && (isalnum((unsigned char)path[j]) || path[j] == '_'))
				j++;
			if (j == i)
				return kp_error_create(KP_ERR_SYNTAX,
						       "bad member path '%.*s' at offset %zu",
						       (int)len, path, i);
			struct kp_btf_member m;
			struct kp_error *err = kp_btf_member(btf, acc.type, path + i, j - i, &m);
			if (err)
				return err;
			acc.bit_offset += m.bit_offset;
			acc.type = m.type;
			acc.bit_size = m.bit_size;
			i = j;
			need_name = false;
		} else if (path[i] == '[') {
			char *end;
			unsigned long long idx = strtoull(path + i + 1, &end, 0);
			if (end == path + i + 1 || (size_t)(end - path) >= len || *end != ']')
				return kp_error_create(KP_ERR_SYNTAX,
						       "bad index in member path '%.*s' at offset %zu",
						       (int)len, path, i);
			if (kp_btf_kind(btf, acc.type) != BTF_KIND_ARRAY)
				return kp_error_create(KP_ERR_TYPE, "'%.*s' is not an array",
						       (int)i, path);
			const struct btf_type *bt = btf__type_by_id(btf, kp_btf_strip(btf, acc.type));
			uint32_t elem = btf_array(bt)->type;
			uint64_t esize = kp_btf_size(btf, elem);
			if (idx > (1ULL << 40) || (esize && idx > (UINT64_MAX / 8) / esize))
				return kp_error_create(KP_ERR_INVALID, "index %llu too large", idx);
			acc.bit_offset += idx * esize * 8;
			acc.type = elem;
			acc.bit_size = 0;
			i = (size_t)(end - path) + 1;
		} else {
			return kp_error_create(KP_ERR_SYNTAX, "bad member path '%.*s' at offset %zu",
					       (int)len, path, i);
		}
	}
	if (need_name)
		return kp_error_create(KP_ERR_SYNTAX, "empty member path");
	*ret = acc;
	return NULL;
}

static uint32_t hash_key(const char *key, size_t len)
{
	uint32_t h = 2166136261u;
	for (size_t i = 0; i < len; i++)
		h = (h ^ (uint8_t)key[i]) * 16777619u;
	return h;
}

// "TYPE\0MEMBER" into buf (or a malloc'ed buffer when it does not fit);
// NULL on out-of-memory.
static char *make_key(const char *type, const char *member, char *buf, size_t size,
		      size_t *len_ret)
{
	size_t tl = strlen(type), ml = strlen(member);
	size_t len = tl + 1 + ml;
	char *key = len < size ? buf : malloc(len + 1);
	if (key) {
		memcpy(key, type, tl + 1);
		memcpy(key + tl + 1, member, ml + 1);
	}
	*len_ret = len;
	return key;
}

bool kp_types_layout_lookup(struct kp_types *t, const char *type, const char *member,
			    uint64_t *offset_ret, uint64_t *size_ret)
{
	char buf[256];
	size_t len;
	char *key = make_key(type, member, buf, sizeof(buf), &len);
	if (!key)
		return false;
	struct kp_layout_cache *c = kp_types_layout_cache(t);
	typeof(c->slot[0]) *slot = &c->slot[hash_key(key, len) % KP_LAYOUT_CACHE];
	bool hit = slot->key && slot->key_len == len && memcmp(slot->key, key, len) == 0;
	if (hit) {
		*offset_ret = slot->offset;
		*size_ret = slot->size;
	}
	if (key != buf)
		free(key);
	return hit;
}

void kp_types_layout_store(struct kp_types *t, const char *type, const char *member,
			   uint64_t offset, uint64_t size)
{
	size_t len;
	char *key = make_key(type, member, NULL, 0, &len);
	if (!key)
		return;	// only a cache
	struct kp_layout_cache *c = kp_types_layout_cache(t);
	typeof(c->slot[0]) *slot = &c->slot[hash_key(key, len) % KP_LAYOUT_CACHE];
	free(slot->key);
	slot->key = key;
	slot->key_len = len;
	slot->offset = offset;
	slot->size = size;
}
