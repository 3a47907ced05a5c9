#ifndef KOPT_JOURNAL_H
#define KOPT_JOURNAL_H

/*
 * A step's journal: what a step that changes several things one after
 * the other (files, a commit, a branch, HEAD, the index) writes before
 * its first change and removes after its last, so that a run killed in
 * between is found by the next run, which undoes or finishes it, as git
 * finds an interrupted merge or rebase by the files it leaves in the
 * git directory.
 *
 * The journal is "$GIT_DIR/kopt/<step>.journal" (per work tree: a linked
 * work tree has its own git directory), one "<key> <value>" per line:
 * first the process and host that wrote it, then the step's own entries
 * in the order they were set, then "end".  It is created with O_EXCL and
 * fsynced before the step changes anything, so a journal without "end"
 * comes from a run killed before it changed anything.  (The plan of an
 * interrupted tuning run is a different thing, state that is rewritten
 * as the run goes: lib/tuneplan.)
 *
 * Sequence:
 *	struct kopt_journal j = KOPT_JOURNAL_INIT;
 *	ret = kopt_journal_read(&j, repo, "design");
 *	0: a killed run's journal, undo or finish it (kopt_journal_get()),
 *	   then kopt_journal_end(); KOPT_ENOTFOUND: none; else failed;
 *	kopt_journal_set(&j, "to", "v1"); ...
 *	kopt_journal_begin(&j);      before the first change
 *	... the changes ...
 *	kopt_journal_end(&j);        after the last
 *	kopt_journal_release(&j);
 */

#include <git2.h>

#include "strvec.h"

struct kopt_journal {
	char *path;
	struct kopt_strvec keys, values;
	int complete;           /* read with its "end" line */
};

#define KOPT_JOURNAL_INIT { NULL, KOPT_STRVEC_INIT, KOPT_STRVEC_INIT, 0 }

/*
 * Look for the journal of `step`.  KOPT_ENOTFOUND (nothing printed) when
 * there is none; 0 when there is one that a process no longer running
 * wrote (its entries loaded; `complete` says whether it got its "end");
 * KOPT_ELOCKED (printed) when the process that wrote it is running, or
 * ran on another host; -1 (printed) when it cannot be read.
 */
int kopt_journal_read(struct kopt_journal *j, git_repository *repo,
		      const char *step);
/* The value of `key`, or NULL. */
const char *kopt_journal_get(const struct kopt_journal *j, const char *key);
/* Add an entry (a value without newlines) before kopt_journal_begin(). */
void kopt_journal_set(struct kopt_journal *j, const char *key,
		      const char *value);
/*
 * Write the journal of `step` with its entries; KOPT_ELOCKED (printed)
 * when one exists.
 */
int kopt_journal_begin(struct kopt_journal *j, git_repository *repo,
		       const char *step);
/* Remove the journal (after the step's last change). */
int kopt_journal_end(struct kopt_journal *j);
void kopt_journal_release(struct kopt_journal *j);

#endif
