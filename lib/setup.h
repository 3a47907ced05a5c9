#ifndef KOPT_SETUP_H
#define KOPT_SETUP_H

/*
 * What `git kopt init` lays into a repository, as a plan and then as
 * one all-or-nothing write.
 *
 * kopt_setup_plan() compares every file of templates/init/ with the
 * file at the same path below the top of the work tree, and every shim
 * of hooks/ with the hook of that name in the hooks directory git uses
 * (core.hooksPath when set, relative to the top of the work tree when
 * relative; else the hooks/ of the common git directory, shared by all
 * worktrees).  Each item gets an action:
 *
 *   UNCHANGED  the file equals the template
 *   CREATE     there is no file yet
 *   KEEP       the file differs from the template (changed by hand)
 *   RESTORE    ... and KOPT_SETUP_FORCE asks to restore the template
 *   CHAIN      a hook that is not ours is there: it is moved to
 *              "<hook>.pre-kopt" and our shim, which runs it first,
 *              takes its place
 *   OWNED      a seed file (listed in templates/init-seeds: .kopt, the
 *              catalogs) exists: it belongs to the project, which adds
 *              to it, so it is neither compared nor restored
 *
 * Any difference counts as a change by hand; a hook counts as ours when
 * it runs "git kopt hook".  The plan writes nothing; kopt_setup_apply()
 * writes the CREATE, RESTORE and CHAIN items through lib/filetx, so
 * either all of them land or none does (the reason reported in one line).
 *
 * Labels are relative to the top of the work tree, or absolute for
 * paths outside it (the hooks of a linked worktree live in the main
 * repository).  kopt_setup_release() frees the plan.
 */

#include <git2.h>

#include "buf.h"
#include "filetx.h"

enum kopt_setup_action {
	KOPT_SETUP_UNCHANGED,
	KOPT_SETUP_CREATE,
	KOPT_SETUP_KEEP,
	KOPT_SETUP_RESTORE,
	KOPT_SETUP_CHAIN,
	KOPT_SETUP_OWNED,
};

enum kopt_setup_flags {
	KOPT_SETUP_FORCE = 1 << 0,
};

#define KOPT_HOOK_CHAIN_SUFFIX ".pre-kopt"

struct kopt_setup_item {
	char *path;
	char *label;
	char *keep_as;          /* CHAIN: where the old hook goes */
	enum kopt_setup_action action;
	int is_hook;
	struct kopt_buf data;   /* the template */
	mode_t mode;
};

struct kopt_setup {
	char *top;              /* work tree, with a trailing '/' */
	char *hooks_dir;        /* no trailing '/' */
	struct kopt_setup_item *items;
	size_t nr, alloc;
};

#define KOPT_SETUP_INIT { NULL, NULL, NULL, 0, 0 }

/* The hooks directory git runs hooks from; *out without a final '/'. */
int kopt_setup_hooks_dir(char **out, git_repository *repo);

int kopt_setup_plan(struct kopt_setup *out, git_repository *repo,
		    unsigned flags);
/*
 * Add the files of templates/<subdir>/ (laid out from the top of the
 * work tree, like init/) to a plan made by kopt_setup_plan(): the CI
 * files of `init --ci`.  0, or -1 (printed).
 */
int kopt_setup_plan_more(struct kopt_setup *s, const char *subdir,
			 unsigned flags);
/* Number of items that kopt_setup_apply() would write. */
size_t kopt_setup_pending(const struct kopt_setup *s);
int kopt_setup_apply(struct kopt_setup *s);
void kopt_setup_release(struct kopt_setup *s);

#endif
