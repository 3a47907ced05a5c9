#include "profile.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "banned.h"

#define HAS(x) (!isnan(x))

/* Evaluate the kernel's `expr` at e's configuration, or report why not. */
static int eval_at(double *out, const struct kopt_kernel *k,
		   const struct kopt_vars *vars, const char *expr)
{
	char *what = kopt_xstrfmt(".kopt: kernel '%s': flops/bytes", k->name);
	int ret = kopt_config_eval(expr, vars, out, what);

	free(what);
	return ret;
}

int kopt_profile_roofline(struct kopt_results_entry *e,
			  const struct kopt_kernel *k)
{
	struct kopt_vars vars = { k, NULL, NULL, e->b, e->s, e->t, 1 };
	double dur = e->metrics[KOPT_METRIC_DURATION_US];
	double flops = NAN, bytes = NAN, ceil_t, ceil_g, pct = NAN;
	int ret;

	if (!HAS(dur) || dur <= 0)
		return 0;
	if (k->flops) {
		if ((ret = eval_at(&flops, k, &vars, k->flops)))
			return ret;
		e->metrics[KOPT_METRIC_TFLOPS] = flops / (dur * 1e-6) / 1e12;
	}
	if (k->bytes) {
		if ((ret = eval_at(&bytes, k, &vars, k->bytes)))
			return ret;
		e->metrics[KOPT_METRIC_GBPS] = bytes / (dur * 1e-6) / 1e9;
	}
	ceil_t = HAS(e->device.measured_tflops) ? e->device.measured_tflops :
		 e->device.peak_tflops;
	ceil_g = HAS(e->device.measured_gbps) ? e->device.measured_gbps :
		 e->device.peak_gbps;
	/*
	 * Attainable = min(peak, intensity x bandwidth), so the fraction of
	 * the roofline reached is the larger of the two utilisations.
	 */
	if (HAS(flops) && HAS(ceil_t) && ceil_t > 0)
		pct = 100 * e->metrics[KOPT_METRIC_TFLOPS] / ceil_t;
	if (HAS(bytes) && HAS(ceil_g) && ceil_g > 0) {
		double g = 100 * e->metrics[KOPT_METRIC_GBPS] / ceil_g;
		if (!HAS(pct) || g > pct)
			pct = g;
	}
	e->metrics[KOPT_METRIC_ROOFLINE_PCT] = pct;
	return 0;
}

static const char *classify(double tc, double dram)
{
	int tc_hi = HAS(tc) && tc >= KOPT_HEALTHY_TC_PCT;
	int dram_hi = HAS(dram) && dram >= KOPT_HEALTHY_DRAM_PCT;

	if (!HAS(tc) && !HAS(dram))
		return "Unknown";
	if (tc_hi && dram_hi)
		return tc >= dram ? "Compute-bound" : "Memory-bound";
	if (dram_hi)
		return "Memory-bound";
	if (tc_hi)
		return "Compute-bound";
	/* both low is latency-bound; one low and one unmeasured is unknown */
	if (!HAS(tc) || !HAS(dram))
		return "Unknown";
	return "Latency-bound";
}

const char *kopt_profile_stage_bottleneck(const struct kopt_results_stage *st)
{
	if (st->not_measured)
		return "Not measured";
	return classify(st->tc_pct, st->dram_pct);
}

/* The canonical names of a stage's hardware metrics that are absent. */
static void missing_metrics(struct kopt_buf *out,
			    const struct kopt_results_stage *st)
{
	const struct {
		double v;
		const char *name;
	} m[] = {
		{ st->tc_pct, "tc_pct" }, { st->dram_pct, "dram_pct" },
		{ st->occ_pct, "occ_pct" }, { st->l2_hit_pct, "l2_hit_pct" },
	};

	for (size_t i = 0; i < KOPT_ARRAY_SIZE(m); i++)
		if (!HAS(m[i].v))
			kopt_buf_addf(out, "%s%s", out->len ? ", " : "",
				      m[i].name);
}

void kopt_profile_unmeasured(struct kopt_buf *out,
			     const struct kopt_results_entry *e)
{
	struct kopt_buf names = KOPT_BUF_INIT;

	for (size_t i = 0; i < e->stages_nr; i++) {
		const struct kopt_results_stage *st = &e->stages[i];
		kopt_buf_reset(&names);
		if (st->not_measured) {
			kopt_buf_addf(out, "- '%s': not measured: %s.\n",
				      st->name, st->not_measured);
			continue;
		}
		missing_metrics(&names, st);
		if (names.len)
			kopt_buf_addf(out, "- '%s': %s not measured (no valid "
				      "value in its samples).\n", st->name,
				      names.buf);
		if (st->kernel_replay)
			kopt_buf_addf(out, "- '%s': its L2 hit rate and DRAM "
				      "traffic not measured in the program's "
				      "cache state (sampled in kernel replay: "
				      "its memory restored before each pass); "
				      "shown, no L2 conclusion drawn.\n",
				      st->name);
	}
	kopt_buf_release(&names);
}

void kopt_profile_stage_issue(struct kopt_buf *out,
			      const struct kopt_results_stage *st)
{
	if (st->not_measured)
		kopt_buf_addstr(out, "not measured (see below)");
	else if (HAS(st->spill_bytes) && st->spill_bytes > 0)
		kopt_buf_addf(out, "register spills (%.0f B local traffic)",
			      st->spill_bytes);
	else if (HAS(st->waves) && st->waves < KOPT_HEALTHY_WAVES)
		kopt_buf_addf(out, "under-filled GPU (%.2f waves)", st->waves);
	else if ((HAS(st->tc_pct) && st->tc_pct >= 80) ||
		 (HAS(st->dram_pct) && st->dram_pct >= 80))
		kopt_buf_addstr(out, "--");
	else if (HAS(st->occ_pct) && st->occ_pct < KOPT_HEALTHY_OCC_PCT)
		kopt_buf_addf(out, "low occupancy (%.1f%%)", st->occ_pct);
	else if (HAS(st->l2_hit_pct) && !st->kernel_replay &&
		 st->l2_hit_pct < KOPT_HEALTHY_L2_HIT_PCT)
		kopt_buf_addf(out, "poor L2 reuse (%.1f%% hit)", st->l2_hit_pct);
	else if (!strcmp(kopt_profile_stage_bottleneck(st), "Latency-bound"))
		kopt_buf_addstr(out, "neither DRAM nor tensor cores busy");
	else
		kopt_buf_addstr(out, "--");
}

static void set_str(char **dst, char *v)
{
	free(*dst);
	*dst = v;
}

void kopt_profile_classify(struct kopt_results_entry *e)
{
	const struct kopt_results_stage *st = kopt_results_dominant_stage(e);
	const double *m = e->metrics;
	struct kopt_buf rc = KOPT_BUF_INIT, issue = KOPT_BUF_INIT;
	const char *b;

	if (!st)
		return;
	b = kopt_profile_stage_bottleneck(st);
	set_str(&e->bottleneck, kopt_strdup(b));
	if (e->stages_nr > 1)
		kopt_buf_addf(&rc, "'%s' takes %.0f%% of the time. ", st->name,
			      100 * st->duration_us.median /
			      m[KOPT_METRIC_DURATION_US]);
	if (!strcmp(b, "Memory-bound"))
		kopt_buf_addf(&rc, "DRAM throughput is %.1f%% of peak while "
			      "tensor cores are %.1f%% busy: the kernel waits "
			      "on memory.", st->dram_pct,
			      HAS(st->tc_pct) ? st->tc_pct : 0.0);
	else if (!strcmp(b, "Compute-bound"))
		kopt_buf_addf(&rc, "Tensor cores are %.1f%% busy with DRAM at "
			      "%.1f%% of peak: the arithmetic is the limit.",
			      st->tc_pct, HAS(st->dram_pct) ? st->dram_pct : 0.0);
	else if (!strcmp(b, "Latency-bound"))
		kopt_buf_addf(&rc, "Neither DRAM (%.1f%% of peak) nor tensor "
			      "cores (%.1f%%) are busy: the kernel waits on "
			      "latency, not throughput.",
			      HAS(st->dram_pct) ? st->dram_pct : 0.0,
			      HAS(st->tc_pct) ? st->tc_pct : 0.0);
	else if (st->not_measured)
		kopt_buf_addf(&rc, "Its hardware metrics were not measured "
			      "(%s): no bottleneck can be named.",
			      st->not_measured);
	else {
		struct kopt_buf names = KOPT_BUF_INIT;
		missing_metrics(&names, st);
		kopt_buf_addf(&rc, "Not determined: %s not measured.",
			      names.buf);
		kopt_buf_release(&names);
	}
	if (!st->not_measured)
		kopt_profile_stage_issue(&issue, st);
	if (issue.len && strcmp(issue.buf, "--"))
		kopt_buf_addf(&rc, " First to fix: %s.", issue.buf);
	if (HAS(m[KOPT_METRIC_ROOFLINE_PCT]))
		kopt_buf_addf(&rc, " The whole run reaches %.0f%% of the "
			      "roofline (%s).", m[KOPT_METRIC_ROOFLINE_PCT],
			      HAS(e->device.measured_gbps) ?
			      "calibrated ceilings" : "theoretical peaks");
	set_str(&e->root_cause, kopt_buf_detach(&rc, NULL));
	kopt_buf_release(&issue);
}

static void add_opportunity(struct kopt_results_entry *e, const char *name,
			    double gain, const char *trigger)
{
	struct kopt_results_opportunity *o;

	KOPT_ALLOC_GROW(e->opportunities, e->opportunities_nr + 1,
			e->opportunities_alloc);
	o = &e->opportunities[e->opportunities_nr++];
	memset(o, 0, sizeof(*o));
	o->name = kopt_strdup(name);
	o->est_gain_pct = gain;
	o->trigger = kopt_strdup(trigger);
	o->detail = NULL;
}

static int by_gain(const void *a, const void *b)
{
	const struct kopt_results_opportunity *x = a, *y = b;

	return (y->est_gain_pct > x->est_gain_pct) -
	       (y->est_gain_pct < x->est_gain_pct);
}

void kopt_profile_metric_opportunities(struct kopt_results_entry *e)
{
	const struct kopt_results_stage *st = kopt_results_dominant_stage(e);
	double room, share;
	char trig[96];
	int saturated;

	if (!st)
		return;
	/* no single change recovers more than the distance to the roofline */
	room = HAS(e->metrics[KOPT_METRIC_ROOFLINE_PCT]) ?
	       100 - e->metrics[KOPT_METRIC_ROOFLINE_PCT] : 90;
	if (room < 0)
		room = 0;
	share = HAS(e->metrics[KOPT_METRIC_DURATION_US]) ?
		st->duration_us.median / e->metrics[KOPT_METRIC_DURATION_US] :
		1;
	if (HAS(st->waves) && st->waves < KOPT_HEALTHY_WAVES) {
		snprintf(trig, sizeof(trig), "waves=%.2f", st->waves);
		add_opportunity(e, "Fill the GPU: more blocks, fewer resources "
				"per block", fmin(room, 100 * share *
						  (1 - st->waves)), trig);
	}
	if (HAS(st->spill_bytes) && st->spill_bytes > 0) {
		snprintf(trig, sizeof(trig), "spill_bytes=%.0f",
			 st->spill_bytes);
		add_opportunity(e, "Remove register spills: smaller tiles, "
				"fewer accumulators", fmin(room, 20 * share),
				trig);
	}
	/* a stage that saturates one unit gains nothing from latency hiding */
	saturated = (HAS(st->tc_pct) && st->tc_pct >= 80) ||
		    (HAS(st->dram_pct) && st->dram_pct >= 80);
	if (!saturated && HAS(st->occ_pct) &&
	    st->occ_pct < KOPT_HEALTHY_OCC_PCT) {
		snprintf(trig, sizeof(trig), "occ_pct=%.1f", st->occ_pct);
		add_opportunity(e, "Raise occupancy: smaller tiles, fewer "
				"registers or shared memory per block",
				fmin(room, 15 * share), trig);
	}
	if (!saturated && HAS(st->l2_hit_pct) && !st->kernel_replay &&
	    st->l2_hit_pct < KOPT_HEALTHY_L2_HIT_PCT) {
		snprintf(trig, sizeof(trig), "l2_hit_pct=%.1f", st->l2_hit_pct);
		add_opportunity(e, "Improve L2 reuse: swizzled block order, "
				"larger tiles, better layout",
				fmin(room, 10 * share), trig);
	}
	if (HAS(st->tc_pct) && st->tc_pct < KOPT_HEALTHY_TC_PCT &&
	    (!HAS(st->dram_pct) || st->dram_pct < KOPT_HEALTHY_DRAM_PCT)) {
		snprintf(trig, sizeof(trig), "tc_pct=%.1f", st->tc_pct);
		add_opportunity(e, "Keep the tensor cores fed: more work in "
				"flight per SM, pipelined loads",
				fmin(room, 0.5 * room * share), trig);
	}
	if (HAS(st->dram_pct) && st->dram_pct >= KOPT_HEALTHY_DRAM_PCT &&
	    HAS(e->metrics[KOPT_METRIC_ROOFLINE_PCT])) {
		snprintf(trig, sizeof(trig), "dram_pct=%.1f", st->dram_pct);
		add_opportunity(e, "Move fewer bytes: reuse loaded data, "
				"avoid re-reads", fmin(room, 0.5 * room), trig);
	}
	if (e->opportunities_nr > 1)
		qsort(e->opportunities, e->opportunities_nr,
		      sizeof(*e->opportunities), by_gain);
	/* what cannot gain a percent is not an opportunity */
	while (e->opportunities_nr &&
	       e->opportunities[e->opportunities_nr - 1].est_gain_pct < 1) {
		struct kopt_results_opportunity *o =
			&e->opportunities[--e->opportunities_nr];
		free(o->name);
		free(o->trigger);
		free(o->detail);
	}
	while (e->opportunities_nr > 3) {
		struct kopt_results_opportunity *o =
			&e->opportunities[--e->opportunities_nr];
		free(o->name);
		free(o->trigger);
		free(o->detail);
	}
}

/*
 * A stage name for a table: C++ namespaces dropped from the front,
 * cut at 60 characters, pipes escaped.
 */
static void short_name(struct kopt_buf *out, const char *name)
{
	const char *p = name, *q;
	size_t n = 0;

	for (;;) {
		q = strstr(p, "::");
		if (!q || memchr(p, '<', (size_t)(q - p)) ||
		    memchr(p, '(', (size_t)(q - p)))
			break;
		p = q + 2;
	}
	for (; *p && n < 60; p++, n++) {
		if (*p == '|')
			kopt_buf_addch(out, '\\');
		kopt_buf_addch(out, *p);
	}
	if (*p)
		kopt_buf_addstr(out, "...");
}

static void pct_cell(struct kopt_buf *out, double v)
{
	if (HAS(v))
		kopt_buf_addf(out, " %.1f |", v);
	else
		kopt_buf_addstr(out, " -- |");
}

/*
 * The change of a metric: relative for amounts, in percentage points for
 * metrics that are themselves percentages (TC 0.0% -> 35.1% is +35.1 pp,
 * not +994823%).
 */
static void change(struct kopt_buf *out, double prev, double cur, int points)
{
	if (HAS(prev) && HAS(cur) && points) {
		double c = cur - prev;
		kopt_buf_addf(out, " %+.1f pp |", fabs(c) < 0.05 ? 0.0 : c);
	} else if (HAS(prev) && HAS(cur) && prev != 0) {
		double c = 100 * (cur - prev) / prev;
		kopt_buf_addf(out, " %+.1f%% |", fabs(c) < 0.05 ? 0.0 : c);
	}
	else
		kopt_buf_addstr(out, " -- |");
}

static void value(struct kopt_buf *out, double v, const char *fmt)
{
	kopt_buf_addch(out, ' ');
	if (HAS(v))
		kopt_buf_addf(out, fmt, v);
	else
		kopt_buf_addstr(out, "--");
	kopt_buf_addstr(out, " |");
}

void kopt_profile_contract(struct kopt_buf *out, const char *kernel,
			   const char *version,
			   const struct kopt_results_entry *e,
			   const char *parent_version,
			   const struct kopt_results_entry *parent)
{
	static const struct {
		enum kopt_metric m;
		const char *label;
		const char *fmt;
	} rows[] = {
		{ KOPT_METRIC_DURATION_US, "Duration", "%.2f μs" },
		{ KOPT_METRIC_TFLOPS, "Achieved TFLOPs/s", "%.2f" },
		{ KOPT_METRIC_GBPS, "Achieved GB/s", "%.1f" },
		{ KOPT_METRIC_TC_PCT, "TC Util", "%.1f%%" },
		{ KOPT_METRIC_DRAM_PCT, "DRAM Throughput", "%.1f%%" },
		{ KOPT_METRIC_OCC_PCT, "Occupancy", "%.1f%%" },
		{ KOPT_METRIC_L2_HIT_PCT, "L2 Hit Rate", "%.1f%%" },
		{ KOPT_METRIC_ROOFLINE_PCT, "Roofline", "%.1f%%" },
	};
	size_t i;

	kopt_buf_addf(out, "## Profile: %s %s | b=%ld, s=%ld, t=%ld\n", kernel,
		      version, e->b, e->s, e->t);
	if (e->replayed)
		kopt_buf_addf(out, "> Replayed capture%s%s%s: recorded "
			      "earlier on %s, not measured now.\n",
			      e->replay_source ? " `" : "",
			      e->replay_source ? e->replay_source : "",
			      e->replay_source ? "`" : "",
			      e->device.name ? e->device.name : "a GPU");
	if (e->b != e->b_requested)
		kopt_buf_addf(out, "> Out of memory at b=%ld: measured at "
			      "b=%ld.\n", e->b_requested, e->b);
	kopt_buf_addstr(out, "### Stages\n"
			"| Stage | Duration | TC% | DRAM% | Occ% | Bottleneck "
			"| Key Issue |\n"
			"|-------|----------|-----|-------|------|------------"
			"|-----------|\n");
	for (i = 0; i < e->stages_nr; i++) {
		const struct kopt_results_stage *st = &e->stages[i];
		struct kopt_buf issue = KOPT_BUF_INIT;
		kopt_buf_addstr(out, "| ");
		short_name(out, st->name);
		kopt_buf_addstr(out, " |");
		value(out, st->duration_us.median, "%.2f μs");
		pct_cell(out, st->tc_pct);
		pct_cell(out, st->dram_pct);
		pct_cell(out, st->occ_pct);
		kopt_profile_stage_issue(&issue, st);
		kopt_buf_addf(out, " %s | %s |\n",
			      kopt_profile_stage_bottleneck(st), issue.buf);
		kopt_buf_release(&issue);
	}
	{
		struct kopt_buf un = KOPT_BUF_INIT;
		kopt_profile_unmeasured(&un, e);
		if (un.len)
			kopt_buf_addf(out, "### Not measured\n%s", un.buf);
		kopt_buf_release(&un);
	}
	kopt_buf_addf(out, "### Bottleneck: %s\n",
		      e->bottleneck ? e->bottleneck : "Unknown");
	kopt_buf_addf(out, "Root cause: %s\n",
		      e->root_cause ? e->root_cause : "not determined.");
	kopt_buf_addstr(out, "### Top 3 Opportunities (ranked by estimated "
			"impact)\n");
	if (!e->opportunities_nr) {
		const struct kopt_results_stage *dom =
			kopt_results_dominant_stage(e);
		struct kopt_buf names = KOPT_BUF_INIT;
		if (dom && !dom->not_measured)
			missing_metrics(&names, dom);
		if (dom && dom->not_measured)
			kopt_buf_addf(out, "None drawn: '%s' was not measured "
				      "(%s).\n", dom->name, dom->not_measured);
		else if (names.len)
			kopt_buf_addf(out, "None among the measured metrics; "
				      "not measured: %s.\n", names.buf);
		else
			kopt_buf_addstr(out, "None: the dominant stage's "
					"metrics are in their healthy "
					"ranges.\n");
		kopt_buf_release(&names);
	}
	for (i = 0; i < e->opportunities_nr && i < 3; i++) {
		const struct kopt_results_opportunity *o = &e->opportunities[i];
		kopt_buf_addf(out, "%zu. %s -- est. ", i + 1, o->name);
		if (HAS(o->est_gain_pct))
			kopt_buf_addf(out, "%.0f%%", o->est_gain_pct);
		else
			kopt_buf_addstr(out, "?%");
		kopt_buf_addf(out, " gain -- trigger: %s", o->trigger ?
			      o->trigger : "--");
		if (o->detail)
			kopt_buf_addf(out, " -- see `%s`", o->detail);
		kopt_buf_addch(out, '\n');
	}
	kopt_buf_addch(out, '\n');
	if (!parent)
		return;
	kopt_buf_addf(out, "### vs Baseline (%s)\n", parent_version);
	kopt_buf_addstr(out, "| Metric | Previous | Current | Change |\n"
			"|--------|----------|---------|--------|\n");
	for (i = 0; i < KOPT_ARRAY_SIZE(rows); i++) {
		double p = parent->metrics[rows[i].m];
		double c = e->metrics[rows[i].m];
		if (!HAS(p) && !HAS(c))
			continue;
		kopt_buf_addf(out, "| %s |", rows[i].label);
		value(out, p, rows[i].fmt);
		value(out, c, rows[i].fmt);
		change(out, p, c, rows[i].m != KOPT_METRIC_DURATION_US &&
		       rows[i].m != KOPT_METRIC_TFLOPS &&
		       rows[i].m != KOPT_METRIC_GBPS);
		kopt_buf_addch(out, '\n');
	}
	kopt_buf_addch(out, '\n');
}
