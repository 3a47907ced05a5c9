#include "buf.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sys/stat.h>

#include <liburing.h>

#include "banned.h"

/* The room of a file's first read. */
#define READ_ROOM 8192

char kopt_buf_empty[1];

void kopt_die_oom(void)
{
	fputs("fatal: out of memory\n", stderr);
	exit(128);
}

void *kopt_malloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (!p)
		kopt_die_oom();
	return p;
}

void *kopt_calloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);

	if (!p)
		kopt_die_oom();
	return p;
}

void *kopt_realloc(void *p, size_t n)
{
	void *r = realloc(p, n ? n : 1);

	if (!r)
		kopt_die_oom();
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
 * Read `fd` to its end into `sb`, the file's bytes from sb->len on, which
 * is `start` unless a first read was made elsewhere: then `n` is what it
 * added (from `start`) into the room of `want` bytes it had, else `n` is
 * negative.  A regular file ends where a read comes back short and its
 * size says so: a small file costs one read() and the fstat() that `st`
 * keeps, not a second read() to see its end.  A file that grows, or one
 * that is not regular (a pipe, a file of /proc), is read until read()
 * returns 0, and `st` is taken after that.
 */
static int read_fd_from(struct kopt_buf *sb, int fd, struct stat *st,
			size_t start, ssize_t n, size_t want)
{
	int checked = 0;

	for (;;) {
		if (n < 0) {
			kopt_buf_grow(sb, want);
			want = sb->alloc - sb->len - 1;
			n = read(fd, sb->buf + sb->len, want);
			if (n < 0) {
				if (errno == EINTR)
					continue;
				return -1;
			}
			kopt_buf_setlen(sb, sb->len + (size_t)n);
		}
		if ((size_t)n == want) {
			want *= 2;
			n = -1;
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
		n = -1;
	}
}

static int read_fd(struct kopt_buf *sb, int fd, struct stat *st)
{
	return read_fd_from(sb, fd, st, sb->len, -1, READ_ROOM);
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

/* ------------------------------------------------------------------ */
/*
 * Many files of one directory (kopt_buf_read_files_at()).  Each thread
 * that reads many keeps an io_uring, set up on its first batch and
 * given back when the thread ends; a batch's opens, then its first
 * reads, then its closes go to the system in one call each.  Where the
 * system has no io_uring, refuses it (a container's seccomp profile,
 * kernel.io_uring_disabled) or KOPT_NO_URING is set, or when a ring
 * fails, the files are read one system call at a time, as
 * kopt_buf_read_file_at() reads one.
 */

#define READ_BATCH 32
#define RING_NOT_RUN INT_MIN

struct read_ring {
	struct io_uring ring;
};

static _Thread_local struct read_ring *thread_ring;
static _Thread_local int thread_ring_tried;
static int rings_refused;               /* atomic: one was refused */
static pthread_once_t ring_once = PTHREAD_ONCE_INIT;
static pthread_key_t ring_key;          /* gives a thread's ring back */

static void ring_free(void *p)
{
	struct read_ring *r = p;

	io_uring_queue_exit(&r->ring);
	free(r);
}

/*
 * A child of fork() shares its parent's rings: it forgets them (they go
 * at its exec() or its end) and sets up its own if it reads many.
 */
static void ring_forget(void)
{
	pthread_setspecific(ring_key, NULL);
	thread_ring = NULL;
	thread_ring_tried = 0;
}

static void ring_setup_once(void)
{
	pthread_key_create(&ring_key, ring_free);
	pthread_atfork(NULL, NULL, ring_forget);
}

static struct io_uring *ring_get(void)
{
	const char *off;
	struct read_ring *r;

	if (thread_ring)
		return &thread_ring->ring;
	if (thread_ring_tried)
		return NULL;
	thread_ring_tried = 1;
	pthread_once(&ring_once, ring_setup_once);
	off = getenv("KOPT_NO_URING");
	if ((off && *off && strcmp(off, "0")) ||
	    __atomic_load_n(&rings_refused, __ATOMIC_RELAXED))
		return NULL;
	r = kopt_malloc(sizeof(*r));
	if (io_uring_queue_init(2 * READ_BATCH, &r->ring, 0) < 0) {
		free(r);
		__atomic_store_n(&rings_refused, 1, __ATOMIC_RELAXED);
		return NULL;
	}
	/* a read at the file's own position (Linux 5.6) */
	if (!(r->ring.features & IORING_FEAT_RW_CUR_POS)) {
		ring_free(r);
		__atomic_store_n(&rings_refused, 1, __ATOMIC_RELAXED);
		return NULL;
	}
	thread_ring = r;
	pthread_setspecific(ring_key, r);
	return &r->ring;
}

/* A ring that failed goes; the thread reads on without one. */
static void ring_drop(void)
{
	pthread_setspecific(ring_key, NULL);
	ring_free(thread_ring);
	thread_ring = NULL;
}

/*
 * Submit the `queued` requests and take their completions into res[]
 * by each one's index.  Those the system did not take keep RING_NOT_RUN,
 * for the caller to do itself, and the ring is dropped.
 */
static void ring_run(struct io_uring *ring, unsigned queued, int *res)
{
	unsigned submitted = 0, got = 0;
	int ret;

	do
		ret = io_uring_submit_and_wait(ring, queued);
	while (ret == -EINTR);
	if (ret > 0)
		submitted = (unsigned)ret;
	while (submitted < queued) {
		ret = io_uring_submit(ring);
		if (ret == -EINTR)
			continue;
		if (ret <= 0)
			break;
		submitted += (unsigned)ret;
	}
	while (got < submitted) {
		struct io_uring_cqe *cqe;
		ret = io_uring_wait_cqe(ring, &cqe);
		if (ret == -EINTR)
			continue;
		if (ret < 0)
			break;
		res[io_uring_cqe_get_data64(cqe)] = cqe->res;
		io_uring_cqe_seen(ring, cqe);
		got++;
	}
	if (submitted < queued || got < submitted)
		ring_drop();
}

/* Queue one request for file `i`, when there is a ring. */
static struct io_uring_sqe *ring_queue(struct io_uring *ring, size_t i,
				       unsigned *queued)
{
	struct io_uring_sqe *sqe;

	if (!ring)
		return NULL;
	sqe = io_uring_get_sqe(ring);
	if (!sqe)
		return NULL;
	io_uring_sqe_set_data64(sqe, i);
	(*queued)++;
	return sqe;
}

static void read_batch(struct kopt_buf *out, struct stat *st, int *errs,
		       int dirfd, const char *const *names, size_t nr)
{
	struct io_uring *ring = ring_get();
	struct io_uring_sqe *sqe;
	int fd[READ_BATCH], res[READ_BATCH];
	size_t start[READ_BATCH], want[READ_BATCH], i;
	unsigned queued = 0;

	/* the opens */
	for (i = 0; i < nr; i++) {
		res[i] = RING_NOT_RUN;
		errs[i] = 0;
		if ((sqe = ring_queue(ring, i, &queued)))
			io_uring_prep_openat(sqe, dirfd, names[i],
					     O_RDONLY | O_CLOEXEC, 0);
	}
	if (queued)
		ring_run(ring, queued, res);
	for (i = 0; i < nr; i++) {
		fd[i] = res[i];
		if (res[i] == RING_NOT_RUN)
			fd[i] = openat(dirfd, names[i], O_RDONLY | O_CLOEXEC);
		if (res[i] < 0 && res[i] != RING_NOT_RUN)
			errs[i] = -res[i];
		else if (fd[i] < 0)
			errs[i] = errno;
	}

	/* the first reads, at each file's position */
	ring = thread_ring ? &thread_ring->ring : NULL;
	queued = 0;
	for (i = 0; i < nr; i++) {
		res[i] = RING_NOT_RUN;
		if (fd[i] < 0)
			continue;
		start[i] = out[i].len;
		kopt_buf_grow(&out[i], READ_ROOM);
		want[i] = out[i].alloc - out[i].len - 1;
		if ((sqe = ring_queue(ring, i, &queued)))
			io_uring_prep_read(sqe, fd[i], out[i].buf + out[i].len,
					   (unsigned)want[i], (__u64)-1);
	}
	if (queued)
		ring_run(ring, queued, res);
	for (i = 0; i < nr; i++) {
		ssize_t n = -1;
		if (fd[i] < 0)
			continue;
		if (res[i] >= 0) {
			n = res[i];
			kopt_buf_setlen(&out[i], out[i].len + (size_t)n);
		} else if (res[i] != RING_NOT_RUN && res[i] != -EINTR &&
			   res[i] != -EAGAIN) {
			errs[i] = -res[i];
		}
		if (!errs[i] &&
		    read_fd_from(&out[i], fd[i], &st[i], start[i], n, want[i]))
			errs[i] = errno;
		if (errs[i])
			kopt_buf_setlen(&out[i], start[i]);
	}

	/* the closes */
	ring = thread_ring ? &thread_ring->ring : NULL;
	queued = 0;
	for (i = 0; i < nr; i++) {
		res[i] = RING_NOT_RUN;
		if (fd[i] >= 0 && (sqe = ring_queue(ring, i, &queued)))
			io_uring_prep_close(sqe, fd[i]);
	}
	if (queued)
		ring_run(ring, queued, res);
	for (i = 0; i < nr; i++)
		if (fd[i] >= 0 && res[i] == RING_NOT_RUN)
			close(fd[i]);
}

void kopt_buf_read_files_at(struct kopt_buf *out, struct stat *st,
			    int *errs, int dirfd, const char *const *names,
			    size_t nr)
{
	size_t i, n;

	for (i = 0; i < nr; i += n) {
		n = nr - i < READ_BATCH ? nr - i : READ_BATCH;
		read_batch(out + i, st + i, errs + i, dirfd, names + i, n);
	}
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
