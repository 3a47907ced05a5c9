#ifndef KOPT_PLOT_H
#define KOPT_PLOT_H

/*
 * SVG plots of a kernel, written by `git kopt plot` into
 * docs/kernels/<kernel>/plots/: the history of each trial (duration per
 * version, from lib/chart's series, regressions marked) and a roofline
 * per device (each version's measured throughput per trial against the
 * device's copy and tensor ceilings, the calibrated ones when
 * `git kopt device --calibrate` measured them, else the theoretical
 * peaks, said so on the plot).  Arithmetic intensity comes from the
 * kernel's `flops` and `bytes` expressions at each trial's b, s, t.
 *
 * Everything is drawn here, by hand, as plain SVG 1.1 (no scripts, no
 * external fonts or files), and the bytes depend only on the input:
 * numbers are printed with fixed precision and nothing carries a date.
 *
 *	struct kopt_plot_set set = KOPT_PLOT_SET_INIT;
 *	kopt_plot_build(&set, &analysis, kernel_settings);
 *	for each set.files[i]: write set.files[i].content to
 *		<plots dir>/set.files[i].name
 *	kopt_plot_set_release(&set);
 *
 * The set owns the names, contents and notes.  `notes` says what could
 * not be drawn and why (no expressions, no ceilings, nothing measured),
 * one line each, for the command to print as warnings.
 */

#include <stddef.h>

#include "buf.h"
#include "strvec.h"

struct kopt_analysis;
struct kopt_kernel;
struct kopt_chart_series;

struct kopt_plot_file {
	char *name;             /* "history-decode.svg", "roofline.svg" */
	char *title;            /* what it shows, for links */
	struct kopt_buf content;
};

struct kopt_plot_set {
	struct kopt_plot_file *files;
	size_t files_nr, files_alloc;
	struct kopt_strvec notes;
};

#define KOPT_PLOT_SET_INIT { NULL, 0, 0, KOPT_STRVEC_INIT }

/* Every plot of the kernel; the number of files. */
size_t kopt_plot_build(struct kopt_plot_set *out,
		       const struct kopt_analysis *a,
		       const struct kopt_kernel *k);

/* One trial's history as an SVG document. */
void kopt_plot_history_svg(struct kopt_buf *out,
			   const struct kopt_chart_series *s,
			   const char *kernel, double noise_pct);

/*
 * The body of the devlog's Results block (kopt_devlog_put_results()):
 * the Mermaid charts of `a` and a line linking the files of `set`, each
 * as `link_dir`/<name> (relative to the devlog; NULL: no links).
 */
void kopt_plot_devlog_body(struct kopt_buf *out,
			   const struct kopt_analysis *a,
			   const struct kopt_plot_set *set,
			   const char *link_dir);

void kopt_plot_set_release(struct kopt_plot_set *set);

#endif
