#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <pthread.h>
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

/*
 * A replay catch keeps each message whole and reports nothing until
 * replayed; replayed inside an ordinary catch it counts as if reported
 * there (the cause without its place).
 */
static void test_replay(void **state)
{
	struct kopt_error_catch r = KOPT_ERROR_CATCH_INIT;
	struct kopt_error_catch outer = KOPT_ERROR_CATCH_INIT;

	(void)state;
	r.replay = 1;
	kopt_error_catch(&r);
	kopt_warning("first");
	kopt_error_at("k.md", 4, "bad %s", "row");
	kopt_error("plain");
	kopt_error_uncatch(&r);
	assert_int_equal(r.errors, 2);
	assert_int_equal(r.kept_nr, 3);
	assert_string_equal(messages.buf, "");
	assert_int_equal(r.text.len, 0);
	kopt_error_catch_replay(&r);
	assert_string_equal(messages.buf, "warning: first\n"
			    "error: k.md:4: bad row\nerror: plain\n");
	kopt_error_catch(&outer);
	kopt_error_catch_replay(&r);
	kopt_error_uncatch(&outer);
	assert_string_equal(outer.text.buf, "warning: first; k.md:4: bad row; "
			    "plain");
	assert_string_equal(outer.cause.buf, "bad row");
	assert_int_equal(outer.errors, 2);
	kopt_error_catch_release(&r);
	kopt_error_catch_release(&outer);
	assert_int_equal(r.kept_nr, 0);
	kopt_error_catch_release(&r);          /* twice is harmless */
}

static void *report_in_thread(void *arg)
{
	struct kopt_error_catch *c = arg;

	c->replay = 1;
	kopt_error_catch(c);
	kopt_error("from the thread");
	kopt_error_uncatch(c);
	return NULL;
}

/* A catch is its thread's: another thread's messages pass it by. */
static void test_catch_per_thread(void **state)
{
	struct kopt_error_catch mine = KOPT_ERROR_CATCH_INIT;
	struct kopt_error_catch theirs = KOPT_ERROR_CATCH_INIT;
	pthread_t t;

	(void)state;
	kopt_error_catch(&mine);
	assert_int_equal(pthread_create(&t, NULL, report_in_thread, &theirs),
			 0);
	pthread_join(t, NULL);
	kopt_error("from here");
	kopt_error_uncatch(&mine);
	assert_string_equal(mine.text.buf, "from here");
	assert_int_equal(theirs.kept_nr, 1);
	assert_string_equal(messages.buf, "");
	kopt_error_catch_replay(&theirs);
	assert_string_equal(messages.buf, "error: from the thread\n");
	kopt_error_catch_release(&mine);
	kopt_error_catch_release(&theirs);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		MESSAGES_TEST(test_report),
		MESSAGES_TEST(test_catch),
		MESSAGES_TEST(test_uncatch_outer_first),
		MESSAGES_TEST(test_replay),
		MESSAGES_TEST(test_catch_per_thread),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
