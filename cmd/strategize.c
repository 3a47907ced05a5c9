/*
 * STRATEGIZE: the Optimization Task for the next version, from the
 * current version's results and the knowledge base.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "builtin.h"
#include "kb.h"
#include "lockfile.h"
#include "results.h"
#include "strategize.h"
#include "strategy.h"
#include "version.h"
#include "paths.h"
#include "banned.h"

static const char *const strategize_usage[] = {
	"git kopt strategize <kernel> [<version>] [--json] [--max <n>] "
	"[--force] [--no-write]",
	NULL
};

void kopt_results_read_or_die(struct kopt_results *out, struct kopt_ctx *ctx,
			      const char *kernel, const char *version)
{
	struct kopt_buf rel = KOPT_BUF_INIT, text = KOPT_BUF_INIT;
	char *path;

	kopt_path_results(&rel, kernel, version);
	path = kopt_ctx_path(ctx, rel.buf);
	if (kopt_buf_read_file(&text, path)) {
		if (errno == ENOENT)
			kopt_die("no results for %s %s (%s); run 'git kopt "
				 "profile %s %s' first", kernel, version,
				 rel.buf, kernel, version);
		kopt_die("cannot read '%s': %s", rel.buf, strerror(errno));
	}
	/* messages name the file as the user knows it */
	if (kopt_results_parse(out, text.buf, text.len, rel.buf, kernel,
			       version))
		exit(128);
	if (!out->entries_nr)
		kopt_die("%s has no measured trials; run 'git kopt profile %s "
			 "%s' first", rel.buf, kernel, version);
	free(path);
	kopt_buf_release(&rel);
	kopt_buf_release(&text);
}

/*
 * The current version and its ancestors, following the parents that the
 * results name; the chain stops at a version without readable results.
 */
static void lineage_of(struct kopt_strvec *out, struct kopt_ctx *ctx,
		       const char *kernel, const struct kopt_results *res)
{
	struct kopt_buf rel = KOPT_BUF_INIT, text = KOPT_BUF_INIT;
	char *parent = res->parent ? kopt_strdup(res->parent) : NULL;

	kopt_strvec_push(out, res->version);
	while (parent && kopt_version_valid(parent) &&
	       !kopt_strvec_has(out, parent)) {
		struct kopt_results r = KOPT_RESULTS_INIT;
		char *path;
		int bad;
		kopt_strvec_push(out, parent);
		kopt_buf_reset(&rel);
		kopt_buf_reset(&text);
		kopt_path_results(&rel, kernel, parent);
		path = kopt_ctx_path(ctx, rel.buf);
		bad = kopt_buf_read_file(&text, path) ||
		      kopt_results_parse(&r, text.buf, text.len, rel.buf,
					 kernel, parent);
		free(path);
		free(parent);
		parent = !bad && r.parent ? kopt_strdup(r.parent) : NULL;
		kopt_results_release(&r);
	}
	free(parent);
	kopt_buf_release(&rel);
	kopt_buf_release(&text);
}

/*
 * Load everything the task is made of; shared with `select`, which
 * computes the same task when none was written.  Dies on bad input,
 * naming the file and what to run.
 */
void kopt_strategize_or_die(struct kopt_strategy *out, struct kopt_kb *kb,
			    struct kopt_results *res, struct kopt_ctx *ctx,
			    const char *kernel_name, const char *version,
			    char **current, char **next, size_t max)
{
	const struct kopt_config *cfg = kopt_ctx_config_or_die(ctx);
	const struct kopt_kernel *k = kopt_ctx_kernel_or_die(ctx, kernel_name);
	struct kopt_kb_source src;
	struct kopt_buf probs = KOPT_BUF_INIT;
	struct kopt_strvec lineage = KOPT_STRVEC_INIT;
	char *newest = NULL;

	kopt_kernel_versions(ctx->top, ctx->repo, k, &newest, next);
	if (version) {
		if (!kopt_version_valid(version))
			kopt_die("'%s' is not a version (v0, v1, ...)",
				 version);
		*current = kopt_strdup(version);
		free(newest);
	} else if (newest) {
		*current = newest;
	} else {
		kopt_die("no results for kernel '%s'; run 'git kopt profile "
			 "%s v0' first", k->name, k->name);
	}
	kopt_results_read_or_die(res, ctx, k->name, *current);

	kopt_kb_source_worktree(&src, ctx->top);
	if (kopt_kb_load(kb, &src, cfg, k->language))
		exit(128);
	if (kb->problems.nr) {
		size_t i;
		kopt_problems_format(&probs, &kb->problems);
		for (i = 0; i < kb->problems.nr; i++) {
			const struct kopt_problem *p = &kb->problems.v[i];
			if (p->line)
				kopt_error("%s:%d: %s", p->file, p->line,
					   p->what);
			else
				kopt_error("%s: %s", p->file, p->what);
		}
		kopt_die("the knowledge base has %zu problem%s; fix %s first "
			 "('git kopt learn lint' lists %s)", kb->problems.nr,
			 kb->problems.nr == 1 ? "" : "s",
			 kb->problems.nr == 1 ? "it" : "them",
			 kb->problems.nr == 1 ? "it" : "them");
	}
	kopt_buf_release(&probs);
	lineage_of(&lineage, ctx, k->name, res);
	if (kopt_strategy_compute(out, kb, res, cfg, k, *current, *next,
				  &lineage, max))
		exit(128);
	kopt_strvec_clear(&lineage);
}

static int same_content(const char *path, const struct kopt_buf *want)
{
	struct kopt_buf have = KOPT_BUF_INIT;
	int same;

	if (kopt_buf_read_file(&have, path))
		return errno == ENOENT ? -1 : 0;
	same = have.len == want->len && !memcmp(have.buf, want->buf, have.len);
	kopt_buf_release(&have);
	return same;
}

int cmd_strategize(int argc, const char **argv, struct kopt_ctx *ctx)
{
	int json = 0, force = 0, no_write = 0, max = KOPT_STRATEGY_DEFAULT_MAX;
	struct kopt_option options[] = {
		OPT_BOOL(0, "json", &json, "print the task as JSON"),
		OPT_INT(0, "max", &max, "n",
			"apply at most this many optimizations (3)"),
		OPT_BOOL(0, "force", &force,
			 "replace a task file that differs"),
		OPT_BOOL(0, "no-write", &no_write,
			 "print the task, write no file"),
		OPT_END()
	};
	struct kopt_strategy s;
	struct kopt_kb kb = KOPT_KB_INIT;
	struct kopt_results res = KOPT_RESULTS_INIT;
	struct kopt_buf md = KOPT_BUF_INIT, out = KOPT_BUF_INIT;
	char *current = NULL, *next = NULL, *task, *task_dir, *abs;
	struct kopt_buf task_buf = KOPT_BUF_INIT;
	int same;

	argc = kopt_parse_options(argc, argv, options, strategize_usage, 0);
	if (argc < 1 || argc > 2)
		kopt_usage_error(strategize_usage, options, argc < 1 ?
				 "which kernel?" : "too many arguments");
	if (max < 1)
		kopt_usage_error(strategize_usage, options, "--max must be at "
				 "least 1");
	kopt_strategize_or_die(&s, &kb, &res, ctx, argv[0],
			       argc > 1 ? argv[1] : NULL, &current, &next,
			       (size_t)max);
	kopt_path_task(&task_buf, s.kernel, next);
	task = kopt_buf_detach(&task_buf, NULL);
	task_dir = kopt_strndup(task, (size_t)(strrchr(task, '/') - task));
	kopt_strategy_render(&md, &s, task_dir);
	abs = kopt_ctx_path(ctx, task);
	if (!no_write) {
		same = same_content(abs, &md);
		if (same == 0 && !force)
			kopt_die("'%s' exists and differs from this task; use "
				 "--force to replace it, or --no-write to only "
				 "print it", task);
		if (same != 1 &&
		    kopt_write_file_atomic(abs, md.buf, md.len, 0644))
			exit(128);
	}
	if (json)
		kopt_strategy_json(&out, &s, no_write ? NULL : task);
	else
		kopt_buf_addbuf(&out, &md);
	fputs(out.buf, stdout);
	if (s.unknown_nr) {
		struct kopt_strvec missing = KOPT_STRVEC_INIT;
		struct kopt_buf list = KOPT_BUF_INIT;
		size_t i, j;
		for (i = 0; i < s.unknown_nr; i++)
			for (j = 0; j < s.unknown[i].missing.nr; j++)
				if (!kopt_strvec_has(&missing,
						     s.unknown[i].missing.v[j]))
					kopt_strvec_push(&missing,
						s.unknown[i].missing.v[j]);
		for (i = 0; i < missing.nr; i++)
			kopt_buf_addf(&list, "%s%s", i ? ", " : "",
				      missing.v[i]);
		kopt_warning("%zu entr%s not evaluated: not measured: %s",
			     s.unknown_nr, s.unknown_nr == 1 ? "y" : "ies",
			     list.buf);
		kopt_strvec_clear(&missing);
		kopt_buf_release(&list);
	}
	if (!no_write)
		fprintf(stderr, "wrote %s\n", task);
	kopt_strategy_release(&s);
	kopt_kb_release(&kb);
	kopt_results_release(&res);
	kopt_buf_release(&md);
	kopt_buf_release(&out);
	free(current);
	free(next);
	free(task);
	free(task_dir);
	free(abs);
	return 0;
}
