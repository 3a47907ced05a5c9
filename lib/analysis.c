#include "analysis.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <sys/stat.h>

#include "cache.h"
#include "index.h"
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

void kopt_source_worktree_cached(struct kopt_source *src,
				 git_repository *repo, const char *top)
{
	struct kopt_error_catch quiet = KOPT_ERROR_CATCH_INIT;

	kopt_source_worktree(src, top);
	src->cache = kopt_calloc(1, sizeof(*src->cache));
	kopt_cache_open(src->cache, repo, "analyze");
	src->overview = kopt_calloc(1, sizeof(*src->overview));
	kopt_cache_open(src->overview, repo, "overview");
	/* without the index, every file is hashed: slower, as exact */
	kopt_error_catch(&quiet);
	if (kopt_index_open(&src->index, repo))
		src->index = NULL;
	kopt_error_uncatch(&quiet);
	kopt_error_catch_release(&quiet);
}

void kopt_source_release(struct kopt_source *src)
{
	if (src->cache)
		kopt_cache_release(src->cache);
	free(src->cache);
	if (src->overview)
		kopt_cache_release(src->overview);
	free(src->overview);
	kopt_index_free(src->index);
	src->cache = NULL;
	src->overview = NULL;
	src->index = NULL;
}

void kopt_source_tree(struct kopt_source *src, git_repository *repo,
		      git_tree *tree, const char *rev)
{
	memset(src, 0, sizeof(*src));
	src->repo = repo;
	src->tree = tree;
	src->rev = rev;
}

/* A work-tree file that could not be read, for the errno `e`. */
static int read_failed(const char *path, int e)
{
	if (e == ENOENT || e == ENOTDIR)
		return KOPT_ENOTFOUND;
	return kopt_error("cannot read '%s': %s", path, strerror(e));
}

/*
 * kopt_source_read(), and the stat data of a work-tree file once read;
 * `dir`, when not NULL, the work tree's directory of `path` open, and
 * `name` the file's name in it.
 */
static int source_read_in(const struct kopt_source *src, const char *path,
			  DIR *dir, const char *name, struct kopt_buf *out,
			  struct kopt_buf *label, struct stat *st)
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
		struct kopt_buf full = KOPT_BUF_INIT;
		int ret, e;
		if (dir) {
			ret = kopt_buf_read_file_at(out, dirfd(dir), name, st);
		} else {
			kopt_buf_addstr(&full, src->top ? src->top : "");
			kopt_buf_addstr(&full, path);
			ret = kopt_buf_read_file_stat(out, full.buf, st);
		}
		e = errno;
		kopt_buf_release(&full);
		return ret ? read_failed(path, e) : 0;
	}
}

static int source_read(const struct kopt_source *src, const char *path,
		       struct kopt_buf *out, struct kopt_buf *label,
		       struct stat *st)
{
	return source_read_in(src, path, NULL, NULL, out, label, st);
}

int kopt_source_read(const struct kopt_source *src, const char *path,
		     struct kopt_buf *out, struct kopt_buf *label)
{
	struct stat st;

	return source_read(src, path, out, label, &st);
}

/*
 * kopt_source_list(); in a work tree, with `keep`, the directory left
 * open in *keep for source_read_in() (NULL when it is not open), for the
 * caller to close.
 */
static int source_list(const struct kopt_source *src, const char *dir,
		       struct kopt_strvec *out, DIR **keep)
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
		if (keep)
			*keep = d;
		else
			closedir(d);
	}
	kopt_strvec_sort(out);
	return 0;
}

int kopt_source_list(const struct kopt_source *src, const char *dir,
		     struct kopt_strvec *out)
{
	return source_list(src, dir, out, NULL);
}

static int load_devlog(struct kopt_devlog *out, const struct kopt_source *src,
		       const char *path, struct kopt_buf *data,
		       struct kopt_buf *label, struct stat *st)
{
	int r = source_read(src, path, data, label, st);

	if (r)
		return r;
	/* through the cache, the views read no list of the devlog */
	if (src->cache && !src->tree)
		r = kopt_devlog_parse_view(out, data->buf, data->len,
					   label->buf);
	else
		r = kopt_devlog_parse(out, data->buf, data->len, label->buf);
	if (r)
		return KOPT_EINVALID;
	return 0;
}

static int parse_results(struct kopt_results *out,
			 const struct kopt_source *src, const char *kernel,
			 const char *version, const struct kopt_buf *data,
			 const struct kopt_buf *label)
{
	int r;

	/* through the cache, the views keep only the summary's fields */
	if (src->cache && !src->tree)
		r = kopt_results_parse_view(out, data->buf, data->len,
					    label->buf, kernel, version);
	else
		r = kopt_results_parse(out, data->buf, data->len, label->buf,
				       kernel, version);
	if (r)
		return KOPT_EINVALID;
	return 0;
}

static struct kopt_analysis_version *add_version(struct kopt_analysis *a,
						 const char *name)
{
	struct kopt_analysis_version *v;
	size_t i;

	for (i = 0; i < a->versions_nr; i++)
		if (kopt_str_eq(a->versions[i].name, name))
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

/* Each version's devlog entry, parent and change against it. */
static void link_versions(struct kopt_analysis *out)
{
	size_t i, j;

	for (i = 0; i < out->versions_nr; i++) {
		struct kopt_analysis_version *v = &out->versions[i];
		v->entry = out->has_devlog ?
			   kopt_devlog_find_version(&out->devlog, v->name) :
			   NULL;
		v->has_results = v->has_file || v->results.entries_nr;
	}
	for (i = 0; i < out->versions_nr; i++) {
		struct kopt_analysis_version *v = &out->versions[i];
		const struct kopt_analysis_version *p = NULL;
		v->parent = -1;
		if (v->has_results && v->results.parent)
			/* names are unique (add_version()) */
			for (j = 0; j < out->versions_nr; j++)
				if (kopt_str_eq(out->versions[j].name,
						v->results.parent)) {
					v->parent = (int)j;
					break;
				}
		if (v->parent >= 0 && out->versions[v->parent].has_results)
			p = &out->versions[v->parent];
		if (v->has_results)
			v->change = kopt_compare_results(&v->results,
							 p ? &p->results : NULL,
							 out->noise_pct,
							 &v->trials);
	}
}

/* The start of a kernel's key: the format and the settings. */
static void key_head(struct kopt_buf *in, const char *kernel,
		     const struct kopt_config *cfg)
{
	size_t i;

	kopt_buf_addf(in, "kopt analysis 2\nkernel %s\n", kernel);
	kopt_buf_addstr(in, "noise");
	kopt_cache_add_num(in, cfg ? cfg->noise_pct : KOPT_DEFAULT_NOISE_PCT);
	kopt_buf_addch(in, '\n');
	for (i = 0; cfg && i < cfg->trials_nr; i++) {
		kopt_buf_addstr(in, "trial");
		kopt_cache_add_str(in, cfg->trials[i].name);
		kopt_buf_addf(in, "\t%ld\t%ld\t%ld\n", cfg->trials[i].b,
			      cfg->trials[i].s, cfg->trials[i].t);
	}
}

/* One input: "devlog <id>" or "results <file> <id>", the id's 20 bytes. */
static void key_add(struct kopt_buf *in, const char *what, const char *name,
		    const git_oid *id)
{
	kopt_buf_addstr(in, what);
	kopt_buf_addch(in, ' ');
	if (name) {
		kopt_buf_addstr(in, name);
		kopt_buf_addch(in, ' ');
	}
	/* the text is only ever hashed */
	kopt_buf_add(in, id->id, GIT_OID_RAWSZ);
	kopt_buf_addch(in, '\n');
}

/*
 * The id of the bytes just read from `path` (`st`: the file's stat data
 * taken after reading them), as kopt_index_worktree_id() gives it: the
 * index's when the file is clean, else their hash.
 */
static void read_id(git_oid *out, const struct kopt_source *src,
		    const char *path, const struct kopt_buf *data,
		    const struct stat *st)
{
	if (!kopt_index_clean_id(out, src->index, path, st))
		kopt_cache_key(out, data);
}

/*
 * The results files of a kernel are read LOAD_CHUNK at a time: from the
 * work tree all at once (kopt_buf_read_files_at()), each into its own
 * buffer, then parsed and keyed one by one.
 */
#define LOAD_CHUNK 32

struct chunk {
	struct kopt_buf data[LOAD_CHUNK];
	struct stat st[LOAD_CHUNK];
	int errs[LOAD_CHUNK];
	struct kopt_buf label;
};

/*
 * The results files among names[0..nr) of the kernel's results
 * directory (`path`, open as `dir` in a work tree): each version's
 * numbers and, with `in`, its line of the key.  The last failure other
 * than a missing file, or 0.
 */
static int load_chunk(struct kopt_analysis *out, const struct kopt_source *src,
		      const char *kernel, const struct kopt_buf *path,
		      DIR *dir, const char **names, size_t nr, struct chunk *c,
		      struct kopt_buf *in, int *keyed)
{
	const char *take[LOAD_CHUNK];
	char *versions[LOAD_CHUNK];
	struct kopt_buf file = KOPT_BUF_INIT;
	int at_once = dir && !src->tree, ret = 0, r;
	size_t m = 0, k;
	git_oid id;

	for (k = 0; k < nr; k++) {
		char *version;
		if (!kopt_ends_with(names[k], ".json"))
			continue;
		version = kopt_strndup(names[k], strlen(names[k]) - 5);
		if (!kopt_version_valid(version)) {
			free(version);
			continue;
		}
		kopt_buf_reset(&c->data[m]);
		versions[m] = version;
		take[m++] = names[k];
	}
	if (at_once)
		kopt_buf_read_files_at(c->data, c->st, c->errs, dirfd(dir),
				       take, m);
	for (k = 0; k < m; k++) {
		struct kopt_analysis_version *v = add_version(out, versions[k]);
		kopt_buf_reset(&file);
		kopt_buf_addbuf(&file, path);
		kopt_buf_addch(&file, '/');
		kopt_buf_addstr(&file, take[k]);
		if (at_once) {
			r = c->errs[k] ? read_failed(file.buf, c->errs[k]) : 0;
			if (!r)
				r = parse_results(&v->results, src, kernel,
						  versions[k], &c->data[k],
						  &file);
		} else {
			r = source_read_in(src, file.buf, dir, take[k],
					   &c->data[k], &c->label, &c->st[k]);
			if (!r)
				r = parse_results(&v->results, src, kernel,
						  versions[k], &c->data[k],
						  &c->label);
		}
		if (!r)
			v->has_file = 1;
		else if (r != KOPT_ENOTFOUND)
			ret = r;
		if (in && !r) {
			read_id(&id, src, file.buf, &c->data[k], &c->st[k]);
			key_add(in, "results", take[k], &id);
		} else if (in && r == KOPT_ENOTFOUND) {
			*keyed = 0;
		}
		free(versions[k]);
	}
	kopt_buf_release(&file);
	return ret;
}

/*
 * Read and parse the kernel's files.  With `in`, the key's text of what
 * was read, as kopt_analysis_key() writes it of what is there; *keyed 0
 * when a file it lists could not be read.
 */
static int load_files(struct kopt_analysis *out, const struct kopt_source *src,
		      const char *kernel, const struct kopt_config *cfg,
		      struct kopt_buf *in, int *keyed)
{
	struct kopt_buf path = KOPT_BUF_INIT, data = KOPT_BUF_INIT;
	struct kopt_buf label = KOPT_BUF_INIT;
	struct kopt_strvec files = KOPT_STRVEC_INIT;
	struct chunk chunk;
	struct stat st;
	DIR *dir = NULL;
	git_oid id;
	size_t i, n;
	int ret = 0, r;

	for (i = 0; i < LOAD_CHUNK; i++)
		kopt_buf_init(&chunk.data[i], 0);
	kopt_buf_init(&chunk.label, 0);
	if (in)
		key_head(in, kernel, cfg);
	kopt_path_devlog(&path, kernel);
	r = load_devlog(&out->devlog, src, path.buf, &data, &label, &st);
	if (!r)
		out->has_devlog = 1;
	else if (r != KOPT_ENOTFOUND)
		ret = r;
	if (in && !r) {
		read_id(&id, src, path.buf, &data, &st);
		key_add(in, "devlog", NULL, &id);
	}

	kopt_buf_reset(&path);
	kopt_path_results_dir(&path, kernel);
	source_list(src, path.buf, &files, &dir);
	for (i = 0; i < files.nr; i += n) {
		n = files.nr - i < LOAD_CHUNK ? files.nr - i : LOAD_CHUNK;
		r = load_chunk(out, src, kernel, &path, dir, files.v + i, n,
			       &chunk, in, keyed);
		if (r)
			ret = r;
	}
	if (dir)
		closedir(dir);
	for (i = 0; out->has_devlog && i < out->devlog.versions_nr; i++)
		add_version(out, out->devlog.versions[i].name);
	if (out->versions_nr)
		qsort(out->versions, out->versions_nr,
		      sizeof(*out->versions), by_number);
	/* each version's numbers: its results file, else its devlog entry */
	for (i = 0; i < out->versions_nr; i++) {
		struct kopt_analysis_version *v = &out->versions[i];
		struct kopt_results file = KOPT_RESULTS_INIT;
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
	}
	kopt_buf_release(&path);
	kopt_buf_release(&data);
	kopt_buf_release(&label);
	for (i = 0; i < LOAD_CHUNK; i++)
		kopt_buf_release(&chunk.data[i]);
	kopt_buf_release(&chunk.label);
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

/*
 * The key: the devlog's and each results file's blob id as git status
 * finds them (lib/index), the settings that shape the numbers
 * (kopt.noise, the trials), and the format.
 */
int kopt_analysis_key(git_oid *out, const struct kopt_source *src,
		      const char *kernel, const struct kopt_config *cfg)
{
	struct kopt_buf in = KOPT_BUF_INIT, path = KOPT_BUF_INIT;
	struct kopt_buf ver = KOPT_BUF_INIT;
	struct kopt_strvec files = KOPT_STRVEC_INIT;
	struct stat st;
	DIR *dir = NULL;
	git_oid id;
	size_t i, dirlen;
	int r, ok = 1;

	if (!src->cache || src->tree)
		return 0;
	key_head(&in, kernel, cfg);
	kopt_path_devlog(&path, kernel);
	r = kopt_index_worktree_id(&id, &st, src->index, src->top, path.buf);
	if (!r) {
		key_add(&in, "devlog", NULL, &id);
	} else if (r != KOPT_ENOTFOUND) {
		ok = 0;
	}
	kopt_buf_reset(&path);
	kopt_path_results_dir(&path, kernel);
	kopt_buf_addch(&path, '/');
	dirlen = path.len;
	/* a work tree's files are listed only from its open directory */
	source_list(src, path.buf, &files, &dir);
	for (i = 0; ok && dir && i < files.nr; i++) {
		size_t n = strlen(files.v[i]);
		if (!kopt_ends_with(files.v[i], ".json"))
			continue;
		kopt_buf_reset(&ver);
		kopt_buf_add(&ver, files.v[i], n - 5);
		if (!kopt_version_valid(ver.buf))
			continue;
		kopt_buf_setlen(&path, dirlen);
		kopt_buf_add(&path, files.v[i], n);
		r = kopt_index_worktree_id_at(&id, &st, src->index, src->top,
					      path.buf, dirfd(dir), files.v[i]);
		if (r)
			ok = 0;
		else
			key_add(&in, "results", files.v[i], &id);
	}
	if (dir)
		closedir(dir);
	if (ok)
		kopt_cache_key(out, &in);
	kopt_buf_release(&in);
	kopt_buf_release(&path);
	kopt_buf_release(&ver);
	kopt_strvec_clear(&files);
	return ok;
}

/* "\t<n>": a count or a flag of the summary's lines (none is negative) */
static void add_field(struct kopt_buf *out, intmax_t n)
{
	kopt_buf_addch(out, '\t');
	kopt_buf_add_int(out, n);
}

int kopt_analysis_summary(struct kopt_buf *out, const struct kopt_analysis *a)
{
	struct kopt_buf part = KOPT_BUF_INIT;
	size_t i, j;

	kopt_cache_add_str(out, "A1");
	kopt_cache_add_str(out, a->kernel);
	add_field(out, a->has_devlog);
	add_field(out, a->versions_nr);
	kopt_buf_addch(out, '\n');
	if (a->has_devlog) {
		kopt_devlog_summary(&part, &a->devlog, 0);
		kopt_buf_addch(out, 'L');
		add_field(out, part.len);
		kopt_buf_addch(out, '\n');
		kopt_buf_addbuf(out, &part);
	}
	for (i = 0; i < a->versions_nr; i++) {
		const struct kopt_analysis_version *v = &a->versions[i];
		kopt_buf_reset(&part);
		if (v->results.kernel && v->results.version)
			kopt_results_summary(&part, &v->results);
		kopt_cache_add_str(out, "V");
		kopt_cache_add_str(out, v->name);
		add_field(out, v->has_file);
		add_field(out, (int)v->source);
		add_field(out, v->disagree.nr);
		add_field(out, part.len);
		kopt_buf_addch(out, '\n');
		for (j = 0; j < v->disagree.nr; j++) {
			kopt_cache_add_str(out, "d");
			kopt_cache_add_str(out, v->disagree.v[j]);
			kopt_buf_addch(out, '\n');
		}
		kopt_buf_addbuf(out, &part);
	}
	kopt_buf_release(&part);
	return 0;
}

/* A whole number of a summary field, at most `max`; -1 when it is none. */
static int summary_size(const char *f, size_t max, size_t *out)
{
	char *end;
	unsigned long long v;

	if (!f || *f < '0' || *f > '9')
		return -1;
	errno = 0;
	v = strtoull(f, &end, 10);
	if (errno || *end || v > max)
		return -1;
	*out = (size_t)v;
	return 0;
}

int kopt_analysis_from_summary(struct kopt_analysis *out, char *text,
			       size_t len, const char *kernel, double noise_pct)
{
	struct kopt_buf label = KOPT_BUF_INIT;
	char *f[6];
	size_t pos = 0, nr, n, i, j;
	int ret = KOPT_EINVALID;

	out->kernel = kopt_strdup(kernel);
	out->noise_pct = noise_pct;
	if (kopt_cache_split(text, len, &pos, f, 4) != 4 || !f[0] ||
	    strcmp(f[0], "A1") || !f[1] || strcmp(f[1], kernel) ||
	    !f[2] || (strcmp(f[2], "0") && strcmp(f[2], "1")) ||
	    summary_size(f[3], len, &nr))
		goto done;
	if (!strcmp(f[2], "1")) {
		kopt_path_devlog(&label, kernel);
		if (kopt_cache_split(text, len, &pos, f, 2) != 2 || !f[0] ||
		    strcmp(f[0], "L") || summary_size(f[1], len - pos, &n) ||
		    kopt_devlog_from_summary(&out->devlog, text + pos, n,
					     label.buf))
			goto done;
		out->has_devlog = 1;
		pos += n;
	}
	for (i = 0; i < nr; i++) {
		struct kopt_analysis_version *v;
		size_t source, dis;
		if (kopt_cache_split(text, len, &pos, f, 6) != 6 || !f[0] ||
		    strcmp(f[0], "V") || !f[1] ||
		    !f[2] || (strcmp(f[2], "0") && strcmp(f[2], "1")) ||
		    summary_size(f[3], KOPT_NUMBERS_DEVLOG, &source) ||
		    summary_size(f[4], len, &dis) ||
		    summary_size(f[5], len, &n))
			goto done;
		KOPT_ALLOC_GROW(out->versions, out->versions_nr + 1,
				out->versions_alloc);
		v = &out->versions[out->versions_nr++];
		memset(v, 0, sizeof(*v));
		v->name = kopt_strdup(f[1]);
		v->number = kopt_version_number(v->name);
		v->results = (struct kopt_results)KOPT_RESULTS_INIT;
		kopt_strvec_init(&v->disagree);
		v->has_file = f[2][0] == '1';
		v->source = (enum kopt_numbers_source)source;
		for (j = 0; j < dis; j++) {
			if (kopt_cache_split(text, len, &pos, f, 2) != 2 ||
			    !f[0] || strcmp(f[0], "d") || !f[1])
				goto done;
			kopt_strvec_push(&v->disagree, f[1]);
		}
		if (n > len - pos ||
		    (n && kopt_results_from_summary(&v->results, text + pos,
						     n)))
			goto done;
		pos += n;
	}
	if (pos != len)
		goto done;
	link_versions(out);
	ret = 0;
done:
	kopt_buf_release(&label);
	return ret;
}

/* Whether slim() can make `a` what its summary reads back as. */
static int slim_ok(const struct kopt_analysis *a)
{
	size_t i;

	if (a->has_devlog && !kopt_devlog_slim_ok(&a->devlog))
		return 0;
	for (i = 0; i < a->versions_nr; i++)
		if (!kopt_results_slim_ok(&a->versions[i].results))
			return 0;
	return 1;
}

/*
 * What kopt_analysis_from_summary() would read back from the summary of
 * a fresh analysis, made in place without the text (the views then see
 * what a cache hit gives them): 0; -1 when a part would not read back as
 * it is, and the caller goes through the text.
 */
static int slim(struct kopt_analysis *a)
{
	struct kopt_buf label = KOPT_BUF_INIT;
	size_t i;
	int ret = 0;

	if (a->has_devlog) {
		kopt_path_devlog(&label, a->kernel);
		ret = kopt_devlog_slim(&a->devlog, label.buf);
		kopt_buf_release(&label);
	}
	for (i = 0; !ret && i < a->versions_nr; i++)
		ret = kopt_results_slim(&a->versions[i].results);
	return ret;
}

int kopt_analysis_load(struct kopt_analysis *out,
		       const struct kopt_source *src, const char *kernel,
		       const struct kopt_config *cfg)
{
	git_oid key, after;
	int keyed = kopt_analysis_key(&key, src, kernel, cfg), after_keyed;

	return kopt_analysis_load_keyed(out, src, kernel, cfg, keyed, &key,
					&after, &after_keyed);
}

int kopt_analysis_load_keyed(struct kopt_analysis *out,
			     const struct kopt_source *src,
			     const char *kernel,
			     const struct kopt_config *cfg, int keyed,
			     const git_oid *keyp, git_oid *after,
			     int *after_keyed)
{
	struct kopt_buf text = KOPT_BUF_INIT, in = KOPT_BUF_INIT;
	double noise_pct = cfg ? cfg->noise_pct : KOPT_DEFAULT_NOISE_PCT;
	const git_oid *key = keyp;
	int ret, read_keyed = 1, store, fits;

	*after_keyed = 0;
	if (keyed && key && kopt_cache_get(src->cache, kernel, key, &text)) {
		if (!kopt_analysis_from_summary(out, text.buf, text.len,
						kernel, noise_pct)) {
			/* no file read: the key stands */
			git_oid_cpy(after, key);
			*after_keyed = 1;
			kopt_buf_release(&text);
			return 0;
		}
		/* damaged: read the files, and store it again */
		kopt_analysis_release(out);
	}
	out->kernel = kopt_strdup(kernel);
	out->noise_pct = noise_pct;
	/* the key of what was read, from the reads themselves */
	ret = load_files(out, src, kernel, cfg,
			 keyed && src->cache && !src->tree ? &in : NULL,
			 &read_keyed);
	if (!ret && src->cache && !src->tree) {
		/*
		 * A file changed since the key was taken, or while it was
		 * read (its stat data is taken after the read): what was read
		 * has another key, and is not stored under this one.
		 */
		if (keyed && read_keyed) {
			kopt_cache_key(after, &in);
			*after_keyed = 1;
		}
		store = *after_keyed && key && git_oid_equal(after, key);
		/*
		 * The views see what a hit gives them: the model rebuilt
		 * from its summary, whether it was stored or not (in place
		 * when it can be; the text is made only when it is stored
		 * or read back).
		 */
		fits = slim_ok(out);
		if (store || !fits) {
			kopt_buf_reset(&text);
			kopt_analysis_summary(&text, out);
		}
		if (store)
			kopt_cache_put(src->cache, kernel, key, text.buf,
				       text.len);
		if (fits && !slim(out)) {
			link_versions(out);
		} else {
			kopt_analysis_release(out);
			ret = kopt_analysis_from_summary(out, text.buf,
							 text.len, kernel,
							 noise_pct);
		}
		if (ret)
			ret = kopt_error("cannot analyze '%s': its summary "
					 "does not read back", kernel);
	} else {
		link_versions(out);
	}
	kopt_buf_release(&text);
	kopt_buf_release(&in);
	return ret;
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
