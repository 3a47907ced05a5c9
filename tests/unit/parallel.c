#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "parallel.h"

struct tally {
	int *seen;              /* how often each item ran */
	pthread_t *by;          /* the thread that ran it */
};

static void count(size_t i, void *data)
{
	struct tally *t = data;

	__atomic_fetch_add(&t->seen[i], 1, __ATOMIC_RELAXED);
	t->by[i] = pthread_self();
}

/* Every item runs once, whatever the threads and the items. */
static void test_each_once(void **state)
{
	static const size_t nrs[] = { 0, 1, 2, 3, 7, 1000 };
	static const int threads[] = { -1, 0, 1, 2, 3, 8, 64 };
	size_t n, i;
	int t;

	(void)state;
	for (n = 0; n < sizeof(nrs) / sizeof(nrs[0]); n++)
		for (t = 0; t < (int)(sizeof(threads) / sizeof(threads[0]));
		     t++) {
			struct tally ta;
			ta.seen = calloc(nrs[n] + 1, sizeof(*ta.seen));
			ta.by = calloc(nrs[n] + 1, sizeof(*ta.by));
			kopt_parallel(nrs[n], threads[t], count, &ta);
			for (i = 0; i < nrs[n]; i++)
				assert_int_equal(ta.seen[i], 1);
			free(ta.seen);
			free(ta.by);
		}
}

/* One thread: the caller's, in item order. */
static void test_one_thread_is_the_caller(void **state)
{
	struct tally ta;
	size_t i;

	(void)state;
	ta.seen = calloc(10, sizeof(*ta.seen));
	ta.by = calloc(10, sizeof(*ta.by));
	kopt_parallel(10, 1, count, &ta);
	for (i = 0; i < 10; i++)
		assert_true(pthread_equal(ta.by[i], pthread_self()));
	free(ta.seen);
	free(ta.by);
}

struct meet {
	int arrived;
	int met;
};

/* Item 0 waits (a while) for item 1: they can only meet on two threads. */
static void wait_for_other(size_t i, void *data)
{
	struct meet *m = data;
	long spins;

	__atomic_fetch_add(&m->arrived, 1, __ATOMIC_SEQ_CST);
	for (spins = 0; spins < 2000000000L; spins++)
		if (__atomic_load_n(&m->arrived, __ATOMIC_SEQ_CST) == 2) {
			if (i == 0)
				m->met = 1;
			return;
		}
}

static void test_threads_run_at_once(void **state)
{
	struct meet m = { 0, 0 };

	(void)state;
	kopt_parallel(2, 2, wait_for_other, &m);
	assert_int_equal(m.met, 1);
}

static void test_threads_setting(void **state)
{
	int n = kopt_parallel_threads(0);

	(void)state;
	assert_true(n >= 1 && n <= 8);
	assert_int_equal(kopt_parallel_threads(3), 3);
	assert_int_equal(kopt_parallel_threads(1), 1);
	assert_int_equal(kopt_parallel_threads(-2), n);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_each_once),
		cmocka_unit_test(test_one_thread_is_the_caller),
		cmocka_unit_test(test_threads_run_at_once),
		cmocka_unit_test(test_threads_setting),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
