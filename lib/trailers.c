#include "trailers.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <git2.h>

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

int kopt_trailers_parse(struct kopt_trailers *out, const char *message,
			int comment_char)
{
	struct kopt_buf clean = KOPT_BUF_INIT;
	git_message_trailer_array arr = { 0 };
	size_t i;
	int ret = 0;

	kopt_message_cleanup(&clean, message, comment_char);
	if (git_message_trailers(&arr, clean.buf) < 0) {
		ret = kopt_error("cannot parse the trailers of the message: %s",
				 kopt_git_error("unknown error"));
		goto done;
	}
	for (i = 0; i < arr.count; i++)
		kopt_trailers_add(out, arr.trailers[i].key,
				  arr.trailers[i].value);
done:
	git_message_trailer_array_free(&arr);
	kopt_buf_release(&clean);
	return ret;
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

	if (!t->nr)
		return;
	kopt_buf_rtrim(msg);
	kopt_buf_addch(msg, '\n');
	if (kopt_trailers_parse(&have, msg->buf, 0) || !have.nr)
		kopt_buf_addch(msg, '\n');
	kopt_trailers_release(&have);
	kopt_trailers_format(msg, t);
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
