#include "hooks.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "catalog.h"
#include "changes.h"
#include "devlog.h"
#include "error.h"
#include "knowledge.h"
#include "learn.h"
#include "md.h"
#include "problem.h"
#include "progress.h"
#include "repo.h"
#include "trailers.h"
#include "results.h"
#include "verdict.h"
#include "paths.h"
#include "banned.h"

/*
 * The rules read Markdown through lib/devlog, lib/catalog, lib/knowledge
 * and lib/md only.  The gate stays fast by reading no more than the
 * staged change needs: a devlog is parsed only when it changed or a
 * violation needs a name from it.
 */

enum kind {
	KIND_NONE = 0,
	KIND_OPTIMIZATION,
	KIND_ANTI_PATTERN,
};

struct change {
	char *path;
	char status;            /* 'A', 'M' or 'D' */
};

struct row {
	char *catalog;
	int line;
	enum kind kind;
	char *id;
	char *target;           /* as written */
	char *detail;           /* resolved, or NULL when it names nothing */
	char *wanted;           /* resolved from the catalog, there or not */
};

struct loaded {
	char *path;
	int side;               /* 0: snapshot, 1: base */
	int ret;                /* 0, KOPT_ENOTFOUND or KOPT_EINVALID */
	char *err;
	struct kopt_results m;  /* the version's numbers (lib/numbers) */
	enum kopt_numbers_source source;
};

/* A devlog as one side has it, parsed once per gate. */
struct side_devlog {
	char *kernel;
	int side;
	int ok;                 /* parsed; 0: missing or broken */
	struct kopt_devlog dl;
};

struct ctx {
	struct kopt_gate *g;
	const char *kroot;      /* knowledge root, no trailing '/' */
	struct kopt_strvec catalogs;
	struct change *changes;
	size_t changes_nr, changes_alloc;
	struct kopt_trailers trailers;
	struct row *rows;
	size_t rows_nr, rows_alloc;
	int rows_loaded;
	struct kopt_strvec catalog_problems;
	struct loaded *loaded;
	size_t loaded_nr, loaded_alloc;
	struct side_devlog *devlogs;
	size_t devlogs_nr, devlogs_alloc;
};

/* ---- violations ---- */

static struct kopt_violation *add(struct ctx *c, const char *rule,
				  const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static struct kopt_violation *add(struct ctx *c, const char *rule,
				  const char *fmt, ...)
{
	struct kopt_gate *g = c->g;
	struct kopt_violation *v;
	struct kopt_buf sb = KOPT_BUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	kopt_buf_vaddf(&sb, fmt, ap);
	va_end(ap);
	KOPT_ALLOC_GROW(g->violations, g->nr + 1, g->alloc);
	v = &g->violations[g->nr++];
	v->rule = rule;
	v->what = kopt_buf_detach(&sb, NULL);
	kopt_strvec_init(&v->fix);
	v->hint = NULL;
	return v;
}

/* ---- content ---- */

static int snap_read(struct ctx *c, const char *path, struct kopt_buf *out)
{
	if (c->g->index)
		return kopt_index_read(out, c->g->repo, c->g->index, path);
	return kopt_repo_read_tree(out, c->g->repo, c->g->tree, path);
}

static int base_read(struct ctx *c, const char *path, struct kopt_buf *out)
{
	if (!c->g->base)
		return KOPT_ENOTFOUND;
	return kopt_repo_read_tree(out, c->g->repo, c->g->base, path);
}

static int side_read(struct ctx *c, int side, const char *path,
		     struct kopt_buf *out)
{
	return side ? base_read(c, path, out) : snap_read(c, path, out);
}

static int snap_has(struct ctx *c, const char *path)
{
	git_tree_entry *e = NULL;
	int ret;

	if (c->g->index) {
		struct kopt_index_entry ie;
		return !kopt_index_find(&ie, c->g->index, path) &&
		       !ie.intent_to_add;
	}
	ret = !git_tree_entry_bypath(&e, c->g->tree, path) &&
	      git_tree_entry_type(e) == GIT_OBJECT_BLOB;
	git_tree_entry_free(e);
	git_error_clear();
	return ret;
}

static int collect_change(char status, const char *path, void *payload)
{
	struct ctx *c = payload;
	struct change *ch;

	KOPT_ALLOC_GROW(c->changes, c->changes_nr + 1, c->changes_alloc);
	ch = &c->changes[c->changes_nr++];
	ch->status = status;
	ch->path = kopt_strdup(path);
	return 0;
}

/*
 * The changes under the paths the rules read (lib/changes walks only
 * the directories whose tree ids differ, so the kernels' sources, most
 * of a repository, are never visited).
 */
static int load_changes(struct ctx *c)
{
	struct kopt_strvec specs = KOPT_STRVEC_INIT;
	size_t i;
	int ret;

	kopt_strvec_push(&specs, KOPT_KERNELS_DIR);
	kopt_strvec_pushf(&specs, "%s/", c->kroot);
	for (i = 0; i < c->catalogs.nr; i++)
		kopt_strvec_push(&specs, c->catalogs.v[i]);
	kopt_strvec_push(&specs, ".kopt");
	if (c->g->index)
		ret = kopt_changes_index(c->g->repo, c->g->base, c->g->index,
					 &specs, collect_change, c);
	else
		ret = kopt_changes_trees(c->g->repo, c->g->base, c->g->tree,
					 &specs, collect_change, c);
	kopt_strvec_clear(&specs);
	return ret;
}

/* ---- paths ---- */

/*
 * The kind of a knowledge detail file, from where it lies (lib/knowledge
 * knows the folders).  A README.md describes a folder and is no detail
 * file.
 */
static enum kind detail_kind(const struct ctx *c, const char *path)
{
	const char *base = strrchr(path, '/');
	enum kopt_kind kind;
	char *language = NULL, *name = NULL;
	int ret;

	if (base && !strcasecmp(base + 1, "README.md"))
		return KIND_NONE;
	ret = kopt_knowledge_locate(c->kroot, path, &kind, &language, &name);
	free(language);
	free(name);
	if (ret)
		return KIND_NONE;
	return kind == KOPT_KIND_ANTI_PATTERN ? KIND_ANTI_PATTERN :
	       KIND_OPTIMIZATION;
}

/* Resolve "a/b/../c/./d" in place; 0, or -1 when it climbs above the top. */
static int normalize(struct kopt_buf *path)
{
	struct kopt_strvec parts = KOPT_STRVEC_INIT;
	char *copy = kopt_strdup(path->buf), *p = copy, *slash;
	size_t i;
	int ret = 0;

	while (p) {
		slash = strchr(p, '/');
		if (slash)
			*slash = '\0';
		if (!*p || !strcmp(p, ".")) {
			/* nothing */
		} else if (!strcmp(p, "..")) {
			if (!parts.nr) {
				ret = -1;
				break;
			}
			kopt_strvec_pop(&parts);
		} else {
			kopt_strvec_push(&parts, p);
		}
		p = slash ? slash + 1 : NULL;
	}
	kopt_buf_reset(path);
	for (i = 0; i < parts.nr; i++)
		kopt_buf_addf(path, "%s%s", i ? "/" : "", parts.v[i]);
	kopt_strvec_clear(&parts);
	free(copy);
	return ret;
}

/*
 * A link target written in file `from`: relative to that file's folder
 * first, then to the top of the repository.  The existing path, or NULL.
 */
static char *resolve_link(struct ctx *c, const char *from, const char *target,
			  size_t len)
{
	struct kopt_buf sb = KOPT_BUF_INIT;
	const char *slash = strrchr(from, '/');
	const char *hash = memchr(target, '#', len);
	int pass;

	if (hash)
		len = (size_t)(hash - target);
	if (!len || memmem(target, len, "://", 3))
		return NULL;
	for (pass = 0; pass < 2; pass++) {
		kopt_buf_reset(&sb);
		if (pass == 0 && slash && *target != '/')
			kopt_buf_add(&sb, from, (size_t)(slash - from + 1));
		kopt_buf_add(&sb, target, len);
		if (!normalize(&sb) && sb.len && snap_has(c, sb.buf))
			return kopt_buf_detach(&sb, NULL);
	}
	kopt_buf_release(&sb);
	return NULL;
}

/* ---- devlogs (lib/devlog reads them) ---- */

static int parse_devlog(struct kopt_devlog *out, const char *path,
			const char *text, size_t len, struct kopt_buf *err)
{
	struct kopt_error_catch caught = KOPT_ERROR_CATCH_INIT;
	int ret;

	kopt_error_catch(&caught);
	ret = kopt_devlog_parse(out, text, len, path);
	kopt_error_uncatch(&caught);
	if (ret && err)
		kopt_buf_addstr(err, caught.text.len ? caught.text.buf : path);
	kopt_error_catch_release(&caught);
	return ret ? KOPT_EINVALID : 0;
}

/*
 * Parse the devlog of `kernel` from the snapshot (side 0) or the base
 * (side 1).  0, KOPT_ENOTFOUND, or KOPT_EINVALID with the reason in `err`
 * (may be NULL): a broken devlog is a violation, never a message.
 */
static int side_devlog(struct ctx *c, int side, const char *kernel,
		       struct kopt_devlog *out, struct kopt_buf *err)
{
	struct kopt_buf path = KOPT_BUF_INIT, text = KOPT_BUF_INIT;
	int ret;

	kopt_path_devlog(&path, kernel);
	ret = side_read(c, side, path.buf, &text);
	if (!ret)
		ret = parse_devlog(out, path.buf, text.buf, text.len, err);
	else if (ret != KOPT_ENOTFOUND)
		ret = KOPT_EINVALID;
	kopt_buf_release(&path);
	kopt_buf_release(&text);
	return ret;
}

/* ---- catalogs (lib/catalog reads the index tables) ---- */

static void parse_catalog(struct ctx *c, const char *path, const char *text,
			  size_t len)
{
	struct kopt_catalog cat = KOPT_CATALOG_INIT;
	struct kopt_problems problems = KOPT_PROBLEMS_INIT;
	size_t i;

	kopt_catalog_parse(&cat, path, text, len, &problems);
	for (i = 0; i < cat.rows_nr; i++) {
		const struct kopt_catalog_row *r = &cat.rows[i];
		char *alt = NULL, *detail;
		struct row *row;

		detail = kopt_catalog_detail_path(&cat, r, &alt);
		KOPT_ALLOC_GROW(c->rows, c->rows_nr + 1, c->rows_alloc);
		row = &c->rows[c->rows_nr++];
		row->catalog = kopt_strdup(path);
		row->line = r->line;
		row->kind = r->kind == KOPT_KIND_ANTI_PATTERN ?
			    KIND_ANTI_PATTERN : KIND_OPTIMIZATION;
		row->id = kopt_strdup(r->cell[KOPT_COL_ID] ?
				      r->cell[KOPT_COL_ID] : "");
		row->target = kopt_strdup(r->detail ? r->detail : "");
		row->wanted = detail ? kopt_strdup(detail) : NULL;
		/* a link read from the catalog's folder, or from the top */
		if (detail && snap_has(c, detail)) {
			row->detail = detail;
			detail = NULL;
		} else if (alt && snap_has(c, alt)) {
			row->detail = alt;
			alt = NULL;
		} else {
			row->detail = NULL;
		}
		free(detail);
		free(alt);
	}
	/* the catalog's own problems: shape, IDs, cells */
	for (i = 0; i < problems.nr; i++)
		kopt_strvec_pushf(&c->catalog_problems, "%s:%d: %s",
				  problems.v[i].file, problems.v[i].line,
				  problems.v[i].what);
	kopt_problems_clear(&problems);
	kopt_catalog_release(&cat);
}

static void load_rows(struct ctx *c)
{
	struct kopt_buf text = KOPT_BUF_INIT;
	size_t i;

	if (c->rows_loaded)
		return;
	c->rows_loaded = 1;
	for (i = 0; i < c->catalogs.nr; i++) {
		kopt_buf_reset(&text);
		if (snap_read(c, c->catalogs.v[i], &text))
			continue;
		parse_catalog(c, c->catalogs.v[i], text.buf, text.len);
	}
	kopt_buf_release(&text);
}

static const struct row *row_for(struct ctx *c, const char *detail)
{
	size_t i;

	load_rows(c);
	for (i = 0; i < c->rows_nr; i++)
		if (c->rows[i].detail && !strcmp(c->rows[i].detail, detail))
			return &c->rows[i];
	return NULL;
}

/* A detail file of `kind` (KIND_NONE: any) added or changed, with its row. */
static int staged_knowledge(struct ctx *c, enum kind kind)
{
	size_t i;

	for (i = 0; i < c->changes_nr; i++) {
		enum kind k;
		if (c->changes[i].status == 'D')
			continue;
		k = detail_kind(c, c->changes[i].path);
		if (k == KIND_NONE || (kind != KIND_NONE && k != kind))
			continue;
		if (row_for(c, c->changes[i].path))
			return 1;
	}
	return 0;
}

/* ---- results and verdicts ---- */

/*
 * The devlog of `kernel` on one side, or NULL when it is missing or does
 * not parse (the devlog rule reports that; messages are not printed here).
 */
static const struct kopt_devlog *cached_devlog(struct ctx *c, int side,
					       const char *kernel)
{
	struct side_devlog *d;
	size_t i;

	for (i = 0; i < c->devlogs_nr; i++)
		if (c->devlogs[i].side == side &&
		    !strcmp(c->devlogs[i].kernel, kernel))
			return c->devlogs[i].ok ? &c->devlogs[i].dl : NULL;
	KOPT_ALLOC_GROW(c->devlogs, c->devlogs_nr + 1, c->devlogs_alloc);
	d = &c->devlogs[c->devlogs_nr++];
	memset(d, 0, sizeof(*d));
	d->dl = (struct kopt_devlog)KOPT_DEVLOG_INIT;
	d->kernel = kopt_strdup(kernel);
	d->side = side;
	d->ok = !side_devlog(c, side, kernel, &d->dl, NULL);
	return d->ok ? &d->dl : NULL;
}

static struct loaded *load_results(struct ctx *c, int side,
				   const char *kernel, const char *version)
{
	struct kopt_buf path = KOPT_BUF_INIT, text = KOPT_BUF_INIT;
	struct kopt_buf err = KOPT_BUF_INIT;
	struct loaded *l;
	size_t i;

	kopt_path_results(&path, kernel, version);
	for (i = 0; i < c->loaded_nr; i++)
		if (c->loaded[i].side == side &&
		    !strcmp(c->loaded[i].path, path.buf)) {
			kopt_buf_release(&path);
			return &c->loaded[i];
		}
	KOPT_ALLOC_GROW(c->loaded, c->loaded_nr + 1, c->loaded_alloc);
	l = &c->loaded[c->loaded_nr++];
	memset(l, 0, sizeof(*l));
	l->side = side;
	l->ret = side_read(c, side, path.buf, &text);
	if (!l->ret) {
		struct kopt_error_catch caught = KOPT_ERROR_CATCH_INIT;
		struct kopt_results init = KOPT_RESULTS_INIT;
		l->m = init;
		kopt_error_catch(&caught);
		l->ret = kopt_results_parse(&l->m, text.buf, text.len, path.buf,
					    kernel, version);
		kopt_error_uncatch(&caught);
		kopt_buf_addbuf(&err, &caught.text);
		kopt_error_catch_release(&caught);
		if (l->ret)
			l->ret = KOPT_EINVALID;
	} else if (l->ret != KOPT_ENOTFOUND) {
		kopt_buf_addf(&err, "cannot read '%s'", path.buf);
		l->ret = KOPT_EINVALID;
	}
	/* the numbers: the results file, else the devlog's blocks */
	if (!l->ret || l->ret == KOPT_ENOTFOUND) {
		struct kopt_results file = KOPT_RESULTS_INIT;
		const struct kopt_devlog *dl = NULL;
		int has_file = !l->ret;
		if (has_file) {
			file = l->m;
			l->m = (struct kopt_results)KOPT_RESULTS_INIT;
		}
		/*
		 * the devlog counts only when the file has no entries (the
		 * gate asks for no disagreements): spare its parse
		 */
		if (!has_file || !file.entries_nr)
			dl = cached_devlog(c, side, kernel);
		l->source = kopt_numbers_version(&l->m, has_file ? &file : NULL,
						 dl, kernel, version,
						 c->g->cfg, NULL);
		kopt_results_release(&file);
		if (l->ret == KOPT_ENOTFOUND && l->m.entries_nr)
			l->ret = 0;
	}
	if (l->ret == KOPT_EINVALID) {
		if (!err.len)
			kopt_buf_addf(&err, "cannot read results '%s'", path.buf);
		l->err = kopt_buf_detach(&err, NULL);
	}
	l->path = kopt_buf_detach(&path, NULL);
	kopt_buf_release(&text);
	kopt_buf_release(&err);
	return l;
}

/* The verdict of kernel/version on one side; *parent borrows its name. */
static enum kopt_verdict side_verdict(struct ctx *c, int side,
				      const char *kernel, const char *version,
				      struct kopt_verdicts *out,
				      const char **parent)
{
	struct loaded *child = load_results(c, side, kernel, version), *par;

	*parent = NULL;
	if (child->ret || !child->m.parent)
		return KOPT_VERDICT_NONE;
	*parent = child->m.parent;
	par = load_results(c, side, kernel, child->m.parent);
	if (par->ret)
		return KOPT_VERDICT_NONE;
	/* load_results may have moved the array: look the child up again */
	child = load_results(c, side, kernel, version);
	*parent = child->m.parent;
	kopt_verdict_compare(out, &par->m, &child->m, c->g->cfg->noise_pct);
	return out->overall;
}

static void describe_trials(struct kopt_buf *out,
			    const struct kopt_verdicts *v, enum kopt_verdict which)
{
	size_t i;
	int n = 0;

	for (i = 0; i < v->nr; i++) {
		const struct kopt_trial_verdict *t = &v->items[i];
		if (t->verdict != which)
			continue;
		kopt_buf_addf(out, "%s%s: %.2f us -> %.2f us, %+.1f%%",
			      n++ ? "; " : "",
			      t->trial ? t->trial : "ad hoc", t->parent_us,
			      t->child_us, t->change_pct);
		if (which == KOPT_VERDICT_REGRESSION ||
		    which == KOPT_VERDICT_IMPROVEMENT)
			kopt_buf_addf(out, " beyond the %.1f%% threshold",
				      t->threshold_pct);
	}
}

/* ---- names for the fixing commands ---- */

static void learn_fix(struct ctx *c, struct kopt_violation *v,
		      const char *what, const char *kernel,
		      const char *version, const char *fallback)
{
	struct kopt_buf name = KOPT_BUF_INIT;
	struct kopt_devlog dl = KOPT_DEVLOG_INIT;
	const char *dir = strcmp(what, "anti-pattern") ? "optimizations" :
			  "anti-patterns";
	int have = kernel && version && !side_devlog(c, 0, kernel, &dl, NULL);

	kopt_learn_suggest_name(&name, have ? &dl : NULL, kernel, version,
				fallback);
	kopt_devlog_release(&dl);
	kopt_strvec_pushf(&v->fix, "git kopt learn new %s %s --from %s/%s",
			  what, name.buf, kernel ? kernel : "<kernel>",
			  version ? version : "<version>");
	kopt_strvec_pushf(&v->fix, "git add %s/%s/%s.md %s", c->kroot, dir,
			  name.buf, c->catalogs.nr ? c->catalogs.v[0] :
			  KOPT_DEFAULT_CATALOG);
	v->hint = kopt_strdup("or, when there is nothing to learn, add the "
			      "trailer 'Kopt-Learn: skip <reason>' to the "
			      "message");
	kopt_buf_release(&name);
}

/* ---- rules: content ---- */

static void rule_results(struct ctx *c)
{
	size_t i;

	for (i = 0; i < c->changes_nr; i++) {
		char *kernel = NULL, *version = NULL;
		struct loaded *l;

		if (c->changes[i].status == 'D' ||
		    !kopt_path_is(KOPT_PATH_RESULTS, c->changes[i].path,
				  &kernel, &version))
			continue;
		l = load_results(c, 0, kernel, version);
		if (l->ret == KOPT_EINVALID) {
			struct kopt_violation *v = add(c, "results", "%s", l->err);
			kopt_strvec_pushf(&v->fix, "git kopt verify %s %s",
					  kernel, version);
		}
		free(kernel);
		free(version);
	}
}

/* The detail-file template, as lib/knowledge (and `learn lint`) reads it. */
static void check_detail(struct ctx *c, const char *path, const char *text,
			 size_t len)
{
	struct kopt_detail d = KOPT_DETAIL_INIT;
	struct kopt_problems problems = KOPT_PROBLEMS_INIT;
	size_t i;

	kopt_detail_parse(&d, path, text, len, &problems);
	for (i = 0; i < problems.nr; i++) {
		struct kopt_violation *v;
		if (problems.v[i].line)
			v = add(c, "knowledge", "%s:%d: %s", problems.v[i].file,
				problems.v[i].line, problems.v[i].what);
		else
			v = add(c, "knowledge", "%s: %s", problems.v[i].file,
				problems.v[i].what);
		v->hint = kopt_xstrfmt("edit %s where it says ('git kopt "
				       "learn lint' lists every problem)",
				       problems.v[i].file);
	}
	kopt_problems_clear(&problems);
	kopt_detail_release(&d);
}

static void rule_knowledge(struct ctx *c)
{
	struct kopt_buf text = KOPT_BUF_INIT;
	size_t i;

	for (i = 0; i < c->changes_nr; i++) {
		const char *path = c->changes[i].path;
		if (c->changes[i].status == 'D' ||
		    detail_kind(c, path) == KIND_NONE)
			continue;
		kopt_buf_reset(&text);
		if (snap_read(c, path, &text))
			continue;
		check_detail(c, path, text.buf, text.len);
	}
	kopt_buf_release(&text);
}

static int is_catalog(const struct ctx *c, const char *path)
{
	return kopt_strvec_has(&c->catalogs, path);
}

/*
 * `git kopt learn new <kind> <name> [--language <l>]` for a detail file
 * at `path` as the fix of `v`; 0 when the path is no detail file's.
 */
static int learn_new_fix(const struct ctx *c, struct kopt_violation *v,
			 const char *path)
{
	enum kopt_kind kind;
	char *language = NULL, *name = NULL;
	int ok = !kopt_knowledge_locate(c->kroot, path, &kind, &language,
					&name);

	if (ok)
		kopt_strvec_pushf(&v->fix, "git kopt learn new %s %s%s%s",
				  kopt_kind_name(kind), name,
				  language ? " --language " : "",
				  language ? language : "");
	free(language);
	free(name);
	return ok;
}

static void rule_catalog(struct ctx *c)
{
	size_t i;
	int touched = 0;

	for (i = 0; i < c->changes_nr; i++) {
		const char *path = c->changes[i].path;
		enum kind k = detail_kind(c, path);

		if (is_catalog(c, path) ||
		    (k != KIND_NONE && c->changes[i].status == 'D'))
			touched = 1;
		if (k == KIND_NONE || c->changes[i].status == 'D')
			continue;
		if (!row_for(c, path)) {
			struct kopt_violation *v;
			v = add(c, "catalog", "%s has no row in the %s index of "
				"the catalog", path, k == KIND_ANTI_PATTERN ?
				"anti-pattern" : "optimization");
			learn_new_fix(c, v, path);
			v->hint = kopt_xstrfmt("it writes the row from the file; "
					       "or add the row to '%s' by hand "
					       "(the Detail File column links "
					       "to it)", c->catalogs.nr ?
					       c->catalogs.v[0] :
					       KOPT_DEFAULT_CATALOG);
		}
	}
	if (!touched)
		return;
	load_rows(c);
	for (i = 0; i < c->catalog_problems.nr; i++) {
		const char *p = c->catalog_problems.v[i];
		size_t k;
		struct kopt_violation *v;
		/* only the catalogs this commit changes */
		for (k = 0; k < c->changes_nr; k++)
			if (c->changes[k].status != 'D' &&
			    kopt_starts_with(p, c->changes[k].path) &&
			    p[strlen(c->changes[k].path)] == ':')
				break;
		if (k == c->changes_nr)
			continue;
		v = add(c, "catalog", "%s", p);
		if (strstr(p, "template placeholder")) {
			kopt_strvec_push(&v->fix, "git kopt learn sync");
			v->hint = kopt_strdup("it fills the row from its detail "
					      "file once that is written; or "
					      "edit the row at that line");
		} else {
			v->hint = kopt_strdup("edit the catalog at that line as "
					      "it says");
		}
	}
	for (i = 0; i < c->rows_nr; i++) {
		const struct row *r = &c->rows[i];
		struct kopt_violation *v;
		if (!*r->target || r->detail)
			continue;
		v = add(c, "catalog", "%s:%d: row '%s' links to '%s', which "
			"is not there", r->catalog, r->line, r->id, r->target);
		if (r->wanted && learn_new_fix(c, v, r->wanted))
			v->hint = kopt_xstrfmt("it creates the file from the "
					       "template; or correct the row's "
					       "Detail File at %s:%d",
					       r->catalog, r->line);
		else
			v->hint = kopt_xstrfmt("correct the row's Detail File "
					       "at %s:%d", r->catalog, r->line);
	}
}

/*
 * A staged devlog must still parse (lib/devlog reads it: a version heading
 * twice, binary or non-UTF-8 content are refused), keep its development
 * log when it had one, and not end inside a code block, which would
 * swallow every entry after it.
 */
static void check_devlog(struct ctx *c, const char *path, const char *text,
			 size_t len, int base_had_log)
{
	struct kopt_devlog dl = KOPT_DEVLOG_INIT;
	struct kopt_buf err = KOPT_BUF_INIT;
	struct kopt_violation *v;
	cmark_node *doc;
	int fence;

	if (parse_devlog(&dl, path, text, len, &err)) {
		v = add(c, "devlog", "%s", err.buf);
		v->hint = kopt_strdup("fix the devlog so that it parses again");
	} else if (base_had_log && !dl.log_line) {
		v = add(c, "devlog", "%s: the '## Development log' section is "
			"gone", path);
		v->hint = kopt_strdup("restore the heading; the tool adds "
				      "entries under it");
	}
	doc = kopt_md_parse(text, len);
	fence = kopt_md_unclosed_fence(doc, text, len);
	cmark_node_free(doc);
	if (fence) {
		v = add(c, "devlog", "%s:%d: code block never closed", path,
			fence);
		v->hint = kopt_strdup("close the fence, or remove it");
	}
	kopt_devlog_release(&dl);
	kopt_buf_release(&err);
}

static void rule_devlog(struct ctx *c)
{
	struct kopt_buf text = KOPT_BUF_INIT;
	size_t i;

	for (i = 0; i < c->changes_nr; i++) {
		struct kopt_devlog old = KOPT_DEVLOG_INIT;
		char *kernel = NULL;
		int had;
		if (c->changes[i].status == 'D' ||
		    !kopt_path_is(KOPT_PATH_DEVLOG, c->changes[i].path,
				  &kernel, NULL))
			continue;
		kopt_buf_reset(&text);
		had = !side_devlog(c, 1, kernel, &old, NULL) && old.log_line;
		if (!snap_read(c, c->changes[i].path, &text))
			check_devlog(c, c->changes[i].path, text.buf, text.len,
				     had);
		kopt_devlog_release(&old);
		free(kernel);
	}
	kopt_buf_release(&text);
}

/*
 * A staged .kopt must load: every command reads it, so one that does not
 * parse or validate would break them all after the commit.
 */
static void rule_settings(struct ctx *c)
{
	struct kopt_error_catch caught = KOPT_ERROR_CATCH_INIT;
	struct kopt_config cfg = KOPT_CONFIG_INIT;
	struct kopt_buf text = KOPT_BUF_INIT;
	size_t i;

	for (i = 0; i < c->changes_nr; i++) {
		struct kopt_violation *v;
		int ret;
		if (c->changes[i].status == 'D' ||
		    strcmp(c->changes[i].path, ".kopt"))
			continue;
		if (snap_read(c, ".kopt", &text))
			break;
		kopt_error_catch(&caught);
		ret = kopt_config_load_buf(&cfg, text.buf, text.len, ".kopt");
		kopt_error_uncatch(&caught);
		if (!ret) {
			kopt_config_release(&cfg);
			break;
		}
		v = add(c, "settings", "%s", caught.text.len ? caught.text.buf :
			".kopt does not load");
		v->hint = kopt_strdup("edit .kopt at that line; 'git kopt "
				      "kernel list' reads it the same way");
		break;
	}
	kopt_error_catch_release(&caught);
	kopt_buf_release(&text);
}

/* ---- rules: message ---- */

static const char *const known_trailers[] = {
	KOPT_TRAILER_KERNEL, KOPT_TRAILER_VERSION, KOPT_TRAILER_STEP,
	KOPT_TRAILER_VERDICT, KOPT_TRAILER_FINDING, KOPT_TRAILER_LEARN,
};

static void bad_trailer(struct ctx *c, const char *fmt, const char *a,
			const char *b)
{
	struct kopt_violation *v = add(c, "trailer", fmt, a, b);

	v->hint = kopt_strdup("fix the message: trailers are 'Kopt-<Key>: "
			      "<value>' lines in its last paragraph");
}

static void check_trailer_value(struct ctx *c, const struct kopt_trailer *t)
{
	const char *k = t->key, *v = t->value, *p;

	if (!strcasecmp(k, KOPT_TRAILER_KERNEL)) {
		if (!kopt_valid_name(v))
			bad_trailer(c, "'%s: %s' is not a kernel name", k, v);
	} else if (!strcasecmp(k, KOPT_TRAILER_VERSION)) {
		if (kopt_version_number(v) < 0)
			bad_trailer(c, "'%s: %s' is not a version (v0, v1, ...)",
				    k, v);
	} else if (!strcasecmp(k, KOPT_TRAILER_STEP)) {
		if (kopt_step_parse(v) == KOPT_STEP_NONE)
			bad_trailer(c, "'%s: %s' is not a step (design, verify "
				    "or learn)", k, v);
	} else if (!strcasecmp(k, KOPT_TRAILER_VERDICT)) {
		if (kopt_verdict_parse(v) == KOPT_VERDICT_NONE)
			bad_trailer(c, "'%s: %s' is not a verdict (improvement, "
				    "regression or neutral)", k, v);
	} else if (!strcasecmp(k, KOPT_TRAILER_FINDING)) {
		if (strcmp(v, "novel"))
			bad_trailer(c, "'%s: %s' is not a finding (the value is "
				    "'novel')", k, v);
	} else if (!strcasecmp(k, KOPT_TRAILER_LEARN)) {
		if (!kopt_skip_prefix(v, "skip", &p) ||
		    (*p && *p != ' ' && *p != '\t'))
			bad_trailer(c, "'%s: %s' is not understood (the value is "
				    "'skip <reason>')", k, v);
		else {
			while (*p == ' ' || *p == '\t')
				p++;
			if (!*p)
				bad_trailer(c, "'%s: %s' gives no reason (write "
					    "'skip <reason>')", k, v);
		}
	}
}

static void rule_trailers(struct ctx *c)
{
	struct kopt_buf clean = KOPT_BUF_INIT;
	char *used;
	const char *p;
	size_t i;
	int no = 0;

	if (!c->g->message)
		return;
	used = kopt_calloc(c->trailers.nr + 1, 1);
	for (i = 0; i < c->trailers.nr; i++) {
		const struct kopt_trailer *t = &c->trailers.items[i];
		size_t k;
		int known = 0;
		if (strncasecmp(t->key, "Kopt-", 5))
			continue;
		for (k = 0; k < KOPT_ARRAY_SIZE(known_trailers); k++)
			known |= !strcasecmp(t->key, known_trailers[k]);
		if (!known)
			bad_trailer(c, "unknown trailer '%s%s'", t->key, "");
		else
			check_trailer_value(c, t);
	}
	/* Kopt-* lines that git does not read as trailers */
	kopt_message_cleanup(&clean, c->g->message, c->g->comment_char);
	for (p = clean.buf; *p; ) {
		const char *eol = strchr(p, '\n');
		size_t len = eol ? (size_t)(eol - p) : strlen(p);
		const char *colon = memchr(p, ':', len);
		no++;
		if (len > 5 && !strncasecmp(p, "Kopt-", 5) && colon) {
			size_t klen = (size_t)(colon - p), j;
			int found = 0;
			while (klen && p[klen - 1] == ' ')
				klen--;
			for (j = 0; j < c->trailers.nr && !found; j++) {
				const struct kopt_trailer *t = &c->trailers.items[j];
				if (!used[j] && strlen(t->key) == klen &&
				    !strncasecmp(t->key, p, klen)) {
					used[j] = 1;
					found = 1;
				}
			}
			if (!found) {
				char *line = kopt_strndup(p, len);
				char *at = kopt_xstrfmt("%d", no);
				bad_trailer(c, "message line %s: '%s' is not in the "
					    "trailer block (the last paragraph, "
					    "after a blank line)", at, line);
				free(at);
				free(line);
			}
		}
		p += len;
		if (*p)
			p++;
	}
	free(used);
	kopt_buf_release(&clean);
}

/* ---- rules: LEARN ---- */

/* The kernel and version a commit is about, for a fixing command. */
static void subject_of(struct ctx *c, char **kernel, char **version)
{
	const char *k = kopt_trailers_get(&c->trailers, KOPT_TRAILER_KERNEL);
	const char *v = kopt_trailers_get(&c->trailers, KOPT_TRAILER_VERSION);
	git_reference *head = NULL;
	size_t i;

	if (k && v && kopt_valid_name(k) && kopt_version_number(v) >= 0) {
		*kernel = kopt_strdup(k);
		*version = kopt_strdup(v);
		return;
	}
	for (i = 0; i < c->changes_nr; i++)
		if (c->changes[i].status != 'D' &&
		    kopt_path_is(KOPT_PATH_RESULTS, c->changes[i].path,
				 kernel, version))
			return;
	if (!git_repository_head(&head, c->g->repo) &&
	    git_reference_is_branch(head))
		kopt_repo_branch_parse(git_reference_shorthand(head), kernel,
				       version);
	git_error_clear();
	git_reference_free(head);
}

/* Whether `text` links (by a "<path>.md" word) to a detail file. */
static int text_links_knowledge(struct ctx *c, const char *from,
				const char *text, size_t len)
{
	const char *p = text, *end = text + len;

	while (p < end) {
		const char *md = memmem(p, (size_t)(end - p), ".md", 3);
		const char *s;
		char *hit;
		int found;
		if (!md)
			break;
		s = md;
		while (s > text && (isalnum((unsigned char)s[-1]) ||
				    strchr("_./-", s[-1])))
			s--;
		hit = resolve_link(c, from, s, (size_t)(md + 3 - s));
		found = hit && detail_kind(c, hit) != KIND_NONE;
		free(hit);
		if (found)
			return 1;
		p = md + 3;
	}
	return 0;
}

/*
 * Whether the version's task or its devlog entry (its section only)
 * links to a knowledge detail file.
 */
static int links_knowledge(struct ctx *c, const char *kernel,
			   const char *version)
{
	struct kopt_buf path = KOPT_BUF_INIT, text = KOPT_BUF_INIT;
	struct kopt_devlog dl = KOPT_DEVLOG_INIT;
	const struct kopt_devlog_version *v;
	int found = 0;

	kopt_path_task(&path, kernel, version);
	if (!snap_read(c, path.buf, &text))
		found = text_links_knowledge(c, path.buf, text.buf, text.len);
	/* a broken devlog is the devlog rule's */
	if (!found && !side_devlog(c, 0, kernel, &dl, NULL) &&
	    (v = kopt_devlog_find_version(&dl, version))) {
		size_t a = kopt_devlog_offset(&dl, v->line);
		size_t b = kopt_devlog_offset(&dl, v->last_line + 1);
		found = text_links_knowledge(c, dl.label, dl.text.buf + a,
					     b - a);
	}
	kopt_devlog_release(&dl);
	kopt_buf_release(&path);
	kopt_buf_release(&text);
	return found;
}

/*
 * The LEARN rules for one version whose numbers the commit records (a
 * results file, or performance blocks written in the devlog): a
 * regression needs its anti-pattern, an improvement its knowledge.
 */
static void judge_version(struct ctx *c, const char *kernel,
			  const char *version)
{
	struct kopt_verdicts now = KOPT_VERDICTS_INIT;
	struct kopt_verdicts before = KOPT_VERDICTS_INIT;
	struct kopt_buf trials = KOPT_BUF_INIT, where = KOPT_BUF_INIT;
	const char *parent, *old_parent;
	enum kopt_verdict v, was;
	struct loaded *l;

	l = load_results(c, 0, kernel, version);
	if (l->ret == KOPT_EINVALID && !(c->g->rules & KOPT_GATE_CONTENT))
		add(c, "results", "%s", l->err);
	if (l->source == KOPT_NUMBERS_DEVLOG) {
		kopt_buf_addstr(&where, ", written in ");
		kopt_path_devlog(&where, kernel);
	}
	v = side_verdict(c, 0, kernel, version, &now, &parent);
	if (v == KOPT_VERDICT_REGRESSION || v == KOPT_VERDICT_IMPROVEMENT)
		was = side_verdict(c, 1, kernel, version, &before,
				   &old_parent);
	else
		was = KOPT_VERDICT_NONE;
	if (v == KOPT_VERDICT_REGRESSION && was != v &&
	    !staged_knowledge(c, KIND_ANTI_PATTERN)) {
		struct kopt_violation *viol;
		describe_trials(&trials, &now, KOPT_VERDICT_REGRESSION);
		viol = add(c, "regression", "%s %s is a regression against %s "
			   "(%s%s) and no anti-pattern file with its catalog "
			   "row is staged", kernel, version, parent,
			   trials.buf, where.buf);
		learn_fix(c, viol, "anti-pattern", kernel, version,
			  "regression");
	} else if (v == KOPT_VERDICT_IMPROVEMENT && was != v &&
		   !links_knowledge(c, kernel, version) &&
		   !staged_knowledge(c, KIND_OPTIMIZATION)) {
		struct kopt_violation *viol;
		describe_trials(&trials, &now, KOPT_VERDICT_IMPROVEMENT);
		viol = add(c, "improvement", "%s %s improves on %s (%s%s) but "
			   "its task and devlog entry link to no knowledge "
			   "file, and no optimization file with its catalog "
			   "row is staged", kernel, version, parent,
			   trials.buf, where.buf);
		learn_fix(c, viol, "optimization", kernel, version,
			  "optimization");
	}
	kopt_verdicts_release(&now);
	kopt_verdicts_release(&before);
	kopt_buf_release(&trials);
	kopt_buf_release(&where);
}

/* A line "Finding: novel" (any emphasis, any case) in the version's section. */
static int says_novel(const struct kopt_devlog *dl,
		      const struct kopt_devlog_version *v)
{
	size_t at = kopt_devlog_offset(dl, v->line);
	size_t end = kopt_devlog_offset(dl, v->last_line + 1);
	struct kopt_buf l = KOPT_BUF_INIT;
	int found = 0;

	while (at < end && !found) {
		const char *p = dl->text.buf + at;
		const char *eol = memchr(p, '\n', end - at);
		size_t n = eol ? (size_t)(eol - p) : end - at, i;
		kopt_buf_reset(&l);
		for (i = 0; i < n; i++)
			if (isalnum((unsigned char)p[i]) || p[i] == ':')
				kopt_buf_addch(&l, (char)tolower(
						       (unsigned char)p[i]));
		found = !strcmp(l.buf, "findingnovel") ||
			!strcmp(l.buf, "finding:novel") ||
			!strcmp(l.buf, "koptfinding:novel");
		at += n + 1;
	}
	kopt_buf_release(&l);
	return found;
}

/*
 * A staged devlog: each version whose numbers only the devlog gives is
 * judged as a results file is; a version newly marked "Finding: novel"
 * needs its optimization file.
 */
static void learn_devlog(struct ctx *c, const char *kernel)
{
	const struct kopt_devlog *dl = cached_devlog(c, 0, kernel), *old;
	size_t i;

	if (!dl)
		return;
	for (i = 0; i < dl->versions_nr; i++) {
		/* borrowed from c->devlogs, which the loads below may move */
		const struct kopt_devlog_version *v = &dl->versions[i];
		const struct kopt_devlog_version *ov;
		struct loaded *l = load_results(c, 0, kernel, v->name);
		if (!l->ret && l->source == KOPT_NUMBERS_DEVLOG)
			judge_version(c, kernel, v->name);
		old = cached_devlog(c, 1, kernel);
		dl = cached_devlog(c, 0, kernel);
		if (!says_novel(dl, v))
			continue;
		ov = old ? kopt_devlog_find_version(old, v->name) : NULL;
		if (ov && old->text.len && says_novel(old, ov))
			continue;
		if (!staged_knowledge(c, KIND_OPTIMIZATION)) {
			struct kopt_violation *viol;
			viol = add(c, "novel", "docs/kernels/%s.md:%d: %s %s "
				   "records a novel finding and no "
				   "optimization file with its catalog row is "
				   "staged", kernel, v->line, kernel, v->name);
			learn_fix(c, viol, "optimization", kernel, v->name,
				  "finding");
		}
	}
}

static void rule_learn_results(struct ctx *c)
{
	size_t i;

	for (i = 0; i < c->changes_nr; i++) {
		char *kernel = NULL, *version = NULL;

		if (c->changes[i].status == 'D')
			continue;
		if (kopt_path_is(KOPT_PATH_RESULTS, c->changes[i].path,
				 &kernel, &version))
			judge_version(c, kernel, version);
		else if (kopt_path_is(KOPT_PATH_DEVLOG, c->changes[i].path,
				      &kernel, NULL))
			learn_devlog(c, kernel);
		free(kernel);
		free(version);
	}
}

static void rule_novel(struct ctx *c)
{
	const char *f = kopt_trailers_get(&c->trailers, KOPT_TRAILER_FINDING);
	char *kernel = NULL, *version = NULL;
	struct kopt_violation *v;

	if (!f || strcmp(f, "novel") || staged_knowledge(c, KIND_NONE))
		return;
	subject_of(c, &kernel, &version);
	v = add(c, "novel", "the message says 'Kopt-Finding: novel' and no "
		"knowledge file with its catalog row is staged");
	learn_fix(c, v, "optimization", kernel, version, "finding");
	free(kernel);
	free(version);
}

/* ---- running ---- */

int kopt_gate_run(struct kopt_gate *g)
{
	struct ctx c;
	const struct kopt_config *cfg = g->cfg;
	size_t i;
	int ret = 0;

	if (!cfg || (!g->index == !g->tree))
		return kopt_error("the gate needs settings and one snapshot");
	memset(&c, 0, sizeof(c));
	c.g = g;
	kopt_strvec_init(&c.catalogs);
	kopt_strvec_init(&c.catalog_problems);
	c.kroot = cfg->knowledge ? cfg->knowledge : KOPT_DEFAULT_KNOWLEDGE;
	kopt_config_catalogs(&c.catalogs, cfg);
	if (g->message && kopt_trailers_parse(&c.trailers, g->message,
					      g->comment_char)) {
		ret = -1;
		goto done;
	}
	ret = load_changes(&c);
	if (ret)
		goto done;
	if (g->rules & KOPT_GATE_CONTENT) {
		rule_results(&c);
		rule_knowledge(&c);
		rule_catalog(&c);
		rule_devlog(&c);
		rule_settings(&c);
	}
	if (g->rules & KOPT_GATE_MESSAGE)
		rule_trailers(&c);
	if ((g->rules & KOPT_GATE_LEARN) && !g->is_merge) {
		const char *skip = kopt_trailers_learn_skip(&c.trailers);
		size_t before = g->nr;
		rule_learn_results(&c);
		rule_novel(&c);
		if (skip) {
			/* the skip passes the LEARN rules; say that it did */
			size_t kept = before;
			for (i = before; i < g->nr; i++) {
				struct kopt_violation *v = &g->violations[i];
				if (!strcmp(v->rule, "results")) {
					g->violations[kept++] = *v;
					continue;
				}
				free(v->what);
				kopt_strvec_clear(&v->fix);
				free(v->hint);
			}
			g->nr = kept;
			free(g->skip_reason);
			g->skip_reason = kopt_strdup(skip);
		}
	}
done:
	for (i = 0; i < c.changes_nr; i++)
		free(c.changes[i].path);
	free(c.changes);
	for (i = 0; i < c.rows_nr; i++) {
		free(c.rows[i].catalog);
		free(c.rows[i].id);
		free(c.rows[i].target);
		free(c.rows[i].wanted);
		free(c.rows[i].detail);
	}
	free(c.rows);
	for (i = 0; i < c.loaded_nr; i++) {
		free(c.loaded[i].path);
		free(c.loaded[i].err);
		kopt_results_release(&c.loaded[i].m);
	}
	free(c.loaded);
	for (i = 0; i < c.devlogs_nr; i++) {
		free(c.devlogs[i].kernel);
		kopt_devlog_release(&c.devlogs[i].dl);
	}
	free(c.devlogs);
	kopt_trailers_release(&c.trailers);
	kopt_strvec_clear(&c.catalogs);
	kopt_strvec_clear(&c.catalog_problems);
	return ret;
}

void kopt_gate_release(struct kopt_gate *g)
{
	size_t i;

	for (i = 0; i < g->nr; i++) {
		free(g->violations[i].what);
		kopt_strvec_clear(&g->violations[i].fix);
		free(g->violations[i].hint);
	}
	free(g->violations);
	g->violations = NULL;
	g->nr = g->alloc = 0;
	free(g->skip_reason);
	g->skip_reason = NULL;
}

int kopt_gate_commits(git_repository *repo, const struct kopt_config *cfg,
		      const git_oid *ids, size_t nr, kopt_gate_commit_fn fn,
		      void *data)
{
	struct kopt_progress *progress = kopt_progress_start(
		"checking commits", nr);
	size_t i;
	int ret = 0;

	for (i = 0; !ret && i < nr; i++) {
		const git_oid *id = &ids[i];
		struct kopt_gate g = KOPT_GATE_INIT;
		git_commit *commit = NULL, *parent = NULL;
		git_tree *tree = NULL, *base = NULL;

		if (git_commit_lookup(&commit, repo, id) < 0 ||
		    git_commit_tree(&tree, commit) < 0 ||
		    (git_commit_parentcount(commit) &&
		     (git_commit_parent(&parent, commit, 0) < 0 ||
		      git_commit_tree(&base, parent) < 0))) {
			ret = kopt_error("cannot read commit %s: %s",
					 git_oid_tostr_s(id),
					 kopt_git_error("unknown error"));
			goto next;
		}
		g.repo = repo;
		g.cfg = cfg;
		g.tree = tree;
		g.base = base;
		g.message = git_commit_message(commit);
		g.comment_char = 0;
		g.is_merge = git_commit_parentcount(commit) > 1;
		ret = kopt_gate_run(&g);
		if (!ret)
			ret = fn(commit, &g, data);
next:
		kopt_gate_release(&g);
		git_tree_free(base);
		git_tree_free(tree);
		git_commit_free(parent);
		git_commit_free(commit);
		kopt_progress_update(progress, i + 1);
	}
	kopt_progress_stop(&progress);
	return ret;
}

struct walk_state {
	kopt_gate_commit_fn fn;
	void *data;
	int violations;
};

static int count_commit(const git_commit *commit, const struct kopt_gate *g,
			void *data)
{
	struct walk_state *w = data;

	w->violations += (int)g->nr;
	return w->fn(commit, g, w->data);
}

/* The settings at `from`: 0, KOPT_ENOTFOUND, or a reported failure. */
static int settings_at(struct kopt_config *out, git_repository *repo,
		       const git_oid *from, const char *label)
{
	git_commit *c = NULL;
	git_tree *tree = NULL;
	int ret = KOPT_ENOTFOUND;

	if (!git_commit_lookup(&c, repo, from) && !git_commit_tree(&tree, c))
		ret = kopt_config_load_gate(out, repo, tree, label);
	git_error_clear();
	git_tree_free(tree);
	git_commit_free(c);
	return ret;
}

int kopt_gate_walk(git_repository *repo, git_revwalk *walk,
		   const git_oid *base, const git_oid *tip,
		   kopt_gate_commit_fn fn, void *data)
{
	struct kopt_config cfg = KOPT_CONFIG_INIT;
	struct walk_state w = { fn, data, 0 };
	git_oid *ids = NULL, id, from;
	size_t nr = 0, alloc = 0;
	git_commit *c = NULL;
	int ret = KOPT_ENOTFOUND, err, have_from = 0;

	while (!(err = git_revwalk_next(&id, walk))) {
		KOPT_ALLOC_GROW(ids, nr + 1, alloc);
		git_oid_cpy(&ids[nr++], &id);
	}
	if (err != GIT_ITEROVER) {
		free(ids);
		return kopt_error("cannot walk the commits: %s",
				  kopt_git_error("unknown error"));
	}
	if (!nr) {
		free(ids);
		return 0;
	}
	if (base) {
		git_oid_cpy(&from, base);
		have_from = 1;
	} else if (!git_commit_lookup(&c, repo, &ids[0]) &&
		   git_commit_parentcount(c)) {
		git_oid_cpy(&from, git_commit_parent_id(c, 0));
		have_from = 1;
	}
	git_commit_free(c);
	if (have_from)
		ret = settings_at(&cfg, repo, &from, ".kopt (base)");
	if (ret == KOPT_ENOTFOUND && tip)
		ret = settings_at(&cfg, repo, tip, ".kopt");
	if (!ret) {
		ret = kopt_gate_commits(repo, &cfg, ids, nr, count_commit, &w);
		if (!ret)
			ret = w.violations;
	} else if (ret == KOPT_ENOTFOUND) {
		ret = 0;        /* not a kernel repository: nothing to enforce */
	} else {
		ret = -1;
	}
	kopt_config_release(&cfg);
	free(ids);
	return ret;
}

void kopt_gate_format_commit(struct kopt_buf *out, const git_commit *commit,
			     const struct kopt_gate *g)
{
	git_buf short_id = GIT_BUF_INIT;
	const char *id;
	size_t i;

	if (git_object_short_id(&short_id, (const git_object *)commit) < 0) {
		git_error_clear();
		id = git_oid_tostr_s(git_commit_id(commit));
	} else {
		id = short_id.ptr;
	}
	for (i = 0; i < g->nr; i++) {
		const struct kopt_violation *v = &g->violations[i];
		kopt_buf_addf(out, "%s %s %s", id, v->rule, v->what);
		if (v->fix.nr)
			kopt_buf_addf(out, "; fix: %s", v->fix.v[0]);
		else if (v->hint)
			kopt_buf_addf(out, "; %s", v->hint);
		kopt_buf_addch(out, '\n');
	}
	if (g->skip_reason)
		kopt_buf_addf(out, "%s learn-skip %s\n", id, g->skip_reason);
	git_buf_dispose(&short_id);
}
