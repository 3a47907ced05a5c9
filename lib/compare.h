#ifndef KOPT_COMPARE_H
#define KOPT_COMPARE_H

/*
 * Comparing a version's results with its parent's, trial by trial, for
 * the views (analyze, review): the change in duration and whether it is
 * an improvement, a regression or noise.
 *
 * A change counts when it is larger than kopt.noise and than the
 * run-to-run spread of either measurement (spread_pct); otherwise it is
 * neutral.  A version regressed when any trial regressed.  This is the
 * one place the views pair entries; the rule itself is lib/verdict's
 * (kopt_verdict_judge()), so a view never judges otherwise than the gate.
 *
 * Nothing allocates except kopt_compare_results(), whose array the
 * caller frees with free().
 */

#include <stddef.h>

#include "results.h"

enum kopt_change {
	KOPT_CHANGE_NONE = 0,        /* nothing to compare */
	KOPT_CHANGE_NEUTRAL,
	KOPT_CHANGE_IMPROVEMENT,
	KOPT_CHANGE_REGRESSION,
};

/* "improvement", "regression", "neutral", or "--". */
const char *kopt_change_name(enum kopt_change c);

/*
 * Classify `cur` against `parent` (same trial and configuration) on
 * duration.  *change_pct gets the signed change (+ is slower), NAN when
 * there is none.
 */
enum kopt_change kopt_compare_entries(const struct kopt_results_entry *cur,
				      const struct kopt_results_entry *parent,
				      double noise_pct, double *change_pct);

struct kopt_compare_trial {
	const struct kopt_results_entry *cur;     /* borrowed */
	const struct kopt_results_entry *parent;  /* borrowed, may be NULL */
	double change_pct;
	enum kopt_change change;
};

/*
 * Every entry of `cur` against the matching entry of `parent` (which may
 * be NULL).  *out (caller frees) has cur->entries_nr items.  Returns the
 * version's overall change: regression if any trial regressed, else
 * improvement if any improved, else neutral (or none).
 */
enum kopt_change kopt_compare_results(const struct kopt_results *cur,
				      const struct kopt_results *parent,
				      double noise_pct,
				      struct kopt_compare_trial **out);

#endif
