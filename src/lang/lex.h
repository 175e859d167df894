// SPDX-License-Identifier: MIT
// Tokens of kpeek's C expressions and type names, and the token cursor that
// the expression parser (parse.c) and the type-name parser (typename.c)
// share. Neither parser calls the other's internals: both sit on this.
#ifndef KP_LANG_LEX_H
#define KP_LANG_LEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct kp_error;
struct kp_types;

// Longest expression accepted and deepest nesting (parser recursion).
#define KP_EXPR_MAX_LEN 4096
#define KP_EXPR_MAX_DEPTH 64

// Two-character operators; one-character ones are the character itself.
enum {
	KP_OP_ARROW = 256, KP_OP_SHL, KP_OP_SHR, KP_OP_LE, KP_OP_GE, KP_OP_EQ, KP_OP_NE,
	KP_OP_ANDAND, KP_OP_OROR,
};

enum kp_tok_kind { KP_TOK_EOF, KP_TOK_NUM, KP_TOK_IDENT, KP_TOK_PUNCT };

struct kp_tok {
	enum kp_tok_kind kind;
	int op;			// KP_TOK_PUNCT: a char or KP_OP_*
	const char *s;		// KP_TOK_IDENT, KP_TOK_NUM: the text
	size_t len;
	int col;		// 1-based
	uint64_t num;
	bool num_unsigned, num_long;
};

// Splits src[0, len) into tokens (malloc'ed), ending with a KP_TOK_EOF token
// that *n_ret does not count. Integer literals are C's: 0x hex, 0 octal,
// decimal, with u/l suffixes. KP_ERR_SYNTAX names the column.
struct kp_error *kp_lex(const char *src, size_t len, struct kp_tok **ret, size_t *n_ret);

// A parse in progress: tokens, position, the first error, and the types
// that names resolve against.
struct kp_parser {
	struct kp_types *types;
	const char *src;
	struct kp_tok *toks;
	size_t ntoks, pos;
	int depth;
	struct kp_error *err;	// the first error recorded
};

// The token ahead tokens after the current one (the EOF token past the end).
const struct kp_tok *kp_tok_peek(struct kp_parser *p, size_t ahead);
bool kp_tok_is_op(const struct kp_tok *t, int op);
bool kp_tok_is_word(const struct kp_tok *t, const char *w);
// Records a syntax error at t unless one is recorded already.
void kp_parse_fail(struct kp_parser *p, const struct kp_tok *t, const char *msg);
// Consumes the punctuator op, else records "expected 'op'" and returns false.
bool kp_parse_expect(struct kp_parser *p, int op);
// Records err (takes it) unless an error is recorded already.
void kp_parse_set_err(struct kp_parser *p, struct kp_error *err);

#endif
