#include "kb.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "error.h"
#include "banned.h"

/* The work-tree source. */

static int wt_read(void *data, const char *path, struct kopt_buf *out)
{
	char *full = kopt_xstrfmt("%s%s", (const char *)data, path);
	struct stat st;
	int ret = 0;

	kopt_buf_reset(out);
	if (stat(full, &st) && (errno == ENOENT || errno == ENOTDIR))
		ret = KOPT_ENOTFOUND;
	else if (!stat(full, &st) && S_ISDIR(st.st_mode))
		ret = KOPT_ENOTFOUND;
	else if (kopt_buf_read_file(out, full))
		ret = kopt_error("cannot read '%s': %s", path,
				 strerror(errno));
	free(full);
	return ret;
}

static int wt_list_dir(const char *top, const char *dir,
		       struct kopt_strvec *out)
{
	char *full = kopt_xstrfmt("%s%s", top, dir);
	DIR *d = opendir(full);
	struct dirent *de;
	int ret = 0;

	if (!d) {
		int e = errno;
		free(full);
		if (e == ENOENT || e == ENOTDIR)
			return 0;
		return kopt_error("cannot read directory '%s': %s", dir,
				  strerror(e));
	}
	while ((de = readdir(d))) {
		char *rel, *abs;
		struct stat st;

		if (de->d_name[0] == '.')
			continue;
		rel = kopt_xstrfmt("%s/%s", dir, de->d_name);
		abs = kopt_xstrfmt("%s%s", top, rel);
		if (!stat(abs, &st)) {
			if (S_ISDIR(st.st_mode))
				ret = wt_list_dir(top, rel, out);
			else if (S_ISREG(st.st_mode))
				kopt_strvec_push(out, rel);
		}
		free(rel);
		free(abs);
		if (ret)
			break;
	}
	closedir(d);
	free(full);
	return ret;
}

static int wt_list(void *data, const char *dir, struct kopt_strvec *out)
{
	int ret = wt_list_dir(data, dir, out);

	kopt_strvec_sort(out);
	return ret;
}

void kopt_kb_source_worktree(struct kopt_kb_source *out, const char *top)
{
	out->read = wt_read;
	out->list = wt_list;
	out->data = (void *)top;
}

/* Loading. */

static void add_catalog(struct kopt_kb *kb, const char *language,
			const char *path)
{
	struct kopt_kb_catalog *c;
	size_t i;

	for (i = 0; i < kb->catalogs_nr; i++)
		if ((!language && !kb->catalogs[i].language) ||
		    (language && kb->catalogs[i].language &&
		     !strcmp(language, kb->catalogs[i].language)))
			return;
	KOPT_ALLOC_GROW(kb->catalogs, kb->catalogs_nr + 1, kb->catalogs_alloc);
	c = &kb->catalogs[kb->catalogs_nr++];
	memset(c, 0, sizeof(*c));
	c->language = language ? kopt_strdup(language) : NULL;
	c->path = kopt_strdup(path);
}

static void add_language(struct kopt_kb *kb, const struct kopt_config *cfg,
			 const char *name)
{
	const struct kopt_language *l = kopt_config_language(cfg, name);
	char *path;

	if (l) {
		path = kopt_language_catalog_path(l);
	} else {
		struct kopt_language tmp = { 0 };
		tmp.name = (char *)name;
		path = kopt_language_catalog_path(&tmp);
	}
	add_catalog(kb, name, path);
	free(path);
}

static size_t catalog_index(const struct kopt_kb *kb, const char *language)
{
	size_t i;

	for (i = 0; i < kb->catalogs_nr; i++)
		if ((!language && !kb->catalogs[i].language) ||
		    (language && kb->catalogs[i].language &&
		     !strcmp(language, kb->catalogs[i].language)))
			return i;
	return (size_t)-1;
}

/* Every language named by a folder or a catalog file. */
static int find_languages(struct kopt_kb *kb, const struct kopt_kb_source *src,
			  const struct kopt_config *cfg, const char *root)
{
	struct kopt_strvec files = KOPT_STRVEC_INIT;
	char *langdir = kopt_xstrfmt("%s/languages", root);
	size_t i, n = strlen(langdir);
	int ret;

	ret = src->list(src->data, langdir, &files);
	for (i = 0; !ret && i < files.nr; i++) {
		const char *rest = files.v[i] + n + 1;
		const char *slash = strchr(rest, '/');
		char *name;
		if (!slash)
			continue;
		name = kopt_strndup(rest, (size_t)(slash - rest));
		if (kopt_valid_name(name))
			add_language(kb, cfg, name);
		free(name);
	}
	kopt_strvec_clear(&files);
	if (!ret)
		ret = src->list(src->data, ".claude/skills", &files);
	for (i = 0; !ret && i < files.nr; i++) {
		const char *name;
		char *lang;
		if (!kopt_skip_prefix(files.v[i],
				      ".claude/skills/optimization-catalog-",
				      &name) ||
		    !kopt_ends_with(name, "/SKILL.md"))
			continue;
		lang = kopt_strndup(name, strlen(name) - 9);
		if (kopt_valid_name(lang) && !strchr(lang, '/'))
			add_language(kb, cfg, lang);
		free(lang);
	}
	kopt_strvec_clear(&files);
	free(langdir);
	return ret;
}

struct claim {
	char *path;
	size_t detail;          /* index into kb->details, or -1 */
	const char *by_id;      /* the first row that names it */
	const char *by_file;
	int by_line;
};

struct loader {
	struct kopt_kb *kb;
	const struct kopt_kb_source *src;
	struct claim *claims;
	size_t claims_nr, claims_alloc;
	/* entries under construction: indices, resolved at the end */
	struct pending {
		enum kopt_kind kind;
		size_t catalog, row, claim;   /* -1 when none */
	} *pend;
	size_t pend_nr, pend_alloc;
	/* claims and details by path (a catalog may have 10,000 rows) */
	struct path_index {
		size_t *slot;           /* index + 1; 0: empty */
		size_t cap, nr;
	} claim_ix, detail_ix;
};

static size_t path_hash(const char *s)
{
	size_t h = 14695981039346656037ULL;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return h;
}

/* The slot of `path` in `ix`: where it is, or the empty one to put it. */
static size_t *path_slot(const struct path_index *ix, const char *path,
			 const char *(*key)(const struct loader *, size_t),
			 const struct loader *ld)
{
	size_t i = path_hash(path) & (ix->cap - 1);

	while (ix->slot[i] && strcmp(key(ld, ix->slot[i] - 1), path))
		i = (i + 1) & (ix->cap - 1);
	return &ix->slot[i];
}

static void path_index_add(struct path_index *ix, size_t idx,
			   const char *(*key)(const struct loader *, size_t),
			   const struct loader *ld)
{
	if (2 * (ix->nr + 1) > ix->cap) {
		struct path_index bigger = { NULL, ix->cap ? 2 * ix->cap : 64, 0 };
		size_t i;

		bigger.slot = kopt_calloc(bigger.cap, sizeof(*bigger.slot));
		for (i = 0; i < ix->cap; i++)
			if (ix->slot[i])
				*path_slot(&bigger, key(ld, ix->slot[i] - 1),
					   key, ld) = ix->slot[i];
		bigger.nr = ix->nr;
		free(ix->slot);
		*ix = bigger;
	}
	*path_slot(ix, key(ld, idx), key, ld) = idx + 1;
	ix->nr++;
}

static const char *claim_key(const struct loader *ld, size_t i)
{
	return ld->claims[i].path;
}

static const char *detail_key(const struct loader *ld, size_t i)
{
	return ld->kb->details[i].path;
}

static struct claim *find_claim(struct loader *ld, const char *path)
{
	size_t *slot;

	if (!ld->claim_ix.nr)
		return NULL;
	slot = path_slot(&ld->claim_ix, path, claim_key, ld);
	return *slot ? &ld->claims[*slot - 1] : NULL;
}

/* A claim for `path`, just made: now found by find_claim(). */
static struct claim *new_claim(struct loader *ld, const char *path)
{
	struct claim *cl;

	KOPT_ALLOC_GROW(ld->claims, ld->claims_nr + 1, ld->claims_alloc);
	cl = &ld->claims[ld->claims_nr++];
	memset(cl, 0, sizeof(*cl));
	cl->path = kopt_strdup(path);
	path_index_add(&ld->claim_ix, ld->claims_nr - 1, claim_key, ld);
	return cl;
}

/* Read and parse a detail file once; its index, or -1 if unreadable. */
static size_t load_detail(struct loader *ld, const char *path, int *missing)
{
	struct kopt_kb *kb = ld->kb;
	struct kopt_buf text = KOPT_BUF_INIT;
	size_t i;
	int ret;

	*missing = 0;
	if (ld->detail_ix.nr) {
		size_t *slot = path_slot(&ld->detail_ix, path, detail_key, ld);
		if (*slot)
			return *slot - 1;
	}
	ret = ld->src->read(ld->src->data, path, &text);
	if (ret) {
		*missing = ret == KOPT_ENOTFOUND;
		kopt_buf_release(&text);
		return (size_t)-1;
	}
	KOPT_ALLOC_GROW(kb->details, kb->details_nr + 1, kb->details_alloc);
	kopt_detail_parse(&kb->details[kb->details_nr], path, text.buf,
			  text.len, &kb->problems);
	kopt_buf_release(&text);
	i = kb->details_nr++;
	if (kb->details[i].path)
		path_index_add(&ld->detail_ix, i, detail_key, ld);
	return i;
}

static void add_pending(struct loader *ld, enum kopt_kind kind,
			size_t catalog, size_t row, size_t claim)
{
	KOPT_ALLOC_GROW(ld->pend, ld->pend_nr + 1, ld->pend_alloc);
	ld->pend[ld->pend_nr].kind = kind;
	ld->pend[ld->pend_nr].catalog = catalog;
	ld->pend[ld->pend_nr].row = row;
	ld->pend[ld->pend_nr].claim = claim;
	ld->pend_nr++;
}

static void learn_hint(struct kopt_buf *out, enum kopt_kind kind,
		       const char *language, const char *name)
{
	kopt_buf_addf(out, "git kopt learn new %s %s", kopt_kind_name(kind),
		      name);
	if (language)
		kopt_buf_addf(out, " --language %s", language);
}

/*
 * Whether a row sits where its detail file says it belongs (its kind's
 * index, in the shared catalog or its language's).  Such rows claim
 * their files first, so that a stray row elsewhere is the one blamed.
 */
static int row_in_place(const struct kopt_kb *kb,
			const struct kopt_kb_catalog *c,
			const struct kopt_catalog_row *r)
{
	char *path, *alt = NULL, *lang = NULL, *name = NULL;
	enum kopt_kind kind;
	int ok = 0;

	path = kopt_catalog_detail_path(&c->cat, r, &alt);
	if (path && (!kopt_knowledge_locate(kb->root, path, &kind, &lang,
					    &name) ||
		     (alt && !kopt_knowledge_locate(kb->root, alt, &kind,
						    &lang, &name))))
		ok = kind == r->kind &&
		     (lang == NULL) == (c->language == NULL) &&
		     (!lang || !strcmp(lang, c->language));
	free(path);
	free(alt);
	free(lang);
	free(name);
	return ok;
}

static int by_position(const void *a_, const void *b_)
{
	const struct pending *a = a_, *b = b_;

	if (a->catalog != b->catalog)
		return a->catalog < b->catalog ? -1 : 1;
	if (a->row != b->row)
		return a->row < b->row ? -1 : 1;
	return 0;
}

/* A row whose detail file lives somewhere its catalog does not index. */
static void check_place(struct kopt_kb *kb, const struct kopt_kb_catalog *c,
			const struct kopt_catalog_row *r, const char *path,
			int ret, enum kopt_kind kind, const char *lang)
{
	const char *id = r->cell[KOPT_COL_ID];

	if (ret == KOPT_ENOTFOUND) {
		kopt_problems_add(&kb->problems, c->path, r->line,
				  "%s: detail file '%s' is not under '%s'",
				  id, path, kb->root);
	} else if (ret) {
		struct kopt_buf why = KOPT_BUF_INIT;
		kopt_knowledge_misplaced(&why, kb->root, path);
		kopt_problems_add(&kb->problems, c->path, r->line,
				  "%s: detail file '%s' is %s", id, path,
				  why.buf);
		kopt_buf_release(&why);
	} else if (kind != r->kind) {
		kopt_problems_add(&kb->problems, c->path, r->line,
				  "%s: '%s' is an %s file (under %s/) but "
				  "sits in the %s index", id, path,
				  kopt_kind_name(kind), kopt_kind_dir(kind),
				  kopt_kind_name(r->kind));
	} else if ((lang == NULL) != (c->language == NULL) ||
		   (lang && strcmp(lang, c->language))) {
		size_t want = catalog_index(kb, lang);
		const char *wpath = want != (size_t)-1 ?
				    kb->catalogs[want].path : NULL;
		if (lang)
			kopt_problems_add(&kb->problems, c->path, r->line,
					  "%s: '%s' is specific to language "
					  "'%s'; its row belongs in %s", id,
					  path, lang, wpath ? wpath :
					  "that language's catalog");
		else
			kopt_problems_add(&kb->problems, c->path, r->line,
					  "%s: '%s' is shared knowledge; its "
					  "row belongs in %s", id, path,
					  kb->catalogs[0].path);
	}
}

/*
 * The catalog's Trigger Conditions repeat the detail file's triggers for
 * readers of the catalog; each must be one of the file's conditions.
 */
static void check_triggers(struct kopt_kb *kb, const struct kopt_kb_catalog *c,
			   const struct kopt_catalog_row *r,
			   const struct kopt_detail *d)
{
	struct kopt_strvec have = KOPT_STRVEC_INIT, want = KOPT_STRVEC_INIT;
	size_t i, j;

	if (!r->triggers_nr || !d->triggers_nr)
		return;
	for (i = 0; i < d->triggers_nr; i++)
		kopt_trigger_conjuncts(&d->triggers[i], &have);
	for (i = 0; i < r->triggers_nr; i++) {
		kopt_strvec_clear(&want);
		kopt_trigger_conjuncts(&r->triggers[i], &want);
		for (j = 0; j < want.nr; j++)
			if (!kopt_strvec_has(&have, want.v[j]))
				break;
		if (j < want.nr)
			kopt_problems_add(&kb->problems, c->path, r->line,
					  "%s: trigger `%s` is not among the "
					  "triggers of '%s'; make them agree",
					  r->cell[KOPT_COL_ID],
					  r->triggers[i].text, d->path);
	}
	kopt_strvec_clear(&have);
	kopt_strvec_clear(&want);
}

static void check_row(struct loader *ld, size_t ci, size_t ri)
{
	struct kopt_kb *kb = ld->kb;
	const struct kopt_kb_catalog *c = &kb->catalogs[ci];
	const struct kopt_catalog_row *r = &c->cat.rows[ri];
	const char *id = r->cell[KOPT_COL_ID];
	struct kopt_buf why = KOPT_BUF_INIT, hint = KOPT_BUF_INIT;
	char *path, *alt = NULL, *lang = NULL, *name = NULL;
	enum kopt_kind kind;
	struct claim *cl;
	size_t claim = (size_t)-1;
	int missing, ret;

	path = kopt_catalog_detail_path(&c->cat, r, &alt);
	if (!path) {
		if (r->detail && *r->detail)
			kopt_problems_add(&kb->problems, c->path, r->line,
					  "%s: detail file '%s' is not a path "
					  "in the repository", id, r->detail);
		goto done;
	}
	if (alt && strcmp(alt, path)) {
		int m1, m2;
		/* a link read from the top, when that is what exists */
		if (load_detail(ld, path, &m1) == (size_t)-1 && m1 &&
		    load_detail(ld, alt, &m2) != (size_t)-1) {
			free(path);
			path = alt;
			alt = NULL;
		}
	}
	ret = kopt_knowledge_locate(kb->root, path, &kind, &lang, &name);
	cl = find_claim(ld, path);
	if (cl && cl->by_id) {
		kopt_problems_add(&kb->problems, c->path, r->line,
				  "%s: detail file '%s' already has a row (%s, "
				  "%s:%d); a detail file has exactly one",
				  id, path, cl->by_id, cl->by_file,
				  cl->by_line);
		check_place(kb, c, r, path, ret, kind, lang);
		goto done;
	}
	if (!cl) {
		cl = new_claim(ld, path);
		cl->detail = load_detail(ld, path, &missing);
	} else {
		missing = cl->detail == (size_t)-1;
	}
	cl->by_id = id;
	cl->by_file = c->path;
	cl->by_line = r->line;
	claim = (size_t)(cl - ld->claims);
	if (cl->detail == (size_t)-1 && missing) {
		if (ret == 0)
			learn_hint(&hint, kind, lang, name);
		kopt_problems_add(&kb->problems, c->path, r->line,
				  "%s: detail file '%s' does not exist%s%s%s",
				  id, path,
				  hint.len ? "; create it with '" : "",
				  hint.buf, hint.len ? "'" : "");
	}
	check_place(kb, c, r, path, ret, kind, lang);
	if (cl->detail != (size_t)-1)
		check_triggers(kb, c, r, &kb->details[cl->detail]);
done:
	add_pending(ld, r->kind, ci, ri, claim);
	kopt_buf_release(&why);
	kopt_buf_release(&hint);
	free(path);
	free(alt);
	free(lang);
	free(name);
}

static int in_scope(const char *only, const char *lang)
{
	return !only || !lang || !strcmp(only, lang);
}

static void check_files(struct loader *ld, const struct kopt_strvec *files,
			const char *only)
{
	struct kopt_kb *kb = ld->kb;
	struct kopt_buf why = KOPT_BUF_INIT, hint = KOPT_BUF_INIT;
	size_t i;

	for (i = 0; i < files->nr; i++) {
		const char *path = files->v[i], *base = strrchr(path, '/');
		char *lang = NULL, *name = NULL;
		enum kopt_kind kind;
		struct claim *cl;
		size_t ci;
		int ret, missing;

		base = base ? base + 1 : path;
		if (!kopt_ends_with(path, ".md") ||
		    !strcasecmp(base, "README.md"))
			continue;
		ret = kopt_knowledge_locate(kb->root, path, &kind, &lang,
					    &name);
		if (ret) {
			if (only == NULL) {
				kopt_buf_reset(&why);
				kopt_knowledge_misplaced(&why, kb->root, path);
				kopt_problems_add(&kb->problems, path, 0,
						  "detail file in the wrong "
						  "folder: %s", why.buf);
			}
			goto next;
		}
		if (!in_scope(only, lang))
			goto next;
		cl = find_claim(ld, path);
		if (cl && cl->by_id)
			goto next;
		/* a detail file no row names */
		cl = new_claim(ld, path);
		cl->detail = load_detail(ld, path, &missing);
		ci = catalog_index(kb, lang);
		kopt_buf_reset(&hint);
		learn_hint(&hint, kind, lang, name);
		kopt_problems_add(&kb->problems, path, 0, "no row in the %s "
				  "index of %s; add one ('%s' adds it)",
				  kopt_kind_name(kind),
				  ci != (size_t)-1 ? kb->catalogs[ci].path :
				  "its catalog", hint.buf);
		add_pending(ld, kind, ci, (size_t)-1, ld->claims_nr - 1);
next:
		free(lang);
		free(name);
	}
	kopt_buf_release(&why);
	kopt_buf_release(&hint);
}

int kopt_kb_load(struct kopt_kb *kb, const struct kopt_kb_source *src,
		 const struct kopt_config *cfg, const char *language)
{
	struct loader ld = { kb, src, NULL, 0, 0, NULL, 0, 0,
			     { NULL, 0, 0 }, { NULL, 0, 0 } };
	struct kopt_strvec files = KOPT_STRVEC_INIT;
	struct kopt_buf text = KOPT_BUF_INIT;
	size_t i, j;
	int ret = 0, pass;

	memset(kb, 0, sizeof(*kb));
	kopt_strvec_init(&kb->paths);
	kb->root = kopt_strdup(cfg->knowledge ? cfg->knowledge :
			       KOPT_DEFAULT_KNOWLEDGE);
	while (kb->root[0] && kopt_ends_with(kb->root, "/"))
		kb->root[strlen(kb->root) - 1] = '\0';
	add_catalog(kb, NULL, cfg->catalog ? cfg->catalog :
		    KOPT_DEFAULT_CATALOG);
	if (language) {
		add_language(kb, cfg, language);
	} else {
		for (i = 0; i < cfg->languages_nr; i++)
			add_language(kb, cfg, cfg->languages[i].name);
		if ((ret = find_languages(kb, src, cfg, kb->root)))
			goto done;
	}

	for (i = 0; i < kb->catalogs_nr; i++) {
		struct kopt_kb_catalog *c = &kb->catalogs[i];
		ret = src->read(src->data, c->path, &text);
		if (ret == KOPT_ENOTFOUND) {
			ret = 0;
			if (!c->language)
				kopt_problems_add(&kb->problems, c->path, 0,
						  "the shared catalog does not "
						  "exist; run 'git kopt init'");
			kopt_catalog_parse(&c->cat, c->path, "", 0,
					   &kb->problems);
			continue;
		}
		if (ret)
			goto done;
		c->exists = 1;
		kopt_catalog_parse(&c->cat, c->path, text.buf, text.len,
				   &kb->problems);
	}
	for (pass = 1; pass >= 0; pass--) {
		for (i = 0; i < kb->catalogs_nr; i++) {
			const struct kopt_kb_catalog *c = &kb->catalogs[i];
			for (j = 0; j < c->cat.rows_nr; j++)
				if (row_in_place(kb, c, &c->cat.rows[j]) ==
				    pass)
					check_row(&ld, i, j);
		}
	}
	if ((ret = src->list(src->data, kb->root, &files)))
		goto done;
	check_files(&ld, &files, language);
	/* back in catalog order, files without a row after the rows */
	if (ld.pend_nr > 1)
		qsort(ld.pend, ld.pend_nr, sizeof(*ld.pend), by_position);

	/* every array is final: resolve the entries */
	for (i = 0; i < ld.pend_nr; i++) {
		struct pending *p = &ld.pend[i];
		struct kopt_kb_entry *e;
		const struct claim *cl = p->claim != (size_t)-1 ?
					 &ld.claims[p->claim] : NULL;

		KOPT_ALLOC_GROW(kb->entries, kb->entries_nr + 1,
				kb->entries_alloc);
		e = &kb->entries[kb->entries_nr++];
		memset(e, 0, sizeof(*e));
		e->kind = p->kind;
		if (p->catalog != (size_t)-1) {
			e->catalog = &kb->catalogs[p->catalog];
			e->language = e->catalog->language;
			if (p->row != (size_t)-1)
				e->row = &e->catalog->cat.rows[p->row];
		}
		if (cl) {
			e->path = kopt_strvec_push(&kb->paths, cl->path);
			if (cl->detail != (size_t)-1)
				e->detail = &kb->details[cl->detail];
		}
	}
	kopt_problems_sort(&kb->problems);
done:
	for (i = 0; i < ld.claims_nr; i++)
		free(ld.claims[i].path);
	free(ld.claims);
	free(ld.pend);
	free(ld.claim_ix.slot);
	free(ld.detail_ix.slot);
	kopt_strvec_clear(&files);
	kopt_buf_release(&text);
	return ret;
}

void kopt_kb_release(struct kopt_kb *kb)
{
	size_t i;

	for (i = 0; i < kb->catalogs_nr; i++) {
		free(kb->catalogs[i].language);
		free(kb->catalogs[i].path);
		kopt_catalog_release(&kb->catalogs[i].cat);
	}
	free(kb->catalogs);
	for (i = 0; i < kb->details_nr; i++)
		kopt_detail_release(&kb->details[i]);
	free(kb->details);
	free(kb->entries);
	kopt_strvec_clear(&kb->paths);
	kopt_problems_clear(&kb->problems);
	free(kb->root);
	memset(kb, 0, sizeof(*kb));
}

const struct kopt_kb_catalog *kopt_kb_catalog(const struct kopt_kb *kb,
					      const char *language)
{
	size_t i = catalog_index(kb, language);

	return i == (size_t)-1 ? NULL : &kb->catalogs[i];
}

const struct kopt_kb_entry *kopt_kb_find(const struct kopt_kb *kb,
					 const char *path)
{
	size_t i;

	for (i = 0; i < kb->entries_nr; i++)
		if (kb->entries[i].path && !strcmp(kb->entries[i].path, path))
			return &kb->entries[i];
	return NULL;
}

const struct kopt_trigger *kopt_kb_entry_triggers(const struct kopt_kb_entry *e,
						  size_t *nr)
{
	if (e->detail && e->detail->triggers_nr) {
		*nr = e->detail->triggers_nr;
		return e->detail->triggers;
	}
	if (e->row && e->row->triggers_nr) {
		*nr = e->row->triggers_nr;
		return e->row->triggers;
	}
	*nr = 0;
	return NULL;
}

void kopt_kb_entry_id(struct kopt_buf *out, const struct kopt_kb_entry *e)
{
	if (!e->row) {
		kopt_buf_addstr(out, "-");
		return;
	}
	if (e->language)
		kopt_buf_addf(out, "%s/", e->language);
	kopt_buf_addstr(out, e->row->cell[KOPT_COL_ID]);
}

const char *kopt_kb_entry_name(const struct kopt_kb_entry *e)
{
	if (e->row && e->row->cell[KOPT_COL_NAME] &&
	    *e->row->cell[KOPT_COL_NAME])
		return e->row->cell[KOPT_COL_NAME];
	if (e->detail && e->detail->name)
		return e->detail->name;
	return e->path ? e->path : "?";
}

static void warn_spans(struct kopt_problems *out,
		       const struct kopt_problems *prose)
{
	size_t i;

	for (i = 0; i < prose->nr; i++) {
		const struct kopt_problem *p = &prose->v[i];
		struct kopt_error_catch why = KOPT_ERROR_CATCH_INIT;
		struct kopt_trigger t;
		int ret;
		if (!strpbrk(p->what, "<>=!"))
			continue;
		kopt_error_catch(&why);
		ret = kopt_trigger_parse(&t, p->what, p->file, p->line);
		kopt_error_uncatch(&why);
		if (!ret)
			kopt_trigger_release(&t);
		else
			kopt_problems_add(out, p->file, p->line, "trigger `%s` "
					  "is read as prose for the agent to "
					  "judge: %s", p->what, why.cause.buf);
		kopt_error_catch_release(&why);
	}
}

void kopt_kb_prose_warnings(const struct kopt_kb *kb,
			    struct kopt_problems *out)
{
	size_t i, j;

	for (i = 0; i < kb->catalogs_nr; i++)
		for (j = 0; j < kb->catalogs[i].cat.rows_nr; j++)
			warn_spans(out, &kb->catalogs[i].cat.rows[j].prose);
	for (i = 0; i < kb->details_nr; i++)
		warn_spans(out, &kb->details[i].prose);
	kopt_problems_sort(out);
}

void kopt_kb_entry_prose(struct kopt_buf *out, const struct kopt_kb_entry *e)
{
	const char *cell = e->row ? e->row->cell[KOPT_COL_TRIGGER] : NULL;
	size_t i;

	if (cell && *cell) {
		kopt_buf_addstr(out, cell);
		return;
	}
	for (i = 0; e->detail && i < e->detail->contexts.nr; i++)
		kopt_buf_addf(out, "%s%s", i ? "; " : "",
			      e->detail->contexts.v[i]);
}

void kopt_kb_sync_warnings(const struct kopt_kb *kb, struct kopt_problems *out)
{
	size_t i;
	int c;

	for (i = 0; i < kb->entries_nr; i++) {
		const struct kopt_kb_entry *e = &kb->entries[i];
		struct kopt_buf cols = KOPT_BUF_INIT, id = KOPT_BUF_INIT;
		char *cells[KOPT_COL_NR];

		if (!e->row || !e->detail || !e->catalog)
			continue;
		kopt_catalog_cells_from_detail(cells, e->detail, e->kind);
		for (c = 0; c < KOPT_COL_NR; c++) {
			if (cells[c] && !kopt_catalog_cell_agrees(e->row, c,
						e->detail, cells[c], 0))
				kopt_buf_addf(&cols, "%s%s", cols.len ?
					      ", " : "", c == KOPT_COL_NAME ? "name" :
					      kopt_catalog_col_title(e->kind, c));
			free(cells[c]);
		}
		kopt_kb_entry_id(&id, e);
		if (cols.len)
			kopt_problems_add(out, e->catalog->path, e->row->line,
					  "%s: %s disagree%s with '%s'; 'git "
					  "kopt learn sync %s' copies the "
					  "file's", e->row->cell[KOPT_COL_ID],
					  cols.buf, strchr(cols.buf, ',') ?
					  "" : "s", e->path, id.buf);
		kopt_buf_release(&cols);
		kopt_buf_release(&id);
	}
	kopt_problems_sort(out);
}
