#ifndef KOPT_ANALYSIS_H
#define KOPT_ANALYSIS_H

/*
 * A kernel's history as the views need it: its devlog and the results of
 * every version, each version compared with its parent.  Read from the
 * work tree (analyze) or from a git tree (review, check), through a
 * struct kopt_source, so that both see the same model.
 *
 *	struct kopt_source src;
 *	struct kopt_analysis a = KOPT_ANALYSIS_INIT;
 *	kopt_source_worktree(&src, ctx->top);
 *	if (kopt_analysis_load(&a, &src, "mla-decode", cfg->noise_pct))
 *		die;                        (problems printed, file:line)
 *	...
 *	kopt_analysis_release(&a);
 *
 * Versions are the union of the devlog's entries and the results files,
 * sorted by number.  A version's numbers (`results`) are its results
 * file's, else its devlog performance blocks' (lib/numbers, the one rule;
 * `source` says which); its parent is the one they name.  Every view
 * reads a kernel's numbers through kopt_analysis_load(), once per
 * command.  The analysis owns everything; pointers into it are borrowed.
 */

#include <git2.h>

#include "buf.h"
#include "compare.h"
#include "devlog.h"
#include "numbers.h"
#include "results.h"
#include "strvec.h"

struct kopt_cache;
struct kopt_index;

struct kopt_source {
	const char *top;        /* work tree with a trailing '/', or NULL */
	/*
	 * Work tree only, optional (kopt_source_worktree_cached()): each
	 * kernel's analysis is kept in the cache, and comes back slim
	 * (kopt_analysis_summary()), whether it was found there or not.
	 */
	struct kopt_cache *cache;
	struct kopt_index *index;   /* the ids of clean files, or NULL */
	/* what lib/overview derives from each analysis, by the same key */
	struct kopt_cache *overview;
	git_repository *repo;   /* for a tree source */
	git_tree *tree;
	const char *rev;        /* names the tree in messages ("HEAD") */
};

/* Files of the work tree under `top`. */
void kopt_source_worktree(struct kopt_source *src, const char *top);
/*
 * Files of the work tree under `top`, each kernel's analysis through the
 * cache <gitdir>/kopt/analyze/<kernel>, keyed by the ids of the files it
 * reads (see kopt_analysis_load()); the index gives the ids of files
 * that did not change since git last looked, as for git status.  An
 * index that cannot be read is no error: every file is then hashed.
 * Release with kopt_source_release().
 */
void kopt_source_worktree_cached(struct kopt_source *src,
				 git_repository *repo, const char *top);
void kopt_source_release(struct kopt_source *src);
/* Blobs of `tree` (borrowed). */
void kopt_source_tree(struct kopt_source *src, git_repository *repo,
		      git_tree *tree, const char *rev);
/*
 * Read a file (path relative to the top).  0; KOPT_ENOTFOUND (nothing
 * printed); -1 (printed).  `label` gets the name for messages:
 * "docs/kernels/k.md" or "HEAD:docs/kernels/k.md".
 */
int kopt_source_read(const struct kopt_source *src, const char *path,
		     struct kopt_buf *out, struct kopt_buf *label);
/* Names of the files directly in `dir`, sorted; KOPT_ENOTFOUND if none. */
int kopt_source_list(const struct kopt_source *src, const char *dir,
		     struct kopt_strvec *out);

struct kopt_analysis_version {
	char *name;
	long number;
	const struct kopt_devlog_version *entry;  /* devlog entry, or NULL */
	struct kopt_results results;   /* its numbers, from `source` */
	int has_results;        /* it has numbers (a file or devlog blocks) */
	int has_file;           /* it has a results file */
	enum kopt_numbers_source source;
	/* durations the devlog states otherwise than the results file */
	struct kopt_strvec disagree;
	int parent;             /* index into versions, or -1 */
	struct kopt_compare_trial *trials;  /* one per results entry */
	enum kopt_change change;
};

struct kopt_analysis {
	char *kernel;
	struct kopt_devlog devlog;
	int has_devlog;
	struct kopt_analysis_version *versions;
	size_t versions_nr, versions_alloc;
	double noise_pct;
};

#define KOPT_ANALYSIS_INIT { NULL, KOPT_DEVLOG_INIT, 0, NULL, 0, 0, 0 }

/*
 * Load a kernel.  A missing devlog or results directory is not an error;
 * a file that does not parse is (KOPT_EINVALID, each problem printed).
 * `cfg` names the trials and gives kopt.noise (NULL: the default noise).
 *
 * Through a cache (kopt_source_worktree_cached()), the kernel's key is
 * the blob ids of its devlog and of each results file the analysis
 * reads, with kopt.noise and the trials; a hit reads one small file
 * instead of parsing the kernel's, and a changed file in one kernel
 * changes that kernel's key only.  A kernel whose files do not parse is
 * never stored, so its problems are reported on every run.
 */
int kopt_analysis_load(struct kopt_analysis *out,
		       const struct kopt_source *src, const char *kernel,
		       const struct kopt_config *cfg);
void kopt_analysis_release(struct kopt_analysis *a);

/*
 * kopt_analysis_load() for a caller that has already computed the key
 * (kopt_analysis_key(): `keyed` its result, `key` the id) and wants the
 * key of what was read, to see whether a file changed meanwhile:
 * *after_keyed is 1 and *after that key when the analysis came from the
 * cache (`key` itself: no file was read) or from the files, every one
 * listed read; 0 otherwise.  The key of what was read comes from the
 * reads themselves: each file's stat data taken once its bytes are read
 * (clean in the index: the index's id, as for `key`), else the hash of
 * those bytes; so a view of many kernels stats each input once before
 * reading it, and lists each directory once more, not twice.  `key`
 * NULL (`keyed` 1): no key was taken before reading (the cache has no
 * entry for the kernel), and nothing is stored: the caller keeps what
 * it derives from the analysis under *after.
 */
int kopt_analysis_load_keyed(struct kopt_analysis *out,
			     const struct kopt_source *src,
			     const char *kernel,
			     const struct kopt_config *cfg, int keyed,
			     const git_oid *key, git_oid *after,
			     int *after_keyed);

/*
 * The key kopt_analysis_load() keeps a kernel's analysis under, in
 * `src`'s cache: an id over every input it reads.  1 with *out set; 0
 * when there is none (no cache, a tree source, or an input that is not
 * a plain readable file: the kernel is then read without the cache, and
 * its problems reported as without it).
 */
int kopt_analysis_key(git_oid *out, const struct kopt_source *src,
		      const char *kernel, const struct kopt_config *cfg);

/*
 * What the views read of an analysis, as text for lib/cache (the
 * devlog's summary without performance blocks, each version's numbers,
 * source and disagreements), and the analysis rebuilt from it: parents
 * and changes against them are worked out again with `noise_pct`.
 * `text` (`len` bytes and a NUL after them, as in a struct kopt_buf) is
 * modified.  KOPT_EINVALID (nothing printed) on damaged text.
 */
int kopt_analysis_summary(struct kopt_buf *out, const struct kopt_analysis *a);
int kopt_analysis_from_summary(struct kopt_analysis *out, char *text,
			       size_t len, const char *kernel,
			       double noise_pct);

const struct kopt_analysis_version *
kopt_analysis_find(const struct kopt_analysis *a, const char *version);
/*
 * Move the numbers of `version` out of `a` into *out (released first).
 * KOPT_ENOTFOUND when it has none (printed, naming what to run).
 */
int kopt_analysis_take(struct kopt_results *out, struct kopt_analysis *a,
		       const char *version);
/*
 * The versions' numbers in version order, for the targets
 * (kopt_target_evaluate()): pointers into `a`, NULL-free; *nr of them.
 * The caller frees the array.
 */
const struct kopt_results **kopt_analysis_numbers(const struct kopt_analysis *a,
						  size_t *nr);

/*
 * The fastest measured entry for `trial` over all versions (NULL when
 * none), and its version in *ver.
 */
const struct kopt_results_entry *
kopt_analysis_best(const struct kopt_analysis *a, const char *trial,
		   const struct kopt_analysis_version **ver);

#endif
