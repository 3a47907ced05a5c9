#include "learn.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "catalog.h"
#include "error.h"
#include "lockfile.h"
#include "md.h"
#include "banned.h"

char *kopt_learn_slug(const char *name)
{
	struct kopt_buf sb = KOPT_BUF_INIT;
	const char *p;

	for (p = name; *p; p++) {
		unsigned char c = (unsigned char)*p;
		if (isalnum(c) || ((c == '_' || c == '.') && sb.len))
			kopt_buf_addch(&sb, (char)tolower(c));
		else if (sb.len && sb.buf[sb.len - 1] != '-')
			kopt_buf_addch(&sb, '-');
	}
	while (sb.len && strchr("-._", sb.buf[sb.len - 1]))
		kopt_buf_setlen(&sb, sb.len - 1);
	return kopt_buf_detach(&sb, NULL);
}

/* Enough words to tell entries apart, few enough to type. */
#define SUGGESTED_WORDS 6

void kopt_learn_suggest_name(struct kopt_buf *out,
			     const struct kopt_devlog *dl, const char *kernel,
			     const char *version, const char *what)
{
	const char *title = dl && version ? kopt_devlog_version_title(
				kopt_devlog_find_version(dl, version)) : NULL;
	char *slug = title ? kopt_learn_slug(title) : NULL;
	size_t n;
	int words = 1;

	for (n = 0; slug && slug[n]; n++)
		if (slug[n] == '-' && ++words > SUGGESTED_WORDS)
			break;
	if (n)
		kopt_buf_add(out, slug, n);
	else if (kernel && version)
		kopt_buf_addf(out, "%s-%s-%s", kernel, version, what);
	else
		kopt_buf_addstr(out, what);
	free(slug);
}

char *kopt_learn_title(const char *name)
{
	struct kopt_buf sb = KOPT_BUF_INIT;
	const char *p;
	int plain = 1;

	for (p = name; *p; p++)
		if (isupper((unsigned char)*p) || *p == ' ')
			plain = 0;
	if (!plain) {
		kopt_buf_addstr(&sb, name);
		kopt_buf_trim(&sb);
		return kopt_buf_detach(&sb, NULL);
	}
	for (p = name; *p; p++)
		kopt_buf_addch(&sb, *p == '-' || *p == '_' ? ' ' : *p);
	kopt_buf_trim(&sb);
	if (sb.len)
		sb.buf[0] = (char)toupper((unsigned char)sb.buf[0]);
	return kopt_buf_detach(&sb, NULL);
}

/* Replace the first `what` in `sb` by `with`; 0, or -1 when absent. */
static int replace(struct kopt_buf *sb, const char *what, const char *with)
{
	char *at = strstr(sb->buf, what);

	if (!at)
		return -1;
	kopt_buf_splice(sb, (size_t)(at - sb->buf), strlen(what), with,
			strlen(with));
	return 0;
}

/* The last line of the evidence table of a detail file, or 0. */
static int evidence_table_end(const struct kopt_buf *text)
{
	cmark_node *doc = kopt_md_parse(text->buf, text->len), *n;
	struct kopt_buf t = KOPT_BUF_INIT;
	int in = 0, line = 0;

	for (n = cmark_node_first_child(doc); n; n = cmark_node_next(n)) {
		if (kopt_md_heading_level(n) == 2) {
			kopt_buf_reset(&t);
			kopt_md_text(&t, n);
			kopt_buf_trim(&t);
			in = !strcmp(t.buf, "Performance Evidence");
			continue;
		}
		if (in && kopt_md_is(n, "table")) {
			line = kopt_md_table_end_line(n);
			break;
		}
	}
	kopt_buf_release(&t);
	cmark_node_free(doc);
	return line;
}

static void fmt_us(struct kopt_buf *out, const struct kopt_results_entry *e)
{
	if (kopt_results_has(e->metrics[KOPT_METRIC_DURATION_US]))
		kopt_buf_addf(out, "%.2f \xce\xbcs",
			      e->metrics[KOPT_METRIC_DURATION_US]);
	else
		kopt_buf_addstr(out, "not measured");
}

int kopt_learn_fill(struct kopt_buf *out, const struct kopt_learn_request *req)
{
	struct kopt_buf rows = KOPT_BUF_INIT, src = KOPT_BUF_INIT;
	char *title = kopt_learn_title(req->name);
	size_t i, matched = 0;
	int ret = 0;

	kopt_buf_reset(out);
	kopt_buf_add(out, req->template_text, req->template_len);
	replace(out, req->kind == KOPT_KIND_ANTI_PATTERN ?
		"[Anti-Pattern Name]" : "[Optimization Name]", title);
	if (!req->before || !req->after)
		goto done;

	for (i = 0; i < req->after->entries_nr; i++) {
		const struct kopt_results_entry *a = &req->after->entries[i];
		const struct kopt_results_entry *b =
			kopt_results_find_like(req->before, a);
		if (!b)
			continue;
		matched++;
		kopt_buf_addstr(&rows, "| ");
		kopt_results_describe_entry(&rows, a);
		kopt_buf_addstr(&rows, " | ");
		fmt_us(&rows, b);
		kopt_buf_addstr(&rows, " | ");
		fmt_us(&rows, a);
		kopt_buf_addstr(&rows, " | ");
		if (kopt_results_has(a->metrics[KOPT_METRIC_DURATION_US]) &&
		    kopt_results_has(b->metrics[KOPT_METRIC_DURATION_US]) &&
		    b->metrics[KOPT_METRIC_DURATION_US] > 0) {
			double bd = b->metrics[KOPT_METRIC_DURATION_US];
			double ad = a->metrics[KOPT_METRIC_DURATION_US];
			kopt_buf_addf(&rows, "%+.1f%% duration",
				      (ad - bd) / bd * 100);
		} else {
			kopt_buf_addstr(&rows, "--");
		}
		kopt_buf_addstr(&rows, " |\n");
	}
	if (!matched) {
		ret = kopt_error("no trial of %s %s was also measured on %s; "
				 "nothing to compare", req->after->kernel,
				 req->after->version, req->before->version);
		goto done;
	}
	kopt_buf_addf(&src, "local experiment (%s %s -> %s%s%s)",
		      req->after->kernel, req->before->version,
		      req->after->version,
		      req->after->entries[0].device.name ? ", " : "",
		      req->after->entries[0].device.name ?
		      req->after->entries[0].device.name : "");
	replace(out, "[local experiment / external report]", src.buf);
	{
		int line = evidence_table_end(out);
		size_t at;
		if (!line) {
			ret = kopt_error("the template has no Performance "
					 "Evidence table");
			goto done;
		}
		at = kopt_md_line_end(out->buf, out->len, line);
		if (at == out->len && out->len &&
		    out->buf[out->len - 1] != '\n')
			kopt_buf_insert(&rows, 0, "\n", 1);
		kopt_buf_insert(out, at, rows.buf, rows.len);
	}
done:
	kopt_buf_release(&rows);
	kopt_buf_release(&src);
	free(title);
	return ret ? KOPT_EINVALID : 0;
}

/*
 * The mean gain of `after` over `before`, in percent, as Est. Impact
 * reads it (kopt_impact_parse: 1.5x is 50%): the speed-up less one, so
 * that 3677 us -> 338 us is a gain of 988%, not the 91% the duration
 * fell by.
 */
static int mean_gain(const struct kopt_learn_request *req, double *out)
{
	double sum = 0;
	size_t i, n = 0;

	if (!req->before || !req->after)
		return -1;
	for (i = 0; i < req->after->entries_nr; i++) {
		const struct kopt_results_entry *a = &req->after->entries[i];
		const struct kopt_results_entry *b =
			kopt_results_find_like(req->before, a);
		double ad, bd;
		if (!b)
			continue;
		ad = a->metrics[KOPT_METRIC_DURATION_US];
		bd = b->metrics[KOPT_METRIC_DURATION_US];
		if (!kopt_results_has(ad) || !kopt_results_has(bd))
			continue;
		if (bd <= 0 || ad <= 0)
			continue;
		sum += (bd / ad - 1) * 100;
		n++;
	}
	if (!n)
		return -1;
	*out = sum / n;
	return 0;
}

static void fill_row(struct kopt_catalog_row *row,
		     const struct kopt_learn_request *req, long id,
		     const char *title, const char *path)
{
	double gain;

	memset(row, 0, sizeof(*row));
	row->kind = req->kind;
	row->cell[KOPT_COL_ID] = kopt_xstrfmt("%c%ld",
		req->kind == KOPT_KIND_ANTI_PATTERN ? 'A' : 'O', id);
	row->cell[KOPT_COL_NAME] = kopt_strdup(title);
	row->cell[KOPT_COL_DETAIL] = kopt_xstrfmt("`%s`", path);
	if (req->kind == KOPT_KIND_OPTIMIZATION) {
		row->cell[KOPT_COL_TRIGGER] =
			kopt_strdup("[trigger conditions]");
		if (!mean_gain(req, &gain) && gain >= 100)
			row->cell[KOPT_COL_IMPACT] = kopt_xstrfmt(
				"~%.1fx (measured: %s %s)", 1 + gain / 100,
				req->after->kernel, req->after->version);
		else if (!mean_gain(req, &gain) && gain > 0)
			row->cell[KOPT_COL_IMPACT] = kopt_xstrfmt(
				"~%.0f%% (measured: %s %s)", gain,
				req->after->kernel, req->after->version);
		else
			row->cell[KOPT_COL_IMPACT] =
				kopt_strdup("[est. impact]");
		row->cell[KOPT_COL_PITFALLS] = kopt_strdup("[pitfalls]");
	} else {
		row->cell[KOPT_COL_FAILURE] = kopt_strdup("[failure mode]");
		if (req->after)
			row->cell[KOPT_COL_SOURCE] = kopt_xstrfmt(
				"local experiment: %s %s", req->after->kernel,
				req->after->version);
		else
			row->cell[KOPT_COL_SOURCE] = kopt_strdup("[source]");
	}
}

/* What an existing detail file says, in place of the placeholders. */
static void fill_from_detail(struct kopt_catalog_row *row,
			     const struct kopt_detail *d)
{
	char *cells[KOPT_COL_NR];
	int i;

	kopt_catalog_cells_from_detail(cells, d, row->kind);
	for (i = 0; i < KOPT_COL_NR; i++) {
		if (!cells[i])
			continue;
		free(row->cell[i]);
		row->cell[i] = cells[i];
	}
}

static void release_row(struct kopt_catalog_row *row)
{
	int i;

	for (i = 0; i < KOPT_COL_NR; i++)
		free(row->cell[i]);
}

static int file_exists(const char *path)
{
	return !access(path, F_OK);
}

/*
 * A run killed while it held the locks of both files leaves both: name
 * them in one message, so that one round of removing them is enough.
 */
static int both_locked(const char *dpath, const char *dlabel,
		       const char *cpath, const char *clabel)
{
	char *dlock = kopt_xstrfmt("%s.lock", dpath);
	char *clock = kopt_xstrfmt("%s.lock", cpath);
	int ret = 0;

	if (file_exists(dlock) && file_exists(clock)) {
		kopt_error("cannot write 2 files: '%s.lock' and '%s.lock' "
			   "exist; another git kopt may be running, otherwise "
			   "remove them", dlabel, clabel);
		ret = KOPT_ELOCKED;
	}
	free(dlock);
	free(clock);
	return ret;
}

/* Two learn new at once: the second waits for the catalog this long. */
#define KOPT_LEARN_LOCK_WAIT_MS 10000

int kopt_learn_new(const struct kopt_kb *kb, const char *top,
		   const struct kopt_learn_request *req,
		   struct kopt_buf *report)
{
	struct kopt_lock dlock = KOPT_LOCK_INIT, clock = KOPT_LOCK_INIT;
	struct kopt_buf detail = KOPT_BUF_INIT, cattext = KOPT_BUF_INIT;
	struct kopt_buf newcat = KOPT_BUF_INIT;
	struct kopt_problems ignored = KOPT_PROBLEMS_INIT;
	struct kopt_catalog cat = KOPT_CATALOG_INIT;
	struct kopt_catalog_row row;
	char *slug = kopt_learn_slug(req->name);
	char *title = kopt_learn_title(req->name);
	char *rel = NULL, *dpath = NULL, *cpath = NULL;
	const struct kopt_kb_entry *have;
	const struct kopt_kb_catalog *kc;
	int need_file, need_row, ret = 0, committed_detail = 0;
	size_t i;

	memset(&row, 0, sizeof(row));
	if (!*slug) {
		ret = kopt_error("'%s' is not a usable name; use letters and "
				 "digits", req->name);
		goto done;
	}
	rel = kopt_knowledge_path(kb->root, req->kind, req->language, slug);
	dpath = kopt_xstrfmt("%s%s", top, rel);
	cpath = kopt_xstrfmt("%s%s", top, req->catalog);
	kc = kopt_kb_catalog(kb, req->language);
	have = kopt_kb_find(kb, rel);
	need_file = !file_exists(dpath);
	need_row = 1;
	for (i = 0; kc && i < kb->entries_nr; i++)
		if (kb->entries[i].row && kb->entries[i].catalog == kc &&
		    kb->entries[i].path && !strcmp(kb->entries[i].path, rel))
			need_row = 0;
	if (!need_file && !need_row) {
		const char *id = have && have->row ?
				 have->row->cell[KOPT_COL_ID] : "?";
		kopt_buf_addf(report, "%s '%s' exists already: %s (%s in %s); "
			      "nothing to do\n", kopt_kind_name(req->kind),
			      slug, rel, id, req->catalog);
		ret = KOPT_EEXISTS;
		goto done;
	}
	if (need_file && need_row &&
	    (ret = both_locked(dpath, rel, cpath, req->catalog)))
		goto done;
	if (need_file) {
		if ((ret = kopt_learn_fill(&detail, req)))
			goto done;
		if ((ret = kopt_mkdir_parents(dpath)) ||
		    (ret = kopt_lock_acquire(&dlock, dpath)))
			goto done;
	}
	if (need_row) {
		const char *title_for_row = title;
		if (!need_file && have && have->detail && have->detail->name &&
		    *have->detail->name)
			title_for_row = have->detail->name;
		if ((ret = kopt_mkdir_parents(cpath)) ||
		    (ret = kopt_lock_acquire_timeout(&clock, cpath,
						     KOPT_LEARN_LOCK_WAIT_MS)))
			goto done;
		/* read under the lock, so that the ID is ours */
		if (kopt_buf_read_file(&cattext, cpath) && errno != ENOENT) {
			ret = kopt_error("cannot read '%s': %s", req->catalog,
					 strerror(errno));
			goto done;
		}
		if (!cattext.len && req->language)
			kopt_buf_addf(&cattext, "# Optimization Catalog: %s\n",
				      req->language);
		kopt_catalog_parse(&cat, req->catalog, cattext.buf,
				   cattext.len, &ignored);
		fill_row(&row, req, kopt_catalog_next_id(&cat, req->kind),
			 title_for_row, rel);
		if (!need_file && have && have->detail)
			fill_from_detail(&row, have->detail);
		if ((ret = kopt_catalog_append(&newcat, &cat, &row)) ||
		    (ret = kopt_lock_write(&clock, newcat.buf, newcat.len)))
			goto done;
	}
	if (need_file &&
	    (ret = kopt_lock_write(&dlock, detail.buf, detail.len)))
		goto done;
	if (need_file) {
		if ((ret = kopt_lock_commit(&dlock)))
			goto done;
		committed_detail = 1;
		kopt_buf_addf(report, "created %s\n", rel);
	}
	if (need_row) {
		if ((ret = kopt_lock_commit(&clock))) {
			if (committed_detail)
				unlink(dpath);
			goto done;
		}
		kopt_buf_addf(report, "added %s to %s\n",
			      row.cell[KOPT_COL_ID], req->catalog);
	}
done:
	kopt_lock_rollback(&dlock);
	kopt_lock_rollback(&clock);
	if (ret && committed_detail && need_row)
		kopt_buf_reset(report);
	release_row(&row);
	kopt_catalog_release(&cat);
	kopt_problems_clear(&ignored);
	kopt_buf_release(&detail);
	kopt_buf_release(&cattext);
	kopt_buf_release(&newcat);
	free(slug);
	free(title);
	free(rel);
	free(dpath);
	free(cpath);
	return ret;
}

/* Whether `e` is one of those named (ID, language/ID or detail path). */
static int selected(const struct kopt_kb_entry *e, const char *const *only,
		    size_t only_nr, char *used)
{
	struct kopt_buf id = KOPT_BUF_INIT;
	size_t i;
	int hit = !only_nr;

	kopt_kb_entry_id(&id, e);
	for (i = 0; i < only_nr; i++)
		if (!strcmp(only[i], id.buf) ||
		    (!e->language && e->row &&
		     !strcmp(only[i], e->row->cell[KOPT_COL_ID])) ||
		    (e->path && !strcmp(only[i], e->path))) {
			used[i] = 1;
			hit = 1;
		}
	kopt_buf_release(&id);
	return hit;
}

/* One catalog: its rows of the selected entries, rewritten under its lock. */
static int sync_catalog(const struct kopt_kb *kb, const char *top,
			const struct kopt_kb_catalog *kc,
			const char *const *only, size_t only_nr, char *used,
			int dry_run, int words, struct kopt_buf *report,
			int *changed)
{
	struct kopt_lock lock = KOPT_LOCK_INIT;
	struct kopt_buf text = KOPT_BUF_INIT, next = KOPT_BUF_INIT;
	struct kopt_problems ignored = KOPT_PROBLEMS_INIT;
	struct kopt_catalog cat = KOPT_CATALOG_INIT;
	char *path = kopt_xstrfmt("%s%s", top, kc->path);
	size_t i;
	int ret = 0, rows = 0, c;

	if (!dry_run &&
	    (ret = kopt_lock_acquire_timeout(&lock, path,
					     KOPT_LEARN_LOCK_WAIT_MS)))
		goto done;
	/* read under the lock: what another writer added stays */
	if (kopt_buf_read_file(&text, path)) {
		ret = kopt_error("cannot read '%s': %s", kc->path,
				 strerror(errno));
		goto done;
	}
	kopt_catalog_parse(&cat, kc->path, text.buf, text.len, &ignored);
	for (i = 0; i < kb->entries_nr; i++) {
		const struct kopt_kb_entry *e = &kb->entries[i];
		const struct kopt_catalog_row *row;
		struct kopt_buf cols = KOPT_BUF_INIT;
		char *cells[KOPT_COL_NR];

		if (e->catalog != kc || !e->row || !e->detail ||
		    !selected(e, only, only_nr, used))
			continue;
		row = kopt_catalog_find(&cat, e->row->cell[KOPT_COL_ID]);
		if (!row || row->kind != e->kind)
			continue;
		kopt_catalog_cells_from_detail(cells, e->detail, e->kind);
		for (c = 0; c < KOPT_COL_NR; c++) {
			if (!cells[c] || !row->cell[c] ||
			    kopt_catalog_cell_agrees(row, c, e->detail,
						     cells[c], words)) {
				free(cells[c]);
				cells[c] = NULL;
				continue;
			}
			kopt_buf_addf(&cols, "%s%s", cols.len ? ", " : "",
				      kopt_catalog_col_title(e->kind, c));
		}
		if (cols.len) {
			ret = kopt_catalog_set_cells(&next, &cat, row, cells);
			if (!ret) {
				kopt_catalog_release(&cat);
				kopt_problems_clear(&ignored);
				kopt_catalog_parse(&cat, kc->path, next.buf,
						   next.len, &ignored);
				kopt_buf_addf(report, "%s %s: %s from %s\n",
					      kc->path,
					      e->row->cell[KOPT_COL_ID],
					      cols.buf, e->path);
				rows++;
			}
		}
		for (c = 0; c < KOPT_COL_NR; c++)
			free(cells[c]);
		kopt_buf_release(&cols);
		if (ret)
			goto done;
	}
	if (rows && !dry_run &&
	    ((ret = kopt_lock_write(&lock, cat.text.buf, cat.text.len)) ||
	     (ret = kopt_lock_commit(&lock))))
		goto done;
	*changed += rows;
done:
	kopt_lock_rollback(&lock);
	kopt_catalog_release(&cat);
	kopt_problems_clear(&ignored);
	kopt_buf_release(&text);
	kopt_buf_release(&next);
	free(path);
	return ret;
}

int kopt_learn_sync(const struct kopt_kb *kb, const char *top,
		    const char *const *only, size_t only_nr, int dry_run,
		    int words, struct kopt_buf *report)
{
	char *used = kopt_calloc(only_nr ? only_nr : 1, 1);
	size_t i;
	int ret = 0, changed = 0;

	for (i = 0; i < kb->entries_nr && only_nr; i++)
		selected(&kb->entries[i], only, only_nr, used);
	for (i = 0; i < only_nr; i++)
		if (!used[i]) {
			kopt_error("'%s' is neither a catalog ID nor the path "
				   "of a detail file with a row", only[i]);
			ret = KOPT_ENOTFOUND;
			goto done;
		}
	memset(used, 0, only_nr ? only_nr : 1);
	for (i = 0; i < kb->catalogs_nr && !ret; i++)
		if (kb->catalogs[i].exists)
			ret = sync_catalog(kb, top, &kb->catalogs[i], only,
					   only_nr, used, dry_run, words,
					   report, &changed);
done:
	free(used);
	return ret ? ret : changed;
}
