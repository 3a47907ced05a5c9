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
#include "version.h"

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

static void key_of(git_oid *out, const char *text)
{
	struct kopt_buf in = KOPT_BUF_INIT;

	kopt_buf_addstr(&in, text);
	kopt_cache_key(out, &in);
	kopt_buf_release(&in);
}

/* A key is git's blob id of its text, as git hash-object gives it. */
static void test_key_is_blob_id(void **state)
{
	struct kopt_buf text = KOPT_BUF_INIT;
	git_oid key, want;
	char hex[GIT_OID_HEXSZ + 1];
	size_t i;

	(void)state;
	kopt_cache_key(&key, &text);
	git_oid_tostr(hex, sizeof(hex), &key);
	assert_string_equal(hex, "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391");
	kopt_buf_addstr(&text, "hello\n");
	kopt_cache_key(&key, &text);
	git_oid_tostr(hex, sizeof(hex), &key);
	assert_string_equal(hex, "ce013625030ba8dba906f756967f9e9ca394464a");
	/* lengths around SHA-1's blocks, and one of many blocks */
	for (i = 0; i < 100000; i++) {
		kopt_buf_addch(&text, (int)(i * 7 % 251));
		if (i < 200 || i % 9973 == 0 || i == 99999) {
			kopt_cache_key(&key, &text);
			assert_int_equal(git_odb_hash(&want, text.buf, text.len,
						      GIT_OBJECT_BLOB), 0);
			assert_true(git_oid_equal(&key, &want));
		}
	}
	kopt_buf_release(&text);
}

static void test_put_get(void **state)
{
	struct kopt_cache c;
	struct kopt_buf got = KOPT_BUF_INIT;
	git_oid k1, k2;

	(void)state;
	key_of(&k1, "devlog 1111\n");
	key_of(&k2, "devlog 2222\n");
	kopt_cache_open(&c, repo, "t");
	assert_int_equal(kopt_cache_get(&c, "k", &k1, &got), 0);
	assert_int_equal(kopt_cache_has(&c, "k"), 0);
	assert_int_equal(kopt_cache_put(&c, "k", &k1, "two\nlines\n", 10), 0);
	/* an entry is there, whatever its key */
	assert_int_equal(kopt_cache_has(&c, "k"), 1);
	assert_int_equal(kopt_cache_has(&c, "../t/k"), 0);
	assert_int_equal(kopt_cache_put(&c, "j", &k2, "one", 3), 0);
	kopt_cache_release(&c);

	kopt_cache_open(&c, repo, "t");
	assert_int_equal(kopt_cache_get(&c, "k", &k1, &got), 1);
	assert_int_equal(got.len, 10);
	assert_memory_equal(got.buf, "two\nlines\n", 10);
	/* another key is a miss, and leaves nothing behind */
	assert_int_equal(kopt_cache_get(&c, "k", &k2, &got), 0);
	assert_int_equal(got.len, 0);
	assert_int_equal(kopt_cache_get(&c, "j", &k2, &got), 1);
	assert_int_equal(kopt_cache_put(&c, "k", &k2, "new", 3), 0);
	assert_int_equal(kopt_cache_get(&c, "k", &k1, &got), 0);
	assert_int_equal(kopt_cache_get(&c, "k", &k2, &got), 1);
	assert_memory_equal(got.buf, "new", 3);
	/* names that are not plain file names are never cached */
	assert_int_equal(kopt_cache_put(&c, "../x", &k1, "x", 1), -1);
	assert_int_equal(kopt_cache_put(&c, ".hidden", &k1, "x", 1), -1);
	assert_int_equal(kopt_cache_get(&c, "../x", &k1, &got), 0);
	kopt_cache_release(&c);
	kopt_buf_release(&got);
}

static int exists(const char *cache, const char *name)
{
	struct stat st;
	char *path = kopt_xstrfmt("%s/.git/kopt/%s/%s", dir, cache, name);
	int ret = !lstat(path, &st);

	free(path);
	return ret;
}

/* Many entries held make one pack; few, a file each; both read back. */
static void test_pack(void **state)
{
	struct kopt_cache c;
	struct kopt_buf got = KOPT_BUF_INIT, text = KOPT_BUF_INIT;
	char name[32], *path;
	git_oid k1, k2;
	int i;

	(void)state;
	key_of(&k1, "devlog 1111\n");
	key_of(&k2, "devlog 2222\n");
	kopt_cache_open(&c, repo, "p");
	kopt_cache_hold(&c);
	for (i = 0; i < KOPT_CACHE_PACK_MIN + 8; i++) {
		snprintf(name, sizeof(name), "kernel-%02d", i);
		assert_int_equal(kopt_cache_put(&c, name, &k1, name,
						strlen(name)), 0);
	}
	/* held: nothing written yet */
	assert_false(exists("p", ".pack"));
	kopt_cache_flush(&c);
	assert_true(exists("p", ".pack"));
	assert_false(exists("p", "kernel-00"));
	/* the pack is read again after it was written */
	assert_int_equal(kopt_cache_get(&c, "kernel-07", &k1, &got), 1);
	assert_string_equal(got.buf, "kernel-07");
	kopt_cache_release(&c);

	kopt_cache_open(&c, repo, "p");
	assert_int_equal(kopt_cache_has(&c, "kernel-39"), 1);
	assert_int_equal(kopt_cache_has(&c, "kernel-40"), 0);
	assert_int_equal(kopt_cache_get(&c, "kernel-39", &k1, &got), 1);
	assert_string_equal(got.buf, "kernel-39");
	assert_int_equal(kopt_cache_get(&c, "kernel-39", &k2, &got), 0);
	/* a later put of one name: its own file, which wins by its key */
	assert_int_equal(kopt_cache_put(&c, "kernel-03", &k2, "new", 3), 0);
	assert_true(exists("p", "kernel-03"));
	assert_int_equal(kopt_cache_get(&c, "kernel-03", &k2, &got), 1);
	assert_string_equal(got.buf, "new");
	/* ... and the pack's entry is still right for its own key */
	assert_int_equal(kopt_cache_get(&c, "kernel-03", &k1, &got), 1);
	/* few held: a file each, the pack left as it was */
	kopt_cache_hold(&c);
	assert_int_equal(kopt_cache_put(&c, "few", &k1, "f", 1), 0);
	kopt_cache_flush(&c);
	assert_true(exists("p", "few"));
	/* many again: a new pack keeps the old one's other names */
	kopt_cache_hold(&c);
	for (i = 0; i < KOPT_CACHE_PACK_MIN; i++) {
		snprintf(name, sizeof(name), "other-%02d", i);
		assert_int_equal(kopt_cache_put(&c, name, &k2, "o", 1), 0);
	}
	assert_int_equal(kopt_cache_put(&c, "kernel-05", &k2, "five", 4), 0);
	kopt_cache_release(&c);	/* flushes */
	kopt_cache_open(&c, repo, "p");
	assert_int_equal(kopt_cache_get(&c, "kernel-04", &k1, &got), 1);
	assert_int_equal(kopt_cache_get(&c, "kernel-05", &k2, &got), 1);
	assert_string_equal(got.buf, "five");
	assert_int_equal(kopt_cache_get(&c, "kernel-05", &k1, &got), 0);
	assert_int_equal(kopt_cache_get(&c, "other-31", &k2, &got), 1);
	kopt_cache_release(&c);

	/* a damaged pack is no pack: misses, and the next flush replaces it */
	path = kopt_xstrfmt("%s/.git/kopt/p/.pack", dir);
	assert_int_equal(kopt_buf_read_file(&text, path), 0);
	text.buf[text.len - 1] ^= 1;	/* the last entry's one byte */
	assert_int_equal(kopt_write_file_atomic(path, text.buf, text.len,
						0644), 0);
	kopt_cache_open(&c, repo, "p");
	assert_int_equal(kopt_cache_get(&c, "other-31", &k2, &got), 0);
	assert_int_equal(kopt_cache_get(&c, "other-30", &k2, &got), 1);
	kopt_cache_release(&c);
	kopt_buf_reset(&text);
	kopt_buf_addstr(&text, "git-kopt cache pack 1 " KOPT_VERSION "\nk\n");
	assert_int_equal(kopt_write_file_atomic(path, text.buf, text.len,
						0644), 0);
	kopt_cache_open(&c, repo, "p");
	assert_int_equal(kopt_cache_get(&c, "kernel-04", &k1, &got), 0);
	assert_int_equal(kopt_cache_has(&c, "kernel-04"), 0);
	kopt_cache_hold(&c);
	for (i = 0; i < KOPT_CACHE_PACK_MIN; i++) {
		snprintf(name, sizeof(name), "kernel-%02d", i);
		assert_int_equal(kopt_cache_put(&c, name, &k1, "x", 1), 0);
	}
	kopt_cache_flush(&c);
	assert_int_equal(kopt_cache_get(&c, "kernel-04", &k1, &got), 1);
	kopt_cache_release(&c);
	free(path);
	kopt_buf_release(&got);
	kopt_buf_release(&text);
}

static void test_damaged_or_disabled(void **state)
{
	static const char *const bad[] = {
		"",
		"git-kopt cache 2 0.1.0\n",
		"git-kopt cache 3 " KOPT_VERSION "\n%s\n3\nabc",
		"git-kopt cache 4 " KOPT_VERSION "\n",
		"git-kopt cache 4 " KOPT_VERSION "\n%s\n",
		"git-kopt cache 4 " KOPT_VERSION "\n%s\n3\nabc",
		"git-kopt cache 4 " KOPT_VERSION "\n%s\n3\n"
		"e71fa2190541574b\nabd",       /* torn */
		"git-kopt cache 4 " KOPT_VERSION "\n%s\n4\n"
		"e71fa2190541574b\nabc",
		"git-kopt cache 4 " KOPT_VERSION "\n%s\n2\n"
		"e71fa2190541574b\nabc",
		"git-kopt cache 4 " KOPT_VERSION "\n%s\n-3\n"
		"e71fa2190541574b\nabc",
		"git-kopt cache 4 " KOPT_VERSION "\n%s 3\n"
		"e71fa2190541574b\nabc",
	};
	struct kopt_cache c;
	struct kopt_buf got = KOPT_BUF_INIT, text = KOPT_BUF_INIT;
	char *path = kopt_xstrfmt("%s/.git/kopt/bad/k", dir);
	char hex[GIT_OID_HEXSZ + 1];
	git_oid key;
	size_t i;

	(void)state;
	key_of(&key, "results v1.json 3333\n");
	git_oid_tostr(hex, sizeof(hex), &key);
	assert_int_equal(kopt_mkdir_parents(path), 0);
	for (i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		kopt_buf_reset(&text);
		kopt_buf_addf(&text, bad[i], hex);
		assert_int_equal(kopt_write_file_atomic(path, text.buf,
							text.len, 0644), 0);
		kopt_cache_open(&c, repo, "bad");
		assert_int_equal(kopt_cache_get(&c, "k", &key, &got), 0);
		/* and the next put replaces it */
		assert_int_equal(kopt_cache_put(&c, "k", &key, "abc", 3), 0);
		assert_int_equal(kopt_cache_get(&c, "k", &key, &got), 1);
		assert_memory_equal(got.buf, "abc", 3);
		kopt_cache_release(&c);
	}
	/* an entry as put writes it is a hit; with its bytes zeroed, not */
	kopt_buf_reset(&text);
	kopt_buf_addf(&text, "git-kopt cache 4 " KOPT_VERSION "\n%s\n3\n"
		      "e71fa2190541574b\n", hex);
	kopt_buf_add(&text, "xyz", 3);
	memcpy(text.buf + text.len - 3, "abc", 3);
	assert_int_equal(kopt_write_file_atomic(path, text.buf, text.len,
						0644), 0);
	kopt_cache_open(&c, repo, "bad");
	assert_int_equal(kopt_cache_get(&c, "k", &key, &got), 1);
	assert_memory_equal(got.buf, "abc", 3);
	memset(text.buf + text.len - 3, 0, 3);
	assert_int_equal(kopt_write_file_atomic(path, text.buf, text.len,
						0644), 0);
	assert_int_equal(kopt_cache_get(&c, "k", &key, &got), 0);
	kopt_cache_release(&c);

	setenv("KOPT_NO_CACHE", "1", 1);
	kopt_cache_open(&c, repo, "bad");
	assert_int_equal(kopt_cache_get(&c, "k", &key, &got), 0);
	assert_int_equal(kopt_cache_put(&c, "k", &key, "x", 1), -1);
	kopt_cache_release(&c);
	unsetenv("KOPT_NO_CACHE");
	free(path);
	kopt_buf_release(&got);
	kopt_buf_release(&text);
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
	kopt_cache_add_str(&sb, "#next");
	kopt_cache_add_str(&sb, "#x");
	kopt_buf_addch(&sb, '\n');
	/* a line never begins with '#', which would make it a comment */
	assert_non_null(strstr(sb.buf, "\n\\#next\t#x\n"));
	assert_int_equal(kopt_cache_split(sb.buf, sb.len, &pos, f, 8), 6);
	assert_string_equal(f[0], "a\tb\\c\nd");
	assert_null(f[1]);
	assert_string_equal(f[2], "-");
	assert_string_equal(f[3], "-x");
	assert_true(kopt_cache_num(f[4]) == 0.1);
	assert_true(isnan(kopt_cache_num(f[5])));
	assert_int_equal(kopt_cache_split(sb.buf, sb.len, &pos, f, 8), 2);
	assert_string_equal(f[0], "#next");
	assert_string_equal(f[1], "#x");
	assert_int_equal(kopt_cache_split(sb.buf, sb.len, &pos, f, 8), -1);
	kopt_buf_release(&sb);
}

/* Whole numbers of a summary: in range and whole, or damage. */
static void test_whole(void **state)
{
	struct kopt_buf sb = KOPT_BUF_INIT;
	static const double vals[] = { 3, -1, 2.5, NAN, INFINITY,
				       9007199254740992.0, 1e300, -4 };
	char *f[8];
	size_t pos = 0;
	long v = 77;
	int i;

	(void)state;
	for (i = 0; i < 8; i++)
		kopt_cache_add_num(&sb, vals[i]);
	kopt_buf_addch(&sb, '\n');
	assert_int_equal(kopt_cache_split(sb.buf, sb.len, &pos, f, 8), 8);
	assert_int_equal(kopt_cache_whole(f[0], 0, 10, &v), 0);
	assert_int_equal(v, 3);
	assert_int_equal(kopt_cache_whole(f[1], -1, 10, &v), 0);
	assert_int_equal(v, -1);
	assert_int_equal(kopt_cache_whole(f[1], 0, 10, &v), -1);
	assert_int_equal(kopt_cache_whole(f[2], 0, 10, &v), -1);
	assert_int_equal(kopt_cache_whole(f[3], 0, 10, &v), -1);
	assert_int_equal(kopt_cache_whole(f[4], 0, KOPT_CACHE_WHOLE_MAX, &v),
			 -1);
	assert_int_equal(kopt_cache_whole(f[5], 0, KOPT_CACHE_WHOLE_MAX, &v),
			 0);
	assert_int_equal(v, 9007199254740992L);
	assert_int_equal(kopt_cache_whole(f[6], 0, KOPT_CACHE_WHOLE_MAX, &v),
			 -1);
	assert_int_equal(kopt_cache_whole(f[7], -1, 10, &v), -1);
	assert_int_equal(kopt_cache_whole("12", 0, 100, &v), -1);
	assert_int_equal(kopt_cache_whole(NULL, 0, 100, &v), -1);
	assert_int_equal(v, 9007199254740992L);     /* untouched on damage */
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
	kopt_devlog_summary(&sb, &dl, KOPT_DEVLOG_SUMMARY_PERFS);
	assert_int_equal(kopt_devlog_from_summary(&dback, sb.buf, sb.len,
						  "x"), 0);
	assert_int_equal(dback.versions_nr, dl.versions_nr);
	assert_string_equal(dback.versions[3].note, "abandoned");
	assert_string_equal(dback.versions[3].title, "");
	kopt_devlog_summary(&again, &dback, KOPT_DEVLOG_SUMMARY_PERFS);
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
		cmocka_unit_test(test_key_is_blob_id),
		cmocka_unit_test(test_put_get),
		cmocka_unit_test(test_pack),
		cmocka_unit_test(test_damaged_or_disabled),
		cmocka_unit_test(test_fields),
		cmocka_unit_test(test_whole),
		cmocka_unit_test(test_summaries_round_trip),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
