/*
 * git kopt plot: SVG plots of a kernel (history per trial, roofline per
 * device) into docs/kernels/<kernel>/plots/, and the devlog's Results
 * section (Mermaid charts and links to the plots) spliced in place.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"
#include "builtin.h"
#include "devlog.h"
#include "filetx.h"
#include "paths.h"
#include "plot.h"
#include "banned.h"

static const char *const plot_usage[] = {
	"git kopt plot <kernel> [--out <dir>] [--no-devlog]",
	NULL
};

/* The file holds exactly `want` (then it is not written again). */
static int same_bytes(const char *path, const struct kopt_buf *want)
{
	struct kopt_buf have = KOPT_BUF_INIT;
	int same = !kopt_buf_read_file(&have, path) &&
		   have.len == want->len &&
		   !memcmp(have.buf, want->buf, want->len);

	kopt_buf_release(&have);
	return same;
}

/* The plots that changed, into `tx`, under `dir`. */
static void add_plots(struct kopt_filetx *tx, const struct kopt_ctx *ctx,
		      const struct kopt_plot_set *set, const char *dir)
{
	struct kopt_buf path = KOPT_BUF_INIT, label = KOPT_BUF_INIT;
	size_t i;

	for (i = 0; i < set->files_nr; i++) {
		kopt_buf_reset(&label);
		kopt_buf_addf(&label, "%s/%s", dir, set->files[i].name);
		kopt_buf_reset(&path);
		if (label.buf[0] == '/')
			kopt_buf_addbuf(&path, &label);
		else
			kopt_buf_addf(&path, "%s%s", ctx->top, label.buf);
		if (same_bytes(path.buf, &set->files[i].content))
			continue;
		kopt_filetx_add(tx, path.buf, label.buf,
				set->files[i].content.buf,
				set->files[i].content.len, 0, NULL);
	}
	kopt_buf_release(&path);
	kopt_buf_release(&label);
}

/*
 * The devlog's Results section, into `tx` when it changes; links go to
 * the default folder unless --out named another.  0, or 128.
 */
static int add_devlog(struct kopt_filetx *tx, struct kopt_ctx *ctx,
		      const struct kopt_kernel *k, const struct kopt_analysis *a,
		      const struct kopt_plot_set *set, int default_dir)
{
	struct kopt_devlog dl = KOPT_DEVLOG_INIT;
	struct kopt_devlog_edit edit;
	struct kopt_buf devlog = KOPT_BUF_INIT, body = KOPT_BUF_INIT;
	char *devlog_abs, *links;
	int r, ret = 0;

	kopt_path_devlog(&devlog, k->name);
	devlog_abs = kopt_ctx_path(ctx, devlog.buf);
	r = kopt_devlog_read_file(&dl, devlog_abs);
	if (r == KOPT_ENOTFOUND) {
		kopt_warning("no devlog '%s': no Results section written",
			     devlog.buf);
	} else if (r) {
		ret = 128;
	} else {
		/* links are relative to the devlog's folder */
		links = kopt_xstrfmt("%s/plots", k->name);
		kopt_plot_devlog_body(&body, a, set,
				      default_dir ? links : NULL);
		free(links);
		if (kopt_devlog_put_results(&dl, body.buf, &edit))
			ret = 128;
		else if (edit.changed)
			kopt_filetx_add(tx, devlog_abs, devlog.buf,
					dl.text.buf, dl.text.len, 0, NULL);
	}
	kopt_devlog_release(&dl);
	kopt_buf_release(&devlog);
	kopt_buf_release(&body);
	free(devlog_abs);
	return ret;
}

int cmd_plot(int argc, const char **argv, struct kopt_ctx *ctx)
{
	const char *out_dir = NULL;
	int no_devlog = 0, ret = 0;
	const struct kopt_option options[] = {
		OPT_STRING(0, "out", &out_dir, "dir", "write the SVG files "
			   "there (default: docs/kernels/<kernel>/plots; the "
			   "devlog links only those)"),
		OPT_BOOL(0, "no-devlog", &no_devlog, "leave the devlog's "
			 "Results section alone"),
		OPT_END()
	};
	const struct kopt_config *cfg;
	const struct kopt_kernel *k;
	struct kopt_source src;
	struct kopt_analysis a = KOPT_ANALYSIS_INIT;
	struct kopt_plot_set set = KOPT_PLOT_SET_INIT;
	struct kopt_filetx tx = KOPT_FILETX_INIT;
	struct kopt_buf dir = KOPT_BUF_INIT;
	size_t i;

	argc = kopt_parse_options(argc, argv, options, plot_usage, 0);
	if (argc != 1)
		kopt_usage_error(plot_usage, options, argc ? "too many "
				 "arguments" : "which kernel?");
	cfg = kopt_ctx_config_or_die(ctx);
	k = kopt_ctx_kernel_or_die(ctx, argv[0]);

	kopt_source_worktree(&src, ctx->top);
	if (kopt_analysis_load(&a, &src, k->name, cfg))
		kopt_die("cannot read the history of '%s'", k->name);
	kopt_plot_build(&set, &a, k);
	for (i = 0; i < set.notes.nr; i++)
		kopt_warning("%s", set.notes.v[i]);

	if (out_dir) {
		/* relative to where we were started, as git does */
		if (out_dir[0] == '/')
			kopt_buf_addstr(&dir, out_dir);
		else
			kopt_buf_addf(&dir, "%s%s", ctx->prefix, out_dir);
		while (dir.len > 1 && dir.buf[dir.len - 1] == '/')
			kopt_buf_setlen(&dir, dir.len - 1);
	} else {
		kopt_path_plots_dir(&dir, k->name);
	}
	add_plots(&tx, ctx, &set, dir.buf);
	if (!no_devlog)
		ret = add_devlog(&tx, ctx, k, &a, &set, !out_dir);
	if (!ret && kopt_filetx_commit(&tx))
		ret = 128;
	for (i = 0; !ret && i < tx.nr; i++)
		printf("wrote %s\n", tx.ops[i].label);
	if (!ret && !tx.nr)
		printf("%s: %s\n", k->name, set.files_nr ? "plots and devlog "
		       "up to date" : "nothing to plot");
	kopt_filetx_release(&tx);
	kopt_plot_set_release(&set);
	kopt_analysis_release(&a);
	kopt_buf_release(&dir);
	return ret;
}
