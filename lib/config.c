#include "config.h"

#include <ctype.h>
#include <stdarg.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "error.h"
#include "repo.h"
#include "expr.h"
#include "lockfile.h"
#include "tune.h"
#include "banned.h"

/*
 * Strings to numbers, by hash: a .kopt of hundreds of kernels has
 * thousands of settings, and looking each one's line or count up in a
 * list made loading it quadratic.
 */
struct strmap {
	struct strmap_slot {
		char *key;
		size_t val;
	} *slots;
	size_t cap, nr;
};

static size_t hash_str(const char *s)
{
	size_t h = 2166136261u;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 16777619u;
	return h;
}

/* The value of `key`, added as `val` when absent. */
static size_t *strmap_get(struct strmap *m, const char *key, size_t val)
{
	size_t i;

	if (2 * (m->nr + 1) > m->cap) {
		struct strmap old = *m;
		m->cap = m->cap ? 2 * m->cap : 64;
		m->slots = kopt_calloc(m->cap, sizeof(*m->slots));
		m->nr = 0;
		for (i = 0; i < old.cap; i++) {
			if (!old.slots[i].key)
				continue;
			*strmap_get(m, old.slots[i].key, old.slots[i].val) =
				old.slots[i].val;
			free(old.slots[i].key);
		}
		free(old.slots);
	}
	for (i = hash_str(key) & (m->cap - 1); m->slots[i].key;
	     i = (i + 1) & (m->cap - 1))
		if (!strcmp(m->slots[i].key, key))
			return &m->slots[i].val;
	m->slots[i].key = kopt_strdup(key);
	m->slots[i].val = val;
	m->nr++;
	return &m->slots[i].val;
}

static const size_t *strmap_find(const struct strmap *m, const char *key)
{
	size_t i;

	if (!m->cap)
		return NULL;
	for (i = hash_str(key) & (m->cap - 1); m->slots[i].key;
	     i = (i + 1) & (m->cap - 1))
		if (!strcmp(m->slots[i].key, key))
			return &m->slots[i].val;
	return NULL;
}

static void strmap_clear(struct strmap *m)
{
	size_t i;

	for (i = 0; i < m->cap; i++)
		free(m->slots[i].key);
	free(m->slots);
	memset(m, 0, sizeof(*m));
}

/* The text of the file, to name lines in messages. */
struct source {
	const char *label;
	const char *text;
	size_t len;
	/*
	 * Each section header (index_heads()): where its line ends, its
	 * line number, its name and subsection (offsets into text; sub_at
	 * 0 when it has none), and the next header of the same section
	 * (SIZE_MAX: none).
	 */
	struct head {
		size_t eol, name_at, name_len, sub_at, sub_len, same;
		int line;
	} *heads;
	size_t heads_nr;
	struct strmap first;    /* section key -> its first header */
};

/* "name" (lower-case), then "\n" and the subsection when there is one. */
static void section_key(struct kopt_buf *out, const char *name,
			size_t name_len, const char *sub, size_t sub_len)
{
	size_t i;

	kopt_buf_reset(out);
	for (i = 0; i < name_len; i++)
		kopt_buf_addch(out, (char)tolower((unsigned char)name[i]));
	if (sub) {
		kopt_buf_addch(out, '\n');
		kopt_buf_add(out, sub, sub_len);
	}
}

static int same_ci(const char *a, size_t alen, const char *b)
{
	size_t i;

	if (strlen(b) != alen)
		return 0;
	for (i = 0; i < alen; i++)
		if (tolower((unsigned char)a[i]) != tolower((unsigned char)b[i]))
			return 0;
	return 1;
}

/* A line's first character other than blanks. */
static const char *skip_blanks(const char *p, const char *eol)
{
	while (p < eol && (*p == ' ' || *p == '\t'))
		p++;
	return p;
}

/*
 * Finds the section headers once, so that looking up the line of each
 * setting reads only its own sections, not the whole file again (a .kopt
 * of hundreds of kernels has thousands of settings).
 */
static void index_heads(struct source *src)
{
	const char *p = src->text, *end = src->text + src->len;
	struct kopt_buf key = KOPT_BUF_INIT;
	size_t alloc = 0, i;
	int line = 1;

	while (p < end) {
		const char *eol = memchr(p, '\n', (size_t)(end - p));
		const char *q, *s;
		struct head *h;
		if (!eol)
			eol = end;
		q = skip_blanks(p, eol);
		if (q < eol && *q == '[') {
			KOPT_ALLOC_GROW(src->heads, src->heads_nr + 1, alloc);
			h = &src->heads[src->heads_nr++];
			memset(h, 0, sizeof(*h));
			h->eol = (size_t)(eol - src->text);
			h->line = line;
			s = ++q;
			while (q < eol && *q != ']' && *q != ' ' &&
			       *q != '\t' && *q != '.')
				q++;
			h->name_at = (size_t)(s - src->text);
			h->name_len = (size_t)(q - s);
			if (q < eol && *q == '.') {
				s = ++q;
				while (q < eol && *q != ']')
					q++;
			} else {
				while (q < eol && *q != '"' && *q != ']')
					q++;
				s = NULL;
				if (q < eol && *q == '"') {
					s = ++q;
					while (q < eol && *q != '"')
						q++;
				}
			}
			if (s) {
				h->sub_at = (size_t)(s - src->text);
				h->sub_len = (size_t)(q - s);
			}
			h->same = SIZE_MAX;
		}
		p = eol + 1;
		line++;
	}
	/* chain the headers of each section, in order */
	for (i = src->heads_nr; i-- > 0;) {
		struct head *h = &src->heads[i];
		size_t *first;
		section_key(&key, src->text + h->name_at, h->name_len,
			    h->sub_at ? src->text + h->sub_at : NULL,
			    h->sub_len);
		first = strmap_get(&src->first, key.buf, SIZE_MAX);
		h->same = *first;
		*first = i;
	}
	kopt_buf_release(&key);
}

/*
 * Line of the `nth` (0-based) occurrence of `key` in [section "sub"], or
 * of the section header itself when `key` is NULL; 0 when not found.
 */
static int find_line(const struct source *src, const char *section,
		     const char *sub, const char *key, int nth)
{
	const char *end = src->text + src->len;
	struct kopt_buf name = KOPT_BUF_INIT;
	const size_t *first;
	size_t h;

	section_key(&name, section, strlen(section), sub,
		    sub ? strlen(sub) : 0);
	first = strmap_find(&src->first, name.buf);
	h = first ? *first : SIZE_MAX;
	kopt_buf_release(&name);
	for (; h != SIZE_MAX; h = src->heads[h].same) {
		const struct head *hd = &src->heads[h];
		const char *stop = h + 1 < src->heads_nr ?
				   src->text + src->heads[h + 1].eol : end;
		const char *p, *eol;
		int line = hd->line;
		if (!key)
			return line;
		/* the settings of this section, up to the next header */
		for (p = src->text + hd->eol + 1, line++; p < stop;
		     p = eol + 1, line++) {
			const char *q, *k;
			eol = memchr(p, '\n', (size_t)(end - p));
			if (!eol)
				eol = end;
			q = skip_blanks(p, eol);
			if (q >= eol || *q == '[' || *q == '#' || *q == ';')
				continue;
			k = q;
			while (q < eol && (isalnum((unsigned char)*q) || *q == '-'))
				q++;
			if (same_ci(k, (size_t)(q - k), key) && nth-- == 0)
				return line;
		}
	}
	return 0;
}

/* The first line that sets something, before any section header. */
static int first_setting_line(const struct source *src)
{
	const char *p = src->text, *end = src->text + src->len;
	int line = 1;

	while (p < end) {
		const char *eol = memchr(p, '\n', (size_t)(end - p));
		if (!eol)
			eol = end;
		while (p < eol && (*p == ' ' || *p == '\t' || *p == '\r'))
			p++;
		if (p < eol && *p == '[')
			return 0;
		if (p < eol && *p != '#' && *p != ';')
			return line;
		p = eol + 1;
		line++;
	}
	return 0;
}

static int bad(const struct source *src, int line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int bad(const struct source *src, int line, const char *fmt, ...)
{
	struct kopt_buf sb = KOPT_BUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	kopt_buf_vaddf(&sb, fmt, ap);
	va_end(ap);
	kopt_error_at(src->label, line, "%s", sb.buf);
	kopt_buf_release(&sb);
	return KOPT_EINVALID;
}

int kopt_valid_name(const char *name)
{
	const char *p;

	if (!name || !*name)
		return 0;
	if (!(islower((unsigned char)*name) || isdigit((unsigned char)*name)))
		return 0;
	for (p = name; *p; p++)
		if (!(islower((unsigned char)*p) || isdigit((unsigned char)*p) ||
		      *p == '_' || *p == '.' || *p == '-'))
			return 0;
	return !strstr(name, "..");
}

const char *kopt_control_name(enum kopt_control c)
{
	switch (c) {
	case KOPT_CONTROL_BLOCK: return "block";
	case KOPT_CONTROL_WARP: return "warp";
	case KOPT_CONTROL_THREAD: return "thread";
	default: return "none";
	}
}

enum kopt_control kopt_control_parse(const char *s)
{
	if (!strcmp(s, "block"))
		return KOPT_CONTROL_BLOCK;
	if (!strcmp(s, "warp"))
		return KOPT_CONTROL_WARP;
	if (!strcmp(s, "thread"))
		return KOPT_CONTROL_THREAD;
	return KOPT_CONTROL_NONE;
}

static int parse_long(const char *s, long *out)
{
	char *end;

	errno = 0;
	*out = strtol(s, &end, 10);
	return errno || end == s || *end || *out <= 0;
}

static int parse_noise(const char *s, double *out)
{
	char *end;

	*out = strtod(s, &end);
	if (end == s)
		return -1;
	if (*end == '%')
		end++;
	return *end || !isfinite(*out) || *out < 0 || *out >= 100;
}

static struct kopt_trial *get_trial(struct kopt_config *cfg, const char *name)
{
	size_t i;

	/* settings come in the file's order: most often the last one */
	for (i = cfg->trials_nr; i-- > 0;)
		if (!strcmp(cfg->trials[i].name, name))
			return &cfg->trials[i];
	KOPT_ALLOC_GROW(cfg->trials, cfg->trials_nr + 1, cfg->trials_alloc);
	memset(&cfg->trials[cfg->trials_nr], 0, sizeof(*cfg->trials));
	cfg->trials[cfg->trials_nr].name = kopt_strdup(name);
	return &cfg->trials[cfg->trials_nr++];
}

static struct kopt_language *get_language(struct kopt_config *cfg,
					  const char *name)
{
	size_t i;

	/* settings come in the file's order: most often the last one */
	for (i = cfg->languages_nr; i-- > 0;)
		if (!strcmp(cfg->languages[i].name, name))
			return &cfg->languages[i];
	KOPT_ALLOC_GROW(cfg->languages, cfg->languages_nr + 1,
			cfg->languages_alloc);
	memset(&cfg->languages[cfg->languages_nr], 0, sizeof(*cfg->languages));
	cfg->languages[cfg->languages_nr].name = kopt_strdup(name);
	return &cfg->languages[cfg->languages_nr++];
}

static struct kopt_kernel *get_kernel(struct kopt_config *cfg,
				      const char *name)
{
	size_t i;

	/* settings come in the file's order: most often the last one */
	for (i = cfg->kernels_nr; i-- > 0;)
		if (!strcmp(cfg->kernels[i].name, name))
			return &cfg->kernels[i];
	KOPT_ALLOC_GROW(cfg->kernels, cfg->kernels_nr + 1, cfg->kernels_alloc);
	memset(&cfg->kernels[cfg->kernels_nr], 0, sizeof(*cfg->kernels));
	cfg->kernels[cfg->kernels_nr].name = kopt_strdup(name);
	return &cfg->kernels[cfg->kernels_nr++];
}

static void set_str(char **dst, const char *v)
{
	free(*dst);
	*dst = kopt_strdup(v);
}

/* metrics: 1 metric names allowed, 2 tuning parameters allowed */
static int check_expr(const struct source *src, int line, const char *key,
		      const char *text, const struct kopt_kernel *k,
		      int metrics)
{
	static const char *const metric_names[] = {
		"duration_us", "tc_pct", "dram_pct", "occ_pct", "l2_hit_pct",
		"spill_bytes", "regs", "waves", "tflops", "gbps",
		"roofline_pct", NULL
	};
	struct kopt_error_catch why = KOPT_ERROR_CATCH_INIT;
	struct kopt_strvec names = KOPT_STRVEC_INIT;
	struct kopt_expr *e = NULL;
	size_t i;
	int ret = 0;

	kopt_error_catch(&why);
	ret = kopt_expr_parse(&e, text, src->label, line);
	kopt_error_uncatch(&why);
	if (ret) {
		ret = bad(src, line, "bad expression in '%s': %s", key,
			  why.cause.buf);
		goto done;
	}
	kopt_expr_names(e, &names);
	for (i = 0; i < names.nr; i++) {
		const char *n = names.v[i];
		int ok = !strcmp(n, "b") || !strcmp(n, "s") || !strcmp(n, "t");
		size_t j;
		for (j = 0; !ok && j < k->params_nr; j++)
			ok = !strcmp(k->params[j].name, n);
		for (j = 0; !ok && metrics == 1 && metric_names[j]; j++)
			ok = !strcmp(metric_names[j], n);
		for (j = 0; !ok && metrics == 2 && j < k->tune_nr; j++)
			ok = !strcmp(k->tune[j].name, n);
		if (!ok) {
			ret = bad(src, line, "unknown name '%s' in '%s'", n, key);
			goto done;
		}
	}
	if (metrics == 1 && !kopt_expr_is_comparison(e) &&
	    e->kind != KOPT_EXPR_AND && e->kind != KOPT_EXPR_OR)
		ret = bad(src, line, "'%s' must be a comparison, e.g. "
			  "'spec-decode duration_us <= 60'", key);
done:
	kopt_expr_free(e);
	kopt_error_catch_release(&why);
	kopt_strvec_clear(&names);
	return ret;
}

int kopt_is_identifier(const char *s, size_t n)
{
	size_t i;

	if (!n || !(isalpha((unsigned char)s[0]) || s[0] == '_'))
		return 0;
	for (i = 1; i < n; i++)
		if (!(isalnum((unsigned char)s[i]) || s[i] == '_'))
			return 0;
	return 1;
}

static int parse_number(const char *s, size_t n, double *out)
{
	char *copy = kopt_strndup(s, n), *end;
	int ret;

	*out = strtod(copy, &end);
	ret = end == copy || *end || !isfinite(*out);
	free(copy);
	return ret;
}

static const char *skip_blank(const char *p)
{
	while (*p == ' ' || *p == '\t')
		p++;
	return p;
}

/* The end of a comma-separated item at `p`, blanks before it dropped. */
static size_t item_len(const char *p, char stop)
{
	size_t n = 0;

	while (p[n] && p[n] != stop)
		n++;
	while (n && (p[n - 1] == ' ' || p[n - 1] == '\t'))
		n--;
	return n;
}

static int reserved_name(const struct kopt_kernel *k, const char *s, size_t n)
{
	static const char *const words[] = {
		"b", "s", "t", "kernel", "version", "tiling", "us"
	};
	size_t i;

	for (i = 0; i < KOPT_ARRAY_SIZE(words); i++)
		if (strlen(words[i]) == n && !memcmp(words[i], s, n))
			return 1;
	for (i = 0; i < k->params_nr; i++)
		if (strlen(k->params[i].name) == n &&
		    !memcmp(k->params[i].name, s, n))
			return 1;
	return 0;
}

/* `tune = NAME=v1,v2,...` */
static int parse_tune_param(const struct source *src, struct kopt_kernel *k,
			    const char *v, int line)
{
	const char *eq = strchr(v, '='), *p;
	struct kopt_tune_param *tp;
	size_t n, i;

	if (!eq)
		return bad(src, line, "bad tuning parameter '%s' (expected "
			   "NAME=value,value,...)", v);
	n = item_len(v, '=');
	if (!kopt_is_identifier(v, n) || reserved_name(k, v, n))
		return bad(src, line, "bad tuning parameter name '%.*s' (a C "
			   "identifier that is not b, s, t, kernel, version, "
			   "tiling or a param)", (int)n, v);
	for (i = 0; i < k->tune_nr; i++)
		if (strlen(k->tune[i].name) == n &&
		    !memcmp(k->tune[i].name, v, n))
			return bad(src, line, "tuning parameter '%.*s' is "
				   "given twice", (int)n, v);
	KOPT_ALLOC_GROW(k->tune, k->tune_nr + 1, k->tune_alloc);
	tp = &k->tune[k->tune_nr++];
	memset(tp, 0, sizeof(*tp));
	tp->name = kopt_strndup(v, n);
	tp->line = line;
	p = skip_blank(eq + 1);
	if (!*p)
		return bad(src, line, "tuning parameter '%s' has no values",
			   tp->name);
	for (;;) {
		double d;
		size_t len = item_len(p, ',');
		if (!len || parse_number(p, len, &d))
			return bad(src, line, "bad value '%.*s' of tuning "
				   "parameter '%s' (expected a number)",
				   (int)len, p, tp->name);
		for (i = 0; i < tp->nr; i++)
			if (tp->values[i] == d)
				return bad(src, line, "value '%.*s' of tuning "
					   "parameter '%s' is given twice",
					   (int)len, p, tp->name);
		tp->values = kopt_realloc(tp->values,
					  (tp->nr + 1) * sizeof(*tp->values));
		tp->values[tp->nr++] = d;
		p += strcspn(p, ",");
		if (!*p)
			break;
		p = skip_blank(p + 1);
	}
	return 0;
}

static int set_kernel_key(struct kopt_config *cfg, const struct source *src,
			  struct kopt_kernel *k, const char *key,
			  const char *v, int line)
{
	if (!strcmp(key, "language"))
		set_str(&k->language, v);
	else if (!strcmp(key, "source"))
		set_str(&k->source, v);
	else if (!strcmp(key, "build"))
		set_str(&k->build, v);
	else if (!strcmp(key, "run"))
		set_str(&k->run, v);
	else if (!strcmp(key, "flops"))
		set_str(&k->flops, v);
	else if (!strcmp(key, "bytes"))
		set_str(&k->bytes, v);
	else if (!strcmp(key, "stages"))
		set_str(&k->stages, v);
	else if (!strcmp(key, "rename")) {
		if (strcmp(v, "suffix") && strcmp(v, "none"))
			return bad(src, line, "bad value '%s' for 'rename' "
				   "(expected 'suffix' or 'none')", v);
		set_str(&k->rename, v);
	} else if (!strcmp(key, "param")) {
		const char *eq = strchr(v, '=');
		char *end;
		double d;
		size_t n;
		if (!eq)
			return bad(src, line, "bad param '%s' (expected "
				   "name=number)", v);
		n = (size_t)(eq - v);
		while (n && (v[n - 1] == ' ' || v[n - 1] == '\t'))
			n--;
		if (!kopt_is_identifier(v, n) || (n == 1 && strchr("bst", v[0])))
			return bad(src, line, "bad param name in '%s'", v);
		d = strtod(eq + 1, &end);
		while (*end == ' ' || *end == '\t')
			end++;
		if (end == eq + 1 || *end || !isfinite(d))
			return bad(src, line, "bad param value in '%s' (expected "
				   "a number)", v);
		KOPT_ALLOC_GROW(k->params, k->params_nr + 1, k->params_alloc);
		k->params[k->params_nr].name = kopt_strndup(v, n);
		k->params[k->params_nr++].value = d;
	} else if (!strcmp(key, "target")) {
		const char *sp = v;
		struct kopt_target *tg;
		while (*sp && *sp != ' ' && *sp != '\t')
			sp++;
		if (!*sp)
			return bad(src, line, "bad target '%s' (expected "
				   "'<trial> <condition>', e.g. 'spec-decode "
				   "duration_us <= 60')", v);
		KOPT_ALLOC_GROW(k->targets, k->targets_nr + 1,
				k->targets_alloc);
		tg = &k->targets[k->targets_nr++];
		tg->trial = kopt_strndup(v, (size_t)(sp - v));
		while (*sp == ' ' || *sp == '\t')
			sp++;
		tg->expr = kopt_strdup(sp);
		tg->text = kopt_strdup(v);
	} else if (!strcmp(key, "tune")) {
		return parse_tune_param(src, k, v, line);
	} else if (!strcmp(key, "tune-restrict")) {
		KOPT_ALLOC_GROW(k->restricts, k->restricts_nr + 1,
				k->restricts_alloc);
		k->restricts[k->restricts_nr].expr = kopt_strdup(v);
		k->restricts[k->restricts_nr++].line = line;
	} else if (!strcmp(key, "tune-default")) {
		set_str(&k->tune_default_id, v);  /* parsed in validate() */
	} else if (!strcmp(key, "tune-time")) {
		if (!strstr(v, "{us}") || strstr(strstr(v, "{us}") + 4, "{us}"))
			return bad(src, line, "bad value '%s' for 'tune-time' "
				   "(expected the benchmark's report with "
				   "{us} once where the time in microseconds "
				   "is, e.g. 'median {us} us')", v);
		set_str(&k->tune_time, v);
	} else {
		return bad(src, line, "unknown key 'kernel.%s.%s'", k->name, key);
	}
	(void)cfg;
	return 0;
}

static int set_kopt_key(struct kopt_config *cfg, const struct source *src,
			const char *key, const char *v, int line)
{
	if (!strcmp(key, "noise")) {
		if (parse_noise(v, &cfg->noise_pct))
			return bad(src, line, "bad value '%s' for 'kopt.noise' "
				   "(expected a percentage such as 3%%)", v);
	} else if (!strcmp(key, "catalog")) {
		set_str(&cfg->catalog, v);
	} else if (!strcmp(key, "knowledge")) {
		set_str(&cfg->knowledge, v);
	} else if (!strcmp(key, "timeout")) {
		long n;
		if (parse_long(v, &n) || n > 86400)
			return bad(src, line, "bad value '%s' for 'kopt.timeout' "
				   "(expected seconds)", v);
		cfg->timeout_s = (int)n;
	} else if (!strcmp(key, "agent")) {
		set_str(&cfg->agent, v);
	} else if (!strcmp(key, "gpu")) {
		char *end;
		long n = strtol(v, &end, 10);
		if (end == v || *end || n < 0 || n > 1024)
			return bad(src, line, "bad value '%s' for 'kopt.gpu' "
				   "(expected a device number)", v);
		cfg->gpu = (int)n;
	} else if (!strcmp(key, "gpuwait")) {
		long n = 0;
		if ((strcmp(v, "0") && parse_long(v, &n)) ||
		    n > KOPT_GPU_WAIT_MAX_S)
			return bad(src, line, "bad value '%s' for 'kopt.gpuWait' "
				   "(expected seconds)", v);
		cfg->gpu_wait_s = (int)n;
	} else if (!strcmp(key, "executor")) {
		if (strcmp(v, "local") && strcmp(v, "slurm"))
			return bad(src, line, "bad value '%s' for 'kopt.executor' "
				   "(expected local or slurm)", v);
		set_str(&cfg->executor, v);
	} else if (!strcmp(key, "slurmpartition")) {
		set_str(&cfg->slurm_partition, v);
	} else if (!strcmp(key, "slurmaccount")) {
		set_str(&cfg->slurm_account, v);
	} else if (!strcmp(key, "slurmtime")) {
		set_str(&cfg->slurm_time, v);
	} else if (!strcmp(key, "slurmgres")) {
		set_str(&cfg->slurm_gres, v);
	} else if (!strcmp(key, "slurmdevice")) {
		set_str(&cfg->slurm_device, v);
	} else if (!strcmp(key, "slurmtasks")) {
		long n;
		if (parse_long(v, &n) || n > 100000)
			return bad(src, line, "bad value '%s' for "
				   "'kopt.slurmTasks' (expected a positive "
				   "number of tasks)", v);
		cfg->slurm_tasks = (int)n;
	} else if (!strcmp(key, "threads")) {
		long n = 0;
		if ((strcmp(v, "0") && parse_long(v, &n)) || n > 64)
			return bad(src, line, "bad value '%s' for "
				   "'kopt.threads' (expected 0 to 64 threads)",
				   v);
		cfg->threads = (int)n;
	} else {
		return bad(src, line, "unknown key 'kopt.%s'", key);
	}
	return 0;
}

/* ------------------------------------------------------------------ */
/*
 * A .kopt written plainly is read here, not by libgit2 (whose reading,
 * with the copy its iterator makes, was a fifth of a warm analyze's
 * instructions, and which reads only files: a .kopt of a tree went
 * through a temporary file).  Anything the plain reading does not take
 * is left to libgit2, which then also says what is wrong.
 */

static int plain_blank(char c)
{
	return c == ' ' || c == '\t';
}

static int plain_alpha(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static int plain_name_char(char c)
{
	return plain_alpha(c) || (c >= '0' && c <= '9') || c == '-';
}

static void plain_add_lower(struct kopt_buf *sb, const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		kopt_buf_addch(sb, s[i] >= 'A' && s[i] <= 'Z' ?
				   s[i] - 'A' + 'a' : s[i]);
}

void kopt_config_entries_free(struct kopt_config_entry *e, size_t nr)
{
	size_t i;

	for (i = 0; i < nr; i++) {
		free(e[i].name);
		free(e[i].value);
	}
	free(e);
}

int kopt_config_plain_entries(const char *text, size_t len,
			      struct kopt_config_entry **out, size_t *nr)
{
	const char *p = text, *end = text + len, *s;
	struct kopt_buf section = KOPT_BUF_INIT, name = KOPT_BUF_INIT;
	struct kopt_config_entry *v = NULL;
	size_t n = 0, alloc = 0;
	int in_section = 0;

	*out = NULL;
	*nr = 0;
	/*
	 * Control characters but tabs and newlines (NULs, carriage returns,
	 * vertical tabs, which libgit2 takes as blanks) and a byte-order
	 * mark: libgit2's
	 */
	for (s = text; s < end; s++) {
		unsigned char c = (unsigned char)*s;
		if ((c < ' ' && c != '\t' && c != '\n') || c == 0x7f)
			return -1;
	}
	if (len >= 3 && !memcmp(text, "\xef\xbb\xbf", 3))
		return -1;
	for (; p < end; p = p < end ? p + 1 : p) {
		const char *eol = memchr(p, '\n', (size_t)(end - p));
		const char *q = p, *ve;
		if (!eol)
			eol = end;
		while (q < eol && plain_blank(*q))
			q++;
		p = eol;
		if (q == eol || *q == '#' || *q == ';')
			continue;
		if (*q == '[') {
			/* [name] or [name "sub"], alone on its line */
			for (s = ++q; q < eol && plain_name_char(*q); q++)
				;
			if (q == s)
				goto other;
			kopt_buf_reset(&section);
			plain_add_lower(&section, s, (size_t)(q - s));
			if (!strcmp(section.buf, "include") ||
			    !strcmp(section.buf, "includeif"))
				goto other;
			if (q < eol && plain_blank(*q)) {
				while (q < eol && plain_blank(*q))
					q++;
				if (q == eol || *q != '"')
					goto other;
				for (s = ++q; q < eol && *q != '"' && *q != '\\';
				     q++)
					;
				if (q == eol || *q != '"')
					goto other;
				kopt_buf_addch(&section, '.');
				kopt_buf_add(&section, s, (size_t)(q - s));
				q++;
			}
			if (q == eol || *q != ']')
				goto other;
			for (q++; q < eol && plain_blank(*q); q++)
				;
			if (q < eol)
				goto other;
			in_section = 1;
			continue;
		}
		/* key, or key = value without quotes, escapes or comments */
		if (!in_section || !plain_alpha(*q))
			goto other;
		for (s = q; q < eol && plain_name_char(*q); q++)
			;
		kopt_buf_reset(&name);
		kopt_buf_addbuf(&name, &section);
		kopt_buf_addch(&name, '.');
		plain_add_lower(&name, s, (size_t)(q - s));
		while (q < eol && plain_blank(*q))
			q++;
		KOPT_ALLOC_GROW(v, n + 1, alloc);
		if (q == eol) {
			v[n].value = NULL;
		} else {
			if (*q != '=')
				goto other;
			for (q++; q < eol && plain_blank(*q); q++)
				;
			for (ve = eol; ve > q && plain_blank(ve[-1]); ve--)
				;
			for (s = q; s < ve; s++)
				if (*s == '"' || *s == '\\' || *s == '#' ||
				    *s == ';')
					goto other;
			v[n].value = kopt_strndup(q, (size_t)(ve - q));
		}
		v[n++].name = kopt_buf_detach(&name, NULL);
	}
	kopt_buf_release(&section);
	kopt_buf_release(&name);
	*out = v;
	*nr = n;
	return 0;
other:
	kopt_buf_release(&section);
	kopt_buf_release(&name);
	kopt_config_entries_free(v, n);
	return -1;
}

/* The settings as libgit2 reads the file `path`. */
static int git_entries(struct kopt_config_entry **out, size_t *nr,
		       const char *path, const struct source *src)
{
	git_config *gc = NULL;
	git_config_iterator *it = NULL;
	git_config_entry *e;
	struct kopt_config_entry *v = NULL;
	size_t n = 0, alloc = 0;
	int err;

	if (git_config_new(&gc) < 0 ||
	    git_config_add_file_ondisk(gc, path, GIT_CONFIG_LEVEL_LOCAL, NULL,
				       0) < 0) {
		const char *msg = kopt_git_error("cannot parse");
		const char *in = strstr(msg, " (in ");
		const char *colon = in ? strrchr(in, ':') : NULL;
		if (in && colon)
			bad(src, atoi(colon + 1), "%.*s", (int)(in - msg), msg);
		else
			bad(src, 0, "%s", msg);
		git_config_free(gc);
		return KOPT_EINVALID;
	}
	if (git_config_iterator_new(&it, gc) < 0) {
		git_config_free(gc);
		return kopt_error("%s: %s", src->label,
				  kopt_git_error("cannot read settings"));
	}
	while (!(err = git_config_next(&e, it))) {
		KOPT_ALLOC_GROW(v, n + 1, alloc);
		v[n].name = kopt_strdup(e->name);
		v[n++].value = e->value ? kopt_strdup(e->value) : NULL;
	}
	git_config_iterator_free(it);
	git_config_free(gc);
	if (err != GIT_ITEROVER) {
		kopt_config_entries_free(v, n);
		return kopt_error("%s: %s", src->label,
				  kopt_git_error("cannot read settings"));
	}
	*out = v;
	*nr = n;
	return 0;
}

/* The occurrence number of a multivar, to find its line. */
static int occurrence(struct strmap *seen, const char *name)
{
	size_t *n = strmap_get(seen, name, 0);

	return (int)(*n)++;
}

static int load_entries(struct kopt_config *cfg,
			const struct kopt_config_entry *e, size_t nr,
			const struct source *src)
{
	struct strmap seen = { NULL, 0, 0 };
	size_t i;
	int ret = 0;

	for (i = 0; !ret && i < nr; i++) {
		const char *name = e[i].name, *v = e[i].value ? e[i].value : "";
		const char *dot1 = strchr(name, '.');
		const char *dot2 = strrchr(name, '.');
		char *section = NULL, *sub = NULL;
		const char *key;
		int nth = occurrence(&seen, name);
		int line;

		if (!dot1) {
			ret = bad(src, first_setting_line(src),
				  "'%s' is set outside any section (put it "
				  "under [kopt], [trial], [language] or "
				  "[kernel])", name);
			break;
		}
		section = kopt_strndup(name, (size_t)(dot1 - name));
		if (dot2 > dot1)
			sub = kopt_strndup(dot1 + 1, (size_t)(dot2 - dot1 - 1));
		key = dot2 + 1;
		line = find_line(src, section, sub, key, nth);

		if (!strcmp(section, "kopt")) {
			if (sub)
				ret = bad(src, find_line(src, section, sub, NULL, 0),
					  "section [kopt] takes no name");
			else
				ret = set_kopt_key(cfg, src, key, v, line);
		} else if (!strcmp(section, "trial") || !strcmp(section, "language") ||
			   !strcmp(section, "kernel")) {
			if (!sub || !kopt_valid_name(sub)) {
				ret = bad(src, find_line(src, section, sub, NULL, 0),
					  "bad %s name '%s' (use lower-case "
					  "letters, digits, '.', '_' and '-')",
					  section, sub ? sub : "");
			} else if (!strcmp(section, "trial")) {
				struct kopt_trial *t = get_trial(cfg, sub);
				long n;
				if (!t->line)
					t->line = find_line(src, section, sub, NULL, 0);
				if (strcmp(key, "b") && strcmp(key, "s") &&
				    strcmp(key, "t"))
					ret = bad(src, line, "unknown key 'trial.%s.%s'",
						  sub, key);
				else if (parse_long(v, &n))
					ret = bad(src, line, "bad value '%s' for "
						  "'trial.%s.%s' (expected a "
						  "positive integer)", v, sub, key);
				else if (*key == 'b')
					t->b = n;
				else if (*key == 's')
					t->s = n;
				else
					t->t = n;
			} else if (!strcmp(section, "language")) {
				struct kopt_language *l = get_language(cfg, sub);
				if (!l->line)
					l->line = find_line(src, section, sub, NULL, 0);
				if (!strcmp(key, "control")) {
					l->control = kopt_control_parse(v);
					if (!l->control)
						ret = bad(src, line, "bad value '%s' for "
							  "'language.%s.control' (expected "
							  "block, warp or thread)", v, sub);
				} else if (!strcmp(key, "catalog")) {
					set_str(&l->catalog, v);
				} else {
					ret = bad(src, line, "unknown key "
						  "'language.%s.%s'", sub, key);
				}
			} else {
				struct kopt_kernel *k = get_kernel(cfg, sub);
				if (!k->line)
					k->line = find_line(src, section, sub, NULL, 0);
				ret = set_kernel_key(cfg, src, k, key, v, line);
			}
		} else {
			ret = bad(src, find_line(src, section, sub, NULL, 0),
				  "unknown section '%s'", section);
		}
		free(section);
		free(sub);
	}
	strmap_clear(&seen);
	return ret;
}

/* `tune-default = NAME=v,NAME=v`: every parameter once, a listed value. */
static int parse_tune_default(const struct source *src, struct kopt_kernel *k,
			      const char *text, int line)
{
	const char *p = skip_blank(text);
	char *seen = kopt_calloc(k->tune_nr ? k->tune_nr : 1, 1);
	size_t i;
	int ret = 0;

	k->tune_default = kopt_calloc(k->tune_nr ? k->tune_nr : 1,
				      sizeof(double));
	while (*p && !ret) {
		size_t len = item_len(p, ','), n;
		const char *eq = memchr(p, '=', len);
		double d;
		n = eq ? item_len(p, '=') : len;
		for (i = 0; i < k->tune_nr; i++)
			if (strlen(k->tune[i].name) == n &&
			    !memcmp(k->tune[i].name, p, n))
				break;
		if (!eq) {
			ret = bad(src, line, "bad tune-default item '%.*s' "
				  "(expected NAME=value)", (int)len, p);
		} else if (i == k->tune_nr) {
			ret = bad(src, line, "tune-default names unknown tuning "
				  "parameter '%.*s'", (int)n, p);
		} else if (seen[i]) {
			ret = bad(src, line, "tune-default gives '%s' twice",
				  k->tune[i].name);
		} else {
			/* the item ends at p + len, its blanks trimmed */
			const char *vs = eq + 1;
			size_t vn, j;
			while (vs < p + len && (*vs == ' ' || *vs == '\t'))
				vs++;
			vn = (size_t)(p + len - vs);
			if (!vn || parse_number(vs, vn, &d)) {
				ret = bad(src, line, "bad tune-default value "
					  "'%.*s' for '%s' (expected a number)",
					  (int)vn, vs, k->tune[i].name);
				break;
			}
			for (j = 0; j < k->tune[i].nr; j++)
				if (k->tune[i].values[j] == d)
					break;
			if (j == k->tune[i].nr)
				ret = bad(src, line, "tune-default value '%.*s' "
					  "of '%s' is not one of its values",
					  (int)vn, vs, k->tune[i].name);
			seen[i] = 1;
			k->tune_default[i] = d;
		}
		p += strcspn(p, ",");
		if (*p)
			p = skip_blank(p + 1);
	}
	for (i = 0; !ret && i < k->tune_nr; i++)
		if (!seen[i])
			ret = bad(src, line, "tune-default gives no value for "
				  "'%s'", k->tune[i].name);
	free(seen);
	return ret;
}

/*
 * The placeholders of a command template are all known, and a build that
 * depends on a tuning parameter builds each configuration apart.
 */
static int check_template(const struct source *src, int line, const char *key,
			  const char *tmpl, const struct kopt_kernel *k,
			  unsigned char *used)
{
	const char *p = tmpl;
	int tuned = 0, tiling = 0;

	while ((p = strchr(p, '{'))) {
		const char *close = strchr(p, '}');
		size_t n, i;
		if (!close)
			return bad(src, line, "unclosed '{' in '%s'", key);
		n = (size_t)(close - p - 1);
		p++;
		if (n == 6 && !memcmp(p, "tiling", 6))
			tiling = 1;
		for (i = 0; i < k->tune_nr; i++)
			if (strlen(k->tune[i].name) == n &&
			    !memcmp(k->tune[i].name, p, n)) {
				used[i] = 1;
				tuned = 1;
				break;
			}
		if (i == k->tune_nr && !reserved_name(k, p, n))
			return bad(src, line, "unknown placeholder '{%.*s}' in "
				   "'%s'", (int)n, p, key);
		if (n == 2 && !memcmp(p, "us", 2))
			return bad(src, line, "unknown placeholder '{us}' in "
				   "'%s'", key);
		p = close + 1;
	}
	(void)tuned;
	(void)tiling;
	return 0;
}

/* Both command templates; `used` marks the tuning parameters named. */
static int check_templates(const struct source *src,
			   const struct kopt_kernel *k, unsigned char *used)
{
	int ret = 0;

	if (k->build)
		ret = check_template(src, find_line(src, "kernel", k->name,
						    "build", 0),
				     "build", k->build, k, used);
	if (!ret && k->run)
		ret = check_template(src, find_line(src, "kernel", k->name,
						    "run", 0),
				     "run", k->run, k, used);
	return ret;
}

static int validate_tuning(const struct kopt_config *cfg,
			   const struct source *src, struct kopt_kernel *k)
{
	int dline = find_line(src, "kernel", k->name, "tune-default", 0);
	unsigned char *used;
	char *dtext = k->tune_default_id;
	size_t i;
	int ret = 0, any = 0;

	k->tune_default_id = NULL;
	if (!k->tune_nr) {
		unsigned char none = 0;
		free(dtext);
		if (check_templates(src, k, &none))
			return KOPT_EINVALID;
		if (dtext || k->restricts_nr || k->tune_time)
			return bad(src, dtext ? dline : k->restricts_nr ?
				   k->restricts[0].line : k->line,
				   "kernel '%s' has tuning settings but no "
				   "tuning parameter ('tune = NAME=v1,v2')",
				   k->name);
		return 0;
	}
	used = kopt_calloc(k->tune_nr, 1);
	ret = check_templates(src, k, used);
	for (i = 0; !ret && i < k->tune_nr; i++)
		if (!used[i])
			ret = bad(src, k->tune[i].line, "tuning parameter '%s' "
				  "appears in neither 'build' nor 'run' as "
				  "{%s}", k->tune[i].name, k->tune[i].name);
	free(used);
	for (i = 0; !ret && i < k->restricts_nr; i++)
		ret = check_expr(src, k->restricts[i].line, "tune-restrict",
				 k->restricts[i].expr, k, 2);
	if (!ret && !dtext)
		ret = bad(src, k->tune[0].line, "kernel '%s' needs "
			  "'tune-default', the hand-picked configuration",
			  k->name);
	if (!ret)
		ret = parse_tune_default(src, k, dtext, dline);
	free(dtext);
	/* the space must hold something at some trial */
	for (i = 0; !ret && i < cfg->trials_nr; i++) {
		const struct kopt_trial *t = &cfg->trials[i];
		size_t count = 0;
		if ((ret = kopt_tune_count(&count, k, t->b, t->s, t->t,
					   src->label)))
			break;
		any |= count > 0;
	}
	if (!ret && !cfg->trials_nr)
		any = 1;
	if (!ret && !any)
		ret = bad(src, k->restricts_nr ? k->restricts[0].line :
			  k->tune[0].line, "the tuning space of kernel '%s' "
			  "is empty: its restrictions exclude every "
			  "configuration at every trial", k->name);
	/* and the hand-picked configuration, at every trial */
	for (i = 0; !ret && i < (cfg->trials_nr ? cfg->trials_nr : 1); i++) {
		const struct kopt_trial *t = cfg->trials_nr ? &cfg->trials[i] :
					     NULL;
		int why = -1;
		if ((ret = kopt_tune_allowed(k, k->tune_default, t ? t->b : 1,
					     t ? t->s : 1, t ? t->t : 1, &why,
					     src->label)))
			break;
		if (why >= 0 && t)
			ret = bad(src, dline, "the hand-picked configuration is "
				  "excluded by 'tune-restrict = %s' (line %d) "
				  "at trial '%s'", k->restricts[why].expr,
				  k->restricts[why].line, t->name);
	}
	if (!ret) {
		struct kopt_buf id = KOPT_BUF_INIT;
		kopt_tune_config_id(&id, k, k->tune_default);
		k->tune_default_id = kopt_buf_detach(&id, NULL);
	}
	return ret;
}

static int validate(struct kopt_config *cfg, const struct source *src)
{
	size_t i, j;

	for (i = 0; i < cfg->trials_nr; i++) {
		struct kopt_trial *t = &cfg->trials[i];
		if (!t->b || !t->s || !t->t)
			return bad(src, t->line, "trial '%s' needs b, s and t",
				   t->name);
	}
	for (i = 0; i < cfg->languages_nr; i++)
		if (!cfg->languages[i].control)
			return bad(src, cfg->languages[i].line, "language '%s' "
				   "needs 'control' (block, warp or thread)",
				   cfg->languages[i].name);
	for (i = 0; i < cfg->kernels_nr; i++) {
		struct kopt_kernel *k = &cfg->kernels[i];
		static const char *const need[] = { "language", "source", "run" };
		const char *have[] = { k->language, k->source, k->run };
		for (j = 0; j < 3; j++)
			if (!have[j])
				return bad(src, k->line, "kernel '%s' needs '%s'",
					   k->name, need[j]);
		if (!kopt_config_language(cfg, k->language))
			return bad(src, find_line(src, "kernel", k->name,
						  "language", 0),
				   "kernel '%s': unknown language '%s'",
				   k->name, k->language);
		if (k->flops && check_expr(src, find_line(src, "kernel", k->name,
							  "flops", 0),
					   "flops", k->flops, k, 0))
			return KOPT_EINVALID;
		if (k->bytes && check_expr(src, find_line(src, "kernel", k->name,
							  "bytes", 0),
					   "bytes", k->bytes, k, 0))
			return KOPT_EINVALID;
		for (j = 0; j < k->targets_nr; j++) {
			int line = find_line(src, "kernel", k->name, "target",
					     (int)j);
			if (!kopt_config_trial(cfg, k->targets[j].trial))
				return bad(src, line, "target names unknown "
					   "trial '%s'", k->targets[j].trial);
			if (check_expr(src, line, "target", k->targets[j].expr,
				       k, 1))
				return KOPT_EINVALID;
		}
		if (validate_tuning(cfg, src, k))
			return KOPT_EINVALID;
	}
	return 0;
}

static void set_defaults(struct kopt_config *cfg)
{
	cfg->noise_pct = KOPT_DEFAULT_NOISE_PCT;
	cfg->timeout_s = KOPT_DEFAULT_TIMEOUT_S;
	cfg->slurm_tasks = 0;
	cfg->threads = 0;
}

static int overlay_kopt(struct kopt_config *cfg, git_config *overlay)
{
	static const char *const keys[] = {
		"noise", "catalog", "knowledge", "timeout", "agent", "gpu",
		"gpuwait", "executor", "slurmpartition", "slurmaccount", "slurmtime",
		"slurmgres", "slurmdevice", "slurmtasks", "threads"
	};
	struct source src = { "git config", "", 0, NULL, 0 };
	size_t i;

	for (i = 0; i < KOPT_ARRAY_SIZE(keys); i++) {
		git_buf v = GIT_BUF_INIT;
		char *name = kopt_xstrfmt("kopt.%s", keys[i]);
		int ret = git_config_get_string_buf(&v, overlay, name);
		free(name);
		if (ret == GIT_ENOTFOUND) {
			git_error_clear();
			continue;
		}
		if (ret < 0)
			return kopt_error("git config: %s",
					  kopt_git_error("cannot read"));
		ret = set_kopt_key(cfg, &src, keys[i], v.ptr, 0);
		git_buf_dispose(&v);
		if (ret)
			return ret;
	}
	return 0;
}

/*
 * The settings of `text` (the file `path`, or NULL when it is no file):
 * read plainly, else by libgit2 from the file (from a temporary copy of
 * the text when there is none).
 */
static int read_entries(struct kopt_config_entry **e, size_t *nr,
			const char *path, const struct source *src)
{
	char tmpl[] = "/tmp/kopt-config-XXXXXX";
	int fd, ret;

	if (!kopt_config_plain_entries(src->text, src->len, e, nr))
		return 0;
	if (path)
		return git_entries(e, nr, path, src);
	fd = mkstemp(tmpl);
	if (fd < 0)
		return kopt_error("cannot create a temporary file: %s",
				  strerror(errno));
	if (write(fd, src->text, src->len) != (ssize_t)src->len) {
		close(fd);
		unlink(tmpl);
		return kopt_error("cannot write a temporary file: %s",
				  strerror(errno));
	}
	close(fd);
	ret = git_entries(e, nr, tmpl, src);
	unlink(tmpl);
	return ret;
}

static int load(struct kopt_config *out, const char *path, const char *label,
		const char *text, size_t len, git_config *overlay)
{
	struct source src = { label, text, len, NULL, 0 };
	struct kopt_config_entry *e = NULL;
	size_t nr = 0;
	int ret;

	index_heads(&src);

	set_defaults(out);
	out->path = kopt_strdup(label);
	ret = read_entries(&e, &nr, path, &src);
	if (ret)
		goto done;
	ret = load_entries(out, e, nr, &src);
	if (!ret && overlay)
		ret = overlay_kopt(out, overlay);
	if (!ret)
		ret = validate(out, &src);
done:
	kopt_config_entries_free(e, nr);
	free(src.heads);
	strmap_clear(&src.first);
	if (ret)
		kopt_config_release(out);
	return ret;
}

int kopt_config_load_file(struct kopt_config *out, const char *path,
			  const char *label, git_config *overlay)
{
	struct kopt_buf text = KOPT_BUF_INIT;
	int ret;

	if ((ret = kopt_read_file(&text, path, label)))
		return ret;
	ret = load(out, path, label, text.buf, text.len, overlay);
	kopt_buf_release(&text);
	return ret;
}

int kopt_config_load(struct kopt_config *out, git_repository *repo)
{
	const char *wd = git_repository_workdir(repo);
	git_config *snap = NULL;
	char *path;
	int ret;

	if (!wd)
		return kopt_error("this operation must be run in a work tree");
	path = kopt_xstrfmt("%s.kopt", wd);
	if (git_repository_config_snapshot(&snap, repo) < 0) {
		free(path);
		return kopt_error("cannot read git config: %s",
				  kopt_git_error("unknown error"));
	}
	ret = kopt_config_load_file(out, path, ".kopt", snap);
	git_config_free(snap);
	free(path);
	return ret;
}

int kopt_config_load_buf(struct kopt_config *out, const char *data,
			 size_t len, const char *label)
{
	return load(out, NULL, label, data, len, NULL);
}

void kopt_config_release(struct kopt_config *cfg)
{
	size_t i, j;

	for (i = 0; i < cfg->trials_nr; i++)
		free(cfg->trials[i].name);
	free(cfg->trials);
	for (i = 0; i < cfg->languages_nr; i++) {
		free(cfg->languages[i].name);
		free(cfg->languages[i].catalog);
	}
	free(cfg->languages);
	for (i = 0; i < cfg->kernels_nr; i++) {
		struct kopt_kernel *k = &cfg->kernels[i];
		free(k->name);
		free(k->language);
		free(k->source);
		free(k->build);
		free(k->run);
		free(k->flops);
		free(k->bytes);
		free(k->rename);
		free(k->stages);
		for (j = 0; j < k->params_nr; j++)
			free(k->params[j].name);
		free(k->params);
		for (j = 0; j < k->targets_nr; j++) {
			free(k->targets[j].trial);
			free(k->targets[j].expr);
			free(k->targets[j].text);
		}
		free(k->targets);
		for (j = 0; j < k->tune_nr; j++) {
			free(k->tune[j].name);
			free(k->tune[j].values);
		}
		free(k->tune);
		for (j = 0; j < k->restricts_nr; j++)
			free(k->restricts[j].expr);
		free(k->restricts);
		free(k->tune_default);
		free(k->tune_default_id);
		free(k->tune_time);
	}
	free(cfg->kernels);
	free(cfg->path);
	free(cfg->catalog);
	free(cfg->knowledge);
	free(cfg->agent);
	free(cfg->executor);
	free(cfg->slurm_partition);
	free(cfg->slurm_account);
	free(cfg->slurm_time);
	free(cfg->slurm_gres);
	free(cfg->slurm_device);
	memset(cfg, 0, sizeof(*cfg));
}

const struct kopt_kernel *kopt_config_kernel(const struct kopt_config *cfg,
					     const char *name)
{
	size_t i;

	/* settings come in the file's order: most often the last one */
	for (i = cfg->kernels_nr; i-- > 0;)
		if (!strcmp(cfg->kernels[i].name, name))
			return &cfg->kernels[i];
	return NULL;
}

const struct kopt_trial *kopt_config_trial(const struct kopt_config *cfg,
					   const char *name)
{
	size_t i;

	/* settings come in the file's order: most often the last one */
	for (i = cfg->trials_nr; i-- > 0;)
		if (!strcmp(cfg->trials[i].name, name))
			return &cfg->trials[i];
	return NULL;
}

const struct kopt_language *
kopt_config_language(const struct kopt_config *cfg, const char *name)
{
	size_t i;

	/* settings come in the file's order: most often the last one */
	for (i = cfg->languages_nr; i-- > 0;)
		if (!strcmp(cfg->languages[i].name, name))
			return &cfg->languages[i];
	return NULL;
}

char *kopt_language_catalog_path(const struct kopt_language *lang)
{
	if (lang->catalog)
		return kopt_strdup(lang->catalog);
	return kopt_xstrfmt(".claude/skills/optimization-catalog-%s/SKILL.md",
			    lang->name);
}

void kopt_config_catalogs(struct kopt_strvec *out,
			  const struct kopt_config *cfg)
{
	size_t i;

	kopt_strvec_push(out, cfg->catalog ? cfg->catalog :
			 KOPT_DEFAULT_CATALOG);
	for (i = 0; i < cfg->languages_nr; i++) {
		char *p = kopt_language_catalog_path(&cfg->languages[i]);
		if (p && !kopt_strvec_has(out, p))
			kopt_strvec_push(out, p);
		free(p);
	}
}

static int lookup_var(void *data, const char *name, double *out)
{
	const struct kopt_vars *vars = data;
	size_t i;

	if (vars->have_bst && !name[1] && strchr("bst", name[0])) {
		*out = (double)(name[0] == 'b' ? vars->b :
				name[0] == 's' ? vars->s : vars->t);
		return 0;
	}
	if (vars->kernel)
		for (i = 0; i < vars->kernel->params_nr; i++)
			if (!strcmp(vars->kernel->params[i].name, name)) {
				*out = vars->kernel->params[i].value;
				return 0;
			}
	if (vars->kernel && (vars->tune_values || vars->kernel->tune_default))
		for (i = 0; i < vars->kernel->tune_nr; i++)
			if (!strcmp(vars->kernel->tune[i].name, name)) {
				*out = vars->tune_values ? vars->tune_values[i] :
				       vars->kernel->tune_default[i];
				return 0;
			}
	return KOPT_ENOTFOUND;
}

int kopt_config_eval(const char *expr, const struct kopt_vars *vars,
		     double *out, const char *what)
{
	struct kopt_error_catch why = KOPT_ERROR_CATCH_INIT;
	int ret;

	if (!what)
		return kopt_expr_eval_string(expr, lookup_var, (void *)vars,
					     out, NULL, 0);
	kopt_error_catch(&why);
	ret = kopt_expr_eval_string(expr, lookup_var, (void *)vars, out,
				    NULL, 0);
	kopt_error_uncatch(&why);
	if (ret)
		kopt_error("%s: %s", what, why.cause.buf);
	kopt_error_catch_release(&why);
	return ret;
}

void kopt_config_format_number(struct kopt_buf *out, double v)
{
	if (v == floor(v) && fabs(v) < 1e15)
		kopt_buf_addf(out, "%.0f", v);
	else
		kopt_buf_addf(out, "%.17g", v);
}

static int expand_error(const char *what, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int expand_error(const char *what, const char *fmt, ...)
{
	struct kopt_buf why = KOPT_BUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	kopt_buf_vaddf(&why, fmt, ap);
	va_end(ap);
	if (what)
		kopt_error("%s: %s", what, why.buf);
	else
		kopt_error("%s", why.buf);
	kopt_buf_release(&why);
	return KOPT_EINVALID;
}

int kopt_config_expand(struct kopt_buf *out, const char *tmpl,
		       const struct kopt_vars *vars, const char *what)
{
	const char *p = tmpl;

	while (*p) {
		const char *close;
		char *name;
		const char *sval = NULL;
		double d;
		int ret = 0;

		if (*p != '{') {
			kopt_buf_addch(out, *p++);
			continue;
		}
		close = strchr(p, '}');
		if (!close)
			return expand_error(what, "unclosed '{' in '%s'", tmpl);
		name = kopt_strndup(p + 1, (size_t)(close - p - 1));
		if (!strcmp(name, "kernel"))
			sval = vars->kernel ? vars->kernel->name : NULL;
		else if (!strcmp(name, "version"))
			sval = vars->version;
		else if (!strcmp(name, "tiling"))
			sval = vars->tiling ? vars->tiling : !vars->kernel ? NULL :
			       vars->kernel->tune_default_id;
		if (sval || !strcmp(name, "kernel") || !strcmp(name, "version") ||
		    !strcmp(name, "tiling")) {
			if (!sval)
				ret = expand_error(what, "no value for '{%s}' "
						   "in '%s'", name, tmpl);
			else if (!kopt_valid_name(sval))
				ret = expand_error(what, "refusing to "
						   "substitute '%s' for '{%s}': "
						   "not a plain name", sval,
						   name);
			else
				kopt_buf_addstr(out, sval);
		} else if (lookup_var((void *)vars, name, &d) == 0) {
			kopt_config_format_number(out, d);
		} else {
			ret = expand_error(what, "unknown placeholder '{%s}' in "
					   "'%s'", name, tmpl);
		}
		free(name);
		if (ret)
			return ret;
		p = close + 1;
	}
	return 0;
}

void kopt_config_quote(struct kopt_buf *out, const char *v)
{
	int need = !*v || v[0] == ' ' || v[0] == '\t' ||
		   (*v && (v[strlen(v) - 1] == ' ' || v[strlen(v) - 1] == '\t'));
	const char *p;

	for (p = v; *p && !need; p++)
		if (*p == ';' || *p == '#' || *p == '"' || *p == '\\' ||
		    *p == '\n')
			need = 1;
	if (!need) {
		kopt_buf_addstr(out, v);
		return;
	}
	kopt_buf_addch(out, '"');
	for (p = v; *p; p++) {
		if (*p == '"' || *p == '\\')
			kopt_buf_addch(out, '\\');
		if (*p == '\n') {
			kopt_buf_addstr(out, "\\n");
			continue;
		}
		kopt_buf_addch(out, *p);
	}
	kopt_buf_addch(out, '"');
}

static int load_blob(struct kopt_config *out, int found,
		     const struct kopt_buf *text, const char *label)
{
	if (found)
		return found;
	return kopt_config_load_buf(out, text->buf, text->len, label);
}

/*
 * `text` with the lines of every [kernel] section left empty, so that
 * line numbers stay those of the file.
 */
static void drop_kernels(struct kopt_buf *out, const char *text, size_t len)
{
	const char *p = text, *end = text + len;
	int in_kernel = 0;

	while (p < end) {
		const char *eol = memchr(p, '\n', (size_t)(end - p));
		const char *q;
		if (!eol)
			eol = end;
		q = skip_blanks(p, eol);
		if (q < eol && *q == '[') {
			const char *n = skip_blanks(q + 1, eol);
			in_kernel = eol - n > 6 && !strncasecmp(n, "kernel", 6) &&
				    strchr(" \t\".]", n[6]);
		}
		if (!in_kernel)
			kopt_buf_add(out, p, (size_t)(eol - p));
		if (eol < end)
			kopt_buf_addch(out, '\n');
		p = eol + 1;
	}
}

int kopt_config_load_gate(struct kopt_config *out, git_repository *repo,
			  const git_tree *tree, const char *label)
{
	struct kopt_buf text = KOPT_BUF_INIT, rest = KOPT_BUF_INIT;
	int ret = kopt_repo_read_tree(&text, repo, tree, ".kopt");

	if (!ret) {
		drop_kernels(&rest, text.buf, text.len);
		ret = kopt_config_load_buf(out, rest.buf, rest.len, label);
	}
	kopt_buf_release(&text);
	kopt_buf_release(&rest);
	return ret;
}

int kopt_config_load_tree(struct kopt_config *out, git_repository *repo,
			  const git_tree *tree, const char *label)
{
	struct kopt_buf text = KOPT_BUF_INIT;
	int ret = load_blob(out, kopt_repo_read_tree(&text, repo, tree,
						     ".kopt"), &text, label);

	kopt_buf_release(&text);
	return ret;
}
