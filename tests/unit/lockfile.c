#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "buf.h"
#include "error.h"
#include "lockfile.h"

#include "messages.h"

static char dir[] = "/tmp/kopt-lock-XXXXXX";

static char *at(const char *rel)
{
	return kopt_xstrfmt("%s/%s", dir, rel);
}

static void write_plain(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void assert_content(const char *path, const char *text)
{
	struct kopt_buf sb = KOPT_BUF_INIT;

	assert_int_equal(kopt_buf_read_file(&sb, path), 0);
	assert_string_equal(sb.buf, text);
	kopt_buf_release(&sb);
}

static int exists(const char *path)
{
	return !access(path, F_OK);
}

static void test_replace_is_atomic(void **state)
{
	struct kopt_lock lk = KOPT_LOCK_INIT;
	char *path = at("settings"), *lock = at("settings.lock");
	struct stat st;

	(void)state;
	write_plain(path, "old\n");
	chmod(path, 0600);
	assert_int_equal(kopt_lock_acquire(&lk, path), 0);
	assert_true(exists(lock));
	assert_int_equal(kopt_lock_write(&lk, "new ", 4), 0);
	assert_int_equal(kopt_lock_write(&lk, "content\n", 8), 0);
	/* a reader sees the old file until the commit */
	assert_content(path, "old\n");
	assert_int_equal(kopt_lock_commit(&lk), 0);
	assert_content(path, "new content\n");
	assert_false(exists(lock));
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	/* rolling back a committed lock is harmless */
	kopt_lock_rollback(&lk);
	assert_content(path, "new content\n");
	assert_string_equal(messages.buf, "");
	free(path);
	free(lock);
}

static void test_second_writer_is_locked_out(void **state)
{
	struct kopt_lock a = KOPT_LOCK_INIT, b = KOPT_LOCK_INIT;
	char *path = at("shared"), *msg;

	(void)state;
	assert_int_equal(kopt_lock_acquire(&a, path), 0);
	assert_int_equal(kopt_lock_acquire(&b, path), KOPT_ELOCKED);
	msg = kopt_xstrfmt("error: cannot lock '%s': '%s.lock' exists; another "
			   "git kopt may be running, otherwise remove it\n",
			   path, path);
	assert_string_equal(messages.buf, msg);
	kopt_lock_rollback(&b);
	kopt_lock_rollback(&a);
	assert_int_equal(kopt_lock_acquire(&b, path), 0);
	kopt_lock_rollback(&b);
	free(msg);
	free(path);
}

static void test_waiting_for_a_lock(void **state)
{
	struct kopt_lock a = KOPT_LOCK_INIT, b = KOPT_LOCK_INIT;
	char *path = at("catalog"), *lock = at("catalog.lock");
	pid_t pid;
	int status;

	(void)state;
	/* held all along: one message after the wait */
	assert_int_equal(kopt_lock_acquire(&a, path), 0);
	kopt_buf_reset(&messages);
	assert_int_equal(kopt_lock_acquire_timeout(&b, path, 30), KOPT_ELOCKED);
	assert_true(kopt_starts_with(messages.buf, "error: cannot lock '"));
	assert_ptr_equal(strchr(messages.buf, '\n'),
			 messages.buf + messages.len - 1);
	kopt_lock_rollback(&b);
	kopt_lock_rollback(&a);

	/* let go of by another process while we wait: ours */
	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		struct timespec ts = { 0, 200 * 1000000L };
		int fd = open(lock, O_WRONLY | O_CREAT | O_EXCL, 0666);
		if (fd < 0)
			_exit(1);
		nanosleep(&ts, NULL);
		unlink(lock);
		_exit(0);
	}
	for (status = 0; !exists(lock) && status < 2000; status++) {
		struct timespec ms = { 0, 1000000L };
		nanosleep(&ms, NULL);
	}
	assert_true(exists(lock));
	assert_int_equal(kopt_lock_acquire_timeout(&b, path, 5000), 0);
	kopt_lock_rollback(&b);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_int_equal(status, 0);
	free(lock);
	free(path);
}

static void test_rollback_leaves_target(void **state)
{
	struct kopt_lock lk = KOPT_LOCK_INIT, never = KOPT_LOCK_INIT;
	char *path = at("kept"), *lock = at("kept.lock");

	(void)state;
	write_plain(path, "original\n");
	assert_int_equal(kopt_lock_acquire(&lk, path), 0);
	assert_int_equal(kopt_lock_write(&lk, "half", 4), 0);
	kopt_lock_rollback(&lk);
	assert_content(path, "original\n");
	assert_false(exists(lock));
	kopt_lock_rollback(&never);
	free(path);
	free(lock);
}

static void test_write_file_atomic_makes_parents(void **state)
{
	char *path = at("a/b/c/file.md");
	struct stat st;

	(void)state;
	assert_int_equal(kopt_write_file_atomic(path, "# x\n", 4, 0755), 0);
	assert_content(path, "# x\n");
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0755);
	assert_int_equal(kopt_write_file_atomic(path, "# y\n", 4, 0), 0);
	assert_content(path, "# y\n");
	free(path);
}

static void test_file_in_the_way(void **state)
{
	char *file = at("plain"), *path = at("plain/sub/x"), *msg;
	char *sub = at("plain/sub");

	(void)state;
	write_plain(file, "I am a file\n");
	assert_int_equal(kopt_write_file_atomic(path, "x", 1, 0), -1);
	msg = kopt_xstrfmt("error: cannot create directory '%s': Not a "
			   "directory\n", sub);
	assert_string_equal(messages.buf, msg);
	assert_content(file, "I am a file\n");
	free(msg);
	free(file);
	free(sub);
	free(path);
}

static void test_missing_directory(void **state)
{
	struct kopt_lock lk = KOPT_LOCK_INIT;
	char *path = at("nowhere/file"), *msg;

	(void)state;
	assert_int_equal(kopt_lock_acquire(&lk, path), -1);
	msg = kopt_xstrfmt("error: cannot create '%s.lock': No such file or "
			   "directory\n", path);
	assert_string_equal(messages.buf, msg);
	kopt_lock_rollback(&lk);
	free(msg);
	free(path);
}

static void test_read_file(void **state)
{
	struct kopt_buf sb = KOPT_BUF_INIT;
	char *file = at("read-me"), *sub = at("read-dir"), *none = at("absent");
	char *msg;

	(void)state;
	write_plain(file, "two\n");
	kopt_buf_addstr(&sb, "one\n");
	assert_int_equal(kopt_read_file(&sb, file, NULL), 0);
	assert_string_equal(sb.buf, "one\ntwo\n");
	/* missing: not an error here, the caller decides */
	assert_int_equal(kopt_read_file(&sb, none, NULL),
			 KOPT_ENOTFOUND);
	assert_string_equal(messages.buf, "");
	/* a directory opens but does not read: reported, buffer kept */
	assert_int_equal(mkdir(sub, 0755), 0);
	assert_int_equal(kopt_read_file(&sb, sub, "the label"), -1);
	msg = kopt_xstrfmt("error: cannot read 'the label': Is a directory\n");
	assert_string_equal(messages.buf, msg);
	assert_string_equal(sb.buf, "one\ntwo\n");
	kopt_buf_release(&sb);
	free(msg);
	free(file);
	free(sub);
	free(none);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		MESSAGES_TEST(test_replace_is_atomic),
		MESSAGES_TEST(test_second_writer_is_locked_out),
		MESSAGES_TEST(test_waiting_for_a_lock),
		MESSAGES_TEST(test_rollback_leaves_target),
		MESSAGES_TEST(test_write_file_atomic_makes_parents),
		MESSAGES_TEST(test_file_in_the_way),
		MESSAGES_TEST(test_missing_directory),
		MESSAGES_TEST(test_read_file),
	};
	struct kopt_buf cmd = KOPT_BUF_INIT;
	int ret;

	if (!mkdtemp(dir))
		return 1;
	ret = cmocka_run_group_tests(tests, NULL, NULL);
	kopt_buf_addf(&cmd, "rm -rf '%s'", dir);
	if (system(cmd.buf))
		ret = 1;
	kopt_buf_release(&cmd);
	return ret;
}
