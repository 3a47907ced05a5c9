#ifndef KOPT_KB_H
#define KOPT_KB_H

/*
 * The knowledge base as a whole: the shared catalog, the language
 * catalogs, and the detail files under kopt.knowledge, read together and
 * checked against each other.
 *
 * Files are read through a struct kopt_kb_source, so that the same
 * checks run on the work tree (kopt_kb_source_worktree()) or on any
 * other view of the files, such as the index or a commit.
 *
 * kopt_kb_load() reads everything it can and collects every problem,
 * its own and those of lib/catalog and lib/knowledge, in kb->problems,
 * sorted by file and line: a row whose detail file does not exist, a
 * detail file in the wrong folder or catalog, with no row or with two, a
 * catalog trigger that is not one of its detail file's.
 * It returns 0 even when there are problems; -1 only when a file could
 * not be read at all (error printed).  Entries point into the catalogs
 * and details they came from; everything is freed by kopt_kb_release().
 */

#include "buf.h"
#include "catalog.h"
#include "config.h"
#include "knowledge.h"
#include "problem.h"
#include "strvec.h"

struct kopt_kb_source {
	/* The file at `path` (from the top); 0, KOPT_ENOTFOUND or -1. */
	int (*read)(void *data, const char *path, struct kopt_buf *out);
	/* Every file under `dir`, recursively, as paths from the top. */
	int (*list)(void *data, const char *dir, struct kopt_strvec *out);
	void *data;
};

/* A source over the work tree at `top` (with a trailing '/'). */
void kopt_kb_source_worktree(struct kopt_kb_source *out, const char *top);

struct kopt_kb_catalog {
	char *language;               /* NULL for the shared catalog */
	char *path;
	int exists;
	struct kopt_catalog cat;
};

struct kopt_kb_entry {
	enum kopt_kind kind;
	const char *language;         /* NULL when shared */
	const char *path;             /* the detail file, or NULL */
	const struct kopt_catalog_row *row;   /* NULL: a file with no row */
	const struct kopt_kb_catalog *catalog;
	const struct kopt_detail *detail;     /* NULL: not readable */
};

struct kopt_kb {
	char *root;                   /* kopt.knowledge */
	struct kopt_kb_catalog *catalogs;     /* the shared one first */
	size_t catalogs_nr, catalogs_alloc;
	struct kopt_detail *details;
	size_t details_nr, details_alloc;
	struct kopt_kb_entry *entries;        /* in catalog order */
	size_t entries_nr, entries_alloc;
	struct kopt_strvec paths;             /* owns the entries' paths */
	struct kopt_problems problems;
};

#define KOPT_KB_INIT { 0 }

/*
 * Load the knowledge base of `cfg`.  With `language` NULL, every
 * language (configured, with a folder under the knowledge root, or with
 * a catalog); otherwise only the shared part and that language.
 */
int kopt_kb_load(struct kopt_kb *kb, const struct kopt_kb_source *src,
		 const struct kopt_config *cfg, const char *language);
void kopt_kb_release(struct kopt_kb *kb);

/*
 * Warnings, not problems: triggers written as code spans that look like
 * an expression (a comparison) but are none over the known metrics, such
 * as `dram > 70`.  They are read as prose for the agent to judge, as
 * every other span that is no expression (`Z`, `num_ctas`) is silently.
 * Appended to `out` as "<file>:<line>: ...", sorted.
 */
void kopt_kb_prose_warnings(const struct kopt_kb *kb,
			    struct kopt_problems *out);
/*
 * Warnings, not problems: catalog rows whose cells disagree with their
 * detail files (lib/catalog's kopt_catalog_cell_agrees: empty cells,
 * placeholders, other triggers, an Est. Impact far from the evidence),
 * each naming `git kopt learn sync <id>`, which rewrites them.
 */
void kopt_kb_sync_warnings(const struct kopt_kb *kb, struct kopt_problems *out);
/*
 * The trigger of an entry as its catalog row writes it, for an entry
 * whose triggers are prose: the Trigger Conditions (or When to Apply)
 * column's text, else the detail file's When to Apply contexts joined
 * by "; ", else "".  Appended to `out`.
 */
void kopt_kb_entry_prose(struct kopt_buf *out, const struct kopt_kb_entry *e);

/* The catalog for `language` (NULL: shared), or NULL if not loaded. */
const struct kopt_kb_catalog *kopt_kb_catalog(const struct kopt_kb *kb,
					      const char *language);
/* The entry whose detail file is `path`, or NULL. */
const struct kopt_kb_entry *kopt_kb_find(const struct kopt_kb *kb,
					 const char *path);
/*
 * The triggers of an entry: its detail file's, or, when the file has
 * none, those of its catalog row's Trigger Conditions.
 */
const struct kopt_trigger *kopt_kb_entry_triggers(const struct kopt_kb_entry *e,
						  size_t *nr);
/* The entry's name: its catalog row's, its detail file's H1, or its path. */
const char *kopt_kb_entry_name(const struct kopt_kb_entry *e);
/* A catalog ID qualified by its language when not shared ("cute-dsl/O2"). */
void kopt_kb_entry_id(struct kopt_buf *out, const struct kopt_kb_entry *e);

#endif
