#ifndef KOPT_LEARN_H
#define KOPT_LEARN_H

/*
 * LEARN: adding an entry to the knowledge base, as one change of two
 * files: the detail file, from the template, at the path the knowledge
 * protocol prescribes (shared or language-specific), and its row in the
 * catalog's index with the next ID.  Both are written through locks, the
 * catalog re-read under its lock so that two writers cannot take the
 * same ID; when the second write fails the first is undone.
 *
 * The request names what it can prefill: the H1 from the name, and,
 * given the results of a version and of its parent, the Performance
 * Evidence table (one row per trial measured on both, duration before,
 * after, change) and `Source type: local experiment`.  Everything else
 * keeps the template's placeholders, which lint reports until filled.
 *
 * kopt_learn_new() is idempotent: what exists already (the file, the
 * row) is left alone, and when both exist it does nothing and returns
 * KOPT_EEXISTS.  `report` receives one line per thing done.
 */

#include "buf.h"
#include "devlog.h"
#include "kb.h"
#include "knowledge.h"
#include "results.h"

struct kopt_learn_request {
	enum kopt_kind kind;
	const char *name;             /* as given: a slug or a title */
	const char *language;         /* NULL: shared knowledge */
	const char *catalog;          /* the catalog to add the row to */
	const char *template_text;    /* templates/<kind>.md */
	size_t template_len;
	const struct kopt_results *before, *after;  /* may be NULL */
};

/*
 * The file name for a knowledge name, the one rule for it: letters and
 * digits in lower case, '_' and '.' kept inside, every run of other
 * characters one '-' ("Split-KV decode, 4 splits" ->
 * "split-kv-decode-4-splits").
 */
char *kopt_learn_slug(const char *name);
/*
 * The name to suggest for what `version` of `kernel` taught (`what`:
 * "regression", "finding"): the slug of the first words of its devlog
 * title (`dl` may be NULL), else "<kernel>-<version>-<what>".  Never made
 * from a placeholder title.
 */
void kopt_learn_suggest_name(struct kopt_buf *out,
			     const struct kopt_devlog *dl, const char *kernel,
			     const char *version, const char *what);
/* The H1 for a name: as given, or a slug made readable. */
char *kopt_learn_title(const char *name);

/*
 * The template with its name and evidence filled in, into `out`.
 * KOPT_EINVALID (printed) when before/after have no trial in common.
 */
int kopt_learn_fill(struct kopt_buf *out, const struct kopt_learn_request *req);

/*
 * Add the entry to the work tree at `top` (trailing '/'), given the
 * loaded knowledge base `kb`.  0, KOPT_EEXISTS, or -1 (printed).
 */
int kopt_learn_new(const struct kopt_kb *kb, const char *top,
		   const struct kopt_learn_request *req,
		   struct kopt_buf *report);

/*
 * `learn sync`: rewrite the cells of catalog rows that disagree with
 * their detail files (lib/catalog's kopt_catalog_cells_from_detail and
 * kopt_catalog_cell_agrees: the rule lint warns by), splicing each row's
 * line and nothing else, each catalog under its lock.  `only` names
 * entries by ID ("O3", "cute-dsl/O2") or detail path; none: every entry
 * with a row and a readable file.  With `words`, cells whose words
 * differ from the file's are rewritten too (kopt_catalog_cell_agrees).
 * With `dry_run` nothing is written.
 * `report` receives "<catalog> <ID>: <columns> from <file>" per row.
 * The number of rows changed, KOPT_ENOTFOUND (printed) for a name that
 * is none of these, or a negative code (printed).
 */
int kopt_learn_sync(const struct kopt_kb *kb, const char *top,
		    const char *const *only, size_t only_nr, int dry_run,
		    int words, struct kopt_buf *report);

#endif
