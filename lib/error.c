#include "error.h"

#include <stdio.h>

#include <git2.h>

#include "buf.h"
#include "banned.h"

static void default_report(const char *prefix, const char *msg)
{
	fflush(stdout);
	fprintf(stderr, "%s: %s\n", prefix, msg);
}

static kopt_report_fn report = default_report;

kopt_report_fn kopt_error_set_routine(kopt_report_fn fn)
{
	kopt_report_fn old = report == default_report ? NULL : report;

	report = fn ? fn : default_report;
	return old;
}

int kopt_errorv(const char *fmt, va_list ap)
{
	struct kopt_buf sb = KOPT_BUF_INIT;

	kopt_buf_vaddf(&sb, fmt, ap);
	report("error", sb.buf);
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

void kopt_warning(const char *fmt, ...)
{
	struct kopt_buf sb = KOPT_BUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	kopt_buf_vaddf(&sb, fmt, ap);
	va_end(ap);
	report("warning", sb.buf);
	kopt_buf_release(&sb);
}

const char *kopt_git_error(const char *fallback)
{
	const git_error *e = git_error_last();

	if (e && e->message && *e->message)
		return e->message;
	return fallback;
}
