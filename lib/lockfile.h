#ifndef KOPT_LOCKFILE_H
#define KOPT_LOCKFILE_H

/*
 * Atomic replacement of a file, after git's lockfile.
 *
 * kopt_lock_acquire() creates "<path>.lock" with O_CREAT|O_EXCL (so two
 * writers exclude each other: a second gets KOPT_ELOCKED); the caller
 * writes the new content with kopt_lock_write(); kopt_lock_commit()
 * fsyncs it and renames it over <path>, so a reader sees the old file or
 * the new one, never half.  kopt_lock_rollback() removes the lock file and
 * leaves <path> untouched; it is safe to call after a commit and on a
 * lock never acquired.  Locks still held at exit are removed.
 *
 * kopt_write_file_atomic() does the whole sequence for one buffer and
 * creates missing parent directories; kopt_read_file() is how such a
 * file is read back.
 */

#include <stddef.h>
#include <sys/types.h>

struct kopt_buf;

struct kopt_lock {
	char *path;       /* the target */
	char *lock_path;  /* the target + ".lock" */
	int fd;
	mode_t mode;
	struct kopt_lock *next_active;
	/*
	 * Set before kopt_lock_commit() for a file derived from others
	 * whose reader checks it whole (lib/cache): renamed without
	 * waiting for the disk, since after a crash its reader finds the
	 * old file, the new one, or one it refuses, and derives it again.
	 */
	int no_fsync;
};

#define KOPT_LOCK_INIT { NULL, NULL, -1, 0644, NULL, 0 }

int kopt_lock_acquire(struct kopt_lock *lk, const char *path);
/*
 * The same, waiting up to `timeout_ms` for another git kopt to let go of
 * the lock: for a file that two steps may both append to (a catalog).
 */
int kopt_lock_acquire_timeout(struct kopt_lock *lk, const char *path,
			      long timeout_ms);
/*
 * KOPT_ELOCKED, printed as acquiring it would (`label` naming the file),
 * when "<path>.lock" exists; else 0.  For a step that would work long
 * before it writes: it stops before the work, not after.
 */
int kopt_lock_check(const char *path, const char *label);
int kopt_lock_write(struct kopt_lock *lk, const void *data, size_t len);
int kopt_lock_commit(struct kopt_lock *lk);
void kopt_lock_rollback(struct kopt_lock *lk);

int kopt_write_file_atomic(const char *path, const void *data, size_t len,
			   mode_t mode);
/*
 * Append the file at `path` to `out`: 0; KOPT_ENOTFOUND (nothing
 * printed) when there is no such file; else -1, reported as "cannot
 * read '<label>': <why>" (`label`: the file as the user names it; NULL:
 * `path`).  On failure `out` is left as it was.
 */
int kopt_read_file(struct kopt_buf *out, const char *path, const char *label);

/* mkdir -p of the directory part of `path`; 0 or -1 (error printed). */
int kopt_mkdir_parents(const char *path);
/* mkdir -p of `dir` itself. */
int kopt_mkdir_p(const char *dir);
/*
 * rm -rf of `dir` (symbolic links removed, never followed): what a step
 * made and takes back.  Removes what it can; nothing printed.
 */
void kopt_remove_tree(const char *dir);

#endif
