/*
 * git kopt analyze: the ANALYZE step.  The overview of a kernel, its
 * versions with their durations per trial and the change against their
 * parent, the best version per trial, the target and the gap to it,
 * versions without results and open LEARN obligations.  Without a
 * kernel, one line per kernel.  Reads the work tree.
 */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "analysis.h"
#include "builtin.h"
#include "expr.h"
#include "json.h"
#include "obligations.h"
#include "overview.h"
#include "parallel.h"
#include "render.h"
#include "repo.h"
#include "scaffold.h"
#include "paths.h"
#include "verdict.h"
#include "banned.h"

static const char *const analyze_usage[] = {
	"git kopt analyze [<kernel>] [--json]",
	NULL
};

struct target_state {
	const struct kopt_target *target;
	struct kopt_target_result res;  /* lib/verdict's judgement */
	int evaluated;          /* some version has the trial measured */
	int met;
	const struct kopt_analysis_version *version;  /* met by, or best */
	double value, goal, gap_pct;  /* gap: NAN when not a simple bound */
	const char *metric;
	char *problem;          /* the expression could not be evaluated */
};

struct kernel_view {
	const struct kopt_kernel *kernel;
	struct kopt_analysis a;
	struct target_state *targets;
	size_t targets_nr;
	struct kopt_obligation *obligations;
	size_t obligations_nr;
	/* source folders of versions with neither a devlog entry nor results */
	struct kopt_strvec folders;
};

/*
 * How far a target's best version is from the goal, in per cent of it:
 * NAN when the target is met or its condition is not a simple bound.
 */
static double gap_pct(const struct kopt_target_result *r)
{
	if (r->met || !kopt_results_has(r->value) ||
	    !kopt_results_has(r->bound) || r->bound == 0)
		return NAN;
	return (r->value - r->bound) / fabs(r->bound) * 100.0;
}

static void evaluate_target(struct target_state *ts,
			    const struct kopt_config *cfg,
			    const struct kopt_analysis *a)
{
	const struct kopt_results **all;
	struct kopt_error_catch caught = KOPT_ERROR_CATCH_INIT;
	size_t n = 0;
	int ret;

	all = kopt_analysis_numbers(a, &n);
	kopt_error_catch(&caught);
	ret = kopt_target_evaluate(&ts->res, cfg, ts->target, all, n);
	kopt_error_uncatch(&caught);
	free(all);
	ts->gap_pct = ts->value = ts->goal = NAN;
	if (ret) {
		ts->problem = kopt_buf_detach(&caught.cause, NULL);
		kopt_error_catch_release(&caught);
		return;
	}
	kopt_error_catch_release(&caught);
	ts->evaluated = ts->res.measured;
	ts->met = ts->res.met;
	ts->version = ts->res.version ?
		      kopt_analysis_find(a, ts->res.version) : NULL;
	ts->metric = *ts->res.metric ? ts->res.metric : NULL;
	ts->value = ts->res.value;
	ts->goal = ts->res.bound;
	ts->gap_pct = gap_pct(&ts->res);
}

static int known_version(const struct kopt_analysis *a, const char *name)
{
	size_t i;

	for (i = 0; i < a->versions_nr; i++)
		if (!strcmp(a->versions[i].name, name))
			return 1;
	return 0;
}

/*
 * The versions whose source folder is in the work tree but that the
 * devlog and the results do not know yet: the base version right after
 * 'kernel add', a version copied in by hand.
 */
static void find_folders(struct kernel_view *kv, struct kopt_ctx *ctx)
{
	struct kopt_layout l = KOPT_LAYOUT_INIT;
	struct dirent *de;
	char *root;
	DIR *d;

	if (!kv->kernel->source ||
	    !strstr(kv->kernel->source, "{version}") ||
	    kopt_layout_init(&l, kv->kernel))
		goto done;
	root = kopt_ctx_path(ctx, *l.root ? l.root : ".");
	d = opendir(root);
	free(root);
	if (!d)
		goto done;
	while ((de = readdir(d))) {
		char *v = de->d_name[0] == '.' ? NULL :
			  kopt_layout_match(&l, de->d_name);
		if (v && !known_version(&kv->a, v) &&
		    !kopt_strvec_has(&kv->folders, v))
			kopt_strvec_push(&kv->folders, v);
		free(v);
	}
	closedir(d);
	if (kv->folders.nr > 1)
		qsort(kv->folders.v, kv->folders.nr, sizeof(*kv->folders.v),
		      kopt_version_cmp);
done:
	kopt_layout_release(&l);
}

static int load_view(struct kernel_view *kv, struct kopt_ctx *ctx,
		     const struct kopt_kernel *k, struct kopt_obligations *learn,
		     const struct kopt_source *src)
{
	const struct kopt_config *cfg = kopt_ctx_config_or_die(ctx);
	size_t i;

	memset(kv, 0, sizeof(*kv));
	kv->kernel = k;
	kv->folders = (struct kopt_strvec)KOPT_STRVEC_INIT;
	kv->a = (struct kopt_analysis)KOPT_ANALYSIS_INIT;
	if (kopt_analysis_load(&kv->a, src, k->name, cfg))
		return -1;
	kv->targets_nr = k->targets_nr;
	kv->targets = kopt_calloc(k->targets_nr + 1, sizeof(*kv->targets));
	for (i = 0; i < k->targets_nr; i++) {
		kv->targets[i].target = &k->targets[i];
		evaluate_target(&kv->targets[i], cfg, &kv->a);
	}
	kopt_obligations_find(learn, &kv->a, &kv->obligations,
			       &kv->obligations_nr);
	find_folders(kv, ctx);
	return 0;
}

static void release_view(struct kernel_view *kv)
{
	size_t i;

	for (i = 0; i < kv->targets_nr; i++)
		free(kv->targets[i].problem);
	free(kv->targets);
	kopt_obligations_free(kv->obligations, kv->obligations_nr);
	kopt_analysis_release(&kv->a);
	kopt_strvec_clear(&kv->folders);
}

/*
 * More than one device: the columns are per trial and device, because
 * numbers of two devices are never compared.
 */
static int several_devices(const struct kopt_analysis *a)
{
	const char *first = NULL;
	size_t i, j;

	for (i = 0; i < a->versions_nr; i++)
		for (j = 0; j < a->versions[i].results.entries_nr; j++) {
			const char *d =
				a->versions[i].results.entries[j].device.name;
			if (!d || !*d)
				continue;
			if (!first)
				first = d;
			else if (!kopt_results_same_device(first, d))
				return 1;
		}
	return 0;
}

/*
 * The column of an entry: its trial, or "b=.., s=.., t=.." for a
 * configuration no trial names (hand-written numbers often are), and
 * " on <device>" when the kernel was measured on several devices.
 */
static void column_of(struct kopt_buf *out, const struct kopt_results_entry *e,
		      int devices)
{
	kopt_buf_reset(out);
	if (e->trial)
		kopt_buf_addstr(out, e->trial);
	else
		kopt_buf_addf(out, "b=%ld, s=%ld, t=%ld", e->b_requested, e->s,
			      e->t);
	if (devices && e->device.name && *e->device.name)
		kopt_buf_addf(out, " on %s", e->device.name);
}

static int in_column(const struct kopt_results_entry *e, const char *col,
		     int devices)
{
	struct kopt_buf k = KOPT_BUF_INIT;
	int yes;

	column_of(&k, e, devices);
	yes = !strcmp(k.buf, col) ||
	      (!devices && e->trial && !strcmp(e->trial, col));
	kopt_buf_release(&k);
	return yes;
}

/* Trials to show: those of .kopt, then any others the numbers name. */
static void collect_trials(struct kopt_strvec *out,
			   const struct kopt_config *cfg,
			   const struct kopt_analysis *a)
{
	struct kopt_buf k = KOPT_BUF_INIT;
	int devices = several_devices(a);
	size_t i, j;

	for (i = 0; !devices && i < cfg->trials_nr; i++)
		kopt_strvec_push(out, cfg->trials[i].name);
	for (i = 0; i < a->versions_nr; i++)
		for (j = 0; j < a->versions[i].results.entries_nr; j++) {
			column_of(&k, &a->versions[i].results.entries[j],
				  devices);
			if (!kopt_strvec_has(out, k.buf))
				kopt_strvec_push(out, k.buf);
		}
	kopt_buf_release(&k);
}

/* `devices`: several_devices(a), worked out once for all the versions. */
static const struct kopt_compare_trial *
trial_of(const struct kopt_analysis_version *v, const char *trial,
	 int devices)
{
	size_t i;

	for (i = 0; i < v->results.entries_nr; i++)
		if (in_column(v->trials[i].cur, trial, devices))
			return &v->trials[i];
	return NULL;
}

/* The fastest entry of a column over all versions, and its version. */
static const struct kopt_results_entry *
best_of(const struct kopt_analysis *a, const char *col, int devices,
	const struct kopt_analysis_version **ver)
{
	const struct kopt_results_entry *best = NULL;
	size_t i, j;

	*ver = NULL;
	for (i = 0; i < a->versions_nr; i++)
		for (j = 0; j < a->versions[i].results.entries_nr; j++) {
			const struct kopt_results_entry *e =
				&a->versions[i].results.entries[j];
			double d = e->metrics[KOPT_METRIC_DURATION_US];
			if (!kopt_results_has(d) || !in_column(e, col, devices))
				continue;
			if (!best || d < best->metrics[KOPT_METRIC_DURATION_US]) {
				best = e;
				*ver = &a->versions[i];
			}
		}
	return best;
}

/* "replayed" or "from devlog": where a number shown came from; NULL: measured. */
static const char *note_of(enum kopt_numbers_source s)
{
	return s == KOPT_NUMBERS_MEASURED ? NULL : kopt_numbers_source_name(s);
}

static const char *source_note(const struct kopt_results_entry *e)
{
	return note_of(kopt_numbers_entry_source(e));
}

static void duration_cell(struct kopt_buf *out,
			  const struct kopt_compare_trial *t)
{
	int paren = 0;
	const char *note;

	if (!t) {
		kopt_buf_addstr(out, "--");
		return;
	}
	kopt_render_value(out, KOPT_METRIC_DURATION_US,
			  t->cur->metrics[KOPT_METRIC_DURATION_US]);
	if (t->parent && kopt_results_has(t->change_pct)) {
		kopt_buf_addstr(out, " (");
		kopt_render_vs(out, KOPT_METRIC_DURATION_US,
			       t->cur->metrics[KOPT_METRIC_DURATION_US],
			       t->parent->metrics[KOPT_METRIC_DURATION_US]);
		paren = 1;
	}
	note = source_note(t->cur);
	if (note)
		kopt_buf_addf(out, "%s%s", paren ? ", " : " (", note);
	if (paren || note)
		kopt_buf_addch(out, ')');
}

static void bottlenecks(struct kopt_buf *out,
			const struct kopt_analysis_version *v)
{
	struct kopt_strvec seen = KOPT_STRVEC_INIT;
	size_t i;

	for (i = 0; i < v->results.entries_nr; i++) {
		const char *b = v->results.entries[i].bottleneck;
		if (b && !kopt_strvec_has(&seen, b))
			kopt_strvec_push(&seen, b);
	}
	for (i = 0; i < seen.nr; i++)
		kopt_buf_addf(out, "%s%s", i ? " / " : "", seen.v[i]);
	if (!seen.nr)
		kopt_buf_addstr(out, "--");
	kopt_strvec_clear(&seen);
}

static const char *title_of(const struct kopt_analysis_version *v)
{
	return v->entry && v->entry->title && *v->entry->title ?
	       v->entry->title : "--";
}

static void describe_target(struct kopt_buf *out, const struct target_state *ts)
{
	kopt_buf_addf(out, "`%s`: ", ts->target->text);
	if (ts->problem) {
		kopt_buf_addf(out, "cannot evaluate (%s)", ts->problem);
	} else if (ts->met) {
		const char *note = ts->res.source != KOPT_NUMBERS_MEASURED ?
				   kopt_numbers_source_name(ts->res.source) :
				   NULL;
		kopt_buf_addf(out, "met by %s", ts->version->name);
		if (ts->metric && kopt_results_has(ts->value))
			kopt_buf_addf(out, " (%s = %.2f%s%s)", ts->metric,
				      ts->value, note ? ", " : "",
				      note ? note : "");
		else if (note)
			kopt_buf_addf(out, " (%s)", note);
	} else if (!ts->evaluated) {
		kopt_buf_addf(out, "not met; no version measured on '%s' yet",
			      ts->target->trial);
	} else {
		kopt_buf_addstr(out, "not met");
		if (ts->version && ts->metric && kopt_results_has(ts->value)) {
			kopt_buf_addf(out, "; best %s at %s = %.2f", 
				      ts->version->name, ts->metric,
				      ts->value);
			if (kopt_results_has(ts->gap_pct))
				kopt_buf_addf(out, ", %.1f%% %s the goal %g",
					      fabs(ts->gap_pct),
					      ts->gap_pct > 0 ? "above" :
					      "below", ts->goal);
		}
	}
}

static void print_overview(struct kopt_buf *out, const struct kopt_analysis *a)
{
	kopt_buf_addf(out, "# Analyze: %s\n\n## Overview\n\n", a->kernel);
	if (a->has_devlog && a->devlog.overview) {
		kopt_buf_addf(out, "%s\n", a->devlog.overview);
	} else {
		kopt_buf_addstr(out, "(no overview in ");
		kopt_path_devlog(out, a->kernel);
		kopt_buf_addstr(out, ")\n");
	}
}

static void version_row(struct kopt_mdtable *t, const struct kopt_analysis *a,
			const struct kopt_analysis_version *v,
			const struct kopt_strvec *trials, int devices)
{
	struct kopt_buf cell = KOPT_BUF_INIT;
	const char *note = v->entry ? v->entry->note : NULL;
	size_t j;

	kopt_mdtable_addf(t, "%s%s%s%s", v->name, note ? " (" : "",
			  note ? note : "", note ? ")" : "");
	kopt_mdtable_add(t, title_of(v));
	kopt_mdtable_add(t, v->parent >= 0 ? a->versions[v->parent].name :
			 v->has_results && v->results.parent ?
			 v->results.parent : "--");
	for (j = 0; j < trials->nr; j++) {
		kopt_buf_reset(&cell);
		duration_cell(&cell, v->has_results ?
			      trial_of(v, trials->v[j], devices) : NULL);
		kopt_mdtable_add(t, cell.buf);
	}
	kopt_mdtable_add(t, v->has_results ? kopt_change_name(v->change) :
			 "no results");
	kopt_buf_reset(&cell);
	bottlenecks(&cell, v);
	kopt_mdtable_add(t, cell.buf);
	kopt_buf_release(&cell);
}

static void print_versions(struct kopt_buf *out, const struct kernel_view *kv,
			   const struct kopt_config *cfg,
			   const struct kopt_strvec *trials, int devices)
{
	const struct kopt_analysis *a = &kv->a;
	struct kopt_strvec header = KOPT_STRVEC_INIT;
	struct kopt_mdtable t;
	size_t i, j;
	int any = 0;

	kopt_buf_addstr(out, "\n## Versions\n\n");
	kopt_strvec_push(&header, "Version");
	kopt_strvec_push(&header, "Title");
	kopt_strvec_push(&header, "Parent");
	for (i = 0; i < trials->nr; i++)
		kopt_strvec_push(&header, trials->v[i]);
	kopt_strvec_push(&header, "Verdict");
	kopt_strvec_push(&header, "Bottleneck");
	kopt_mdtable_init(&t, header.nr, header.v);
	for (i = 0; i < a->versions_nr; i++)
		version_row(&t, a, &a->versions[i], trials, devices);
	if (a->versions_nr)
		kopt_mdtable_render(out, &t);
	else if (kv->folders.nr)
		kopt_buf_addf(out, "No version measured yet: profile the base "
			      "version with 'git kopt profile %s %s'.\n",
			      a->kernel, kv->folders.v[0]);
	else {
		struct kopt_buf start = KOPT_BUF_INIT;
		kopt_layout_start_advice(&start, kv->kernel);
		kopt_buf_addf(out, "No versions yet: %s, then profile it with "
			      "'git kopt profile %s v0'.\n", start.buf,
			      a->kernel);
		kopt_buf_release(&start);
	}
	kopt_mdtable_release(&t);
	kopt_strvec_clear(&header);
	if (trials->nr) {
		kopt_buf_addstr(out, "\nTrials:");
		for (j = 0; j < trials->nr; j++) {
			const struct kopt_trial *tr =
				kopt_config_trial(cfg, trials->v[j]);
			kopt_buf_addf(out, "%s %s", j ? ";" : "",
				      trials->v[j]);
			if (tr)
				kopt_buf_addf(out, " (b=%ld, s=%ld, t=%ld)",
					      tr->b, tr->s, tr->t);
		}
		kopt_buf_addf(out, ". Noise: %g%%.\n", cfg->noise_pct);
	}
	for (i = 0; i < a->versions_nr; i++) {
		const struct kopt_analysis_version *v = &a->versions[i];
		for (j = 0; j < v->disagree.nr; j++) {
			if (!any++)
				kopt_buf_addf(out, "\nThe devlog and the "
					      "results files disagree (the "
					      "results file is used):\n");
			kopt_buf_addf(out, "- %s %s\n", v->name,
				      v->disagree.v[j]);
		}
	}
}

static void print_best(struct kopt_buf *out, const struct kopt_analysis *a,
		       const struct kopt_strvec *trials, int devices)
{
	static const char *const h[] = { "Trial", "Version", "Duration",
					  "Configuration" };
	struct kopt_buf cell = KOPT_BUF_INIT;
	struct kopt_mdtable t;
	size_t j;
	int any = 0;

	kopt_buf_addstr(out, "\n## Best per trial\n\n");
	kopt_mdtable_init(&t, 4, h);
	for (j = 0; j < trials->nr; j++) {
		const struct kopt_analysis_version *bv;
		const struct kopt_results_entry *e =
			best_of(a, trials->v[j], devices, &bv);
		if (!e)
			continue;
		any = 1;
		kopt_mdtable_add(&t, trials->v[j]);
		kopt_mdtable_add(&t, bv->name);
		kopt_buf_reset(&cell);
		kopt_render_value(&cell, KOPT_METRIC_DURATION_US,
				  e->metrics[KOPT_METRIC_DURATION_US]);
		if (source_note(e))
			kopt_buf_addf(&cell, " (%s)", source_note(e));
		kopt_mdtable_add(&t, cell.buf);
		kopt_mdtable_addf(&t, "b=%ld, s=%ld, t=%ld", e->b, e->s, e->t);
	}
	if (any)
		kopt_mdtable_render(out, &t);
	else
		kopt_buf_addstr(out, "No results yet: measure a version with "
				"'git kopt profile'.\n");
	kopt_mdtable_release(&t);
	kopt_buf_release(&cell);
}

static void print_targets(struct kopt_buf *out, const struct kernel_view *kv)
{
	const struct kopt_analysis *a = &kv->a;
	size_t i;

	kopt_buf_addstr(out, "\n## Target\n\n");
	for (i = 0; i < kv->targets_nr; i++) {
		kopt_buf_addstr(out, "- ");
		describe_target(out, &kv->targets[i]);
		kopt_buf_addch(out, '\n');
	}
	if (!kv->targets_nr && a->has_devlog && a->devlog.target)
		kopt_buf_addf(out, "%s\n\n(no `target` in .kopt to measure "
			      "it against)\n", a->devlog.target);
	else if (!kv->targets_nr)
		kopt_buf_addf(out, "No target: add one to .kopt (`target = "
			      "<trial> duration_us <= <us>`).\n");
}

static void print_unmeasured(struct kopt_buf *out,
			     const struct kernel_view *kv)
{
	const struct kopt_analysis *a = &kv->a;
	size_t i;
	int any = 0;

	kopt_buf_addstr(out, "\n## Versions without results\n\n");
	for (i = 0; i < a->versions_nr; i++) {
		const struct kopt_analysis_version *v = &a->versions[i];
		if (v->has_results && v->results.entries_nr)
			continue;
		any = 1;
		kopt_buf_addf(out, "- %s", v->name);
		if (v->entry && v->entry->note)
			kopt_buf_addf(out, " (%s)", v->entry->note);
		if (v->entry && v->entry->title && *v->entry->title)
			kopt_buf_addf(out, ": %s", v->entry->title);
		kopt_buf_addch(out, '\n');
	}
	for (i = 0; i < kv->folders.nr; i++) {
		any = 1;
		kopt_buf_addf(out, "- %s (source folder only)\n",
			      kv->folders.v[i]);
	}
	if (!any)
		kopt_buf_addstr(out, "None.\n");
}

static void print_kernel(const struct kernel_view *kv,
			 const struct kopt_config *cfg)
{
	struct kopt_strvec trials = KOPT_STRVEC_INIT;
	struct kopt_buf out = KOPT_BUF_INIT;
	int devices = several_devices(&kv->a);
	size_t i;

	collect_trials(&trials, cfg, &kv->a);
	print_overview(&out, &kv->a);
	print_versions(&out, kv, cfg, &trials, devices);
	print_best(&out, &kv->a, &trials, devices);
	print_targets(&out, kv);
	print_unmeasured(&out, kv);
	kopt_buf_addstr(&out, "\n## Open LEARN obligations\n\n");
	for (i = 0; i < kv->obligations_nr; i++) {
		kopt_buf_addstr(&out, "- ");
		kopt_obligations_describe(&out, &kv->obligations[i]);
		kopt_buf_addch(&out, '\n');
	}
	if (!kv->obligations_nr)
		kopt_buf_addstr(&out, "None.\n");
	fwrite(out.buf, 1, out.len, stdout);
	kopt_buf_release(&out);
	kopt_strvec_clear(&trials);
}

static cJSON *num_or_null(double v)
{
	return kopt_results_has(v) ? cJSON_CreateNumber(v) : cJSON_CreateNull();
}

static cJSON *str_or_null(const char *s)
{
	return s ? cJSON_CreateString(s) : cJSON_CreateNull();
}

static cJSON *entry_json(const struct kopt_compare_trial *ct)
{
	cJSON *eo = cJSON_CreateObject();

	cJSON_AddItemToObject(eo, "trial", str_or_null(ct->cur->trial));
	cJSON_AddNumberToObject(eo, "b", ct->cur->b);
	cJSON_AddNumberToObject(eo, "s", ct->cur->s);
	cJSON_AddNumberToObject(eo, "t", ct->cur->t);
	cJSON_AddItemToObject(eo, "duration_us", num_or_null(
		ct->cur->metrics[KOPT_METRIC_DURATION_US]));
	cJSON_AddItemToObject(eo, "change_pct", num_or_null(ct->change_pct));
	cJSON_AddItemToObject(eo, "verdict", ct->change ?
		cJSON_CreateString(kopt_change_name(ct->change)) :
		cJSON_CreateNull());
	cJSON_AddBoolToObject(eo, "replayed", ct->cur->replayed);
	cJSON_AddStringToObject(eo, "source", kopt_numbers_source_name(
		kopt_numbers_entry_source(ct->cur)));
	cJSON_AddItemToObject(eo, "bottleneck",
			      str_or_null(ct->cur->bottleneck));
	return eo;
}

static cJSON *version_json(const struct kopt_analysis_version *v)
{
	cJSON *vo = cJSON_CreateObject(), *dis, *to;
	size_t j;

	cJSON_AddStringToObject(vo, "version", v->name);
	cJSON_AddItemToObject(vo, "title", str_or_null(
		v->entry ? v->entry->title : NULL));
	cJSON_AddItemToObject(vo, "note", str_or_null(
		v->entry ? v->entry->note : NULL));
	cJSON_AddItemToObject(vo, "parent", str_or_null(
		v->has_results ? v->results.parent : NULL));
	cJSON_AddBoolToObject(vo, "has_results", v->has_results);
	cJSON_AddItemToObject(vo, "source", v->has_results ?
			      cJSON_CreateString(
				      kopt_numbers_source_name(v->source)) :
			      cJSON_CreateNull());
	dis = cJSON_AddArrayToObject(vo, "disagreements");
	for (j = 0; j < v->disagree.nr; j++)
		cJSON_AddItemToArray(dis, cJSON_CreateString(
			v->disagree.v[j]));
	cJSON_AddItemToObject(vo, "verdict", v->has_results && v->change ?
			      cJSON_CreateString(kopt_change_name(v->change)) :
			      cJSON_CreateNull());
	to = cJSON_AddArrayToObject(vo, "entries");
	for (j = 0; v->has_results && j < v->results.entries_nr; j++)
		cJSON_AddItemToArray(to, entry_json(&v->trials[j]));
	return vo;
}

static cJSON *target_json(const struct target_state *ts)
{
	cJSON *x = cJSON_CreateObject();

	cJSON_AddStringToObject(x, "target", ts->target->text);
	cJSON_AddStringToObject(x, "trial", ts->target->trial);
	cJSON_AddBoolToObject(x, "met", ts->met);
	cJSON_AddItemToObject(x, "version", str_or_null(
		ts->version ? ts->version->name : NULL));
	cJSON_AddItemToObject(x, "value", num_or_null(ts->value));
	cJSON_AddItemToObject(x, "goal", num_or_null(ts->goal));
	cJSON_AddItemToObject(x, "gap_pct", num_or_null(
		ts->met ? NAN : ts->gap_pct));
	if (ts->problem)
		cJSON_AddStringToObject(x, "problem", ts->problem);
	return x;
}

static cJSON *kernel_json(const struct kernel_view *kv,
			  const struct kopt_config *cfg)
{
	const struct kopt_analysis *a = &kv->a;
	struct kopt_strvec trials = KOPT_STRVEC_INIT;
	cJSON *o = cJSON_CreateObject(), *arr, *best, *x;
	size_t i, j;
	int devices = several_devices(a);

	collect_trials(&trials, cfg, a);
	cJSON_AddStringToObject(o, "kernel", a->kernel);
	cJSON_AddItemToObject(o, "title", str_or_null(a->has_devlog ?
						      a->devlog.title : NULL));
	cJSON_AddItemToObject(o, "overview",
			      str_or_null(a->has_devlog ? a->devlog.overview :
					  NULL));
	arr = cJSON_AddArrayToObject(o, "trials");
	for (j = 0; j < trials.nr; j++)
		cJSON_AddItemToArray(arr, cJSON_CreateString(trials.v[j]));
	arr = cJSON_AddArrayToObject(o, "versions");
	for (i = 0; i < a->versions_nr; i++)
		cJSON_AddItemToArray(arr, version_json(&a->versions[i]));
	best = cJSON_AddObjectToObject(o, "best");
	for (j = 0; j < trials.nr; j++) {
		const struct kopt_analysis_version *bv;
		const struct kopt_results_entry *e =
			best_of(a, trials.v[j], devices, &bv);
		if (!e)
			continue;
		x = cJSON_AddObjectToObject(best, trials.v[j]);
		cJSON_AddStringToObject(x, "version", bv->name);
		cJSON_AddNumberToObject(x, "duration_us",
					e->metrics[KOPT_METRIC_DURATION_US]);
		cJSON_AddBoolToObject(x, "replayed", e->replayed);
		cJSON_AddStringToObject(x, "source", kopt_numbers_source_name(
					kopt_numbers_entry_source(e)));
	}
	arr = cJSON_AddArrayToObject(o, "targets");
	for (i = 0; i < kv->targets_nr; i++)
		cJSON_AddItemToArray(arr, target_json(&kv->targets[i]));
	cJSON_AddItemToObject(o, "target_text", str_or_null(
		a->has_devlog ? a->devlog.target : NULL));
	arr = cJSON_AddArrayToObject(o, "without_results");
	for (i = 0; i < a->versions_nr; i++)
		if (!a->versions[i].has_results ||
		    !a->versions[i].results.entries_nr)
			cJSON_AddItemToArray(arr, cJSON_CreateString(
				a->versions[i].name));
	for (i = 0; i < kv->folders.nr; i++)
		cJSON_AddItemToArray(arr, cJSON_CreateString(kv->folders.v[i]));
	arr = cJSON_AddArrayToObject(o, "learn_obligations");
	for (i = 0; i < kv->obligations_nr; i++)
		cJSON_AddItemToArray(arr, kopt_obligations_json(
			&kv->obligations[i]));
	kopt_strvec_clear(&trials);
	return o;
}

static void print_json(cJSON *o)
{
	char *text = cJSON_Print(o);

	fputs(text, stdout);
	fputc('\n', stdout);
	cJSON_free(text);
	cJSON_Delete(o);
}

/* The one-line summary of a kernel, as table cells. */
static void summary_row(struct kopt_mdtable *t, const struct kopt_overview *ov,
			size_t open, const struct kopt_config *cfg)
{
	struct kopt_buf cell = KOPT_BUF_INIT;
	size_t i, j;
	int met = 0;

	kopt_mdtable_add(t, ov->kernel);
	kopt_mdtable_addf(t, "%zu", ov->versions_nr);
	kopt_mdtable_add(t, ov->versions_nr ?
			 ov->versions[ov->versions_nr - 1].name : "--");
	for (j = 0; j < cfg->trials_nr; j++) {
		const struct kopt_overview_best *b = &ov->best[j];
		if (!b->version)
			continue;
		if (cell.len)
			kopt_buf_addstr(&cell, "; ");
		kopt_buf_addf(&cell, "%s %s ", cfg->trials[j].name, b->version);
		kopt_render_value(&cell, KOPT_METRIC_DURATION_US,
				  b->duration_us);
		if (note_of(b->source))
			kopt_buf_addf(&cell, " (%s)", note_of(b->source));
	}
	kopt_mdtable_add(t, cell.len ? cell.buf : "--");
	kopt_buf_reset(&cell);
	for (i = 0; i < ov->targets_nr; i++)
		met += !ov->targets[i].problem && ov->targets[i].res.met;
	if (!ov->targets_nr)
		kopt_buf_addstr(&cell, "--");
	else if (met == (int)ov->targets_nr)
		kopt_buf_addstr(&cell, "met");
	else
		for (i = 0; i < ov->targets_nr; i++) {
			const struct kopt_overview_target *ot = &ov->targets[i];
			double gap = ot->problem ? NAN : gap_pct(&ot->res);
			if (!ot->problem && ot->res.met)
				continue;
			if (cell.len)
				kopt_buf_addstr(&cell, "; ");
			kopt_buf_addstr(&cell, "not met");
			if (kopt_results_has(gap))
				kopt_buf_addf(&cell, " (%s %.1f%% %s)",
					      ot->res.target->trial, fabs(gap),
					      gap > 0 ? "above" : "below");
		}
	kopt_mdtable_add(t, cell.buf);
	kopt_mdtable_addf(t, "%zu open", open);
	kopt_buf_release(&cell);
}

/* One kernel in full. */
static void analyze_kernel(struct kopt_ctx *ctx, const struct kopt_config *cfg,
			   const char *name, struct kopt_obligations *learn,
			   struct kopt_source *src, int json)
{
	const struct kopt_kernel *k = kopt_ctx_kernel_or_die(ctx, name);
	struct kernel_view kv;

	if (load_view(&kv, ctx, k, learn, src)) {
		release_view(&kv);
		kopt_obligations_release(learn);
		kopt_source_release(src);
		kopt_die("cannot analyze '%s'", k->name);
	}
	if (json)
		print_json(kernel_json(&kv, cfg));
	else
		print_kernel(&kv, cfg);
	release_view(&kv);
}

/*
 * Every kernel in full, as JSON: each kernel's tree made, printed into
 * the text and freed before the next kernel is read; the text goes out
 * only when every kernel could be read.
 */
static void analyze_all_json(struct kopt_ctx *ctx,
			     const struct kopt_config *cfg,
			     struct kopt_obligations *learn,
			     struct kopt_source *src)
{
	struct kopt_buf out = KOPT_BUF_INIT;
	struct kernel_view kv;
	char **text = kopt_calloc(cfg->kernels_nr + 1, sizeof(*text));
	size_t *len = kopt_calloc(cfg->kernels_nr + 1, sizeof(*len));
	size_t i, n = 0;
	int bad = 0;

	for (i = 0; i < cfg->kernels_nr; i++) {
		if (load_view(&kv, ctx, &cfg->kernels[i], learn, src)) {
			bad = 1;
		} else if (!bad) {
			/* a text a kernel: no copy of all of them as they grow */
			cJSON *o = kernel_json(&kv, cfg);
			kopt_json_array_add(&out, n, o);
			text[n] = kopt_buf_detach(&out, &len[n]);
			n++;
			cJSON_Delete(o);
		}
		release_view(&kv);
	}
	if (!bad) {
		for (i = 0; i < n; i++)
			fwrite(text[i], 1, len[i], stdout);
		kopt_json_array_end(&out, n);
		kopt_buf_addch(&out, '\n');
		fwrite(out.buf, 1, out.len, stdout);
	}
	for (i = 0; i < n; i++)
		free(text[i]);
	free(text);
	free(len);
	kopt_buf_release(&out);
	if (bad) {
		kopt_obligations_release(learn);
		kopt_source_release(src);
		kopt_die("cannot analyze the kernels");
	}
}

/*
 * Every kernel, a line each: from each kernel's overview, which a warm
 * run reads instead of the kernel's versions.
 */
static void analyze_all(const struct kopt_config *cfg,
			struct kopt_obligations *learn,
			struct kopt_source *src)
{
	static const char *const h[] = { "Kernel", "Versions", "Latest",
					 "Best", "Target", "LEARN" };
	struct kopt_overview *ov = kopt_calloc(cfg->kernels_nr + 1,
					       sizeof(*ov));
	int *rets = kopt_calloc(cfg->kernels_nr + 1, sizeof(*rets));
	struct kopt_mdtable t;
	struct kopt_buf out = KOPT_BUF_INIT;
	size_t i;
	int bad;

	bad = kopt_overview_load_all(ov, rets, src, cfg->kernels,
				     cfg->kernels_nr, cfg,
				     kopt_parallel_threads(cfg->threads));
	free(rets);
	if (bad) {
		for (i = 0; i < cfg->kernels_nr; i++)
			kopt_overview_release(&ov[i]);
		free(ov);
		kopt_obligations_release(learn);
		kopt_source_release(src);
		kopt_die("cannot analyze the kernels");
	}
	kopt_mdtable_init(&t, 6, h);
	for (i = 0; i < cfg->kernels_nr; i++) {
		kopt_obligations_open(learn, ov[i].regressions,
				      &ov[i].regressions_nr);
		summary_row(&t, &ov[i], ov[i].regressions_nr, cfg);
		kopt_overview_release(&ov[i]);
	}
	if (!cfg->kernels_nr) {
		fputs("No kernels yet: add one with 'git kopt kernel add'.\n",
		      stdout);
	} else {
		kopt_mdtable_render(&out, &t);
		fwrite(out.buf, 1, out.len, stdout);
	}
	kopt_mdtable_release(&t);
	kopt_buf_release(&out);
	free(ov);
}

int cmd_analyze(int argc, const char **argv, struct kopt_ctx *ctx)
{
	int json = 0;
	const struct kopt_option options[] = {
		OPT_BOOL(0, "json", &json, "print JSON instead of Markdown"),
		OPT_END()
	};
	const struct kopt_config *cfg;
	struct kopt_obligations learn;
	struct kopt_source src;

	argc = kopt_parse_options(argc, argv, options, analyze_usage, 0);
	if (argc > 1)
		kopt_usage_error(analyze_usage, options, "too many arguments");
	cfg = kopt_ctx_config_or_die(ctx);
	kopt_obligations_init(&learn, ctx->repo, ctx->top, cfg);
	kopt_source_worktree_cached(&src, ctx->repo, ctx->top);
	if (argc == 1)
		analyze_kernel(ctx, cfg, argv[0], &learn, &src, json);
	else if (json)
		analyze_all_json(ctx, cfg, &learn, &src);
	else
		analyze_all(cfg, &learn, &src);
	kopt_obligations_release(&learn);
	kopt_source_release(&src);
	return 0;
}
