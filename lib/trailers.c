#include "trailers.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "error.h"
#include "banned.h"


static const char *const step_names[] = {
	[KOPT_STEP_NONE] = "",
	[KOPT_STEP_DESIGN] = "design",
	[KOPT_STEP_VERIFY] = "verify",
	[KOPT_STEP_LEARN] = "learn",
};

const char *kopt_step_name(enum kopt_step step)
{
	if ((size_t)step >= KOPT_ARRAY_SIZE(step_names))
		return "";
	return step_names[step];
}

enum kopt_step kopt_step_parse(const char *s)
{
	size_t i;

	for (i = 1; s && i < KOPT_ARRAY_SIZE(step_names); i++)
		if (!strcmp(s, step_names[i]))
			return (enum kopt_step)i;
	return KOPT_STEP_NONE;
}

static int is_scissors(const char *line, size_t len, int comment_char)
{
	const char *p = line, *end = line + len;

	if (!comment_char || !len || *p != comment_char)
		return 0;
	p++;
	while (p < end && *p == ' ')
		p++;
	/* "# ------------------------ >8 ------------------------" */
	return end - p >= 4 && *p == '-' && memmem(p, (size_t)(end - p),
						   ">8", 2) != NULL;
}

void kopt_message_cleanup(struct kopt_buf *out, const char *message,
			  int comment_char)
{
	const char *p = message;
	size_t blank = 0;

	while (*p) {
		const char *eol = strchr(p, '\n');
		size_t len = eol ? (size_t)(eol - p) : strlen(p);
		size_t n = len;

		if (is_scissors(p, len, comment_char))
			break;
		if (!(comment_char && len && *p == comment_char)) {
			while (n && isspace((unsigned char)p[n - 1]))
				n--;
			if (!n) {
				blank++;
			} else {
				if (out->len && blank)
					kopt_buf_addch(out, '\n');
				blank = 0;
				kopt_buf_add(out, p, n);
				kopt_buf_addch(out, '\n');
			}
		}
		p += len;
		if (*p)
			p++;
	}
}

/*
 * Trailers are read as git reads them (trailer.c of git 2.39, what
 * `git interpret-trailers --parse` and `%(trailers)` print), not with
 * libgit2's older copy of that code, which ends the message at any line
 * starting with "---" ("----", "---x") where git ends it only at a
 * "---" followed by white space (the divider above a patch), and keeps
 * a folded value's line breaks.
 */

static const char *next_line(const char *s)
{
	const char *nl = strchr(s, '\n');

	return nl ? nl + 1 : s + strlen(s);
}

/* Start of the line before offset `len` (the one ending there); -1: none. */
static long last_line(const char *buf, size_t len)
{
	long i;

	if (!len)
		return -1;
	for (i = (long)len - 2; i >= 0; i--)
		if (buf[i] == '\n')
			return i + 1;
	return 0;
}

static int blank_line(const char *s)
{
	while (*s && *s != '\n' && isspace((unsigned char)*s))
		s++;
	return !*s || *s == '\n';
}

static int comment_line(const char *s, int comment_char)
{
	return comment_char && *s == comment_char;
}

/* Where ':' is when the line starts with a token ("Key" or "Key "). */
static long separator(const char *line)
{
	int space = 0;
	const char *c;

	for (c = line; *c; c++) {
		if (*c == ':')
			return c - line;
		if (!space && (isalnum((unsigned char)*c) || *c == '-'))
			continue;
		if (c != line && (*c == ' ' || *c == '\t')) {
			space = 1;
			continue;
		}
		break;
	}
	return -1;
}

/* The divider above a patch: "---" and white space. */
static size_t patch_start(const char *msg)
{
	const char *s;

	for (s = msg; *s; s = next_line(s))
		if (!strncmp(s, "---", 3) && isspace((unsigned char)s[3]))
			return (size_t)(s - msg);
	return (size_t)(s - msg);
}

/*
 * The end of the trailer block: `len` less the comment and blank lines
 * at its end, and an old "Conflicts:" block of tab-led paths (below the
 * title: a message titled "Conflicts:" has no such block).
 */
static size_t trailer_end(const char *buf, size_t len, int comment_char)
{
	size_t boc = 0, bol = 0;
	int conflicts = 0, titled = 0;

	while (bol < len) {
		const char *nl = memchr(buf + bol, '\n', len - bol);
		size_t next = nl ? (size_t)(nl - buf) + 1 : len;

		if (comment_line(buf + bol, comment_char) || buf[bol] == '\n') {
			if (!boc)
				boc = bol;
		} else if (!titled) {
			titled = 1;
			boc = 0;
		} else if (!strncmp(buf + bol, "Conflicts:\n", 11)) {
			conflicts = 1;
			if (!boc)
				boc = bol;
		} else if (conflicts && buf[bol] == '\t') {
			;
		} else if (boc) {
			boc = 0;
			conflicts = 0;
		}
		bol = next;
	}
	return boc ? boc : len;
}

/*
 * The start of the trailer block in buf[0, len): after the blank line
 * above the last paragraph (never the first, the title) when its lines
 * are all trailers, or hold one of git's own and are a quarter trailers.
 */
static size_t trailer_start(const char *buf, size_t len, int comment_char)
{
	static const char *const generated[] = {
		"Signed-off-by: ", "(cherry picked from commit ", NULL
	};
	const char *s;
	long title_end, l;
	int only_spaces = 1, recognized = 0, trailers = 0, others = 0;
	int continuations = 0;

	for (s = buf; s < buf + len; s = next_line(s)) {
		if (comment_line(s, comment_char))
			continue;
		if (blank_line(s))
			break;
	}
	title_end = s - buf;

	for (l = last_line(buf, len); l >= title_end; l = last_line(buf, l)) {
		const char *bol = buf + l;
		const char *const *g;
		long sep;

		if (comment_line(bol, comment_char)) {
			others += continuations;
			continuations = 0;
			continue;
		}
		if (blank_line(bol)) {
			if (only_spaces)
				continue;
			others += continuations;
			if ((recognized && trailers * 3 >= others) ||
			    (trailers && !others))
				return (size_t)(next_line(bol) - buf);
			return len;
		}
		only_spaces = 0;
		for (g = generated; *g; g++)
			if (!strncmp(bol, *g, strlen(*g)))
				break;
		if (*g) {
			trailers++;
			continuations = 0;
			recognized = 1;
			continue;
		}
		sep = separator(bol);
		if (sep >= 1 && !isspace((unsigned char)bol[0])) {
			trailers++;
			continuations = 0;
		} else if (isspace((unsigned char)bol[0])) {
			continuations++;
		} else {
			others += 1 + continuations;
			continuations = 0;
		}
	}
	return len;
}

/* buf[0, len) without white space at both ends. */
static void add_trimmed(struct kopt_buf *out, const char *p, size_t len)
{
	while (len && isspace((unsigned char)*p)) {
		p++;
		len--;
	}
	while (len && isspace((unsigned char)p[len - 1]))
		len--;
	kopt_buf_add(out, p, len);
}

/* A value's continuation lines folded into one: each break one space. */
static void unfold(struct kopt_buf *out, const char *p, size_t len)
{
	struct kopt_buf raw = KOPT_BUF_INIT;
	size_t i = 0;

	while (i < len) {
		char c = p[i++];
		if (c == '\n') {
			while (i < len && isspace((unsigned char)p[i]))
				i++;
			kopt_buf_addch(&raw, ' ');
		} else {
			kopt_buf_addch(&raw, c);
		}
	}
	add_trimmed(out, raw.buf, raw.len);
	kopt_buf_release(&raw);
}

/* One trailer: a line and its continuation lines, buf[0, len). */
static void add_trailer(struct kopt_trailers *out, const char *p, size_t len,
			int comment_char)
{
	struct kopt_buf key = KOPT_BUF_INIT, value = KOPT_BUF_INIT;
	struct kopt_buf folded = KOPT_BUF_INIT;
	long sep;

	if (comment_line(p, comment_char))
		return;
	sep = separator(p);
	if (sep < 1 || (size_t)sep >= len)
		return;
	add_trimmed(&key, p, (size_t)sep);
	add_trimmed(&folded, p + sep + 1, len - (size_t)sep - 1);
	unfold(&value, folded.buf, folded.len);
	kopt_trailers_add(out, key.buf, value.buf);
	kopt_buf_release(&key);
	kopt_buf_release(&value);
	kopt_buf_release(&folded);
}

/* The log message's trailer block: bytes [*start, *end) of `msg`. */
static void trailer_block(const char *msg, int comment_char, size_t *start,
			  size_t *end)
{
	*end = trailer_end(msg, patch_start(msg), comment_char);
	*start = trailer_start(msg, *end, comment_char);
}

int kopt_trailers_parse(struct kopt_trailers *out, const char *message,
			int comment_char)
{
	struct kopt_buf clean = KOPT_BUF_INIT;
	const char *p, *end, *item = NULL;
	size_t start, stop;

	kopt_message_cleanup(&clean, message, comment_char);
	trailer_block(clean.buf, comment_char, &start, &stop);
	end = clean.buf + stop;
	/* a white-space-led line goes on the trailer above it */
	for (p = clean.buf + start; p < end; p = next_line(p)) {
		if (item && isspace((unsigned char)*p))
			continue;
		if (item)
			add_trailer(out, item, (size_t)(p - item),
				    comment_char);
		item = separator(p) >= 1 ? p : NULL;
	}
	if (item)
		add_trailer(out, item, (size_t)(end - item), comment_char);
	kopt_buf_release(&clean);
	return 0;
}

void kopt_trailers_add(struct kopt_trailers *t, const char *key,
		       const char *value)
{
	KOPT_ALLOC_GROW(t->items, t->nr + 1, t->alloc);
	t->items[t->nr].key = kopt_strdup(key);
	t->items[t->nr].value = kopt_strdup(value ? value : "");
	t->nr++;
}

const char *kopt_trailers_get(const struct kopt_trailers *t, const char *key)
{
	size_t i = t->nr;

	while (i--)
		if (!strcasecmp(t->items[i].key, key))
			return t->items[i].value;
	return NULL;
}

void kopt_trailers_release(struct kopt_trailers *t)
{
	size_t i;

	for (i = 0; i < t->nr; i++) {
		free(t->items[i].key);
		free(t->items[i].value);
	}
	free(t->items);
	t->items = NULL;
	t->nr = t->alloc = 0;
}

void kopt_message_add_trailers(struct kopt_buf *msg,
			       const struct kopt_trailers *t)
{
	struct kopt_trailers have = KOPT_TRAILERS_INIT;
	struct kopt_buf rest = KOPT_BUF_INIT;
	size_t start, end;
	const char *p;

	if (!t->nr)
		return;
	/* at the end of the log message, above a patch, as git puts them */
	trailer_block(msg->buf, 0, &start, &end);
	kopt_buf_add(&rest, msg->buf + end, msg->len - end);
	kopt_buf_setlen(msg, end);
	kopt_buf_rtrim(msg);
	kopt_buf_addch(msg, '\n');
	if (kopt_trailers_parse(&have, msg->buf, 0) || !have.nr)
		kopt_buf_addch(msg, '\n');
	kopt_trailers_release(&have);
	kopt_trailers_format(msg, t);
	/* a patch and comments below the message stay below */
	for (p = rest.buf; *p && isspace((unsigned char)*p); p++)
		;
	if (*p)
		kopt_buf_addbuf(msg, &rest);
	kopt_buf_release(&rest);
}

void kopt_trailers_format(struct kopt_buf *out, const struct kopt_trailers *t)
{
	size_t i;

	for (i = 0; i < t->nr; i++)
		kopt_buf_addf(out, "%s: %s\n", t->items[i].key,
			      t->items[i].value);
}

const char *kopt_trailers_learn_skip(const struct kopt_trailers *t)
{
	const char *v = kopt_trailers_get(t, KOPT_TRAILER_LEARN), *p;

	if (!v || !kopt_skip_prefix(v, "skip", &p) || (*p != ' ' && *p != '\t'))
		return NULL;
	while (*p == ' ' || *p == '\t')
		p++;
	return *p ? p : NULL;
}

void kopt_trailers_add_step(struct kopt_trailers *t, const char *kernel,
			    const char *version, enum kopt_step step)
{
	kopt_trailers_add(t, KOPT_TRAILER_KERNEL, kernel);
	kopt_trailers_add(t, KOPT_TRAILER_VERSION, version);
	kopt_trailers_add(t, KOPT_TRAILER_STEP, kopt_step_name(step));
}
