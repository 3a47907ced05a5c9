#ifndef KOPT_CHANGES_H
#define KOPT_CHANGES_H

/*
 * What a commit changes: the paths that differ between a base tree and a
 * snapshot (a commit's tree, or the index about to be committed), found
 * at a cost that follows the change, not the repository.
 *
 * Both sides are walked together, one directory at a time, and a
 * directory whose tree id is the same on both sides is not read: git's
 * object ids say that nothing under it changed.  The index gives those
 * ids through its cache-tree (lib/index); a directory the cache-tree
 * does not cover is compared entry by entry.  Only the directories
 * leading to `specs` are visited: literal paths, a trailing '/' for a
 * directory ("docs/kernels/"), a path without one for a file or
 * everything under a directory of that name (".kopt").  NULL: all.
 *
 * `fn` sees each change once, in git's path order: 'A' added, 'M'
 * modified (content or mode), 'D' deleted.  Entries of a conflict (stages
 * 1-3) and intents to add are not part of a commit and are skipped.  A
 * non-zero return from `fn` stops the walk and is returned; failures to
 * read an object are reported (-1).
 */

#include <git2.h>

#include "index.h"
#include "strvec.h"

typedef int (*kopt_changes_fn)(char status, const char *path, void *data);

/* `base` may be NULL: everything in `tree` is added. */
int kopt_changes_trees(git_repository *repo, const git_tree *base,
		       const git_tree *tree, const struct kopt_strvec *specs,
		       kopt_changes_fn fn, void *data);
int kopt_changes_index(git_repository *repo, const git_tree *base,
		       const struct kopt_index *idx,
		       const struct kopt_strvec *specs, kopt_changes_fn fn,
		       void *data);

#endif
