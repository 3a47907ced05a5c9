#ifndef KOPT_CATALOG_H
#define KOPT_CATALOG_H

/*
 * Optimization catalogs: the index tables of the shared catalog
 * (kopt.catalog, .claude/skills/optimization-catalog/SKILL.md) and of
 * each language catalog.  Two table shapes are recognised wherever they
 * sit among prose and other tables:
 *
 *   | ID | Optimization | Trigger Conditions | Est. Impact | Pitfalls |
 *     Detail File |
 *   | ID | Anti-Pattern | Failure Mode | Source | Detail File |
 *
 * Columns are found by name (case, spaces and dots do not matter), extra
 * columns are kept, and a table of either kind may appear more than
 * once.  IDs are O<n> and A<n>, unique within a catalog.  The Detail
 * File cell holds a path in backticks (from the top of the work tree) or
 * a link (relative to the catalog file, as a Markdown viewer reads it).
 * A code span in the Trigger Conditions cell is a trigger (lib/trigger);
 * lib/kb checks that it is one of its detail file's.
 *
 * kopt_catalog_parse() keeps the file's bytes and reports every problem
 * of the catalog itself (shape, IDs, cells) into `problems`; whether the
 * detail files exist and point back is checked by lib/kb.
 * kopt_catalog_append() splices a new row after the last row of the
 * right table (or a new table at the end of the file) without touching
 * any other byte.  Free with kopt_catalog_release().
 */

#include "buf.h"
#include "knowledge.h"
#include "problem.h"
#include "strvec.h"
#include "trigger.h"

enum kopt_catalog_col {
	KOPT_COL_ID,
	KOPT_COL_NAME,          /* Optimization / Anti-Pattern */
	KOPT_COL_TRIGGER,
	KOPT_COL_IMPACT,
	KOPT_COL_PITFALLS,
	KOPT_COL_FAILURE,
	KOPT_COL_SOURCE,
	KOPT_COL_DETAIL,
	KOPT_COL_NR
};

struct kopt_catalog_row {
	enum kopt_kind kind;
	char *cell[KOPT_COL_NR];  /* plain text; NULL for absent columns */
	long num;                 /* n of O<n>/A<n>, or -1 when malformed */
	char *detail;             /* the Detail File as written, or NULL */
	struct kopt_trigger *triggers;  /* code spans of Trigger Conditions */
	size_t triggers_nr, triggers_alloc;
	/*
	 * Code spans that are no expression over known metrics (`Z`,
	 * `num_ctas`): prose for the agent to judge, never a problem; each
	 * "<catalog>:<line>: <span>".
	 */
	struct kopt_problems prose;
	int detail_link;          /* written as a link */
	int line;
};

struct kopt_catalog_table {
	enum kopt_kind kind;
	int header_line, end_line;
	int col[KOPT_COL_NR];     /* column index of each, or -1 */
	int ncols;
	struct kopt_strvec columns;
};

struct kopt_catalog {
	char *path;               /* from the top of the work tree */
	struct kopt_buf text;
	struct kopt_catalog_table *tables;
	size_t tables_nr, tables_alloc;
	struct kopt_catalog_row *rows;
	size_t rows_nr, rows_alloc;
};

#define KOPT_CATALOG_INIT { NULL, KOPT_BUF_INIT, NULL, 0, 0, NULL, 0, 0 }

/* 0, or KOPT_EINVALID when problems were added. */
int kopt_catalog_parse(struct kopt_catalog *out, const char *path,
		       const char *text, size_t len,
		       struct kopt_problems *problems);
void kopt_catalog_release(struct kopt_catalog *c);

/* The ID number after the largest of this kind (1 for an empty one). */
long kopt_catalog_next_id(const struct kopt_catalog *c, enum kopt_kind kind);
/* The row of this kind whose ID is `id`, or NULL. */
const struct kopt_catalog_row *
kopt_catalog_find(const struct kopt_catalog *c, const char *id);

/* 1 when two rows say the same: the same kind and every cell equal. */
int kopt_catalog_row_same(const struct kopt_catalog_row *a,
			  const struct kopt_catalog_row *b);

/*
 * The detail file of `row` as a path from the top of the work tree
 * (owned by the caller); NULL when the row names none or names a URL.
 * For a link, *alt (when not NULL) receives the link read from the top
 * of the work tree instead, which hand-written catalogs often mean.
 */
char *kopt_catalog_detail_path(const struct kopt_catalog *c,
			       const struct kopt_catalog_row *row, char **alt);

/*
 * Where a Markdown link `url` in `file` (both from the top of the work
 * tree) points, as a path from the top; NULL for a URL, an anchor, or a
 * path above the top.  *alt (when not NULL) receives the link read from
 * the top instead.  Both owned by the caller.
 */
char *kopt_link_path(const char *file, const char *url, char **alt);

/*
 * The catalog's text with a row for `row` (kind and cell[] set; the ID
 * cell included) spliced after the last row of a table of its kind, or
 * with a new table of that kind appended when there is none.
 * KOPT_EINVALID, `out` empty, when the row would not read back (the
 * end of the text lies in an open code fence or HTML block).
 */
int kopt_catalog_append(struct kopt_buf *out, const struct kopt_catalog *c,
			const struct kopt_catalog_row *row);

/*
 * The catalog's text with the cells of `row` (one of c's rows) that
 * `cells` sets (non-NULL, Markdown) rewritten; every other byte, the
 * other cells of the row included, stays as it was.  KOPT_EINVALID
 * (printed), `out` empty, when the row would not read back so.
 */
int kopt_catalog_set_cells(struct kopt_buf *out, const struct kopt_catalog *c,
			   const struct kopt_catalog_row *row,
			   char *const cells[KOPT_COL_NR]);

/*
 * What a row of an entry says, as its detail file says it: the one rule
 * that `learn sync`, `learn new` and lint share.  Each cell is Markdown
 * (owned by the caller), NULL where the file says nothing usable
 * (missing, or a template placeholder):
 *   name      the H1
 *   trigger   the When to Apply triggers, each in backticks, joined by
 *             "and"; with none, its contexts joined by "; " (prose)
 *   impact    the gains of the Performance Evidence rows: "~12%",
 *             "8-15%", "1.5-2.2x" (from Before/After times or rates,
 *             else the Change cell)
 *   pitfalls  the Pitfalls bullets joined by "; "
 *   failure   (anti-patterns) the first sentence of Mechanism
 *   source    (anti-patterns) the Source type line
 * The ID and Detail File cells are never set.
 */
void kopt_catalog_cells_from_detail(char *cells[KOPT_COL_NR],
				    const struct kopt_detail *d,
				    enum kopt_kind kind);

/*
 * Whether column `col` of row `r` says what `derived` (its cell from
 * kopt_catalog_cells_from_detail() for the row's detail file `d`) says:
 * 1 when there is nothing to compare (derived NULL, no such column);
 * 0 when the cell is empty or a placeholder.  Triggers agree when both
 * name the same conditions, in any order or spelling (a file with prose
 * only agrees with any prose the row holds).  Any other text is the
 * author's summary and agrees, unless `words`: then an Est. Impact
 * agrees within 2x (or 5 points) of the measured gain, and other cells
 * when their words are the same, case, markup and spacing aside.
 */
int kopt_catalog_cell_agrees(const struct kopt_catalog_row *r, int col,
			     const struct kopt_detail *d, const char *derived,
			     int words);

/*
 * An Est. Impact cell as a percentage gain: "20-40%" is 30, "~15%" 15,
 * "1.5x" 50, "up to 2x" 100, "high" 30, "medium" 15, "low" 5.
 * KOPT_EINVALID when the text says none of these.
 */
int kopt_impact_parse(const char *text, double *pct);

/* The title of column `col` in a table of this kind ("Anti-Pattern"). */
const char *kopt_catalog_col_title(enum kopt_kind kind, int col);

/* The header of a new table of this kind, and its delimiter row. */
const char *kopt_catalog_header(enum kopt_kind kind);

#endif
