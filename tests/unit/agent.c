#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent.h"
#include "buf.h"
#include "cycle.h"
#include "error.h"
#include "lockfile.h"
#include "messages.h"

static char dir[] = "/tmp/kopt-agent-XXXXXX";

static git_repository *repo_with(const char *config)
{
	git_repository *repo = NULL;
	git_config *cfg = NULL;
	char *path = kopt_xstrfmt("%s/repo", dir);
	char *file;

	assert_int_equal(git_repository_init(&repo, path, 0), 0);
	file = kopt_xstrfmt("%s/repo/.git/config", dir);
	if (config) {
		FILE *f = fopen(file, "a");
		assert_non_null(f);
		fputs(config, f);
		fclose(f);
	}
	git_repository_free(repo);
	assert_int_equal(git_repository_open(&repo, path), 0);
	git_config_free(cfg);
	free(file);
	free(path);
	return repo;
}

static int setup(void **state)
{
	char cmd[128];

	git_libgit2_init();
	snprintf(cmd, sizeof(cmd), "rm -rf %s/repo", dir);
	if (system(cmd))
		return -1;
	/* no user or system config may change what a lookup finds */
	setenv("HOME", dir, 1);
	setenv("GIT_CONFIG_NOSYSTEM", "1", 1);
	return catch_messages(state);
}

static void test_lookup(void **state)
{
	git_repository *repo = repo_with(
		"[kopt]\n\tagent = fast\n"
		"[kopt \"agent.fast\"]\n\tcommand = ./fast --go\n\ttimeout = 90\n"
		"[kopt \"agent.bad\"]\n\tcommand = x\n\ttimeout = soon\n");
	struct kopt_agent a = KOPT_AGENT_INIT;

	(void)state;
	assert_int_equal(kopt_agent_lookup(&a, repo, NULL), 0);
	assert_string_equal(a.name, "fast");
	assert_int_equal(a.kind, KOPT_AGENT_COMMAND);
	assert_string_equal(a.command, "./fast --go");
	assert_int_equal(a.timeout_s, 90);
	kopt_agent_release(&a);
	assert_int_equal(kopt_agent_lookup(&a, repo, "claude"), 0);
	assert_int_equal(a.kind, KOPT_AGENT_CLAUDE);
	assert_int_equal(a.timeout_s, KOPT_AGENT_DEFAULT_TIMEOUT_S);
	kopt_agent_release(&a);
	assert_int_equal(kopt_agent_lookup(&a, repo, "nobody"), KOPT_ENOTFOUND);
	assert_int_equal(kopt_agent_lookup(&a, repo, "bad"), -1);
	assert_int_equal(kopt_agent_lookup(&a, repo, "Bad Name"), -1);
	assert_string_equal(messages.buf,
		"error: no agent 'nobody': set 'git config kopt.agent.nobody.command <command>'\n"
		"error: 'kopt.agent.bad.timeout' is 'soon', not a number of seconds\n"
		"error: 'Bad Name' is not an agent name ([a-z0-9][a-z0-9_.-]*)\n");
	git_repository_free(repo);
}

static void test_default_is_claude(void **state)
{
	git_repository *repo = repo_with(NULL);
	struct kopt_agent a = KOPT_AGENT_INIT;
	struct kopt_strvec argv = KOPT_STRVEC_INIT;
	struct kopt_agent_task t;

	(void)state;
	assert_int_equal(kopt_agent_lookup(&a, repo, NULL), 0);
	assert_string_equal(a.name, "claude");
	memset(&t, 0, sizeof(t));
	t.prompt = "Create k v1 from v0.";
	kopt_agent_argv(&argv, &a, &t);
	assert_int_equal(argv.nr, 9);
	assert_string_equal(argv.v[0], "claude");
	assert_string_equal(argv.v[1], "-p");
	assert_string_equal(argv.v[2], "Create k v1 from v0.");
	assert_string_equal(argv.v[3], "--output-format");
	assert_string_equal(argv.v[4], "json");
	assert_string_equal(argv.v[5], "--allowedTools");
	assert_string_equal(argv.v[6], KOPT_AGENT_CLAUDE_TOOLS);
	assert_string_equal(argv.v[7], "--permission-mode");
	assert_string_equal(argv.v[8], "acceptEdits");
	kopt_strvec_clear(&argv);
	kopt_agent_release(&a);
	git_repository_free(repo);
}

static void run_agent(struct kopt_agent_answer *ans, const char *script,
		      int claude, int expect)
{
	struct kopt_agent a = KOPT_AGENT_INIT;
	struct kopt_agent_task t;
	char *path = kopt_xstrfmt("%s/agent.sh", dir);

	assert_int_equal(kopt_write_file_atomic(path, script, strlen(script),
						0755), 0);
	a.name = kopt_strdup("t");
	a.timeout_s = 5;
	if (claude) {
		a.kind = KOPT_AGENT_CLAUDE;
		a.program = kopt_strdup(path);
	} else {
		a.kind = KOPT_AGENT_COMMAND;
		a.command = kopt_xstrfmt("'%s' arg", path);
	}
	memset(&t, 0, sizeof(t));
	t.role = "designer";
	t.prompt = "do it";
	t.dir = dir;
	t.kernel = "k";
	t.version = "v2";
	t.from = "v1";
	t.version_dir = "kernels/k/v2";
	assert_int_equal(kopt_agent_run(ans, &a, &t), expect);
	kopt_agent_release(&a);
	free(path);
}

static void test_command_agent(void **state)
{
	struct kopt_agent_answer ans = KOPT_AGENT_ANSWER_INIT;

	(void)state;
	run_agent(&ans, "#!/bin/sh\n"
		  "echo \"$1 $KOPT_AGENT_ROLE $KOPT_KERNEL $KOPT_VERSION "
		  "$KOPT_FROM $KOPT_VERSION_DIR $KOPT_AGENT_PROMPT "
		  "$(cat \"$KOPT_AGENT_PROMPT_FILE\") $(pwd)\"\n"
		  "echo progress >&2\n", 0, 0);
	kopt_buf_trim(&ans.text);
	{
		char *want = kopt_xstrfmt("arg designer k v2 v1 kernels/k/v2 "
					  "do it do it %s", dir);
		assert_string_equal(ans.text.buf, want);
		free(want);
	}
	assert_string_equal(ans.err.buf, "progress\n");
	assert_string_equal(ans.why.buf, "");
	kopt_agent_answer_release(&ans);
}

static void test_claude_json(void **state)
{
	struct kopt_agent_answer ans = KOPT_AGENT_ANSWER_INIT;

	(void)state;
	run_agent(&ans, "#!/bin/sh\n[ \"$1\" = -p ] && [ \"$2\" = 'do it' ] "
		  "|| exit 5\nprintf '{\"type\":\"result\",\"is_error\":false,"
		  "\"result\":\"## New Version\\\\nok\"}'\n", 1, 0);
	assert_string_equal(ans.text.buf, "## New Version\nok");
	kopt_agent_answer_release(&ans);
	run_agent(&ans, "#!/bin/sh\nprintf '{\"type\":\"result\",\"is_error\""
		  ":true,\"result\":\"out of credit\"}'\n", 1, KOPT_EGENERIC);
	assert_string_equal(ans.why.buf,
			    "the agent reported an error: out of credit");
	kopt_agent_answer_release(&ans);
}

static void test_failures(void **state)
{
	struct kopt_agent_answer ans = KOPT_AGENT_ANSWER_INIT;

	(void)state;
	run_agent(&ans, "#!/bin/sh\nexit 4\n", 0, KOPT_EGENERIC);
	assert_string_equal(ans.why.buf, "agent 't' failed: exit code 4");
	kopt_agent_answer_release(&ans);
	run_agent(&ans, "#!/bin/sh\nkill -TERM $$\n", 0, KOPT_EGENERIC);
	assert_non_null(strstr(ans.why.buf, "agent 't' failed: "));
	kopt_agent_answer_release(&ans);
}

static void test_split_diff(void **state)
{
	struct kopt_buf diff = KOPT_BUF_INIT, rest = KOPT_BUF_INIT;

	(void)state;
	assert_int_equal(kopt_agent_split_diff(
		"Here.\n\n```diff\n--- a/x\n+++ b/x\n```\n\n## New Version: k v1\n",
		&diff, &rest), 0);
	assert_string_equal(diff.buf, "--- a/x\n+++ b/x\n");
	assert_string_equal(rest.buf, "Here.\n\n\n## New Version: k v1\n");
	kopt_buf_reset(&diff);
	kopt_buf_reset(&rest);
	assert_int_equal(kopt_agent_split_diff(
		"diff --git a/x b/x\n--- a/x\n+++ b/x\n## New Version: k v1\n",
		&diff, &rest), 0);
	assert_string_equal(diff.buf, "diff --git a/x b/x\n--- a/x\n+++ b/x\n");
	assert_string_equal(rest.buf, "## New Version: k v1\n");
	kopt_buf_reset(&diff);
	kopt_buf_reset(&rest);
	assert_int_equal(kopt_agent_split_diff("## New Version: k v1\n", &diff,
					       &rest), KOPT_ENOTFOUND);
	kopt_buf_release(&diff);
	kopt_buf_release(&rest);
}

static void test_apply_diff(void **state)
{
	git_repository *repo = repo_with(NULL);
	struct kopt_buf why = KOPT_BUF_INIT, text = KOPT_BUF_INIT;
	char *file = kopt_xstrfmt("%s/repo/kernels/k/v1/a.cu", dir);
	char *top = kopt_xstrfmt("%s/repo", dir);
	static const char good[] =
		"diff --git a/kernels/k/v1/a.cu b/kernels/k/v1/a.cu\n"
		"--- a/kernels/k/v1/a.cu\n+++ b/kernels/k/v1/a.cu\n"
		"@@ -1,2 +1,3 @@\n+// tiled\n one\n two\n";
	static const char outside[] =
		"diff --git a/kernels/k/v0/a.cu b/kernels/k/v0/a.cu\n"
		"--- a/kernels/k/v0/a.cu\n+++ b/kernels/k/v0/a.cu\n"
		"@@ -1,2 +1,3 @@\n+// tiled\n one\n two\n";
	static const char stale[] =
		"diff --git a/kernels/k/v1/a.cu b/kernels/k/v1/a.cu\n"
		"--- a/kernels/k/v1/a.cu\n+++ b/kernels/k/v1/a.cu\n"
		"@@ -1,2 +1,3 @@\n+// tiled\n uno\n dos\n";

	(void)state;
	assert_int_equal(kopt_mkdir_parents(file), 0);
	assert_int_equal(kopt_write_file_atomic(file, "one\ntwo\n", 8, 0644), 0);
	assert_int_equal(kopt_agent_apply_diff(top, "kernels/k/v1", outside,
					       sizeof(outside) - 1, &why), -1);
	assert_string_equal(why.buf, "the model's diff changes "
			    "'kernels/k/v0/a.cu', outside the version's "
			    "folder 'kernels/k/v1'");
	kopt_buf_reset(&why);
	assert_int_equal(kopt_agent_apply_diff(top, "kernels/k/v1", stale,
					       sizeof(stale) - 1, &why), -1);
	assert_non_null(strstr(why.buf, "the model's diff does not apply"));
	assert_int_equal(kopt_buf_read_file(&text, file), 0);
	assert_string_equal(text.buf, "one\ntwo\n");
	kopt_buf_reset(&why);
	assert_int_equal(kopt_agent_apply_diff(top, "kernels/k/v1", good,
					       sizeof(good) - 1, &why), 0);
	kopt_buf_reset(&text);
	assert_int_equal(kopt_buf_read_file(&text, file), 0);
	assert_string_equal(text.buf, "// tiled\none\ntwo\n");
	kopt_buf_release(&why);
	kopt_buf_release(&text);
	free(file);
	free(top);
	git_repository_free(repo);
}

static void test_durations(void **state)
{
	(void)state;
	assert_true(kopt_cycle_parse_duration("4h") == 14400);
	assert_true(kopt_cycle_parse_duration("90m") == 5400);
	assert_true(kopt_cycle_parse_duration("2h30m") == 9000);
	assert_true(kopt_cycle_parse_duration("45") == 45);
	assert_true(kopt_cycle_parse_duration("1.5h") == 5400);
	assert_true(kopt_cycle_parse_duration("soon") < 0);
	assert_true(kopt_cycle_parse_duration("4d") < 0);
	assert_true(kopt_cycle_parse_duration("") < 0);
	assert_true(kopt_cycle_parse_duration("-1h") < 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_lookup, setup,
						release_messages),
		cmocka_unit_test_setup_teardown(test_default_is_claude, setup,
						release_messages),
		MESSAGES_TEST(test_command_agent),
		MESSAGES_TEST(test_claude_json),
		MESSAGES_TEST(test_failures),
		MESSAGES_TEST(test_durations),
		MESSAGES_TEST(test_split_diff),
		cmocka_unit_test_setup_teardown(test_apply_diff, setup,
						release_messages),
	};
	char cmd[128];
	int ret;

	if (!mkdtemp(dir))
		return 1;
	ret = cmocka_run_group_tests(tests, NULL, NULL);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd))
		ret = 1;
	return ret;
}
