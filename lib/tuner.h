#ifndef KOPT_TUNER_H
#define KOPT_TUNER_H

/*
 * TUNE: the best configuration of one version, per trial, within a
 * budget.
 *
 * For each trial, kopt_tuner_run() enumerates the space at the trial's
 * shape (lib/tune), lets the chosen search pick configurations, serves
 * each from the tuning cache when the same device, trial shape, source
 * tree, build command and configuration were measured before
 * (lib/tunecache), and otherwise builds the configurations of a batch in
 * parallel and runs them through the executor (lib/executor: one at a
 * time under the GPU lock locally, a job array on Slurm).  The time is
 * read from the benchmark's own report (`tune-time`, "median {us} us"
 * by default); a run that fails (its own correctness check, a crash, a
 * hang, a build error) or prints no time is invalid, never fast.  Every
 * evaluation is saved to the cache as soon as its batch ends, so an
 * interrupted run loses at most one batch.  The plan is journaled too
 * (lib/tuneplan): with `resume`, the run takes the journaled strategy,
 * seed, --max-evals and trials, feeds the search what the interrupted
 * run had evaluated, and evaluates only what the plan still had to do
 * (`resumed` of `resumed_of` per trial); KOPT_ENOTFOUND (reported) when
 * there is no plan to resume, and a plan made for other sources or
 * commands is refused, as is a strategy, seed, --max-evals or set of
 * trials given again (`given`) that differs from the plan's.
 *
 * The time of each evaluation comes with its spread, (max - min) /
 * median of its runs, read from "min <x>" and "max <y>" in the
 * benchmark's report; within the noise of the fastest (lib/verdict's
 * rule) the steadiest configuration is kept, and the trial says so
 * (`fastest`).
 *
 * The budget (1 hour unless set) covers the whole call.  After the first
 * evaluations measured here, the time per evaluation gives an estimate of
 * what the search plans; a plan that cannot fit is refused
 * (KOPT_ETOOBIG, error printed) unless `force`; a run that reaches the
 * budget stops and says so.  Coarse-to-fine only refines when the coarse
 * best beats the parent version (its results file, same trial) beyond
 * the noise (lib/verdict), or the hand-picked configuration when the
 * parent has no numbers.
 *
 * Progress goes to lib/progress, one task per trial: done of planned,
 * best so far and an estimate of the time left (elapsed is the sink's);
 * nothing prints here except through kopt_error().  kopt_tuner_write() records the outcome: a
 * `tuning` member per trial in the version's results file and a
 * **Tuning** block in its devlog entry (spliced, lib/devlog's model).
 */

#include <stdint.h>

#include <git2.h>

#include "buf.h"
#include "config.h"
#include "executor.h"
#include "strvec.h"
#include "tune.h"

#define KOPT_ETOOBIG (-8)
#define KOPT_DEFAULT_TUNE_BUDGET_S 3600.0

struct kopt_tuner_opts {
	const char *version;
	struct kopt_strvec trials;      /* names; empty: every trial */
	enum kopt_tune_strategy strategy;
	double budget_s;
	size_t max_evals;               /* 0: the strategy's own */
	int force;
	uint64_t seed;
	int no_cache;                   /* measure even what is cached */
	int resume;                     /* go on with the journaled plan */
	unsigned given;                 /* KOPT_TUNE_GIVEN_*: set by the user */
	int gpu_wait_s;                 /* -1: kopt.gpuWait (lib/executor) */
};

/*
 * The options a user gave on the command line.  A resumed run follows
 * its plan; one of these given again with another value than the plan's
 * is refused (naming both), never silently replaced.
 */
#define KOPT_TUNE_GIVEN_STRATEGY  (1u << 0)
#define KOPT_TUNE_GIVEN_SEED      (1u << 1)
#define KOPT_TUNE_GIVEN_MAX_EVALS (1u << 2)
#define KOPT_TUNE_GIVEN_TRIALS    (1u << 3)

struct kopt_tuner_invalid {
	char *config;
	char *why;
};

struct kopt_tuner_trial {
	char *trial;
	long b, s, t;
	char *device, *uuid;            /* where the best ran */
	size_t space, space_full;       /* after and before restrictions */
	size_t evals, cached, invalid;
	char *best;                     /* configuration text, or NULL */
	char *best_id;                  /* its {tiling} */
	double best_us, best_spread;
	char *fastest;                  /* when the best is not the fastest */
	double fastest_us, fastest_spread;
	char *dflt;                     /* the hand-picked configuration */
	double default_us;              /* NAN when invalid or not measured */
	double baseline_us;             /* what the fine step was judged on */
	char *baseline;                 /* "parent v7", "hand-picked" */
	enum kopt_tune_stop stop;
	int budget_hit;
	size_t resumed, resumed_of;     /* from the plan, of what it had */
	struct kopt_tuner_invalid *invalids;
	size_t invalids_nr, invalids_alloc;
};

struct kopt_tuner_result {
	char *kernel, *version;
	char *strategy;
	size_t max_evals;               /* the run's (a resumed one: its plan's) */
	char *tree;                     /* the sources' tree id */
	char *executor;
	struct kopt_tuner_trial *trials;
	size_t trials_nr, trials_alloc;
	double elapsed_s;
	int interrupted;
	char date[32];
};

#define KOPT_TUNER_RESULT_INIT { 0 }

int kopt_tuner_run(struct kopt_tuner_result *out, git_repository *repo,
		   const struct kopt_config *cfg,
		   const struct kopt_kernel *kernel,
		   const struct kopt_tuner_opts *opts,
		   struct kopt_executor *ex);
/*
 * Results file and devlog, together or not at all; *devlog is set when
 * the devlog had an entry for the version to hold the block.
 */
int kopt_tuner_write(const struct kopt_tuner_result *r, const char *top,
		     int *devlog);
void kopt_tuner_result_release(struct kopt_tuner_result *r);

/*
 * The time in microseconds in a benchmark's output, where `report` (with
 * {us} in it) matches a line; the last matching line wins.  0, or
 * KOPT_ENOTFOUND.
 */
int kopt_tuner_parse_time(double *us, const char *report, const char *out);
/*
 * The spread of a run in percent of `us`: (max - min) / us from the last
 * line of `out` with "min <x>" and "max <y>" in it; KOPT_ENOTFOUND.
 */
int kopt_tuner_parse_spread(double *pct, const char *out, double us);

#endif
