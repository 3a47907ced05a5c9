#include "cache.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "lockfile.h"
#include "version.h"
#include "banned.h"

static int by_path(const void *a, const void *b)
{
	return strcmp(((const struct kopt_cache_entry *)a)->path,
		      ((const struct kopt_cache_entry *)b)->path);
}

static const char *header(void)
{
	/* 2: numbers as the 16 hexadecimal digits of their bits */
	return "git-kopt cache 2 " KOPT_VERSION "\n";
}

/* Parse the file; on any damage, forget it all. */
static void load(struct kopt_cache *c)
{
	char *p, *end;
	size_t hl = strlen(header());

	if (kopt_buf_read_file(&c->text, c->file))
		return;
	if (c->text.len < hl || memcmp(c->text.buf, header(), hl))
		goto bad;
	p = c->text.buf + hl;
	end = c->text.buf + c->text.len;
	while (p < end) {
		struct kopt_cache_entry *e;
		char *tab = memchr(p, '\t', end - p), *q;
		long long v[7];
		int i;

		if (!tab)
			goto bad;
		*tab = '\0';
		q = tab + 1;
		for (i = 0; i < 7; i++) {
			errno = 0;
			v[i] = strtoll(q, &q, 10);
			if (errno || (*q != (i < 6 ? '\t' : '\n')))
				goto bad;
			q++;
		}
		if (v[6] < 0 || v[6] >= end - q || q[v[6]] != '\n')
			goto bad;
		KOPT_ALLOC_GROW(c->entries, c->nr + 1, c->alloc);
		e = &c->entries[c->nr++];
		memset(e, 0, sizeof(*e));
		e->path = p;
		memcpy(e->st, v, sizeof(e->st));
		e->data = q;
		e->len = (size_t)v[6];
		p = q + v[6] + 1;
		if (c->nr > 1 && strcmp(c->entries[c->nr - 2].path, e->path) >= 0)
			goto bad;
	}
	return;
bad:
	c->nr = 0;
	kopt_buf_release(&c->text);
}

void kopt_cache_open(struct kopt_cache *c, git_repository *repo,
		     const char *name)
{
	const char *nc = getenv("KOPT_NO_CACHE");

	memset(c, 0, sizeof(*c));
	kopt_buf_init(&c->text, 0);
	if (!repo || (nc && *nc && strcmp(nc, "0")))
		return;
	c->file = kopt_xstrfmt("%skopt/%s.cache", git_repository_path(repo),
			       name);
	c->top = git_repository_workdir(repo) ?
		 kopt_strdup(git_repository_workdir(repo)) : NULL;
	load(c);
}

static struct kopt_cache_entry *find(struct kopt_cache *c, const char *path)
{
	struct kopt_cache_entry key;

	if (!c->nr)
		return NULL;
	key.path = path;
	return bsearch(&key, c->entries, c->nr, sizeof(*c->entries), by_path);
}

static void stat_fields(long long out[6], const struct stat *st)
{
	out[0] = st->st_size;
	out[1] = st->st_mtim.tv_sec;
	out[2] = st->st_mtim.tv_nsec;
	out[3] = st->st_ctim.tv_sec;
	out[4] = st->st_ctim.tv_nsec;
	out[5] = st->st_ino;
}

int kopt_cache_get(struct kopt_cache *c, const char *path,
		   const struct stat *st, const char **data, size_t *len)
{
	struct kopt_cache_entry *e;
	long long now[6];

	if (!c->file || !(e = find(c, path)))
		return 0;
	stat_fields(now, st);
	if (memcmp(now, e->st, sizeof(now)))
		return 0;
	e->used = 1;
	*data = e->data;
	*len = e->len;
	return 1;
}

void kopt_cache_put(struct kopt_cache *c, const char *path,
		    const struct stat *st, const char *data, size_t len)
{
	struct kopt_cache_entry *e;
	time_t now = time(NULL);

	/* racy: changed in the last ticks, a same-size rewrite could hide */
	if (!c->file || st->st_mtim.tv_sec >= now - 1 ||
	    st->st_ctim.tv_sec >= now - 1)
		return;
	e = find(c, path);
	if (!e) {
		KOPT_ALLOC_GROW(c->entries, c->nr + 1, c->alloc);
		e = &c->entries[c->nr++];
		memset(e, 0, sizeof(*e));
		e->path = kopt_strdup(path);
		e->owned = 1;
		qsort(c->entries, c->nr, sizeof(*c->entries), by_path);
		e = find(c, path);
	} else if (e->owned) {
		free((char *)e->data);
	}
	if (!e->owned) {
		e->path = kopt_strdup(e->path);
		e->owned = 1;
	}
	e->data = kopt_strndup(data, len);
	e->len = len;
	stat_fields(e->st, st);
	e->used = 1;
	c->dirty = 1;
}

int kopt_cache_save(struct kopt_cache *c)
{
	struct kopt_buf out = KOPT_BUF_INIT;
	struct kopt_lock lk = KOPT_LOCK_INIT;
	char *lock;
	size_t i;
	int ret = 0;

	if (!c->file)
		return 0;
	if (!c->dirty)
		return 0;
	/* entries of files this run did not look at stay, unless deleted */
	for (i = 0; i < c->nr; i++) {
		struct kopt_cache_entry *e = &c->entries[i];
		struct stat st;
		char *full;
		if (e->used)
			continue;
		full = kopt_xstrfmt("%s%s", c->top ? c->top : "", e->path);
		e->used = !lstat(full, &st);
		free(full);
	}
	kopt_buf_addstr(&out, header());
	for (i = 0; i < c->nr; i++) {
		const struct kopt_cache_entry *e = &c->entries[i];
		if (!e->used)
			continue;
		kopt_buf_addf(&out, "%s\t%lld\t%lld\t%lld\t%lld\t%lld\t%lld\t"
			      "%zu\n", e->path, e->st[0], e->st[1], e->st[2],
			      e->st[3], e->st[4], e->st[5], e->len);
		kopt_buf_add(&out, e->data, e->len);
		kopt_buf_addch(&out, '\n');
	}
	/* a cache is not the user's file: quietly give up when locked */
	lock = kopt_xstrfmt("%s.lock", c->file);
	if (!access(lock, F_OK) || kopt_mkdir_parents(c->file) ||
	    kopt_lock_acquire(&lk, c->file) ||
	    kopt_lock_write(&lk, out.buf, out.len) ||
	    kopt_lock_commit(&lk))
		ret = -1;
	kopt_lock_rollback(&lk);
	free(lock);
	kopt_buf_release(&out);
	c->dirty = 0;
	return ret;
}

void kopt_cache_release(struct kopt_cache *c)
{
	size_t i;

	for (i = 0; i < c->nr; i++)
		if (c->entries[i].owned) {
			free((char *)c->entries[i].path);
			free((char *)c->entries[i].data);
		}
	free(c->entries);
	free(c->file);
	free(c->top);
	kopt_buf_release(&c->text);
	memset(c, 0, sizeof(*c));
	kopt_buf_init(&c->text, 0);
}

static void sep(struct kopt_buf *out)
{
	if (out->len && out->buf[out->len - 1] != '\n')
		kopt_buf_addch(out, '\t');
}

void kopt_cache_add_str(struct kopt_buf *out, const char *s)
{
	sep(out);
	if (!s) {
		kopt_buf_addch(out, '-');
		return;
	}
	if (*s == '-')
		kopt_buf_addch(out, '\\');
	for (; *s; s++) {
		if (*s == '\\')
			kopt_buf_addstr(out, "\\\\");
		else if (*s == '\t')
			kopt_buf_addstr(out, "\\t");
		else if (*s == '\n')
			kopt_buf_addstr(out, "\\n");
		else if (*s == '\r')
			kopt_buf_addstr(out, "\\r");
		else
			kopt_buf_addch(out, *s);
	}
}

void kopt_cache_add_num(struct kopt_buf *out, double v)
{
	sep(out);
	if (isnan(v))
		kopt_buf_addch(out, '-');
	else {
		/* exact, and far cheaper both ways than "%.17g" */
		static const char hex[] = "0123456789abcdef";
		char digits[16];
		uint64_t bits;
		int i;
		memcpy(&bits, &v, sizeof(bits));
		for (i = 15; i >= 0; i--, bits >>= 4)
			digits[i] = hex[bits & 15];
		kopt_buf_add(out, digits, sizeof(digits));
	}
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
