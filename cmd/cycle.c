/*
 * git kopt cycle <kernel>: the whole cycle, unattended, with designer
 * agents (lib/cycle).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "builtin.h"
#include "term-progress.h"
#include "cycle.h"
#include "designer.h"
#include "repo.h"
#include "banned.h"

static const char *const cycle_usage[] = {
	"git kopt cycle <kernel> [--versions <n>] [--budget <time>] "
	"[--parallel <k>] [--until-target]\n"
	"                      [--agent <name>] [--learn-agent <name>] "
	"[--timeout <seconds>] [--replay <pattern>]\n"
	"                      [--resume] [--dry-run] [--status] [-q]",
	NULL
};

static void say(void *data, const char *line)
{
	(void)data;
	fprintf(stderr, "cycle: %s\n", line);
	fflush(stderr);
}

/* The options, at file scope so that their table can point at them. */
static int versions = -1, parallel = 1, until_target, resume;
static int dry_run, status, timeout_s, quiet;
static const char *budget, *agent, *learn_agent, *replay;
static const struct kopt_option options[] = {
	OPT_INT(0, "versions", &versions, "n",
		"stop after this many rounds (default 1, or none "
		"with --until-target)"),
	OPT_STRING(0, "budget", &budget, "time",
		   "stop starting rounds after this long (4h, 90m)"),
	OPT_INT(0, "parallel", &parallel, "k",
		"designers at once, on the k best proposals (1)"),
	OPT_BOOL(0, "until-target", &until_target,
		 "go round until the target is met"),
	OPT_STRING(0, "agent", &agent, "name",
		   "the designer agent (default: kopt.agent, else "
		   "claude)"),
	OPT_STRING(0, "learn-agent", &learn_agent, "name",
		   "the agent that writes knowledge (default: the "
		   "designer's)"),
	OPT_INT(0, "timeout", &timeout_s, "seconds",
		"each agent's time limit (default: its setting)"),
	OPT_STRING(0, "replay", &replay, "pattern",
		   "replay captures instead of measuring: a path "
		   "with {version} and {trial}"),
	OPT_BOOL(0, "resume", &resume,
		 "go on with the interrupted cycle"),
	OPT_BOOL(0, "dry-run", &dry_run, "print the plan, do nothing"),
	OPT_BOOL(0, "status", &status,
		 "where the cycle is, and what it kept and why"),
	OPT__QUIET(&quiet),
	OPT_END()
};

/* --status: where the cycle of `k` is. */
static int show_status(struct kopt_ctx *ctx, const struct kopt_kernel *k)
{
	struct kopt_buf out = KOPT_BUF_INIT;
	int ret = kopt_cycle_status(&out, ctx->repo, k->name, 0);

	if (ret == KOPT_ENOTFOUND)
		printf("no cycle of %s has run; start one with 'git kopt cycle "
		       "%s'\n", k->name, k->name);
	else if (!ret)
		fputs(out.buf, stdout);
	kopt_buf_release(&out);
	return ret && ret != KOPT_ENOTFOUND ? 128 : 0;
}

static int show_plan(struct kopt_cycle *c)
{
	struct kopt_buf out = KOPT_BUF_INIT;
	int ret = kopt_cycle_plan(c, &out) ? 128 : 0;

	fputs(out.buf, stdout);
	kopt_buf_release(&out);
	return ret;
}

/* Run (or resume) the cycle, then show where it stands. */
static int run_cycle(struct kopt_cycle *c, struct kopt_ctx *ctx, int resume)
{
	struct kopt_buf out = KOPT_BUF_INIT;
	int ret;

	/* it commits and merges: nothing when git holds the index */
	KOPT_OR_DIE(kopt_repo_index_unlocked(ctx->repo), "");
	ret = kopt_cycle_run(c, resume);

	if (ret == KOPT_EEXISTS || ret == KOPT_ELOCKED)
		ret = 1;
	else if (ret)
		ret = 128;
	if (!kopt_cycle_status(&out, ctx->repo, c->kernel->name, 0))
		fputs(out.buf, stdout);
	kopt_buf_release(&out);
	return ret;
}

int cmd_cycle(int argc, const char **argv, struct kopt_ctx *ctx)
{
	struct kopt_cycle c;
	struct kopt_buf exe = KOPT_BUF_INIT;
	const struct kopt_kernel *k;
	char *replay_abs = NULL;
	int ret;

	argc = kopt_parse_options(argc, argv, options, cycle_usage, 0);
	if (quiet)
		kopt_progress_terminal(0);
	if (argc != 1)
		kopt_usage_error(cycle_usage, options, argc ? "too many "
				 "arguments" : "which kernel?");
	if (parallel < 1 || parallel > 16)
		kopt_usage_error(cycle_usage, options, "--parallel must be "
				 "1 to 16");
	if (versions == 0 || versions < -1)
		kopt_usage_error(cycle_usage, options, "--versions must be at "
				 "least 1");
	if (timeout_s < 0)
		kopt_usage_error(cycle_usage, options, "--timeout must be "
				 "positive");
	if (status + dry_run + resume > 1)
		kopt_usage_error(cycle_usage, options, "--status, --dry-run "
				 "and --resume go alone");
	k = kopt_ctx_kernel_or_die(ctx, argv[0]);
	if (status)
		return show_status(ctx, k);

	kopt_cycle_init(&c);
	c.repo = ctx->repo;
	c.top = ctx->top;
	c.cfg = kopt_ctx_config_or_die(ctx);
	c.kernel = k;
	c.o.versions = versions > 0 ? versions : until_target ? 0 : 1;
	c.o.parallel = parallel;
	c.o.until_target = until_target;
	c.o.agent = agent;
	c.o.learn_agent = learn_agent;
	c.o.timeout_s = timeout_s;
	if (budget) {
		c.o.budget_s = kopt_cycle_parse_duration(budget);
		if (c.o.budget_s <= 0)
			kopt_usage_error(cycle_usage, options, "--budget '%s' "
					 "is not a time (4h, 90m, 30s)", budget);
	}
	if (replay) {
		if (!strstr(replay, "{version}") || !strstr(replay, "{trial}"))
			kopt_usage_error(cycle_usage, options, "--replay needs "
					 "{version} and {trial} in its path");
		replay_abs = replay[0] == '/' ? kopt_strdup(replay) :
			     kopt_xstrfmt("%s%s%s", ctx->top, ctx->prefix,
					  replay);
		c.o.replay = replay_abs;
	}
	kopt_lib_or_die(kopt_self_exe(&exe));
	c.exe = exe.buf;
	c.say = say;
	ret = dry_run ? show_plan(&c) : run_cycle(&c, ctx, resume);
	kopt_cycle_release(&c);
	kopt_buf_release(&exe);
	free(replay_abs);
	return ret;
}
