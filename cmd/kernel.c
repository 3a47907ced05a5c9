/*
 * git kopt kernel: add a kernel's section to .kopt (and its devlog from
 * templates/devlog.md), or list the kernels.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "builtin.h"
#include "filetx.h"
#include "templates.h"
#include "paths.h"
#include "scaffold.h"
#include "banned.h"

#define KERNEL_ADD_USAGE \
	"git kopt kernel add <name> --language <l> --source <pattern> " \
	"--run <cmd>\n" \
	"                       [--build <cmd>] [--flops <expr>] " \
	"[--bytes <expr>]\n" \
	"                       [--param <k>=<v>]... [--target <expr>]"
#define KERNEL_LIST_USAGE "git kopt kernel list [--json]"

static const char *const kernel_usage[] = {
	KERNEL_ADD_USAGE,
	KERNEL_LIST_USAGE,
	NULL
};
static const char *const kernel_add_usage[] = { KERNEL_ADD_USAGE, NULL };
static const char *const kernel_list_usage[] = { KERNEL_LIST_USAGE, NULL };

static void add_key(struct kopt_buf *sb, const char *key, const char *value)
{
	if (!value)
		return;
	kopt_buf_addf(sb, "\t%s = ", key);
	kopt_config_quote(sb, value);
	kopt_buf_addch(sb, '\n');
}

static int same(const char *a, const char *b)
{
	return (!a && !b) || (a && b && !strcmp(a, b));
}

struct kernel_opts {
	const char *name, *language, *source, *run, *build, *flops, *bytes;
	const char *target;
	struct kopt_strvec params;
};

/* Did the values survive quoting and re-reading unchanged? */
static int round_trips(const struct kopt_kernel *k, const struct kernel_opts *o)
{
	return k && same(k->language, o->language) &&
	       same(k->source, o->source) && same(k->run, o->run) &&
	       same(k->build, o->build) && same(k->flops, o->flops) &&
	       same(k->bytes, o->bytes) && k->params_nr == o->params.nr &&
	       k->targets_nr == (o->target ? 1u : 0u) &&
	       (!o->target || same(k->targets[0].text, o->target));
}

static void render_devlog(struct kopt_buf *out, const struct kernel_opts *o)
{
	struct kopt_buf tmpl = KOPT_BUF_INIT, target = KOPT_BUF_INIT;
	const char *vars[] = {
		"kernel", o->name, "language", o->language,
		"source", o->source, "target", NULL, NULL, NULL
	};

	if (kopt_templates_read(&tmpl, "devlog.md"))
		kopt_die("nothing was written");
	if (o->target)
		kopt_buf_addf(&target, "`%s`", o->target);
	else
		kopt_buf_addstr(&target, "Not set yet: add `target = <trial> "
				"<condition>` to the kernel's section of `.kopt`.");
	vars[7] = target.buf;
	KOPT_OR_DIE(kopt_templates_expand(out, tmpl.buf, "templates/devlog.md",
					  vars), "");
	kopt_buf_release(&tmpl);
	kopt_buf_release(&target);
}

/*
 * A new kernel needs a new name and a configured language.  1 when the
 * kernel is in .kopt already with these very settings but has no
 * devlog: an add killed halfway, which this one finishes.
 */
static int check_new(const struct kopt_config *cfg,
		     const struct kernel_opts *o, int have_devlog)
{
	const struct kopt_kernel *old = kopt_config_kernel(cfg, o->name);
	struct kopt_buf known = KOPT_BUF_INIT;
	size_t i;

	/* the same settings and no devlog: an add killed halfway, finished */
	if (old && !have_devlog && round_trips(old, o))
		return 1;
	if (old)
		kopt_die("kernel '%s' already exists (%s:%d)", o->name,
			 cfg->path, old->line);
	if (kopt_config_language(cfg, o->language))
		return 0;
	for (i = 0; i < cfg->languages_nr; i++)
		kopt_buf_addf(&known, "%s%s", i ? ", " : "",
			      cfg->languages[i].name);
	kopt_die("unknown language '%s' (known: %s)", o->language,
		 known.len ? known.buf : "none; add a [language] section to "
		 ".kopt");
}

/*
 * A kernel whose source folder holds no version yet: say where the base
 * version goes (every step gives the same advice).
 */
static void warn_no_versions(struct kopt_ctx *ctx, const struct kopt_layout *l,
			     const struct kopt_kernel *k)
{
	struct kopt_buf start = KOPT_BUF_INIT;
	char *root = kopt_ctx_path(ctx, *l->root ? l->root : ".");
	DIR *dir = opendir(root);
	struct dirent *de;
	char *v;
	int found = 0;

	while (dir && !found && (de = readdir(dir))) {
		if ((v = kopt_layout_match(l, de->d_name)))
			found = 1;
		free(v);
	}
	if (dir)
		closedir(dir);
	if (!found) {
		kopt_layout_start_advice(&start, k);
		if (dir)
			kopt_warning("'%s' holds no version of '%s' yet: %s",
				     *l->root ? l->root : ".", k->name,
				     start.buf);
		else
			kopt_warning("there is no folder '%s' yet: %s",
				     l->root, start.buf);
	}
	kopt_buf_release(&start);
	free(root);
}

/*
 * .kopt with the kernel's section appended, into `text`, validated
 * before anything is written: it loads into *check, its values read
 * back, and its source pattern makes a layout (*layout).
 */
static void new_settings(struct kopt_buf *text, struct kopt_config *check,
			 struct kopt_layout *layout, const char *kopt_path,
			 const struct kernel_opts *o)
{
	struct kopt_error_catch caught = KOPT_ERROR_CATCH_INIT;
	size_t i;
	int ret;

	if (kopt_buf_read_file(text, kopt_path))
		kopt_die("cannot read '.kopt': %s", strerror(errno));
	if (text->len && text->buf[text->len - 1] != '\n')
		kopt_buf_addch(text, '\n');
	if (text->len)
		kopt_buf_addch(text, '\n');
	/* a valid name needs no escaping inside the quotes */
	kopt_buf_addf(text, "[kernel \"%s\"]\n", o->name);
	add_key(text, "language", o->language);
	add_key(text, "source", o->source);
	add_key(text, "build", o->build);
	add_key(text, "run", o->run);
	add_key(text, "flops", o->flops);
	add_key(text, "bytes", o->bytes);
	for (i = 0; i < o->params.nr; i++)
		add_key(text, "param", o->params.v[i]);
	add_key(text, "target", o->target);

	kopt_error_catch(&caught);
	ret = kopt_config_load_buf(check, text->buf, text->len, ".kopt");
	kopt_error_uncatch(&caught);
	if (ret)
		kopt_die("cannot add kernel '%s': %s", o->name,
			 caught.cause.buf);
	if (!round_trips(kopt_config_kernel(check, o->name), o))
		kopt_die("cannot add kernel '%s': its values do not read back "
			 "unchanged from .kopt", o->name);
	kopt_error_catch_release(&caught);
	kopt_error_catch(&caught);
	ret = kopt_layout_init(layout, kopt_config_kernel(check, o->name));
	kopt_error_uncatch(&caught);
	if (ret)
		kopt_die("cannot add kernel '%s': %s", o->name,
			 caught.cause.buf);
	kopt_error_catch_release(&caught);
}

/* .kopt as it is, holding the kernel already: into *check and *layout. */
static void load_settings(struct kopt_config *check, struct kopt_layout *layout,
			  const char *kopt_path, const struct kernel_opts *o)
{
	struct kopt_buf text = KOPT_BUF_INIT;

	if (kopt_buf_read_file(&text, kopt_path))
		kopt_die("cannot read '.kopt': %s", strerror(errno));
	if (kopt_config_load_buf(check, text.buf, text.len, ".kopt") ||
	    kopt_layout_init(layout, kopt_config_kernel(check, o->name)))
		kopt_die("cannot finish adding kernel '%s'", o->name);
	kopt_buf_release(&text);
}

/* Parse `kernel add`'s options and name into *o, or exit 129 / 128. */
static void parse_add_options(struct kernel_opts *o, int argc,
			      const char **argv)
{
	const struct kopt_option options[] = {
		OPT_STRING(0, "language", &o->language, "l",
			   "the language of the kernel (see [language] in .kopt)"),
		OPT_STRING(0, "source", &o->source, "pattern",
			   "where a version's files live, with {version}"),
		OPT_STRING(0, "run", &o->run, "cmd",
			   "command that benchmarks one version at {b} {s} {t}"),
		OPT_STRING(0, "build", &o->build, "cmd",
			   "command that builds one version"),
		OPT_STRING(0, "flops", &o->flops, "expr",
			   "floating-point operations per run, over b, s, t "
			   "and params"),
		OPT_STRING(0, "bytes", &o->bytes, "expr",
			   "bytes moved per run, over b, s, t and params"),
		OPT_STRING_LIST(0, "param", &o->params, "k=v",
				"a constant for the expressions (repeatable)"),
		OPT_STRING(0, "target", &o->target, "expr",
			   "'<trial> <condition>', e.g. 'spec-decode "
			   "duration_us <= 60'"),
		OPT_END()
	};

	argc = kopt_parse_options(argc, argv, options, kernel_add_usage, 0);
	if (argc < 1)
		kopt_usage_error(kernel_add_usage, options, "which kernel? "
				 "give its name");
	if (argc > 1)
		kopt_usage_error(kernel_add_usage, options, "too many "
				 "arguments");
	o->name = argv[0];
	if (!o->language || !o->source || !o->run)
		kopt_usage_error(kernel_add_usage, options, "--%s is required",
				 !o->language ? "language" :
				 !o->source ? "source" : "run");
	if (!kopt_valid_name(o->name))
		kopt_die("bad kernel name '%s' (use lower-case letters, digits, "
			 "'.', '_' and '-'; no '/' or '..')", o->name);
}

static void print_added(const struct kernel_opts *o, const char *devlog_label,
			int resumed, int have_devlog)
{
	if (resumed)
		printf("kernel '%s' was in .kopt already, without its devlog\n",
		       o->name);
	else
		printf("added kernel '%s' to .kopt\n", o->name);
	if (have_devlog)
		printf("kept: %s\n", devlog_label);
	else
		printf("created: %s\n", devlog_label);
}

static int kernel_add(int argc, const char **argv, struct kopt_ctx *ctx)
{
	struct kernel_opts o = { 0 };
	struct kopt_config check = KOPT_CONFIG_INIT;
	struct kopt_buf text = KOPT_BUF_INIT, devlog = KOPT_BUF_INIT;
	struct kopt_buf label = KOPT_BUF_INIT;
	struct kopt_filetx tx = KOPT_FILETX_INIT;
	struct kopt_layout layout = KOPT_LAYOUT_INIT;
	char *kopt_path, *devlog_path;
	int have_devlog, resumed;

	kopt_strvec_init(&o.params);
	parse_add_options(&o, argc, argv);

	kopt_path_devlog(&label, o.name);
	devlog_path = kopt_ctx_path(ctx, label.buf);
	have_devlog = !access(devlog_path, F_OK);
	resumed = check_new(kopt_ctx_config_or_die(ctx), &o, have_devlog);
	kopt_path = kopt_ctx_path(ctx, ".kopt");
	if (resumed) {
		load_settings(&check, &layout, kopt_path, &o);
	} else {
		new_settings(&text, &check, &layout, kopt_path, &o);
		kopt_filetx_add(&tx, kopt_path, ".kopt", text.buf, text.len,
				0, NULL);
	}
	if (!have_devlog) {
		render_devlog(&devlog, &o);
		kopt_filetx_add(&tx, devlog_path, label.buf, devlog.buf,
				devlog.len, 0, NULL);
	}
	KOPT_OR_DIE(kopt_filetx_commit(&tx), "; nothing was written");

	print_added(&o, label.buf, resumed, have_devlog);
	warn_no_versions(ctx, &layout, kopt_config_kernel(&check, o.name));
	kopt_layout_release(&layout);
	kopt_config_release(&check);
	kopt_filetx_release(&tx);
	kopt_buf_release(&text);
	kopt_buf_release(&devlog);
	kopt_buf_release(&label);
	kopt_strvec_clear(&o.params);
	free(kopt_path);
	free(devlog_path);
	return 0;
}

static cJSON *kernel_json(const struct kopt_kernel *k)
{
	cJSON *o = cJSON_CreateObject(), *params, *targets;
	size_t i;

	cJSON_AddStringToObject(o, "name", k->name);
	cJSON_AddStringToObject(o, "language", k->language);
	cJSON_AddStringToObject(o, "source", k->source);
	if (k->build)
		cJSON_AddStringToObject(o, "build", k->build);
	else
		cJSON_AddNullToObject(o, "build");
	cJSON_AddStringToObject(o, "run", k->run);
	if (k->flops)
		cJSON_AddStringToObject(o, "flops", k->flops);
	else
		cJSON_AddNullToObject(o, "flops");
	if (k->bytes)
		cJSON_AddStringToObject(o, "bytes", k->bytes);
	else
		cJSON_AddNullToObject(o, "bytes");
	params = cJSON_AddObjectToObject(o, "params");
	for (i = 0; i < k->params_nr; i++)
		cJSON_AddNumberToObject(params, k->params[i].name,
					k->params[i].value);
	targets = cJSON_AddArrayToObject(o, "targets");
	for (i = 0; i < k->targets_nr; i++) {
		cJSON *t = cJSON_CreateObject();
		cJSON_AddStringToObject(t, "trial", k->targets[i].trial);
		cJSON_AddStringToObject(t, "condition", k->targets[i].expr);
		cJSON_AddItemToArray(targets, t);
	}
	return o;
}

static int kernel_list(int argc, const char **argv, struct kopt_ctx *ctx)
{
	int json = 0;
	const struct kopt_option options[] = {
		OPT_BOOL(0, "json", &json, "print JSON"),
		OPT_END()
	};
	const struct kopt_config *cfg;
	size_t i, width = 4;

	argc = kopt_parse_options(argc, argv, options, kernel_list_usage, 0);
	if (argc)
		kopt_usage_error(kernel_list_usage, options, "too many "
				 "arguments");
	cfg = kopt_ctx_config_or_die(ctx);
	if (json) {
		cJSON *arr = cJSON_CreateArray();
		char *s;
		for (i = 0; i < cfg->kernels_nr; i++)
			cJSON_AddItemToArray(arr, kernel_json(&cfg->kernels[i]));
		s = cJSON_Print(arr);
		if (!s)
			kopt_die("out of memory");
		puts(s);
		cJSON_free(s);
		cJSON_Delete(arr);
		return 0;
	}
	for (i = 0; i < cfg->kernels_nr; i++)
		if (strlen(cfg->kernels[i].name) > width)
			width = strlen(cfg->kernels[i].name);
	for (i = 0; i < cfg->kernels_nr; i++) {
		const struct kopt_kernel *k = &cfg->kernels[i];
		printf("%-*s  %-10s  %s\n", (int)width, k->name, k->language,
		       k->source);
	}
	return 0;
}

int cmd_kernel(int argc, const char **argv, struct kopt_ctx *ctx)
{
	static const struct kopt_option options[] = { OPT_END() };

	argc = kopt_parse_options(argc, argv, options, kernel_usage,
				  KOPT_PARSE_STOP_AT_NON_OPTION);
	if (!argc)
		return kernel_list(1, (const char *[]){ "list", NULL }, ctx);
	if (!strcmp(argv[0], "add"))
		return kernel_add(argc, argv, ctx);
	if (!strcmp(argv[0], "list"))
		return kernel_list(argc, argv, ctx);
	kopt_usage_error(kernel_usage, options, "unknown subcommand '%s'",
			 argv[0]);
}
