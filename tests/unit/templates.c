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

#include "lockfile.h"
#include "templates.h"

#include "messages.h"

static void test_expand(void **state)
{
	const char *vars[] = { "kernel", "mla-decode", "empty", NULL, NULL };
	struct kopt_buf out = KOPT_BUF_INIT;

	(void)state;
	assert_int_equal(kopt_templates_expand(&out, "# {{kernel}}\n{{empty}}"
					       "|{{kernel}}{}\n", "t.md", vars),
			 0);
	assert_string_equal(out.buf, "# mla-decode\n|mla-decode{}\n");
	assert_string_equal(messages.buf, "");
	kopt_buf_reset(&out);
	assert_int_equal(kopt_templates_expand(&out, "{{missing}}", "t.md",
					       vars), KOPT_EINVALID);
	kopt_buf_reset(&out);
	assert_int_equal(kopt_templates_expand(&out, "a {{kernel", "t.md",
					       vars), KOPT_EINVALID);
	assert_string_equal(messages.buf,
		"error: t.md: no value for '{{missing}}' in the template\n"
		"error: t.md: unclosed '{{' in the template\n");
	kopt_buf_release(&out);
}

/* The share dirs: the environment wins, else the source tree. */
static void test_share_dir_and_list(void **state)
{
	char dir[64], path[128];
	struct kopt_strvec files = KOPT_STRVEC_INIT;
	struct kopt_buf text = KOPT_BUF_INIT;
	char *found = NULL;

	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/kopt-tmpl-XXXXXX");
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/b/.hidden", dir);
	assert_int_equal(kopt_write_file_atomic(path, "h", 1, 0644), 0);
	snprintf(path, sizeof(path), "%s/a.md", dir);
	assert_int_equal(kopt_write_file_atomic(path, "{{x}}", 5, 0644), 0);
	snprintf(path, sizeof(path), "%s/B.md", dir);
	assert_int_equal(kopt_write_file_atomic(path, "B", 1, 0644), 0);

	setenv(KOPT_TEMPLATE_ENV, dir, 1);
	assert_int_equal(kopt_share_dir(&found, "templates", KOPT_TEMPLATE_ENV),
			 0);
	assert_string_equal(found, dir);
	assert_int_equal(kopt_templates_read(&text, "a.md"), 0);
	assert_string_equal(text.buf, "{{x}}");
	assert_int_equal(kopt_templates_list(&files, found), 0);
	assert_int_equal(files.nr, 3);
	assert_string_equal(files.v[0], "B.md");
	assert_string_equal(files.v[1], "a.md");
	assert_string_equal(files.v[2], "b/.hidden");
	unsetenv(KOPT_TEMPLATE_ENV);
	free(found);
	found = NULL;
	assert_int_equal(kopt_share_dir(&found, "templates", KOPT_TEMPLATE_ENV),
			 0);
	assert_non_null(strstr(found, "templates"));
	free(found);
	snprintf(path, sizeof(path), "rm -rf '%s'", dir);
	assert_int_equal(system(path), 0);
	kopt_strvec_clear(&files);
	kopt_buf_release(&text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		MESSAGES_TEST(test_expand),
		MESSAGES_TEST(test_share_dir_and_list),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
