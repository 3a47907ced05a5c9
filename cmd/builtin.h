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
/*
 * The one rule for a lib failure in a step: a negative `code` was
 * reported by lib already (lib/error.h), so exit 128 without a second
 * message.  Returns `code` when it is 0 or more.
 */
int kopt_lib_or_die(int code);
/*
 * Run `ret = call` with lib's messages caught, and die "fatal: <what
 * was reported><suffix>" when it failed: one line for a failure that a
 * lib function reported in its own words.
 */
#define KOPT_OR_DIE(call, suffix) do { \
	struct kopt_error_catch caught_ = KOPT_ERROR_CATCH_INIT; \
	int ret_; \
	kopt_error_catch(&caught_); \
	ret_ = (call); \
	kopt_error_uncatch(&caught_); \
	if (ret_) \
		kopt_die("%s%s", caught_.text.len ? caught_.text.buf : \
			 "unknown error", (suffix)); \
	kopt_error_catch_release(&caught_); \
} while (0)
/* The settings, loaded on first use; dies with the problem on failure. */
const struct kopt_config *kopt_ctx_config_or_die(struct kopt_ctx *ctx);
/* The named kernel of the settings, or die naming the known ones. */
const struct kopt_kernel *kopt_ctx_kernel_or_die(struct kopt_ctx *ctx,
						 const char *name);
/* Path of `rel` (relative to the top of the work tree) for open(). */
char *kopt_ctx_path(const struct kopt_ctx *ctx, const char *rel);

/*
 * A kopt_gate_commit_fn (lib/hooks) for check and the pre-push hook:
 * print the lines of each judged commit to the FILE * `out`.
 */
struct kopt_gate;
int kopt_print_gate_commit(const git_commit *commit,
			   const struct kopt_gate *g, void *out);

#define CMD(name) int cmd_##name(int argc, const char **argv, \
				 struct kopt_ctx *ctx)
CMD(analyze);
CMD(check);
CMD(cycle);
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
CMD(tune);

#endif
