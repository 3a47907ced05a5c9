#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdlib.h>

#include "compare.h"

static void entry(struct kopt_results_entry *e, double dur, double spread)
{
	kopt_results_entry_init(e);
	e->b = e->b_requested = 32;
	e->s = 1;
	e->t = 4096;
	e->metrics[KOPT_METRIC_DURATION_US] = dur;
	e->spread_pct = spread;
}

static void test_entries(void **state)
{
	struct kopt_results_entry a, b;
	double c;

	(void)state;
	entry(&a, 104, NAN);
	entry(&b, 100, NAN);
	assert_int_equal(kopt_compare_entries(&a, &b, 3, &c),
			 KOPT_CHANGE_REGRESSION);
	assert_true(fabs(c - 4.0) < 1e-9);
	assert_int_equal(kopt_compare_entries(&a, &b, 5, &c),
			 KOPT_CHANGE_NEUTRAL);
	/* a change inside the run-to-run spread is noise */
	b.spread_pct = 6;
	assert_int_equal(kopt_compare_entries(&a, &b, 3, &c),
			 KOPT_CHANGE_NEUTRAL);
	entry(&a, 90, NAN);
	assert_int_equal(kopt_compare_entries(&a, &b, 3, &c),
			 KOPT_CHANGE_IMPROVEMENT);
	assert_int_equal(kopt_compare_entries(&a, NULL, 3, &c),
			 KOPT_CHANGE_NONE);
	assert_true(isnan(c));
	a.metrics[KOPT_METRIC_DURATION_US] = NAN;
	assert_int_equal(kopt_compare_entries(&a, &b, 3, &c),
			 KOPT_CHANGE_NONE);
	assert_string_equal(kopt_change_name(KOPT_CHANGE_REGRESSION),
			    "regression");
	assert_string_equal(kopt_change_name(KOPT_CHANGE_NONE), "--");
}

static void test_results(void **state)
{
	struct kopt_results cur = KOPT_RESULTS_INIT, par = KOPT_RESULTS_INIT;
	struct kopt_results_entry e;
	struct kopt_compare_trial *t;

	(void)state;
	entry(&e, 50, NAN);
	e.trial = kopt_strdup("decode");
	kopt_results_put(&par, &e);
	entry(&e, 100, NAN);
	e.trial = kopt_strdup("spec");
	e.s = 16;
	kopt_results_put(&par, &e);
	entry(&e, 40, NAN);
	e.trial = kopt_strdup("decode");
	kopt_results_put(&cur, &e);
	entry(&e, 120, NAN);
	e.trial = kopt_strdup("spec");
	e.s = 16;
	kopt_results_put(&cur, &e);
	/* one trial better, one worse: the version regressed */
	assert_int_equal(kopt_compare_results(&cur, &par, 3, &t),
			 KOPT_CHANGE_REGRESSION);
	assert_int_equal(t[0].change, KOPT_CHANGE_IMPROVEMENT);
	assert_int_equal(t[1].change, KOPT_CHANGE_REGRESSION);
	assert_ptr_equal(t[1].parent, &par.entries[1]);
	free(t);
	assert_int_equal(kopt_compare_results(&cur, NULL, 3, &t),
			 KOPT_CHANGE_NONE);
	free(t);
	kopt_results_release(&cur);
	kopt_results_release(&par);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_entries),
		cmocka_unit_test(test_results),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
