#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "paths.h"

static void test_make(void **state)
{
	struct kopt_buf b = KOPT_BUF_INIT;

	(void)state;
	kopt_path_devlog(&b, "k");
	assert_string_equal(b.buf, "docs/kernels/k.md");
	kopt_buf_reset(&b);
	kopt_path_results(&b, "k", "v2");
	assert_string_equal(b.buf, "docs/kernels/k/results/v2.json");
	kopt_buf_reset(&b);
	kopt_path_results_dir(&b, "k");
	assert_string_equal(b.buf, "docs/kernels/k/results");
	kopt_buf_reset(&b);
	kopt_path_task(&b, "k", "v3");
	assert_string_equal(b.buf, "docs/kernels/k/tasks/v3.md");
	kopt_buf_reset(&b);
	kopt_path_kernel_dir(&b, "k");
	assert_string_equal(b.buf, "docs/kernels/k");
	kopt_buf_release(&b);
}

static void expect(const char *path, enum kopt_path_kind kind,
		   const char *kernel, const char *version)
{
	char *k = (char *)1, *v = (char *)1;

	assert_int_equal(kopt_path_classify(path, &k, &v), kind);
	if (kernel)
		assert_string_equal(k, kernel);
	else
		assert_null(k);
	if (version)
		assert_string_equal(v, version);
	else
		assert_null(v);
	free(k);
	free(v);
}

/* What the hooks and review once each recognised in their own way. */
static void test_classify(void **state)
{
	char *k, *v;

	(void)state;
	expect("docs/kernels/mla-decode.md", KOPT_PATH_DEVLOG, "mla-decode",
	       NULL);
	expect("docs/kernels/README.md", KOPT_PATH_OTHER, NULL, NULL);
	expect("docs/kernels/.md", KOPT_PATH_OTHER, NULL, NULL);
	expect("docs/kernels/k/results/v3.json", KOPT_PATH_RESULTS, "k", "v3");
	expect("docs/kernels/k/results/V3.json", KOPT_PATH_OTHER, NULL, NULL);
	expect("docs/kernels/k/results/v01.json", KOPT_PATH_OTHER, NULL, NULL);
	expect("docs/kernels/k/results/x/v1.json", KOPT_PATH_OTHER, NULL, NULL);
	expect("docs/kernels/k/tasks/v4.md", KOPT_PATH_TASK, "k", "v4");
	expect("docs/kernels/K/tasks/v4.md", KOPT_PATH_OTHER, NULL, NULL);
	expect("docs/other/k.md", KOPT_PATH_OTHER, NULL, NULL);
	assert_int_equal(kopt_path_is(KOPT_PATH_TASK, "docs/kernels/k.md",
				      &k, &v), 0);
	assert_int_equal(kopt_path_is(KOPT_PATH_DEVLOG, "docs/kernels/k.md",
				      &k, NULL), 1);
	assert_string_equal(k, "k");
	free(k);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_make),
		cmocka_unit_test(test_classify),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
