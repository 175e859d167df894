// SPDX-License-Identifier: MIT
// A recursive-descent parser for the C expression subset of kp_eval(), to
// the AST of ast.h. Type names inside expressions (casts, sizeof,
// container_of, offsetof) are parsed from the same tokens by typename.c.
#include <stdlib.h>
#include <string.h>

#include "lang/parse.h"
#include "lang/typename.h"
#include "util/error.h"

void kp_node_free(struct kp_node *n)
{
	if (!n)
		return;
	kp_node_free(n->a);
	kp_node_free(n->b);
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
	kp_node_free(n);
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
	kp_node_free(n);
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
			kp_node_free(n);
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
				kp_node_free(n);
				return NULL;
			}
			return n;
		}
		struct kp_node *n = node_new(p, KP_N_SIZEOF_EXPR, t);
		if (!n)
			return NULL;
		n->a = parse_unary(p);
		if (!n->a) {
			kp_node_free(n);
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
			kp_node_free(n);
			return NULL;
		}
		n->a = parse_unary(p);
		if (!n->a) {
			kp_node_free(n);
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
			kp_node_free(n);
			n = NULL;
			break;
		}
		b->op = t->op;
		b->a = n;
		n = b;
		n->b = parse_binary(p, level + 1);
		if (!n->b) {
			kp_node_free(n);
			n = NULL;
		}
	}
	return n;
}

static struct kp_node *parse_expr(struct kp_parser *p)
{
	return parse_binary(p, 0);
}

struct kp_error *kp_parse_expr(struct kp_types *types, const char *src, struct kp_ast *ret)
{
	size_t len = strlen(src);
	if (len > KP_EXPR_MAX_LEN)
		return kp_error_create(KP_ERR_INVALID, "expression is %zu bytes, longer than %d",
				       len, KP_EXPR_MAX_LEN);
	struct kp_parser p = { .types = types, .src = src };
	struct kp_error *err = kp_lex(src, len, &p.toks, &p.ntoks);
	if (err)
		return err;
	struct kp_node *root = parse_expr(&p);
	if (root && kp_tok_peek(&p, 0)->kind != KP_TOK_EOF)
		kp_parse_fail(&p, kp_tok_peek(&p, 0), "unexpected token after the expression");
	if (p.err) {
		kp_node_free(root);
		free(p.toks);
		return p.err;
	}
	ret->toks = p.toks;
	ret->root = root;
	return NULL;
}

void kp_ast_deinit(struct kp_ast *ast)
{
	kp_node_free(ast->root);
	free(ast->toks);
	ast->root = NULL;
	ast->toks = NULL;
}
