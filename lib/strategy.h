#ifndef KOPT_STRATEGY_H
#define KOPT_STRATEGY_H

/*
 * STRATEGIZE and SELECT: from a version's measured results and the
 * knowledge base, the Optimization Task handed to the kernel designer,
 * and the implementation language it needs.
 *
 * kopt_strategy_compute() evaluates the triggers of every entry of the
 * loaded knowledge base (the shared catalog and the kernel's language)
 * on every trial entry of the results.  An entry holds when all its
 * triggers hold on some trial; it is unknown when a metric it reads was
 * not measured and the rest does not decide.  Optimizations that hold
 * are ranked by score = impact x (1 + min(margin, 1)): the catalog's
 * Est. Impact, doubled at most for a trigger 100% or more past its
 * threshold.  Anti-patterns that hold become things to avoid.  An
 * optimization whose evidence is a local experiment on this kernel that
 * produced a version of the lineage (the current version and its
 * ancestors: "Source type: local experiment (<kernel> v1 -> v2, ...)",
 * as `learn new --from` writes it) is already in the code: it is listed
 * as applied, not proposed again.
 *
 * kopt_strategy_render() prints the Optimization Task contract of the
 * workflow exactly; kopt_strategy_json() the same as JSON.  Everything
 * borrowed (kb entries, config) must outlive the strategy; free it with
 * kopt_strategy_release().
 */

#include <git2.h>

#include "analysis.h"
#include "buf.h"
#include "config.h"
#include "kb.h"
#include "results.h"
#include "strvec.h"

struct kopt_strategy_item {
	const struct kopt_kb_entry *entry;
	enum kopt_truth truth;
	double margin;            /* best over the trials where it holds */
	double impact;            /* percent, from Est. Impact */
	int impact_known;
	double score;
	struct kopt_buf holds;    /* "decode (waves=0.42)" ... */
	struct kopt_strvec missing;
	struct kopt_strvec trials;    /* names of the trials where it holds */
	struct kopt_strvec unknown_on;    /* ... and where it is unknown */
	char *applied_in;         /* the version of the lineage that applied it */
};

struct kopt_strategy {
	const char *kernel;
	const char *current, *next;
	const struct kopt_language *language;
	struct kopt_buf bottleneck;
	struct kopt_strategy_item *apply;  /* optimizations, ranked */
	size_t apply_nr, apply_alloc;
	size_t chosen;                     /* the first `chosen` are the task */
	struct kopt_strategy_item *avoid;  /* anti-patterns that hold */
	size_t avoid_nr, avoid_alloc;
	struct kopt_strategy_item *unknown;
	size_t unknown_nr, unknown_alloc;
	/* optimizations that hold but a version of the lineage applied */
	struct kopt_strategy_item *applied;
	size_t applied_nr, applied_alloc;
	struct kopt_strvec untriggered;    /* "O2 Head grouping" */
	/*
	 * The same entries to judge: their trigger is prose (or missing),
	 * for the agent to weigh against the profile; optimizations first,
	 * each kind ranked by impact.  With no optimization chosen, the
	 * task's Optimizations to Apply lists the first of them.
	 */
	struct kopt_strategy_item *judge;
	size_t judge_nr, judge_alloc;
	size_t max;                        /* the most the task applies */
	/* constraints */
	int reg_budget, max_threads;
	double occ_target;
	double regs_now, spill_now, occ_now;  /* max over trials; <0 unknown */
	struct kopt_buf occ_text;             /* "24.8% on decode, ..." */
	enum kopt_control control;            /* required by the chosen */
	struct kopt_buf control_why;
	const char *device;
	int replayed;
};

#define KOPT_STRATEGY_DEFAULT_MAX 3

/*
 * `results` are the current version's; `lineage` (may be NULL) names the
 * current version and its ancestors; `max` bounds how many ranked
 * optimizations the task applies.  Returns 0 or KOPT_EINVALID (a
 * trigger failed to evaluate; printed).
 */
int kopt_strategy_compute(struct kopt_strategy *out, const struct kopt_kb *kb,
			  const struct kopt_results *results,
			  const struct kopt_config *cfg,
			  const struct kopt_kernel *kernel,
			  const char *current, const char *next,
			  const struct kopt_strvec *lineage, size_t max);

/*
 * The version of `lineage` that the evidence line `source` says was made
 * by applying the entry to `kernel` ("<kernel> <from> -> <to>"), or NULL;
 * borrowed from `lineage`.
 */
const char *kopt_strategy_applied_in(const char *source, const char *kernel,
				     const struct kopt_strvec *lineage);
void kopt_strategy_release(struct kopt_strategy *s);

/* The task in Markdown; links relative to the folder `task_dir`. */
void kopt_strategy_render(struct kopt_buf *out, const struct kopt_strategy *s,
			  const char *task_dir);
void kopt_strategy_json(struct kopt_buf *out, const struct kopt_strategy *s,
			const char *task_path);

/*
 * Reading a task back (written by kopt_strategy_render() or by hand):
 * the current version its "Optimization Task: <kernel> <current> ->
 * <next>" heading names (NULL when none; owned by the caller), and the
 * link targets of the items under "### Optimizations to Apply", as
 * written (relative to the task's folder).
 */
char *kopt_strategy_task_current(const char *text, size_t len);
void kopt_strategy_task_links(struct kopt_strvec *out, const char *text,
			      size_t len);

/* A relative path from the folder `from_dir` to `to` (both from the top). */
char *kopt_relative_path(const char *from_dir, const char *to);

/*
 * The versions of `kernel` that exist: a version of `a` (the kernel's
 * analysis: a results file or a devlog entry), a source folder (the
 * kernel's `source` pattern) or a kopt/<kernel>/<version> branch.
 * *newest_results is the newest with numbers (measured or from the
 * devlog; NULL when none), *next the first version number after all of
 * them; both owned by the caller.
 */
int kopt_kernel_versions(const char *top, git_repository *repo,
			 const struct kopt_kernel *kernel,
			 const struct kopt_analysis *a,
			 char **newest_results, char **next);

/* What kopt_strategy_load() computes the task of. */
struct kopt_strategy_request {
	const char *top;                  /* the work tree, with a '/' */
	git_repository *repo;             /* for version branches; or NULL */
	const struct kopt_config *cfg;
	const struct kopt_kernel *kernel;
	const char *version;    /* a valid version name; NULL: the newest
				 * version with numbers */
	size_t max;             /* as kopt_strategy_compute()'s */
};

/*
 * The Optimization Task of a kernel at a version, as STRATEGIZE
 * computes it: the kernel's numbers (kopt_analysis_load()), the
 * current version's into *res, the knowledge base of the kernel's
 * language into *kb, and the task into *out, which borrows from both.
 * *current and *next are the version names, owned by the caller
 * (NULL after a failure).
 * Knowledge-base warnings are reported as warnings.  Returns 0;
 * KOPT_ENOTFOUND when the version has no numbers; KOPT_EINVALID when
 * the knowledge base has problems (each reported, then a summary
 * naming `git kopt learn lint`); or a callee's code.  All printed.
 */
int kopt_strategy_load(struct kopt_strategy *out, struct kopt_kb *kb,
		       struct kopt_results *res, char **current, char **next,
		       const struct kopt_strategy_request *req);

/* SELECT */
struct kopt_selection {
	const struct kopt_language *language;   /* the choice */
	const struct kopt_language *current;
	enum kopt_control required;
	struct kopt_buf why;      /* the reasoning, one line per point */
	struct kopt_strvec needs; /* "Tensor-core MMA (O4): warp" */
};

/*
 * Choose, among the configured languages, the one of least control that
 * gives `required`, keeping `current` when it suffices.  KOPT_ENOTFOUND
 * when no language gives enough control.
 */
int kopt_select_language(struct kopt_selection *out,
			 const struct kopt_config *cfg,
			 const struct kopt_language *current,
			 enum kopt_control required);
void kopt_selection_release(struct kopt_selection *sel);

/* The control an entry needs: its declaration, at least its language's. */
enum kopt_control kopt_entry_control(const struct kopt_kb_entry *e,
				     const struct kopt_config *cfg);

#endif
