#include "chart.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"
#include "compare.h"
#include "numbers.h"
#include "results.h"
#include "banned.h"

static const char *entry_device(const struct kopt_results_entry *e)
{
	return e->device.name && *e->device.name ? e->device.name :
	       "unknown device";
}

static void config_text(struct kopt_buf *out, const struct kopt_results_entry *e)
{
	kopt_buf_addf(out, "b=%ld, s=%ld, t=%ld",
		      e->b_requested > 0 ? e->b_requested : e->b, e->s, e->t);
}

/* The series an entry belongs to: its trial (else its configuration)
 * on its device. */
static int same_series(const struct kopt_chart_series *s,
		       const struct kopt_results_entry *e)
{
	struct kopt_buf cfg = KOPT_BUF_INIT;
	int same;

	if (strcmp(s->device, entry_device(e)))
		return 0;
	if (e->trial)
		return !strcmp(s->trial, e->trial);
	config_text(&cfg, e);
	same = !strcmp(s->trial, cfg.buf);
	kopt_buf_release(&cfg);
	return same;
}

static struct kopt_chart_series *find_series(struct kopt_chart *c,
					     const struct kopt_results_entry *e)
{
	size_t i;

	for (i = 0; i < c->series_nr; i++)
		if (same_series(&c->series[i], e))
			return &c->series[i];
	return NULL;
}

static void add_series(struct kopt_chart *c, const struct kopt_results_entry *e)
{
	struct kopt_chart_series *s;
	struct kopt_buf cfg = KOPT_BUF_INIT;

	KOPT_ALLOC_GROW(c->series, c->series_nr + 1, c->series_alloc);
	s = &c->series[c->series_nr++];
	memset(s, 0, sizeof(*s));
	config_text(&cfg, e);
	s->trial = kopt_strdup(e->trial ? e->trial : cfg.buf);
	s->config = kopt_buf_detach(&cfg, NULL);
	s->device = kopt_strdup(entry_device(e));
	s->b = e->b_requested > 0 ? e->b_requested : e->b;
	s->s = e->s;
	s->t = e->t;
}

size_t kopt_chart_from_analysis(struct kopt_chart *out,
				const struct kopt_analysis *a)
{
	size_t i, j, k;

	out->noise_pct = a->noise_pct;
	for (i = 0; i < a->versions_nr; i++) {
		const struct kopt_analysis_version *v = &a->versions[i];
		if (!v->has_results)
			continue;
		for (j = 0; j < v->results.entries_nr; j++)
			if (!find_series(out, &v->results.entries[j]))
				add_series(out, &v->results.entries[j]);
	}
	for (k = 0; k < out->series_nr; k++) {
		struct kopt_chart_series *s = &out->series[k];
		for (i = 0; i < a->versions_nr; i++) {
			const struct kopt_analysis_version *v = &a->versions[i];
			struct kopt_chart_point *p;

			KOPT_ALLOC_GROW(s->points, s->points_nr + 1,
					s->points_alloc);
			p = &s->points[s->points_nr++];
			p->version = kopt_strdup(v->name);
			p->value = NAN;
			p->regression = 0;
			p->change_pct = NAN;
			p->replayed = 0;
			p->from_devlog = v->source == KOPT_NUMBERS_DEVLOG;
			for (j = 0; v->has_results &&
				    j < v->results.entries_nr; j++) {
				const struct kopt_results_entry *e =
					&v->results.entries[j];
				if (!same_series(s, e) ||
				    !kopt_results_has(e->metrics[
					    KOPT_METRIC_DURATION_US]))
					continue;
				p->value = e->metrics[KOPT_METRIC_DURATION_US];
				p->replayed = e->replayed;
				if (v->trials) {
					p->change_pct = v->trials[j].change_pct;
					p->regression = v->trials[j].change ==
						KOPT_CHANGE_REGRESSION;
				}
				break;
			}
		}
	}
	return out->series_nr;
}

size_t kopt_chart_measured(const struct kopt_chart_series *s)
{
	size_t i, n = 0;

	for (i = 0; i < s->points_nr; i++)
		n += !isnan(s->points[i].value);
	return n;
}

void kopt_chart_number(struct kopt_buf *out, double v)
{
	struct kopt_buf sb = KOPT_BUF_INIT;

	kopt_buf_addf(&sb, "%.2f", v);
	while (sb.len > 1 && sb.buf[sb.len - 1] == '0')
		kopt_buf_setlen(&sb, sb.len - 1);
	if (sb.len > 1 && sb.buf[sb.len - 1] == '.')
		kopt_buf_setlen(&sb, sb.len - 1);
	if (!strcmp(sb.buf, "-0"))
		kopt_buf_setlen(&sb, 0);
	if (!sb.len)
		kopt_buf_addch(&sb, '0');
	kopt_buf_addbuf(out, &sb);
	kopt_buf_release(&sb);
}

double kopt_chart_nice_max(double max)
{
	static const double steps[] = { 1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8,
					10 };
	double mag;
	size_t i;

	if (!(max > 0) || !isfinite(max))
		return 1;
	mag = pow(10, floor(log10(max)));
	for (i = 0; i < KOPT_ARRAY_SIZE(steps); i++)
		if (steps[i] * mag >= max * (1 - 1e-9))
			return steps[i] * mag;
	return 10 * mag;
}

/* Text for a Mermaid string: no double quotes, no line breaks. */
static void mermaid_text(struct kopt_buf *out, const char *s)
{
	for (; *s; s++)
		kopt_buf_addch(out, *s == '"' ? '\'' :
			       (*s == '\n' || *s == '\r') ? ' ' : *s);
}

static void one_series(struct kopt_buf *out, const struct kopt_chart *c,
		       const struct kopt_chart_series *s, const char *kernel)
{
	struct kopt_buf labels = KOPT_BUF_INIT, values = KOPT_BUF_INIT;
	struct kopt_buf slower = KOPT_BUF_INIT, missing = KOPT_BUF_INIT;
	struct kopt_buf replayed = KOPT_BUF_INIT, by_hand = KOPT_BUF_INIT;
	double max = 0;
	size_t i;

	for (i = 0; i < s->points_nr; i++) {
		const struct kopt_chart_point *p = &s->points[i];
		if (isnan(p->value)) {
			kopt_buf_addf(&missing, "%s%s", missing.len ? ", " : "",
				      p->version);
			continue;
		}
		kopt_buf_addf(&labels, "%s\"%s%s\"", labels.len ? ", " : "",
			      p->version, p->regression ? " \u25b2" : "");
		if (values.len)
			kopt_buf_addstr(&values, ", ");
		kopt_chart_number(&values, p->value);
		if (p->value > max)
			max = p->value;
		if (p->replayed)
			kopt_buf_addf(&replayed, "%s%s",
				      replayed.len ? ", " : "", p->version);
		if (p->from_devlog)
			kopt_buf_addf(&by_hand, "%s%s",
				      by_hand.len ? ", " : "", p->version);
		if (p->regression) {
			kopt_buf_addf(&slower, "%s%s (", slower.len ? ", " : "",
				      p->version);
			if (!isnan(p->change_pct))
				kopt_buf_addf(&slower, "%+.1f%%)", p->change_pct);
			else
				kopt_buf_addstr(&slower, "slower)");
		}
	}
	kopt_buf_addf(out, "**%s** (%s) on %s: duration per version in us, "
		      "lower is better.\n\n", s->trial, s->config, s->device);
	kopt_buf_addstr(out, "```mermaid\nxychart-beta\n    title \"");
	mermaid_text(out, kernel);
	kopt_buf_addch(out, ' ');
	mermaid_text(out, s->trial);
	kopt_buf_addstr(out, ", ");
	mermaid_text(out, s->device);
	kopt_buf_addstr(out, "\"\n");
	kopt_buf_addf(out, "    x-axis [%s]\n", labels.buf);
	kopt_buf_addstr(out, "    y-axis \"duration (us)\" 0 --> ");
	kopt_chart_number(out, kopt_chart_nice_max(max));
	kopt_buf_addf(out, "\n    line [%s]\n```\n", values.buf);
	if (slower.len)
		kopt_buf_addf(out, "\n\u25b2 slower than its parent beyond the "
			      "%g%% noise: %s.\n", c->noise_pct, slower.buf);
	if (replayed.len)
		kopt_buf_addf(out, "\nReplayed from recorded captures: %s.\n",
			      replayed.buf);
	if (by_hand.len)
		kopt_buf_addf(out, "\nFrom the devlog (no results file): %s.\n",
			      by_hand.buf);
	if (missing.len)
		kopt_buf_addf(out, "\nNot measured on %s: %s.\n", s->trial,
			      missing.buf);
	kopt_buf_release(&labels);
	kopt_buf_release(&values);
	kopt_buf_release(&slower);
	kopt_buf_release(&missing);
	kopt_buf_release(&replayed);
	kopt_buf_release(&by_hand);
}

void kopt_chart_mermaid(struct kopt_buf *out, const struct kopt_chart *c,
			const char *kernel)
{
	size_t i;
	int first = 1;

	for (i = 0; i < c->series_nr; i++) {
		if (!kopt_chart_measured(&c->series[i]))
			continue;
		if (!first)
			kopt_buf_addch(out, '\n');
		first = 0;
		one_series(out, c, &c->series[i], kernel);
	}
}

void kopt_chart_release(struct kopt_chart *c)
{
	size_t i, j;

	for (i = 0; i < c->series_nr; i++) {
		struct kopt_chart_series *s = &c->series[i];
		for (j = 0; j < s->points_nr; j++)
			free(s->points[j].version);
		free(s->points);
		free(s->trial);
		free(s->config);
		free(s->device);
	}
	free(c->series);
	c->series = NULL;
	c->series_nr = c->series_alloc = 0;
}
