#include "expr.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "banned.h"

/* Where the expression is written, for messages; no file: nowhere. */
struct place {
	const char *file;
	int line;
};

struct parser {
	const char *text;
	const char *p;
	struct place at;
	int failed;
};

/* Report at the expression's place; returns `code`. */
static int report(const struct place *at, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int report(const struct place *at, int code, const char *fmt, ...)
{
	struct kopt_buf sb = KOPT_BUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	kopt_buf_vaddf(&sb, fmt, ap);
	va_end(ap);
	if (at->file)
		kopt_error_at(at->file, at->line, "%s", sb.buf);
	else
		kopt_error("%s", sb.buf);
	kopt_buf_release(&sb);
	return code;
}

static int column(struct parser *ps)
{
	return (int)(ps->p - ps->text) + 1;
}

static void fail(struct parser *ps, const char *what)
{
	if (ps->failed)
		return;
	ps->failed = 1;
	if (*ps->p)
		report(&ps->at, 0, "column %d: %s near '%.12s'",
		       column(ps), what, ps->p);
	else
		report(&ps->at, 0,
		       "column %d: %s at end of expression", column(ps), what);
}

static void skip_ws(struct parser *ps)
{
	while (*ps->p == ' ' || *ps->p == '\t')
		ps->p++;
}

static struct kopt_expr *node(enum kopt_expr_kind kind, int col,
			      struct kopt_expr *l, struct kopt_expr *r)
{
	struct kopt_expr *e = kopt_calloc(1, sizeof(*e));

	e->kind = kind;
	e->column = col;
	e->l = l;
	e->r = r;
	return e;
}

static int is_word(struct parser *ps, const char *w)
{
	size_t n = strlen(w);

	return !strncmp(ps->p, w, n) && !isalnum((unsigned char)ps->p[n]) &&
	       ps->p[n] != '_';
}

static struct kopt_expr *parse_or(struct parser *ps);
static struct kopt_expr *parse_unary(struct parser *ps);

static struct kopt_expr *parse_atom(struct parser *ps)
{
	struct kopt_expr *e;
	int col;

	skip_ws(ps);
	col = column(ps);
	if (*ps->p == '(') {
		ps->p++;
		e = parse_or(ps);
		skip_ws(ps);
		if (*ps->p != ')') {
			fail(ps, "expected ')'");
			kopt_expr_free(e);
			return NULL;
		}
		ps->p++;
		return e;
	}
	if (isdigit((unsigned char)*ps->p) ||
	    (*ps->p == '.' && isdigit((unsigned char)ps->p[1]))) {
		char *end;
		double v = strtod(ps->p, &end);
		if (isalpha((unsigned char)*end) || *end == '_') {
			ps->p = end;
			fail(ps, "bad number");
			return NULL;
		}
		if (!isfinite(v)) {
			fail(ps, "number too large");
			return NULL;
		}
		ps->p = end;
		e = node(KOPT_EXPR_NUM, col, NULL, NULL);
		e->num = v;
		return e;
	}
	if (isalpha((unsigned char)*ps->p) || *ps->p == '_') {
		const char *s = ps->p;
		if (is_word(ps, "and") || is_word(ps, "or") ||
		    is_word(ps, "not")) {
			fail(ps, "expected a value");
			return NULL;
		}
		while (isalnum((unsigned char)*ps->p) || *ps->p == '_')
			ps->p++;
		e = node(KOPT_EXPR_NAME, col, NULL, NULL);
		e->name = kopt_strndup(s, (size_t)(ps->p - s));
		return e;
	}
	fail(ps, *ps->p ? "unexpected character" : "expected a value");
	return NULL;
}

static struct kopt_expr *parse_power(struct parser *ps)
{
	struct kopt_expr *l = parse_atom(ps), *r;
	int col;

	if (!l)
		return NULL;
	skip_ws(ps);
	if (ps->p[0] == '*' && ps->p[1] == '*') {
		col = column(ps);
		ps->p += 2;
		r = parse_unary(ps);
		if (!r) {
			kopt_expr_free(l);
			return NULL;
		}
		return node(KOPT_EXPR_POW, col, l, r);
	}
	return l;
}

static struct kopt_expr *parse_unary(struct parser *ps)
{
	struct kopt_expr *e;
	int col;

	skip_ws(ps);
	col = column(ps);
	if (*ps->p == '-' || *ps->p == '+') {
		int neg = *ps->p == '-';
		ps->p++;
		e = parse_unary(ps);
		if (!e)
			return NULL;
		return neg ? node(KOPT_EXPR_NEG, col, e, NULL) : e;
	}
	return parse_power(ps);
}

static struct kopt_expr *parse_product(struct parser *ps)
{
	struct kopt_expr *l = parse_unary(ps), *r;

	while (l) {
		enum kopt_expr_kind k;
		int col;
		skip_ws(ps);
		col = column(ps);
		if (ps->p[0] == '*' && ps->p[1] != '*')
			k = KOPT_EXPR_MUL;
		else if (ps->p[0] == '/')
			k = KOPT_EXPR_DIV;
		else if (ps->p[0] == '%')
			k = KOPT_EXPR_MOD;
		else
			break;
		ps->p++;
		r = parse_unary(ps);
		if (!r) {
			kopt_expr_free(l);
			return NULL;
		}
		l = node(k, col, l, r);
	}
	return l;
}

static struct kopt_expr *parse_sum(struct parser *ps)
{
	struct kopt_expr *l = parse_product(ps), *r;

	while (l) {
		enum kopt_expr_kind k;
		int col;
		skip_ws(ps);
		col = column(ps);
		if (*ps->p == '+')
			k = KOPT_EXPR_ADD;
		else if (*ps->p == '-')
			k = KOPT_EXPR_SUB;
		else
			break;
		ps->p++;
		r = parse_product(ps);
		if (!r) {
			kopt_expr_free(l);
			return NULL;
		}
		l = node(k, col, l, r);
	}
	return l;
}

static struct kopt_expr *parse_cmp(struct parser *ps)
{
	static const struct { const char *op; enum kopt_expr_kind k; } ops[] = {
		{ "<=", KOPT_EXPR_LE }, { ">=", KOPT_EXPR_GE },
		{ "==", KOPT_EXPR_EQ }, { "!=", KOPT_EXPR_NE },
		{ "<", KOPT_EXPR_LT }, { ">", KOPT_EXPR_GT },
	};
	struct kopt_expr *l = parse_sum(ps), *r;
	size_t i;

	if (!l)
		return NULL;
	skip_ws(ps);
	for (i = 0; i < KOPT_ARRAY_SIZE(ops); i++) {
		size_t n = strlen(ops[i].op);
		int col = column(ps);
		if (strncmp(ps->p, ops[i].op, n))
			continue;
		ps->p += n;
		r = parse_sum(ps);
		if (!r) {
			kopt_expr_free(l);
			return NULL;
		}
		l = node(ops[i].k, col, l, r);
		skip_ws(ps);
		if (strchr("<>=!", *ps->p) && *ps->p) {
			fail(ps, "comparisons cannot be chained; use 'and'");
			kopt_expr_free(l);
			return NULL;
		}
		break;
	}
	return l;
}

static struct kopt_expr *parse_not(struct parser *ps)
{
	int col;

	skip_ws(ps);
	col = column(ps);
	if (is_word(ps, "not")) {
		struct kopt_expr *e;
		ps->p += 3;
		e = parse_not(ps);
		return e ? node(KOPT_EXPR_NOT, col, e, NULL) : NULL;
	}
	return parse_cmp(ps);
}

static struct kopt_expr *parse_and(struct parser *ps)
{
	struct kopt_expr *l = parse_not(ps), *r;

	while (l) {
		int col;
		skip_ws(ps);
		col = column(ps);
		if (!is_word(ps, "and"))
			break;
		ps->p += 3;
		r = parse_not(ps);
		if (!r) {
			kopt_expr_free(l);
			return NULL;
		}
		l = node(KOPT_EXPR_AND, col, l, r);
	}
	return l;
}

static struct kopt_expr *parse_or(struct parser *ps)
{
	struct kopt_expr *l = parse_and(ps), *r;

	while (l) {
		int col;
		skip_ws(ps);
		col = column(ps);
		if (!is_word(ps, "or"))
			break;
		ps->p += 2;
		r = parse_and(ps);
		if (!r) {
			kopt_expr_free(l);
			return NULL;
		}
		l = node(KOPT_EXPR_OR, col, l, r);
	}
	return l;
}

int kopt_expr_parse(struct kopt_expr **out, const char *text,
		    const char *file, int line)
{
	struct parser ps = { text, text, { file, line }, 0 };
	struct kopt_expr *e;

	*out = NULL;
	e = parse_or(&ps);
	if (e) {
		skip_ws(&ps);
		if (*ps.p) {
			fail(&ps, "unexpected text");
			kopt_expr_free(e);
			e = NULL;
		}
	}
	if (!e) {
		if (!ps.failed)
			fail(&ps, "bad expression");
		return KOPT_EINVALID;
	}
	*out = e;
	return 0;
}

void kopt_expr_free(struct kopt_expr *e)
{
	if (!e)
		return;
	kopt_expr_free(e->l);
	kopt_expr_free(e->r);
	free(e->name);
	free(e);
}

int kopt_expr_is_comparison(const struct kopt_expr *e)
{
	return e && e->kind >= KOPT_EXPR_LT && e->kind <= KOPT_EXPR_NE;
}

static int eval(const struct kopt_expr *e, kopt_expr_lookup_fn lookup,
		void *data, double *out, const struct place *at)
{
	double a = 0, b = 0;
	int ret;

	switch (e->kind) {
	case KOPT_EXPR_NUM:
		*out = e->num;
		return 0;
	case KOPT_EXPR_NAME:
		if (!lookup || lookup(data, e->name, out))
			return report(at, KOPT_ENOTFOUND,
				      "column %d: unknown name '%s'",
				      e->column, e->name);
		return 0;
	case KOPT_EXPR_AND:
	case KOPT_EXPR_OR:
		if ((ret = eval(e->l, lookup, data, &a, at)))
			return ret;
		if ((e->kind == KOPT_EXPR_AND) == (a == 0)) {
			*out = e->kind == KOPT_EXPR_OR;
			return 0;
		}
		if ((ret = eval(e->r, lookup, data, &b, at)))
			return ret;
		*out = b != 0;
		return 0;
	default:
		break;
	}
	if ((ret = eval(e->l, lookup, data, &a, at)))
		return ret;
	if (e->r && (ret = eval(e->r, lookup, data, &b, at)))
		return ret;
	switch (e->kind) {
	case KOPT_EXPR_NEG: *out = -a; break;
	case KOPT_EXPR_NOT: *out = a == 0; break;
	case KOPT_EXPR_ADD: *out = a + b; break;
	case KOPT_EXPR_SUB: *out = a - b; break;
	case KOPT_EXPR_MUL: *out = a * b; break;
	case KOPT_EXPR_DIV:
	case KOPT_EXPR_MOD:
		if (b == 0)
			return report(at, KOPT_EINVALID,
				      "column %d: division by zero",
				      e->column);
		*out = e->kind == KOPT_EXPR_DIV ? a / b : fmod(a, b);
		break;
	case KOPT_EXPR_POW: *out = pow(a, b); break;
	case KOPT_EXPR_LT: *out = a < b; break;
	case KOPT_EXPR_LE: *out = a <= b; break;
	case KOPT_EXPR_GT: *out = a > b; break;
	case KOPT_EXPR_GE: *out = a >= b; break;
	case KOPT_EXPR_EQ: *out = a == b; break;
	case KOPT_EXPR_NE: *out = a != b; break;
	default: *out = 0; break;
	}
	if (!isfinite(*out))
		return report(at, KOPT_EINVALID,
			      "column %d: result is not a finite number",
			      e->column);
	return 0;
}

int kopt_expr_eval(const struct kopt_expr *e, kopt_expr_lookup_fn lookup,
		   void *data, double *out, const char *file, int line)
{
	struct place at = { file, line };

	*out = 0;
	return eval(e, lookup, data, out, &at);
}

static void names(const struct kopt_expr *e, struct kopt_strvec *out)
{
	if (!e)
		return;
	if (e->kind == KOPT_EXPR_NAME && !kopt_strvec_has(out, e->name))
		kopt_strvec_push(out, e->name);
	names(e->l, out);
	names(e->r, out);
}

void kopt_expr_names(const struct kopt_expr *e, struct kopt_strvec *out)
{
	names(e, out);
}

int kopt_expr_eval_string(const char *text, kopt_expr_lookup_fn lookup,
			  void *data, double *out, const char *file, int line)
{
	struct kopt_expr *e;
	int ret = kopt_expr_parse(&e, text, file, line);

	if (ret)
		return ret;
	ret = kopt_expr_eval(e, lookup, data, out, file, line);
	kopt_expr_free(e);
	return ret;
}
