#ifndef KOPT_TRIGGER_H
#define KOPT_TRIGGER_H

/*
 * Triggers: the machine-checkable conditions of the knowledge base, such
 * as `dram_pct > 70 and tc_pct < 20`, written in the expression language
 * of lib/expr over the canonical metric names of a results entry
 * (Documentation/results-format.md) and the trial's b, s, t.
 *
 * kopt_trigger_parse() checks a condition once: its syntax, that every
 * name is canonical, and that it is a condition (comparisons joined by
 * and/or/not), not a bare number.  kopt_trigger_eval() evaluates it
 * on measured values in three-valued logic: a comparison over
 * a metric that was not measured is unknown, not false, and `and`/`or`
 * follow Kleene's rules (false and unknown is false).  It also says how
 * far past its threshold the condition is (the margin, relative to the
 * threshold: 0.5 means 50% beyond it; negative when it does not hold).
 * `and` takes the smaller margin of its sides, `or` the larger, `not`
 * the opposite.
 */

#include "buf.h"
#include "expr.h"
#include "strvec.h"

/*
 * The names a trigger may use: the canonical metrics of lib/results
 * (duration_us, tc_pct, ..., roofline_pct) and the trial's b, s, t.
 */
int kopt_trigger_known_name(const char *name);
/* "duration_us, tc_pct, ..., t" for messages. */
void kopt_trigger_names(struct kopt_buf *out);

/*
 * A kopt_expr_lookup_fn over a struct kopt_results_entry (`data`):
 * b, s, t from its configuration, the rest from its metrics;
 * KOPT_ENOTFOUND for a metric that was not measured.
 */
int kopt_trigger_entry_lookup(void *data, const char *name, double *out);

struct kopt_trigger {
	char *text;              /* the condition as written */
	struct kopt_expr *expr;
	int line;
};

/*
 * Parse and check `text`, written at `file`:`line`.  On failure returns
 * KOPT_EINVALID, reported there (e.g. "<file>:<line>: unknown metric
 * 'dram' (known: ...)"; `.cause` of a catch is the part after the
 * place); *out is left empty.  kopt_trigger_release() frees a parsed
 * trigger.
 */
int kopt_trigger_parse(struct kopt_trigger *out, const char *text,
		       const char *file, int line);
void kopt_trigger_release(struct kopt_trigger *t);

/*
 * The conditions that must all hold for `t`: its operands of a top-level
 * `and`, each in a canonical spelling, so that `a and b` written as one
 * trigger and `a`, `b` written as two compare equal.
 */
void kopt_trigger_conjuncts(const struct kopt_trigger *t,
			    struct kopt_strvec *out);

enum kopt_truth {
	KOPT_TRUTH_FALSE = 0,
	KOPT_TRUTH_TRUE = 1,
	KOPT_TRUTH_UNKNOWN = 2,
};

struct kopt_trigger_result {
	enum kopt_truth truth;
	double margin;                 /* meaningful unless unknown */
	struct kopt_strvec missing;    /* metrics that were not measured */
	struct kopt_buf values;        /* "waves=0.42, tc_pct=12" */
};

#define KOPT_TRIGGER_RESULT_INIT { KOPT_TRUTH_UNKNOWN, 0, KOPT_STRVEC_INIT, \
	KOPT_BUF_INIT }

/*
 * Evaluate `t` into `out` (which is reset first), binding names through
 * `lookup` (KOPT_ENOTFOUND: not measured), e.g.
 * kopt_trigger_entry_lookup() over a results entry.  Returns 0, or
 * KOPT_EINVALID when the arithmetic fails (division by zero), reported
 * as "<file>:<line>: trigger `<text>`: <why>" (`file` is where the
 * trigger is written, `line` the trigger's).
 */
int kopt_trigger_eval(struct kopt_trigger_result *out,
		      const struct kopt_trigger *t,
		      kopt_expr_lookup_fn lookup, void *data, const char *file);
void kopt_trigger_result_release(struct kopt_trigger_result *r);

const char *kopt_truth_name(enum kopt_truth t);

#endif
