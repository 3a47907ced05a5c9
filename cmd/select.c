/*
 * SELECT: the implementation language for the next version, by the
 * control level its optimizations need.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "analysis.h"
#include "builtin.h"
#include "kb.h"
#include "strategy.h"
#include "paths.h"
#include "banned.h"

static const char *const select_usage[] = {
	"git kopt select <kernel> [--json]",
	NULL
};

struct need {
	const struct kopt_kb_entry *entry;
	enum kopt_control control;
};

static void add_need(struct need **v, size_t *nr, size_t *alloc,
		     const struct kopt_kb_entry *e,
		     const struct kopt_config *cfg)
{
	size_t i;

	for (i = 0; i < *nr; i++)
		if ((*v)[i].entry == e)
			return;
	KOPT_ALLOC_GROW(*v, *nr + 1, *alloc);
	(*v)[*nr].entry = e;
	(*v)[*nr].control = kopt_entry_control(e, cfg);
	(*nr)++;
}

/* What select decided, and from what. */
struct choice {
	const struct kopt_kernel *k;
	const char *source;             /* the task file, or NULL */
	struct need *needs;
	size_t needs_nr, needs_alloc;
	enum kopt_control required;
	struct kopt_selection sel;
};

/* The optimizations the task file `task` (text `text`) links to. */
static void needs_from_task(struct choice *c, struct kopt_kb *kb,
			    struct kopt_ctx *ctx, const char *task,
			    const struct kopt_buf *text)
{
	const struct kopt_config *cfg = kopt_ctx_config_or_die(ctx);
	struct kopt_strvec links = KOPT_STRVEC_INIT;
	struct kopt_kb_source src;
	size_t i;

	kopt_kb_source_worktree(&src, ctx->top);
	kopt_lib_or_die(kopt_kb_load(kb, &src, cfg, c->k->language));
	kopt_strategy_task_links(&links, text->buf, text->len);
	for (i = 0; i < links.nr; i++) {
		const struct kopt_kb_entry *e;
		char *norm = kopt_link_path(task, links.v[i], NULL);

		e = norm ? kopt_kb_find(kb, norm) : NULL;
		if (!e)
			kopt_warning("%s: '%s' is not a detail file of the "
				     "knowledge base; ignored", task,
				     links.v[i]);
		else
			add_need(&c->needs, &c->needs_nr, &c->needs_alloc, e,
				 cfg);
		free(norm);
	}
	kopt_strvec_clear(&links);
	c->source = task;
}

static void print_choice_json(const struct choice *c)
{
	cJSON *o = cJSON_CreateObject(), *arr;
	char *j;
	size_t i;

	cJSON_AddStringToObject(o, "kernel", c->k->name);
	cJSON_AddStringToObject(o, "language", c->sel.language->name);
	cJSON_AddStringToObject(o, "control",
				kopt_control_name(c->sel.language->control));
	cJSON_AddStringToObject(o, "current", c->k->language);
	cJSON_AddBoolToObject(o, "kept", c->sel.language == c->sel.current);
	cJSON_AddStringToObject(o, "required", kopt_control_name(c->required));
	if (c->source)
		cJSON_AddStringToObject(o, "task", c->source);
	else
		cJSON_AddNullToObject(o, "task");
	arr = cJSON_AddArrayToObject(o, "optimizations");
	for (i = 0; i < c->needs_nr; i++) {
		const struct need *nd = &c->needs[i];
		cJSON *n = cJSON_CreateObject();
		struct kopt_buf id = KOPT_BUF_INIT;
		kopt_kb_entry_id(&id, nd->entry);
		cJSON_AddStringToObject(n, "id", id.buf);
		cJSON_AddStringToObject(n, "name", kopt_kb_entry_name(nd->entry));
		cJSON_AddStringToObject(n, "detail", nd->entry->path);
		if (nd->control)
			cJSON_AddStringToObject(n, "control",
						kopt_control_name(nd->control));
		else
			cJSON_AddNullToObject(n, "control");
		cJSON_AddItemToArray(arr, n);
		kopt_buf_release(&id);
	}
	j = cJSON_Print(o);
	puts(j);
	free(j);
	cJSON_Delete(o);
}

static void print_choice(const struct choice *c)
{
	const char *p = c->sel.why.buf;
	size_t i;

	printf("## Language: %s\n", c->sel.language->name);
	printf("Required control: %s", kopt_control_name(c->required));
	if (c->source)
		printf(" (from %s)\n", c->source);
	else
		printf(" (from 'git kopt strategize %s'; no task file yet)\n",
		       c->k->name);
	for (i = 0; i < c->needs_nr; i++) {
		struct kopt_buf id = KOPT_BUF_INIT;
		kopt_kb_entry_id(&id, c->needs[i].entry);
		printf("- %s (%s): %s\n", kopt_kb_entry_name(c->needs[i].entry),
		       id.buf, c->needs[i].control ?
		       kopt_control_name(c->needs[i].control) :
		       "any (no control declared)");
		kopt_buf_release(&id);
	}
	if (!c->needs_nr)
		printf("- no optimizations in the task\n");
	printf("Why:\n");
	while (*p) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) : strlen(p);
		printf("- %.*s\n", (int)n, p);
		p += n + (nl ? 1 : 0);
	}
}

/* The version the next task is for. */
static void next_version(char **next, struct kopt_ctx *ctx,
			 const struct kopt_config *cfg,
			 const struct kopt_kernel *k)
{
	struct kopt_analysis a = KOPT_ANALYSIS_INIT;
	struct kopt_source src;
	char *newest = NULL;

	kopt_source_worktree(&src, ctx->top);
	kopt_lib_or_die(kopt_analysis_load(&a, &src, k->name, cfg));
	kopt_kernel_versions(ctx->top, ctx->repo, k, &a, &newest, next);
	kopt_analysis_release(&a);
	free(newest);
}

int cmd_select(int argc, const char **argv, struct kopt_ctx *ctx)
{
	int json = 0;
	struct kopt_option options[] = {
		OPT_BOOL(0, "json", &json, "print JSON"),
		OPT_END()
	};
	const struct kopt_config *cfg;
	struct choice c = { .required = KOPT_CONTROL_BLOCK };
	struct kopt_strategy s;
	struct kopt_kb kb = KOPT_KB_INIT;
	struct kopt_results res = KOPT_RESULTS_INIT;
	struct kopt_buf text = KOPT_BUF_INIT, task_buf = KOPT_BUF_INIT;
	struct kopt_strategy_request req = {
		.max = KOPT_STRATEGY_DEFAULT_MAX
	};
	char *next = NULL, *task, *abs;
	char *current = NULL, *next2 = NULL;
	int have_strategy = 0;
	size_t i;

	argc = kopt_parse_options(argc, argv, options, select_usage, 0);
	if (argc != 1)
		kopt_usage_error(select_usage, options, argc < 1 ?
				 "which kernel?" : "too many arguments");
	cfg = kopt_ctx_config_or_die(ctx);
	c.k = kopt_ctx_kernel_or_die(ctx, argv[0]);
	next_version(&next, ctx, cfg, c.k);
	kopt_path_task(&task_buf, c.k->name, next);
	task = kopt_buf_detach(&task_buf, NULL);
	abs = kopt_ctx_path(ctx, task);
	if (!kopt_buf_read_file(&text, abs)) {
		needs_from_task(&c, &kb, ctx, task, &text);
	} else if (errno != ENOENT) {
		kopt_die("cannot read '%s': %s", task, strerror(errno));
	} else {
		req.top = ctx->top;
		req.repo = ctx->repo;
		req.cfg = cfg;
		req.kernel = c.k;
		kopt_lib_or_die(kopt_strategy_load(&s, &kb, &res, &current,
						   &next2, &req));
		have_strategy = 1;
		for (i = 0; i < s.chosen; i++)
			add_need(&c.needs, &c.needs_nr, &c.needs_alloc,
				 s.apply[i].entry, cfg);
	}
	for (i = 0; i < c.needs_nr; i++)
		if (c.needs[i].control > c.required)
			c.required = c.needs[i].control;
	if (kopt_select_language(&c.sel, cfg,
				 kopt_config_language(cfg, c.k->language),
				 c.required) == KOPT_ENOTFOUND) {
		fputs(c.sel.why.buf, stderr);
		kopt_die("no configured language gives %s-level control; add "
			 "one to .kopt ([language \"<name>\"] control = %s)",
			 kopt_control_name(c.required),
			 kopt_control_name(c.required));
	}
	if (json)
		print_choice_json(&c);
	else
		print_choice(&c);
	if (have_strategy)
		kopt_strategy_release(&s);
	kopt_selection_release(&c.sel);
	kopt_kb_release(&kb);
	kopt_results_release(&res);
	kopt_buf_release(&text);
	free(c.needs);
	free(next);
	free(next2);
	free(current);
	free(task);
	free(abs);
	return 0;
}
