/*
 * The counter availability image kept between runs (avail.h).  One file
 * a key: "<dir>/counter-availability-<hash>.bin", holding a line naming
 * the format, a line with the key, a line with the image's size, then
 * the image; written under a temporary name and renamed.
 */
#include "avail.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../banned.h"

#define MAGIC "kopt counter availability 1\n"

static char *path_of(const char *dir, const char *key, const char *suffix)
{
	uint64_t h = 1469598103934665603ull; /* FNV-1a */
	size_t len;
	char *p;

	for (const unsigned char *s = (const unsigned char *)key; *s; s++)
		h = (h ^ *s) * 1099511628211ull;
	len = strlen(dir) + strlen(suffix) + 64;
	p = malloc(len);
	if (p)
		snprintf(p, len, "%s/counter-availability-%016llx.bin%s", dir,
			 (unsigned long long)h, suffix);
	return p;
}

/* The whole of an open file, at most max bytes; NULL when larger. */
static unsigned char *read_all(int fd, size_t max, size_t *len)
{
	size_t cap = 16384, n = 0;
	unsigned char *buf = malloc(cap), *b;
	ssize_t r;

	while (buf) {
		if (n == cap) {
			if (cap > max || !(b = realloc(buf, cap * 2)))
				break;
			buf = b;
			cap *= 2;
		}
		r = read(fd, buf + n, cap - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			break;
		if (r == 0) {
			if (n > max)
				break;
			*len = n;
			return buf;
		}
		n += (size_t)r;
	}
	free(buf);
	return NULL;
}

int kopt_inject_avail_load(const char *dir, const char *key,
			   unsigned char **img, size_t *n)
{
	char *path = path_of(dir, key, ""), *end;
	unsigned char *all = NULL;
	size_t len = 0, klen = strlen(key), head = strlen(MAGIC), at;
	unsigned long long size;
	struct stat st;
	int fd, ret = -1;

	if (!path)
		return -1;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	free(path);
	if (fd < 0)
		return -1;
	/* this user's own file, written within the age limit */
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_uid != getuid() ||
	    (st.st_mode & 022) ||
	    difftime(time(NULL), st.st_mtime) > KOPT_INJECT_AVAIL_MAX_AGE ||
	    difftime(time(NULL), st.st_mtime) < -60)
		goto done;
	all = read_all(fd, KOPT_INJECT_AVAIL_MAX_BYTES + head + klen + 64,
		       &len);
	if (!all || len < head + klen + 2 || memcmp(all, MAGIC, head) ||
	    memcmp(all + head, key, klen) || all[head + klen] != '\n')
		goto done;
	at = head + klen + 1;
	/* the size: digits and a newline, within the file */
	if (at >= len || all[at] < '0' || all[at] > '9')
		goto done;
	errno = 0;
	size = strtoull((const char *)all + at, &end, 10);
	if (errno || (unsigned char *)end >= all + len || *end != '\n' ||
	    !size || size > KOPT_INJECT_AVAIL_MAX_BYTES)
		goto done;
	at = (size_t)((unsigned char *)end - all) + 1;
	if (len - at != size)
		goto done;
	*img = malloc(size);
	if (!*img)
		goto done;
	memcpy(*img, all + at, size);
	*n = size;
	ret = 0;
done:
	free(all);
	close(fd);
	return ret;
}

static int write_all(int fd, const void *p, size_t n)
{
	const char *c = p;

	while (n) {
		ssize_t w = write(fd, c, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		c += w;
		n -= (size_t)w;
	}
	return 0;
}

/* mkdir -p, each directory made private to this user */
static void make_dirs(const char *dir)
{
	char *d = strdup(dir);

	for (char *p = d ? d + 1 : NULL; p && *p; p++)
		if (*p == '/') {
			*p = '\0';
			mkdir(d, 0700);
			*p = '/';
		}
	if (d)
		mkdir(d, 0700);
	free(d);
}

int kopt_inject_avail_store(const char *dir, const char *key,
			    const unsigned char *img, size_t n)
{
	char suffix[48], size[32], *path = path_of(dir, key, ""), *tmp;
	int fd, bad, ret = -1;

	/* a name of this process's own: runs side by side do not mix */
	snprintf(suffix, sizeof(suffix), ".%ld.tmp", (long)getpid());
	tmp = path_of(dir, key, suffix);
	if (!path || !tmp || !n || n > KOPT_INJECT_AVAIL_MAX_BYTES ||
	    strchr(key, '\n'))
		goto done;
	make_dirs(dir);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW,
		  0600);
	if (fd < 0)
		goto done;
	snprintf(size, sizeof(size), "%zu\n", n);
	bad = write_all(fd, MAGIC, strlen(MAGIC)) ||
	      write_all(fd, key, strlen(key)) || write_all(fd, "\n", 1) ||
	      write_all(fd, size, strlen(size)) || write_all(fd, img, n);
	if (close(fd))
		bad = 1;
	if (bad || rename(tmp, path)) {
		unlink(tmp);
		goto done;
	}
	ret = 0;
done:
	free(path);
	free(tmp);
	return ret;
}

void kopt_inject_avail_drop(const char *dir, const char *key)
{
	char *path = path_of(dir, key, "");

	if (path)
		unlink(path);
	free(path);
}
