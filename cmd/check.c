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

struct printer {
	FILE *out;
	int violations;
	int commits;
};

static int print_commit(const git_commit *commit, const struct kopt_gate *g,
			void *data)
{
	struct printer *p = data;
	git_buf short_id = GIT_BUF_INIT;
	const char *id;
	size_t i;

	p->commits++;
	if (!g->nr && !g->skip_reason)
		return 0;
	if (git_object_short_id(&short_id, (const git_object *)commit) < 0) {
		git_error_clear();
		id = git_oid_tostr_s(git_commit_id(commit));
	} else {
		id = short_id.ptr;
	}
	for (i = 0; i < g->nr; i++) {
		const struct kopt_violation *v = &g->violations[i];
		fprintf(p->out, "%s %s %s", id, v->rule, v->what);
		if (v->fix.nr)
			fprintf(p->out, "; fix: %s", v->fix.v[0]);
		fputc('\n', p->out);
	}
	if (g->skip_reason)
		fprintf(p->out, "%s learn-skip %s\n", id, g->skip_reason);
	p->violations += (int)g->nr;
	git_buf_dispose(&short_id);
	return 0;
}

int kopt_check_walk(struct kopt_ctx *ctx, git_revwalk *walk,
		    const git_oid *base, const git_oid *tip, FILE *out)
{
	struct printer p = { out, 0, 0 };
	struct kopt_config cfg = KOPT_CONFIG_INIT;
	git_oid *ids = NULL, id, from;
	size_t nr = 0, alloc = 0;
	git_commit *c = NULL;
	git_tree *tree = NULL;
	int ret = 0, err, have_from = 0;

	while (!(err = git_revwalk_next(&id, walk))) {
		KOPT_ALLOC_GROW(ids, nr + 1, alloc);
		git_oid_cpy(&ids[nr++], &id);
	}
	if (err != GIT_ITEROVER) {
		free(ids);
		return kopt_error("cannot walk the commits: %s",
				  kopt_git_error("unknown error"));
	}
	if (!nr)
		goto done;
	/* the settings of the base revision */
	if (base) {
		git_oid_cpy(&from, base);
		have_from = 1;
	} else if (!git_commit_lookup(&c, ctx->repo, &ids[0]) &&
		   git_commit_parentcount(c)) {
		git_oid_cpy(&from, git_commit_parent_id(c, 0));
		have_from = 1;
	}
	git_commit_free(c);
	c = NULL;
	ret = KOPT_ENOTFOUND;
	if (have_from && !git_commit_lookup(&c, ctx->repo, &from) &&
	    !git_commit_tree(&tree, c))
		ret = kopt_gate_config_tree(&cfg, ctx->repo, tree,
					    ".kopt (base)");
	git_error_clear();
	git_tree_free(tree);
	git_commit_free(c);
	tree = NULL;
	c = NULL;
	if (ret == KOPT_ENOTFOUND && tip &&
	    !git_commit_lookup(&c, ctx->repo, tip) &&
	    !git_commit_tree(&tree, c))
		ret = kopt_gate_config_tree(&cfg, ctx->repo, tree, ".kopt");
	git_error_clear();
	git_tree_free(tree);
	git_commit_free(c);
	if (ret == KOPT_ENOTFOUND) {
		/* no settings: not a kernel repository, nothing to enforce */
		ret = 0;
		goto done;
	}
	if (ret) {
		ret = -1;
		goto done;
	}
	ret = kopt_gate_commits(ctx->repo, &cfg, ids, nr, print_commit, &p);
	kopt_config_release(&cfg);
	if (!ret)
		ret = p.violations;
done:
	free(ids);
	return ret;
}

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
	n = kopt_check_walk(ctx, walk, have_base ? &base :
			    git_object_id(spec.from), &tip, stdout);
	git_revwalk_free(walk);
	git_object_free(spec.from);
	git_object_free(spec.to);
	kopt_buf_release(&range);
	kopt_buf_release(&name);
	if (n < 0)
		return 128;
	return n ? 1 : 0;
}
