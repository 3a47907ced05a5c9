/*
 * git kopt status: where each kernel is in the cycle and what to run
 * next.  Nothing is stored: the step is derived from the version folders
 * and branches, the results files (in the work tree, and whether they are
 * committed), the verdict against the parent, the trailers of the
 * history and the targets.
 *
 *   profile   the base version has no results yet
 *   design    the newest version has no results yet (being implemented)
 *   verify    it has results, not committed yet (the LEARN gate is ahead)
 *   evaluate  its results are committed and the target is not met
 *   done      the target is met
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cjson/cJSON.h>

#include "analysis.h"
#include "builtin.h"
#include "cycle.h"
#include "devlog.h"
#include "history.h"
#include "hooks.h"
#include "index.h"
#include "learn.h"
#include "overview.h"
#include "parallel.h"
#include "repo.h"
#include "trailers.h"
#include "scaffold.h"
#include "verdict.h"
#include "paths.h"
#include "banned.h"

/* The kernel's unattended cycle, when one ran: one line under its row. */
static void cycle_line(struct kopt_ctx *ctx, const char *kernel)
{
	struct kopt_buf line = KOPT_BUF_INIT;

	if (!kopt_cycle_status(&line, ctx->repo, kernel, 1)) {
		kopt_buf_rtrim(&line);
		printf("%-16s %s ('git kopt cycle %s --status')\n", "",
		       line.buf, kernel);
	}
	kopt_buf_release(&line);
}

static const char *const status_usage[] = {
	"git kopt status [--json]",
	NULL
};

struct row {
	const char *kernel;
	char *version;          /* NULL: no version yet */
	const char *step;
	enum kopt_verdict verdict;
	enum kopt_numbers_source source;  /* of the version's numbers */
	size_t disagree;        /* durations results and devlog disagree on */
	int committed;
	int target_met;
	int learned;            /* a Kopt-Step: learn commit for the version */
	char *skip;             /* a Kopt-Learn: skip reason */
	struct kopt_buf next;
};

static void add_unique(struct kopt_strvec *v, const char *s)
{
	if (!kopt_strvec_has(v, s))
		kopt_strvec_push(v, s);
}

/* The newest version of `k` by folders (HEAD and work tree) and branches. */
static char *newest_version(struct kopt_ctx *ctx, git_tree *head,
			    const struct kopt_layout *l,
			    const struct kopt_kernel *k)
{
	struct kopt_strvec all = KOPT_STRVEC_INIT, tmp = KOPT_STRVEC_INIT;
	struct kopt_buf dir = KOPT_BUF_INIT;
	char *newest = NULL;
	size_t i;

	if (head && !kopt_layout_versions(&tmp, ctx->repo, head, l))
		for (i = 0; i < tmp.nr; i++)
			add_unique(&all, tmp.v[i]);
	kopt_strvec_clear(&tmp);
	if (!kopt_repo_branch_list(ctx->repo, k->name, &tmp))
		for (i = 0; i < tmp.nr; i++)
			add_unique(&all, tmp.v[i]);
	kopt_strvec_clear(&tmp);
	/*
	 * The newest with a folder in the work tree (a design not
	 * committed is no version): from the highest number down, the
	 * first folder there.
	 */
	qsort(all.v, all.nr, sizeof(*all.v), kopt_version_cmp);
	for (i = all.nr; !newest && i-- > 0;) {
		struct stat st;
		char *path;
		if (kopt_version_number(all.v[i]) < 0)
			break;
		kopt_buf_reset(&dir);
		kopt_layout_dir(&dir, l, all.v[i]);
		path = kopt_ctx_path(ctx, dir.buf);
		if (!stat(path, &st))
			newest = kopt_strdup(all.v[i]);
		free(path);
	}
	kopt_strvec_clear(&all);
	kopt_buf_release(&dir);
	return newest;
}

/* The file of the version's numbers: its results file or the devlog. */
static void numbers_file(struct kopt_buf *rel, const char *kernel,
			 const struct kopt_overview_version *v)
{
	if (v->source == KOPT_NUMBERS_DEVLOG)
		kopt_path_devlog(rel, kernel);
	else
		kopt_path_results(rel, kernel, v->name);
}

/*
 * The version's numbers file is committed as it is: its id in the work
 * tree (the index's for a clean file, as git status finds it) is HEAD's.
 * When the index holds HEAD's tree (`index_is_head`), HEAD's id is the
 * index's, and no tree is read.
 */
static int results_committed(struct kopt_ctx *ctx, git_tree *head,
			     int index_is_head, const struct kopt_source *src,
			     const char *kernel,
			     const struct kopt_overview_version *v)
{
	struct kopt_buf rel = KOPT_BUF_INIT;
	struct kopt_index_entry e;
	git_tree_entry *te = NULL;
	const git_oid *committed = NULL;
	struct stat st;
	git_oid id;
	int same;

	numbers_file(&rel, kernel, v);
	if (head && index_is_head && !kopt_index_find(&e, src->index, rel.buf))
		committed = &e.id;
	else if (head && !index_is_head &&
		 !git_tree_entry_bypath(&te, head, rel.buf))
		committed = git_tree_entry_id(te);
	same = committed && !kopt_index_worktree_id(&id, &st, src->index,
						     ctx->top, rel.buf) &&
	       git_oid_equal(&id, committed);
	git_error_clear();
	git_tree_entry_free(te);
	kopt_buf_release(&rel);
	return same;
}

/*
 * Every target of `k` met (none, or no numbers: not met).  A target that
 * cannot be evaluated is reported, as evaluating it reports it.
 */
static int targets_met(const struct kopt_kernel *k,
		       const struct kopt_overview *ov)
{
	size_t i;
	int met = ov->numbers_nr && k->targets_nr;

	for (i = 0; met && i < ov->targets_nr; i++) {
		if (ov->targets[i].problem)
			kopt_error("%s", ov->targets[i].problem);
		if (ov->targets[i].problem || !ov->targets[i].res.met)
			met = 0;
	}
	return met;
}

/* What to do next about `r`, whose numbers are `res` (or NULL). */
static void next_step(struct row *r, const struct kopt_kernel *k,
		      const struct kopt_config *cfg,
		      const struct kopt_source *src,
		      const struct kopt_overview_version *res)
{
	if (!res) {
		if (kopt_version_number(r->version) == 0) {
			r->step = "profile";
			kopt_buf_addf(&r->next, "git kopt profile %s %s",
				      k->name, r->version);
		} else {
			r->step = "design";
			kopt_buf_addf(&r->next, "implement %s, then git kopt "
				      "verify %s %s", r->version, k->name,
				      r->version);
		}
	} else if (!r->committed) {
		struct kopt_buf rel = KOPT_BUF_INIT;
		r->step = "verify";
		numbers_file(&rel, k->name, res);
		if (r->verdict == KOPT_VERDICT_REGRESSION) {
			struct kopt_buf name = KOPT_BUF_INIT;
			/* the name comes from the devlog: only here is it read */
			struct kopt_analysis a = KOPT_ANALYSIS_INIT;
			kopt_analysis_load(&a, src, k->name, cfg);
			kopt_learn_suggest_name(&name, &a.devlog, k->name,
						r->version, "regression");
			kopt_analysis_release(&a);
			kopt_buf_addf(&r->next, "git kopt learn new "
				      "anti-pattern %s --from %s/%s, then "
				      "commit %s with it", name.buf, k->name,
				      r->version, rel.buf);
			kopt_buf_release(&name);
		} else {
			kopt_buf_addf(&r->next, "commit %s", rel.buf);
		}
		kopt_buf_release(&rel);
	} else if (r->target_met) {
		r->step = "done";
		kopt_buf_addf(&r->next, "git kopt review (the target is met)");
	} else if (!k->targets_nr) {
		r->step = "evaluate";
		kopt_buf_addf(&r->next, "add a target to [kernel \"%s\"] in "
			      ".kopt, or git kopt select %s", k->name, k->name);
	} else {
		r->step = "evaluate";
		kopt_buf_addf(&r->next, "back to SELECT: git kopt select %s",
			      k->name);
	}
}

/*
 * The newest version of `k` with a folder at HEAD or in the work tree:
 * 0, or "error" and what to fix in `r`.
 */
static int current_version(struct row *r, struct kopt_ctx *ctx,
			   git_tree *head, const struct kopt_kernel *k)
{
	struct kopt_layout l = KOPT_LAYOUT_INIT;

	if (kopt_layout_init(&l, k)) {
		r->step = "error";
		kopt_buf_addf(&r->next, "fix 'kernel.%s.source' in .kopt",
			      k->name);
		return -1;
	}
	r->version = newest_version(ctx, head, &l, k);
	kopt_layout_release(&l);
	return 0;
}

/* A version whose numbers the devlog records is a version too. */
static void newer_with_numbers(struct row *r, const struct kopt_overview *ov)
{
	size_t i;

	for (i = 0; i < ov->versions_nr; i++) {
		const struct kopt_overview_version *v = &ov->versions[i];
		if (v->has_results &&
		    (!r->version || kopt_version_number(v->name) >
		     kopt_version_number(r->version))) {
			free(r->version);
			r->version = kopt_strdup(v->name);
		}
	}
}

/*
 * The rest of `k`'s row, once current_version() gave 0 and its overview
 * was loaded (`ret`, kopt_overview_load()'s result); `ov` is released.
 */
static void kernel_row(struct kopt_ctx *ctx, const struct kopt_config *cfg,
		       const struct kopt_kernel *k, git_tree *head,
		       int index_is_head, const struct kopt_history *h,
		       const struct kopt_source *src, struct row *r,
		       struct kopt_overview *ovp, int ret)
{
	struct kopt_overview ov = *ovp;
	const struct kopt_overview_version *res = NULL;
	struct kopt_buf kv = KOPT_BUF_INIT;
	const char *skip;

	if (ret) {
		r->step = "error";
		kopt_buf_addf(&r->next, "fix the devlog or results of %s "
			      "(the message above names the file)", k->name);
		kopt_overview_release(&ov);
		return;
	}
	newer_with_numbers(r, &ov);
	if (!r->version) {
		r->step = "none";
		kopt_layout_start_advice(&r->next, k);
		kopt_overview_release(&ov);
		return;
	}
	kopt_buf_addf(&kv, "%s/%s", k->name, r->version);
	r->learned = kopt_strvec_has(&h->learned, kv.buf);
	skip = kopt_history_skip(h, kv.buf);
	r->skip = skip ? kopt_strdup(skip) : NULL;
	res = kopt_overview_find(&ov, r->version);
	if (res && !res->has_results)
		res = NULL;
	if (res) {
		r->source = res->source;
		r->disagree = res->disagree;
		r->verdict = res->verdict;
	}
	r->committed = res && results_committed(ctx, head, index_is_head, src,
						k->name, res);
	r->target_met = targets_met(k, &ov);
	next_step(r, k, cfg, src, res);
	kopt_overview_release(&ov);
	kopt_buf_release(&kv);
}

static void print_json(const struct row *rows, size_t nr)
{
	cJSON *arr = cJSON_CreateArray();
	char *text;
	size_t i;

	for (i = 0; i < nr; i++) {
		const struct row *r = &rows[i];
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "kernel", r->kernel);
		if (r->version)
			cJSON_AddStringToObject(o, "version", r->version);
		else
			cJSON_AddNullToObject(o, "version");
		cJSON_AddStringToObject(o, "step", r->step);
		if (r->verdict)
			cJSON_AddStringToObject(o, "verdict",
						kopt_verdict_name(r->verdict));
		else
			cJSON_AddNullToObject(o, "verdict");
		cJSON_AddStringToObject(o, "source",
					kopt_numbers_source_name(r->source));
		cJSON_AddNumberToObject(o, "disagreements",
					(double)r->disagree);
		cJSON_AddBoolToObject(o, "committed", r->committed);
		cJSON_AddBoolToObject(o, "target_met", r->target_met);
		cJSON_AddBoolToObject(o, "learned", r->learned);
		if (r->skip)
			cJSON_AddStringToObject(o, "learn_skipped", r->skip);
		cJSON_AddStringToObject(o, "next", r->next.buf);
		cJSON_AddItemToArray(arr, o);
	}
	text = cJSON_Print(arr);
	printf("%s\n", text);
	free(text);
	cJSON_Delete(arr);
}

static void print_rows(struct kopt_ctx *ctx, const struct row *rows,
		       size_t nr)
{
	size_t i;

	if (!nr)
		printf("no kernels yet: add one with 'git kopt kernel add'\n");
	for (i = 0; i < nr; i++) {
		const struct row *r = &rows[i];
		printf("%-16s %-6s %-9s %-12s %-12s next: %s\n",
		       r->kernel, r->version ? r->version : "-", r->step,
		       r->verdict ? kopt_verdict_name(r->verdict) : "-",
		       r->source ? kopt_numbers_source_name(r->source) : "-",
		       r->next.buf);
		if (r->disagree)
			printf("%-16s the devlog and the results file "
			       "disagree on %zu duration%s: see git kopt "
			       "analyze %s\n", "", r->disagree,
			       r->disagree == 1 ? "" : "s", r->kernel);
		if (r->skip)
			printf("%-16s LEARN skipped: %s\n", "", r->skip);
		cycle_line(ctx, r->kernel);
	}
}

int cmd_status(int argc, const char **argv, struct kopt_ctx *ctx)
{
	int json = 0;
	const struct kopt_option options[] = {
		OPT_BOOL(0, "json", &json, "print the status as JSON"),
		OPT_END()
	};
	const struct kopt_config *cfg;
	struct kopt_history h = KOPT_HISTORY_INIT;
	struct kopt_source src;
	struct row *rows;
	git_tree *head = NULL;
	struct kopt_overview *ov;
	struct kopt_error_catch *cv, *caught;
	int *rets, index_is_head;
	char *skip;
	size_t i, nr;

	argc = kopt_parse_options(argc, argv, options, status_usage, 0);
	if (argc)
		kopt_usage_error(status_usage, options, "too many arguments");
	cfg = kopt_ctx_config_or_die(ctx);
	if (kopt_repo_has_commits(ctx->repo))
		kopt_lib_or_die(kopt_repo_rev_tree(&head, ctx->repo, "HEAD"));
	kopt_history_read(&h, ctx->repo);
	rows = kopt_calloc(cfg->kernels_nr + 1, sizeof(*rows));
	/* the kernels analyze reads, through its cache */
	kopt_source_worktree_cached(&src, ctx->repo, ctx->top);
	/*
	 * Each kernel's overview is read on the CPUs at once; what each
	 * part reports comes out in kernel order, each kernel's version
	 * before its overview before its row, as one after the other.
	 */
	nr = cfg->kernels_nr;
	ov = kopt_calloc(nr + 1, sizeof(*ov));
	rets = kopt_calloc(nr + 1, sizeof(*rets));
	skip = kopt_calloc(nr + 1, 1);
	cv = kopt_calloc(nr + 1, sizeof(*cv));
	caught = kopt_calloc(nr + 1, sizeof(*caught));
	for (i = 0; i < nr; i++) {
		struct kopt_error_catch init = KOPT_ERROR_CATCH_INIT;
		cv[i] = caught[i] = init;
		cv[i].replay = 1;
		rows[i].kernel = cfg->kernels[i].name;
		kopt_buf_init(&rows[i].next, 0);
		kopt_error_catch(&cv[i]);
		skip[i] = !!current_version(&rows[i], ctx, head,
					     &cfg->kernels[i]);
		kopt_error_uncatch(&cv[i]);
	}
	kopt_overview_load_many(ov, rets, caught, &src, cfg->kernels, nr, cfg,
				kopt_parallel_threads(cfg->threads), skip);
	index_is_head = head && kopt_index_is_tree(src.index, git_tree_id(head));
	for (i = 0; i < nr; i++) {
		kopt_error_catch_replay(&cv[i]);
		kopt_error_catch_release(&cv[i]);
		kopt_error_catch_replay(&caught[i]);
		kopt_error_catch_release(&caught[i]);
		if (!skip[i])
			kernel_row(ctx, cfg, &cfg->kernels[i], head,
				   index_is_head, &h, &src,
				   &rows[i], &ov[i], rets[i]);
	}
	free(ov);
	free(rets);
	free(skip);
	free(cv);
	free(caught);
	kopt_source_release(&src);
	if (json)
		print_json(rows, cfg->kernels_nr);
	else
		print_rows(ctx, rows, cfg->kernels_nr);
	for (i = 0; i < cfg->kernels_nr; i++) {
		free(rows[i].version);
		free(rows[i].skip);
		kopt_buf_release(&rows[i].next);
	}
	free(rows);
	kopt_history_release(&h);
	git_tree_free(head);
	return 0;
}
