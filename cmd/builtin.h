#ifndef KOPT_BUILTIN_H
#define KOPT_BUILTIN_H

/*
 * What every step receives, and the helpers steps share: dying with
 * git's exit codes and lazily loaded settings.
 *
 * Exit codes: 0 success; 1 ran and the answer is no; 128 fatal;
 * 129 usage.
 */

#include <stdio.h>

#include <git2.h>

#include "buf.h"
#include "config.h"
#include "error.h"
#include "parse-options.h"

enum kopt_cmd_flags {
	KOPT_NEED_REPO = 1 << 0,      /* inside a repository */
	KOPT_NEED_WORK_TREE = 1 << 1, /* ... with a work tree */
};

struct kopt_ctx {
	git_repository *repo;  /* NULL for steps that need none */
	const char *top;       /* work tree, with a trailing '/' */
	const char *prefix;    /* cwd relative to top ("" or "sub/dir/") */
	struct kopt_config config;
	int config_loaded;
};

/* Print "fatal: <msg>" and exit 128. */
void kopt_die(const char *fmt, ...)
	__attribute__((format(printf, 1, 2), noreturn));
/* The settings, loaded on first use; dies with the problem on failure. */
const struct kopt_config *kopt_ctx_config_or_die(struct kopt_ctx *ctx);
/* The named kernel of the settings, or die naming the known ones. */
const struct kopt_kernel *kopt_ctx_kernel_or_die(struct kopt_ctx *ctx,
						 const char *name);
/* Path of `rel` (relative to the top of the work tree) for open(). */
char *kopt_ctx_path(const struct kopt_ctx *ctx, const char *rel);

/*
 * cmd/check.c, for the pre-push hook too: judge the commits `walk`
 * yields (oldest first) with settings read from `base` (default: the
 * first parent of the oldest commit, else `tip`), print one line per
 * violation to `out`; the number of violations, or -1.
 */
int kopt_check_walk(struct kopt_ctx *ctx, git_revwalk *walk,
		    const git_oid *base, const git_oid *tip, FILE *out);

#define CMD(name) int cmd_##name(int argc, const char **argv, \
				 struct kopt_ctx *ctx)
CMD(analyze);
CMD(check);
CMD(design);
CMD(device);
CMD(evaluate);
CMD(hook);
CMD(init);
CMD(kernel);
CMD(learn);
CMD(plot);
CMD(profile);
CMD(verify);
CMD(review);
CMD(select);
CMD(status);
CMD(strategize);

#endif
