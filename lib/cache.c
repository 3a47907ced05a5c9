#include "cache.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

/* SHA1_Init() and the rest, deprecated since OpenSSL 3.0, not removed */
#define OPENSSL_SUPPRESS_DEPRECATED
#include <openssl/sha.h>

#include "lockfile.h"
#include "version.h"
#include "banned.h"

/*
 * 3: one file per name, keyed by an object id; 4: with a checksum of
 * the data, so that an entry is written without fsync()
 */
#define HEADER "git-kopt cache 4 " KOPT_VERSION "\n"
#define PACK_HEADER "git-kopt cache pack 1 " KOPT_VERSION "\n"
#define PACK_NAME ".pack"	/* no entry's name begins with '.' */

/* An entry of the pack: pointers into its text. */
struct pack_entry {
	const char *name;	/* NUL-terminated in the text */
	const char *hex;	/* GIT_OID_HEXSZ digits */
	const char *data;
	size_t len;
	uint64_t sum;
};

struct kopt_cache_pack {
	struct kopt_buf text;
	struct pack_entry *e;	/* sorted by name */
	size_t nr;
};

struct kopt_cache_held {
	char *name;
	git_oid key;
	char *data;
	size_t len;
};

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

char *kopt_cache_dir(git_repository *repo, const char *name)
{
	const char *nc = getenv("KOPT_NO_CACHE");

	if (!repo || (nc && *nc && strcmp(nc, "0")))
		return NULL;
	return kopt_xstrfmt("%skopt/%s/", git_repository_path(repo), name);
}

void kopt_cache_open(struct kopt_cache *c, git_repository *repo,
		     const char *name)
{
	struct kopt_cache init = KOPT_CACHE_INIT;

	*c = init;
	c->dir = kopt_cache_dir(repo, name);
}

/*
 * git's blob id of the inputs, taken with OpenSSL's SHA-1 (SHA-NI or
 * its vector code where the processor has them): libgit2's is SHA-1DC,
 * which also looks for the marks of a collision attack, at ten times
 * the cost (a sixth of a warm analyze's instructions went there).  The
 * id is the one git gives the same bytes, which kopt_analysis_key()
 * relies on: a file whose bytes are those of the index keys as the
 * index's id.  A key only ever names a cache entry of this repository.
 * OpenSSL's own SHA-1 functions, not its EVP interface, whose first use
 * loads its providers and configuration (8 million instructions).
 */
void kopt_cache_key(git_oid *out, const struct kopt_buf *inputs)
{
	SHA_CTX c;
	char head[40];
	int n = snprintf(head, sizeof(head), "blob %zu", inputs->len);

	if (!SHA1_Init(&c) || !SHA1_Update(&c, head, (size_t)n + 1) ||
	    !SHA1_Update(&c, inputs->buf, inputs->len) ||
	    !SHA1_Final(out->id, &c))
		/* cannot happen; a zero key matches nothing put */
		memset(out, 0, sizeof(*out));
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

/*
 * "<length>\n<checksum>\n" at p (within end): the length and checksum,
 * and where the bytes begin; NULL when it does not parse.
 */
static const char *parse_len_sum(const char *p, const char *end,
				 unsigned long long *len,
				 unsigned long long *sum)
{
	char *q, *r;

	if (p >= end || *p < '0' || *p > '9')
		return NULL;
	errno = 0;
	*len = strtoull(p, &q, 10);
	if (errno || q >= end || *q != '\n' || end - q < 18 || q[17] != '\n')
		return NULL;
	*sum = strtoull(q + 1, &r, 16);
	if (r != q + 17)
		return NULL;
	return q + 18;
}

static int cmp_entry(const void *a, const void *b)
{
	return strcmp(((const struct pack_entry *)a)->name,
		      ((const struct pack_entry *)b)->name);
}

static void pack_free(struct kopt_cache_pack *pk)
{
	if (!pk)
		return;
	kopt_buf_release(&pk->text);
	free(pk->e);
	free(pk);
}

/*
 * The pack read and indexed; NULL when there is none or it does not
 * parse (a damaged pack is no pack: the next flush writes a new one).
 */
static struct kopt_cache_pack *pack_read(const char *dir)
{
	struct kopt_cache_pack *pk = kopt_calloc(1, sizeof(*pk));
	size_t hl = strlen(PACK_HEADER), alloc = 0;
	char *file = kopt_xstrfmt("%s" PACK_NAME, dir), *p, *end;

	if (kopt_buf_read_file(&pk->text, file) || pk->text.len < hl ||
	    memcmp(pk->text.buf, PACK_HEADER, hl))
		goto bad;
	p = pk->text.buf + hl;
	end = pk->text.buf + pk->text.len;
	while (p < end) {
		struct pack_entry e;
		unsigned long long len, sum;
		char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *data;

		if (!nl || nl == p)
			goto bad;
		*nl = '\0';
		e.name = p;
		if (!name_ok(e.name) || end - (nl + 1) < GIT_OID_HEXSZ + 1 ||
		    nl[1 + GIT_OID_HEXSZ] != '\n')
			goto bad;
		e.hex = nl + 1;
		data = parse_len_sum(nl + 2 + GIT_OID_HEXSZ, end, &len, &sum);
		if (!data || len > (unsigned long long)(end - data))
			goto bad;
		e.data = data;
		e.len = (size_t)len;
		e.sum = sum;
		KOPT_ALLOC_GROW(pk->e, pk->nr + 1, alloc);
		pk->e[pk->nr++] = e;
		p = (char *)data + len;
	}
	free(file);
	qsort(pk->e, pk->nr, sizeof(*pk->e), cmp_entry);
	return pk;
bad:
	free(file);
	pack_free(pk);
	return NULL;
}

/* The pack, read on first use (under c->lock). */
static struct kopt_cache_pack *pack_of(struct kopt_cache *c)
{
	struct kopt_cache_pack *pk;

	pthread_mutex_lock(&c->lock);
	if (!c->pack_read) {
		c->pack = pack_read(c->dir);
		c->pack_read = 1;
	}
	pk = c->pack;
	pthread_mutex_unlock(&c->lock);
	return pk;
}

static const struct pack_entry *pack_find(const struct kopt_cache_pack *pk,
					  const char *name)
{
	struct pack_entry k;

	if (!pk || !pk->nr)
		return NULL;
	k.name = name;
	return bsearch(&k, pk->e, pk->nr, sizeof(*pk->e), cmp_entry);
}

int kopt_cache_get(struct kopt_cache *c, const char *name,
		   const git_oid *key, struct kopt_buf *out)
{
	char hex[GIT_OID_HEXSZ + 1], *file;
	const struct pack_entry *pe;
	const char *p, *end, *data;
	size_t hl = strlen(HEADER);
	unsigned long long len, sum;
	int hit = 0;

	kopt_buf_reset(out);
	if (!c->dir || !name_ok(name) || zero_key(key))
		return 0;
	git_oid_tostr(hex, sizeof(hex), key);
	pe = pack_find(pack_of(c), name);
	if (pe && !memcmp(pe->hex, hex, GIT_OID_HEXSZ) &&
	    pe->sum == checksum(pe->data, pe->len)) {
		kopt_buf_add(out, pe->data, pe->len);
		return 1;
	}
	file = kopt_xstrfmt("%s%s", c->dir, name);
	if (kopt_buf_read_file(out, file))
		goto done;
	p = out->buf;
	end = out->buf + out->len;
	if (out->len < hl + GIT_OID_HEXSZ + 3 || memcmp(p, HEADER, hl))
		goto done;
	p += hl;
	if (memcmp(p, hex, GIT_OID_HEXSZ) || p[GIT_OID_HEXSZ] != '\n')
		goto done;
	data = parse_len_sum(p + GIT_OID_HEXSZ + 1, end, &len, &sum);
	if (!data || len != (unsigned long long)(end - data) ||
	    sum != checksum(data, (size_t)len))
		goto done;
	memmove(out->buf, data, (size_t)len);
	kopt_buf_setlen(out, (size_t)len);
	hit = 1;
done:
	if (!hit)
		kopt_buf_reset(out);
	free(file);
	return hit;
}

int kopt_cache_has(struct kopt_cache *c, const char *name)
{
	struct stat st;
	char *file;
	int ret;

	if (!c->dir || !name_ok(name))
		return 0;
	if (pack_find(pack_of(c), name))
		return 1;
	file = kopt_xstrfmt("%s%s", c->dir, name);
	ret = !lstat(file, &st);
	free(file);
	return ret;
}

/* Write `file` of the cache as a whole; 0, or -1 when it was not. */
static int write_whole(struct kopt_cache *c, const char *file,
		       const struct kopt_buf *text)
{
	struct kopt_lock lk = KOPT_LOCK_INIT;
	char *lock = kopt_xstrfmt("%s.lock", file);
	int ret = 0;

	/* checked whole on every read: the disk need not be waited for */
	lk.no_fsync = 1;
	/* a cache is not the user's file: quietly give up when locked */
	if (!access(lock, F_OK) ||
	    (!__atomic_load_n(&c->dir_made, __ATOMIC_RELAXED) &&
	     kopt_mkdir_parents(file)) ||
	    kopt_lock_acquire(&lk, file) ||
	    kopt_lock_write(&lk, text->buf, text->len) ||
	    kopt_lock_commit(&lk))
		ret = -1;
	kopt_lock_rollback(&lk);
	/* the directory exists: not made again for each name (unless lost) */
	__atomic_store_n(&c->dir_made, !ret, __ATOMIC_RELAXED);
	free(lock);
	return ret;
}

/* An entry's key, length and checksum lines, then its bytes. */
static void add_entry(struct kopt_buf *out, const char *hex, const char *data,
		      size_t len, uint64_t sum)
{
	kopt_buf_addf(out, "%.*s\n%zu\n%016" PRIx64 "\n", GIT_OID_HEXSZ,
		      hex, len, sum);
	kopt_buf_add(out, data, len);
}

static int put_file(struct kopt_cache *c, const char *name,
		    const git_oid *key, const char *data, size_t len)
{
	struct kopt_buf out = KOPT_BUF_INIT;
	char hex[GIT_OID_HEXSZ + 1], *file;
	int ret;

	file = kopt_xstrfmt("%s%s", c->dir, name);
	git_oid_tostr(hex, sizeof(hex), key);
	kopt_buf_addstr(&out, HEADER);
	add_entry(&out, hex, data, len, checksum(data, len));
	ret = write_whole(c, file, &out);
	free(file);
	kopt_buf_release(&out);
	return ret;
}

int kopt_cache_put(struct kopt_cache *c, const char *name,
		   const git_oid *key, const char *data, size_t len)
{
	struct kopt_cache_held *h;

	if (!c->dir || !name_ok(name) || zero_key(key))
		return -1;
	pthread_mutex_lock(&c->lock);
	if (!c->holding) {
		pthread_mutex_unlock(&c->lock);
		return put_file(c, name, key, data, len);
	}
	KOPT_ALLOC_GROW(c->held, c->held_nr + 1, c->held_alloc);
	h = &c->held[c->held_nr++];
	h->name = kopt_strdup(name);
	h->key = *key;
	h->data = kopt_malloc(len ? len : 1);
	memcpy(h->data, data, len);
	h->len = len;
	pthread_mutex_unlock(&c->lock);
	return 0;
}

void kopt_cache_hold(struct kopt_cache *c)
{
	pthread_mutex_lock(&c->lock);
	c->holding = c->dir != NULL;
	pthread_mutex_unlock(&c->lock);
}

static int cmp_held(const void *a, const void *b)
{
	return strcmp(((const struct kopt_cache_held *)a)->name,
		      ((const struct kopt_cache_held *)b)->name);
}

static void pack_add(struct kopt_buf *out, const char *name, const char *hex,
		     const char *data, size_t len, uint64_t sum)
{
	kopt_buf_addf(out, "%s\n", name);
	add_entry(out, hex, data, len, sum);
}

/*
 * A new pack: the held entries and the old pack's entries of other
 * names, in name order; the pack is read again at the next lookup.
 */
static void pack_write(struct kopt_cache *c)
{
	const struct kopt_cache_pack *old = pack_of(c);
	struct kopt_buf out = KOPT_BUF_INIT;
	char hex[GIT_OID_HEXSZ + 1], *file;
	size_t i = 0, j = 0;

	qsort(c->held, c->held_nr, sizeof(*c->held), cmp_held);
	kopt_buf_addstr(&out, PACK_HEADER);
	while (i < c->held_nr || (old && j < old->nr)) {
		int cmp = i >= c->held_nr ? 1 : !old || j >= old->nr ? -1 :
			  strcmp(c->held[i].name, old->e[j].name);
		if (cmp > 0) {
			const struct pack_entry *e = &old->e[j++];
			pack_add(&out, e->name, e->hex, e->data, e->len,
				 e->sum);
			continue;
		}
		if (cmp == 0)
			j++;
		/* a name put twice in one hold: one of them (each is
		   right for its key) */
		while (i + 1 < c->held_nr &&
		       !strcmp(c->held[i].name, c->held[i + 1].name))
			i++;
		git_oid_tostr(hex, sizeof(hex), &c->held[i].key);
		pack_add(&out, c->held[i].name, hex, c->held[i].data,
			 c->held[i].len,
			 checksum(c->held[i].data, c->held[i].len));
		i++;
	}
	file = kopt_xstrfmt("%s" PACK_NAME, c->dir);
	write_whole(c, file, &out);
	free(file);
	kopt_buf_release(&out);
	pthread_mutex_lock(&c->lock);
	pack_free(c->pack);
	c->pack = NULL;
	c->pack_read = 0;
	pthread_mutex_unlock(&c->lock);
}

void kopt_cache_flush(struct kopt_cache *c)
{
	size_t i;

	pthread_mutex_lock(&c->lock);
	c->holding = 0;
	pthread_mutex_unlock(&c->lock);
	if (c->held_nr >= KOPT_CACHE_PACK_MIN)
		pack_write(c);
	else
		for (i = 0; i < c->held_nr; i++)
			put_file(c, c->held[i].name, &c->held[i].key,
				 c->held[i].data, c->held[i].len);
	for (i = 0; i < c->held_nr; i++) {
		free(c->held[i].name);
		free(c->held[i].data);
	}
	free(c->held);
	c->held = NULL;
	c->held_nr = c->held_alloc = 0;
}

void kopt_cache_release(struct kopt_cache *c)
{
	kopt_cache_flush(c);
	pack_free(c->pack);
	free(c->dir);
	pthread_mutex_destroy(&c->lock);
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

/* What ends the plain run of a field: a tab, a newline, an escape. */
static const unsigned char split_stop[256] = {
	['\t'] = 1, ['\n'] = 1, ['\\'] = 1,
};

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
		} else {
			/* up to an escape the bytes stay where they are */
			while (p < end && !split_stop[(unsigned char)*p])
				p++;
			w = p;
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
