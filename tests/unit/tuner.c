#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>

#include "error.h"
#include "tuner.h"

static void test_parse_time(void **state)
{
	double us = 0;

	(void)state;
	assert_int_equal(kopt_tuner_parse_time(&us, "median {us} us",
			 "warm-up\nk: median 44.5 us (min 42.5, max 46.1)\n"), 0);
	assert_true(us == 44.5);
	assert_int_equal(kopt_tuner_parse_time(&us, "median {us} us",
					       "no time here\n"),
			 KOPT_ENOTFOUND);
}

static void test_parse_spread(void **state)
{
	double pct = 0;

	(void)state;
	/* (max - min) / median */
	assert_int_equal(kopt_tuner_parse_spread(&pct,
			 "k: median 50 us (min 49, max 51)\n", 50.0), 0);
	assert_true(fabs(pct - 4.0) < 1e-9);
	/* the last line that has both wins; words that only end so do not */
	assert_int_equal(kopt_tuner_parse_spread(&pct,
			 "min 1 max 9\nadmin 3, climax 4\nmin=10 max=11\n",
			 10.0), 0);
	assert_true(fabs(pct - 10.0) < 1e-9);
	assert_int_equal(kopt_tuner_parse_spread(&pct, "median 5 us\n", 5.0),
			 KOPT_ENOTFOUND);
	assert_int_equal(kopt_tuner_parse_spread(&pct, "min 6, max 5\n", 5.0),
			 KOPT_ENOTFOUND);
	assert_int_equal(kopt_tuner_parse_spread(&pct, "min 1, max 2\n", 0),
			 KOPT_ENOTFOUND);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_time),
		cmocka_unit_test(test_parse_spread),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
