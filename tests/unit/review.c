#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "error.h"
#include "lockfile.h"
#include "repo.h"
#include "review.h"

/* A scratch repository: a base commit, then a head commit on top. */
struct fixture {
	char dir[64];
	git_repository *repo;
	git_oid base, head;
};

static int write_file(const char *dir, const char *rel, const char *text)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	return kopt_write_file_atomic(path, text, strlen(text), 0644);
}

/* Add `rel` with `text` to the index and commit it on HEAD. */
static int commit_file(struct fixture *f, git_oid *out, const git_oid *parent,
		       const char *rel, const char *text, const char *msg)
{
	git_index *idx = NULL;
	git_oid tree;
	int ret = -1;

	if (!write_file(f->dir, rel, text) &&
	    !git_repository_index(&idx, f->repo) &&
	    !git_index_add_bypath(idx, rel) &&
	    !git_index_write(idx) &&
	    !git_index_write_tree(&tree, idx))
		ret = kopt_repo_commit(out, f->repo, "HEAD", &tree, parent,
				       msg);
	git_index_free(idx);
	return ret;
}

static int setup_repo(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	snprintf(f->dir, sizeof(f->dir), "/tmp/kopt-review-test-XXXXXX");
	if (!mkdtemp(f->dir))
		return -1;
	setenv("GIT_AUTHOR_NAME", "A U Thor", 1);
	setenv("GIT_AUTHOR_EMAIL", "author@example.com", 1);
	setenv("GIT_COMMITTER_NAME", "C O Mitter", 1);
	setenv("GIT_COMMITTER_EMAIL", "committer@example.com", 1);
	setenv("GIT_AUTHOR_DATE", "2026-01-01T00:00:00Z", 1);
	setenv("GIT_COMMITTER_DATE", "2026-01-01T00:00:00Z", 1);
	setenv("GIT_CONFIG_NOSYSTEM", "1", 1);
	setenv("HOME", f->dir, 1);
	unsetenv("GIT_INDEX_FILE");
	if (git_repository_init(&f->repo, f->dir, 0) < 0 ||
	    commit_file(f, &f->base, NULL, "README", "hello\n", "Start\n") ||
	    commit_file(f, &f->head, &f->base,
			"docs/knowledge/anti-patterns/slow.md", "# Slow\n",
			"Note a slow path\n\nKopt-Learn: skip measured "
			"elsewhere\n"))
		return -1;
	*state = f;
	return 0;
}

static int teardown_repo(void **state)
{
	struct fixture *f = *state;
	char cmd[128];

	git_repository_free(f->repo);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->dir);
	if (system(cmd))
		return -1;
	free(f);
	return 0;
}

static void test_range(void **state)
{
	struct fixture *f = *state;
	struct kopt_review rv;
	git_commit *base = NULL, *head = NULL;

	assert_int_equal(git_commit_lookup(&base, f->repo, &f->base), 0);
	assert_int_equal(git_commit_lookup(&head, f->repo, &f->head), 0);
	assert_int_equal(kopt_review_load(&rv, f->repo, base, head), 0);
	/* the range holds the head commit only, with its skip reason */
	assert_int_equal(rv.commits_nr, 1);
	assert_string_equal(rv.commits[0].subject, "Note a slow path");
	assert_string_equal(rv.commits[0].skip, "measured elsewhere");
	assert_null(rv.commits[0].kernel);
	assert_int_equal(rv.files_nr, 1);
	assert_string_equal(rv.files[0].path,
			    "docs/knowledge/anti-patterns/slow.md");
	assert_int_equal(rv.files[0].status, 'A');
	assert_true(rv.files[0].knowledge);
	/* no .kopt at either end: the default noise, no kernels */
	assert_ptr_equal(rv.cfg, &rv.head_cfg);
	assert_int_equal(rv.kernels.nr, 0);
	assert_int_equal(rv.versions_nr, 0);
	assert_int_equal(rv.regressions_nr, 0);
	kopt_review_release(&rv);

	/* an empty range */
	assert_int_equal(kopt_review_load(&rv, f->repo, head, head), 0);
	assert_int_equal(rv.commits_nr, 0);
	assert_int_equal(rv.files_nr, 0);
	kopt_review_release(&rv);
	git_commit_free(base);
	git_commit_free(head);
}

static void test_default_branch(void **state)
{
	struct fixture *f = *state;
	git_reference *ref = NULL, *moved = NULL;
	char *name = NULL;

	/* HEAD's branch is master (no init.defaultBranch in this HOME) */
	assert_int_equal(kopt_repo_default_branch(&name, f->repo), 0);
	assert_string_equal(name, "refs/heads/master");
	free(name);
	/*
	 * master renamed to topic, by hand: libgit2's git_branch_move()
	 * leaks a regex match of its config rename
	 */
	assert_int_equal(git_reference_lookup(&ref, f->repo,
					      "refs/heads/master"), 0);
	assert_int_equal(git_reference_create(&moved, f->repo,
					      "refs/heads/topic",
					      git_reference_target(ref), 0,
					      NULL), 0);
	assert_int_equal(git_repository_set_head(f->repo, "refs/heads/topic"),
			 0);
	assert_int_equal(git_reference_delete(ref), 0);
	git_reference_free(moved);
	git_reference_free(ref);
	assert_int_equal(kopt_repo_default_branch(&name, f->repo),
			 KOPT_ENOTFOUND);
	assert_null(name);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_range, setup_repo,
						teardown_repo),
		cmocka_unit_test_setup_teardown(test_default_branch,
						setup_repo, teardown_repo),
	};

	git_libgit2_init();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
