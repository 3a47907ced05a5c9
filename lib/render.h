#ifndef KOPT_RENDER_H
#define KOPT_RENDER_H

/*
 * Views of results: the performance block a devlog entry holds (a
 * paragraph naming the device and configuration, a metric table,
 * Bottleneck and Issues), changes against a parent ("12.3% faster",
 * "+4.0%"), and Markdown tables with aligned columns.  The tables and
 * blocks made here round numbers for reading (kopt_render_value());
 * results files keep them unrounded.  Nothing prints; everything
 * appends to a kopt_buf.
 */

#include "buf.h"
#include "devlog.h"
#include "results.h"
#include "strvec.h"

/*
 * The relative change of `cur` against `prev` in percent
 * ((cur - prev) / prev * 100), or NAN when either is missing or prev is 0.
 */
double kopt_change_pct(double cur, double prev);

/*
 * The "vs Previous" cell of a metric: duration "12.3% faster" / "4.0%
 * slower" / "unchanged", throughput "+5.1%" / "-2.0%", "--" when there
 * is no parent value or the metric is not compared (occupancy, TC).
 */
void kopt_render_vs(struct kopt_buf *out, int metric, double cur,
		    double prev);
/* A metric's value for a view: "81.20 μs", "59.30", "25%", "--". */
void kopt_render_value(struct kopt_buf *out, int metric, double v);

/*
 * The paragraph of a performance block, without the trailing newline:
 * "**Performance** (NVIDIA H200, replayed capture, bfloat16, b=32, s=1,
 * t=4096):".
 */
void kopt_render_perf_paragraph(struct kopt_buf *out,
				const struct kopt_results_entry *e);
/*
 * The performance block of `e` (paragraph, table, Bottleneck, Issues from
 * the top three opportunities), '\n'-terminated lines, without Insights
 * (kopt_devlog_put_perf() keeps the ones people wrote).  `parent` is the
 * parent version's entry at the same configuration, or NULL.
 */
void kopt_render_perf_block(struct kopt_buf *out,
			    const struct kopt_results_entry *e,
			    const struct kopt_results_entry *parent);
/* Render and put the block of `e` into the devlog entry of `version`. */
int kopt_render_put_results(struct kopt_devlog *dl, const char *version,
			    const struct kopt_results_entry *e,
			    const struct kopt_results_entry *parent,
			    struct kopt_devlog_edit *edit);

/* A Markdown table whose columns are padded to one width. */
struct kopt_mdtable {
	size_t cols;
	struct kopt_strvec cells;   /* row-major, header first */
	char *align;                /* per column: 'l' or 'r' */
};

void kopt_mdtable_init(struct kopt_mdtable *t, size_t cols,
		       const char *const *header);
/* Right-align column `col` (numbers). */
void kopt_mdtable_align_right(struct kopt_mdtable *t, size_t col);
/* Add one cell; rows fill left to right. */
void kopt_mdtable_add(struct kopt_mdtable *t, const char *cell);
void kopt_mdtable_addf(struct kopt_mdtable *t, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void kopt_mdtable_render(struct kopt_buf *out, const struct kopt_mdtable *t);
void kopt_mdtable_release(struct kopt_mdtable *t);

/* Display width of UTF-8 text (code points; "μs" is 2). */
size_t kopt_display_width(const char *s);

#endif
