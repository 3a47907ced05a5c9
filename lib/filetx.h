#ifndef KOPT_FILETX_H
#define KOPT_FILETX_H

/*
 * A set of file writes that land together or not at all, for steps that
 * write several user files in one go (init's setup, kernel add, the
 * results and devlog that profile and tune write).
 *
 * Queue each file with kopt_filetx_add(): its absolute path, the name
 * used in messages (usually relative to the top of the work tree), the
 * new content, and the mode (0 keeps the mode of the file it replaces,
 * 0644 for a new one).  `keep_as`, when not NULL, is where the existing
 * file is moved before the new one takes its place (a hook being
 * chained).
 *
 * kopt_filetx_check() verifies, touching nothing, that every write can
 * happen: no component of a path is a file where a directory is needed,
 * the directory that will hold each file is writable, no target is a
 * directory, no lock is held, nothing sits at a `keep_as`.  It reports
 * the first problem in one line and returns KOPT_EINVALID.
 *
 * kopt_filetx_commit() checks, creates the missing directories, takes
 * "<path>.lock" for every file (lib/lockfile) and writes the content
 * into it; only when all of that has worked are files moved aside and
 * the locks renamed over their targets.  A failure before that point
 * removes the locks and the directories it made, so nothing is written.
 * Returns 0 or a negative code; the problem is reported once (lib/error),
 * by filetx or by lib/lockfile.
 *
 * kopt_filetx_release() frees the queue (and rolls back locks of a
 * transaction that was not committed).
 */

#include <sys/types.h>

#include "buf.h"
#include "lockfile.h"
#include "strvec.h"

struct kopt_filetx_op {
	char *path;
	char *label;
	char *keep_as;
	struct kopt_buf data;
	mode_t mode;
	struct kopt_lock lock;
};

struct kopt_filetx {
	struct kopt_filetx_op *ops;
	size_t nr, alloc;
	struct kopt_strvec made_dirs;  /* created by commit, in order */
};

#define KOPT_FILETX_INIT { NULL, 0, 0, KOPT_STRVEC_INIT }

void kopt_filetx_add(struct kopt_filetx *tx, const char *path,
		     const char *label, const void *data, size_t len,
		     mode_t mode, const char *keep_as);
int kopt_filetx_check(const struct kopt_filetx *tx);
int kopt_filetx_commit(struct kopt_filetx *tx);
void kopt_filetx_release(struct kopt_filetx *tx);

#endif
