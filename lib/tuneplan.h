#ifndef KOPT_TUNEPLAN_H
#define KOPT_TUNEPLAN_H

/*
 * The plan of a tuning run, journaled so that an interrupted run goes on
 * where it stopped (`tune --resume`).
 *
 * A run writes <gitdir>/kopt/tune/<kernel>/<version>.plan after every
 * batch, atomically (lib/lockfile): what the search was started with
 * (strategy, seed, --max-evals, the trials in order), what it stands on
 * (the sources' tree id and the build key of lib/tunecache), and every
 * evaluation the search has recorded, in order, with its time and
 * spread written exactly (lib/cache's number form) or why it was
 * invalid.  A search is a function of its start and of what it is told
 * (lib/tune), so feeding it the journaled evaluations again brings it
 * back to where it stood; what it then asks for is what the plan still
 * had to do.  A configuration that was handed out but never ran (an
 * interrupt) has no line and is asked again.  The plan is removed when
 * the run ends on its own.
 *
 *	# git-kopt tuning plan 1
 *	strategy	coarse-to-fine
 *	seed	1
 *	max-evals	0
 *	tree	3f2a...
 *	build	9c1e0d2b7a44
 *	trial	decode
 *	eval	decode	BN=64,ST=3	<us>	<spread>	-
 *	eval	decode	BN=64,ST=2	-	-	failed: exit code 1 (...)
 *
 * Not a lib/journal: a step's journal is written once, before a step's
 * first change, as a claim (O_EXCL, with the writer's pid) that the
 * next run checks; a plan is state, rewritten whole after each batch
 * (a reader sees the old plan or the new, never a half) and read to
 * continue, and its values are written exactly (lib/cache).
 *
 * Nothing prints except through kopt_error().
 */

#include <stddef.h>
#include <stdint.h>

#include <git2.h>

#include "buf.h"
#include "strvec.h"

#define KOPT_TUNEPLAN_HEADER "# git-kopt tuning plan 1"

struct kopt_tuneplan_eval {
	char *trial, *config;
	double us, spread;      /* NAN when invalid / not known */
	char *why;              /* why it is invalid, or NULL */
};

struct kopt_tuneplan {
	char *strategy;
	uint64_t seed;
	size_t max_evals;
	char *tree, *build;
	struct kopt_strvec trials;
	struct kopt_tuneplan_eval *evals;
	size_t nr, alloc;
};

#define KOPT_TUNEPLAN_INIT { NULL, 0, 0, NULL, NULL, KOPT_STRVEC_INIT, \
	NULL, 0, 0 }

/* Where the plan of `kernel` `version` is kept (owned by the caller). */
char *kopt_tuneplan_path(git_repository *repo, const char *kernel,
			 const char *version);
/* KOPT_ENOTFOUND (not reported) when there is none. */
int kopt_tuneplan_read(struct kopt_tuneplan *out, const char *path);
int kopt_tuneplan_write(const struct kopt_tuneplan *p, const char *path);
/* The evaluation of `config` at `trial`, or NULL. */
const struct kopt_tuneplan_eval *
kopt_tuneplan_find(const struct kopt_tuneplan *p, const char *trial,
		   const char *config);
void kopt_tuneplan_add(struct kopt_tuneplan *p, const char *trial,
		       const char *config, double us, double spread,
		       const char *why);
void kopt_tuneplan_release(struct kopt_tuneplan *p);

#endif
