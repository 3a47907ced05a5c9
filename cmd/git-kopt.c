/*
 * git-kopt: the kernel-optimization cycle as git subcommands.
 *
 * main() finds the step in the table, opens the repository when the step
 * needs one, and hands over.  Each step lives in cmd/<step>.c.
 */
#include <locale.h>
#include <malloc.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <git2.h>

#include "builtin.h"
#include "gitinit.h"
#include "hooks.h"
#include "term-progress.h"
#include "version.h"
#include "banned.h"

struct cmd_struct {
	const char *name;
	int (*fn)(int, const char **, struct kopt_ctx *);
	unsigned flags;
	const char *summary;
};

/* Sorted by name. */
static const struct cmd_struct commands[] = {
	{ "analyze", cmd_analyze, KOPT_NEED_REPO | KOPT_NEED_WORK_TREE,
	  "overview, versions, best results, target gap, open obligations" },
	{ "check", cmd_check, KOPT_NEED_REPO,
	  "run the hooks' rules over a range of commits (for CI)" },
	{ "cycle", cmd_cycle, KOPT_NEED_REPO | KOPT_NEED_WORK_TREE,
	  "the whole cycle, unattended, with designer agents" },
	{ "design", cmd_design, KOPT_NEED_REPO | KOPT_NEED_WORK_TREE,
	  "start a new version of a kernel on its own branch" },
	{ "device", cmd_device, 0,
	  "show the GPU, its peaks, and calibrate its real ceilings" },
	{ "evaluate", cmd_evaluate, KOPT_NEED_REPO | KOPT_NEED_WORK_TREE,
	  "the target against the best results: met, or back to SELECT" },
	{ "hook", cmd_hook, KOPT_NEED_REPO,
	  "run the checks behind the installed git hooks" },
	{ "init", cmd_init, KOPT_NEED_REPO,
	  "lay the workflow's files into this repository" },
	{ "kernel", cmd_kernel, KOPT_NEED_REPO | KOPT_NEED_WORK_TREE,
	  "add a kernel to .kopt, or list the kernels" },
	{ "learn", cmd_learn, KOPT_NEED_REPO | KOPT_NEED_WORK_TREE,
	  "add to and check the knowledge base" },
	{ "plot", cmd_plot, KOPT_NEED_REPO | KOPT_NEED_WORK_TREE,
	  "SVG plots of a kernel's history and roofline, charts in its devlog" },
	{ "profile", cmd_profile, KOPT_NEED_REPO | KOPT_NEED_WORK_TREE,
	  "measure a version on the GPU: results, devlog, profiler contract" },
	{ "review", cmd_review, KOPT_NEED_REPO,
	  "summarize a range for a pull request: versions, results, LEARN" },
	{ "select", cmd_select, KOPT_NEED_REPO | KOPT_NEED_WORK_TREE,
	  "choose the language by the control the task needs" },
	{ "status", cmd_status, KOPT_NEED_REPO | KOPT_NEED_WORK_TREE,
	  "where each kernel is in the cycle, and what to run next" },
	{ "strategize", cmd_strategize, KOPT_NEED_REPO | KOPT_NEED_WORK_TREE,
	  "write the optimization task for the next version" },
	{ "tune", cmd_tune, KOPT_NEED_REPO | KOPT_NEED_WORK_TREE,
	  "the best configuration of a version within a budget, cached" },
	{ "verify", cmd_verify, KOPT_NEED_REPO | KOPT_NEED_WORK_TREE,
	  "profile a new version and judge it against its parent" },
};

static const char *const git_kopt_usage[] = {
	"git kopt [--version] [-h] <step> [<args>]",
	NULL
};

void kopt_die(const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	fputs("fatal: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(128);
}

int kopt_lib_or_die(int code)
{
	if (code < 0) {
		fflush(stdout);
		exit(128);
	}
	return code;
}

const struct kopt_config *kopt_ctx_config_or_die(struct kopt_ctx *ctx)
{
	int ret;

	if (ctx->config_loaded)
		return &ctx->config;
	ret = kopt_config_load(&ctx->config, ctx->repo);
	if (ret == KOPT_ENOTFOUND)
		kopt_die("no .kopt in '%s'; run 'git kopt init' first",
			 ctx->top);
	kopt_lib_or_die(ret);
	ctx->config_loaded = 1;
	return &ctx->config;
}

const struct kopt_kernel *kopt_ctx_kernel_or_die(struct kopt_ctx *ctx,
						 const char *name)
{
	const struct kopt_config *cfg = kopt_ctx_config_or_die(ctx);
	const struct kopt_kernel *k = kopt_config_kernel(cfg, name);
	struct kopt_buf known = KOPT_BUF_INIT;
	size_t i;

	if (k)
		return k;
	for (i = 0; i < cfg->kernels_nr; i++)
		kopt_buf_addf(&known, "%s%s", i ? ", " : "",
			      cfg->kernels[i].name);
	if (!known.len)
		kopt_die("unknown kernel '%s'; add it with 'git kopt kernel "
			 "add'", name);
	kopt_die("unknown kernel '%s' (known: %s)", name, known.buf);
}

int kopt_print_gate_commit(const git_commit *commit,
			   const struct kopt_gate *g, void *out)
{
	struct kopt_buf lines = KOPT_BUF_INIT;

	kopt_gate_format_commit(&lines, commit, g);
	fputs(lines.buf, out);
	kopt_buf_release(&lines);
	return 0;
}

char *kopt_ctx_path(const struct kopt_ctx *ctx, const char *rel)
{
	return kopt_xstrfmt("%s%s", ctx->top ? ctx->top : "", rel);
}

static void list_commands(FILE *f)
{
	size_t i;

	fputs("usage: git kopt [--version] [-h] <step> [<args>]\n\n"
	      "The steps of the kernel-optimization cycle:\n", f);
	for (i = 0; i < KOPT_ARRAY_SIZE(commands); i++)
		fprintf(f, "   %-12s %s\n", commands[i].name,
			commands[i].summary);
	fputs("\n'git kopt <step> -h' describes a step; 'git help kopt' "
	      "shows the manual.\n", f);
}

static const struct cmd_struct *find_command(const char *name)
{
	size_t i;

	for (i = 0; i < KOPT_ARRAY_SIZE(commands); i++)
		if (!strcmp(commands[i].name, name))
			return &commands[i];
	return NULL;
}

static void open_repo(struct kopt_ctx *ctx, unsigned flags,
		      struct kopt_buf *top, struct kopt_buf *prefix)
{
	unsigned open_flags = getenv("GIT_DIR") ?
			      GIT_REPOSITORY_OPEN_FROM_ENV : 0;
	const char *wd, *git_dir = getenv("GIT_DIR");
	const char *work_tree = getenv("GIT_WORK_TREE");
	char cwd[4096];

	if (git_dir && work_tree && *work_tree) {
		/*
		 * libgit2 1.5 refuses GIT_WORK_TREE in FROM_ENV mode, and git
		 * sets it (as ".") for hooks run by "git --work-tree=...":
		 * open GIT_DIR itself and set the work tree by hand.
		 */
		char *abs = realpath(work_tree, NULL);
		const char *have;
		if (!abs || git_repository_open_ext(&ctx->repo, git_dir,
					GIT_REPOSITORY_OPEN_NO_SEARCH, NULL) < 0)
			kopt_die("not a git repository: '%s' (work tree '%s')",
				 git_dir, work_tree);
		/* usually the same; libgit2 leaks a little when it changes */
		have = git_repository_workdir(ctx->repo);
		if ((!have || strncmp(have, abs, strlen(abs)) ||
		     strcmp(have + strlen(abs), "/")) &&
		    git_repository_set_workdir(ctx->repo, abs, 0) < 0)
			kopt_die("cannot use '%s' as the work tree: %s",
				 work_tree, kopt_git_error("unknown error"));
		free(abs);
	} else if (git_repository_open_ext(&ctx->repo,
					   git_dir ? NULL : ".", open_flags,
					   NULL) < 0) {
		kopt_die("not a git repository (or any of the parent "
			 "directories)");
	}
	wd = git_repository_workdir(ctx->repo);
	if (!wd) {
		if (flags & KOPT_NEED_WORK_TREE)
			kopt_die("this operation must be run in a work tree");
		return;
	}
	kopt_buf_addstr(top, wd);
	ctx->top = top->buf;
	if (getcwd(cwd, sizeof(cwd))) {
		size_t n = top->len - 1; /* without the trailing '/' */
		if (!strncmp(cwd, top->buf, n) && cwd[n] == '/')
			kopt_buf_addf(prefix, "%s/", cwd + n + 1);
	}
	ctx->prefix = prefix->buf;
}

int main(int argc, const char **argv)
{
	struct kopt_ctx ctx = { 0 };
	struct kopt_buf top = KOPT_BUF_INIT, prefix = KOPT_BUF_INIT;
	const struct cmd_struct *cmd;
	int ret;

	setlocale(LC_CTYPE, "");
#ifdef M_MMAP_THRESHOLD
	/*
	 * The views read and free many files of a few hundred kilobytes
	 * (devlogs and their copies): kept in the heap rather than mapped
	 * and unmapped each time, their pages are faulted in once.
	 */
	mallopt(M_MMAP_THRESHOLD, 32 << 20);
	mallopt(M_TRIM_THRESHOLD, 64 << 20);
#endif
	argv++;
	argc--;
	if (argc < 1) {
		list_commands(stdout);
		return 1;
	}
	if (!strcmp(argv[0], "-h") || !strcmp(argv[0], "help")) {
		list_commands(stdout);
		return 0;
	}
	if (!strcmp(argv[0], "--version") || !strcmp(argv[0], "version")) {
		printf("git-kopt version %s\n", KOPT_VERSION);
		return 0;
	}
	if (!strcmp(argv[0], "--help")) {
		/* git rewrites "git kopt --help"; called directly, do the same */
		execlp("git", "git", "help", "kopt", (char *)NULL);
		kopt_die("cannot run 'git help kopt'");
	}
	if (argv[0][0] == '-') {
		fprintf(stderr, "error: unknown option '%s'\n", argv[0]);
		kopt_usage_with_options(git_kopt_usage, NULL, 1);
		return 129;
	}
	cmd = find_command(argv[0]);
	if (!cmd) {
		fprintf(stderr, "git kopt: '%s' is not a kopt step. See "
			"'git kopt -h'.\n", argv[0]);
		return 129;
	}
	kopt_gitinit();
	/*
	 * As git does, trust the object database on reading: hashing every
	 * object read again made the hooks and check pay twice for each.
	 */
	git_libgit2_opts(GIT_OPT_ENABLE_STRICT_HASH_VERIFICATION, 0);
	/*
	 * libgit2 keeps no tree over 4 KiB in its object cache, and
	 * docs/kernels/ of 500 kernels is 40: status looked each kernel's
	 * files up from HEAD's root and inflated that tree again each time.
	 */
	git_libgit2_opts(GIT_OPT_SET_CACHE_OBJECT_LIMIT, GIT_OBJECT_TREE,
			 (size_t)4 << 20);
	kopt_progress_terminal(1);
	ctx.prefix = "";
	/* -h works anywhere, before the repository is looked for */
	if ((cmd->flags & KOPT_NEED_REPO) &&
	    !(argc > 1 && !strcmp(argv[argc - 1], "-h")))
		open_repo(&ctx, cmd->flags, &top, &prefix);
	ret = cmd->fn(argc, argv, &ctx);
	if (ctx.config_loaded)
		kopt_config_release(&ctx.config);
	git_repository_free(ctx.repo);
	kopt_buf_release(&top);
	kopt_buf_release(&prefix);
	git_libgit2_shutdown();
	fflush(stdout);
	if (ferror(stdout))
		kopt_die("cannot write to standard output");
	return ret;
}
