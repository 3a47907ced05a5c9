/*
 * Agents as commands, and the worktrees they run in: see agent.h.
 */
#include <cjson/cJSON.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent.h"
#include "config.h"
#include "error.h"
#include "lockfile.h"
#include "runner.h"
#include "banned.h"

static int config_string(char **out, git_config *cfg, const char *key)
{
	git_buf v = GIT_BUF_INIT;
	int ret = git_config_get_string_buf(&v, cfg, key);

	if (ret == GIT_ENOTFOUND) {
		git_error_clear();
		return KOPT_ENOTFOUND;
	}
	if (ret < 0)
		return kopt_error("cannot read '%s' from git config: %s", key,
				  kopt_git_error("unknown error"));
	*out = kopt_strdup(v.ptr);
	git_buf_dispose(&v);
	return 0;
}

int kopt_agent_lookup(struct kopt_agent *out, git_repository *repo,
		      const char *name)
{
	git_config *cfg = NULL;
	char *def = NULL, *key = NULL, *timeout = NULL;
	int ret = 0;

	memset(out, 0, sizeof(*out));
	if (git_repository_config_snapshot(&cfg, repo) < 0)
		return kopt_error("cannot read git config: %s",
				  kopt_git_error("unknown error"));
	if (!name || !*name) {
		ret = config_string(&def, cfg, "kopt.agent");
		if (ret == KOPT_ENOTFOUND)
			ret = 0;
		if (ret)
			goto done;
		name = def && *def ? def : KOPT_AGENT_DEFAULT;
	}
	if (!kopt_valid_name(name)) {
		ret = kopt_error("'%s' is not an agent name ([a-z0-9][a-z0-9_.-]*)",
				 name);
		goto done;
	}
	out->name = kopt_strdup(name);
	out->timeout_s = KOPT_AGENT_DEFAULT_TIMEOUT_S;
	key = kopt_xstrfmt("kopt.agent.%s.command", name);
	ret = config_string(&out->command, cfg, key);
	if (!ret && !*out->command) {
		ret = kopt_error("'%s' is empty", key);
		goto done;
	}
	if (!ret) {
		out->kind = KOPT_AGENT_COMMAND;
	} else if (ret == KOPT_ENOTFOUND && !strcmp(name, KOPT_AGENT_DEFAULT)) {
		out->kind = KOPT_AGENT_CLAUDE;
		out->program = kopt_strdup("claude");
		ret = 0;
	} else if (ret == KOPT_ENOTFOUND) {
		ret = kopt_error("no agent '%s': set 'git config %s <command>'",
				 name, key);
		ret = KOPT_ENOTFOUND;
		goto done;
	} else {
		goto done;
	}
	free(key);
	key = kopt_xstrfmt("kopt.agent.%s.timeout", name);
	ret = config_string(&timeout, cfg, key);
	if (ret == KOPT_ENOTFOUND) {
		ret = 0;
	} else if (!ret) {
		char *end;
		long v = strtol(timeout, &end, 10);
		if (end == timeout || *end || v <= 0 || v > 7 * 24 * 3600)
			ret = kopt_error("'%s' is '%s', not a number of seconds",
					 key, timeout);
		else
			out->timeout_s = (int)v;
	}
done:
	if (ret)
		kopt_agent_release(out);
	free(def);
	free(key);
	free(timeout);
	git_config_free(cfg);
	return ret;
}

void kopt_agent_release(struct kopt_agent *a)
{
	free(a->name);
	free(a->command);
	free(a->program);
	memset(a, 0, sizeof(*a));
}

void kopt_agent_argv(struct kopt_strvec *out, const struct kopt_agent *a,
		     const struct kopt_agent_task *t)
{
	if (a->kind == KOPT_AGENT_COMMAND) {
		kopt_strvec_push(out, a->command);
		return;
	}
	kopt_strvec_push(out, a->program ? a->program : "claude");
	kopt_strvec_push(out, "-p");
	kopt_strvec_push(out, t->prompt);
	kopt_strvec_push(out, "--output-format");
	kopt_strvec_push(out, "json");
	kopt_strvec_push(out, "--allowedTools");
	kopt_strvec_push(out, KOPT_AGENT_CLAUDE_TOOLS);
	kopt_strvec_push(out, "--permission-mode");
	kopt_strvec_push(out, "acceptEdits");
}

/*
 * Claude Code's JSON answer: {"type": "result", "result": "...",
 * "is_error": false, ...}.  1 when `raw` is one (the text or the error in
 * `ans`), 0 when it is plain text.
 */
static int claude_json(struct kopt_agent_answer *ans, const struct kopt_buf *raw)
{
	cJSON *o = cJSON_ParseWithLength(raw->buf, raw->len);
	cJSON *r, *err;
	int ret = 0;

	if (!o || !cJSON_IsObject(o))
		goto done;
	r = cJSON_GetObjectItemCaseSensitive(o, "result");
	err = cJSON_GetObjectItemCaseSensitive(o, "is_error");
	if (!cJSON_IsString(r))
		goto done;
	ret = 1;
	kopt_buf_addstr(&ans->text, r->valuestring);
	if (cJSON_IsTrue(err))
		kopt_buf_addf(&ans->why, "the agent reported an error: %.200s",
			      r->valuestring);
done:
	cJSON_Delete(o);
	return ret;
}

int kopt_agent_run(struct kopt_agent_answer *out, const struct kopt_agent *a,
		   const struct kopt_agent_task *t)
{
	struct kopt_child c = KOPT_CHILD_INIT;
	char *prompt_file = NULL;
	int ret = 0;

	if (a->kind == KOPT_AGENT_COMMAND) {
		/* outside the worktree, where the agent's changes are judged */
		const char *tmp = getenv("TMPDIR");
		int fd;
		size_t len = strlen(t->prompt);
		prompt_file = kopt_xstrfmt("%s/kopt-prompt-XXXXXX",
					   tmp && *tmp ? tmp : "/tmp");
		fd = mkstemp(prompt_file);
		if (fd < 0 || write(fd, t->prompt, len) != (ssize_t)len) {
			if (fd >= 0) {
				close(fd);
				unlink(prompt_file);
			}
			kopt_buf_addf(&out->why, "cannot write the prompt: %s",
				      strerror(errno));
			free(prompt_file);
			return KOPT_EGENERIC;
		}
		close(fd);
		c.flags |= KOPT_CHILD_SHELL;
		kopt_strvec_pushf(&c.env, "KOPT_AGENT_PROMPT=%s", t->prompt);
		kopt_strvec_pushf(&c.env, "KOPT_AGENT_PROMPT_FILE=%s",
				  prompt_file);
		kopt_strvec_pushf(&c.env, "KOPT_AGENT_ROLE=%s", t->role);
		kopt_strvec_pushf(&c.env, "KOPT_KERNEL=%s", t->kernel);
		kopt_strvec_pushf(&c.env, "KOPT_VERSION=%s", t->version);
		kopt_strvec_pushf(&c.env, "KOPT_FROM=%s", t->from ? t->from : "");
		kopt_strvec_pushf(&c.env, "KOPT_VERSION_DIR=%s",
				  t->version_dir);
	}
	kopt_agent_argv(&c.args, a, t);
	c.dir = t->dir;
	c.flags |= KOPT_CHILD_CAPTURE_OUT | KOPT_CHILD_CAPTURE_ERR |
		   KOPT_CHILD_NO_STDIN;
	c.timeout_ms = (t->timeout_s > 0 ? t->timeout_s : a->timeout_s) * 1000;
	if (kopt_child_run(&c)) {
		kopt_buf_addf(&out->why, "cannot run agent '%s'", a->name);
		ret = KOPT_EGENERIC;
		goto done;
	}
	out->wall_s = c.wall_s;
	out->timed_out = c.timed_out;
	kopt_buf_addbuf(&out->out, &c.out);
	kopt_buf_addbuf(&out->err, &c.err);
	if (c.timed_out || c.signal || c.exit_code) {
		struct kopt_buf how = KOPT_BUF_INIT;
		kopt_child_describe(&c, &how);
		if (c.timed_out)
			kopt_buf_addf(&out->why, "agent '%s' ran past its time "
				      "limit (%d s) and was stopped", a->name,
				      c.timeout_ms / 1000);
		else if (c.exit_code == 127 && a->kind == KOPT_AGENT_CLAUDE)
			kopt_buf_addf(&out->why, "cannot run '%s' (Claude Code "
				      "is not installed?)", a->program);
		else
			kopt_buf_addf(&out->why, "agent '%s' failed: %s", a->name,
				      how.buf);
		kopt_buf_release(&how);
		ret = KOPT_EGENERIC;
		goto done;
	}
	if (!claude_json(out, &c.out))
		kopt_buf_addbuf(&out->text, &c.out);
	if (out->why.len)
		ret = KOPT_EGENERIC;
done:
	if (prompt_file)
		unlink(prompt_file);
	free(prompt_file);
	kopt_child_release(&c);
	return ret;
}

void kopt_agent_answer_release(struct kopt_agent_answer *ans)
{
	kopt_buf_release(&ans->text);
	kopt_buf_release(&ans->out);
	kopt_buf_release(&ans->err);
	kopt_buf_release(&ans->why);
}

/* ---- worktrees ---- */

static int git_in(const char *dir, const char *const *args,
		  struct kopt_buf *out)
{
	struct kopt_child c = KOPT_CHILD_INIT;
	int ret = 0;

	kopt_strvec_push(&c.args, "git");
	kopt_strvec_pushv(&c.args, (const char **)args);
	c.dir = dir;
	c.flags = KOPT_CHILD_CAPTURE_OUT | KOPT_CHILD_CAPTURE_ERR |
		  KOPT_CHILD_NO_STDIN;
	if (kopt_child_run(&c))
		ret = -1;
	else if (c.exit_code) {
		kopt_buf_trim(&c.err);
		ret = kopt_error("git %s failed: %s", args[0], c.err.len ?
				 c.err.buf : "no message");
	} else if (out) {
		kopt_buf_addbuf(out, &c.out);
	}
	kopt_child_release(&c);
	return ret;
}

int kopt_worktree_add(const char *top, const char *path, const char *commit)
{
	const char *args[] = { "worktree", "add", "-q", "--detach", path,
			       commit, NULL };

	if (kopt_mkdir_parents(path))
		return -1;
	return git_in(top, args, NULL);
}

int kopt_worktree_remove(const char *top, const char *path)
{
	const char *args[] = { "worktree", "remove", "--force", "--force",
			       path, NULL };
	const char *prune[] = { "worktree", "prune", NULL };

	if (access(path, F_OK))
		return git_in(top, prune, NULL);
	return git_in(top, args, NULL);
}

int kopt_worktree_changes(struct kopt_strvec *out, const char *dir)
{
	const char *args[] = { "status", "--porcelain=v1", "-z",
			       "--untracked-files=all", "--no-renames", NULL };
	struct kopt_buf st = KOPT_BUF_INIT;
	size_t i = 0;
	int ret = git_in(dir, args, &st);

	while (!ret && i + 3 < st.len) {
		const char *path = st.buf + i + 3;
		size_t n = strlen(path);
		kopt_strvec_push(out, path);
		i += 3 + n + 1;
	}
	kopt_buf_release(&st);
	return ret;
}
