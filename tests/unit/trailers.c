#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include <git2.h>

#include "trailers.h"

static void test_trailers(void **state)
{
	struct kopt_trailers t = KOPT_TRAILERS_INIT;
	const char *msg =
		"Verify mla-decode v3\n\n"
		"Body text.\n\n"
		"Kopt-Kernel: mla-decode\n"
		"Kopt-Version: v3\n"
		"kopt-verdict: regression\n"
		"# Please enter the commit message\n"
		"# ------------------------ >8 ------------------------\n"
		"Kopt-Step: not-this-one\n";

	(void)state;
	assert_int_equal(kopt_trailers_parse(&t, msg, '#'), 0);
	assert_int_equal(t.nr, 3);
	assert_string_equal(kopt_trailers_get(&t, "Kopt-Kernel"), "mla-decode");
	assert_string_equal(kopt_trailers_get(&t, "KOPT-VERDICT"), "regression");
	assert_null(kopt_trailers_get(&t, "Kopt-Step"));
	kopt_trailers_release(&t);

	/* not the last paragraph: no trailers */
	assert_int_equal(kopt_trailers_parse(&t, "Subject\n\nKopt-Step: design"
					     "\n\nMore text.\n", '#'), 0);
	assert_int_equal(t.nr, 0);
	kopt_trailers_release(&t);
}

/* The trailers as `git interpret-trailers --parse` prints them. */
static void expect_parse(const char *msg, int comment_char, const char *want)
{
	struct kopt_trailers t = KOPT_TRAILERS_INIT;
	struct kopt_buf got = KOPT_BUF_INIT;

	assert_int_equal(kopt_trailers_parse(&t, msg, comment_char), 0);
	kopt_trailers_format(&got, &t);
	if (strcmp(got.buf, want))
		fail_msg("trailers of:\n%s\ngot:\n%s\nwant:\n%s", msg, got.buf,
			 want);
	kopt_trailers_release(&t);
	kopt_buf_release(&got);
}

/*
 * Dividers and patches: what git 2.39 prints for each message (after
 * `git stripspace --strip-comments`).  libgit2 ended the message at any
 * line starting with "---"; git ends it only at "---" and white space.
 */
static void test_parse_as_git(void **state)
{
	(void)state;
	/* a patch below the divider is not the message */
	expect_parse("Subject\n\nBody\n\nKopt-Step: design\n---\n"
		     " a/b | 2 +-\n", '#', "Kopt-Step: design\n");
	expect_parse("Subject\n\nKopt-Step: design\n---\tx\n", '#',
		     "Kopt-Step: design\n");
	expect_parse("Subject\n\nKopt-Step: design\n--- \n", '#',
		     "Kopt-Step: design\n");
	expect_parse("Subject\n\nKopt-Step: design\n\n---\n\n"
		     "Kopt-Verdict: neutral\n", '#', "Kopt-Step: design\n");
	/* the divider ends a line; cleaned up, "---" at the end is one */
	expect_parse("Subject\n\nKopt-Step: design\n---", '#',
		     "Kopt-Step: design\n");
	/* "----" and "---x" are text, in the trailer block or above it */
	expect_parse("Subject\n\nBody\n\nKopt-Step: design\n----\n", '#',
		     "");
	expect_parse("Subject\n\nBody\n---not a divider\n\n"
		     "Kopt-Step: design\n", '#', "Kopt-Step: design\n");
	expect_parse("Subject\n\nBody\n\n-----\nKopt-Step: design\n", '#',
		     "");
	/* a key may start with dashes */
	expect_parse("Subject\n\n---foo: bar\nKopt-Step: design\n", '#',
		     "---foo: bar\nKopt-Step: design\n");
	/* a divider in the title leaves no message to read */
	expect_parse("---\n\nKopt-Step: design\n", '#', "");
	expect_parse("Subject\n---\nKopt-Step: design\n", '#', "");
	/* a patch as format-patch writes it */
	expect_parse("From 123 Mon Sep 17 00:00:00 2001\nFrom: A <a@b>\n"
		     "Subject: [PATCH] x\n\nBody\n\nKopt-Step: verify\n"
		     "Signed-off-by: A <a@b>\n---\n f | 1 +\n"
		     " 1 file changed\n\ndiff --git a/f b/f\n--- a/f\n"
		     "+++ b/f\n@@ -0,0 +1 @@\n+x\n", '#',
		     "Kopt-Step: verify\nSigned-off-by: A <a@b>\n");
	/* folded values are unfolded; white space before the colon */
	expect_parse("Subject\n\nKopt-Step: design\n  continued here\n"
		     "Kopt-Kernel: k\n", '#',
		     "Kopt-Step: design continued here\nKopt-Kernel: k\n");
	expect_parse("Subject\n\nBody\n\nKopt-Step : design\n"
		     "Kopt-Kernel:k\n", '#',
		     "Kopt-Step: design\nKopt-Kernel: k\n");
	/* a quarter trailers is enough with one of git's own */
	expect_parse("Subject\n\nText\nKopt-Step: design\n"
		     "Signed-off-by: x\nmore text\nmore\n", '#',
		     "Kopt-Step: design\nSigned-off-by: x\n");
	expect_parse("Subject\n\nText\nKopt-Step: design\n", '#', "");
	/* an old conflicts list below the trailers is not in the block */
	expect_parse("Merge x\n\nKopt-Step: learn\nConflicts:\n\ta.c\n", 0,
		     "Kopt-Step: learn\n");
	/* CRLF */
	expect_parse("Subject\r\n\r\nKopt-Step: design\r\n---\r\n", '#',
		     "Kopt-Step: design\n");
}

static void test_add_trailers(void **state)
{
	struct kopt_buf msg = KOPT_BUF_INIT;
	struct kopt_trailers t = KOPT_TRAILERS_INIT;

	(void)state;
	kopt_trailers_add(&t, KOPT_TRAILER_STEP, "design");
	kopt_buf_addstr(&msg, "Design v1\n\nWhy.\n\n");
	kopt_message_add_trailers(&msg, &t);
	assert_string_equal(msg.buf, "Design v1\n\nWhy.\n\nKopt-Step: design\n");
	/* a message ending in trailers gets them in the same block */
	kopt_trailers_release(&t);
	kopt_trailers_add(&t, KOPT_TRAILER_VERDICT, "neutral");
	kopt_message_add_trailers(&msg, &t);
	assert_string_equal(msg.buf, "Design v1\n\nWhy.\n\nKopt-Step: design\n"
			    "Kopt-Verdict: neutral\n");
	kopt_trailers_release(&t);

	/* above a patch, as `git interpret-trailers --trailer` puts them */
	kopt_buf_reset(&msg);
	kopt_buf_addstr(&msg, "Subject\n\nBody\n---\n a | 1 +\n");
	kopt_trailers_add(&t, KOPT_TRAILER_STEP, "design");
	kopt_message_add_trailers(&msg, &t);
	assert_string_equal(msg.buf, "Subject\n\nBody\n\nKopt-Step: design\n"
			    "---\n a | 1 +\n");
	kopt_trailers_release(&t);
	kopt_trailers_add(&t, KOPT_TRAILER_KERNEL, "k");
	kopt_message_add_trailers(&msg, &t);
	assert_string_equal(msg.buf, "Subject\n\nBody\n\nKopt-Step: design\n"
			    "Kopt-Kernel: k\n---\n a | 1 +\n");
	kopt_trailers_release(&t);
	/* "----" is text: the trailers go below it, after a blank line */
	kopt_buf_reset(&msg);
	kopt_buf_addstr(&msg, "Subject\n\nBody\n----\n");
	kopt_trailers_add(&t, KOPT_TRAILER_STEP, "design");
	kopt_message_add_trailers(&msg, &t);
	assert_string_equal(msg.buf, "Subject\n\nBody\n----\n\n"
			    "Kopt-Step: design\n");
	kopt_trailers_release(&t);
	kopt_buf_release(&msg);
}

static void test_cleanup(void **state)
{
	struct kopt_buf out = KOPT_BUF_INIT;

	(void)state;
	kopt_message_cleanup(&out, "\n\nSubject  \n# comment\n\n\n\nBody\n\n",
			     '#');
	assert_string_equal(out.buf, "Subject\n\nBody\n");
	kopt_buf_release(&out);
}

static const char *skip_of(const char *msg)
{
	static char reason[128];
	struct kopt_trailers t = KOPT_TRAILERS_INIT;
	const char *r;

	assert_int_equal(kopt_trailers_parse(&t, msg, 0), 0);
	r = kopt_trailers_learn_skip(&t);
	if (r) {
		assert_true(strlen(r) < sizeof(reason));
		memcpy(reason, r, strlen(r) + 1);
	}
	kopt_trailers_release(&t);
	return r ? reason : NULL;
}

/*
 * One rule for `Kopt-Learn: skip`: the gate's.  Status once needed the
 * key's exact case, review and the obligations took a skip without a
 * reason.
 */
static void test_learn_skip(void **state)
{
	(void)state;
	assert_string_equal(skip_of("S\n\nKopt-Learn: skip known slow\n"),
			    "known slow");
	assert_string_equal(skip_of("S\n\nkopt-learn: skip  tab\tok\n"),
			    "tab\tok");
	assert_string_equal(skip_of("S\n\nKOPT-LEARN: skip why\n"), "why");
	assert_null(skip_of("S\n\nKopt-Learn: skip\n"));
	assert_null(skip_of("S\n\nKopt-Learn: skip   \n"));
	assert_null(skip_of("S\n\nKopt-Learn: skipped it\n"));
	assert_null(skip_of("S\n\nKopt-Learn: later\n"));
	assert_null(skip_of("S\n\nno trailers here\n"));
}

static void test_add_step(void **state)
{
	struct kopt_trailers t = KOPT_TRAILERS_INIT;
	struct kopt_buf out = KOPT_BUF_INIT;

	(void)state;
	kopt_trailers_add_step(&t, "k", "v2", KOPT_STEP_VERIFY);
	kopt_trailers_format(&out, &t);
	assert_string_equal(out.buf, "Kopt-Kernel: k\nKopt-Version: v2\n"
			    "Kopt-Step: verify\n");
	assert_int_equal(kopt_step_parse("learn"), KOPT_STEP_LEARN);
	assert_int_equal(kopt_step_parse("Learn"), KOPT_STEP_NONE);
	kopt_trailers_release(&t);
	kopt_buf_release(&out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_trailers),
		cmocka_unit_test(test_parse_as_git),
		cmocka_unit_test(test_add_trailers),
		cmocka_unit_test(test_cleanup),
		cmocka_unit_test(test_learn_skip),
		cmocka_unit_test(test_add_step),
	};
	int ret;

	git_libgit2_init();
	ret = cmocka_run_group_tests(tests, NULL, NULL);
	git_libgit2_shutdown();
	return ret;
}
