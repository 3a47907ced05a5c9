#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "filetx.h"

#include "messages.h"

static char dir[64];

static int setup_dir(void **state)
{
	snprintf(dir, sizeof(dir), "/tmp/kopt-filetx-XXXXXX");
	if (!mkdtemp(dir))
		return -1;
	return catch_messages(state);
}

static int teardown_dir(void **state)
{
	char cmd[256];

	snprintf(cmd, sizeof(cmd), "chmod -R u+w '%s'; rm -rf '%s'", dir, dir);
	if (system(cmd))
		return -1;
	return release_messages(state);
}

#define DIR_TEST(f) cmocka_unit_test_setup_teardown(f, setup_dir, teardown_dir)

static char *at(const char *rel)
{
	static char path[4][256];
	static int i;

	i = (i + 1) % 4;
	snprintf(path[i], sizeof(path[i]), "%s/%s", dir, rel);
	return path[i];
}

static void put(const char *rel, const char *text)
{
	FILE *f = fopen(at(rel), "w");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void expect_file(const char *rel, const char *text)
{
	struct kopt_buf b = KOPT_BUF_INIT;

	assert_int_equal(kopt_buf_read_file(&b, at(rel)), 0);
	assert_string_equal(b.buf, text);
	kopt_buf_release(&b);
}

static void test_all_land(void **state)
{
	struct kopt_filetx tx = KOPT_FILETX_INIT;
	struct stat st;

	(void)state;
	put("old", "before\n");
	kopt_filetx_add(&tx, at("old"), "old", "after\n", 6, 0, NULL);
	kopt_filetx_add(&tx, at("a/b/new"), "a/b/new", "new\n", 4, 0755,
			NULL);
	assert_int_equal(kopt_filetx_commit(&tx), 0);
	kopt_filetx_release(&tx);
	expect_file("old", "after\n");
	expect_file("a/b/new", "new\n");
	assert_int_equal(stat(at("a/b/new"), &st), 0);
	assert_int_equal(st.st_mode & 0777, 0755);
	assert_int_equal(access(at("old.lock"), F_OK), -1);
	assert_string_equal(messages.buf, "");
}

/* One problem, one message, nothing written, no directory left made. */
static void test_none_land(void **state)
{
	struct kopt_filetx tx = KOPT_FILETX_INIT;

	(void)state;
	put("old", "before\n");
	put("file", "not a directory\n");
	kopt_filetx_add(&tx, at("old"), "old", "after\n", 6, 0, NULL);
	kopt_filetx_add(&tx, at("new/x"), "new/x", "x\n", 2, 0, NULL);
	kopt_filetx_add(&tx, at("file/y"), "file/y", "y\n", 2, 0, NULL);
	assert_int_equal(kopt_filetx_commit(&tx), KOPT_EINVALID);
	kopt_filetx_release(&tx);
	assert_string_equal(messages.buf, "error: cannot create 'file/y': "
			    "'file' is not a directory\n");
	expect_file("old", "before\n");
	assert_int_equal(access(at("new"), F_OK), -1);
	assert_int_equal(access(at("old.lock"), F_OK), -1);
}

static void test_held_lock(void **state)
{
	struct kopt_filetx tx = KOPT_FILETX_INIT;

	(void)state;
	put("f", "one\n");
	put("f.lock", "");
	kopt_filetx_add(&tx, at("f"), "f", "two\n", 4, 0, NULL);
	assert_int_equal(kopt_filetx_check(&tx), KOPT_EINVALID);
	assert_int_equal(kopt_filetx_commit(&tx), KOPT_EINVALID);
	kopt_filetx_release(&tx);
	assert_string_equal(messages.buf,
		"error: cannot write 'f': 'f.lock' exists; another git kopt "
		"may be running, otherwise remove it\n"
		"error: cannot write 'f': 'f.lock' exists; another git kopt "
		"may be running, otherwise remove it\n");
	expect_file("f", "one\n");
	expect_file("f.lock", "");
}

/* Several held locks (a writer killed halfway) are named at once. */
static void test_held_locks(void **state)
{
	struct kopt_filetx tx = KOPT_FILETX_INIT;

	(void)state;
	put("a.lock", "");
	put("c.lock", "x");
	put("d.lock", "");
	kopt_filetx_add(&tx, at("a"), "a", "1\n", 2, 0, NULL);
	kopt_filetx_add(&tx, at("b"), "b", "2\n", 2, 0, NULL);
	kopt_filetx_add(&tx, at("c"), "c", "3\n", 2, 0, NULL);
	kopt_filetx_add(&tx, at("d"), "d", "4\n", 2, 0, NULL);
	assert_int_equal(kopt_filetx_commit(&tx), KOPT_EINVALID);
	kopt_filetx_release(&tx);
	assert_string_equal(messages.buf,
		"error: cannot write 3 files: 'a.lock', 'c.lock' and 'd.lock' "
		"exist; another git kopt may be running, otherwise remove "
		"them\n");
	assert_int_equal(access(at("b"), F_OK), -1);
	assert_int_equal(access(at("b.lock"), F_OK), -1);
	expect_file("c.lock", "x");
}

/* A hook being chained moves aside, unless something sits there. */
static void test_keep_as(void **state)
{
	struct kopt_filetx tx = KOPT_FILETX_INIT;

	(void)state;
	put("hook", "theirs\n");
	kopt_filetx_add(&tx, at("hook"), "hook", "ours\n", 5, 0755,
			at("hook.pre-kopt"));
	assert_int_equal(kopt_filetx_commit(&tx), 0);
	kopt_filetx_release(&tx);
	expect_file("hook", "ours\n");
	expect_file("hook.pre-kopt", "theirs\n");

	kopt_filetx_add(&tx, at("hook"), "hook", "again\n", 6, 0755,
			at("hook.pre-kopt"));
	assert_int_equal(kopt_filetx_commit(&tx), KOPT_EINVALID);
	kopt_filetx_release(&tx);
	assert_non_null(strstr(messages.buf, "cannot move 'hook' aside"));
	expect_file("hook", "ours\n");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		DIR_TEST(test_all_land),
		DIR_TEST(test_none_land),
		DIR_TEST(test_held_lock),
		DIR_TEST(test_held_locks),
		DIR_TEST(test_keep_as),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
