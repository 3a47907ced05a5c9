#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <git2.h>

#include "buf.h"
#include "error.h"
#include "index.h"

/*
 * A work-tree file's id as git status finds it, by its whole path and
 * by its name in an open directory: the same id and stat data either
 * way, clean, modified, missing or not a regular file.
 */

struct fixture {
	char dir[64];
	char top[80];
	git_repository *repo;
};

static void write_file(const char *dir, const char *path, const char *text)
{
	char *full = kopt_xstrfmt("%s/%s", dir, path);
	FILE *f = fopen(full, "wb");

	assert_non_null(f);
	assert_int_equal(fputs(text, f) >= 0, 1);
	assert_int_equal(fclose(f), 0);
	free(full);
}

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	git_index *index = NULL;

	git_libgit2_init();
	snprintf(f->dir, sizeof(f->dir), "/tmp/kopt-index-XXXXXX");
	if (!mkdtemp(f->dir) || git_repository_init(&f->repo, f->dir, 0) < 0)
		return -1;
	snprintf(f->top, sizeof(f->top), "%s/", f->dir);
	{
		char *d = kopt_xstrfmt("%s/d", f->dir);
		mkdir(d, 0777);
		free(d);
	}
	write_file(f->dir, "d/f.txt", "one\n");
	write_file(f->dir, "d/g.txt", "two\n");
	if (git_repository_index(&index, f->repo) < 0 ||
	    git_index_add_bypath(index, "d/f.txt") < 0 ||
	    git_index_add_bypath(index, "d/g.txt") < 0 ||
	    git_index_write(index) < 0)
		return -1;
	git_index_free(index);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	char cmd[128];

	git_repository_free(f->repo);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", f->dir);
	if (system(cmd))
		return -1;
	free(f);
	git_libgit2_shutdown();
	return 0;
}

/* Both ways give `want` (0, or a KOPT_E* code) and the same id. */
static void both(struct fixture *f, const struct kopt_index *idx, int dirfd,
		 const char *path, const char *name, int want, git_oid *id)
{
	struct stat st1, st2;
	git_oid id2;

	assert_int_equal(kopt_index_worktree_id(id, &st1, idx, f->top, path),
			 want);
	assert_int_equal(kopt_index_worktree_id_at(&id2, &st2, idx, f->top,
						   path, dirfd, name), want);
	if (want)
		return;
	assert_true(git_oid_equal(id, &id2));
	assert_int_equal(st1.st_ino, st2.st_ino);
	assert_int_equal(st1.st_size, st2.st_size);
}

static void test_worktree_ids(void **state)
{
	struct fixture *f = *state;
	struct kopt_index *idx = NULL;
	struct kopt_buf text = KOPT_BUF_INIT;
	git_oid id, want;
	char *d = kopt_xstrfmt("%s/d", f->dir);
	int dirfd = open(d, O_RDONLY | O_DIRECTORY);

	assert_true(dirfd >= 0);
	assert_int_equal(kopt_index_open(&idx, f->repo), 0);
	/* as committed to the index */
	assert_int_equal(git_odb_hash(&want, "one\n", 4, GIT_OBJECT_BLOB), 0);
	both(f, idx, dirfd, "d/f.txt", "f.txt", 0, &id);
	assert_true(git_oid_equal(&id, &want));
	/* modified since: its bytes hashed, by its whole path */
	write_file(f->dir, "d/g.txt", "two, changed\n");
	assert_int_equal(git_odb_hash(&want, "two, changed\n", 13,
				      GIT_OBJECT_BLOB), 0);
	both(f, idx, dirfd, "d/g.txt", "g.txt", 0, &id);
	assert_true(git_oid_equal(&id, &want));
	/* the same without an index: every file hashed */
	both(f, NULL, dirfd, "d/f.txt", "f.txt", 0, &id);
	/* no such file; not a regular file */
	both(f, idx, dirfd, "d/h.txt", "h.txt", KOPT_ENOTFOUND, &id);
	assert_int_equal(symlinkat("f.txt", dirfd, "link"), 0);
	both(f, idx, dirfd, "d/link", "link", KOPT_EUNSUPPORTED, &id);

	/* and read in the directory, as by its whole path */
	{
		struct stat st;
		assert_int_equal(kopt_buf_read_file_at(&text, dirfd, "g.txt",
						       &st), 0);
		assert_string_equal(text.buf, "two, changed\n");
		assert_int_equal(st.st_size, 13);
		kopt_buf_reset(&text);
		assert_int_equal(kopt_buf_read_file_at(&text, dirfd, "h.txt",
						       &st), -1);
	}
	kopt_buf_release(&text);
	kopt_index_free(idx);
	close(dirfd);
	free(d);
}

/* Whether the index holds exactly a tree: by its cache-tree's top. */
static void test_is_tree(void **state)
{
	struct fixture *f = *state;
	struct kopt_index *idx = NULL;
	git_index *index = NULL;
	git_oid tree, other;

	assert_int_equal(git_repository_index(&index, f->repo), 0);
	assert_int_equal(git_index_write_tree(&tree, index), 0);
	/* entries added since: their directories' trees are unknown */
	write_file(f->dir, "d/h.txt", "three\n");
	assert_int_equal(git_index_add_bypath(index, "d/h.txt"), 0);
	assert_int_equal(git_index_write(index), 0);
	assert_int_equal(kopt_index_open(&idx, f->repo), 0);
	assert_false(kopt_index_is_tree(idx, &tree));
	kopt_index_free(idx);
	/* written as a tree (as a commit does): that tree, no other */
	assert_int_equal(git_index_write_tree(&tree, index), 0);
	assert_int_equal(git_index_write(index), 0);
	assert_int_equal(kopt_index_open(&idx, f->repo), 0);
	assert_true(kopt_index_is_tree(idx, &tree));
	assert_int_equal(git_odb_hash(&other, "", 0, GIT_OBJECT_TREE), 0);
	assert_false(kopt_index_is_tree(idx, &other));
	assert_false(kopt_index_is_tree(NULL, &tree));
	kopt_index_free(idx);
	git_index_free(index);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_worktree_ids, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_is_tree, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
