#include "md.h"

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmark-gfm-core-extensions.h>

#include "banned.h"

/*
 * The pool of kopt_md_parse_pooled(): cmark allocates every node, string
 * and table cell on its own, and freeing a devlog's tens of thousands of
 * pieces one by one cost as much as allocating them.  cmark's allocator
 * takes no context, so there is one pool, holding one document at a
 * time; each piece carries its size, for realloc().
 */
#define POOL_CHUNK (256 * 1024)
#define POOL_KEEP (4 * 1024 * 1024)     /* chunks kept for the next one */

struct pool_chunk {
	struct pool_chunk *next;
	size_t used, size;
	max_align_t data[];
};

/* one pool per thread: threads read devlogs at once (lib/parallel) */
static _Thread_local struct pool_chunk *pool;   /* the newest chunk first */
static _Thread_local struct pool_chunk *spare;  /* kept for the next one */
static _Thread_local char *pool_last;   /* the newest piece, or NULL */
static _Thread_local cmark_node *pool_doc;      /* its document, or NULL */
static pthread_once_t pool_once = PTHREAD_ONCE_INIT;
static pthread_key_t pool_key;          /* frees a thread's chunks */

#define POOL_HEAD sizeof(max_align_t)

static size_t pool_round(size_t n)
{
	return (n + sizeof(max_align_t) - 1) & ~(sizeof(max_align_t) - 1);
}

static void *pool_alloc(size_t size)
{
	struct pool_chunk *c = pool;
	size_t need = POOL_HEAD + pool_round(size ? size : 1);
	char *p;

	if (!c || c->size - c->used < need) {
		if (spare && spare->size >= need) {
			c = spare;
			spare = c->next;
		} else {
			size_t sz = need > POOL_CHUNK ? need : POOL_CHUNK;
			c = kopt_malloc(sizeof(*c) + sz);
			c->size = sz;
			pthread_setspecific(pool_key, c);
		}
		c->next = pool;
		c->used = 0;
		pool = c;
	}
	p = (char *)c->data + c->used;
	c->used += need;
	memcpy(p, &size, sizeof(size));
	pool_last = p + POOL_HEAD;
	return pool_last;
}

static void *pool_calloc(size_t nmemb, size_t size)
{
	void *p;

	if (size && nmemb > SIZE_MAX / 2 / size)
		return kopt_calloc(nmemb, size);  /* fails: out of memory */
	p = pool_alloc(nmemb * size);
	memset(p, 0, nmemb * size);
	return p;
}

static void *pool_realloc(void *old, size_t size)
{
	size_t was;
	void *p;

	if (!old)
		return pool_alloc(size);
	memcpy(&was, (char *)old - POOL_HEAD, sizeof(was));
	if (old == pool_last) {
		/* the newest piece grows where it lies when there is room */
		struct pool_chunk *c = pool;
		char *base = (char *)old - POOL_HEAD;
		size_t need = POOL_HEAD + pool_round(size ? size : 1);
		if (base >= (char *)c->data &&
		    base < (char *)c->data + c->size &&
		    (size_t)(base - (char *)c->data) + need <= c->size) {
			c->used = (size_t)(base - (char *)c->data) + need;
			memcpy(base, &size, sizeof(size));
			return old;
		}
	}
	p = pool_alloc(size);
	memcpy(p, old, was < size ? was : size);
	return p;
}

static void pool_free(void *p)
{
	(void)p;        /* the pool goes as a whole (kopt_md_free()) */
}

static cmark_mem pool_mem = { pool_calloc, pool_realloc, pool_free };

/* Empty the pool, keeping up to POOL_KEEP bytes of chunks as spares. */
static void pool_drop(void)
{
	struct pool_chunk *c, *next;
	size_t kept = 0;

	for (c = spare; c; c = c->next)
		kept += c->size;
	for (c = pool; c; c = next) {
		next = c->next;
		if (kept + c->size <= POOL_KEEP) {
			kept += c->size;
			c->next = spare;
			spare = c;
		} else {
			free(c);
		}
	}
	pool = NULL;
	pool_last = NULL;
	pool_doc = NULL;
}

/* A thread that parsed ends: its pool's chunks and spares go. */
static void pool_thread_end(void *chunk)
{
	struct pool_chunk *c, *next;

	(void)chunk;
	for (c = pool; c; c = next) {
		next = c->next;
		free(c);
	}
	for (c = spare; c; c = next) {
		next = c->next;
		free(c);
	}
	pool = spare = NULL;
	pool_last = NULL;
	pool_doc = NULL;
}

/*
 * cmark-gfm's extensions and the inline parser's table of special
 * characters are the process's: registered once, and a parser is made
 * and given the table extension (which writes that table) by one
 * thread at a time.
 */
static pthread_mutex_t parser_mutex = PTHREAD_MUTEX_INITIALIZER;

static void md_once(void)
{
	pthread_key_create(&pool_key, pool_thread_end);
	cmark_gfm_core_extensions_ensure_registered();
}

static cmark_node *parse(const char *text, size_t len, cmark_mem *mem)
{
	cmark_syntax_extension *table;
	cmark_parser *p;
	cmark_node *doc;

	pthread_once(&pool_once, md_once);
	pthread_mutex_lock(&parser_mutex);
	p = mem ? cmark_parser_new_with_mem(CMARK_OPT_SOURCEPOS, mem) :
		  cmark_parser_new(CMARK_OPT_SOURCEPOS);
	table = cmark_find_syntax_extension("table");
	if (table)
		cmark_parser_attach_syntax_extension(p, table);
	pthread_mutex_unlock(&parser_mutex);
	if (memchr(text, '\r', len)) {
		/*
		 * A line ends at '\n' here, as in the line helpers below
		 * and in every splice; cmark would also end one at a lone
		 * '\r', and its line numbers would point at the wrong bytes.
		 */
		char *copy = kopt_malloc(len ? len : 1);
		size_t i;

		memcpy(copy, text, len);
		for (i = 0; i < len; i++)
			if (copy[i] == '\r' && (i + 1 == len ||
						copy[i + 1] != '\n'))
				copy[i] = ' ';
		cmark_parser_feed(p, copy, len);
		free(copy);
	} else {
		cmark_parser_feed(p, text, len);
	}
	doc = cmark_parser_finish(p);
	cmark_parser_free(p);
	return doc;
}

cmark_node *kopt_md_parse(const char *text, size_t len)
{
	return parse(text, len, NULL);
}

cmark_node *kopt_md_parse_pooled(const char *text, size_t len)
{
	if (pool_doc)
		return parse(text, len, NULL);
	pool_doc = parse(text, len, &pool_mem);
	return pool_doc;
}

void kopt_md_free(cmark_node *doc)
{
	if (doc && doc == pool_doc)
		pool_drop();
	else
		cmark_node_free(doc);
}

int kopt_md_is(cmark_node *node, const char *type)
{
	const char *t = node ? cmark_node_get_type_string(node) : NULL;

	return t && !strcmp(t, type);
}

int kopt_md_heading_level(cmark_node *node)
{
	if (!node || cmark_node_get_type(node) != CMARK_NODE_HEADING)
		return 0;
	return cmark_node_get_heading_level(node);
}

static void text_of(struct kopt_buf *out, cmark_node *node)
{
	cmark_node *c;
	const char *lit;

	switch (cmark_node_get_type(node)) {
	case CMARK_NODE_TEXT:
	case CMARK_NODE_CODE:
	case CMARK_NODE_HTML_INLINE:
		lit = cmark_node_get_literal(node);
		if (lit)
			kopt_buf_addstr(out, lit);
		return;
	case CMARK_NODE_SOFTBREAK:
	case CMARK_NODE_LINEBREAK:
		kopt_buf_addch(out, ' ');
		return;
	default:
		break;
	}
	for (c = cmark_node_first_child(node); c; c = cmark_node_next(c)) {
		if (c != cmark_node_first_child(node) &&
		    cmark_node_get_type(c) == CMARK_NODE_PARAGRAPH)
			kopt_buf_addch(out, ' ');
		text_of(out, c);
	}
}

void kopt_md_text(struct kopt_buf *out, cmark_node *node)
{
	text_of(out, node);
}

int kopt_md_table_end_line(cmark_node *table)
{
	return cmark_node_get_end_line(table);
}

int kopt_md_table_header_line(cmark_node *table)
{
	cmark_node *row;

	/*
	 * Rows after the header carry right positions; the header does not
	 * when a paragraph ran into the table.  The delimiter row sits just
	 * above the first body row, or is the table's last line.
	 */
	for (row = cmark_node_first_child(table); row;
	     row = cmark_node_next(row))
		if (kopt_md_is(row, "table_row") &&
		    cmark_node_get_start_line(row) > 0)
			return cmark_node_get_start_line(row) - 2;
	return cmark_node_get_end_line(table) - 1;
}

/* Does `line` close a fence of `n` `ch` characters? */
static int closes_fence(const char *line, size_t len, char ch, int n)
{
	const char *p = line, *end = line + len;
	int run = 0;

	/* container markers and indentation come before a closing fence */
	while (p < end && (*p == ' ' || *p == '\t' || *p == '>'))
		p++;
	while (p < end && *p == ch) {
		p++;
		run++;
	}
	if (run < n || run < 3)
		return 0;
	while (p < end && (*p == ' ' || *p == '\t' || *p == '\r' ||
			   *p == '\n'))
		p++;
	return p == end;
}

int kopt_md_unclosed_fence(cmark_node *doc, const char *text, size_t len)
{
	cmark_iter *it = cmark_iter_new(doc);
	cmark_event_type ev;
	int found = 0;

	while (!found && (ev = cmark_iter_next(it)) != CMARK_EVENT_DONE) {
		cmark_node *n = cmark_iter_get_node(it);
		int fence_len = 0, offset = 0, start, end;
		char ch = 0;
		size_t a, b;

		if (ev != CMARK_EVENT_ENTER ||
		    cmark_node_get_type(n) != CMARK_NODE_CODE_BLOCK ||
		    !cmark_node_get_fenced(n, &fence_len, &offset, &ch))
			continue;
		start = cmark_node_get_start_line(n);
		end = cmark_node_get_end_line(n);
		a = kopt_md_line_start(text, len, end);
		b = kopt_md_line_end(text, len, end);
		if (end <= start || !closes_fence(text + a, b - a, ch, fence_len))
			found = start;
	}
	cmark_iter_free(it);
	return found;
}

size_t kopt_md_line_start(const char *text, size_t len, int line)
{
	size_t off = 0;
	int n = 1;

	while (n < line && off < len) {
		const char *nl = memchr(text + off, '\n', len - off);
		if (!nl)
			return len;
		off = (size_t)(nl - text) + 1;
		n++;
	}
	return off;
}

size_t kopt_md_line_end(const char *text, size_t len, int line)
{
	size_t off = kopt_md_line_start(text, len, line);
	const char *nl;

	if (off >= len)
		return len;
	nl = memchr(text + off, '\n', len - off);
	return nl ? (size_t)(nl - text) + 1 : len;
}

int kopt_md_line_count(const char *text, size_t len)
{
	int n = 0;
	size_t i;

	for (i = 0; i < len; i++)
		if (text[i] == '\n')
			n++;
	if (len && text[len - 1] != '\n')
		n++;
	return n;
}

int kopt_md_section(const char *text, size_t len, const char *needle,
		    size_t *start, size_t *end)
{
	cmark_node *doc = kopt_md_parse(text, len), *n;
	struct kopt_buf t = KOPT_BUF_INIT;
	int found = 0;

	for (n = cmark_node_first_child(doc); n; n = cmark_node_next(n)) {
		if (!kopt_md_heading_level(n))
			continue;
		if (found) {
			*end = kopt_md_line_start(text, len,
						  cmark_node_get_start_line(n));
			break;
		}
		kopt_buf_reset(&t);
		kopt_md_text(&t, n);
		if (strstr(t.buf, needle)) {
			cmark_node *next = cmark_node_next(n);
			int last = cmark_node_get_end_line(n);
			/* cmark-gfm 0.29 ends a setext heading a line late */
			if (next && cmark_node_get_start_line(next) <= last)
				last = cmark_node_get_start_line(next) - 1;
			found = 1;
			*start = kopt_md_line_end(text, len, last);
			*end = len;
		}
	}
	kopt_buf_release(&t);
	cmark_node_free(doc);
	return found;
}
