#ifndef KOPT_INDEX_H
#define KOPT_INDEX_H

/*
 * The index git is about to commit, read straight from its file so that
 * a hook pays for what it looks up, not for the size of the repository.
 *
 * libgit2 turns every entry of an index into an object of its own (and
 * frees each again); at tens of thousands of entries that is most of a
 * hook's time.  Here the file is mapped and walked once, keeping for
 * each entry only where it lies; paths are compared in place.  The
 * cache-tree extension ("TREE"), which git keeps up to date on every
 * change to the index, gives the tree id of each directory whose entries
 * did not change since the last write-tree: lib/changes compares those
 * ids with a commit's trees and reads only the directories that differ.
 *
 * Formats 2, 3 and 4 are read; the checksum is not verified (git does
 * not either, by default).  A split index ("link") or a sparse index
 * ("sdir") is refused with a message saying how to turn it off, as is an
 * extension git marks required and this reader does not know.
 *
 * Calling sequence: kopt_index_open() (or _open_file()), look up with
 * kopt_index_find() or walk entries [0, nr) with kopt_index_entry(),
 * kopt_index_free().  Entries are sorted by path as git sorts them;
 * paths and ids are borrowed from the index and live until it is freed.
 */

#include <sys/stat.h>

#include <git2.h>

#include "buf.h"

struct kopt_index;

struct kopt_index_entry {
	const char *path;       /* NUL-terminated, borrowed */
	size_t path_len;
	git_oid id;
	unsigned mode;          /* 0100644, 0100755, 0120000, 0160000 */
	int stage;              /* 0, or 1-3 in a conflict */
	int intent_to_add;      /* `git add -N`: not part of the commit */
	/*
	 * The work-tree file as git last saw it (32 bits each, as stored):
	 * ctime and mtime (seconds, nanoseconds), inode, uid, gid, size.
	 */
	unsigned long st_ctime_s, st_ctime_ns, st_mtime_s, st_mtime_ns;
	unsigned long st_ino, st_uid, st_gid, st_size;
};

/*
 * One directory of the cache-tree: its tree id is valid when `entries`
 * is not negative.  Children follow their parent (see kopt_index_tree).
 */
struct kopt_index_tree {
	const char *name;       /* not NUL-terminated; "" for the top */
	size_t name_len;
	int entries;            /* index entries under it; -1: invalid */
	size_t subtrees;
	size_t next;            /* the node after this one's descendants */
	git_oid id;
};

/*
 * Open the index a commit is being made from: $GIT_INDEX_FILE when set
 * (relative to the current directory, as git passes it to hooks), else
 * the repository's.  A repository without an index file has an empty one.
 */
int kopt_index_open(struct kopt_index **out, git_repository *repo);
int kopt_index_open_file(struct kopt_index **out, const char *path);
void kopt_index_free(struct kopt_index *idx);

size_t kopt_index_nr(const struct kopt_index *idx);
void kopt_index_entry(struct kopt_index_entry *out,
		      const struct kopt_index *idx, size_t pos);
/* The path of entry `pos`, borrowed. */
const char *kopt_index_path(const struct kopt_index *idx, size_t pos,
			    size_t *len);
/*
 * The stage-0 entry of `path`: 0 with `out` filled, or KOPT_ENOTFOUND
 * (nothing printed).
 */
int kopt_index_find(struct kopt_index_entry *out,
		    const struct kopt_index *idx, const char *path);
/*
 * The entries whose path starts with the `len` bytes of `prefix`: [*lo,
 * *hi), found by binary search.
 */
void kopt_index_range(size_t *lo, size_t *hi, const struct kopt_index *idx,
		      const char *prefix, size_t len);
/*
 * The blob of `path` as staged, appended to `out`; KOPT_ENOTFOUND when
 * the path is not staged (or is an intent to add).
 */
int kopt_index_read(struct kopt_buf *out, git_repository *repo,
		    const struct kopt_index *idx, const char *path);

/*
 * 1 and the index's id of `path` when `st` (the file's stat data, from
 * lstat() or from fstat() of what was read) equals what the index
 * recorded and the entry is not racily clean: git status's rule, which
 * kopt_index_worktree_id() follows.  0 otherwise (`idx` may be NULL).
 */
int kopt_index_clean_id(git_oid *out, const struct kopt_index *idx,
			const char *path, const struct stat *st);

/*
 * The blob id of the work-tree file `path` (relative to `top`, which
 * ends with '/'), as git status finds it: the index's id when the file's
 * lstat data equals what the index recorded and the entry is not racily
 * clean (modified in the same second the index was written), else the
 * id git's blob hashing gives its bytes.  Never a time alone: a file
 * whose stat data differs in any field is hashed.  `idx` may be NULL
 * (every file is hashed).  0 with *out and *st set; KOPT_ENOTFOUND when
 * there is no such file; KOPT_EUNSUPPORTED when it is not a regular file
 * (a symbolic link, a directory); -1 when it cannot be read (nothing
 * printed: the caller reads it and reports).
 */
int kopt_index_worktree_id(git_oid *out, struct stat *st,
			   const struct kopt_index *idx, const char *top,
			   const char *path);

/*
 * The same, the file's lstat data taken as `name` in the directory open
 * as `dirfd` (its last component: the system walks no path for it).
 */
int kopt_index_worktree_id_at(git_oid *out, struct stat *st,
			      const struct kopt_index *idx, const char *top,
			      const char *path, int dirfd, const char *name);

/*
 * The cache-tree, in git's order (a directory, then each of its
 * subtrees with theirs, children sorted by name length, then name):
 * node 0 is the top; NULL when the index has none.
 */
const struct kopt_index_tree *kopt_index_trees(const struct kopt_index *idx,
					       size_t *nr);

/*
 * 1 when the index holds exactly `tree`: its cache-tree's top is valid
 * and is that tree (as after a commit, before anything is staged), so
 * that every entry is the tree's.  0 otherwise, and for an index without
 * a cache-tree (`idx` may be NULL).
 */
int kopt_index_is_tree(const struct kopt_index *idx, const git_oid *tree);

#endif
