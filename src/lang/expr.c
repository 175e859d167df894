// kp_eval(): a lexer and recursive-descent parser for a C expression subset,
// to an AST (expr_internal.h). Type names inside expressions (casts, sizeof,
// container_of, offsetof) are parsed from the same tokens by typename.c; the
// AST is evaluated over kernel symbols and BTF types by eval.c.
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "types/btf.h"
#include "lang/expr_internal.h"

// ---------------------------------------------------------------- lexer

static struct kp_error *syntax(int col, const char *fmt, const char *what)
{
	return kp_error_create(KP_ERR_SYNTAX, "syntax error at column %d: %s%s", col, fmt,
			       what ? what : "");
}

struct kp_error *kp_expr_lex(const char *src, size_t len, struct kp_tok **ret, size_t *n_ret)
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
		if (isalpha(c) || c == '_') {
			size_t j = i;
			while (j < len && (isalnum((unsigned char)src[j]) || src[j] == '_'))
				j++;
			t->kind = KP_TOK_IDENT;
			t->len = j - i;
			i = j;
		} else if (isdigit(c)) {
			size_t j = i;
			int base = 10;
			if (c == '0' && j + 1 < len && (src[j + 1] == 'x' || src[j + 1] == 'X')) {
				base = 16;
				j += 2;
			}
			uint64_t v = 0;
			size_t digits = 0;
			bool overflow = false;
			for (; j < len; j++, digits++) {
				int d;
				char ch = src[j];
				if (ch >= '0' && ch <= '9')
					d = ch - '0';
				else if (base == 16 && isxdigit((unsigned char)ch))
					d = tolower((unsigned char)ch) - 'a' + 10;
				else
					break;
				if (v > (UINT64_MAX - (uint64_t)d) / (uint64_t)base)
					overflow = true;
				v = v * (uint64_t)base + (uint64_t)d;
			}
			if (!digits) {
				int col = t->col;
				free(toks);
				return syntax(col, "bad number", NULL);
			}
			if (overflow) {
				int col = t->col;
				free(toks);
				return syntax(col, "integer literal too large", NULL);
			}
			while (j < len && strchr("uUlL", src[j])) {
				if (src[j] == 'u' || src[j] == 'U')
					t->num_unsigned = true;
				else
					t->num_long = true;
				j++;
			}
			if (j < len && (isalnum((unsigned char)src[j]) || src[j] == '_')) {
				free(toks);
				return syntax((int)j + 1, "bad character in number", NULL);
			}
			t->kind = KP_TOK_NUM;
			t->num = v;
			t->len = j - i;
			i = j;
		} else {
			static const struct { const char *s; int op; } two[] = {
				{ "->", KP_OP_ARROW }, { "<<", KP_OP_SHL }, { ">>", KP_OP_SHR },
				{ "<=", KP_OP_LE }, { ">=", KP_OP_GE }, { "==", KP_OP_EQ },
				{ "!=", KP_OP_NE }, { "&&", KP_OP_ANDAND }, { "||", KP_OP_OROR },
			};
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
				int col = t->col;
				free(toks);
				return syntax(col, "unexpected ", what);
			}
			i += t->len;
		}
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

// ---------------------------------------------------------------- parser

static void node_free(struct kp_node *n)
{
	if (!n)
		return;
	node_free(n->a);
	node_free(n->b);
	free(n);
}

static struct kp_node *node_new(struct kp_parser *p, enum kp_node_kind kind,
				const struct kp_tok *t)
{
	struct kp_node *n = calloc(1, sizeof(*n));
	if (!n) {
		kp_parse_set_err(p, &kp_enomem);
		return NULL;
	}
	n->kind = kind;
	n->tok = t;
	n->col = t->col;
	return n;
}

static struct kp_node *parse_expr(struct kp_parser *p);
static struct kp_node *parse_unary(struct kp_parser *p);

static bool enter(struct kp_parser *p)
{
	if (++p->depth > KP_EXPR_MAX_DEPTH) {
		kp_parse_fail(p, kp_tok_peek(p, 0), "expression nests too deeply");
		return false;
	}
	return true;
}

// A member designator for container_of/offsetof: name ('.' name | '[' N ']')*.
static bool parse_designator(struct kp_parser *p, struct kp_node *n)
{
	const struct kp_tok *first = kp_tok_peek(p, 0);
	if (first->kind != KP_TOK_IDENT) {
		kp_parse_fail(p, first, "expected a member name");
		return false;
	}
	p->pos++;
	for (;;) {
		const struct kp_tok *t = kp_tok_peek(p, 0);
		if (kp_tok_is_op(t, '.') && kp_tok_peek(p, 1)->kind == KP_TOK_IDENT) {
			p->pos += 2;
		} else if (kp_tok_is_op(t, '[') && kp_tok_peek(p, 1)->kind == KP_TOK_NUM &&
			   kp_tok_is_op(kp_tok_peek(p, 2), ']')) {
			p->pos += 3;
		} else {
			break;
		}
	}
	const struct kp_tok *last = &p->toks[p->pos - 1];
	n->path = first->s;
	n->path_len = (size_t)(last->s + last->len - first->s);
	return true;
}

static struct kp_node *parse_primary(struct kp_parser *p)
{
	const struct kp_tok *t = kp_tok_peek(p, 0);
	struct kp_node *n = NULL;
	if (t->kind == KP_TOK_NUM) {
		p->pos++;
		return node_new(p, KP_N_NUM, t);
	}
	if (kp_tok_is_word(t, "container_of") || kp_tok_is_word(t, "offsetof") ||
	    kp_tok_is_word(t, "per_cpu")) {
		bool cof = kp_tok_is_word(t, "container_of"), pcpu = kp_tok_is_word(t, "per_cpu");
		p->pos++;
		if (!kp_parse_expect(p, '('))
			return NULL;
		n = node_new(p, cof ? KP_N_CONTAINER_OF : pcpu ? KP_N_PER_CPU : KP_N_OFFSETOF, t);
		if (!n)
			return NULL;
		if (cof || pcpu) {
			n->a = parse_expr(p);
			if (!n->a || !kp_parse_expect(p, ','))
				goto fail;
		}
		if (pcpu) {
			n->b = parse_expr(p);
			if (!n->b)
				goto fail;
		} else if (!kp_parse_type_tokens(p, &n->type) || !kp_parse_expect(p, ',') ||
			   !parse_designator(p, n)) {
			goto fail;
		}
		if (!kp_parse_expect(p, ')'))
			goto fail;
		return n;
	}
	if (t->kind == KP_TOK_IDENT) {
		p->pos++;
		return node_new(p, KP_N_IDENT, t);
	}
	if (kp_tok_is_op(t, '(')) {
		p->pos++;
		n = parse_expr(p);
		if (!n || !kp_parse_expect(p, ')'))
			goto fail;
		return n;
	}
	kp_parse_fail(p, t, t->kind == KP_TOK_EOF ? "unexpected end of expression"
					      : "expected an expression");
	return NULL;
fail:
	node_free(n);
	return NULL;
}

static struct kp_node *parse_postfix(struct kp_parser *p)
{
	struct kp_node *n = parse_primary(p);
	while (n) {
		const struct kp_tok *t = kp_tok_peek(p, 0);
		if (kp_tok_is_op(t, '.') || kp_tok_is_op(t, KP_OP_ARROW)) {
			const struct kp_tok *name = kp_tok_peek(p, 1);
			if (name->kind != KP_TOK_IDENT) {
				kp_parse_fail(p, name, "expected a member name");
				break;
			}
			struct kp_node *m = node_new(p, kp_tok_is_op(t, '.') ? KP_N_MEMBER : KP_N_ARROW,
						     name);
			if (!m)
				break;
			m->col = t->col;
			m->a = n;
			n = m;
			p->pos += 2;
		} else if (kp_tok_is_op(t, '[')) {
			p->pos++;
			struct kp_node *m = node_new(p, KP_N_INDEX, t);
			if (!m)
				break;
			m->a = n;
			n = m;
			n->b = parse_expr(p);
			if (!n->b || !kp_parse_expect(p, ']'))
				break;
		} else {
			return n;
		}
	}
	node_free(n);
	return NULL;
}

static struct kp_node *parse_unary_inner(struct kp_parser *p)
{
	const struct kp_tok *t = kp_tok_peek(p, 0);
	if (t->kind == KP_TOK_PUNCT && strchr("*&-+~!", t->op) && t->op < 256) {
		p->pos++;
		struct kp_node *n = node_new(p, KP_N_UNARY, t);
		if (!n)
			return NULL;
		n->op = t->op;
		n->a = parse_unary(p);
		if (!n->a) {
			node_free(n);
			return NULL;
		}
		return n;
	}
	if (kp_tok_is_word(t, "sizeof")) {
		p->pos++;
		if (kp_tok_is_op(kp_tok_peek(p, 0), '(') && kp_starts_type(p, 1)) {
			p->pos++;
			struct kp_node *n = node_new(p, KP_N_SIZEOF_TYPE, t);
			if (!n)
				return NULL;
			if (!kp_parse_type_tokens(p, &n->type) || !kp_parse_expect(p, ')')) {
				node_free(n);
				return NULL;
			}
			return n;
		}
		struct kp_node *n = node_new(p, KP_N_SIZEOF_EXPR, t);
		if (!n)
			return NULL;
		n->a = parse_unary(p);
		if (!n->a) {
			node_free(n);
			return NULL;
		}
		return n;
	}
	if (kp_tok_is_op(t, '(') && kp_starts_type(p, 1)) {
		p->pos++;
		struct kp_node *n = node_new(p, KP_N_CAST, t);
		if (!n)
			return NULL;
		if (!kp_parse_type_tokens(p, &n->type) || !kp_parse_expect(p, ')')) {
			node_free(n);
			return NULL;
		}
		n->a = parse_unary(p);
		if (!n->a) {
			node_free(n);
			return NULL;
		}
		return n;
	}
	return parse_postfix(p);
}

static struct kp_node *parse_unary(struct kp_parser *p)
{
	struct kp_node *n = enter(p) ? parse_unary_inner(p) : NULL;
	p->depth--;
	return n;
}

// Binary operators by precedence level, lowest first.
static const int levels[][5] = {
	{ KP_OP_OROR }, { KP_OP_ANDAND }, { '|' }, { '^' }, { '&' }, { KP_OP_EQ, KP_OP_NE },
	{ '<', '>', KP_OP_LE, KP_OP_GE }, { KP_OP_SHL, KP_OP_SHR }, { '+', '-' }, { '*', '/', '%' },
};
#define NLEVELS ((int)(sizeof(levels) / sizeof(levels[0])))

static struct kp_node *parse_binary(struct kp_parser *p, int level)
{
	if (level == NLEVELS)
		return parse_unary(p);
	// Nesting depth is counted in parse_unary (every parenthesis passes there).
	struct kp_node *n = parse_binary(p, level + 1);
	while (n) {
		const struct kp_tok *t = kp_tok_peek(p, 0);
		bool match = false;
		for (int i = 0; i < 5 && levels[level][i]; i++)
			match |= kp_tok_is_op(t, levels[level][i]);
		if (!match)
			break;
		p->pos++;
		struct kp_node *b = node_new(p, KP_N_BINARY, t);
		if (!b) {
			node_free(n);
			n = NULL;
			break;
		}
		b->op = t->op;
		b->a = n;
		n = b;
		n->b = parse_binary(p, level + 1);
		if (!n->b) {
			node_free(n);
			n = NULL;
		}
	}
	return n;
}

static struct kp_node *parse_expr(struct kp_parser *p)
{
	return parse_binary(p, 0);
}

// ---------------------------------------------------------------- kp_eval

struct kp_error *kp_eval(struct kp_kernel *kernel, const char *expr, struct kp_value **ret)
{
	size_t len = strlen(expr);
	if (len > KP_EXPR_MAX_LEN)
		return kp_error_create(KP_ERR_INVALID, "expression is %zu bytes, longer than %d",
				       len, KP_EXPR_MAX_LEN);
	struct btf *btf;
	struct kp_error *err = kp_btf_work(kernel, &btf);
	if (err)
		return err;
	struct kp_parser p = { .k = kernel, .src = expr };
	if ((err = kp_expr_lex(expr, len, &p.toks, &p.ntoks)))
		return err;
	struct kp_node *root = parse_expr(&p);
	if (root && kp_tok_peek(&p, 0)->kind != KP_TOK_EOF)
		kp_parse_fail(&p, kp_tok_peek(&p, 0), "unexpected token after the expression");
	struct kp_value *v = NULL;
	if (!p.err)
		err = kp_expr_eval(kernel, root, &v);
	else
		err = p.err;
	node_free(root);
	free(p.toks);
	if (err)
		return err;
	*ret = v;
	return NULL;
}

