// Kernel BTF: loading (--btf file, /sys/kernel/btf/vmlinux, or the kernel's
// own .BTF section read from memory), header validation before libbpf sees
// the bytes, and the type helpers every typed value uses.
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <linux/btf.h>

#include "types/btf.h"
#include "io/file.h"
#include "core/kernel.h"

// The kernel's BTF is ~4-6 MB; anything far beyond that is not BTF.
#define MAX_BTF_SIZE (256u << 20)
#define MAX_DEPTH 64

// ---------------------------------------------------------------- validation

struct kp_error *kp_btf_validate(const void *data, size_t size, const char *where)
{
	struct btf_header hdr;
	if (size < sizeof(hdr))
		return kp_error_create(KP_ERR_FORMAT,
				       "%s: truncated BTF: %zu bytes, the header needs %zu",
				       where, size, sizeof(hdr));
	memcpy(&hdr, data, sizeof(hdr));
	if (hdr.magic != BTF_MAGIC)
		return kp_error_create(KP_ERR_FORMAT,
				       "%s: bad BTF magic 0x%04x at offset 0 (expected 0x%04x)",
				       where, hdr.magic, BTF_MAGIC);
	if (hdr.version != BTF_VERSION)
		return kp_error_create(KP_ERR_FORMAT,
				       "%s: unsupported BTF version %u at offset 2 (expected %u)",
				       where, hdr.version, BTF_VERSION);
	if (hdr.hdr_len < sizeof(hdr) || hdr.hdr_len > size)
		return kp_error_create(KP_ERR_FORMAT,
				       "%s: bad BTF header length %u at offset 4 (blob is %zu bytes)",
				       where, hdr.hdr_len, size);
	uint64_t meta = size - hdr.hdr_len;
	// Types start at hdr_len + type_off: libbpf checks only type_off, and
	// an odd hdr_len would leave every struct btf_type misaligned.
	if (hdr.type_off % 4 || hdr.hdr_len % 4)
		return kp_error_create(KP_ERR_FORMAT,
				       "%s: BTF type section at offset %u + %u is not 4-byte aligned",
				       where, hdr.hdr_len, hdr.type_off);
	if ((uint64_t)hdr.type_off + hdr.type_len > meta)
		return kp_error_create(KP_ERR_FORMAT,
				       "%s: BTF type section [%u, +%u) runs past the end (%" PRIu64
				       " bytes after the header)",
				       where, hdr.type_off, hdr.type_len, meta);
	if ((uint64_t)hdr.str_off + hdr.str_len > meta)
		return kp_error_create(KP_ERR_FORMAT,
				       "%s: BTF string section [%u, +%u) runs past the end (%" PRIu64
				       " bytes after the header)",
				       where, hdr.str_off, hdr.str_len, meta);
	if ((uint64_t)hdr.type_off + hdr.type_len > hdr.str_off)
		return kp_error_create(KP_ERR_FORMAT,
				       "%s: BTF type section [%u, +%u) overlaps the string section at %u",
				       where, hdr.type_off, hdr.type_len, hdr.str_off);
	const char *strs = (const char *)data + hdr.hdr_len + hdr.str_off;
	if (hdr.str_len == 0 || hdr.str_len > BTF_MAX_NAME_OFFSET || strs[0] != '\0' ||
	    strs[hdr.str_len - 1] != '\0')
		return kp_error_create(KP_ERR_FORMAT,
				       "%s: bad BTF string section at offset %u (length %u)",
				       where, hdr.hdr_len + hdr.str_off, hdr.str_len);
	return NULL;
}

// ---------------------------------------------------------------- loading

static struct kp_error *from_blob(const void *data, size_t size, const char *where,
				  struct btf **ret)
{
	struct kp_error *err = kp_btf_validate(data, size, where);
	if (err)
		return err;
	// libbpf reports parse problems on stderr; the library never prints.
	libbpf_print_fn_t old = libbpf_set_print(NULL);
	struct btf *btf = btf__new(data, (uint32_t)size);
	int saved = errno;
	libbpf_set_print(old);
	errno = saved;
	if (!btf)
		return kp_error_create(KP_ERR_FORMAT, "%s: libbpf rejected the BTF: %s", where,
				       strerror(errno));
	*ret = btf;
	return NULL;
}

static struct kp_error *from_file(const char *path, struct btf **ret)
{
	char *buf;
	size_t len;
	struct kp_error *err = kp_read_whole_file(path, &buf, &len);
	if (err)
		return kp_error_prefix(err, "BTF file %s", path);
	if (len >= 4 && memcmp(buf, "\177ELF", 4) == 0) {
		// A vmlinux: let libbpf find its .BTF section.
		free(buf);
		libbpf_print_fn_t old = libbpf_set_print(NULL);
		struct btf *btf = btf__parse_elf(path, NULL);
		int saved = errno;
		libbpf_set_print(old);
		errno = saved;
		if (!btf)
			return kp_error_create(KP_ERR_FORMAT, "BTF file %s: no usable .BTF section: %s",
					       path, strerror(errno));
		*ret = btf;
		return NULL;
	}
	char where[512];
	snprintf(where, sizeof(where), "BTF file %s", path);
	err = from_blob(buf, len, where, ret);
	free(buf);
	return err;
}

static struct kp_error *from_memory(struct kp_kernel *k, uint64_t *start_ret,
				    size_t *size_ret, struct btf **ret)
{
	struct kp_symbol start, stop;
	struct kp_error *err = NULL;
	if (!k->symtab || (err = kp_symtab_by_name(k->symtab, "__start_BTF", &start)) ||
	    (err = kp_symtab_by_name(k->symtab, "__stop_BTF", &stop))) {
		kp_error_destroy(err);
		return kp_error_create(KP_ERR_NOT_FOUND,
				       "no BTF: symbols __start_BTF/__stop_BTF not found; pass --btf FILE");
	}
	if (stop.address <= start.address || stop.address - start.address > MAX_BTF_SIZE)
		return kp_error_create(KP_ERR_FORMAT,
				       "no BTF: bad .BTF bounds __start_BTF=0x%" PRIx64
				       " __stop_BTF=0x%" PRIx64 "; pass --btf FILE",
				       start.address, stop.address);
	size_t size = stop.address - start.address;
	void *buf = malloc(size);
	if (!buf)
		return &kp_enomem;
	if (!k->mem) {
		free(buf);
		return kp_error_create(KP_ERR_FAULT, "no BTF: no memory to read .BTF from; pass --btf FILE");
	}
	err = kp_memory_read(k->mem, KP_VIRT, start.address, buf, size);
	if (err) {
		free(buf);
		return kp_error_prefix(err, "no BTF: reading .BTF at 0x%" PRIx64 " (%zu bytes) "
				       "(pass --btf FILE)", start.address, size);
	}
	char where[128];
	snprintf(where, sizeof(where), ".BTF in memory at 0x%" PRIx64, start.address);
	err = from_blob(buf, size, where, ret);
	free(buf);
	if (!err) {
		*start_ret = start.address;
		*size_ret = size;
	}
	return err;
}

static struct kp_error *load(struct kp_kernel *k, struct btf **btf_ret, char **source_ret)
{
	struct kp_error *err;
	struct btf *btf = NULL;
	char *source = NULL;
	if (k->btf_path) {
		err = from_file(k->btf_path, &btf);
		if (err)
			return err;
		source = strdup(k->btf_path);
	} else {
		struct kp_error *live_err = NULL;
		if (k->src.live) {
			live_err = from_file("/sys/kernel/btf/vmlinux", &btf);
			if (!live_err)
				source = strdup("/sys/kernel/btf/vmlinux");
		}
		if (!btf) {
			uint64_t start = 0;
			size_t size = 0;
			err = from_memory(k, &start, &size, &btf);
			if (err) {
				if (live_err) {
					err = kp_error_prefix(err, "%s", live_err->message);
					kp_error_destroy(live_err);
				}
				return err;
			}
			kp_error_destroy(live_err);
			if (asprintf(&source, ".BTF in memory (0x%" PRIx64 ", %.1f MB)", start,
				     size / 1e6) < 0)
				source = NULL;
		}
	}
	if (!source) {
		btf__free(btf);
		return &kp_enomem;
	}
	*btf_ret = btf;
	*source_ret = source;
	return NULL;
}

static struct kp_error *error_copy(const struct kp_error *e)
{
	struct kp_error *c = e->has_address ? kp_error_fault(e->address, "%s", e->message) :
		kp_error_create(e->code, "%s", e->message);
	if (c != &kp_enomem) {
		c->code = e->code;
		c->errnum = e->errnum;
	}
	return c;
}

struct kp_error *kp_kernel_btf(struct kp_kernel *k, struct btf **ret)
{
	if (!k->btf && !k->btf_error) {
		struct btf *btf = NULL;
		char *source = NULL;
		struct kp_error *err = load(k, &btf, &source);
		struct kp_btf_types *types = NULL;
		if (!err) {
			types = calloc(1, sizeof(*types));
			if (types)
				types->work = btf__new_empty_split(btf);
			if (!types || !types->work) {
				free(types);
				btf__free(btf);
				free(source);
				err = &kp_enomem;
			}
		}
		if (err) {
			if (err == &kp_enomem)
				return err;	// not remembered: may succeed later
			k->btf_error = err;
		} else {
			k->btf = btf;
			k->btf_source = source;
			k->types = types;
		}
	}
	if (k->btf_error)
		return error_copy(k->btf_error);
	*ret = k->btf;
	return NULL;
}

struct kp_error *kp_kernel_load_btf(struct kp_kernel *kernel)
{
	struct btf *btf;
	return kp_kernel_btf(kernel, &btf);
}

struct kp_error *kp_btf_work(struct kp_kernel *kernel, struct btf **ret)
{
	struct btf *base;
	struct kp_error *err = kp_kernel_btf(kernel, &base);
	if (err)
		return err;
	*ret = kernel->types->work;
	return NULL;
}

void kp_btf_types_destroy(struct kp_btf_types *types)
{
	if (!types)
		return;
	btf__free(types->work);
	free(types->synth);
	free(types->vars);
	for (size_t i = 0; i < KP_LAYOUT_CACHE; i++)
		free(types->layout[i].key);
	free(types);
}

// ---------------------------------------------------------------- type helpers

static const struct btf_type *ty(const struct btf *btf, uint32_t id)
{
	return btf__type_by_id(btf, id);
}

static uint32_t strip(const struct btf *btf, uint32_t id, bool typedefs)
{
	for (int i = 0; i < MAX_DEPTH; i++) {
		const struct btf_type *t = ty(btf, id);
		if (!t || id == 0)
			return id;
		switch (btf_kind(t)) {
		case BTF_KIND_TYPEDEF:
			if (!typedefs)
				return id;
			// fallthrough
		case BTF_KIND_CONST:
		case BTF_KIND_VOLATILE:
		case BTF_KIND_RESTRICT:
		case BTF_KIND_TYPE_TAG:
			id = t->type;
			break;
		default:
			return id;
		}
	}
	return 0;	// a qualifier loop in hostile BTF: treat as void
}

uint32_t kp_btf_strip(const struct btf *btf, uint32_t id)
{
	return strip(btf, id, true);
}

uint32_t kp_btf_strip_cv(const struct btf *btf, uint32_t id)
{
	return strip(btf, id, false);
}

int kp_btf_kind(const struct btf *btf, uint32_t id)
{
	id = kp_btf_strip(btf, id);
	const struct btf_type *t = id ? ty(btf, id) : NULL;
	return t ? btf_kind(t) : BTF_KIND_UNKN;
}

uint64_t kp_btf_size(const struct btf *btf, uint32_t id)
{
	int kind = kp_btf_kind(btf, id);
	if (kind == BTF_KIND_UNKN || kind == BTF_KIND_FUNC || kind == BTF_KIND_FUNC_PROTO ||
	    kind == BTF_KIND_FWD)
		return 0;
	int64_t size = btf__resolve_size(btf, id);
	return size > 0 ? (uint64_t)size : 0;
}

bool kp_btf_is_signed(const struct btf *btf, uint32_t id)
{
	const struct btf_type *t = ty(btf, kp_btf_strip(btf, id));
	if (!t)
		return false;
	if (btf_is_int(t))
		return btf_int_encoding(t) & BTF_INT_SIGNED;
	if (btf_is_enum(t) || btf_is_enum64(t))
		return btf_kflag(t);
	return false;
}

bool kp_btf_is_integer(const struct btf *btf, uint32_t id)
{
	int kind = kp_btf_kind(btf, id);
	return kind == BTF_KIND_INT || kind == BTF_KIND_ENUM || kind == BTF_KIND_ENUM64;
}

bool kp_btf_is_scalar(const struct btf *btf, uint32_t id)
{
	int kind = kp_btf_kind(btf, id);
	return kp_btf_is_integer(btf, id) || kind == BTF_KIND_PTR || kind == BTF_KIND_FLOAT;
}

bool kp_btf_is_bool(const struct btf *btf, uint32_t id)
{
	const struct btf_type *t = ty(btf, kp_btf_strip(btf, id));
	return t && btf_is_int(t) && (btf_int_encoding(t) & BTF_INT_BOOL);
}

bool kp_btf_is_char(const struct btf *btf, uint32_t id)
{
	const struct btf_type *t = ty(btf, kp_btf_strip(btf, id));
	if (!t || !btf_is_int(t) || t->size != 1 || (btf_int_encoding(t) & BTF_INT_BOOL))
		return false;
	if (btf_int_encoding(t) & BTF_INT_CHAR)
		return true;
	const char *name = btf__name_by_offset(btf, t->name_off);
	return name && strstr(name, "char");
}

// ---------------------------------------------------------------- synthesized types

static struct kp_error *synth(struct kp_kernel *k, int kind, uint32_t ref, uint32_t n,
			      uint32_t *ret)
{
	struct btf *btf;
	struct kp_error *err = kp_btf_work(k, &btf);
	if (err)
		return err;
	struct kp_btf_types *types = k->types;
	for (size_t i = 0; i < types->nsynth; i++) {
		const struct kp_synth *s = &types->synth[i];
		if (s->kind == kind && s->ref == ref && s->n == n) {
			*ret = s->id;
			return NULL;
		}
	}
	if (types->nsynth == types->synth_cap) {
		size_t cap = types->synth_cap ? types->synth_cap * 2 : 16;
		struct kp_synth *s = realloc(types->synth, cap * sizeof(*s));
		if (!s)
			return &kp_enomem;
		types->synth = s;
		types->synth_cap = cap;
	}
	int id;
	if (kind == BTF_KIND_PTR) {
		id = btf__add_ptr(btf, (int)ref);
	} else if (kind == BTF_KIND_ARRAY) {
		uint32_t index = 0;
		kp_btf_find_int(btf, "unsigned int", &index);
		id = btf__add_array(btf, (int)index, (int)ref, n);
	} else if (kind == BTF_KIND_CONST) {
		id = btf__add_const(btf, (int)ref);
	} else {
		id = btf__add_func_proto(btf, 0);
		if (id > 0 && btf__add_func_param(btf, "", 0) < 0)
			id = -ENOMEM;
	}
	if (id <= 0)
		return kp_error_create(KP_ERR_INVALID, "cannot build a type over BTF type id %u: %s",
				       ref, strerror(-id));
	types->synth[types->nsynth++] = (struct kp_synth){ kind, ref, n, (uint32_t)id };
	*ret = (uint32_t)id;
	return NULL;
}

struct kp_error *kp_btf_pointer_to(struct kp_kernel *kernel, uint32_t target, uint32_t *ret)
{
	return synth(kernel, BTF_KIND_PTR, target, 0, ret);
}

struct kp_error *kp_btf_array_of(struct kp_kernel *kernel, uint32_t elem, uint32_t nelems,
				 uint32_t *ret)
{
	return synth(kernel, BTF_KIND_ARRAY, elem, nelems, ret);
}

struct kp_error *kp_btf_const_of(struct kp_kernel *kernel, uint32_t type, uint32_t *ret)
{
	return synth(kernel, BTF_KIND_CONST, type, 0, ret);
}

struct kp_error *kp_btf_unknown_func(struct kp_kernel *kernel, uint32_t *ret)
{
	return synth(kernel, BTF_KIND_FUNC_PROTO, 0, 0, ret);
}

struct kp_error *kp_btf_int_type(struct kp_kernel *k, unsigned size, bool is_signed,
				 uint32_t *ret)
{
	static const char *const names[4][2] = {
		{ "unsigned char", "signed char" }, { "unsigned short", "short" },
		{ "unsigned int", "int" }, { "unsigned long", "long" },
	};
	int slot = size == 1 ? 0 : size == 2 ? 1 : size == 4 ? 2 : size == 8 ? 3 : -1;
	if (slot < 0)
		return kp_error_create(KP_ERR_INVALID, "no %u-byte integer type", size);
	struct btf *btf;
	struct kp_error *err = kp_btf_work(k, &btf);
	if (err)
		return err;
	uint32_t *cached = &k->types->ints[slot][is_signed];
	if (*cached) {
		*ret = *cached;
		return NULL;
	}
	uint32_t id = 0;
	if (!kp_btf_find_int(btf, names[slot][is_signed], &id)) {
		// Any integer of that size and signedness (e.g. "long long").
		uint32_t n = btf__type_cnt(btf);
		for (uint32_t i = 1; i < n && !id; i++) {
			const struct btf_type *t = ty(btf, i);
			if (t && btf_is_int(t) && t->size == size && btf_int_bits(t) == size * 8 &&
			    !(btf_int_encoding(t) & BTF_INT_BOOL) &&
			    !!(btf_int_encoding(t) & BTF_INT_SIGNED) == is_signed)
				id = i;
		}
	}
	if (!id) {
		// Only a BTF without this integer type (hostile or stripped) gets
		// here. libbpf 1.1's btf__add_int() on the split BTF looks the name
		// up in the base, and that first string lookup converts the base to
		// its modifiable form: its types and strings move and the old copies
		// are freed. Drop the one cache that points into the base (VAR names;
		// rebuilt on next use) rather than converting every base up front,
		// which costs ~100 ms on the kernel's 4 MB BTF.
		free(k->types->vars);
		k->types->vars = NULL;
		k->types->nvars = 0;
		k->types->vars_indexed = false;
		int nid = btf__add_int(btf, names[slot][is_signed], size,
				       is_signed ? BTF_INT_SIGNED : 0);
		if (nid <= 0)
			return &kp_enomem;
		id = (uint32_t)nid;
	}
	*cached = id;
	*ret = id;
	return NULL;
}

struct kp_error *kp_btf_find(struct kp_kernel *k, int kind, const char *name, uint32_t *ret)
{
	struct btf *btf;
	struct kp_error *err = kp_btf_work(k, &btf);
	if (err)
		return err;
	int32_t id = btf__find_by_name_kind(btf, name, (uint32_t)kind);
	if (id <= 0)
		return kp_error_create(KP_ERR_NOT_FOUND, "%s%s not found in BTF",
				       kind == BTF_KIND_STRUCT ? "struct " :
				       kind == BTF_KIND_UNION ? "union " :
				       kind == BTF_KIND_ENUM ? "enum " :
				       kind == BTF_KIND_TYPEDEF ? "type " : "", name);
	*ret = (uint32_t)id;
	return NULL;
}

// ---------------------------------------------------------------- integer names

// GCC names integers "long unsigned int"; C programmers write "unsigned long".
// Writes the canonical C name; false if name is not made of C integer words.
bool kp_btf_int_cname(const char *name, char *out, size_t size)
{
	int nlong = 0, nshort = 0, nchar = 0, nint = 0, nsigned = 0, nunsigned = 0, nbool = 0;
	int n128 = 0;
	const char *p = name;
	while (*p) {
		while (*p == ' ')
			p++;
		const char *w = p;
		while (*p && *p != ' ')
			p++;
		size_t len = (size_t)(p - w);
		if (!len)
			break;
#define IS(s) (len == sizeof(s) - 1 && memcmp(w, s, len) == 0)
		if (IS("long"))
			nlong++;
		else if (IS("short"))
			nshort++;
		else if (IS("char"))
			nchar++;
		else if (IS("int"))
			nint++;
		else if (IS("signed") || IS("__signed__"))
			nsigned++;
		else if (IS("unsigned"))
			nunsigned++;
		else if (IS("_Bool") || IS("bool"))
			nbool++;
		else if (IS("__int128"))
			n128++;
		else
			return false;
#undef IS
	}
	const char *base;
	if (nbool) {
		if (nbool > 1 || nlong || nshort || nchar || nint || nsigned || nunsigned || n128)
			return false;
		base = "_Bool";
	} else if (n128) {
		if (n128 > 1 || nlong || nshort || nchar || nint)
			return false;
		base = "__int128";
	} else if (nchar) {
		if (nchar > 1 || nlong || nshort || nint)
			return false;
		base = "char";
	} else if (nshort) {
		if (nshort > 1 || nlong || nint > 1)
			return false;
		base = "short";
	} else if (nlong) {
		if (nlong > 2 || nint > 1)
			return false;
		base = nlong == 2 ? "long long" : "long";
	} else if (nint == 1 || nsigned || nunsigned) {
		if (nint > 1)
			return false;
		base = "int";
	} else {
		return false;
	}
	if (nsigned + nunsigned > 1)
		return false;
	const char *sign = nunsigned ? "unsigned " : (nsigned && nchar) ? "signed " : "";
	return (size_t)snprintf(out, size, "%s%s", sign, base) < size;
}

bool kp_btf_find_int(const struct btf *btf, const char *cname, uint32_t *ret)
{
	char want[32], got[32];
	if (!kp_btf_int_cname(cname, want, sizeof(want)))
		return false;
	uint32_t n = btf__type_cnt(btf);
	for (uint32_t i = 1; i < n; i++) {
		const struct btf_type *t = ty(btf, i);
		if (!t || !btf_is_int(t))
			continue;
		const char *name = btf__name_by_offset(btf, t->name_off);
		if (name && kp_btf_int_cname(name, got, sizeof(got)) && strcmp(got, want) == 0) {
			*ret = i;
			return true;
		}
	}
	return false;
}

// ---------------------------------------------------------------- members

// Hostile BTF can make anonymous members contain themselves: bound the
// members visited, not only the depth, or the search is exponential.
#define MEMBER_BUDGET 200000

static bool find_member(const struct btf *btf, uint32_t id, const char *name, size_t len,
			uint64_t base, struct kp_btf_member *ret, int depth, long *budget)
{
	const struct btf_type *t = ty(btf, kp_btf_strip(btf, id));
	if (!t || !btf_is_composite(t) || depth > MAX_DEPTH || (*budget -= btf_vlen(t) + 1) < 0)
		return false;
	const struct btf_member *m = btf_members(t);
	for (uint32_t i = 0; i < btf_vlen(t); i++) {
		const char *mname = btf__name_by_offset(btf, m[i].name_off);
		uint64_t off = base + btf_member_bit_offset(t, i);
		if (mname && *mname) {
			if (strlen(mname) != len || memcmp(mname, name, len) != 0)
				continue;
			ret->type = m[i].type;
			ret->bit_offset = off;
			ret->bit_size = btf_member_bitfield_size(t, i);
			// Pre-kflag encoding: the bitfield lives in the INT type.
			const struct btf_type *mt = ty(btf, kp_btf_strip(btf, m[i].type));
			if (!ret->bit_size && mt && btf_is_int(mt) &&
			    (btf_int_offset(mt) || btf_int_bits(mt) != mt->size * 8)) {
				ret->bit_offset += btf_int_offset(mt);
				ret->bit_size = btf_int_bits(mt);
			}
			return true;
		}
		if (find_member(btf, m[i].type, name, len, off, ret, depth + 1, budget))
			return true;
	}
	return false;
}

static size_t edit_distance(const char *a, size_t la, const char *b, size_t lb)
{
	size_t row[64];
	if (la >= 64 || lb >= 64)
		return SIZE_MAX;
	for (size_t j = 0; j <= lb; j++)
		row[j] = j;
	for (size_t i = 1; i <= la; i++) {
		size_t diag = row[0];
		row[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t up = row[j];
			size_t best = diag + (a[i - 1] != b[j - 1]);
			if (up + 1 < best)
				best = up + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			row[j] = best;
			diag = up;
		}
	}
	return row[lb];
}

struct suggest {
	const char *name[3];
	size_t dist[3];
};

static void collect(const struct btf *btf, uint32_t id, const char *want, size_t len,
		    struct suggest *s, int depth, long *budget)
{
	const struct btf_type *t = ty(btf, kp_btf_strip(btf, id));
	if (!t || !btf_is_composite(t) || depth > MAX_DEPTH || (*budget -= btf_vlen(t) + 1) < 0)
		return;
	const struct btf_member *m = btf_members(t);
	size_t limit = len <= 3 ? 1 : len <= 6 ? 2 : 3;
	for (uint32_t i = 0; i < btf_vlen(t); i++) {
		const char *mname = btf__name_by_offset(btf, m[i].name_off);
		if (!mname || !*mname) {
			collect(btf, m[i].type, want, len, s, depth + 1, budget);
			continue;
		}
		size_t ml = strlen(mname);
		size_t d = edit_distance(want, len, mname, ml);
		if (d > limit && !(ml > len && len >= 3 && strncmp(mname, want, len) == 0))
			continue;
		if (d > limit)
			d = limit;	// prefix match ranks with the weakest
		for (int k = 0; k < 3; k++) {
			if (!s->name[k] || d < s->dist[k]) {
				for (int j = 2; j > k; j--) {
					s->name[j] = s->name[j - 1];
					s->dist[j] = s->dist[j - 1];
				}
				s->name[k] = mname;
				s->dist[k] = d;
				break;
			}
		}
	}
}

struct kp_error *kp_btf_member(const struct btf *btf, uint32_t id, const char *name,
			       size_t len, struct kp_btf_member *ret)
{
	char *tname = NULL;
	const struct btf_type *t = ty(btf, kp_btf_strip(btf, id));
	long budget = MEMBER_BUDGET;
	if (t && btf_is_composite(t) && find_member(btf, id, name, len, 0, ret, 0, &budget)) {
		if (!ty(btf, ret->type))
			return kp_error_create(KP_ERR_FORMAT,
					       "corrupt BTF: member '%.*s' of type id %u has "
					       "nonexistent type id %u", (int)len, name, id, ret->type);
		return NULL;
	}
	if (kp_btf_type_name(btf, id, &tname))
		tname = NULL;
	if (!t || !btf_is_composite(t)) {
		struct kp_error *err = kp_error_create(KP_ERR_TYPE,
			"member '%.*s' of a non-struct type %s", (int)len, name,
			tname ? tname : "?");
		free(tname);
		return err;
	}
	struct suggest s;
	memset(&s, 0, sizeof(s));
	budget = MEMBER_BUDGET;
	collect(btf, id, name, len, &s, 0, &budget);
	char hint[256] = "";
	if (s.name[0])
		snprintf(hint, sizeof(hint), " (did you mean: %s%s%s%s%s?)", s.name[0],
			 s.name[1] ? ", " : "", s.name[1] ? s.name[1] : "",
			 s.name[2] ? ", " : "", s.name[2] ? s.name[2] : "");
	struct kp_error *err = kp_error_create(KP_ERR_TYPE, "%s has no member '%.*s'%s",
					       tname ? tname : "struct", (int)len, name, hint);
	free(tname);
	return err;
}

// ---------------------------------------------------------------- variables

static int var_cmp(const void *a, const void *b)
{
	return strcmp(((const struct kp_var *)a)->name, ((const struct kp_var *)b)->name);
}

static struct kp_error *index_vars(struct kp_kernel *k, struct btf *btf)
{
	struct kp_btf_types *types = k->types;
	uint32_t n = btf__type_cnt(btf);
	size_t count = 0, cap = 0;
	struct kp_var *vars = NULL;
	for (uint32_t i = 1; i < n; i++) {
		const struct btf_type *t = ty(btf, i);
		if (!t || !btf_is_datasec(t))
			continue;
		const char *sec = btf__name_by_offset(btf, t->name_off);
		bool percpu = sec && strcmp(sec, ".data..percpu") == 0;
		const struct btf_var_secinfo *vs = btf_var_secinfos(t);
		for (uint32_t j = 0; j < btf_vlen(t); j++) {
			const struct btf_type *v = ty(btf, vs[j].type);
			const char *name = v ? btf__name_by_offset(btf, v->name_off) : NULL;
			if (!v || !btf_is_var(v) || !name || !*name)
				continue;
			if (count == cap) {
				cap = cap ? cap * 2 : 256;
				struct kp_var *nv = realloc(vars, cap * sizeof(*nv));
				if (!nv) {
					free(vars);
					return &kp_enomem;
				}
				vars = nv;
			}
			vars[count++] = (struct kp_var){ name, v->type, percpu };
		}
	}
	if (count)
		qsort(vars, count, sizeof(*vars), var_cmp);
	types->vars = vars;
	types->nvars = count;
	types->vars_indexed = true;
	return NULL;
}

bool kp_btf_var(struct kp_kernel *k, const char *name, uint32_t *type_ret, bool *percpu_ret)
{
	struct btf *btf;
	struct kp_error *err = kp_btf_work(k, &btf);
	if (err) {
		kp_error_destroy(err);
		return false;
	}
	if (!k->types->vars_indexed && index_vars(k, btf))
		return false;
	struct kp_var key = { name, 0, false };
	const struct kp_var *v = k->types->nvars ?
		bsearch(&key, k->types->vars, k->types->nvars, sizeof(key), var_cmp) : NULL;
	if (!v)
		return false;
	*type_ret = v->type;
	*percpu_ret = v->percpu;
	return true;
}
