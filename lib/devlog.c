#include "devlog.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmark-gfm.h>

#include "cache.h"
#include "decimal.h"
#include "error.h"
#include "lockfile.h"
#include "version.h"
#include "md.h"
#include "version.h"
#include "banned.h"

enum label {
	L_NONE,
	L_PERF,
	L_LOCATION,
	L_WHAT_CHANGED,
	L_DESCRIPTION,
	L_BOTTLENECK,
	L_ROOT_CAUSE,
	L_ISSUES,
	L_INSIGHTS,
	L_NOT_MEASURED,
};

#define LABEL(name, label) { name, sizeof(name) - 1, label }
static const struct {
	const char *name;
	size_t len;
	enum label label;
} label_names[] = {
	LABEL("location", L_LOCATION),
	LABEL("path", L_LOCATION),
	LABEL("source", L_LOCATION),
	LABEL("sources", L_LOCATION),
	LABEL("what changed", L_WHAT_CHANGED),
	LABEL("what's changed", L_WHAT_CHANGED),
	LABEL("what has changed", L_WHAT_CHANGED),
	LABEL("changes", L_WHAT_CHANGED),
	LABEL("changed", L_WHAT_CHANGED),
	LABEL("description", L_DESCRIPTION),
	LABEL("design", L_DESCRIPTION),
	LABEL("bottleneck", L_BOTTLENECK),
	LABEL("root cause", L_ROOT_CAUSE),
	LABEL("issues", L_ISSUES),
	LABEL("remaining issues", L_ISSUES),
	LABEL("open issues", L_ISSUES),
	LABEL("problems", L_ISSUES),
	LABEL("insights", L_INSIGHTS),
	LABEL("key insights", L_INSIGHTS),
	LABEL("lessons", L_INSIGHTS),
	LABEL("lessons learned", L_INSIGHTS),
	LABEL("learnings", L_INSIGHTS),
	/* a performance block's list of what its run could not measure */
	LABEL("not measured", L_NOT_MEASURED),
};

static int list_label(enum label l)
{
	return l == L_WHAT_CHANGED || l == L_DESCRIPTION || l == L_ISSUES ||
	       l == L_INSIGHTS || l == L_NOT_MEASURED;
}

static int perf_part(enum label l)
{
	return l == L_BOTTLENECK || l == L_ROOT_CAUSE || l == L_ISSUES ||
	       l == L_INSIGHTS || l == L_NOT_MEASURED;
}

/* ------------------------------------------------------------------ */
/* Lines */

size_t kopt_devlog_offset(const struct kopt_devlog *dl, int line)
{
	if (line < 1)
		return 0;
	if (line > dl->lines_nr)
		return dl->text.len;
	return dl->line_start[line];
}

/* The content of `line` without its line ending. */
static inline const char *line_at(const struct kopt_devlog *dl, int line,
				  size_t *len)
{
	size_t s = dl->line_start[line], e = dl->line_start[line + 1];

	if (e > s && dl->text.buf[e - 1] == '\n')
		e--;
	if (e > s && dl->text.buf[e - 1] == '\r')
		e--;
	*len = e - s;
	return dl->text.buf + s;
}

static inline int blank(const char *p, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (p[i] != ' ' && p[i] != '\t')
			return 0;
	return 1;
}

static int line_blank(const struct kopt_devlog *dl, int line)
{
	size_t len;
	const char *p;

	if (line < 1 || line > dl->lines_nr)
		return 1;
	p = line_at(dl, line, &len);
	return blank(p, len);
}

static void add_line_end(struct kopt_devlog *dl, size_t next,
			 size_t *alloc)
{
	dl->lines_nr++;
	KOPT_ALLOC_GROW(dl->line_start, (size_t)dl->lines_nr + 2, *alloc);
	dl->line_start[dl->lines_nr + 1] = next;
}

/* Lines end in LF, CRLF or a CR alone. */
static void split_lines(struct kopt_devlog *dl)
{
	const char *p = dl->text.buf;
	size_t start = 0, n = dl->text.len, alloc = 0;
	int crlf = 0, lf = 0, any_cr;

	dl->lines_nr = 0;
	/* lines of 32 bytes or more, most: room for them once */
	KOPT_ALLOC_GROW(dl->line_start, n / 32 + 16, alloc);
	dl->line_start[0] = 0;
	dl->line_start[1] = 0;
	/* no CR in the text (most): no line needs a look for one */
	any_cr = memchr(p, '\r', n) != NULL;

	while (start < n) {
		const char *nl = memchr(p + start, '\n', n - start);
		size_t end = nl ? (size_t)(nl - p) : n;
		const char *cr = any_cr ? memchr(p + start, '\r', end - start) :
				 NULL;

		if (cr && !(nl && cr + 1 == nl)) {
			/* a CR alone ends a line */
			start = cr - p + 1;
			add_line_end(dl, start, &alloc);
			continue;
		}
		if (!nl)
			break;
		if (cr)
			crlf++;
		else
			lf++;
		start = end + 1;
		add_line_end(dl, start, &alloc);
	}
	if (dl->line_start[dl->lines_nr + 1] < n)
		/* a last line without a line ending */
		add_line_end(dl, n, &alloc);
	dl->crlf = crlf > lf;
}

/* ------------------------------------------------------------------ */
/* Inline text */

static int ci_prefix(const char *s, size_t len, const char *prefix)
{
	size_t n = strlen(prefix);

	/* the first byte before the call: most lines differ there */
	return len >= n && tolower((unsigned char)*s) == prefix[0] &&
	       !strncasecmp(s, prefix, n);
}

/* The bytes clean_inline() looks at: the others are copied as they are */
static const unsigned char clean_special[256] = {
	['<'] = 1, ['*'] = 1, ['`'] = 1, ['_'] = 1, [' '] = 1, ['\t'] = 1,
};

/*
 * Plain text of a line of Markdown: emphasis markers, backticks and
 * HTML comments dropped, spaces squeezed, trimmed.
 */
static void clean_inline(struct kopt_buf *out, const char *p, size_t len)
{
	size_t i = 0, start = out->len;
	char *d;

	/* the text only shrinks: room for it once, then byte by byte */
	kopt_buf_grow(out, len);
	d = out->buf + out->len;
	while (i < len) {
		if (!clean_special[(unsigned char)p[i]]) {
			/* most bytes: as they are */
			*d++ = p[i++];
			continue;
		}
		if (p[i] == '<' && len - i >= 4 && !memcmp(p + i, "<!--", 4)) {
			const char *end = NULL;
			size_t j;
			for (j = i + 4; j + 3 <= len; j++)
				if (!memcmp(p + j, "-->", 3)) {
					end = p + j + 3;
					break;
				}
			i = end ? (size_t)(end - p) : len;
			continue;
		}
		if (p[i] == '*' || p[i] == '`' ||
		    (p[i] == '_' && (i == 0 || i + 1 == len ||
				     !isalnum((unsigned char)p[i - 1]) ||
				     !isalnum((unsigned char)p[i + 1])))) {
			i++;
			continue;
		}
		if (p[i] == ' ' || p[i] == '\t') {
			if (d > out->buf + start && d[-1] != ' ')
				*d++ = ' ';
			i++;
			continue;
		}
		*d++ = p[i++];
	}
	while (d > out->buf + start && d[-1] == ' ')
		d--;
	*d = '\0';
	out->len = (size_t)(d - out->buf);
}

/* Text of a node: literals of text and code, breaks as spaces. */
static void node_text(struct kopt_buf *out, cmark_node *n)
{
	cmark_node *c;

	switch (cmark_node_get_type(n)) {
	case CMARK_NODE_TEXT:
	case CMARK_NODE_CODE:
		kopt_buf_addstr(out, cmark_node_get_literal(n));
		return;
	case CMARK_NODE_SOFTBREAK:
	case CMARK_NODE_LINEBREAK:
		kopt_buf_addch(out, ' ');
		return;
	case CMARK_NODE_HTML_INLINE:
	case CMARK_NODE_HTML_BLOCK:
		return;
	default:
		break;
	}
	for (c = cmark_node_first_child(n); c; c = cmark_node_next(c)) {
		if (out->len && cmark_node_get_type(c) == CMARK_NODE_LIST &&
		    out->buf[out->len - 1] != ' ')
			kopt_buf_addch(out, ' ');
		node_text(out, c);
	}
}

static char *node_text_dup(cmark_node *n)
{
	struct kopt_buf sb = KOPT_BUF_INIT;

	node_text(&sb, n);
	kopt_buf_trim(&sb);
	return kopt_buf_detach(&sb, NULL);
}

/* ------------------------------------------------------------------ */
/* Labels */

/*
 * Is this line a label ("**Issues**:", "**Issues:**", "Issues:",
 * "**Performance** (...)")?  On a match, *value is the text after it.
 */
static enum label match_label(const char *p, size_t len, const char **value,
			      size_t *vlen)
{
	size_t i = 0, name_start, name_end, j;
	int bold = 0;
	size_t k;

	while (i < len && i < 3 && p[i] == ' ')
		i++;
	if (i < len && p[i] == '#')
		return L_NONE;
	while (i < len && (p[i] == '*' || p[i] == '_') && bold < 3) {
		i++;
		bold++;
	}
	/* every name below starts with a letter (list items, table rows
	 * and the like end here) */
	if (i >= len || !isalpha((unsigned char)p[i]))
		return L_NONE;
	name_start = i;
	if (ci_prefix(p + i, len - i, "performance") ||
	    ci_prefix(p + i, len - i, "perf")) {
		j = i + (ci_prefix(p + i, len - i, "performance") ? 11 : 4);
		if (j < len && isalpha((unsigned char)p[j]))
			return L_NONE;
		while (j < len && p[j] == ' ')
			j++;
		if (j == len || strchr("(:*_@[-", p[j]) ||
		    (len - j >= 3 && (!memcmp(p + j, "\xe2\x80\x94", 3) ||
				      !memcmp(p + j, "\xe2\x80\x93", 3)))) {
			*value = p + name_start;
			*vlen = len - name_start;
			return L_PERF;
		}
		return L_NONE;
	}
	while (i < len && (isalpha((unsigned char)p[i]) || p[i] == ' ' ||
			   p[i] == '-' || p[i] == '\'' || p[i] == '/'))
		i++;
	name_end = i;
	/* "**X**:" or "**X:**" or "X:" */
	j = i;
	while (j < len && (p[j] == '*' || p[j] == '_'))
		j++;
	if (j < len && p[j] == ':') {
		j++;
		while (j < len && (p[j] == '*' || p[j] == '_'))
			j++;
	} else if (bold && j == len && j > name_end) {
		/* "**What changed**" alone on its line */
	} else {
		return L_NONE;
	}
	while (name_end > name_start && p[name_end - 1] == ' ')
		name_end--;
	if (name_end == name_start)
		return L_NONE;
	*value = p + j;
	*vlen = len - j;
	for (k = 0; k < KOPT_ARRAY_SIZE(label_names); k++) {
		const char *n = label_names[k].name;
		if (label_names[k].len == name_end - name_start &&
		    tolower((unsigned char)p[name_start]) == n[0] &&
		    !strncasecmp(n, p + name_start, name_end - name_start))
			return label_names[k].label;
	}
	if (ci_prefix(p + name_start, name_end - name_start, "high-level") ||
	    ci_prefix(p + name_start, name_end - name_start, "high level"))
		return L_DESCRIPTION;
	return L_NONE;
}

/* ------------------------------------------------------------------ */
/* Performance paragraph */

static int match_key(const char *ctx, size_t len, size_t i, char key,
		     long *out, long *asked)
{
	size_t j;
	long v;

	if (tolower((unsigned char)ctx[i]) != key)
		return 0;
	if (i > 0 && (isalnum((unsigned char)ctx[i - 1]) || ctx[i - 1] == '_'))
		return 0;
	j = i + 1;
	while (j < len && ctx[j] == ' ')
		j++;
	if (j >= len || (ctx[j] != '=' && ctx[j] != ':'))
		return 0;
	j++;
	while (j < len && ctx[j] == ' ')
		j++;
	if (j >= len || !isdigit((unsigned char)ctx[j]))
		return 0;
	/* a whole number as the summary keeps it exactly (to 2^53) */
	for (v = 0; j < len && isdigit((unsigned char)ctx[j]); j++) {
		v = v * 10 + (ctx[j] - '0');
		if (v > (long)KOPT_CACHE_WHOLE_MAX)
			return 0;
	}
	if (v <= 0)
		return 0;
	*out = v;
	while (j < len && ctx[j] == ' ')
		j++;
	if (asked && j < len && ctx[j] == '(' &&
	    ci_prefix(ctx + j + 1, len - j - 1, "asked")) {
		j += 6;
		while (j < len && ctx[j] == ' ')
			j++;
		if (j < len && isdigit((unsigned char)ctx[j])) {
			errno = 0;
			*asked = strtol(ctx + j, NULL, 10);
			if (errno || *asked > (long)KOPT_CACHE_WHOLE_MAX)
				*asked = 0;
		}
	}
	return 1;
}

/* A letter that may start b=, s= or t= */
static int config_key(char c)
{
	switch (c) {
	case 'b': case 's': case 't': case 'B': case 'S': case 'T':
		return 1;
	default:
		return 0;
	}
}

/* A lower-case needle that starts with a letter in s[0, len), without case */
static int ci_contains(const char *s, size_t len, const char *needle)
{
	size_t n = strlen(needle), i;

	/* c | 0x20 is the letter's lower case, and no other byte's */
	for (i = 0; i + n <= len; i++)
		if ((s[i] | 0x20) == needle[0] &&
		    !strncasecmp(s + i + 1, needle + 1, n - 1))
			return 1;
	return 0;
}

/* What kopt_buf_trim() trims */
static int trim_char(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static void parse_perf_context(struct kopt_devlog_perf *pf, const char *p,
			       size_t len, int keep)
{
	struct kopt_buf ctx = KOPT_BUF_INIT, item = KOPT_BUF_INIT;
	const char *open = memchr(p, '(', len);
	int have_b = 0, have_s = 0, have_t = 0, depth = 0;
	size_t i, start, s, e;

	if (open) {
		size_t o = open - p + 1, e;
		for (e = o; e < len; e++) {
			if (p[e] == '(')
				depth++;
			else if (p[e] == ')' && depth-- == 0)
				break;
		}
		clean_inline(&ctx, p + o, e - o);
	} else {
		/* "**Performance @ b=32, s=1, t=4096**:" */
		size_t o = 0;
		while (o < len && isalpha((unsigned char)p[o]))
			o++;
		clean_inline(&ctx, p + o, len - o);
	}
	while (ctx.len && strchr(":@ ", ctx.buf[ctx.len - 1]))
		kopt_buf_setlen(&ctx, ctx.len - 1);
	for (i = 0; i < ctx.len && strchr(":@ -", ctx.buf[i]); i++)
		;
	if (i)
		kopt_buf_splice(&ctx, 0, i, NULL, 0);
	if (keep)
		pf->context = kopt_strdup(ctx.buf);

	for (i = 0; i < ctx.len; i++) {
		long asked = 0;
		if (!config_key(ctx.buf[i]))
			continue;
		if (!have_b && match_key(ctx.buf, ctx.len, i, 'b', &pf->b,
					 &asked)) {
			have_b = 1;
			pf->b_requested = asked ? asked : pf->b;
		} else if (!have_s && match_key(ctx.buf, ctx.len, i, 's',
						&pf->s, NULL)) {
			have_s = 1;
		} else if (!have_t && match_key(ctx.buf, ctx.len, i, 't',
						&pf->t, NULL)) {
			have_t = 1;
		}
	}
	pf->has_config = have_b && have_s && have_t;
	if (!pf->has_config && open) {
		/* "**Performance @ b=4096 s=1 t=14336** (H200):" */
		kopt_buf_reset(&item);
		clean_inline(&item, p, len);
		have_b = have_s = have_t = 0;
		for (i = 0; i < item.len; i++) {
			long asked = 0;
			if (!config_key(item.buf[i]))
				continue;
			if (!have_b && match_key(item.buf, item.len, i, 'b',
						 &pf->b, &asked)) {
				have_b = 1;
				pf->b_requested = asked ? asked : pf->b;
			} else if (!have_s && match_key(item.buf, item.len, i,
							's', &pf->s, NULL)) {
				have_s = 1;
			} else if (!have_t && match_key(item.buf, item.len, i,
							't', &pf->t, NULL)) {
				have_t = 1;
			}
		}
		pf->has_config = have_b && have_s && have_t;
	}

	/* items at depth 0: the first is the device unless it is b=... */
	depth = 0;
	start = 0;
	for (i = 0; i <= ctx.len; i++) {
		if (i < ctx.len && ctx.buf[i] == '(')
			depth++;
		else if (i < ctx.len && ctx.buf[i] == ')')
			depth--;
		if (i < ctx.len && (ctx.buf[i] != ',' || depth > 0))
			continue;
		/* the item, trimmed, in place (the text holds no NUL) */
		s = start;
		e = i;
		while (s < e && trim_char(ctx.buf[s]))
			s++;
		while (e > s && trim_char(ctx.buf[e - 1]))
			e--;
		if (start == 0 && e > s && !memchr(ctx.buf + s, '=', e - s))
			pf->device = kopt_strndup(ctx.buf + s, e - s);
		if (ci_contains(ctx.buf + s, e - s, "replay"))
			pf->replayed = 1;
		start = i + 1;
	}
	kopt_buf_release(&ctx);
	kopt_buf_release(&item);
}

/* ------------------------------------------------------------------ */
/* Performance table */

/* The keywords of metric_of(), one bit each */
enum {
	MK_DURATION = 1 << 0, MK_TFLOP = 1 << 1, MK_GBPS = 1 << 2,
	MK_OCC = 1 << 3, MK_TENSOR = 1 << 4, MK_DRAM = 1 << 5, MK_L2 = 1 << 6,
	MK_SPILL = 1 << 7, MK_REG = 1 << 8, MK_WAVE = 1 << 9,
	MK_ROOFLINE = 1 << 10
};

/* s[i, len) starts with w */
#define AT(w) (len - i >= sizeof(w) - 1 && !memcmp(s + i, w, sizeof(w) - 1))

/*
 * The metric a row's name (lower case) names: the keywords it holds, in
 * one pass, then the first kind in the order below that has one.
 */
static int metric_of_lower(const char *s, size_t len)
{
	static const struct {
		unsigned bit;
		int metric;
	} order[] = {
		{ MK_DURATION, KOPT_METRIC_DURATION_US },
		{ MK_TFLOP, KOPT_METRIC_TFLOPS },
		{ MK_GBPS, KOPT_METRIC_GBPS },
		{ MK_OCC, KOPT_METRIC_OCC_PCT },
		{ MK_TENSOR, KOPT_METRIC_TC_PCT },
		{ MK_DRAM, KOPT_METRIC_DRAM_PCT },
		{ MK_L2, KOPT_METRIC_L2_HIT_PCT },
		{ MK_SPILL, KOPT_METRIC_SPILL_BYTES },
		{ MK_REG, KOPT_METRIC_REGS },
		{ MK_WAVE, KOPT_METRIC_WAVES },
		{ MK_ROOFLINE, KOPT_METRIC_ROOFLINE_PCT },
	};
	unsigned seen = 0;
	size_t i, k;

	if (kopt_str_eq(s, "occ"))
		seen |= MK_OCC;
	if (s[0] == 't' && s[1] == 'c')
		seen |= MK_TENSOR;
	for (i = 0; i < len; i++) {
		switch (s[i]) {
		case 'b':
			if (AT("bandwidth"))
				seen |= MK_GBPS;
			break;
		case 'd':
			if (AT("duration"))
				seen |= MK_DURATION;
			else if (AT("dram"))
				seen |= MK_DRAM;
			break;
		case 'g':
			if (AT("gb/s") || AT("gbps"))
				seen |= MK_GBPS;
			break;
		case 'l':
			if (AT("latency"))
				seen |= MK_DURATION;
			else if (AT("l2"))
				seen |= MK_L2;
			else if (AT("local"))
				seen |= MK_SPILL;
			break;
		case 'o':
			if (AT("occupancy") || AT("occ%") || AT("occ."))
				seen |= MK_OCC;
			break;
		case 'r':
			if (AT("reg"))
				seen |= MK_REG;
			else if (AT("roofline"))
				seen |= MK_ROOFLINE;
			break;
		case 's':
			if (AT("spill"))
				seen |= MK_SPILL;
			break;
		case 't':
			if (AT("time"))
				seen |= MK_DURATION;
			else if (AT("tflop"))
				seen |= MK_TFLOP;
			else if (AT("tb/s"))
				seen |= MK_GBPS;
			else if (AT("tensor"))
				seen |= MK_TENSOR;
			break;
		case 'w':
			if (AT("wave"))
				seen |= MK_WAVE;
			break;
		default:
			break;
		}
	}
	for (k = 0; seen && k < KOPT_ARRAY_SIZE(order); k++)
		if (seen & order[k].bit)
			return order[k].metric;
	return -1;
}

#undef AT

/*
 * The last names seen, by thread: devlogs repeat their tables' row
 * names, table after table, and a name's metric never changes.
 */
#define METRIC_MEMO 16
#define METRIC_MEMO_NAME 32
static __thread struct {
	unsigned char len;      /* 0: empty */
	signed char metric;
	char name[METRIC_MEMO_NAME];
} metric_memo[METRIC_MEMO];

/* The metric that name[0, len) names, or -1 */
static int metric_of_span(const char *name, size_t len)
{
	char small[64], *s;
	size_t i, h = 0;
	int m;

	if (len && len < METRIC_MEMO_NAME) {
		h = (len * 31 + (unsigned char)name[0] * 7 +
		     (unsigned char)name[len - 1]) % METRIC_MEMO;
		if (metric_memo[h].len == len &&
		    !memcmp(metric_memo[h].name, name, len))
			return metric_memo[h].metric;
	}
	/* a name of a table's row is short: no allocation for it */
	s = len < sizeof(small) ? small : kopt_malloc(len + 1);
	/* ASCII is enough: every name looked for is ASCII */
	for (i = 0; i < len; i++)
		s[i] = name[i] >= 'A' && name[i] <= 'Z' ? name[i] + 32 :
			name[i];
	s[len] = '\0';
	m = metric_of_lower(s, len);
	if (s != small)
		free(s);
	if (len && len < METRIC_MEMO_NAME) {
		metric_memo[h].len = (unsigned char)len;
		metric_memo[h].metric = (signed char)m;
		memcpy(metric_memo[h].name, name, len);
	}
	return m;
}

static int metric_of(const char *name)
{
	return metric_of_span(name, strlen(name));
}

static double parse_value(int metric, const char *v)
{
	char small[64], *num;
	const char *p = v;
	char *end;
	size_t n = 0, cap;
	double d;

	while (*p && !isdigit((unsigned char)*p) && *p != '.' && *p != '-')
		p++;
	cap = strlen(p) + 1;
	num = cap <= sizeof(small) ? small : kopt_malloc(cap);
	for (; *p && (isdigit((unsigned char)*p) || *p == '.' || *p == ',' ||
		      *p == '-' || *p == 'e' || *p == 'E'); p++)
		if (*p != ',')
			num[n++] = *p;
	num[n] = '\0';
	if (!kopt_decimal_plain(&d, num, n)) {
		errno = 0;
		d = strtod(num, &end);
		if (!n || *end || errno || !isfinite(d))
			d = NAN;
	}
	if (num != small)
		free(num);
	if (isnan(d))
		return NAN;
	while (*p == ' ')
		p++;
	if (metric == KOPT_METRIC_DURATION_US) {
		if (!strncmp(p, "ms", 2))
			d *= 1000.0;
		else if (!strncmp(p, "ns", 2))
			d /= 1000.0;
		else if (*p == 's' && !isalpha((unsigned char)p[1]))
			d *= 1e6;
	} else if (metric == KOPT_METRIC_GBPS) {
		if (!strncasecmp(p, "tb/s", 4))
			d *= 1000.0;
	}
	return d;
}

static char *cell_text(cmark_node *row, int col)
{
	cmark_node *c = cmark_node_first_child(row);
	int i;

	for (i = 0; c && i < col; i++)
		c = cmark_node_next(c);
	return c ? node_text_dup(c) : NULL;
}

/* Which column holds the value and which the change, from the header. */
static void header_cell(const char *h, size_t len, int i, int *value_col,
			int *vs_col)
{
	if (i > 0 && ci_contains(h, len, "value"))
		*value_col = i;
	else if (i > 0 && (ci_contains(h, len, "vs") ||
			   ci_contains(h, len, "previous") ||
			   ci_contains(h, len, "change") ||
			   ci_contains(h, len, "delta")))
		*vs_col = i;
}

/* The metric a row of the table's body gives (NULL cells: none). */
static void row_metric(struct kopt_devlog_perf *pf, const char *metric,
		       const char *value)
{
	int m = metric_of(metric ? metric : "");

	if (m >= 0 && !kopt_results_has(pf->metrics[m]))
		pf->metrics[m] = parse_value(m, value ? value : "");
}

/*
 * A row of the table's body; takes the cells (NULL: none).  The views'
 * reading (`keep` 0) keeps only the metric: no view reads the rows.
 */
static void add_row(struct kopt_devlog_perf *pf, char *metric, char *value,
		    char *vs, int keep)
{
	struct kopt_devlog_row *r;

	row_metric(pf, metric, value);
	if (!keep) {
		free(metric);
		free(value);
		free(vs);
		return;
	}
	KOPT_ALLOC_GROW(pf->rows, pf->rows_nr + 1, pf->rows_alloc);
	r = &pf->rows[pf->rows_nr++];
	r->metric = metric ? metric : kopt_strdup("");
	r->value = value ? value : kopt_strdup("");
	r->vs = vs;
}

static void parse_table(struct kopt_devlog_perf *pf, cmark_node *table,
			int keep)
{
	cmark_node *row = cmark_node_first_child(table), *c;
	int value_col = 1, vs_col = -1, i;

	if (!row)
		return;
	for (c = cmark_node_first_child(row), i = 0; c;
	     c = cmark_node_next(c), i++) {
		char *h = node_text_dup(c);
		header_cell(h, strlen(h), i, &value_col, &vs_col);
		free(h);
	}
	for (row = cmark_node_next(row); row; row = cmark_node_next(row))
		add_row(pf, cell_text(row, 0), cell_text(row, value_col),
			keep && vs_col >= 0 ? cell_text(row, vs_col) : NULL,
			keep);
}

/* ------------------------------------------------------------------ */
/* Version headings */

static const char *const status_words[] = {
	"abandoned", "failed", "regression", "reverted", "dropped", "wip",
	"superseded", "discarded", NULL
};

static int parse_version_heading(const char *text, char **name, long *num,
				 char **title, char **note)
{
	const char *p = text, *end;
	struct kopt_buf t = KOPT_BUF_INIT;

	while (*p == ' ')
		p++;
	if (!strncasecmp(p, "version", 7)) {
		p += 7;
		while (*p == ' ')
			p++;
	} else if (*p == 'v' || *p == 'V') {
		p++;
	} else {
		return 0;
	}
	/* "V01" is no version, as "v01" is none */
	if ((*num = kopt_version_digits(p, &end)) < 0)
		return 0;
	p = end;
	if (isalnum((unsigned char)*p) || *p == '_')
		return 0;
	*name = kopt_version_name(*num);
	*note = NULL;
	while (*p == ' ')
		p++;
	if (*p == '(') {
		const char *close = strchr(p, ')');
		if (close) {
			*note = kopt_strndup(p + 1, close - p - 1);
			p = close + 1;
			while (*p == ' ')
				p++;
		}
	}
	if (*p == ':' || *p == '-' || *p == '.' || *p == '|' || *p == '=')
		p++;
	else if (!strncmp(p, "\xe2\x80\x94", 3) || !strncmp(p, "\xe2\x80\x93", 3))
		p += 3;
	kopt_buf_addstr(&t, p);
	kopt_buf_trim(&t);
	if (!*note && t.len && t.buf[t.len - 1] == ')') {
		char *open = strrchr(t.buf, '(');
		const char *const *w;
		for (w = status_words; open && *w; w++)
			if (!strncasecmp(open + 1, *w, strlen(*w))) {
				*note = kopt_strndup(open + 1,
						     t.buf + t.len - 1 - open - 1);
				kopt_buf_setlen(&t, open - t.buf);
				kopt_buf_trim(&t);
				break;
			}
	}
	*title = kopt_buf_detach(&t, NULL);
	return 1;
}

/* ------------------------------------------------------------------ */
/* Preparing the text for cmark */

/*
 * cmark reads a copy of the text in which front matter is blanked and a
 * blank line is inserted where the writer meant a new block but
 * CommonMark would continue the previous one (a label line right under
 * a paragraph, list or table; a table right under a paragraph).
 * orig[n] is the line of the file that line n of the copy came from.
 */
struct prepared {
	struct kopt_buf text;
	int *orig;
	size_t nr, alloc;
	size_t *at;             /* offset of line n in text, and at[nr] its
				 * end */
	size_t at_alloc;
};

static void prep_line(struct prepared *pp, const char *p, size_t len,
		      int orig)
{
	struct kopt_buf *t = &pp->text;
	size_t n;

	KOPT_ALLOC_GROW(pp->orig, pp->nr + 2, pp->alloc);
	if (!pp->nr)
		pp->orig[pp->nr++] = 0;   /* line numbers are 1-based */
	n = pp->nr;
	pp->orig[pp->nr++] = orig;
	KOPT_ALLOC_GROW(pp->at, n + 2, pp->at_alloc);
	pp->at[0] = 0;
	/* prepare() made room for the text: a call only past it */
	if (t->len + len + 2 > t->alloc)
		kopt_buf_grow(t, len + 1);
	pp->at[n] = t->len;
	memcpy(t->buf + t->len, p, len);
	t->len += len;
	t->buf[t->len++] = '\n';
	t->buf[t->len] = '\0';
	pp->at[n + 1] = t->len;
}

/*
 * A code fence as cmark reads one: an opening fence of backticks has
 * none in its info string; a closing fence has nothing after it but
 * white space.
 */
static inline int fence_of(const char *p, size_t len, int closing,
			   char *ch, size_t *n)
{
	size_t i = 0, k;

	while (i < len && i < 3 && p[i] == ' ')
		i++;
	if (i >= len || (p[i] != '`' && p[i] != '~'))
		return 0;
	for (k = i; k < len && p[k] == p[i]; k++)
		;
	if (k - i < 3)
		return 0;
	if (closing ? !blank(p + k, len - k) :
	    p[i] == '`' && memchr(p + k, '`', len - k))
		return 0;
	*ch = p[i];
	*n = k - i;
	return 1;
}

static int delimiter_row(const char *p, size_t len)
{
	size_t i;
	int dash = 0, pipe = 0;

	for (i = 0; i < len; i++) {
		if (p[i] == '-')
			dash = 1;
		else if (p[i] == '|')
			pipe = 1;
		else if (p[i] != ':' && p[i] != ' ' && p[i] != '\t')
			return 0;
	}
	return dash && pipe;
}

/*
 * The line starts an HTML comment block that goes on below it.  A "<!--"
 * after other text on the line is inline: it cannot hide the lines
 * below from the block structure, so they are prepared like any others.
 */
static int comment_opens(const char *p, size_t len)
{
	size_t i = 0;

	while (i < len && (p[i] == ' ' || p[i] == '\t'))
		i++;
	if (len - i < 4 || memcmp(p + i, "<!--", 4))
		return 0;
	/* cmark ends the block on a line holding "-->", its first too */
	return !memmem(p + i + 2, len - i - 2, "-->", 3);
}

static void prepare(struct prepared *pp, const struct kopt_devlog *dl)
{
	char fence = 0;
	size_t fence_n = 0;
	int i, in_comment = 0, in_table = 0, last_blank = 1;

	/* the copy is the text and at most a line added before each: room
	 * for it once, and for the lines' numbers */
	kopt_buf_grow(&pp->text, dl->text.len + dl->lines_nr + 64);
	KOPT_ALLOC_GROW(pp->orig, 2 * (size_t)dl->lines_nr + 2, pp->alloc);
	KOPT_ALLOC_GROW(pp->at, 2 * (size_t)dl->lines_nr + 3, pp->at_alloc);
	for (i = 1; i <= dl->lines_nr; i++) {
		size_t len, nlen = 0, vlen;
		const char *p = line_at(dl, i, &len), *v, *next = NULL;
		/* line_blank(dl, i - 1), kept from the line before */
		int prev_blank = i == 1 || i - 1 <= dl->front_matter_last ||
				 last_blank;
		int bar, opens_table;
		char ch;
		size_t n;

		last_blank = blank(p, len);
		if (i <= dl->front_matter_last) {
			prep_line(pp, "", 0, i);
			continue;
		}
		/*
		 * cmark skips one byte order mark at the start: so does
		 * this copy, unless a second follows, which cmark would
		 * then skip too (it is text, U+FEFF): left in, for cmark
		 * to skip the first
		 */
		if (i == 1 && len >= 3 && !memcmp(p, "\xef\xbb\xbf", 3) &&
		    (len < 6 || memcmp(p + 3, "\xef\xbb\xbf", 3))) {
			p += 3;
			len -= 3;
		}
		if (i < dl->lines_nr)
			next = line_at(dl, i + 1, &nlen);
		if (fence) {
			if (fence_of(p, len, 1, &ch, &n) && ch == fence &&
			    n >= fence_n)
				fence = 0;
			prep_line(pp, p, len, i);
			continue;
		}
		if (in_comment) {
			if (memmem(p, len, "-->", 3))
				in_comment = 0;
			prep_line(pp, p, len, i);
			continue;
		}
		/* one look for a pipe, and at the line below, a line */
		bar = memchr(p, '|', len) != NULL;
		if (in_table && (last_blank || !bar)) {
			in_table = 0;
			if (!last_blank) {
				prep_line(pp, "", 0, i);
				prev_blank = 1;
			}
		}
		opens_table = !in_table && bar && next &&
			      delimiter_row(next, nlen);
		if (!prev_blank && len && p[0] != ' ' && p[0] != '\t' &&
		    match_label(p, len, &v, &vlen) != L_NONE)
			prep_line(pp, "", 0, i);
		else if (!prev_blank && opens_table)
			prep_line(pp, "", 0, i);
		if (opens_table)
			in_table = 1;
		if (fence_of(p, len, 0, &ch, &n)) {
			fence = ch;
			fence_n = n;
		} else if (comment_opens(p, len)) {
			in_comment = 1;
		}
		prep_line(pp, p, len, i);
	}
}

/* ------------------------------------------------------------------ */
/* The walk over the top-level blocks */

struct block {
	cmark_node *node;       /* NULL when the quick reading found it */
	cmark_node_type type;
	int first, last;        /* lines of the file */
	int level;              /* headings */
	char *text;             /* a heading's text (owned) */
	int comment;            /* an HTML block that is a comment */
	int is_table;
	int rows, rows_nr;      /* the quick reading's table: its prepared
				 * lines (header, delimiter, body) */
};

/* ------------------------------------------------------------------ */
/* The quick reading: cmark's blocks without cmark's tree */

/*
 * What cmark makes of the prepared text, found line by line, for the
 * forms devlogs are written in: ATX headings, paragraphs, bullet lists
 * whose items hold paragraphs, tables, fenced and indented code, HTML
 * comments and thematic breaks.  A heading's or a cell's text is its
 * bytes when they hold nothing cmark reads inline (emphasis, code spans,
 * links, entities, escapes, HTML).  Anything else (block quotes, ordered
 * or nested lists, setext headings, other HTML, a tab in an indentation,
 * link reference definitions, control characters...) gives up: the
 * caller then asks cmark, so the answer is always cmark's.
 */
enum { S_NONE, S_PARA, S_FENCE, S_COMMENT, S_TABLE, S_LIST, S_CODE };

#define GIVE_UP (-1)
#define SCAN_MAX_CELLS 64       /* a wider table is left to cmark */

/* A line's first byte that could make it other than a table's row */
static inline int may_end_table(char c)
{
	switch (c) {
	case '#': case '>': case '`': case '~': case '<': case '=': case '-':
	case '*': case '+': case '_': case '\\': case '\0':
	case '0': case '1': case '2': case '3': case '4':
	case '5': case '6': case '7': case '8': case '9':
		return 1;
	default:
		return 0;
	}
}

/* Nothing in p[0, len) that cmark's inline parser would read. */
/*
 * What plain_text() looks for, a lookup a byte: 1 for the control
 * characters other than a tab and what cmark reads inline, 2 for a tab.
 */
static unsigned char inline_class[256];
static pthread_once_t inline_class_once = PTHREAD_ONCE_INIT;

static void inline_class_make(void)
{
	static const char syntax[] = "\\`*_&<[]!\x7f";
	const char *s;
	int c;

	for (c = 0; c < 0x20; c++)
		inline_class[c] = 1;
	inline_class['\t'] = 2;
	for (s = syntax; *s; s++)
		inline_class[(unsigned char)*s] = 1;
}

static int plain_text(const char *p, size_t len, int tabs)
{
	const unsigned char stop = tabs ? 1 : 3;
	size_t i;

	for (i = 0; i < len; i++)
		if (inline_class[(unsigned char)p[i]] & stop)
			return 0;
	return 1;
}

static inline int atx_level(const char *p, size_t len, size_t ind)
{
	size_t k = ind;

	if (ind > 3)
		return 0;
	while (k < len && p[k] == '#' && k - ind < 7)
		k++;
	if (k == ind || k - ind > 6 ||
	    (k < len && p[k] != ' ' && p[k] != '\t'))
		return 0;
	return (int)(k - ind);
}

/* A thematic break: three or more of one of * - _, spaces between. */
static inline int thematic_break(const char *p, size_t len, size_t ind)
{
	size_t i, n = 0;
	char c;

	if (ind > 3 || ind >= len ||
	    (p[ind] != '*' && p[ind] != '-' && p[ind] != '_'))
		return 0;
	c = p[ind];
	for (i = ind; i < len; i++) {
		if (p[i] == c)
			n++;
		else if (p[i] != ' ' && p[i] != '\t')
			return 0;
	}
	return n >= 3;
}

/* A setext underline: a run of = or of -, then white space only. */
static int setext_line(const char *p, size_t len, size_t ind)
{
	size_t i = ind;

	if (ind > 3 || ind >= len || (p[ind] != '=' && p[ind] != '-'))
		return 0;
	while (i < len && p[i] == p[ind])
		i++;
	return blank(p + i, len - i);
}

/*
 * A bullet list item at `ind`: 1 with the column of its content in *w,
 * 0 when there is none, GIVE_UP for the items left to cmark (empty,
 * a tab after the marker, code in the item).
 */
static inline int bullet_item(const char *p, size_t len, size_t ind,
			      size_t *w)
{
	size_t s = 0;

	if (ind > 3 || ind >= len ||
	    (p[ind] != '-' && p[ind] != '+' && p[ind] != '*'))
		return 0;
	if (ind + 1 < len && p[ind + 1] != ' ' && p[ind + 1] != '\t')
		return 0;
	while (ind + 1 + s < len && p[ind + 1 + s] == ' ')
		s++;
	if (ind + 1 + s == len || s > 4 || p[ind + 1 + s] == '\t')
		return GIVE_UP;
	*w = ind + 1 + s;
	return 1;
}

/* What may be an ordered list item: digits, '.' or ')', a space. */
static inline int ordered_item(const char *p, size_t len, size_t ind)
{
	size_t i = ind;

	while (i < len && isdigit((unsigned char)p[i]))
		i++;
	return i > ind && i < len && (p[i] == '.' || p[i] == ')') &&
	       (i + 1 == len || p[i + 1] == ' ' || p[i + 1] == '\t');
}

/* The spaces before the first other byte. */
static size_t indent_of(const char *p, size_t len)
{
	size_t i = 0;

	while (i < len && p[i] == ' ')
		i++;
	return i;
}

static int space_char(char c)
{
	return c == ' ' || c == '\t';
}

/* One column of a delimiter row at p[*i]: spaces, :?, -+, :?, spaces. */
static int table_marker(const char *p, size_t len, size_t *i)
{
	size_t j = *i;

	while (j < len && space_char(p[j]))
		j++;
	if (j < len && p[j] == ':')
		j++;
	if (j >= len || p[j] != '-')
		return 0;
	while (j < len && p[j] == '-')
		j++;
	if (j < len && p[j] == ':')
		j++;
	while (j < len && space_char(p[j]))
		j++;
	*i = j;
	return 1;
}

/*
 * cmark-gfm's delimiter row from `ind` (not indented: the caller's to
 * check): its number of columns, or 0.
 */
static int table_start(const char *p, size_t len, size_t ind)
{
	size_t i = ind;
	int n = 0;

	if (i < len && p[i] == '|')
		i++;
	if (!table_marker(p, len, &i))
		return 0;
	n = 1;
	while (i < len) {
		size_t j = i + 1;
		if (p[i] != '|')
			return 0;
		if (table_marker(p, len, &j)) {
			i = j;
			n++;
			continue;
		}
		/* the closing pipe, then white space only */
		return blank(p + i + 1, len - i - 1) ? n : 0;
	}
	return n;
}

/*
 * The cells of a table row from `ind`, as cmark-gfm splits and trims
 * them (there is no backslash: that is left to cmark); each as offsets
 * in cell[2 * k], cell[2 * k + 1] while k < max.  The number of cells;
 * without `cell`, GIVE_UP when a cell holds inline syntax.  `stop`: no
 * more than `max` cells are looked for (nor counted).
 */
static int row_cells(const char *p, size_t len, size_t ind, size_t *cell,
		     int max, int stop)
{
	size_t i = ind;
	int n = 0;

	if (i < len && p[i] == '|') {
		i++;
		while (i < len && space_char(p[i]))
			i++;
	}
	while (i < len) {
		const char *bar = memchr(p + i, '|', len - i);
		size_t s = i, e, j = bar ? (size_t)(bar - p) : len;
		int pipe = bar != NULL;

		e = j;
		while (s < e && space_char(p[s]))
			s++;
		while (e > s && space_char(p[e - 1]))
			e--;
		if (!cell && !plain_text(p + s, e - s, 1))
			return GIVE_UP;
		if (n < max) {
			cell[2 * n] = s;
			cell[2 * n + 1] = e;
		}
		n++;
		if (stop && n == max)
			break;
		i = j;
		if (pipe) {
			i++;
			while (i < len && space_char(p[i]))
				i++;
		}
	}
	return n;
}

/* Prepared line n without its newline. */
static const char *prep_at(const struct prepared *pp, size_t n, size_t *len)
{
	*len = pp->at[n + 1] - pp->at[n] - 1;
	return pp->text.buf + pp->at[n];
}

static char *cell_dup(const char *p, const size_t *cell, int k, int n,
		      int ncols)
{
	if (k < n)
		return kopt_strndup(p + cell[2 * k], cell[2 * k + 1] -
				    cell[2 * k]);
	/* cmark-gfm pads a short row with empty cells */
	return k < ncols ? kopt_strdup("") : NULL;
}

/*
 * Cell k of a row as a string in `small` (or allocated, in *big, when it
 * is long), for row_metric(); NULL where cell_dup() gives NULL.
 */
static const char *cell_in(char *small, size_t size, char **big,
			   const char *p, const size_t *cell, int k, int n,
			   int ncols)
{
	size_t len;

	if (k >= n)
		return k < ncols ? "" : NULL;
	len = cell[2 * k + 1] - cell[2 * k];
	if (len >= size)
		small = *big = kopt_malloc(len + 1);
	memcpy(small, p + cell[2 * k], len);
	small[len] = '\0';
	return small;
}

/* The table the quick reading found, as parse_table() reads cmark's. */
static void parse_table_lines(struct kopt_devlog_perf *pf,
			      const struct prepared *pp,
			      const struct block *b, int keep)
{
	size_t cell[2 * SCAN_MAX_CELLS], len;
	const char *p = prep_at(pp, b->rows, &len);
	int value_col = 1, vs_col = -1, ncols, n, i;

	ncols = row_cells(p, len, indent_of(p, len), cell, SCAN_MAX_CELLS,
			  0);
	for (i = 0; i < ncols && i < SCAN_MAX_CELLS; i++)
		header_cell(p + cell[2 * i], cell[2 * i + 1] - cell[2 * i], i,
			    &value_col, &vs_col);
	for (i = 2; i < b->rows_nr; i++) {
		p = prep_at(pp, b->rows + i, &len);
		/* the views' reading needs the name and the value only */
		n = row_cells(p, len, indent_of(p, len), cell,
			      keep ? SCAN_MAX_CELLS : value_col + 1, !keep);
		if (n > ncols)
			n = ncols;
		if (!keep) {
			/* row_metric() without a copy of the name */
			char value[64], *big = NULL;
			const char *v;
			int m = n < 1 ? -1 :
				metric_of_span(p + cell[0], cell[1] - cell[0]);
			if (m < 0 || kopt_results_has(pf->metrics[m]))
				continue;
			v = cell_in(value, sizeof(value), &big, p, cell,
				    value_col, n, ncols);
			pf->metrics[m] = parse_value(m, v ? v : "");
			free(big);
			continue;
		}
		add_row(pf, cell_dup(p, cell, 0, n, ncols),
			cell_dup(p, cell, value_col, n, ncols),
			vs_col >= 0 ? cell_dup(p, cell, vs_col, n, ncols) :
			NULL, 1);
	}
}

/*
 * Could the text at p[i] start a block other than a paragraph, or turn
 * the paragraph above into a heading or a table?
 */
static int starts_block(const char *p, size_t len, size_t i)
{
	const char *q = p + i;
	size_t l = len - i, w;
	char ch;

	return i < len && (*q == '<' || *q == '>' || atx_level(q, l, 0) ||
			   fence_of(q, l, 0, &ch, &w) ||
			   setext_line(q, l, 0) ||
			   thematic_break(q, l, 0) ||
			   bullet_item(q, l, 0, &w) ||
			   ordered_item(q, l, 0) || table_start(q, l, 0));
}

static struct block *add_block(const struct prepared *pp, struct block **bl,
			       size_t *nr, size_t *alloc,
			       cmark_node_type type, size_t n)
{
	struct block *b;

	/* blocks are parted by blank lines, most: room for them once */
	if (!*alloc)
		KOPT_ALLOC_GROW(*bl, pp->nr / 2 + 16, *alloc);
	KOPT_ALLOC_GROW(*bl, *nr + 1, *alloc);
	b = &(*bl)[(*nr)++];
	memset(b, 0, sizeof(*b));
	b->type = type;
	b->first = pp->orig[n];
	return b;
}

/* An ATX heading's text as cmark reads it, or GIVE_UP. */
static int add_heading(const struct prepared *pp, struct block **bl,
		       size_t *nr, size_t *alloc, size_t n, const char *p,
		       size_t len, size_t ind, int level)
{
	size_t s = ind + level, e = len, k;
	struct block *b;

	if (memchr(p, '\t', len))
		return GIVE_UP;
	/* the closing sequence: #s after a space, and spaces */
	while (e > 0 && p[e - 1] == ' ')
		e--;
	k = e;
	while (k > 0 && p[k - 1] == '#')
		k--;
	if (k < e && k > 0 && p[k - 1] == ' ') {
		e = k;
		while (e > 0 && p[e - 1] == ' ')
			e--;
	}
	while (s < len && p[s] == ' ')
		s++;
	if (e < s)
		e = s;
	if (!plain_text(p + s, e - s, 0))
		return GIVE_UP;
	b = add_block(pp, bl, nr, alloc, CMARK_NODE_HEADING, n);
	b->level = level;
	b->text = kopt_strndup(p + s, e - s);
	return 0;
}

static int scan_blocks(struct prepared *pp, struct block **bl, size_t *nr,
		       size_t *alloc)
{
	size_t n, w = 0, fence_n = 0, para = 0, table = 0;
	int state = S_NONE, blank_seen = 0, para_lines = 0;
	char fence = 0, bullet = 0;

	/* prep_line() noted where each prepared line starts */
	for (n = 1; n < pp->nr; n++) {
		size_t len, ind, k, tmp;
		const char *p = prep_at(pp, n, &len);
		int r, level;
		char ch;

		if (state == S_FENCE) {
			if (fence_of(p, len, 1, &ch, &k) && ch == fence &&
			    k >= fence_n)
				state = S_NONE;
			continue;
		}
		if (state == S_COMMENT) {
			if (memmem(p, len, "-->", 3))
				state = S_NONE;
			continue;
		}
		if (blank(p, len)) {
			if (state == S_LIST)
				blank_seen = 1;
			else if (state != S_CODE)
				state = S_NONE;
			continue;
		}
		ind = indent_of(p, len);
		if (p[ind] == '\t')
			return GIVE_UP;

		switch (state) {
		case S_CODE:
			if (ind >= 4)
				continue;
			state = S_NONE;
			break;
		case S_TABLE:
			if (ind >= 4 || may_end_table(p[ind]))
				return GIVE_UP;
			r = row_cells(p, len, ind, NULL, 0, 0);
			if (r <= 0 || r > SCAN_MAX_CELLS)
				return GIVE_UP;
			(*bl)[table].rows_nr++;
			continue;
		case S_LIST:
			if (ind >= w) {
				/* the item goes on: a paragraph's lines */
				if ((blank_seen && ind - w >= 4) ||
				    starts_block(p, len, ind))
					return GIVE_UP;
				blank_seen = 0;
				continue;
			}
			if (thematic_break(p, len, ind))
				return GIVE_UP;
			r = bullet_item(p, len, ind, &k);
			if (r == GIVE_UP || (r && p[ind] != bullet))
				return GIVE_UP;
			if (r) {
				/* the list's next item */
				if (starts_block(p, len, k))
					return GIVE_UP;
				w = k;
				blank_seen = 0;
				continue;
			}
			if (ordered_item(p, len, ind))
				return GIVE_UP;
			if (!blank_seen && ind <= 3 &&
			    (atx_level(p, len, ind) ||
			     fence_of(p, len, 0, &ch, &tmp) ||
			     (len - ind >= 4 && !memcmp(p + ind, "<!--", 4)))) {
				/* a heading, code or comment ends the list */
				state = S_NONE;
				break;
			}
			if (!blank_seen) {
				/* a lazy line of the item's paragraph */
				if (starts_block(p, len, ind))
					return GIVE_UP;
				continue;
			}
			state = S_NONE;
			break;
		case S_PARA:
			if (ind >= 4) {
				para_lines++;
				continue;
			}
			if (setext_line(p, len, ind) || p[ind] == '>')
				return GIVE_UP;
			k = table_start(p, len, ind);
			if (k && !atx_level(p, len, ind) &&
			    !fence_of(p, len, 0, &ch, &tmp) &&
			    p[ind] != '<' && !thematic_break(p, len, ind) &&
			    !bullet_item(p, len, ind, &tmp) &&
			    !ordered_item(p, len, ind)) {
				/* the paragraph's line is the header row */
				const char *h;
				size_t hlen;
				if (para_lines != 1 || k > SCAN_MAX_CELLS)
					return GIVE_UP;
				h = prep_at(pp, n - 1, &hlen);
				r = row_cells(h, hlen, indent_of(h, hlen),
					      NULL, 0, 0);
				if (r == GIVE_UP)
					return GIVE_UP;
				if ((size_t)r != k) {
					para_lines++;
					continue;
				}
				table = para;
				(*bl)[table].type = CMARK_NODE_NONE;
				(*bl)[table].is_table = 1;
				(*bl)[table].rows = (int)n - 1;
				(*bl)[table].rows_nr = 2;
				state = S_TABLE;
				continue;
			}
			if (!atx_level(p, len, ind) &&
			    !fence_of(p, len, 0, &ch, &tmp) &&
			    p[ind] != '<' && !thematic_break(p, len, ind) &&
			    !bullet_item(p, len, ind, &tmp) &&
			    !ordered_item(p, len, ind)) {
				para_lines++;
				continue;
			}
			state = S_NONE;
			break;
		default:
			break;
		}

		/* a line that starts a block */
		if (ind >= 4) {
			add_block(pp, bl, nr, alloc, CMARK_NODE_CODE_BLOCK, n);
			state = S_CODE;
		} else if ((level = atx_level(p, len, ind))) {
			if (add_heading(pp, bl, nr, alloc, n, p, len, ind,
					level))
				return GIVE_UP;
			state = S_NONE;
		} else if (fence_of(p, len, 0, &fence, &fence_n)) {
			add_block(pp, bl, nr, alloc, CMARK_NODE_CODE_BLOCK, n);
			state = S_FENCE;
		} else if (p[ind] == '<') {
			if (len - ind < 4 || memcmp(p + ind, "<!--", 4))
				return GIVE_UP;
			add_block(pp, bl, nr, alloc, CMARK_NODE_HTML_BLOCK,
				  n)->comment = 1;
			state = memmem(p + ind, len - ind, "-->", 3) ?
				S_NONE : S_COMMENT;
		} else if (p[ind] == '>' || p[ind] == '[' ||
			   ordered_item(p, len, ind)) {
			return GIVE_UP;
		} else if (thematic_break(p, len, ind)) {
			add_block(pp, bl, nr, alloc,
				  CMARK_NODE_THEMATIC_BREAK, n);
			state = S_NONE;
		} else if ((r = bullet_item(p, len, ind, &w))) {
			if (r == GIVE_UP || starts_block(p, len, w))
				return GIVE_UP;
			add_block(pp, bl, nr, alloc, CMARK_NODE_LIST, n);
			bullet = p[ind];
			blank_seen = 0;
			state = S_LIST;
		} else {
			para = *nr;
			add_block(pp, bl, nr, alloc, CMARK_NODE_PARAGRAPH, n);
			para_lines = 1;
			state = S_PARA;
		}
	}
	return 0;
}

struct walk {
	struct kopt_devlog *dl;
	struct kopt_devlog_version *ver;   /* the open version */
	struct kopt_devlog_perf *perf;     /* the open performance block */
	enum label pending;                /* label waiting for its list */
	int pending_in_perf;
	enum label value_for;              /* label alone, waiting for text */
	int value_in_perf;
	int section_kind;                  /* of the open level-2 section */
	int errors;
	const struct prepared *pp;         /* the text the blocks are in */
	int view;                          /* lists' items are not kept */
};

enum { SEC_OTHER, SEC_OVERVIEW, SEC_TARGET, SEC_LOG };

static const char *const log_names[] = {
	"development log", "devlog", "dev log", "development history",
	"versions", "version history", "log", "changelog", "history",
	"iterations", NULL
};

static void version_init(struct kopt_devlog_version *v)
{
	memset(v, 0, sizeof(*v));
	kopt_strvec_init(&v->what_changed);
	kopt_strvec_init(&v->description);
	kopt_strvec_init(&v->issues);
}

static void perf_init(struct kopt_devlog_perf *pf)
{
	int i;

	memset(pf, 0, sizeof(*pf));
	kopt_strvec_init(&pf->issues);
	kopt_strvec_init(&pf->insights);
	for (i = 0; i < KOPT_METRIC__NR; i++)
		pf->metrics[i] = NAN;
}

static void close_perf(struct walk *w)
{
	w->perf = NULL;
	w->pending = L_NONE;
}

static void touch_content(struct walk *w, int last)
{
	if (w->ver && last > w->ver->content_last)
		w->ver->content_last = last;
}

static void set_string(char **dst, const char *p, size_t len)
{
	struct kopt_buf sb = KOPT_BUF_INIT;

	clean_inline(&sb, p, len);
	free(*dst);
	*dst = kopt_buf_detach(&sb, NULL);
}

static void append_string(char **dst, const char *p, size_t len)
{
	struct kopt_buf sb = KOPT_BUF_INIT;

	kopt_buf_addstr(&sb, *dst ? *dst : "");
	if (sb.len)
		kopt_buf_addch(&sb, ' ');
	clean_inline(&sb, p, len);
	kopt_buf_trim(&sb);
	free(*dst);
	*dst = kopt_buf_detach(&sb, NULL);
}

static struct kopt_strvec *label_list(struct walk *w, enum label l,
				      int in_perf)
{
	if (in_perf && w->perf)
		return l == L_ISSUES ? &w->perf->issues :
		       l == L_INSIGHTS ? &w->perf->insights : NULL;
	if (!w->ver)
		return NULL;
	switch (l) {
	case L_WHAT_CHANGED:
		return &w->ver->what_changed;
	case L_DESCRIPTION:
		return &w->ver->description;
	case L_ISSUES:
		return &w->ver->issues;
	default:
		return NULL;
	}
}

/* Extend the range of a label's part to `last`. */
static void extend_label(struct walk *w, enum label l, int in_perf, int last)
{
	if (in_perf && w->perf) {
		if (last > w->perf->last_line)
			w->perf->last_line = last;
		if (l == L_ISSUES)
			w->perf->issues_last = last;
		else if (l == L_INSIGHTS)
			w->perf->insights_last = last;
		else if (l == L_BOTTLENECK || l == L_ROOT_CAUSE)
			w->perf->after_line = last;
	} else if (w->ver && l == L_ISSUES) {
		w->ver->issues_last = last;
	}
}

/* A label at `line` with inline text `value`; its part ends at `last`. */
static void on_label(struct walk *w, enum label l, const char *value,
		     size_t vlen, int line, int last)
{
	struct kopt_devlog_version *v = w->ver;
	struct kopt_strvec *list;
	int in_perf;

	w->pending = L_NONE;
	if (!v)
		return;
	touch_content(w, last);
	if (l == L_PERF) {
		struct kopt_devlog_perf *pf;
		KOPT_ALLOC_GROW(v->perfs, v->perfs_nr + 1, v->perfs_alloc);
		pf = &v->perfs[v->perfs_nr++];
		perf_init(pf);
		parse_perf_context(pf, value, vlen, !w->view);
		pf->line = line;
		pf->last_line = last;
		pf->after_line = last;
		w->perf = pf;
		return;
	}
	in_perf = w->perf && perf_part(l);
	/* a part the block already has starts something else */
	if (in_perf && ((l == L_ISSUES && w->perf->issues_line) ||
			(l == L_INSIGHTS && w->perf->insights_line) ||
			(l == L_BOTTLENECK && w->perf->bottleneck)))
		in_perf = 0;
	if (!in_perf)
		w->perf = NULL;
	switch (l) {
	case L_LOCATION:
		set_string(&v->location, value, vlen);
		break;
	case L_BOTTLENECK:
		if (in_perf)
			set_string(&w->perf->bottleneck, value, vlen);
		break;
	case L_ROOT_CAUSE:
		if (in_perf)
			set_string(&w->perf->root_cause, value, vlen);
		break;
	case L_ISSUES:
		if (in_perf) {
			w->perf->issues_line = line;
		} else {
			v->issues_line = line;
			kopt_strvec_clear(&v->issues);
		}
		break;
	case L_INSIGHTS:
		if (in_perf)
			w->perf->insights_line = line;
		break;
	default:
		break;
	}
	extend_label(w, l, in_perf, last);
	list = label_list(w, l, in_perf);
	if (list && !w->view && !blank(value, vlen)) {
		struct kopt_buf sb = KOPT_BUF_INIT;
		clean_inline(&sb, value, vlen);
		if (sb.len)
			kopt_strvec_push(list, sb.buf);
		kopt_buf_release(&sb);
	}
	if (list_label(l)) {
		w->pending = l;
		w->pending_in_perf = in_perf;
	} else if (blank(value, vlen)) {
		/* "#### Bottleneck" with the text in the next paragraph */
		w->value_for = l;
		w->value_in_perf = in_perf;
	}
}

static char **value_slot(struct walk *w, enum label l, int in_perf)
{
	if (!w->ver)
		return NULL;
	if (l == L_LOCATION)
		return &w->ver->location;
	if (!in_perf || !w->perf)
		return NULL;
	if (l == L_BOTTLENECK)
		return &w->perf->bottleneck;
	if (l == L_ROOT_CAUSE)
		return &w->perf->root_cause;
	return NULL;
}

static void on_paragraph(struct walk *w, const struct block *b)
{
	struct kopt_devlog *dl = w->dl;
	enum label cur = L_NONE, value_for = w->value_for;
	int cur_in_perf = 0, line;

	w->value_for = L_NONE;

	for (line = b->first; line <= b->last; line++) {
		size_t len, vlen;
		const char *p = line_at(dl, line, &len), *v;
		enum label l = match_label(p, len, &v, &vlen);

		if (l != L_NONE) {
			on_label(w, l, v, vlen, line, line);
			cur = l;
			cur_in_perf = w->perf != NULL && l != L_PERF;
			continue;
		}
		if (line == b->first && value_for != L_NONE) {
			/* the text of a label that stood alone */
			char **slot = value_slot(w, value_for,
						 w->value_in_perf);
			int i;
			for (i = b->first; slot && i <= b->last; i++) {
				p = line_at(dl, i, &len);
				if (i == b->first)
					set_string(slot, p, len);
				else
					append_string(slot, p, len);
			}
			extend_label(w, value_for, w->value_in_perf,
				     b->last);
			touch_content(w, b->last);
			return;
		}
		if (line == b->first) {
			/* free text: it ends a performance block */
			close_perf(w);
			touch_content(w, b->last);
			return;
		}
		if (blank(p, len))
			continue;
		/* a continuation line of the label above */
		touch_content(w, line);
		if (cur == L_PERF && w->perf) {
			w->perf->last_line = line;
			w->perf->after_line = line;
			continue;
		}
		extend_label(w, cur, cur_in_perf, line);
		if (!w->ver)
			continue;
		if (cur == L_LOCATION)
			append_string(&w->ver->location, p, len);
		else if (cur == L_BOTTLENECK && cur_in_perf && w->perf)
			append_string(&w->perf->bottleneck, p, len);
		else if (cur == L_ROOT_CAUSE && cur_in_perf && w->perf)
			append_string(&w->perf->root_cause, p, len);
	}
}

static void on_list(struct walk *w, const struct block *b)
{
	struct kopt_strvec *list;
	cmark_node *item;

	touch_content(w, b->last);
	if (w->pending == L_NONE) {
		close_perf(w);
		return;
	}
	list = label_list(w, w->pending, w->pending_in_perf);
	for (item = w->view ? NULL : cmark_node_first_child(b->node);
	     list && item; item = cmark_node_next(item)) {
		cmark_node *first = cmark_node_first_child(item);
		char *text = first ? node_text_dup(first) : kopt_strdup("");
		if (*text)
			kopt_strvec_push(list, text);
		free(text);
	}
	extend_label(w, w->pending, w->pending_in_perf, b->last);
	w->pending = L_NONE;
}

static void on_table(struct walk *w, const struct block *b)
{
	struct kopt_devlog_perf *pf = w->perf;

	touch_content(w, b->last);
	if (!pf || pf->table_line || pf->last_line != pf->after_line ||
	    pf->bottleneck || pf->issues_line || pf->insights_line) {
		close_perf(w);
		return;
	}
	if (b->node)
		parse_table(pf, b->node, !w->view);
	else
		parse_table_lines(pf, w->pp, b, !w->view);
	pf->table_line = b->first;
	pf->last_line = b->last;
	pf->after_line = b->last;
	w->pending = L_NONE;
}

static int is_log_name(const char *name)
{
	const char *const *n;

	for (n = log_names; *n; n++)
		if (!strcasecmp(name, *n))
			return 1;
	return 0;
}

static void close_version(struct walk *w, int next_line)
{
	if (w->ver) {
		w->ver->last_line = next_line - 1;
		if (!w->ver->content_last)
			w->ver->content_last = w->ver->line;
	}
	w->ver = NULL;
	close_perf(w);
}

static void on_heading(struct walk *w, const struct block *b)
{
	struct kopt_devlog *dl = w->dl;
	char *text = kopt_strdup(b->text), *name = NULL, *title, *note;
	long num;
	size_t k;

	if (b->level >= 2 && b->level <= 4 && parse_version_heading(text, &name, &num, &title,
						   &note)) {
		struct kopt_devlog_version *v;
		for (k = 0; k < dl->versions_nr; k++)
			if (kopt_str_eq(dl->versions[k].name, name))
				break;
		if (k < dl->versions_nr) {
			kopt_error("%s:%d: version '%s' has a second heading "
				   "(the first is at line %d)", dl->label,
				   b->first, name, dl->versions[k].line);
			w->errors++;
			free(name);
			free(title);
			free(note);
			free(text);
			return;
		}
		close_version(w, b->first);
		KOPT_ALLOC_GROW(dl->versions, dl->versions_nr + 1,
				dl->versions_alloc);
		v = &dl->versions[dl->versions_nr++];
		version_init(v);
		v->name = name;
		v->number = num;
		v->title = title;
		v->note = note;
		v->level = b->level;
		v->line = b->first;
		w->ver = v;
		free(text);
		return;
	}
	if (w->ver && b->level > w->ver->level) {
		/* "#### Issues", "#### Performance (...)" inside a version */
		const char *raw, *v;
		size_t len, vlen;
		enum label l;
		raw = line_at(dl, b->first, &len);
		while (len && *raw == '#')
			raw++, len--;
		while (len && *raw == ' ')
			raw++, len--;
		l = match_label(raw, len, &v, &vlen);
		if (l == L_NONE) {
			/* a heading alone: the label is its whole text */
			for (k = 0; k < KOPT_ARRAY_SIZE(label_names); k++)
				if (!strcasecmp(text, label_names[k].name)) {
					l = label_names[k].label;
					break;
				}
			v = "";
			vlen = 0;
		}
		if (l != L_NONE) {
			on_label(w, l, v, vlen, b->first, b->last);
			free(text);
			return;
		}
		close_perf(w);
		touch_content(w, b->last);
		free(text);
		return;
	}
	close_version(w, b->first);
	if (b->level == 1 && !dl->title) {
		dl->title = text;
		dl->title_line = b->first;
		return;
	}
	if (b->level == 2) {
		kopt_strvec_push(&dl->sections, text);
		if (!strcasecmp(text, "overview") ||
		    !strcasecmp(text, "summary"))
			w->section_kind = SEC_OVERVIEW;
		else if (!strcasecmp(text, "target") ||
			 !strcasecmp(text, "targets") ||
			 !strcasecmp(text, "goal"))
			w->section_kind = SEC_TARGET;
		else if (is_log_name(text) && !dl->log_line)
			w->section_kind = SEC_LOG;
		else
			w->section_kind = SEC_OTHER;
	}
	free(text);
}

/* Raw text of lines [first, last], trimmed, or NULL when blank. */
static char *lines_text(const struct kopt_devlog *dl, int first, int last)
{
	struct kopt_buf sb = KOPT_BUF_INIT;
	int i;

	for (i = first; i <= last && i <= dl->lines_nr; i++) {
		size_t len;
		const char *p = line_at(dl, i, &len);
		kopt_buf_add(&sb, p, len);
		kopt_buf_addch(&sb, '\n');
	}
	/* comments are notes to writers, not part of the text */
	for (;;) {
		char *open = strstr(sb.buf, "<!--"), *close;
		if (!open)
			break;
		close = strstr(open + 4, "-->");
		kopt_buf_splice(&sb, open - sb.buf,
				close ? (size_t)(close + 3 - open) :
				sb.len - (open - sb.buf), NULL, 0);
		while (open > sb.buf && open[-1] == ' ' &&
		       (*open == '\n' || !*open)) {
			kopt_buf_splice(&sb, open - 1 - sb.buf, 1, NULL, 0);
			open--;
		}
	}
	kopt_buf_trim(&sb);
	if (!sb.len) {
		kopt_buf_release(&sb);
		return NULL;
	}
	return kopt_buf_detach(&sb, NULL);
}

static int last_nonblank(const struct kopt_devlog *dl, int first, int last)
{
	while (last >= first && line_blank(dl, last))
		last--;
	return last;
}

/* Sections of level 2: Overview, Target, the development log. */
static void find_sections(struct kopt_devlog *dl, const struct block *bl,
			  size_t nr)
{
	size_t i, j;

	for (i = 0; i < nr; i++) {
		char *text;
		int end;
		if (bl[i].type != CMARK_NODE_HEADING || bl[i].level != 2)
			continue;
		end = dl->lines_nr;
		for (j = i + 1; j < nr; j++)
			if (bl[j].type == CMARK_NODE_HEADING &&
			    bl[j].level <= 2) {
				end = bl[j].first - 1;
				break;
			}
		text = bl[i].text;
		if ((!strcasecmp(text, "overview") ||
		     !strcasecmp(text, "summary")) && !dl->overview)
			dl->overview = lines_text(dl, bl[i].last + 1, end);
		else if ((!strcasecmp(text, "target") ||
			  !strcasecmp(text, "targets") ||
			  !strcasecmp(text, "goal")) && !dl->target)
			dl->target = lines_text(dl, bl[i].last + 1, end);
		else if (is_log_name(text) && !dl->log_line) {
			dl->log_line = bl[i].first;
			dl->log_level = 2;
			dl->log_last = end;
		}
	}
	if (!dl->log_line && dl->versions_nr) {
		/* the section that holds the first version */
		const struct kopt_devlog_version *v = &dl->versions[0];
		for (i = 0; i < nr; i++) {
			if (bl[i].first >= v->line)
				break;
			if (bl[i].type == CMARK_NODE_HEADING &&
			    bl[i].level < v->level) {
				dl->log_line = bl[i].first;
				dl->log_level = bl[i].level;
			}
		}
		if (dl->log_line) {
			dl->log_last = dl->lines_nr;
			for (j = 0; j < nr; j++)
				if (bl[j].first > v->line &&
				    bl[j].type == CMARK_NODE_HEADING &&
				    bl[j].level <= dl->log_level) {
					dl->log_last = bl[j].first - 1;
					break;
				}
		}
	}
}

static int front_matter(const struct kopt_devlog *dl)
{
	size_t len;
	const char *p;
	int i;

	if (dl->lines_nr < 2)
		return 0;
	p = line_at(dl, 1, &len);
	while (len && (p[len - 1] == ' ' || p[len - 1] == '\t'))
		len--;
	if (len != 3 || memcmp(p, "---", 3))
		return 0;
	for (i = 2; i <= dl->lines_nr; i++) {
		p = line_at(dl, i, &len);
		while (len && (p[len - 1] == ' ' || p[len - 1] == '\t'))
			len--;
		if (len == 3 && (!memcmp(p, "---", 3) || !memcmp(p, "...", 3)))
			return i;
	}
	return 0;
}

/* The line of byte `pos`. */
static int line_of_byte(const char *p, size_t pos)
{
	const char *q = p, *end = p + pos;
	int line = 1;

	while ((q = memchr(q, '\n', end - q))) {
		line++;
		q++;
	}
	return line;
}

#define BYTES_1 0x0101010101010101ULL
#define BYTES_7F 0x7f7f7f7f7f7f7f7fULL
#define BYTES_80 0x8080808080808080ULL

/* 0x80 in each byte of w (ASCII: below 0x80) that is c */
static inline uint64_t byte_is(uint64_t w, unsigned char c)
{
	uint64_t x = w ^ (c * BYTES_1);

	return ~(x + BYTES_7F) & BYTES_80;
}

/*
 * The first line with a byte that is not UTF-8, or 0; *ctl is set when
 * the text holds a control character other than a tab or a line ending,
 * or a sequence taken here that strict UTF-8 refuses (an overlong form,
 * a surrogate, past U+10FFFF): cmark replaces those, so such a text is
 * left to it.
 */
static int bad_utf8_line(const struct kopt_devlog *dl, int *nul, int *ctl)
{
	const unsigned char *p = (const unsigned char *)dl->text.buf;
	size_t i = 0, n = dl->text.len;

	*nul = 0;
	*ctl = 0;
	while (i < n) {
		unsigned c;
		size_t k, need;
		if (n - i >= 8) {
			/* eight bytes of ASCII from ' ' up: nothing to see */
			uint64_t w;
			memcpy(&w, p + i, 8);
			if (!(w & BYTES_80) &&
			    !((w - 0x20 * BYTES_1) & ~w & BYTES_80)) {
				i += 8;
				continue;
			}
			/* eight of ASCII with line endings or tabs only: a
			 * look at the word's bytes all at once (exact for
			 * bytes below 0x80: no carry crosses a byte) */
			if (!(w & BYTES_80)) {
				uint64_t low = ~(w + 0x60 * BYTES_1) & BYTES_80;
				uint64_t ok = byte_is(w, '\n') |
					      byte_is(w, '\r') |
					      byte_is(w, '\t');
				if (!(low & ~ok)) {
					i += 8;
					continue;
				}
			}
			/* a NUL or a control character: at each byte */
			if (!(w & BYTES_80)) {
				for (k = i; k < i + 8; k++) {
					c = p[k];
					if (!c) {
						*nul = 1;
						return line_of_byte(
							dl->text.buf, k);
					}
					if (c < 0x20 && c != '\n' &&
					    c != '\r' && c != '\t')
						*ctl = 1;
				}
				i += 8;
				continue;
			}
		}
		c = p[i];
		if (!c) {
			*nul = 1;
			return line_of_byte(dl->text.buf, i);
		}
		if (c < 0x80) {
			if (c < 0x20 && c != '\n' && c != '\r' && c != '\t')
				*ctl = 1;
			i++;
			continue;
		}
		if (c >= 0xc2 && c <= 0xdf)
			need = 1;
		else if (c >= 0xe0 && c <= 0xef)
			need = 2;
		else if (c >= 0xf0 && c <= 0xf4)
			need = 3;
		else
			return line_of_byte(dl->text.buf, i);
		for (k = 1; k <= need; k++)
			if (i + k >= n || (p[i + k] & 0xc0) != 0x80)
				return line_of_byte(dl->text.buf, i);
		if ((c == 0xe0 && p[i + 1] < 0xa0) ||
		    (c == 0xed && p[i + 1] > 0x9f) ||
		    (c == 0xf0 && p[i + 1] < 0x90) ||
		    (c == 0xf4 && p[i + 1] > 0x8f))
			*ctl = 1;
		i += need + 1;
	}
	return 0;
}

/* A performance block's table rows, freed; the block keeps none. */
static void perf_rows_clear(struct kopt_devlog_perf *pf)
{
	for (size_t k = 0; k < pf->rows_nr; k++) {
		free(pf->rows[k].metric);
		free(pf->rows[k].value);
		free(pf->rows[k].vs);
	}
	free(pf->rows);
	pf->rows = NULL;
	pf->rows_nr = pf->rows_alloc = 0;
}

void kopt_devlog_release(struct kopt_devlog *dl)
{
	size_t i, j;

	free(dl->label);
	kopt_buf_release(&dl->text);
	free(dl->line_start);
	free(dl->title);
	free(dl->overview);
	free(dl->target);
	kopt_strvec_clear(&dl->sections);
	for (i = 0; i < dl->versions_nr; i++) {
		struct kopt_devlog_version *v = &dl->versions[i];
		free(v->name);
		free(v->title);
		free(v->note);
		free(v->location);
		kopt_strvec_clear(&v->what_changed);
		kopt_strvec_clear(&v->description);
		kopt_strvec_clear(&v->issues);
		for (j = 0; j < v->perfs_nr; j++) {
			struct kopt_devlog_perf *pf = &v->perfs[j];
			free(pf->context);
			free(pf->device);
			free(pf->bottleneck);
			free(pf->root_cause);
			kopt_strvec_clear(&pf->issues);
			kopt_strvec_clear(&pf->insights);
			perf_rows_clear(pf);
		}
		free(v->perfs);
	}
	free(dl->versions);
	memset(dl, 0, sizeof(*dl));
	kopt_buf_init(&dl->text, 0);
	kopt_strvec_init(&dl->sections);
}

/*
 * Blocks cmark gave no position.  cmark-gfm does that to the paragraph
 * left above a table that took the paragraph's last line as its header
 * row, and gives the table the paragraph's first line: the paragraph
 * goes there, the table to its header row (the line above the first
 * delimiter row).  Anything else follows the block before it.
 */
static void place_unplaced(const struct kopt_devlog *dl, struct block *bl,
			   size_t nr)
{
	size_t i;

	for (i = 0; i < nr; i++) {
		struct block *table = i + 1 < nr ? &bl[i + 1] : NULL;
		int line, limit;

		if (bl[i].first)
			continue;
		if (!table || !table->first || !table->is_table) {
			bl[i].first = i ? bl[i - 1].first + 1 : 1;
			continue;
		}
		bl[i].first = table->first;
		/* the delimiter row is the table's, never past the block
		 * after it: the blocks stay in the order of their lines */
		limit = dl->lines_nr;
		if (i + 2 < nr && bl[i + 2].first && bl[i + 2].first - 1 < limit)
			limit = bl[i + 2].first - 1;
		for (line = table->first; line < limit; line++) {
			size_t len;
			const char *p = line_at(dl, line + 1, &len);
			if (delimiter_row(p, len)) {
				table->first = line;
				break;
			}
		}
	}
}

/* The top-level blocks of cmark's document, in bl[]. */
static void cmark_blocks(const struct prepared *pp, cmark_node *doc,
			 struct block **bl, size_t *nr, size_t *alloc)
{
	cmark_node *n;

	for (n = cmark_node_first_child(doc); n; n = cmark_node_next(n)) {
		int start = cmark_node_get_start_line(n);
		struct block *b;
		KOPT_ALLOC_GROW(*bl, *nr + 1, *alloc);
		b = &(*bl)[(*nr)++];
		memset(b, 0, sizeof(*b));
		b->node = n;
		b->type = cmark_node_get_type(n);
		b->first = start < 1 || (size_t)start >= pp->nr ? 0 :
			   pp->orig[start];
		if (b->type == CMARK_NODE_HEADING) {
			b->level = cmark_node_get_heading_level(n);
			b->text = node_text_dup(n);
		} else if (b->type == CMARK_NODE_HTML_BLOCK) {
			const char *lit = cmark_node_get_literal(n);
			while (lit && (*lit == ' ' || *lit == '\t'))
				lit++;
			b->comment = lit && !strncmp(lit, "<!--", 4);
		} else {
			b->is_table = !strcmp(cmark_node_get_type_string(n),
					      "table");
		}
	}
}

static void free_blocks(struct block *bl, size_t nr)
{
	size_t i;

	for (i = 0; i < nr; i++)
		free(bl[i].text);
	free(bl);
}

static int parse_devlog(struct kopt_devlog *out, const char *data,
			size_t len, const char *label, int view)
{
	struct prepared pp = { KOPT_BUF_INIT, NULL, 0, 0, NULL, 0 };
	struct walk w = { 0 };
	struct block *bl = NULL;
	size_t nr = 0, alloc = 0, i;
	cmark_node *doc = NULL;
	int bad, nul, ctl, ret = 0;

	kopt_devlog_release(out);
	if (len > KOPT_DEVLOG_MAX_BYTES) {
		kopt_error("%s: %.1f MB is more than git-kopt reads in a devlog "
			   "(%d MB); move the entries of old versions to "
			   "another file", label, len / 1e6,
			   KOPT_DEVLOG_MAX_BYTES >> 20);
		return KOPT_EINVALID;
	}
	out->label = kopt_strdup(label);
	kopt_buf_add(&out->text, data, len);
	for (i = 0; i < len && data[i] && strchr(" \t\r\n", data[i]); i++)
		;
	if (i == len) {
		kopt_error("%s:1: the devlog is empty", label);
		kopt_devlog_release(out);
		return KOPT_EINVALID;
	}
	bad = bad_utf8_line(out, &nul, &ctl);
	if (bad) {
		kopt_error(nul ? "%s:%d: binary content (a NUL byte), not a "
			   "Markdown devlog" : "%s:%d: not UTF-8 text", label,
			   bad);
		kopt_devlog_release(out);
		return KOPT_EINVALID;
	}
	split_lines(out);
	out->front_matter_last = front_matter(out);
	prepare(&pp, out);
	/* control characters are spaces in tables, and cmark replaces
	 * what strict UTF-8 refuses: left to cmark */
	pthread_once(&inline_class_once, inline_class_make);
	/* and two byte order marks */
	if (out->text.len >= 6 &&
	    !memcmp(out->text.buf, "\xef\xbb\xbf\xef\xbb\xbf", 6))
		ctl = 1;
	if (!view || ctl || scan_blocks(&pp, &bl, &nr, &alloc)) {
		/* cmark's tree: always, or where the quick reading gave up */
		free_blocks(bl, nr);
		bl = NULL;
		nr = alloc = 0;
		doc = kopt_md_parse_pooled(pp.text.buf, pp.text.len);
		cmark_blocks(&pp, doc, &bl, &nr, &alloc);
		place_unplaced(out, bl, nr);
	} else {
		out->quick = 1;
	}
	/* a block runs up to the next one, less trailing blank lines */
	for (i = 0; i < nr; i++) {
		int end = i + 1 < nr ? bl[i + 1].first - 1 : out->lines_nr;
		if (end < bl[i].first)
			end = bl[i].first;
		bl[i].last = last_nonblank(out, bl[i].first, end);
		if (bl[i].last < bl[i].first)
			bl[i].last = bl[i].first;
		if (bl[i].type == CMARK_NODE_HEADING)
			bl[i].last = bl[i].first;
	}

	w.dl = out;
	w.pp = &pp;
	w.view = view;
	for (i = 0; i < nr; i++) {
		const struct block *b = &bl[i];
		enum label value_for = w.value_for;

		/* only the very next paragraph is a lone label's text */
		if (b->type != CMARK_NODE_PARAGRAPH)
			w.value_for = L_NONE;
		switch (b->type) {
		case CMARK_NODE_HEADING:
			on_heading(&w, b);
			break;
		case CMARK_NODE_PARAGRAPH:
			on_paragraph(&w, b);
			break;
		case CMARK_NODE_LIST:
			on_list(&w, b);
			break;
		case CMARK_NODE_HTML_BLOCK:
			if (b->comment) {
				/* comments change nothing */
				w.value_for = value_for;
				break;
			}
			close_perf(&w);
			touch_content(&w, b->last);
			break;
		case CMARK_NODE_THEMATIC_BREAK:
			close_perf(&w);
			break;
		default:
			if (b->is_table) {
				on_table(&w, b);
				break;
			}
			close_perf(&w);
			touch_content(&w, b->last);
			break;
		}
	}
	close_version(&w, out->lines_nr + 1);
	find_sections(out, bl, nr);

	if (doc)
		kopt_md_free(doc);
	free_blocks(bl, nr);
	free(pp.orig);
	free(pp.at);
	kopt_buf_release(&pp.text);
	if (w.errors) {
		kopt_devlog_release(out);
		ret = KOPT_EINVALID;
	}
	return ret;
}

int kopt_devlog_parse(struct kopt_devlog *out, const char *data, size_t len,
		      const char *label)
{
	return parse_devlog(out, data, len, label, 0);
}

int kopt_devlog_parse_view(struct kopt_devlog *out, const char *data,
			   size_t len, const char *label)
{
	return parse_devlog(out, data, len, label, 1);
}

void kopt_devlog_drop_unread(struct kopt_devlog *dl)
{
	size_t i, j;

	for (i = 0; i < dl->versions_nr; i++) {
		struct kopt_devlog_version *v = &dl->versions[i];
		kopt_strvec_clear(&v->what_changed);
		kopt_strvec_clear(&v->description);
		kopt_strvec_clear(&v->issues);
		for (j = 0; j < v->perfs_nr; j++) {
			struct kopt_devlog_perf *pf = &v->perfs[j];
			kopt_strvec_clear(&pf->issues);
			kopt_strvec_clear(&pf->insights);
			perf_rows_clear(pf);
			free(pf->context);
			pf->context = NULL;
		}
	}
}

int kopt_devlog_read_file(struct kopt_devlog *out, const char *path)
{
	struct kopt_buf sb = KOPT_BUF_INIT;
	int ret;

	if ((ret = kopt_read_file(&sb, path, NULL)))
		return ret;
	ret = kopt_devlog_parse(out, sb.buf, sb.len, path);
	kopt_buf_release(&sb);
	return ret;
}

int kopt_devlog_write(const struct kopt_devlog *dl, const char *path)
{
	return kopt_write_file_atomic(path, dl->text.buf, dl->text.len, 0644);
}

/* ------------------------------------------------------------------ */
/* Lookups */

/*
 * strcasecmp(a, b) == 0, inline: names of versions ("v12", "v3") most
 * often differ within their first bytes
 */
static inline int same_name_ci(const char *a, const char *b)
{
	for (; *a && *b; a++, b++)
		if (*a != *b && tolower((unsigned char)*a) !=
		    tolower((unsigned char)*b))
			return 0;
	return *a == *b;
}

const struct kopt_devlog_version *
kopt_devlog_find_version(const struct kopt_devlog *dl, const char *name)
{
	size_t i;

	for (i = 0; i < dl->versions_nr; i++)
		if (same_name_ci(dl->versions[i].name, name))
			return &dl->versions[i];
	return NULL;
}

const char *kopt_devlog_version_title(const struct kopt_devlog_version *v)
{
	const char *t = v ? v->title : NULL;

	if (!t)
		return NULL;
	while (*t == ' ' || *t == '\t')
		t++;
	return *t && *t != '[' && *t != '(' ? t : NULL;
}

static int perf_matches(const struct kopt_devlog_perf *pf, long b, long s,
			long t, long b_requested)
{
	if (!pf->has_config || pf->s != s || pf->t != t)
		return 0;
	if (pf->b == b || pf->b_requested == b)
		return 1;
	return b_requested && (pf->b == b_requested ||
			       pf->b_requested == b_requested);
}

const struct kopt_devlog_perf *
kopt_devlog_find_perf(const struct kopt_devlog_version *v, long b, long s,
		      long t)
{
	size_t i;

	for (i = 0; i < v->perfs_nr; i++)
		if (perf_matches(&v->perfs[i], b, s, t, 0))
			return &v->perfs[i];
	return NULL;
}

/* ------------------------------------------------------------------ */
/* Summary */

void kopt_devlog_summary(struct kopt_buf *out, const struct kopt_devlog *dl,
			 unsigned flags)
{
	int perfs = !!(flags & KOPT_DEVLOG_SUMMARY_PERFS);
	size_t i, j;
	int m;

	kopt_cache_add_str(out, "D2");
	kopt_cache_add_str(out, dl->title);
	kopt_cache_add_str(out, dl->overview);
	kopt_cache_add_str(out, dl->target);
	kopt_cache_add_num(out, (double)dl->versions_nr);
	kopt_buf_addch(out, '\n');
	for (i = 0; i < dl->versions_nr; i++) {
		const struct kopt_devlog_version *v = &dl->versions[i];
		kopt_cache_add_str(out, "V");
		kopt_cache_add_str(out, v->name);
		kopt_cache_add_num(out, (double)v->number);
		kopt_cache_add_str(out, v->title);
		kopt_cache_add_str(out, v->note);
		kopt_cache_add_num(out, v->level);
		kopt_cache_add_num(out, v->line);
		kopt_cache_add_num(out, v->last_line);
		kopt_cache_add_num(out, perfs ? (double)v->perfs_nr : 0);
		kopt_buf_addch(out, '\n');
		for (j = 0; perfs && j < v->perfs_nr; j++) {
			const struct kopt_devlog_perf *pf = &v->perfs[j];
			kopt_cache_add_str(out, "P");
			kopt_cache_add_str(out, pf->device);
			kopt_cache_add_num(out, pf->has_config);
			kopt_cache_add_num(out, (double)pf->b);
			kopt_cache_add_num(out, (double)pf->s);
			kopt_cache_add_num(out, (double)pf->t);
			kopt_cache_add_num(out, (double)pf->b_requested);
			kopt_cache_add_num(out, pf->replayed);
			kopt_cache_add_str(out, pf->bottleneck);
			kopt_cache_add_num(out, pf->line);
			for (m = 0; m < KOPT_METRIC__NR; m++)
				kopt_cache_add_num(out, pf->metrics[m]);
			kopt_buf_addch(out, '\n');
		}
	}
}

static char *dup_field(const char *f)
{
	return f ? kopt_strdup(f) : NULL;
}

#define PERF_FIELDS (10 + KOPT_METRIC__NR)

/* The summary's whole numbers, as kopt_devlog_summary() writes them. */
static int summary_int(const char *f, int *out)
{
	long v;

	if (kopt_cache_whole(f, INT_MIN, INT_MAX, &v))
		return -1;
	*out = (int)v;
	return 0;
}

static int summary_long(const char *f, long *out)
{
	return kopt_cache_whole(f, -KOPT_CACHE_WHOLE_MAX, KOPT_CACHE_WHOLE_MAX,
				out);
}

int kopt_devlog_from_summary(struct kopt_devlog *out, const char *data,
			     size_t len, const char *label)
{
	char *text = kopt_strndup(data, len), *f[PERF_FIELDS];
	size_t pos = 0, n, i, j, np;
	long w;
	int m;

	kopt_devlog_release(out);
	out->label = kopt_strdup(label);
	if (kopt_cache_split(text, len, &pos, f, 5) != 5 || !f[0] ||
	    strcmp(f[0], "D2"))
		goto bad;
	out->title = dup_field(f[1]);
	out->overview = dup_field(f[2]);
	out->target = dup_field(f[3]);
	if (kopt_cache_whole(f[4], 0, KOPT_CACHE_WHOLE_MAX, &w))
		goto bad;
	n = (size_t)w;
	for (i = 0; i < n; i++) {
		struct kopt_devlog_version *v;
		if (kopt_cache_split(text, len, &pos, f, 9) != 9 || !f[0] ||
		    strcmp(f[0], "V") || !f[1] || !f[3])
			goto bad;
		KOPT_ALLOC_GROW(out->versions, out->versions_nr + 1,
				out->versions_alloc);
		v = &out->versions[out->versions_nr++];
		version_init(v);
		v->name = kopt_strdup(f[1]);
		v->title = kopt_strdup(f[3]);
		v->note = dup_field(f[4]);
		if (kopt_cache_whole(f[2], -KOPT_CACHE_WHOLE_MAX,
				     KOPT_CACHE_WHOLE_MAX, &v->number) ||
		    summary_int(f[5], &v->level) ||
		    summary_int(f[6], &v->line) ||
		    summary_int(f[7], &v->last_line) ||
		    kopt_cache_whole(f[8], 0, KOPT_CACHE_WHOLE_MAX, &w))
			goto bad;
		np = (size_t)w;
		for (j = 0; j < np; j++) {
			struct kopt_devlog_perf *pf;
			if (kopt_cache_split(text, len, &pos, f, PERF_FIELDS) !=
			    PERF_FIELDS || !f[0] || strcmp(f[0], "P"))
				goto bad;
			KOPT_ALLOC_GROW(v->perfs, v->perfs_nr + 1,
					v->perfs_alloc);
			pf = &v->perfs[v->perfs_nr++];
			perf_init(pf);
			pf->device = dup_field(f[1]);
			pf->bottleneck = dup_field(f[8]);
			if (summary_int(f[2], &pf->has_config) ||
			    summary_long(f[3], &pf->b) ||
			    summary_long(f[4], &pf->s) ||
			    summary_long(f[5], &pf->t) ||
			    summary_long(f[6], &pf->b_requested) ||
			    summary_int(f[7], &pf->replayed) ||
			    summary_int(f[9], &pf->line))
				goto bad;
			for (m = 0; m < KOPT_METRIC__NR; m++)
				pf->metrics[m] = kopt_cache_num(f[10 + m]);
		}
	}
	free(text);
	return 0;
bad:
	free(text);
	kopt_devlog_release(out);
	return KOPT_EINVALID;
}

int kopt_devlog_slim_ok(const struct kopt_devlog *dl)
{
	size_t i;

	for (i = 0; i < dl->versions_nr; i++) {
		const struct kopt_devlog_version *v = &dl->versions[i];
		if (!v->name || !v->title ||
		    !kopt_cache_whole_ok((double)v->number,
					 -KOPT_CACHE_WHOLE_MAX,
					 KOPT_CACHE_WHOLE_MAX))
			return 0;
	}
	return 1;
}

int kopt_devlog_slim(struct kopt_devlog *dl, const char *label)
{
	struct kopt_devlog out = KOPT_DEVLOG_INIT;
	size_t i;

	if (!kopt_devlog_slim_ok(dl))
		return -1;
	out.label = kopt_strdup(label);
	out.title = dl->title;
	out.overview = dl->overview;
	out.target = dl->target;
	dl->title = dl->overview = dl->target = NULL;
	if (dl->versions_nr)
		out.versions = kopt_calloc(dl->versions_nr,
					   sizeof(*out.versions));
	out.versions_alloc = dl->versions_nr;
	for (i = 0; i < dl->versions_nr; i++) {
		struct kopt_devlog_version *v = &dl->versions[i];
		struct kopt_devlog_version *n = &out.versions[i];
		version_init(n);
		n->name = v->name;
		n->number = v->number;
		n->title = v->title;
		n->note = v->note;
		n->level = v->level;
		n->line = v->line;
		n->last_line = v->last_line;
		v->name = v->title = v->note = NULL;
	}
	out.versions_nr = dl->versions_nr;
	kopt_devlog_release(dl);
	*dl = out;
	return 0;
}

/* ------------------------------------------------------------------ */
/* Dump */

static void dump_list(struct kopt_buf *out, const char *indent,
		      const char *name, const struct kopt_strvec *sv)
{
	size_t i;

	if (!sv->nr)
		return;
	kopt_buf_addf(out, "%s%s:\n", indent, name);
	for (i = 0; i < sv->nr; i++)
		kopt_buf_addf(out, "%s  - %s\n", indent, sv->v[i]);
}

static void dump_text(struct kopt_buf *out, const char *name, const char *s)
{
	if (!s)
		return;
	kopt_buf_addf(out, "%s: |\n  ", name);
	for (; *s; s++) {
		if (*s == '\r')
			continue;
		kopt_buf_addch(out, *s);
		if (*s == '\n')
			kopt_buf_addstr(out, "  ");
	}
	kopt_buf_addch(out, '\n');
}

void kopt_devlog_dump(struct kopt_buf *out, const struct kopt_devlog *dl)
{
	size_t i, j, k;
	int m;

	kopt_buf_addf(out, "lines: %d%s\n", dl->lines_nr,
		      dl->crlf ? " (crlf)" : "");
	if (dl->front_matter_last)
		kopt_buf_addf(out, "front matter: lines 1-%d\n",
			      dl->front_matter_last);
	if (dl->title)
		kopt_buf_addf(out, "title: %s (line %d)\n", dl->title,
			      dl->title_line);
	for (i = 0; i < dl->sections.nr; i++)
		kopt_buf_addf(out, "section: %s\n", dl->sections.v[i]);
	dump_text(out, "overview", dl->overview);
	dump_text(out, "target", dl->target);
	if (dl->log_line)
		kopt_buf_addf(out, "log: lines %d-%d\n", dl->log_line,
			      dl->log_last);
	for (i = 0; i < dl->versions_nr; i++) {
		const struct kopt_devlog_version *v = &dl->versions[i];
		kopt_buf_addf(out, "version %s: \"%s\"", v->name, v->title);
		if (v->note)
			kopt_buf_addf(out, " (%s)", v->note);
		kopt_buf_addf(out, " lines %d-%d content %d\n", v->line,
			      v->last_line, v->content_last);
		if (v->location)
			kopt_buf_addf(out, "  location: %s\n", v->location);
		dump_list(out, "  ", "what changed", &v->what_changed);
		dump_list(out, "  ", "description", &v->description);
		if (v->issues_line)
			kopt_buf_addf(out, "  issues lines %d-%d\n",
				      v->issues_line, v->issues_last);
		dump_list(out, "  ", "issues", &v->issues);
		for (j = 0; j < v->perfs_nr; j++) {
			const struct kopt_devlog_perf *pf = &v->perfs[j];
			kopt_buf_addstr(out, "  perf");
			if (pf->has_config) {
				kopt_buf_addf(out, " b=%ld", pf->b);
				if (pf->b_requested != pf->b)
					kopt_buf_addf(out, " (asked %ld)",
						      pf->b_requested);
				kopt_buf_addf(out, " s=%ld t=%ld", pf->s,
					      pf->t);
			} else {
				kopt_buf_addstr(out, " (no configuration)");
			}
			kopt_buf_addf(out, " lines %d-%d", pf->line,
				      pf->last_line);
			if (pf->replayed)
				kopt_buf_addstr(out, " replayed");
			kopt_buf_addch(out, '\n');
			if (pf->device)
				kopt_buf_addf(out, "    device: %s\n",
					      pf->device);
			if (pf->context)
				kopt_buf_addf(out, "    context: %s\n",
					      pf->context);
			if (pf->table_line)
				kopt_buf_addf(out, "    table: line %d, %zu "
					      "rows\n", pf->table_line,
					      pf->rows_nr);
			for (k = 0; k < pf->rows_nr; k++)
				kopt_buf_addf(out, "      | %s | %s | %s |\n",
					      pf->rows[k].metric,
					      pf->rows[k].value,
					      pf->rows[k].vs ? pf->rows[k].vs :
					      "");
			for (m = 0; m < KOPT_METRIC__NR; m++)
				if (kopt_results_has(pf->metrics[m]))
					kopt_buf_addf(out, "    %s = %g\n",
						      kopt_metric_infos[m].name,
						      pf->metrics[m]);
			if (pf->bottleneck)
				kopt_buf_addf(out, "    bottleneck: %s\n",
					      pf->bottleneck);
			if (pf->root_cause)
				kopt_buf_addf(out, "    root cause: %s\n",
					      pf->root_cause);
			if (pf->issues_line)
				kopt_buf_addf(out, "    issues lines %d-%d\n",
					      pf->issues_line,
					      pf->issues_last);
			dump_list(out, "    ", "issues", &pf->issues);
			if (pf->insights_line)
				kopt_buf_addf(out, "    insights lines "
					      "%d-%d\n", pf->insights_line,
					      pf->insights_last);
			dump_list(out, "    ", "insights", &pf->insights);
		}
	}
}

/* ------------------------------------------------------------------ */
/* Edits */

/* Append `text` ('\n' lines) with the devlog's line ending. */
static void add_eol_text(struct kopt_buf *out, const char *text, int crlf)
{
	for (; *text; text++) {
		if (*text == '\n' && crlf)
			kopt_buf_addch(out, '\r');
		kopt_buf_addch(out, *text);
	}
}

static const char *eol(const struct kopt_devlog *dl)
{
	return dl->crlf ? "\r\n" : "\n";
}

/*
 * The line ending an edit writes: that of a line the edit keeps (the
 * version's heading, the marker it replaces, the line before an
 * insertion), so that the same edit again writes the same bytes; the
 * file's majority changes with the edit and cannot be the rule.  The
 * file's majority for a line without an ending, or none.
 */
static int line_crlf(const struct kopt_devlog *dl, int line)
{
	size_t end;

	if (line < 1 || line > dl->lines_nr)
		return dl->crlf;
	end = dl->line_start[line + 1];
	if (end >= 2 && dl->text.buf[end - 1] == '\n')
		return dl->text.buf[end - 2] == '\r';
	/* a carriage return alone: the nearer of the two endings we write */
	if (end >= 1 && dl->text.buf[end - 1] == '\r')
		return 1;
	return dl->crlf;
}

/*
 * Replace bytes [start, start + old_len) by `repl` into `tmp` and
 * re-parse it.  Nothing happens to `dl`; the caller checks `tmp` and
 * adopts it with adopt().
 */
static int try_splice(const struct kopt_devlog *dl, size_t start,
		      size_t old_len, const struct kopt_buf *repl,
		      struct kopt_devlog *tmp, struct kopt_devlog_edit *edit)
{
	struct kopt_buf text = KOPT_BUF_INIT;
	int ret;

	edit->start = start;
	edit->old_len = old_len;
	edit->new_len = repl->len;
	edit->changed = !(old_len == repl->len &&
			  !memcmp(dl->text.buf + start, repl->buf, old_len));
	kopt_buf_add(&text, dl->text.buf, dl->text.len);
	kopt_buf_splice(&text, start, old_len, repl->buf, repl->len);
	ret = kopt_devlog_parse(tmp, text.buf, text.len, dl->label);
	kopt_buf_release(&text);
	if (ret)
		return kopt_error("%s: the edited devlog would not parse; "
				  "left as it was", dl->label);
	return 0;
}

static void adopt(struct kopt_devlog *dl, struct kopt_devlog *tmp)
{
	kopt_devlog_release(dl);
	*dl = *tmp;
	memset(tmp, 0, sizeof(*tmp));
	kopt_devlog_release(tmp);
}

/*
 * The bytes to insert `body` ('\n' lines) before `line`, with blank
 * lines around it as needed; *pos is where they go.
 */
static void insertion(const struct kopt_devlog *dl, int line,
		      const char *body, struct kopt_buf *out, size_t *pos)
{
	*pos = kopt_devlog_offset(dl, line);
	if (line > dl->lines_nr && dl->text.len &&
	    dl->text.buf[dl->text.len - 1] != '\n' &&
	    dl->text.buf[dl->text.len - 1] != '\r')
		kopt_buf_addstr(out, eol(dl));
	if (line > 1 && !line_blank(dl, line - 1))
		kopt_buf_addstr(out, eol(dl));
	add_eol_text(out, body, dl->crlf);
	if (line <= dl->lines_nr && !line_blank(dl, line))
		kopt_buf_addstr(out, eol(dl));
}

static void add_items(struct kopt_buf *out, const char *const *items)
{
	int any = 0;

	for (; items && *items; items++) {
		const char *p;
		kopt_buf_addstr(out, "- ");
		for (p = *items; *p; p++)
			kopt_buf_addch(out, *p == '\n' || *p == '\r' ? ' ' : *p);
		kopt_buf_addch(out, '\n');
		any = 1;
	}
	if (!any)
		kopt_buf_addstr(out, KOPT_DEVLOG_INSIGHTS_PLACEHOLDER "\n");
}

int kopt_devlog_add_version(struct kopt_devlog *dl,
			    const struct kopt_devlog_new_version *nv,
			    struct kopt_devlog_edit *edit)
{
	struct kopt_devlog tmp = KOPT_DEVLOG_INIT;
	struct kopt_buf body = KOPT_BUF_INIT, repl = KOPT_BUF_INIT;
	const char *p;
	int line, level, ret;
	size_t pos;

	memset(edit, 0, sizeof(*edit));
	if (!kopt_version_valid(nv->name))
		return kopt_error("'%s' is not a version name (v0, v1, ...)",
				  nv->name);
	if (kopt_devlog_find_version(dl, nv->name))
		return 0;
	if (dl->versions_nr) {
		const struct kopt_devlog_version *v =
			&dl->versions[dl->versions_nr - 1];
		line = last_nonblank(dl, v->line, v->last_line) + 1;
		level = v->level;
	} else if (dl->log_line) {
		line = last_nonblank(dl, dl->log_line, dl->log_last) + 1;
		level = dl->log_level + 1;
	} else {
		return kopt_error("%s:%d: no '## Development log' section to "
				  "add %s under; add the heading and run "
				  "again", dl->label,
				  dl->lines_nr ? dl->lines_nr : 1, nv->name);
	}
	kopt_buf_addchars(&body, '#', level);
	kopt_buf_addch(&body, ' ');
	kopt_version_label(&body, nv->name);
	if (nv->title && *nv->title) {
		kopt_buf_addstr(&body, ": ");
		for (p = nv->title; *p; p++)
			kopt_buf_addch(&body, *p == '\n' || *p == '\r' ?
				       ' ' : *p);
	}
	kopt_buf_addstr(&body, "\n\n");
	if (nv->location)
		kopt_buf_addf(&body, "**Location**: `%s`\n\n", nv->location);
	kopt_buf_addstr(&body, "**What changed**:\n");
	add_items(&body, nv->what_changed);
	kopt_buf_addstr(&body, "\n**High-level description of main code "
			"changes**:\n");
	add_items(&body, nv->description);
	insertion(dl, line, body.buf, &repl, &pos);
	ret = try_splice(dl, pos, 0, &repl, &tmp, edit);
	edit->line = line;
	if (!ret && !kopt_devlog_find_version(&tmp, nv->name))
		ret = kopt_error("%s:%d: the new entry for %s does not read "
				 "back; devlog left as it was", dl->label,
				 line, nv->name);
	if (!ret)
		adopt(dl, &tmp);
	kopt_devlog_release(&tmp);
	kopt_buf_release(&body);
	kopt_buf_release(&repl);
	return ret;
}

/* The line of the text that holds byte `pos`. */
static int line_of(const struct kopt_devlog *dl, size_t pos)
{
	int lo = 1, hi = dl->lines_nr;

	while (lo < hi) {
		int mid = lo + (hi - lo + 1) / 2;
		if (dl->line_start[mid] <= pos)
			lo = mid;
		else
			hi = mid - 1;
	}
	return lo;
}

static int label_line(const struct kopt_devlog *dl, int line)
{
	size_t len, vlen;
	const char *p = line_at(dl, line, &len), *v;

	return match_label(p, len, &v, &vlen) != L_NONE;
}

static int no_version(const struct kopt_devlog *dl, const char *version)
{
	return kopt_error("%s:%d: no version '%s' in the devlog; add its "
			  "entry first ('git kopt design')", dl->label,
			  dl->log_line ? dl->log_line : 1, version);
}

/* The one block of `v` at that configuration; -1 when ambiguous. */
static int find_block(const struct kopt_devlog *dl,
		      const struct kopt_devlog_version *v, long b, long s,
		      long t, long b_requested)
{
	size_t i;
	int found = -1;

	for (i = 0; i < v->perfs_nr; i++) {
		if (!perf_matches(&v->perfs[i], b, s, t, b_requested))
			continue;
		if (found >= 0) {
			kopt_error("%s:%d: a second performance block of %s at "
				   "b=%ld, s=%ld, t=%ld (the first is at line "
				   "%d); keep one", dl->label,
				   v->perfs[i].line, v->name, b, s, t,
				   v->perfs[found].line);
			return -2;
		}
		found = (int)i;
	}
	return found;
}

int kopt_devlog_put_perf(struct kopt_devlog *dl, const char *version,
			 long b, long s, long t, long b_requested,
			 const char *block, struct kopt_devlog_edit *edit)
{
	struct kopt_devlog tmp = KOPT_DEVLOG_INIT;
	struct kopt_buf repl = KOPT_BUF_INIT;
	const struct kopt_devlog_version *v;
	const struct kopt_devlog_version *nv;
	size_t start, old_len = 0;
	int idx, ret, crlf;

	memset(edit, 0, sizeof(*edit));
	v = kopt_devlog_find_version(dl, version);
	if (!v)
		return no_version(dl, version);
	idx = find_block(dl, v, b, s, t, b_requested);
	if (idx == -2)
		return -1;
	crlf = dl->crlf;
	dl->crlf = line_crlf(dl, v->line);
	if (idx >= 0) {
		const struct kopt_devlog_perf *pf = &v->perfs[idx];
		start = kopt_devlog_offset(dl, pf->line);
		old_len = kopt_devlog_offset(dl, pf->last_line + 1) - start;
		add_eol_text(&repl, block, dl->crlf);
		kopt_buf_addstr(&repl, eol(dl));
		if (pf->insights_line) {
			size_t is = kopt_devlog_offset(dl, pf->insights_line);
			size_t ie = kopt_devlog_offset(dl,
						       pf->insights_last + 1);
			kopt_buf_add(&repl, dl->text.buf + is, ie - is);
			if (pf->insights_last == dl->lines_nr &&
			    pf->last_line != dl->lines_nr)
				kopt_buf_addstr(&repl, eol(dl));
		} else {
			add_eol_text(&repl, "**Insights**:\n"
				     KOPT_DEVLOG_INSIGHTS_PLACEHOLDER "\n",
				     dl->crlf);
		}
		edit->line = pf->line;
	} else {
		struct kopt_buf body = KOPT_BUF_INIT;
		/* at the end of the section, where nothing can absorb it */
		int line = v->content_last;
		kopt_buf_addstr(&body, block);
		kopt_buf_addstr(&body, "\n**Insights**:\n"
				KOPT_DEVLOG_INSIGHTS_PLACEHOLDER "\n");
		insertion(dl, line + 1, body.buf, &repl, &start);
		kopt_buf_release(&body);
		edit->line = line + 1;
	}
	dl->crlf = crlf;
	ret = try_splice(dl, start, old_len, &repl, &tmp, edit);
	if (!ret) {
		int got = -1;
		nv = kopt_devlog_find_version(&tmp, version);
		if (nv)
			got = find_block(&tmp, nv, b, s, t, b_requested);
		/* every block written has its Insights: read back without
		 * them, it landed where the Markdown around it swallows part
		 * of it (an open comment, a table), and the same edit again
		 * would not find what it wrote */
		if (got < 0 || !nv->perfs[got].insights_line)
			ret = kopt_error("%s:%d: the performance block of %s "
					 "at b=%ld, s=%ld, t=%ld does not "
					 "read back; devlog left as it was",
					 dl->label, edit->line, version, b, s,
					 t);
	}
	if (!ret)
		adopt(dl, &tmp);
	kopt_devlog_release(&tmp);
	kopt_buf_release(&repl);
	return ret;
}

/* The list read back has as many items as were written. */
static int same_count(const struct kopt_strvec *sv, const char *const *items)
{
	size_t i = 0;

	if (!items || !*items)
		return sv->nr == 1;
	while (items[i])
		i++;
	return i == sv->nr;
}

int kopt_devlog_set_issues(struct kopt_devlog *dl, const char *version,
			   int has_config, long b, long s, long t,
			   const char *const *items,
			   struct kopt_devlog_edit *edit)
{
	struct kopt_devlog tmp = KOPT_DEVLOG_INIT;
	struct kopt_buf body = KOPT_BUF_INIT, repl = KOPT_BUF_INIT;
	const struct kopt_devlog_version *v;
	int first = 0, last = 0, after = 0, ret, crlf;
	size_t start, old_len = 0;

	memset(edit, 0, sizeof(*edit));
	v = kopt_devlog_find_version(dl, version);
	if (!v)
		return no_version(dl, version);
	if (has_config) {
		int idx = find_block(dl, v, b, s, t, 0);
		if (idx == -2)
			return -1;
		if (idx < 0)
			return kopt_error("%s:%d: %s has no performance block "
					  "at b=%ld, s=%ld, t=%ld", dl->label,
					  v->line, version, b, s, t);
		first = v->perfs[idx].issues_line;
		last = v->perfs[idx].issues_last;
		after = v->perfs[idx].after_line;
	} else {
		first = v->issues_line;
		last = v->issues_last;
		/* before the first block, where no block can claim it */
		after = v->perfs_nr ? v->perfs[0].line - 1 : v->content_last;
	}
	kopt_buf_addstr(&body, "**Issues**:\n");
	if (items && *items)
		add_items(&body, items);
	else
		kopt_buf_addstr(&body, "- (none)\n");
	crlf = dl->crlf;
	dl->crlf = line_crlf(dl, v->line);
	if (first) {
		start = kopt_devlog_offset(dl, first);
		old_len = kopt_devlog_offset(dl, last + 1) - start;
		add_eol_text(&repl, body.buf, dl->crlf);
		if (last == dl->lines_nr && dl->text.len &&
		    dl->text.buf[dl->text.len - 1] != '\n' &&
		    dl->text.buf[dl->text.len - 1] != '\r')
			kopt_buf_setlen(&repl, repl.len - strlen(eol(dl)));
		else if (last < dl->lines_nr && !line_blank(dl, last + 1) &&
			 !label_line(dl, last + 1))
			/* text right under a list would join its last item */
			kopt_buf_addstr(&repl, eol(dl));
		edit->line = first;
	} else {
		insertion(dl, after + 1, body.buf, &repl, &start);
		edit->line = after + 1;
	}
	dl->crlf = crlf;
	ret = try_splice(dl, start, old_len, &repl, &tmp, edit);
	if (!ret) {
		const struct kopt_devlog_version *nv =
			kopt_devlog_find_version(&tmp, version);
		int at = line_of(&tmp, start + (size_t)(strstr(repl.buf,
					"**Issues**") - repl.buf));
		int got_first = 0, got_last = 0;
		const struct kopt_strvec *got = NULL;
		if (nv && has_config) {
			int idx = find_block(&tmp, nv, b, s, t, 0);
			if (idx >= 0) {
				got = &nv->perfs[idx].issues;
				got_first = nv->perfs[idx].issues_line;
				got_last = nv->perfs[idx].issues_last;
			}
		} else if (nv) {
			got = &nv->issues;
			got_first = nv->issues_line;
			got_last = nv->issues_last;
		}
		/* the list reads back as written, and nothing joined it */
		if (!got || !same_count(got, items) || got_first != at ||
		    got_last != at + (int)(got->nr))
			ret = kopt_error("%s:%d: the Issues of %s do not read "
					 "back; devlog left as it was",
					 dl->label, edit->line, version);
	}
	if (!ret)
		adopt(dl, &tmp);
	kopt_devlog_release(&tmp);
	kopt_buf_release(&body);
	kopt_buf_release(&repl);
	return ret;
}

/* ------------------------------------------------------------------ */
/* The Results section's generated block */

static int is_marker(cmark_node *n, const char *marker)
{
	const char *lit;

	if (cmark_node_get_type(n) != CMARK_NODE_HTML_BLOCK)
		return 0;
	lit = cmark_node_get_literal(n);
	while (lit && (*lit == ' ' || *lit == '\t'))
		lit++;
	return lit && kopt_starts_with(lit, marker);
}

int kopt_devlog_put_results(struct kopt_devlog *dl, const char *body,
			    struct kopt_devlog_edit *edit)
{
	struct kopt_devlog tmp = KOPT_DEVLOG_INIT;
	struct kopt_buf block = KOPT_BUF_INIT, repl = KOPT_BUF_INIT;
	cmark_node *doc = kopt_md_parse(dl->text.buf, dl->text.len), *n;
	int begin = 0, end = 0, heading = 0, section_end = 0, ret, line, crlf;
	size_t pos, old_len = 0;

	memset(edit, 0, sizeof(*edit));
	for (n = cmark_node_first_child(doc); n; n = cmark_node_next(n)) {
		if (is_marker(n, KOPT_DEVLOG_RESULTS_BEGIN) && !begin) {
			begin = cmark_node_get_start_line(n);
		} else if (is_marker(n, KOPT_DEVLOG_RESULTS_END) && begin &&
			   !end) {
			/* one line; cmark reports an HTML block's end as the
			 * line before it when it ends at a line's end */
			end = cmark_node_get_start_line(n);
		} else if (kopt_md_heading_level(n) == 2 && !heading) {
			struct kopt_buf t = KOPT_BUF_INIT;
			kopt_md_text(&t, n);
			kopt_buf_trim(&t);
			if (!strcasecmp(t.buf, "results"))
				heading = cmark_node_get_start_line(n);
			kopt_buf_release(&t);
		} else if (heading && !section_end &&
			   kopt_md_heading_level(n) >= 1 &&
			   kopt_md_heading_level(n) <= 2) {
			section_end = cmark_node_get_start_line(n) - 1;
		}
	}
	cmark_node_free(doc);
	if (begin && !end) {
		ret = kopt_error("%s:%d: '%s' has no '%s' after it; remove it, "
				 "or add the other, and run again", dl->label,
				 begin, KOPT_DEVLOG_RESULTS_BEGIN,
				 KOPT_DEVLOG_RESULTS_END);
		goto done;
	}

	kopt_buf_addstr(&block, KOPT_DEVLOG_RESULTS_BEGIN "\n\n");
	kopt_buf_addstr(&block, body);
	if (block.buf[block.len - 1] != '\n')
		kopt_buf_addch(&block, '\n');
	kopt_buf_addstr(&block, "\n" KOPT_DEVLOG_RESULTS_END "\n");
	crlf = dl->crlf;
	dl->crlf = line_crlf(dl, begin ? begin : heading);
	if (begin) {
		/* the block is there: only its bytes change */
		line = begin;
		pos = kopt_devlog_offset(dl, begin);
		old_len = kopt_devlog_offset(dl, end + 1) - pos;
		add_eol_text(&repl, block.buf, dl->crlf);
		if (end >= dl->lines_nr && dl->text.len &&
		    dl->text.buf[dl->text.len - 1] != '\n') {
			/* the file ended on the marker without a newline */
			kopt_buf_setlen(&repl, repl.len - strlen(eol(dl)));
		}
	} else if (heading) {
		if (!section_end)
			section_end = dl->lines_nr;
		line = last_nonblank(dl, heading, section_end) + 1;
		insertion(dl, line, block.buf, &repl, &pos);
	} else {
		struct kopt_buf sec = KOPT_BUF_INIT;
		kopt_buf_addf(&sec, "## Results\n\n%s", block.buf);
		line = dl->log_line ? dl->log_line : dl->lines_nr + 1;
		insertion(dl, line, sec.buf, &repl, &pos);
		kopt_buf_release(&sec);
	}
	dl->crlf = crlf;
	ret = try_splice(dl, pos, old_len, &repl, &tmp, edit);
	edit->line = line;
	if (!ret && tmp.versions_nr != dl->versions_nr)
		ret = kopt_error("%s:%d: the Results block would change the "
				 "versions the devlog holds; left as it was",
				 dl->label, line);
	if (!ret)
		adopt(dl, &tmp);
done:
	kopt_devlog_release(&tmp);
	kopt_buf_release(&block);
	kopt_buf_release(&repl);
	return ret;
}

char *kopt_devlog_created_from_line(const char *from, const char *dir)
{
	return kopt_xstrfmt("Created from V%ld (`%s`)",
			    kopt_version_number(from), dir);
}

char *kopt_devlog_created_from(const struct kopt_devlog_version *v)
{
	static const char prefix[] = "created from v";
	size_t i;

	for (i = 0; v && i < v->what_changed.nr; i++) {
		const char *p = v->what_changed.v[i];
		char *end;
		long n;

		while (*p == ' ' || *p == '\t')
			p++;
		if (strncasecmp(p, prefix, sizeof(prefix) - 1))
			continue;
		p += sizeof(prefix) - 1;
		if (!isdigit((unsigned char)*p))
			continue;
		errno = 0;
		n = strtol(p, &end, 10);
		if (errno || n < 0 || (isalnum((unsigned char)*end)))
			continue;
		return kopt_version_name(n);
	}
	return NULL;
}
