/*
 * STRATEGIZE: the Optimization Task for the next version, from the
 * current version's results and the knowledge base.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"
#include "builtin.h"
#include "kb.h"
#include "lockfile.h"
#include "results.h"
#include "strategy.h"
#include "version.h"
#include "paths.h"
#include "banned.h"

static const char *const strategize_usage[] = {
	"git kopt strategize <kernel> [<version>] [--json] [--max <n>] "
	"[--force] [--no-write]",
	NULL
};

void kopt_numbers_load_or_die(struct kopt_analysis *out, struct kopt_ctx *ctx,
			      const char *kernel)
{
	const struct kopt_config *cfg = kopt_ctx_config_or_die(ctx);
	struct kopt_source src;

	kopt_source_worktree(&src, ctx->top);
	kopt_lib_or_die(kopt_analysis_load(out, &src, kernel, cfg));
}

void kopt_numbers_take_or_die(struct kopt_results *out,
			      struct kopt_analysis *a, const char *version)
{
	struct kopt_analysis_version *v =
		(struct kopt_analysis_version *)kopt_analysis_find(a, version);
	struct kopt_buf rel = KOPT_BUF_INIT;

	kopt_path_results(&rel, a->kernel, version);
	if (!v || !v->has_results || !v->results.entries_nr)
		kopt_die("no numbers for %s %s: neither %s nor a performance "
			 "block in its devlog entry; run 'git kopt profile %s "
			 "%s' first", a->kernel, version, rel.buf, a->kernel,
			 version);
	kopt_results_release(out);
	*out = v->results;
	v->results = (struct kopt_results)KOPT_RESULTS_INIT;
	v->has_results = 0;
	kopt_buf_release(&rel);
}

/* The current version and its ancestors, following their parents. */
static void lineage_of(struct kopt_strvec *out, const struct kopt_analysis *a,
		       const char *version)
{
	const struct kopt_analysis_version *v = kopt_analysis_find(a, version);

	kopt_strvec_push(out, version);
	while (v && v->parent >= 0 &&
	       !kopt_strvec_has(out, a->versions[v->parent].name)) {
		v = &a->versions[v->parent];
		kopt_strvec_push(out, v->name);
	}
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
	struct kopt_analysis a = KOPT_ANALYSIS_INIT;

	if (version && !kopt_version_valid(version))
		kopt_die("'%s' is not a version (v0, v1, ...)", version);
	kopt_numbers_load_or_die(&a, ctx, k->name);
	kopt_kernel_versions(ctx->top, ctx->repo, k, &a, &newest, next);
	if (version) {
		*current = kopt_strdup(version);
		free(newest);
	} else if (newest) {
		*current = newest;
	} else {
		kopt_die("no numbers for kernel '%s' (no results file, no "
			 "performance block in docs/kernels/%s.md); run 'git "
			 "kopt profile %s v0' first", k->name, k->name,
			 k->name);
	}
	lineage_of(&lineage, &a, *current);
	kopt_numbers_take_or_die(res, &a, *current);

	kopt_kb_source_worktree(&src, ctx->top);
	kopt_lib_or_die(kopt_kb_load(kb, &src, cfg, k->language));
	{
		/* what looks like a mistyped metric is judged, not evaluated */
		struct kopt_problems warn = KOPT_PROBLEMS_INIT;
		size_t i;
		kopt_kb_prose_warnings(kb, &warn);
		for (i = 0; i < warn.nr; i++)
			kopt_warning("%s:%d: %s", warn.v[i].file,
				     warn.v[i].line, warn.v[i].what);
		kopt_problems_clear(&warn);
	}
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
	kopt_analysis_release(&a);
	kopt_lib_or_die(kopt_strategy_compute(out, kb, res, cfg, k, *current,
					      *next, &lineage, max));
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

/* Entries whose triggers name metrics that were not measured. */
static void warn_unmeasured(const struct kopt_strategy *s)
{
	struct kopt_strvec missing = KOPT_STRVEC_INIT;
	struct kopt_buf list = KOPT_BUF_INIT;
	size_t i, j;

	for (i = 0; i < s->unknown_nr; i++)
		for (j = 0; j < s->unknown[i].missing.nr; j++)
			if (!kopt_strvec_has(&missing,
					     s->unknown[i].missing.v[j]))
				kopt_strvec_push(&missing,
						 s->unknown[i].missing.v[j]);
	for (i = 0; i < missing.nr; i++)
		kopt_buf_addf(&list, "%s%s", i ? ", " : "", missing.v[i]);
	kopt_warning("%zu entr%s not evaluated: not measured: %s",
		     s->unknown_nr, s->unknown_nr == 1 ? "y" : "ies", list.buf);
	kopt_strvec_clear(&missing);
	kopt_buf_release(&list);
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
		if (same != 1)
			kopt_lib_or_die(kopt_write_file_atomic(abs, md.buf,
							       md.len, 0644));
	}
	if (json)
		kopt_strategy_json(&out, &s, no_write ? NULL : task);
	else
		kopt_buf_addbuf(&out, &md);
	fputs(out.buf, stdout);
	if (s.unknown_nr)
		warn_unmeasured(&s);
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
