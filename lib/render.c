#include "render.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "profile.h"
#include "banned.h"

double kopt_change_pct(double cur, double prev)
{
	if (!kopt_results_has(cur) || !kopt_results_has(prev) || prev == 0)
		return NAN;
	return (cur - prev) / prev * 100.0;
}

void kopt_render_vs(struct kopt_buf *out, int metric, double cur,
		    double prev)
{
	double c = kopt_change_pct(cur, prev);

	if (!kopt_results_has(c) || metric == KOPT_METRIC_OCC_PCT ||
	    metric == KOPT_METRIC_TC_PCT) {
		kopt_buf_addstr(out, "--");
		return;
	}
	if (metric == KOPT_METRIC_DURATION_US) {
		if (fabs(c) < 0.05)
			kopt_buf_addstr(out, "unchanged");
		else
			kopt_buf_addf(out, "%.1f%% %s", fabs(c),
				      c < 0 ? "faster" : "slower");
		return;
	}
	if (fabs(c) < 0.05)
		c = 0;
	kopt_buf_addf(out, "%s%.1f%%", c < 0 ? "-" : "+", fabs(c));
}

void kopt_render_value(struct kopt_buf *out, int metric, double v)
{
	if (!kopt_results_has(v)) {
		kopt_buf_addstr(out, "--");
		return;
	}
	switch (metric) {
	case KOPT_METRIC_DURATION_US:
		kopt_buf_addf(out, "%.2f \xce\xbcs", v);
		break;
	case KOPT_METRIC_TC_PCT:
	case KOPT_METRIC_DRAM_PCT:
	case KOPT_METRIC_OCC_PCT:
	case KOPT_METRIC_L2_HIT_PCT:
	case KOPT_METRIC_ROOFLINE_PCT:
		kopt_buf_addf(out, "%.0f%%", v);
		break;
	case KOPT_METRIC_SPILL_BYTES:
	case KOPT_METRIC_REGS:
		kopt_buf_addf(out, "%.0f", v);
		break;
	default:
		kopt_buf_addf(out, "%.2f", v);
		break;
	}
}

void kopt_render_perf_paragraph(struct kopt_buf *out,
				const struct kopt_results_entry *e)
{
	kopt_buf_addf(out, "**Performance** (%s",
		      e->device.name ? e->device.name : "unknown device");
	if (e->replayed)
		kopt_buf_addstr(out, ", replayed capture");
	if (e->device.clocks_locked)
		kopt_buf_addstr(out, ", locked clocks");
	if (e->dtype)
		kopt_buf_addf(out, ", %s", e->dtype);
	kopt_buf_addf(out, ", b=%ld", e->b);
	if (e->b_requested && e->b_requested != e->b)
		kopt_buf_addf(out, " (asked %ld)", e->b_requested);
	kopt_buf_addf(out, ", s=%ld, t=%ld):", e->s, e->t);
}

static const int block_metrics[] = {
	KOPT_METRIC_DURATION_US, KOPT_METRIC_TFLOPS, KOPT_METRIC_GBPS,
	KOPT_METRIC_OCC_PCT, KOPT_METRIC_TC_PCT,
};

void kopt_render_perf_block(struct kopt_buf *out,
			    const struct kopt_results_entry *e,
			    const struct kopt_results_entry *parent)
{
	static const char *const header[] = { "Metric", "Value",
					      "vs Previous" };
	struct kopt_mdtable t;
	struct kopt_buf cell = KOPT_BUF_INIT;
	size_t i, n;

	kopt_render_perf_paragraph(out, e);
	kopt_buf_addstr(out, "\n\n");
	kopt_mdtable_init(&t, 3, header);
	for (i = 0; i < KOPT_ARRAY_SIZE(block_metrics); i++) {
		int m = block_metrics[i];
		kopt_mdtable_add(&t, kopt_metric_infos[m].label);
		kopt_buf_reset(&cell);
		kopt_render_value(&cell, m, e->metrics[m]);
		kopt_mdtable_add(&t, cell.buf);
		kopt_buf_reset(&cell);
		kopt_render_vs(&cell, m, e->metrics[m],
			       parent ? parent->metrics[m] : NAN);
		kopt_mdtable_add(&t, cell.buf);
	}
	kopt_mdtable_render(out, &t);
	kopt_mdtable_release(&t);
	kopt_buf_addf(out, "\n**Bottleneck**: %s\n",
		      e->bottleneck ? e->bottleneck : "not classified");
	kopt_buf_addstr(out, "\n**Issues**:\n");
	n = e->opportunities_nr < 3 ? e->opportunities_nr : 3;
	for (i = 0; i < n; i++) {
		const struct kopt_results_opportunity *o = &e->opportunities[i];
		kopt_buf_addf(out, "- %s", o->name);
		if (kopt_results_has(o->est_gain_pct))
			kopt_buf_addf(out, " -- est. %.0f%% gain",
				      o->est_gain_pct);
		if (o->trigger)
			kopt_buf_addf(out, " -- trigger: %s", o->trigger);
		kopt_buf_addch(out, '\n');
	}
	kopt_buf_reset(&cell);
	kopt_profile_unmeasured(&cell, e);
	if (!n)
		kopt_buf_addstr(out, cell.len ? "- (none drawn from what was "
				"measured)\n" : "- (none found by the "
				"profiler)\n");
	if (cell.len)
		kopt_buf_addf(out, "\n**Not measured**:\n%s", cell.buf);
	kopt_buf_release(&cell);
}

int kopt_render_put_results(struct kopt_devlog *dl, const char *version,
			    const struct kopt_results_entry *e,
			    const struct kopt_results_entry *parent,
			    struct kopt_devlog_edit *edit)
{
	struct kopt_buf block = KOPT_BUF_INIT;
	int ret;

	kopt_render_perf_block(&block, e, parent);
	ret = kopt_devlog_put_perf(dl, version, e->b, e->s, e->t,
				   e->b_requested, block.buf, edit);
	kopt_buf_release(&block);
	return ret;
}

/* ------------------------------------------------------------------ */

size_t kopt_display_width(const char *s)
{
	size_t w = 0;

	for (; *s; s++)
		if (((unsigned char)*s & 0xc0) != 0x80)
			w++;
	return w;
}

void kopt_mdtable_init(struct kopt_mdtable *t, size_t cols,
		       const char *const *header)
{
	size_t i;

	t->cols = cols;
	kopt_strvec_init(&t->cells);
	t->align = kopt_calloc(cols + 1, 1);
	memset(t->align, 'l', cols);
	for (i = 0; i < cols; i++)
		kopt_strvec_push(&t->cells, header[i]);
}

void kopt_mdtable_align_right(struct kopt_mdtable *t, size_t col)
{
	if (col < t->cols)
		t->align[col] = 'r';
}

void kopt_mdtable_add(struct kopt_mdtable *t, const char *cell)
{
	struct kopt_buf sb = KOPT_BUF_INIT;
	const char *p;

	/* a cell is one line; a pipe would end it */
	for (p = cell; *p; p++) {
		if (*p == '|')
			kopt_buf_addstr(&sb, "\\|");
		else
			kopt_buf_addch(&sb, *p == '\n' || *p == '\r' ? ' ' : *p);
	}
	kopt_strvec_push(&t->cells, sb.buf);
	kopt_buf_release(&sb);
}

void kopt_mdtable_addf(struct kopt_mdtable *t, const char *fmt, ...)
{
	struct kopt_buf sb = KOPT_BUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	kopt_buf_vaddf(&sb, fmt, ap);
	va_end(ap);
	kopt_mdtable_add(t, sb.buf);
	kopt_buf_release(&sb);
}

void kopt_mdtable_render(struct kopt_buf *out, const struct kopt_mdtable *t)
{
	size_t *width = kopt_calloc(t->cols, sizeof(*width));
	size_t i, c, rows = (t->cells.nr + t->cols - 1) / t->cols;

	for (i = 0; i < t->cells.nr; i++) {
		size_t w = kopt_display_width(t->cells.v[i]);
		if (w > width[i % t->cols])
			width[i % t->cols] = w;
	}
	for (c = 0; c < t->cols; c++)
		if (width[c] < 3)
			width[c] = 3;
	for (i = 0; i < rows; i++) {
		for (c = 0; c < t->cols; c++) {
			size_t k = i * t->cols + c;
			const char *cell = k < t->cells.nr ? t->cells.v[k] : "";
			size_t pad = width[c] - kopt_display_width(cell);
			kopt_buf_addstr(out, c ? " | " : "| ");
			if (t->align[c] == 'r' && i > 0)
				kopt_buf_addchars(out, ' ', pad);
			kopt_buf_addstr(out, cell);
			if (t->align[c] != 'r' || i == 0)
				kopt_buf_addchars(out, ' ', pad);
		}
		kopt_buf_addstr(out, " |\n");
		if (i)
			continue;
		for (c = 0; c < t->cols; c++) {
			kopt_buf_addstr(out, c ? " | " : "| ");
			kopt_buf_addchars(out, '-', width[c] -
					  (t->align[c] == 'r'));
			if (t->align[c] == 'r')
				kopt_buf_addch(out, ':');
		}
		kopt_buf_addstr(out, " |\n");
	}
	free(width);
}

void kopt_mdtable_release(struct kopt_mdtable *t)
{
	kopt_strvec_clear(&t->cells);
	free(t->align);
	t->align = NULL;
}
