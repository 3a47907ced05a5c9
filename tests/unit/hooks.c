#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <git2.h>

#include "config.h"
#include "hooks.h"
#include "lockfile.h"

#include "messages.h"

#define GATE KOPT_SOURCE_DIR "/tests/fixtures/gate/"

/* A kernel repository with v0 measured and committed, as the CLI tests. */
struct fixture {
	char dir[64];
	git_repository *repo;
	git_index *index;
	struct kopt_index *staged;      /* the index as the gate reads it */
	git_tree *head;
	struct kopt_config cfg;
};

static void put(struct fixture *f, const char *rel, const char *text)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/%s", f->dir, rel);
	assert_int_equal(kopt_write_file_atomic(path, text, strlen(text), 0644),
			 0);
	assert_int_equal(git_index_add_bypath(f->index, rel), 0);
}

static void copy(struct fixture *f, const char *fixture, const char *rel)
{
	struct kopt_buf text = KOPT_BUF_INIT;

	assert_int_equal(kopt_buf_read_file(&text, fixture), 0);
	put(f, rel, text.buf);
	kopt_buf_release(&text);
}

static void results(struct fixture *f, const char *v, const char *parent,
		    double decode, double spec)
{
	char rel[128], text[1024];

	snprintf(rel, sizeof(rel), "docs/kernels/mla-decode/results/%s.json",
		 v);
	snprintf(text, sizeof(text),
		 "{\"schema\": 1, \"kernel\": \"mla-decode\", \"version\": "
		 "\"%s\", \"parent\": %s%s%s, \"entries\": ["
		 "{\"trial\": \"decode\", \"config\": {\"b\": 32, \"s\": 1, "
		 "\"t\": 4096}, \"metrics\": {\"duration_us\": %g}, "
		 "\"spread_pct\": 1.0},"
		 "{\"trial\": \"spec-decode\", \"config\": {\"b\": 32, \"s\": 16, "
		 "\"t\": 4096}, \"metrics\": {\"duration_us\": %g}, "
		 "\"spread_pct\": 1.0}]}\n", v, parent ? "\"" : "",
		 parent ? parent : "null", parent ? "\"" : "", decode, spec);
	put(f, rel, text);
}

static int setup_fixture(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	git_signature *sig = NULL;
	git_oid tree_id, commit_id;

	snprintf(f->dir, sizeof(f->dir), "/tmp/kopt-hooks-XXXXXX");
	if (!mkdtemp(f->dir) || git_repository_init(&f->repo, f->dir, 0) < 0 ||
	    git_repository_index(&f->index, f->repo) < 0)
		return -1;
	copy(f, GATE "kopt", ".kopt");
	copy(f, GATE "catalog.md",
	     ".claude/skills/optimization-catalog/SKILL.md");
	copy(f, GATE "split-kv.md", "docs/knowledge/optimizations/split-kv.md");
	copy(f, GATE "devlog.md", "docs/kernels/mla-decode.md");
	results(f, "v0", NULL, 100, 200);
	if (git_index_write(f->index) < 0 ||
	    git_index_write_tree(&tree_id, f->index) < 0 ||
	    git_signature_new(&sig, "A U Thor", "a@example.com", 1767225600,
			      0) < 0 ||
	    git_tree_lookup(&f->head, f->repo, &tree_id) < 0 ||
	    git_commit_create_v(&commit_id, f->repo, "HEAD", sig, sig, NULL,
				"Start\n", f->head, 0) < 0)
		return -1;
	git_signature_free(sig);
	if (kopt_config_load_tree(&f->cfg, f->repo, f->head, ".kopt"))
		return -1;
	*state = f;
	return catch_messages(state);
}

static int teardown_fixture(void **state)
{
	struct fixture *f = *state;
	char cmd[128];

	kopt_config_release(&f->cfg);
	git_tree_free(f->head);
	kopt_index_free(f->staged);
	git_index_free(f->index);
	git_repository_free(f->repo);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->dir);
	if (system(cmd))
		return -1;
	free(f);
	return release_messages(state);
}

/* Run the gate on the index against HEAD; the violations' rules. */
static void run(struct fixture *f, struct kopt_gate *g, const char *message)
{
	g->repo = f->repo;
	g->cfg = &f->cfg;
	kopt_index_free(f->staged);
	assert_int_equal(git_index_write(f->index), 0);
	assert_int_equal(kopt_index_open(&f->staged, f->repo), 0);
	g->index = f->staged;
	g->base = f->head;
	g->message = message;
	assert_int_equal(kopt_gate_run(g), 0);
}

static void add_v1(struct fixture *f, const char *heading)
{
	struct kopt_buf text = KOPT_BUF_INIT;

	assert_int_equal(kopt_buf_read_file(&text, GATE "devlog.md"), 0);
	kopt_buf_addf(&text, "\n%s\n\n**Location**: `kernels/mla_decode/v1`\n",
		      heading);
	put(f, "docs/kernels/mla-decode.md", text.buf);
	kopt_buf_release(&text);
}

static void test_clean_change(void **state)
{
	struct fixture *f = *state;
	struct kopt_gate g = KOPT_GATE_INIT;

	add_v1(f, "### V1: Wide tiles");
	results(f, "v1", "v0", 90, 190);
	run(f, &g, "Verify mla-decode v1\n");
	assert_int_equal(g.nr, 1);      /* an improvement is a finding */
	assert_string_equal(g.violations[0].rule, "improvement");
	kopt_gate_release(&g);
	assert_string_equal(messages.buf, "");
}

/* The regression's fix names the entry's title, whatever the heading. */
static void test_regression_names_the_title(void **state)
{
	struct fixture *f = *state;
	struct kopt_gate g = KOPT_GATE_INIT;

	add_v1(f, "### V1 - tiling");
	results(f, "v1", "v0", 120, 210);
	run(f, &g, "Verify mla-decode v1\n");
	assert_int_equal(g.nr, 1);
	assert_string_equal(g.violations[0].rule, "regression");
	assert_string_equal(g.violations[0].fix.v[0], "git kopt learn new "
			    "anti-pattern tiling --from mla-decode/v1");
	kopt_gate_release(&g);
}

static void test_skip_needs_a_reason(void **state)
{
	struct fixture *f = *state;
	struct kopt_gate g = KOPT_GATE_INIT;

	add_v1(f, "### V1: [Brief description]");
	results(f, "v1", "v0", 120, 210);
	run(f, &g, "Verify\n\nkopt-learn: skip measured on a noisy node\n");
	assert_int_equal(g.nr, 0);
	assert_string_equal(g.skip_reason, "measured on a noisy node");
	kopt_gate_release(&g);
	g = (struct kopt_gate)KOPT_GATE_INIT;
	/* without a reason the trailer is wrong and skips nothing */
	run(f, &g, "Verify\n\nKopt-Learn: skip\n");
	assert_int_equal(g.nr, 2);
	assert_string_equal(g.violations[0].rule, "trailer");
	assert_string_equal(g.violations[1].rule, "regression");
	assert_string_equal(g.violations[1].fix.v[0], "git kopt learn new "
			    "anti-pattern mla-decode-v1-regression --from "
			    "mla-decode/v1");
	assert_null(g.skip_reason);
	kopt_gate_release(&g);
}

static void test_devlog_fence_and_trailer(void **state)
{
	struct fixture *f = *state;
	struct kopt_gate g = KOPT_GATE_INIT;

	add_v1(f, "### V1: Wide tiles\n\n```c\nint x;");
	run(f, &g, "Design\n\nKopt-Kernel: mla-decode\nKopt-Colour: blue\n");
	assert_int_equal(g.nr, 2);
	assert_string_equal(g.violations[0].rule, "devlog");
	assert_non_null(strstr(g.violations[0].what, "code block never "
			       "closed"));
	assert_string_equal(g.violations[1].rule, "trailer");
	kopt_gate_release(&g);
	assert_string_equal(messages.buf, "");
}

#define FIXTURE_TEST(t) \
	cmocka_unit_test_setup_teardown(t, setup_fixture, teardown_fixture)

int main(void)
{
	const struct CMUnitTest tests[] = {
		FIXTURE_TEST(test_clean_change),
		FIXTURE_TEST(test_regression_names_the_title),
		FIXTURE_TEST(test_skip_needs_a_reason),
		FIXTURE_TEST(test_devlog_fence_and_trailer),
	};
	int ret;

	git_libgit2_init();
	ret = cmocka_run_group_tests(tests, NULL, NULL);
	git_libgit2_shutdown();
	return ret;
}
