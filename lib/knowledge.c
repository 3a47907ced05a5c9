#include "knowledge.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "error.h"
#include "md.h"
#include "banned.h"

static const char *const sections[] = {
	"When to Apply", "Mechanism", "Affected Metrics", "Implementation",
	"Performance Evidence", "Generalization", "Pitfalls", "Interactions",
};
#define NSECTIONS ((int)KOPT_ARRAY_SIZE(sections))
enum { WHEN = 0, MECHANISM = 1, EVIDENCE = 4, PITFALLS = 6 };

/*
 * What the templates hold until someone fills them in (and what
 * `learn new` writes into a catalog row it cannot fill): any of these
 * left in a file is an error.
 */
static const char *const placeholders[] = {
	"[Optimization Name]", "[Anti-Pattern Name]", "[Context 1",
	"[Context 2", "[Metric condition", "[why this threshold]",
	"[the metric that exposed", "[block / warp / thread]",
	"[How and why", "[Why this change makes", "[Metric 1", "[Metric 2",
	"[Metric 3", "# Code snippet", "[local experiment / external report]",
	"[Device-agnostic takeaway", "[Known failure modes",
	"[How this interacts", "[trigger conditions]", "[est. impact]",
	"[pitfalls]", "[failure mode]", "[source]",
};

const char *kopt_kind_name(enum kopt_kind k)
{
	return k == KOPT_KIND_ANTI_PATTERN ? "anti-pattern" : "optimization";
}

const char *kopt_kind_dir(enum kopt_kind k)
{
	return k == KOPT_KIND_ANTI_PATTERN ? "anti-patterns" : "optimizations";
}

int kopt_kind_parse(enum kopt_kind *out, const char *s)
{
	if (!strcmp(s, "optimization"))
		*out = KOPT_KIND_OPTIMIZATION;
	else if (!strcmp(s, "anti-pattern"))
		*out = KOPT_KIND_ANTI_PATTERN;
	else
		return KOPT_EINVALID;
	return 0;
}

static int kind_of_dir(const char *dir, size_t n, enum kopt_kind *kind)
{
	if (n == 13 && !strncmp(dir, "optimizations", n))
		*kind = KOPT_KIND_OPTIMIZATION;
	else if (n == 13 && !strncmp(dir, "anti-patterns", n))
		*kind = KOPT_KIND_ANTI_PATTERN;
	else
		return -1;
	return 0;
}

/* kopt_knowledge_locate(), and why not in `why` (may be NULL). */
static int locate(const char *root, const char *path, enum kopt_kind *kind,
		  char **language, char **name, struct kopt_buf *why)
{
	size_t rlen = strlen(root);
	const char *rest, *p[4];
	size_t n = 0;
	const char *s;

	*language = NULL;
	*name = NULL;
	while (rlen && root[rlen - 1] == '/')
		rlen--;
	if (strncmp(path, root, rlen) || path[rlen] != '/')
		return KOPT_ENOTFOUND;
	rest = path + rlen + 1;
	/* split into at most four components */
	p[n++] = rest;
	for (s = rest; *s && n < 4; s++)
		if (*s == '/')
			p[n++] = s + 1;
	if (strchr(p[n - 1], '/') || !kopt_ends_with(path, ".md"))
		goto bad;
	if (n == 2 && !kind_of_dir(p[0], (size_t)(p[1] - p[0] - 1), kind)) {
		*name = kopt_strndup(p[1], strlen(p[1]) - 3);
		return 0;
	}
	if (n == 4 && !strncmp(p[0], "languages/", 10) &&
	    !kind_of_dir(p[2], (size_t)(p[3] - p[2] - 1), kind)) {
		*language = kopt_strndup(p[1], (size_t)(p[2] - p[1] - 1));
		if (!kopt_valid_name(*language)) {
			if (why)
				kopt_buf_addf(why, "'%s' is not a valid "
					      "language name", *language);
			free(*language);
			*language = NULL;
			return KOPT_EINVALID;
		}
		*name = kopt_strndup(p[3], strlen(p[3]) - 3);
		return 0;
	}
bad:
	if (why)
		kopt_buf_addf(why, "not in a folder of detail files (%.*s/"
			      "optimizations/, %.*s/anti-patterns/ or "
			      "%.*s/languages/<language>/{optimizations,"
			      "anti-patterns}/)", (int)rlen, root, (int)rlen,
			      root, (int)rlen, root);
	return KOPT_EINVALID;
}

int kopt_knowledge_locate(const char *root, const char *path,
			  enum kopt_kind *kind, char **language, char **name)
{
	return locate(root, path, kind, language, name, NULL);
}

void kopt_knowledge_misplaced(struct kopt_buf *out, const char *root,
			      const char *path)
{
	enum kopt_kind kind;
	char *language, *name;

	if (!locate(root, path, &kind, &language, &name, out)) {
		free(language);
		free(name);
	}
}

char *kopt_knowledge_path(const char *root, enum kopt_kind kind,
			  const char *language, const char *name)
{
	size_t rlen = strlen(root);

	while (rlen && root[rlen - 1] == '/')
		rlen--;
	if (language)
		return kopt_xstrfmt("%.*s/languages/%s/%s/%s.md", (int)rlen,
				    root, language, kopt_kind_dir(kind), name);
	return kopt_xstrfmt("%.*s/%s/%s.md", (int)rlen, root,
			    kopt_kind_dir(kind), name);
}

long kopt_knowledge_placeholder(const char *text, size_t *len)
{
	const char *best = NULL;
	size_t i;

	for (i = 0; i < KOPT_ARRAY_SIZE(placeholders); i++) {
		const char *hit = strstr(text, placeholders[i]);
		if (hit && (!best || hit < best))
			best = hit;
	}
	if (!best)
		return -1;
	if (*best == '[') {
		const char *close = strchr(best, ']');
		const char *nl = strchr(best, '\n');
		*len = close && (!nl || close < nl) ?
		       (size_t)(close - best) + 1 : strcspn(best, "\n");
	} else {
		*len = strcspn(best, "\n");
	}
	return best - text;
}

struct section {
	int index;            /* into sections[], or -1 for an extra one */
	int line, end_line;   /* the heading's line; the section's last */
	cmark_node *heading;
};

struct parse {
	struct kopt_detail *d;
	const char *text;
	size_t len;
	struct kopt_problem_file pf;
};

static int section_index(const char *name)
{
	int i;

	for (i = 0; i < NSECTIONS; i++)
		if (!strcasecmp(name, sections[i]))
			return i;
	return -1;
}

static void heading_text(struct kopt_buf *out, cmark_node *h)
{
	kopt_buf_reset(out);
	kopt_md_text(out, h);
	kopt_buf_trim(out);
}

/* A node that says something (not an HTML comment). */
static int has_content(cmark_node *n)
{
	return cmark_node_get_type(n) != CMARK_NODE_HTML_BLOCK;
}

static void check_placeholders(struct parse *ps)
{
	int line = 1;
	size_t off = 0;

	while (off < ps->len) {
		const char *nl = memchr(ps->text + off, '\n', ps->len - off);
		size_t end = nl ? (size_t)(nl - ps->text) : ps->len;
		char *l = kopt_strndup(ps->text + off, end - off);
		const char *s = l;
		long at;
		size_t n;

		while ((at = kopt_knowledge_placeholder(s, &n)) >= 0) {
			if (n > 60)
				kopt_problem_add(&ps->pf, line, "template "
						 "placeholder '%.56s...' left "
						 "in", s + at);
			else
				kopt_problem_add(&ps->pf, line, "template "
						 "placeholder '%.*s' left in",
						 (int)n, s + at);
			s += at + n;
		}
		free(l);
		off = end + 1;
		line++;
	}
}

/* 1 when the item was a trigger, 0 when it is prose (kept as such). */
static int add_trigger(struct parse *ps, const char *text, int line)
{
	struct kopt_detail *d = ps->d;
	struct kopt_error_catch prose = KOPT_ERROR_CATCH_INIT;
	struct kopt_trigger t;
	size_t n;
	int ret;

	if (kopt_knowledge_placeholder(text, &n) >= 0)
		return 1; /* reported as a placeholder */
	kopt_error_catch(&prose);
	ret = kopt_trigger_parse(&t, text, d->path, line);
	kopt_error_catch_release(&prose);
	if (ret) {
		/* not an expression over known metrics: prose to judge */
		kopt_problems_add(&d->prose, d->path, line, "%s", text);
		return 0;
	}
	KOPT_ALLOC_GROW(d->triggers, d->triggers_nr + 1, d->triggers_alloc);
	d->triggers[d->triggers_nr++] = t;
	return 1;
}

static void add_control(struct parse *ps, const char *value, int line)
{
	struct kopt_detail *d = ps->d;
	char word[32];
	size_t n = 0;
	enum kopt_control c;

	while (*value == ' ' || *value == '\t')
		value++;
	while (n + 1 < sizeof(word) && (isalnum((unsigned char)value[n]) ||
					value[n] == '_' || value[n] == '-')) {
		word[n] = (char)tolower((unsigned char)value[n]);
		n++;
	}
	word[n] = '\0';
	if (value[0] == '[')
		return; /* the template's placeholder, reported as such */
	c = kopt_control_parse(word);
	if (!c) {
		kopt_problem_add(&ps->pf, line, "unknown control '%s' "
				 "(expected block, warp or thread)",
				 n ? word : value);
		return;
	}
	if (d->control) {
		kopt_problem_add(&ps->pf, line, "control declared twice "
				 "(first on line %d)", d->control_line);
		return;
	}
	d->control = c;
	d->control_line = line;
}

static void check_when(struct parse *ps, const struct section *sec)
{
	struct kopt_detail *d = ps->d;
	struct kopt_buf text = KOPT_BUF_INIT;
	cmark_node *n, *item;

	for (n = cmark_node_next(sec->heading); n; n = cmark_node_next(n)) {
		if (kopt_md_heading_level(n) && kopt_md_heading_level(n) <= 2)
			break;
		if (cmark_node_get_type(n) != CMARK_NODE_LIST)
			continue;
		for (item = cmark_node_first_child(n); item;
		     item = cmark_node_next(item)) {
			cmark_node *para = cmark_node_first_child(item);
			cmark_node *first = para ?
					    cmark_node_first_child(para) : NULL;
			int line = cmark_node_get_start_line(item);
			const char *rest;

			kopt_buf_reset(&text);
			kopt_md_text(&text, item);
			kopt_buf_trim(&text);
			if (para && first &&
			    cmark_node_get_type(para) ==
			    CMARK_NODE_PARAGRAPH &&
			    cmark_node_get_type(first) == CMARK_NODE_CODE) {
				if (!add_trigger(ps,
						 cmark_node_get_literal(first),
						 line))
					kopt_strvec_push(&d->contexts,
							 text.buf);
			} else if (!strncasecmp(text.buf, "control:", 8)) {
				rest = text.buf + 8;
				add_control(ps, rest, line);
			} else if (text.len) {
				kopt_strvec_push(&d->contexts, text.buf);
			}
		}
	}
	if (!d->contexts.nr)
		kopt_problem_add(&ps->pf, sec->line, "'## When to Apply' "
				 "names no context; add a bullet saying where "
				 "this applies (e.g. '- Decode attention with "
				 "a small batch')");
	kopt_buf_release(&text);
}

static int is_evidence_table(cmark_node *table)
{
	static const char *const want[] = { "Config", "Before", "After",
					    "Change" };
	struct kopt_buf t = KOPT_BUF_INIT;
	cmark_node *hdr = cmark_node_first_child(table), *cell;
	size_t i = 0;
	int ok = 1;

	if (!kopt_md_is(hdr, "table_header"))
		return 0;
	for (cell = cmark_node_first_child(hdr); cell && i < 4;
	     cell = cmark_node_next(cell), i++) {
		kopt_buf_reset(&t);
		kopt_md_text(&t, cell);
		kopt_buf_trim(&t);
		if (strcasecmp(t.buf, want[i]))
			ok = 0;
	}
	kopt_buf_release(&t);
	return ok && i == 4;
}

/* Plain text with no placeholder, or NULL. */
static char *filled_text(cmark_node *n)
{
	struct kopt_buf t = KOPT_BUF_INIT;
	size_t plen;

	kopt_md_text(&t, n);
	kopt_buf_trim(&t);
	if (!t.len || kopt_knowledge_placeholder(t.buf, &plen) >= 0) {
		kopt_buf_release(&t);
		return NULL;
	}
	return kopt_buf_detach(&t, NULL);
}

static void keep_evidence(struct kopt_detail *d, cmark_node *row)
{
	struct kopt_detail_evidence *e;
	cmark_node *cell = cmark_node_first_child(row);
	char **at[4];
	size_t i;

	KOPT_ALLOC_GROW(d->evidence, d->evidence_nr + 1, d->evidence_alloc);
	e = &d->evidence[d->evidence_nr++];
	memset(e, 0, sizeof(*e));
	at[0] = &e->config;
	at[1] = &e->before;
	at[2] = &e->after;
	at[3] = &e->change;
	for (i = 0; i < 4 && cell; i++, cell = cmark_node_next(cell))
		*at[i] = filled_text(cell);
}

/* The first paragraph of Mechanism, the bullets of Pitfalls. */
static void keep_prose(struct parse *ps, const struct section *sec)
{
	struct kopt_detail *d = ps->d;
	cmark_node *n, *item;
	char *t;

	for (n = cmark_node_next(sec->heading); n; n = cmark_node_next(n)) {
		if (kopt_md_heading_level(n) && kopt_md_heading_level(n) <= 2)
			break;
		if (sec->index == MECHANISM && !d->mechanism &&
		    cmark_node_get_type(n) == CMARK_NODE_PARAGRAPH)
			d->mechanism = filled_text(n);
		if (sec->index != PITFALLS ||
		    cmark_node_get_type(n) != CMARK_NODE_LIST)
			continue;
		for (item = cmark_node_first_child(n); item;
		     item = cmark_node_next(item))
			if ((t = filled_text(item))) {
				kopt_strvec_push(&d->pitfalls, t);
				free(t);
			}
	}
}

static void check_evidence(struct parse *ps, const struct section *sec)
{
	struct kopt_detail *d = ps->d;
	cmark_node *n, *row;
	int line, found_table = 0, rows = 0;

	/*
	 * The Source type line is looked up in the raw text: cmark-gfm loses
	 * the position of a paragraph that a table follows directly, as
	 * the template has it.
	 */
	for (line = sec->line + 1; line <= sec->end_line; line++) {
		size_t a = kopt_md_line_start(ps->text, ps->len, line);
		size_t b = kopt_md_line_end(ps->text, ps->len, line);
		struct kopt_buf l = KOPT_BUF_INIT;
		size_t i;

		for (i = a; i < b; i++)
			if (ps->text[i] != '*' && ps->text[i] != '_')
				kopt_buf_addch(&l, ps->text[i]);
		kopt_buf_trim(&l);
		if (!strncasecmp(l.buf, "source type:", 12)) {
			const char *v = l.buf + 12;
			while (*v == ' ' || *v == '\t')
				v++;
			const char *st = NULL;
			if (!strncasecmp(v, "local experiment", 16))
				st = "local experiment";
			else if (!strncasecmp(v, "external report", 15))
				st = "external report";
			if (st) {
				size_t e = b;
				while (e > a && (ps->text[e - 1] == '\n' ||
						 ps->text[e - 1] == '\r'))
					e--;
				/* a second evidence section: the last wins */
				free(d->source_type);
				free(d->source);
				d->source_type = kopt_strdup(st);
				d->source = kopt_strndup(ps->text + a, e - a);
			}
			else if (*v != '[') /* else: a placeholder */
				kopt_problem_add(&ps->pf, line, "source type "
						 "'%s' is neither 'local "
						 "experiment' nor 'external "
						 "report'", v);
			kopt_buf_release(&l);
			break;
		}
		kopt_buf_release(&l);
	}
	if (line > sec->end_line)
		kopt_problem_add(&ps->pf, sec->line, "'## Performance "
				 "Evidence' has no 'Source type: local "
				 "experiment' or 'Source type: external "
				 "report' line");
	for (n = cmark_node_next(sec->heading); n; n = cmark_node_next(n)) {
		if (kopt_md_heading_level(n) && kopt_md_heading_level(n) <= 2)
			break;
		if (!kopt_md_is(n, "table") || !is_evidence_table(n))
			continue;
		found_table = 1;
		for (row = cmark_node_first_child(n); row;
		     row = cmark_node_next(row))
			if (kopt_md_is(row, "table_row")) {
				keep_evidence(d, row);
				rows++;
			}
		break;
	}
	if (!found_table)
		kopt_problem_add(&ps->pf, sec->line, "'## Performance "
				 "Evidence' has no '| Config | Before | After "
				 "| Change |' table");
	else if (!rows)
		kopt_problem_add(&ps->pf, sec->line, "the evidence table has "
				 "no rows; record what was measured or "
				 "reported");
	d->evidence_rows = rows;
}

/*
 * The template's sections, in its order, each once; extra sections only
 * after the last of them.  Sections out of order are those outside the
 * longest run that is in order, so one moved section is one problem.
 */
static void check_order(struct parse *ps, struct section *secs, size_t nr,
			int nlines)
{
	int first[NSECTIONS], len[64], prev[64];
	size_t i, j, best = 0, last_known = 0;
	int keep[64] = { 0 }, have_known = 0, k;

	if (nr > 64)
		nr = 64; /* past that, the order goes unchecked */
	for (k = 0; k < NSECTIONS; k++)
		first[k] = -1;
	for (i = 0; i < nr; i++) {
		int idx = secs[i].index;
		if (idx < 0)
			continue;
		if (first[idx] >= 0) {
			kopt_problem_add(&ps->pf, secs[i].line, "section '## "
					 "%s' appears twice (first on line %d)",
					 sections[idx], secs[first[idx]].line);
			secs[i].index = -2; /* neither checked nor extra */
			continue;
		}
		first[idx] = (int)i;
		last_known = i;
		have_known = 1;
	}
	/* longest increasing run of template indices */
	for (i = 0; i < nr; i++) {
		len[i] = secs[i].index >= 0;
		prev[i] = -1;
		if (secs[i].index < 0)
			continue;
		for (j = 0; j < i; j++)
			if (secs[j].index >= 0 &&
			    secs[j].index < secs[i].index &&
			    len[j] + 1 > len[i]) {
				len[i] = len[j] + 1;
				prev[i] = (int)j;
			}
		if (len[i] > len[best] || secs[best].index < 0)
			best = i;
	}
	if (have_known)
		for (k = (int)best; k >= 0; k = prev[k])
			keep[k] = 1;
	for (i = 0; i < nr; i++) {
		int idx = secs[i].index;
		char *name;
		if (idx >= 0 && !keep[i]) {
			kopt_problem_add(&ps->pf, secs[i].line, "section '## "
					 "%s' is out of order; the template's "
					 "order is When to Apply, Mechanism, "
					 "Affected Metrics, Implementation, "
					 "Performance Evidence, "
					 "Generalization, Pitfalls, "
					 "Interactions", sections[idx]);
			secs[i].index = -2;
		} else if (idx == -1 && have_known && i < last_known) {
			struct kopt_buf t = KOPT_BUF_INIT;
			heading_text(&t, secs[i].heading);
			name = kopt_buf_detach(&t, NULL);
			kopt_problem_add(&ps->pf, secs[i].line, "unexpected "
					 "section '## %s' among the "
					 "template's; extra sections go after "
					 "'## Interactions'", name);
			free(name);
		}
	}
	for (k = 0; k < NSECTIONS; k++) {
		int at = nlines ? nlines : 1, l;
		const char *before = NULL;
		if (first[k] >= 0)
			continue;
		/* report it where the next section in order begins */
		for (l = k + 1; l < NSECTIONS && !before; l++)
			if (first[l] >= 0 && keep[first[l]]) {
				at = secs[first[l]].line;
				before = sections[l];
			}
		if (before)
			kopt_problem_add(&ps->pf, at, "missing section '## "
					 "%s' (expected before '## %s')",
					 sections[k], before);
		else
			kopt_problem_add(&ps->pf, at, "missing section '## %s'",
					 sections[k]);
	}
}

int kopt_detail_parse(struct kopt_detail *out, const char *path,
		      const char *text, size_t len,
		      struct kopt_problems *problems)
{
	struct parse ps = { out, text, len, { problems, path, 0 } };
	struct section *secs = NULL;
	size_t secs_nr = 0, secs_alloc = 0, i;
	struct kopt_buf name = KOPT_BUF_INIT;
	cmark_node *doc, *n;
	int nlines = kopt_md_line_count(text, len);
	int seen_h2 = 0;

	memset(out, 0, sizeof(*out));
	kopt_strvec_init(&out->contexts);
	kopt_strvec_init(&out->pitfalls);
	out->path = kopt_strdup(path);
	doc = kopt_md_parse(text, len);

	for (n = cmark_node_first_child(doc); n; n = cmark_node_next(n)) {
		int level = kopt_md_heading_level(n);
		int line = cmark_node_get_start_line(n);

		if (level == 1) {
			heading_text(&name, n);
			if (out->name)
				kopt_problem_add(&ps.pf, line, "a second H1 "
						 "'%s'; a detail file has one "
						 "name", name.buf);
			else if (seen_h2)
				kopt_problem_add(&ps.pf, line, "the H1 '%s' "
						 "must come before the "
						 "sections", name.buf);
			else if (!name.len)
				kopt_problem_add(&ps.pf, line, "the H1 is "
						 "empty; name the %s", "entry");
			if (!out->name) {
				out->name = kopt_strdup(name.buf);
				out->name_line = line;
			}
			continue;
		}
		if (level != 2)
			continue;
		seen_h2 = 1;
		KOPT_ALLOC_GROW(secs, secs_nr + 1, secs_alloc);
		secs[secs_nr].heading = n;
		secs[secs_nr].line = line;
		secs[secs_nr].end_line = nlines;
		if (secs_nr)
			secs[secs_nr - 1].end_line = line - 1;
		heading_text(&name, n);
		secs[secs_nr].index = section_index(name.buf);
		secs_nr++;
	}
	if (!out->name)
		kopt_problem_add(&ps.pf, 1, "no H1 name; a detail file starts "
				 "with '# <name>'");

	check_order(&ps, secs, secs_nr, nlines);

	for (i = 0; i < secs_nr; i++) {
		int has = 0;

		if (secs[i].index < 0)
			continue;
		for (n = cmark_node_next(secs[i].heading); n;
		     n = cmark_node_next(n)) {
			int level = kopt_md_heading_level(n);
			if (level && level <= 2)
				break;
			if (has_content(n))
				has = 1;
		}
		if (!has) {
			kopt_problem_add(&ps.pf, secs[i].line, "section '## "
					 "%s' is empty",
					 sections[secs[i].index]);
			continue;
		}
		if (secs[i].index == WHEN)
			check_when(&ps, &secs[i]);
		else if (secs[i].index == MECHANISM ||
			 secs[i].index == PITFALLS)
			keep_prose(&ps, &secs[i]);
		else if (secs[i].index == EVIDENCE)
			check_evidence(&ps, &secs[i]);
	}
	check_placeholders(&ps);

	cmark_node_free(doc);
	free(secs);
	kopt_buf_release(&name);
	return ps.pf.nr ? KOPT_EINVALID : 0;
}

void kopt_detail_release(struct kopt_detail *d)
{
	size_t i;

	free(d->path);
	free(d->name);
	kopt_strvec_clear(&d->contexts);
	kopt_problems_clear(&d->prose);
	for (i = 0; i < d->triggers_nr; i++)
		kopt_trigger_release(&d->triggers[i]);
	free(d->triggers);
	free(d->source_type);
	free(d->source);
	for (i = 0; i < d->evidence_nr; i++) {
		free(d->evidence[i].config);
		free(d->evidence[i].before);
		free(d->evidence[i].after);
		free(d->evidence[i].change);
	}
	free(d->evidence);
	free(d->mechanism);
	kopt_strvec_clear(&d->pitfalls);
	memset(d, 0, sizeof(*d));
}
