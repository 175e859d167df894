// SPDX-License-Identifier: MIT
// C type names of BTF types, built from the outside in as C declares them:
// "struct task_struct *", "char [16]", "int (*)[2]", "void (*)(int, ...)".
#include <stdlib.h>
#include <string.h>

#include <bpf/btf.h>
#include <linux/btf.h>

#include "types/btf.h"
#include "util/error.h"
#include "util/strbuf.h"

#define MAX_DEPTH 64
#define MAX_TYPE_NAME 4096

static const struct btf_type *ty(const struct btf *btf, uint32_t id)
{
	return btf__type_by_id(btf, id);
}

static const char *kind_word(const struct btf_type *t)
{
	switch (btf_kind(t)) {
	case BTF_KIND_STRUCT: return "struct";
	case BTF_KIND_UNION: return "union";
	case BTF_KIND_ENUM:
	case BTF_KIND_ENUM64: return "enum";
	case BTF_KIND_FWD: return btf_kflag(t) ? "union" : "struct";
	default: return NULL;
	}
}

// Name of a type with no declarator part (struct, int, typedef, ...).
static void base_name(const struct btf *btf, const struct btf_type *t, struct kp_sb *sb)
{
	const char *name = btf__name_by_offset(btf, t->name_off);
	const char *word = kind_word(t);
	if (word) {
		kp_sb_printf(sb, "%s %s", word, name && *name ? name : "<anonymous>");
		return;
	}
	char cname[32];
	if (btf_is_int(t) && name && kp_btf_int_cname(name, cname, sizeof(cname)))
		name = cname;
	kp_sb_printf(sb, "%s", name && *name ? name : "<anonymous>");
}

static void type_name(const struct btf *btf, uint32_t id, const char *decl_in,
		      struct kp_sb *out, int depth, long *budget);

static const char *str(const struct kp_sb *sb)
{
	return sb->buf ? sb->buf : "";
}

// A pointer: '*' before the declarator, in parentheses when it points to
// an array or a function ("int (*)[2]").
static void wrap_pointer(const struct btf *btf, const struct btf_type *t,
			 const struct kp_sb *decl, struct kp_sb *next)
{
	uint32_t target = kp_btf_strip_cv(btf, t->type);
	const struct btf_type *tt = ty(btf, target);
	bool paren = tt && target && (btf_is_array(tt) || btf_is_func_proto(tt));
	kp_sb_printf(next, paren ? "(*%s)" : "*%s", str(decl));
}

// An array: "[N]" (or "[]") after the declarator.
static void wrap_array(const struct btf_type *t, const struct kp_sb *decl, struct kp_sb *next)
{
	const struct btf_array *a = btf_array(t);
	if (a->nelems)
		kp_sb_printf(next, "%s[%u]", str(decl), a->nelems);
	else
		kp_sb_printf(next, "%s[]", str(decl));
}

// A function prototype: its parameters' types after the declarator; an
// untyped last parameter is "...".
static void wrap_params(const struct btf *btf, const struct btf_type *t,
			const struct kp_sb *decl, struct kp_sb *next, int depth, long *budget)
{
	const struct btf_param *p = btf_params(t);
	uint32_t n = btf_vlen(t);
	kp_sb_printf(next, "%s(", str(decl));
	if (!n)
		kp_sb_printf(next, "void");
	for (uint32_t j = 0; j < n; j++) {
		if (j)
			kp_sb_printf(next, ", ");
		if (next->len > MAX_TYPE_NAME) {
			kp_sb_printf(next, "...");
			break;
		}
		if (!p[j].type && j == n - 1)
			kp_sb_printf(next, "...");
		else
			type_name(btf, p[j].type, "", next, depth + 1, budget);
	}
	kp_sb_printf(next, ")");
}

// Whether qualifier t qualifies a pointer ("char *const p": it goes into
// the declarator) rather than the base type ("const char *p").
static bool qualifies_pointer(const struct btf *btf, const struct btf_type *t)
{
	uint32_t target = kp_btf_strip_cv(btf, t->type);
	const struct btf_type *tt = ty(btf, target);
	return target && tt && btf_is_ptr(tt);
}

static const char *qualifier_word(const struct btf_type *t)
{
	return btf_is_const(t) ? "const" : btf_is_volatile(t) ? "volatile" : "restrict";
}

// Builds the C declaration from the outside in: pointers prepend '*' to the
// declarator, arrays and functions append, qualifiers of the base type go first.
static void type_name(const struct btf *btf, uint32_t id, const char *decl_in,
		      struct kp_sb *out, int depth, long *budget)
{
	if (--*budget < 0) {
		// Hostile BTF: prototypes whose parameters and results are themselves.
		kp_sb_printf(out, "...");
		return;
	}
	struct kp_sb decl = { 0 }, quals = { 0 };
	kp_sb_printf(&decl, "%s", decl_in);
	for (int i = 0; i < MAX_DEPTH && depth < 8; i++) {
		if (out->len > MAX_TYPE_NAME || decl.len > MAX_TYPE_NAME) {
			// Hostile BTF (prototypes whose parameters are themselves).
			kp_sb_printf(out, "...");
			goto done;
		}
		const struct btf_type *t = id ? ty(btf, id) : NULL;
		if (!t) {
			kp_sb_printf(out, "%s%s%s%s", str(&quals), id ? "<bad type>" : "void",
				     decl.len ? " " : "", str(&decl));
			goto done;
		}
		struct kp_sb next = { 0 };
		switch (btf_kind(t)) {
		case BTF_KIND_PTR:
			wrap_pointer(btf, t, &decl, &next);
			id = t->type;
			break;
		case BTF_KIND_ARRAY:
			wrap_array(t, &decl, &next);
			id = btf_array(t)->type;
			break;
		case BTF_KIND_FUNC:
		case BTF_KIND_TYPE_TAG:
			id = t->type;
			continue;
		case BTF_KIND_FUNC_PROTO:
			wrap_params(btf, t, &decl, &next, depth, budget);
			id = t->type;
			break;
		case BTF_KIND_CONST:
		case BTF_KIND_VOLATILE:
		case BTF_KIND_RESTRICT:
			id = t->type;
			if (!qualifies_pointer(btf, t)) {
				kp_sb_printf(&quals, "%s ", qualifier_word(t));
				continue;
			}
			kp_sb_printf(&next, "%s%s%s", qualifier_word(t), decl.len ? " " : "",
				     str(&decl));
			break;
		default:
			if (quals.buf)
				kp_sb_printf(out, "%s", quals.buf);
			base_name(btf, t, out);
			if (decl.len)
				kp_sb_printf(out, " %s", decl.buf);
			goto done;
		}
		kp_sb_free(&decl);
		decl = next;
		if (decl.failed)
			out->failed = true;
	}
	kp_sb_printf(out, "<type loop>");
done:
	if (decl.failed || quals.failed)
		out->failed = true;
	kp_sb_free(&decl);
	kp_sb_free(&quals);
}

struct kp_error *kp_btf_decl_name(const struct btf *btf, uint32_t id, const char *decl,
				  char **ret)
{
	struct kp_sb sb = { 0 };
	long budget = 4096;	// calls; a real kernel type needs a handful
	type_name(btf, id, decl ? decl : "", &sb, 0, &budget);
	char *s = kp_sb_take(&sb);
	if (!s)
		return &kp_enomem;
	*ret = s;
	return NULL;
}

struct kp_error *kp_btf_type_name(const struct btf *btf, uint32_t id, char **ret)
{
	return kp_btf_decl_name(btf, id, "", ret);
}

