#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "version.h"

static void test_names(void **state)
{
	(void)state;
	assert_int_equal(kopt_version_number("v0"), 0);
	assert_int_equal(kopt_version_number("v12"), 12);
	assert_int_equal(kopt_version_number("v"), -1);
	assert_int_equal(kopt_version_number("v01"), -1);
	assert_int_equal(kopt_version_number("V3"), -1);
	assert_int_equal(kopt_version_number("v1a"), -1);
	assert_int_equal(kopt_version_number("x1"), -1);
	assert_int_equal(kopt_version_number(NULL), -1);
	assert_int_equal(kopt_version_number("v9999999999999999"), -1);
	assert_true(kopt_version_valid("v0"));
	assert_false(kopt_version_valid("v00"));
}

static void test_prefix(void **state)
{
	const char *end = NULL;

	(void)state;
	assert_int_equal(kopt_version_prefix("v12.cu", &end), 12);
	assert_string_equal(end, ".cu");
	assert_int_equal(kopt_version_prefix("v012.cu", &end), -1);
	assert_int_equal(kopt_version_prefix("V1.cu", &end), -1);
	assert_int_equal(kopt_version_prefix("v0_x", &end), 0);
	assert_string_equal(end, "_x");
}

static void test_digits(void **state)
{
	const char *end = NULL;

	(void)state;
	assert_int_equal(kopt_version_digits("12: x", &end), 12);
	assert_string_equal(end, ": x");
	assert_int_equal(kopt_version_digits("0", &end), 0);
	end = NULL;
	assert_int_equal(kopt_version_digits("01", &end), -1);
	assert_null(end);
	assert_int_equal(kopt_version_digits("x1", &end), -1);
	assert_int_equal(kopt_version_digits("", &end), -1);
}

static void test_order_and_format(void **state)
{
	const char *v[] = { "v10", "v2", "v0", "v1" };
	struct kopt_buf label = KOPT_BUF_INIT;
	char *name;

	(void)state;
	qsort(v, 4, sizeof(*v), kopt_version_cmp);
	assert_string_equal(v[0], "v0");
	assert_string_equal(v[2], "v2");
	assert_string_equal(v[3], "v10");
	name = kopt_version_name(7);
	assert_string_equal(name, "v7");
	kopt_version_label(&label, name);
	assert_string_equal(label.buf, "V7");
	free(name);
	kopt_buf_release(&label);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_prefix),
		cmocka_unit_test(test_digits),
		cmocka_unit_test(test_order_and_format),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
