#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "catalog.h"
#include "error.h"

#ifndef KOPT_SOURCE_DIR
#define KOPT_SOURCE_DIR "."
#endif
#define FIX KOPT_SOURCE_DIR "/tests/fixtures/knowledge/catalog/"

static void read_fixture(struct kopt_buf *out, const char *name)
{
	char *path = kopt_xstrfmt(FIX "%s", name);

	kopt_buf_reset(out);
	if (kopt_buf_read_file(out, path))
		fail_msg("cannot read %s", path);
	free(path);
}

static int parse(struct kopt_catalog *c, const char *label, const char *name,
		 struct kopt_buf *problems)
{
	struct kopt_buf text = KOPT_BUF_INIT;
	struct kopt_problems p = KOPT_PROBLEMS_INIT;
	int ret;

	read_fixture(&text, name);
	ret = kopt_catalog_parse(c, label, text.buf, text.len, &p);
	kopt_problems_format(problems, &p);
	kopt_problems_clear(&p);
	kopt_buf_release(&text);
	return ret;
}

static const char *const shapes[] = {
	"prose", "links", "split", "empty", "empty-tables", "broken",
};

/* Each shape gives exactly the problems of its golden file. */
static void test_lint(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < KOPT_ARRAY_SIZE(shapes); i++) {
		struct kopt_buf got = KOPT_BUF_INIT, want = KOPT_BUF_INIT;
		struct kopt_catalog c;
		char *md = kopt_xstrfmt("%s.md", shapes[i]);
		char *lint = kopt_xstrfmt("%s.lint", shapes[i]);
		int ret = parse(&c, md, md, &got);

		read_fixture(&want, lint);
		if (strcmp(got.buf, want.buf))
			fail_msg("%s: got\n%s\nwant\n%s", md, got.buf,
				 want.buf);
		assert_int_equal(ret, want.len ? KOPT_EINVALID : 0);
		kopt_catalog_release(&c);
		kopt_buf_release(&got);
		kopt_buf_release(&want);
		free(md);
		free(lint);
	}
}

static void test_rows(void **state)
{
	struct kopt_buf probs = KOPT_BUF_INIT;
	struct kopt_catalog c;
	const struct kopt_catalog_row *r;

	(void)state;
	/* prose, front matter and a cross-reference table around the index */
	assert_int_equal(parse(&c, "SKILL.md", "prose.md", &probs), 0);
	assert_int_equal(c.tables_nr, 2);
	assert_int_equal(c.tables[0].kind, KOPT_KIND_OPTIMIZATION);
	assert_int_equal(c.tables[0].header_line, 15);
	assert_int_equal(c.tables[0].end_line, 18);
	assert_int_equal(c.tables[1].kind, KOPT_KIND_ANTI_PATTERN);
	assert_int_equal(c.rows_nr, 3);
	r = &c.rows[1];
	assert_int_equal(r->line, 18);
	assert_int_equal(r->num, 2);
	assert_string_equal(r->cell[KOPT_COL_NAME], "Head grouping");
	assert_string_equal(r->cell[KOPT_COL_TRIGGER],
			    "dram_pct > 50 and tc_pct < 30");
	assert_string_equal(r->cell[KOPT_COL_IMPACT], "~30%");
	assert_string_equal(r->detail,
			    "docs/knowledge/optimizations/head-grouping.md");
	assert_false(r->detail_link);
	r = kopt_catalog_find(&c, "A1");
	assert_non_null(r);
	assert_int_equal(r->kind, KOPT_KIND_ANTI_PATTERN);
	assert_string_equal(r->cell[KOPT_COL_SOURCE],
			    "local experiment: mla-decode v3");
	assert_null(r->cell[KOPT_COL_IMPACT]);
	assert_null(kopt_catalog_find(&c, "O9"));
	assert_int_equal(kopt_catalog_next_id(&c, KOPT_KIND_OPTIMIZATION), 3);
	assert_int_equal(kopt_catalog_next_id(&c, KOPT_KIND_ANTI_PATTERN), 2);
	kopt_catalog_release(&c);

	/* columns in another order, extra columns, escaped pipes */
	assert_int_equal(parse(&c, "SKILL.md", "links.md", &probs), 0);
	r = kopt_catalog_find(&c, "O2");
	assert_non_null(r);
	assert_string_equal(r->cell[KOPT_COL_NAME], "Pipelining | TMA");
	assert_string_equal(r->cell[KOPT_COL_PITFALLS], "pipe | depth");
	assert_int_equal(kopt_catalog_next_id(&c, KOPT_KIND_OPTIMIZATION), 4);
	assert_int_equal(kopt_catalog_next_id(&c, KOPT_KIND_ANTI_PATTERN), 5);
	kopt_catalog_release(&c);

	/* two tables of one kind: the IDs continue across them */
	assert_int_equal(parse(&c, "SKILL.md", "split.md", &probs), 0);
	assert_int_equal(c.tables_nr, 2);
	assert_int_equal(kopt_catalog_next_id(&c, KOPT_KIND_OPTIMIZATION), 8);
	assert_int_equal(kopt_catalog_next_id(&c, KOPT_KIND_ANTI_PATTERN), 1);
	kopt_catalog_release(&c);

	assert_int_equal(parse(&c, "SKILL.md", "empty.md", &probs), 0);
	assert_int_equal(c.tables_nr, 0);
	assert_int_equal(kopt_catalog_next_id(&c, KOPT_KIND_OPTIMIZATION), 1);
	kopt_catalog_release(&c);
	assert_string_equal(probs.buf, "");
	kopt_buf_release(&probs);
}

static void test_detail_paths(void **state)
{
	static const struct { const char *id, *path, *alt; } want[] = {
		{ "O3", "docs/knowledge/optimizations/split-kv.md", NULL },
		/* read from the catalog's folder, and from the top */
		{ "O1", ".claude/skills/optimization-catalog/docs/knowledge/"
			"optimizations/swizzle.md",
		  "docs/knowledge/optimizations/swizzle.md" },
		{ "O2", "docs/knowledge/languages/cute-dsl/optimizations/"
			"tma.md", NULL },
		{ "A4", "docs/knowledge/anti-patterns/under-filled-grid.md",
		  NULL },
	};
	struct kopt_buf probs = KOPT_BUF_INIT;
	struct kopt_catalog c;
	size_t i;

	(void)state;
	parse(&c, ".claude/skills/optimization-catalog/SKILL.md", "links.md",
	      &probs);
	for (i = 0; i < KOPT_ARRAY_SIZE(want); i++) {
		const struct kopt_catalog_row *r;
		char *alt, *p;

		r = kopt_catalog_find(&c, want[i].id);
		assert_non_null(r);
		assert_true(r->detail_link);
		p = kopt_catalog_detail_path(&c, r, &alt);
		assert_non_null(p);
		assert_string_equal(p, want[i].path);
		if (want[i].alt)
			assert_string_equal(alt, want[i].alt);
		free(p);
		free(alt);
	}
	kopt_catalog_release(&c);

	/* a URL or a path above the top is no path in the repository */
	parse(&c, "SKILL.md", "broken.md", &probs);
	assert_null(kopt_catalog_detail_path(&c, kopt_catalog_find(&c, "A1"),
					     NULL));
	kopt_catalog_release(&c);
	parse(&c, "SKILL.md", "links.md", &probs);
	assert_null(kopt_catalog_detail_path(&c, kopt_catalog_find(&c, "O3"),
					     NULL));
	kopt_catalog_release(&c);
	kopt_buf_release(&probs);
}

/* Appending splices one row and keeps every other byte. */
static void test_append(void **state)
{
	size_t i, k;

	(void)state;
	for (i = 0; i < KOPT_ARRAY_SIZE(shapes) - 1; i++) {
		for (k = 0; k < 2; k++) {
			struct kopt_buf probs = KOPT_BUF_INIT;
			struct kopt_buf out = KOPT_BUF_INIT;
			struct kopt_buf want = KOPT_BUF_INIT;
			struct kopt_problems none = KOPT_PROBLEMS_INIT;
			struct kopt_catalog c, again;
			struct kopt_catalog_row row;
			char *md = kopt_xstrfmt("%s.md", shapes[i]);
			char *golden = kopt_xstrfmt("%s.append-%c", shapes[i],
						    k ? 'a' : 'o');
			size_t pre, post;

			parse(&c, "c/SKILL.md", md, &probs);
			memset(&row, 0, sizeof(row));
			row.kind = k ? KOPT_KIND_ANTI_PATTERN :
				   KOPT_KIND_OPTIMIZATION;
			row.cell[KOPT_COL_ID] = kopt_xstrfmt("%c%ld",
				k ? 'A' : 'O', kopt_catalog_next_id(&c,
								    row.kind));
			row.cell[KOPT_COL_NAME] = "New | entry";
			row.cell[KOPT_COL_TRIGGER] = "`waves < 1`";
			row.cell[KOPT_COL_IMPACT] = "10%";
			row.cell[KOPT_COL_PITFALLS] = "none";
			row.cell[KOPT_COL_FAILURE] = "slow";
			row.cell[KOPT_COL_SOURCE] = "local experiment: k v1";
			row.cell[KOPT_COL_DETAIL] = "`docs/knowledge/x/new.md`";
			assert_int_equal(kopt_catalog_append(&out, &c, &row), 0);
			read_fixture(&want, golden);
			if (strcmp(out.buf, want.buf))
				fail_msg("%s: got\n%s", golden, out.buf);

			/* untouched bytes before and after the new ones */
			for (pre = 0; pre < c.text.len &&
			     c.text.buf[pre] == out.buf[pre]; pre++)
				;
			for (post = 0; post < c.text.len - pre &&
			     c.text.buf[c.text.len - 1 - post] ==
			     out.buf[out.len - 1 - post]; post++)
				;
			assert_int_equal(pre + post, c.text.len);

			/* the row is there, and nothing else changed */
			kopt_buf_reset(&probs);
			assert_int_equal(kopt_catalog_parse(&again,
				"c/SKILL.md", out.buf, out.len, &none), 0);
			assert_non_null(kopt_catalog_find(&again,
						row.cell[KOPT_COL_ID]));
			assert_int_equal(again.rows_nr, c.rows_nr + 1);
			kopt_catalog_release(&again);
			free(row.cell[KOPT_COL_ID]);
			kopt_catalog_release(&c);
			kopt_buf_release(&probs);
			kopt_buf_release(&out);
			kopt_buf_release(&want);
			free(md);
			free(golden);
		}
	}
}

/* An append the end of the text would swallow is refused, whole. */
static void test_append_refused(void **state)
{
	static const char *const texts[] = {
		"# Catalog\n\n~~~~\n## Compute\n",
		"# Catalog\n\n```\n| ID | Technique |\n",
		"# Catalog\n\n<pre>\n",
	};
	size_t i;

	(void)state;
	for (i = 0; i < KOPT_ARRAY_SIZE(texts); i++) {
		struct kopt_problems probs = KOPT_PROBLEMS_INIT;
		struct kopt_buf out = KOPT_BUF_INIT;
		struct kopt_error_catch caught = KOPT_ERROR_CATCH_INIT;
		struct kopt_catalog c;
		struct kopt_catalog_row row;

		kopt_catalog_parse(&c, "c/catalog.md", texts[i],
				   strlen(texts[i]), &probs);
		memset(&row, 0, sizeof(row));
		row.kind = KOPT_KIND_OPTIMIZATION;
		row.cell[KOPT_COL_ID] = "O1";
		row.cell[KOPT_COL_NAME] = "Tiling";
		kopt_error_catch(&caught);
		assert_int_equal(kopt_catalog_append(&out, &c, &row),
				 KOPT_EINVALID);
		kopt_error_uncatch(&caught);
		assert_int_equal(out.len, 0);
		assert_non_null(strstr(caught.text.buf, "c/catalog.md"));
		assert_non_null(strstr(caught.text.buf, "O1"));
		kopt_error_catch_release(&caught);
		kopt_catalog_release(&c);
		kopt_problems_clear(&probs);
		kopt_buf_release(&out);
	}
}

static void detail_of(struct kopt_detail *d, const char *evidence,
		      const char *extra)
{
	struct kopt_problems probs = KOPT_PROBLEMS_INIT;
	char *text = kopt_xstrfmt(
		"# Wide loads\n\n## When to Apply\n- Element-wise kernels\n%s"
		"\n## Mechanism\nFewer requests. Then more.\n\n"
		"## Affected Metrics\n- DRAM\n\n## Implementation\nx\n\n"
		"## Performance Evidence\nSource type: **external report** "
		"(a paper)\n\n| Config | Before | After | Change |\n"
		"|---|---|---|---|\n%s\n## Generalization\nA rule.\n\n"
		"## Pitfalls\n- Alignment\n- [Known failure modes]\n\n"
		"## Interactions\n- None\n", extra, evidence);

	kopt_detail_parse(d, "k/wide.md", text, strlen(text), &probs);
	kopt_problems_clear(&probs);
	free(text);
}

/* What a row says, from its detail file. */
static void test_cells_from_detail(void **state)
{
	static const struct { const char *rows, *impact; } ev[] = {
		{ "| a | 41.0 \xce\xbcs | 33.2 \xce\xbcs | x |\n", "~23%" },
		{ "| a | 2 ms | 1 ms | x |\n| b | 10 us | 8 us | x |\n",
		  "1.2-2.0x" },
		{ "| a | 2 ms | 0.5 ms | x |\n| b | 3 s | 1 s | x |\n",
		  "3.0-4.0x" },
		{ "| a | 900 GB/s | 1.2 TB/s | x |\n", NULL },
		{ "| a | 900 GB/s | 1200 GB/s | x |\n", "~33%" },
		{ "| a | slow | fast | 1.8x |\n", "~80%" },
		{ "| a | - | - | +25% throughput |\n", "~25%" },
		{ "| a | - | - | -20% duration |\n", "~25%" },
		{ "| a | - | - | 12% faster |\n| b | - | - | 4% slower |\n",
		  "0-12%" },
		{ "| a | slow | fast | faster |\n", NULL },
		{ "| a | 5 us | 6 us | x |\n", NULL },
	};
	struct kopt_detail d;
	char *cells[KOPT_COL_NR];
	size_t i;
	int k;

	(void)state;
	for (i = 0; i < KOPT_ARRAY_SIZE(ev); i++) {
		detail_of(&d, ev[i].rows, "- `dram_pct < 60`\n"
			  "- `gbps < 2000 and occ_pct > 50`\n");
		kopt_catalog_cells_from_detail(cells, &d,
					       KOPT_KIND_OPTIMIZATION);
		if (!ev[i].impact != !cells[KOPT_COL_IMPACT] ||
		    (ev[i].impact && strcmp(ev[i].impact,
					    cells[KOPT_COL_IMPACT])))
			fail_msg("%s: impact %s, want %s", ev[i].rows,
				 cells[KOPT_COL_IMPACT] ?
				 cells[KOPT_COL_IMPACT] : "none",
				 ev[i].impact ? ev[i].impact : "none");
		assert_string_equal(cells[KOPT_COL_NAME], "Wide loads");
		assert_string_equal(cells[KOPT_COL_TRIGGER], "`dram_pct < 60` "
				    "and `gbps < 2000 and occ_pct > 50`");
		assert_string_equal(cells[KOPT_COL_PITFALLS], "Alignment");
		assert_null(cells[KOPT_COL_ID]);
		assert_null(cells[KOPT_COL_DETAIL]);
		assert_null(cells[KOPT_COL_FAILURE]);
		for (k = 0; k < KOPT_COL_NR; k++)
			free(cells[k]);
		kopt_detail_release(&d);
	}

	/* prose only: the contexts; an anti-pattern: Mechanism, Source */
	detail_of(&d, "| a | 1 us | 2 us | x |\n", "- Control: warp\n");
	kopt_catalog_cells_from_detail(cells, &d, KOPT_KIND_OPTIMIZATION);
	assert_string_equal(cells[KOPT_COL_TRIGGER], "Element-wise kernels");
	for (k = 0; k < KOPT_COL_NR; k++)
		free(cells[k]);
	kopt_catalog_cells_from_detail(cells, &d, KOPT_KIND_ANTI_PATTERN);
	assert_string_equal(cells[KOPT_COL_FAILURE], "Fewer requests");
	assert_string_equal(cells[KOPT_COL_SOURCE], "external report (a paper)");
	assert_null(cells[KOPT_COL_TRIGGER]);
	assert_null(cells[KOPT_COL_PITFALLS]);
	for (k = 0; k < KOPT_COL_NR; k++)
		free(cells[k]);
	kopt_detail_release(&d);
}

/* Rewriting cells keeps every other byte; a refused rewrite, none. */
static void test_set_cells(void **state)
{
	static const struct { const char *in, *out; } t[] = {
		{ "| ID | Optimization | Pitfalls | Detail File |\n|--|--|--|--|\n"
		  "| O1 |  a \\| b  | old | `d/x.md` |\r\n\nafter\n",
		  "| ID | Optimization | Pitfalls | Detail File |\n|--|--|--|--|\n"
		  "| O1 |  a \\| b  | new \\| one | `d/x.md` |\r\n\nafter\n" },
		/* no outer pipes */
		{ "ID | Optimization | Pitfalls | Detail File\n--|--|--|--\n"
		  "O1 | a | old | `d/x.md`",
		  "ID | Optimization | Pitfalls | Detail File\n--|--|--|--\n"
		  "O1 | a | new \\| one | `d/x.md`" },
		/* a row shorter than its header */
		{ "| ID | Optimization | Pitfalls | Detail File |\n|--|--|--|--|\n"
		  "| O1 | a |\n",
		  "| ID | Optimization | Pitfalls | Detail File |\n|--|--|--|--|\n"
		  "| O1 | a | new \\| one |\n" },
	};
	char *cells[KOPT_COL_NR] = { 0 };
	size_t i;

	(void)state;
	cells[KOPT_COL_PITFALLS] = "new | one";
	for (i = 0; i < KOPT_ARRAY_SIZE(t); i++) {
		struct kopt_problems probs = KOPT_PROBLEMS_INIT;
		struct kopt_buf out = KOPT_BUF_INIT;
		struct kopt_catalog c;

		kopt_catalog_parse(&c, "c.md", t[i].in, strlen(t[i].in), &probs);
		assert_int_equal(c.rows_nr, 1);
		assert_int_equal(kopt_catalog_set_cells(&out, &c, &c.rows[0],
							cells), 0);
		if (strcmp(out.buf, t[i].out))
			fail_msg("%zu: got\n%s\nwant\n%s", i, out.buf, t[i].out);
		kopt_catalog_release(&c);
		kopt_problems_clear(&probs);
		kopt_buf_release(&out);
	}
}

static void test_impact(void **state)
{
	static const struct { const char *text; double pct; } ok[] = {
		{ "20-40%", 30 }, { "20\xe2\x80\x93" "40%", 30 },
		{ "~15%", 15 }, { "+12% on decode", 12 }, { "10 to 20%", 15 },
		{ "1.5x", 50 }, { "up to 2x", 100 }, { "1.5-3x", 125 },
		{ "2\xc3\x97", 100 }, { "High", 30 }, { "medium", 15 },
		{ "low (est.)", 5 }, { "very high", 50 }, { "0.9x", 0 },
	};
	static const char *const bad[] = { "", "depends", "5 units", "x" };
	size_t i;
	double pct;

	(void)state;
	for (i = 0; i < KOPT_ARRAY_SIZE(ok); i++) {
		if (kopt_impact_parse(ok[i].text, &pct))
			fail_msg("'%s' does not parse", ok[i].text);
		if (fabs(pct - ok[i].pct) > 1e-9)
			fail_msg("'%s': %g, want %g", ok[i].text, pct,
				 ok[i].pct);
	}
	for (i = 0; i < KOPT_ARRAY_SIZE(bad); i++)
		assert_int_equal(kopt_impact_parse(bad[i], &pct),
				 KOPT_EINVALID);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lint),
		cmocka_unit_test(test_rows),
		cmocka_unit_test(test_detail_paths),
		cmocka_unit_test(test_append),
		cmocka_unit_test(test_append_refused),
		cmocka_unit_test(test_cells_from_detail),
		cmocka_unit_test(test_set_cells),
		cmocka_unit_test(test_impact),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
