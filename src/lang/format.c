// SPDX-License-Identifier: MIT
// Formatting typed values as C-like text or JSON (in the style of drgn and
// libbpf's btf_dump__dump_type_data): the whole value is read with one
// memory read, then members, elements and bitfields are decoded from the
// bytes. Only char pointers are followed (to show the string), and a fault
// there only drops the string.
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/btf.h>
#include <linux/btf.h>

#include "core/kernel.h"
#include "lang/value.h"
#include "types/btf.h"
#include "symbols/symtab.h"
#include "util/error.h"
#include "util/json.h"
#include "util/opts.h"
#include "util/strbuf.h"

#define MAX_FORMAT_DEPTH 32
#define MAX_STRING_DEREF 256

struct fmt {
	struct kp_kernel *kernel;
	const struct btf *btf;
	unsigned flags;
	bool json;
	bool one_line;
	struct kp_sb *sb;
	// Values visited: hostile BTF can nest a struct in itself many times
	// over, which the depth bound alone leaves exponential.
	long budget;
	// JSON: what the caps left out (text says it in place instead).
	uint64_t not_shown;
	const char *limit;
};

#define FORMAT_BUDGET (256L << 10)
// Text beyond this is cut with "{...}" (a task_struct is ~25 KB of text).
#define MAX_OUTPUT (16u << 20)

static void indent(struct fmt *f, int level)
{
	if (f->one_line)
		return;
	for (int i = 0; i < level; i++)
		kp_sb_putn(f->sb, "\t", 1);
}

static void put_string(struct fmt *f, const uint8_t *s, size_t n)
{
	n = strnlen((const char *)s, n);
	if (f->json) {
		kp_json_put_string(f->sb, s, n);
		return;
	}
	kp_sb_putn(f->sb, "\"", 1);
	for (size_t i = 0; i < n; i++) {
		uint8_t c = s[i];
		if (c == '"' || c == '\\') {
			char esc[2] = { '\\', (char)c };
			kp_sb_putn(f->sb, esc, 2);
		} else if (c == '\n') {
			kp_sb_putn(f->sb, "\\n", 2);
		} else if (c == '\t') {
			kp_sb_putn(f->sb, "\\t", 2);
		} else if (c == '\r') {
			kp_sb_putn(f->sb, "\\r", 2);
		} else if (c < 0x20 || c >= 0x7f) {
			kp_sb_printf(f->sb, "\\x%02x", c);
		} else {
			char ch = (char)c;
			kp_sb_putn(f->sb, &ch, 1);
		}
	}
	kp_sb_putn(f->sb, "\"", 1);
}

// What an output cap left out: in text, in the output itself; in JSON,
// counted for kp_value_format_capped() so that every array keeps elements
// of its one type and every object its members.
static void put_cap(struct fmt *f, uint64_t left, const char *what)
{
	if (f->json) {
		f->not_shown += left;
		f->limit = "output";
		return;
	}
	kp_sb_printf(f->sb, "<%" PRIu64 " more %s not shown: output limit>", left, what);
}

static void put_symbol(struct fmt *f, uint64_t address)
{
	struct kp_symbol sym;
	// Below the kernel's half of the address space a "pointer" is a small
	// number or a per-CPU offset that would symbolize to nonsense.
	if ((f->flags & KP_FORMAT_NO_SYMBOLS) || f->json ||
	    !kp_kernel_is_kernel_address(f->kernel, address) ||
	    !kp_kernel_symbol_at(f->kernel, address, &sym))
		return;
	uint64_t off = address - sym.address;
	if (address < sym.address || (sym.size ? off >= sym.size : off != 0))
		return;
	kp_sb_printf(f->sb, " <%s", sym.name);
	if (off)
		kp_sb_printf(f->sb, "+0x%" PRIx64, off);
	if (sym.module)
		kp_sb_printf(f->sb, " [%s]", sym.module);
	kp_sb_putn(f->sb, ">", 1);
}

static void put_hex(struct fmt *f, uint64_t x)
{
	kp_sb_printf(f->sb, f->json ? "\"0x%" PRIx64 "\"" : "0x%" PRIx64, x);
}

// ` = "..."` for a char pointer whose target is readable.
static void put_pointed_string(struct fmt *f, uint64_t address)
{
	uint8_t buf[MAX_STRING_DEREF];
	// A string ending before a hole still shows.
	size_t got = kp_kernel_read_partial(f->kernel, address, buf, sizeof(buf), true);
	if (!got)
		return;
	kp_sb_printf(f->sb, " = ");
	put_string(f, buf, got);
}

static void format_type_prefix(struct fmt *f, uint32_t type)
{
	char *name = NULL;
	if (kp_btf_type_name(f->btf, type, &name)) {
		f->sb->failed = true;
		return;
	}
	kp_sb_printf(f->sb, "(%s)", name);
	free(name);
}

static bool all_zero(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return false;
	return true;
}

static void format_body(struct fmt *f, uint32_t type, const uint8_t *bytes, size_t avail,
			uint64_t bit_off, uint32_t bit_size, int level);

static void format_int(struct fmt *f, uint32_t type, uint64_t x)
{
	bool is_signed = kp_btf_is_signed(f->btf, type);
	if (kp_btf_is_bool(f->btf, type)) {
		kp_sb_printf(f->sb, x ? "true" : "false");
	} else if (f->json) {
		int64_t s = (int64_t)x;
		if (is_signed ? (s >= -(1LL << 53) && s <= (1LL << 53)) : x <= (1ULL << 53))
			kp_sb_printf(f->sb, is_signed ? "%" PRId64 : "%" PRIu64, x);
		else if (is_signed && s < 0)
			kp_sb_printf(f->sb, "\"%" PRId64 "\"", s);
		else
			put_hex(f, x);
	} else if (f->flags & KP_FORMAT_HEX) {
		if (is_signed && (int64_t)x < 0)
			kp_sb_printf(f->sb, "-0x%" PRIx64, -x);
		else
			kp_sb_printf(f->sb, "0x%" PRIx64, x);
	} else {
		kp_sb_printf(f->sb, is_signed ? "%" PRId64 : "%" PRIu64, x);
	}
}

static void format_enum(struct fmt *f, uint32_t type, uint64_t x)
{
	const struct btf_type *t = btf__type_by_id(f->btf, kp_btf_strip(f->btf, type));
	const char *name = NULL;
	if (t && btf_is_enum(t)) {
		const struct btf_enum *e = btf_enum(t);
		for (uint32_t i = 0; i < btf_vlen(t) && !name; i++)
			if ((uint32_t)e[i].val == (uint32_t)x)
				name = btf__name_by_offset(f->btf, e[i].name_off);
	} else if (t && btf_is_enum64(t)) {
		const struct btf_enum64 *e = btf_enum64(t);
		for (uint32_t i = 0; i < btf_vlen(t) && !name; i++)
			if (btf_enum64_value(&e[i]) == x)
				name = btf__name_by_offset(f->btf, e[i].name_off);
	}
	if (name && *name) {
		if (f->json)
			put_string(f, (const uint8_t *)name, strlen(name));
		else
			kp_sb_printf(f->sb, "%s", name);
	} else {
		format_int(f, type, x);
	}
}

static void format_members(struct fmt *f, uint32_t type, const uint8_t *bytes, size_t avail,
			   uint64_t base_bits, int level, bool *first)
{
	const struct btf_type *t = btf__type_by_id(f->btf, kp_btf_strip(f->btf, type));
	const struct btf_member *m = btf_members(t);
	uint32_t n = btf_vlen(t), i;
	for (i = 0; i < n && f->budget > 0 && !f->sb->failed; i++) {
		const char *name = btf__name_by_offset(f->btf, m[i].name_off);
		uint64_t off = base_bits + btf_member_bit_offset(t, i);
		uint32_t bits = btf_member_bitfield_size(t, i);
		uint32_t mtype = m[i].type;
		const struct btf_type *mt = btf__type_by_id(f->btf, kp_btf_strip(f->btf, mtype));
		if (!bits && mt && btf_is_int(mt) &&
		    (btf_int_offset(mt) || btf_int_bits(mt) != mt->size * 8)) {
			off += btf_int_offset(mt);
			bits = btf_int_bits(mt);
		}
		bool anon = !name || !*name;
		if (anon && f->json && mt && btf_is_composite(mt)) {
			if (--f->budget < 0 || level > MAX_FORMAT_DEPTH)
				continue;
			// JSON objects have no unnamed keys: lift the members up.
			format_members(f, mtype, bytes, avail, off, level + 1, first);
			continue;
		}
		if (f->json) {
			kp_sb_printf(f->sb, "%s\"%s\": ", *first ? "" : ", ", anon ? "" : name);
		} else {
			if (f->one_line)
				kp_sb_putn(f->sb, " ", 1);
			else
				indent(f, level + 1);
			if (!anon)
				kp_sb_printf(f->sb, ".%s = ", name);
			format_type_prefix(f, mtype);
		}
		*first = false;
		if (off / 8 > avail) {
			kp_sb_printf(f->sb, f->json ? "null" : "<out of bounds>");
		} else if (bits) {
			format_body(f, mtype, bytes, avail, off, bits, level + 1);
		} else {
			format_body(f, mtype, bytes + off / 8, avail - off / 8, off % 8, 0,
				    level + 1);
		}
		if (!f->json)
			kp_sb_printf(f->sb, f->one_line ? "," : ",\n");
	}
	if (i < n && !f->sb->failed && f->json) {
		put_cap(f, n - i, "members");
	} else if (i < n && !f->sb->failed) {
		// The cap stopped the members early: say so where they would be.
		if (f->one_line)
			kp_sb_putn(f->sb, " ", 1);
		else
			indent(f, level + 1);
		put_cap(f, n - i, "members");
		*first = false;
		kp_sb_printf(f->sb, f->one_line ? "," : ",\n");
	}
}

static void format_struct(struct fmt *f, uint32_t type, const uint8_t *bytes, size_t avail,
			  int level)
{
	bool first = true;
	kp_sb_putn(f->sb, "{", 1);
	if (!f->json && !f->one_line)
		kp_sb_putn(f->sb, "\n", 1);
	format_members(f, type, bytes, avail, 0, level, &first);
	if (f->json) {
		kp_sb_putn(f->sb, "}", 1);
		return;
	}
	if (f->one_line) {
		// Drop the last "," so that the text reads { .a = 1, .b = 2 }.
		if (!first && f->sb->len && f->sb->buf[f->sb->len - 1] == ',')
			f->sb->buf[--f->sb->len] = '\0';
		kp_sb_printf(f->sb, first ? "}" : " }");
		return;
	}
	indent(f, level);
	kp_sb_putn(f->sb, "}", 1);
}

// Separator before array element i.
static void sep(struct fmt *f, uint64_t i, bool nested, int level)
{
	if (f->json) {
		kp_sb_printf(f->sb, i ? ", " : "");
	} else if (nested) {
		kp_sb_putn(f->sb, "\n", 1);
		indent(f, level + 1);
	} else {
		kp_sb_printf(f->sb, i ? ", " : " ");
	}
}

static void format_array(struct fmt *f, uint32_t type, const uint8_t *bytes, size_t avail,
			 int level)
{
	const struct btf_type *t = btf__type_by_id(f->btf, kp_btf_strip(f->btf, type));
	const struct btf_array *a = btf_array(t);
	uint64_t esize = kp_btf_size(f->btf, a->type);
	uint64_t n = a->nelems;
	if (esize && n > avail / esize)
		n = avail / esize;
	if (kp_btf_is_char(f->btf, a->type) && esize == 1) {
		put_string(f, bytes, n);
		return;
	}
	uint64_t shown = n;
	if (!f->json && esize) {
		while (shown && all_zero(bytes + (shown - 1) * esize, esize))
			shown--;
	}
	if (!esize)
		shown = 0;
	bool nested = !kp_btf_is_scalar(f->btf, a->type) && !f->json && !f->one_line;
	kp_sb_printf(f->sb, f->json ? "[" : shown ? "{" : "{}");
	uint64_t i;
	for (i = 0; i < shown && !f->sb->failed && f->budget > 0; i++) {
		sep(f, i, nested, level);
		format_body(f, a->type, bytes + i * esize, esize, 0, 0, level + 1);
		if (nested)
			kp_sb_putn(f->sb, ",", 1);
	}
	if (i < shown && !f->sb->failed && f->json) {
		put_cap(f, shown - i, "elements");
	} else if (i < shown && !f->sb->failed) {
		// Not "}" alone: that would read as "the rest is zero".
		sep(f, i, nested, level);
		put_cap(f, shown - i, "elements");
		if (nested)
			kp_sb_putn(f->sb, ",", 1);
	}
	if (f->json) {
		kp_sb_putn(f->sb, "]", 1);
	} else if (shown) {
		if (nested) {
			kp_sb_putn(f->sb, "\n", 1);
			indent(f, level);
			kp_sb_putn(f->sb, "}", 1);
		} else {
			kp_sb_printf(f->sb, " }");
		}
	}
}

static void format_pointer(struct fmt *f, uint32_t type, uint64_t x)
{
	put_hex(f, x);
	if (f->json || !x)
		return;
	const struct btf_type *t = btf__type_by_id(f->btf, kp_btf_strip(f->btf, type));
	uint32_t target = t ? t->type : 0;
	if (kp_btf_is_char(f->btf, target))
		put_pointed_string(f, x);
	else
		put_symbol(f, x);
}

static void format_body(struct fmt *f, uint32_t type, const uint8_t *bytes, size_t avail,
			uint64_t bit_off, uint32_t bit_size, int level)
{
	if (f->sb->len > MAX_OUTPUT)
		f->budget = 0;
	if (level > MAX_FORMAT_DEPTH || --f->budget < 0) {
		if (f->json) {
			// null keeps the document's shape; the cap is counted.
			kp_sb_printf(f->sb, "null");
			f->not_shown++;
			f->limit = level > MAX_FORMAT_DEPTH ? "depth" : "output";
		} else
			kp_sb_printf(f->sb, "{...}");
		return;
	}
	uint64_t size = kp_btf_size(f->btf, type);
	int kind = kp_btf_kind(f->btf, type);
	bool scalar = kind == BTF_KIND_INT || kind == BTF_KIND_ENUM || kind == BTF_KIND_ENUM64 ||
		kind == BTF_KIND_PTR;
	if (scalar && !bit_size && size > avail) {
		kp_sb_printf(f->sb, f->json ? "null" : "<truncated>");
		return;
	}
	switch (kind) {
	case BTF_KIND_INT:
		format_int(f, type, kp_value_decode(f->btf, type, bytes, avail, bit_off, bit_size));
		break;
	case BTF_KIND_ENUM:
	case BTF_KIND_ENUM64:
		format_enum(f, type, kp_value_decode(f->btf, type, bytes, avail, bit_off, bit_size));
		break;
	case BTF_KIND_PTR:
		format_pointer(f, type, kp_value_decode(f->btf, type, bytes, avail, 0, 0));
		break;
	case BTF_KIND_FLOAT: {
		double d = NAN;
		if (size == 4 && avail >= 4) {
			float fl;
			memcpy(&fl, bytes, 4);
			d = fl;
		} else if (size == 8 && avail >= 8) {
			memcpy(&d, bytes, 8);
		}
		if (f->json && !isfinite(d))
			kp_sb_printf(f->sb, "null");
		else
			kp_sb_printf(f->sb, "%g", d);
		break;
	}
	case BTF_KIND_STRUCT:
	case BTF_KIND_UNION:
		format_struct(f, type, bytes, avail < size ? avail : size, level);
		break;
	case BTF_KIND_ARRAY:
		format_array(f, type, bytes, avail < size ? avail : size, level);
		break;
	default:
		kp_sb_printf(f->sb, f->json ? "null" : "<%s>",
			     kind == BTF_KIND_FWD ? "incomplete type" : "no value");
		break;
	}
}

struct kp_error *kp_value_format(struct kp_value *v, unsigned flags, char **ret)
{
	return kp_value_format_capped(v, flags, ret, NULL);
}

struct kp_error *kp_value_format_capped(struct kp_value *v, unsigned flags, char **ret,
					struct kp_format_cap *cap)
{
	if (v->untyped)
		return kp_error_create(KP_ERR_TYPE,
				       "no type known for symbol '%s' (BTF has no VAR for it); cast it, "
				       "e.g. (unsigned long)%s or *(struct foo *)&%s",
				       v->symbol ? v->symbol : "?", v->symbol ? v->symbol : "x",
				       v->symbol ? v->symbol : "x");
	struct kp_sb sb = { 0 };
	struct fmt f = {
		.kernel = v->kernel, .btf = v->btf, .flags = flags, .sb = &sb,
		.json = flags & KP_FORMAT_JSON, .one_line = flags & KP_FORMAT_ONE_LINE,
		.budget = FORMAT_BUDGET,
	};
	int kind = kp_btf_kind(v->btf, v->type);
	if (kind == BTF_KIND_FUNC_PROTO) {
		// A function: its "value" is where it is.
		if (f.json) {
			put_hex(&f, v->address);
		} else {
			format_type_prefix(&f, v->type);
			kp_sb_printf(&sb, "0x%" PRIx64, v->address);
			put_symbol(&f, v->address);
		}
	} else {
		if (kind == BTF_KIND_UNKN || kind == BTF_KIND_FWD) {
			char *name = NULL;
			if (kp_btf_type_name(v->btf, v->type, &name))
				return &kp_enomem;
			struct kp_error *err = kp_error_create(KP_ERR_TYPE,
				"cannot print a value of %s type %s",
				kind == BTF_KIND_FWD ? "incomplete" : "void", name);
			free(name);
			return err;
		}
		struct kp_error *err = kp_value_fetch(v);
		if (err)
			return err;
		if (!f.json)
			format_type_prefix(&f, v->type);
		format_body(&f, v->type, v->data, v->size, v->bit_offset, v->bit_size, 0);
	}
	char *s = kp_sb_take(&sb);
	if (!s)
		return &kp_enomem;
	struct kp_format_cap c = {
		.truncated = f.not_shown > 0, .not_shown = f.not_shown, .limit = f.limit,
	};
	if (cap && !kp_out_copy(cap, &c, sizeof(c))) {
		free(s);
		return kp_error_create(KP_ERR_INVALID, "struct kp_format_cap: sz not set (use KP_INIT)");
	}
	*ret = s;
	return NULL;
}
