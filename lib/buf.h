#ifndef KOPT_BUF_H
#define KOPT_BUF_H

/*
 * A growable string, after git's strbuf.
 *
 * Invariants: `buf` is never NULL and always NUL-terminated, `len` is
 * the number of bytes before the terminator (the content may hold NULs),
 * `alloc` is 0 while `buf` points at a shared empty string.  Initialise
 * with KOPT_BUF_INIT or kopt_buf_init(); free with kopt_buf_release(),
 * which leaves the buffer empty and usable again.  kopt_buf_detach()
 * hands the string to the caller, who frees it with free().
 */

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

struct kopt_buf {
	size_t alloc;
	size_t len;
	char *buf;
};

extern char kopt_buf_empty[];
#define KOPT_BUF_INIT { 0, 0, kopt_buf_empty }

void kopt_buf_init(struct kopt_buf *sb, size_t hint);
void kopt_buf_release(struct kopt_buf *sb);
char *kopt_buf_detach(struct kopt_buf *sb, size_t *len);
void kopt_buf_grow(struct kopt_buf *sb, size_t extra);
void kopt_buf_setlen(struct kopt_buf *sb, size_t len);
static inline void kopt_buf_reset(struct kopt_buf *sb)
{
	kopt_buf_setlen(sb, 0);
}

void kopt_buf_add(struct kopt_buf *sb, const void *data, size_t len);
void kopt_buf_addstr(struct kopt_buf *sb, const char *s);
void kopt_buf_addch(struct kopt_buf *sb, int c);
void kopt_buf_addbuf(struct kopt_buf *sb, const struct kopt_buf *other);
void kopt_buf_addf(struct kopt_buf *sb, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void kopt_buf_vaddf(struct kopt_buf *sb, const char *fmt, va_list ap);
void kopt_buf_addchars(struct kopt_buf *sb, int c, size_t n);
/* A whole number in decimal, as "%ju" and "%jd" print it, without printf. */
void kopt_buf_add_uint(struct kopt_buf *sb, uintmax_t v);
void kopt_buf_add_int(struct kopt_buf *sb, intmax_t v);
/* Replace `len` bytes at `pos` with `data` (`dlen` bytes). */
void kopt_buf_splice(struct kopt_buf *sb, size_t pos, size_t len,
		     const void *data, size_t dlen);
void kopt_buf_insert(struct kopt_buf *sb, size_t pos, const void *data,
		     size_t len);
void kopt_buf_trim(struct kopt_buf *sb);
void kopt_buf_rtrim(struct kopt_buf *sb);
int kopt_buf_starts_with(const struct kopt_buf *sb, const char *prefix);

/* Read a whole file; returns 0, or -1 with errno set (nothing printed). */
int kopt_buf_read_file(struct kopt_buf *sb, const char *path);
/*
 * The same, with the file's fstat() data taken once it was read: a
 * caller that keys what it read by the file's stat data learns whether
 * the file changed up to the end of the read.
 */
struct stat;
int kopt_buf_read_file_stat(struct kopt_buf *sb, const char *path,
			    struct stat *st);
/*
 * The same, `path` relative to the directory open as `dirfd` (AT_FDCWD:
 * the current one): a caller reading many files of one directory spares
 * the system the walk of its path for each.
 */
int kopt_buf_read_file_at(struct kopt_buf *sb, int dirfd, const char *path,
			  struct stat *st);

/*
 * Read the files names[0..nr) of the directory open as `dirfd`, each as
 * kopt_buf_read_file_at() reads one: out[i] gets its bytes (after what
 * it holds), st[i] its stat data taken through its descriptor once it
 * was read, and errs[i] 0, or the errno of the failure (out[i] then as
 * it was).  Where the system lets it, through an io_uring of the calling
 * thread: a batch of up to 32 files costs one system call for the opens,
 * one for the first reads and one for the closes, and an fstat() a
 * file, where one at a time costs four a file.  KOPT_NO_URING set to
 * anything but 0 reads one at a time.
 */
void kopt_buf_read_files_at(struct kopt_buf *out, struct stat *st,
			    int *errs, int dirfd, const char *const *names,
			    size_t nr);

/* Helpers on plain strings. */
int kopt_starts_with(const char *s, const char *prefix);
int kopt_ends_with(const char *s, const char *suffix);
/* If `s` starts with `prefix`, point *out past it and return 1. */
int kopt_skip_prefix(const char *s, const char *prefix, const char **out);
/*
 * strcmp(a, b) == 0 without the call: for the short names (versions,
 * trials) that lookups compare in their inner loops.
 */
static inline int kopt_str_eq(const char *a, const char *b)
{
	while (*a && *a == *b) {
		a++;
		b++;
	}
	return *a == *b;
}
char *kopt_strdup(const char *s);
char *kopt_strndup(const char *s, size_t n);
char *kopt_xstrfmt(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* An allocation failed: "fatal: out of memory", exit 128. */
void kopt_die_oom(void) __attribute__((noreturn));
void *kopt_malloc(size_t n);
void *kopt_calloc(size_t n, size_t size);
void *kopt_realloc(void *p, size_t n);

/*
 * Grow an array `x` of `nr` used and `alloc` allocated to hold `need`.
 * An empty array starts with room for four (most arrays of a results
 * entry, a devlog version or a summary hold two to four elements, and a
 * view holds thousands of them: room for sixteen touched a fresh page of
 * memory for each), then grows by half as much again plus sixteen.
 */
#define KOPT_ALLOC_GROW(x, need, alloc) \
	do { \
		if ((need) > (alloc)) { \
			size_t kopt_ag_ = (alloc) ? (alloc) * 3 / 2 + 16 : 4; \
			if (kopt_ag_ < (size_t)(need)) \
				kopt_ag_ = (need); \
			(alloc) = kopt_ag_; \
			(x) = kopt_realloc((x), (alloc) * sizeof(*(x))); \
		} \
	} while (0)

#define KOPT_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

#endif
