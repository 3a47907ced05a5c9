#include "analysis.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <sys/stat.h>

#include "cache.h"
#include "config.h"
#include "error.h"
#include "version.h"
#include "paths.h"
#include "banned.h"

void kopt_source_worktree(struct kopt_source *src, const char *top)
{
	memset(src, 0, sizeof(*src));
	src->top = top;
}

void kopt_source_tree(struct kopt_source *src, git_repository *repo,
		      git_tree *tree, const char *rev)
{
	memset(src, 0, sizeof(*src));
	src->repo = repo;
	src->tree = tree;
	src->rev = rev;
}

int kopt_source_read(const struct kopt_source *src, const char *path,
		     struct kopt_buf *out, struct kopt_buf *label)
{
	kopt_buf_reset(out);
	if (label) {
		kopt_buf_reset(label);
		if (src->tree)
			kopt_buf_addf(label, "%s:", src->rev);
		kopt_buf_addstr(label, path);
	}
	if (src->tree) {
		git_tree_entry *te = NULL;
		git_blob *blob = NULL;
		int ret = 0;
		if (git_tree_entry_bypath(&te, src->tree, path) < 0)
			return KOPT_ENOTFOUND;
		if (git_tree_entry_type(te) != GIT_OBJECT_BLOB) {
			git_tree_entry_free(te);
			return KOPT_ENOTFOUND;
		}
		if (git_blob_lookup(&blob, src->repo, git_tree_entry_id(te)) < 0)
			ret = kopt_error("cannot read %s:%s: %s", src->rev,
					 path, kopt_git_error("no blob"));
		else
			kopt_buf_add(out, git_blob_rawcontent(blob),
				     (size_t)git_blob_rawsize(blob));
		git_blob_free(blob);
		git_tree_entry_free(te);
		return ret;
	} else {
		char *full = kopt_xstrfmt("%s%s", src->top ? src->top : "",
					  path);
		int ret = kopt_buf_read_file(out, full);
		int e = errno;
		free(full);
		if (!ret)
			return 0;
		if (e == ENOENT || e == ENOTDIR)
			return KOPT_ENOTFOUND;
		return kopt_error("cannot read '%s': %s", path, strerror(e));
	}
}

int kopt_source_list(const struct kopt_source *src, const char *dir,
		     struct kopt_strvec *out)
{
	if (src->tree) {
		git_tree_entry *te = NULL;
		git_tree *sub = NULL;
		size_t i, n;
		if (git_tree_entry_bypath(&te, src->tree, dir) < 0)
			return KOPT_ENOTFOUND;
		if (git_tree_entry_type(te) != GIT_OBJECT_TREE ||
		    git_tree_lookup(&sub, src->repo, git_tree_entry_id(te)) < 0) {
			git_tree_entry_free(te);
			return KOPT_ENOTFOUND;
		}
		n = git_tree_entrycount(sub);
		for (i = 0; i < n; i++) {
			const git_tree_entry *e = git_tree_entry_byindex(sub, i);
			if (git_tree_entry_type(e) == GIT_OBJECT_BLOB)
				kopt_strvec_push(out, git_tree_entry_name(e));
		}
		git_tree_free(sub);
		git_tree_entry_free(te);
	} else {
		char *full = kopt_xstrfmt("%s%s", src->top ? src->top : "",
					  dir);
		DIR *d = opendir(full);
		struct dirent *de;
		free(full);
		if (!d)
			return KOPT_ENOTFOUND;
		while ((de = readdir(d)))
			if (de->d_name[0] != '.')
				kopt_strvec_push(out, de->d_name);
		closedir(d);
	}
	kopt_strvec_sort(out);
	return 0;
}

/*
 * Through the cache: stat the file; on a hit rebuild the model from the
 * cached summary, else read and parse it and store its summary.
 */
static int stat_source(const struct kopt_source *src, const char *path,
		       struct stat *st)
{
	char *full;
	int ret;

	if (!src->cache || src->tree)
		return -1;
	full = kopt_xstrfmt("%s%s", src->top ? src->top : "", path);
	ret = stat(full, st);
	free(full);
	return ret;
}

static int load_devlog(struct kopt_devlog *out, const struct kopt_source *src,
		       const char *path, struct kopt_buf *data,
		       struct kopt_buf *label)
{
	struct stat st;
	const char *hit;
	size_t hlen;
	int cached = !stat_source(src, path, &st), r;

	if (cached && kopt_cache_get(src->cache, path, &st, &hit, &hlen) &&
	    !kopt_devlog_from_summary(out, hit, hlen, path))
		return 0;
	r = kopt_source_read(src, path, data, label);
	if (r)
		return r;
	if (kopt_devlog_parse(out, data->buf, data->len, label->buf))
		return KOPT_EINVALID;
	if (cached) {
		kopt_buf_reset(data);
		kopt_devlog_summary(data, out);
		kopt_cache_put(src->cache, path, &st, data->buf, data->len);
	}
	return 0;
}

static int load_results(struct kopt_results *out,
			const struct kopt_source *src, const char *path,
			const char *kernel, const char *version,
			struct kopt_buf *data, struct kopt_buf *label)
{
	struct stat st;
	const char *hit;
	size_t hlen;
	int cached = !stat_source(src, path, &st), r;

	/* a summary is stored only for results that were valid */
	if (cached && kopt_cache_get(src->cache, path, &st, &hit, &hlen) &&
	    !kopt_results_from_summary(out, hit, hlen) &&
	    !strcmp(out->kernel, kernel) && !strcmp(out->version, version))
		return 0;
	r = kopt_source_read(src, path, data, label);
	if (r)
		return r;
	if (kopt_results_parse(out, data->buf, data->len, label->buf, kernel,
			       version))
		return KOPT_EINVALID;
	if (cached) {
		kopt_buf_reset(data);
		kopt_results_summary(data, out);
		kopt_cache_put(src->cache, path, &st, data->buf, data->len);
	}
	return 0;
}

static struct kopt_analysis_version *add_version(struct kopt_analysis *a,
						 const char *name)
{
	struct kopt_analysis_version *v;
	size_t i;

	for (i = 0; i < a->versions_nr; i++)
		if (!strcmp(a->versions[i].name, name))
			return &a->versions[i];
	KOPT_ALLOC_GROW(a->versions, a->versions_nr + 1, a->versions_alloc);
	v = &a->versions[a->versions_nr++];
	memset(v, 0, sizeof(*v));
	v->name = kopt_strdup(name);
	v->number = kopt_version_number(name);
	v->results = (struct kopt_results)KOPT_RESULTS_INIT;
	kopt_strvec_init(&v->disagree);
	v->parent = -1;
	return v;
}

static int by_number(const void *a, const void *b)
{
	const struct kopt_analysis_version *x = a, *y = b;

	if (x->number != y->number)
		return x->number < y->number ? -1 : 1;
	return strcmp(x->name, y->name);
}

int kopt_analysis_load(struct kopt_analysis *out,
		       const struct kopt_source *src, const char *kernel,
		       const struct kopt_config *cfg)
{
	struct kopt_buf path = KOPT_BUF_INIT, data = KOPT_BUF_INIT;
	struct kopt_buf label = KOPT_BUF_INIT;
	struct kopt_strvec files = KOPT_STRVEC_INIT;
	double noise_pct = cfg ? cfg->noise_pct : KOPT_DEFAULT_NOISE_PCT;
	size_t i, j;
	int ret = 0, r;

	out->kernel = kopt_strdup(kernel);
	out->noise_pct = noise_pct;

	kopt_path_devlog(&path, kernel);
	r = load_devlog(&out->devlog, src, path.buf, &data, &label);
	if (!r)
		out->has_devlog = 1;
	else if (r != KOPT_ENOTFOUND)
		ret = r;

	kopt_buf_reset(&path);
	kopt_path_results_dir(&path, kernel);
	kopt_source_list(src, path.buf, &files);
	for (i = 0; i < files.nr; i++) {
		struct kopt_buf file = KOPT_BUF_INIT;
		char *version;
		struct kopt_analysis_version *v;
		if (!kopt_ends_with(files.v[i], ".json"))
			continue;
		version = kopt_strndup(files.v[i], strlen(files.v[i]) - 5);
		if (!kopt_version_valid(version)) {
			free(version);
			continue;
		}
		kopt_buf_addf(&file, "%s/%s", path.buf, files.v[i]);
		v = add_version(out, version);
		r = load_results(&v->results, src, file.buf, kernel, version,
				 &data, &label);
		if (!r)
			v->has_file = 1;
		else if (r != KOPT_ENOTFOUND)
			ret = r;
		kopt_buf_release(&file);
		free(version);
	}
	for (i = 0; out->has_devlog && i < out->devlog.versions_nr; i++)
		add_version(out, out->devlog.versions[i].name);
	if (out->versions_nr)
		qsort(out->versions, out->versions_nr,
		      sizeof(*out->versions), by_number);
	/* each version's numbers: its results file, else its devlog entry */
	for (i = 0; i < out->versions_nr; i++) {
		struct kopt_analysis_version *v = &out->versions[i];
		struct kopt_results file = KOPT_RESULTS_INIT;
		if (out->has_devlog)
			v->entry = kopt_devlog_find_version(&out->devlog,
							    v->name);
		if (v->has_file) {
			file = v->results;
			v->results = (struct kopt_results)KOPT_RESULTS_INIT;
		}
		v->source = kopt_numbers_version(&v->results,
						 v->has_file ? &file : NULL,
						 out->has_devlog ?
						 &out->devlog : NULL, kernel,
						 v->name, cfg, &v->disagree);
		kopt_results_release(&file);
		v->has_results = v->has_file || v->results.entries_nr;
	}
	for (i = 0; i < out->versions_nr; i++) {
		struct kopt_analysis_version *v = &out->versions[i];
		const struct kopt_analysis_version *p = NULL;
		if (v->has_results && v->results.parent)
			for (j = 0; j < out->versions_nr; j++)
				if (!strcmp(out->versions[j].name,
					    v->results.parent))
					v->parent = (int)j;
		if (v->parent >= 0 && out->versions[v->parent].has_results)
			p = &out->versions[v->parent];
		if (v->has_results)
			v->change = kopt_compare_results(&v->results,
							 p ? &p->results : NULL,
							 noise_pct, &v->trials);
	}
	kopt_buf_release(&path);
	kopt_buf_release(&data);
	kopt_buf_release(&label);
	kopt_strvec_clear(&files);
	return ret;
}

int kopt_analysis_take(struct kopt_results *out, struct kopt_analysis *a,
		       const char *version)
{
	struct kopt_analysis_version *v = NULL;
	struct kopt_buf rel = KOPT_BUF_INIT;
	size_t i;

	for (i = 0; !v && i < a->versions_nr; i++)
		if (!strcmp(a->versions[i].name, version))
			v = &a->versions[i];
	if (!v || !v->has_results || !v->results.entries_nr) {
		kopt_path_results(&rel, a->kernel, version);
		kopt_error("no numbers for %s %s: neither %s nor a performance "
			   "block in its devlog entry; run 'git kopt profile "
			   "%s %s' first", a->kernel, version, rel.buf,
			   a->kernel, version);
		kopt_buf_release(&rel);
		return KOPT_ENOTFOUND;
	}
	kopt_results_release(out);
	*out = v->results;
	v->results = (struct kopt_results)KOPT_RESULTS_INIT;
	v->has_results = 0;
	return 0;
}

const struct kopt_results **kopt_analysis_numbers(const struct kopt_analysis *a,
						  size_t *nr)
{
	const struct kopt_results **all;
	size_t i;

	all = kopt_calloc(a->versions_nr + 1, sizeof(*all));
	*nr = 0;
	for (i = 0; i < a->versions_nr; i++)
		if (a->versions[i].has_results)
			all[(*nr)++] = &a->versions[i].results;
	return all;
}

void kopt_analysis_release(struct kopt_analysis *a)
{
	size_t i;

	free(a->kernel);
	kopt_devlog_release(&a->devlog);
	for (i = 0; i < a->versions_nr; i++) {
		free(a->versions[i].name);
		kopt_results_release(&a->versions[i].results);
		kopt_strvec_clear(&a->versions[i].disagree);
		free(a->versions[i].trials);
	}
	free(a->versions);
	memset(a, 0, sizeof(*a));
	kopt_devlog_release(&a->devlog);
}

const struct kopt_analysis_version *
kopt_analysis_find(const struct kopt_analysis *a, const char *version)
{
	size_t i;

	for (i = 0; i < a->versions_nr; i++)
		if (!strcmp(a->versions[i].name, version))
			return &a->versions[i];
	return NULL;
}

const struct kopt_results_entry *
kopt_analysis_best(const struct kopt_analysis *a, const char *trial,
		   const struct kopt_analysis_version **ver)
{
	const struct kopt_results_entry *best = NULL;
	size_t i;

	*ver = NULL;
	for (i = 0; i < a->versions_nr; i++) {
		const struct kopt_results_entry *e;
		double d;
		if (!a->versions[i].has_results)
			continue;
		e = kopt_results_find_trial(&a->versions[i].results, trial);
		if (!e)
			continue;
		d = e->metrics[KOPT_METRIC_DURATION_US];
		if (!kopt_results_has(d))
			continue;
		if (!best || d < best->metrics[KOPT_METRIC_DURATION_US]) {
			best = e;
			*ver = &a->versions[i];
		}
	}
	return best;
}
