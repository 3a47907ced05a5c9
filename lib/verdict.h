#ifndef KOPT_VERDICT_H
#define KOPT_VERDICT_H

/*
 * Verdicts: a version against its parent, per trial, as an improvement,
 * a regression or neutral.
 *
 * The figure compared is `duration_us` (one pass of the whole pipeline).
 * The change is (child - parent) / parent in percent.  A change counts
 * only beyond the threshold max(kopt.noise, spread of the parent, spread
 * of the child), where a spread is the run-to-run spread of the
 * measurement (`spread_pct` in the results file): a change inside the
 * spread is neutral however small the noise setting is.  Entries are
 * paired by trial name and configuration (b, s, t); an entry without a
 * partner, or without a duration, is not compared.
 *
 * The version's verdict is a regression when any trial regressed, an
 * improvement when at least one improved and none regressed, neutral
 * when all compared trials are neutral, and KOPT_VERDICT_NONE when no
 * trial could be compared.
 *
 * The verdict reads struct kopt_results (lib/results); the figures are
 * the entry's `duration_us` metric and its `spread_pct`.
 */

#include <stddef.h>

#include "config.h"
#include "numbers.h"
#include "results.h"

enum kopt_verdict {
	KOPT_VERDICT_NONE = 0,
	KOPT_VERDICT_NEUTRAL,
	KOPT_VERDICT_IMPROVEMENT,
	KOPT_VERDICT_REGRESSION,
};

struct kopt_trial_verdict {
	const char *trial;      /* borrowed from the child's measures */
	long b, s, t;
	double parent_us, child_us;
	double change_pct;      /* positive: slower */
	double threshold_pct;   /* the change that counts */
	enum kopt_verdict verdict;
};

struct kopt_verdicts {
	struct kopt_trial_verdict *items;
	size_t nr, alloc;
	enum kopt_verdict overall;
};

#define KOPT_VERDICTS_INIT { NULL, 0, 0, KOPT_VERDICT_NONE }

/* One trial: the verdict and, through the pointers when not NULL, figures. */
enum kopt_verdict kopt_verdict_judge(double parent_us, double parent_spread,
				     double child_us, double child_spread,
				     double noise_pct, double *change_pct,
				     double *threshold_pct);
/*
 * Compare every entry of `child` with its partner in `parent` (the same
 * trial and configuration).  The verdicts borrow trial names from
 * `child`, which must outlive them.
 */
void kopt_verdict_compare(struct kopt_verdicts *out,
			  const struct kopt_results *parent,
			  const struct kopt_results *child, double noise_pct);
void kopt_verdicts_release(struct kopt_verdicts *v);

const char *kopt_verdict_name(enum kopt_verdict v);

/*
 * Targets (`target = <trial> <condition>` in a kernel's settings) against
 * the results of every version.  A target is met when some version's
 * entry for the trial (at the trial's configuration) satisfies the
 * condition; the version reported is then the fastest that does, else
 * the fastest measured for the trial, with the gap when the condition
 * reads "<metric> <op> <number>".
 */
struct kopt_target_result {
	const struct kopt_target *target;  /* borrowed */
	int met;
	int measured;           /* some version has an entry for the trial */
	const char *version;    /* borrowed from the results, or NULL */
	int replayed;           /* that version's numbers were replayed */
	enum kopt_numbers_source source;  /* of that version's numbers */
	char metric[32];        /* "" unless the condition is "<metric> <op> <n>" */
	double value;           /* the metric of that version, or NAN */
	double bound;           /* the number of the condition, or NAN */
};

/*
 * Whether target `t` is met: the one rule that evaluate, analyze, status
 * and the gate apply.  `results` point at the numbers of the versions
 * (one each, any order), as lib/numbers gives them
 * (kopt_analysis_numbers()).  A version's entry is the one measured at
 * the trial's configuration (name and b, s, t), as verdicts pair entries.
 * KOPT_EINVALID (reported) when the condition does not parse or the
 * trial is unknown; a metric that was not measured makes a version not
 * count.
 */
int kopt_target_evaluate(struct kopt_target_result *out,
			 const struct kopt_config *cfg,
			 const struct kopt_target *t,
			 const struct kopt_results *const *results, size_t nr);
/* KOPT_VERDICT_NONE for anything but the three names. */
enum kopt_verdict kopt_verdict_parse(const char *s);

#endif
