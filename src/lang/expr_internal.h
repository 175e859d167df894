// Internal to the expression language of kp_eval(): the tokens, parser state
// and AST shared by expr.c (lexer, parser, kp_eval()), typename.c (C type
// names, parsed from the same tokens) and eval.c (evaluation of the AST).
#ifndef KP_EXPR_INTERNAL_H
#define KP_EXPR_INTERNAL_H

#include "lang/expr.h"

// ---------------------------------------------------------------- tokens

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

struct kp_parser {
	struct kp_kernel *k;
	const char *src;
	struct kp_tok *toks;
	size_t ntoks, pos;
	int depth;
	struct kp_error *err;	// the first error recorded
};

// Splits src[0, len) into tokens (malloc'ed), ending with a KP_TOK_EOF token
// that *n_ret does not count. KP_ERR_SYNTAX names the column.
struct kp_error *kp_expr_lex(const char *src, size_t len, struct kp_tok **ret, size_t *n_ret);
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

// ---------------------------------------------------------------- type names (typename.c)

// Whether a type name starts ahead tokens after the current one (so that
// "(u64)x" is a cast and "(jiffies)" is not).
bool kp_starts_type(struct kp_parser *p, size_t ahead);
// Parses a type name at the current token into a working-BTF type id; false
// with p->err set on failure.
bool kp_parse_type_tokens(struct kp_parser *p, uint32_t *ret);

// ---------------------------------------------------------------- AST

enum kp_node_kind {
	KP_N_NUM, KP_N_IDENT, KP_N_MEMBER, KP_N_ARROW, KP_N_INDEX, KP_N_UNARY, KP_N_CAST,
	KP_N_BINARY, KP_N_SIZEOF_TYPE, KP_N_SIZEOF_EXPR, KP_N_CONTAINER_OF, KP_N_OFFSETOF,
	KP_N_PER_CPU,
};

struct kp_node {
	enum kp_node_kind kind;
	int col;
	int op;
	const struct kp_tok *tok;	// KP_N_NUM, KP_N_IDENT, member name
	uint32_t type;		// KP_N_CAST, KP_N_SIZEOF_TYPE, KP_N_CONTAINER_OF,
				// KP_N_OFFSETOF
	const char *path;	// designator of container_of / offsetof
	size_t path_len;
	struct kp_node *a, *b;
};

// Evaluates a parsed expression (eval.c); an untyped result (a symbol with no
// known type) is a KP_ERR_TYPE error.
struct kp_error *kp_expr_eval(struct kp_kernel *kernel, const struct kp_node *root,
			      struct kp_value **ret);

#endif
