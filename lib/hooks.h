#ifndef KOPT_HOOKS_H
#define KOPT_HOOKS_H

/*
 * The gate: the rules the git hooks and `git kopt check` enforce on what
 * a commit records, so that a results file, a devlog and the knowledge
 * base never disagree in history.
 *
 * A gate judges one commit: a snapshot of content (the index about to be
 * committed, or a commit's tree), the tree it is compared with (HEAD, or
 * the commit's first parent; NULL for a root commit), and the message
 * when it is known.  Rules judge what the commit changes, not what was
 * there before, so an old inconsistency never blocks an unrelated commit.
 *
 * Rules, by group:
 *   KOPT_GATE_CONTENT   needs no message (the pre-commit hook):
 *     results    a staged results file cannot be read
 *     knowledge  a staged detail file breaks the detail-file template
 *     catalog    a catalog row names a missing detail file, or a staged
 *                detail file has no row
 *     devlog     a staged devlog no longer parses
 *     settings   a staged .kopt does not parse or validate
 *   KOPT_GATE_MESSAGE   the message alone (commit-msg):
 *     trailer    a Kopt-* trailer is malformed, unknown or outside the
 *                trailer block
 *   KOPT_GATE_LEARN     content and message (commit-msg): a
 *                       `Kopt-Learn: skip <reason>` trailer passes these
 *     regression a version newly recorded as a regression against its
 *                parent, and no anti-pattern detail file (with its catalog
 *                row) staged
 *     novel      `Kopt-Finding: novel`, and no knowledge detail file (with
 *                its catalog row) staged
 *     improvement a version newly recorded as an improvement whose task and
 *                devlog entry link to no knowledge file, and no
 *                optimization detail file (with its row) staged
 * LEARN rules do not apply to merge commits (`is_merge`): the commits
 * merged were judged on their own.
 *
 * Calling sequence: fill a struct kopt_gate (KOPT_GATE_INIT) with the
 * inputs, kopt_gate_run(), read `violations`, kopt_gate_release().  The
 * gate borrows its inputs; it owns the violations and `skip_reason`.
 * kopt_gate_run() returns 0 when the rules ran (whatever they found), -1
 * when they could not (error printed).
 */

#include <git2.h>

#include "buf.h"
#include "config.h"
#include "index.h"
#include "strvec.h"

enum kopt_gate_rules {
	KOPT_GATE_CONTENT = 1 << 0,
	KOPT_GATE_MESSAGE = 1 << 1,
	KOPT_GATE_LEARN = 1 << 2,
	KOPT_GATE_ALL = (1 << 3) - 1,
};

struct kopt_violation {
	const char *rule;       /* static: "regression", "catalog"... */
	char *what;             /* what is wrong and what is missing */
	struct kopt_strvec fix; /* the commands that fix it, in order */
	char *hint;             /* a further way out, or NULL */
};

struct kopt_gate {
	/* inputs, borrowed */
	git_repository *repo;
	const struct kopt_config *cfg;  /* thresholds and paths */
	const struct kopt_index *index; /* the snapshot: the index, */
	git_tree *tree;                 /* or a commit's tree */
	git_tree *base;                 /* compared with; NULL: empty */
	const char *message;            /* NULL when not known */
	int comment_char;               /* for a message being edited */
	int is_merge;
	unsigned rules;
	/* outputs, owned */
	struct kopt_violation *violations;
	size_t nr, alloc;
	char *skip_reason;              /* of a Kopt-Learn: skip trailer */
};

#define KOPT_GATE_INIT { NULL, NULL, NULL, NULL, NULL, NULL, '#', 0, \
	KOPT_GATE_ALL, NULL, 0, 0, NULL }

int kopt_gate_run(struct kopt_gate *g);
void kopt_gate_release(struct kopt_gate *g);

/*
 * Judge each of the commits `ids` (in that order) against its first
 * parent, with all the rules and settings `cfg`; `fn` sees each commit's
 * gate after the run (and may stop by returning non-zero, which is then
 * returned).
 */
typedef int (*kopt_gate_commit_fn)(const git_commit *commit,
				   const struct kopt_gate *g, void *data);
int kopt_gate_commits(git_repository *repo, const struct kopt_config *cfg,
		      const git_oid *ids, size_t nr, kopt_gate_commit_fn fn,
		      void *data);
/*
 * Judge the commits `walk` yields (oldest first) as kopt_gate_commits()
 * does, with the settings committed at `base` (NULL: the first parent
 * of the oldest commit), else at `tip` (may be NULL), so that a change
 * cannot loosen its own gate.  With settings at neither, the range is
 * not a kernel repository's and nothing is judged.  Returns the number
 * of violations, fn's non-zero value, or a negative code (reported).
 */
int kopt_gate_walk(git_repository *repo, git_revwalk *walk,
		   const git_oid *base, const git_oid *tip,
		   kopt_gate_commit_fn fn, void *data);
/*
 * The lines of a judged commit: "<short id> <rule> <what>[; fix:
 * <first command>]" per violation, and "<short id> learn-skip <reason>"
 * for a skip.
 */
void kopt_gate_format_commit(struct kopt_buf *out, const git_commit *commit,
			     const struct kopt_gate *g);


#endif
