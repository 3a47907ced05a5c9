#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "buf.h"
#include "progress.h"

/* Every event the sink received, one line each. */
static struct kopt_buf seen = KOPT_BUF_INIT;

static void record(const struct kopt_progress_event *ev, void *data)
{
	static const char *states[] = { "start", "run", "done", "clear" };

	assert_ptr_equal(data, &seen);
	assert_true(ev->elapsed_s >= 0);
	kopt_buf_addf(&seen, "%d %s %s %lu/%lu '%s'\n", ev->depth,
		      states[ev->state], ev->title, ev->done, ev->total,
		      ev->what);
}

static int setup(void **state)
{
	(void)state;
	kopt_buf_reset(&seen);
	kopt_progress_set_sink(record, &seen);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	kopt_progress_set_sink(NULL, NULL);
	kopt_buf_release(&seen);
	return 0;
}

static void test_no_sink_is_silent(void **state)
{
	struct kopt_progress *p;

	(void)state;
	kopt_progress_set_sink(NULL, NULL);
	p = kopt_progress_start("nothing", 3);
	assert_null(p);
	/* every call takes the NULL a missing sink gives */
	kopt_progress_what(p, "step %d", 1);
	kopt_progress_update(p, 1);
	kopt_progress_set_total(p, 4);
	kopt_progress_stop(&p);
	kopt_progress_stop(NULL);
	assert_string_equal(seen.buf, "");
}

static void test_a_task(void **state)
{
	struct kopt_progress *p;

	(void)state;
	p = kopt_progress_start("profiling k v1", 2);
	kopt_progress_what(p, "trial %s, run %d", "decode", 1);
	kopt_progress_update(p, 1);
	kopt_progress_clear(p);
	kopt_progress_update(p, 0); /* never backwards */
	kopt_progress_update(p, 2);
	kopt_progress_stop(&p);
	assert_null(p);
	assert_string_equal(seen.buf,
		"0 start profiling k v1 0/2 ''\n"
		"0 run profiling k v1 0/2 'trial decode, run 1'\n"
		"0 run profiling k v1 1/2 'trial decode, run 1'\n"
		"0 clear profiling k v1 1/2 'trial decode, run 1'\n"
		"0 run profiling k v1 2/2 'trial decode, run 1'\n"
		"0 done profiling k v1 2/2 ''\n");
}

static void test_unknown_total_and_nesting(void **state)
{
	struct kopt_progress *outer, *inner;

	(void)state;
	outer = kopt_progress_start("checking", 0);
	inner = kopt_progress_start("copying", 10);
	kopt_progress_update(inner, 12); /* more than said: total follows */
	kopt_progress_stop(&inner);
	kopt_progress_set_total(outer, 5);
	kopt_progress_update(outer, 5);
	kopt_progress_stop(&outer);
	/* after both ended, a new task is outermost again */
	outer = kopt_progress_start("again", 1);
	kopt_progress_stop(&outer);
	assert_string_equal(seen.buf,
		"0 start checking 0/0 ''\n"
		"1 start copying 0/10 ''\n"
		"1 run copying 12/12 ''\n"
		"1 done copying 12/12 ''\n"
		"0 run checking 0/5 ''\n"
		"0 run checking 5/5 ''\n"
		"0 done checking 5/5 ''\n"
		"0 start again 0/1 ''\n"
		"0 done again 0/1 ''\n");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_no_sink_is_silent,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_a_task, setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_unknown_total_and_nesting, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
