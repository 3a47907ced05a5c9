/*
 * The Implementation Summary contract: see summary.h.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "summary.h"
#include "banned.h"

enum part {
	P_VERSION,
	P_CHANGES,
	P_FILES,
	P_CORRECT,
	P_TRIALS,
	P_DEVLOG,
	P__NR
};

static const char *const part_names[P__NR] = {
	"New Version", "Changes Applied", "Files", "Correctness",
	"Trial Configurations Checked", "Devlog Entry Written",
};

struct part_text {
	int seen;
	int line;
	struct kopt_buf inline_text;    /* after the colon */
	struct kopt_strvec items;       /* list items and loose lines */
};

static int is_space(int c)
{
	return c == ' ' || c == '\t' || c == '\r';
}

static void trim(const char **s, size_t *n)
{
	while (*n && is_space((unsigned char)**s)) {
		(*s)++;
		(*n)--;
	}
	while (*n && is_space((unsigned char)(*s)[*n - 1]))
		(*n)--;
}

/* A heading's level and text, or 0. */
static int heading(const char *l, size_t n, const char **text, size_t *tn)
{
	size_t i = 0;
	int level = 0;

	while (i < n && i < 3 && l[i] == ' ')
		i++;
	while (i < n && l[i] == '#' && level < 7) {
		i++;
		level++;
	}
	if (!level || level > 6 || (i < n && !is_space((unsigned char)l[i])))
		return 0;
	*text = l + i;
	*tn = n - i;
	trim(text, tn);
	/* closing #s */
	while (*tn && (*text)[*tn - 1] == '#')
		(*tn)--;
	trim(text, tn);
	return level;
}

/* The part a heading opens, with what follows its name; -1 if none. */
static int part_of(const char *t, size_t n, const char **rest, size_t *rn)
{
	int p;

	/* "[New Version]: ..." or "**Files**:" happen too */
	while (n && (*t == '[' || *t == '*' || *t == '_')) {
		t++;
		n--;
	}
	for (p = 0; p < P__NR; p++) {
		size_t k = strlen(part_names[p]);
		const char *r;
		if (n < k || strncasecmp(t, part_names[p], k))
			continue;
		r = t + k;
		while (r < t + n && (*r == ']' || *r == '*' || *r == '_'))
			r++;
		if (r < t + n && *r != ':' && !is_space((unsigned char)*r))
			continue;
		if (r < t + n && *r == ':')
			r++;
		*rest = r;
		*rn = (size_t)(t + n - r);
		trim(rest, rn);
		return p;
	}
	return -1;
}

/* A list item's text, or NULL when the line is not one. */
static const char *list_item(const char *l, size_t n, size_t *in)
{
	size_t i = 0, d;

	while (i < n && is_space((unsigned char)l[i]))
		i++;
	if (i < n && (l[i] == '-' || l[i] == '*' || l[i] == '+') &&
	    (i + 1 == n || is_space((unsigned char)l[i + 1]))) {
		*in = n - i - 1;
		l += i + 1;
		trim(&l, in);
		return l;
	}
	for (d = i; d < n && d - i < 9 && isdigit((unsigned char)l[d]); d++)
		;
	if (d > i && d < n && (l[d] == '.' || l[d] == ')') &&
	    (d + 1 == n || is_space((unsigned char)l[d + 1]))) {
		*in = n - d - 1;
		l += d + 1;
		trim(&l, in);
		return l;
	}
	return NULL;
}

static int is_fence(const char *l, size_t n)
{
	size_t i = 0;

	while (i < n && i < 3 && l[i] == ' ')
		i++;
	return n - i >= 3 && (!strncmp(l + i, "```", 3) ||
			      !strncmp(l + i, "~~~", 3));
}

/* Control characters (a CR inside a line) become spaces. */
static void no_controls(char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			*s = ' ';
}

static void push_n(struct kopt_strvec *sv, const char *s, size_t n)
{
	char *c = kopt_strndup(s, n);

	no_controls(c);
	kopt_strvec_push(sv, c);
	free(c);
}

static void split_lines(const char *text, size_t len, struct part_text *parts)
{
	const char *p = text, *end = text + len;
	int cur = -1, started = 0, line = 0;

	while (p < end) {
		const char *eol = memchr(p, '\n', (size_t)(end - p));
		size_t n = eol ? (size_t)(eol - p) : (size_t)(end - p);
		const char *h = NULL, *rest = NULL, *item;
		size_t hn = 0, rn = 0, in = 0;
		int level, part;

		line++;
		level = heading(p, n, &h, &hn);
		part = level ? part_of(h, hn, &rest, &rn) : -1;
		if (part == P_VERSION && !started)
			started = 1;
		if (!started || is_fence(p, n)) {
			/* a preamble, or a fence around the summary */
		} else if (level) {
			cur = part;
			if (part >= 0 && !parts[part].seen++) {
				parts[part].line = line;
				kopt_buf_add(&parts[part].inline_text, rest, rn);
				no_controls(parts[part].inline_text.buf);
			}
		} else if (cur >= 0 && parts[cur].seen == 1) {
			item = list_item(p, n, &in);
			if (!item) {
				item = p;
				in = n;
				trim(&item, &in);
			}
			if (in)
				push_n(&parts[cur].items, item, in);
		}
		p = eol ? eol + 1 : end;
	}
}

/* Strip `[...]`, backticks, quotes and emphasis around a value. */
static void unwrap(const char **s, size_t *n)
{
	int again = 1;

	trim(s, n);
	while (again && *n >= 2) {
		char a = (*s)[0], z = (*s)[*n - 1];
		again = (a == '[' && z == ']') || (a == '`' && z == '`') ||
			(a == '"' && z == '"') || (a == '\'' && z == '\'') ||
			(a == '*' && z == '*') || (a == '_' && z == '_');
		if (again) {
			(*s)++;
			*n -= 2;
			trim(s, n);
		}
	}
}

/* Narrow `s`, `n` to their first word, unwrapped. */
static void first_word(const char **s, size_t *n)
{
	const char *end = *s;

	while (end < *s + *n && !is_space((unsigned char)*end))
		end++;
	*n = (size_t)(end - *s);
	unwrap(s, n);
}

/* The values of a part: its inline text (when not empty), then its items. */
static void values(const struct part_text *pt, struct kopt_strvec *out)
{
	size_t i;

	if (pt->inline_text.len)
		kopt_strvec_push(out, pt->inline_text.buf);
	for (i = 0; i < pt->items.nr; i++)
		kopt_strvec_push(out, pt->items.v[i]);
}

/* ---- files ---- */

static int skip_word(const char **s, size_t *n, const char *word)
{
	size_t k = strlen(word);

	if (*n < k || strncasecmp(*s, word, k))
		return 0;
	if (*n > k && (*s)[k] != ':' && (*s)[k] != '/' &&
	    !is_space((unsigned char)(*s)[k]))
		return 0;
	*s += k;
	*n -= k;
	return 1;
}

/* "Created/Modified: ", "Modified ", "New:" before the paths */
static void skip_verbs(const char **s, size_t *n)
{
	static const char *const verbs[] = {
		"created", "modified", "new", "changed", "updated", "added",
		"edited",
	};
	int again = 1;

	while (again) {
		size_t i;
		again = 0;
		trim(s, n);
		for (i = 0; i < KOPT_ARRAY_SIZE(verbs); i++)
			if (skip_word(s, n, verbs[i])) {
				again = 1;
				break;
			}
		if (*n && ((*s)[0] == '/' || (*s)[0] == ':') && again) {
			(*s)++;
			(*n)--;
		}
	}
	trim(s, n);
}

/* "a/./b//c" -> "a/b/c"; -1 for an absolute path or a ".." component. */
static int normalise(struct kopt_buf *out, const char *path, size_t n)
{
	const char *p = path, *end = path + n;

	if (n && path[0] == '/')
		return -1;
	while (p < end) {
		const char *slash = memchr(p, '/', (size_t)(end - p));
		size_t k = slash ? (size_t)(slash - p) : (size_t)(end - p);
		if (k == 2 && p[0] == '.' && p[1] == '.')
			return -1;
		if (k && !(k == 1 && p[0] == '.')) {
			if (out->len)
				kopt_buf_addch(out, '/');
			kopt_buf_add(out, p, k);
		}
		p = slash ? slash + 1 : end;
	}
	return out->len ? 0 : -1;
}

static int inside(const char *path, const char *dir)
{
	size_t k = strlen(dir);

	while (k && dir[k - 1] == '/')
		k--;
	return !strncmp(path, dir, k) && (path[k] == '/' || !path[k]);
}

static int add_files(struct kopt_summary *s, const char *value,
		     const struct kopt_summary_expect *ex, int line)
{
	const char *p = value, *end;
	size_t all = strlen(value);

	skip_verbs(&p, &all);
	end = p + all;
	while (p < end) {
		const char *comma = memchr(p, ',', (size_t)(end - p));
		const char *q = p, *sp;
		size_t n = comma ? (size_t)(comma - p) : (size_t)(end - p);
		struct kopt_buf norm = KOPT_BUF_INIT;

		skip_verbs(&q, &n);
		unwrap(&q, &n);
		/* "path (new)", "path: the kernel" */
		sp = q;
		while (sp < q + n && !is_space((unsigned char)*sp))
			sp++;
		n = (size_t)(sp - q);
		while (n && (q[n - 1] == ':' || q[n - 1] == ';'))
			n--;
		unwrap(&q, &n);
		if (n) {
			if (normalise(&norm, q, n) ||
			    (ex && ex->dir && !inside(norm.buf, ex->dir))) {
				kopt_error("the implementation summary claims "
					   "'%.*s' (line %d), outside the "
					   "version's folder '%s'", (int)n, q,
					   line, ex && ex->dir ? ex->dir : "");
				kopt_buf_release(&norm);
				return KOPT_EINVALID;
			}
			if (!kopt_strvec_has(&s->files, norm.buf))
				kopt_strvec_push(&s->files, norm.buf);
		}
		kopt_buf_release(&norm);
		p = comma ? comma + 1 : end;
	}
	return 0;
}

/* ---- trial configurations ---- */

static int number_after(const char *s, size_t n, char key, long *out)
{
	size_t i;

	for (i = 0; i + 1 < n; i++) {
		size_t j;
		if (tolower((unsigned char)s[i]) != key ||
		    (i && isalnum((unsigned char)s[i - 1])))
			continue;
		j = i + 1;
		while (j < n && s[j] == ' ')
			j++;
		if (j >= n || (s[j] != '=' && s[j] != ':'))
			continue;
		j++;
		while (j < n && s[j] == ' ')
			j++;
		if (j < n && isdigit((unsigned char)s[j])) {
			long v = 0;
			while (j < n && isdigit((unsigned char)s[j]) &&
			       v < 1000000000L)
				v = v * 10 + (s[j++] - '0');
			*out = v;
			return 0;
		}
	}
	return -1;
}

/* "[32, 1, 4096]" */
static int triple(const char *s, size_t n, long v[3])
{
	size_t i = 0;
	int k;

	while (i < n && s[i] != '[')
		i++;
	if (i == n)
		return -1;
	i++;
	for (k = 0; k < 3; k++) {
		long x = 0;
		while (i < n && s[i] == ' ')
			i++;
		if (i >= n || !isdigit((unsigned char)s[i]))
			return -1;
		while (i < n && isdigit((unsigned char)s[i]) && x < 1000000000L)
			x = x * 10 + (s[i++] - '0');
		while (i < n && s[i] == ' ')
			i++;
		if (i >= n || s[i] != (k < 2 ? ',' : ']'))
			return -1;
		i++;
		v[k] = x;
	}
	return 0;
}

static int add_trial(struct kopt_summary *s, const char *item, int line)
{
	size_t n = strlen(item);
	long v[3] = { -1, -1, -1 };
	const char *why;
	struct kopt_summary_trial *t;

	if (triple(item, n, v) &&
	    (number_after(item, n, 'b', &v[0]) ||
	     number_after(item, n, 's', &v[1]) ||
	     number_after(item, n, 't', &v[2])))
		return kopt_error("the implementation summary's trial "
				  "configuration '%s' (line %d) has no b, s "
				  "and t", item, line), KOPT_EINVALID;
	why = strstr(item, "--");
	if (!why)
		why = strstr(item, "\xe2\x80\x94");   /* an em dash */
	if (why) {
		why += why[0] == '-' ? 2 : 3;
		while (*why == ' ' || *why == '-')
			why++;
	}
	KOPT_ALLOC_GROW(s->trials, s->trials_nr + 1, s->trials_alloc);
	t = &s->trials[s->trials_nr++];
	t->b = v[0];
	t->s = v[1];
	t->t = v[2];
	t->why = kopt_strdup(why ? why : "");
	return 0;
}

/* ---- the whole ---- */

static int check_version(struct kopt_summary *s, const char *value,
			 const struct kopt_summary_expect *ex, int line)
{
	const char *p = value, *sp;
	size_t n = strlen(value);

	unwrap(&p, &n);
	sp = memchr(p, ' ', n);
	if (!sp)
		return kopt_error("the implementation summary's New Version "
				  "(line %d) is not '<kernel> <version>'",
				  line), KOPT_EINVALID;
	s->kernel = kopt_strndup(p, (size_t)(sp - p));
	n -= (size_t)(sp - p);
	p = sp;
	unwrap(&p, &n);
	/* the version is the first word after the kernel */
	first_word(&p, &n);
	s->version = kopt_strndup(p, n);
	if (!*s->kernel || !*s->version)
		return kopt_error("the implementation summary's New Version "
				  "(line %d) is not '<kernel> <version>'",
				  line), KOPT_EINVALID;
	if (ex && ex->kernel && strcmp(s->kernel, ex->kernel))
		return kopt_error("the implementation summary is for kernel "
				  "'%s', not '%s'", s->kernel, ex->kernel),
			KOPT_EINVALID;
	if (ex && ex->version && strcmp(s->version, ex->version))
		return kopt_error("the implementation summary is for version "
				  "'%s', not '%s'", s->version, ex->version),
			KOPT_EINVALID;
	return 0;
}

static int check_correct(struct kopt_summary *s, const char *value,
			 int line)
{
	const char *p = value;
	size_t n = strlen(value), k = 0;

	unwrap(&p, &n);
	while (k < n && isalpha((unsigned char)p[k]))
		k++;
	if (k == 4 && !strncasecmp(p, "pass", 4))
		s->pass = 1;
	else if (k == 4 && !strncasecmp(p, "fail", 4))
		s->pass = 0;
	else
		return kopt_error("the implementation summary's Correctness "
				  "(line %d) is neither PASS nor FAIL", line),
			KOPT_EINVALID;
	return 0;
}

static int check_devlog(struct kopt_summary *s, const char *value,
			const struct kopt_summary_expect *ex, int line)
{
	const char *p = value;
	size_t n = strlen(value);
	struct kopt_buf norm = KOPT_BUF_INIT;
	int ret = 0;

	unwrap(&p, &n);
	first_word(&p, &n);
	if (normalise(&norm, p, n))
		ret = kopt_error("the implementation summary's devlog entry "
				 "'%.*s' (line %d) is not a path in the "
				 "repository", (int)n, p, line);
	else if (ex && ex->devlog && strcmp(norm.buf, ex->devlog))
		ret = kopt_error("the implementation summary's devlog entry "
				 "is '%s', not the kernel's devlog '%s'",
				 norm.buf, ex->devlog);
	if (ret) {
		kopt_buf_release(&norm);
		return KOPT_EINVALID;
	}
	s->devlog = kopt_buf_detach(&norm, NULL);
	return 0;
}

/* Well-formed UTF-8 (the summary goes into the devlog, which must be). */
static int utf8_valid(const unsigned char *p, size_t n)
{
	size_t i = 0;

	while (i < n) {
		unsigned c = p[i];
		size_t k, need;
		unsigned cp, min;
		if (c < 0x80) {
			i++;
			continue;
		}
		if (c >= 0xc2 && c <= 0xdf) {
			need = 1; cp = c & 0x1f; min = 0x80;
		} else if (c >= 0xe0 && c <= 0xef) {
			need = 2; cp = c & 0x0f; min = 0x800;
		} else if (c >= 0xf0 && c <= 0xf4) {
			need = 3; cp = c & 0x07; min = 0x10000;
		} else {
			return 0;
		}
		for (k = 1; k <= need; k++) {
			if (i + k >= n || (p[i + k] & 0xc0) != 0x80)
				return 0;
			cp = (cp << 6) | (p[i + k] & 0x3f);
		}
		if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
			return 0;
		i += need + 1;
	}
	return 1;
}

int kopt_summary_parse(struct kopt_summary *out, const char *text,
		       size_t len, const struct kopt_summary_expect *ex)
{
	struct part_text parts[P__NR];
	struct kopt_strvec v = KOPT_STRVEC_INIT;
	size_t i;
	int p, ret = 0;

	memset(parts, 0, sizeof(parts));
	for (p = 0; p < P__NR; p++) {
		kopt_buf_init(&parts[p].inline_text, 0);
		kopt_strvec_init(&parts[p].items);
	}
	if (memchr(text, '\0', len)) {
		ret = kopt_error("the implementation summary is binary");
		ret = KOPT_EINVALID;
		goto done;
	}
	if (!utf8_valid((const unsigned char *)text, len)) {
		ret = kopt_error("the implementation summary is not UTF-8 "
				 "text");
		ret = KOPT_EINVALID;
		goto done;
	}
	split_lines(text, len, parts);
	for (p = 0; p < P__NR && !ret; p++) {
		if (!parts[p].seen)
			ret = kopt_error("the implementation summary has no "
					 "'%s' part", part_names[p]);
		else if (parts[p].seen > 1)
			ret = kopt_error("the implementation summary has the "
					 "'%s' part twice", part_names[p]);
		else if (!parts[p].inline_text.len && !parts[p].items.nr)
			ret = kopt_error("the implementation summary's '%s' "
					 "(line %d) is empty", part_names[p],
					 parts[p].line);
	}
	if (ret) {
		ret = KOPT_EINVALID;
		goto done;
	}

	ret = check_version(out, parts[P_VERSION].inline_text.buf, ex,
			    parts[P_VERSION].line);
	if (!ret)
		values(&parts[P_CHANGES], &out->changes);
	if (!ret) {
		values(&parts[P_FILES], &v);
		for (i = 0; !ret && i < v.nr; i++)
			ret = add_files(out, v.v[i], ex, parts[P_FILES].line);
		kopt_strvec_clear(&v);
		if (!ret && !out->files.nr)
			ret = kopt_error("the implementation summary names no "
					 "file (line %d)", parts[P_FILES].line);
	}
	if (!ret)
		ret = check_correct(out, parts[P_CORRECT].inline_text.len ?
				    parts[P_CORRECT].inline_text.buf :
				    parts[P_CORRECT].items.v[0],
				    parts[P_CORRECT].line);
	if (!ret) {
		values(&parts[P_TRIALS], &v);
		for (i = 0; !ret && i < v.nr; i++)
			ret = add_trial(out, v.v[i], parts[P_TRIALS].line);
		kopt_strvec_clear(&v);
	}
	if (!ret)
		ret = check_devlog(out, parts[P_DEVLOG].inline_text.len ?
				   parts[P_DEVLOG].inline_text.buf :
				   parts[P_DEVLOG].items.v[0], ex,
				   parts[P_DEVLOG].line);
	if (ret)
		ret = KOPT_EINVALID;
done:
	for (p = 0; p < P__NR; p++) {
		kopt_buf_release(&parts[p].inline_text);
		kopt_strvec_clear(&parts[p].items);
	}
	if (ret)
		kopt_summary_release(out);
	return ret;
}

void kopt_summary_release(struct kopt_summary *s)
{
	size_t i;

	free(s->kernel);
	free(s->version);
	kopt_strvec_clear(&s->changes);
	kopt_strvec_clear(&s->files);
	for (i = 0; i < s->trials_nr; i++)
		free(s->trials[i].why);
	free(s->trials);
	free(s->devlog);
	memset(s, 0, sizeof(*s));
	kopt_strvec_init(&s->changes);
	kopt_strvec_init(&s->files);
}

void kopt_summary_render_devlog(struct kopt_buf *out,
				const struct kopt_summary *s,
				const char *agent)
{
	size_t i;

	kopt_buf_addf(out, KOPT_SUMMARY_DEVLOG_HEADING " (%s):\n\n",
		      agent && *agent ? agent : "designer");
	for (i = 0; i < s->changes.nr; i++)
		kopt_buf_addf(out, "- Change: %s\n", s->changes.v[i]);
	kopt_buf_addstr(out, "- Files:");
	for (i = 0; i < s->files.nr; i++)
		kopt_buf_addf(out, "%s `%s`", i ? "," : "", s->files.v[i]);
	kopt_buf_addf(out, "\n- Correctness: %s\n", s->pass ? "PASS" : "FAIL");
	for (i = 0; i < s->trials_nr; i++) {
		const struct kopt_summary_trial *t = &s->trials[i];
		kopt_buf_addf(out, "- Checked b=%ld, s=%ld, t=%ld%s%s\n",
			      t->b, t->s, t->t, *t->why ? ": " : "", t->why);
	}
}
