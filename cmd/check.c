/*
 * git kopt check [<range>]: the rules of the hooks over committed history,
 * for CI and server-side enforcement where client hooks can be skipped
 * (`git commit --no-verify`).  Thresholds come from the base revision of
 * the range, so a change cannot loosen its own gate.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "builtin.h"
#include "term-progress.h"
#include "hooks.h"
#include "repo.h"
#include "banned.h"

static const char *const check_usage[] = {
	"git kopt check [-q] [<range>]",
	NULL
};

/* The default range's bottom: the upstream, else the default branch. */
static int default_base(git_repository *repo, git_oid *out,
			struct kopt_buf *name)
{
	static const char *const candidates[] = {
		"refs/remotes/origin/HEAD", "refs/heads/main",
		"refs/heads/master", "refs/remotes/origin/main",
		"refs/remotes/origin/master",
	};
	git_reference *head = NULL, *up = NULL, *ref = NULL;
	size_t i;
	int ret = -1;

	if (!git_repository_head(&head, repo) && git_reference_is_branch(head) &&
	    !git_branch_upstream(&up, head) &&
	    !git_reference_name_to_id(out, repo, git_reference_name(up))) {
		kopt_buf_addstr(name, git_reference_shorthand(up));
		ret = 0;
	}
	git_error_clear();
	for (i = 0; ret && i < KOPT_ARRAY_SIZE(candidates); i++) {
		git_oid tip, head_id;
		if (git_reference_lookup(&ref, repo, candidates[i]) < 0 ||
		    git_reference_name_to_id(&tip, repo, candidates[i]) < 0 ||
		    git_reference_name_to_id(&head_id, repo, "HEAD") < 0 ||
		    git_merge_base(out, repo, &tip, &head_id) < 0) {
			git_error_clear();
			git_reference_free(ref);
			ref = NULL;
			continue;
		}
		kopt_buf_addstr(name, git_reference_shorthand(ref));
		ret = 0;
	}
	git_reference_free(ref);
	git_reference_free(up);
	git_reference_free(head);
	return ret;
}

int cmd_check(int argc, const char **argv, struct kopt_ctx *ctx)
{
	int quiet = 0;
	const struct kopt_option options[] = {
		OPT_BOOL('q', "quiet", &quiet, "no progress line"),
		OPT_END(),
	};
	git_revwalk *walk = NULL;
	git_revspec spec;
	git_oid base, tip;
	struct kopt_buf range = KOPT_BUF_INIT, name = KOPT_BUF_INIT;
	int n, have_base = 0;

	argc = kopt_parse_options(argc, argv, options, check_usage, 0);
	kopt_progress_terminal(!quiet);
	if (argc > 1)
		kopt_usage_error(check_usage, options, "too many arguments");
	if (!kopt_repo_has_commits(ctx->repo))
		kopt_die("nothing to check: the repository has no commits");
	if (argc == 1) {
		if (strstr(argv[0], ".."))
			kopt_buf_addstr(&range, argv[0]);
		else
			kopt_buf_addf(&range, "%s..HEAD", argv[0]);
	} else {
		if (default_base(ctx->repo, &base, &name))
			kopt_die("no upstream and no default branch to check "
				 "against; name a range, e.g. 'git kopt check "
				 "origin/main..HEAD'");
		kopt_buf_addf(&range, "%s..HEAD", git_oid_tostr_s(&base));
	}
	memset(&spec, 0, sizeof(spec));
	if (git_revparse(&spec, ctx->repo, range.buf) < 0)
		kopt_die("bad range '%s': %s", argc ? argv[0] : range.buf,
			 kopt_git_error("unknown revision"));
	if (!spec.from || !spec.to)
		kopt_die("bad range '%s' (expected <from>..<to>)", argv[0]);
	git_oid_cpy(&tip, git_object_id(spec.to));
	if (spec.flags & GIT_REVSPEC_MERGE_BASE) {
		if (git_merge_base(&base, ctx->repo, git_object_id(spec.from),
				   &tip) < 0)
			kopt_die("'%s': the two sides have no common commit",
				 argv[0]);
		have_base = 1;
	} else if (!git_merge_base(&base, ctx->repo, git_object_id(spec.from),
				   &tip)) {
		have_base = 1;
	} else {
		git_error_clear();
	}
	if (git_revwalk_new(&walk, ctx->repo) < 0 ||
	    git_revwalk_push(walk, &tip) < 0 ||
	    git_revwalk_hide(walk, (spec.flags & GIT_REVSPEC_MERGE_BASE) ?
			     &base : git_object_id(spec.from)) < 0)
		kopt_die("cannot walk '%s': %s", range.buf,
			 kopt_git_error("unknown error"));
	git_revwalk_sorting(walk, GIT_SORT_TOPOLOGICAL | GIT_SORT_REVERSE);
	n = kopt_gate_walk(ctx->repo, walk, have_base ? &base :
			   git_object_id(spec.from), &tip,
			   kopt_print_gate_commit, stdout);
	git_revwalk_free(walk);
	git_object_free(spec.from);
	git_object_free(spec.to);
	kopt_buf_release(&range);
	kopt_buf_release(&name);
	if (n < 0)
		return 128;
	return n ? 1 : 0;
}
