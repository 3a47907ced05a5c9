#include "error.h"

#include <stdio.h>
#include <stdlib.h>

#include <git2.h>

#include "buf.h"
#include "banned.h"

static void default_report(const char *prefix, const char *msg)
{
	fflush(stdout);
	fprintf(stderr, "%s: %s\n", prefix, msg);
}

static kopt_report_fn report = default_report;
static _Thread_local struct kopt_error_catch *catching;

/* A message of a `replay` catch; `prefix` NULL for a child's output. */
struct kopt_error_kept {
	const char *prefix;
	char *msg;
	size_t place;
};

static void keep(struct kopt_error_catch *c, const char *prefix,
		 const char *msg, size_t place)
{
	struct kopt_error_kept *k;

	KOPT_ALLOC_GROW(c->kept, c->kept_nr + 1, c->kept_alloc);
	k = &c->kept[c->kept_nr++];
	k->prefix = prefix;
	k->msg = kopt_strdup(msg);
	k->place = place;
}

kopt_report_fn kopt_error_set_routine(kopt_report_fn fn)
{
	kopt_report_fn old = report == default_report ? NULL : report;

	report = fn ? fn : default_report;
	return old;
}

void kopt_error_catch(struct kopt_error_catch *c)
{
	c->outer = catching;
	catching = c;
}

void kopt_error_uncatch(struct kopt_error_catch *c)
{
	struct kopt_error_catch *p;

	/* a catch left open inside this one ends with it */
	for (p = catching; p; p = p->outer)
		if (p == c) {
			catching = c->outer;
			break;
		}
	c->outer = NULL;
}

void kopt_error_catch_release(struct kopt_error_catch *c)
{
	size_t i;

	kopt_error_uncatch(c);
	kopt_buf_release(&c->text);
	kopt_buf_release(&c->cause);
	c->errors = 0;
	for (i = 0; i < c->kept_nr; i++)
		free(c->kept[i].msg);
	free(c->kept);
	c->kept = NULL;
	c->kept_nr = c->kept_alloc = 0;
}

/* `place` is the length of the "<file>:<line>: " that starts `msg`. */
static void deliver(const char *prefix, const char *msg, size_t place)
{
	struct kopt_error_catch *c = catching;
	int is_error = prefix[0] == 'e';

	if (!c) {
		report(prefix, msg);
		return;
	}
	if (c->replay) {
		keep(c, prefix, msg, place);
		c->errors += is_error;
		return;
	}
	if (c->text.len)
		kopt_buf_addstr(&c->text, "; ");
	if (!is_error)
		kopt_buf_addf(&c->text, "%s: ", prefix);
	kopt_buf_addstr(&c->text, msg);
	if (is_error && !c->errors++)
		kopt_buf_addstr(&c->cause, msg + place);
}

int kopt_errorv(const char *fmt, va_list ap)
{
	struct kopt_buf sb = KOPT_BUF_INIT;

	kopt_buf_vaddf(&sb, fmt, ap);
	deliver("error", sb.buf, 0);
	kopt_buf_release(&sb);
	return -1;
}

int kopt_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	kopt_errorv(fmt, ap);
	va_end(ap);
	return -1;
}

int kopt_error_at(const char *file, int line, const char *fmt, ...)
{
	struct kopt_buf sb = KOPT_BUF_INIT;
	size_t place;
	va_list ap;

	if (line > 0)
		kopt_buf_addf(&sb, "%s:%d: ", file, line);
	else
		kopt_buf_addf(&sb, "%s: ", file);
	place = sb.len;
	va_start(ap, fmt);
	kopt_buf_vaddf(&sb, fmt, ap);
	va_end(ap);
	deliver("error", sb.buf, place);
	kopt_buf_release(&sb);
	return KOPT_EINVALID;
}

void kopt_warning(const char *fmt, ...)
{
	struct kopt_buf sb = KOPT_BUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	kopt_buf_vaddf(&sb, fmt, ap);
	va_end(ap);
	deliver("warning", sb.buf, 0);
	kopt_buf_release(&sb);
}

void kopt_error_catch_replay(const struct kopt_error_catch *c)
{
	size_t i;

	for (i = 0; i < c->kept_nr; i++)
		if (c->kept[i].prefix)
			deliver(c->kept[i].prefix, c->kept[i].msg,
				c->kept[i].place);
		else
			kopt_error_output(c->kept[i].msg);
}

void kopt_error_output(const char *text)
{
	if (catching && catching->replay) {
		keep(catching, NULL, text, 0);
		return;
	}
	if (catching) {
		if (catching->text.len)
			kopt_buf_addstr(&catching->text, "; ");
		kopt_buf_addstr(&catching->text, text);
		return;
	}
	fflush(stdout);
	fputs(text, stderr);
}

const char *kopt_git_error(const char *fallback)
{
	const git_error *e = git_error_last();

	if (e && e->message && *e->message)
		return e->message;
	return fallback;
}
