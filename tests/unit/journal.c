#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "buf.h"
#include "error.h"
#include "journal.h"
#include "lockfile.h"

struct fixture {
	char dir[64];
	git_repository *repo;
	char *path;             /* the design journal */
};

static int setup_repo(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	snprintf(f->dir, sizeof(f->dir), "/tmp/kopt-journal-test-XXXXXX");
	if (!mkdtemp(f->dir) || git_repository_init(&f->repo, f->dir, 0) < 0)
		return -1;
	f->path = kopt_xstrfmt("%skopt/design.journal",
			       git_repository_path(f->repo));
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
	free(f->path);
	free(f);
	return 0;
}

static void put(const char *path, const char *text)
{
	assert_int_equal(kopt_write_file_atomic(path, text, strlen(text),
						0644), 0);
}

/* Written whole before a step's changes, read back, removed at the end. */
static void test_round_trip(void **state)
{
	struct fixture *f = *state;
	struct kopt_journal j = KOPT_JOURNAL_INIT;
	struct kopt_error_catch caught = KOPT_ERROR_CATCH_INIT;

	assert_int_equal(kopt_journal_read(&j, f->repo, "design"),
			 KOPT_ENOTFOUND);
	kopt_journal_release(&j);
	kopt_journal_set(&j, "to-dir", "kernels/k/v1");
	kopt_journal_set(&j, "task", "");
	assert_int_equal(kopt_journal_begin(&j, f->repo, "design"), 0);
	kopt_journal_release(&j);

	/* a second writer is refused while the first is at work */
	kopt_error_catch(&caught);
	assert_int_equal(kopt_journal_begin(&j, f->repo, "design"),
			 KOPT_ELOCKED);
	kopt_error_uncatch(&caught);
	kopt_error_catch_release(&caught);
	kopt_journal_release(&j);

	/* this process wrote it: it is no other run at work */
	assert_int_equal(kopt_journal_read(&j, f->repo, "design"), 0);
	assert_true(j.complete);
	assert_string_equal(kopt_journal_get(&j, "to-dir"), "kernels/k/v1");
	assert_string_equal(kopt_journal_get(&j, "task"), "");
	assert_null(kopt_journal_get(&j, "nothing"));
	assert_int_equal(kopt_journal_end(&j), 0);
	assert_int_equal(access(f->path, F_OK), -1);
	assert_int_equal(kopt_journal_end(&j), 0);
	kopt_journal_release(&j);
}

/* A killed writer's journal is read; a live one's is refused. */
static void test_writers(void **state)
{
	struct fixture *f = *state;
	struct kopt_journal j = KOPT_JOURNAL_INIT;
	struct kopt_error_catch caught = KOPT_ERROR_CATCH_INIT;
	char host[256] = "";
	char *text;

	/* killed while writing its first line */
	put(f->path, "");
	assert_int_equal(kopt_journal_read(&j, f->repo, "design"), 0);
	assert_false(j.complete);
	/* killed before its end line */
	put(f->path, "pid 999999999\nhost x\nto-dir kernels/k/v1\nhe");
	kopt_error_catch(&caught);
	/* another host's: nothing can be proved */
	assert_int_equal(kopt_journal_read(&j, f->repo, "design"),
			 KOPT_ELOCKED);
	kopt_error_uncatch(&caught);
	kopt_error_catch_release(&caught);
	gethostname(host, sizeof(host) - 1);
	text = kopt_xstrfmt("pid %ld\nhost %s\nto-dir a b\nhe", (long)getppid(),
			    host);
	put(f->path, text);
	free(text);
	kopt_error_catch(&caught);
	assert_int_equal(kopt_journal_read(&j, f->repo, "design"),
			 KOPT_ELOCKED);
	kopt_error_uncatch(&caught);
	assert_non_null(strstr(caught.text.buf, "another git kopt design is "
			       "running (process "));
	kopt_error_catch_release(&caught);
	/* a process that is gone, on this host */
	text = kopt_xstrfmt("pid 999999999\nhost %s\nto-dir a b\nhe", host);
	put(f->path, text);
	free(text);
	assert_int_equal(kopt_journal_read(&j, f->repo, "design"), 0);
	assert_false(j.complete);
	assert_string_equal(kopt_journal_get(&j, "to-dir"), "a b");
	kopt_journal_release(&j);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_round_trip, setup_repo,
						teardown_repo),
		cmocka_unit_test_setup_teardown(test_writers, setup_repo,
						teardown_repo),
	};

	git_libgit2_init();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
