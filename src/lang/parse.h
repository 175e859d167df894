// SPDX-License-Identifier: MIT
// The AST of kpeek's C expressions (parse.c builds it, eval.c evaluates it).
#ifndef KP_LANG_PARSE_H
#define KP_LANG_PARSE_H

#include "lang/lex.h"

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

// A parsed expression: the nodes point into toks, which point into the
// source string, which must outlive it.
struct kp_ast {
	struct kp_tok *toks;
	struct kp_node *root;
};

// Parses a whole expression (type names resolve against types).
struct kp_error *kp_parse_expr(struct kp_types *types, const char *src, struct kp_ast *ret);
void kp_ast_deinit(struct kp_ast *ast);
void kp_node_free(struct kp_node *n);

#endif
