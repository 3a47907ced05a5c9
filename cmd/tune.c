/*
 * git kopt tune <kernel> <version>: TUNE.  The best configuration of a
 * version's tuning space per trial, within a budget, through the tuning
 * cache and the configured executor (lib/tuner); the outcome goes into
 * the results file and the devlog.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "builtin.h"
#include "term-progress.h"
#include "executor.h"
#include "paths.h"
#include "version.h"
#include "tuner.h"
#include "banned.h"

static const char *const tune_usage[] = {
	"git kopt tune <kernel> <version> [--trial <name>]... "
	"[--strategy exhaustive|random|coarse-to-fine] [--budget <time>] "
	"[--max-evals <n>] [--seed <n>] [--resume] [--force]\n"
	"                     [--gpu-wait <seconds>] [-q]",
	NULL
};

static volatile sig_atomic_t interrupted;

static void on_signal(int sig)
{
	(void)sig;
	interrupted = 1;
}

/* "1h", "30m", "90s", "1h30m", "600": seconds, or -1. */
static double parse_duration(const char *s)
{
	double total = 0;
	const char *p = s;

	if (!*p)
		return -1;
	while (*p) {
		char *end;
		double v = strtod(p, &end);
		if (end == p || !isfinite(v) || v < 0)
			return -1;
		switch (*end) {
		case 'h': total += v * 3600; end++; break;
		case 'm': total += v * 60; end++; break;
		case 's': total += v; end++; break;
		case '\0': total += v; break;
		default: return -1;
		}
		p = end;
	}
	return total > 0 ? total : -1;
}

static void human(struct kopt_buf *out, double s)
{
	long n = (long)(s + 0.5);

	if (!isfinite(s))
		kopt_buf_addstr(out, "?");
	else if (n >= 3600)
		kopt_buf_addf(out, "%ldh%02ldm", n / 3600, n / 60 % 60);
	else if (n >= 60)
		kopt_buf_addf(out, "%ldm%02lds", n / 60, n % 60);
	else
		kopt_buf_addf(out, "%lds", n);
}

static void print_trial(const struct kopt_tuner_result *r,
			const struct kopt_tuner_trial *t,
			const struct kopt_tuner_opts *o, double noise_pct)
{
	size_t i;

	printf("%s (b=%ld, s=%ld, t=%ld): ", t->trial, t->b, t->s, t->t);
	if (!t->space) {
		printf("the restrictions exclude every configuration at this "
		       "trial\n");
		return;
	}
	if (t->best)
		printf("best %s at %.1f us", t->best, t->best_us);
	else
		printf("no valid configuration");
	if (isfinite(t->default_us)) {
		printf("; hand-picked %s at %.1f us", t->dflt, t->default_us);
		if (t->best)
			printf(" (gain %.1f%%)", (t->default_us - t->best_us) /
			       t->default_us * 100.0);
	} else {
		printf("; hand-picked %s not measured", t->dflt);
	}
	printf("\n  %zu of %zu configurations evaluated (%zu from the cache, "
	       "%zu invalid; %zu before restrictions)\n", t->evals, t->space,
	       t->cached, t->invalid, t->space_full);
	for (i = 0; i < t->invalids_nr && i < 10; i++)
		printf("  invalid: %s: %s\n", t->invalids[i].config,
		       t->invalids[i].why);
	if (t->invalids_nr > 10)
		printf("  ... and %zu more invalid\n", t->invalids_nr - 10);
	if (t->stop == KOPT_TUNE_NO_PROMISE)
		printf("  no fine tuning: the coarse best does not beat %s "
		       "(%.1f us) beyond the noise (%g%%); go on with the next "
		       "design instead\n", t->baseline,
		       isfinite(t->baseline_us) ? t->baseline_us :
		       t->default_us, noise_pct);
	if (t->fastest)
		printf("  kept %s (spread %.1f%%) over the fastest, %s at "
		       "%.1f us (spread %.1f%%): within the noise, and "
		       "steadier\n", t->best, t->best_spread, t->fastest,
		       t->fastest_us, t->fastest_spread);
	if (o->resume)
		printf("  resumed: %zu of %zu done\n", t->resumed,
		       t->resumed_of);
	if (t->budget_hit)
		printf("  stopped at the budget\n");
	if (t->stop == KOPT_TUNE_MAX_EVALS)
		printf("  stopped at --max-evals %zu\n", r->max_evals);
}

/* The options into `o`; the kernel's name into *kernel. */
static void tune_options(struct kopt_tuner_opts *o, struct kopt_strvec *trials,
			 const char **kernel, int argc, const char **argv)
{
	const char *strategy = NULL, *budget = NULL;
	/* INT_MIN: not given */
	int max_evals = INT_MIN, seed = INT_MIN, gpu_wait = INT_MIN;
	int resume = 0, force = 0, quiet = 0;
	const struct kopt_option options[] = {
		OPT_STRING_LIST(0, "trial", trials, "name",
				"tune at this trial (repeatable; default: all)"),
		OPT_STRING(0, "strategy", &strategy, "name",
			   "exhaustive, random or coarse-to-fine (default)"),
		OPT_STRING(0, "budget", &budget, "time",
			   "the most the whole run may take (default 1h)"),
		OPT_INT(0, "max-evals", &max_evals, "n",
			"evaluate at most n configurations per trial"),
		OPT_INT(0, "seed", &seed, "n",
			"seed of the random choices (default 1)"),
		OPT_BOOL(0, "resume", &resume,
			 "go on with the plan of an interrupted run"),
		OPT_BOOL(0, "force", &force,
			 "run even when the plan cannot fit the budget"),
		OPT_INT(0, "gpu-wait", &gpu_wait, "seconds",
			"wait this long for a busy GPU (default: "
			"kopt.gpuWait, else refuse at once)"),
		OPT__QUIET(&quiet),
		OPT_END()
	};

	argc = kopt_parse_options(argc, argv, options, tune_usage, 0);
	if (quiet)
		kopt_progress_terminal(0);
	if (argc != 2)
		kopt_usage_error(tune_usage, options, argc > 2 ?
				 "too many arguments" : "which kernel and "
				 "version?");
	memset(o, 0, sizeof(*o));
	*kernel = argv[0];
	o->version = argv[1];
	o->trials = *trials;
	o->force = force;
	o->given = (strategy ? KOPT_TUNE_GIVEN_STRATEGY : 0) |
		   (seed != INT_MIN ? KOPT_TUNE_GIVEN_SEED : 0) |
		   (max_evals != INT_MIN ? KOPT_TUNE_GIVEN_MAX_EVALS : 0) |
		   (trials->nr ? KOPT_TUNE_GIVEN_TRIALS : 0);
	o->seed = seed == INT_MIN ? 1 : (uint64_t)(unsigned)seed;
	if (!strategy)
		strategy = "coarse-to-fine";
	if (kopt_tune_strategy_parse(&o->strategy, strategy))
		kopt_usage_error(tune_usage, options, "unknown strategy '%s' "
				 "(exhaustive, random or coarse-to-fine)",
				 strategy);
	o->budget_s = KOPT_DEFAULT_TUNE_BUDGET_S;
	if (budget && (o->budget_s = parse_duration(budget)) < 0)
		kopt_usage_error(tune_usage, options, "bad --budget '%s' "
				 "(e.g. 1h, 20m, 90s)", budget);
	if (max_evals < 0 && max_evals != INT_MIN)
		kopt_usage_error(tune_usage, options, "--max-evals must be "
				 "positive");
	o->max_evals = max_evals < 0 ? 0 : (size_t)max_evals;
	if (gpu_wait != INT_MIN &&
	    (gpu_wait < 0 || gpu_wait > KOPT_GPU_WAIT_MAX_S))
		kopt_usage_error(tune_usage, options, "--gpu-wait must be "
				 "0 to %d seconds", KOPT_GPU_WAIT_MAX_S);
	if (!kopt_version_valid(o->version))
		kopt_usage_error(tune_usage, options, "bad version '%s' "
				 "(v0, v1, ...)", o->version);
	o->resume = resume;
	o->gpu_wait_s = gpu_wait == INT_MIN ? -1 : gpu_wait;
}

/* Run the tuner with Ctrl-C and SIGTERM stopping it cleanly. */
static int run_tuner(struct kopt_tuner_result *r, struct kopt_ctx *ctx,
		     const struct kopt_config *cfg, const struct kopt_kernel *k,
		     const struct kopt_tuner_opts *o)
{
	struct kopt_executor ex = KOPT_EXECUTOR_INIT;
	struct sigaction sa, old_int, old_term;
	int ret;

	kopt_executor_init(&ex, cfg, ctx->top, git_repository_path(ctx->repo));
	ex.interrupted = &interrupted;
	if (o->gpu_wait_s >= 0)
		ex.gpu_wait_s = o->gpu_wait_s;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);
	ret = kopt_tuner_run(r, ctx->repo, cfg, k, o, &ex);
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	kopt_executor_release(&ex);
	return ret;
}

/* Write what was found; the exit status. */
static int write_found(const struct kopt_tuner_result *r, struct kopt_ctx *ctx,
		       const struct kopt_kernel *k, const char *version,
		       const char *rel, size_t valid)
{
	struct kopt_buf res = KOPT_BUF_INIT, devlog_path = KOPT_BUF_INIT;
	int devlog = 0;

	if (!valid) {
		printf("no valid configuration: nothing written but %s\n", rel);
		return 1;
	}
	if (kopt_tuner_write(r, ctx->top, &devlog))
		return 128;
	kopt_path_results(&res, k->name, version);
	printf("wrote %s and %s", rel, res.buf);
	if (devlog) {
		kopt_path_devlog(&devlog_path, k->name);
		printf(", and the tuning block of %s in %s", version,
		       devlog_path.buf);
	}
	printf("\n");
	kopt_buf_release(&res);
	kopt_buf_release(&devlog_path);
	return 0;
}

int cmd_tune(int argc, const char **argv, struct kopt_ctx *ctx)
{
	struct kopt_strvec trials = KOPT_STRVEC_INIT;
	struct kopt_tuner_opts o;
	struct kopt_tuner_result r = KOPT_TUNER_RESULT_INIT;
	const struct kopt_config *cfg;
	const struct kopt_kernel *k;
	struct kopt_buf when = KOPT_BUF_INIT, rel = KOPT_BUF_INIT;
	const char *kernel;
	size_t i, valid = 0;
	int ret, status = 0;

	tune_options(&o, &trials, &kernel, argc, argv);
	cfg = kopt_ctx_config_or_die(ctx);
	k = kopt_ctx_kernel_or_die(ctx, kernel);
	ret = run_tuner(&r, ctx, cfg, k, &o);
	if (ret == KOPT_ETOOBIG) {
		status = 1;
		goto done;
	}
	if (ret && !r.interrupted) {
		status = 128;
		goto done;
	}
	human(&when, r.elapsed_s);
	printf("%s %s: %s on %s (%s executor), %s\n", r.kernel, r.version,
	       r.strategy, r.trials_nr && r.trials[0].device ?
	       r.trials[0].device : "no device", r.executor, when.buf);
	for (i = 0; i < r.trials_nr; i++) {
		print_trial(&r, &r.trials[i], &o, cfg->noise_pct);
		valid += r.trials[i].best != NULL;
	}
	kopt_path_tuning(&rel, k->name, o.version);
	if (r.interrupted) {
		fprintf(stderr, "interrupted: every evaluation that finished is "
			"in %s; run it again with --resume to go on with its "
			"plan\n", rel.buf);
		status = 130;
	} else if (ret) {
		status = 128;
	} else {
		status = write_found(&r, ctx, k, o.version, rel.buf, valid);
	}
done:
	kopt_tuner_result_release(&r);
	kopt_strvec_clear(&trials);
	kopt_buf_release(&when);
	kopt_buf_release(&rel);
	return status;
}
