/*
 * Catalogs (lib/catalog): parse any bytes with every problem reported;
 * on what parses, look up each row, its detail path and impact, and
 * append a row of each kind: the old bytes stay as they were around the
 * new row, and the result parses with one more row, or the append is
 * refused (the end lies in an open fence) and writes nothing; rewrite
 * cells of the first rows: only the row's line changes, or nothing.
 */
#include "fuzz.h"

#include "buf.h"
#include "catalog.h"
#include "md.h"
#include "problem.h"

static void check_append(const struct kopt_catalog *c, enum kopt_kind kind)
{
	struct kopt_catalog_row row;
	struct kopt_catalog after = KOPT_CATALOG_INIT;
	struct kopt_problems probs = KOPT_PROBLEMS_INIT;
	struct kopt_buf out = KOPT_BUF_INIT, id = KOPT_BUF_INIT;
	size_t pre = 0, post = 0, n = c->text.len, i, rows = 0;

	memset(&row, 0, sizeof(row));
	row.kind = kind;
	kopt_buf_addf(&id, "%c%ld", kind == KOPT_KIND_OPTIMIZATION ? 'O' : 'A',
		      kopt_catalog_next_id(c, kind));
	row.cell[KOPT_COL_ID] = id.buf;
	row.cell[KOPT_COL_NAME] = "Fuzzed row";
	row.cell[KOPT_COL_TRIGGER] = "`dram_pct > 70`";
	row.cell[KOPT_COL_IMPACT] = "10-20%";
	row.cell[KOPT_COL_PITFALLS] = "none";
	row.cell[KOPT_COL_FAILURE] = "slower";
	row.cell[KOPT_COL_SOURCE] = "v3";
	row.cell[KOPT_COL_DETAIL] = "`docs/knowledge/optimizations/x.md`";
	if (kopt_catalog_append(&out, c, &row)) {
		/* refused: the row would not read back; nothing written */
		FUZZ_CHECK(!out.len, "a refused append left %zu bytes", out.len);
		goto done;
	}

	/* the old text is a prefix and a suffix around what was added */
	while (pre < n && pre < out.len && out.buf[pre] == c->text.buf[pre])
		pre++;
	while (post < n - pre && post < out.len - pre &&
	       out.buf[out.len - 1 - post] == c->text.buf[n - 1 - post])
		post++;
	FUZZ_CHECK(pre + post == n, "append changed old bytes: %zu + %zu "
		   "of %zu kept", pre, post, n);
	FUZZ_CHECK(out.len > n, "append added nothing");

	kopt_catalog_parse(&after, c->path, out.buf, out.len, &probs);
	for (i = 0; i < after.rows_nr; i++)
		if (after.rows[i].cell[KOPT_COL_ID] &&
		    !strcmp(after.rows[i].cell[KOPT_COL_ID], id.buf) &&
		    after.rows[i].kind == kind)
			rows++;
	if (rows < 1) {
		struct kopt_buf why = KOPT_BUF_INIT;
		kopt_problems_format(&why, &probs);
		FUZZ_CHECK(rows >= 1, "the appended row %s does not read back "
			   "(%zu rows):\n%s\n---\n%s", id.buf, after.rows_nr,
			   out.buf, why.buf);
	}
	kopt_catalog_release(&after);
	kopt_problems_clear(&probs);
done:
	kopt_buf_release(&out);
	kopt_buf_release(&id);
}

/*
 * Rewrite cells of a row: only the row's line changes (the bytes before
 * and after it are the old ones), or the rewrite is refused whole.
 */
static void check_set_cells(const struct kopt_catalog *c,
			    const struct kopt_catalog_row *r)
{
	struct kopt_buf out = KOPT_BUF_INIT;
	char *cells[KOPT_COL_NR] = { 0 };
	size_t a, b, n = c->text.len;

	cells[KOPT_COL_NAME] = "Fuzzed | name";
	cells[KOPT_COL_PITFALLS] = "none\nat all";
	cells[KOPT_COL_SOURCE] = "`x`";
	if (kopt_catalog_set_cells(&out, c, r, cells)) {
		FUZZ_CHECK(!out.len, "a refused rewrite left %zu bytes",
			   out.len);
		kopt_buf_release(&out);
		return;
	}
	a = kopt_md_line_start(c->text.buf, n, r->line);
	b = kopt_md_line_end(c->text.buf, n, r->line);
	while (b > a && (c->text.buf[b - 1] == '\n' ||
			 c->text.buf[b - 1] == '\r'))
		b--;
	FUZZ_CHECK(out.len >= a && !memcmp(out.buf, c->text.buf, a),
		   "bytes before the row changed");
	FUZZ_CHECK(out.len >= n - b &&
		   !memcmp(out.buf + out.len - (n - b), c->text.buf + b, n - b),
		   "bytes after the row changed");
	FUZZ_CHECK(!memchr(out.buf + a, '\n', out.len - (n - b) - a),
		   "the row became more than one line");
	kopt_buf_release(&out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct kopt_catalog c = KOPT_CATALOG_INIT;
	struct kopt_problems probs = KOPT_PROBLEMS_INIT;
	struct kopt_buf fmt = KOPT_BUF_INIT;
	char *text;
	size_t i;

	fuzz_init();
	text = fuzz_copy(data, size, 0);
	kopt_catalog_parse(&c, "docs/knowledge/catalog.md", text, size, &probs);
	kopt_problems_sort(&probs);
	kopt_problems_format(&fmt, &probs);
	for (i = 0; i < c.rows_nr; i++) {
		const struct kopt_catalog_row *r = &c.rows[i];
		char *alt = NULL, *p;
		double pct;

		if (r->cell[KOPT_COL_ID])
			kopt_catalog_find(&c, r->cell[KOPT_COL_ID]);
		if (r->cell[KOPT_COL_IMPACT])
			kopt_impact_parse(r->cell[KOPT_COL_IMPACT], &pct);
		p = kopt_catalog_detail_path(&c, r, &alt);
		free(p);
		free(alt);
	}
	for (i = 0; i < c.rows_nr && i < 4; i++)
		check_set_cells(&c, &c.rows[i]);
	if (!probs.nr) {
		check_append(&c, KOPT_KIND_OPTIMIZATION);
		check_append(&c, KOPT_KIND_ANTI_PATTERN);
	}
	kopt_catalog_release(&c);
	kopt_problems_clear(&probs);
	kopt_buf_release(&fmt);
	free(text);
	return 0;
}
