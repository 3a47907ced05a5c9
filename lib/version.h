#ifndef KOPT_VERSION_H
#define KOPT_VERSION_H

/*
 * Version names: how a kernel's versions are written, read, ordered and
 * shown.
 *
 * A version name is "v" followed by a decimal number without leading
 * zeros: v0, v1, ..., v12.  Branch names (kopt/<kernel>/<version>),
 * results files (<version>.json), task files and Kopt-Version trailers
 * all use it; "V3", "v01", "v" and "v1a" are not version names, wherever
 * they are found.  Devlog headings show a version as its label "V3";
 * the devlog module reads those headings and hands back the name.
 *
 * KOPT_VERSION is something else: the release of git-kopt itself.
 */

#include "buf.h"

#define KOPT_VERSION "0.1.0"

/*
 * The number written at `s` as version names write it (decimal, no
 * leading zero: "12", "0", not "012"), ending where the digits do
 * (*end), or -1 (*end untouched).  The one reader of a version's
 * number: the functions below and devlog headings ("V12",
 * "Version 12") go through it.
 */
long kopt_version_digits(const char *s, const char **end);
/* The number of version name `name` ("v12" -> 12), or -1 for no name. */
long kopt_version_number(const char *name);
/* 1 when `name` is a version name. */
int kopt_version_valid(const char *name);
/*
 * The number of the version name that starts `s` and ends where the
 * digits do ("v12.cu" -> 12, *end at ".cu"), or -1 (*end untouched).
 */
long kopt_version_prefix(const char *s, const char **end);
/* qsort comparator on `const char *` version names, by number. */
int kopt_version_cmp(const void *a, const void *b);
/* The name of version `n` ("v12"), owned by the caller. */
char *kopt_version_name(long n);
/* Append the label of `name` as devlog headings show it ("V12"). */
void kopt_version_label(struct kopt_buf *out, const char *name);

#endif
