#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <git2.h>

#include "changes.h"
#include "index.h"

#include "messages.h"

/*
 * lib/changes against libgit2's own diff: random snapshots of a small
 * tree with nested folders, files that become folders and back, modes
 * that change, and an index whose cache-tree is whole, partly
 * invalidated by later additions, or missing.
 */

static const char *const paths[] = {
	".kopt", "a", "a.b", "a-c/x", "a/b", "a/b/c", "a/b/c.d", "a/b/e/f",
	"a/bb", "a/b.c", "d/e", "d/e/f", "d/e/g/h", "docs/kernels/k.md",
	"docs/kernels/k/results/v0.json", "docs/kernels/k/results/v1.json",
	"docs/kernels/k2.md", "docs/knowledge/o/x.md", "docs/knowledge.md",
	"z",
};
#define NPATHS (sizeof(paths) / sizeof(paths[0]))

struct fixture {
	char dir[64];
	git_repository *repo;
	unsigned long seed;
};

static unsigned rnd(struct fixture *f, unsigned n)
{
	f->seed = f->seed * 6364136223846793005UL + 1442695040888963407UL;
	return (unsigned)(f->seed >> 33) % n;
}

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	snprintf(f->dir, sizeof(f->dir), "/tmp/kopt-changes-XXXXXX");
	if (!mkdtemp(f->dir) || git_repository_init(&f->repo, f->dir, 0) < 0)
		return -1;
	f->seed = 1;
	*state = f;
	return catch_messages(state);
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	char cmd[128];

	git_repository_free(f->repo);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->dir);
	if (system(cmd))
		return -1;
	free(f);
	return release_messages(state);
}

/* Stage `path` with one of a few contents and modes; 0 when it clashes. */
static int stage(struct fixture *f, git_index *index, const char *path)
{
	static const char *const text[] = { "one\n", "two\n", "three\n" };
	git_index_entry e;
	const char *t = text[rnd(f, 3)];

	memset(&e, 0, sizeof(e));
	e.path = path;
	e.mode = rnd(f, 5) ? GIT_FILEMODE_BLOB : GIT_FILEMODE_BLOB_EXECUTABLE;
	if (git_index_add_from_buffer(index, &e, t, strlen(t)) < 0) {
		git_error_clear();
		return 0;
	}
	return 1;
}

static int collect(char status, const char *path, void *data)
{
	kopt_buf_addf(data, "%c %s\n", status, path);
	return 0;
}

static int diff_line(const git_diff_delta *d, float progress, void *data)
{
	char s = d->status == GIT_DELTA_ADDED ? 'A' :
		 d->status == GIT_DELTA_DELETED ? 'D' : 'M';

	(void)progress;
	kopt_buf_addf(data, "%c %s\n", s, s == 'D' ? d->old_file.path :
		      d->new_file.path);
	return 0;
}

/* libgit2's answer, each path kept when `keep` says so. */
static void expected(struct kopt_buf *out, git_diff *diff)
{
	assert_int_equal(git_diff_foreach(diff, diff_line, NULL, NULL, NULL,
					  out), 0);
}

/* The lines of `all` whose path a spec of `specs` selects. */
static void filter(struct kopt_buf *out, const char *all,
		   const struct kopt_strvec *specs)
{
	const char *p = all;

	while (*p) {
		const char *eol = strchr(p, '\n'), *path = p + 2;
		size_t len = (size_t)(eol - path), i;
		for (i = 0; i < specs->nr; i++) {
			const char *s = specs->v[i];
			size_t n = strlen(s);
			if (len >= n && !memcmp(path, s, n) &&
			    (len == n || s[n - 1] == '/' || path[n] == '/'))
				break;
		}
		if (i < specs->nr)
			kopt_buf_add(out, p, (size_t)(eol - p + 1));
		p = eol + 1;
	}
}

static void check_round(struct fixture *f, int drop_cache_tree)
{
	git_index *index = NULL;
	git_tree *base = NULL, *tree = NULL;
	git_diff *diff = NULL;
	git_oid id;
	struct kopt_index *idx = NULL;
	struct kopt_buf want = KOPT_BUF_INIT, got = KOPT_BUF_INIT;
	struct kopt_buf part = KOPT_BUF_INIT;
	struct kopt_strvec specs = KOPT_STRVEC_INIT;
	size_t i;

	assert_int_equal(git_repository_index(&index, f->repo), 0);
	git_index_clear(index);
	for (i = 0; i < NPATHS; i++)
		if (rnd(f, 2))
			stage(f, index, paths[i]);
	assert_int_equal(git_index_write_tree(&id, index), 0);
	assert_int_equal(git_tree_lookup(&base, f->repo, &id), 0);
	/* the cache-tree is whole now; change a few paths */
	for (i = 0; i < NPATHS; i++) {
		unsigned op = rnd(f, 6);
		if (op == 0)
			git_index_remove_bypath(index, paths[i]);
		else if (op == 1)
			stage(f, index, paths[i]);
	}
	git_error_clear();
	if (drop_cache_tree) {
		/* the same entries, read back without their cache-tree */
		git_index *copy = NULL;
		assert_int_equal(git_index_new(&copy), 0);
		for (i = 0; i < git_index_entrycount(index); i++)
			assert_int_equal(git_index_add(copy,
				git_index_get_byindex(index, i)), 0);
		git_index_clear(index);
		for (i = 0; i < git_index_entrycount(copy); i++)
			assert_int_equal(git_index_add(index,
				git_index_get_byindex(copy, i)), 0);
		git_index_free(copy);
	}
	assert_int_equal(git_index_write(index), 0);

	assert_int_equal(git_diff_tree_to_index(&diff, f->repo, base, index,
						NULL), 0);
	expected(&want, diff);
	git_diff_free(diff);
	assert_int_equal(kopt_index_open(&idx, f->repo), 0);
	assert_int_equal(kopt_changes_index(f->repo, base, idx, NULL, collect,
					    &got), 0);
	assert_string_equal(got.buf, want.buf);

	/* a few specs: folders, a file, a file that may be a folder */
	kopt_strvec_push(&specs, "docs/kernels/");
	kopt_strvec_push(&specs, "a/b");
	kopt_strvec_push(&specs, ".kopt");
	filter(&part, want.buf, &specs);
	kopt_buf_reset(&got);
	assert_int_equal(kopt_changes_index(f->repo, base, idx, &specs,
					    collect, &got), 0);
	assert_string_equal(got.buf, part.buf);

	/* the same change, committed: tree against tree */
	assert_int_equal(git_index_write_tree(&id, index), 0);
	assert_int_equal(git_tree_lookup(&tree, f->repo, &id), 0);
	assert_int_equal(git_diff_tree_to_tree(&diff, f->repo, base, tree,
					       NULL), 0);
	kopt_buf_reset(&want);
	expected(&want, diff);
	git_diff_free(diff);
	kopt_buf_reset(&got);
	assert_int_equal(kopt_changes_trees(f->repo, base, tree, NULL, collect,
					    &got), 0);
	assert_string_equal(got.buf, want.buf);
	kopt_buf_reset(&part);
	filter(&part, want.buf, &specs);
	kopt_buf_reset(&got);
	assert_int_equal(kopt_changes_trees(f->repo, base, tree, &specs,
					    collect, &got), 0);
	assert_string_equal(got.buf, part.buf);
	/* from nothing: everything is added */
	kopt_buf_reset(&got);
	assert_int_equal(kopt_changes_trees(f->repo, NULL, tree, NULL, collect,
					    &got), 0);
	for (i = 0; i < git_index_entrycount(index); i++)
		assert_non_null(strstr(got.buf,
				       git_index_get_byindex(index, i)->path));

	kopt_strvec_clear(&specs);
	kopt_buf_release(&want);
	kopt_buf_release(&got);
	kopt_buf_release(&part);
	kopt_index_free(idx);
	git_tree_free(tree);
	git_tree_free(base);
	git_index_free(index);
}

static void test_random_snapshots(void **state)
{
	struct fixture *f = *state;
	int round;

	for (round = 0; round < 300; round++)
		check_round(f, round % 3 == 2);
	assert_string_equal(messages.buf, "");
}

/* The index file as git writes it: versions 2 and 4, a lookup by path. */
static void test_index_versions(void **state)
{
	struct fixture *f = *state;
	git_index *index = NULL;
	struct kopt_index *idx = NULL;
	struct kopt_index_entry e;
	unsigned version;
	size_t i;

	assert_int_equal(git_repository_index(&index, f->repo), 0);
	for (i = 0; i < NPATHS; i++)
		stage(f, index, paths[i]);
	for (version = 2; version <= 4; version += 2) {
		assert_int_equal(git_index_set_version(index, version), 0);
		assert_int_equal(git_index_write(index), 0);
		assert_int_equal(kopt_index_open(&idx, f->repo), 0);
		assert_int_equal(kopt_index_nr(idx),
				 git_index_entrycount(index));
		for (i = 0; i < git_index_entrycount(index); i++) {
			const git_index_entry *g = git_index_get_byindex(index,
									 i);
			kopt_index_entry(&e, idx, i);
			assert_string_equal(e.path, g->path);
			assert_true(git_oid_equal(&e.id, &g->id));
			assert_int_equal(e.mode, g->mode);
			assert_int_equal(kopt_index_find(&e, idx, g->path), 0);
			assert_string_equal(e.path, g->path);
		}
		assert_int_equal(kopt_index_find(&e, idx, "a/b/"),
				 KOPT_ENOTFOUND);
		assert_int_equal(kopt_index_find(&e, idx, "nothing"),
				 KOPT_ENOTFOUND);
		kopt_index_free(idx);
	}
	git_index_free(index);
	assert_string_equal(messages.buf, "");
}

static void test_not_an_index(void **state)
{
	struct fixture *f = *state;
	struct kopt_index *idx = NULL;
	char path[128];
	FILE *fp;

	snprintf(path, sizeof(path), "%s/bad-index", f->dir);
	fp = fopen(path, "w");
	assert_non_null(fp);
	fputs("DIRC\0\0\0\2\0\0\0\5 and then nothing much at all", fp);
	fclose(fp);
	assert_int_equal(kopt_index_open_file(&idx, path), -1);
	assert_null(idx);
	assert_non_null(strstr(messages.buf, "cannot read the index"));
	/* no index at all: nothing staged */
	snprintf(path, sizeof(path), "%s/no-index", f->dir);
	assert_int_equal(kopt_index_open_file(&idx, path), 0);
	assert_int_equal(kopt_index_nr(idx), 0);
	kopt_index_free(idx);
}

#define TEST(t) cmocka_unit_test_setup_teardown(t, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		TEST(test_random_snapshots),
		TEST(test_index_versions),
		TEST(test_not_an_index),
	};
	int ret;

	git_libgit2_init();
	ret = cmocka_run_group_tests(tests, NULL, NULL);
	git_libgit2_shutdown();
	return ret;
}
