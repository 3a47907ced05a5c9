#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "error.h"

#include "messages.h"

static void test_report(void **state)
{
	(void)state;
	assert_int_equal(kopt_error("cannot read '%s'", "x"), -1);
	assert_int_equal(kopt_error_at("a.md", 3, "bad %s", "row"),
			 KOPT_EINVALID);
	kopt_error_at("a.md", 0, "empty");
	kopt_warning("odd");
	assert_string_equal(messages.buf, "error: cannot read 'x'\n"
			    "error: a.md:3: bad row\nerror: a.md: empty\n"
			    "warning: odd\n");
}

/* Caught messages are kept once, not reported; catches nest. */
static void test_catch(void **state)
{
	struct kopt_error_catch outer = KOPT_ERROR_CATCH_INIT;
	struct kopt_error_catch inner = KOPT_ERROR_CATCH_INIT;

	(void)state;
	kopt_error_catch(&outer);
	kopt_warning("first");
	kopt_error_at(".kopt", 7, "unknown key '%s'", "x");
	kopt_error_catch(&inner);
	kopt_error("deeper");
	kopt_error_uncatch(&inner);
	kopt_error("again");
	kopt_error_uncatch(&outer);
	kopt_error("after");
	assert_string_equal(outer.text.buf, "warning: first; .kopt:7: unknown "
			    "key 'x'; again");
	assert_string_equal(outer.cause.buf, "unknown key 'x'");
	assert_int_equal(outer.errors, 2);
	assert_string_equal(inner.text.buf, "deeper");
	assert_string_equal(inner.cause.buf, "deeper");
	assert_string_equal(messages.buf, "error: after\n");
	kopt_error_catch_release(&outer);
	kopt_error_catch_release(&inner);
	assert_int_equal(outer.errors, 0);
}

/* A catch that ends leaves no inner catch open behind it. */
static void test_uncatch_outer_first(void **state)
{
	struct kopt_error_catch outer = KOPT_ERROR_CATCH_INIT;
	struct kopt_error_catch inner = KOPT_ERROR_CATCH_INIT;

	(void)state;
	kopt_error_catch(&outer);
	kopt_error_catch(&inner);
	kopt_error_uncatch(&outer);
	kopt_error("reported");
	assert_string_equal(messages.buf, "error: reported\n");
	kopt_error_catch_release(&inner);
	kopt_error_catch_release(&outer);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		MESSAGES_TEST(test_report),
		MESSAGES_TEST(test_catch),
		MESSAGES_TEST(test_uncatch_outer_first),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
