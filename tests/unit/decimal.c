#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decimal.h"

/* Where kopt_decimal_plain() answers, it answers as strtod() does. */
static void check_plain(const char *s, int taken)
{
	double d = 12345.0, want;
	char *end;

	assert_int_equal(kopt_decimal_plain(&d, s, strlen(s)), taken);
	if (!taken) {
		assert_true(d == 12345.0);
		return;
	}
	want = strtod(s, &end);
	assert_true(*end == '\0');
	assert_memory_equal(&d, &want, sizeof(d));
}

static void test_plain(void **state)
{
	(void)state;
	check_plain("0", 1);
	check_plain("-0", 1);
	check_plain("42", 1);
	check_plain("36.8927", 1);
	check_plain("-3.2", 1);
	check_plain("0.1", 1);
	check_plain("2710.561", 1);
	check_plain("9007199254740992", 1);         /* 2^53 */
	check_plain("1234567890123456789", 0);      /* past 2^53 */
	check_plain("0.000000000000000001", 1);     /* 19 digits */
	check_plain("0.0000000000000000001", 0);    /* 20 digits */
	check_plain("12345678901234567890", 0);     /* 20 digits */
	/* not the plain form: left to strtod() */
	check_plain("", 0);
	check_plain("-", 0);
	check_plain("1.", 0);
	check_plain(".5", 0);
	check_plain("1e5", 0);
	check_plain("1.2.3", 0);
	check_plain("+1", 0);
	check_plain("1 ", 0);
	check_plain("--1", 0);
}

/* Every value with few digits and an exact power is strtod()'s. */
static void test_exact_matches_strtod(void **state)
{
	char text[64];
	double d, want;
	unsigned i;
	int e;

	(void)state;
	srand(18);
	for (i = 0; i < 20000; i++) {
		uint64_t m = ((uint64_t)rand() << 31 ^ (uint64_t)rand()) %
			     (i & 1 ? 100000000ULL : 9007199254740993ULL);
		e = rand() % 45 - 22;
		assert_int_equal(kopt_decimal_exact(&d, m, e, (int)(i & 2)), 1);
		snprintf(text, sizeof(text), "%s%llue%d", i & 2 ? "-" : "",
			 (unsigned long long)m, e);
		want = strtod(text, NULL);
		assert_memory_equal(&d, &want, sizeof(d));
	}
	/* out of the exact range: no answer */
	assert_int_equal(kopt_decimal_exact(&d, 1, 23, 0), 0);
	assert_int_equal(kopt_decimal_exact(&d, 1, -23, 0), 0);
	assert_int_equal(kopt_decimal_exact(&d, (1ULL << 53) + 1, 0, 0), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plain),
		cmocka_unit_test(test_exact_matches_strtod),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
