#include "tunecache.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <git2.h>

#include "cache.h"
#include "error.h"
#include "lockfile.h"
#include "banned.h"

#define NFIELDS 14
#define COLUMNS "# device\tuuid\tb\ts\tt\ttree\tbuild\tconfig\tstatus\tus" \
	"\tspread_pct\trun_s\tdate"

static int cmp_str(const char *a, const char *b)
{
	return strcmp(a ? a : "", b ? b : "");
}

static int cmp_key(const struct kopt_tunecache_line *a,
		   const struct kopt_tunecache_line *b)
{
	int c;

	if ((c = cmp_str(a->device, b->device)) ||
	    (c = cmp_str(a->uuid, b->uuid)))
		return c;
	if (a->b != b->b)
		return a->b < b->b ? -1 : 1;
	if (a->s != b->s)
		return a->s < b->s ? -1 : 1;
	if (a->t != b->t)
		return a->t < b->t ? -1 : 1;
	if ((c = cmp_str(a->tree, b->tree)) ||
	    (c = cmp_str(a->build, b->build)))
		return c;
	return cmp_str(a->config, b->config);
}

static void line_release(struct kopt_tunecache_line *l)
{
	free(l->device);
	free(l->uuid);
	free(l->tree);
	free(l->build);
	free(l->config);
	free(l->status);
	free(l->date);
	memset(l, 0, sizeof(*l));
}

static char *dup_or_null(const char *s)
{
	return s ? kopt_strdup(s) : NULL;
}

static void line_copy(struct kopt_tunecache_line *dst,
		      const struct kopt_tunecache_line *src)
{
	*dst = *src;
	dst->device = dup_or_null(src->device);
	dst->uuid = dup_or_null(src->uuid);
	dst->tree = dup_or_null(src->tree);
	dst->build = dup_or_null(src->build);
	dst->config = dup_or_null(src->config);
	dst->status = dup_or_null(src->status);
	dst->date = dup_or_null(src->date);
}

/* Binary search: the position of `key`, or where it would go (*found 0). */
static size_t search(const struct kopt_tunecache *c,
		     const struct kopt_tunecache_line *key, int *found)
{
	size_t lo = 0, hi = c->nr;

	*found = 0;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int r = cmp_key(&c->lines[mid], key);
		if (!r) {
			*found = 1;
			return mid;
		}
		if (r < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

void kopt_tunecache_put(struct kopt_tunecache *c,
			const struct kopt_tunecache_line *l)
{
	int found;
	size_t at = search(c, l, &found);

	if (found) {
		line_release(&c->lines[at]);
	} else {
		KOPT_ALLOC_GROW(c->lines, c->nr + 1, c->alloc);
		memmove(c->lines + at + 1, c->lines + at,
			(c->nr - at) * sizeof(*c->lines));
		c->nr++;
	}
	line_copy(&c->lines[at], l);
}

const struct kopt_tunecache_line *
kopt_tunecache_find(const struct kopt_tunecache *c, const char *device,
		    const char *uuid, long b, long s, long t, const char *tree,
		    const char *build, const char *config)
{
	struct kopt_tunecache_line key = {
		(char *)device, (char *)uuid, b, s, t, (char *)tree,
		(char *)build, (char *)config, NULL, 0, 0, 0, NULL
	};
	int found;
	size_t at = search(c, &key, &found);

	return found ? &c->lines[at] : NULL;
}

const struct kopt_tunecache_line *
kopt_tunecache_find_model(const struct kopt_tunecache *c, const char *device,
			  long b, long s, long t, const char *tree,
			  const char *build, const char *config)
{
	size_t i;

	for (i = 0; i < c->nr; i++) {
		const struct kopt_tunecache_line *l = &c->lines[i];
		if (!cmp_str(l->device, device) && l->b == b && l->s == s &&
		    l->t == t && !cmp_str(l->tree, tree) &&
		    !cmp_str(l->build, build) && !cmp_str(l->config, config))
			return l;
	}
	return NULL;
}

static int parse_long_field(const char *s, long *out)
{
	char *end;

	if (!s || !*s)
		return -1;
	errno = 0;
	*out = strtol(s, &end, 10);
	return errno || *end || *out <= 0;
}

static int parse_num_field(const char *s, double *out)
{
	char *end;

	if (!s) {
		*out = NAN;
		return 0;
	}
	*out = strtod(s, &end);
	return end == s || *end || !isfinite(*out) || *out < 0;
}

static int is_hex(const char *s, size_t n)
{
	size_t i;

	if (!s || strlen(s) != n)
		return 0;
	for (i = 0; i < n; i++)
		if (!strchr("0123456789abcdef", s[i]))
			return 0;
	return 1;
}

static int valid_status(const char *s)
{
	static const char *const ok[] = {
		"ok", "failed", "crashed", "hung", "build-failed", "no-time"
	};
	size_t i;

	for (i = 0; s && i < KOPT_ARRAY_SIZE(ok); i++)
		if (!strcmp(s, ok[i]))
			return 1;
	return 0;
}

static int bad_line(const char *label, int line, const char *what)
{
	kopt_error("%s:%d: %s", label, line, what);
	return KOPT_EINVALID;
}

int kopt_tunecache_parse(struct kopt_tunecache *out, const char *text,
			 size_t len, const char *label)
{
	char *copy = kopt_malloc(len + 1);
	size_t pos = 0;
	int line = 0, ret = 0;

	memcpy(copy, text, len);
	copy[len] = '\0';
	if (memchr(copy, '\0', len)) {
		free(copy);
		return bad_line(label, 1, "not a text file");
	}
	while (!ret) {
		char *f[NFIELDS + 1];
		struct kopt_tunecache_line l;
		size_t start = pos;
		int n;

		if (pos >= len)
			break;
		line++;
		if (copy[pos] == '#') {
			char *eol = memchr(copy + pos, '\n', len - pos);
			size_t end = eol ? (size_t)(eol - copy) : len;
			if (line == 1 && (end - pos != strlen(KOPT_TUNECACHE_HEADER) ||
					  memcmp(copy + pos, KOPT_TUNECACHE_HEADER,
						 end - pos)))
				ret = bad_line(label, line, "not a tuning cache "
					       "of this format (expected '"
					       KOPT_TUNECACHE_HEADER "')");
			pos = end + 1;
			continue;
		}
		if (line == 1) {
			ret = bad_line(label, line, "not a tuning cache (expected "
				       "'" KOPT_TUNECACHE_HEADER "')");
			break;
		}
		if (copy[pos] == '\n') {
			ret = bad_line(label, line, "empty line");
			break;
		}
		n = kopt_cache_split(copy, len, &pos, f, NFIELDS + 1);
		(void)start;
		if (n != NFIELDS - 1) {
			kopt_error("%s:%d: %d fields, expected %d", label, line,
				   n, NFIELDS - 1);
			ret = KOPT_EINVALID;
			break;
		}
		memset(&l, 0, sizeof(l));
		l.device = f[0];
		l.uuid = f[1];
		l.tree = f[5];
		l.build = f[6];
		l.config = f[7];
		l.status = f[8];
		l.date = f[12];
		if (!l.device || !*l.device || !l.uuid || !*l.uuid ||
		    !l.config || !*l.config)
			ret = bad_line(label, line, "no device, uuid or "
				       "configuration");
		else if (parse_long_field(f[2], &l.b) ||
			 parse_long_field(f[3], &l.s) ||
			 parse_long_field(f[4], &l.t))
			ret = bad_line(label, line, "b, s and t must be positive "
				       "integers");
		else if (!is_hex(l.tree, 40) && !is_hex(l.tree, 64))
			ret = bad_line(label, line, "bad source tree id");
		else if (!is_hex(l.build, 12))
			ret = bad_line(label, line, "bad build key (expected 12 "
				       "hex digits)");
		else if (!valid_status(l.status))
			ret = bad_line(label, line, "bad status (expected ok, "
				       "failed, crashed, hung, build-failed or "
				       "no-time)");
		else if (parse_num_field(f[9], &l.us) ||
			 parse_num_field(f[10], &l.spread_pct) ||
			 parse_num_field(f[11], &l.run_s))
			ret = bad_line(label, line, "bad number");
		else if (!strcmp(l.status, "ok") && isnan(l.us))
			ret = bad_line(label, line, "status ok without a time");
		if (!ret)
			kopt_tunecache_put(out, &l);
	}
	free(copy);
	if (ret)
		kopt_tunecache_release(out);
	return ret;
}

int kopt_tunecache_read(struct kopt_tunecache *out, const char *path,
			const char *label)
{
	struct kopt_buf text = KOPT_BUF_INIT;
	int ret;

	ret = kopt_read_file(&text, path, label);
	if (ret)
		return ret == KOPT_ENOTFOUND ? 0 : ret;
	ret = kopt_tunecache_parse(out, text.buf, text.len, label);
	kopt_buf_release(&text);
	return ret;
}

static void add_num(struct kopt_buf *out, double v, const char *fmt)
{
	kopt_buf_addch(out, '\t');
	if (isnan(v))
		kopt_buf_addch(out, '-');
	else
		kopt_buf_addf(out, fmt, v);
}

void kopt_tunecache_format(struct kopt_buf *out, const struct kopt_tunecache *c)
{
	size_t i;

	kopt_buf_addstr(out, KOPT_TUNECACHE_HEADER "\n" COLUMNS "\n");
	for (i = 0; i < c->nr; i++) {
		const struct kopt_tunecache_line *l = &c->lines[i];
		size_t start = out->len;
		kopt_cache_add_str(out, l->device);
		kopt_cache_add_str(out, l->uuid);
		kopt_buf_addf(out, "\t%ld\t%ld\t%ld", l->b, l->s, l->t);
		kopt_cache_add_str(out, l->tree);
		kopt_cache_add_str(out, l->build);
		kopt_cache_add_str(out, l->config);
		kopt_cache_add_str(out, l->status);
		add_num(out, l->us, "%.3f");
		add_num(out, l->spread_pct, "%.2f");
		add_num(out, l->run_s, "%.2f");
		kopt_cache_add_str(out, l->date);
		(void)start;
		kopt_buf_addch(out, '\n');
	}
}

int kopt_tunecache_write(const struct kopt_tunecache *c, const char *path)
{
	struct kopt_buf text = KOPT_BUF_INIT;
	int ret;

	kopt_tunecache_format(&text, c);
	ret = kopt_write_file_atomic(path, text.buf, text.len, 0644);
	kopt_buf_release(&text);
	return ret;
}

void kopt_tunecache_release(struct kopt_tunecache *c)
{
	size_t i;

	for (i = 0; i < c->nr; i++)
		line_release(&c->lines[i]);
	free(c->lines);
	memset(c, 0, sizeof(*c));
}

void kopt_tunecache_build_key(char out[13], const char *build, const char *run,
			      const char *time_report)
{
	struct kopt_buf text = KOPT_BUF_INIT;
	git_oid oid;
	char hex[GIT_OID_HEXSZ + 1];

	kopt_buf_addf(&text, "build %s\nrun %s\ntime %s\n", build ? build : "",
		      run ? run : "", time_report ? time_report : "");
	git_odb_hash(&oid, text.buf, text.len, GIT_OBJECT_BLOB);
	git_oid_tostr(hex, sizeof(hex), &oid);
	memcpy(out, hex, 12);
	out[12] = '\0';
	kopt_buf_release(&text);
}
