#ifndef KOPT_REPO_H
#define KOPT_REPO_H

/*
 * Versions and git: the branches, commits, trailers, index and blobs the
 * cycle lives in, on libgit2.
 *
 * Each version of a kernel is developed on the branch
 * `kopt/<kernel>/<version>`.  The tool's commits carry trailers that
 * `git interpret-trailers --parse` reads back:
 *
 *	Kopt-Kernel: <kernel>
 *	Kopt-Version: <version>
 *	Kopt-Step: design|verify|learn
 *	Kopt-Verdict: improvement|regression|neutral
 *
 * and people may add `Kopt-Finding: novel` and `Kopt-Learn: skip <reason>`.
 *
 * Reading content: kopt_repo_index() opens the index git is about to
 * commit (it honours GIT_INDEX_FILE, which git sets for hooks, including
 * the temporary index of `git commit -a` and of partial commits);
 * kopt_repo_read_*() read a path's blob from the index, a tree or a
 * revision.  A missing path is KOPT_ENOTFOUND with nothing printed; other
 * failures print through kopt_error().
 *
 * Ownership: git_* objects returned through `out` belong to the caller,
 * who frees them with libgit2's functions; strings in struct
 * kopt_trailers belong to it (kopt_trailers_release()).
 */

#include <git2.h>

#include "buf.h"
#include "strvec.h"

/* ---- branches ---- */

#define KOPT_BRANCH_PREFIX "kopt/"

/* "kopt/<kernel>/<version>" */
void kopt_repo_branch_name(struct kopt_buf *out, const char *kernel,
			   const char *version);
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

/* ---- trailers ---- */

enum kopt_step {
	KOPT_STEP_NONE = 0,
	KOPT_STEP_DESIGN,
	KOPT_STEP_VERIFY,
	KOPT_STEP_LEARN,
};

struct kopt_trailer {
	char *key;
	char *value;
};

struct kopt_trailers {
	struct kopt_trailer *items;
	size_t nr, alloc;
};

#define KOPT_TRAILERS_INIT { NULL, 0, 0 }

#define KOPT_TRAILER_KERNEL "Kopt-Kernel"
#define KOPT_TRAILER_VERSION "Kopt-Version"
#define KOPT_TRAILER_STEP "Kopt-Step"
#define KOPT_TRAILER_VERDICT "Kopt-Verdict"
#define KOPT_TRAILER_FINDING "Kopt-Finding"
#define KOPT_TRAILER_LEARN "Kopt-Learn"

/*
 * The trailers of a commit message (git's rules: the last paragraph, made
 * of "Key: value" lines).  Comment lines (starting with `comment_char`,
 * 0 for none) and everything below a scissors line are dropped first, as
 * `git commit` does before storing the message.
 */
int kopt_trailers_parse(struct kopt_trailers *out, const char *message,
			int comment_char);
void kopt_trailers_add(struct kopt_trailers *t, const char *key,
		       const char *value);
/* The value of the last trailer named `key` (case-insensitive), or NULL. */
const char *kopt_trailers_get(const struct kopt_trailers *t, const char *key);
void kopt_trailers_release(struct kopt_trailers *t);

/*
 * The message as git stores it (comments and scissors dropped, trailing
 * blank lines removed, one final newline).
 */
void kopt_message_cleanup(struct kopt_buf *out, const char *message,
			  int comment_char);
/*
 * Append `t` as a trailer block to `msg`, after a blank line when the
 * message does not already end in a trailer block.
 */
void kopt_message_add_trailers(struct kopt_buf *msg,
			       const struct kopt_trailers *t);

const char *kopt_step_name(enum kopt_step step);
enum kopt_step kopt_step_parse(const char *s);

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

/* ---- reading content ---- */

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

/* Numeric part of a version name ("v12" -> 12), or -1. */
long kopt_version_number(const char *version);
/* qsort comparator on `const char *` version names, by number. */
int kopt_version_cmp(const void *a, const void *b);

#endif
