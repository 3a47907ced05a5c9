#include "review.h"

#include <stdlib.h>
#include <string.h>

#include "catalog.h"
#include "error.h"
#include "knowledge.h"
#include "obligations.h"
#include "paths.h"
#include "trailers.h"
#include "banned.h"

static int load_config(struct kopt_config *out, git_repository *repo,
		       git_tree *tree, const char *id)
{
	char *label = kopt_xstrfmt("%.12s:.kopt", id);
	int ret = kopt_config_load_tree(out, repo, tree, label);

	free(label);
	return ret;
}

static int read_commits(struct kopt_review *rv)
{
	git_revwalk *walk = NULL;
	git_oid oid;

	if (git_revwalk_new(&walk, rv->repo) < 0 ||
	    git_revwalk_push(walk, git_commit_id(rv->head)) < 0 ||
	    git_revwalk_hide(walk, git_commit_id(rv->base)) < 0) {
		git_revwalk_free(walk);
		return kopt_error("cannot walk the range: %s",
				  kopt_git_error("revwalk failed"));
	}
	git_revwalk_sorting(walk, GIT_SORT_TOPOLOGICAL | GIT_SORT_REVERSE);
	while (!git_revwalk_next(&oid, walk)) {
		git_commit *c = NULL;
		struct kopt_trailers tr = KOPT_TRAILERS_INIT;
		struct kopt_review_commit *ci;
		const char *summary;

		if (git_commit_lookup(&c, rv->repo, &oid) < 0)
			continue;
		KOPT_ALLOC_GROW(rv->commits, rv->commits_nr + 1,
				rv->commits_alloc);
		ci = &rv->commits[rv->commits_nr++];
		memset(ci, 0, sizeof(*ci));
		git_oid_tostr(ci->id, sizeof(ci->id), &oid);
		summary = git_commit_summary(c);
		ci->subject = kopt_strdup(summary ? summary : "");
		if (!kopt_trailers_parse(&tr, git_commit_message(c), 0)) {
			const char *v;
			if ((v = kopt_trailers_learn_skip(&tr)))
				ci->skip = kopt_strdup(v);
			if ((v = kopt_trailers_get(&tr, KOPT_TRAILER_KERNEL)))
				ci->kernel = kopt_strdup(v);
			if ((v = kopt_trailers_get(&tr, KOPT_TRAILER_VERSION)))
				ci->version = kopt_strdup(v);
			kopt_trailers_release(&tr);
		}
		git_commit_free(c);
	}
	git_revwalk_free(walk);
	return 0;
}

/*
 * Where `path` sits in the knowledge base (lib/knowledge's rule):
 * KOPT_ENOTFOUND outside it, 0 for a detail file (its kind in *kind),
 * KOPT_EINVALID for another file under it.
 */
static int knowledge_file(const struct kopt_review *rv, const char *path,
			  enum kopt_kind *kind)
{
	char *language = NULL, *name = NULL;
	int ret;

	if (!kopt_ends_with(path, ".md"))
		return KOPT_ENOTFOUND;
	ret = kopt_knowledge_locate(rv->knowledge, path, kind, &language,
				    &name);
	free(language);
	free(name);
	return ret;
}

static int file_cb(const git_diff_delta *d, float progress, void *data)
{
	struct kopt_review *rv = data;
	struct kopt_review_file *fc;
	enum kopt_kind kind;

	(void)progress;
	KOPT_ALLOC_GROW(rv->files, rv->files_nr + 1, rv->files_alloc);
	fc = &rv->files[rv->files_nr++];
	fc->path = kopt_strdup(d->status == GIT_DELTA_DELETED ?
			       d->old_file.path : d->new_file.path);
	fc->status = d->status == GIT_DELTA_ADDED ? 'A' :
		     d->status == GIT_DELTA_DELETED ? 'D' : 'M';
	fc->knowledge = knowledge_file(rv, fc->path, &kind) != KOPT_ENOTFOUND;
	return 0;
}

static int read_files(struct kopt_review *rv)
{
	git_diff *diff = NULL;
	int ret = 0;

	if (git_diff_tree_to_tree(&diff, rv->repo, rv->base_tree,
				  rv->head_tree, NULL) < 0 ||
	    git_diff_foreach(diff, file_cb, NULL, NULL, NULL, rv) < 0)
		ret = kopt_error("cannot diff the range: %s",
				 kopt_git_error("diff failed"));
	git_diff_free(diff);
	return ret;
}

static void add_catalog_change(struct kopt_review *rv, const char *file,
			       const struct kopt_catalog_row *r, char status)
{
	struct kopt_review_row *cc;
	const char *id = r->cell[KOPT_COL_ID], *name = r->cell[KOPT_COL_NAME];

	KOPT_ALLOC_GROW(rv->catalog, rv->catalog_nr + 1, rv->catalog_alloc);
	cc = &rv->catalog[rv->catalog_nr++];
	cc->file = kopt_strdup(file);
	cc->id = kopt_strdup(id ? id : "");
	cc->name = kopt_strdup(name ? name : "");
	cc->status = status;
}

/* The catalog at one end of the range; its own problems are lint's. */
static void read_catalog(struct kopt_catalog *out, struct kopt_review *rv,
			 git_tree *tree, const char *path)
{
	struct kopt_source src;
	struct kopt_buf text = KOPT_BUF_INIT;
	struct kopt_problems problems = KOPT_PROBLEMS_INIT;

	kopt_source_tree(&src, rv->repo, tree, "");
	kopt_source_read(&src, path, &text, NULL);
	kopt_catalog_parse(out, path, text.buf, text.len, &problems);
	kopt_problems_clear(&problems);
	kopt_buf_release(&text);
}

static void diff_catalog(struct kopt_review *rv, const char *path)
{
	struct kopt_catalog b = KOPT_CATALOG_INIT, h = KOPT_CATALOG_INIT;
	const struct kopt_catalog_row *old;
	size_t i;

	read_catalog(&b, rv, rv->base_tree, path);
	read_catalog(&h, rv, rv->head_tree, path);
	for (i = 0; i < h.rows_nr; i++) {
		if (!h.rows[i].cell[KOPT_COL_ID])
			continue;
		old = kopt_catalog_find(&b, h.rows[i].cell[KOPT_COL_ID]);
		if (!old)
			add_catalog_change(rv, path, &h.rows[i], 'A');
		else if (!kopt_catalog_row_same(old, &h.rows[i]))
			add_catalog_change(rv, path, &h.rows[i], 'M');
	}
	for (i = 0; i < b.rows_nr; i++)
		if (b.rows[i].cell[KOPT_COL_ID] &&
		    !kopt_catalog_find(&h, b.rows[i].cell[KOPT_COL_ID]))
			add_catalog_change(rv, path, &b.rows[i], 'D');
	kopt_catalog_release(&b);
	kopt_catalog_release(&h);
}

static void add_version_change(struct kopt_review *rv, const char *kernel,
			       const char *version, const char *what,
			       const struct kopt_analysis_version *v)
{
	struct kopt_review_version *vc;
	size_t i;

	for (i = 0; i < rv->versions_nr; i++)
		if (!strcmp(rv->versions[i].kernel, kernel) &&
		    !strcmp(rv->versions[i].version, version))
			return;
	KOPT_ALLOC_GROW(rv->versions, rv->versions_nr + 1,
			rv->versions_alloc);
	vc = &rv->versions[rv->versions_nr++];
	vc->kernel = kopt_strdup(kernel);
	vc->version = kopt_strdup(version);
	vc->what = what;
	vc->title = kopt_strdup(v && v->entry && v->entry->title ?
				v->entry->title : "");
}

/* Was the failure of kernel/version recorded in the range? */
static const char *learn_status(struct kopt_review *rv, const char *kernel,
				const char *version, char **detail)
{
	enum kopt_kind kind;
	struct kopt_source hs;
	struct kopt_buf data = KOPT_BUF_INIT;
	size_t i;
	int pass;

	*detail = NULL;
	kopt_source_tree(&hs, rv->repo, rv->head_tree, "head");
	/* detail files first, then catalog rows */
	for (pass = 0; pass < 2; pass++)
	for (i = 0; i < rv->files_nr; i++) {
		const struct kopt_review_file *f = &rv->files[i];
		if (f->status == 'D')
			continue;
		if (pass == 0 && (knowledge_file(rv, f->path, &kind) ||
				  kind != KOPT_KIND_ANTI_PATTERN))
			continue;
		if (pass == 1 && !kopt_strvec_has(&rv->catalogs, f->path))
			continue;
		if (kopt_source_read(&hs, f->path, &data, NULL))
			continue;
		if (kopt_obligations_mentions(data.buf, kernel, version)) {
			*detail = kopt_strdup(f->path);
			kopt_buf_release(&data);
			return "recorded";
		}
	}
	kopt_buf_release(&data);
	for (i = 0; i < rv->commits_nr; i++) {
		const struct kopt_review_commit *c = &rv->commits[i];
		if (!c->skip)
			continue;
		if ((c->kernel && strcmp(c->kernel, kernel)) ||
		    (c->version && strcmp(c->version, version)))
			continue;
		*detail = kopt_strdup(c->skip);
		return "skipped";
	}
	return "missing";
}

/* The same durations for the same trials (devlog numbers edited or not). */
static int same_numbers(const struct kopt_results *a,
			const struct kopt_results *b)
{
	size_t i;

	if (a->entries_nr != b->entries_nr)
		return 0;
	for (i = 0; i < b->entries_nr; i++) {
		const struct kopt_results_entry *e = &b->entries[i], *o;
		double x, y;
		o = kopt_results_find_like(a, e);
		if (!o)
			return 0;
		x = o->metrics[KOPT_METRIC_DURATION_US];
		y = e->metrics[KOPT_METRIC_DURATION_US];
		if (kopt_results_has(x) != kopt_results_has(y) ||
		    (kopt_results_has(x) && x != y))
			return 0;
	}
	return 1;
}

/*
 * What the range did to version `v` of `kernel` (NULL: nothing to
 * report); *numbers_changed when the file its numbers come from changed.
 */
static const char *version_what(const struct kopt_review *rv,
				const char *kernel,
				const struct kopt_analysis_version *v,
				const struct kopt_analysis_version *old,
				int *numbers_changed)
{
	struct kopt_buf path = KOPT_BUF_INIT;
	int devlog = v->source == KOPT_NUMBERS_DEVLOG, changed = 0;
	size_t j;

	/* the file its numbers come from: results or devlog */
	if (devlog)
		kopt_path_devlog(&path, kernel);
	else
		kopt_path_results(&path, kernel, v->name);
	for (j = 0; j < rv->files_nr; j++)
		if (!strcmp(rv->files[j].path, path.buf))
			changed = 1;
	kopt_buf_release(&path);
	if (changed && devlog && old &&
	    same_numbers(&old->results, &v->results))
		changed = 0;
	*numbers_changed = changed;
	if (!old)
		return "added";
	if (changed && !old->has_results)
		return devlog ? "numbers added in the devlog" :
		       "results added";
	if (changed)
		return devlog ? "numbers changed in the devlog" :
		       "results changed";
	return NULL;
}

/* The before/after view of `v`: against the base, else its parent. */
static void add_perf(struct kopt_review *rv, const char *kernel,
		     const struct kopt_analysis *a,
		     const struct kopt_analysis_version *v,
		     const struct kopt_analysis_version *old)
{
	struct kopt_review_perf *pv;

	KOPT_ALLOC_GROW(rv->perfs, rv->perfs_nr + 1, rv->perfs_alloc);
	pv = &rv->perfs[rv->perfs_nr++];
	pv->kernel = kopt_strdup(kernel);
	pv->version = kopt_strdup(v->name);
	pv->after = &v->results;
	if (old && old->has_results && old->results.entries_nr) {
		pv->before = &old->results;
		pv->before_label = kopt_xstrfmt("%s at %.7s", v->name,
						rv->base_id);
	} else if (v->parent >= 0 && a->versions[v->parent].has_results) {
		pv->before = &a->versions[v->parent].results;
		pv->before_label = kopt_xstrfmt("%s (parent)",
						a->versions[v->parent].name);
	} else {
		pv->before = NULL;
		pv->before_label = kopt_strdup("--");
	}
}

/* The regressions of `v`: against the parent, as the gate judges. */
static void add_regressions(struct kopt_review *rv, const char *kernel,
			    const struct kopt_analysis *a,
			    const struct kopt_analysis_version *v)
{
	size_t j;

	for (j = 0; j < v->results.entries_nr; j++) {
		const struct kopt_compare_trial *t = &v->trials[j];
		struct kopt_review_regression *r;
		if (t->change != KOPT_CHANGE_REGRESSION)
			continue;
		KOPT_ALLOC_GROW(rv->regressions, rv->regressions_nr + 1,
				rv->regressions_alloc);
		r = &rv->regressions[rv->regressions_nr++];
		r->kernel = kopt_strdup(kernel);
		r->version = kopt_strdup(v->name);
		r->against = kopt_strdup(a->versions[v->parent].name);
		if (t->cur->trial) {
			r->trial = kopt_strdup(t->cur->trial);
		} else {
			struct kopt_buf d = KOPT_BUF_INIT;
			kopt_results_describe_entry(&d, t->cur);
			r->trial = kopt_buf_detach(&d, NULL);
		}
		r->change_pct = t->change_pct;
		r->learn = learn_status(rv, kernel, v->name, &r->detail);
	}
}

static int review_kernel(struct kopt_review *rv, size_t k,
			  const struct kopt_source *bs,
			  const struct kopt_source *hs)
{
	const char *kernel = rv->kernels.v[k];
	struct kopt_analysis *b = &rv->before[k], *a = &rv->after[k];
	size_t i;
	int bad = 0;

	bad |= kopt_analysis_load(b, bs, kernel, rv->cfg);
	bad |= kopt_analysis_load(a, hs, kernel, rv->cfg);
	if (bad)
		return kopt_error("cannot review kernel '%s'", kernel);
	for (i = 0; i < a->versions_nr; i++) {
		const struct kopt_analysis_version *v = &a->versions[i];
		const struct kopt_analysis_version *old =
			kopt_analysis_find(b, v->name);
		int changed;
		const char *what = version_what(rv, kernel, v, old, &changed);

		if (!what)
			continue;
		add_version_change(rv, kernel, v->name, what, v);
		if (!v->has_results || !changed)
			continue;
		add_perf(rv, kernel, a, v, old);
		add_regressions(rv, kernel, a, v);
	}
	return 0;
}

static int analyse(struct kopt_review *rv)
{
	struct kopt_source bs, hs;
	char brev[13], hrev[13];
	size_t i, k;
	int ret;

	memcpy(brev, rv->base_id, 12);
	brev[12] = '\0';
	memcpy(hrev, rv->head_id, 12);
	hrev[12] = '\0';
	kopt_source_tree(&bs, rv->repo, rv->base_tree, brev);
	kopt_source_tree(&hs, rv->repo, rv->head_tree, hrev);
	for (i = 0; i < rv->files_nr; i++) {
		char *kernel, *version;
		enum kopt_path_kind kind = kopt_path_classify(
			rv->files[i].path, &kernel, &version);
		if (kind == KOPT_PATH_DEVLOG || kind == KOPT_PATH_RESULTS) {
			if (!kopt_strvec_has(&rv->kernels, kernel))
				kopt_strvec_push(&rv->kernels, kernel);
		} else if (kopt_strvec_has(&rv->catalogs, rv->files[i].path)) {
			diff_catalog(rv, rv->files[i].path);
		}
		free(kernel);
		free(version);
	}
	rv->before = kopt_calloc(rv->kernels.nr + 1, sizeof(*rv->before));
	rv->after = kopt_calloc(rv->kernels.nr + 1, sizeof(*rv->after));
	for (k = 0; k < rv->kernels.nr; k++)
		rv->before[k] = rv->after[k] =
			(struct kopt_analysis)KOPT_ANALYSIS_INIT;
	for (k = 0; k < rv->kernels.nr; k++)
		if ((ret = review_kernel(rv, k, &bs, &hs)) < 0)
			return ret;
	return 0;
}

int kopt_review_load(struct kopt_review *out, git_repository *repo,
		     git_commit *base, git_commit *head)
{
	struct kopt_review *rv = out;
	int rb, rh, ret;

	memset(rv, 0, sizeof(*rv));
	rv->repo = repo;
	kopt_strvec_init(&rv->kernels);
	kopt_strvec_init(&rv->catalogs);
	if (git_commit_dup(&rv->base, base) < 0 ||
	    git_commit_dup(&rv->head, head) < 0 ||
	    git_commit_tree(&rv->base_tree, rv->base) < 0 ||
	    git_commit_tree(&rv->head_tree, rv->head) < 0)
		return kopt_error("cannot read the trees of the range");
	git_oid_tostr(rv->base_id, sizeof(rv->base_id), git_commit_id(base));
	git_oid_tostr(rv->head_id, sizeof(rv->head_id), git_commit_id(head));

	/* thresholds come from the base, so a change cannot loosen them */
	rh = load_config(&rv->head_cfg, repo, rv->head_tree, rv->head_id);
	rb = load_config(&rv->base_cfg, repo, rv->base_tree, rv->base_id);
	if (rh && rh != KOPT_ENOTFOUND)
		return kopt_error("cannot read .kopt at %.7s", rv->head_id);
	if (rh)
		rv->head_cfg.noise_pct = KOPT_DEFAULT_NOISE_PCT;
	rv->cfg = rb ? &rv->head_cfg : &rv->base_cfg;
	kopt_config_catalogs(&rv->catalogs, &rv->head_cfg);
	rv->knowledge = rv->head_cfg.knowledge ? rv->head_cfg.knowledge :
			KOPT_DEFAULT_KNOWLEDGE;

	if ((ret = read_commits(rv)) < 0 || (ret = read_files(rv)) < 0)
		return ret;
	return analyse(rv);
}

void kopt_review_release(struct kopt_review *rv)
{
	size_t i;

	for (i = 0; i < rv->commits_nr; i++) {
		free(rv->commits[i].subject);
		free(rv->commits[i].skip);
		free(rv->commits[i].kernel);
		free(rv->commits[i].version);
	}
	free(rv->commits);
	for (i = 0; i < rv->files_nr; i++)
		free(rv->files[i].path);
	free(rv->files);
	for (i = 0; i < rv->kernels.nr; i++) {
		kopt_analysis_release(&rv->before[i]);
		kopt_analysis_release(&rv->after[i]);
	}
	free(rv->before);
	free(rv->after);
	kopt_strvec_clear(&rv->kernels);
	kopt_strvec_clear(&rv->catalogs);
	for (i = 0; i < rv->versions_nr; i++) {
		free(rv->versions[i].kernel);
		free(rv->versions[i].version);
		free(rv->versions[i].title);
	}
	free(rv->versions);
	for (i = 0; i < rv->perfs_nr; i++) {
		free(rv->perfs[i].kernel);
		free(rv->perfs[i].version);
		free(rv->perfs[i].before_label);
	}
	free(rv->perfs);
	for (i = 0; i < rv->regressions_nr; i++) {
		free(rv->regressions[i].kernel);
		free(rv->regressions[i].version);
		free(rv->regressions[i].against);
		free(rv->regressions[i].trial);
		free(rv->regressions[i].detail);
	}
	free(rv->regressions);
	for (i = 0; i < rv->catalog_nr; i++) {
		free(rv->catalog[i].file);
		free(rv->catalog[i].id);
		free(rv->catalog[i].name);
	}
	free(rv->catalog);
	kopt_config_release(&rv->base_cfg);
	kopt_config_release(&rv->head_cfg);
	git_tree_free(rv->base_tree);
	git_tree_free(rv->head_tree);
	git_commit_free(rv->base);
	git_commit_free(rv->head);
}
