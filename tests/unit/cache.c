#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <git2.h>

#include "buf.h"
#include "cache.h"
#include "error.h"
#include "devlog.h"
#include "lockfile.h"
#include "results.h"

#ifndef KOPT_SOURCE_DIR
#define KOPT_SOURCE_DIR "."
#endif

static char dir[] = "/tmp/kopt-cache-XXXXXX";
static git_repository *repo;

static int setup(void **state)
{
	(void)state;
	git_libgit2_init();
	assert_non_null(mkdtemp(dir));
	assert_int_equal(git_repository_init(&repo, dir, 0), 0);
	unsetenv("KOPT_NO_CACHE");
	return 0;
}

static int teardown(void **state)
{
	char *cmd = kopt_xstrfmt("rm -rf '%s'", dir);

	(void)state;
	git_repository_free(repo);
	git_libgit2_shutdown();
	assert_int_equal(system(cmd), 0);
	free(cmd);
	return 0;
}

/* A stat as of an hour ago, so that it is not racy. */
static void old_stat(struct stat *st, long long size, long long ino)
{
	memset(st, 0, sizeof(*st));
	st->st_size = size;
	st->st_mtim.tv_sec = time(NULL) - 3600;
	st->st_mtim.tv_nsec = 5;
	st->st_ctim = st->st_mtim;
	st->st_ino = ino;
}

static void test_put_save_get(void **state)
{
	struct kopt_cache c;
	struct stat st, other;
	const char *data;
	size_t len;

	(void)state;
	kopt_cache_open(&c, repo, "t");
	old_stat(&st, 10, 7);
	assert_int_equal(kopt_cache_get(&c, "a.md", &st, &data, &len), 0);
	kopt_cache_put(&c, "b.md", &st, "two\nlines\n", 10);
	kopt_cache_put(&c, "a.md", &st, "one", 3);
	assert_int_equal(kopt_cache_save(&c), 0);
	kopt_cache_release(&c);

	kopt_cache_open(&c, repo, "t");
	assert_int_equal(c.nr, 2);
	assert_int_equal(kopt_cache_get(&c, "b.md", &st, &data, &len), 1);
	assert_int_equal(len, 10);
	assert_memory_equal(data, "two\nlines\n", 10);
	/* any stat field that moved is a miss */
	other = st;
	other.st_mtim.tv_nsec++;
	assert_int_equal(kopt_cache_get(&c, "a.md", &other, &data, &len), 0);
	other = st;
	other.st_size++;
	assert_int_equal(kopt_cache_get(&c, "a.md", &other, &data, &len), 0);
	other = st;
	other.st_ino++;
	assert_int_equal(kopt_cache_get(&c, "a.md", &other, &data, &len), 0);
	kopt_cache_release(&c);
}

static void test_racy_entries_are_not_kept(void **state)
{
	struct kopt_cache c;
	struct stat st;
	const char *data;
	size_t len;

	(void)state;
	kopt_cache_open(&c, repo, "racy");
	old_stat(&st, 1, 1);
	st.st_mtim.tv_sec = time(NULL);
	kopt_cache_put(&c, "new.md", &st, "x", 1);
	assert_int_equal(kopt_cache_get(&c, "new.md", &st, &data, &len), 0);
	kopt_cache_release(&c);
}

static void test_damaged_or_disabled(void **state)
{
	struct kopt_cache c;
	struct stat st;
	char *path = kopt_xstrfmt("%s/.git/kopt/bad.cache", dir);
	const char *data;
	size_t len;

	(void)state;
	assert_int_equal(kopt_mkdir_parents(path), 0);
	assert_int_equal(kopt_write_file_atomic(path, "git-kopt cache 2 0.1.0\n"
						"a.md\t1\t2\n", 33, 0644), 0);
	kopt_cache_open(&c, repo, "bad");
	assert_int_equal(c.nr, 0);
	kopt_cache_release(&c);

	setenv("KOPT_NO_CACHE", "1", 1);
	kopt_cache_open(&c, repo, "t");
	old_stat(&st, 10, 7);
	assert_int_equal(kopt_cache_get(&c, "a.md", &st, &data, &len), 0);
	assert_int_equal(kopt_cache_save(&c), 0);
	kopt_cache_release(&c);
	unsetenv("KOPT_NO_CACHE");
	free(path);
}

static void test_fields(void **state)
{
	struct kopt_buf sb = KOPT_BUF_INIT;
	char *f[8];
	size_t pos = 0;

	(void)state;
	kopt_cache_add_str(&sb, "a\tb\\c\nd");
	kopt_cache_add_str(&sb, NULL);
	kopt_cache_add_str(&sb, "-");
	kopt_cache_add_str(&sb, "-x");
	kopt_cache_add_num(&sb, 0.1);
	kopt_cache_add_num(&sb, NAN);
	kopt_buf_addch(&sb, '\n');
	kopt_cache_add_str(&sb, "next");
	kopt_buf_addch(&sb, '\n');
	assert_int_equal(kopt_cache_split(sb.buf, sb.len, &pos, f, 8), 6);
	assert_string_equal(f[0], "a\tb\\c\nd");
	assert_null(f[1]);
	assert_string_equal(f[2], "-");
	assert_string_equal(f[3], "-x");
	assert_true(kopt_cache_num(f[4]) == 0.1);
	assert_true(isnan(kopt_cache_num(f[5])));
	assert_int_equal(kopt_cache_split(sb.buf, sb.len, &pos, f, 8), 1);
	assert_string_equal(f[0], "next");
	assert_int_equal(kopt_cache_split(sb.buf, sb.len, &pos, f, 8), -1);
	kopt_buf_release(&sb);
}

/* The summaries keep what the views read, exactly. */
static void test_summaries_round_trip(void **state)
{
	struct kopt_results r = KOPT_RESULTS_INIT, back = KOPT_RESULTS_INIT;
	struct kopt_devlog dl = KOPT_DEVLOG_INIT, dback = KOPT_DEVLOG_INIT;
	struct kopt_buf sb = KOPT_BUF_INIT, again = KOPT_BUF_INIT;
	size_t i;
	int m;

	(void)state;
	assert_int_equal(kopt_results_read_file(&r, KOPT_SOURCE_DIR
		"/tests/fixtures/results/v1.json", NULL, NULL), 0);
	kopt_results_summary(&sb, &r);
	assert_int_equal(kopt_results_from_summary(&back, sb.buf, sb.len), 0);
	assert_string_equal(back.parent, "v0");
	assert_int_equal(back.entries_nr, r.entries_nr);
	for (i = 0; i < r.entries_nr; i++) {
		assert_string_equal(back.entries[i].trial, r.entries[i].trial);
		assert_int_equal(back.entries[i].b, r.entries[i].b);
		assert_int_equal(back.entries[i].b_requested,
				 r.entries[i].b_requested);
		assert_int_equal(back.entries[i].replayed,
				 r.entries[i].replayed);
		for (m = 0; m < KOPT_METRIC__NR; m++)
			assert_true(back.entries[i].metrics[m] ==
				    r.entries[i].metrics[m] ||
				    (isnan(back.entries[i].metrics[m]) &&
				     isnan(r.entries[i].metrics[m])));
	}
	kopt_results_summary(&again, &back);
	assert_string_equal(sb.buf, again.buf);
	assert_int_equal(kopt_results_from_summary(&back, "R\tk\n", 4),
			 KOPT_EINVALID);

	kopt_buf_reset(&sb);
	kopt_buf_reset(&again);
	assert_int_equal(kopt_devlog_read_file(&dl, KOPT_SOURCE_DIR
		"/tests/fixtures/devlog/corpus/08-dash-headings.md"), 0);
	kopt_devlog_summary(&sb, &dl);
	assert_int_equal(kopt_devlog_from_summary(&dback, sb.buf, sb.len,
						  "x"), 0);
	assert_int_equal(dback.versions_nr, dl.versions_nr);
	assert_string_equal(dback.versions[3].note, "abandoned");
	assert_string_equal(dback.versions[3].title, "");
	kopt_devlog_summary(&again, &dback);
	assert_string_equal(sb.buf, again.buf);
	kopt_results_release(&r);
	kopt_results_release(&back);
	kopt_devlog_release(&dl);
	kopt_devlog_release(&dback);
	kopt_buf_release(&sb);
	kopt_buf_release(&again);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_put_save_get),
		cmocka_unit_test(test_racy_entries_are_not_kept),
		cmocka_unit_test(test_damaged_or_disabled),
		cmocka_unit_test(test_fields),
		cmocka_unit_test(test_summaries_round_trip),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
