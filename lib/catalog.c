#include "catalog.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "error.h"
#include "md.h"
#include "banned.h"

static const char *const opt_header =
	"| ID | Optimization | Trigger Conditions | Est. Impact | Pitfalls | "
	"Detail File |\n"
	"|----|--------------|--------------------|-------------|----------|"
	"-------------|\n";
static const char *const anti_header =
	"| ID | Anti-Pattern | Failure Mode | Source | Detail File |\n"
	"|----|--------------|--------------|--------|-------------|\n";

const char *kopt_catalog_header(enum kopt_kind kind)
{
	return kind == KOPT_KIND_ANTI_PATTERN ? anti_header : opt_header;
}

/* Column names, lower-case with only letters and digits kept. */
static int column_of(const char *cell)
{
	char norm[64];
	size_t n = 0;

	for (; *cell && n + 1 < sizeof(norm); cell++)
		if (isalnum((unsigned char)*cell))
			norm[n++] = (char)tolower((unsigned char)*cell);
	norm[n] = '\0';
	if (!strcmp(norm, "id"))
		return KOPT_COL_ID;
	if (!strcmp(norm, "optimization") || !strcmp(norm, "antipattern"))
		return KOPT_COL_NAME;
	if (!strcmp(norm, "triggerconditions") || !strcmp(norm, "trigger") ||
	    !strcmp(norm, "triggers"))
		return KOPT_COL_TRIGGER;
	if (!strcmp(norm, "estimpact") || !strcmp(norm, "estimatedimpact"))
		return KOPT_COL_IMPACT;
	if (!strcmp(norm, "pitfalls"))
		return KOPT_COL_PITFALLS;
	if (!strcmp(norm, "failuremode"))
		return KOPT_COL_FAILURE;
	if (!strcmp(norm, "source"))
		return KOPT_COL_SOURCE;
	if (!strcmp(norm, "detailfile") || !strcmp(norm, "detail"))
		return KOPT_COL_DETAIL;
	return -1;
}

static const char *const col_title[KOPT_COL_NR] = {
	"ID", "Optimization", "Trigger Conditions", "Est. Impact", "Pitfalls",
	"Failure Mode", "Source", "Detail File",
};

struct parse {
	struct kopt_catalog *c;
	struct kopt_problem_file pf;
};

static void cell_text(struct kopt_buf *out, cmark_node *cell)
{
	kopt_buf_reset(out);
	kopt_md_text(out, cell);
	kopt_buf_trim(out);
}

/* Every code span under `n` is a trigger of the row. */
static void read_triggers(struct parse *ps, struct kopt_catalog_row *r,
			  cmark_node *n)
{
	struct kopt_error_catch prose = KOPT_ERROR_CATCH_INIT;
	struct kopt_trigger t;
	const char *lit;
	cmark_node *c;
	size_t plen;
	int ret;

	if (cmark_node_get_type(n) != CMARK_NODE_CODE) {
		for (c = cmark_node_first_child(n); c; c = cmark_node_next(c))
			read_triggers(ps, r, c);
		return;
	}
	lit = cmark_node_get_literal(n);
	if (!lit || kopt_knowledge_placeholder(lit, &plen) >= 0)
		return;
	kopt_error_catch(&prose);
	ret = kopt_trigger_parse(&t, lit, ps->c->path, r->line);
	kopt_error_catch_release(&prose);
	if (ret) {
		/* not an expression over known metrics: prose to judge */
		kopt_problems_add(&r->prose, ps->c->path, r->line, "%s", lit);
	} else {
		KOPT_ALLOC_GROW(r->triggers, r->triggers_nr + 1,
				r->triggers_alloc);
		r->triggers[r->triggers_nr++] = t;
	}
}

/* The first code span or link under `n`. */
static cmark_node *find_path_node(cmark_node *n)
{
	cmark_node *c, *hit;

	if (cmark_node_get_type(n) == CMARK_NODE_CODE ||
	    cmark_node_get_type(n) == CMARK_NODE_LINK)
		return n;
	for (c = cmark_node_first_child(n); c; c = cmark_node_next(c))
		if ((hit = find_path_node(c)))
			return hit;
	return NULL;
}

/*
 * Returns 1 and fills `t` when `header` is an index table's header row;
 * reports a table that names the ID and entry columns but lacks others.
 */
static int read_header(struct parse *ps, cmark_node *table,
		       struct kopt_catalog_table *t)
{
	cmark_node *hdr = cmark_node_first_child(table), *cell;
	struct kopt_buf text = KOPT_BUF_INIT;
	int i, kind = -1;

	if (!kopt_md_is(hdr, "table_header"))
		return 0;
	memset(t, 0, sizeof(*t));
	kopt_strvec_init(&t->columns);
	for (i = 0; i < KOPT_COL_NR; i++)
		t->col[i] = -1;
	for (cell = cmark_node_first_child(hdr), i = 0; cell;
	     cell = cmark_node_next(cell), i++) {
		int col;
		cell_text(&text, cell);
		kopt_strvec_push(&t->columns, text.buf);
		col = column_of(text.buf);
		if (col < 0 || t->col[col] >= 0)
			continue;
		t->col[col] = i;
		if (col == KOPT_COL_NAME)
			kind = tolower((unsigned char)text.buf[0]) == 'a' ?
			       KOPT_KIND_ANTI_PATTERN : KOPT_KIND_OPTIMIZATION;
	}
	t->ncols = i;
	kopt_buf_release(&text);
	t->header_line = kopt_md_table_header_line(table);
	t->end_line = kopt_md_table_end_line(table);
	if (t->col[KOPT_COL_ID] < 0 || kind < 0) {
		kopt_strvec_clear(&t->columns);
		return 0;
	}
	t->kind = (enum kopt_kind)kind;
	{
		static const int need_opt[] = { KOPT_COL_TRIGGER,
			KOPT_COL_IMPACT, KOPT_COL_PITFALLS, KOPT_COL_DETAIL };
		static const int need_anti[] = { KOPT_COL_FAILURE,
			KOPT_COL_SOURCE, KOPT_COL_DETAIL };
		const int *need = kind == KOPT_KIND_ANTI_PATTERN ?
				  need_anti : need_opt;
		size_t nneed = kind == KOPT_KIND_ANTI_PATTERN ?
			       KOPT_ARRAY_SIZE(need_anti) :
			       KOPT_ARRAY_SIZE(need_opt);
		size_t j;

		for (j = 0; j < nneed; j++)
			if (t->col[need[j]] < 0)
				kopt_problem_add(&ps->pf, t->header_line,
						 "the %s index has no '%s' "
						 "column",
						 kopt_kind_name(t->kind),
						 col_title[need[j]]);
	}
	return 1;
}

static void read_row(struct parse *ps, const struct kopt_catalog_table *t,
		     cmark_node *row)
{
	struct kopt_catalog *c = ps->c;
	struct kopt_catalog_row *r;
	struct kopt_buf text = KOPT_BUF_INIT;
	cmark_node *cell, *cells[256];
	int i, n = 0, filled;
	char prefix = t->kind == KOPT_KIND_ANTI_PATTERN ? 'A' : 'O';
	size_t j;

	for (cell = cmark_node_first_child(row); cell && n < 256;
	     cell = cmark_node_next(cell))
		cells[n++] = cell;
	KOPT_ALLOC_GROW(c->rows, c->rows_nr + 1, c->rows_alloc);
	r = &c->rows[c->rows_nr++];
	memset(r, 0, sizeof(*r));
	r->kind = t->kind;
	r->line = cmark_node_get_start_line(row);
	for (i = 0; i < KOPT_COL_NR; i++) {
		if (t->col[i] < 0)
			continue;
		if (t->col[i] < n)
			cell_text(&text, cells[t->col[i]]);
		else
			kopt_buf_reset(&text);
		r->cell[i] = kopt_strdup(text.buf);
	}

	/* the ID */
	r->num = -1;
	{
		const char *id = r->cell[KOPT_COL_ID], *p = id + 1;
		if (id[0] == prefix && isdigit((unsigned char)*p)) {
			while (isdigit((unsigned char)*p))
				p++;
			if (!*p)
				r->num = strtol(id + 1, NULL, 10);
		}
		if (r->num < 0)
			kopt_problem_add(&ps->pf, r->line, "ID '%s' is not of "
					 "the form %c<n>%s", id, prefix,
					 strchr(id, ' ') ? " (a table ends at "
					 "a blank line)" : "");
		for (j = 0; r->num >= 0 && j + 1 < c->rows_nr; j++)
			if (c->rows[j].kind == r->kind &&
			    c->rows[j].num == r->num) {
				kopt_problem_add(&ps->pf, r->line, "duplicate "
						 "ID '%s' (also on line %d)",
						 id, c->rows[j].line);
				break;
			}
	}

	/* a line that ran into the table: its ID says all there is */
	for (i = 0, filled = 0; i < KOPT_COL_NR; i++)
		if (i != KOPT_COL_ID && r->cell[i] && *r->cell[i])
			filled++;
	if (r->num < 0 && !filled)
		goto done;

	/* the detail file: a code span or a link */
	if (t->col[KOPT_COL_DETAIL] >= 0) {
		cmark_node *pn = t->col[KOPT_COL_DETAIL] < n ?
			find_path_node(cells[t->col[KOPT_COL_DETAIL]]) : NULL;
		const char *d = r->cell[KOPT_COL_DETAIL];

		if (pn && cmark_node_get_type(pn) == CMARK_NODE_CODE) {
			r->detail = kopt_strdup(cmark_node_get_literal(pn));
		} else if (pn) {
			r->detail = kopt_strdup(cmark_node_get_url(pn));
			r->detail_link = 1;
		} else if (*d) {
			kopt_problem_add(&ps->pf, r->line, "%s: the detail "
					 "file '%s' must be a path in "
					 "backticks or a link", r->cell[0], d);
		} else {
			kopt_problem_add(&ps->pf, r->line, "%s: no detail file",
					 r->cell[0]);
		}
	}

	if (t->col[KOPT_COL_TRIGGER] >= 0 && t->col[KOPT_COL_TRIGGER] < n)
		read_triggers(ps, r, cells[t->col[KOPT_COL_TRIGGER]]);

	/* cells left as learn new wrote them */
	for (i = 0; i < KOPT_COL_NR; i++) {
		size_t plen;
		long at;
		if (!r->cell[i] ||
		    (at = kopt_knowledge_placeholder(r->cell[i], &plen)) < 0)
			continue;
		kopt_problem_add(&ps->pf, r->line, "%s: template placeholder "
				 "'%.*s' left in the '%s' column", r->cell[0],
				 (int)plen, r->cell[i] + at,
				 i == KOPT_COL_NAME &&
				 t->kind == KOPT_KIND_ANTI_PATTERN ?
				 "Anti-Pattern" : col_title[i]);
	}
	if (t->kind == KOPT_KIND_OPTIMIZATION && r->cell[KOPT_COL_IMPACT] &&
	    kopt_knowledge_placeholder(r->cell[KOPT_COL_IMPACT], &j) < 0) {
		double pct;
		if (!*r->cell[KOPT_COL_IMPACT])
			kopt_problem_add(&ps->pf, r->line, "%s: no Est. "
					 "Impact; strategize ranks "
					 "optimizations by it", r->cell[0]);
		else if (kopt_impact_parse(r->cell[KOPT_COL_IMPACT], &pct))
			kopt_problem_add(&ps->pf, r->line, "%s: Est. Impact "
					 "'%s' is not a percentage (20-40%%), "
					 "a factor (1.5x) or high, medium, low",
					 r->cell[0], r->cell[KOPT_COL_IMPACT]);
	}
done:
	kopt_buf_release(&text);
}

int kopt_catalog_parse(struct kopt_catalog *out, const char *path,
		       const char *text, size_t len,
		       struct kopt_problems *problems)
{
	struct parse ps = { out, { problems, path, 0 } };
	cmark_node *doc, *n, *row;

	memset(out, 0, sizeof(*out));
	kopt_buf_init(&out->text, len);
	kopt_buf_add(&out->text, text, len);
	out->path = kopt_strdup(path);
	doc = kopt_md_parse(text, len);
	for (n = cmark_node_first_child(doc); n; n = cmark_node_next(n)) {
		struct kopt_catalog_table t;

		if (!kopt_md_is(n, "table") || !read_header(&ps, n, &t))
			continue;
		KOPT_ALLOC_GROW(out->tables, out->tables_nr + 1,
				out->tables_alloc);
		out->tables[out->tables_nr++] = t;
		for (row = cmark_node_first_child(n); row;
		     row = cmark_node_next(row))
			if (kopt_md_is(row, "table_row"))
				read_row(&ps, &t, row);
	}
	cmark_node_free(doc);
	return ps.pf.nr ? KOPT_EINVALID : 0;
}

void kopt_catalog_release(struct kopt_catalog *c)
{
	size_t i, k;
	int j;

	for (i = 0; i < c->rows_nr; i++) {
		for (j = 0; j < KOPT_COL_NR; j++)
			free(c->rows[i].cell[j]);
		free(c->rows[i].detail);
		for (k = 0; k < c->rows[i].triggers_nr; k++)
			kopt_trigger_release(&c->rows[i].triggers[k]);
		free(c->rows[i].triggers);
		kopt_problems_clear(&c->rows[i].prose);
	}
	free(c->rows);
	for (i = 0; i < c->tables_nr; i++)
		kopt_strvec_clear(&c->tables[i].columns);
	free(c->tables);
	free(c->path);
	kopt_buf_release(&c->text);
	memset(c, 0, sizeof(*c));
}

long kopt_catalog_next_id(const struct kopt_catalog *c, enum kopt_kind kind)
{
	long max = 0;
	size_t i;

	for (i = 0; i < c->rows_nr; i++)
		if (c->rows[i].kind == kind && c->rows[i].num > max)
			max = c->rows[i].num;
	return max + 1;
}

const struct kopt_catalog_row *
kopt_catalog_find(const struct kopt_catalog *c, const char *id)
{
	size_t i;

	for (i = 0; i < c->rows_nr; i++)
		if (c->rows[i].cell[KOPT_COL_ID] &&
		    !strcmp(c->rows[i].cell[KOPT_COL_ID], id))
			return &c->rows[i];
	return NULL;
}

/* Join and resolve "." and ".."; NULL when it climbs above the top. */
static char *normalize(const char *dir, const char *rel)
{
	struct kopt_strvec parts = KOPT_STRVEC_INIT;
	struct kopt_buf all = KOPT_BUF_INIT, out = KOPT_BUF_INIT;
	const char *p, *s;
	size_t i;
	int bad = 0;

	if (dir && *dir)
		kopt_buf_addf(&all, "%s/", dir);
	kopt_buf_addstr(&all, rel);
	for (p = all.buf; *p; p = *s ? s + 1 : s) {
		s = strchr(p, '/');
		if (!s)
			s = p + strlen(p);
		if (s == p || (s - p == 1 && *p == '.'))
			continue;
		if (s - p == 2 && p[0] == '.' && p[1] == '.') {
			if (!parts.nr) {
				bad = 1;
				break;
			}
			kopt_strvec_pop(&parts);
			continue;
		}
		kopt_buf_reset(&out);
		kopt_buf_add(&out, p, (size_t)(s - p));
		kopt_strvec_push(&parts, out.buf);
	}
	kopt_buf_reset(&out);
	for (i = 0; i < parts.nr; i++)
		kopt_buf_addf(&out, "%s%s", i ? "/" : "", parts.v[i]);
	kopt_strvec_clear(&parts);
	kopt_buf_release(&all);
	if (bad || !out.len) {
		kopt_buf_release(&out);
		return NULL;
	}
	return kopt_buf_detach(&out, NULL);
}

char *kopt_link_path(const char *file, const char *url, char **alt)
{
	char *dir, *u, *hash, *ret;
	const char *slash;

	if (alt)
		*alt = NULL;
	if (strstr(url, "://") || kopt_starts_with(url, "#") ||
	    kopt_starts_with(url, "mailto:"))
		return NULL;
	u = kopt_strdup(url);
	hash = strchr(u, '#');
	if (hash)
		*hash = '\0';
	if (u[0] == '/') {
		ret = normalize(NULL, u + 1);
		free(u);
		return ret;
	}
	slash = strrchr(file, '/');
	dir = slash ? kopt_strndup(file, (size_t)(slash - file)) :
		      kopt_strdup("");
	ret = normalize(dir, u);
	if (alt)
		*alt = normalize(NULL, u);
	free(dir);
	free(u);
	return ret;
}

char *kopt_catalog_detail_path(const struct kopt_catalog *c,
			       const struct kopt_catalog_row *row, char **alt)
{
	if (alt)
		*alt = NULL;
	if (!row->detail || !*row->detail)
		return NULL;
	if (!row->detail_link)
		return normalize(NULL, row->detail);
	return kopt_link_path(c->path, row->detail, alt);
}

static void add_cell(struct kopt_buf *out, const char *s)
{
	kopt_buf_addch(out, ' ');
	for (; s && *s; s++) {
		if (*s == '|')
			kopt_buf_addstr(out, "\\|");
		else if (*s == '\n' || *s == '\r')
			kopt_buf_addch(out, ' ');
		else
			kopt_buf_addch(out, *s);
	}
	kopt_buf_addstr(out, " |");
}

/* Whether `text` holds a row of `kind` with the ID cell `id`. */
static int reads_back(const char *path, const char *text, size_t len,
		      enum kopt_kind kind, const char *id)
{
	struct kopt_catalog after = KOPT_CATALOG_INIT;
	struct kopt_problems ignored = KOPT_PROBLEMS_INIT;
	size_t i;
	int found = 0;

	kopt_catalog_parse(&after, path, text, len, &ignored);
	for (i = 0; i < after.rows_nr && !found; i++)
		found = after.rows[i].kind == kind &&
			after.rows[i].cell[KOPT_COL_ID] &&
			!strcmp(after.rows[i].cell[KOPT_COL_ID], id);
	kopt_catalog_release(&after);
	kopt_problems_clear(&ignored);
	return found;
}

int kopt_catalog_append(struct kopt_buf *out, const struct kopt_catalog *c,
			const struct kopt_catalog_row *row)
{
	const struct kopt_catalog_table *t = NULL;
	struct kopt_buf line = KOPT_BUF_INIT;
	const char *text = c->text.buf;
	size_t len = c->text.len, at, i;
	int j;

	for (i = 0; i < c->tables_nr; i++)
		if (c->tables[i].kind == row->kind &&
		    (!t || c->tables[i].end_line > t->end_line))
			t = &c->tables[i];
	kopt_buf_reset(out);
	kopt_buf_add(out, text, len);
	kopt_buf_addch(&line, '|');
	if (t) {
		for (j = 0; j < t->ncols; j++) {
			int col, k;
			for (col = -1, k = 0; k < KOPT_COL_NR; k++)
				if (t->col[k] == j)
					col = k;
			add_cell(&line, col >= 0 ? row->cell[col] : "");
		}
	} else {
		static const int opt[] = { KOPT_COL_ID, KOPT_COL_NAME,
			KOPT_COL_TRIGGER, KOPT_COL_IMPACT, KOPT_COL_PITFALLS,
			KOPT_COL_DETAIL };
		static const int anti[] = { KOPT_COL_ID, KOPT_COL_NAME,
			KOPT_COL_FAILURE, KOPT_COL_SOURCE, KOPT_COL_DETAIL };
		int anti_kind = row->kind == KOPT_KIND_ANTI_PATTERN;
		const int *cols = anti_kind ? anti : opt;
		size_t n = anti_kind ? KOPT_ARRAY_SIZE(anti) :
			   KOPT_ARRAY_SIZE(opt);
		for (i = 0; i < n; i++)
			add_cell(&line, row->cell[cols[i]]);
	}
	kopt_buf_addch(&line, '\n');

	if (t) {
		at = kopt_md_line_end(text, len, t->end_line);
		if (at == len && len && text[len - 1] != '\n')
			kopt_buf_insert(&line, 0, "\n", 1);
		kopt_buf_insert(out, at, line.buf, line.len);
	} else {
		if (len && text[len - 1] != '\n')
			kopt_buf_addch(out, '\n');
		if (out->len)
			kopt_buf_addch(out, '\n');
		kopt_buf_addf(out, "## %s Index\n\n%s",
			      row->kind == KOPT_KIND_ANTI_PATTERN ?
			      "Anti-Pattern" : "Optimization",
			      kopt_catalog_header(row->kind));
		kopt_buf_addbuf(out, &line);
	}
	kopt_buf_release(&line);

	/*
	 * A fence or HTML block left open above the end swallows what is
	 * added there: refuse rather than write a row nobody reads.
	 */
	if (row->cell[KOPT_COL_ID] &&
	    !reads_back(c->path, out->buf, out->len, row->kind,
			row->cell[KOPT_COL_ID])) {
		kopt_buf_reset(out);
		return kopt_error_at(c->path ? c->path : "catalog", 0,
				     "the new row %s would not read back as a "
				     "table row (a code fence or HTML block "
				     "left open above the end?)",
				     row->cell[KOPT_COL_ID]);
	}
	return 0;
}

static int word_impact(const char *s, double *pct)
{
	static const struct { const char *w; double v; } words[] = {
		{ "very high", 50 }, { "high", 30 }, { "medium", 15 },
		{ "moderate", 15 }, { "low", 5 },
	};
	size_t i;

	while (*s && !isalpha((unsigned char)*s))
		s++;
	for (i = 0; i < KOPT_ARRAY_SIZE(words); i++)
		if (!strncasecmp(s, words[i].w, strlen(words[i].w))) {
			*pct = words[i].v;
			return 0;
		}
	return KOPT_EINVALID;
}

int kopt_impact_parse(const char *text, double *pct)
{
	const char *p = text;
	double a, b;
	char *end;

	while (*p && !isdigit((unsigned char)*p))
		p++;
	if (!*p)
		return word_impact(text, pct);
	a = strtod(p, &end);
	b = a;
	p = end;
	while (*p == ' ')
		p++;
	/* a range: 20-40%, 20–40% (en dash), 20 to 40% */
	if (*p == '-' || !strncmp(p, "\xe2\x80\x93", 3) ||
	    !strncasecmp(p, "to ", 3)) {
		const char *q = *p == '-' ? p + 1 : *p == '\xe2' ? p + 3 :
				p + 3;
		while (*q == ' ')
			q++;
		if (isdigit((unsigned char)*q)) {
			b = strtod(q, &end);
			p = end;
		}
	}
	while (*p == ' ')
		p++;
	if (*p == '%') {
		*pct = (a + b) / 2;
		return 0;
	}
	if (*p == 'x' || *p == 'X' || !strncmp(p, "\xc3\x97", 2)) {
		*pct = ((a + b) / 2 - 1) * 100;
		if (*pct < 0)
			*pct = 0;
		return 0;
	}
	return KOPT_EINVALID;
}

int kopt_catalog_row_same(const struct kopt_catalog_row *a,
			  const struct kopt_catalog_row *b)
{
	int i;

	if (a->kind != b->kind)
		return 0;
	for (i = 0; i < KOPT_COL_NR; i++)
		if (!a->cell[i] != !b->cell[i] ||
		    (a->cell[i] && strcmp(a->cell[i], b->cell[i])))
			return 0;
	return 1;
}

/*
 * Where the cells of a table row's line lie: [start[j], end[j]) for the
 * j-th cell, between unescaped pipes.  Returns the number of cells.
 */
static int split_row(const char *line, size_t len, size_t *start,
		     size_t *end, int max)
{
	size_t i = 0, from;
	int n = 0;

	while (i < len && (line[i] == ' ' || line[i] == '\t'))
		i++;
	if (i < len && line[i] == '|')
		i++;
	from = i;
	for (; i <= len; i++) {
		size_t bs = 0;
		if (i < len && line[i] != '|')
			continue;
		while (i < len && bs < i && line[i - 1 - bs] == '\\')
			bs++;
		if (i < len && bs % 2)
			continue;
		if (i == len) {
			/* text after the last pipe is a cell only when not blank */
			size_t k;
			for (k = from; k < len && isspace((unsigned char)line[k]);
			     k++)
				;
			if (k == len)
				break;
		}
		if (n < max) {
			start[n] = from;
			end[n] = i;
		}
		n++;
		from = i + 1;
	}
	return n < max ? n : max;
}

/* The value `cells` sets for the table's column j, or NULL. */
static const char *column_value(const struct kopt_catalog_table *t,
				char *const cells[KOPT_COL_NR], int j)
{
	int k;

	for (k = 0; k < KOPT_COL_NR; k++)
		if (t->col[k] == j && cells[k])
			return cells[k];
	return NULL;
}

static const struct kopt_catalog_table *
table_of(const struct kopt_catalog *c, const struct kopt_catalog_row *row)
{
	size_t i;

	for (i = 0; i < c->tables_nr; i++)
		if (c->tables[i].kind == row->kind &&
		    c->tables[i].header_line < row->line &&
		    row->line <= c->tables[i].end_line)
			return &c->tables[i];
	return NULL;
}

int kopt_catalog_set_cells(struct kopt_buf *out, const struct kopt_catalog *c,
			   const struct kopt_catalog_row *row,
			   char *const cells[KOPT_COL_NR])
{
	const struct kopt_catalog_table *t = table_of(c, row);
	const char *text = c->text.buf;
	size_t a, b, start[256], end[256];
	struct kopt_buf line = KOPT_BUF_INIT;
	struct kopt_catalog after = KOPT_CATALOG_INIT;
	struct kopt_problems ignored = KOPT_PROBLEMS_INIT;
	const struct kopt_catalog_row *now;
	int n, j, k, last = -1, ret = 0;

	kopt_buf_reset(out);
	if (!t)
		return kopt_error_at(c->path, row->line, "not a row of a "
				     "table of the catalog");
	a = kopt_md_line_start(text, c->text.len, row->line);
	b = kopt_md_line_end(text, c->text.len, row->line);
	while (b > a && (text[b - 1] == '\n' || text[b - 1] == '\r'))
		b--;
	n = split_row(text + a, b - a, start, end, 256);

	/* the line again, cell by cell, the set ones rewritten */
	kopt_buf_add(&line, text + a, n ? start[0] : b - a);
	for (j = 0; j < n; j++) {
		const char *with = column_value(t, cells, j);
		if (j)
			kopt_buf_addch(&line, '|');
		if (with) {
			struct kopt_buf cell = KOPT_BUF_INIT;
			add_cell(&cell, with);
			/* add_cell ends with " |": the pipe comes from the text */
			kopt_buf_add(&line, cell.buf, cell.len - 1);
			kopt_buf_release(&cell);
		} else {
			kopt_buf_add(&line, text + a + start[j],
				     end[j] - start[j]);
		}
	}
	if (n)
		kopt_buf_add(&line, text + a + end[n - 1], b - a - end[n - 1]);
	/* a row shorter than its header: cells up to the last one set */
	for (k = n; k < t->ncols && k < 256; k++)
		if (column_value(t, cells, k))
			last = k;
	for (k = n; k <= last; k++) {
		kopt_buf_rtrim(&line);
		if (!line.len || line.buf[line.len - 1] != '|')
			kopt_buf_addstr(&line, " |");
		add_cell(&line, column_value(t, cells, k) ?
			 column_value(t, cells, k) : "");
	}

	kopt_buf_add(out, text, a);
	kopt_buf_addbuf(out, &line);
	kopt_buf_add(out, text + b, c->text.len - b);

	/* the same row, at the same line, with the same other cells */
	kopt_catalog_parse(&after, c->path, out->buf, out->len, &ignored);
	now = row->cell[KOPT_COL_ID] ?
	      kopt_catalog_find(&after, row->cell[KOPT_COL_ID]) : NULL;
	if (!now || now->line != row->line || now->kind != row->kind)
		ret = -1;
	for (k = 0; !ret && k < KOPT_COL_NR; k++)
		if (!cells[k] && (!row->cell[k] != !now->cell[k] ||
				  (row->cell[k] &&
				   strcmp(row->cell[k], now->cell[k]))))
			ret = -1;
	if (ret) {
		kopt_buf_reset(out);
		ret = kopt_error_at(c->path, row->line, "%s: the row would not "
				    "read back with its new cells; edit it by "
				    "hand", row->cell[KOPT_COL_ID] ?
				    row->cell[KOPT_COL_ID] : "row");
	}
	kopt_catalog_release(&after);
	kopt_problems_clear(&ignored);
	kopt_buf_release(&line);
	return ret;
}

/*
 * A quantity of an evidence cell: its value and whether it is a time
 * (ns, us, μs, ms, s: scaled to us) or a rate (anything per second,
 * FLOP/s): 1 time, 2 rate, 0 neither or no number.
 */
static int quantity(const char *s, double *v)
{
	const char *p = s;
	char *end;
	double d;

	if (!s)
		return 0;
	while (*p && !isdigit((unsigned char)*p) && *p != '.')
		p++;
	errno = 0;
	d = strtod(p, &end);
	if (end == p || errno || !isfinite(d) || d <= 0)
		return 0;
	for (p = end; *p == ' ' || *p == ','; p++)
		;
	*v = d;
	if (strstr(p, "/s") || strcasestr(p, "flops"))
		return 2;
	if (!strncmp(p, "us", 2) || !strncmp(p, "\xce\xbcs", 3) ||
	    !strncmp(p, "\xc2\xb5s", 3))
		return 1;
	if (!strncmp(p, "ms", 2)) {
		*v = d * 1e3;
		return 1;
	}
	if (!strncmp(p, "ns", 2)) {
		*v = d / 1e3;
		return 1;
	}
	if (*p == 's' && !isalpha((unsigned char)p[1])) {
		*v = d * 1e6;
		return 1;
	}
	return 0;
}

/*
 * The gain an evidence row shows, in percent (1.5x faster is 50): from
 * Before and After when both are times or both rates, else from the
 * Change cell ("-12.3% duration", "1.8x", "+25% throughput",
 * "12% faster").  -1 when it says none of these.
 */
static int evidence_gain(const struct kopt_detail_evidence *e, double *gain)
{
	double b, a, v;
	int kb = quantity(e->before, &b), ka = quantity(e->after, &a);
	const char *p, *c = e->change;
	char *end;
	int neg = 0;

	if (kb && kb == ka) {
		*gain = kb == 1 ? (b / a - 1) * 100 : (a / b - 1) * 100;
		return 0;
	}
	if (!c)
		return -1;
	for (p = c; *p && !isdigit((unsigned char)*p) && *p != '.'; p++)
		if (*p == '-' || !strncmp(p, "\xe2\x88\x92", 3))
			neg = 1;
	errno = 0;
	v = strtod(p, &end);
	if (end == p || errno || !isfinite(v))
		return -1;
	while (*end == ' ')
		end++;
	if (*end == 'x' || !strncmp(end, "\xc3\x97", 2)) {
		if (v <= 0)
			return -1;
		*gain = (v - 1) * 100;
		return 0;
	}
	if (*end != '%')
		return -1;
	if (neg)
		v = -v;
	if (strcasestr(end, "slower"))
		v = -fabs(v);
	if (strcasestr(end, "duration") || strcasestr(end, "time") ||
	    strcasestr(end, "latency")) {
		if (v <= -100)
			return -1;
		*gain = (100 / (100 + v) - 1) * 100;
		return 0;
	}
	if (strcasestr(end, "faster") || strcasestr(end, "speed") ||
	    strcasestr(end, "throughput") || strcasestr(end, "slower")) {
		*gain = v;
		return 0;
	}
	return -1;
}

/* "~12%", "8-15%", "~1.8x", "1.5-2.2x", from the gains measured. */
static char *impact_of(const struct kopt_detail *d)
{
	double lo = 0, hi = 0, g;
	size_t i, n = 0;

	for (i = 0; i < d->evidence_nr; i++) {
		if (evidence_gain(&d->evidence[i], &g))
			continue;
		if (!n || g < lo)
			lo = g;
		if (!n || g > hi)
			hi = g;
		n++;
	}
	if (!n || hi <= 0)
		return NULL;
	if (lo < 0)
		lo = 0;
	if (hi >= 100) {
		if (lo < 100 && (lo + 100) / 100 < 1.05)
			lo = 5;
		if (fabs(hi - lo) < 5)
			return kopt_xstrfmt("~%.1fx", 1 + hi / 100);
		return kopt_xstrfmt("%.1f-%.1fx", 1 + lo / 100, 1 + hi / 100);
	}
	if (hi - lo < 1 || n == 1)
		return kopt_xstrfmt("~%.0f%%", hi);
	return kopt_xstrfmt("%.0f-%.0f%%", lo, hi);
}

/* The first sentence of a paragraph. */
static char *first_sentence(const char *s)
{
	const char *p;

	for (p = s; *p; p++)
		if ((*p == '.' || *p == ';') &&
		    (!p[1] || isspace((unsigned char)p[1])))
			return kopt_strndup(s, (size_t)(p - s));
	return kopt_strdup(s);
}

/* The Source type line without its label. */
static char *source_of(const char *line)
{
	struct kopt_buf b = KOPT_BUF_INIT;
	const char *p;

	for (p = line; *p; p++)
		if (*p != '*' && *p != '_')
			kopt_buf_addch(&b, *p);
	kopt_buf_trim(&b);
	if (!strncasecmp(b.buf, "source type:", 12))
		kopt_buf_splice(&b, 0, 12, "", 0);
	kopt_buf_trim(&b);
	return kopt_buf_detach(&b, NULL);
}

void kopt_catalog_cells_from_detail(char *cells[KOPT_COL_NR],
				    const struct kopt_detail *d,
				    enum kopt_kind kind)
{
	struct kopt_buf b = KOPT_BUF_INIT;
	size_t i, plen;

	for (i = 0; i < KOPT_COL_NR; i++)
		cells[i] = NULL;
	if (d->name && *d->name && kopt_knowledge_placeholder(d->name,
							       &plen) < 0)
		cells[KOPT_COL_NAME] = kopt_strdup(d->name);
	if (kind == KOPT_KIND_ANTI_PATTERN) {
		if (d->mechanism)
			cells[KOPT_COL_FAILURE] = first_sentence(d->mechanism);
		if (d->source)
			cells[KOPT_COL_SOURCE] = source_of(d->source);
		return;
	}
	/* the triggers as expressions, else the contexts as prose */
	for (i = 0; i < d->triggers_nr; i++)
		kopt_buf_addf(&b, "%s`%s`", i ? " and " : "",
			      d->triggers[i].text);
	for (i = 0; !d->triggers_nr && i < d->contexts.nr; i++)
		kopt_buf_addf(&b, "%s%s", i ? "; " : "", d->contexts.v[i]);
	if (b.len)
		cells[KOPT_COL_TRIGGER] = kopt_buf_detach(&b, NULL);
	cells[KOPT_COL_IMPACT] = impact_of(d);
	kopt_buf_reset(&b);
	for (i = 0; i < d->pitfalls.nr; i++)
		kopt_buf_addf(&b, "%s%s", i ? "; " : "", d->pitfalls.v[i]);
	if (b.len)
		cells[KOPT_COL_PITFALLS] = kopt_buf_detach(&b, NULL);
	kopt_buf_release(&b);
	/* a context or trigger still as the template wrote it says nothing */
	for (i = 0; i < KOPT_COL_NR; i++)
		if (cells[i] &&
		    kopt_knowledge_placeholder(cells[i], &plen) >= 0) {
			free(cells[i]);
			cells[i] = NULL;
		}
}

/* Lower case, no markup, one space between words, no final stop. */
static void normalized(struct kopt_buf *out, const char *s)
{
	kopt_buf_reset(out);
	for (; s && *s; s++) {
		if (*s == '`' || *s == '*' || *s == '_' || *s == '\\')
			continue;
		if (isspace((unsigned char)*s)) {
			if (out->len && out->buf[out->len - 1] != ' ')
				kopt_buf_addch(out, ' ');
			continue;
		}
		kopt_buf_addch(out, (char)tolower((unsigned char)*s));
	}
	kopt_buf_rtrim(out);
	while (out->len && out->buf[out->len - 1] == '.')
		kopt_buf_setlen(out, out->len - 1);
}

static int same_conjuncts(const struct kopt_trigger *a, size_t an,
			  const struct kopt_trigger *b, size_t bn)
{
	struct kopt_strvec x = KOPT_STRVEC_INIT, y = KOPT_STRVEC_INIT;
	size_t i;
	int same = 1;

	for (i = 0; i < an; i++)
		kopt_trigger_conjuncts(&a[i], &x);
	for (i = 0; i < bn; i++)
		kopt_trigger_conjuncts(&b[i], &y);
	for (i = 0; same && i < x.nr; i++)
		same = kopt_strvec_has(&y, x.v[i]);
	for (i = 0; same && i < y.nr; i++)
		same = kopt_strvec_has(&x, y.v[i]);
	kopt_strvec_clear(&x);
	kopt_strvec_clear(&y);
	return same;
}

int kopt_catalog_cell_agrees(const struct kopt_catalog_row *r, int col,
			     const struct kopt_detail *d, const char *derived,
			     int words)
{
	struct kopt_buf a = KOPT_BUF_INIT, b = KOPT_BUF_INIT;
	const char *have = r->cell[col];
	double x, y;
	size_t plen;
	int agree;

	if (!derived || !have)
		return 1;
	if (!*have || kopt_knowledge_placeholder(have, &plen) >= 0)
		return 0;
	/* prose in the row is the author's reading of prose in the file */
	if (col == KOPT_COL_TRIGGER && !d->triggers_nr)
		return 1;
	if (col == KOPT_COL_TRIGGER)
		return r->triggers_nr &&
		       same_conjuncts(r->triggers, r->triggers_nr,
				      d->triggers, d->triggers_nr);
	/* a summary in the author's words says what the file says */
	if (!words)
		return 1;
	if (col == KOPT_COL_IMPACT) {
		/* an estimate agrees with what was measured within 2x */
		if (kopt_impact_parse(have, &x) || kopt_impact_parse(derived, &y))
			return 0;
		return fabs(x - y) < 5 || (x > 0 && y > 0 && x / y <= 2 &&
					   y / x <= 2);
	}
	normalized(&a, have);
	normalized(&b, derived);
	agree = !strcmp(a.buf, b.buf);
	kopt_buf_release(&a);
	kopt_buf_release(&b);
	return agree;
}

const char *kopt_catalog_col_title(enum kopt_kind kind, int col)
{
	return col == KOPT_COL_NAME && kind == KOPT_KIND_ANTI_PATTERN ?
	       "Anti-Pattern" : col_title[col];
}
