#include "buf.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sys/stat.h>

#include "banned.h"

char kopt_buf_empty[1];

void *kopt_malloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (!p) {
		fputs("fatal: out of memory\n", stderr);
		exit(128);
	}
	return p;
}

void *kopt_calloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);

	if (!p) {
		fputs("fatal: out of memory\n", stderr);
		exit(128);
	}
	return p;
}

void *kopt_realloc(void *p, size_t n)
{
	void *r = realloc(p, n ? n : 1);

	if (!r) {
		fputs("fatal: out of memory\n", stderr);
		exit(128);
	}
	return r;
}

char *kopt_strndup(const char *s, size_t n)
{
	char *r = kopt_malloc(n + 1);

	memcpy(r, s, n);
	r[n] = '\0';
	return r;
}

char *kopt_strdup(const char *s)
{
	return s ? kopt_strndup(s, strlen(s)) : NULL;
}

char *kopt_xstrfmt(const char *fmt, ...)
{
	struct kopt_buf sb = KOPT_BUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	kopt_buf_vaddf(&sb, fmt, ap);
	va_end(ap);
	return kopt_buf_detach(&sb, NULL);
}

void kopt_buf_init(struct kopt_buf *sb, size_t hint)
{
	sb->alloc = sb->len = 0;
	sb->buf = kopt_buf_empty;
	if (hint)
		kopt_buf_grow(sb, hint);
}

void kopt_buf_release(struct kopt_buf *sb)
{
	if (sb->alloc)
		free(sb->buf);
	kopt_buf_init(sb, 0);
}

char *kopt_buf_detach(struct kopt_buf *sb, size_t *len)
{
	char *r;

	kopt_buf_grow(sb, 0);
	r = sb->buf;
	if (len)
		*len = sb->len;
	kopt_buf_init(sb, 0);
	return r;
}

void kopt_buf_grow(struct kopt_buf *sb, size_t extra)
{
	int fresh = !sb->alloc;
	size_t need = sb->len + extra + 1;

	if (need <= sb->alloc)
		return;
	if (fresh)
		sb->buf = NULL;
	if (need < sb->alloc * 3 / 2)
		need = sb->alloc * 3 / 2;
	if (need < 64)
		need = 64;
	sb->buf = kopt_realloc(sb->buf, need);
	sb->alloc = need;
	if (fresh)
		sb->buf[0] = '\0';
}

void kopt_buf_setlen(struct kopt_buf *sb, size_t len)
{
	if (!sb->alloc && !len)
		return;
	if (len + 1 > sb->alloc)
		kopt_buf_grow(sb, len - sb->len);
	sb->len = len;
	sb->buf[len] = '\0';
}

void kopt_buf_add(struct kopt_buf *sb, const void *data, size_t len)
{
	if (!len)
		return;
	kopt_buf_grow(sb, len);
	memcpy(sb->buf + sb->len, data, len);
	kopt_buf_setlen(sb, sb->len + len);
}

void kopt_buf_addstr(struct kopt_buf *sb, const char *s)
{
	kopt_buf_add(sb, s, strlen(s));
}

void kopt_buf_addch(struct kopt_buf *sb, int c)
{
	kopt_buf_grow(sb, 1);
	sb->buf[sb->len++] = (char)c;
	sb->buf[sb->len] = '\0';
}

void kopt_buf_addbuf(struct kopt_buf *sb, const struct kopt_buf *other)
{
	kopt_buf_add(sb, other->buf, other->len);
}

void kopt_buf_add_uint(struct kopt_buf *sb, uintmax_t v)
{
	char digits[24];
	size_t n = sizeof(digits);

	do {
		digits[--n] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	kopt_buf_add(sb, digits + n, sizeof(digits) - n);
}

void kopt_buf_add_int(struct kopt_buf *sb, intmax_t v)
{
	if (v < 0) {
		kopt_buf_addch(sb, '-');
		/* the magnitude of INTMAX_MIN too */
		kopt_buf_add_uint(sb, -(uintmax_t)v);
		return;
	}
	kopt_buf_add_uint(sb, (uintmax_t)v);
}

void kopt_buf_addchars(struct kopt_buf *sb, int c, size_t n)
{
	kopt_buf_grow(sb, n);
	memset(sb->buf + sb->len, c, n);
	kopt_buf_setlen(sb, sb->len + n);
}

void kopt_buf_vaddf(struct kopt_buf *sb, const char *fmt, va_list ap)
{
	va_list cp;
	int n;

	kopt_buf_grow(sb, 64);
	va_copy(cp, ap);
	n = vsnprintf(sb->buf + sb->len, sb->alloc - sb->len, fmt, cp);
	va_end(cp);
	if (n < 0)
		return;
	if ((size_t)n >= sb->alloc - sb->len) {
		kopt_buf_grow(sb, (size_t)n);
		va_copy(cp, ap);
		n = vsnprintf(sb->buf + sb->len, sb->alloc - sb->len, fmt, cp);
		va_end(cp);
	}
	kopt_buf_setlen(sb, sb->len + (size_t)n);
}

void kopt_buf_addf(struct kopt_buf *sb, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	kopt_buf_vaddf(sb, fmt, ap);
	va_end(ap);
}

void kopt_buf_splice(struct kopt_buf *sb, size_t pos, size_t len,
		     const void *data, size_t dlen)
{
	if (pos > sb->len)
		pos = sb->len;
	if (pos + len > sb->len)
		len = sb->len - pos;
	if (dlen > len)
		kopt_buf_grow(sb, dlen - len);
	memmove(sb->buf + pos + dlen, sb->buf + pos + len,
		sb->len - pos - len);
	if (dlen)
		memcpy(sb->buf + pos, data, dlen);
	kopt_buf_setlen(sb, sb->len + dlen - len);
}

void kopt_buf_insert(struct kopt_buf *sb, size_t pos, const void *data,
		     size_t len)
{
	kopt_buf_splice(sb, pos, 0, data, len);
}

void kopt_buf_rtrim(struct kopt_buf *sb)
{
	while (sb->len && (sb->buf[sb->len - 1] == ' ' ||
			   sb->buf[sb->len - 1] == '\t' ||
			   sb->buf[sb->len - 1] == '\n' ||
			   sb->buf[sb->len - 1] == '\r'))
		sb->len--;
	if (sb->alloc)
		sb->buf[sb->len] = '\0';
}

void kopt_buf_trim(struct kopt_buf *sb)
{
	size_t i = 0;

	kopt_buf_rtrim(sb);
	while (i < sb->len && (sb->buf[i] == ' ' || sb->buf[i] == '\t' ||
			       sb->buf[i] == '\n' || sb->buf[i] == '\r'))
		i++;
	if (i)
		kopt_buf_splice(sb, 0, i, NULL, 0);
}

int kopt_buf_starts_with(const struct kopt_buf *sb, const char *prefix)
{
	return kopt_starts_with(sb->buf, prefix);
}

/*
 * Read `fd` to its end into `sb`.  A regular file ends where a read
 * comes back short and its size says so: a small file costs one read()
 * and the fstat() that `st` keeps, not a second read() to see its end.
 * A file that grows, or one that is not regular (a pipe, a file of
 * /proc), is read until read() returns 0, and `st` is taken after that.
 */
static int read_fd(struct kopt_buf *sb, int fd, struct stat *st)
{
	size_t start = sb->len, want = 8192;
	int checked = 0;
	ssize_t n;

	for (;;) {
		kopt_buf_grow(sb, want);
		want = sb->alloc - sb->len - 1;
		n = read(fd, sb->buf + sb->len, want);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		kopt_buf_setlen(sb, sb->len + (size_t)n);
		if ((size_t)n == want) {
			want *= 2;
			continue;
		}
		if (!checked) {
			checked = 1;
			if (fstat(fd, st))
				return -1;
			if (S_ISREG(st->st_mode) &&
			    (uintmax_t)st->st_size == sb->len - start)
				return 0;
		}
		if (!n)
			return fstat(fd, st);
	}
}

int kopt_buf_read_file_stat(struct kopt_buf *sb, const char *path,
			    struct stat *st)
{
	return kopt_buf_read_file_at(sb, AT_FDCWD, path, st);
}

int kopt_buf_read_file_at(struct kopt_buf *sb, int dirfd, const char *path,
			  struct stat *st)
{
	int fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC), e;

	if (fd < 0)
		return -1;
	if (read_fd(sb, fd, st)) {
		e = errno;
		close(fd);
		errno = e;
		return -1;
	}
	close(fd);
	return 0;
}

int kopt_buf_read_file(struct kopt_buf *sb, const char *path)
{
	struct stat st;

	return kopt_buf_read_file_stat(sb, path, &st);
}

int kopt_starts_with(const char *s, const char *prefix)
{
	return !strncmp(s, prefix, strlen(prefix));
}

int kopt_ends_with(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);

	return a >= b && !memcmp(s + a - b, suffix, b);
}

int kopt_skip_prefix(const char *s, const char *prefix, const char **out)
{
	size_t n = strlen(prefix);

	if (strncmp(s, prefix, n))
		return 0;
	*out = s + n;
	return 1;
}
