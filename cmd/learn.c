/*
 * LEARN: grow and check the knowledge base.
 *
 *   git kopt learn new (optimization | anti-pattern) <name>
 *                      [--language <language>] [--from <kernel>/<version>]
 *   git kopt learn sync [-n] [--words] [<id> | <detail-file>...]
 *   git kopt learn lint
 *   git kopt learn list [--json]
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "analysis.h"
#include "builtin.h"
#include "kb.h"
#include "learn.h"
#include "templates.h"
#include "results.h"
#include "version.h"
#include "banned.h"

static const char *const learn_usage[] = {
	"git kopt learn new (optimization | anti-pattern) <name> "
	"[--language <language>] [--from <kernel>/<version>]",
	"git kopt learn sync [-n] [--words] [<id> | <detail-file>...]",
	"git kopt learn lint",
	"git kopt learn list [--json]",
	NULL
};

static const char *const sync_usage[] = {
	"git kopt learn sync [-n] [--words] [<id> | <detail-file>...]",
	NULL
};

static const char *const new_usage[] = {
	"git kopt learn new (optimization | anti-pattern) <name> "
	"[--language <language>] [--from <kernel>/<version>]",
	NULL
};

static const char *const lint_usage[] = {
	"git kopt learn lint",
	NULL
};

static const char *const list_usage[] = {
	"git kopt learn list [--json]",
	NULL
};

static void load_kb_or_die(struct kopt_kb *kb, struct kopt_ctx *ctx,
			   const char *language)
{
	const struct kopt_config *cfg = kopt_ctx_config_or_die(ctx);
	struct kopt_kb_source src;

	kopt_kb_source_worktree(&src, ctx->top);
	kopt_lib_or_die(kopt_kb_load(kb, &src, cfg, language));
}

/*
 * The catalog a new entry's row goes to: the language's (which sets
 * req->language), else the shared one, which must exist.
 */
static char *choose_catalog(struct kopt_learn_request *req,
			    struct kopt_ctx *ctx, const char *language)
{
	const struct kopt_config *cfg = kopt_ctx_config_or_die(ctx);
	const struct kopt_language *l;
	struct kopt_buf known = KOPT_BUF_INIT;
	char *catalog, *abs;
	size_t i;

	if (!language) {
		catalog = kopt_strdup(cfg->catalog ? cfg->catalog :
				      KOPT_DEFAULT_CATALOG);
		abs = kopt_ctx_path(ctx, catalog);
		if (access(abs, F_OK))
			kopt_die("the shared catalog '%s' does not exist; run "
				 "'git kopt init'", catalog);
		free(abs);
		return catalog;
	}
	l = kopt_config_language(cfg, language);
	if (!l) {
		for (i = 0; i < cfg->languages_nr; i++)
			kopt_buf_addf(&known, "%s%s", i ? ", " : "",
				      cfg->languages[i].name);
		kopt_die("unknown language '%s' (known: %s)", language,
			 known.len ? known.buf : "none in .kopt");
	}
	req->language = l->name;
	return kopt_language_catalog_path(l);
}

/* --from: the numbers of `version` of `kernel` and of its parent. */
static void evidence(struct kopt_results *before, struct kopt_results *after,
		     struct kopt_ctx *ctx, const char *kernel,
		     const char *version)
{
	struct kopt_analysis numbers = KOPT_ANALYSIS_INIT;
	struct kopt_source src;

	kopt_ctx_kernel_or_die(ctx, kernel);
	if (!kopt_version_valid(version))
		kopt_die("'%s' is not a version (v0, v1, ...)", version);
	kopt_source_worktree(&src, ctx->top);
	kopt_lib_or_die(kopt_analysis_load(&numbers, &src, kernel,
					   kopt_ctx_config_or_die(ctx)));
	kopt_lib_or_die(kopt_analysis_take(after, &numbers, version));
	if (!after->parent)
		kopt_die("%s %s has no parent to compare with; --from needs a "
			 "version designed from another", kernel, version);
	kopt_lib_or_die(kopt_analysis_take(before, &numbers, after->parent));
	kopt_analysis_release(&numbers);
}

static int learn_new(int argc, const char **argv, struct kopt_ctx *ctx)
{
	const char *language = NULL, *from = NULL;
	struct kopt_option options[] = {
		OPT_STRING(0, "language", &language, "language",
			   "language-specific knowledge of this language"),
		OPT_STRING(0, "from", &from, "kernel>/<version",
			   "prefill the evidence from this version's results"),
		OPT_END()
	};
	struct kopt_learn_request req = { 0 };
	struct kopt_results before = KOPT_RESULTS_INIT;
	struct kopt_results after = KOPT_RESULTS_INIT;
	struct kopt_buf tmpl = KOPT_BUF_INIT, report = KOPT_BUF_INIT;
	struct kopt_kb kb = KOPT_KB_INIT;
	char *catalog = NULL, *kernel = NULL, *slug;
	int ret;

	argc = kopt_parse_options(argc, argv, options, new_usage, 0);
	if (argc != 2)
		kopt_usage_error(new_usage, options, argc < 2 ?
				 "what kind, and what name?" :
				 "too many arguments");
	if (kopt_kind_parse(&req.kind, argv[0]))
		kopt_usage_error(new_usage, options, "unknown kind '%s' "
				 "(expected optimization or anti-pattern)",
				 argv[0]);
	req.name = argv[1];
	slug = kopt_learn_slug(req.name);
	ret = !*slug;
	free(slug);
	if (ret)
		kopt_die("'%s' is not a usable name; use letters and digits",
			 req.name);
	catalog = choose_catalog(&req, ctx, language);
	req.catalog = catalog;
	if (from) {
		const char *slash = strchr(from, '/');
		if (!slash || slash == from || !slash[1])
			kopt_usage_error(new_usage, options, "--from takes "
					 "<kernel>/<version>, not '%s'", from);
		kernel = kopt_strndup(from, (size_t)(slash - from));
		evidence(&before, &after, ctx, kernel, slash + 1);
		req.before = &before;
		req.after = &after;
	}
	kopt_lib_or_die(kopt_templates_read(&tmpl,
					    req.kind == KOPT_KIND_ANTI_PATTERN ?
					    "anti-pattern.md" :
					    "optimization.md"));
	req.template_text = tmpl.buf;
	req.template_len = tmpl.len;

	load_kb_or_die(&kb, ctx, req.language);
	ret = kopt_learn_new(&kb, ctx->top, &req, &report);
	fputs(report.buf, stdout);
	if (!ret) {
		char *rel = NULL;
		slug = kopt_learn_slug(req.name);
		rel = kopt_knowledge_path(kb.root, req.kind, req.language,
					  slug);
		printf("next: fill in the placeholders of %s and its catalog "
		       "row; 'git kopt learn lint' lists what is left\n", rel);
		free(rel);
		free(slug);
	}
	kopt_kb_release(&kb);
	kopt_results_release(&before);
	kopt_results_release(&after);
	kopt_buf_release(&tmpl);
	kopt_buf_release(&report);
	free(catalog);
	free(kernel);
	if (ret == KOPT_EEXISTS)
		return 0;
	return ret ? 128 : 0;
}

static int learn_lint(int argc, const char **argv, struct kopt_ctx *ctx)
{
	struct kopt_option options[] = { OPT_END() };
	struct kopt_kb kb = KOPT_KB_INIT;
	struct kopt_buf out = KOPT_BUF_INIT;
	size_t files = 0, catalogs = 0, i;
	int ret;

	argc = kopt_parse_options(argc, argv, options, lint_usage, 0);
	if (argc)
		kopt_usage_error(lint_usage, options, "too many arguments");
	load_kb_or_die(&kb, ctx, NULL);
	kopt_problems_format(&out, &kb.problems);
	fputs(out.buf, stdout);
	{
		/* prose triggers are judgement calls: a warning at most */
		struct kopt_problems warn = KOPT_PROBLEMS_INIT;
		kopt_kb_prose_warnings(&kb, &warn);
		kopt_kb_sync_warnings(&kb, &warn);
		for (i = 0; i < warn.nr; i++)
			kopt_warning("%s:%d: %s", warn.v[i].file,
				     warn.v[i].line, warn.v[i].what);
		kopt_problems_clear(&warn);
	}
	for (i = 0; i < kb.catalogs_nr; i++)
		catalogs += kb.catalogs[i].exists;
	files = kb.details_nr;
	if (kb.problems.nr)
		fprintf(stderr, "%zu problem%s in the knowledge base\n",
			kb.problems.nr, kb.problems.nr == 1 ? "" : "s");
	else
		printf("%zu catalog%s and %zu detail file%s, no problems\n",
		       catalogs, catalogs == 1 ? "" : "s", files,
		       files == 1 ? "" : "s");
	ret = kb.problems.nr ? 1 : 0;
	kopt_buf_release(&out);
	kopt_kb_release(&kb);
	return ret;
}

static const char *entry_name(const struct kopt_kb_entry *e)
{
	if (e->row && e->row->cell[KOPT_COL_NAME] &&
	    *e->row->cell[KOPT_COL_NAME])
		return e->row->cell[KOPT_COL_NAME];
	if (e->detail && e->detail->name)
		return e->detail->name;
	return "";
}

static void list_json(const struct kopt_kb *kb)
{
	cJSON *arr = cJSON_CreateArray();
	char *text;
	size_t i, j;

	for (i = 0; i < kb->entries_nr; i++) {
		const struct kopt_kb_entry *e = &kb->entries[i];
		const struct kopt_detail *d = e->detail;
		cJSON *o = cJSON_CreateObject(), *a;
		const char *impact = e->row ? e->row->cell[KOPT_COL_IMPACT] :
				     NULL;
		const struct kopt_trigger *trig;
		size_t ntrig;
		double pct;

		if (e->row)
			cJSON_AddStringToObject(o, "id",
						e->row->cell[KOPT_COL_ID]);
		else
			cJSON_AddNullToObject(o, "id");
		cJSON_AddStringToObject(o, "kind", kopt_kind_name(e->kind));
		if (e->language)
			cJSON_AddStringToObject(o, "language", e->language);
		else
			cJSON_AddNullToObject(o, "language");
		cJSON_AddStringToObject(o, "name", entry_name(e));
		if (e->path)
			cJSON_AddStringToObject(o, "detail", e->path);
		else
			cJSON_AddNullToObject(o, "detail");
		if (e->catalog)
			cJSON_AddStringToObject(o, "catalog", e->catalog->path);
		if (impact && !kopt_impact_parse(impact, &pct))
			cJSON_AddNumberToObject(o, "impact_pct", pct);
		else if (e->kind == KOPT_KIND_OPTIMIZATION)
			cJSON_AddNullToObject(o, "impact_pct");
		a = cJSON_AddArrayToObject(o, "triggers");
		trig = kopt_kb_entry_triggers(e, &ntrig);
		for (j = 0; j < ntrig; j++)
			cJSON_AddItemToArray(a, cJSON_CreateString(
				trig[j].text));
		if (d && d->control)
			cJSON_AddStringToObject(o, "control",
						kopt_control_name(d->control));
		else
			cJSON_AddNullToObject(o, "control");
		if (d && d->source_type)
			cJSON_AddStringToObject(o, "source_type",
						d->source_type);
		else
			cJSON_AddNullToObject(o, "source_type");
		a = cJSON_AddArrayToObject(o, "contexts");
		for (j = 0; d && j < d->contexts.nr; j++)
			cJSON_AddItemToArray(a, cJSON_CreateString(
				d->contexts.v[j]));
		cJSON_AddItemToArray(arr, o);
	}
	text = cJSON_Print(arr);
	puts(text);
	free(text);
	cJSON_Delete(arr);
}

static void list_text(const struct kopt_kb *kb)
{
	size_t i, wid = 2, wscope = 6, wname = 4;

	for (i = 0; i < kb->entries_nr; i++) {
		const struct kopt_kb_entry *e = &kb->entries[i];
		size_t n = e->row ? strlen(e->row->cell[KOPT_COL_ID]) : 1;
		if (n > wid)
			wid = n;
		n = e->language ? strlen(e->language) : 6;
		if (n > wscope)
			wscope = n;
		n = strlen(entry_name(e));
		if (n > wname)
			wname = n;
	}
	for (i = 0; i < kb->entries_nr; i++) {
		const struct kopt_kb_entry *e = &kb->entries[i];
		struct kopt_buf trig = KOPT_BUF_INIT;
		size_t j, nt;
		const struct kopt_trigger *t = kopt_kb_entry_triggers(e, &nt);

		for (j = 0; j < nt; j++)
			kopt_buf_addf(&trig, "%s%s", j ? " and " : "",
				      t[j].text);
		printf("%-*s  %-12s  %-*s  %-*s  %s%s%s%s\n", (int)wid,
		       e->row ? e->row->cell[KOPT_COL_ID] : "-",
		       kopt_kind_name(e->kind), (int)wscope,
		       e->language ? e->language : "shared", (int)wname,
		       entry_name(e), e->path ? e->path : "-",
		       trig.len ? "  [" : "", trig.buf, trig.len ? "]" : "");
		kopt_buf_release(&trig);
	}
}

static int learn_sync(int argc, const char **argv, struct kopt_ctx *ctx)
{
	int dry_run = 0, words = 0, n;
	struct kopt_option options[] = {
		OPT_BOOL('n', "dry-run", &dry_run,
			 "say which rows would change; write nothing"),
		OPT_BOOL(0, "words", &words,
			 "also rewrite cells whose words differ from the "
			 "file's"),
		OPT_END()
	};
	struct kopt_kb kb = KOPT_KB_INIT;
	struct kopt_buf report = KOPT_BUF_INIT;

	argc = kopt_parse_options(argc, argv, options, sync_usage, 0);
	load_kb_or_die(&kb, ctx, NULL);
	n = kopt_learn_sync(&kb, ctx->top, argv, (size_t)argc, dry_run,
			    words, &report);
	kopt_kb_release(&kb);
	kopt_lib_or_die(n);
	fputs(report.buf, stdout);
	if (!n)
		printf("every row agrees with its detail file; nothing to do\n");
	else if (dry_run)
		printf("%d row%s would change; run without -n to write\n", n,
		       n == 1 ? "" : "s");
	kopt_buf_release(&report);
	return 0;
}

static int learn_list(int argc, const char **argv, struct kopt_ctx *ctx)
{
	int json = 0;
	struct kopt_option options[] = {
		OPT_BOOL(0, "json", &json, "print JSON"),
		OPT_END()
	};
	struct kopt_kb kb = KOPT_KB_INIT;

	argc = kopt_parse_options(argc, argv, options, list_usage, 0);
	if (argc)
		kopt_usage_error(list_usage, options, "too many arguments");
	load_kb_or_die(&kb, ctx, NULL);
	if (json)
		list_json(&kb);
	else
		list_text(&kb);
	if (kb.problems.nr)
		kopt_warning("the knowledge base has %zu problem%s; run 'git "
			     "kopt learn lint'", kb.problems.nr,
			     kb.problems.nr == 1 ? "" : "s");
	kopt_kb_release(&kb);
	return 0;
}

int cmd_learn(int argc, const char **argv, struct kopt_ctx *ctx)
{
	static const struct kopt_option options[] = { OPT_END() };

	argc = kopt_parse_options(argc, argv, options, learn_usage,
				  KOPT_PARSE_STOP_AT_NON_OPTION);
	if (argc < 1)
		kopt_usage_error(learn_usage, options, "which action: new, "
				 "sync, lint or list?");
	if (!strcmp(argv[0], "new"))
		return learn_new(argc, argv, ctx);
	if (!strcmp(argv[0], "sync"))
		return learn_sync(argc, argv, ctx);
	if (!strcmp(argv[0], "lint"))
		return learn_lint(argc, argv, ctx);
	if (!strcmp(argv[0], "list"))
		return learn_list(argc, argv, ctx);
	kopt_usage_error(learn_usage, options, "unknown action '%s'", argv[0]);
}
