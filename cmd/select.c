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
#include "md.h"
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

static cmark_node *find_links(cmark_node *n, struct kopt_strvec *out)
{
	cmark_node *c;

	if (cmark_node_get_type(n) == CMARK_NODE_LINK)
		kopt_strvec_push(out, cmark_node_get_url(n));
	for (c = cmark_node_first_child(n); c; c = cmark_node_next(c))
		find_links(c, out);
	return NULL;
}

/* The links of the items under "### Optimizations to Apply". */
static void task_links(const char *text, size_t len, struct kopt_strvec *out)
{
	cmark_node *doc = kopt_md_parse(text, len), *n;
	struct kopt_buf t = KOPT_BUF_INIT;
	int in = 0;

	for (n = cmark_node_first_child(doc); n; n = cmark_node_next(n)) {
		if (kopt_md_heading_level(n)) {
			kopt_buf_reset(&t);
			kopt_md_text(&t, n);
			in = kopt_md_heading_level(n) == 3 &&
			     kopt_starts_with(t.buf, "Optimizations to Apply");
			continue;
		}
		if (in && cmark_node_get_type(n) == CMARK_NODE_LIST)
			find_links(n, out);
	}
	kopt_buf_release(&t);
	cmark_node_free(doc);
}

int cmd_select(int argc, const char **argv, struct kopt_ctx *ctx)
{
	int json = 0;
	struct kopt_option options[] = {
		OPT_BOOL(0, "json", &json, "print JSON"),
		OPT_END()
	};
	const struct kopt_config *cfg;
	const struct kopt_kernel *k;
	struct kopt_strategy s;
	struct kopt_kb kb = KOPT_KB_INIT;
	struct kopt_results res = KOPT_RESULTS_INIT;
	struct kopt_selection sel = { 0 };
	struct kopt_buf text = KOPT_BUF_INIT;
	struct kopt_strvec links = KOPT_STRVEC_INIT;
	struct need *needs = NULL;
	size_t needs_nr = 0, needs_alloc = 0, i;
	enum kopt_control required = KOPT_CONTROL_BLOCK;
	char *newest = NULL, *next = NULL, *task, *abs, *task_dir;
	struct kopt_buf task_buf = KOPT_BUF_INIT;
	char *current = NULL, *next2 = NULL;
	const char *source;
	int from_task, have_strategy = 0, ret;

	argc = kopt_parse_options(argc, argv, options, select_usage, 0);
	if (argc != 1)
		kopt_usage_error(select_usage, options, argc < 1 ?
				 "which kernel?" : "too many arguments");
	cfg = kopt_ctx_config_or_die(ctx);
	k = kopt_ctx_kernel_or_die(ctx, argv[0]);
	{
		struct kopt_analysis a = KOPT_ANALYSIS_INIT;
		kopt_numbers_load_or_die(&a, ctx, k->name);
		kopt_kernel_versions(ctx->top, ctx->repo, k, &a, &newest,
				     &next);
		kopt_analysis_release(&a);
	}
	kopt_path_task(&task_buf, k->name, next);
	task = kopt_buf_detach(&task_buf, NULL);
	task_dir = kopt_strndup(task, (size_t)(strrchr(task, '/') - task));
	abs = kopt_ctx_path(ctx, task);
	from_task = !kopt_buf_read_file(&text, abs);
	if (!from_task && errno != ENOENT)
		kopt_die("cannot read '%s': %s", task, strerror(errno));

	if (from_task) {
		struct kopt_kb_source src;
		kopt_kb_source_worktree(&src, ctx->top);
		kopt_lib_or_die(kopt_kb_load(&kb, &src, cfg, k->language));
		task_links(text.buf, text.len, &links);
		for (i = 0; i < links.nr; i++) {
			const struct kopt_kb_entry *e;
			char *norm = kopt_link_path(task, links.v[i], NULL);

			e = norm ? kopt_kb_find(&kb, norm) : NULL;
			if (!e)
				kopt_warning("%s: '%s' is not a detail file of "
					     "the knowledge base; ignored",
					     task, links.v[i]);
			else
				add_need(&needs, &needs_nr, &needs_alloc, e,
					 cfg);
			free(norm);
		}
		source = task;
	} else {
		kopt_strategize_or_die(&s, &kb, &res, ctx, k->name, NULL,
				       &current, &next2,
				       KOPT_STRATEGY_DEFAULT_MAX);
		have_strategy = 1;
		for (i = 0; i < s.chosen; i++)
			add_need(&needs, &needs_nr, &needs_alloc,
				 s.apply[i].entry, cfg);
		source = NULL;
	}
	for (i = 0; i < needs_nr; i++)
		if (needs[i].control > required)
			required = needs[i].control;

	ret = kopt_select_language(&sel, cfg,
				   kopt_config_language(cfg, k->language),
				   required);
	if (ret == KOPT_ENOTFOUND) {
		fputs(sel.why.buf, stderr);
		kopt_die("no configured language gives %s-level control; add "
			 "one to .kopt ([language \"<name>\"] control = %s)",
			 kopt_control_name(required),
			 kopt_control_name(required));
	}
	if (json) {
		cJSON *o = cJSON_CreateObject(), *arr;
		char *j;
		cJSON_AddStringToObject(o, "kernel", k->name);
		cJSON_AddStringToObject(o, "language", sel.language->name);
		cJSON_AddStringToObject(o, "control",
					kopt_control_name(
						sel.language->control));
		cJSON_AddStringToObject(o, "current", k->language);
		cJSON_AddBoolToObject(o, "kept", sel.language == sel.current);
		cJSON_AddStringToObject(o, "required",
					kopt_control_name(required));
		if (source)
			cJSON_AddStringToObject(o, "task", source);
		else
			cJSON_AddNullToObject(o, "task");
		arr = cJSON_AddArrayToObject(o, "optimizations");
		for (i = 0; i < needs_nr; i++) {
			cJSON *n = cJSON_CreateObject();
			struct kopt_buf id = KOPT_BUF_INIT;
			kopt_kb_entry_id(&id, needs[i].entry);
			cJSON_AddStringToObject(n, "id", id.buf);
			cJSON_AddStringToObject(n, "name",
						kopt_kb_entry_name(needs[i].entry));
			cJSON_AddStringToObject(n, "detail",
						needs[i].entry->path);
			if (needs[i].control)
				cJSON_AddStringToObject(n, "control",
					kopt_control_name(needs[i].control));
			else
				cJSON_AddNullToObject(n, "control");
			cJSON_AddItemToArray(arr, n);
			kopt_buf_release(&id);
		}
		j = cJSON_Print(o);
		puts(j);
		free(j);
		cJSON_Delete(o);
	} else {
		printf("## Language: %s\n", sel.language->name);
		printf("Required control: %s", kopt_control_name(required));
		if (source)
			printf(" (from %s)\n", source);
		else
			printf(" (from 'git kopt strategize %s'; no task file "
			       "yet)\n", k->name);
		for (i = 0; i < needs_nr; i++) {
			struct kopt_buf id = KOPT_BUF_INIT;
			kopt_kb_entry_id(&id, needs[i].entry);
			printf("- %s (%s): %s\n", kopt_kb_entry_name(needs[i].entry),
			       id.buf, needs[i].control ?
			       kopt_control_name(needs[i].control) :
			       "any (no control declared)");
			kopt_buf_release(&id);
		}
		if (!needs_nr)
			printf("- no optimizations in the task\n");
		printf("Why:\n");
		{
			const char *p = sel.why.buf;
			while (*p) {
				const char *nl = strchr(p, '\n');
				size_t n = nl ? (size_t)(nl - p) : strlen(p);
				printf("- %.*s\n", (int)n, p);
				p += n + (nl ? 1 : 0);
			}
		}
	}
	if (have_strategy)
		kopt_strategy_release(&s);
	kopt_selection_release(&sel);
	kopt_kb_release(&kb);
	kopt_results_release(&res);
	kopt_buf_release(&text);
	kopt_strvec_clear(&links);
	free(needs);
	free(newest);
	free(next);
	free(next2);
	free(current);
	free(task);
	free(task_dir);
	free(abs);
	return 0;
}
