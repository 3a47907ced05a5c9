#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "analysis.h"
#include "error.h"

#ifndef KOPT_SOURCE_DIR
#define KOPT_SOURCE_DIR "."
#endif

static void test_worktree(void **state)
{
	struct kopt_source src;
	struct kopt_analysis a = KOPT_ANALYSIS_INIT;
	const struct kopt_analysis_version *v, *best;
	const struct kopt_results_entry *e;
	struct kopt_strvec names = KOPT_STRVEC_INIT;

	(void)state;
	kopt_source_worktree(&src, KOPT_SOURCE_DIR "/tests/fixtures/analysis/");
	assert_int_equal(kopt_source_list(&src, "docs/kernels/k/results",
					  &names), 0);
	assert_int_equal(names.nr, 3);
	assert_int_equal(kopt_source_list(&src, "nope", &names),
			 KOPT_ENOTFOUND);
	kopt_strvec_clear(&names);

	assert_int_equal(kopt_analysis_load(&a, &src, "k", NULL), 0);
	assert_true(a.has_devlog);
	/* v0 v1 from both, v2 only in... neither, v3 only in results */
	assert_int_equal(a.versions_nr, 3);
	assert_string_equal(a.versions[0].name, "v0");
	assert_string_equal(a.versions[2].name, "v3");
	assert_null(a.versions[2].entry);
	assert_non_null(a.versions[1].entry);
	assert_string_equal(a.versions[1].entry->title, "pipelined");
	v = kopt_analysis_find(&a, "v1");
	assert_int_equal(v->change, KOPT_CHANGE_IMPROVEMENT);
	assert_string_equal(a.versions[v->parent].name, "v0");
	assert_int_equal(v->source, KOPT_NUMBERS_MEASURED);
	assert_true(v->has_file);
	v = kopt_analysis_find(&a, "v3");
	assert_int_equal(v->change, KOPT_CHANGE_REGRESSION);
	e = kopt_analysis_best(&a, "decode", &best);
	assert_string_equal(best->name, "v1");
	assert_true(e->metrics[KOPT_METRIC_DURATION_US] == 80);
	assert_null(kopt_analysis_best(&a, "spec", &best));

	/* taking a version's numbers moves them out, once */
	{
		struct kopt_results res = KOPT_RESULTS_INIT;
		struct kopt_error_catch caught = KOPT_ERROR_CATCH_INIT;
		assert_int_equal(kopt_analysis_take(&res, &a, "v1"), 0);
		assert_string_equal(res.version, "v1");
		assert_false(kopt_analysis_find(&a, "v1")->has_results);
		kopt_error_catch(&caught);
		assert_int_equal(kopt_analysis_take(&res, &a, "v1"),
				 KOPT_ENOTFOUND);
		assert_int_equal(kopt_analysis_take(&res, &a, "v9"),
				 KOPT_ENOTFOUND);
		kopt_error_uncatch(&caught);
		assert_int_equal(caught.errors, 2);
		kopt_error_catch_release(&caught);
		kopt_results_release(&res);
	}
	kopt_analysis_release(&a);

	/* a kernel with nothing is empty, not an error */
	assert_int_equal(kopt_analysis_load(&a, &src, "none", NULL), 0);
	assert_int_equal(a.versions_nr, 0);
	assert_false(a.has_devlog);
	kopt_analysis_release(&a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_worktree),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
