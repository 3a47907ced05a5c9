#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "obligations.h"

static void test_mentions(void **state)
{
	(void)state;
	assert_true(kopt_obligations_mentions("Source: mla-decode/v2",
					      "mla-decode", "v2"));
	assert_true(kopt_obligations_mentions("| A1 | x | y | local "
					      "experiment: mla-decode v2 |",
					      "mla-decode", "v2"));
	assert_true(kopt_obligations_mentions("local experiment (mla-decode "
					      "v1 -> v2, NVIDIA H200)",
					      "mla-decode", "v2"));
	assert_true(kopt_obligations_mentions("seen in mla-decode v2.",
					      "mla-decode", "v2"));
	/* other versions, other kernels, longer names */
	assert_false(kopt_obligations_mentions("mla-decode/v20",
					       "mla-decode", "v2"));
	assert_false(kopt_obligations_mentions("mla-decode v1 -> v3",
					       "mla-decode", "v2"));
	assert_false(kopt_obligations_mentions("mla-decode-fp8/v2",
					       "mla-decode", "v2"));
	assert_false(kopt_obligations_mentions("old-mla-decode/v2",
					       "mla-decode", "v2"));
	assert_false(kopt_obligations_mentions("mla-decode.v2 v2",
					       "mla-decode", "v2"));
	assert_false(kopt_obligations_mentions("", "mla-decode", "v2"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mentions),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
