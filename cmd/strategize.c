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
#include "strategy.h"
#include "version.h"
#include "paths.h"
#include "banned.h"

static const char *const strategize_usage[] = {
	"git kopt strategize <kernel> [<version>] [--json] [--max <n>] "
	"[--force] [--no-write]",
	NULL
};

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
	struct kopt_strategy_request req;
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
	req.top = ctx->top;
	req.repo = ctx->repo;
	req.cfg = kopt_ctx_config_or_die(ctx);
	req.kernel = kopt_ctx_kernel_or_die(ctx, argv[0]);
	req.version = argc > 1 ? argv[1] : NULL;
	req.max = (size_t)max;
	if (req.version && !kopt_version_valid(req.version))
		kopt_die("'%s' is not a version (v0, v1, ...)", req.version);
	kopt_lib_or_die(kopt_strategy_load(&s, &kb, &res, &current, &next,
					   &req));
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
