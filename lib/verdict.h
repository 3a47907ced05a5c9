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
 * struct kopt_measures is the part of a results file (see
 * Documentation/results-format.md) that verdicts, targets and hooks read;
 * kopt_measures_parse() fills it from the file's JSON.  Everything in it
 * is owned by it (kopt_measures_release()).
 */

#include <stddef.h>

#include "buf.h"

struct kopt_metric {
	char *name;
	double value;
};

struct kopt_measure {
	char *trial;            /* NULL for an ad-hoc configuration */
	long b, s, t;
	double duration_us;     /* NAN when not measured */
	double spread_pct;      /* NAN when unknown */
	struct kopt_metric *metrics;
	size_t metrics_nr, metrics_alloc;
};

struct kopt_measures {
	char *kernel;
	char *version;
	char *parent;           /* NULL for the base version */
	int replayed;           /* any entry replayed */
	struct kopt_measure *items;
	size_t nr, alloc;
};

#define KOPT_MEASURES_INIT { NULL, NULL, NULL, 0, NULL, 0, 0 }

/*
 * Parse a results file held in memory; `label` names it in messages.
 * KOPT_EINVALID when it is not a results file this tool reads: the
 * problem, naming the file, is described in `err` when it is not NULL,
 * else printed.
 */
int kopt_measures_parse(struct kopt_measures *out, const char *text,
			size_t len, const char *label, struct kopt_buf *err);
void kopt_measures_release(struct kopt_measures *m);
/* A metric of an entry ("duration_us", "tflops"...); 0 or KOPT_ENOTFOUND. */
int kopt_measure_metric(const struct kopt_measure *e, const char *name,
			double *out);
/* The entry of `trial` (NULL: the first entry with no trial name). */
const struct kopt_measure *kopt_measures_find(const struct kopt_measures *m,
					      const char *trial);

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
 * Compare every entry of `child` with its partner in `parent`.  The
 * results borrow trial names from `child`, which must outlive them.
 */
void kopt_verdict_compare(struct kopt_verdicts *out,
			  const struct kopt_measures *parent,
			  const struct kopt_measures *child, double noise_pct);
void kopt_verdicts_release(struct kopt_verdicts *v);

const char *kopt_verdict_name(enum kopt_verdict v);
/* KOPT_VERDICT_NONE for anything but the three names. */
enum kopt_verdict kopt_verdict_parse(const char *s);

#endif
