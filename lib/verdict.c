#include "verdict.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "error.h"
#include "expr.h"
#include "banned.h"

/* ---- verdicts ---- */

static const char *const verdict_names[] = {
	[KOPT_VERDICT_NONE] = "none",
	[KOPT_VERDICT_NEUTRAL] = "neutral",
	[KOPT_VERDICT_IMPROVEMENT] = "improvement",
	[KOPT_VERDICT_REGRESSION] = "regression",
};

const char *kopt_verdict_name(enum kopt_verdict v)
{
	if ((size_t)v >= KOPT_ARRAY_SIZE(verdict_names))
		return "none";
	return verdict_names[v];
}

enum kopt_verdict kopt_verdict_parse(const char *s)
{
	size_t i;

	for (i = 1; s && i < KOPT_ARRAY_SIZE(verdict_names); i++)
		if (!strcmp(s, verdict_names[i]))
			return (enum kopt_verdict)i;
	return KOPT_VERDICT_NONE;
}

enum kopt_verdict kopt_verdict_judge(double parent_us, double parent_spread,
				     double child_us, double child_spread,
				     double noise_pct, double *change_pct,
				     double *threshold_pct)
{
	double change, threshold = noise_pct;

	if (!isfinite(parent_us) || !isfinite(child_us) || parent_us <= 0 ||
	    child_us < 0)
		return KOPT_VERDICT_NONE;
	if (isfinite(parent_spread) && parent_spread > threshold)
		threshold = parent_spread;
	if (isfinite(child_spread) && child_spread > threshold)
		threshold = child_spread;
	change = (child_us - parent_us) / parent_us * 100.0;
	if (change_pct)
		*change_pct = change;
	if (threshold_pct)
		*threshold_pct = threshold;
	if (change > threshold)
		return KOPT_VERDICT_REGRESSION;
	if (change < -threshold)
		return KOPT_VERDICT_IMPROVEMENT;
	return KOPT_VERDICT_NEUTRAL;
}

void kopt_verdict_compare(struct kopt_verdicts *out,
			  const struct kopt_results *parent,
			  const struct kopt_results *child, double noise_pct)
{
	size_t i;
	int any_improved = 0, any_regressed = 0, any = 0;

	for (i = 0; i < child->entries_nr; i++) {
		const struct kopt_results_entry *c = &child->entries[i], *p;
		double pd, cd;
		struct kopt_trial_verdict *v;

		p = kopt_results_find_like(parent, c);
		if (!p)
			continue;
		pd = p->metrics[KOPT_METRIC_DURATION_US];
		cd = c->metrics[KOPT_METRIC_DURATION_US];
		KOPT_ALLOC_GROW(out->items, out->nr + 1, out->alloc);
		v = &out->items[out->nr++];
		memset(v, 0, sizeof(*v));
		v->trial = c->trial;
		v->b = c->b;
		v->s = c->s;
		v->t = c->t;
		v->parent_us = pd;
		v->child_us = cd;
		v->change_pct = NAN;
		v->threshold_pct = noise_pct;
		v->verdict = kopt_verdict_judge(pd, p->spread_pct, cd, c->spread_pct,
						noise_pct, &v->change_pct,
						&v->threshold_pct);
		if (v->verdict == KOPT_VERDICT_NONE)
			continue;
		any = 1;
		if (v->verdict == KOPT_VERDICT_REGRESSION)
			any_regressed = 1;
		else if (v->verdict == KOPT_VERDICT_IMPROVEMENT)
			any_improved = 1;
	}
	if (any_regressed)
		out->overall = KOPT_VERDICT_REGRESSION;
	else if (any_improved)
		out->overall = KOPT_VERDICT_IMPROVEMENT;
	else if (any)
		out->overall = KOPT_VERDICT_NEUTRAL;
	else
		out->overall = KOPT_VERDICT_NONE;
}

void kopt_verdicts_release(struct kopt_verdicts *v)
{
	free(v->items);
	v->items = NULL;
	v->nr = v->alloc = 0;
	v->overall = KOPT_VERDICT_NONE;
}

/* ---- targets ---- */

static double entry_duration(const struct kopt_results_entry *e)
{
	double d = e->metrics[KOPT_METRIC_DURATION_US];

	return kopt_results_has(d) ? d : INFINITY;
}

/* "<metric> <op> <number>" (or the other way round): the metric's name. */
static const char *simple_bound(const struct kopt_expr *e, double *bound)
{
	if (e->kind < KOPT_EXPR_LT || e->kind > KOPT_EXPR_NE)
		return NULL;
	if (e->l->kind == KOPT_EXPR_NAME && e->r->kind == KOPT_EXPR_NUM) {
		*bound = e->r->num;
		return e->l->name;
	}
	if (e->r->kind == KOPT_EXPR_NAME && e->l->kind == KOPT_EXPR_NUM) {
		*bound = e->l->num;
		return e->r->name;
	}
	return NULL;
}

int kopt_target_evaluate(struct kopt_target_result *out,
			 const struct kopt_config *cfg,
			 const struct kopt_target *t,
			 const struct kopt_results *const *results,
			 size_t nr)
{
	const struct kopt_trial *trial = kopt_config_trial(cfg, t->trial);
	struct kopt_expr *expr = NULL;
	struct kopt_error_catch why = KOPT_ERROR_CATCH_INIT;
	const struct kopt_results_entry *best = NULL, *best_met = NULL;
	const char *best_v = NULL, *met_v = NULL;
	size_t i;
	int ret;

	memset(out, 0, sizeof(*out));
	out->target = t;
	out->value = out->bound = NAN;
	if (!trial)
		return kopt_error("target '%s': unknown trial '%s'", t->text,
				  t->trial);
	kopt_error_catch(&why);
	ret = kopt_expr_parse(&expr, t->expr, NULL, 0);
	kopt_error_uncatch(&why);
	if (ret) {
		kopt_error("target '%s': %s", t->text, why.cause.buf);
		kopt_error_catch_release(&why);
		return KOPT_EINVALID;
	}
	kopt_error_catch_release(&why);
	{
		const char *m = simple_bound(expr, &out->bound);
		if (m && strlen(m) < sizeof(out->metric))
			snprintf(out->metric, sizeof(out->metric), "%s", m);
		else
			out->bound = NAN;
	}
	kopt_error_catch(&why);
	for (i = 0; i < nr; i++) {
		const struct kopt_results_entry *e;
		double v;
		e = kopt_results_find(results[i], t->trial, trial->b, trial->s,
				      trial->t);
		if (!e)
			continue;
		out->measured = 1;
		if (!best || entry_duration(e) < entry_duration(best)) {
			best = e;
			best_v = results[i]->version;
		}
		/* not measured, or no number there: not met */
		if (kopt_expr_eval(expr, kopt_results_expr_lookup, (void *)e,
				   &v, NULL, 0) || v == 0)
			continue;
		if (!best_met || entry_duration(e) < entry_duration(best_met)) {
			best_met = e;
			met_v = results[i]->version;
		}
	}
	kopt_error_catch_release(&why);
	out->met = best_met != NULL;
	if (best_met) {
		best = best_met;
		best_v = met_v;
	}
	if (best) {
		out->version = best_v;
		out->replayed = best->replayed;
		out->source = kopt_numbers_entry_source(best);
		if (*out->metric && kopt_results_metric(best, out->metric,
							&out->value))
			out->value = NAN;
	}
	kopt_expr_free(expr);
	return 0;
}
