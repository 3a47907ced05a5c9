#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "error.h"
#include "knowledge.h"

#ifndef KOPT_SOURCE_DIR
#define KOPT_SOURCE_DIR "."
#endif
#define FIX KOPT_SOURCE_DIR "/tests/fixtures/knowledge/detail/"

/* Parse a fixture; return its problems as lint prints them. */
static int lint(struct kopt_buf *out, struct kopt_detail *d,
		const char *dir, const char *name)
{
	struct kopt_buf text = KOPT_BUF_INIT;
	struct kopt_problems p = KOPT_PROBLEMS_INIT;
	char *path = kopt_xstrfmt("%s%s", dir, name);
	int ret;

	if (kopt_buf_read_file(&text, path))
		fail_msg("cannot read %s", path);
	ret = kopt_detail_parse(d, name, text.buf, text.len, &p);
	kopt_problems_format(out, &p);
	kopt_problems_clear(&p);
	kopt_buf_release(&text);
	free(path);
	return ret;
}

/* Every fixture gives exactly the problems of its .lint golden file. */
static void test_fixtures(void **state)
{
	static const char *const names[] = {
		"valid", "bold-source-type", "no-h1", "two-h1", "empty-h1",
		"missing-section", "out-of-order", "duplicate-section",
		"unexpected-section", "empty-section", "no-context",
		"trigger-syntax", "trigger-unknown-metric",
		"trigger-not-condition", "control-unknown", "control-twice",
		"no-source-type", "bad-source-type", "no-evidence-table",
		"no-evidence-rows", "placeholders",
	};
	size_t i;

	(void)state;
	for (i = 0; i < KOPT_ARRAY_SIZE(names); i++) {
		struct kopt_buf got = KOPT_BUF_INIT, want = KOPT_BUF_INIT;
		struct kopt_detail d;
		char *md = kopt_xstrfmt("%s.md", names[i]);
		char *golden = kopt_xstrfmt(FIX "%s.lint", names[i]);
		int ret = lint(&got, &d, FIX, md);

		if (kopt_buf_read_file(&want, golden))
			fail_msg("cannot read %s", golden);
		if (strcmp(got.buf, want.buf))
			fail_msg("%s: got\n%s\nwant\n%s", md, got.buf,
				 want.buf);
		assert_int_equal(ret, want.len ? KOPT_EINVALID : 0);
		kopt_detail_release(&d);
		kopt_buf_release(&got);
		kopt_buf_release(&want);
		free(md);
		free(golden);
	}
}

static void test_valid_content(void **state)
{
	struct kopt_buf out = KOPT_BUF_INIT;
	struct kopt_detail d;

	(void)state;
	assert_int_equal(lint(&out, &d, FIX, "valid.md"), 0);
	assert_string_equal(d.name, "Split-KV decode");
	assert_int_equal(d.name_line, 1);
	assert_int_equal(d.contexts.nr, 1);
	assert_string_equal(d.contexts.v[0], "Decode attention over a long "
			    "KV cache with a small batch");
	assert_int_equal(d.triggers_nr, 2);
	assert_string_equal(d.triggers[0].text, "waves < 1");
	assert_int_equal(d.triggers[0].line, 7);
	assert_string_equal(d.triggers[1].text,
			    "t >= 1024 and (b * s < 64 or dram_pct < 50)");
	assert_int_equal(d.triggers[1].line, 8);
	assert_int_equal(d.control, KOPT_CONTROL_BLOCK);
	assert_int_equal(d.control_line, 9);
	assert_string_equal(d.source_type, "local experiment");
	/* the line as written, for strategize to find the versions in */
	assert_string_equal(d.source, "Source type: local experiment (mla-decode v1 -> v2)");
	assert_int_equal(d.evidence_rows, 1);
	kopt_detail_release(&d);

	kopt_buf_reset(&out);
	assert_int_equal(lint(&out, &d, FIX, "bold-source-type.md"), 0);
	assert_string_equal(d.source_type, "external report");
	assert_string_equal(d.source, "**Source type:** external report (mla-decode v1 -> v2)");
	kopt_detail_release(&d);
	kopt_buf_release(&out);
}

/* A template does not pass until it is filled in. */
static void test_templates_fail(void **state)
{
	static const char *const names[] = { "optimization.md",
					     "anti-pattern.md" };
	size_t i;

	(void)state;
	for (i = 0; i < KOPT_ARRAY_SIZE(names); i++) {
		struct kopt_buf out = KOPT_BUF_INIT;
		struct kopt_detail d;

		assert_int_equal(lint(&out, &d, KOPT_SOURCE_DIR "/templates/",
				      names[i]), KOPT_EINVALID);
		assert_non_null(strstr(out.buf, i ?
			":1: template placeholder '[Anti-Pattern Name]'" :
			":1: template placeholder '[Optimization Name]'"));
		assert_non_null(strstr(out.buf, "'[Context 1"));
		assert_non_null(strstr(out.buf, "'[Metric condition 1]'"));
		assert_non_null(strstr(out.buf, "'[block / warp / thread]'"));
		assert_non_null(strstr(out.buf, "'# Code snippet"));
		assert_non_null(strstr(out.buf, "'[local experiment / "
				       "external report]'"));
		/* the sections themselves are all there, in order */
		assert_null(strstr(out.buf, "missing section"));
		assert_null(strstr(out.buf, "out of order"));
		assert_int_equal(d.triggers_nr, 0);
		kopt_detail_release(&d);
		kopt_buf_release(&out);
	}
}

static void test_locate(void **state)
{
	struct kopt_buf why = KOPT_BUF_INIT;
	enum kopt_kind kind;
	char *lang, *name;

	(void)state;
	assert_int_equal(kopt_knowledge_locate("docs/knowledge",
		"docs/knowledge/optimizations/split-kv.md", &kind, &lang,
		&name), 0);
	assert_int_equal(kind, KOPT_KIND_OPTIMIZATION);
	assert_null(lang);
	assert_string_equal(name, "split-kv");
	free(name);

	assert_int_equal(kopt_knowledge_locate("docs/knowledge/",
		"docs/knowledge/languages/cute-dsl/anti-patterns/tma.md",
		&kind, &lang, &name), 0);
	assert_int_equal(kind, KOPT_KIND_ANTI_PATTERN);
	assert_string_equal(lang, "cute-dsl");
	assert_string_equal(name, "tma");
	free(lang);
	free(name);

	assert_int_equal(kopt_knowledge_locate("docs/knowledge",
		"docs/other/x.md", &kind, &lang, &name), KOPT_ENOTFOUND);
	assert_int_equal(kopt_knowledge_locate("docs/knowledge",
		"docs/knowledge-old/x.md", &kind, &lang, &name),
		KOPT_ENOTFOUND);
	assert_int_equal(kopt_knowledge_locate("docs/knowledge",
		"docs/knowledge/notes/x.md", &kind, &lang, &name),
		KOPT_EINVALID);
	kopt_knowledge_misplaced(&why, "docs/knowledge",
				 "docs/knowledge/notes/x.md");
	assert_non_null(strstr(why.buf, "not in a folder of detail files"));
	assert_int_equal(kopt_knowledge_locate("docs/knowledge",
		"docs/knowledge/optimizations/sub/x.md", &kind, &lang, &name),
		KOPT_EINVALID);
	assert_int_equal(kopt_knowledge_locate("docs/knowledge",
		"docs/knowledge/optimizations/x.txt", &kind, &lang, &name),
		KOPT_EINVALID);
	assert_int_equal(kopt_knowledge_locate("docs/knowledge",
		"docs/knowledge/languages/Bad Name/optimizations/x.md", &kind,
		&lang, &name), KOPT_EINVALID);
	assert_null(lang);
	assert_null(name);
	kopt_buf_reset(&why);
	kopt_knowledge_misplaced(&why, "docs/knowledge", "docs/knowledge/"
				 "languages/Bad Name/optimizations/x.md");
	assert_string_equal(why.buf, "'Bad Name' is not a valid language name");
	kopt_buf_release(&why);

	name = kopt_knowledge_path("docs/knowledge/", KOPT_KIND_ANTI_PATTERN,
				   NULL, "spill");
	assert_string_equal(name, "docs/knowledge/anti-patterns/spill.md");
	free(name);
	name = kopt_knowledge_path("kb", KOPT_KIND_OPTIMIZATION, "cuda-c",
				   "lb");
	assert_string_equal(name, "kb/languages/cuda-c/optimizations/lb.md");
	free(name);
}

static void test_placeholder(void **state)
{
	size_t n;

	(void)state;
	assert_int_equal(kopt_knowledge_placeholder("no brackets", &n), -1);
	assert_int_equal(kopt_knowledge_placeholder("a [link](x) [1]", &n),
			 -1);
	assert_int_equal(kopt_knowledge_placeholder("- [Context 2] x", &n),
			 2);
	assert_int_equal(n, 11);
	assert_int_equal(kopt_knowledge_placeholder("x [Metric condition 1 "
						     "unclosed", &n), 2);
	assert_int_equal(n, 28);
	assert_int_equal(kopt_knowledge_placeholder("| [est. impact] |", &n),
			 2);
	assert_int_equal(n, 13);
}

static void test_kind(void **state)
{
	enum kopt_kind k;

	(void)state;
	assert_int_equal(kopt_kind_parse(&k, "anti-pattern"), 0);
	assert_int_equal(k, KOPT_KIND_ANTI_PATTERN);
	assert_string_equal(kopt_kind_dir(k), "anti-patterns");
	assert_int_equal(kopt_kind_parse(&k, "optimization"), 0);
	assert_string_equal(kopt_kind_name(k), "optimization");
	assert_int_equal(kopt_kind_parse(&k, "optimisation"), KOPT_EINVALID);
}

/* A file with only a name: every section missing, at its last line. */
static void test_bare(void **state)
{
	struct kopt_problems p = KOPT_PROBLEMS_INIT;
	struct kopt_buf out = KOPT_BUF_INIT;
	struct kopt_detail d;
	const char text[] = "# Name\n\ntext\n";

	(void)state;
	assert_int_equal(kopt_detail_parse(&d, "x.md", text, sizeof(text) - 1,
					   &p), KOPT_EINVALID);
	kopt_problems_format(&out, &p);
	assert_string_equal(out.buf,
		"x.md:3: missing section '## When to Apply'\n"
		"x.md:3: missing section '## Mechanism'\n"
		"x.md:3: missing section '## Affected Metrics'\n"
		"x.md:3: missing section '## Implementation'\n"
		"x.md:3: missing section '## Performance Evidence'\n"
		"x.md:3: missing section '## Generalization'\n"
		"x.md:3: missing section '## Pitfalls'\n"
		"x.md:3: missing section '## Interactions'\n");
	kopt_detail_release(&d);
	kopt_problems_clear(&p);
	kopt_buf_release(&out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fixtures),
		cmocka_unit_test(test_valid_content),
		cmocka_unit_test(test_templates_fail),
		cmocka_unit_test(test_locate),
		cmocka_unit_test(test_placeholder),
		cmocka_unit_test(test_kind),
		cmocka_unit_test(test_bare),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
