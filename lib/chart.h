#ifndef KOPT_CHART_H
#define KOPT_CHART_H

/*
 * A kernel's history as charts: each trial's duration per version, one
 * series per trial and device (numbers are compared only on the same
 * device and configuration), versions in the order of their numbers,
 * each point marked when the version regressed on that trial against
 * its parent.  lib/chart builds the series from a struct kopt_analysis
 * (the one model every view reads) and renders them as Mermaid
 * `xychart-beta` blocks, which GitHub and GitLab draw inline; lib/plot
 * draws the same series as SVG.
 *
 *	struct kopt_chart c = KOPT_CHART_INIT;
 *	kopt_chart_from_analysis(&c, &analysis);
 *	kopt_chart_mermaid(&out, &c, "mla-decode");
 *	kopt_chart_release(&c);
 *
 * Output is deterministic: the same history gives the same bytes.  A
 * version not measured on a trial has no point on that trial's series
 * (xychart has no gaps) and is named under the chart as not measured.
 * The chart owns every string; the analysis may be released after
 * kopt_chart_from_analysis().
 */

#include <stddef.h>

#include "buf.h"

struct kopt_analysis;

struct kopt_chart_point {
	char *version;
	double value;           /* duration in us; NAN: not measured */
	int regression;         /* slower than its parent beyond the noise */
	double change_pct;      /* against its parent, NAN when none */
	int replayed;           /* numbers from a recorded capture */
	int from_devlog;        /* numbers written by hand in the devlog */
};

struct kopt_chart_series {
	char *trial;            /* "decode", or the configuration */
	char *config;           /* "b=32, s=1, t=4096" */
	char *device;           /* "NVIDIA H200", or "unknown device" */
	long b, s, t;
	struct kopt_chart_point *points;  /* every version, in order */
	size_t points_nr, points_alloc;
};

struct kopt_chart {
	struct kopt_chart_series *series;
	size_t series_nr, series_alloc;
	double noise_pct;
};

#define KOPT_CHART_INIT { NULL, 0, 0, 0 }

/* The series of `a`; the number of series (0: nothing measured). */
size_t kopt_chart_from_analysis(struct kopt_chart *out,
				const struct kopt_analysis *a);

/* Points of `s` that were measured. */
size_t kopt_chart_measured(const struct kopt_chart_series *s);

/*
 * Markdown for `c`: per series a one-line caption, a ```mermaid block
 * with an xychart-beta line chart, and a line naming the regressions and
 * the versions not measured.  Nothing when there is no series.
 */
void kopt_chart_mermaid(struct kopt_buf *out, const struct kopt_chart *c,
			const char *kernel);

/* A number as the charts print it: at most 2 decimals, no trailing 0. */
void kopt_chart_number(struct kopt_buf *out, double v);

/* An axis end at or above `max` that reads well (1, 1.2, 1.5, 2, 2.5,
 * 3, 4, 5, 6 or 8 x 10^n). */
double kopt_chart_nice_max(double max);

void kopt_chart_release(struct kopt_chart *c);

#endif
