// SPDX-License-Identifier: MIT
// C type names parsed from the tokens of lex.c (typename.h). Used by the
// casts, sizeof, container_of and offsetof of kp_eval() and, through
// kp_parse_type(), by the curated variable types (symbol_type.c).
#include <stdlib.h>
#include <string.h>

#include <bpf/btf.h>
#include <linux/btf.h>

#include "lang/typename.h"
#include "types/types.h"
#include "util/error.h"

// ---------------------------------------------------------------- type names

static const char *const int_words[] = {
	"unsigned", "signed", "int", "char", "short", "long", "_Bool", "__signed__",
};

static bool is_int_word(const struct kp_tok *t)
{
	for (size_t i = 0; i < sizeof(int_words) / sizeof(int_words[0]); i++)
		if (kp_tok_is_word(t, int_words[i]))
			return true;
	return false;
}

static bool is_qualifier(const struct kp_tok *t)
{
	return kp_tok_is_word(t, "const") || kp_tok_is_word(t, "volatile") ||
		kp_tok_is_word(t, "restrict") || kp_tok_is_word(t, "__restrict");
}

// kp_types_find(), and on a miss once more after the modules' BTF is in
// (kp_types_more(): loaded on the first miss).
static struct kp_error *find(struct kp_parser *p, int kind, const char *name, uint32_t *ret)
{
	struct kp_error *err = kp_types_find(p->types, kind, name, ret);
	if (!err || kp_error_code(err) != KP_ERR_NOT_FOUND)
		return err;
	if (kp_types_more(p->types)) {
		kp_error_destroy(err);
		err = kp_types_find(p->types, kind, name, ret);
	}
	const char *note = kp_types_more_note(p->types);
	if (err && note && kind != BTF_KIND_FWD) {
		struct kp_error *e = kp_error_create(KP_ERR_NOT_FOUND, "%s (%s)", kp_error_message(err), note);
		kp_error_destroy(err);
		err = e;
	}
	return err;
}

// A typedef name BTF knows (so "(u64)x" is a cast, "(jiffies)" is not).
static bool is_typedef_name(struct kp_parser *p, const struct kp_tok *t)
{
	if (t->kind != KP_TOK_IDENT || t->len >= 128)
		return false;
	char name[128];
	memcpy(name, t->s, t->len);
	name[t->len] = '\0';
	uint32_t id;
	struct kp_error *err = find(p, BTF_KIND_TYPEDEF, name, &id);
	if (err) {
		kp_error_destroy(err);
		return false;
	}
	return true;
}

bool kp_starts_type(struct kp_parser *p, size_t ahead)
{
	const struct kp_tok *t = kp_tok_peek(p, ahead);
	if (t->kind != KP_TOK_IDENT)
		return false;
	if (kp_tok_is_word(t, "struct") || kp_tok_is_word(t, "union") ||
	    kp_tok_is_word(t, "enum") || kp_tok_is_word(t, "void") || is_int_word(t) ||
	    is_qualifier(t))
		return true;
	const struct kp_tok *next = kp_tok_peek(p, ahead + 1);
	return (kp_tok_is_op(next, ')') || kp_tok_is_op(next, '*') || kp_tok_is_op(next, '[') ||
		kp_tok_is_op(next, ',')) && is_typedef_name(p, t);
}

// Qualifiers (const, volatile, restrict); true if one of them was const.
static bool skip_qualifiers(struct kp_parser *p)
{
	bool is_const = false;
	while (is_qualifier(kp_tok_peek(p, 0)))
		is_const |= kp_tok_is_word(&p->toks[p->pos++], "const");
	return is_const;
}

// "struct NAME", "union NAME", "enum NAME" at t. A struct or union that is
// only declared (FWD) is still a pointer target; an enum may be ENUM64.
static bool parse_tagged(struct kp_parser *p, const struct kp_tok *t, uint32_t *id)
{
	const struct kp_tok *name = kp_tok_peek(p, 1);
	if (name->kind != KP_TOK_IDENT || name->len >= 128) {
		kp_parse_fail(p, name, "expected a struct, union or enum name");
		return false;
	}
	char buf[128];
	memcpy(buf, name->s, name->len);
	buf[name->len] = '\0';
	int kind = kp_tok_is_word(t, "struct") ? BTF_KIND_STRUCT :
		kp_tok_is_word(t, "union") ? BTF_KIND_UNION : BTF_KIND_ENUM;
	struct kp_error *err = find(p, kind, buf, id);
	if (err && kind == BTF_KIND_ENUM) {
		kp_error_destroy(err);
		err = kp_types_find(p->types, BTF_KIND_ENUM64, buf, id);
	}
	if (err) {
		// Only declared (FWD): still usable as a pointer target.
		struct kp_error *e2 = kp_types_find(p->types, BTF_KIND_FWD, buf, id);
		if (e2 || kind == BTF_KIND_ENUM) {
			kp_error_destroy(e2);
			kp_parse_set_err(p, err);
			return false;
		}
		kp_error_destroy(err);
	}
	p->pos += 2;
	return true;
}

// Integer type words in any order ("unsigned long", "long unsigned int"),
// qualifiers among them, named as BTF names the type.
static bool parse_int_words(struct kp_parser *p, const struct kp_tok *t, bool *is_const,
			    uint32_t *id)
{
	char words[128] = "";
	size_t wl = 0;
	while (is_int_word(kp_tok_peek(p, 0)) || is_qualifier(kp_tok_peek(p, 0))) {
		const struct kp_tok *w = kp_tok_peek(p, 0);
		*is_const |= kp_tok_is_word(w, "const");
		if (!is_qualifier(w) && wl + w->len + 2 < sizeof(words)) {
			memcpy(words + wl, w->s, w->len);
			wl += w->len;
			words[wl++] = ' ';
			words[wl] = '\0';
		}
		p->pos++;
	}
	if (wl)
		words[--wl] = '\0';
	if (!kp_btf_find_int(kp_types_btf(p->types), words, id)) {
		char cname[32];
		if (!kp_btf_int_cname(words, cname, sizeof(cname)))
			kp_parse_fail(p, t, "bad combination of integer type words");
		else
			kp_parse_set_err(p, kp_error_create(KP_ERR_NOT_FOUND,
						   "type '%s' not found in BTF", cname));
		return false;
	}
	return true;
}

// A typedef name (u64), else an INT or FLOAT type of that name (__int128,
// double).
static bool parse_type_ident(struct kp_parser *p, const struct kp_tok *t, uint32_t *id)
{
	char buf[128];
	memcpy(buf, t->s, t->len);
	buf[t->len] = '\0';
	struct kp_error *err = find(p, BTF_KIND_TYPEDEF, buf, id);
	if (err) {
		kp_error_destroy(err);
		err = kp_types_find(p->types, BTF_KIND_INT, buf, id);
	}
	if (err) {
		kp_error_destroy(err);
		err = kp_types_find(p->types, BTF_KIND_FLOAT, buf, id);
	}
	if (err) {
		kp_error_destroy(err);
		kp_parse_set_err(p, kp_error_create(KP_ERR_NOT_FOUND,
						    "unknown type name '%s'", buf));
		return false;
	}
	p->pos++;
	return true;
}

// The type a declaration starts with, and its qualifiers.
static bool parse_base_type(struct kp_parser *p, uint32_t *id)
{
	bool is_const = skip_qualifiers(p);
	const struct kp_tok *t = kp_tok_peek(p, 0);
	bool ok;
	if (kp_tok_is_word(t, "struct") || kp_tok_is_word(t, "union") ||
	    kp_tok_is_word(t, "enum")) {
		ok = parse_tagged(p, t, id);
	} else if (kp_tok_is_word(t, "void")) {
		p->pos++;
		ok = true;
	} else if (is_int_word(t)) {
		ok = parse_int_words(p, t, &is_const, id);
	} else if (t->kind == KP_TOK_IDENT && t->len < 128) {
		ok = parse_type_ident(p, t, id);
	} else {
		kp_parse_fail(p, t, "expected a type name");
		ok = false;
	}
	if (!ok)
		return false;
	is_const |= skip_qualifiers(p);
	if (is_const) {
		struct kp_error *err = kp_types_const_of(p->types, *id, id);
		if (err) {
			kp_parse_set_err(p, err);
			return false;
		}
	}
	return true;
}

// "*", "* const", ... after the base type.
static bool parse_pointers(struct kp_parser *p, uint32_t *id)
{
	while (kp_tok_is_op(kp_tok_peek(p, 0), '*')) {
		p->pos++;
		struct kp_error *err = kp_types_pointer_to(p->types, *id, id);
		bool pconst = skip_qualifiers(p);
		if (!err && pconst)
			err = kp_types_const_of(p->types, *id, id);
		if (err) {
			kp_parse_set_err(p, err);
			return false;
		}
	}
	return true;
}

// The abstract declarator after the pointers: array dimensions "[a][b]",
// or a pointer to an array "(*)[N]" (*outer_ptrs the stars in the
// parentheses). Up to 8 dimensions into dims, *ndims of them.
static bool parse_declarator(struct kp_parser *p, uint32_t dims[8], int *ndims,
			     int *outer_ptrs)
{
	if (kp_tok_is_op(kp_tok_peek(p, 0), '(') && kp_tok_is_op(kp_tok_peek(p, 1), '*')) {
		p->pos++;
		while (kp_tok_is_op(kp_tok_peek(p, 0), '*')) {
			p->pos++;
			(*outer_ptrs)++;
		}
		if (!kp_parse_expect(p, ')'))
			return false;
		if (!kp_tok_is_op(kp_tok_peek(p, 0), '[')) {
			kp_parse_fail(p, kp_tok_peek(p, 0),
				      "expected '[' (function pointer types are not supported)");
			return false;
		}
	}
	while (kp_tok_is_op(kp_tok_peek(p, 0), '[')) {
		p->pos++;
		uint64_t n = 0;
		const struct kp_tok *nt = kp_tok_peek(p, 0);
		if (nt->kind == KP_TOK_NUM) {
			n = nt->num;
			p->pos++;
		}
		if (n > UINT32_MAX || *ndims == 8) {
			kp_parse_fail(p, nt, "array too large");
			return false;
		}
		if (!kp_parse_expect(p, ']'))
			return false;
		dims[(*ndims)++] = (uint32_t)n;
	}
	return true;
}

bool kp_parse_type_tokens(struct kp_parser *p, uint32_t *ret)
{
	uint32_t id = 0;
	uint32_t dims[8];
	int ndims = 0, outer_ptrs = 0;
	if (!parse_base_type(p, &id) || !parse_pointers(p, &id) ||
	    !parse_declarator(p, dims, &ndims, &outer_ptrs))
		return false;
	// T x[a][b] is an array of a arrays of b T: build from the innermost.
	while (ndims--) {
		struct kp_error *err = kp_types_array_of(p->types, id, dims[ndims], &id);
		if (err) {
			kp_parse_set_err(p, err);
			return false;
		}
	}
	while (outer_ptrs--) {
		struct kp_error *err = kp_types_pointer_to(p->types, id, &id);
		if (err) {
			kp_parse_set_err(p, err);
			return false;
		}
	}
	*ret = id;
	return true;
}

struct kp_error *kp_parse_type(struct kp_types *types, const char *str, uint32_t *ret)
{

	size_t len = strlen(str);
	if (len > KP_EXPR_MAX_LEN)
		return kp_error_create(KP_ERR_INVALID, "type name longer than %d bytes",
				       KP_EXPR_MAX_LEN);
	struct kp_parser p = { .types = types, .src = str };
	struct kp_error *err = kp_lex(str, len, &p.toks, &p.ntoks);
	if (err)
		return err;
	uint32_t id = 0;
	if (kp_parse_type_tokens(&p, &id) && kp_tok_peek(&p, 0)->kind != KP_TOK_EOF)
		kp_parse_fail(&p, kp_tok_peek(&p, 0), "unexpected text after the type name");
	free(p.toks);
	if (p.err)
		return kp_error_prefix(p.err, "type '%s'", str);
	*ret = id;
	return NULL;
}
