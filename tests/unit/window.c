#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "inject/window.h"

/* Two kernels; their records only need distinct addresses. */
static const int A, B, C;

#define ENTER(w, k, i, wants) \
	kopt_window_enter(w, &(k), i, wants, 0, 1000)

static void test_two_kernels_two_samples(void **state)
{
	struct kopt_window w;

	(void)state;
	memset(&w, 0, sizeof(w));
	/* pass 1: A B A B, each launch a range */
	assert_int_equal(ENTER(&w, A, 5, 1), KOPT_WIN_OPEN);
	assert_int_equal(kopt_window_exit(&w), KOPT_WIN_SKIP);
	assert_int_equal(ENTER(&w, B, 5, 1), KOPT_WIN_TAKE);
	assert_int_equal(ENTER(&w, A, 6, 1), KOPT_WIN_TAKE);
	assert_int_equal(ENTER(&w, B, 6, 1), KOPT_WIN_TAKE);
	assert_int_equal(kopt_window_exit(&w), KOPT_WIN_SKIP);
	/* A has its two samples planned: the pass ends before it */
	assert_int_equal(ENTER(&w, A, 7, 0), KOPT_WIN_STOP);
	kopt_window_stopped(&w);
	assert_int_equal(w.n, 4);
	/* ... and pass 2 starts at it */
	assert_int_equal(ENTER(&w, A, 7, 0), KOPT_WIN_START);
	assert_int_equal(ENTER(&w, B, 7, 0), KOPT_WIN_TAKE);
	assert_int_equal(ENTER(&w, A, 8, 0), KOPT_WIN_TAKE);
	assert_int_equal(kopt_window_exit(&w), KOPT_WIN_SKIP);
	assert_int_equal(ENTER(&w, B, 8, 0), KOPT_WIN_TAKE);
	assert_int_equal(kopt_window_exit(&w), KOPT_WIN_STOP);
	kopt_window_stopped(&w);
	assert_int_equal(w.passes, 2);
	assert_ptr_equal(w.slot[0].k, &A);
	assert_ptr_equal(w.slot[3].k, &B);
	assert_int_equal(w.slot[0].launch, 5);
	assert_int_equal(w.slot[0].last_launch, 7);
	assert_int_equal(w.slot[3].launch, 6);
	assert_int_equal(w.slot[3].last_launch, 8);
	kopt_window_close(&w);
	assert_false(w.open);
	assert_int_equal(w.n, 0);
}

static void test_nothing_wanted(void **state)
{
	struct kopt_window w;

	(void)state;
	memset(&w, 0, sizeof(w));
	assert_int_equal(ENTER(&w, A, 0, 0), KOPT_WIN_SKIP);
	assert_false(w.open);
	/* a launch captured into a graph does not run: no window */
	assert_int_equal(kopt_window_enter(&w, &A, 5, 1, 1, 1000),
			 KOPT_WIN_SKIP);
	assert_false(w.open);
	assert_int_equal(kopt_window_exit(&w), KOPT_WIN_SKIP);
}

static void test_window_full(void **state)
{
	struct kopt_window w;

	(void)state;
	memset(&w, 0, sizeof(w));
	assert_int_equal(ENTER(&w, A, 0, 1), KOPT_WIN_OPEN);
	for (uint64_t i = 1; i < KOPT_INJECT_MAX_WINDOW; i++) {
		assert_int_equal(kopt_window_exit(&w), KOPT_WIN_SKIP);
		assert_int_equal(ENTER(&w, A, i, 1), KOPT_WIN_TAKE);
	}
	/* the last place taken: the pass ends at that launch's exit */
	assert_int_equal(kopt_window_exit(&w), KOPT_WIN_STOP);
	assert_int_equal(w.n, KOPT_INJECT_MAX_WINDOW);
}

static void test_captured_ends_the_first_pass(void **state)
{
	struct kopt_window w;

	(void)state;
	memset(&w, 0, sizeof(w));
	assert_int_equal(ENTER(&w, A, 5, 1), KOPT_WIN_OPEN);
	assert_int_equal(kopt_window_enter(&w, &B, 5, 1, 1, 1000),
			 KOPT_WIN_STOP);
	assert_int_equal(w.n, 1);
}

static void test_other_launch_in_a_later_pass(void **state)
{
	struct kopt_window w;

	(void)state;
	memset(&w, 0, sizeof(w));
	assert_int_equal(ENTER(&w, A, 5, 1), KOPT_WIN_OPEN);
	assert_int_equal(ENTER(&w, B, 5, 1), KOPT_WIN_TAKE);
	assert_int_equal(ENTER(&w, C, 0, 0), KOPT_WIN_STOP);
	kopt_window_stopped(&w);
	/* C again between the passes: it waits, nothing more */
	assert_int_equal(ENTER(&w, C, 1, 0), KOPT_WIN_SKIP);
	assert_int_equal(ENTER(&w, A, 6, 0), KOPT_WIN_START);
	/* C where B belongs: the window is dropped */
	assert_int_equal(ENTER(&w, C, 2, 0), KOPT_WIN_DROP);
}

static void test_first_kernel_never_again(void **state)
{
	struct kopt_window w;

	(void)state;
	memset(&w, 0, sizeof(w));
	assert_int_equal(kopt_window_enter(&w, &A, 5, 1, 0, 3),
			 KOPT_WIN_OPEN);
	assert_int_equal(kopt_window_enter(&w, &B, 0, 0, 0, 3),
			 KOPT_WIN_STOP);
	kopt_window_stopped(&w);
	for (int i = 0; i < 3; i++)
		assert_int_equal(kopt_window_enter(&w, &B, 1, 0, 0, 3),
				 KOPT_WIN_SKIP);
	assert_int_equal(kopt_window_enter(&w, &B, 4, 0, 0, 3),
			 KOPT_WIN_DROP);
}

static void test_names(void **state)
{
	(void)state;
	assert_string_equal(kopt_window_action_name(KOPT_WIN_OPEN), "open");
	assert_string_equal(kopt_window_action_name(KOPT_WIN_DROP), "drop");
	assert_string_equal(kopt_window_action_name(
				    (enum kopt_window_action)42), "?");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_two_kernels_two_samples),
		cmocka_unit_test(test_nothing_wanted),
		cmocka_unit_test(test_window_full),
		cmocka_unit_test(test_captured_ends_the_first_pass),
		cmocka_unit_test(test_other_launch_in_a_later_pass),
		cmocka_unit_test(test_first_kernel_never_again),
		cmocka_unit_test(test_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
