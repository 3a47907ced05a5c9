/*
 * git kopt review: Markdown for a pull request over a range of commits,
 * read from git objects (never the work tree): versions added or
 * changed, per trial a before/after table, regressions and their LEARN
 * status, knowledge files and catalog rows added or changed, and the
 * `Kopt-Learn: skip` reasons of the range.
 */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "analysis.h"
#include "builtin.h"
#include "catalog.h"
#include "chart.h"
#include "forge.h"
#include "obligations.h"
#include "render.h"
#include "paths.h"
#include "trailers.h"
#include "banned.h"

static const char *const review_usage[] = {
	"git kopt review [<base>...<head> | <base>..<head> | <base>] [--json]",
	"git kopt review [<range>] --post [--dry-run] [--forge github|gitlab] "
	"[--project <project>] [--pr <number>] [--api-url <url>] "
	"[--token-env <variable>]",
	NULL
};

struct commit_info {
	char id[GIT_OID_HEXSZ + 1];
	char *subject;
	char *skip;             /* Kopt-Learn: skip <reason>, or NULL */
	char *kernel, *version; /* trailers, or NULL */
};

struct file_change {
	char *path;
	char status;            /* 'A', 'M', 'D' */
};

struct catalog_change {
	char *file;
	char *id, *name;
	char status;
};

struct version_change {
	char *kernel, *version;
	const char *what;       /* "added", "results added", ... */
	char *title;
};

struct perf_view {
	char *kernel, *version;
	char *before_label;     /* "v1 (parent)" or "v2 at <base>" */
	const struct kopt_results *before;  /* borrowed */
	const struct kopt_results *after;
};

struct regression {
	char *kernel, *version, *against, *trial;
	double change_pct;
	const char *learn;      /* "recorded", "skipped", "missing" */
	char *detail;
};

struct review {
	git_repository *repo;
	git_commit *base, *head;
	git_tree *base_tree, *head_tree;
	char base_id[GIT_OID_HEXSZ + 1], head_id[GIT_OID_HEXSZ + 1];
	struct kopt_config base_cfg, head_cfg;
	const struct kopt_config *cfg;      /* thresholds: the base's */
	const char *knowledge;
	struct commit_info *commits;
	size_t commits_nr, commits_alloc;
	struct file_change *files;
	size_t files_nr, files_alloc;
	struct kopt_strvec kernels;
	struct kopt_strvec catalogs;  /* of the head's settings */
	struct kopt_analysis *before, *after;   /* per kernel */
	struct version_change *versions;
	size_t versions_nr, versions_alloc;
	struct perf_view *perfs;
	size_t perfs_nr, perfs_alloc;
	struct regression *regressions;
	size_t regressions_nr, regressions_alloc;
	struct catalog_change *catalog;
	size_t catalog_nr, catalog_alloc;
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

/* The default branch: origin/HEAD, init.defaultBranch, main, master. */
static char *default_branch(git_repository *repo)
{
	git_reference *ref = NULL;
	git_config *cfg = NULL;
	git_buf buf = { 0 };
	static const char *const names[] = { "refs/heads/main",
					     "refs/heads/master", NULL };
	const char *const *n;
	char *out = NULL;

	if (!git_reference_lookup(&ref, repo, "refs/remotes/origin/HEAD")) {
		const char *t = git_reference_symbolic_target(ref);
		if (t)
			out = kopt_strdup(t);
		git_reference_free(ref);
		if (out)
			return out;
	}
	if (!git_repository_config_snapshot(&cfg, repo)) {
		if (!git_config_get_string_buf(&buf, cfg,
					       "init.defaultBranch")) {
			char *name = kopt_xstrfmt("refs/heads/%s", buf.ptr);
			if (!git_reference_lookup(&ref, repo, name)) {
				git_reference_free(ref);
				out = name;
			} else {
				free(name);
			}
			git_buf_dispose(&buf);
		}
		git_config_free(cfg);
		if (out)
			return out;
	}
	for (n = names; *n; n++)
		if (!git_reference_lookup(&ref, repo, *n)) {
			git_reference_free(ref);
			return kopt_strdup(*n);
		}
	return NULL;
}

static void parse_range(struct review *rv, const char *arg)
{
	const char *dots;

	if (!arg) {
		char *def = default_branch(rv->repo);
		git_commit *d;
		if (!def)
			kopt_die("no default branch to review against; name "
				 "a range ('git kopt review main...HEAD')");
		d = resolve(rv->repo, def);
		rv->head = resolve(rv->repo, "HEAD");
		rv->base = merge_base(rv->repo, d, rv->head, def);
		git_commit_free(d);
		free(def);
	} else if ((dots = strstr(arg, "..."))) {
		char *a = kopt_strndup(arg, dots - arg);
		const char *b = dots[3] ? dots + 3 : "HEAD";
		git_commit *ca = resolve(rv->repo, *a ? a : "HEAD");
		rv->head = resolve(rv->repo, b);
		rv->base = merge_base(rv->repo, ca, rv->head, arg);
		git_commit_free(ca);
		free(a);
	} else if ((dots = strstr(arg, ".."))) {
		char *a = kopt_strndup(arg, dots - arg);
		rv->base = resolve(rv->repo, *a ? a : "HEAD");
		rv->head = resolve(rv->repo, dots[2] ? dots + 2 : "HEAD");
		free(a);
	} else {
		git_commit *ca = resolve(rv->repo, arg);
		rv->head = resolve(rv->repo, "HEAD");
		rv->base = merge_base(rv->repo, ca, rv->head, arg);
		git_commit_free(ca);
	}
	git_oid_tostr(rv->base_id, sizeof(rv->base_id), git_commit_id(rv->base));
	git_oid_tostr(rv->head_id, sizeof(rv->head_id), git_commit_id(rv->head));
	if (git_commit_tree(&rv->base_tree, rv->base) < 0 ||
	    git_commit_tree(&rv->head_tree, rv->head) < 0)
		kopt_die("cannot read the trees of the range");
}

static int load_config(struct kopt_config *out, git_repository *repo,
		       git_tree *tree, const char *id)
{
	char *label = kopt_xstrfmt("%.12s:.kopt", id);
	int ret = kopt_config_load_tree(out, repo, tree, label);

	free(label);
	return ret;
}

static void read_commits(struct review *rv)
{
	git_revwalk *walk = NULL;
	git_oid oid;

	if (git_revwalk_new(&walk, rv->repo) < 0 ||
	    git_revwalk_push(walk, git_commit_id(rv->head)) < 0 ||
	    git_revwalk_hide(walk, git_commit_id(rv->base)) < 0)
		kopt_die("cannot walk the range: %s",
			 kopt_git_error("revwalk failed"));
	git_revwalk_sorting(walk, GIT_SORT_TOPOLOGICAL | GIT_SORT_REVERSE);
	while (!git_revwalk_next(&oid, walk)) {
		git_commit *c = NULL;
		struct kopt_trailers tr = KOPT_TRAILERS_INIT;
		struct commit_info *ci;
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
}

static int file_cb(const git_diff_delta *d, float progress, void *data)
{
	struct review *rv = data;
	struct file_change *fc;

	(void)progress;
	KOPT_ALLOC_GROW(rv->files, rv->files_nr + 1, rv->files_alloc);
	fc = &rv->files[rv->files_nr++];
	fc->path = kopt_strdup(d->status == GIT_DELTA_DELETED ?
			       d->old_file.path : d->new_file.path);
	fc->status = d->status == GIT_DELTA_ADDED ? 'A' :
		     d->status == GIT_DELTA_DELETED ? 'D' : 'M';
	return 0;
}

static void read_files(struct review *rv)
{
	git_diff *diff = NULL;

	if (git_diff_tree_to_tree(&diff, rv->repo, rv->base_tree,
				  rv->head_tree, NULL) < 0 ||
	    git_diff_foreach(diff, file_cb, NULL, NULL, NULL, rv) < 0)
		kopt_die("cannot diff the range: %s",
			 kopt_git_error("diff failed"));
	git_diff_free(diff);
}



/*
 * Where `path` sits in the knowledge base (lib/knowledge's rule):
 * KOPT_ENOTFOUND outside it, 0 for a detail file (its kind in *kind),
 * KOPT_EINVALID for another file under it.
 */
static int knowledge_file(const struct review *rv, const char *path,
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

static void add_catalog_change(struct review *rv, const char *file,
			       const struct kopt_catalog_row *r, char status)
{
	struct catalog_change *cc;
	const char *id = r->cell[KOPT_COL_ID], *name = r->cell[KOPT_COL_NAME];

	KOPT_ALLOC_GROW(rv->catalog, rv->catalog_nr + 1, rv->catalog_alloc);
	cc = &rv->catalog[rv->catalog_nr++];
	cc->file = kopt_strdup(file);
	cc->id = kopt_strdup(id ? id : "");
	cc->name = kopt_strdup(name ? name : "");
	cc->status = status;
}

/* The catalog at one end of the range; its own problems are lint's. */
static void read_catalog(struct kopt_catalog *out, struct review *rv,
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

static void diff_catalog(struct review *rv, const char *path)
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

static void add_version_change(struct review *rv, const char *kernel,
			       const char *version, const char *what,
			       const struct kopt_analysis_version *v)
{
	struct version_change *vc;
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
static const char *learn_status(struct review *rv, const char *kernel,
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
		const struct file_change *f = &rv->files[i];
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
		const struct commit_info *c = &rv->commits[i];
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


/* The entries name more than one device: say which each is. */
static int several_devices(const struct kopt_results *r)
{
	size_t i;

	for (i = 1; i < r->entries_nr; i++)
		if (!kopt_results_same_device(r->entries[0].device.name,
					      r->entries[i].device.name))
			return 1;
	return 0;
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
static const char *version_what(const struct review *rv, const char *kernel,
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
static void add_perf(struct review *rv, const char *kernel,
		     const struct kopt_analysis *a,
		     const struct kopt_analysis_version *v,
		     const struct kopt_analysis_version *old)
{
	struct perf_view *pv;

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
static void add_regressions(struct review *rv, const char *kernel,
			    const struct kopt_analysis *a,
			    const struct kopt_analysis_version *v)
{
	size_t j;

	for (j = 0; j < v->results.entries_nr; j++) {
		const struct kopt_compare_trial *t = &v->trials[j];
		struct regression *r;
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

static void review_kernel(struct review *rv, size_t k,
			  const struct kopt_source *bs,
			  const struct kopt_source *hs)
{
	const char *kernel = rv->kernels.v[k];
	struct kopt_analysis *b = &rv->before[k], *a = &rv->after[k];
	size_t i;
	int bad = 0;

	*b = (struct kopt_analysis)KOPT_ANALYSIS_INIT;
	*a = (struct kopt_analysis)KOPT_ANALYSIS_INIT;
	bad |= kopt_analysis_load(b, bs, kernel, rv->cfg);
	bad |= kopt_analysis_load(a, hs, kernel, rv->cfg);
	if (bad)
		kopt_die("cannot review kernel '%s'", kernel);
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
}

static void analyse(struct review *rv)
{
	struct kopt_source bs, hs;
	char brev[13], hrev[13];
	size_t i, k;

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
		review_kernel(rv, k, &bs, &hs);
}

/* ------------------------------------------------------------------ */
/* Output */

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

static void md_versions(struct kopt_buf *out, const struct review *rv)
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
static void md_entry(struct kopt_buf *out, const struct review *rv,
		     const struct perf_view *pv,
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
	if (e->device.name && several_devices(pv->after))
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

static void md_performance(struct kopt_buf *out, const struct review *rv)
{
	size_t i, j;

	kopt_buf_addstr(out, "\n### Performance\n");
	if (!rv->perfs_nr)
		kopt_buf_addstr(out, "\nNo results added or changed.\n");
	for (i = 0; i < rv->perfs_nr; i++) {
		const struct perf_view *pv = &rv->perfs[i];
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

static void md_history(struct kopt_buf *out, const struct review *rv)
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

static void md_regressions(struct kopt_buf *out, const struct review *rv)
{
	size_t i;

	kopt_buf_addstr(out, "\n### Regressions\n\n");
	for (i = 0; i < rv->regressions_nr; i++) {
		const struct regression *r = &rv->regressions[i];
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

static void md_knowledge(struct kopt_buf *out, const struct review *rv)
{
	enum kopt_kind kind;
	size_t i;
	int any = 0;

	kopt_buf_addstr(out, "\n### Knowledge\n\n");
	for (i = 0; i < rv->files_nr; i++)
		if (knowledge_file(rv, rv->files[i].path, &kind) !=
		    KOPT_ENOTFOUND) {
			kopt_buf_addf(out, "- %s `%s`\n",
				      status_word(rv->files[i].status),
				      rv->files[i].path);
			any = 1;
		}
	for (i = 0; i < rv->catalog_nr; i++) {
		const struct catalog_change *cc = &rv->catalog[i];
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

static void md_learn(struct kopt_buf *out, const struct review *rv)
{
	size_t i, missing = 0;
	int any = 0;

	kopt_buf_addstr(out, "\n### LEARN\n\n");
	for (i = 0; i < rv->commits_nr; i++) {
		const struct commit_info *c = &rv->commits[i];
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

static void render_markdown(struct review *rv, struct kopt_buf *out)
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
static cJSON *trial_json(const struct review *rv, const struct perf_view *pv,
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

static cJSON *perf_json(const struct review *rv, const struct perf_view *pv)
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

static cJSON *regression_json(const struct regression *r)
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

static void print_json(struct review *rv)
{
	enum kopt_kind kind;
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
		if (knowledge_file(rv, rv->files[i].path, &kind) !=
		    KOPT_ENOTFOUND) {
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

static void release(struct review *rv)
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

int cmd_review(int argc, const char **argv, struct kopt_ctx *ctx)
{
	int json = 0, rb, rh, do_post = 0, dry_run = 0, ret = 0;
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
	struct review rv;

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
	memset(&rv, 0, sizeof(rv));
	rv.repo = ctx->repo;
	kopt_strvec_init(&rv.kernels);
	parse_range(&rv, argc ? argv[0] : NULL);

	/* thresholds come from the base, so a change cannot loosen them */
	rh = load_config(&rv.head_cfg, rv.repo, rv.head_tree, rv.head_id);
	rb = load_config(&rv.base_cfg, rv.repo, rv.base_tree, rv.base_id);
	if (rh && rh != KOPT_ENOTFOUND)
		kopt_die("cannot read .kopt at %.7s", rv.head_id);
	if (rh)
		rv.head_cfg.noise_pct = KOPT_DEFAULT_NOISE_PCT;
	rv.cfg = rb ? &rv.head_cfg : &rv.base_cfg;
	kopt_strvec_init(&rv.catalogs);
	kopt_config_catalogs(&rv.catalogs, &rv.head_cfg);
	rv.knowledge = rv.head_cfg.knowledge ? rv.head_cfg.knowledge :
		       KOPT_DEFAULT_KNOWLEDGE;

	read_commits(&rv);
	read_files(&rv);
	analyse(&rv);
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
	release(&rv);
	return ret;
}
