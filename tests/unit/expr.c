#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "error.h"
#include "expr.h"

static int lookup(void *data, const char *name, double *out)
{
	(void)data;
	if (!strcmp(name, "b")) { *out = 32; return 0; }
	if (!strcmp(name, "s")) { *out = 16; return 0; }
	if (!strcmp(name, "t")) { *out = 4096; return 0; }
	if (!strcmp(name, "h")) { *out = 128; return 0; }
	if (!strcmp(name, "dram_pct")) { *out = 82.5; return 0; }
	if (!strcmp(name, "tc_pct")) { *out = 12; return 0; }
	return KOPT_ENOTFOUND;
}

static double eval_ok(const char *text)
{
	struct kopt_error_catch err = KOPT_ERROR_CATCH_INIT;
	double v = -12345;
	int ret;

	kopt_error_catch(&err);
	ret = kopt_expr_eval_string(text, lookup, NULL, &v, ".kopt", 3);
	kopt_error_uncatch(&err);
	if (ret)
		fail_msg("'%s': %s", text, err.text.buf);
	assert_int_equal(err.errors, 0);
	kopt_error_catch_release(&err);
	return v;
}

/* Fails with `want` in the cause, reported once at .kopt:3. */
static int eval_err(const char *text, const char *want)
{
	struct kopt_error_catch err = KOPT_ERROR_CATCH_INIT;
	double v;
	int ret;

	kopt_error_catch(&err);
	ret = kopt_expr_eval_string(text, lookup, NULL, &v, ".kopt", 3);
	kopt_error_uncatch(&err);
	assert_int_not_equal(ret, 0);
	assert_int_equal(err.errors, 1);
	if (!strstr(err.cause.buf, want))
		fail_msg("'%s': got '%s', want '%s'", text, err.cause.buf,
			 want);
	if (strncmp(err.text.buf, ".kopt:3: column ", 16))
		fail_msg("'%s': reported as '%s'", text, err.text.buf);
	kopt_error_catch_release(&err);
	return ret;
}

static void test_arithmetic(void **state)
{
	(void)state;
	assert_true(eval_ok("1 + 2 * 3") == 7);
	assert_true(eval_ok("(1 + 2) * 3") == 9);
	assert_true(eval_ok("2 ** 3 ** 2") == 512);
	assert_true(eval_ok("-2 ** 2") == -4);
	assert_true(eval_ok("7 % 4") == 3);
	assert_true(eval_ok("7 / 2") == 3.5);
	assert_true(eval_ok("1.5e3") == 1500);
	assert_true(eval_ok("2*b*s*h*t*(576+512)") ==
		    2.0 * 32 * 16 * 128 * 4096 * 1088);
}

static void test_logic(void **state)
{
	(void)state;
	assert_true(eval_ok("dram_pct > 70 and tc_pct < 20") == 1);
	assert_true(eval_ok("dram_pct > 90 or tc_pct < 20") == 1);
	assert_true(eval_ok("not (dram_pct > 90)") == 1);
	assert_true(eval_ok("b == 32 and s != 1") == 1);
	assert_true(eval_ok("t >= 4096 and t <= 4096") == 1);
}

static void test_errors(void **state)
{
	(void)state;
	assert_int_equal(eval_err("foo + 1", "unknown name 'foo'"),
			 KOPT_ENOTFOUND);
	assert_int_equal(eval_err("1 / (b - 32)", "division by zero"),
			 KOPT_EINVALID);
	eval_err("1 +", "expected a value");
	eval_err("(1 + 2", "expected ')'");
	eval_err("1 < 2 < 3", "cannot be chained");
	eval_err("2 $ 3", "unexpected");
	eval_err("3x", "bad number");
	/* found by fuzzing: an infinite threshold gave triggers no margin */
	eval_err("2 < 1e3084", "column 5: number too large");
}

/* Without a place, a message is the cause alone. */
static void test_no_place(void **state)
{
	struct kopt_error_catch err = KOPT_ERROR_CATCH_INIT;
	struct kopt_expr *e;
	double v;

	(void)state;
	kopt_error_catch(&err);
	assert_int_equal(kopt_expr_parse(&e, "1 +", NULL, 0), KOPT_EINVALID);
	assert_null(e);
	assert_int_equal(kopt_expr_eval_string("x * 2", lookup, NULL, &v,
					       NULL, 0), KOPT_ENOTFOUND);
	kopt_error_uncatch(&err);
	assert_string_equal(err.text.buf, "column 4: expected a value at end "
			    "of expression; column 1: unknown name 'x'");
	assert_string_equal(err.cause.buf, "column 4: expected a value at "
			    "end of expression");
	kopt_error_catch_release(&err);
}

static void test_names(void **state)
{
	struct kopt_strvec names = KOPT_STRVEC_INIT;
	struct kopt_expr *e;

	(void)state;
	assert_int_equal(kopt_expr_parse(&e, "dram_pct > 70 and dram_pct < "
					 "90 or waves < 1", NULL, 0), 0);
	kopt_expr_names(e, &names);
	assert_int_equal(names.nr, 2);
	assert_string_equal(names.v[0], "dram_pct");
	assert_string_equal(names.v[1], "waves");
	assert_false(kopt_expr_is_comparison(e));
	kopt_expr_free(e);
	kopt_strvec_clear(&names);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_arithmetic),
		cmocka_unit_test(test_logic),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_no_place),
		cmocka_unit_test(test_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
