#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "profile.h"

#include "messages.h"

/* Equal up to rounding. */
static int near(double a, double b)
{
	return fabs(a - b) <= 1e-9 * fabs(b);
}

/* A compute-leaning stage with every metric in its healthy range. */
static void healthy(struct kopt_results_stage *st)
{
	kopt_results_stage_init(st);
	st->tc_pct = 70;
	st->dram_pct = 50;
	st->occ_pct = 40;
	st->l2_hit_pct = 90;
	st->spill_bytes = 0;
	st->waves = 4;
}

static const char *bottleneck(double tc, double dram)
{
	struct kopt_results_stage st;

	kopt_results_stage_init(&st);
	st.tc_pct = tc;
	st.dram_pct = dram;
	return kopt_profile_stage_bottleneck(&st);
}

static struct kopt_results_stage *add_stage(struct kopt_results_entry *e,
					    const char *name, double dur)
{
	struct kopt_results_stage *st;

	KOPT_ALLOC_GROW(e->stages, e->stages_nr + 1, e->stages_alloc);
	st = &e->stages[e->stages_nr++];
	healthy(st);
	st->name = kopt_strdup(name);
	st->duration_us.median = dur;
	return st;
}

/* A memory-bound decode: a short prologue, then the attention stage. */
static void decode(struct kopt_results_entry *e)
{
	struct kopt_results_stage *st;

	kopt_results_entry_init(e);
	e->b = e->b_requested = 32;
	e->s = 1;
	e->t = 4096;
	st = add_stage(e, "prep", 20);
	st->tc_pct = 5;
	st->dram_pct = 30;
	st = add_stage(e, "flash::attn_fwd", 80);
	st->tc_pct = 10;
	st->dram_pct = 85;
	e->metrics[KOPT_METRIC_DURATION_US] = 100;
	e->metrics[KOPT_METRIC_TC_PCT] = 10;
}

static void test_stage_bottleneck(void **state)
{
	(void)state;
	assert_string_equal(bottleneck(10, 85), "Memory-bound");
	assert_string_equal(bottleneck(90, 20), "Compute-bound");
	assert_string_equal(bottleneck(20, 30), "Latency-bound");
	assert_string_equal(bottleneck(NAN, NAN), "Unknown");
	/* around the healthy ranges */
	assert_string_equal(bottleneck(59.9, 69.9), "Latency-bound");
	assert_string_equal(bottleneck(60.1, 69.9), "Compute-bound");
	assert_string_equal(bottleneck(59.9, 70.1), "Memory-bound");
	/* both busy: the busier unit is the limit */
	assert_string_equal(bottleneck(90, 75), "Compute-bound");
	assert_string_equal(bottleneck(75, 90), "Memory-bound");
	/* one unit unmeasured, the other busy */
	assert_string_equal(bottleneck(NAN, 85), "Memory-bound");
	assert_string_equal(bottleneck(85, NAN), "Compute-bound");
	/* one unit unmeasured, the other low: nothing to conclude */
	assert_string_equal(bottleneck(NAN, 10), "Unknown");
	assert_string_equal(bottleneck(10, NAN), "Unknown");
}

static void check_issue(const struct kopt_results_stage *st, const char *want)
{
	struct kopt_buf b = KOPT_BUF_INIT;

	kopt_profile_stage_issue(&b, st);
	assert_string_equal(b.buf, want);
	kopt_buf_release(&b);
}

static void test_stage_issue(void **state)
{
	struct kopt_results_stage st;

	(void)state;
	healthy(&st);
	check_issue(&st, "--");
	st.occ_pct = KOPT_HEALTHY_OCC_PCT - 0.1;
	check_issue(&st, "low occupancy (24.9%)");
	st.occ_pct = KOPT_HEALTHY_OCC_PCT + 0.1;
	check_issue(&st, "--");
	st.l2_hit_pct = KOPT_HEALTHY_L2_HIT_PCT - 0.1;
	check_issue(&st, "poor L2 reuse (79.9% hit)");
	st.l2_hit_pct = KOPT_HEALTHY_L2_HIT_PCT + 0.1;
	check_issue(&st, "--");
	/* from kernel replay the L2 hit rate is not the program's */
	st.l2_hit_pct = KOPT_HEALTHY_L2_HIT_PCT - 0.1;
	st.kernel_replay = 1;
	check_issue(&st, "--");
	st.kernel_replay = 0;
	st.l2_hit_pct = KOPT_HEALTHY_L2_HIT_PCT + 0.1;
	st.waves = KOPT_HEALTHY_WAVES - 0.01;
	check_issue(&st, "under-filled GPU (0.99 waves)");
	st.waves = KOPT_HEALTHY_WAVES + 0.01;
	check_issue(&st, "--");
	/* the worst first: spills, then waves, then occupancy, then L2 */
	st.occ_pct = 10;
	st.l2_hit_pct = 50;
	check_issue(&st, "low occupancy (10.0%)");
	st.waves = 0.5;
	check_issue(&st, "under-filled GPU (0.50 waves)");
	st.spill_bytes = 128;
	check_issue(&st, "register spills (128 B local traffic)");
	/* a saturated unit gains nothing from hiding latency */
	healthy(&st);
	st.tc_pct = 85;
	st.occ_pct = 10;
	check_issue(&st, "--");
	/* latency-bound with every other metric healthy */
	healthy(&st);
	st.tc_pct = 20;
	st.dram_pct = 30;
	check_issue(&st, "neither DRAM nor tensor cores busy");
	/* unmeasured metrics are no issue */
	kopt_results_stage_init(&st);
	check_issue(&st, "--");
}

static void test_roofline(void **state)
{
	char d[] = "d", flops[] = "2 * b * s * t * d";
	char bytes[] = "(b * t + s) * d * 2", bad[] = "b * t * width";
	struct kopt_param params[] = { { d, 512 } };
	struct kopt_kernel k = { 0 };
	struct kopt_results_entry e;
	double tf = 2.0 * 32 * 16 * 4096 * 512 / 100e-6 / 1e12;
	double gb = (32.0 * 4096 + 16) * 512 * 2 / 100e-6 / 1e9;
	double *m = e.metrics;

	(void)state;
	k.name = "k";
	k.flops = flops;
	k.bytes = bytes;
	k.params = params;
	k.params_nr = 1;
	kopt_results_entry_init(&e);
	e.b = e.b_requested = 32;
	e.s = 16;
	e.t = 4096;
	e.device.peak_tflops = 1000;
	e.device.peak_gbps = 4800;
	/* no duration, nothing to compute */
	assert_int_equal(kopt_profile_roofline(&e, &k), 0);
	assert_true(isnan(m[KOPT_METRIC_TFLOPS]));
	assert_true(isnan(m[KOPT_METRIC_ROOFLINE_PCT]));

	/* theoretical peaks */
	m[KOPT_METRIC_DURATION_US] = 100;
	assert_int_equal(kopt_profile_roofline(&e, &k), 0);
	assert_true(near(m[KOPT_METRIC_TFLOPS], tf));
	assert_true(near(m[KOPT_METRIC_GBPS], gb));
	assert_true(near(m[KOPT_METRIC_ROOFLINE_PCT], 100 * gb / 4800));
	/* measured ceilings win over the peaks */
	e.device.measured_tflops = 700;
	e.device.measured_gbps = 4000;
	assert_int_equal(kopt_profile_roofline(&e, &k), 0);
	assert_true(near(m[KOPT_METRIC_ROOFLINE_PCT], 100 * gb / 4000));
	/* the larger utilisation is the position on the roofline */
	e.device.measured_tflops = 30;
	assert_int_equal(kopt_profile_roofline(&e, &k), 0);
	assert_true(near(m[KOPT_METRIC_ROOFLINE_PCT], 100 * tf / 30));
	assert_string_equal(messages.buf, "");

	/* an unknown name in an expression */
	k.bytes = bad;
	m[KOPT_METRIC_ROOFLINE_PCT] = NAN;
	assert_int_not_equal(kopt_profile_roofline(&e, &k), 0);
	assert_true(kopt_starts_with(messages.buf, "error: .kopt: kernel "
				     "'k': flops/bytes: "));
	assert_non_null(strstr(messages.buf, "unknown name 'width'"));
	assert_true(isnan(m[KOPT_METRIC_ROOFLINE_PCT]));
	kopt_results_entry_release(&e);
}

static void test_classify(void **state)
{
	struct kopt_results_entry e;

	(void)state;
	kopt_results_entry_init(&e);
	kopt_profile_classify(&e);
	assert_null(e.bottleneck);

	decode(&e);
	kopt_profile_classify(&e);
	assert_string_equal(e.bottleneck, "Memory-bound");
	assert_non_null(strstr(e.root_cause,
			       "'flash::attn_fwd' takes 80% of the time. "));
	assert_non_null(strstr(e.root_cause, "DRAM throughput is 85.0%"));
	assert_null(strstr(e.root_cause, "First to fix"));
	assert_null(strstr(e.root_cause, "roofline"));
	e.metrics[KOPT_METRIC_ROOFLINE_PCT] = 33;
	kopt_profile_classify(&e);
	assert_non_null(strstr(e.root_cause, "reaches 33% of the roofline "
				"(theoretical peaks)"));
	e.device.measured_gbps = 4000;
	kopt_profile_classify(&e);
	assert_non_null(strstr(e.root_cause, "(calibrated ceilings)"));

	/* the dominant stage decides, whatever its position */
	e.stages[0].duration_us.median = 300;
	e.stages[0].occ_pct = 12;
	e.metrics[KOPT_METRIC_DURATION_US] = 380;
	kopt_profile_classify(&e);
	assert_string_equal(e.bottleneck, "Latency-bound");
	assert_non_null(strstr(e.root_cause, "'prep' takes 79% of the time"));
	assert_non_null(strstr(e.root_cause,
			       "First to fix: low occupancy (12.0%)."));
	kopt_results_entry_release(&e);
}

static void test_opportunities(void **state)
{
	struct kopt_results_entry e;
	struct kopt_results_stage *st;

	(void)state;
	kopt_results_entry_init(&e);
	kopt_profile_metric_opportunities(&e);
	assert_int_equal(e.opportunities_nr, 0);
	st = add_stage(&e, "main", 100);
	e.metrics[KOPT_METRIC_DURATION_US] = 100;
	e.metrics[KOPT_METRIC_ROOFLINE_PCT] = 20;
	kopt_profile_metric_opportunities(&e);
	assert_int_equal(e.opportunities_nr, 0);

	/* everything unhealthy: the three largest gains, largest first */
	st->tc_pct = 20;
	st->dram_pct = 30;
	st->occ_pct = 10;
	st->l2_hit_pct = 50;
	st->spill_bytes = 256;
	st->waves = 0.5;
	kopt_profile_metric_opportunities(&e);
	assert_int_equal(e.opportunities_nr, 3);
	assert_string_equal(e.opportunities[0].trigger, "waves=0.50");
	assert_true(near(e.opportunities[0].est_gain_pct, 50));
	assert_string_equal(e.opportunities[1].trigger, "tc_pct=20.0");
	assert_true(near(e.opportunities[1].est_gain_pct, 40));
	assert_string_equal(e.opportunities[2].trigger, "spill_bytes=256");
	assert_true(near(e.opportunities[2].est_gain_pct, 20));
	assert_non_null(strstr(e.opportunities[0].name, "Fill the GPU"));
	kopt_results_entry_release(&e);

	/* at the roofline no change can gain a percent */
	kopt_results_entry_init(&e);
	st = add_stage(&e, "main", 100);
	st->waves = 0.5;
	st->occ_pct = 10;
	e.metrics[KOPT_METRIC_DURATION_US] = 100;
	e.metrics[KOPT_METRIC_ROOFLINE_PCT] = 99.5;
	kopt_profile_metric_opportunities(&e);
	assert_int_equal(e.opportunities_nr, 0);
	kopt_results_entry_release(&e);
}

/* The text after `what`, which must come at or after `from`. */
static const char *after(const char *from, const char *what)
{
	const char *p = strstr(from, what);

	assert_non_null(p);
	return p + strlen(what);
}

static void test_contract(void **state)
{
	static const char head[] = "## Profile: mla v1 | b=32, s=1, t=4096\n";
	struct kopt_results_entry e, parent;
	struct kopt_buf out = KOPT_BUF_INIT;
	const char *p;

	(void)state;
	decode(&e);
	kopt_profile_classify(&e);
	kopt_profile_contract(&out, "mla", "v1", &e, NULL, NULL);
	assert_int_equal(strncmp(out.buf, head, strlen(head)), 0);
	p = after(out.buf + strlen(head), "### Stages\n| Stage | Duration | "
		  "TC% | DRAM% | Occ% | Bottleneck | Key Issue |\n");
	p = after(p, "| prep | 20.00 μs | 5.0 | 30.0 | 40.0 | Latency-bound "
		  "| neither DRAM nor tensor cores busy |\n");
	p = after(p, "| attn_fwd | 80.00 μs | 10.0 | 85.0 | 40.0 | "
		  "Memory-bound | -- |\n");
	p = after(p, "### Bottleneck: Memory-bound\nRoot cause: ");
	p = after(p, "### Top 3 Opportunities (ranked by estimated impact)\n"
		  "None: ");
	assert_null(strstr(out.buf, "### vs Baseline"));
	assert_null(strstr(out.buf, "Replayed"));
	assert_null(strstr(out.buf, "Out of memory"));

	/* against the parent, a replayed capture at a halved b */
	e.metrics[KOPT_METRIC_ROOFLINE_PCT] = 40;
	kopt_profile_metric_opportunities(&e);
	decode(&parent);
	parent.metrics[KOPT_METRIC_DURATION_US] = 125;
	parent.metrics[KOPT_METRIC_TC_PCT] = 0;
	e.replayed = 1;
	e.replay_source = kopt_strdup("cap.json");
	e.device.name = kopt_strdup("NVIDIA H200");
	e.b_requested = 64;
	kopt_buf_reset(&out);
	kopt_profile_contract(&out, "mla", "v1", &e, "v0", &parent);
	assert_int_equal(strncmp(out.buf, head, strlen(head)), 0);
	p = after(out.buf + strlen(head), "> Replayed capture `cap.json`: "
		  "recorded earlier on NVIDIA H200, not measured now.\n"
		  "> Out of memory at b=64: measured at b=32.\n### Stages\n");
	p = after(p, "### Top 3 Opportunities (ranked by estimated impact)\n"
		  "1. Move fewer bytes: reuse loaded data, avoid re-reads -- "
		  "est. 30% gain -- trigger: dram_pct=85.0\n\n");
	p = after(p, "### vs Baseline (v0)\n| Metric | Previous | Current | "
		  "Change |\n|--------|----------|---------|--------|\n");
	p = after(p, "| Duration | 125.00 μs | 100.00 μs | -20.0% |\n");
	p = after(p, "| TC Util | 0.0% | 10.0% | +10.0 pp |\n");
	assert_null(strstr(out.buf, "| Occupancy |"));
	kopt_buf_release(&out);
	kopt_results_entry_release(&parent);
	kopt_results_entry_release(&e);
}


static void test_not_measured(void **state)
{
	struct kopt_results_entry e;
	struct kopt_results_stage *st;
	struct kopt_buf out = KOPT_BUF_INIT;

	(void)state;
	decode(&e);
	/* the dominant stage ran from a graph: timed, no counters */
	st = &e.stages[1];
	st->tc_pct = st->dram_pct = st->occ_pct = st->l2_hit_pct = NAN;
	st->not_measured = kopt_strdup("launched from a CUDA graph");
	assert_string_equal(kopt_profile_stage_bottleneck(st), "Not measured");
	check_issue(st, "not measured (see below)");
	kopt_profile_classify(&e);
	assert_string_equal(e.bottleneck, "Not measured");
	assert_non_null(strstr(e.root_cause, "no bottleneck can be named"));
	kopt_profile_metric_opportunities(&e);
	assert_int_equal(e.opportunities_nr, 0);
	kopt_profile_contract(&out, "attn", "v1", &e, NULL, NULL);
	assert_non_null(strstr(out.buf, "| attn_fwd | 80.00 μs | -- | -- | -- "
			       "| Not measured | not measured (see below) |"));
	assert_non_null(strstr(out.buf, "### Not measured\n- 'flash::attn_fwd"
			       "': not measured: launched from a CUDA graph.\n"));
	assert_non_null(strstr(out.buf, "None drawn: 'flash::attn_fwd' was not "
			       "measured (launched from a CUDA graph).\n"));
	assert_null(strstr(out.buf, "healthy"));
	/* measured, but one metric missing: said, and not called healthy */
	kopt_buf_reset(&out);
	free(st->not_measured);
	st->not_measured = NULL;
	st->tc_pct = 90;
	st->dram_pct = 10;
	st->occ_pct = 50;
	e.stages[0].occ_pct = 50;
	e.stages[0].l2_hit_pct = 90;
	e.stages[0].waves = e.stages[1].waves = 4;
	e.stages[0].spill_bytes = e.stages[1].spill_bytes = 0;
	kopt_profile_classify(&e);
	assert_string_equal(e.bottleneck, "Compute-bound");
	kopt_profile_contract(&out, "attn", "v1", &e, NULL, NULL);
	assert_non_null(strstr(out.buf, "- 'flash::attn_fwd': l2_hit_pct not "
			       "measured"));
	assert_non_null(strstr(out.buf, "None among the measured metrics; not "
			       "measured: l2_hit_pct.\n"));
	/* sampled in kernel replay: said, and no L2 conclusion drawn */
	kopt_buf_reset(&out);
	st->l2_hit_pct = 20;
	st->kernel_replay = 1;
	kopt_profile_contract(&out, "attn", "v1", &e, NULL, NULL);
	assert_non_null(strstr(out.buf, "- 'flash::attn_fwd': its L2 hit rate "
			       "and DRAM traffic not measured in the "
			       "program's cache state (sampled in kernel "
			       "replay: its memory restored before each "
			       "pass); shown, no L2 conclusion drawn.\n"));
	assert_null(strstr(out.buf, "poor L2 reuse"));
	kopt_buf_release(&out);
	kopt_results_entry_release(&e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stage_bottleneck),
		cmocka_unit_test(test_stage_issue),
		MESSAGES_TEST(test_roofline),
		cmocka_unit_test(test_classify),
		cmocka_unit_test(test_opportunities),
		cmocka_unit_test(test_contract),
		cmocka_unit_test(test_not_measured),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
