#ifndef KOPT_CACHE_H
#define KOPT_CACHE_H

/*
 * A stat-keyed cache of what was read from work-tree files, after git's
 * index: for each file, its size, modification and change times (ns),
 * inode, and a text derived from it (a slim summary of a devlog or a
 * results file, in the format of its module).  A lookup hits only when
 * every stat field matches, so an edited file is read again.  Like git,
 * entries whose mtime or ctime is within the last two seconds are not
 * stored ("racy": a same-size rewrite in the same tick could go
 * unnoticed); such files are read in full until they settle.
 *
 * Lives at <gitdir>/kopt/<name>.cache, never in the work tree: a header
 * line, then per entry one line "<path> <size> <mtime s> <mtime ns>
 * <ctime s> <ctime ns> <inode> <length>" (tab-separated) followed by
 * <length> bytes of data and a newline, sorted by path.  A cache that
 * cannot be read is ignored and rebuilt; one that cannot be written
 * (another git-kopt holds the lock) is left alone.  When a run that
 * stored something saves it, entries of deleted files are dropped.
 *
 *	kopt_cache_open(&c, repo, "analyze");
 *	if (kopt_cache_get(&c, rel, &st, &data, &len)) ...   borrowed
 *	else kopt_cache_put(&c, rel, &st, text, len);        copied
 *	kopt_cache_save(&c);
 *	kopt_cache_release(&c);
 *
 * KOPT_NO_CACHE=1 in the environment turns it off (every get misses,
 * nothing is saved).  Nothing prints.
 */

#include <stddef.h>
#include <sys/stat.h>

#include <git2.h>

#include "buf.h"

struct kopt_cache_entry {
	const char *path;       /* into `text`, or owned when `owned` */
	long long st[6];        /* size, mtime s/ns, ctime s/ns, inode */
	const char *data;
	size_t len;
	int used;
	int owned;
};

struct kopt_cache {
	char *file;             /* NULL: disabled */
	char *top;              /* the work tree the paths are relative to */
	struct kopt_buf text;   /* the file as read; entries point into it */
	struct kopt_cache_entry *entries;   /* sorted by path */
	size_t nr, alloc;
	int dirty;
};

#define KOPT_CACHE_INIT { NULL, NULL, KOPT_BUF_INIT, NULL, 0, 0, 0 }

void kopt_cache_open(struct kopt_cache *c, git_repository *repo,
		     const char *name);
/* 1 and the text stored for `path` if `st` matches, else 0. */
int kopt_cache_get(struct kopt_cache *c, const char *path,
		   const struct stat *st, const char **data, size_t *len);
/* Store a copy of `data` for `path` as `st` says. */
void kopt_cache_put(struct kopt_cache *c, const char *path,
		    const struct stat *st, const char *data, size_t len);
/* Write it back when something changed; 0, or -1. */
int kopt_cache_save(struct kopt_cache *c);
void kopt_cache_release(struct kopt_cache *c);

/*
 * Helpers for the modules' summary formats: lines of tab-separated
 * fields.  kopt_cache_add_str() appends a tab (unless at the start of a
 * line) and `s` with backslash, tab and newline escaped, "-" for NULL;
 * kopt_cache_add_num() the same for a double ("-" for NAN, otherwise the
 * 16 hexadecimal digits of its bits: exact, and cheap to read back).  kopt_cache_split() cuts the line at `*pos` (advanced past
 * it) into at most `max` fields, unescaped in place; "-" becomes NULL.
 * Returns the number of fields, or -1 at the end of the text.
 */
void kopt_cache_add_str(struct kopt_buf *out, const char *s);
void kopt_cache_add_num(struct kopt_buf *out, double v);
int kopt_cache_split(char *text, size_t len, size_t *pos, char **fields,
		     int max);
double kopt_cache_num(const char *field);

#endif
