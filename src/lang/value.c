// SPDX-License-Identifier: MIT
// Typed values (value.h): construction, reading, scalars.
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/btf.h>
#include <linux/btf.h>

#include "core/kernel.h"
#include "lang/value.h"
#include "types/types.h"
#include "util/error.h"

// ---------------------------------------------------------------- construction

static struct kp_error *new_value(struct kp_kernel *k, uint32_t type, struct kp_value **ret)
{
	struct kp_types *types = NULL;
	struct kp_error *err = kp_kernel_types(k, &types);
	if (err)
		return err;
	struct btf *btf = kp_types_btf(types);
	struct kp_value *v = calloc(1, sizeof(*v));
	if (!v)
		return &kp_enomem;
	v->kernel = k;
	v->types = types;
	v->btf = btf;
	v->type = type;
	v->size = kp_btf_size(btf, type);
	*ret = v;
	return NULL;
}

struct kp_error *kp_value_lvalue(struct kp_kernel *k, uint32_t type, uint64_t address,
				 struct kp_value **ret)
{
	struct kp_value *v;
	struct kp_error *err = new_value(k, type, &v);
	if (err)
		return err;
	v->lvalue = true;
	v->address = address;
	*ret = v;
	return NULL;
}

struct kp_error *kp_value_rvalue(struct kp_kernel *k, uint32_t type, const void *bytes,
				 uint64_t size, struct kp_value **ret)
{
	struct kp_value *v;
	struct kp_error *err = new_value(k, type, &v);
	if (err)
		return err;
	if (size > KP_VALUE_MAX_SIZE) {
		kp_value_destroy(v);
		return kp_error_create(KP_ERR_INVALID, "value of %" PRIu64 " bytes is too large",
				       size);
	}
	v->size = size;
	v->data = malloc(size ? size : 1);
	if (!v->data) {
		kp_value_destroy(v);
		return &kp_enomem;
	}
	if (size)
		memcpy(v->data, bytes, size);
	*ret = v;
	return NULL;
}

struct kp_error *kp_value_from_u64(struct kp_kernel *k, uint32_t type, uint64_t x,
				   struct kp_value **ret)
{
	uint8_t bytes[8];
	struct kp_types *types = NULL;
	struct kp_error *err = kp_kernel_types(k, &types);
	if (err)
		return err;
	uint64_t size = kp_btf_size(kp_types_btf(types), type);
	if (size > 8)
		size = 8;
	memcpy(bytes, &x, sizeof(bytes));	// little-endian: the low bytes first
	return kp_value_rvalue(k, type, bytes, size, ret);
}

void kp_value_destroy(struct kp_value *value)
{
	if (!value)
		return;
	free(value->data);
	free(value->symbol);
	free(value);
}

static struct kp_error *percpu_hint(const struct kp_value *v, struct kp_error *err)
{
	if (!v->percpu || err->code != KP_ERR_FAULT)
		return err;
	const char *s = v->symbol ? v->symbol : "VAR";
	return kp_error_prefix(err, "%s is a per-CPU variable: use per_cpu(%s, CPU)", s, s);
}

struct kp_error *kp_value_fetch(struct kp_value *v)
{
	if (v->data || !v->lvalue)
		return NULL;
	if (v->size > KP_VALUE_MAX_SIZE)
		return kp_error_create(KP_ERR_INVALID,
				       "value at 0x%" PRIx64 " is %" PRIu64
				       " bytes, more than the %u MiB kpeek reads at once",
				       v->address, v->size, KP_VALUE_MAX_SIZE >> 20);
	uint8_t *data = malloc(v->size ? v->size : 1);
	if (!data)
		return &kp_enomem;
	if (v->size) {
		struct kp_error *err = kp_read(v->kernel, KP_VIRT, v->address, data,
						      v->size);
		if (err) {
			free(data);
			return percpu_hint(v, err);
		}
	}
	v->data = data;
	return NULL;
}

// ---------------------------------------------------------------- scalars

// Bits [bit_off, bit_off + bits) of little-endian bytes (bits <= 64).
static uint64_t extract_bits(const uint8_t *bytes, size_t avail, uint64_t bit_off,
			     uint32_t bits)
{
	unsigned __int128 acc = 0;
	size_t first = bit_off / 8, last = (bit_off + bits + 7) / 8;
	for (size_t i = last; i-- > first;)
		acc = (acc << 8) | (i < avail ? bytes[i] : 0);
	acc >>= bit_off % 8;
	return bits >= 64 ? (uint64_t)acc : (uint64_t)acc & ((1ULL << bits) - 1);
}

static uint64_t sign_extend(uint64_t x, unsigned bits)
{
	if (bits == 0 || bits >= 64)
		return x;
	uint64_t sign = 1ULL << (bits - 1);
	return (x ^ sign) - sign;
}

// Decodes a scalar of type from bytes; bit_size 0 means the whole type.
uint64_t kp_value_decode(const struct btf *btf, uint32_t type, const uint8_t *bytes,
			      size_t avail, uint64_t bit_off, uint32_t bit_size)
{
	uint64_t size = kp_btf_size(btf, type);
	uint32_t bits = bit_size ? bit_size : (uint32_t)(size > 8 ? 64 : size * 8);
	uint64_t x = extract_bits(bytes, avail, bit_off, bits);
	if (kp_btf_is_signed(btf, type))
		x = sign_extend(x, bits);
	return x;
}

struct kp_error *kp_value_scalar(struct kp_value *v, uint64_t *ret)
{
	int kind = kp_btf_kind(v->btf, v->type);
	if (kind == BTF_KIND_FUNC_PROTO && v->lvalue) {
		*ret = v->address;
		return NULL;
	}
	if (v->untyped || !(kind == BTF_KIND_INT || kind == BTF_KIND_ENUM ||
			    kind == BTF_KIND_ENUM64 || kind == BTF_KIND_PTR)) {
		char *name = NULL;
		if (!v->untyped && kp_btf_type_name(v->btf, v->type, &name))
			name = NULL;
		struct kp_error *err = kp_error_create(KP_ERR_TYPE,
			"cannot use a value of type %s as an integer",
			v->untyped ? "<unknown>" : name ? name : "?");
		free(name);
		return err;
	}
	uint8_t buf[16];
	const uint8_t *bytes = v->data;
	if (!bytes) {
		if (v->size > sizeof(buf))
			return kp_error_create(KP_ERR_TYPE, "%" PRIu64 "-byte integers are not supported",
					       v->size);
		struct kp_error *err = kp_read(v->kernel, KP_VIRT, v->address, buf,
						      v->size);
		if (err)
			return percpu_hint(v, err);
		bytes = buf;
	}
	*ret = kp_value_decode(v->btf, v->type, bytes, v->size, v->bit_offset, v->bit_size);
	return NULL;
}

struct kp_error *kp_value_to_u64(struct kp_value *v, uint64_t *ret)
{
	// C's conversion to uint64_t: signed types are sign-extended.
	return kp_value_scalar(v, ret);
}

struct kp_error *kp_value_to_s64(struct kp_value *v, int64_t *ret)
{
	uint64_t x;
	struct kp_error *err = kp_value_scalar(v, &x);
	if (err)
		return err;
	// kp_value_scalar() sign-extends signed types; C's conversion of an
	// unsigned one to int64_t keeps its bits.
	*ret = (int64_t)x;
	return NULL;
}

bool kp_value_is_lvalue(struct kp_value *v)
{
	return v->lvalue && !v->bit_size;
}

struct kp_error *kp_value_string(struct kp_value *v, char *buf, size_t size)
{
	if (!size)
		return kp_error_create(KP_ERR_INVALID, "kp_value_string: empty buffer");
	int kind = v->untyped ? -1 : kp_btf_kind(v->btf, v->type);
	const struct btf_type *t = kind > 0 ? btf__type_by_id(v->btf, kp_btf_strip(v->btf, v->type)) : NULL;
	if (kind == BTF_KIND_ARRAY && kp_btf_is_char(v->btf, btf_array(t)->type)) {
		struct kp_error *err = kp_value_fetch(v);
		if (err)
			return err;
		size_t n = strnlen((const char *)v->data, v->size);
		if (n > size - 1)
			n = size - 1;
		memcpy(buf, v->data, n);
		buf[n] = '\0';
		return NULL;
	}
	if (kind == BTF_KIND_PTR && kp_btf_is_char(v->btf, t->type)) {
		uint64_t p;
		struct kp_error *err = kp_value_scalar(v, &p);
		if (err)
			return err;
		return kp_read_cstr(v->kernel, p, buf, size);
	}
	char *name = NULL;
	if (v->untyped || kp_btf_type_name(v->btf, v->type, &name))
		name = NULL;
	struct kp_error *err = kp_error_create(KP_ERR_TYPE,
		"a value of type %s is not a string (a char array or char pointer)",
		name ? name : "<unknown>");
	free(name);
	return err;
}

struct kp_error *kp_value_address(struct kp_value *v, uint64_t *ret)
{
	if (!v->lvalue)
		return kp_error_create(KP_ERR_TYPE, "the value has no address (not an lvalue)");
	if (v->bit_size)
		return kp_error_create(KP_ERR_TYPE, "a bitfield has no address");
	*ret = v->address;
	return NULL;
}

uint64_t kp_value_size(struct kp_value *v)
{
	return v->size;
}

struct kp_error *kp_value_reread(struct kp_value *v, void *buf, size_t size, size_t *len_ret)
{
	if (!v->lvalue)
		return kp_error_create(KP_ERR_TYPE,
				       "the value is computed, not read from memory: evaluate it again instead of rereading it");
	size_t n = v->size < size ? (size_t)v->size : size;
	if (n) {
		// watch rereads values a live kernel changes: never a torn one.
		struct kp_error *err = n <= KP_READ_WHOLE_MAX ?
			kp_kernel_read_whole(v->kernel, v->address, buf, n) :
			kp_read(v->kernel, KP_VIRT, v->address, buf, n);
		if (err)
			return err;
	}
	*len_ret = n;
	return NULL;
}

struct kp_error *kp_value_type_name(struct kp_value *v, char **ret)
{
	if (v->untyped)
		return kp_error_create(KP_ERR_TYPE, "no type known for symbol '%s'",
				       v->symbol ? v->symbol : "?");
	return kp_btf_type_name(v->btf, v->type, ret);
}


// ---------------------------------------------------------------- facts for the operators

char *kp_value_type_str(const struct btf *btf, uint32_t type)
{
	char *s = NULL;
	if (kp_btf_type_name(btf, type, &s))
		return NULL;
	return s;
}

struct kp_error *kp_value_type_error(const struct kp_value *v, const char *fmt)
{
	char *name = v->untyped ? NULL : kp_value_type_str(v->btf, v->type);
	struct kp_error *err = kp_error_create(KP_ERR_TYPE, fmt, name ? name : "?");
	free(name);
	return err;
}

struct kp_error *kp_value_untyped_error(const struct kp_value *v)
{
	const char *s = v->symbol ? v->symbol : "?";
	return kp_error_create(KP_ERR_TYPE,
			       "no type known for symbol '%s' (BTF has no VAR for it); cast it, "
			       "e.g. (unsigned long)%s or *(struct foo *)&%s", s, s, s);
}

int kp_value_kind(const struct kp_value *v)
{
	return kp_btf_kind(v->btf, v->type);
}

bool kp_value_is_pointer(const struct kp_value *v)
{
	return !v->untyped && kp_value_kind(v) == BTF_KIND_PTR;
}

uint32_t kp_value_pointer_target(const struct kp_value *v, uint64_t *esize_ret)
{
	const struct btf_type *t = btf__type_by_id(v->btf, kp_btf_strip(v->btf, v->type));
	uint32_t target = t ? t->type : 0;
	uint64_t esize = kp_btf_size(v->btf, target);
	// GNU C: void * and function pointers step by one byte.
	*esize_ret = esize ? esize : 1;
	return target;
}

struct kp_error *kp_value_pointer_step(const struct kp_value *v, uint64_t *esize_ret)
{
	uint64_t esize, checked;
	uint32_t target = kp_value_pointer_target(v, &esize);
	struct kp_error *err = kp_btf_size_checked(v->btf, target, &checked);
	if (err)
		return err;
	*esize_ret = esize;
	return NULL;
}
