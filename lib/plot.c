#include "plot.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"
#include "chart.h"
#include "config.h"
#include "error.h"
#include "results.h"
#include "banned.h"

#define W 760
#define H 420
#define ML 80   /* margins: left, right, top, bottom */
#define MR 30
#define MT 56
#define MB 78

static const char *const palette[] = {
	"#1f77b4", "#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
	"#bcbd22", "#17becf",
};
#define RED "#d62728"

static void xml_text(struct kopt_buf *out, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '<': kopt_buf_addstr(out, "&lt;"); break;
		case '>': kopt_buf_addstr(out, "&gt;"); break;
		case '&': kopt_buf_addstr(out, "&amp;"); break;
		case '"': kopt_buf_addstr(out, "&quot;"); break;
		default:
			if ((unsigned char)*s >= 0x20 || *s == '\t')
				kopt_buf_addch(out, *s);
		}
	}
}

static void num(struct kopt_buf *out, double v)
{
	kopt_chart_number(out, v);
}

/* A coordinate, one decimal. */
static void coord(struct kopt_buf *out, double v)
{
	kopt_buf_addf(out, "%.1f", fabs(v) < 0.05 ? 0.0 : v);
}

static void header(struct kopt_buf *out, int w, int h, const char *title)
{
	kopt_buf_addf(out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		      "<svg xmlns=\"http://www.w3.org/2000/svg\" "
		      "version=\"1.1\" width=\"%d\" height=\"%d\" "
		      "viewBox=\"0 0 %d %d\" font-family=\"DejaVu Sans, "
		      "Helvetica, Arial, sans-serif\" font-size=\"12\">\n",
		      w, h, w, h);
	kopt_buf_addstr(out, "<title>");
	xml_text(out, title);
	kopt_buf_addstr(out, "</title>\n");
	kopt_buf_addf(out, "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" "
		      "fill=\"#ffffff\"/>\n", w, h);
	kopt_buf_addf(out, "<text x=\"%d\" y=\"24\" font-size=\"15\" "
		      "font-weight=\"bold\" text-anchor=\"middle\">", w / 2);
	xml_text(out, title);
	kopt_buf_addstr(out, "</text>\n");
}

static void text_at(struct kopt_buf *out, double x, double y,
		    const char *anchor, const char *extra, const char *s)
{
	kopt_buf_addstr(out, "<text x=\"");
	coord(out, x);
	kopt_buf_addstr(out, "\" y=\"");
	coord(out, y);
	kopt_buf_addf(out, "\" text-anchor=\"%s\"%s%s>", anchor,
		      extra ? " " : "", extra ? extra : "");
	xml_text(out, s);
	kopt_buf_addstr(out, "</text>\n");
}

static void line_at(struct kopt_buf *out, double x1, double y1, double x2,
		    double y2, const char *style)
{
	kopt_buf_addstr(out, "<line x1=\"");
	coord(out, x1);
	kopt_buf_addstr(out, "\" y1=\"");
	coord(out, y1);
	kopt_buf_addstr(out, "\" x2=\"");
	coord(out, x2);
	kopt_buf_addstr(out, "\" y2=\"");
	coord(out, y2);
	kopt_buf_addf(out, "\" %s/>\n", style);
}

/* The y of duration `v`: linear up to `top`, or over decades d0..d1. */
static double y_of(double v, int logy, double top, double d0, double d1,
		   double ph)
{
	double f = logy ? (log10(v > 0 ? v : pow(10, d0)) - d0) / (d1 - d0) :
		   v / top;

	return MT + ph - ph * f;
}

void kopt_plot_history_svg(struct kopt_buf *out,
			   const struct kopt_chart_series *s,
			   const char *kernel, double noise_pct)
{
	struct kopt_buf title = KOPT_BUF_INIT, t = KOPT_BUF_INIT;
	struct kopt_buf path = KOPT_BUF_INIT, missing = KOPT_BUF_INIT;
	double max = 0, lo = 0, top, pw = W - ML - MR, ph = H - MT - MB;
	double d0 = 0, d1 = 1;
	size_t i, n = kopt_chart_measured(s), k;
	int any_regression = 0, logy;

	kopt_buf_addf(&title, "%s: %s (%s) on %s", kernel, s->trial,
		      s->config, s->device);
	header(out, W, H, title.buf);
	for (i = 0; i < s->points_nr; i++) {
		double v = s->points[i].value;
		if (isnan(v) || v <= 0)
			continue;
		if (v > max)
			max = v;
		if (!lo || v < lo)
			lo = v;
	}
	top = kopt_chart_nice_max(max * 1.08);
	/* a history that spans more than 20x reads on decades */
	logy = lo > 0 && max / lo > 20;
	if (logy) {
		d0 = floor(log10(lo));
		d1 = ceil(log10(max * 1.08));
		if (d1 <= d0)
			d1 = d0 + 1;
	}

	/* axes, grid and y ticks */
	for (k = 0; k <= (logy ? (size_t)(d1 - d0) : 5); k++) {
		double v = logy ? pow(10, d0 + (double)k) : top * (double)k / 5;
		double y = y_of(v, logy, top, d0, d1, ph);
		line_at(out, ML, y, ML + pw, y, k ? "stroke=\"#e0e0e0\"" :
			"stroke=\"#333333\"");
		kopt_buf_reset(&t);
		num(&t, v);
		text_at(out, ML - 8, y + 4, "end", NULL, t.buf);
	}
	line_at(out, ML, MT, ML, MT + ph, "stroke=\"#333333\"");
	kopt_buf_addf(out, "<text x=\"18\" y=\"%d\" text-anchor=\"middle\" "
		      "transform=\"rotate(-90 18 %d)\">duration (us%s), lower "
		      "is better</text>\n", MT + (int)ph / 2, MT + (int)ph / 2,
		      logy ? ", log scale" : "");

	/* the points, evenly spaced in version order */
	k = 0;
	for (i = 0; i < s->points_nr; i++) {
		const struct kopt_chart_point *p = &s->points[i];
		double x, y;

		if (isnan(p->value)) {
			kopt_buf_addf(&missing, "%s%s", missing.len ? ", " : "",
				      p->version);
			continue;
		}
		x = ML + (n > 1 ? pw * (0.04 + 0.92 * (double)k / (double)(n - 1))
			  : pw / 2);
		y = y_of(p->value, logy, top, d0, d1, ph);
		kopt_buf_addstr(&path, k ? " L " : "M ");
		coord(&path, x);
		kopt_buf_addch(&path, ' ');
		coord(&path, y);
		k++;
	}
	if (n > 1) {
		kopt_buf_addf(out, "<path d=\"%s\" fill=\"none\" "
			      "stroke=\"%s\" stroke-width=\"2\"/>\n", path.buf,
			      palette[0]);
	}
	k = 0;
	for (i = 0; i < s->points_nr; i++) {
		const struct kopt_chart_point *p = &s->points[i];
		double x, y;

		if (isnan(p->value))
			continue;
		x = ML + (n > 1 ? pw * (0.04 + 0.92 * (double)k / (double)(n - 1))
			  : pw / 2);
		y = y_of(p->value, logy, top, d0, d1, ph);
		k++;
		if (p->regression) {
			any_regression = 1;
			kopt_buf_addstr(out, "<path d=\"M ");
			coord(out, x);
			kopt_buf_addch(out, ' ');
			coord(out, y - 7);
			kopt_buf_addstr(out, " L ");
			coord(out, x + 6);
			kopt_buf_addch(out, ' ');
			coord(out, y + 5);
			kopt_buf_addstr(out, " L ");
			coord(out, x - 6);
			kopt_buf_addch(out, ' ');
			coord(out, y + 5);
			kopt_buf_addstr(out, " Z\" fill=\"" RED "\"/>\n");
		} else {
			kopt_buf_addstr(out, "<circle cx=\"");
			coord(out, x);
			kopt_buf_addstr(out, "\" cy=\"");
			coord(out, y);
			kopt_buf_addf(out, "\" r=\"4\" fill=\"%s\"/>\n",
				      palette[0]);
		}
		kopt_buf_reset(&t);
		num(&t, p->value);
		if (p->regression && !isnan(p->change_pct))
			kopt_buf_addf(&t, " (%+.1f%%)", p->change_pct);
		if (p->replayed)
			kopt_buf_addstr(&t, " r");
		/*
		 * Neighbours' labels alternate above and below their points,
		 * inside the plot; one that would leave it on the right ends
		 * at its point.
		 */
		{
			double half = 3.3 * (double)t.len, ly = y - 11;
			const char *anchor = "middle";
			if (!(k % 2) && y - 11 >= MT + 12 &&
			    y + 20 <= MT + ph - 4)
				ly = y + 20;
			if (x + half > W - 4) {
				anchor = "end";
				x += 6;
			}
			text_at(out, x, ly, anchor, p->regression ?
				"fill=\"" RED "\"" : NULL, t.buf);
			if (*anchor == 'e')
				x -= 6;
		}
		text_at(out, x, MT + ph + 18, "middle", NULL, p->version);
	}
	if (!n)
		text_at(out, ML + pw / 2, MT + ph / 2, "middle", NULL,
			"not measured");

	/* what the marks mean */
	kopt_buf_reset(&t);
	if (any_regression)
		kopt_buf_addf(&t, "red triangle: slower than its parent beyond "
			      "the %g%% noise", noise_pct);
	if (n && s->points_nr)
		for (i = 0; i < s->points_nr; i++)
			if (s->points[i].replayed) {
				kopt_buf_addf(&t, "%sr: replayed from a "
					      "recorded capture",
					      t.len ? "; " : "");
				break;
			}
	if (t.len)
		text_at(out, ML, H - 34, "start", "font-size=\"11\"", t.buf);
	if (missing.len) {
		kopt_buf_reset(&t);
		kopt_buf_addf(&t, "not measured: %s", missing.buf);
		text_at(out, ML, H - 16, "start", "font-size=\"11\"", t.buf);
	}
	kopt_buf_addstr(out, "</svg>\n");
	kopt_buf_release(&title);
	kopt_buf_release(&t);
	kopt_buf_release(&path);
	kopt_buf_release(&missing);
}

/* ------------------------------------------------------------------ */
/* Roofline */

struct roof_point {
	const char *version;
	const char *trial;
	double ai, tflops;
	int trial_index;
};

struct roof {
	const char *device;
	double ceil_tflops, ceil_gbps;
	int calibrated_t, calibrated_g;
	struct roof_point *points;
	size_t points_nr, points_alloc;
};

static double lg(double v)
{
	return log10(v);
}

static void roof_svg(struct kopt_buf *out, const struct roof *r,
		     const char *kernel, const struct kopt_strvec *trials)
{
	struct kopt_buf title = KOPT_BUF_INIT, t = KOPT_BUF_INIT;
	double pw = W - ML - MR, ph = H + 40 - MT - MB;
	double ridge = r->ceil_tflops * 1000 / r->ceil_gbps;
	double xmin = ridge, xmax = ridge, ymin = r->ceil_tflops;
	double ymax = r->ceil_tflops, lx0, lx1, ly0, ly1, d;
	struct roof_point *labelled;
	size_t i, labels_nr = 0;

#define PX(v) (ML + pw * (lg(v) - lx0) / (lx1 - lx0))
#define PY(v) (MT + ph - ph * (lg(v) - ly0) / (ly1 - ly0))

	for (i = 0; i < r->points_nr; i++) {
		if (r->points[i].ai < xmin)
			xmin = r->points[i].ai;
		if (r->points[i].ai > xmax)
			xmax = r->points[i].ai;
		if (r->points[i].tflops < ymin)
			ymin = r->points[i].tflops;
		if (r->points[i].tflops > ymax)
			ymax = r->points[i].tflops;
	}
	lx0 = floor(lg(xmin)) - 1;
	lx1 = ceil(lg(xmax)) + 1;
	ly0 = floor(lg(ymin)) - 1;
	ly1 = ceil(lg(ymax) + 0.2);
	kopt_buf_addf(&title, "%s: roofline on %s", kernel, r->device);
	header(out, W, H + 40, title.buf);

	/* decades */
	for (d = lx0; d <= lx1 + 1e-9; d += 1) {
		double x = PX(pow(10, d));
		line_at(out, x, MT, x, MT + ph, d == lx0 ?
			"stroke=\"#333333\"" : "stroke=\"#e0e0e0\"");
		kopt_buf_reset(&t);
		num(&t, pow(10, d));
		text_at(out, x, MT + ph + 16, "middle", NULL, t.buf);
	}
	for (d = ly0; d <= ly1 + 1e-9; d += 1) {
		double y = PY(pow(10, d));
		line_at(out, ML, y, ML + pw, y, d == ly0 ?
			"stroke=\"#333333\"" : "stroke=\"#e0e0e0\"");
		kopt_buf_reset(&t);
		num(&t, pow(10, d));
		text_at(out, ML - 8, y + 4, "end", NULL, t.buf);
	}
	text_at(out, ML + pw / 2, MT + ph + 36, "middle", NULL,
		"arithmetic intensity (FLOP/byte, from the kernel's flops "
		"and bytes)");
	kopt_buf_addf(out, "<text x=\"18\" y=\"%d\" text-anchor=\"middle\" "
		      "transform=\"rotate(-90 18 %d)\">TFLOP/s</text>\n",
		      MT + (int)ph / 2, MT + (int)ph / 2);

	/* the roof: copy bandwidth up to the ridge, then the tensor peak */
	kopt_buf_addstr(out, "<path d=\"M ");
	coord(out, PX(pow(10, lx0)));
	kopt_buf_addch(out, ' ');
	coord(out, PY(r->ceil_gbps * pow(10, lx0) / 1000));
	kopt_buf_addstr(out, " L ");
	coord(out, PX(ridge));
	kopt_buf_addch(out, ' ');
	coord(out, PY(r->ceil_tflops));
	kopt_buf_addstr(out, " L ");
	coord(out, PX(pow(10, lx1)));
	kopt_buf_addch(out, ' ');
	coord(out, PY(r->ceil_tflops));
	kopt_buf_addstr(out, "\" fill=\"none\" stroke=\"#000000\" "
			"stroke-width=\"2\"/>\n");
	kopt_buf_reset(&t);
	kopt_buf_addstr(&t, "tensor ");
	num(&t, r->ceil_tflops);
	kopt_buf_addf(&t, " TFLOP/s (%s)", r->calibrated_t ? "calibrated" :
		      "theoretical peak, not calibrated");
	text_at(out, ML + pw - 4, PY(r->ceil_tflops) - 6, "end", NULL, t.buf);
	kopt_buf_reset(&t);
	kopt_buf_addstr(&t, "copy ");
	num(&t, r->ceil_gbps);
	kopt_buf_addf(&t, " GB/s (%s)", r->calibrated_g ? "calibrated" :
		      "theoretical peak, not calibrated");
	text_at(out, ML + 6, MT + ph - 8, "start", "font-size=\"11\"", t.buf);

	/* a point per version and trial, coloured by trial; a label only
	 * where it does not cover another (the newest versions first) */
	labelled = kopt_calloc(r->points_nr + 1, sizeof(*labelled));
	for (i = r->points_nr; i-- > 0;) {
		const struct roof_point *p = &r->points[i];
		double x = PX(p->ai), y = PY(p->tflops);
		size_t j;
		int clear = 1;
		for (j = 0; j < labels_nr; j++)
			if (fabs(labelled[j].ai - x) < 34 &&
			    fabs(labelled[j].tflops - y) < 11)
				clear = 0;
		if (!clear)
			continue;
		labelled[labels_nr].ai = x;
		labelled[labels_nr].tflops = y;
		labels_nr++;
		text_at(out, x + 6, y - 6, "start", "font-size=\"10\"",
			p->version);
	}
	free(labelled);
	for (i = 0; i < r->points_nr; i++) {
		const struct roof_point *p = &r->points[i];
		const char *color = palette[p->trial_index %
					    KOPT_ARRAY_SIZE(palette)];
		kopt_buf_addstr(out, "<circle cx=\"");
		coord(out, PX(p->ai));
		kopt_buf_addstr(out, "\" cy=\"");
		coord(out, PY(p->tflops));
		kopt_buf_addf(out, "\" r=\"4\" fill=\"%s\"/>\n", color);
	}
	/* legend: trials */
	for (i = 0; i < trials->nr; i++) {
		double y = MT + 14 + 16 * (double)i;
		kopt_buf_addstr(out, "<circle cx=\"");
		coord(out, ML + 14);
		kopt_buf_addstr(out, "\" cy=\"");
		coord(out, y - 4);
		kopt_buf_addf(out, "\" r=\"4\" fill=\"%s\"/>\n",
			      palette[i % KOPT_ARRAY_SIZE(palette)]);
		text_at(out, ML + 24, y, "start", NULL, trials->v[i]);
	}
	text_at(out, ML, H + 40 - 12, "start", "font-size=\"11\"",
		"each point: a version's whole pipeline on a trial "
		"(the expressions count every stage together)");
	kopt_buf_addstr(out, "</svg>\n");
	kopt_buf_release(&title);
	kopt_buf_release(&t);
#undef PX
#undef PY
}

static void slug(struct kopt_buf *out, const char *s)
{
	int dash = 0;

	for (; *s; s++) {
		if (isalnum((unsigned char)*s)) {
			if (dash && out->len)
				kopt_buf_addch(out, '-');
			kopt_buf_addch(out, (char)tolower((unsigned char)*s));
			dash = 0;
		} else {
			dash = 1;
		}
	}
	if (!out->len)
		kopt_buf_addstr(out, "x");
}

static struct kopt_plot_file *add_file(struct kopt_plot_set *set)
{
	struct kopt_plot_file *f;

	KOPT_ALLOC_GROW(set->files, set->files_nr + 1, set->files_alloc);
	f = &set->files[set->files_nr++];
	f->name = NULL;
	f->title = NULL;
	kopt_buf_init(&f->content, 0);
	return f;
}

static int several_devices(const struct kopt_chart *c)
{
	size_t i;

	for (i = 1; i < c->series_nr; i++)
		if (strcmp(c->series[i].device, c->series[0].device))
			return 1;
	return 0;
}

/*
 * A point's flops and bytes; 0 leaves the point out, as when the
 * expressions do not evaluate at its configuration (not an error of the
 * plot: the settings' check names them).
 */
static int roofline_xy(double *flops, double *bytes,
		       const struct kopt_kernel *k,
		       const struct kopt_vars *vars)
{
	struct kopt_error_catch quiet = KOPT_ERROR_CATCH_INIT;
	int bad;

	kopt_error_catch(&quiet);
	bad = kopt_config_eval(k->flops, vars, flops, NULL) ||
	      kopt_config_eval(k->bytes, vars, bytes, NULL);
	kopt_error_uncatch(&quiet);
	kopt_error_catch_release(&quiet);
	return !bad && *flops > 0 && *bytes > 0;
}

static void build_rooflines(struct kopt_plot_set *out,
			    const struct kopt_analysis *a,
			    const struct kopt_kernel *k, int multi)
{
	struct roof *roofs = NULL;
	size_t roofs_nr = 0, roofs_alloc = 0, i, j, r;
	struct kopt_strvec trials = KOPT_STRVEC_INIT;

	if (!k || !k->flops || !k->bytes) {
		kopt_strvec_pushf(&out->notes, "no roofline for %s: its "
				  "settings have no flops and bytes "
				  "expressions", a->kernel);
		return;
	}
	for (i = 0; i < a->versions_nr; i++) {
		const struct kopt_analysis_version *v = &a->versions[i];
		for (j = 0; v->has_results && j < v->results.entries_nr; j++) {
			const struct kopt_results_entry *e =
				&v->results.entries[j];
			struct kopt_vars vars = { k, v->name, NULL, e->b, e->s,
						  e->t, 1 };
			double dur = e->metrics[KOPT_METRIC_DURATION_US];
			double flops, bytes, ct, cg;
			const char *dev = e->device.name && *e->device.name ?
					  e->device.name : "unknown device";
			const char *trial = e->trial ? e->trial : "ad hoc";
			struct roof *rf = NULL;
			struct roof_point *p;
			size_t ti;

			if (!kopt_results_has(dur) || dur <= 0)
				continue;
			if (!roofline_xy(&flops, &bytes, k, &vars))
				continue;
			ct = kopt_results_has(e->device.measured_tflops) ?
			     e->device.measured_tflops : e->device.peak_tflops;
			cg = kopt_results_has(e->device.measured_gbps) ?
			     e->device.measured_gbps : e->device.peak_gbps;
			for (r = 0; r < roofs_nr; r++)
				if (!strcmp(roofs[r].device, dev))
					rf = &roofs[r];
			if (!rf) {
				KOPT_ALLOC_GROW(roofs, roofs_nr + 1,
						roofs_alloc);
				rf = &roofs[roofs_nr++];
				memset(rf, 0, sizeof(*rf));
				rf->device = dev;
				rf->ceil_tflops = NAN;
				rf->ceil_gbps = NAN;
			}
			/* the calibrated ceilings win over the peaks */
			if (kopt_results_has(ct) && ct > 0 &&
			    (isnan(rf->ceil_tflops) ||
			     (!rf->calibrated_t &&
			      kopt_results_has(e->device.measured_tflops)))) {
				rf->ceil_tflops = ct;
				rf->calibrated_t = kopt_results_has(
					e->device.measured_tflops);
			}
			if (kopt_results_has(cg) && cg > 0 &&
			    (isnan(rf->ceil_gbps) ||
			     (!rf->calibrated_g &&
			      kopt_results_has(e->device.measured_gbps)))) {
				rf->ceil_gbps = cg;
				rf->calibrated_g = kopt_results_has(
					e->device.measured_gbps);
			}
			if (!kopt_strvec_has(&trials, trial))
				kopt_strvec_push(&trials, trial);
			for (ti = 0; strcmp(trials.v[ti], trial); ti++)
				;
			KOPT_ALLOC_GROW(rf->points, rf->points_nr + 1,
					rf->points_alloc);
			p = &rf->points[rf->points_nr++];
			p->version = v->name;
			p->trial = trial;
			p->ai = flops / bytes;
			p->tflops = flops / (dur * 1e-6) / 1e12;
			p->trial_index = (int)ti;
		}
	}
	for (r = 0; r < roofs_nr; r++) {
		struct roof *rf = &roofs[r];
		struct kopt_plot_file *f;
		struct kopt_buf name = KOPT_BUF_INIT;

		if (isnan(rf->ceil_tflops) || isnan(rf->ceil_gbps)) {
			kopt_strvec_pushf(&out->notes, "no roofline for %s on "
					  "%s: the results give no ceilings "
					  "of the device (run 'git kopt "
					  "device --calibrate', then profile)",
					  a->kernel, rf->device);
			continue;
		}
		kopt_buf_addstr(&name, "roofline");
		if (multi || roofs_nr > 1) {
			kopt_buf_addch(&name, '-');
			slug(&name, rf->device);
		}
		kopt_buf_addstr(&name, ".svg");
		f = add_file(out);
		f->name = kopt_buf_detach(&name, NULL);
		f->title = kopt_xstrfmt("roofline on %s", rf->device);
		roof_svg(&f->content, rf, a->kernel, &trials);
	}
	if (!roofs_nr)
		kopt_strvec_pushf(&out->notes, "no roofline for %s: no "
				  "version has a measured duration",
				  a->kernel);
	for (r = 0; r < roofs_nr; r++)
		free(roofs[r].points);
	free(roofs);
	kopt_strvec_clear(&trials);
}

size_t kopt_plot_build(struct kopt_plot_set *out,
		       const struct kopt_analysis *a,
		       const struct kopt_kernel *k)
{
	struct kopt_chart c = KOPT_CHART_INIT;
	int multi;
	size_t i;

	kopt_chart_from_analysis(&c, a);
	multi = several_devices(&c);
	for (i = 0; i < c.series_nr; i++) {
		const struct kopt_chart_series *s = &c.series[i];
		struct kopt_buf name = KOPT_BUF_INIT;
		struct kopt_plot_file *f;

		if (!kopt_chart_measured(s))
			continue;
		kopt_buf_addstr(&name, "history-");
		slug(&name, s->trial);
		if (multi) {
			kopt_buf_addch(&name, '-');
			slug(&name, s->device);
		}
		kopt_buf_addstr(&name, ".svg");
		f = add_file(out);
		f->name = kopt_buf_detach(&name, NULL);
		f->title = kopt_xstrfmt("%s history on %s", s->trial,
					s->device);
		kopt_plot_history_svg(&f->content, s, a->kernel, c.noise_pct);
	}
	if (!c.series_nr)
		kopt_strvec_pushf(&out->notes, "no history for %s: no version "
				  "has results", a->kernel);
	build_rooflines(out, a, k, multi);
	kopt_chart_release(&c);
	return out->files_nr;
}

void kopt_plot_devlog_body(struct kopt_buf *out,
			   const struct kopt_analysis *a,
			   const struct kopt_plot_set *set,
			   const char *link_dir)
{
	struct kopt_chart c = KOPT_CHART_INIT;
	size_t i;

	kopt_chart_from_analysis(&c, a);
	kopt_chart_mermaid(out, &c, a->kernel);
	if (!c.series_nr)
		kopt_buf_addstr(out, "No version has results yet.\n");
	if (link_dir && set->files_nr) {
		kopt_buf_addstr(out, "\nPlots:");
		for (i = 0; i < set->files_nr; i++)
			kopt_buf_addf(out, "%s [%s](%s/%s)", i ? "," : "",
				      set->files[i].title, link_dir,
				      set->files[i].name);
		kopt_buf_addstr(out, ".\n");
	}
	kopt_chart_release(&c);
}

void kopt_plot_set_release(struct kopt_plot_set *set)
{
	size_t i;

	for (i = 0; i < set->files_nr; i++) {
		free(set->files[i].name);
		free(set->files[i].title);
		kopt_buf_release(&set->files[i].content);
	}
	free(set->files);
	set->files = NULL;
	set->files_nr = set->files_alloc = 0;
	kopt_strvec_clear(&set->notes);
}
