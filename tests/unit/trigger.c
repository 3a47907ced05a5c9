#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <string.h>

#include "buf.h"
#include "error.h"
#include "results.h"
#include "trigger.h"

/* Measured values; a name absent here was not measured. */
struct fake {
	const char *name;
	double v;
};

static int lookup(void *data, const char *name, double *out)
{
	const struct fake *f;

	for (f = data; f->name; f++)
		if (!strcmp(f->name, name)) {
			*out = f->v;
			return 0;
		}
	return KOPT_ENOTFOUND;
}

static void parse_ok(struct kopt_trigger *t, const char *text)
{
	struct kopt_error_catch err = KOPT_ERROR_CATCH_INIT;

	kopt_error_catch(&err);
	if (kopt_trigger_parse(t, text, "catalog.md", 7))
		fail_msg("'%s': %s", text, err.text.buf);
	kopt_error_uncatch(&err);
	assert_int_equal(err.errors, 0);
	assert_string_equal(t->text, text);
	assert_int_equal(t->line, 7);
	kopt_error_catch_release(&err);
}

/* Fails with `want` in the cause, reported once at catalog.md:1. */
static void parse_err(const char *text, const char *want)
{
	struct kopt_error_catch err = KOPT_ERROR_CATCH_INIT;
	struct kopt_trigger t;

	kopt_error_catch(&err);
	assert_int_equal(kopt_trigger_parse(&t, text, "catalog.md", 1),
			 KOPT_EINVALID);
	kopt_error_uncatch(&err);
	assert_int_equal(err.errors, 1);
	if (!strstr(err.cause.buf, want))
		fail_msg("'%s': got '%s', want '%s'", text, err.cause.buf,
			 want);
	if (strncmp(err.text.buf, "catalog.md:1: ", 14))
		fail_msg("'%s': reported as '%s'", text, err.text.buf);
	assert_null(t.expr);
	assert_null(t.text);
	kopt_error_catch_release(&err);
}

static void test_parse(void **state)
{
	struct kopt_trigger t;

	(void)state;
	parse_ok(&t, "waves < 1");
	kopt_trigger_release(&t);
	parse_ok(&t, "dram_pct > 70 and tc_pct < 20");
	kopt_trigger_release(&t);
	parse_ok(&t, "not (spill_bytes == 0) or b * s * t >= 2 ** 20");
	kopt_trigger_release(&t);
	parse_ok(&t, "duration_us > 10 and occ_pct <= 25 and l2_hit_pct < 80 "
		 "and regs > 128 and tflops < 100 and gbps < 4000 and "
		 "roofline_pct < 50");
	kopt_trigger_release(&t);

	parse_err("waves <", "column 8: expected a value");
	parse_err("waves < < 1", "column 9");
	parse_err("(waves < 1", "expected ')'");
	parse_err("dram < 1", "unknown metric 'dram' (known: duration_us, "
		  "tc_pct, dram_pct, occ_pct, l2_hit_pct, spill_bytes, regs, "
		  "waves, tflops, gbps, roofline_pct, b, s, t)");
	parse_err("waves < h", "unknown metric 'h'");
	parse_err("waves", "not a condition");
	parse_err("waves * 2", "not a condition");
	parse_err("not waves", "not a condition");
	parse_err("waves < 1 and 2", "not a condition");
	parse_err("", "expected a value");
}

static void eval(struct kopt_trigger_result *r, const char *text,
		 const struct fake *values)
{
	struct kopt_trigger t;

	parse_ok(&t, text);
	if (kopt_trigger_eval(r, &t, lookup, (void *)values, "catalog.md"))
		fail_msg("'%s' does not evaluate", text);
	kopt_trigger_release(&t);
}

static void test_truth(void **state)
{
	static const struct fake m[] = {
		{ "waves", 0.5 }, { "dram_pct", 75 }, { "tc_pct", 15 },
		{ "spill_bytes", 0 }, { "b", 32 }, { "s", 1 }, { "t", 4096 },
		{ NULL, 0 }
	};
	struct kopt_trigger_result r = KOPT_TRIGGER_RESULT_INIT;

	(void)state;
	eval(&r, "waves < 1", m);
	assert_int_equal(r.truth, KOPT_TRUTH_TRUE);
	assert_string_equal(r.values.buf, "waves=0.5");
	assert_int_equal(r.missing.nr, 0);
	eval(&r, "waves >= 1", m);
	assert_int_equal(r.truth, KOPT_TRUTH_FALSE);
	eval(&r, "dram_pct > 50 and tc_pct < 30", m);
	assert_int_equal(r.truth, KOPT_TRUTH_TRUE);
	assert_string_equal(r.values.buf, "dram_pct=75, tc_pct=15");
	eval(&r, "b == 32 and s != 16 and t > 1024", m);
	assert_int_equal(r.truth, KOPT_TRUTH_TRUE);
	eval(&r, "not (waves < 1)", m);
	assert_int_equal(r.truth, KOPT_TRUTH_FALSE);
	kopt_trigger_result_release(&r);
}

/* An unmeasured metric is unknown, not false; and/or follow Kleene. */
static void test_missing(void **state)
{
	static const struct fake m[] = {
		{ "waves", 0.5 }, { "spill_bytes", 0 }, { NULL, 0 }
	};
	struct kopt_trigger_result r = KOPT_TRIGGER_RESULT_INIT;

	(void)state;
	eval(&r, "l2_hit_pct < 80", m);
	assert_int_equal(r.truth, KOPT_TRUTH_UNKNOWN);
	assert_int_equal(r.missing.nr, 1);
	assert_string_equal(r.missing.v[0], "l2_hit_pct");
	assert_string_equal(r.values.buf, "");

	eval(&r, "not (l2_hit_pct < 80)", m);
	assert_int_equal(r.truth, KOPT_TRUTH_UNKNOWN);

	/* false and unknown: false */
	eval(&r, "spill_bytes > 0 and l2_hit_pct < 80", m);
	assert_int_equal(r.truth, KOPT_TRUTH_FALSE);
	assert_string_equal(r.missing.v[0], "l2_hit_pct");
	/* true and unknown: unknown */
	eval(&r, "waves < 1 and l2_hit_pct < 80", m);
	assert_int_equal(r.truth, KOPT_TRUTH_UNKNOWN);
	/* true or unknown: true */
	eval(&r, "waves < 1 or l2_hit_pct < 80", m);
	assert_int_equal(r.truth, KOPT_TRUTH_TRUE);
	/* false or unknown: unknown */
	eval(&r, "waves > 1 or l2_hit_pct < 80", m);
	assert_int_equal(r.truth, KOPT_TRUTH_UNKNOWN);
	/* both sides of a comparison are looked at */
	eval(&r, "tc_pct < dram_pct", m);
	assert_int_equal(r.truth, KOPT_TRUTH_UNKNOWN);
	assert_int_equal(r.missing.nr, 2);
	assert_string_equal(r.missing.v[0], "tc_pct");
	assert_string_equal(r.missing.v[1], "dram_pct");
	kopt_trigger_result_release(&r);
}

static void test_margin(void **state)
{
	static const struct fake m[] = {
		{ "waves", 0.25 }, { "dram_pct", 75 }, { "tc_pct", 15 },
		{ "spill_bytes", 256 }, { "regs", 128 }, { NULL, 0 }
	};
	struct kopt_trigger_result r = KOPT_TRIGGER_RESULT_INIT;

	(void)state;
	eval(&r, "waves < 1", m);
	assert_true(fabs(r.margin - 0.75) < 1e-9);
	eval(&r, "waves < 0.2", m);
	assert_true(r.margin < 0);
	eval(&r, "spill_bytes > 0", m);       /* threshold 0: by the value */
	assert_true(fabs(r.margin - 1) < 1e-9);
	eval(&r, "dram_pct > 50 and tc_pct < 30", m);
	assert_true(fabs(r.margin - 0.5) < 1e-9);   /* the smaller */
	eval(&r, "dram_pct > 70 or tc_pct < 30", m);
	assert_true(fabs(r.margin - 0.5) < 1e-9);   /* the larger */
	eval(&r, "regs == 128", m);
	assert_true(r.margin == 0);
	eval(&r, "not (waves > 1)", m);
	assert_true(fabs(r.margin - 0.75) < 1e-9);
	eval(&r, "waves < 1 and l2_hit_pct < 80", m);  /* the known part */
	assert_true(fabs(r.margin - 0.75) < 1e-9);
	kopt_trigger_result_release(&r);
}

static void test_eval_error(void **state)
{
	static const struct fake m[] = { { "waves", 0 }, { NULL, 0 } };
	struct kopt_trigger_result r = KOPT_TRIGGER_RESULT_INIT;
	struct kopt_error_catch caught = KOPT_ERROR_CATCH_INIT;
	struct kopt_trigger t;

	(void)state;
	parse_ok(&t, "1 / waves > 2");
	t.line = 7;
	kopt_error_catch(&caught);
	assert_int_equal(kopt_trigger_eval(&r, &t, lookup, (void *)m,
					   "catalog.md"), KOPT_EINVALID);
	kopt_error_uncatch(&caught);
	assert_string_equal(caught.text.buf, "catalog.md:7: trigger `1 / waves "
			    "> 2`: column 3: division by zero");
	kopt_error_catch_release(&caught);
	kopt_trigger_release(&t);

	/* an unmeasured side does not join the other side's failure */
	parse_ok(&t, "dram_pct > 1 / waves");
	kopt_error_catch(&caught);
	assert_int_equal(kopt_trigger_eval(&r, &t, lookup, (void *)m,
					   "catalog.md"), KOPT_EINVALID);
	kopt_error_uncatch(&caught);
	assert_string_equal(caught.text.buf, "catalog.md:7: trigger `dram_pct "
			    "> 1 / waves`: column 14: division by zero");
	kopt_error_catch_release(&caught);
	kopt_trigger_release(&t);
	kopt_trigger_result_release(&r);
}

static void test_entry_lookup(void **state)
{
	struct kopt_results_entry e;
	double v;

	(void)state;
	kopt_results_entry_init(&e);
	e.b = 32;
	e.s = 16;
	e.t = 4096;
	e.metrics[KOPT_METRIC_WAVES] = 0.97;
	assert_int_equal(kopt_trigger_entry_lookup(&e, "s", &v), 0);
	assert_true(v == 16);
	assert_int_equal(kopt_trigger_entry_lookup(&e, "waves", &v), 0);
	assert_true(v == 0.97);
	assert_int_equal(kopt_trigger_entry_lookup(&e, "tc_pct", &v),
			 KOPT_ENOTFOUND);
	assert_int_equal(kopt_trigger_entry_lookup(&e, "bogus", &v),
			 KOPT_ENOTFOUND);
	assert_true(kopt_trigger_known_name("t"));
	assert_true(kopt_trigger_known_name("roofline_pct"));
	assert_false(kopt_trigger_known_name("h"));
	kopt_results_entry_release(&e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_truth),
		cmocka_unit_test(test_missing),
		cmocka_unit_test(test_margin),
		cmocka_unit_test(test_eval_error),
		cmocka_unit_test(test_entry_lookup),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
