#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>

#include <git2.h>

#include "analysis.h"
#include "cache.h"
#include "error.h"
#include "lockfile.h"

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

static char dir[] = "/tmp/kopt-analysis-XXXXXX";

/* A results file of one entry, its mtime an hour ago (not racy). */
static void write_results(const char *kernel, const char *version,
			  const char *parent, int us)
{
	struct kopt_buf path = KOPT_BUF_INIT, text = KOPT_BUF_INIT;
	struct timeval old[2];

	kopt_buf_addf(&path, "%s/docs/kernels/%s/results/%s.json", dir,
		      kernel, version);
	kopt_buf_addf(&text, "{\"schema\":1,\"kernel\":\"%s\",\"version\":"
		      "\"%s\",\"parent\":%s,\"entries\":[{\"trial\":"
		      "\"decode\",\"config\":{\"b\":32,\"s\":1,\"t\":4096},"
		      "\"metrics\":{\"duration_us\":%d}}]}\n", kernel, version,
		      parent, us);
	assert_int_equal(kopt_mkdir_parents(path.buf), 0);
	assert_int_equal(kopt_write_file_atomic(path.buf, text.buf, text.len,
						0644), 0);
	gettimeofday(&old[0], NULL);
	old[0].tv_sec -= 3600;
	old[1] = old[0];
	assert_int_equal(utimes(path.buf, old), 0);
	kopt_buf_release(&path);
	kopt_buf_release(&text);
}

static ino_t inode_of(const char *rel)
{
	struct stat st;
	char *path = kopt_xstrfmt("%s/.git/kopt/analyze/%s", dir, rel);

	assert_int_equal(stat(path, &st), 0);
	free(path);
	return st.st_ino;
}

static double duration_of(git_repository *repo, const char *kernel,
			  const char *version)
{
	struct kopt_source src;
	struct kopt_analysis a = KOPT_ANALYSIS_INIT;
	const struct kopt_analysis_version *v;
	double d;
	char *top = kopt_xstrfmt("%s/", dir);

	kopt_source_worktree_cached(&src, repo, top);
	assert_int_equal(kopt_analysis_load(&a, &src, kernel, NULL), 0);
	v = kopt_analysis_find(&a, version);
	assert_non_null(v);
	d = v->results.entries[0].metrics[KOPT_METRIC_DURATION_US];
	kopt_analysis_release(&a);
	kopt_source_release(&src);
	free(top);
	return d;
}

/*
 * The per-kernel cache: a kernel is read again when one of its files
 * changed, committed or not, and only that kernel; a damaged cache
 * file is read past and written again.
 */
static void test_cache_keys(void **state)
{
	git_repository *repo;
	git_index *index;
	char *file;
	ino_t k0, j0;

	(void)state;
	git_libgit2_init();
	unsetenv("KOPT_NO_CACHE");
	assert_non_null(mkdtemp(dir));
	assert_int_equal(git_repository_init(&repo, dir, 0), 0);
	write_results("k", "v0", "null", 100);
	write_results("k", "v1", "\"v0\"", 80);
	write_results("j", "v0", "null", 50);
	/* staged: the index knows their ids and stat data */
	assert_int_equal(git_repository_index(&index, repo), 0);
	assert_int_equal(git_index_add_bypath(index,
			 "docs/kernels/k/results/v0.json"), 0);
	assert_int_equal(git_index_add_bypath(index,
			 "docs/kernels/k/results/v1.json"), 0);
	assert_int_equal(git_index_add_bypath(index,
			 "docs/kernels/j/results/v0.json"), 0);
	assert_int_equal(git_index_write(index), 0);
	git_index_free(index);

	assert_true(duration_of(repo, "k", "v1") == 80);
	assert_true(duration_of(repo, "j", "v0") == 50);
	k0 = inode_of("k");
	j0 = inode_of("j");
	/* a hit writes nothing */
	assert_true(duration_of(repo, "k", "v1") == 80);
	assert_true(inode_of("k") == k0);

	/* edited, not staged, the same size: only j is read again */
	write_results("j", "v0", "null", 51);
	assert_true(duration_of(repo, "j", "v0") == 51);
	assert_true(inode_of("j") != j0);
	assert_true(duration_of(repo, "k", "v1") == 80);
	assert_true(inode_of("k") == k0);
	/* a new results file, not in the index, is seen */
	write_results("k", "v2", "\"v1\"", 70);
	assert_true(duration_of(repo, "k", "v2") == 70);
	assert_true(inode_of("k") != k0);

	/* a damaged cache file is ignored, and written again */
	file = kopt_xstrfmt("%s/.git/kopt/analyze/k", dir);
	assert_int_equal(kopt_write_file_atomic(file, "git-kopt cache 3", 16,
						0644), 0);
	k0 = inode_of("k");
	assert_true(duration_of(repo, "k", "v2") == 70);
	assert_true(inode_of("k") != k0);
	k0 = inode_of("k");
	assert_true(duration_of(repo, "k", "v2") == 70);
	assert_true(inode_of("k") == k0);
	free(file);

	git_repository_free(repo);
	file = kopt_xstrfmt("rm -rf '%s'", dir);
	assert_int_equal(system(file), 0);
	free(file);
	git_libgit2_shutdown();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_worktree),
		cmocka_unit_test(test_cache_keys),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
