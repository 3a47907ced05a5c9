/*
 * bench/tune: the tuning strategies against a recorded exhaustive table.
 *
 *   build/bench/tune [--seeds N] [--kopt FILE] [--kernel NAME] TABLE.tsv
 *
 * TABLE is a tuning cache (lib/tunecache) holding every configuration of
 * the kernel's tuning space (from FILE, default .kopt) at each trial shape
 * it covers: the exhaustive run of a version.  For each shape the
 * strategies run through lib/tune exactly as `git kopt tune` drives them,
 * except that each evaluation is looked up in the table instead of
 * measured.  Seed 1 starts from the hand-picked configuration of FILE;
 * seeds 2..N from a configuration drawn at random (a different designer's
 * guess), and random sampling also draws its sample from the seed.  The
 * fine step's bar is the starting configuration's time (no parent).
 *
 * Printed per shape and strategy: the median over the seeds of the gap
 * between the best found and the exhaustive best, and of the evaluations
 * as a share of the space; then whether the goals hold (coarse-to-fine
 * within 3% at no more than 15% of the space, random within 3% at no
 * more than 30%).  Exit 0 when they do, 1 when not, 128 on bad input.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <git2.h>

#include "config.h"
#include "error.h"
#include "tune.h"
#include "tunecache.h"

struct table {
	const struct kopt_tunecache_line *first;
	double *us;             /* per configuration of the space, NAN invalid */
};

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *v, size_t n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* splitmix64, for the starting configurations */
static uint64_t rnd(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static void run(const struct kopt_tune_space *sp, const double *us,
		enum kopt_tune_strategy st, uint64_t seed, double noise,
		size_t *evals, double *best_us)
{
	struct kopt_tune_search s;
	size_t batch[16], n, i;

	kopt_tune_search_init(&s, sp, st, seed);
	s.noise_pct = noise;
	while ((n = kopt_tune_search_next(&s, batch, 16)) > 0)
		for (i = 0; i < n; i++)
			kopt_tune_search_record(&s, batch[i], us[batch[i]], NAN);
	*evals = s.evals;
	*best_us = s.best == SIZE_MAX ? NAN : s.us[s.best];
	kopt_tune_search_release(&s);
}

int main(int argc, char **argv)
{
	const char *kopt = ".kopt", *kernel = "mla-decode", *path = NULL;
	struct kopt_config cfg = KOPT_CONFIG_INIT;
	struct kopt_tunecache c = KOPT_TUNECACHE_INIT;
	const struct kopt_kernel *k;
	int seeds = 20, i, ok = 1;
	size_t at = 0;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--seeds") && i + 1 < argc)
			seeds = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--kopt") && i + 1 < argc)
			kopt = argv[++i];
		else if (!strcmp(argv[i], "--kernel") && i + 1 < argc)
			kernel = argv[++i];
		else if (argv[i][0] != '-' && !path)
			path = argv[i];
		else {
			fprintf(stderr, "usage: bench/tune [--seeds N] [--kopt "
				"FILE] [--kernel NAME] TABLE.tsv\n");
			return 129;
		}
	}
	if (!path || seeds < 1) {
		fprintf(stderr, "usage: bench/tune [--seeds N] [--kopt FILE] "
			"[--kernel NAME] TABLE.tsv\n");
		return 129;
	}
	git_libgit2_init();
	if (kopt_config_load_file(&cfg, kopt, kopt, NULL) ||
	    kopt_tunecache_read(&c, path, path))
		return 128;
	k = kopt_config_kernel(&cfg, kernel);
	if (!k || !k->tune_nr) {
		fprintf(stderr, "fatal: %s: no kernel '%s' with a tuning space\n",
			kopt, kernel);
		return 128;
	}
	if (!c.nr) {
		fprintf(stderr, "fatal: %s: no evaluation in the table\n", path);
		return 128;
	}
	printf("table %s (%zu evaluations), kernel %s, %d seeds\n", path, c.nr,
	       kernel, seeds);
	/* one exhaustive table per shape (lines are sorted by key) */
	while (at < c.nr) {
		const struct kopt_tunecache_line *f = &c.lines[at];
		struct kopt_tune_space sp = KOPT_TUNE_SPACE_INIT;
		struct kopt_buf text = KOPT_BUF_INIT;
		double *us, *values, best = NAN;
		size_t j, found = 0, end = at, dflt;
		static const enum kopt_tune_strategy strategies[] = {
			KOPT_TUNE_COARSE_TO_FINE, KOPT_TUNE_RANDOM
		};
		static const double max_share[] = { 15.0, 30.0 };

		while (end < c.nr && !strcmp(c.lines[end].uuid, f->uuid) &&
		       c.lines[end].b == f->b && c.lines[end].s == f->s &&
		       c.lines[end].t == f->t &&
		       !strcmp(c.lines[end].tree, f->tree) &&
		       !strcmp(c.lines[end].build, f->build))
			end++;
		if (kopt_tune_enumerate(&sp, k, f->b, f->s, f->t, kopt))
			return 128;
		us = malloc(sp.nr * sizeof(*us));
		values = malloc(k->tune_nr * sizeof(*values));
		for (j = 0; j < sp.nr; j++) {
			const struct kopt_tunecache_line *l;
			size_t m;
			us[j] = NAN;
			kopt_buf_reset(&text);
			kopt_tune_space_values(&sp, j, values);
			kopt_tune_config_text(&text, k, values);
			for (m = at, l = NULL; m < end && !l; m++)
				if (!strcmp(c.lines[m].config, text.buf))
					l = &c.lines[m];
			if (!l)
				continue;
			found++;
			if (!strcmp(l->status, "ok")) {
				us[j] = l->us;
				if (isnan(best) || l->us < best)
					best = l->us;
			}
		}
		printf("\n%s (%s), b=%ld s=%ld t=%ld: %zu configurations, "
		       "exhaustive best %.2f us\n", f->device, f->uuid, f->b,
		       f->s, f->t, sp.nr, best);
		if (found != sp.nr || isnan(best)) {
			fprintf(stderr, "fatal: %s: the table holds %zu of the "
				"%zu configurations at b=%ld s=%ld t=%ld: not an "
				"exhaustive run of this space\n", path, found,
				sp.nr, f->b, f->s, f->t);
			return 128;
		}
		dflt = sp.dflt;
		for (j = 0; j < 2; j++) {
			double *gap = malloc(seeds * sizeof(double));
			double *share = malloc(seeds * sizeof(double));
			double mg, ms;
			uint64_t r = 12345;
			int sd;
			for (sd = 0; sd < seeds; sd++) {
				size_t evals;
				double b;
				sp.dflt = sd == 0 && dflt != SIZE_MAX ? dflt :
					  (size_t)(rnd(&r) % sp.nr);
				run(&sp, us, strategies[j], (uint64_t)sd + 1,
				    cfg.noise_pct, &evals, &b);
				gap[sd] = isnan(b) ? 1e9 : (b - best) / best * 100;
				share[sd] = 100.0 * (double)evals / (double)sp.nr;
			}
			mg = median(gap, (size_t)seeds);
			ms = median(share, (size_t)seeds);
			printf("  %-15s median gap %5.2f%% (worst %.2f%%), median "
			       "evaluations %5.1f%% of the space: %s\n",
			       kopt_tune_strategy_name(strategies[j]), mg,
			       gap[seeds - 1], ms,
			       mg <= 3.0 && ms <= max_share[j] ? "goal met" :
			       "GOAL NOT MET");
			ok &= mg <= 3.0 && ms <= max_share[j];
			free(gap);
			free(share);
		}
		free(us);
		free(values);
		kopt_tune_space_release(&sp);
		kopt_buf_release(&text);
		at = end;
	}
	printf("\ngoals (coarse-to-fine within 3%% at <= 15%% of the space, "
	       "random within 3%% at <= 30%%): %s\n", ok ? "met" : "NOT met");
	kopt_tunecache_release(&c);
	kopt_config_release(&cfg);
	git_libgit2_shutdown();
	return ok ? 0 : 1;
}
