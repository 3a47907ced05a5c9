#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <git2.h>

#include "lockfile.h"
#include "setup.h"
#include "templates.h"

#include "messages.h"

/* Templates, hooks and a repository, all under one scratch folder. */
struct fixture {
	char dir[64];
	git_repository *repo;
};

static void put(const struct fixture *f, const char *rel, const char *text)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/%s", f->dir, rel);
	assert_int_equal(kopt_write_file_atomic(path, text, strlen(text), 0755),
			 0);
}

static int setup_fixture(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	char path[128];

	snprintf(f->dir, sizeof(f->dir), "/tmp/kopt-setup-XXXXXX");
	if (!mkdtemp(f->dir))
		return -1;
	put(f, "t/init/README.md", "readme\n");
	put(f, "t/init/docs/guide.md", "guide\n");
	put(f, "t/init/.kopt", "[kopt]\n");
	put(f, "t/init-seeds", "# seeds\n.kopt\n");
	put(f, "h/pre-commit", "#!/bin/sh\nexec git kopt hook pre-commit\n");
	snprintf(path, sizeof(path), "%s/t", f->dir);
	setenv(KOPT_TEMPLATE_ENV, path, 1);
	snprintf(path, sizeof(path), "%s/h", f->dir);
	setenv(KOPT_HOOKS_ENV, path, 1);
	setenv("GIT_CONFIG_NOSYSTEM", "1", 1);
	setenv("HOME", f->dir, 1);
	snprintf(path, sizeof(path), "%s/repo", f->dir);
	if (git_repository_init(&f->repo, path, 0) < 0)
		return -1;
	*state = f;
	return catch_messages(state);
}

static int teardown_fixture(void **state)
{
	struct fixture *f = *state;
	char cmd[128];

	git_repository_free(f->repo);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->dir);
	if (system(cmd))
		return -1;
	free(f);
	unsetenv(KOPT_TEMPLATE_ENV);
	unsetenv(KOPT_HOOKS_ENV);
	return release_messages(state);
}

static enum kopt_setup_action action_of(const struct kopt_setup *s,
					const char *label)
{
	size_t i;

	for (i = 0; i < s->nr; i++)
		if (!strcmp(s->items[i].label, label))
			return s->items[i].action;
	fail_msg("no item '%s'", label);
	return KOPT_SETUP_UNCHANGED;
}

static void plan_and_apply(struct fixture *f, unsigned flags, size_t pending)
{
	struct kopt_setup s = KOPT_SETUP_INIT;

	assert_int_equal(kopt_setup_plan(&s, f->repo, flags), 0);
	assert_int_equal(kopt_setup_pending(&s), pending);
	assert_int_equal(kopt_setup_apply(&s), 0);
	kopt_setup_release(&s);
}

static void test_fresh_then_nothing(void **state)
{
	struct fixture *f = *state;
	struct kopt_setup s = KOPT_SETUP_INIT;

	assert_int_equal(kopt_setup_plan(&s, f->repo, 0), 0);
	assert_int_equal(s.nr, 4);
	assert_int_equal(action_of(&s, "README.md"), KOPT_SETUP_CREATE);
	assert_int_equal(action_of(&s, "docs/guide.md"), KOPT_SETUP_CREATE);
	assert_int_equal(action_of(&s, ".kopt"), KOPT_SETUP_CREATE);
	assert_int_equal(action_of(&s, ".git/hooks/pre-commit"),
			 KOPT_SETUP_CREATE);
	assert_int_equal(kopt_setup_apply(&s), 0);
	kopt_setup_release(&s);
	/* a second run has nothing to do */
	plan_and_apply(f, 0, 0);
	assert_string_equal(messages.buf, "");
}

/* Hand edits are kept, --force restores them, seeds stay the project's. */
static void test_edits_seeds_and_force(void **state)
{
	struct fixture *f = *state;
	struct kopt_setup s = KOPT_SETUP_INIT;
	struct kopt_buf text = KOPT_BUF_INIT;
	char path[128];

	plan_and_apply(f, 0, 4);
	put(f, "repo/README.md", "mine\n");
	put(f, "repo/.kopt", "[kopt]\n\tnoise = 5\n");
	assert_int_equal(kopt_setup_plan(&s, f->repo, 0), 0);
	assert_int_equal(action_of(&s, "README.md"), KOPT_SETUP_KEEP);
	assert_int_equal(action_of(&s, ".kopt"), KOPT_SETUP_OWNED);
	assert_int_equal(kopt_setup_pending(&s), 0);
	kopt_setup_release(&s);
	assert_int_equal(kopt_setup_plan(&s, f->repo, KOPT_SETUP_FORCE), 0);
	assert_int_equal(action_of(&s, "README.md"), KOPT_SETUP_RESTORE);
	assert_int_equal(action_of(&s, ".kopt"), KOPT_SETUP_OWNED);
	assert_int_equal(kopt_setup_apply(&s), 0);
	kopt_setup_release(&s);
	snprintf(path, sizeof(path), "%s/repo/README.md", f->dir);
	assert_int_equal(kopt_buf_read_file(&text, path), 0);
	assert_string_equal(text.buf, "readme\n");
	kopt_buf_reset(&text);
	snprintf(path, sizeof(path), "%s/repo/.kopt", f->dir);
	assert_int_equal(kopt_buf_read_file(&text, path), 0);
	assert_string_equal(text.buf, "[kopt]\n\tnoise = 5\n");
	kopt_buf_release(&text);
}

/* A hook that is not ours is chained: moved aside, ours takes its place. */
static void test_chain(void **state)
{
	struct fixture *f = *state;
	struct kopt_setup s = KOPT_SETUP_INIT;
	char path[128];

	put(f, "repo/.git/hooks/pre-commit", "#!/bin/sh\nlint\n");
	assert_int_equal(kopt_setup_plan(&s, f->repo, 0), 0);
	assert_int_equal(action_of(&s, ".git/hooks/pre-commit"),
			 KOPT_SETUP_CHAIN);
	assert_int_equal(kopt_setup_apply(&s), 0);
	kopt_setup_release(&s);
	snprintf(path, sizeof(path), "%s/repo/.git/hooks/pre-commit%s",
		 f->dir, KOPT_HOOK_CHAIN_SUFFIX);
	assert_int_equal(access(path, X_OK), 0);
	/* something at the chain's place: nothing at all is written */
	put(f, "repo/.git/hooks/pre-commit", "#!/bin/sh\nother\n");
	put(f, "repo/docs/guide.md", "changed\n");
	assert_int_equal(kopt_setup_plan(&s, f->repo, KOPT_SETUP_FORCE), 0);
	assert_int_not_equal(kopt_setup_apply(&s), 0);
	kopt_setup_release(&s);
	assert_non_null(strstr(messages.buf, "cannot move "
			       "'.git/hooks/pre-commit' aside"));
	snprintf(path, sizeof(path), "%s/repo/docs/guide.md", f->dir);
	{
		struct kopt_buf text = KOPT_BUF_INIT;
		assert_int_equal(kopt_buf_read_file(&text, path), 0);
		assert_string_equal(text.buf, "changed\n");
		kopt_buf_release(&text);
	}
}

/* A file deleted after init stays deleted, reported once; --force lays it. */
static void test_deleted(void **state)
{
	struct fixture *f = *state;
	struct kopt_setup s = KOPT_SETUP_INIT;
	char path[128];

	plan_and_apply(f, 0, 4);
	snprintf(path, sizeof(path), "%s/repo/docs/guide.md", f->dir);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(kopt_setup_plan(&s, f->repo, 0), 0);
	assert_int_equal(action_of(&s, "docs/guide.md"), KOPT_SETUP_DELETED);
	assert_int_equal(kopt_setup_pending(&s), 0);
	assert_true(kopt_setup_changed(&s));
	assert_int_equal(kopt_setup_apply(&s), 0);
	kopt_setup_release(&s);
	assert_int_equal(access(path, F_OK), -1);
	assert_int_equal(kopt_setup_plan(&s, f->repo, 0), 0);
	assert_int_equal(action_of(&s, "docs/guide.md"), KOPT_SETUP_DELETED);
	assert_false(kopt_setup_changed(&s));
	kopt_setup_release(&s);
	plan_and_apply(f, KOPT_SETUP_FORCE, 1);
	assert_int_equal(access(path, F_OK), 0);
}

/* The manifest's lines, and the line of a malformed one. */
static void test_manifest_parse(void **state)
{
	const char *id = "0123456789abcdef0123456789abcdef01234567";
	struct kopt_manifest_entry *e = NULL;
	struct kopt_buf text = KOPT_BUF_INIT;
	size_t nr = 0;

	kopt_buf_addf(&text, "# comment\n%s - a b.md\n\n%s deleted x\n"
		      "%s %s y", id, id, id, id);
	assert_int_equal(kopt_manifest_parse(&e, &nr, "m", text.buf, text.len),
			 0);
	assert_int_equal(nr, 3);
	assert_string_equal(e[0].path, "a b.md");
	assert_string_equal(e[0].reported, "-");
	assert_string_equal(e[1].reported, "deleted");
	assert_string_equal(e[2].reported, id);
	assert_string_equal(e[2].path, "y");
	kopt_manifest_release(e, nr);
	e = NULL;
	nr = 0;
	kopt_buf_reset(&text);
	kopt_buf_addf(&text, "%s - ok\n%s kept z\n", id, id);
	assert_int_not_equal(kopt_manifest_parse(&e, &nr, "m", text.buf,
						 text.len), 0);
	assert_non_null(strstr(messages.buf, "m:2: not a manifest line"));
	kopt_manifest_release(e, nr);
	kopt_buf_release(&text);
	(void)state;
}

#define FIXTURE_TEST(t) \
	cmocka_unit_test_setup_teardown(t, setup_fixture, teardown_fixture)

int main(void)
{
	const struct CMUnitTest tests[] = {
		FIXTURE_TEST(test_fresh_then_nothing),
		FIXTURE_TEST(test_edits_seeds_and_force),
		FIXTURE_TEST(test_chain),
		FIXTURE_TEST(test_deleted),
		FIXTURE_TEST(test_manifest_parse),
	};
	int ret;

	git_libgit2_init();
	ret = cmocka_run_group_tests(tests, NULL, NULL);
	git_libgit2_shutdown();
	return ret;
}
