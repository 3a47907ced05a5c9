/*
 * Linked into every unit test program: KOPT_TEST_FILTER names the tests
 * to run (cmocka's pattern, '*' and '?' as wildcards), so that tests/run
 * can rerun the one test that failed.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdlib.h>
#include <cmocka.h>

__attribute__((constructor)) static void kopt_test_filter(void)
{
	const char *pattern = getenv("KOPT_TEST_FILTER");

	if (pattern && *pattern)
		cmocka_set_test_filter(pattern);
}
