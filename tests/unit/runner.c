#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <signal.h>
#include <string.h>

#include "buf.h"
#include "error.h"
#include "runner.h"

#include "messages.h"

static void sh(struct kopt_child *c, const char *script)
{
	kopt_strvec_push(&c->args, "sh");
	kopt_strvec_push(&c->args, "-c");
	kopt_strvec_push(&c->args, script);
}

static void describe_is(const struct kopt_child *c, const char *want)
{
	struct kopt_buf sb = KOPT_BUF_INIT;

	kopt_child_describe(c, &sb);
	assert_string_equal(sb.buf, want);
	kopt_buf_release(&sb);
}

static void test_exit_code(void **state)
{
	struct kopt_child c = KOPT_CHILD_INIT;

	(void)state;
	sh(&c, "exit 3");
	assert_int_equal(kopt_child_run(&c), 0);
	assert_int_equal(c.exit_code, 3);
	assert_int_equal(c.signal, 0);
	assert_false(c.timed_out);
	describe_is(&c, "exit code 3");
	kopt_child_release(&c);

	sh(&c, "true");
	assert_int_equal(kopt_child_run(&c), 0);
	assert_int_equal(c.exit_code, 0);
	kopt_child_release(&c);
}

static void test_signal(void **state)
{
	struct kopt_child c = KOPT_CHILD_INIT;

	(void)state;
	sh(&c, "kill -SEGV $$");
	assert_int_equal(kopt_child_run(&c), 0);
	assert_int_equal(c.exit_code, -1);
	assert_int_equal(c.signal, SIGSEGV);
	assert_false(c.timed_out);
	describe_is(&c, "killed by signal 11 (Segmentation fault)");
	kopt_child_release(&c);
}

static void test_timeout_kills_the_group(void **state)
{
	struct kopt_child c = KOPT_CHILD_INIT;

	(void)state;
	/* a grandchild holding the pipe open must not keep us waiting */
	sh(&c, "sleep 30 & echo started; sleep 30");
	c.flags = KOPT_CHILD_CAPTURE_OUT;
	c.timeout_ms = 300;
	assert_int_equal(kopt_child_run(&c), 0);
	assert_true(c.timed_out);
	assert_int_equal(c.signal, SIGKILL);
	assert_true(c.wall_s >= 0.3 && c.wall_s < 5);
	assert_string_equal(c.out.buf, "started\n");
	describe_is(&c, "timed out after 0.3 s");
	kopt_child_release(&c);

	sh(&c, "exit 0");
	c.timeout_ms = 5000;
	assert_int_equal(kopt_child_run(&c), 0);
	assert_false(c.timed_out);
	assert_true(c.wall_s < 5);
	kopt_child_release(&c);
}

static void test_capture(void **state)
{
	struct kopt_child c = KOPT_CHILD_INIT;
	size_t i;

	(void)state;
	sh(&c, "echo to-out; echo to-err >&2; printf 'no newline'");
	c.flags = KOPT_CHILD_CAPTURE_OUT | KOPT_CHILD_CAPTURE_ERR;
	assert_int_equal(kopt_child_run(&c), 0);
	assert_string_equal(c.out.buf, "to-out\nno newline");
	assert_string_equal(c.err.buf, "to-err\n");
	kopt_child_release(&c);

	/* more than a pipe holds, on both streams at once */
	sh(&c, "i=0; while [ $i -lt 20000 ]; do echo 0123456789abcdef; "
	   "echo fedcba9876543210 >&2; i=$((i+1)); done");
	c.flags = KOPT_CHILD_CAPTURE_OUT | KOPT_CHILD_CAPTURE_ERR;
	assert_int_equal(kopt_child_run(&c), 0);
	assert_int_equal(c.exit_code, 0);
	assert_int_equal(c.out.len, 20000 * 17);
	assert_int_equal(c.err.len, 20000 * 17);
	for (i = 0; i < c.out.len; i += 17)
		assert_memory_equal(c.out.buf + i, "0123456789abcdef\n", 17);
	kopt_child_release(&c);
}

static void test_env_dir_and_stdin(void **state)
{
	struct kopt_child c = KOPT_CHILD_INIT;

	(void)state;
	sh(&c, "echo \"$KOPT_TEST_VALUE\"; pwd; cat");
	kopt_strvec_push(&c.env, "KOPT_TEST_VALUE=a b;c");
	c.dir = "/";
	c.flags = KOPT_CHILD_CAPTURE_OUT | KOPT_CHILD_NO_STDIN;
	assert_int_equal(kopt_child_run(&c), 0);
	assert_string_equal(c.out.buf, "a b;c\n/\n");
	kopt_child_release(&c);
}

static void test_arguments_are_not_a_shell_line(void **state)
{
	struct kopt_child c = KOPT_CHILD_INIT;

	(void)state;
	kopt_strvec_push(&c.args, "printf");
	kopt_strvec_push(&c.args, "%s|");
	kopt_strvec_push(&c.args, "$(echo no)");
	kopt_strvec_push(&c.args, "a; b");
	c.flags = KOPT_CHILD_CAPTURE_OUT;
	assert_int_equal(kopt_child_run(&c), 0);
	assert_string_equal(c.out.buf, "$(echo no)|a; b|");
	kopt_child_release(&c);

	/* the user's own configured command line goes through the shell */
	kopt_strvec_push(&c.args, "echo abc | tr a x");
	c.flags = KOPT_CHILD_CAPTURE_OUT | KOPT_CHILD_SHELL;
	assert_int_equal(kopt_child_run(&c), 0);
	assert_string_equal(c.out.buf, "xbc\n");
	kopt_child_release(&c);
}

static void test_cannot_run(void **state)
{
	struct kopt_child c = KOPT_CHILD_INIT;

	(void)state;
	kopt_strvec_push(&c.args, "/nonexistent/kopt-program");
	c.flags = KOPT_CHILD_CAPTURE_ERR;
	assert_int_equal(kopt_child_run(&c), 0);
	assert_int_equal(c.exit_code, 127);
	assert_string_equal(c.err.buf, "fatal: cannot run "
			    "'/nonexistent/kopt-program': No such file or "
			    "directory\n");
	kopt_child_release(&c);

	assert_int_equal(kopt_child_run(&c), -1);
	assert_string_equal(messages.buf, "error: no command to run\n");
	kopt_child_release(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		MESSAGES_TEST(test_exit_code),
		MESSAGES_TEST(test_signal),
		MESSAGES_TEST(test_timeout_kills_the_group),
		MESSAGES_TEST(test_capture),
		MESSAGES_TEST(test_env_dir_and_stdin),
		MESSAGES_TEST(test_arguments_are_not_a_shell_line),
		MESSAGES_TEST(test_cannot_run),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
