/*
 * Agents as commands, and the worktrees they run in: see agent.h.
 */
#include <cjson/cJSON.h>
#include <dirent.h>
#include <sys/stat.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent.h"
#include "config.h"
#include "error.h"
#include "http.h"
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

static int http_settings(struct kopt_agent *a, git_config *cfg,
			 const char *name)
{
	char *key = NULL, *v = NULL;
	int ret = 0;

	a->kind = KOPT_AGENT_HTTP;
	if (strcmp(a->api, "openai") && strcmp(a->api, "anthropic"))
		return kopt_error("'kopt.agent.%s.api' is '%s', not openai or "
				  "anthropic", name, a->api);
	key = kopt_xstrfmt("kopt.agent.%s.model", name);
	ret = config_string(&a->model, cfg, key);
	if (ret == KOPT_ENOTFOUND || (!ret && !*a->model)) {
		ret = kopt_error("agent '%s' has no model: set 'git config %s "
				 "<model>'", name, key);
		goto done;
	}
	if (ret)
		goto done;
	free(key);
	key = kopt_xstrfmt("kopt.agent.%s.url", name);
	ret = config_string(&a->url, cfg, key);
	if (ret == KOPT_ENOTFOUND)
		a->url = kopt_strdup(strcmp(a->api, "openai") ?
				     "https://api.anthropic.com" :
				     "https://api.openai.com/v1");
	else if (ret)
		goto done;
	while (*a->url && a->url[strlen(a->url) - 1] == '/')
		a->url[strlen(a->url) - 1] = '\0';
	free(key);
	key = kopt_xstrfmt("kopt.agent.%s.keyenv", name);
	ret = config_string(&a->key_env, cfg, key);
	if (ret == KOPT_ENOTFOUND)
		a->key_env = kopt_strdup(strcmp(a->api, "openai") ?
					 "ANTHROPIC_API_KEY" : "OPENAI_API_KEY");
	else if (ret)
		goto done;
	free(key);
	key = kopt_xstrfmt("kopt.agent.%s.maxtokens", name);
	a->max_tokens = 16000;
	ret = config_string(&v, cfg, key);
	if (ret == KOPT_ENOTFOUND) {
		ret = 0;
	} else if (!ret) {
		char *end;
		long n = strtol(v, &end, 10);
		if (end == v || *end || n < 1 || n > 1000000)
			ret = kopt_error("'%s' is '%s', not a number of tokens",
					 key, v);
		else
			a->max_tokens = (int)n;
	}
	ret = ret == KOPT_ENOTFOUND ? 0 : ret;
done:
	free(key);
	free(v);
	return ret ? -1 : 0;
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
	key = kopt_xstrfmt("kopt.agent.%s.api", name);
	ret = config_string(&out->api, cfg, key);
	if (!ret) {
		ret = http_settings(out, cfg, name);
		if (ret)
			goto done;
		goto timeout;
	}
	if (ret != KOPT_ENOTFOUND)
		goto done;
	free(key);
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
timeout:
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
	free(a->api);
	free(a->url);
	free(a->model);
	free(a->key_env);
	memset(a, 0, sizeof(*a));
}

void kopt_agent_argv(struct kopt_strvec *out, const struct kopt_agent *a,
		     const struct kopt_agent_task *t)
{
	if (a->kind == KOPT_AGENT_HTTP) {
		kopt_strvec_pushf(out, "POST %s%s (%s, model %s, key from $%s)",
				  a->url, strcmp(a->api, "openai") ?
				  "/v1/messages" : "/chat/completions", a->api,
				  a->model, a->key_env);
		return;
	}
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

static int http_run(struct kopt_agent_answer *out, const struct kopt_agent *a,
		    const struct kopt_agent_task *t);

static void write_pid(pid_t pid, void *data)
{
	char text[32];
	int n = snprintf(text, sizeof(text), "%d\n", (int)pid);

	kopt_write_file_atomic(data, text, (size_t)n, 0644);
}

int kopt_agent_stop_stray(const char *pid_file)
{
	struct kopt_buf text = KOPT_BUF_INIT;
	int pid = 0, ret = 0;

	if (!kopt_buf_read_file(&text, pid_file))
		pid = atoi(text.buf);
	if (pid > 1 && !kill(-pid, SIGKILL))
		ret = 1;
	unlink(pid_file);
	kopt_buf_release(&text);
	return ret;
}

int kopt_agent_run(struct kopt_agent_answer *out, const struct kopt_agent *a,
		   const struct kopt_agent_task *t)
{
	struct kopt_child c = KOPT_CHILD_INIT;
	char *prompt_file = NULL;
	int ret = 0;

	if (a->kind == KOPT_AGENT_HTTP)
		return http_run(out, a, t);

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
	if (t->pid_file) {
		c.started = write_pid;
		c.started_data = (void *)t->pid_file;
	}
	/* an agent never outlives the process waiting for it */
	c.flags |= KOPT_CHILD_CAPTURE_OUT | KOPT_CHILD_CAPTURE_ERR |
		   KOPT_CHILD_NO_STDIN | KOPT_CHILD_DIE_WITH_PARENT;
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
	if (t->pid_file)
		unlink(t->pid_file);
	if (prompt_file)
		unlink(prompt_file);
	free(prompt_file);
	kopt_child_release(&c);
	return ret;
}

/* ---- the HTTP backend ---- */

#define CONTEXT_MAX (512 * 1024)

static void add_files(struct kopt_buf *out, const char *top, const char *rel,
		      size_t *budget, struct kopt_strvec *skipped)
{
	char *path = kopt_xstrfmt("%s/%s", top, rel);
	DIR *d = opendir(path);
	struct dirent *de;
	struct kopt_strvec names = KOPT_STRVEC_INIT;
	size_t i;

	while (d && (de = readdir(d)))
		if (de->d_name[0] != '.')
			kopt_strvec_push(&names, de->d_name);
	if (d)
		closedir(d);
	kopt_strvec_sort(&names);
	for (i = 0; i < names.nr; i++) {
		char *r = kopt_xstrfmt("%s/%s", rel, names.v[i]);
		char *full = kopt_xstrfmt("%s/%s", top, r);
		struct stat st;
		struct kopt_buf data = KOPT_BUF_INIT;
		if (lstat(full, &st)) {
			/* gone: nothing to show */
		} else if (S_ISDIR(st.st_mode)) {
			add_files(out, top, r, budget, skipped);
		} else if (S_ISREG(st.st_mode) && !kopt_buf_read_file(&data, full)
			   && !memchr(data.buf, '\0', data.len) &&
			   data.len <= *budget) {
			kopt_buf_addf(out, "\n=== %s ===\n%s", r, data.buf);
			if (data.len && data.buf[data.len - 1] != '\n')
				kopt_buf_addch(out, '\n');
			*budget -= data.len;
		} else if (S_ISREG(st.st_mode)) {
			kopt_strvec_push(skipped, r);
		}
		kopt_buf_release(&data);
		free(r);
		free(full);
	}
	kopt_strvec_clear(&names);
	free(path);
}

static const char http_system[] =
	"You are the kernel designer of a GPU-kernel optimization cycle.  "
	"You cannot run commands or open files: the files of the new version "
	"are given below, as they are now (a copy of the version it starts "
	"from).  Answer with exactly two things, in this order:\n"
	"1. One unified diff (as `git diff` writes it: diff --git a/<path> "
	"b/<path>, paths from the top of the repository) in a ```diff fenced "
	"block, that changes only files under the new version's folder.\n"
	"2. The implementation summary, in the shape the task gives.\n";

static void user_message(struct kopt_buf *out, const struct kopt_agent_task *t)
{
	struct kopt_strvec skipped = KOPT_STRVEC_INIT;
	size_t budget = CONTEXT_MAX, i;

	kopt_buf_addstr(out, t->prompt);
	kopt_buf_addf(out, "\nThe files of %s/:\n", t->version_dir);
	add_files(out, t->dir, t->version_dir, &budget, &skipped);
	for (i = 0; i < skipped.nr; i++)
		kopt_buf_addf(out, "\n=== %s === (binary or too large: not "
			      "shown)\n", skipped.v[i]);
	kopt_strvec_clear(&skipped);
}

static char *request_body(const struct kopt_agent *a,
			  const struct kopt_agent_task *t)
{
	cJSON *o = cJSON_CreateObject(), *msgs, *m;
	struct kopt_buf user = KOPT_BUF_INIT;
	char *body;

	user_message(&user, t);
	cJSON_AddStringToObject(o, "model", a->model);
	cJSON_AddNumberToObject(o, "max_tokens", a->max_tokens);
	if (!strcmp(a->api, "anthropic"))
		cJSON_AddStringToObject(o, "system", http_system);
	msgs = cJSON_AddArrayToObject(o, "messages");
	if (strcmp(a->api, "anthropic")) {
		m = cJSON_CreateObject();
		cJSON_AddStringToObject(m, "role", "system");
		cJSON_AddStringToObject(m, "content", http_system);
		cJSON_AddItemToArray(msgs, m);
		cJSON_AddNumberToObject(o, "temperature", 0);
	}
	m = cJSON_CreateObject();
	cJSON_AddStringToObject(m, "role", "user");
	cJSON_AddStringToObject(m, "content", user.buf);
	cJSON_AddItemToArray(msgs, m);
	body = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	kopt_buf_release(&user);
	return body;
}

/* The text of an answer: choices[0].message.content, or content[].text. */
static int answer_text(struct kopt_buf *out, const struct kopt_agent *a,
		       const struct kopt_buf *body, struct kopt_buf *why)
{
	cJSON *o = cJSON_ParseWithLength(body->buf, body->len), *x;
	int ret = -1;

	if (!o) {
		kopt_buf_addstr(why, "the model API's answer is not JSON");
		return -1;
	}
	if (!strcmp(a->api, "anthropic")) {
		cJSON *content = cJSON_GetObjectItemCaseSensitive(o, "content");
		cJSON_ArrayForEach(x, content) {
			cJSON *type = cJSON_GetObjectItemCaseSensitive(x, "type");
			cJSON *text = cJSON_GetObjectItemCaseSensitive(x, "text");
			if (cJSON_IsString(type) &&
			    !strcmp(type->valuestring, "text") &&
			    cJSON_IsString(text)) {
				kopt_buf_addstr(out, text->valuestring);
				ret = 0;
			}
		}
		x = cJSON_GetObjectItemCaseSensitive(o, "stop_reason");
		if (!ret && cJSON_IsString(x) &&
		    !strcmp(x->valuestring, "max_tokens")) {
			kopt_buf_addstr(why, "the model's answer was cut at "
					"its token limit (max_tokens)");
			ret = -1;
		}
	} else {
		cJSON *choices = cJSON_GetObjectItemCaseSensitive(o, "choices");
		cJSON *c0 = cJSON_GetArrayItem(choices, 0);
		cJSON *msg = cJSON_GetObjectItemCaseSensitive(c0, "message");
		cJSON *content = cJSON_GetObjectItemCaseSensitive(msg, "content");
		cJSON *fin = cJSON_GetObjectItemCaseSensitive(c0,
							      "finish_reason");
		if (cJSON_IsString(content)) {
			kopt_buf_addstr(out, content->valuestring);
			ret = 0;
		}
		if (!ret && cJSON_IsString(fin) &&
		    !strcmp(fin->valuestring, "length")) {
			kopt_buf_addstr(why, "the model's answer was cut at "
					"its token limit (finish_reason length)");
			ret = -1;
		}
	}
	if (ret && !why->len)
		kopt_buf_addstr(why, "the model API's answer has no text");
	cJSON_Delete(o);
	return ret;
}

static int http_run(struct kopt_agent_answer *out, const struct kopt_agent *a,
		    const struct kopt_agent_task *t)
{
	struct kopt_http h = KOPT_HTTP_INIT;
	struct kopt_http_request req = KOPT_HTTP_REQUEST_INIT;
	struct kopt_http_response res = KOPT_HTTP_RESPONSE_INIT;
	struct kopt_buf url = KOPT_BUF_INIT, text = KOPT_BUF_INIT;
	struct kopt_buf diff = KOPT_BUF_INIT;
	const char *key = getenv(a->key_env);
	int anthropic = !strcmp(a->api, "anthropic");
	char *body = NULL;
	int ret = 0;

	if (anthropic && (!key || !*key)) {
		kopt_buf_addf(&out->why, "agent '%s' needs its key in $%s",
			      a->name, a->key_env);
		return KOPT_EGENERIC;
	}
	kopt_buf_addf(&url, "%s%s", a->url, anthropic ? "/v1/messages" :
		      "/chat/completions");
	if (key && *key)
		kopt_http_set_token(&h, anthropic ? "x-api-key: " :
				    "Authorization: Bearer ", key, a->key_env);
	h.timeout_ms = (long)(t->timeout_s > 0 ? t->timeout_s :
			      a->timeout_s) * 1000;
	req.method = "POST";
	req.url = url.buf;
	if (anthropic)
		kopt_strvec_push(&req.headers, "anthropic-version: 2023-06-01");
	body = request_body(a, t);
	req.body = body;
	ret = kopt_http_send(&h, &req, &res);
	out->wall_s = res.wall_s;
	kopt_buf_addbuf(&out->out, &res.body);
	kopt_http_mask(&h, &out->out);
	if (ret) {
		kopt_buf_addf(&out->why, "agent '%s': the model API at %s "
			      "answered %s", a->name, url.buf,
			      res.status ? "with an error" : "nothing");
		if (res.status)
			kopt_buf_addf(&out->why, " (HTTP %ld)", res.status);
		ret = KOPT_EGENERIC;
		goto done;
	}
	if (answer_text(&text, a, &res.body, &out->why)) {
		ret = KOPT_EGENERIC;
		goto done;
	}
	kopt_http_mask(&h, &text);
	if (kopt_agent_split_diff(text.buf, &diff, &out->text)) {
		kopt_buf_addstr(&out->why, "the model's answer has no diff");
		ret = KOPT_EGENERIC;
		goto done;
	}
	if (kopt_agent_apply_diff(t->dir, t->version_dir, diff.buf, diff.len,
				  &out->why))
		ret = KOPT_EGENERIC;
done:
	free(body);
	kopt_buf_release(&url);
	kopt_buf_release(&text);
	kopt_buf_release(&diff);
	kopt_http_response_release(&res);
	kopt_http_request_release(&req);
	kopt_http_release(&h);
	return ret;
}

static int fence_open(const char *l, size_t n)
{
	return n >= 3 && !strncmp(l, "```", 3);
}

int kopt_agent_split_diff(const char *answer, struct kopt_buf *diff,
			  struct kopt_buf *rest)
{
	const char *p = answer;
	const char *start = NULL, *end = NULL, *cut = NULL, *resume = NULL;
	int infence = 0;

	/* a ```diff block */
	while (*p && !start) {
		const char *e = strchr(p, '\n');
		size_t n = e ? (size_t)(e - p) : strlen(p);
		if (fence_open(p, n) && (!strncmp(p + 3, "diff", 4) ||
					 !strncmp(p + 3, "patch", 5))) {
			cut = p;
			start = e ? e + 1 : p + n;
		}
		p = e ? e + 1 : p + n;
	}
	if (start) {
		for (p = start; *p;) {
			const char *e = strchr(p, '\n');
			size_t n = e ? (size_t)(e - p) : strlen(p);
			if (fence_open(p, n)) {
				end = p;
				resume = e ? e + 1 : p + n;
				break;
			}
			p = e ? e + 1 : p + n;
		}
		if (!end)
			end = resume = p;
	} else {
		for (p = answer; *p;) {
			const char *e = strchr(p, '\n');
			size_t n = e ? (size_t)(e - p) : strlen(p);
			if (fence_open(p, n))
				infence = !infence;
			if (!start && !infence &&
			    (!strncmp(p, "diff --git ", 11) ||
			     !strncmp(p, "--- ", 4))) {
				cut = start = p;
			} else if (start && !strncmp(p, "## ", 3)) {
				end = resume = p;
				break;
			}
			p = e ? e + 1 : p + n;
		}
		if (start && !end)
			end = resume = p;
	}
	if (!start || end == start)
		return KOPT_ENOTFOUND;
	kopt_buf_add(diff, start, (size_t)(end - start));
	kopt_buf_add(rest, answer, (size_t)(cut - answer));
	kopt_buf_addstr(rest, resume);
	return 0;
}

static int inside_dir(const char *path, const char *dir)
{
	size_t k = strlen(dir);

	return path && !strncmp(path, dir, k) && path[k] == '/' &&
	       !strstr(path, "/../") && !strstr(path, "/./");
}

int kopt_agent_apply_diff(const char *dir, const char *version_dir,
			  const char *patch, size_t len, struct kopt_buf *why)
{
	git_repository *repo = NULL;
	git_diff *diff = NULL;
	git_apply_options opts = GIT_APPLY_OPTIONS_INIT;
	size_t i, n;
	int ret = 0;

	if (git_diff_from_buffer(&diff, patch, len) < 0) {
		kopt_buf_addf(why, "the model's diff does not parse: %s",
			      kopt_git_error("unknown error"));
		return -1;
	}
	n = git_diff_num_deltas(diff);
	if (!n) {
		kopt_buf_addstr(why, "the model's diff changes nothing");
		ret = -1;
	}
	for (i = 0; !ret && i < n; i++) {
		const git_diff_delta *d = git_diff_get_delta(diff, i);
		const char *o = d->old_file.path, *w = d->new_file.path;
		if ((d->status != GIT_DELTA_ADDED && !inside_dir(o, version_dir)) ||
		    (d->status != GIT_DELTA_DELETED && !inside_dir(w, version_dir))) {
			kopt_buf_addf(why, "the model's diff changes '%s', outside "
				      "the version's folder '%s'",
				      inside_dir(o, version_dir) ? w : o,
				      version_dir);
			ret = -1;
		}
	}
	if (!ret && git_repository_open(&repo, dir) < 0) {
		kopt_buf_addf(why, "cannot open '%s': %s", dir,
			      kopt_git_error("unknown error"));
		ret = -1;
	}
	if (!ret && git_apply(repo, diff, GIT_APPLY_LOCATION_WORKDIR,
			      &opts) < 0) {
		kopt_buf_addf(why, "the model's diff does not apply: %s",
			      kopt_git_error("unknown error"));
		ret = -1;
	}
	git_diff_free(diff);
	git_repository_free(repo);
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
