#ifndef KOPT_PROBLEM_H
#define KOPT_PROBLEM_H

/*
 * A list of problems found in users' files, each "<file>:<line>: <what>",
 * for checks that report everything they find instead of stopping at the
 * first (lint of detail files and catalogs, and the hooks built on it).
 *
 * Initialise with KOPT_PROBLEMS_INIT; kopt_problems_clear() frees all.
 * Line 0 means the file as a whole ("<file>: <what>").  Strings are
 * copied; the list owns them.
 */

#include <stdarg.h>
#include <stddef.h>

#include "buf.h"

struct kopt_problem {
	char *file;
	int line;
	char *what;
};

struct kopt_problems {
	struct kopt_problem *v;
	size_t nr, alloc;
};

#define KOPT_PROBLEMS_INIT { NULL, 0, 0 }

void kopt_problems_add(struct kopt_problems *p, const char *file, int line,
		       const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
void kopt_problems_vadd(struct kopt_problems *p, const char *file, int line,
			const char *fmt, va_list ap);
/* Sort by file, then line; problems on one line keep their order. */
void kopt_problems_sort(struct kopt_problems *p);
/* Append one "<file>:<line>: <what>\n" line per problem. */
void kopt_problems_format(struct kopt_buf *out,
			  const struct kopt_problems *p);
/* Move every problem of `from` to the end of `to`; `from` is emptied. */
void kopt_problems_move(struct kopt_problems *to, struct kopt_problems *from);
void kopt_problems_clear(struct kopt_problems *p);

/*
 * The problems of one file as a check finds them: each added to `list`
 * under `file` (borrowed) and counted in `nr`, so that the check can say
 * whether it found any in a list that may hold others already.
 */
struct kopt_problem_file {
	struct kopt_problems *list;
	const char *file;
	int nr;
};

void kopt_problem_add(struct kopt_problem_file *f, int line,
		      const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif
