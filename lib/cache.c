#include "cache.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "lockfile.h"
#include "version.h"
#include "banned.h"

/*
 * 3: one file per name, keyed by an object id; 4: with a checksum of
 * the data, so that an entry is written without fsync()
 */
#define HEADER "git-kopt cache 4 " KOPT_VERSION "\n"

/* FNV-1a, 64 bits: catches a torn or zeroed entry, at a byte a step. */
static uint64_t checksum(const char *data, size_t len)
{
	const uint64_t prime = 0x100000001b3ULL;
	const unsigned char *p = (const unsigned char *)data, *end = p + len;
	uint64_t h = 0xcbf29ce484222325ULL;

	/* four bytes a turn of the loop: the same steps, fewer branches */
	for (; end - p >= 4; p += 4) {
		h = (h ^ p[0]) * prime;
		h = (h ^ p[1]) * prime;
		h = (h ^ p[2]) * prime;
		h = (h ^ p[3]) * prime;
	}
	for (; p < end; p++)
		h = (h ^ *p) * prime;
	return h;
}

void kopt_cache_open(struct kopt_cache *c, git_repository *repo,
		     const char *name)
{
	const char *nc = getenv("KOPT_NO_CACHE");

	memset(c, 0, sizeof(*c));
	if (!repo || (nc && *nc && strcmp(nc, "0")))
		return;
	c->dir = kopt_xstrfmt("%skopt/%s/", git_repository_path(repo), name);
}

void kopt_cache_key(git_oid *out, const struct kopt_buf *inputs)
{
	if (git_odb_hash(out, inputs->buf, inputs->len, GIT_OBJECT_BLOB) < 0) {
		/* cannot happen for a blob; a zero key matches nothing put */
		git_error_clear();
		memset(out, 0, sizeof(*out));
	}
}

static int name_ok(const char *name)
{
	const char *p;

	if (!*name || *name == '.' || *name == '-')
		return 0;
	for (p = name; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		      (*p >= '0' && *p <= '9') || *p == '.' || *p == '_' ||
		      *p == '-'))
			return 0;
	return 1;
}

static int zero_key(const git_oid *key)
{
	static const git_oid zero;

	return !memcmp(key, &zero, sizeof(zero));
}

int kopt_cache_get(struct kopt_cache *c, const char *name,
		   const git_oid *key, struct kopt_buf *out)
{
	char hex[GIT_OID_HEXSZ + 1], *file, *p, *end, *q;
	size_t hl = strlen(HEADER);
	unsigned long long len, sum;
	int hit = 0;

	kopt_buf_reset(out);
	if (!c->dir || !name_ok(name) || zero_key(key))
		return 0;
	file = kopt_xstrfmt("%s%s", c->dir, name);
	if (kopt_buf_read_file(out, file))
		goto done;
	git_oid_tostr(hex, sizeof(hex), key);
	p = out->buf;
	end = out->buf + out->len;
	if (out->len < hl + GIT_OID_HEXSZ + 3 || memcmp(p, HEADER, hl))
		goto done;
	p += hl;
	if (memcmp(p, hex, GIT_OID_HEXSZ) || p[GIT_OID_HEXSZ] != '\n')
		goto done;
	p += GIT_OID_HEXSZ + 1;
	if (*p < '0' || *p > '9')
		goto done;
	errno = 0;
	len = strtoull(p, &q, 10);
	if (errno || *q != '\n' || (size_t)(end - q) < 18 || q[17] != '\n')
		goto done;
	sum = strtoull(q + 1, &p, 16);
	q += 18;
	if (p != q - 1 || len != (unsigned long long)(end - q) ||
	    sum != checksum(q, (size_t)len))
		goto done;
	memmove(out->buf, q, (size_t)len);
	kopt_buf_setlen(out, (size_t)len);
	hit = 1;
done:
	if (!hit)
		kopt_buf_reset(out);
	free(file);
	return hit;
}

int kopt_cache_has(const struct kopt_cache *c, const char *name)
{
	struct stat st;
	char *file;
	int ret;

	if (!c->dir || !name_ok(name))
		return 0;
	file = kopt_xstrfmt("%s%s", c->dir, name);
	ret = !lstat(file, &st);
	free(file);
	return ret;
}

int kopt_cache_put(struct kopt_cache *c, const char *name,
		   const git_oid *key, const char *data, size_t len)
{
	struct kopt_buf out = KOPT_BUF_INIT;
	struct kopt_lock lk = KOPT_LOCK_INIT;
	char hex[GIT_OID_HEXSZ + 1], *file, *lock;
	int ret = 0;

	if (!c->dir || !name_ok(name) || zero_key(key))
		return -1;
	file = kopt_xstrfmt("%s%s", c->dir, name);
	lock = kopt_xstrfmt("%s.lock", file);
	git_oid_tostr(hex, sizeof(hex), key);
	kopt_buf_addf(&out, "%s%s\n%zu\n%016" PRIx64 "\n", HEADER, hex, len,
		      checksum(data, len));
	kopt_buf_add(&out, data, len);
	/* checked whole on every read: the disk need not be waited for */
	lk.no_fsync = 1;
	/* a cache is not the user's file: quietly give up when locked */
	if (!access(lock, F_OK) ||
	    (!__atomic_load_n(&c->dir_made, __ATOMIC_RELAXED) &&
	     kopt_mkdir_parents(file)) ||
	    kopt_lock_acquire(&lk, file) ||
	    kopt_lock_write(&lk, out.buf, out.len) ||
	    kopt_lock_commit(&lk))
		ret = -1;
	kopt_lock_rollback(&lk);
	/* the directory exists: not made again for each name (unless lost) */
	__atomic_store_n(&c->dir_made, !ret, __ATOMIC_RELAXED);
	free(lock);
	free(file);
	kopt_buf_release(&out);
	return ret;
}

void kopt_cache_release(struct kopt_cache *c)
{
	free(c->dir);
	memset(c, 0, sizeof(*c));
}

/* Room for n more bytes and the separator; where they go. */
static char *field_at(struct kopt_buf *out, size_t n)
{
	char *p;

	kopt_buf_grow(out, n + 1);
	p = out->buf + out->len;
	if (out->len && p[-1] != '\n')
		*p++ = '\t';
	return p;
}

static void field_end(struct kopt_buf *out, char *p)
{
	out->len = (size_t)(p - out->buf);
	out->buf[out->len] = '\0';
}

void kopt_cache_add_str(struct kopt_buf *out, const char *s)
{
	size_t n;
	char *p;

	if (!s) {
		p = field_at(out, 1);
		*p++ = '-';
		field_end(out, p);
		return;
	}
	/* each byte takes at most two */
	n = strlen(s);
	p = field_at(out, 2 * n + 1);
	/*
	 * "-" alone stands for NULL, and a line that begins with '#' is a
	 * comment in the files that allow them (lib/tunecache)
	 */
	if (*s == '-' || (*s == '#' && (p == out->buf || p[-1] == '\n')))
		*p++ = '\\';
	for (; *s; s++) {
		switch (*s) {
		case '\\': *p++ = '\\'; *p++ = '\\'; break;
		case '\t': *p++ = '\\'; *p++ = 't'; break;
		case '\n': *p++ = '\\'; *p++ = 'n'; break;
		case '\r': *p++ = '\\'; *p++ = 'r'; break;
		default: *p++ = *s; break;
		}
	}
	field_end(out, p);
}

/* The two hexadecimal digits of each byte, made once. */
static char hex_pairs[512];
static pthread_once_t hex_pairs_once = PTHREAD_ONCE_INIT;

static void hex_pairs_make(void)
{
	static const char hex[] = "0123456789abcdef";
	int i;

	for (i = 0; i < 256; i++) {
		hex_pairs[2 * i] = hex[i >> 4];
		hex_pairs[2 * i + 1] = hex[i & 15];
	}
}

void kopt_cache_add_num(struct kopt_buf *out, double v)
{
	/* exact, and far cheaper both ways than "%.17g" */
	char *p = field_at(out, 16);
	uint64_t bits;
	int i;

	pthread_once(&hex_pairs_once, hex_pairs_make);
	if (isnan(v)) {
		*p++ = '-';
	} else {
		memcpy(&bits, &v, sizeof(bits));
		for (i = 14; i >= 0; i -= 2, bits >>= 8)
			memcpy(p + i, hex_pairs + 2 * (bits & 0xff), 2);
		p += 16;
	}
	field_end(out, p);
}

int kopt_cache_split(char *text, size_t len, size_t *pos, char **fields,
		     int max)
{
	char *p = text + *pos, *end = text + len, *w;
	int n = 0;

	if (p >= end)
		return -1;
	while (n < max) {
		char *f = p;
		int escaped_dash = 0;
		w = p;
		if (*p == '\\' && p + 1 < end && p[1] == '-') {
			escaped_dash = 1;
			p++;
		}
		while (p < end && *p != '\t' && *p != '\n') {
			if (*p == '\\' && p + 1 < end) {
				p++;
				*w++ = *p == 't' ? '\t' : *p == 'n' ? '\n' :
				       *p == 'r' ? '\r' : *p;
				p++;
			} else {
				*w++ = *p++;
			}
		}
		int eol = p >= end || *p == '\n';

		fields[n++] = (!escaped_dash && w == f + 1 && *f == '-') ?
			      NULL : f;
		/* the terminator is overwritten: w never passes p */
		*w = '\0';
		p++;
		if (eol) {
			*pos = (size_t)(p - text);
			return n;
		}
	}
	while (p < end && *p != '\n')
		p++;
	*pos = (size_t)(p - text) + (p < end);
	return n;
}

int kopt_cache_whole_ok(double v, double min, double max)
{
	/* NAN fails the range; within it, the cast is exact */
	return v >= min && v <= max && v == (double)(long)v;
}

int kopt_cache_whole(const char *field, double min, double max, long *out)
{
	double v = kopt_cache_num(field);

	if (!kopt_cache_whole_ok(v, min, max))
		return -1;
	*out = (long)v;
	return 0;
}

double kopt_cache_num(const char *field)
{
	uint64_t bits = 0;
	double v;
	int i;

	if (!field)
		return NAN;
	for (i = 0; i < 16; i++) {
		char c = field[i];
		int d = c >= '0' && c <= '9' ? c - '0' :
			c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
		if (d < 0)
			return NAN;     /* not written by kopt_cache_add_num() */
		bits = bits << 4 | (uint64_t)d;
	}
	if (field[16])
		return NAN;
	memcpy(&v, &bits, sizeof(v));
	return v;
}
