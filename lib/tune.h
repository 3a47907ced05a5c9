#ifndef KOPT_TUNE_H
#define KOPT_TUNE_H

/*
 * The tuning space of a kernel and the searches over it.
 *
 * A kernel's settings name tuning parameters with their values
 * (`tune = BN=32,64,128`), restrictions over them and the trial's b, s, t
 * (`tune-restrict = BN * STAGES <= 512`, lib/expr) and the hand-picked
 * configuration (`tune-default`); lib/config reads and validates them.
 * A configuration gives each parameter one of its values; here it is a
 * vector of value indices, one per parameter, in the order the
 * parameters are written.
 *
 * kopt_tune_enumerate() lists the configurations that every restriction
 * allows at one trial shape, in odometer order (the last parameter
 * changes fastest).  Its names: kopt_tune_config_text() "BN=64,STAGES=3"
 * (the tuning cache's key, parsed back by kopt_tune_config_parse()) and
 * kopt_tune_config_id() "bn64-stages3" (the {tiling} placeholder, a
 * plain name).
 *
 * A search (struct kopt_tune_search) decides what to evaluate next from
 * what was measured so far; it never measures.  The caller loops:
 *
 *	kopt_tune_search_init(&s, &space, KOPT_TUNE_COARSE_TO_FINE, seed);
 *	while ((n = kopt_tune_search_next(&s, batch, max)) > 0)
 *		for each batch[i]: kopt_tune_search_record(&s, batch[i],
 *						    us, spread);  (NAN: invalid)
 *	s.best, s.stop (why it ended)
 *	kopt_tune_search_release(&s);
 *
 * Every search evaluates the hand-picked configuration first.
 * Exhaustive: then every configuration.  Random: then a uniform sample
 * without replacement (max_evals of them; 30% of the space unless set).
 * Coarse-to-fine: then a coarse step that explores how the time moves
 * with each parameter, one at a time: from the best so far, the
 * parameter at its coarse values (every value of a list of three or
 * fewer, else both ends and the middle: an end is often a special value
 * such as "automatic"); then,
 * only when the coarse best beats the baseline (the parent's time, or
 * the hand-picked configuration's) beyond the noise (lib/verdict), a
 * fine hill climb from it over neighbouring values (one step in one
 * parameter) until no neighbour is faster.  Unless max_evals says
 * otherwise it stops at 15% of the space (at least one evaluation per
 * parameter and the hand-picked one).  A run that
 * failed (its own check, a crash, a build error) is invalid and never the
 * best.  max_evals, when set, caps every strategy.  The same seed gives
 * the same sequence, so an interrupted run that is started again asks for
 * the same configurations (which the cache then serves).
 *
 * A failure (a restriction that does not evaluate, a space too large to
 * enumerate) is reported once through lib/error, at its line of the
 * settings file.
 */

#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "config.h"

struct kopt_tune_space {
	const struct kopt_kernel *kernel;
	size_t width;           /* kernel->tune_nr */
	size_t nr, alloc;
	unsigned *idx;          /* nr * width value indices */
	size_t dflt;            /* the hand-picked configuration's position */
};

#define KOPT_TUNE_SPACE_INIT { NULL, 0, 0, 0, NULL, 0 }

/* Spaces larger than this are refused when enumerated. */
#define KOPT_TUNE_MAX_SPACE 1000000

/*
 * Whether `values` (one per tuning parameter) pass every restriction at
 * b, s, t: *why is -1 when they do, else the index of the first
 * restriction that excludes them (a restriction that divides by zero
 * excludes).  KOPT_EINVALID when a restriction cannot be evaluated,
 * reported at its line of the settings file `file` (".kopt").
 */
int kopt_tune_allowed(const struct kopt_kernel *k, const double *values,
		      long b, long s, long t, int *why, const char *file);
/*
 * The configurations the restrictions allow at b, s, t: how many, or
 * all of them.  KOPT_EINVALID (reported, at a line of `file`) when a
 * restriction cannot be evaluated or the space before restrictions is
 * larger than KOPT_TUNE_MAX_SPACE.
 */
int kopt_tune_count(size_t *out, const struct kopt_kernel *k, long b, long s,
		    long t, const char *file);
/* The size of the space before restrictions (saturates at SIZE_MAX). */
size_t kopt_tune_full_size(const struct kopt_kernel *k);
int kopt_tune_enumerate(struct kopt_tune_space *out,
			const struct kopt_kernel *k, long b, long s, long t,
			const char *file);
void kopt_tune_space_release(struct kopt_tune_space *sp);
/* The values of configuration `i` into `values` (width of them). */
void kopt_tune_space_values(const struct kopt_tune_space *sp, size_t i,
			    double *values);
/* The position of the configuration with these values, or SIZE_MAX. */
size_t kopt_tune_space_find(const struct kopt_tune_space *sp,
			    const double *values);

void kopt_tune_config_text(struct kopt_buf *out, const struct kopt_kernel *k,
			   const double *values);
void kopt_tune_config_id(struct kopt_buf *out, const struct kopt_kernel *k,
			 const double *values);
/* Parse "BN=64,STAGES=3" (every parameter, in any order); KOPT_EINVALID. */
int kopt_tune_config_parse(double *values, const struct kopt_kernel *k,
			   const char *text);

enum kopt_tune_strategy {
	KOPT_TUNE_EXHAUSTIVE,
	KOPT_TUNE_RANDOM,
	KOPT_TUNE_COARSE_TO_FINE,
};

/* 0 and *out, or KOPT_EINVALID for an unknown name. */
int kopt_tune_strategy_parse(enum kopt_tune_strategy *out, const char *name);
const char *kopt_tune_strategy_name(enum kopt_tune_strategy s);

enum kopt_tune_stop {
	KOPT_TUNE_RUNNING = 0,
	KOPT_TUNE_DONE,         /* the strategy has nothing more to try */
	KOPT_TUNE_MAX_EVALS,    /* max_evals reached */
	KOPT_TUNE_NO_PROMISE,   /* coarse best within the noise of the baseline */
};

struct kopt_tune_search {
	const struct kopt_tune_space *space;
	enum kopt_tune_strategy strategy;
	size_t max_evals;       /* 0: the strategy's own limit */
	double noise_pct;       /* kopt.noise */
	double baseline_us;     /* the parent's time; NAN: the default's */
	double baseline_spread;
	/* per configuration */
	double *us;             /* NAN: not measured or invalid */
	double *spread;
	unsigned char *state;   /* 0 new, 1 asked, 2 measured, 3 invalid */
	size_t evals;           /* measured or invalid */
	size_t pending;         /* handed out, not recorded yet */
	size_t best;            /* SIZE_MAX while nothing is valid */
	int phase;              /* 0 default, 1 main/coarse, 2 fine, 3 end */
	size_t planned;         /* what the current phase will evaluate */
	enum kopt_tune_stop stop;
	/* private */
	uint64_t rng;
	size_t *order;          /* random: the shuffled positions */
	size_t order_nr, cursor;
	size_t climb_from;      /* fine: where the climb stands */
	size_t sweep;           /* coarse: the parameter being swept */
	size_t cap;             /* the strategy's own limit, 0 none */
	size_t coarse_best;
};

void kopt_tune_search_init(struct kopt_tune_search *s,
			   const struct kopt_tune_space *space,
			   enum kopt_tune_strategy strategy, uint64_t seed);
/*
 * Up to `max` positions to evaluate next into `out`; 0 when the search
 * is over (s->stop says why).  Every position handed out must be
 * recorded before the next call.
 */
size_t kopt_tune_search_next(struct kopt_tune_search *s, size_t *out,
			     size_t max);
/* `us` NAN: the configuration is invalid. */
void kopt_tune_search_record(struct kopt_tune_search *s, size_t i, double us,
			     double spread);
/*
 * The configuration to keep: the fastest (s->best), unless others are
 * within the noise of it (kopt_verdict_judge(), the rule that judges
 * versions: neither faster nor slower) and steadier, with a smaller
 * spread of their runs; then the steadiest of those.  SIZE_MAX while
 * nothing is valid.
 */
size_t kopt_tune_search_pick(const struct kopt_tune_search *s);
/* How many evaluations the search expects to make in all, from now. */
size_t kopt_tune_search_expected(const struct kopt_tune_search *s);
void kopt_tune_search_release(struct kopt_tune_search *s);

#endif
