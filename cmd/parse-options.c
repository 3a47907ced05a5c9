#include "parse-options.h"

#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "banned.h"

void kopt_usage_with_options(const char *const *usage,
			     const struct kopt_option *opts, int to_stderr)
{
	FILE *f = to_stderr ? stderr : stdout;
	const struct kopt_option *o;
	int first = 1;

	for (; *usage; usage++) {
		if (!**usage)
			fputc('\n', f);
		else
			fprintf(f, "%s%s\n", first ? "usage: " : "   or: ",
				*usage);
		if (**usage)
			first = 0;
	}
	if (opts && opts->type != KOPT_OPTION_END)
		fputc('\n', f);
	for (o = opts; o && o->type != KOPT_OPTION_END; o++) {
		struct kopt_buf sb = KOPT_BUF_INIT;
		kopt_buf_addstr(&sb, "    ");
		if (o->short_name)
			kopt_buf_addf(&sb, "-%c", o->short_name);
		if (o->short_name && o->long_name)
			kopt_buf_addstr(&sb, ", ");
		if (o->long_name)
			kopt_buf_addf(&sb, "--%s", o->long_name);
		if (o->type == KOPT_OPTION_OPTSTRING)
			kopt_buf_addf(&sb, "[=<%s>]", o->argh ? o->argh : "value");
		else if (o->type != KOPT_OPTION_BOOL)
			kopt_buf_addf(&sb, " <%s>", o->argh ? o->argh : "value");
		if (sb.len < 26)
			kopt_buf_addchars(&sb, ' ', 26 - sb.len);
		else
			kopt_buf_addf(&sb, "\n%26s", "");
		kopt_buf_addstr(&sb, o->help ? o->help : "");
		fprintf(f, "%s\n", sb.buf);
		kopt_buf_release(&sb);
	}
	if (opts && opts->type != KOPT_OPTION_END)
		fputc('\n', f);
}

void kopt_usage_error(const char *const *usage,
		      const struct kopt_option *opts, const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	fputs("error: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	kopt_usage_with_options(usage, opts, 1);
	exit(129);
}

static const char *option_name(const struct kopt_option *o, struct kopt_buf *sb)
{
	kopt_buf_reset(sb);
	if (o->long_name)
		kopt_buf_addf(sb, "--%s", o->long_name);
	else
		kopt_buf_addf(sb, "-%c", o->short_name);
	return sb->buf;
}

static int option_has_arg(const struct kopt_option *o)
{
	if (o->type == KOPT_OPTION_BOOL)
		return no_argument;
	if (o->type == KOPT_OPTION_OPTSTRING)
		return optional_argument;
	return required_argument;
}

/*
 * The getopt_long tables for `opts`: the short option string in `shorts`
 * and the returned array of long options, which ends with "help".  A long
 * option's value is 256 plus its index in `opts`.
 */
static struct option *getopt_tables(struct kopt_buf *shorts,
				    const struct kopt_option *opts,
				    size_t nopts, unsigned flags)
{
	struct option *longs = kopt_calloc(nopts + 2, sizeof(*longs));
	size_t i;
	int n = 0;

	kopt_buf_addstr(shorts, flags & KOPT_PARSE_STOP_AT_NON_OPTION ?
			"+:h" : ":h");
	for (i = 0; i < nopts; i++) {
		const struct kopt_option *o = &opts[i];
		int has_arg = option_has_arg(o);
		if (o->short_name) {
			kopt_buf_addch(shorts, o->short_name);
			if (has_arg == required_argument)
				kopt_buf_addch(shorts, ':');
			else if (has_arg == optional_argument)
				kopt_buf_addstr(shorts, "::");
		}
		longs[n].name = o->long_name;
		longs[n].has_arg = has_arg;
		longs[n].flag = NULL;
		longs[n].val = 256 + (int)i;
		if (o->long_name)
			n++;
	}
	longs[n].name = "help";
	longs[n].val = 'h';
	return longs;
}

/* Exit for what getopt_long answered that is no option of ours. */
static void handle_getopt_special(int c, const char **argv,
				  const struct kopt_option *opts,
				  const char *const *usage)
{
	if (c == 'h') {
		kopt_usage_with_options(usage, opts, 0);
		exit(0);
	}
	if (c == '?') {
		if (optopt && optopt < 256)
			kopt_usage_error(usage, opts,
					 "unknown switch '%c'", optopt);
		kopt_usage_error(usage, opts, "unknown option '%s'",
				 argv[optind - 1]);
	}
	if (c == ':')
		kopt_usage_error(usage, opts, "option '%s' requires a value",
				 argv[optind - 1]);
}

static const struct kopt_option *find_option(int c,
					     const struct kopt_option *opts,
					     size_t nopts)
{
	const struct kopt_option *o = NULL;
	size_t i;

	if (c >= 256)
		return &opts[c - 256];
	for (i = 0; i < nopts; i++)
		if (opts[i].short_name == c)
			o = &opts[i];
	return o;
}

/* Store the value of option `o`, whose argument (if any) is in optarg. */
static void set_option(const struct kopt_option *o,
		       const struct kopt_option *opts,
		       const char *const *usage, struct kopt_buf *name)
{
	switch (o->type) {
	case KOPT_OPTION_BOOL:
		*(int *)o->value = 1;
		break;
	case KOPT_OPTION_STRING:
		*(const char **)o->value = optarg;
		break;
	case KOPT_OPTION_OPTSTRING:
		*(const char **)o->value = optarg ? optarg : "";
		break;
	case KOPT_OPTION_INT: {
		char *end;
		long v;
		errno = 0;
		v = strtol(optarg, &end, 10);
		if (errno || end == optarg || *end)
			kopt_usage_error(usage, opts, "option '%s' "
					 "expects a number, not '%s'",
					 option_name(o, name), optarg);
		*(int *)o->value = (int)v;
		break;
	}
	case KOPT_OPTION_STRING_LIST:
		kopt_strvec_push(o->value, optarg);
		break;
	default:
		break;
	}
}

int kopt_parse_options(int argc, const char **argv,
		       const struct kopt_option *opts,
		       const char *const *usage, unsigned flags)
{
	struct option *longs;
	struct kopt_buf shorts = KOPT_BUF_INIT, name = KOPT_BUF_INIT;
	size_t nopts = 0;
	int c, n = 0, idx;

	while (opts[nopts].type != KOPT_OPTION_END)
		nopts++;
	longs = getopt_tables(&shorts, opts, nopts, flags);

	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, (char *const *)argv, shorts.buf, longs,
				&idx)) != -1) {
		const struct kopt_option *o;
		handle_getopt_special(c, argv, opts, usage);
		o = find_option(c, opts, nopts);
		if (o)
			set_option(o, opts, usage, &name);
	}
	free(longs);
	kopt_buf_release(&shorts);
	kopt_buf_release(&name);
	for (idx = optind; idx < argc; idx++)
		argv[n++] = argv[idx];
	argv[n] = NULL;
	return n;
}
