#ifndef KOPT_ERROR_H
#define KOPT_ERROR_H

/*
 * How lib/ fails, and the only way it prints.
 *
 * The convention every lib module follows:
 *
 * 1. A function returns 0 (or a count, or a pointer) on success and a
 *    negative code on failure: -1 (KOPT_EGENERIC), or one of the named
 *    codes below for a failure a caller may want to handle.
 * 2. It reports the failure once, where it is found, with kopt_error()
 *    (kopt_error_at() when a file and line are the cause), and returns
 *    the code; a caller that gets a negative code from a callee passes
 *    it up and does not report it again.  A function that returns a
 *    named code without reporting says so in its header ("nothing
 *    printed"), and its caller reports it if it is a failure there.
 * 3. Where messages go is the caller's choice, never lib's: by default
 *    "error: <message>" on stderr.  Code that wants failures as text
 *    rather than printed (the hooks turn a broken file into a
 *    violation, `kernel add` names the cause in its own words) wraps
 *    the calls in a struct kopt_error_catch.
 * 4. Apart from this module, lib/buf.c and lib/runner.c, lib never
 *    writes to stdout or stderr.  Progress goes through the callback a
 *    command passes in (lib/progress.h).
 * 5. In cmd/, a negative code becomes exit status 128 after the message
 *    was reported; kopt_die() reports and exits at once.
 */

#include <stdarg.h>

#include "buf.h"

enum kopt_errcode {
	KOPT_OK = 0,
	KOPT_EGENERIC = -1,
	KOPT_ENOTFOUND = -2,
	KOPT_EEXISTS = -3,
	KOPT_EINVALID = -4,
	KOPT_ELOCKED = -5,
	KOPT_EUNSUPPORTED = -6,
};

/* Report "error: <message>"; returns -1. */
int kopt_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int kopt_errorv(const char *fmt, va_list ap);
/*
 * Report "error: <file>:<line>: <message>" (no line when `line` < 1);
 * returns KOPT_EINVALID: the input at that place is wrong.
 */
int kopt_error_at(const char *file, int line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void kopt_warning(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/*
 * Show a child's own output as it is (a failed build's last lines, a
 * benchmark's output under --verbose): on stderr, with no prefix; kept
 * with the messages instead while a catch is active.
 */
void kopt_error_output(const char *text);

/*
 * Messages reported between kopt_error_catch() and kopt_error_uncatch()
 * are kept here instead of being reported further.  Catches nest; the
 * innermost keeps the messages.  What was caught stays readable after
 * kopt_error_uncatch() until kopt_error_catch_release().
 */
struct kopt_error_kept;
struct kopt_error_catch {
	struct kopt_buf text;   /* every message, "; "-joined; warnings
				 * prefixed "warning: " */
	struct kopt_buf cause;  /* the first error without its place */
	int errors;             /* how many errors were caught */
	struct kopt_error_catch *outer;
	/*
	 * Set before kopt_error_catch(): each message is kept as it came
	 * (not in `text` or `cause`), for kopt_error_catch_replay().
	 */
	int replay;
	struct kopt_error_kept *kept;
	size_t kept_nr, kept_alloc;
};

#define KOPT_ERROR_CATCH_INIT { KOPT_BUF_INIT, KOPT_BUF_INIT, 0, NULL, 0, \
				NULL, 0, 0 }

/* Catches are per thread: a catch keeps what its own thread reports. */
void kopt_error_catch(struct kopt_error_catch *c);
void kopt_error_uncatch(struct kopt_error_catch *c);
void kopt_error_catch_release(struct kopt_error_catch *c);
/*
 * Report again, in their order and on this thread, the messages a
 * `replay` catch kept (lib/parallel: what a worker found reaches the
 * user as if it had been reported in the caller's order).
 */
void kopt_error_catch_replay(const struct kopt_error_catch *c);

/*
 * The program's reporter, for main() and tests: a routine receives the
 * prefix ("error", "warning") and the message.  Install `fn` (NULL: the
 * default, which prints to stderr); returns the routine it replaces.
 * Library code catches instead of installing one.
 */
typedef void (*kopt_report_fn)(const char *prefix, const char *msg);
kopt_report_fn kopt_error_set_routine(kopt_report_fn fn);

/* libgit2's last error message, or `fallback` when there is none. */
const char *kopt_git_error(const char *fallback);

#endif
