#ifndef KOPT_CACHE_H
#define KOPT_CACHE_H

/*
 * A cache of texts derived from files (a kernel's analysis, in the
 * format of its module), each stored under a name with the key it was
 * derived from: a git object id computed over the ids of every input, so
 * that the key changes whenever git itself would see a different input
 * (lib/index gives the ids of work-tree files as git status does).  A
 * lookup hits only when the stored key equals the key asked for; nothing
 * is keyed by a time, so a stale answer needs a SHA-1 collision.
 *
 * Lives under <gitdir>/kopt/<cache>/, never in the work tree: one file
 * per name, "<header>\n<key>\n<length>\n<checksum>\n" then <length>
 * bytes, written through lib/lockfile as a whole, so that reading one
 * name reads one small file and a reader sees an old or a new entry,
 * never half.  The checksum (of the bytes) lets an entry be written
 * without waiting for the disk: one torn by a crash is refused.  A
 * file that does not parse is a miss, and the next put rewrites it; one
 * that cannot be written (another git-kopt holds its lock) is left
 * alone.  Names are limited to letters, digits, '.', '_' and '-' (not
 * first); others are never cached.
 *
 * Many entries made at once (a first run over every kernel) go into one
 * file instead, <cache>/.pack ("<pack header>\n", then per entry its
 * name, key, length and checksum lines and its bytes): between
 * kopt_cache_hold() and kopt_cache_flush(), puts are held in memory, and
 * the flush writes KOPT_CACHE_PACK_MIN or more of them as a new pack
 * (with the old pack's entries of other names), fewer as files of their
 * own.  A lookup reads the pack once per cache opened, then the name's
 * own file: either hits when its key is the key asked for (keys come
 * from the inputs, so wherever an entry lies it is right).
 *
 *	kopt_cache_open(&c, repo, "analyze");
 *	kopt_cache_key(&key, &keytext);
 *	if (kopt_cache_get(&c, name, &key, &data)) ...   a hit, into data
 *	else kopt_cache_put(&c, name, &key, text, len);
 *	kopt_cache_release(&c);
 *
 * KOPT_NO_CACHE=1 in the environment turns it off (every get misses,
 * nothing is written).  Nothing prints.
 */

#include <pthread.h>
#include <stddef.h>

#include <git2.h>

#include "buf.h"

struct kopt_cache_pack;
struct kopt_cache_held;

struct kopt_cache {
	char *dir;              /* with a trailing '/'; NULL: disabled */
	int dir_made;           /* an entry was stored: `dir` exists */
	/* under lock: */
	pthread_mutex_t lock;
	int pack_read;          /* the pack was looked for */
	struct kopt_cache_pack *pack;   /* what it holds, or NULL */
	int holding;            /* between hold and flush */
	struct kopt_cache_held *held;   /* puts held */
	size_t held_nr, held_alloc;
};

#define KOPT_CACHE_INIT { NULL, 0, PTHREAD_MUTEX_INITIALIZER, 0, NULL, 0, \
			  NULL, 0, 0 }

/* Held puts from this many on are written as one pack. */
#define KOPT_CACHE_PACK_MIN 32

void kopt_cache_open(struct kopt_cache *c, git_repository *repo,
		     const char *name);
/*
 * The directory of the cache `name`, "<git dir>/kopt/<name>/" (owned by
 * the caller), or NULL when caches are off (KOPT_NO_CACHE) or there is no
 * repository.
 */
char *kopt_cache_dir(git_repository *repo, const char *name);
/* The key of a text that lists every input: git's blob id of it. */
void kopt_cache_key(git_oid *out, const struct kopt_buf *inputs);
/* 1 and the text stored for `name` (into `out`) if `key` matches, else 0. */
int kopt_cache_get(struct kopt_cache *c, const char *name,
		   const git_oid *key, struct kopt_buf *out);
/* Store `data` for `name` under `key`; 0, or -1 when it was not stored. */
/*
 * 1 when there is an entry for `name`, under whatever key (one lstat()):
 * without one, a caller need not work out a key before reading.
 */
int kopt_cache_has(struct kopt_cache *c, const char *name);
int kopt_cache_put(struct kopt_cache *c, const char *name,
		   const git_oid *key, const char *data, size_t len);
/*
 * Hold the puts that follow in memory, from any thread, until
 * kopt_cache_flush() writes them (one pack, or a file each; see above).
 * Release flushes too.
 */
void kopt_cache_hold(struct kopt_cache *c);
void kopt_cache_flush(struct kopt_cache *c);
void kopt_cache_release(struct kopt_cache *c);

/*
 * Helpers for the modules' summary formats: lines of tab-separated
 * fields.  kopt_cache_add_str() appends a tab (unless at the start of a
 * line) and `s` with backslash, tab and newline escaped, "-" for NULL
 * (a leading '-', and a '#' at the start of a line, are escaped too);
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
/*
 * A field that holds a whole number from `min` to `max` (both within
 * 2^53 of 0, so exact as doubles): 0 and *out, or -1 for anything else
 * (no number, NAN, a fraction, out of range), which is damage.
 */
#define KOPT_CACHE_WHOLE_MAX 9007199254740992.0       /* 2^53 */
int kopt_cache_whole(const char *field, double min, double max, long *out);
int kopt_cache_whole_ok(double v, double min, double max);

#endif
