#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "results.h"
#include "verdict.h"

static void test_judge(void **state)
{
	double change, threshold;

	(void)state;
	/* slower beyond the noise */
	assert_int_equal(kopt_verdict_judge(100, 1, 110, 1, 3, &change,
					    &threshold),
			 KOPT_VERDICT_REGRESSION);
	assert_true(fabs(change - 10.0) < 1e-9);
	assert_true(fabs(threshold - 3.0) < 1e-9);
	/* faster beyond the noise */
	assert_int_equal(kopt_verdict_judge(100, 1, 90, 1, 3, NULL, NULL),
			 KOPT_VERDICT_IMPROVEMENT);
	/* inside the noise */
	assert_int_equal(kopt_verdict_judge(100, 1, 102, 1, 3, NULL, NULL),
			 KOPT_VERDICT_NEUTRAL);
	/* beyond the noise, but inside the spread of either run */
	assert_int_equal(kopt_verdict_judge(100, 12, 110, 1, 3, NULL,
					    &threshold),
			 KOPT_VERDICT_NEUTRAL);
	assert_true(fabs(threshold - 12.0) < 1e-9);
	assert_int_equal(kopt_verdict_judge(100, 1, 90, 15, 3, NULL, NULL),
			 KOPT_VERDICT_NEUTRAL);
	/* an unknown spread is no spread */
	assert_int_equal(kopt_verdict_judge(100, NAN, 104, NAN, 3, NULL, NULL),
			 KOPT_VERDICT_REGRESSION);
	/* nothing to compare */
	assert_int_equal(kopt_verdict_judge(NAN, 1, 100, 1, 3, NULL, NULL),
			 KOPT_VERDICT_NONE);
	assert_int_equal(kopt_verdict_judge(0, 1, 100, 1, 3, NULL, NULL),
			 KOPT_VERDICT_NONE);
}

static const char *v0 =
	"{\"schema\":1,\"kernel\":\"k\",\"version\":\"v0\",\"parent\":null,"
	"\"entries\":["
	"{\"trial\":\"decode\",\"config\":{\"b\":32,\"s\":1,\"t\":4096},"
	" \"metrics\":{\"duration_us\":100.0,\"tflops\":5},\"spread_pct\":1},"
	"{\"trial\":\"spec\",\"config\":{\"b\":32,\"s\":16,\"t\":4096},"
	" \"metrics\":{\"duration_us\":200.0},\"spread_pct\":1}]}";

static const char *v1 =
	"{\"schema\":1,\"kernel\":\"k\",\"version\":\"v1\",\"parent\":\"v0\","
	"\"entries\":["
	"{\"trial\":\"decode\",\"config\":{\"b\":32,\"s\":1,\"t\":4096},"
	" \"metrics\":{\"duration_us\":80.0},\"spread_pct\":1},"
	"{\"trial\":\"spec\",\"config\":{\"b\":32,\"s\":8,\"t\":4096},"
	" \"metrics\":{\"duration_us\":300.0},\"spread_pct\":1},"
	"{\"trial\":null,\"config\":{\"b\":1,\"s\":1,\"t\":1},"
	" \"metrics\":{}}]}";

static void test_compare(void **state)
{
	struct kopt_results a = KOPT_RESULTS_INIT, b = KOPT_RESULTS_INIT;
	struct kopt_verdicts v = KOPT_VERDICTS_INIT;

	(void)state;
	assert_int_equal(kopt_results_parse(&a, v0, strlen(v0), "v0.json",
					    "k", "v0"), 0);
	assert_int_equal(kopt_results_parse(&b, v1, strlen(v1), "v1.json",
					    "k", "v1"), 0);
	kopt_verdict_compare(&v, &a, &b, 3.0);
	/* spec ran at another configuration: not comparable */
	assert_int_equal(v.nr, 1);
	assert_string_equal(v.items[0].trial, "decode");
	assert_int_equal(v.items[0].verdict, KOPT_VERDICT_IMPROVEMENT);
	assert_true(fabs(v.items[0].change_pct + 20.0) < 1e-9);
	assert_int_equal(v.overall, KOPT_VERDICT_IMPROVEMENT);
	kopt_verdicts_release(&v);

	/* the other way round: a regression beyond the noise */
	kopt_verdict_compare(&v, &b, &a, 3.0);
	assert_int_equal(v.overall, KOPT_VERDICT_REGRESSION);
	kopt_verdicts_release(&v);
	/* the same versions: neutral */
	kopt_verdict_compare(&v, &a, &a, 3.0);
	assert_int_equal(v.nr, 2);
	assert_int_equal(v.overall, KOPT_VERDICT_NEUTRAL);
	kopt_verdicts_release(&v);
	kopt_results_release(&a);
	kopt_results_release(&b);
}

static void test_names(void **state)
{
	(void)state;
	assert_int_equal(kopt_verdict_parse("regression"),
			 KOPT_VERDICT_REGRESSION);
	assert_int_equal(kopt_verdict_parse("worse"), KOPT_VERDICT_NONE);
	assert_string_equal(kopt_verdict_name(KOPT_VERDICT_NEUTRAL), "neutral");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_judge),
		cmocka_unit_test(test_compare),
		cmocka_unit_test(test_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
