#include "compare.h"

#include <math.h>
#include <stdlib.h>

#include "render.h"
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
	double c, threshold = noise_pct;

	*change_pct = NAN;
	if (!cur || !parent)
		return KOPT_CHANGE_NONE;
	c = kopt_change_pct(cur->metrics[KOPT_METRIC_DURATION_US],
			    parent->metrics[KOPT_METRIC_DURATION_US]);
	if (!kopt_results_has(c))
		return KOPT_CHANGE_NONE;
	*change_pct = c;
	if (kopt_results_has(cur->spread_pct) && cur->spread_pct > threshold)
		threshold = cur->spread_pct;
	if (kopt_results_has(parent->spread_pct) &&
	    parent->spread_pct > threshold)
		threshold = parent->spread_pct;
	if (fabs(c) <= threshold)
		return KOPT_CHANGE_NEUTRAL;
	return c > 0 ? KOPT_CHANGE_REGRESSION : KOPT_CHANGE_IMPROVEMENT;
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
