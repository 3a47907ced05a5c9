#ifndef KOPT_OVERVIEW_H
#define KOPT_OVERVIEW_H

/*
 * A kernel at a glance: what `git kopt analyze` shows on a kernel's line
 * and what `git kopt status` needs to place it in the cycle, derived
 * from its analysis (lib/analysis) and nothing else, so that the views
 * that show every kernel do work per kernel, not per version.
 *
 *	struct kopt_overview ov = KOPT_OVERVIEW_INIT;
 *	if (kopt_overview_load(&ov, &src, k, cfg))
 *		...                 the analysis failed (problems printed)
 *	...
 *	kopt_overview_release(&ov);
 *
 * Through a cached work-tree source (kopt_source_worktree_cached()),
 * the overview is kept in <gitdir>/kopt/overview/<kernel> under a key
 * over the analysis's key (the ids of every file it reads, as git
 * status finds them) and the kernel's targets as written: a hit reads
 * that one small entry and no analysis; anything else is derived from
 * kopt_analysis_load() and stored when no input changed meanwhile.
 * Without a cache it is derived every time, the same way.
 *
 * Each part is what the analysis gives through its one rule: the best
 * per trial is kopt_analysis_best(), each target
 * kopt_target_evaluate() over kopt_analysis_numbers() (its error
 * message kept as text), the regressions kopt_obligations_regressions()
 * (recorded or not: which are open depends on the knowledge base and
 * the history, read by the caller), a version's verdict
 * kopt_verdict_compare() against its parent with numbers.  The overview
 * owns everything; pointers into it are borrowed.
 */

#include "analysis.h"
#include "config.h"
#include "error.h"
#include "obligations.h"
#include "verdict.h"

struct kopt_overview_version {
	char *name;
	int has_results;        /* as the analysis says */
	enum kopt_numbers_source source;
	size_t disagree;        /* durations the devlog states otherwise */
	/* against its parent with numbers; KOPT_VERDICT_NONE when none */
	enum kopt_verdict verdict;
};

/* The fastest version of one trial of the settings (kopt_analysis_best()). */
struct kopt_overview_best {
	char *version;          /* NULL: no version measured on the trial */
	double duration_us;
	enum kopt_numbers_source source;  /* of that entry */
};

/* One target of the kernel's settings, evaluated. */
struct kopt_overview_target {
	/* when `problem` is NULL; target and version point into this */
	struct kopt_target_result res;
	char *problem;          /* why it could not be evaluated, or NULL */
	char *version;
};

struct kopt_overview {
	char *kernel;
	struct kopt_overview_version *versions;   /* in version order */
	size_t versions_nr;
	size_t numbers_nr;      /* versions with numbers */
	struct kopt_overview_best *best;          /* one per cfg->trials */
	size_t best_nr;
	struct kopt_overview_target *targets;     /* one per k->targets */
	size_t targets_nr;
	struct kopt_obligation *regressions;
	size_t regressions_nr;
};

#define KOPT_OVERVIEW_INIT { NULL, NULL, 0, 0, NULL, 0, NULL, 0, NULL, 0 }

/*
 * The overview of kernel `k`: 0, or the error of kopt_analysis_load()
 * (each problem printed; nothing is stored then).
 */
int kopt_overview_load(struct kopt_overview *out,
		       const struct kopt_source *src,
		       const struct kopt_kernel *k,
		       const struct kopt_config *cfg);
/*
 * kopt_overview_load() of each of the `nr` kernels into out[i] (each
 * KOPT_OVERVIEW_INIT), its result in rets[i], on up to `threads` threads
 * (lib/parallel): the messages come out in kernel order, as the loads
 * one after the other would print them.  Returns 0, or the first
 * kernel's error in that order.
 */
int kopt_overview_load_all(struct kopt_overview *out, int *rets,
			   const struct kopt_source *src,
			   const struct kopt_kernel *kernels, size_t nr,
			   const struct kopt_config *cfg, int threads);
/*
 * The same for a caller that reports more of each kernel around its
 * overview: kernel i is loaded unless skip (when not NULL) has skip[i]
 * set, and what its load reports is kept in caught[i] (each
 * KOPT_ERROR_CATCH_INIT) for the caller to replay
 * (kopt_error_catch_replay()) and release.
 */
void kopt_overview_load_many(struct kopt_overview *out, int *rets,
			     struct kopt_error_catch *caught,
			     const struct kopt_source *src,
			     const struct kopt_kernel *kernels, size_t nr,
			     const struct kopt_config *cfg, int threads,
			     const char *skip);
/* The same, from an analysis already loaded (nothing cached). */
void kopt_overview_from_analysis(struct kopt_overview *out,
				 const struct kopt_analysis *a,
				 const struct kopt_kernel *k,
				 const struct kopt_config *cfg);
void kopt_overview_release(struct kopt_overview *ov);

/*
 * The overview as text for lib/cache, and back: `text` (`len` bytes
 * and a NUL after them) is modified; `k` and `cfg` must be those it
 * was derived with.  KOPT_EINVALID (nothing printed) on damaged text.
 */
void kopt_overview_text(struct kopt_buf *out, const struct kopt_overview *ov);
int kopt_overview_from_text(struct kopt_overview *out, char *text,
			    size_t len, const struct kopt_kernel *k,
			    const struct kopt_config *cfg);

const struct kopt_overview_version *
kopt_overview_find(const struct kopt_overview *ov, const char *version);

#endif
