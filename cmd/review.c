/*
 * git kopt review: Markdown for a pull request over a range of commits,
 * read from git objects (never the work tree): versions added or
 * changed, per trial a before/after table, regressions and their LEARN
 * status, knowledge files and catalog rows added or changed, and the
 * `Kopt-Learn: skip` reasons of the range.  What the range did is
 * lib/review's; this file parses the range, renders and posts.
 */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "builtin.h"
#include "chart.h"
#include "forge.h"
#include "render.h"
#include "repo.h"
#include "review.h"
#include "banned.h"

static const char *const review_usage[] = {
	"git kopt review [<base>...<head> | <base>..<head> | <base>] [--json]",
	"git kopt review [<range>] --post [--dry-run] [--forge github|gitlab] "
	"[--project <project>] [--pr <number>] [--api-url <url>] "
	"[--token-env <variable>]",
	NULL
};

static git_commit *resolve(git_repository *repo, const char *spec)
{
	git_object *obj = NULL;
	git_commit *c = NULL;

	if (git_revparse_single(&obj, repo, spec) < 0)
		kopt_die("unknown revision '%s'", spec);
	if (git_object_peel((git_object **)&c, obj, GIT_OBJECT_COMMIT) < 0) {
		git_object_free(obj);
		kopt_die("'%s' is not a commit", spec);
	}
	git_object_free(obj);
	return c;
}

static git_commit *merge_base(git_repository *repo, git_commit *a,
			      git_commit *b, const char *what)
{
	git_oid oid;
	git_commit *c = NULL;

	if (git_merge_base(&oid, repo, git_commit_id(a), git_commit_id(b)) < 0)
		kopt_die("no merge base for %s", what);
	if (git_commit_lookup(&c, repo, &oid) < 0)
		kopt_die("cannot read the merge base of %s", what);
	return c;
}

/* The ends of the range `arg` (NULL: the default branch...HEAD). */
static void parse_range(git_commit **base, git_commit **head,
			git_repository *repo, const char *arg)
{
	const char *dots;

	if (!arg) {
		char *def;
		git_commit *d;
		if (kopt_repo_default_branch(&def, repo))
			kopt_die("no default branch to review against; name "
				 "a range ('git kopt review main...HEAD')");
		d = resolve(repo, def);
		*head = resolve(repo, "HEAD");
		*base = merge_base(repo, d, *head, def);
		git_commit_free(d);
		free(def);
	} else if ((dots = strstr(arg, "..."))) {
		char *a = kopt_strndup(arg, dots - arg);
		const char *b = dots[3] ? dots + 3 : "HEAD";
		git_commit *ca = resolve(repo, *a ? a : "HEAD");
		*head = resolve(repo, b);
		*base = merge_base(repo, ca, *head, arg);
		git_commit_free(ca);
		free(a);
	} else if ((dots = strstr(arg, ".."))) {
		char *a = kopt_strndup(arg, dots - arg);
		*base = resolve(repo, *a ? a : "HEAD");
		*head = resolve(repo, dots[2] ? dots + 2 : "HEAD");
		free(a);
	} else {
		git_commit *ca = resolve(repo, arg);
		*head = resolve(repo, "HEAD");
		*base = merge_base(repo, ca, *head, arg);
		git_commit_free(ca);
	}
}

static const int review_metrics[] = {
	KOPT_METRIC_DURATION_US, KOPT_METRIC_TFLOPS, KOPT_METRIC_GBPS,
	KOPT_METRIC_OCC_PCT, KOPT_METRIC_TC_PCT, KOPT_METRIC_DRAM_PCT,
};

static void value_cell(struct kopt_buf *out, const struct kopt_results_entry *e,
		       int m)
{
	if (!e) {
		kopt_buf_addstr(out, "--");
		return;
	}
	kopt_render_value(out, m, e->metrics[m]);
	if (e->replayed && m == KOPT_METRIC_DURATION_US)
		kopt_buf_addstr(out, " (replayed)");
}

static const char *status_word(char s)
{
	return s == 'A' ? "added" : s == 'D' ? "deleted" : "changed";
}

static void md_versions(struct kopt_buf *out, const struct kopt_review *rv)
{
	static const char *const h[] = { "Kernel", "Version", "Title",
					  "Change" };
	struct kopt_mdtable t;
	size_t i;

	kopt_buf_addstr(out, "\n### Versions\n\n");
	if (!rv->versions_nr) {
		kopt_buf_addstr(out, "None.\n");
		return;
	}
	kopt_mdtable_init(&t, 4, h);
	for (i = 0; i < rv->versions_nr; i++) {
		kopt_mdtable_add(&t, rv->versions[i].kernel);
		kopt_mdtable_add(&t, rv->versions[i].version);
		kopt_mdtable_add(&t, *rv->versions[i].title ?
				 rv->versions[i].title : "--");
		kopt_mdtable_add(&t, rv->versions[i].what);
	}
	kopt_mdtable_render(out, &t);
	kopt_mdtable_release(&t);
}

/* One trial's before/after table, under its heading line. */
static void md_entry(struct kopt_buf *out, const struct kopt_review *rv,
		     const struct kopt_review_perf *pv,
		     const struct kopt_results_entry *e)
{
	static const char *const h[] = { "Metric", "Before", "After",
					  "Change" };
	const struct kopt_results_entry *p = pv->before ?
		kopt_results_find_like(pv->before, e) : NULL;
	struct kopt_buf cell = KOPT_BUF_INIT;
	struct kopt_mdtable t;
	double c;
	enum kopt_change ch = kopt_compare_entries(e, p, rv->cfg->noise_pct,
						   &c);
	size_t k;

	kopt_results_describe_entry(&cell, e);
	if (e->device.name && kopt_results_several_devices(pv->after))
		kopt_buf_addf(&cell, " on %s", e->device.name);
	kopt_buf_addf(out, "\n%s", cell.buf);
	if (ch == KOPT_CHANGE_REGRESSION)
		kopt_buf_addf(out, ": **regression** (%.1f%% slower, noise "
			      "%g%%)", c, rv->cfg->noise_pct);
	else if (ch != KOPT_CHANGE_NONE)
		kopt_buf_addf(out, ": %s", kopt_change_name(ch));
	kopt_buf_addstr(out, "\n\n");
	kopt_mdtable_init(&t, 4, h);
	for (k = 0; k < KOPT_ARRAY_SIZE(review_metrics); k++) {
		int m = review_metrics[k];
		if (!kopt_results_has(e->metrics[m]) &&
		    !(p && kopt_results_has(p->metrics[m])))
			continue;
		kopt_mdtable_add(&t, kopt_metric_infos[m].label);
		kopt_buf_reset(&cell);
		value_cell(&cell, p, m);
		kopt_mdtable_add(&t, cell.buf);
		kopt_buf_reset(&cell);
		value_cell(&cell, e, m);
		kopt_mdtable_add(&t, cell.buf);
		kopt_buf_reset(&cell);
		if (m == KOPT_METRIC_DURATION_US || m == KOPT_METRIC_TFLOPS ||
		    m == KOPT_METRIC_GBPS)
			kopt_render_vs(&cell, m, e->metrics[m],
				       p ? p->metrics[m] : NAN);
		else
			kopt_buf_addstr(&cell, "--");
		kopt_mdtable_add(&t, cell.buf);
	}
	kopt_mdtable_render(out, &t);
	kopt_mdtable_release(&t);
	kopt_buf_release(&cell);
}

static void md_performance(struct kopt_buf *out, const struct kopt_review *rv)
{
	size_t i, j;

	kopt_buf_addstr(out, "\n### Performance\n");
	if (!rv->perfs_nr)
		kopt_buf_addstr(out, "\nNo results added or changed.\n");
	for (i = 0; i < rv->perfs_nr; i++) {
		const struct kopt_review_perf *pv = &rv->perfs[i];
		/* where the numbers come from, when not measured */
		enum kopt_numbers_source src =
			kopt_numbers_results_source(pv->after);

		kopt_buf_addf(out, "\n#### %s %s vs %s\n", pv->kernel,
			      pv->version, pv->before_label);
		/* replayed values say so in their cells already */
		if (src == KOPT_NUMBERS_DEVLOG)
			kopt_buf_addf(out, "\nNumbers: %s.\n",
				      kopt_numbers_source_name(src));
		for (j = 0; j < pv->after->entries_nr; j++)
			md_entry(out, rv, pv, &pv->after->entries[j]);
	}
}

static void md_history(struct kopt_buf *out, const struct kopt_review *rv)
{
	size_t i;
	int any = 0;

	for (i = 0; i < rv->kernels.nr; i++) {
		struct kopt_chart chart = KOPT_CHART_INIT;
		if (kopt_chart_from_analysis(&chart, &rv->after[i])) {
			if (!any)
				kopt_buf_addstr(out, "\n### History\n");
			any = 1;
			kopt_buf_addf(out, "\n#### %s\n\n", rv->kernels.v[i]);
			kopt_chart_mermaid(out, &chart, rv->kernels.v[i]);
		}
		kopt_chart_release(&chart);
	}
}

static void md_regressions(struct kopt_buf *out, const struct kopt_review *rv)
{
	size_t i;

	kopt_buf_addstr(out, "\n### Regressions\n\n");
	for (i = 0; i < rv->regressions_nr; i++) {
		const struct kopt_review_regression *r = &rv->regressions[i];
		kopt_buf_addf(out, "- %s %s on %s: %.1f%% slower than %s; "
			      "LEARN: ", r->kernel, r->version, r->trial,
			      r->change_pct, r->against);
		if (!strcmp(r->learn, "recorded"))
			kopt_buf_addf(out, "recorded in `%s`", r->detail);
		else if (!strcmp(r->learn, "skipped"))
			kopt_buf_addf(out, "skipped (%s)", r->detail);
		else
			kopt_buf_addf(out, "**missing**: run 'git kopt "
				      "learn new anti-pattern <name> --from "
				      "%s/%s'", r->kernel, r->version);
		kopt_buf_addch(out, '\n');
	}
	if (!rv->regressions_nr)
		kopt_buf_addstr(out, "None.\n");
}

static void md_knowledge(struct kopt_buf *out, const struct kopt_review *rv)
{
	size_t i;
	int any = 0;

	kopt_buf_addstr(out, "\n### Knowledge\n\n");
	for (i = 0; i < rv->files_nr; i++)
		if (rv->files[i].knowledge) {
			kopt_buf_addf(out, "- %s `%s`\n",
				      status_word(rv->files[i].status),
				      rv->files[i].path);
			any = 1;
		}
	for (i = 0; i < rv->catalog_nr; i++) {
		const struct kopt_review_row *cc = &rv->catalog[i];
		kopt_buf_addf(out, "- catalog `%s`: %s row %s", cc->file,
			      status_word(cc->status), cc->id);
		if (*cc->name)
			kopt_buf_addf(out, " (%s)", cc->name);
		kopt_buf_addch(out, '\n');
		any = 1;
	}
	if (!any)
		kopt_buf_addstr(out, "None.\n");
}

static void md_learn(struct kopt_buf *out, const struct kopt_review *rv)
{
	size_t i, missing = 0;
	int any = 0;

	kopt_buf_addstr(out, "\n### LEARN\n\n");
	for (i = 0; i < rv->commits_nr; i++) {
		const struct kopt_review_commit *c = &rv->commits[i];
		if (!c->skip)
			continue;
		kopt_buf_addf(out, "- `Kopt-Learn: skip` in %.7s (%s): %s\n",
			      c->id, c->subject, c->skip);
		any = 1;
	}
	for (i = 0; i < rv->regressions_nr; i++)
		missing += !strcmp(rv->regressions[i].learn, "missing");
	if (missing)
		kopt_buf_addf(out, "- %zu regression%s without an "
			      "anti-pattern entry\n", missing,
			      missing == 1 ? "" : "s");
	else if (!any)
		kopt_buf_addstr(out, "Nothing open.\n");
}

static void render_markdown(struct kopt_review *rv, struct kopt_buf *out)
{
	kopt_buf_addf(out, "## git kopt review: %.7s...%.7s\n\n",
		      rv->base_id, rv->head_id);
	kopt_buf_addf(out, "%zu commit%s, %zu file%s changed.\n",
		      rv->commits_nr, rv->commits_nr == 1 ? "" : "s",
		      rv->files_nr, rv->files_nr == 1 ? "" : "s");
	md_versions(out, rv);
	md_performance(out, rv);
	md_history(out, rv);
	md_regressions(out, rv);
	md_knowledge(out, rv);
	md_learn(out, rv);
}

/* The marker that finds the review's comment again on the forge. */
#define REVIEW_MARKER "<!-- git-kopt review -->"

static int post(const char *markdown, struct kopt_forge_opts *o, int dry_run)
{
	struct kopt_forge f = KOPT_FORGE_INIT;
	struct kopt_forge_result res = KOPT_FORGE_RESULT_INIT;
	struct kopt_buf dry = KOPT_BUF_INIT, where = KOPT_BUF_INIT;
	int ret;

	o->need_token = !dry_run;
	if (kopt_forge_resolve(&f, o)) {
		kopt_forge_release(&f);
		return 128;
	}
	ret = kopt_forge_post(&f, REVIEW_MARKER, markdown, &res,
			      dry_run ? &dry : NULL);
	kopt_forge_describe(&f, &where);
	if (!ret && dry_run)
		fwrite(dry.buf, 1, dry.len, stdout);
	else if (!ret)
		printf("%s the review on %s%s%s\n", res.action, where.buf,
		       res.url.len ? ": " : "", res.url.buf);
	kopt_buf_release(&dry);
	kopt_buf_release(&where);
	kopt_forge_result_release(&res);
	kopt_forge_release(&f);
	return ret ? 128 : 0;
}

static cJSON *entry_json(const struct kopt_results_entry *e)
{
	cJSON *o;
	int m;

	if (!e)
		return cJSON_CreateNull();
	o = cJSON_CreateObject();
	for (m = 0; m < KOPT_METRIC__NR; m++)
		if (kopt_results_has(e->metrics[m]))
			cJSON_AddNumberToObject(o, kopt_metric_infos[m].name,
						e->metrics[m]);
	cJSON_AddBoolToObject(o, "replayed", e->replayed);
	return o;
}

/* One trial of a version: its numbers before and after. */
static cJSON *trial_json(const struct kopt_review *rv,
			 const struct kopt_review_perf *pv,
			 const struct kopt_results_entry *e)
{
	const struct kopt_results_entry *p = pv->before ?
		kopt_results_find_like(pv->before, e) : NULL;
	double c;
	enum kopt_change ch = kopt_compare_entries(e, p, rv->cfg->noise_pct,
						   &c);
	cJSON *t = cJSON_CreateObject();

	if (e->trial)
		cJSON_AddStringToObject(t, "trial", e->trial);
	else
		cJSON_AddNullToObject(t, "trial");
	cJSON_AddNumberToObject(t, "b", e->b);
	cJSON_AddNumberToObject(t, "s", e->s);
	cJSON_AddNumberToObject(t, "t", e->t);
	cJSON_AddItemToObject(t, "before", entry_json(p));
	cJSON_AddItemToObject(t, "after", entry_json(e));
	if (isnan(c))
		cJSON_AddNullToObject(t, "change_pct");
	else
		cJSON_AddNumberToObject(t, "change_pct", c);
	if (ch)
		cJSON_AddStringToObject(t, "verdict", kopt_change_name(ch));
	else
		cJSON_AddNullToObject(t, "verdict");
	return t;
}

static cJSON *perf_json(const struct kopt_review *rv,
			const struct kopt_review_perf *pv)
{
	cJSON *x = cJSON_CreateObject(), *trials;
	size_t j;

	cJSON_AddStringToObject(x, "kernel", pv->kernel);
	cJSON_AddStringToObject(x, "version", pv->version);
	cJSON_AddStringToObject(x, "before", pv->before_label);
	trials = cJSON_AddArrayToObject(x, "entries");
	for (j = 0; j < pv->after->entries_nr; j++)
		cJSON_AddItemToArray(trials, trial_json(rv, pv,
				     &pv->after->entries[j]));
	return x;
}

static cJSON *regression_json(const struct kopt_review_regression *r)
{
	cJSON *x = cJSON_CreateObject();

	cJSON_AddStringToObject(x, "kernel", r->kernel);
	cJSON_AddStringToObject(x, "version", r->version);
	cJSON_AddStringToObject(x, "against", r->against);
	cJSON_AddStringToObject(x, "trial", r->trial);
	cJSON_AddNumberToObject(x, "change_pct", r->change_pct);
	cJSON_AddStringToObject(x, "learn", r->learn);
	if (r->detail)
		cJSON_AddStringToObject(x, "detail", r->detail);
	return x;
}

static void print_json(struct kopt_review *rv)
{
	cJSON *o = cJSON_CreateObject(), *arr, *x;
	char *text;
	size_t i;

	cJSON_AddStringToObject(o, "base", rv->base_id);
	cJSON_AddStringToObject(o, "head", rv->head_id);
	arr = cJSON_AddArrayToObject(o, "commits");
	for (i = 0; i < rv->commits_nr; i++) {
		x = cJSON_CreateObject();
		cJSON_AddItemToArray(arr, x);
		cJSON_AddStringToObject(x, "id", rv->commits[i].id);
		cJSON_AddStringToObject(x, "subject", rv->commits[i].subject);
		if (rv->commits[i].skip)
			cJSON_AddStringToObject(x, "learn_skip",
						rv->commits[i].skip);
	}
	arr = cJSON_AddArrayToObject(o, "versions");
	for (i = 0; i < rv->versions_nr; i++) {
		x = cJSON_CreateObject();
		cJSON_AddItemToArray(arr, x);
		cJSON_AddStringToObject(x, "kernel", rv->versions[i].kernel);
		cJSON_AddStringToObject(x, "version", rv->versions[i].version);
		cJSON_AddStringToObject(x, "title", rv->versions[i].title);
		cJSON_AddStringToObject(x, "change", rv->versions[i].what);
	}
	arr = cJSON_AddArrayToObject(o, "performance");
	for (i = 0; i < rv->perfs_nr; i++)
		cJSON_AddItemToArray(arr, perf_json(rv, &rv->perfs[i]));
	arr = cJSON_AddArrayToObject(o, "regressions");
	for (i = 0; i < rv->regressions_nr; i++)
		cJSON_AddItemToArray(arr, regression_json(&rv->regressions[i]));
	arr = cJSON_AddArrayToObject(o, "knowledge");
	for (i = 0; i < rv->files_nr; i++)
		if (rv->files[i].knowledge) {
			x = cJSON_CreateObject();
			cJSON_AddItemToArray(arr, x);
			cJSON_AddStringToObject(x, "path", rv->files[i].path);
			cJSON_AddStringToObject(x, "change",
				status_word(rv->files[i].status));
		}
	arr = cJSON_AddArrayToObject(o, "catalog");
	for (i = 0; i < rv->catalog_nr; i++) {
		x = cJSON_CreateObject();
		cJSON_AddItemToArray(arr, x);
		cJSON_AddStringToObject(x, "file", rv->catalog[i].file);
		cJSON_AddStringToObject(x, "id", rv->catalog[i].id);
		cJSON_AddStringToObject(x, "name", rv->catalog[i].name);
		cJSON_AddStringToObject(x, "change",
					status_word(rv->catalog[i].status));
	}
	text = cJSON_Print(o);
	fputs(text, stdout);
	fputc('\n', stdout);
	cJSON_free(text);
	cJSON_Delete(o);
}

int cmd_review(int argc, const char **argv, struct kopt_ctx *ctx)
{
	int json = 0, do_post = 0, dry_run = 0, ret = 0;
	struct kopt_forge_opts fo = { 0 };
	const struct kopt_option options[] = {
		OPT_BOOL(0, "json", &json, "print JSON instead of Markdown"),
		OPT_BOOL(0, "post", &do_post, "post the review as the pull "
			 "request's comment (one, updated in place)"),
		OPT_BOOL(0, "dry-run", &dry_run, "with --post: print the "
			 "requests instead (token masked)"),
		OPT_STRING(0, "forge", &fo.forge, "github|gitlab",
			   "where to post (default: from the CI environment)"),
		OPT_STRING(0, "project", &fo.project, "project",
			   "<owner>/<name>, or a GitLab project id or path"),
		OPT_STRING(0, "pr", &fo.number, "number",
			   "the pull or merge request"),
		OPT_STRING(0, "api-url", &fo.api_url, "url",
			   "the forge's API address"),
		OPT_STRING(0, "token-env", &fo.token_env, "variable",
			   "the variable holding the token (default: "
			   "GITHUB_TOKEN or GITLAB_TOKEN)"),
		OPT_END()
	};
	struct kopt_buf md = KOPT_BUF_INIT;
	struct kopt_review rv;
	git_commit *base = NULL, *head = NULL;

	argc = kopt_parse_options(argc, argv, options, review_usage, 0);
	if (argc > 1)
		kopt_usage_error(review_usage, options, "too many arguments");
	if (do_post && json)
		kopt_usage_error(review_usage, options, "--post posts "
				 "Markdown; drop --json");
	if (!do_post && (dry_run || fo.forge || fo.project || fo.number ||
			 fo.api_url || fo.token_env))
		kopt_usage_error(review_usage, options, "--dry-run, --forge, "
				 "--project, --pr, --api-url and --token-env "
				 "go with --post");
	parse_range(&base, &head, ctx->repo, argc ? argv[0] : NULL);
	ret = kopt_review_load(&rv, ctx->repo, base, head);
	git_commit_free(base);
	git_commit_free(head);
	kopt_lib_or_die(ret);
	if (json) {
		print_json(&rv);
	} else {
		render_markdown(&rv, &md);
		if (do_post)
			ret = post(md.buf, &fo, dry_run);
		else
			fwrite(md.buf, 1, md.len, stdout);
	}
	kopt_buf_release(&md);
	kopt_review_release(&rv);
	return ret;
}
