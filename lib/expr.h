#ifndef KOPT_EXPR_H
#define KOPT_EXPR_H

/*
 * The small expression language of .kopt (flops, bytes, target) and of
 * knowledge-base triggers: numbers (integers and floats, 1e6), names,
 * + - * / % ** (right-associative), parentheses, comparisons
 * < <= > >= == != (yielding 1 or 0), and `and`, `or`, `not`.
 * Arithmetic is in doubles, exact for integers below 2^53.
 *
 * Parse once with kopt_expr_parse() (the tree is owned by the caller,
 * kopt_expr_free()), evaluate any number of times with kopt_expr_eval(),
 * binding names through a lookup callback.  Both report a problem once
 * through lib/error, at the place the caller names (`file`, `line`: where
 * the expression is written; `file` NULL: no place), as
 * "<file>:<line>: column 7: unknown name 'x'".  A caller that words the
 * failure itself catches it (struct kopt_error_catch) and reads `.cause`,
 * "column 7: unknown name 'x'".
 */

#include "buf.h"
#include "strvec.h"

enum kopt_expr_kind {
	KOPT_EXPR_NUM,
	KOPT_EXPR_NAME,
	KOPT_EXPR_NEG,
	KOPT_EXPR_NOT,
	KOPT_EXPR_ADD,
	KOPT_EXPR_SUB,
	KOPT_EXPR_MUL,
	KOPT_EXPR_DIV,
	KOPT_EXPR_MOD,
	KOPT_EXPR_POW,
	KOPT_EXPR_LT,
	KOPT_EXPR_LE,
	KOPT_EXPR_GT,
	KOPT_EXPR_GE,
	KOPT_EXPR_EQ,
	KOPT_EXPR_NE,
	KOPT_EXPR_AND,
	KOPT_EXPR_OR,
};

struct kopt_expr {
	enum kopt_expr_kind kind;
	double num;             /* KOPT_EXPR_NUM */
	char *name;             /* KOPT_EXPR_NAME */
	int column;             /* 1-based position in the source text */
	struct kopt_expr *l, *r;
};

/* Return 0 and set *out, or KOPT_ENOTFOUND for an unknown name. */
typedef int (*kopt_expr_lookup_fn)(void *data, const char *name, double *out);

/* 0, or KOPT_EINVALID (reported) when `text` is not an expression. */
int kopt_expr_parse(struct kopt_expr **out, const char *text,
		    const char *file, int line);
/*
 * 0 on success; KOPT_ENOTFOUND when a name is not bound (reported as
 * "column 3: unknown name 'x'"); KOPT_EINVALID (reported) on division
 * by zero or a non-finite result.
 */
int kopt_expr_eval(const struct kopt_expr *e, kopt_expr_lookup_fn lookup,
		   void *data, double *out, const char *file, int line);
/* Every distinct name the expression uses, in order of appearance. */
void kopt_expr_names(const struct kopt_expr *e, struct kopt_strvec *out);
int kopt_expr_is_comparison(const struct kopt_expr *e);
void kopt_expr_free(struct kopt_expr *e);

/* Parse and evaluate in one go. */
int kopt_expr_eval_string(const char *text, kopt_expr_lookup_fn lookup,
			  void *data, double *out, const char *file,
			  int line);

#endif
