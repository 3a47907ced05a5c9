#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "devlog.h"
#include "error.h"
#include "lockfile.h"
#include "render.h"
#include "results.h"
#include "strvec.h"

#include "messages.h"

#ifndef KOPT_SOURCE_DIR
#define KOPT_SOURCE_DIR "."
#endif
#define FIX KOPT_SOURCE_DIR "/tests/fixtures/devlog/"

/*
 * Golden files: KOPT_UPDATE_GOLDEN=1 writes the expected files instead
 * of comparing (then review the diff).
 */

static void check_golden(const char *path, const struct kopt_buf *got)
{
	struct kopt_buf want = KOPT_BUF_INIT;

	if (getenv("KOPT_UPDATE_GOLDEN")) {
		assert_int_equal(kopt_write_file_atomic(path, got->buf,
							got->len, 0644), 0);
		return;
	}
	if (kopt_buf_read_file(&want, path))
		fail_msg("missing golden file %s", path);
	if (want.len != got->len || memcmp(want.buf, got->buf, got->len)) {
		print_message("# %s differs; got:\n%s\n", path, got->buf);
		fail_msg("golden mismatch: %s", path);
	}
	kopt_buf_release(&want);
}

static void list_md(struct kopt_strvec *out, const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;

	assert_non_null(d);
	while ((de = readdir(d)))
		if (kopt_ends_with(de->d_name, ".md"))
			kopt_strvec_push(out, de->d_name);
	closedir(d);
	kopt_strvec_sort(out);
}

/* A results entry as `git kopt verify` would write it. */
static void make_entry(struct kopt_results_entry *e, long b, long s, long t,
		       double dur, double tflops)
{
	kopt_results_entry_init(e);
	e->trial = kopt_strdup("decode");
	e->b = e->b_requested = b;
	e->s = s;
	e->t = t;
	e->dtype = kopt_strdup("bfloat16");
	e->device.name = kopt_strdup("NVIDIA H200");
	e->metrics[KOPT_METRIC_DURATION_US] = dur;
	e->metrics[KOPT_METRIC_TFLOPS] = tflops;
	e->metrics[KOPT_METRIC_GBPS] = tflops * 31.0;
	e->metrics[KOPT_METRIC_OCC_PCT] = 47.4;
	e->metrics[KOPT_METRIC_TC_PCT] = 31.2;
	e->bottleneck = kopt_strdup("Memory-bound");
	e->opportunities = kopt_calloc(1, sizeof(*e->opportunities));
	e->opportunities_nr = e->opportunities_alloc = 1;
	e->opportunities[0].name = kopt_strdup("Split-KV decode");
	e->opportunities[0].est_gain_pct = 30;
	e->opportunities[0].trigger = kopt_strdup("waves=0.24");
}

/* Bytes outside what the edit says it touched are unchanged. */
static void assert_outside_identical(const struct kopt_buf *before,
				     const struct kopt_devlog *after,
				     const struct kopt_devlog_edit *ed)
{
	size_t tail_before = before->len - ed->start - ed->old_len;
	size_t tail_after = after->text.len - ed->start - ed->new_len;

	assert_true(ed->start <= before->len);
	assert_int_equal(tail_before, tail_after);
	assert_memory_equal(before->buf, after->text.buf, ed->start);
	assert_memory_equal(before->buf + ed->start + ed->old_len,
			    after->text.buf + ed->start + ed->new_len,
			    tail_before);
}

static void assert_line_endings(const struct kopt_devlog *dl)
{
	size_t i;

	if (!dl->crlf)
		return;
	for (i = 0; i < dl->text.len; i++)
		if (dl->text.buf[i] == '\n')
			assert_true(i > 0 && dl->text.buf[i - 1] == '\r');
}

/* Run an edit, check it, run it again and check that nothing changes. */
typedef int (*edit_fn)(struct kopt_devlog *dl, void *data,
		       struct kopt_devlog_edit *ed);

static void check_edit(struct kopt_devlog *dl, edit_fn fn, void *data,
		       int expect_change)
{
	struct kopt_buf before = KOPT_BUF_INIT, once = KOPT_BUF_INIT;
	struct kopt_devlog_edit ed;

	kopt_buf_addbuf(&before, &dl->text);
	if (fn(dl, data, &ed))
		fail_msg("edit failed: %s", messages.buf);
	assert_int_equal(ed.changed, expect_change);
	assert_outside_identical(&before, dl, &ed);
	assert_line_endings(dl);
	kopt_buf_addbuf(&once, &dl->text);
	assert_int_equal(fn(dl, data, &ed), 0);
	assert_int_equal(ed.changed, 0);
	assert_int_equal(once.len, dl->text.len);
	assert_memory_equal(once.buf, dl->text.buf, once.len);
	kopt_buf_release(&before);
	kopt_buf_release(&once);
}

struct perf_edit {
	const char *version;
	struct kopt_results_entry *e, *parent;
};

static int do_put_perf(struct kopt_devlog *dl, void *data,
		       struct kopt_devlog_edit *ed)
{
	struct perf_edit *pe = data;

	return kopt_render_put_results(dl, pe->version, pe->e, pe->parent,
				       ed);
}

static int do_add_version(struct kopt_devlog *dl, void *data,
			  struct kopt_devlog_edit *ed)
{
	return kopt_devlog_add_version(dl, data, ed);
}

struct issues_edit {
	const char *version;
	int has_config;
	long b, s, t;
	const char *const *items;
};

static int do_set_issues(struct kopt_devlog *dl, void *data,
			 struct kopt_devlog_edit *ed)
{
	struct issues_edit *ie = data;

	return kopt_devlog_set_issues(dl, ie->version, ie->has_config, ie->b,
				      ie->s, ie->t, ie->items, ed);
}

static const char *const new_what[] = { "split the KV sequence", NULL };
static const char *const new_desc[] = { "addresses waves < 1", NULL };
static const char *const issues3[] = { "first issue", "second `code`",
				       "third", NULL };

/* Parse every devlog of the corpus and compare with its dump. */
static void test_corpus_parse(void **state)
{
	struct kopt_strvec files = KOPT_STRVEC_INIT;
	size_t i;

	(void)state;
	list_md(&files, FIX "corpus");
	assert_true(files.nr >= 15);
	for (i = 0; i < files.nr; i++) {
		struct kopt_devlog dl = KOPT_DEVLOG_INIT;
		struct kopt_buf dump = KOPT_BUF_INIT, golden = KOPT_BUF_INIT;
		char *path = kopt_xstrfmt(FIX "corpus/%s", files.v[i]);

		assert_int_equal(kopt_devlog_read_file(&dl, path), 0);
		kopt_devlog_dump(&dump, &dl);
		kopt_buf_addf(&golden, "%.*s.dump", (int)(strlen(path) - 3),
			      path);
		check_golden(golden.buf, &dump);
		kopt_devlog_release(&dl);
		kopt_buf_release(&dump);
		kopt_buf_release(&golden);
		free(path);
	}
	assert_string_equal(messages.buf, "");
	kopt_strvec_clear(&files);
}

/*
 * Every edit on every devlog of the corpus: bytes outside the block are
 * identical, the second run changes nothing, the result reads back.
 */
static void test_corpus_edits(void **state)
{
	struct kopt_strvec files = KOPT_STRVEC_INIT;
	size_t i;

	(void)state;
	list_md(&files, FIX "corpus");
	for (i = 0; i < files.nr; i++) {
		struct kopt_devlog dl = KOPT_DEVLOG_INIT;
		struct kopt_results_entry e, e2, parent;
		const struct kopt_devlog_version *v;
		const struct kopt_devlog_perf *pf;
		struct kopt_devlog_new_version nv = {
			"v99", "a new idea", "kernels/x/v99", new_what,
			new_desc
		};
		struct perf_edit pe;
		struct issues_edit ie = { NULL, 0, 0, 0, 0, issues3 };
		char *path = kopt_xstrfmt(FIX "corpus/%s", files.v[i]);
		char *last, *first;
		size_t n_before;

		print_message("# %s\n", files.v[i]);
		assert_int_equal(kopt_devlog_read_file(&dl, path), 0);
		assert_true(dl.versions_nr > 0);
		first = kopt_strdup(dl.versions[0].name);
		last = kopt_strdup(dl.versions[dl.versions_nr - 1].name);
		n_before = dl.versions_nr;

		/* a new performance block in the last version */
		make_entry(&e, 7, 3, 99, 50.0, 100.0);
		make_entry(&parent, 7, 3, 99, 60.0, 90.0);
		pe.version = last;
		pe.e = &e;
		pe.parent = &parent;
		check_edit(&dl, do_put_perf, &pe, 1);
		v = kopt_devlog_find_version(&dl, last);
		pf = kopt_devlog_find_perf(v, 7, 3, 99);
		assert_non_null(pf);
		assert_true(pf->metrics[KOPT_METRIC_DURATION_US] == 50.0);
		assert_string_equal(pf->bottleneck, "Memory-bound");
		assert_int_equal(pf->insights.nr, 1);

		/* replaced with new numbers: only the block moves */
		make_entry(&e2, 7, 3, 99, 45.0, 111.0);
		pe.e = &e2;
		check_edit(&dl, do_put_perf, &pe, 1);
		v = kopt_devlog_find_version(&dl, last);
		pf = kopt_devlog_find_perf(v, 7, 3, 99);
		assert_true(pf->metrics[KOPT_METRIC_DURATION_US] == 45.0);

		/* the version-level Issues of the first version */
		ie.version = first;
		check_edit(&dl, do_set_issues, &ie, 1);
		v = kopt_devlog_find_version(&dl, first);
		assert_int_equal(v->issues.nr, 3);
		assert_string_equal(v->issues.v[1], "second code");

		/* a new version after the last one */
		check_edit(&dl, do_add_version, &nv, 1);
		assert_int_equal(dl.versions_nr, n_before + 1);
		assert_string_equal(dl.versions[dl.versions_nr - 1].name,
				    "v99");
		assert_string_equal(dl.versions[dl.versions_nr - 1].title,
				    "a new idea");

		kopt_results_entry_release(&e);
		kopt_results_entry_release(&e2);
		kopt_results_entry_release(&parent);
		kopt_devlog_release(&dl);
		free(path);
		free(first);
		free(last);
	}
	assert_string_equal(messages.buf, "");
	kopt_strvec_clear(&files);
}

/* Replacing an existing block keeps the Insights people wrote. */
static void test_corpus_replace_keeps_insights(void **state)
{
	struct kopt_strvec files = KOPT_STRVEC_INIT;
	size_t i, j, k, replaced = 0;

	(void)state;
	list_md(&files, FIX "corpus");
	for (i = 0; i < files.nr; i++) {
		struct kopt_devlog dl = KOPT_DEVLOG_INIT;
		char *path = kopt_xstrfmt(FIX "corpus/%s", files.v[i]);

		assert_int_equal(kopt_devlog_read_file(&dl, path), 0);
		for (j = 0; j < dl.versions_nr; j++) {
			const struct kopt_devlog_version *v = &dl.versions[j];
			struct kopt_strvec insights = KOPT_STRVEC_INIT;
			struct kopt_results_entry e;
			struct perf_edit pe;
			char *name;
			long b, s, t;

			if (!v->perfs_nr || !v->perfs[0].has_config)
				continue;
			name = kopt_strdup(v->name);
			b = v->perfs[0].b;
			s = v->perfs[0].s;
			t = v->perfs[0].t;
			for (k = 0; k < v->perfs[0].insights.nr; k++)
				kopt_strvec_push(&insights,
						 v->perfs[0].insights.v[k]);
			make_entry(&e, b, s, t, 12.5, 3.0);
			pe.version = name;
			pe.e = &e;
			pe.parent = NULL;
			check_edit(&dl, do_put_perf, &pe, 1);
			v = kopt_devlog_find_version(&dl, name);
			assert_true(v->perfs[0].metrics[KOPT_METRIC_DURATION_US]
				    == 12.5);
			if (insights.nr) {
				assert_int_equal(v->perfs[0].insights.nr,
						 insights.nr);
				for (k = 0; k < insights.nr; k++)
					assert_string_equal(
						v->perfs[0].insights.v[k],
						insights.v[k]);
			}
			replaced++;
			kopt_results_entry_release(&e);
			kopt_strvec_clear(&insights);
			free(name);
			break;
		}
		kopt_devlog_release(&dl);
		free(path);
	}
	assert_true(replaced >= 15);
	assert_string_equal(messages.buf, "");
	kopt_strvec_clear(&files);
}

/* ------------------------------------------------------------------ */
/* Golden edits */

static void load(struct kopt_devlog *dl, const char *name)
{
	char *path = kopt_xstrfmt(FIX "edits/%s", name);

	assert_int_equal(kopt_devlog_read_file(dl, path), 0);
	free(path);
}

static void golden_edit(const char *input, const char *expected, edit_fn fn,
			void *data)
{
	struct kopt_devlog dl = KOPT_DEVLOG_INIT;
	char *path = kopt_xstrfmt(FIX "edits/%s", expected);

	load(&dl, input);
	check_edit(&dl, fn, data, 1);
	check_golden(path, &dl.text);
	free(path);
	kopt_devlog_release(&dl);
}

static void test_golden_add_version(void **state)
{
	struct kopt_devlog_new_version nv = {
		"v2", "Paged split-KV", "kernels/mla_decode/v2", new_what,
		new_desc
	};
	struct kopt_devlog_new_version bare = { "v3", "", NULL, NULL, NULL };

	(void)state;
	golden_edit("seed.md", "seed.add-version.md", do_add_version, &nv);
	golden_edit("crlf.md", "crlf.add-version.md", do_add_version, &nv);
	golden_edit("empty-log.md", "empty-log.add-version.md",
		    do_add_version, &bare);
	golden_edit("no-newline.md", "no-newline.add-version.md",
		    do_add_version, &nv);
}

static void test_golden_put_perf(void **state)
{
	struct kopt_results_entry e, parent;
	struct perf_edit pe = { "v1", &e, &parent };

	(void)state;
	/* a configuration v1 has not been measured at */
	make_entry(&e, 32, 16, 4096, 120.0, 640.0);
	make_entry(&parent, 32, 16, 4096, 140.0, 548.0);
	golden_edit("seed.md", "seed.put-perf-new.md", do_put_perf, &pe);
	kopt_results_entry_release(&e);
	kopt_results_entry_release(&parent);

	/* a replayed re-measurement of v1 at s=1, halved by OOM */
	make_entry(&e, 16, 1, 4096, 40.0, 120.0);
	e.b_requested = 32;
	e.replayed = 1;
	make_entry(&parent, 32, 1, 4096, 95.1, 50.6);
	golden_edit("seed.md", "seed.put-perf-replace.md", do_put_perf, &pe);
	golden_edit("terse.md", "terse.put-perf-replace.md", do_put_perf, &pe);
	golden_edit("crlf.md", "crlf.put-perf-replace.md", do_put_perf, &pe);

	/* a version with no performance yet */
	pe.version = "v1";
	golden_edit("comments.md", "comments.put-perf.md", do_put_perf, &pe);
	kopt_results_entry_release(&e);
	kopt_results_entry_release(&parent);
}

static void test_golden_set_issues(void **state)
{
	static const char *const items[] = {
		"Combine kernel is 9% of the time",
		"Tail wave on the last 4 SMs", NULL
	};
	struct issues_edit block = { "v1", 1, 32, 1, 4096, items };
	struct issues_edit version = { "v0", 0, 0, 0, 0, items };
	struct issues_edit none = { "v1", 1, 32, 1, 4096, NULL };

	(void)state;
	golden_edit("seed.md", "seed.set-issues-block.md", do_set_issues,
		    &block);
	golden_edit("seed.md", "seed.set-issues-version.md", do_set_issues,
		    &version);
	golden_edit("terse.md", "terse.set-issues-none.md", do_set_issues,
		    &none);
	/* Issues written as text under a heading: the text stays apart */
	version.version = "v0";
	golden_edit("issues-text.md", "issues-text.set-issues.md",
		    do_set_issues, &version);
}

/*
 * A CRLF devlog whose performance paragraph, right under Location, holds
 * an unclosed "<!--": the version's Issues go in above the block, the
 * block reads the same after the edit, and the edit is idempotent.
 */
static void test_golden_issues_above_inline_comment(void **state)
{
	static const char *const items[] = { "first issue", NULL };
	struct issues_edit version = { "v1", 0, 0, 0, 0, items };
	struct kopt_devlog dl = KOPT_DEVLOG_INIT;
	const struct kopt_devlog_version *v;

	(void)state;
	golden_edit("comment-crlf.md", "comment-crlf.set-issues-version.md",
		    do_set_issues, &version);
	load(&dl, "comment-crlf.set-issues-version.md");
	v = kopt_devlog_find_version(&dl, "v1");
	assert_non_null(v);
	assert_int_equal(v->issues.nr, 1);
	assert_int_equal(v->perfs_nr, 1);
	assert_int_equal(v->perfs[0].line, 11);
	assert_int_equal(v->perfs[0].table_line, 12);
	assert_string_equal(v->perfs[0].bottleneck, "Compute-bound");
	assert_int_equal(v->perfs[0].insights.nr, 1);
	kopt_devlog_release(&dl);
}

/*
 * Mixed line endings, LF ahead by one line: the version's Issues, LF
 * lines, are rewritten shorter.  The edit writes the version heading's
 * CRLF, and the same edit again changes nothing, though the file's
 * majority moved.
 */
static void test_mixed_line_endings_stable(void **state)
{
	static const char text[] =
		"# K\n\n## Development log\n\n"
		"### V0: base\r\n\r\n**Location**: `k/v0`\r\n\r\n"
		"**Issues**:\n- a\n- b\n- c\n- d\n"
		"\r\nSome notes.\r\nMore.\r\nEnd.\r\n";
	static const char *const items[] = { "one", "two", NULL };
	struct issues_edit version = { "v0", 0, 0, 0, 0, items };
	struct kopt_devlog dl = KOPT_DEVLOG_INIT;
	struct kopt_buf once = KOPT_BUF_INIT;
	struct kopt_devlog_edit ed;

	(void)state;
	assert_int_equal(kopt_devlog_parse(&dl, text, sizeof(text) - 1,
					   "mixed.md"), 0);
	assert_false(dl.crlf);
	assert_int_equal(do_set_issues(&dl, &version, &ed), 0);
	assert_true(ed.changed);
	assert_non_null(strstr(dl.text.buf, "**Issues**:\r\n- one\r\n"
			       "- two\r\n\r\nSome notes."));
	assert_true(dl.crlf);
	kopt_buf_addbuf(&once, &dl.text);
	assert_int_equal(do_set_issues(&dl, &version, &ed), 0);
	assert_false(ed.changed);
	assert_int_equal(dl.text.len, once.len);
	assert_memory_equal(dl.text.buf, once.buf, once.len);
	kopt_buf_release(&once);
	kopt_devlog_release(&dl);
}

/*
 * A block whose run left stages unmeasured lists them under "Not
 * measured", between its Issues and its Insights: all one block.
 */
static void test_not_measured_in_block(void **state)
{
	static const char text[] =
		"# K\n\n## Development log\n\n### V0: base\n\n"
		"**Performance** (NVIDIA H200, bfloat16, b=32, s=1, t=4096):\n\n"
		"| Metric | Value | vs Previous |\n| --- | --- | --- |\n"
		"| Duration | 27.33 us | -- |\n\n"
		"**Bottleneck**: Not measured\n\n**Issues**:\n- one\n\n"
		"**Not measured**:\n- 'k': its samples failed.\n\n"
		"**Insights**:\n- kept\n";
	struct kopt_devlog dl = KOPT_DEVLOG_INIT;
	const struct kopt_devlog_version *v;

	(void)state;
	assert_int_equal(kopt_devlog_parse(&dl, text, sizeof(text) - 1,
					   "nm.md"), 0);
	v = kopt_devlog_find_version(&dl, "v0");
	assert_non_null(v);
	assert_int_equal(v->perfs_nr, 1);
	assert_int_equal(v->perfs[0].insights_line, 21);
	assert_int_equal(v->perfs[0].last_line, 22);
	assert_int_equal(v->perfs[0].insights.nr, 1);
	assert_string_equal(v->perfs[0].insights.v[0], "kept");
	kopt_devlog_release(&dl);
}

/* Edits that cannot be placed are refused and change nothing. */
static void test_refusals(void **state)
{
	struct kopt_devlog dl = KOPT_DEVLOG_INIT;
	struct kopt_devlog_edit ed;
	struct kopt_buf before = KOPT_BUF_INIT;
	struct kopt_devlog_new_version nv = { "v1", "x", NULL, NULL, NULL };
	struct kopt_devlog_new_version bad = { "x1", "x", NULL, NULL, NULL };

	(void)state;
	load(&dl, "seed.md");
	kopt_buf_addbuf(&before, &dl.text);
	assert_int_equal(kopt_devlog_put_perf(&dl, "v7", 1, 1, 1, 0,
					      "**Performance** (x, b=1, s=1, "
					      "t=1):\n", &ed), -1);
	assert_int_equal(kopt_devlog_set_issues(&dl, "v1", 1, 8, 8, 8, NULL,
						&ed), -1);
	assert_int_equal(kopt_devlog_add_version(&dl, &bad, &ed), -1);
	/* a block that would not read back as the block asked for */
	assert_int_equal(kopt_devlog_put_perf(&dl, "v1", 1, 1, 1, 0,
					      "some text\n", &ed), -1);
	assert_string_equal(messages.buf,
		"error: " FIX "edits/seed.md:13: no version 'v7' in the "
		"devlog; add its entry first ('git kopt design')\n"
		"error: " FIX "edits/seed.md:63: v1 has no performance block "
		"at b=8, s=8, t=8\n"
		"error: 'x1' is not a version name (v0, v1, ...)\n"
		"error: " FIX "edits/seed.md:91: the performance block of v1 "
		"at b=1, s=1, t=1 does not read back; devlog left as it "
		"was\n");
	assert_int_equal(before.len, dl.text.len);
	assert_memory_equal(before.buf, dl.text.buf, before.len);
	/* adding a version that exists changes nothing */
	assert_int_equal(kopt_devlog_add_version(&dl, &nv, &ed), 0);
	assert_int_equal(ed.changed, 0);
	kopt_devlog_release(&dl);

	kopt_buf_reset(&messages);
	load(&dl, "no-log.md");
	assert_int_equal(kopt_devlog_add_version(&dl, &nv, &ed), -1);
	assert_string_equal(messages.buf,
		"error: " FIX "edits/no-log.md:5: no '## Development log' "
		"section to add v1 under; add the heading and run again\n");
	kopt_devlog_release(&dl);

	kopt_buf_reset(&messages);
	load(&dl, "two-blocks.md");
	assert_int_equal(kopt_devlog_set_issues(&dl, "v0", 1, 32, 1, 4096,
						NULL, &ed), -1);
	assert_string_equal(messages.buf,
		"error: " FIX "edits/two-blocks.md:20: a second performance "
		"block of v0 at b=32, s=1, t=4096 (the first is at line 7); "
		"keep one\n");
	kopt_devlog_release(&dl);
	kopt_buf_release(&before);
}

static void expect_bad(const char *data, size_t len, const char *expected)
{
	struct kopt_devlog dl = KOPT_DEVLOG_INIT;

	kopt_buf_reset(&messages);
	assert_int_equal(kopt_devlog_parse(&dl, data, len, "k.md"),
			 KOPT_EINVALID);
	assert_string_equal(messages.buf, expected);
	assert_int_equal(dl.versions_nr, 0);
	assert_int_equal(dl.text.len, 0);
	kopt_devlog_release(&dl);
}

static void test_bad_input(void **state)
{
	static const char dup[] = "# K\n\n## Development log\n\n### V1: a\n\n"
		"text\n\n### v1 - again\n";

	(void)state;
	expect_bad("", 0, "error: k.md:1: the devlog is empty\n");
	expect_bad(" \n\r\n\t\n", 6, "error: k.md:1: the devlog is empty\n");
	expect_bad("# K\n\nab\0cd\n", 11, "error: k.md:3: binary content "
		   "(a NUL byte), not a Markdown devlog\n");
	expect_bad("# K\n\n\xe9t\xe9\n", 8, "error: k.md:3: not UTF-8 "
		   "text\n");
	expect_bad(dup, strlen(dup), "error: k.md:9: version 'v1' has a "
		   "second heading (the first is at line 5)\n");
}

static void test_lookups(void **state)
{
	struct kopt_devlog dl = KOPT_DEVLOG_INIT;
	const struct kopt_devlog_version *v;

	(void)state;
	assert_int_equal(kopt_devlog_read_file(&dl, FIX "corpus/"
					       "16-replayed-oom.md"), 0);
	v = kopt_devlog_find_version(&dl, "V2");
	assert_non_null(v);
	/* the block of b=16 asked as 32 is found by either */
	assert_non_null(kopt_devlog_find_perf(v, 32, 16, 4096));
	assert_ptr_equal(kopt_devlog_find_perf(v, 16, 16, 4096),
			 kopt_devlog_find_perf(v, 32, 16, 4096));
	assert_true(kopt_devlog_find_perf(v, 32, 16, 4096)->replayed);
	assert_null(kopt_devlog_find_perf(v, 32, 2, 4096));
	assert_null(kopt_devlog_find_version(&dl, "v9"));
	assert_int_equal(kopt_devlog_offset(&dl, 1), 0);
	assert_int_equal(kopt_devlog_offset(&dl, dl.lines_nr + 1),
			 dl.text.len);
	kopt_devlog_release(&dl);
	assert_int_equal(kopt_devlog_read_file(&dl, FIX "nope.md"),
			 KOPT_ENOTFOUND);
}

/*
 * Every kind of row name a performance table may use, read by both
 * readers: the first kind in the order of the checks wins when a name
 * holds two ("time TC": duration), and a name of none is no metric.
 */
static void test_row_names(void **state)
{
	static const char text[] =
		"# k\n\n## Development log\n\n### V1: x\n\n"
		"**Performance** (H200, b=1, s=1, t=1):\n\n"
		"| Metric | Value |\n|---|---|\n"
		"| Kernel time TC | 2 ms |\n"
		"| Achieved TFLOPs | 11 |\n"
		"| HBM Bandwidth | 1.5 TB/s |\n"
		"| Occ. | 41% |\n"
		"| tc util | 7% |\n"
		"| DRAM % | 62 |\n"
		"| L2 hit rate | 71 |\n"
		"| Local memory | 8 |\n"
		"| Registers | 128 |\n"
		"| Waves per SM | 0.5 |\n"
		"| % of Roofline | 45 |\n"
		"| Something else | 3 |\n"
		"| TENSOR pipe | 99 |\n";
	int view;

	(void)state;
	for (view = 0; view < 2; view++) {
		struct kopt_devlog dl = KOPT_DEVLOG_INIT;
		const struct kopt_devlog_version *v;
		const double *m;
		assert_int_equal(view ?
				 kopt_devlog_parse_view(&dl, text,
							strlen(text), "t") :
				 kopt_devlog_parse(&dl, text, strlen(text),
						   "t"), 0);
		v = kopt_devlog_find_version(&dl, "v1");
		assert_non_null(v);
		assert_int_equal(v->perfs_nr, 1);
		m = v->perfs[0].metrics;
		assert_true(m[KOPT_METRIC_DURATION_US] == 2000.0);
		assert_true(m[KOPT_METRIC_TFLOPS] == 11.0);
		assert_true(m[KOPT_METRIC_GBPS] == 1500.0);
		assert_true(m[KOPT_METRIC_OCC_PCT] == 41.0);
		/* the first row of a kind counts: "tc util", not "TENSOR" */
		assert_true(m[KOPT_METRIC_TC_PCT] == 7.0);
		assert_true(m[KOPT_METRIC_DRAM_PCT] == 62.0);
		assert_true(m[KOPT_METRIC_L2_HIT_PCT] == 71.0);
		assert_true(m[KOPT_METRIC_SPILL_BYTES] == 8.0);
		assert_true(m[KOPT_METRIC_REGS] == 128.0);
		assert_true(m[KOPT_METRIC_WAVES] == 0.5);
		assert_true(m[KOPT_METRIC_ROOFLINE_PCT] == 45.0);
		kopt_devlog_release(&dl);
	}
}

/* a heading's version number follows the version rule: no "V01" */
static void test_heading_versions(void **state)
{
	static const char text[] =
		"# k\n\n## Development log\n\n"
		"### V01: padded\n\ntext\n\n"
		"### Version 2 - spelled out\n\ntext\n\n"
		"### V3: tiling\n\ntext\n";
	struct kopt_devlog dl = KOPT_DEVLOG_INIT;

	(void)state;
	assert_int_equal(kopt_devlog_parse(&dl, text, strlen(text), "k.md"), 0);
	assert_int_equal(dl.versions_nr, 2);
	assert_string_equal(dl.versions[0].name, "v2");
	assert_int_equal(dl.versions[0].number, 2);
	assert_string_equal(dl.versions[1].name, "v3");
	assert_string_equal(dl.versions[1].title, "tiling");
	assert_null(kopt_devlog_find_version(&dl, "v01"));
	assert_null(kopt_devlog_find_version(&dl, "v1"));
	kopt_devlog_release(&dl);
}

/* bench/limits: a devlog larger than the limit is refused, naming it */
static void test_too_large(void **state)
{
	struct kopt_devlog dl = KOPT_DEVLOG_INIT;
	size_t len = KOPT_DEVLOG_MAX_BYTES + 1;
	char *text = malloc(len);

	(void)state;
	assert_non_null(text);
	memset(text, 'x', len);
	memcpy(text, "# k\n\n## Development log\n\n", 26);
	kopt_buf_reset(&messages);
	assert_int_equal(kopt_devlog_parse(&dl, text, len, "big.md"),
			 KOPT_EINVALID);
	assert_string_equal(messages.buf, "error: big.md: 16.8 MB is more than "
			    "git-kopt reads in a devlog (16 MB); move the "
			    "entries of old versions to another file\n");
	kopt_devlog_release(&dl);
	free(text);
}

/* the version a new one was created from, as design writes it */
static void test_created_from(void **state)
{
	struct kopt_devlog dl = KOPT_DEVLOG_INIT;
	const char *text =
		"# k\n\n## Development log\n\n"
		"### V3: tiles\n\n**What changed**:\n"
		"- Created from V1 (`kernels/k/v1`)\n- tiles\n\n"
		"### V4: more\n\n**What changed**:\n"
		"- created from v12x\n- Created from V\n- more\n\n"
		"### V5: none\n\n**What changed**:\n- none\n";
	char *line = kopt_devlog_created_from_line("v8", "kernels/k/v8");
	char *from;

	(void)state;
	assert_string_equal(line, "Created from V8 (`kernels/k/v8`)");
	free(line);
	assert_int_equal(kopt_devlog_parse(&dl, text, strlen(text), "k.md"), 0);
	from = kopt_devlog_created_from(kopt_devlog_find_version(&dl, "v3"));
	assert_string_equal(from, "v1");
	free(from);
	assert_null(kopt_devlog_created_from(kopt_devlog_find_version(&dl,
								      "v4")));
	assert_null(kopt_devlog_created_from(kopt_devlog_find_version(&dl,
								      "v5")));
	assert_null(kopt_devlog_created_from(NULL));
	kopt_devlog_release(&dl);
}

/* ------------------------------------------------------------------ */
/* The views' reading */

/*
 * kopt_devlog_parse_view() gives kopt_devlog_parse()'s model less what
 * it does not read (kopt_devlog_drop_unread()), and the same messages;
 * 1 when it found the blocks itself.
 */
static int check_view(const char *text, size_t len, const char *label)
{
	struct kopt_devlog full = KOPT_DEVLOG_INIT, view = KOPT_DEVLOG_INIT;
	struct kopt_buf a = KOPT_BUF_INIT, b = KOPT_BUF_INIT;
	struct kopt_buf m = KOPT_BUF_INIT;
	int r_full, r_view, quick;

	r_full = kopt_devlog_parse(&full, text, len, label);
	kopt_buf_addbuf(&m, &messages);
	kopt_buf_reset(&messages);
	r_view = kopt_devlog_parse_view(&view, text, len, label);
	assert_int_equal(r_view, r_full);
	assert_string_equal(messages.buf, m.buf);
	kopt_buf_reset(&messages);
	kopt_devlog_drop_unread(&full);
	kopt_devlog_dump(&a, &full);
	kopt_devlog_summary(&a, &full, KOPT_DEVLOG_SUMMARY_PERFS);
	kopt_devlog_dump(&b, &view);
	kopt_devlog_summary(&b, &view, KOPT_DEVLOG_SUMMARY_PERFS);
	if (strcmp(a.buf, b.buf))
		print_message("# %s: full\n%s\n# view\n%s\n", label, a.buf,
			      b.buf);
	assert_string_equal(a.buf, b.buf);
	assert_int_equal(full.quick, 0);
	quick = view.quick;
	kopt_devlog_release(&full);
	kopt_devlog_release(&view);
	kopt_buf_release(&a);
	kopt_buf_release(&b);
	kopt_buf_release(&m);
	return quick;
}

/* Every devlog of the fixtures: the same model; most read quickly. */
static void test_view_fixtures(void **state)
{
	static const char *const dirs[] = {
		FIX "corpus", FIX "edits",
		KOPT_SOURCE_DIR "/tests/fixtures/handwritten", NULL
	};
	const char *const *d;
	size_t i, nr = 0, quick = 0;

	(void)state;
	for (d = dirs; *d; d++) {
		struct kopt_strvec files = KOPT_STRVEC_INIT;
		list_md(&files, *d);
		for (i = 0; i < files.nr; i++) {
			struct kopt_buf text = KOPT_BUF_INIT;
			char *path = kopt_xstrfmt("%s/%s", *d, files.v[i]);
			assert_int_equal(kopt_buf_read_file(&text, path), 0);
			quick += check_view(text.buf, text.len, path);
			nr++;
			kopt_buf_release(&text);
			free(path);
		}
		kopt_strvec_clear(&files);
	}
	assert_true(nr >= 40);
	assert_true(quick * 4 >= nr * 3);
}

#define LOG "# k\n\n## Development log\n\n### V1: one\n\n"
#define PERF "**Performance** (NVIDIA H200, b=32, s=1, t=4096):\n"
#define TABLE "| Metric | Value | vs Previous |\n| --- | ---: | --- |\n" \
	"| Duration | 41.5 us | -3% |\n| Achieved GB/s | 1.2 TB/s |\n"

/* The forms the quick reading takes, each as cmark reads it. */
static void test_view_forms_taken(void **state)
{
	static const char *const taken[] = {
		LOG PERF TABLE "\n**Bottleneck**: memory\n",
		/* a table right under its label, outer pipes left out */
		LOG PERF "Metric | Value\n--- | ---\nDuration | 12 us | x\n",
		/* counts that differ: no table, a paragraph */
		LOG PERF "| Metric | Value |\n| --- |\n| Duration | 1 us |\n",
		/* a row of one cell, a short row, a wide one */
		LOG PERF TABLE "Duration 2\n| Occupancy |\n|a|b|c|d|\n",
		/* closing #s, a heading made of #s, levels */
		"# k #\n\n## Development log ##\n\n### V1: one ##\n\n"
		"#### Performance (H200, b=1, s=1, t=1) ####\n\n"
		"| Metric | Value |\n|-|-|\n| Duration | 3 ms |\n\n"
		"### V2 (abandoned) #\n\n##\n\n#### ####\n",
		/* lists: lazy lines, loose items, a heading right after */
		LOG "**What changed**:\n- one\ngoes on\n- two\n\n  more\n"
		"### V2: two\n- a\n\n- b\n\n**Issues**:\n- x\n",
		/* code, comments and breaks hide what is in them */
		LOG "```\n### V2: no\n```\n\n<!-- a\n### V3: no\n-->\n"
		"    ### V4: no\n\n***\n---\n~~~~ x\n| a |\n~~~\n~~~~\n"
		"### V5: yes\n",
		/* front matter, CRLF, a byte-order mark */
		"---\ntitle: x\n---\n# k\r\n\r\n## Overview\r\n\r\nok\r\n",
		"\xef\xbb\xbf# k\n\n## Target\n\nfast\n",
		/* a label over a list, a paragraph over a fence */
		LOG PERF TABLE "**Issues**:\n- waves\n**Insights**:\n- x\n"
		"text\n```\ncode\n```\n",
		NULL
	};
	const char *const *t;

	(void)state;
	for (t = taken; *t; t++)
		assert_int_equal(check_view(*t, strlen(*t), "d.md"), 1);
}

/* What it leaves to cmark, read the same through cmark. */
static void test_view_forms_left(void **state)
{
	static const char *const left[] = {
		"k\n===\n\n## Development log\n",           /* setext */
		LOG "> quoted\n",                            /* block quote */
		LOG "1. first\n2. second\n",                 /* ordered */
		LOG "- a\n  - nested\n",                     /* nested */
		"# *k*\n",                                   /* emphasis */
		"# k `x`\n",                                 /* code span */
		LOG PERF "| Metric | Value |\n| --- | --- |\n"
		"| Duration | `4` us |\n",                   /* inline cell */
		LOG PERF "| Metric | Value |\n| --- | --- |\n"
		"| Dur\\|ation | 4 us |\n",                  /* escaped pipe */
		LOG "<div>\n### V2: in html\n</div>\n",       /* HTML */
		LOG "\tindented\n",                          /* a tab */
		LOG "[ref]: /url\n",                         /* reference */
		LOG "two\nlines\n:-\n",                      /* table under */
		LOG "-\n",                                   /* empty item */
		LOG "a\n\x0b\n",                             /* control */
		NULL
	};
	const char *const *t;

	(void)state;
	for (t = left; *t; t++)
		assert_int_equal(check_view(*t, strlen(*t), "d.md"), 0);
	/* refused the same way, with the same messages */
	assert_int_equal(check_view("\n \n", 3, "e.md"), 0);
	assert_int_equal(check_view(LOG "### V1: again\n",
				    strlen(LOG "### V1: again\n"), "d.md"), 0);
}

/*
 * A byte order mark: cmark skips one at the start, so a heading behind
 * it is one; behind two, the second is text (U+FEFF) and it is not.
 */
static void test_byte_order_marks(void **state)
{
	static const char one[] = "\xef\xbb\xbf# k\n\n## Overview\n\nx\n";
	static const char two[] =
		"\xef\xbb\xbf\xef\xbb\xbf# k\n\n## Overview\n\nx\n";
	struct kopt_devlog dl = KOPT_DEVLOG_INIT;

	(void)state;
	assert_int_equal(kopt_devlog_parse(&dl, one, strlen(one), "d.md"), 0);
	assert_non_null(dl.title);
	assert_string_equal(dl.title, "k");
	kopt_devlog_release(&dl);
	assert_int_equal(kopt_devlog_parse(&dl, two, strlen(two), "d.md"), 0);
	assert_null(dl.title);
	kopt_devlog_release(&dl);
	/* the same model either way; two are left to cmark */
	assert_int_equal(check_view(one, strlen(one), "d.md"), 1);
	assert_int_equal(check_view(two, strlen(two), "d.md"), 0);
}

/* In place, what the summary without the blocks reads back as. */
static void test_slim(void **state)
{
	struct kopt_strvec files = KOPT_STRVEC_INIT;
	size_t i;

	(void)state;
	list_md(&files, FIX "corpus");
	for (i = 0; i < files.nr; i++) {
		struct kopt_devlog dl = KOPT_DEVLOG_INIT;
		struct kopt_devlog back = KOPT_DEVLOG_INIT;
		struct kopt_buf text = KOPT_BUF_INIT, a = KOPT_BUF_INIT;
		struct kopt_buf b = KOPT_BUF_INIT;
		char *path = kopt_xstrfmt(FIX "corpus/%s", files.v[i]);

		assert_int_equal(kopt_devlog_read_file(&dl, path), 0);
		kopt_devlog_summary(&text, &dl, 0);
		assert_int_equal(kopt_devlog_from_summary(&back, text.buf,
							  text.len, "k.md"),
				 0);
		assert_int_equal(kopt_devlog_slim_ok(&dl), 1);
		if (dl.versions_nr) {
			/* a version without a title would not read back */
			char *title = dl.versions[0].title;
			dl.versions[0].title = NULL;
			assert_int_equal(kopt_devlog_slim_ok(&dl), 0);
			assert_int_equal(kopt_devlog_slim(&dl, "k.md"), -1);
			assert_non_null(dl.text.buf);	/* unchanged */
			dl.versions[0].title = title;
		}
		assert_int_equal(kopt_devlog_slim(&dl, "k.md"), 0);
		kopt_devlog_dump(&a, &dl);
		kopt_devlog_summary(&a, &dl, KOPT_DEVLOG_SUMMARY_PERFS);
		kopt_devlog_dump(&b, &back);
		kopt_devlog_summary(&b, &back, KOPT_DEVLOG_SUMMARY_PERFS);
		assert_string_equal(a.buf, b.buf);
		assert_string_equal(dl.label, back.label);
		assert_int_equal(dl.text.len, 0);
		assert_null(dl.line_start);
		kopt_devlog_release(&dl);
		kopt_devlog_release(&back);
		kopt_buf_release(&text);
		kopt_buf_release(&a);
		kopt_buf_release(&b);
		free(path);
	}
	kopt_strvec_clear(&files);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		MESSAGES_TEST(test_corpus_parse),
		MESSAGES_TEST(test_corpus_edits),
		MESSAGES_TEST(test_corpus_replace_keeps_insights),
		MESSAGES_TEST(test_golden_add_version),
		MESSAGES_TEST(test_golden_put_perf),
		MESSAGES_TEST(test_golden_set_issues),
		MESSAGES_TEST(test_golden_issues_above_inline_comment),
		MESSAGES_TEST(test_mixed_line_endings_stable),
		MESSAGES_TEST(test_not_measured_in_block),
		MESSAGES_TEST(test_refusals),
		MESSAGES_TEST(test_bad_input),
		MESSAGES_TEST(test_heading_versions),
		MESSAGES_TEST(test_lookups),
		MESSAGES_TEST(test_row_names),
		MESSAGES_TEST(test_too_large),
		MESSAGES_TEST(test_created_from),
		MESSAGES_TEST(test_view_fixtures),
		MESSAGES_TEST(test_view_forms_taken),
		MESSAGES_TEST(test_view_forms_left),
		MESSAGES_TEST(test_byte_order_marks),
		MESSAGES_TEST(test_slim),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
