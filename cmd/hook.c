/*
 * git kopt hook: the checks behind the hooks that `git kopt init`
 * installs (hooks/pre-commit, hooks/commit-msg, hooks/pre-push).
 *
 * pre-commit judges the staged content that needs no message; commit-msg
 * judges the message and the LEARN rules, which need both the staged
 * content and the message (a `Kopt-Learn: skip` trailer is only known
 * there); pre-push runs every rule over the commits being pushed, like
 * `git kopt check`.  Settings come from the `.kopt` committed at HEAD
 * (the staged one only when HEAD has none), so a commit cannot loosen
 * its own gate.  Hooks never run kernels or touch the network.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "builtin.h"
#include "hooks.h"
#include "repo.h"
#include "banned.h"

static const char *const hook_usage[] = {
	"git kopt hook (pre-commit | commit-msg <file> | pre-push <remote> <url>)",
	NULL
};

static int same_fix(const struct kopt_violation *a,
		    const struct kopt_violation *b)
{
	size_t i;

	if (a->fix.nr != b->fix.nr || !a->hint != !b->hint ||
	    (a->hint && strcmp(a->hint, b->hint)))
		return 0;
	for (i = 0; i < a->fix.nr; i++)
		if (strcmp(a->fix.v[i], b->fix.v[i]))
			return 0;
	return 1;
}

static void print_hints(const struct kopt_violation *v)
{
	size_t i;

	if (v->fix.nr)
		fprintf(stderr, "hint: %s:\n", v->fix.nr > 1 ?
			"fix it, then commit again" : "fix it with");
	for (i = 0; i < v->fix.nr; i++)
		fprintf(stderr, "hint:   %s\n", v->fix.v[i]);
	if (v->hint)
		fprintf(stderr, "hint: %s\n", v->hint);
}

static int report(const struct kopt_gate *g, const char *what)
{
	size_t i;

	fflush(stdout);
	/* problems with the same fix are listed together, the fix once */
	for (i = 0; i < g->nr; i++) {
		fprintf(stderr, "error: %s\n", g->violations[i].what);
		if (i + 1 == g->nr ||
		    !same_fix(&g->violations[i], &g->violations[i + 1]))
			print_hints(&g->violations[i]);
	}
	if (g->skip_reason)
		fprintf(stderr, "note: LEARN gate passed by 'Kopt-Learn: skip "
			"%s'\n", g->skip_reason);
	if (!g->nr)
		return 0;
	fprintf(stderr, "error: %s refused by the kopt gate (%zu problem%s)\n",
		what, g->nr, g->nr == 1 ? "" : "s");
	return 1;
}

/*
 * The settings the gate reads: HEAD's .kopt, or the staged one when HEAD
 * has none (or a broken one: the commit may be the fix).  1 when the
 * repository has no settings at all: nothing to enforce.
 */
static int gate_config(struct kopt_config *out, git_repository *repo,
		       git_tree *head, const struct kopt_index *index)
{
	struct kopt_buf text = KOPT_BUF_INIT;
	int ret = KOPT_ENOTFOUND, r2;

	if (head) {
		ret = kopt_config_load_gate(out, repo, head, ".kopt (HEAD)");
		if (!ret)
			return 0;
	}
	r2 = kopt_index_read(&text, repo, index, ".kopt");
	if (!r2)
		r2 = kopt_config_load_buf(out, text.buf, text.len,
					  ".kopt (staged)");
	kopt_buf_release(&text);
	if (r2 != KOPT_ENOTFOUND)
		return r2 ? -1 : 0;
	if (ret == KOPT_ENOTFOUND)
		return 1;
	return -1;
}

static int comment_char(git_repository *repo)
{
	git_config *cfg = NULL;
	git_buf v = GIT_BUF_INIT;
	int c = '#';

	if (git_repository_config_snapshot(&cfg, repo) < 0) {
		git_error_clear();
		return c;
	}
	if (!git_config_get_string_buf(&v, cfg, "core.commentChar") &&
	    v.size == 1)
		c = (unsigned char)v.ptr[0];
	git_error_clear();
	git_buf_dispose(&v);
	git_config_free(cfg);
	return c;
}

static int run_commit_hook(struct kopt_ctx *ctx, const char *msg_file)
{
	struct kopt_gate g = KOPT_GATE_INIT;
	struct kopt_config cfg = KOPT_CONFIG_INIT;
	struct kopt_buf msg = KOPT_BUF_INIT;
	struct kopt_index *index = NULL;
	git_tree *head = NULL;
	int ret, have_cfg = 0;

	if (msg_file && kopt_buf_read_file(&msg, msg_file))
		kopt_die("cannot read the commit message '%s': %s", msg_file,
			 strerror(errno));
	kopt_lib_or_die(kopt_index_open(&index, ctx->repo));
	if (kopt_repo_has_commits(ctx->repo) &&
	    (ret = kopt_repo_rev_tree(&head, ctx->repo, "HEAD")) < 0)
		kopt_lib_or_die(ret);
	ret = gate_config(&cfg, ctx->repo, head, index);
	if (ret) {
		/* no .kopt anywhere: not a kernel repository, nothing to do */
		ret = ret > 0 ? 0 : 1;
		goto done;
	}
	have_cfg = 1;
	g.repo = ctx->repo;
	g.cfg = &cfg;
	g.index = index;
	g.base = head;
	if (msg_file) {
		g.message = msg.buf;
		g.comment_char = comment_char(ctx->repo);
		g.rules = KOPT_GATE_MESSAGE | KOPT_GATE_LEARN;
		g.is_merge = git_repository_state(ctx->repo) ==
			     GIT_REPOSITORY_STATE_MERGE;
	} else {
		g.rules = KOPT_GATE_CONTENT;
	}
	if (kopt_gate_run(&g)) {
		ret = 128;
		goto done;
	}
	ret = report(&g, "commit");
done:
	kopt_gate_release(&g);
	if (have_cfg)
		kopt_config_release(&cfg);
	kopt_buf_release(&msg);
	git_tree_free(head);
	kopt_index_free(index);
	return ret;
}

static int is_null_oid(const char *hex)
{
	return strspn(hex, "0") == strlen(hex);
}

/*
 * One line of pre-push input: "<local ref> <local id> <remote ref>
 * <remote id>".  Judges the commits not yet on the remote.
 */
static int push_line(struct kopt_ctx *ctx, const char *remote, char *line,
		     int *violations)
{
	char local_ref[1024], local_hex[GIT_OID_HEXSZ + 1];
	char remote_ref[1024], remote_hex[GIT_OID_HEXSZ + 1];
	git_oid local, remote_id, base;
	git_revwalk *walk = NULL;
	git_commit *c = NULL;
	char *glob;
	int ret = 0, have_base = 0, n;

	if (sscanf(line, "%1023s %40s %1023s %40s", local_ref, local_hex,
		   remote_ref, remote_hex) != 4)
		return 0;
	if (is_null_oid(local_hex))
		return 0;       /* a deletion: nothing to judge */
	if (git_oid_fromstr(&local, local_hex) < 0)
		kopt_die("pre-push: bad object id '%s'", local_hex);
	if (git_revwalk_new(&walk, ctx->repo) < 0 ||
	    git_revwalk_push(walk, &local) < 0)
		kopt_die("pre-push: cannot walk from %s: %s", local_hex,
			 kopt_git_error("unknown error"));
	git_revwalk_sorting(walk, GIT_SORT_TOPOLOGICAL | GIT_SORT_REVERSE);
	if (!is_null_oid(remote_hex) &&
	    !git_oid_fromstr(&remote_id, remote_hex) &&
	    !git_commit_lookup(&c, ctx->repo, &remote_id)) {
		git_revwalk_hide(walk, &remote_id);
		if (!git_merge_base(&base, ctx->repo, &local, &remote_id))
			have_base = 1;
	}
	git_commit_free(c);
	git_error_clear();
	glob = kopt_xstrfmt("refs/remotes/%s/*", remote);
	if (git_revwalk_hide_glob(walk, glob) < 0)
		git_error_clear();
	free(glob);
	n = kopt_gate_walk(ctx->repo, walk, have_base ? &base : NULL, &local,
			   kopt_print_gate_commit, stderr);
	if (n < 0)
		ret = -1;
	else
		*violations += n;
	git_revwalk_free(walk);
	return ret;
}

static int run_pre_push(struct kopt_ctx *ctx, const char *remote)
{
	char line[4096];
	int violations = 0;

	while (fgets(line, sizeof(line), stdin))
		if (push_line(ctx, remote, line, &violations))
			return 128;
	if (violations) {
		fprintf(stderr, "error: push refused by the kopt gate (%d "
			"problem%s); each line above names the commit, the "
			"rule and the fix\n", violations,
			violations == 1 ? "" : "s");
		return 1;
	}
	return 0;
}

int cmd_hook(int argc, const char **argv, struct kopt_ctx *ctx)
{
	static const struct kopt_option options[] = { OPT_END() };
	const char *name;

	argc = kopt_parse_options(argc, argv, options, hook_usage,
				  KOPT_PARSE_STOP_AT_NON_OPTION);
	if (argc < 1)
		kopt_usage_error(hook_usage, options, "which hook?");
	name = argv[0];
	if (!strcmp(name, "pre-commit")) {
		if (argc != 1)
			kopt_usage_error(hook_usage, options, "pre-commit takes "
					 "no arguments");
		return run_commit_hook(ctx, NULL);
	}
	if (!strcmp(name, "commit-msg")) {
		if (argc != 2)
			kopt_usage_error(hook_usage, options, "commit-msg takes "
					 "the message file");
		return run_commit_hook(ctx, argv[1]);
	}
	if (!strcmp(name, "pre-push")) {
		if (argc < 2 || argc > 3)
			kopt_usage_error(hook_usage, options, "pre-push takes "
					 "the remote and its URL");
		return run_pre_push(ctx, argv[1]);
	}
	kopt_usage_error(hook_usage, options, "unknown hook '%s'", name);
}
