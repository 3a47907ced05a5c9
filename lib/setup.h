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
 *   UPDATE     the file is what init laid down last time (the manifest
 *              says so) and the template has changed since: it follows
 *   DELETED    the manifest says init laid the file down and it is gone:
 *              the user deleted it, so it stays deleted (KOPT_SETUP_FORCE
 *              makes it CREATE)
 *
 * The manifest, $GIT_DIR/kopt/init-manifest (KOPT_SETUP_MANIFEST, one per
 * work tree, never committed), records what init laid into the work tree
 * from init/ (not the hooks, not the CI files of --ci), one line per file:
 *
 *	<blob id of what init wrote> <reported> <path relative to the top>
 *
 * where the blob id is the one `git hash-object` gives, and <reported> is
 * "-", "deleted" when the file's deletion was reported, or the blob id of
 * the edited file last reported as kept.  A KEEP or DELETED item has
 * `report` set only when its state differs from what was last reported,
 * so each change by hand is reported once.  Lines starting with '#' are
 * comments.  Without a manifest (a repository set up before it existed)
 * a missing file is created, as on a first run.
 *
 * Any difference from the template and from the manifest's blob counts
 * as a change by hand; a hook counts as ours when it runs "git kopt
 * hook".  The plan writes nothing; kopt_setup_apply() writes the CREATE,
 * RESTORE, UPDATE and CHAIN items and the manifest (when it changes)
 * through lib/filetx, so either all of them land or none does (the
 * reason reported in one line).
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
	KOPT_SETUP_UPDATE,
	KOPT_SETUP_DELETED,
};

enum kopt_setup_flags {
	KOPT_SETUP_FORCE = 1 << 0,
};

#define KOPT_HOOK_CHAIN_SUFFIX ".pre-kopt"
/* Relative to the git directory of the work tree. */
#define KOPT_SETUP_MANIFEST "kopt/init-manifest"

struct kopt_setup_item {
	char *path;
	char *label;
	char *keep_as;          /* CHAIN: where the old hook goes */
	enum kopt_setup_action action;
	int is_hook;
	int report;             /* KEEP, DELETED: not reported before */
	struct kopt_buf data;   /* the template */
	mode_t mode;
};

struct kopt_setup {
	char *top;              /* work tree, with a trailing '/' */
	char *hooks_dir;        /* no trailing '/' */
	struct kopt_setup_item *items;
	size_t nr, alloc;
	char *manifest_path;
	struct kopt_buf manifest_old;   /* as read ("" when none) */
	struct kopt_buf manifest_new;   /* as it will be written */
};

#define KOPT_SETUP_INIT { NULL, NULL, NULL, 0, 0, NULL, KOPT_BUF_INIT, \
	KOPT_BUF_INIT }

struct kopt_manifest_entry {
	char *path;
	char *installed;        /* blob id, hex */
	char *reported;         /* "-", "deleted" or a blob id */
};

/*
 * Parse a manifest's text (`name` is used in messages): KOPT_EINVALID,
 * reported as "<name>:<line>: ...", for a malformed line.  The entries
 * are appended to *out (*nr of them); free them with
 * kopt_manifest_release().
 */
int kopt_manifest_parse(struct kopt_manifest_entry **out, size_t *nr,
			const char *name, const char *text, size_t len);
void kopt_manifest_release(struct kopt_manifest_entry *e, size_t nr);

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
/* Whether kopt_setup_apply() would write anything (the manifest too). */
int kopt_setup_changed(const struct kopt_setup *s);
int kopt_setup_apply(struct kopt_setup *s);
void kopt_setup_release(struct kopt_setup *s);

#endif
