#include "compare.h"

#include <math.h>
#include <stdlib.h>

#include "render.h"
#include "verdict.h"
#include "banned.h"

const char *kopt_change_name(enum kopt_change c)
{
	switch (c) {
	case KOPT_CHANGE_NEUTRAL:
		return "neutral";
	case KOPT_CHANGE_IMPROVEMENT:
		return "improvement";
	case KOPT_CHANGE_REGRESSION:
		return "regression";
	default:
		return "--";
	}
}

enum kopt_change kopt_compare_entries(const struct kopt_results_entry *cur,
				      const struct kopt_results_entry *parent,
				      double noise_pct, double *change_pct)
{
	enum kopt_verdict v;
	double c = NAN;

	*change_pct = NAN;
	if (!cur || !parent)
		return KOPT_CHANGE_NONE;
	/* the rule is the gate's: a view never judges differently */
	v = kopt_verdict_judge(parent->metrics[KOPT_METRIC_DURATION_US],
			       parent->spread_pct,
			       cur->metrics[KOPT_METRIC_DURATION_US],
			       cur->spread_pct, noise_pct, &c, NULL);
	if (v == KOPT_VERDICT_NONE)
		return KOPT_CHANGE_NONE;
	*change_pct = c;
	switch (v) {
	case KOPT_VERDICT_IMPROVEMENT:
		return KOPT_CHANGE_IMPROVEMENT;
	case KOPT_VERDICT_REGRESSION:
		return KOPT_CHANGE_REGRESSION;
	default:
		return KOPT_CHANGE_NEUTRAL;
	}
}

enum kopt_change kopt_compare_results(const struct kopt_results *cur,
				      const struct kopt_results *parent,
				      double noise_pct,
				      struct kopt_compare_trial **out)
{
	enum kopt_change all = KOPT_CHANGE_NONE;
	size_t i;

	*out = kopt_calloc(cur->entries_nr + 1, sizeof(**out));
	for (i = 0; i < cur->entries_nr; i++) {
		struct kopt_compare_trial *t = &(*out)[i];
		t->cur = &cur->entries[i];
		t->parent = parent ? kopt_results_find_like(parent, t->cur) :
			    NULL;
		t->change = kopt_compare_entries(t->cur, t->parent, noise_pct,
						 &t->change_pct);
		if (t->change > all)
			all = t->change;
	}
	return all;
}
