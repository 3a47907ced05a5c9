#ifndef KOPT_CMD_STRATEGIZE_H
#define KOPT_CMD_STRATEGIZE_H

/*
 * What `strategize` shares with the steps that stand on its task
 * (`select`) or read results the same way (`learn new --from`).
 */

#include "analysis.h"
#include "builtin.h"
#include "kb.h"
#include "results.h"
#include "strategy.h"

/*
 * The Optimization Task of `kernel` at `version` (NULL: the newest
 * version with results), as `strategize` computes it; `select` uses it
 * when no task file exists yet.  Dies naming what to run when the
 * results are missing or the knowledge base has problems.  *current and
 * *next are owned by the caller.
 */
void kopt_strategize_or_die(struct kopt_strategy *out, struct kopt_kb *kb,
			    struct kopt_results *res, struct kopt_ctx *ctx,
			    const char *kernel, const char *version,
			    char **current, char **next, size_t max);
/*
 * A kernel's numbers (kopt_analysis_load() on the work tree); dies with
 * the problems of a file that does not parse.
 */
void kopt_numbers_load_or_die(struct kopt_analysis *out, struct kopt_ctx *ctx,
			      const char *kernel);
/*
 * Move the numbers of `version` out of `a` into *out; dies naming what
 * to run when it has none.
 */
void kopt_numbers_take_or_die(struct kopt_results *out,
			      struct kopt_analysis *a, const char *version);
#endif
