#ifndef KOPT_ERROR_H
#define KOPT_ERROR_H

/*
 * The error reporter: the only way lib/ prints.
 *
 * kopt_error() prints "error: <message>" to stderr and returns -1, so a
 * function can `return kopt_error("cannot read '%s'", path);`.
 * kopt_warning() prints "warning: <message>".  Named codes below are for
 * expected failures that a caller may want to handle; they are returned
 * without printing unless the callee documents otherwise.
 *
 * Tests and commands that want the messages elsewhere install a routine
 * with kopt_error_set_routine().
 */

#include <stdarg.h>

enum kopt_errcode {
	KOPT_OK = 0,
	KOPT_EGENERIC = -1,
	KOPT_ENOTFOUND = -2,
	KOPT_EEXISTS = -3,
	KOPT_EINVALID = -4,
	KOPT_ELOCKED = -5,
	KOPT_EUNSUPPORTED = -6,
};

int kopt_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int kopt_errorv(const char *fmt, va_list ap);
void kopt_warning(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* A routine receives the prefix ("error", "warning") and the message. */
typedef void (*kopt_report_fn)(const char *prefix, const char *msg);
/* Install `fn` (NULL: the default); returns the routine it replaces. */
kopt_report_fn kopt_error_set_routine(kopt_report_fn fn);

/* libgit2's last error message, or `fallback` when there is none. */
const char *kopt_git_error(const char *fallback);

#endif
