#ifndef KOPT_HISTORY_H
#define KOPT_HISTORY_H

/*
 * What the trailers of HEAD's history say about versions: which were
 * learned from (a Kopt-Step: learn commit) and which the LEARN gate was
 * told to skip (Kopt-Learn: skip, with its reason), for `git kopt
 * status`.
 *
 * The answer for a commit is kept in <gitdir>/kopt/history/trailers
 * (lib/cache) with the commit's id.  When HEAD moves on, only the
 * commits it added since are read (a walk from HEAD that stops at the
 * stored commit, when that one is an ancestor of HEAD); when HEAD was
 * rewritten (a rebase, an amend, a reset to another line), the history
 * is read again.  A walk reads at most the newest 5000 commits.
 *
 *	struct kopt_history h = KOPT_HISTORY_INIT;
 *	kopt_history_read(&h, repo);
 *	... kopt_strvec_has(&h.learned, "k/v3"), kopt_history_skip(&h, "k/v3")
 *	kopt_history_release(&h);
 *
 * Nothing prints: history that cannot be read reads as no trailers.
 */

#include <git2.h>

#include "strvec.h"

struct kopt_history {
	struct kopt_strvec learned;     /* "kernel/version" */
	struct kopt_strvec skipped;     /* "kernel/version\treason", newest first */
};

#define KOPT_HISTORY_INIT { KOPT_STRVEC_INIT, KOPT_STRVEC_INIT }

void kopt_history_read(struct kopt_history *h, git_repository *repo);
/* The skip reason recorded for "kernel/version", or NULL (borrowed). */
const char *kopt_history_skip(const struct kopt_history *h, const char *kv);
void kopt_history_release(struct kopt_history *h);

#endif
