#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "error.h"
#include "forge.h"

#include "messages.h"

#define MARKER "<!-- git-kopt review -->"

static int find(struct kopt_forge_comment *c, const char *json)
{
	return kopt_forge_find_comment(c, json, strlen(json), MARKER);
}

static void test_find_comment(void **state)
{
	struct kopt_forge_comment c = KOPT_FORGE_COMMENT_INIT;

	(void)state;
	assert_int_equal(find(&c, "[]"), KOPT_ENOTFOUND);
	assert_int_equal(find(&c, "[{\"id\": 1, \"body\": \"LGTM\"}]"),
			 KOPT_ENOTFOUND);
	/* a quote of the marker is someone else's comment */
	assert_int_equal(find(&c, "[{\"id\": 1, \"body\": \"> " MARKER
			      "\\n> x\"}]"), KOPT_ENOTFOUND);
	assert_int_equal(find(&c, "[{\"id\": 1, \"body\": \"LGTM\"},"
			      "{\"id\": 2, \"body\": \"\\r\\n" MARKER "\\nold\","
			      "\"html_url\": \"https://h/p#2\"},"
			      "{\"id\": 3, \"body\": \"" MARKER "\\nnewer\"}]"),
			 0);
	assert_true(c.id == 2);
	assert_string_equal(c.body.buf, "\r\n" MARKER "\nold");
	assert_string_equal(c.url.buf, "https://h/p#2");
	/* GitLab notes: no html_url; ids beyond 32 bits */
	assert_int_equal(find(&c, "[{\"id\": 8589934593, \"body\": \"" MARKER
			      "\", \"system\": false}]"), 0);
	assert_true(c.id == 8589934593ULL);
	assert_string_equal(c.url.buf, "");
	kopt_forge_comment_release(&c);
}

static void test_find_comment_bad_answers(void **state)
{
	struct kopt_forge_comment c = KOPT_FORGE_COMMENT_INIT;

	(void)state;
	assert_int_equal(find(&c, ""), KOPT_EINVALID);
	assert_int_equal(find(&c, "{\"message\": \"Not Found\"}"),
			 KOPT_EINVALID);
	assert_int_equal(find(&c, "[{\"id\": 1, \"body\": "), KOPT_EINVALID);
	/* entries that are not comments are skipped */
	assert_int_equal(find(&c, "[1, null, \"" MARKER "\", "
			      "{\"id\": -4, \"body\": \"" MARKER "\"},"
			      "{\"id\": 1.5, \"body\": \"" MARKER "\"},"
			      "{\"id\": \"7\", \"body\": \"" MARKER "\"},"
			      "{\"id\": 7, \"body\": 5}]"), KOPT_ENOTFOUND);
	kopt_forge_comment_release(&c);
}

static int event(unsigned long *n, const char *json)
{
	return kopt_forge_event_number(n, json, strlen(json));
}

static void test_event_number(void **state)
{
	unsigned long n = 0;

	(void)state;
	assert_int_equal(event(&n, "{\"number\": 7, \"pull_request\": "
			       "{\"number\": 7}}"), 0);
	assert_true(n == 7);
	assert_int_equal(event(&n, "{\"pull_request\": {\"number\": 12}}"),
			 0);
	assert_true(n == 12);
	assert_int_equal(event(&n, "{\"ref\": \"refs/heads/main\"}"),
			 KOPT_ENOTFOUND);
	/* an issue's number is no pull request's */
	assert_int_equal(event(&n, "{\"number\": 5}"), KOPT_ENOTFOUND);
	assert_int_equal(event(&n, "{\"pull_request\": {\"number\": -1}}"),
			 KOPT_EINVALID);
	assert_int_equal(event(&n, "[1]"), KOPT_EINVALID);
	assert_int_equal(event(&n, "not json"), KOPT_EINVALID);
}

static void unset_ci(void)
{
	static const char *const vars[] = {
		"GITHUB_ACTIONS", "GITHUB_REPOSITORY", "GITHUB_EVENT_PATH",
		"GITHUB_REF", "GITHUB_API_URL", "GITHUB_TOKEN", "GITLAB_CI",
		"CI_PROJECT_ID", "CI_MERGE_REQUEST_IID", "CI_API_V4_URL",
		"GITLAB_TOKEN",
	};
	size_t i;

	for (i = 0; i < KOPT_ARRAY_SIZE(vars); i++)
		unsetenv(vars[i]);
}

static void test_resolve_from_github_ref(void **state)
{
	struct kopt_forge f = KOPT_FORGE_INIT;
	struct kopt_forge_opts o = { 0 };
	struct kopt_buf sb = KOPT_BUF_INIT;

	(void)state;
	unset_ci();
	setenv("GITHUB_ACTIONS", "true", 1);
	setenv("GITHUB_REPOSITORY", "octo/k", 1);
	setenv("GITHUB_REF", "refs/pull/31/merge", 1);
	assert_int_equal(kopt_forge_resolve(&f, &o), 0);
	assert_int_equal(f.kind, KOPT_FORGE_GITHUB);
	assert_string_equal(f.api_url, "https://api.github.com");
	assert_true(f.number == 31);
	assert_false(f.have_token);
	kopt_forge_describe(&f, &sb);
	assert_string_equal(sb.buf, "octo/k#31");
	kopt_forge_release(&f);

	/* options win over the environment */
	o.project = "other/one";
	o.number = "4";
	o.api_url = "https://ghe.example/api/v3///";
	setenv("GITHUB_TOKEN", "tok", 1);
	o.need_token = 1;
	assert_int_equal(kopt_forge_resolve(&f, &o), 0);
	assert_string_equal(f.api_url, "https://ghe.example/api/v3");
	assert_string_equal(f.project, "other/one");
	assert_true(f.number == 4);
	assert_true(f.have_token);
	assert_string_equal(messages.buf, "");
	kopt_forge_release(&f);
	kopt_buf_release(&sb);
	unset_ci();
}

static void test_resolve_refusals(void **state)
{
	struct kopt_forge f = KOPT_FORGE_INIT;
	struct kopt_forge_opts o = { 0 };

	(void)state;
	unset_ci();
	o.forge = "gitlab";
	o.project = "a/../b";
	o.number = "1";
	assert_int_equal(kopt_forge_resolve(&f, &o), KOPT_EINVALID);
	assert_string_equal(messages.buf, "error: bad project 'a/../b'; "
			    "expected a project id or <group>/<name>\n");
	kopt_buf_reset(&messages);
	o.project = "a/b";
	setenv("GITLAB_TOKEN", "x\r\nX-Evil: 1", 1);
	assert_int_equal(kopt_forge_resolve(&f, &o), KOPT_EINVALID);
	assert_string_equal(messages.buf, "error: the token in GITLAB_TOKEN "
			    "holds a line break\n");
	kopt_forge_release(&f);
	unset_ci();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		MESSAGES_TEST(test_find_comment),
		MESSAGES_TEST(test_find_comment_bad_answers),
		MESSAGES_TEST(test_event_number),
		MESSAGES_TEST(test_resolve_from_github_ref),
		MESSAGES_TEST(test_resolve_refusals),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
