// SPDX-License-Identifier: MIT
// The lexer and token cursor of kpeek's C expressions and type names
// (lex.h).
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lang/lex.h"
#include "util/error.h"

static struct kp_error *syntax(int col, const char *fmt, const char *what)
{
	return kp_error_create(KP_ERR_SYNTAX, "syntax error at column %d: %s%s", col, fmt,
			       what ? what : "");
}

static bool is_ident_char(char c)
{
	return isalnum((unsigned char)c) || c == '_';
}

// The digits of a number in base from src[*j] on; *j after them.
static struct kp_error *lex_digits(const char *src, size_t len, size_t *j, int base, int col,
				   uint64_t *ret)
{
	uint64_t v = 0;
	size_t digits = 0;
	bool overflow = false;
	for (; *j < len; (*j)++, digits++) {
		int d;
		char ch = src[*j];
		if (ch >= '0' && ch <= '9' && ch - '0' < base)
			d = ch - '0';
		else if (base == 16 && isxdigit((unsigned char)ch))
			d = tolower((unsigned char)ch) - 'a' + 10;
		else
			break;
		if (v > (UINT64_MAX - (uint64_t)d) / (uint64_t)base)
			overflow = true;
		v = v * (uint64_t)base + (uint64_t)d;
	}
	if (!digits)
		return syntax(col, "bad number", NULL);
	if (overflow)
		return syntax(col, "integer literal too large", NULL);
	*ret = v;
	return NULL;
}

// An integer literal at src[i]: decimal, 0x hexadecimal or 0 octal, with
// u/l suffixes.
static struct kp_error *lex_number(const char *src, size_t len, size_t i, struct kp_tok *t)
{
	size_t j = i;
	int base = 10;
	if (src[i] == '0' && j + 1 < len && (src[j + 1] == 'x' || src[j + 1] == 'X')) {
		base = 16;
		j += 2;
	} else if (src[i] == '0' && j + 1 < len && isdigit((unsigned char)src[j + 1])) {
		// C, gdb and crash read 010 as 8.
		base = 8;
		j++;
	}
	struct kp_error *err = lex_digits(src, len, &j, base, t->col, &t->num);
	if (err)
		return err;
	while (j < len && strchr("uUlL", src[j])) {
		if (src[j] == 'u' || src[j] == 'U')
			t->num_unsigned = true;
		else
			t->num_long = true;
		j++;
	}
	if (j < len && is_ident_char(src[j]))
		return syntax((int)j + 1, "bad character in number", NULL);
	t->kind = KP_TOK_NUM;
	t->len = j - i;
	return NULL;
}

// An operator of one or two characters at src[i].
static struct kp_error *lex_punct(const char *src, size_t len, size_t i, struct kp_tok *t)
{
	static const struct { const char *s; int op; } two[] = {
		{ "->", KP_OP_ARROW }, { "<<", KP_OP_SHL }, { ">>", KP_OP_SHR },
		{ "<=", KP_OP_LE }, { ">=", KP_OP_GE }, { "==", KP_OP_EQ },
		{ "!=", KP_OP_NE }, { "&&", KP_OP_ANDAND }, { "||", KP_OP_OROR },
	};
	unsigned char c = (unsigned char)src[i];
	t->kind = KP_TOK_PUNCT;
	t->len = 1;
	t->op = c;
	for (size_t k = 0; k < sizeof(two) / sizeof(two[0]); k++) {
		if (i + 1 < len && src[i] == two[k].s[0] && src[i + 1] == two[k].s[1]) {
			t->op = two[k].op;
			t->len = 2;
		}
	}
	if (t->len == 1 && !strchr("()[].*&-+~!/%<>^|,", c)) {
		char what[16];
		snprintf(what, sizeof(what), isprint(c) ? "'%c'" : "byte 0x%02x", c);
		return syntax(t->col, "unexpected ", what);
	}
	return NULL;
}

struct kp_error *kp_lex(const char *src, size_t len, struct kp_tok **ret, size_t *n_ret)
{
	struct kp_tok *toks = calloc(len + 1, sizeof(*toks));
	if (!toks)
		return &kp_enomem;
	size_t n = 0, i = 0;
	while (i < len) {
		unsigned char c = (unsigned char)src[i];
		if (isspace(c)) {
			i++;
			continue;
		}
		struct kp_tok *t = &toks[n++];
		t->col = (int)i + 1;
		t->s = src + i;
		struct kp_error *err = NULL;
		if (isalpha(c) || c == '_') {
			size_t j = i;
			while (j < len && is_ident_char(src[j]))
				j++;
			t->kind = KP_TOK_IDENT;
			t->len = j - i;
		} else if (isdigit(c)) {
			err = lex_number(src, len, i, t);
		} else {
			err = lex_punct(src, len, i, t);
		}
		if (err) {
			free(toks);
			return err;
		}
		i += t->len;
	}
	toks[n].kind = KP_TOK_EOF;
	toks[n].col = (int)len + 1;
	*ret = toks;
	*n_ret = n;
	return NULL;
}

const struct kp_tok *kp_tok_peek(struct kp_parser *p, size_t ahead)
{
	size_t i = p->pos + ahead;
	return &p->toks[i < p->ntoks ? i : p->ntoks];
}

bool kp_tok_is_op(const struct kp_tok *t, int op)
{
	return t->kind == KP_TOK_PUNCT && t->op == op;
}

bool kp_tok_is_word(const struct kp_tok *t, const char *w)
{
	return t->kind == KP_TOK_IDENT && t->len == strlen(w) && memcmp(t->s, w, t->len) == 0;
}

void kp_parse_fail(struct kp_parser *p, const struct kp_tok *t, const char *msg)
{
	if (!p->err)
		p->err = syntax(t->col, msg, NULL);
}

bool kp_parse_expect(struct kp_parser *p, int op)
{
	const struct kp_tok *t = kp_tok_peek(p, 0);
	if (kp_tok_is_op(t, op)) {
		p->pos++;
		return true;
	}
	char msg[32];
	snprintf(msg, sizeof(msg), "expected '%c'", op);
	kp_parse_fail(p, t, msg);
	return false;
}

void kp_parse_set_err(struct kp_parser *p, struct kp_error *err)
{
	if (p->err)
		kp_error_destroy(err);
	else
		p->err = err;
}

