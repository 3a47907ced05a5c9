#include "trigger.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "results.h"
#include "banned.h"

static const char *const trial_names[] = { "b", "s", "t" };

int kopt_trigger_known_name(const char *name)
{
	size_t i;

	if (kopt_metric_from_name(name) >= 0)
		return 1;
	for (i = 0; i < KOPT_ARRAY_SIZE(trial_names); i++)
		if (!strcmp(name, trial_names[i]))
			return 1;
	return 0;
}

void kopt_trigger_names(struct kopt_buf *out)
{
	size_t i;

	for (i = 0; i < KOPT_METRIC__NR; i++)
		kopt_buf_addf(out, "%s%s", i ? ", " : "",
			      kopt_metric_infos[i].name);
	for (i = 0; i < KOPT_ARRAY_SIZE(trial_names); i++)
		kopt_buf_addf(out, ", %s", trial_names[i]);
}

int kopt_trigger_entry_lookup(void *data, const char *name, double *out)
{
	const struct kopt_results_entry *e = data;

	if (!strcmp(name, "b"))
		*out = (double)e->b;
	else if (!strcmp(name, "s"))
		*out = (double)e->s;
	else if (!strcmp(name, "t"))
		*out = (double)e->t;
	else
		return kopt_results_metric(e, name, out) ? KOPT_ENOTFOUND : 0;
	return 0;
}

static int is_condition(const struct kopt_expr *e)
{
	switch (e->kind) {
	case KOPT_EXPR_AND:
	case KOPT_EXPR_OR:
		return is_condition(e->l) && is_condition(e->r);
	case KOPT_EXPR_NOT:
		return is_condition(e->l);
	default:
		return kopt_expr_is_comparison(e);
	}
}

int kopt_trigger_parse(struct kopt_trigger *out, const char *text,
		       const char *file, int line)
{
	struct kopt_strvec names = KOPT_STRVEC_INIT;
	struct kopt_buf known = KOPT_BUF_INIT;
	struct kopt_expr *e = NULL;
	size_t i;
	int ret;

	memset(out, 0, sizeof(*out));
	ret = kopt_expr_parse(&e, text, file, line);
	if (ret)
		return KOPT_EINVALID;
	kopt_expr_names(e, &names);
	for (i = 0; i < names.nr; i++) {
		if (kopt_trigger_known_name(names.v[i]))
			continue;
		kopt_trigger_names(&known);
		ret = kopt_error_at(file, line, "unknown metric '%s' (known: "
				    "%s)", names.v[i], known.buf);
		goto done;
	}
	if (!is_condition(e)) {
		ret = kopt_error_at(file, line, "not a condition; compare "
				    "metrics with thresholds, e.g. "
				    "'waves < 1'");
		goto done;
	}
	out->text = kopt_strdup(text);
	out->expr = e;
	out->line = line;
	e = NULL;
done:
	kopt_expr_free(e);
	kopt_strvec_clear(&names);
	kopt_buf_release(&known);
	return ret;
}

void kopt_trigger_release(struct kopt_trigger *t)
{
	free(t->text);
	kopt_expr_free(t->expr);
	memset(t, 0, sizeof(*t));
}

static void canonical(struct kopt_buf *out, const struct kopt_expr *e)
{
	static const char *const ops[] = {
		[KOPT_EXPR_ADD] = "+", [KOPT_EXPR_SUB] = "-",
		[KOPT_EXPR_MUL] = "*", [KOPT_EXPR_DIV] = "/",
		[KOPT_EXPR_MOD] = "%", [KOPT_EXPR_POW] = "**",
		[KOPT_EXPR_LT] = "<", [KOPT_EXPR_LE] = "<=",
		[KOPT_EXPR_GT] = ">", [KOPT_EXPR_GE] = ">=",
		[KOPT_EXPR_EQ] = "==", [KOPT_EXPR_NE] = "!=",
		[KOPT_EXPR_AND] = "and", [KOPT_EXPR_OR] = "or",
	};

	switch (e->kind) {
	case KOPT_EXPR_NUM:
		kopt_buf_addf(out, "%.17g", e->num);
		return;
	case KOPT_EXPR_NAME:
		kopt_buf_addstr(out, e->name);
		return;
	case KOPT_EXPR_NEG:
	case KOPT_EXPR_NOT:
		kopt_buf_addstr(out, e->kind == KOPT_EXPR_NEG ? "(-" : "(not ");
		canonical(out, e->l);
		kopt_buf_addch(out, ')');
		return;
	default:
		kopt_buf_addch(out, '(');
		canonical(out, e->l);
		kopt_buf_addf(out, " %s ", ops[e->kind]);
		canonical(out, e->r);
		kopt_buf_addch(out, ')');
	}
}

static void conjuncts(const struct kopt_expr *e, struct kopt_strvec *out)
{
	struct kopt_buf sb = KOPT_BUF_INIT;

	if (e->kind == KOPT_EXPR_AND) {
		conjuncts(e->l, out);
		conjuncts(e->r, out);
		return;
	}
	canonical(&sb, e);
	if (!kopt_strvec_has(out, sb.buf))
		kopt_strvec_push(out, sb.buf);
	kopt_buf_release(&sb);
}

void kopt_trigger_conjuncts(const struct kopt_trigger *t,
			    struct kopt_strvec *out)
{
	if (t->expr)
		conjuncts(t->expr, out);
}

const char *kopt_truth_name(enum kopt_truth t)
{
	switch (t) {
	case KOPT_TRUTH_TRUE: return "true";
	case KOPT_TRUTH_FALSE: return "false";
	default: return "unknown";
	}
}

struct eval_ctx {
	kopt_expr_lookup_fn lookup;
	void *data;
	struct kopt_trigger_result *out;
	struct kopt_strvec seen;
};

/* A measured value as people read it: 3.88, 81.2, 1850, 0.00352. */
static void format_value(struct kopt_buf *out, double v)
{
	size_t start = out->len;
	double a = fabs(v);

	if (v == floor(v) && a < 1e15) {
		kopt_buf_addf(out, "%.0f", v);
		return;
	}
	if (a >= 100)
		kopt_buf_addf(out, "%.1f", v);
	else if (a >= 1)
		kopt_buf_addf(out, "%.2f", v);
	else
		kopt_buf_addf(out, "%.3g", v);
	if (!memchr(out->buf + start, '.', out->len - start) ||
	    memchr(out->buf + start, 'e', out->len - start))
		return;
	while (out->buf[out->len - 1] == '0')
		kopt_buf_setlen(out, out->len - 1);
	if (out->buf[out->len - 1] == '.')
		kopt_buf_setlen(out, out->len - 1);
}

static int lookup(void *data, const char *name, double *v)
{
	struct eval_ctx *c = data;

	if (c->lookup(c->data, name, v)) {
		if (!kopt_strvec_has(&c->out->missing, name))
			kopt_strvec_push(&c->out->missing, name);
		return KOPT_ENOTFOUND;
	}
	if (!kopt_strvec_has(&c->seen, name)) {
		kopt_strvec_push(&c->seen, name);
		kopt_buf_addf(&c->out->values, "%s%s=",
			      c->out->values.len ? ", " : "", name);
		format_value(&c->out->values, *v);
	}
	return 0;
}

/* How far `a op b` is past its threshold, relative to the threshold. */
static double margin_of(enum kopt_expr_kind k, double a, double b)
{
	double scale = fabs(b) > 0 ? fabs(b) : fabs(a) > 0 ? fabs(a) : 1;

	switch (k) {
	case KOPT_EXPR_LT:
	case KOPT_EXPR_LE:
		return (b - a) / scale;
	case KOPT_EXPR_GT:
	case KOPT_EXPR_GE:
		return (a - b) / scale;
	case KOPT_EXPR_EQ:
		return -fabs(a - b) / scale;
	default: /* != */
		return fabs(a - b) / scale;
	}
}

/*
 * One side of a comparison: 0, KOPT_ENOTFOUND (not measured: unknown,
 * not a failure) or KOPT_EINVALID, whose cause goes to `why`.
 */
static int eval_side(const struct kopt_expr *e, struct eval_ctx *c,
		     double *v, struct kopt_buf *why)
{
	struct kopt_error_catch quiet = KOPT_ERROR_CATCH_INIT;
	int ret;

	kopt_error_catch(&quiet);
	ret = kopt_expr_eval(e, lookup, c, v, NULL, 0);
	kopt_error_uncatch(&quiet);
	if (ret && ret != KOPT_ENOTFOUND && !why->len)
		kopt_buf_addbuf(why, &quiet.cause);
	kopt_error_catch_release(&quiet);
	return ret;
}

static int eval3(const struct kopt_expr *e, struct eval_ctx *c,
		 enum kopt_truth *truth, double *margin, struct kopt_buf *err)
{
	enum kopt_truth lt, rt;
	double lm, rm, a, b;
	int ra, rb, ret;

	switch (e->kind) {
	case KOPT_EXPR_NOT:
		if ((ret = eval3(e->l, c, &lt, &lm, err)))
			return ret;
		*truth = lt == KOPT_TRUTH_UNKNOWN ? lt :
			 lt == KOPT_TRUTH_TRUE ? KOPT_TRUTH_FALSE :
			 KOPT_TRUTH_TRUE;
		*margin = -lm;
		return 0;
	case KOPT_EXPR_AND:
	case KOPT_EXPR_OR:
		if ((ret = eval3(e->l, c, &lt, &lm, err)) ||
		    (ret = eval3(e->r, c, &rt, &rm, err)))
			return ret;
		if (e->kind == KOPT_EXPR_AND) {
			if (lt == KOPT_TRUTH_FALSE || rt == KOPT_TRUTH_FALSE)
				*truth = KOPT_TRUTH_FALSE;
			else if (lt == KOPT_TRUTH_TRUE && rt == KOPT_TRUTH_TRUE)
				*truth = KOPT_TRUTH_TRUE;
			else
				*truth = KOPT_TRUTH_UNKNOWN;
			/* the weakest known part decides */
			*margin = lt == KOPT_TRUTH_UNKNOWN ? rm :
				  rt == KOPT_TRUTH_UNKNOWN ? lm :
				  lm < rm ? lm : rm;
		} else {
			if (lt == KOPT_TRUTH_TRUE || rt == KOPT_TRUTH_TRUE)
				*truth = KOPT_TRUTH_TRUE;
			else if (lt == KOPT_TRUTH_FALSE &&
				 rt == KOPT_TRUTH_FALSE)
				*truth = KOPT_TRUTH_FALSE;
			else
				*truth = KOPT_TRUTH_UNKNOWN;
			*margin = lt == KOPT_TRUTH_UNKNOWN ? rm :
				  rt == KOPT_TRUTH_UNKNOWN ? lm :
				  lm > rm ? lm : rm;
		}
		return 0;
	default:
		break;
	}
	/* a comparison: evaluate both sides to learn every missing name */
	ra = eval_side(e->l, c, &a, err);
	rb = eval_side(e->r, c, &b, err);
	if ((ra && ra != KOPT_ENOTFOUND) || (rb && rb != KOPT_ENOTFOUND))
		return KOPT_EINVALID;
	if (ra || rb) {
		*truth = KOPT_TRUTH_UNKNOWN;
		*margin = 0;
		return 0;
	}
	switch (e->kind) {
	case KOPT_EXPR_LT: *truth = a < b; break;
	case KOPT_EXPR_LE: *truth = a <= b; break;
	case KOPT_EXPR_GT: *truth = a > b; break;
	case KOPT_EXPR_GE: *truth = a >= b; break;
	case KOPT_EXPR_EQ: *truth = a == b; break;
	default: *truth = a != b; break;
	}
	*margin = margin_of(e->kind, a, b);
	return 0;
}

int kopt_trigger_eval(struct kopt_trigger_result *out,
		      const struct kopt_trigger *t,
		      kopt_expr_lookup_fn lookup, void *data, const char *file)
{
	struct eval_ctx c = { lookup, data, out, KOPT_STRVEC_INIT };
	struct kopt_buf why = KOPT_BUF_INIT;
	int ret;

	kopt_strvec_clear(&out->missing);
	kopt_buf_reset(&out->values);
	out->truth = KOPT_TRUTH_UNKNOWN;
	out->margin = 0;
	ret = eval3(t->expr, &c, &out->truth, &out->margin, &why);
	if (ret)
		kopt_error_at(file, t->line, "trigger `%s`: %s", t->text,
			      why.buf);
	kopt_strvec_clear(&c.seen);
	kopt_buf_release(&why);
	return ret;
}

void kopt_trigger_result_release(struct kopt_trigger_result *r)
{
	kopt_strvec_clear(&r->missing);
	kopt_buf_release(&r->values);
}
