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

#include "error.h"
#include "lockfile.h"
#include "repo.h"

/* A scratch repository with one commit made through kopt_repo_commit. */
struct fixture {
	char dir[64];
	git_repository *repo;
	git_oid commit;
};

static int write_file(const char *dir, const char *rel, const char *text)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	return kopt_write_file_atomic(path, text, strlen(text), 0644);
}

static int setup_repo(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	git_index *idx = NULL;
	git_oid tree;

	snprintf(f->dir, sizeof(f->dir), "/tmp/kopt-repo-test-XXXXXX");
	if (!mkdtemp(f->dir))
		return -1;
	setenv("GIT_AUTHOR_NAME", "A U Thor", 1);
	setenv("GIT_AUTHOR_EMAIL", "author@example.com", 1);
	setenv("GIT_COMMITTER_NAME", "C O Mitter", 1);
	setenv("GIT_COMMITTER_EMAIL", "committer@example.com", 1);
	setenv("GIT_AUTHOR_DATE", "2026-01-01T00:00:00Z", 1);
	setenv("GIT_COMMITTER_DATE", "2026-01-01T00:00:00Z", 1);
	setenv("GIT_CONFIG_NOSYSTEM", "1", 1);
	unsetenv("GIT_INDEX_FILE");
	if (git_repository_init(&f->repo, f->dir, 0) < 0 ||
	    write_file(f->dir, "kernels/k/v0/k.cu", "int k;\n") ||
	    write_file(f->dir, "README", "hello\n") ||
	    git_repository_index(&idx, f->repo) < 0 ||
	    git_index_add_bypath(idx, "kernels/k/v0/k.cu") < 0 ||
	    git_index_add_bypath(idx, "README") < 0 ||
	    git_index_write(idx) < 0 ||
	    git_index_write_tree(&tree, idx) < 0 ||
	    kopt_repo_commit(&f->commit, f->repo, "HEAD", &tree, NULL,
			     "Start\n\nKopt-Step: design\n"))
		return -1;
	git_index_free(idx);
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

static void test_branches(void **state)
{
	struct fixture *f = *state;
	struct kopt_strvec v = KOPT_STRVEC_INIT;

	assert_true(kopt_repo_has_commits(f->repo));
	assert_int_equal(kopt_repo_branch_exists(f->repo, "k", "v1"), 0);
	assert_int_equal(kopt_repo_branch_create(f->repo, "k", "v1",
						 &f->commit), 0);
	assert_int_equal(kopt_repo_branch_create(f->repo, "k", "v10",
						 &f->commit), 0);
	assert_int_equal(kopt_repo_branch_create(f->repo, "k", "v2",
						 &f->commit), 0);
	assert_int_equal(kopt_repo_branch_create(f->repo, "other", "v7",
						 &f->commit), 0);
	assert_int_equal(kopt_repo_branch_exists(f->repo, "k", "v1"), 1);
	assert_int_equal(kopt_repo_branch_list(f->repo, "k", &v), 0);
	assert_int_equal(v.nr, 3);
	assert_string_equal(v.v[0], "v1");
	assert_string_equal(v.v[1], "v2");
	assert_string_equal(v.v[2], "v10");
	assert_int_equal(kopt_repo_branch_switch(f->repo, "k", "v2"), 0);
	assert_int_equal(kopt_repo_branch_delete(f->repo, "k", "v1"), 0);
	assert_int_equal(kopt_repo_branch_exists(f->repo, "k", "v1"), 0);
	kopt_strvec_clear(&v);
}

static void test_reading(void **state)
{
	struct fixture *f = *state;
	struct kopt_buf sb = KOPT_BUF_INIT;
	git_index *idx = NULL;
	git_oid a, b;
	char path[128];
	FILE *p;
	char line[256];

	assert_int_equal(kopt_repo_read_rev(&sb, f->repo, "HEAD",
					    "kernels/k/v0/k.cu"), 0);
	assert_string_equal(sb.buf, "int k;\n");
	kopt_buf_reset(&sb);
	assert_int_equal(kopt_repo_read_rev(&sb, f->repo, "HEAD", "nope"),
			 KOPT_ENOTFOUND);
	assert_int_equal(kopt_repo_tree_id(&a, f->repo, "HEAD",
					   "kernels/k/v0"), 0);
	assert_int_equal(kopt_repo_worktree_tree_id(&b, f->repo,
						    "kernels/k/v0"), 0);
	assert_true(git_oid_equal(&a, &b));
	assert_int_equal(kopt_repo_tree_id(&a, f->repo, "HEAD", "kernels/x"),
			 KOPT_ENOTFOUND);

	/* the index named by GIT_INDEX_FILE wins */
	snprintf(path, sizeof(path), "%s/.git/other-index", f->dir);
	setenv("GIT_INDEX_FILE", path, 1);
	assert_int_equal(kopt_repo_index(&idx, f->repo), 0);
	assert_int_equal(git_index_entrycount(idx), 0);
	git_index_free(idx);
	unsetenv("GIT_INDEX_FILE");
	assert_int_equal(kopt_repo_index(&idx, f->repo), 0);
	assert_int_equal(kopt_repo_read_index(&sb, f->repo, idx, "README"), 0);
	assert_string_equal(sb.buf, "hello\n");
	git_index_free(idx);

	/* git reads the trailers back */
	snprintf(line, sizeof(line), "git -C '%s' log -1 --format=%%B | "
		 "git interpret-trailers --parse", f->dir);
	p = popen(line, "r");
	assert_non_null(p);
	assert_non_null(fgets(line, sizeof(line), p));
	assert_string_equal(line, "Kopt-Step: design\n");
	pclose(p);
	kopt_buf_release(&sb);
}

static void test_dirty(void **state)
{
	struct fixture *f = *state;
	struct kopt_strvec specs = KOPT_STRVEC_INIT, dirty = KOPT_STRVEC_INIT;

	kopt_strvec_push(&specs, "kernels/k");
	assert_int_equal(kopt_repo_dirty_paths(&dirty, f->repo, &specs), 0);
	assert_int_equal(dirty.nr, 0);
	assert_int_equal(write_file(f->dir, "kernels/k/v0/new.cu", "x\n"), 0);
	assert_int_equal(write_file(f->dir, "README", "changed\n"), 0);
	assert_int_equal(kopt_repo_dirty_paths(&dirty, f->repo, &specs), 0);
	assert_int_equal(dirty.nr, 1);
	assert_string_equal(dirty.v[0], "kernels/k/v0/new.cu");
	kopt_strvec_clear(&specs);
	kopt_strvec_clear(&dirty);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_branches, setup_repo,
						teardown_repo),
		cmocka_unit_test_setup_teardown(test_reading, setup_repo,
						teardown_repo),
		cmocka_unit_test_setup_teardown(test_dirty, setup_repo,
						teardown_repo),
	};
	int ret;

	git_libgit2_init();
	ret = cmocka_run_group_tests(tests, NULL, NULL);
	git_libgit2_shutdown();
	return ret;
}
