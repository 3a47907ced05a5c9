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

static void test_versions(void **state)
{
	const char *v[] = { "v10", "v2", "v0", "v1" };

	(void)state;
	assert_int_equal(kopt_version_number("v0"), 0);
	assert_int_equal(kopt_version_number("v12"), 12);
	assert_int_equal(kopt_version_number("v"), -1);
	assert_int_equal(kopt_version_number("v01"), -1);
	assert_int_equal(kopt_version_number("v1a"), -1);
	assert_int_equal(kopt_version_number("x1"), -1);
	qsort(v, 4, sizeof(*v), kopt_version_cmp);
	assert_string_equal(v[0], "v0");
	assert_string_equal(v[2], "v2");
	assert_string_equal(v[3], "v10");
}

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
		cmocka_unit_test(test_versions),
		cmocka_unit_test(test_trailers),
		cmocka_unit_test(test_add_trailers),
		cmocka_unit_test(test_cleanup),
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
