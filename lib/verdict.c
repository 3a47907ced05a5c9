#include "verdict.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "buf.h"
#include "config.h"
#include "error.h"
#include "repo.h"
#include "banned.h"

/* ---- reading results ---- */

/* The problem goes to `err` when the caller gave one, else it is printed. */
static struct kopt_buf *err_out;

static int bad(const char *label, const char *what)
{
	if (err_out) {
		kopt_buf_reset(err_out);
		kopt_buf_addf(err_out, "cannot read results '%s': %s", label,
			      what);
	} else {
		kopt_error("cannot read results '%s': %s", label, what);
	}
	return KOPT_EINVALID;
}

static double number_or_nan(const cJSON *item)
{
	if (cJSON_IsNumber(item) && isfinite(item->valuedouble))
		return item->valuedouble;
	return NAN;
}

static char *string_or_null(const cJSON *item)
{
	return cJSON_IsString(item) ? kopt_strdup(item->valuestring) : NULL;
}

static int parse_entry(struct kopt_measure *e, const cJSON *j,
		       const char *label, size_t nth)
{
	const cJSON *trial = cJSON_GetObjectItemCaseSensitive(j, "trial");
	const cJSON *config = cJSON_GetObjectItemCaseSensitive(j, "config");
	const cJSON *metrics = cJSON_GetObjectItemCaseSensitive(j, "metrics");
	const cJSON *m;
	const char *keys[] = { "b", "s", "t" };
	long *vals[] = { &e->b, &e->s, &e->t };
	size_t i;

	if (!cJSON_IsObject(j)) {
		struct kopt_buf sb = KOPT_BUF_INIT;
		kopt_buf_addf(&sb, "entry %zu is not an object", nth + 1);
		bad(label, sb.buf);
		kopt_buf_release(&sb);
		return KOPT_EINVALID;
	}
	if (trial && !cJSON_IsNull(trial) && !cJSON_IsString(trial))
		return bad(label, "'trial' is neither a name nor null");
	e->trial = string_or_null(trial);
	if (!cJSON_IsObject(config))
		return bad(label, "an entry has no 'config' object");
	for (i = 0; i < 3; i++) {
		const cJSON *v = cJSON_GetObjectItemCaseSensitive(config,
								  keys[i]);
		if (!cJSON_IsNumber(v) || v->valuedouble < 1 ||
		    v->valuedouble > 1e12) {
			struct kopt_buf sb = KOPT_BUF_INIT;
			kopt_buf_addf(&sb, "'config.%s' of trial '%s' is not a "
				      "positive integer", keys[i],
				      e->trial ? e->trial : "(ad hoc)");
			bad(label, sb.buf);
			kopt_buf_release(&sb);
			return KOPT_EINVALID;
		}
		*vals[i] = (long)v->valuedouble;
	}
	e->duration_us = NAN;
	e->spread_pct = number_or_nan(cJSON_GetObjectItemCaseSensitive(j,
							"spread_pct"));
	if (metrics && !cJSON_IsNull(metrics) && !cJSON_IsObject(metrics))
		return bad(label, "'metrics' is not an object");
	cJSON_ArrayForEach(m, metrics) {
		double v = number_or_nan(m);
		if (isnan(v) || !m->string)
			continue;
		KOPT_ALLOC_GROW(e->metrics, e->metrics_nr + 1,
				e->metrics_alloc);
		e->metrics[e->metrics_nr].name = kopt_strdup(m->string);
		e->metrics[e->metrics_nr++].value = v;
		if (!strcmp(m->string, "duration_us"))
			e->duration_us = v;
	}
	return 0;
}

int kopt_measures_parse(struct kopt_measures *out, const char *text,
			size_t len, const char *label, struct kopt_buf *err)
{
	cJSON *root;
	const cJSON *schema, *entries, *e;
	size_t nth = 0;
	int ret = 0;

	err_out = err;
	root = cJSON_ParseWithLength(text, len);

	if (!root) {
		const char *at = cJSON_GetErrorPtr();
		struct kopt_buf sb = KOPT_BUF_INIT;
		int line = 1;
		const char *p;
		if (at && at >= text && at <= text + len) {
			for (p = text; p < at; p++)
				line += *p == '\n';
			kopt_buf_addf(&sb, "not JSON (line %d)", line);
		} else {
			kopt_buf_addstr(&sb, "not JSON");
		}
		ret = bad(label, sb.buf);
		kopt_buf_release(&sb);
		err_out = NULL;
		return ret;
	}
	schema = cJSON_GetObjectItemCaseSensitive(root, "schema");
	if (!cJSON_IsNumber(schema) || schema->valuedouble != 1) {
		ret = bad(label, cJSON_IsNumber(schema) ?
			  "unsupported schema (this tool reads schema 1)" :
			  "no 'schema' number");
		goto done;
	}
	out->kernel = string_or_null(cJSON_GetObjectItemCaseSensitive(root,
								      "kernel"));
	out->version = string_or_null(cJSON_GetObjectItemCaseSensitive(root,
								       "version"));
	out->parent = string_or_null(cJSON_GetObjectItemCaseSensitive(root,
								      "parent"));
	if (!out->kernel || !out->version) {
		ret = bad(label, "no 'kernel' or 'version' name");
		goto done;
	}
	entries = cJSON_GetObjectItemCaseSensitive(root, "entries");
	if (!cJSON_IsArray(entries)) {
		ret = bad(label, "no 'entries' array");
		goto done;
	}
	cJSON_ArrayForEach(e, entries) {
		struct kopt_measure *m;
		KOPT_ALLOC_GROW(out->items, out->nr + 1, out->alloc);
		m = &out->items[out->nr++];
		memset(m, 0, sizeof(*m));
		ret = parse_entry(m, e, label, nth++);
		if (ret)
			goto done;
		if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(e, "replayed")))
			out->replayed = 1;
	}
	if (out->kernel && !kopt_valid_name(out->kernel))
		ret = bad(label, "'kernel' is not a kernel name");
	else if (kopt_version_number(out->version) < 0)
		ret = bad(label, "'version' is not a version (v0, v1, ...)");
	else if (out->parent && kopt_version_number(out->parent) < 0)
		ret = bad(label, "'parent' is not a version (v0, v1, ...)");
done:
	err_out = NULL;
	cJSON_Delete(root);
	if (ret)
		kopt_measures_release(out);
	return ret;
}

void kopt_measures_release(struct kopt_measures *m)
{
	size_t i, j;

	for (i = 0; i < m->nr; i++) {
		free(m->items[i].trial);
		for (j = 0; j < m->items[i].metrics_nr; j++)
			free(m->items[i].metrics[j].name);
		free(m->items[i].metrics);
	}
	free(m->items);
	free(m->kernel);
	free(m->version);
	free(m->parent);
	memset(m, 0, sizeof(*m));
}

int kopt_measure_metric(const struct kopt_measure *e, const char *name,
			double *out)
{
	size_t i;

	for (i = 0; i < e->metrics_nr; i++)
		if (!strcmp(e->metrics[i].name, name)) {
			*out = e->metrics[i].value;
			return 0;
		}
	return KOPT_ENOTFOUND;
}

const struct kopt_measure *kopt_measures_find(const struct kopt_measures *m,
					      const char *trial)
{
	size_t i;

	for (i = 0; i < m->nr; i++) {
		const char *t = m->items[i].trial;
		if ((!trial && !t) || (trial && t && !strcmp(trial, t)))
			return &m->items[i];
	}
	return NULL;
}

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

static int same_identity(const struct kopt_measure *a,
			 const struct kopt_measure *b)
{
	if (!a->trial != !b->trial)
		return 0;
	if (a->trial && strcmp(a->trial, b->trial))
		return 0;
	return a->b == b->b && a->s == b->s && a->t == b->t;
}

void kopt_verdict_compare(struct kopt_verdicts *out,
			  const struct kopt_measures *parent,
			  const struct kopt_measures *child, double noise_pct)
{
	size_t i, j;
	int any_improved = 0, any_regressed = 0, any = 0;

	for (i = 0; i < child->nr; i++) {
		const struct kopt_measure *c = &child->items[i], *p = NULL;
		struct kopt_trial_verdict *v;

		for (j = 0; j < parent->nr && !p; j++)
			if (same_identity(&parent->items[j], c))
				p = &parent->items[j];
		if (!p)
			continue;
		KOPT_ALLOC_GROW(out->items, out->nr + 1, out->alloc);
		v = &out->items[out->nr++];
		memset(v, 0, sizeof(*v));
		v->trial = c->trial;
		v->b = c->b;
		v->s = c->s;
		v->t = c->t;
		v->parent_us = p->duration_us;
		v->child_us = c->duration_us;
		v->change_pct = NAN;
		v->threshold_pct = noise_pct;
		v->verdict = kopt_verdict_judge(p->duration_us, p->spread_pct,
						c->duration_us, c->spread_pct,
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
