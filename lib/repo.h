#ifndef KOPT_REPO_H
#define KOPT_REPO_H

/*
 * Versions and git: the branches, commits, trailers, index and blobs the
 * cycle lives in, on libgit2.
 *
 * Each version of a kernel is developed on the branch
 * `kopt/<kernel>/<version>`; the tool's commits carry the trailers of
 * lib/trailers.
 *
 * Reading content: kopt_repo_index() opens the index git is about to
 * commit (it honours GIT_INDEX_FILE, which git sets for hooks, including
 * the temporary index of `git commit -a` and of partial commits);
 * kopt_repo_read_*() read a path's blob from the index, a tree or a
 * revision.  A missing path is KOPT_ENOTFOUND with nothing printed; other
 * failures print through kopt_error().
 *
 * Ownership: git_* objects returned through `out` belong to the caller,
 * who frees them with libgit2's functions.
 */

#include <git2.h>

#include "buf.h"
#include "strvec.h"
#include "version.h"

/* ---- branches ---- */

#define KOPT_BRANCH_PREFIX "kopt/"

/* "kopt/<kernel>/<version>" */
void kopt_repo_branch_name(struct kopt_buf *out, const char *kernel,
			   const char *version);
/*
 * The kernel and version of branch `name` ("kopt/<kernel>/<version>",
 * short or under refs/heads/): 1 with both set (owned by the caller), or
 * 0 when it is no version's branch.
 */
int kopt_repo_branch_parse(const char *name, char **kernel, char **version);
/* 1 when the branch of `version` exists, 0 when not, <0 on error. */
int kopt_repo_branch_exists(git_repository *repo, const char *kernel,
			    const char *version);
/*
 * The versions of `kernel` that have a branch, sorted by number
 * (v0, v1, ..., v10).  Branch names that are not versions are skipped.
 */
int kopt_repo_branch_list(git_repository *repo, const char *kernel,
			  struct kopt_strvec *out);
/*
 * Create the branch of `version` at `commit`; KOPT_EEXISTS (printed) when
 * it is there already.
 */
int kopt_repo_branch_create(git_repository *repo, const char *kernel,
			    const char *version, const git_oid *commit);
/*
 * Make the branch of `version` the current branch without touching the
 * index or the work tree (the branch must point at the commit the work
 * tree holds).
 */
int kopt_repo_branch_switch(git_repository *repo, const char *kernel,
			    const char *version);
/* Delete the branch (used to roll back); 0 also when it is absent. */
int kopt_repo_branch_delete(git_repository *repo, const char *kernel,
			    const char *version);

/* ---- commits ---- */

/*
 * Author or committer (`which` is "author" or "committer") as git would
 * record it, from `git var GIT_AUTHOR_IDENT`: it honours user.name,
 * user.email, GIT_AUTHOR_NAME, GIT_AUTHOR_DATE and the rest.
 */
int kopt_repo_signature(git_signature **out, git_repository *repo,
			const char *which);
/*
 * Create a commit of `tree` on top of `parent` (NULL for a root commit)
 * with `message`; when `update_ref` is not NULL the reference is moved to
 * it (and must still point at `parent`).
 */
int kopt_repo_commit(git_oid *out, git_repository *repo,
		     const char *update_ref, const git_oid *tree,
		     const git_oid *parent, const char *message);

/*
 * 0 when no other git holds the index; KOPT_ELOCKED, printed as
 * "cannot update the index: '<gitdir>/index.lock' exists; ...", when its
 * lock file is there.  A step that commits and updates the index asks
 * first, so that it writes nothing rather than leave its commit with
 * the index behind it.
 */
int kopt_repo_index_unlocked(git_repository *repo);

/* ---- reading content ---- */

/*
 * Append the blob `id` to `out`; -1 (reported as "cannot read '<path>'")
 * when the repository has no such blob.
 */
int kopt_repo_read_blob(struct kopt_buf *out, git_repository *repo,
			const git_oid *id, const char *path);

/*
 * The index a commit is being made from: $GIT_INDEX_FILE when set
 * (relative to the current directory, as git passes it), else the
 * repository's.  The index is re-read from disk.
 */
int kopt_repo_index(git_index **out, git_repository *repo);
int kopt_repo_read_index(struct kopt_buf *out, git_repository *repo,
			 git_index *index, const char *path);
int kopt_repo_read_tree(struct kopt_buf *out, git_repository *repo,
			const git_tree *tree, const char *path);
int kopt_repo_read_rev(struct kopt_buf *out, git_repository *repo,
		       const char *rev, const char *path);
/* The tree of a revision ("HEAD", "main~2", an id). */
int kopt_repo_rev_tree(git_tree **out, git_repository *repo,
		       const char *rev);
/* 1 when HEAD points at a commit, 0 in a repository with none yet. */
int kopt_repo_has_commits(git_repository *repo);

/*
 * The tree id of directory `dir` at `rev`; KOPT_ENOTFOUND when it is not
 * there (or not a directory).
 */
int kopt_repo_tree_id(git_oid *out, git_repository *repo, const char *rev,
		      const char *dir);
/*
 * The tree id `dir` of the work tree would have if it were added as it is
 * now (ignored files left out, as `git add` would).  Writes the blobs and
 * trees to the object database, like `git add` without the index.
 */
int kopt_repo_worktree_tree_id(git_oid *out, git_repository *repo,
			       const char *dir);

/*
 * Paths under `pathspecs` that differ between HEAD, the index and the work
 * tree (untracked files included, ignored ones not), one per entry of
 * `out`.
 */
int kopt_repo_dirty_paths(struct kopt_strvec *out, git_repository *repo,
			  const struct kopt_strvec *pathspecs);
/* The same, untracked files only with KOPT_REPO_UNTRACKED. */
enum { KOPT_REPO_UNTRACKED = 1 << 0 };
int kopt_repo_changed_paths(struct kopt_strvec *out, git_repository *repo,
			    const struct kopt_strvec *pathspecs,
			    unsigned flags);

/*
 * The branch a range is reviewed against: origin/HEAD's target, else
 * init.defaultBranch, main or master, whichever exists first, as a full
 * reference name owned by the caller.  KOPT_ENOTFOUND (nothing printed)
 * when there is none.
 */
int kopt_repo_default_branch(char **out, git_repository *repo);

#endif
