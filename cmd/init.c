/*
 * git kopt init: lay the workflow's files (templates/init/) into the
 * repository and install the hooks.  Idempotent; files changed by hand
 * are kept unless --force.
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

int cmd_init(int argc, const char **argv, struct kopt_ctx *ctx)
{
	int force = 0, quiet = 0;
	const char *ci = NULL;
	const struct kopt_option options[] = {
		OPT_STRING(0, "ci", &ci, "github|gitlab", "also add the CI "
			   "workflow that checks and reviews each pull "
			   "request"),
		OPT_BOOL(0, "force", &force,
			 "restore files changed by hand from the templates"),
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

	if (!kopt_setup_pending(&setup)) {
		for (i = 0; i < setup.nr; i++)
			if (setup.items[i].action == KOPT_SETUP_KEEP) {
				kept++;
				if (!quiet)
					printf("kept: %s\n", setup.items[i].label);
			}
		if (!quiet)
			puts("already initialised: nothing to do");
		goto done;
	}
	KOPT_OR_DIE(kopt_setup_apply(&setup), "; nothing was written");

	for (i = 0; i < setup.nr && !quiet; i++) {
		const struct kopt_setup_item *it = &setup.items[i];
		switch (it->action) {
		case KOPT_SETUP_CREATE:
			printf("%s: %s\n", it->is_hook ? "installed" : "created",
			       it->label);
			break;
		case KOPT_SETUP_RESTORE:
			printf("restored: %s\n", it->label);
			break;
		case KOPT_SETUP_KEEP:
			kept++;
			printf("kept: %s\n", it->label);
			break;
		case KOPT_SETUP_CHAIN:
			printf("chained: %s (the hook that was there runs "
			       "first, as %s)\n", it->label,
			       chain_name(it->keep_as));
			break;
		default:
			break;
		}
	}
	if (!quiet)
		printf("Initialised git kopt in %s\n", setup.top);
done:
	if (ci && !strcmp(ci, "gitlab"))
		gitlab_include_hint(&setup);
	if (kept && !quiet)
		fputs("hint: files changed by hand were kept; "
		      "'git kopt init --force' restores them\n", stderr);
	kopt_setup_release(&setup);
	return 0;
}
