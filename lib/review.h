#ifndef KOPT_REVIEW_H
#define KOPT_REVIEW_H

/*
 * REVIEW: what a range of commits did to a kernel repository, read from
 * git objects only (never the work tree), for the pull-request comment
 * of `git kopt review`.
 *
 * kopt_review_load() takes the two ends of the range and finds:
 * - the commits of the range, with their `Kopt-Learn: skip` reasons and
 *   Kopt-Kernel / Kopt-Version trailers (lib/trailers);
 * - the files the range changed, and which of them lie in the knowledge
 *   base (lib/knowledge's rule);
 * - the catalog rows added, changed or deleted (lib/catalog);
 * - per kernel whose devlog or results changed (lib/paths), the versions
 *   added or whose numbers changed, a before/after view of each version
 *   whose numbers changed (against the base's numbers of the same
 *   version, else its parent's), and its regressions against the parent
 *   as the gate judges them (lib/analysis), each with its LEARN status:
 *   "recorded" when an anti-pattern detail file or a catalog the range
 *   changed mentions the version, "skipped" when a commit of the range
 *   says `Kopt-Learn: skip`, else "missing".
 *
 * Thresholds (kopt.noise) come from the base's .kopt, so that a change
 * cannot loosen them; the knowledge base and the catalogs are the head's.
 *
 * Everything belongs to the review; free it with kopt_review_release().
 */

#include <git2.h>

#include "analysis.h"
#include "config.h"
#include "strvec.h"

struct kopt_review_commit {
	char id[GIT_OID_HEXSZ + 1];
	char *subject;
	char *skip;             /* Kopt-Learn: skip <reason>, or NULL */
	char *kernel, *version; /* trailers, or NULL */
};

struct kopt_review_file {
	char *path;
	char status;            /* 'A', 'M', 'D' */
	int knowledge;          /* under the knowledge base's folder */
};

struct kopt_review_row {
	char *file;             /* the catalog */
	char *id, *name;        /* "" when the row has none */
	char status;            /* 'A', 'M', 'D' */
};

struct kopt_review_version {
	char *kernel, *version;
	const char *what;       /* "added", "results added", ... */
	char *title;            /* of its devlog entry, or "" */
};

struct kopt_review_perf {
	char *kernel, *version;
	char *before_label;     /* "v1 (parent)", "v2 at <base>" or "--" */
	const struct kopt_results *before;  /* borrowed; may be NULL */
	const struct kopt_results *after;
};

struct kopt_review_regression {
	char *kernel, *version, *against, *trial;
	double change_pct;
	const char *learn;      /* "recorded", "skipped", "missing" */
	char *detail;           /* the file that records it, the skip
				 * reason, or NULL */
};

struct kopt_review {
	git_repository *repo;
	git_commit *base, *head;
	git_tree *base_tree, *head_tree;
	char base_id[GIT_OID_HEXSZ + 1], head_id[GIT_OID_HEXSZ + 1];
	struct kopt_config base_cfg, head_cfg;
	const struct kopt_config *cfg;      /* thresholds: the base's */
	const char *knowledge;
	struct kopt_review_commit *commits;
	size_t commits_nr, commits_alloc;
	struct kopt_review_file *files;
	size_t files_nr, files_alloc;
	struct kopt_strvec kernels;
	struct kopt_strvec catalogs;  /* of the head's settings */
	struct kopt_analysis *before, *after;   /* per kernel */
	struct kopt_review_version *versions;
	size_t versions_nr, versions_alloc;
	struct kopt_review_perf *perfs;
	size_t perfs_nr, perfs_alloc;
	struct kopt_review_regression *regressions;
	size_t regressions_nr, regressions_alloc;
	struct kopt_review_row *catalog;
	size_t catalog_nr, catalog_alloc;
};

/*
 * Review the range from `base` to `head` (commits of `repo`, borrowed).
 * Returns 0, or a negative code (printed); *out is to be released
 * either way.
 */
int kopt_review_load(struct kopt_review *out, git_repository *repo,
		     git_commit *base, git_commit *head);
void kopt_review_release(struct kopt_review *rv);

#endif
