#ifndef KOPT_PARSE_OPTIONS_H
#define KOPT_PARSE_OPTIONS_H

/*
 * Option parsing for the steps: a table of struct kopt_option ended by
 * OPT_END(), parsed with getopt_long.  `-h` prints the usage on stdout
 * and exits 0; an unknown option or a missing argument prints the
 * problem and the usage on stderr and exits 129, as git does.  Returns
 * the number of positional arguments, which are moved to argv[0..n).
 * argv[0] on entry is the step name and is not a positional argument.
 */

#include "strvec.h"

enum kopt_option_type {
	KOPT_OPTION_END,
	KOPT_OPTION_BOOL,
	KOPT_OPTION_STRING,
	KOPT_OPTION_INT,
	KOPT_OPTION_STRING_LIST,
	KOPT_OPTION_OPTSTRING,  /* --name or --name=<value>: "" or the value */
};

struct kopt_option {
	enum kopt_option_type type;
	int short_name;
	const char *long_name;
	void *value;
	const char *argh;
	const char *help;
};

#define OPT_END() { KOPT_OPTION_END, 0, NULL, NULL, NULL, NULL }
#define OPT_BOOL(s, l, v, h) { KOPT_OPTION_BOOL, (s), (l), (v), NULL, (h) }
/* -q, --quiet: no progress line (the steps that show one) */
#define OPT__QUIET(v) OPT_BOOL('q', "quiet", (v), "no progress line")
#define OPT_STRING(s, l, v, a, h) { KOPT_OPTION_STRING, (s), (l), (v), (a), (h) }
#define OPT_INT(s, l, v, a, h) { KOPT_OPTION_INT, (s), (l), (v), (a), (h) }
#define OPT_OPTSTRING(l, v, a, h) \
	{ KOPT_OPTION_OPTSTRING, 0, (l), (v), (a), (h) }
#define OPT_STRING_LIST(s, l, v, a, h) \
	{ KOPT_OPTION_STRING_LIST, (s), (l), (v), (a), (h) }

enum kopt_parse_flags {
	KOPT_PARSE_STOP_AT_NON_OPTION = 1 << 0,
};

int kopt_parse_options(int argc, const char **argv,
		       const struct kopt_option *opts,
		       const char *const *usage, unsigned flags);
void kopt_usage_with_options(const char *const *usage,
			     const struct kopt_option *opts, int to_stderr);
/* Print "error: <msg>" and the usage on stderr, exit 129. */
void kopt_usage_error(const char *const *usage,
		      const struct kopt_option *opts, const char *fmt, ...)
	__attribute__((format(printf, 3, 4), noreturn));

#endif
