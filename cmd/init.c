/*
 * git kopt init: lay the workflow's files (templates/init/) into the
 * repository and install the hooks.  Idempotent; files changed or
 * deleted by hand are kept as they are (and said so once) unless --force.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "builtin.h"
#include "setup.h"
#include "banned.h"

static const char *const init_usage[] = {
	"git kopt init [--force] [-q] [--ci github|gitlab]",
	NULL
};

static const char *chain_name(const char *keep_as)
{
	const char *slash = strrchr(keep_as, '/');

	return slash ? slash + 1 : keep_as;
}

/* A file changed or deleted by hand, said once (the manifest remembers). */
static void print_kept(const struct kopt_setup_item *it)
{
	if (!it->report)
		return;
	if (it->action == KOPT_SETUP_KEEP)
		printf("kept: %s\n", it->label);
	else if (it->action == KOPT_SETUP_DELETED)
		printf("deleted by you, not restored: %s\n", it->label);
}

/*
 * A .gitlab-ci.yml of the project's own is kept: say what to add to it
 * when it does not include git kopt's job yet.
 */
static void gitlab_include_hint(const struct kopt_setup *setup)
{
	struct kopt_buf text = KOPT_BUF_INIT;
	char *path = kopt_xstrfmt("%s.gitlab-ci.yml", setup->top);

	if (!kopt_buf_read_file(&text, path) &&
	    !strstr(text.buf, ".gitlab/kopt.yml"))
		fputs("hint: .gitlab-ci.yml is your own: add git kopt's job "
		      "to it with\nhint:   include:\nhint:     - local: "
		      ".gitlab/kopt.yml\n", stderr);
	kopt_buf_release(&text);
	free(path);
}

/* What init did to one file. */
static void print_done(const struct kopt_setup_item *it)
{
	switch (it->action) {
	case KOPT_SETUP_CREATE:
		printf("%s: %s\n", it->is_hook ? "installed" : "created",
		       it->label);
		break;
	case KOPT_SETUP_RESTORE:
		printf("restored: %s\n", it->label);
		break;
	case KOPT_SETUP_UPDATE:
		printf("updated: %s\n", it->label);
		break;
	case KOPT_SETUP_CHAIN:
		printf("chained: %s (the hook that was there runs first, as "
		       "%s)\n", it->label, chain_name(it->keep_as));
		break;
	default:
		print_kept(it);
		break;
	}
}

int cmd_init(int argc, const char **argv, struct kopt_ctx *ctx)
{
	int force = 0, quiet = 0;
	const char *ci = NULL;
	const struct kopt_option options[] = {
		OPT_STRING(0, "ci", &ci, "github|gitlab", "also add the CI "
			   "workflow that checks and reviews each pull "
			   "request"),
		OPT_BOOL(0, "force", &force,
			 "restore files changed or deleted by hand from the "
			 "templates"),
		OPT_BOOL('q', "quiet", &quiet, "print only errors"),
		OPT_END()
	};
	struct kopt_setup setup = KOPT_SETUP_INIT;
	size_t i, kept = 0;

	argc = kopt_parse_options(argc, argv, options, init_usage, 0);
	if (argc)
		kopt_usage_error(init_usage, options, "too many arguments");
	if (git_repository_is_bare(ctx->repo) || !ctx->top)
		kopt_die("cannot initialise a bare repository: git kopt needs "
			 "a work tree");
	if (ci && strcmp(ci, "github") && strcmp(ci, "gitlab"))
		kopt_usage_error(init_usage, options, "--ci takes github or "
				 "gitlab, not '%s'", ci);
	if (kopt_setup_plan(&setup, ctx->repo, force ? KOPT_SETUP_FORCE : 0))
		kopt_die("nothing was written");
	if (ci) {
		char *sub = kopt_xstrfmt("ci/%s", ci);
		int r = kopt_setup_plan_more(&setup, sub, force ?
					     KOPT_SETUP_FORCE : 0);
		free(sub);
		if (r)
			kopt_die("nothing was written");
	}

	for (i = 0; i < setup.nr; i++) {
		const struct kopt_setup_item *it = &setup.items[i];
		if (it->report && (it->action == KOPT_SETUP_KEEP ||
				   it->action == KOPT_SETUP_DELETED))
			kept++;
	}
	if (!kopt_setup_pending(&setup)) {
		if (kopt_setup_changed(&setup))
			KOPT_OR_DIE(kopt_setup_apply(&setup),
				    "; nothing was written");
		for (i = 0; i < setup.nr && !quiet; i++)
			print_kept(&setup.items[i]);
		if (!quiet)
			puts("already initialised: nothing to do");
		goto done;
	}
	KOPT_OR_DIE(kopt_setup_apply(&setup), "; nothing was written");

	for (i = 0; i < setup.nr && !quiet; i++)
		print_done(&setup.items[i]);
	if (!quiet)
		printf("Initialised git kopt in %s\n", setup.top);
done:
	if (ci && !strcmp(ci, "gitlab"))
		gitlab_include_hint(&setup);
	if (kept && !quiet)
		fputs("hint: files changed or deleted by hand were left as "
		      "they are; 'git kopt init --force' restores them\n",
		      stderr);
	kopt_setup_release(&setup);
	return 0;
}
