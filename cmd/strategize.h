#ifndef KOPT_CMD_STRATEGIZE_H
#define KOPT_CMD_STRATEGIZE_H

/*
 * What `strategize` shares with the steps that stand on its task
 * (`select`) or read results the same way (`learn new --from`).
 */

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
 * The results of `kernel` `version`; dies naming what to run when there
 * are none, or with the problems of a file that does not parse.
 */
void kopt_results_read_or_die(struct kopt_results *out, struct kopt_ctx *ctx,
			      const char *kernel, const char *version);

#endif
