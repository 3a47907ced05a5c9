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
#include "config.h"
#include "devlog.h"
#include "error.h"
#include "kb.h"
#include "learn.h"
#include "lockfile.h"
#include "results.h"

#include "messages.h"

#ifndef KOPT_SOURCE_DIR
#define KOPT_SOURCE_DIR "."
#endif
#define FIX KOPT_SOURCE_DIR "/tests/fixtures/knowledge/"
#define SHARED ".claude/skills/optimization-catalog/SKILL.md"

static char dir[] = "/tmp/kopt-learn-XXXXXX";
static char *top;
static struct kopt_buf opt_tmpl = KOPT_BUF_INIT, anti_tmpl = KOPT_BUF_INIT;

static char *at(const char *rel)
{
	return kopt_xstrfmt("%s%s", top, rel);
}

static void read_at(struct kopt_buf *out, const char *rel)
{
	char *p = at(rel);

	kopt_buf_reset(out);
	if (kopt_buf_read_file(out, p))
		fail_msg("cannot read %s", p);
	free(p);
}

static int exists(const char *rel)
{
	char *p = at(rel);
	int ret = !access(p, F_OK);

	free(p);
	return ret;
}

static void results(struct kopt_results *r, const char *version)
{
	char *p = kopt_xstrfmt(FIX "kb/docs/kernels/mla-decode/results/%s.json",
			       version);

	assert_int_equal(kopt_results_read_file(r, p, "mla-decode", version),
			 0);
	free(p);
}

/* Load the knowledge base of the scratch tree and add one entry. */
static int learn(struct kopt_buf *report, enum kopt_kind kind,
		 const char *name, const char *language,
		 const struct kopt_results *before,
		 const struct kopt_results *after)
{
	struct kopt_config cfg = KOPT_CONFIG_INIT;
	struct kopt_learn_request req = { 0 };
	struct kopt_kb_source src;
	struct kopt_kb kb;
	char *kopt = at(".kopt"), *catalog;
	int ret;

	assert_int_equal(kopt_config_load_file(&cfg, kopt, ".kopt", NULL), 0);
	kopt_kb_source_worktree(&src, top);
	assert_int_equal(kopt_kb_load(&kb, &src, &cfg, language), 0);
	catalog = language ? kopt_language_catalog_path(
		kopt_config_language(&cfg, language)) : kopt_strdup(SHARED);
	req.kind = kind;
	req.name = name;
	req.language = language;
	req.catalog = catalog;
	req.template_text = kind == KOPT_KIND_ANTI_PATTERN ? anti_tmpl.buf :
			    opt_tmpl.buf;
	req.template_len = kind == KOPT_KIND_ANTI_PATTERN ? anti_tmpl.len :
			   opt_tmpl.len;
	req.before = before;
	req.after = after;
	kopt_buf_reset(report);
	ret = kopt_learn_new(&kb, top, &req, report);
	kopt_kb_release(&kb);
	kopt_config_release(&cfg);
	free(kopt);
	free(catalog);
	return ret;
}

static void test_names(void **state)
{
	static const char *const cases[][3] = {
		{ "split-kv", "split-kv", "Split kv" },
		{ "Split-KV decode", "split-kv-decode", "Split-KV decode" },
		{ "  TMA: multicast!  ", "tma-multicast", "TMA: multicast!" },
		{ "reg_spill.v2", "reg_spill.v2", "Reg spill.v2" },
		{ "--", "", "" },
	};
	size_t i;

	(void)state;
	for (i = 0; i < KOPT_ARRAY_SIZE(cases); i++) {
		char *slug = kopt_learn_slug(cases[i][0]);
		char *title = kopt_learn_title(cases[i][0]);
		assert_string_equal(slug, cases[i][1]);
		assert_string_equal(title, cases[i][2]);
		free(slug);
		free(title);
	}
}

/* The evidence of --from: one row per trial measured on both. */
static const char *suggest(const char *heading, const char *version)
{
	static char name[128];
	struct kopt_devlog dl = KOPT_DEVLOG_INIT;
	struct kopt_buf text = KOPT_BUF_INIT, out = KOPT_BUF_INIT;

	kopt_buf_addf(&text, "# k\n\n## Development log\n\n%s\n\nx\n",
		      heading);
	assert_int_equal(kopt_devlog_parse(&dl, text.buf, text.len, "k.md"), 0);
	kopt_learn_suggest_name(&out, &dl, "k", version, "regression");
	assert_true(out.len < sizeof(name));
	memcpy(name, out.buf, out.len + 1);
	kopt_devlog_release(&dl);
	kopt_buf_release(&text);
	kopt_buf_release(&out);
	return name;
}

/* One rule for the name a regression suggests, whatever the heading. */
static void test_suggest_name(void **state)
{
	struct kopt_buf out = KOPT_BUF_INIT;

	(void)state;
	assert_string_equal(suggest("### V3 - tiling", "v3"), "tiling");
	assert_string_equal(suggest("### V3: Tiling", "v3"), "tiling");
	assert_string_equal(suggest("### v3: Split-KV decode, 4 splits", "v3"),
			    "split-kv-decode-4-splits");
	assert_string_equal(suggest("### V3: one two three four five six "
				    "seven", "v3"),
			    "one-two-three-four-five-six");
	assert_string_equal(suggest("### V3: [Brief description]", "v3"),
			    "k-v3-regression");
	assert_string_equal(suggest("### V3: (to be described)", "v3"),
			    "k-v3-regression");
	assert_string_equal(suggest("### V3", "v3"), "k-v3-regression");
	assert_string_equal(suggest("### V3: !!!", "v3"), "k-v3-regression");
	assert_string_equal(suggest("### V3: tiling", "v4"), "k-v4-regression");
	kopt_learn_suggest_name(&out, NULL, NULL, NULL, "finding");
	assert_string_equal(out.buf, "finding");
	kopt_buf_release(&out);
}

static void test_fill(void **state)
{
	struct kopt_results v0 = KOPT_RESULTS_INIT, v1 = KOPT_RESULTS_INIT;
	struct kopt_learn_request req = { 0 };
	struct kopt_buf out = KOPT_BUF_INIT, want = KOPT_BUF_INIT;
	struct kopt_problems p = KOPT_PROBLEMS_INIT;
	struct kopt_detail d;
	size_t i;

	(void)state;
	results(&v0, "v0");
	results(&v1, "v1");
	req.kind = KOPT_KIND_OPTIMIZATION;
	req.name = "Split-KV decode";
	req.template_text = opt_tmpl.buf;
	req.template_len = opt_tmpl.len;
	req.before = &v0;
	req.after = &v1;
	assert_int_equal(kopt_learn_fill(&out, &req), 0);
	assert_int_equal(kopt_buf_read_file(&want, FIX "filled.md"), 0);
	if (strcmp(out.buf, want.buf))
		fail_msg("got\n%s", out.buf);

	/* filled: the name and the evidence pass, the rest does not */
	kopt_detail_parse(&d, "x.md", out.buf, out.len, &p);
	assert_string_equal(d.name, "Split-KV decode");
	assert_string_equal(d.source_type, "local experiment");
	assert_int_equal(d.evidence_rows, 2);
	for (i = 0; i < p.nr; i++)
		assert_non_null(strstr(p.v[i].what, "placeholder"));
	kopt_detail_release(&d);
	kopt_problems_clear(&p);

	/* nothing in common: nothing to compare */
	kopt_buf_reset(&messages);
	v1.entries_nr = 1;
	v0.entries[0].s = 2;
	req.before = &v0;
	assert_int_equal(kopt_learn_fill(&out, &req), KOPT_EINVALID);
	assert_string_equal(messages.buf, "error: no trial of mla-decode v1 "
			    "was also measured on v0; nothing to compare\n");
	v1.entries_nr = 3;
	kopt_results_release(&v0);
	kopt_results_release(&v1);
	kopt_buf_release(&out);
	kopt_buf_release(&want);
}

static void test_new(void **state)
{
	struct kopt_buf report = KOPT_BUF_INIT, before = KOPT_BUF_INIT;
	struct kopt_buf after = KOPT_BUF_INIT, text = KOPT_BUF_INIT;

	(void)state;
	read_at(&before, SHARED);
	assert_int_equal(learn(&report, KOPT_KIND_OPTIMIZATION,
			       "Flash split", NULL, NULL, NULL), 0);
	assert_string_equal(report.buf,
		"created docs/knowledge/optimizations/flash-split.md\n"
		"added O6 to " SHARED "\n");
	read_at(&text, "docs/knowledge/optimizations/flash-split.md");
	assert_true(kopt_starts_with(text.buf, "# Flash split\n"));
	read_at(&after, SHARED);
	/* one row spliced after the last one, nothing else touched */
	kopt_buf_reset(&text);
	kopt_buf_addbuf(&text, &before);
	{
		const char *row = "| O6 | Flash split | [trigger conditions] | "
			"[est. impact] | [pitfalls] | "
			"`docs/knowledge/optimizations/flash-split.md` |\n";
		const char *o5 = strstr(text.buf, "| O5 ");
		size_t pos = (size_t)(strchr(o5, '\n') - text.buf) + 1;
		kopt_buf_insert(&text, pos, row, strlen(row));
	}
	assert_string_equal(after.buf, text.buf);

	/* again: nothing to do, nothing changed */
	assert_int_equal(learn(&report, KOPT_KIND_OPTIMIZATION,
			       "Flash split", NULL, NULL, NULL), KOPT_EEXISTS);
	assert_string_equal(report.buf, "optimization 'flash-split' exists "
		"already: docs/knowledge/optimizations/flash-split.md (O6 in "
		SHARED "); nothing to do\n");
	read_at(&text, SHARED);
	assert_string_equal(text.buf, after.buf);

	/* the next ID follows the largest, in the index of its kind */
	assert_int_equal(learn(&report, KOPT_KIND_ANTI_PATTERN,
			       "bank-conflicts", NULL, NULL, NULL), 0);
	assert_non_null(strstr(report.buf, "added A3 to "));
	assert_int_equal(learn(&report, KOPT_KIND_OPTIMIZATION, "another",
			       NULL, NULL, NULL), 0);
	assert_non_null(strstr(report.buf, "added O7 to "));
	kopt_buf_release(&report);
	kopt_buf_release(&before);
	kopt_buf_release(&after);
	kopt_buf_release(&text);
}

static void test_language(void **state)
{
	struct kopt_buf report = KOPT_BUF_INIT, text = KOPT_BUF_INIT;

	(void)state;
	assert_int_equal(learn(&report, KOPT_KIND_OPTIMIZATION, "multicast",
			       "cute-dsl", NULL, NULL), 0);
	assert_string_equal(report.buf,
		"created docs/knowledge/languages/cute-dsl/optimizations/"
		"multicast.md\n"
		"added O2 to .claude/skills/optimization-catalog-cute-dsl/"
		"SKILL.md\n");

	/* a language without a catalog gets one */
	assert_int_equal(learn(&report, KOPT_KIND_ANTI_PATTERN, "tile-too-big",
			       "cutile-dsl", NULL, NULL), 0);
	read_at(&text, ".claude/skills/optimization-catalog-cutile-dsl/"
		"SKILL.md");
	assert_string_equal(text.buf,
		"# Optimization Catalog: cutile-dsl\n"
		"\n"
		"## Anti-Pattern Index\n"
		"\n"
		"| ID | Anti-Pattern | Failure Mode | Source | Detail File |\n"
		"|----|--------------|--------------|--------|-------------|\n"
		"| A1 | Tile too big | [failure mode] | [source] | "
		"`docs/knowledge/languages/cutile-dsl/anti-patterns/"
		"tile-too-big.md` |\n");
	kopt_buf_release(&report);
	kopt_buf_release(&text);
}

/* A file without its row, or a row without its file: add the other. */
static void test_partial(void **state)
{
	struct kopt_buf report = KOPT_BUF_INIT, text = KOPT_BUF_INIT;
	char *p = at("docs/knowledge/optimizations/fusion.md");

	(void)state;
	/* fusion.md has row O5; remove the file, learn new restores it */
	assert_int_equal(unlink(p), 0);
	assert_int_equal(learn(&report, KOPT_KIND_OPTIMIZATION, "fusion", NULL,
			       NULL, NULL), 0);
	assert_string_equal(report.buf,
		"created docs/knowledge/optimizations/fusion.md\n");

	/* a file written by hand, no row: the row takes its H1 */
	free(p);
	p = at("docs/knowledge/anti-patterns/by-hand.md");
	assert_int_equal(kopt_write_file_atomic(p, "# Written by Hand\n", 18,
						0644), 0);
	assert_int_equal(learn(&report, KOPT_KIND_ANTI_PATTERN, "by-hand",
			       NULL, NULL, NULL), 0);
	assert_string_equal(report.buf, "added A4 to " SHARED "\n");
	read_at(&text, SHARED);
	assert_non_null(strstr(text.buf, "| A4 | Written by Hand |"));
	read_at(&text, "docs/knowledge/anti-patterns/by-hand.md");
	assert_string_equal(text.buf, "# Written by Hand\n");
	free(p);
	kopt_buf_release(&report);
	kopt_buf_release(&text);
}

/* Either both files are written or neither. */
static void test_locked(void **state)
{
	struct kopt_buf report = KOPT_BUF_INIT, before = KOPT_BUF_INIT;
	struct kopt_buf after = KOPT_BUF_INIT;
	char *lock = at(SHARED ".lock");

	(void)state;
	read_at(&before, SHARED);
	assert_int_equal(kopt_write_file_atomic(lock, "", 0, 0644), 0);
	kopt_buf_reset(&messages);
	assert_int_equal(learn(&report, KOPT_KIND_OPTIMIZATION, "blocked",
			       NULL, NULL, NULL), KOPT_ELOCKED);
	assert_non_null(strstr(messages.buf, "cannot lock '"));
	assert_false(exists("docs/knowledge/optimizations/blocked.md"));
	assert_false(exists("docs/knowledge/optimizations/blocked.md.lock"));
	read_at(&after, SHARED);
	assert_string_equal(before.buf, after.buf);
	assert_int_equal(unlink(lock), 0);
	free(lock);
	kopt_buf_release(&report);
	kopt_buf_release(&before);
	kopt_buf_release(&after);
}

static void test_from(void **state)
{
	struct kopt_results v0 = KOPT_RESULTS_INIT, v1 = KOPT_RESULTS_INIT;
	struct kopt_buf report = KOPT_BUF_INIT, text = KOPT_BUF_INIT;
	size_t i;

	(void)state;
	results(&v0, "v0");
	results(&v1, "v1");
	assert_int_equal(learn(&report, KOPT_KIND_ANTI_PATTERN, "slow-spec",
			       NULL, &v0, &v1), 0);
	read_at(&text, SHARED);
	assert_non_null(strstr(text.buf, "| Slow spec | [failure mode] | "
			       "local experiment: mla-decode v1 |"));
	read_at(&text, "docs/knowledge/anti-patterns/slow-spec.md");
	assert_non_null(strstr(text.buf, "Source type: local experiment "
			       "(mla-decode v0 -> v1, NVIDIA H200)\n"));
	assert_non_null(strstr(text.buf, "| spec-decode (b=32, s=16, t=4096) "
			       "| 300.00 \xce\xbcs | 310.00 \xce\xbcs | +3.3% "
			       "duration |\n"));

	/* an optimization takes the measured gain as its impact */
	assert_int_equal(learn(&report, KOPT_KIND_OPTIMIZATION, "mma",
			       NULL, &v0, &v1), 0);
	read_at(&text, SHARED);
	/* decode 1.335x, spec-decode 0.968x: a mean gain of 15.1% */
	assert_non_null(strstr(text.buf, "| Mma | [trigger conditions] | ~15% "
			       "(measured: mla-decode v1) | [pitfalls] |"));

	/* a gain of 100% or more reads as a factor, as catalogs write it */
	for (i = 0; i < v0.entries_nr; i++)
		v0.entries[i].metrics[KOPT_METRIC_DURATION_US] *= 10;
	assert_int_equal(learn(&report, KOPT_KIND_OPTIMIZATION, "grouped",
			       NULL, &v0, &v1), 0);
	read_at(&text, SHARED);
	assert_non_null(strstr(text.buf, "| Grouped | [trigger conditions] | "
			       "~11.5x (measured: mla-decode v1) |"));
	kopt_results_release(&v0);
	kopt_results_release(&v1);
	kopt_buf_release(&report);
	kopt_buf_release(&text);
}

static int setup(void **state)
{
	char cmd[256];

	(void)state;
	git_libgit2_init();
	catch_messages(state);
	if (!mkdtemp(dir))
		return -1;
	top = kopt_xstrfmt("%s/", dir);
	snprintf(cmd, sizeof(cmd), "cp -R '%s'kb/. '%s'", FIX, dir);
	if (system(cmd))
		return -1;
	if (kopt_buf_read_file(&opt_tmpl, KOPT_SOURCE_DIR
			       "/templates/optimization.md") ||
	    kopt_buf_read_file(&anti_tmpl, KOPT_SOURCE_DIR
			       "/templates/anti-pattern.md"))
		return -1;
	return 0;
}

static int teardown(void **state)
{
	char cmd[256];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd))
		return -1;
	free(top);
	kopt_buf_release(&opt_tmpl);
	kopt_buf_release(&anti_tmpl);
	release_messages(state);
	git_libgit2_shutdown();
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_suggest_name),
		cmocka_unit_test(test_fill),
		cmocka_unit_test(test_new),
		cmocka_unit_test(test_language),
		cmocka_unit_test(test_partial),
		cmocka_unit_test(test_locked),
		cmocka_unit_test(test_from),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
