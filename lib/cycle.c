/*
 * The unattended cycle: see cycle.h.
 */
#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "agent.h"
#include "cycle.h"
#include "designer.h"
#include "error.h"
#include "knowledge.h"
#include "lockfile.h"
#include "paths.h"
#include "repo.h"
#include "runner.h"
#include "scaffold.h"
#include "trailers.h"
#include "version.h"
#include "banned.h"

#define MAX_PARALLEL 16

static double wall_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void say(struct kopt_cycle *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void say(struct kopt_cycle *c, const char *fmt, ...)
{
	struct kopt_buf sb = KOPT_BUF_INIT;
	va_list ap;

	if (!c->say)
		return;
	va_start(ap, fmt);
	kopt_buf_vaddf(&sb, fmt, ap);
	va_end(ap);
	c->say(c->say_data, sb.buf);
	kopt_buf_release(&sb);
}

void kopt_cycle_init(struct kopt_cycle *c)
{
	memset(c, 0, sizeof(*c));
	c->o.parallel = 1;
	c->lock_fd = -1;
}

void kopt_cycle_release(struct kopt_cycle *c)
{
	free(c->dir);
	free(c->branch);
	c->dir = c->branch = NULL;
}

char *kopt_cycle_dir(git_repository *repo, const char *kernel)
{
	return kopt_xstrfmt("%skopt/cycle/%s", git_repository_commondir(repo),
			    kernel);
}

double kopt_cycle_parse_duration(const char *s)
{
	double total = 0;
	const char *p = s;

	if (!s || !*s)
		return -1;
	while (*p) {
		char *end;
		double v = strtod(p, &end);
		if (end == p || v < 0 || v != v)
			return -1;
		switch (*end) {
		case 'h': v *= 3600; end++; break;
		case 'm': v *= 60; end++; break;
		case 's': end++; break;
		case '\0': break;
		default: return -1;
		}
		total += v;
		p = end;
	}
	return total;
}

/* ---- records: "key=value" items ---- */

struct record {
	struct kopt_strvec kv;  /* "key=value" */
};

#define RECORD_INIT { KOPT_STRVEC_INIT }

static const char *rec_get(const struct record *r, const char *key)
{
	size_t i, k = strlen(key);

	for (i = r->kv.nr; i-- > 0;)
		if (!strncmp(r->kv.v[i], key, k) && r->kv.v[i][k] == '=')
			return r->kv.v[i] + k + 1;
	return NULL;
}

static double rec_num(const struct record *r, const char *key)
{
	const char *v = rec_get(r, key);

	return v && *v ? strtod(v, NULL) : 0;
}

/* A value on one line: tabs and newlines become spaces. */
static void rec_set(struct record *r, const char *key, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void rec_set(struct record *r, const char *key, const char *fmt, ...)
{
	struct kopt_buf sb = KOPT_BUF_INIT;
	size_t i, k = strlen(key);
	va_list ap;
	char *p;

	kopt_buf_addf(&sb, "%s=", key);
	va_start(ap, fmt);
	kopt_buf_vaddf(&sb, fmt, ap);
	va_end(ap);
	for (p = sb.buf; *p; p++)
		if (*p == '\t' || *p == '\n' || *p == '\r')
			*p = ' ';
	for (i = 0; i < r->kv.nr; i++)
		if (!strncmp(r->kv.v[i], key, k) && r->kv.v[i][k] == '=') {
			free((char *)r->kv.v[i]);
			r->kv.v[i] = kopt_buf_detach(&sb, NULL);
			return;
		}
	kopt_strvec_push(&r->kv, sb.buf);
	kopt_buf_release(&sb);
}

static void rec_release(struct record *r)
{
	kopt_strvec_clear(&r->kv);
}

/* Items separated by `sep` ('\n' for state files, '\t' for the journal). */
static void rec_parse(struct record *r, const char *text, size_t len, int sep)
{
	const char *p = text, *end = text + len;

	while (p < end) {
		const char *e = memchr(p, sep, (size_t)(end - p));
		size_t n = e ? (size_t)(e - p) : (size_t)(end - p);
		if (n && memchr(p, '=', n))
			kopt_strvec_pushf(&r->kv, "%.*s", (int)n, p);
		p = e ? e + 1 : end;
	}
}

static void rec_format(struct kopt_buf *out, const struct record *r, int sep)
{
	size_t i;

	for (i = 0; i < r->kv.nr; i++) {
		kopt_buf_addstr(out, r->kv.v[i]);
		kopt_buf_addch(out, sep);
	}
}

/* ---- the journal ---- */

struct journal {
	struct record *ev;      /* "event=<name>" first */
	size_t nr, alloc;
};

static void journal_release(struct journal *j)
{
	size_t i;

	for (i = 0; i < j->nr; i++)
		rec_release(&j->ev[i]);
	free(j->ev);
	memset(j, 0, sizeof(*j));
}

static int journal_read(struct journal *j, const char *dir)
{
	struct kopt_buf text = KOPT_BUF_INIT;
	char *path = kopt_xstrfmt("%s/journal", dir);
	const char *p, *end;
	int ret = 0;

	if ((ret = kopt_read_file(&text, path, NULL)))
		goto done;
	p = text.buf;
	end = text.buf + text.len;
	while (p < end) {
		const char *e = memchr(p, '\n', (size_t)(end - p));
		size_t n = e ? (size_t)(e - p) : (size_t)(end - p);
		struct record r = RECORD_INIT;
		/* a line cut short by a crash has no newline: dropped */
		if (e) {
			rec_parse(&r, p, n, '\t');
			if (rec_get(&r, "event")) {
				KOPT_ALLOC_GROW(j->ev, j->nr + 1, j->alloc);
				j->ev[j->nr++] = r;
			} else {
				rec_release(&r);
			}
		}
		p = e ? e + 1 : end;
	}
done:
	kopt_buf_release(&text);
	free(path);
	return ret;
}

static const struct record *journal_last(const struct journal *j,
					 const char *event)
{
	size_t i;

	for (i = j->nr; i-- > 0;)
		if (!strcmp(rec_get(&j->ev[i], "event"), event))
			return &j->ev[i];
	return NULL;
}

/*
 * The journal of the cycle in `dir` and its last start; KOPT_ENOTFOUND
 * (nothing printed) when no cycle was started there.
 */
static int journal_read_run(struct journal *j, const char *dir,
			    const struct record **start)
{
	int ret = journal_read(j, dir);

	if (ret)
		return ret;
	*start = journal_last(j, "start");
	return *start ? 0 : KOPT_ENOTFOUND;
}

static int journal_add(struct kopt_cycle *c, struct record *r)
{
	struct kopt_buf line = KOPT_BUF_INIT;
	char *path = kopt_xstrfmt("%s/journal", c->dir);
	int fd, ret = 0;

	rec_set(r, "time", "%.3f", wall_now());
	rec_format(&line, r, '\t');
	line.buf[line.len - 1] = '\n';
	fd = open(path, O_WRONLY | O_APPEND | O_CREAT, 0644);
	if (fd < 0 || write(fd, line.buf, line.len) != (ssize_t)line.len ||
	    fsync(fd))
		ret = kopt_error("cannot write '%s': %s", path, strerror(errno));
	if (fd >= 0)
		close(fd);
	kopt_buf_release(&line);
	free(path);
	return ret;
}

static int journal_event(struct kopt_cycle *c, const char *event,
			 const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* `fmt` gives "key=value" items separated by tabs. */
static int journal_event(struct kopt_cycle *c, const char *event,
			 const char *fmt, ...)
{
	struct record r = RECORD_INIT;
	struct kopt_buf items = KOPT_BUF_INIT;
	va_list ap;
	int ret;

	kopt_strvec_pushf(&r.kv, "event=%s", event);
	if (fmt) {
		va_start(ap, fmt);
		kopt_buf_vaddf(&items, fmt, ap);
		va_end(ap);
		rec_parse(&r, items.buf, items.len, '\t');
	}
	ret = journal_add(c, &r);
	rec_release(&r);
	kopt_buf_release(&items);
	return ret;
}

/* ---- candidates ---- */

enum { ST_NONE, ST_DESIGNING, ST_VERIFYING, ST_LEARNING, ST_VERIFIED,
       ST_FAILED };

struct cand {
	char version[32];
	char *title;
	char *task;             /* its task file, absolute */
	char *worktree;
	pid_t pid;
	struct record st;       /* the state file */
};

static char *state_path(const char *dir, const char *version)
{
	return kopt_xstrfmt("%s/%s.state", dir, version);
}

static int state_write(const char *dir, struct cand *k)
{
	struct kopt_buf text = KOPT_BUF_INIT;
	char *path = state_path(dir, k->version);
	int ret;

	rec_format(&text, &k->st, '\n');
	ret = kopt_write_file_atomic(path, text.buf, text.len, 0644);
	kopt_buf_release(&text);
	free(path);
	return ret;
}

static int state_read(struct record *out, const char *dir,
		      const char *version)
{
	struct kopt_buf text = KOPT_BUF_INIT;
	char *path = state_path(dir, version);
	int ret = 0;

	if (kopt_buf_read_file(&text, path))
		ret = KOPT_ENOTFOUND;
	else
		rec_parse(out, text.buf, text.len, '\n');
	kopt_buf_release(&text);
	free(path);
	return ret;
}

static void cand_release(struct cand *k)
{
	free(k->title);
	free(k->task);
	free(k->worktree);
	rec_release(&k->st);
}

/* Run a step of this program, or git, in `dir`. */
static int run_cmd(const char *dir, const char *const *argv,
		   struct kopt_buf *out, struct kopt_buf *err, double *wall)
{
	struct kopt_child ch = KOPT_CHILD_INIT;
	int ret;

	kopt_strvec_pushv(&ch.args, (const char **)argv);
	ch.dir = dir;
	ch.flags = KOPT_CHILD_CAPTURE_OUT | KOPT_CHILD_CAPTURE_ERR |
		   KOPT_CHILD_NO_STDIN;
	if (kopt_child_run(&ch)) {
		ret = -1;
	} else {
		ret = ch.signal ? 128 + ch.signal : ch.exit_code;
		if (out)
			kopt_buf_addbuf(out, &ch.out);
		if (err)
			kopt_buf_addbuf(err, &ch.err);
		if (wall)
			*wall += ch.wall_s;
	}
	kopt_child_release(&ch);
	return ret;
}

/* Lines of `in` that say what is wrong ("error:", "fatal:", "hint:"...). */
static void messages_of(struct kopt_buf *out, const struct kopt_buf *in)
{
	kopt_buf_addbuf(out, in);
	kopt_buf_trim(out);
}

static void expand_capture(struct kopt_buf *out, const char *pattern,
			   const char *kernel, const char *version,
			   const char *trial)
{
	const char *p;

	for (p = pattern; *p; p++) {
		if (!strncmp(p, "{version}", 9)) {
			kopt_buf_addstr(out, version);
			p += 8;
		} else if (!strncmp(p, "{trial}", 7)) {
			kopt_buf_addstr(out, trial);
			p += 6;
		} else if (!strncmp(p, "{kernel}", 8)) {
			kopt_buf_addstr(out, kernel);
			p += 7;
		} else {
			kopt_buf_addch(out, *p);
		}
	}
}

/* profile/verify's argv: every trial of the settings, replayed or not. */
static void measure_argv(struct kopt_cycle *c, struct kopt_strvec *argv,
			 const char *step, const char *version)
{
	size_t i;

	kopt_strvec_push(argv, c->exe);
	kopt_strvec_push(argv, step);
	kopt_strvec_push(argv, c->kernel->name);
	kopt_strvec_push(argv, version);
	/* designers verify at once: each waits for the GPU in turn */
	if (!c->o.replay) {
		char wait[16];
		snprintf(wait, sizeof(wait), "%d", KOPT_GPU_WAIT_MAX_S);
		kopt_strvec_push(argv, "--gpu-wait");
		kopt_strvec_push(argv, wait);
	}
	for (i = 0; i < c->cfg->trials_nr; i++) {
		kopt_strvec_push(argv, "--trial");
		kopt_strvec_push(argv, c->cfg->trials[i].name);
	}
	for (i = 0; c->o.replay && i < c->cfg->trials_nr; i++) {
		struct kopt_buf f = KOPT_BUF_INIT;
		expand_capture(&f, c->o.replay, c->kernel->name, version,
			       c->cfg->trials[i].name);
		kopt_strvec_push(argv, "--replay");
		kopt_strvec_push(argv, f.buf);
		kopt_buf_release(&f);
	}
}

static const char *target_trial(const struct kopt_cycle *c)
{
	return c->kernel->targets_nr ? c->kernel->targets[0].trial : NULL;
}

/*
 * Read verify's --json answer into the state: the verdict, per trial
 * "parent_us>child_us", and the score the kept one is chosen by.
 */
static int read_verdict(struct kopt_cycle *c, struct cand *k,
			const struct kopt_buf *json)
{
	cJSON *o = cJSON_ParseWithLength(json->buf, json->len);
	cJSON *v, *trials, *t, *res;
	struct kopt_buf list = KOPT_BUF_INIT;
	const char *tt = target_trial(c);
	double logsum = 0, target_us = NAN;
	int n = 0, ret = 0;

	v = cJSON_GetObjectItemCaseSensitive(o, "verdict");
	trials = cJSON_GetObjectItemCaseSensitive(o, "trials");
	if (!cJSON_IsString(v) || !cJSON_IsArray(trials)) {
		ret = -1;
		goto done;
	}
	rec_set(&k->st, "verdict", "%s", v->valuestring);
	cJSON_ArrayForEach(t, trials) {
		cJSON *name = cJSON_GetObjectItemCaseSensitive(t, "trial");
		cJSON *pu = cJSON_GetObjectItemCaseSensitive(t, "parent_us");
		cJSON *cu = cJSON_GetObjectItemCaseSensitive(t, "child_us");
		if (!cJSON_IsString(name) || !cJSON_IsNumber(pu) ||
		    !cJSON_IsNumber(cu) || pu->valuedouble <= 0 ||
		    cu->valuedouble <= 0)
			continue;
		kopt_buf_addf(&list, "%s%s:%.2f>%.2f", list.len ? "," : "",
			      name->valuestring, pu->valuedouble,
			      cu->valuedouble);
		logsum += log(cu->valuedouble / pu->valuedouble);
		n++;
		if (tt && !strcmp(tt, name->valuestring))
			target_us = cu->valuedouble;
	}
	rec_set(&k->st, "trials", "%s", list.buf);
	if (!isnan(target_us))
		rec_set(&k->st, "score", "%.6g", target_us);
	else if (n)
		rec_set(&k->st, "score", "%.6g", exp(logsum / n));
	res = cJSON_GetObjectItemCaseSensitive(o, "results");
	if (res && strstr(json->buf, "\"replayed\":\ttrue"))
		rec_set(&k->st, "replayed", "1");
done:
	cJSON_Delete(o);
	kopt_buf_release(&list);
	return ret;
}

static void set_state(struct kopt_cycle *c, struct cand *k, int st,
		      const char *why)
{
	static const char *const names[] = {
		"", "designing", "verifying", "learning", "verified", "failed",
	};

	rec_set(&k->st, "state", "%s", names[st]);
	if (why)
		rec_set(&k->st, "why", "%s", why);
	if (st == ST_VERIFIED || st == ST_FAILED)
		rec_set(&k->st, "finished", "%.3f", wall_now());
	state_write(c->dir, k);
}

static void learn_prompt(struct kopt_buf *out, struct kopt_cycle *c,
			 const struct cand *k, const struct kopt_buf *refusal)
{
	kopt_buf_addf(out,
		"The LEARN gate refused the results of %s %s:\n\n%s\n\n"
		"Write the knowledge entry it asks for: run the 'git kopt learn "
		"new' command it names, fill in every section of the detail "
		"file per the detail-file template (when to apply, mechanism, "
		"affected metrics, implementation, the measured evidence, "
		"generalization, pitfalls, interactions), complete its row in "
		"the catalog, and run 'git kopt learn lint'.  Change only the "
		"knowledge base and the catalogs; do not commit.\n"
		"Answer with: ## Knowledge Entry Written: <path>\n",
		c->kernel->name, k->version, refusal->buf);
}

/* Paths a LEARN agent may change: the knowledge base and the catalogs. */
static int learn_path_ok(struct kopt_cycle *c, const char *p)
{
	const char *kb = c->cfg->knowledge ? c->cfg->knowledge :
			 KOPT_DEFAULT_KNOWLEDGE;
	const char *cat = c->cfg->catalog ? c->cfg->catalog :
			  KOPT_DEFAULT_CATALOG;
	size_t i, k = strlen(kb);

	if (!strncmp(p, kb, k) && p[k] == '/')
		return 1;
	if (!strcmp(p, cat))
		return 1;
	for (i = 0; i < c->cfg->languages_nr; i++) {
		char *lc = kopt_language_catalog_path(&c->cfg->languages[i]);
		int same = lc && !strcmp(lc, p);
		free(lc);
		if (same)
			return 1;
	}
	return 0;
}

static void save_log(struct kopt_cycle *c, const struct cand *k,
		     const char *what, const struct kopt_buf *data)
{
	char *path = kopt_xstrfmt("%s/%s.%s", c->dir, k->version, what);

	kopt_write_file_atomic(path, data->buf, data->len, 0644);
	free(path);
}

/*
 * Commit the verified results through git; when the gate asks for
 * knowledge, the LEARN agent writes it and the commit is tried again.
 */
static int commit_results(struct kopt_cycle *c, struct cand *k,
			  const struct kopt_agent *learn)
{
	struct kopt_buf rpath = KOPT_BUF_INIT, dpath = KOPT_BUF_INIT;
	struct kopt_buf msg = KOPT_BUF_INIT, err = KOPT_BUF_INIT;
	struct kopt_buf why = KOPT_BUF_INIT, prompt = KOPT_BUF_INIT;
	struct kopt_trailers tr = KOPT_TRAILERS_INIT;
	struct kopt_agent_answer ans = KOPT_AGENT_ANSWER_INIT;
	struct kopt_strvec changed = KOPT_STRVEC_INIT;
	const char *verdict = rec_get(&k->st, "verdict");
	const char *add[] = { "git", "add", "--", NULL, NULL, NULL };
	const char *cm[] = { "git", "commit", "-q", "-m", NULL, NULL };
	const char *lessons[] = { "git", "diff", "--name-only", "--diff-filter=A",
				  "HEAD~1", "HEAD", NULL };
	struct kopt_agent_task t;
	struct kopt_buf out = KOPT_BUF_INIT;
	char *lpid;
	size_t i;
	int rc, ret = 0;

	kopt_path_results(&rpath, c->kernel->name, k->version);
	kopt_path_devlog(&dpath, c->kernel->name);
	kopt_buf_addf(&msg, "Verify %s %s: %s\n\nMeasured by the cycle%s; "
		      "trials (parent us > this version us): %s\n",
		      c->kernel->name, k->version, verdict,
		      rec_get(&k->st, "replayed") ? " (replayed captures)" : "",
		      rec_get(&k->st, "trials") ? rec_get(&k->st, "trials") :
		      "none");
	kopt_trailers_add_step(&tr, c->kernel->name, k->version,
			       KOPT_STEP_VERIFY);
	if (verdict && strcmp(verdict, "none"))
		kopt_trailers_add(&tr, KOPT_TRAILER_VERDICT, verdict);
	kopt_message_add_trailers(&msg, &tr);
	add[3] = rpath.buf;
	add[4] = dpath.buf;
	cm[4] = msg.buf;
	if (run_cmd(k->worktree, add, NULL, &err, NULL)) {
		messages_of(&why, &err);
		ret = -1;
		goto done;
	}
	rc = run_cmd(k->worktree, cm, NULL, &err, NULL);
	if (rc && learn) {
		double spent = 0;
		set_state(c, k, ST_LEARNING, NULL);
		kopt_buf_trim(&err);
		learn_prompt(&prompt, c, k, &err);
		memset(&t, 0, sizeof(t));
		t.role = "learn";
		t.prompt = prompt.buf;
		t.dir = k->worktree;
		t.kernel = c->kernel->name;
		t.version = k->version;
		t.from = rec_get(&k->st, "from");
		t.version_dir = rec_get(&k->st, "dir");
		t.timeout_s = (int)rec_num(&k->st, "timeout");
		lpid = kopt_xstrfmt("%s/%s.agent.pid", c->dir, k->version);
		t.pid_file = lpid;
		ret = kopt_agent_run(&ans, learn, &t);
		free(lpid);
		spent = ans.wall_s;
		save_log(c, k, "learn.prompt", &prompt);
		save_log(c, k, "learn.out", &ans.out);
		save_log(c, k, "learn.err", &ans.err);
		rec_set(&k->st, "learn_s", "%.3f", spent);
		rec_set(&k->st, "learn_at", "%.3f", wall_now() - spent);
		if (ret) {
			kopt_buf_addf(&why, "LEARN: %s", ans.why.buf);
			goto done;
		}
		if (kopt_worktree_changes(&changed, k->worktree)) {
			kopt_buf_addstr(&why, "LEARN: cannot list the changes");
			ret = -1;
			goto done;
		}
		for (i = 0; i < changed.nr; i++) {
			if (!strcmp(changed.v[i], rpath.buf) ||
			    !strcmp(changed.v[i], dpath.buf) ||
			    learn_path_ok(c, changed.v[i]))
				continue;
			kopt_buf_addf(&why, "LEARN: the agent changed '%s', "
				      "outside the knowledge base",
				      changed.v[i]);
			ret = -1;
			goto done;
		}
		{
			const char *kb = c->cfg->knowledge ? c->cfg->knowledge :
					 KOPT_DEFAULT_KNOWLEDGE;
			const char *addall[] = { "git", "add", "-A", "--", kb,
						 ".", NULL };
			/* only the paths checked above can be there */
			if (run_cmd(k->worktree, addall, NULL, NULL, NULL)) {
				kopt_buf_addstr(&why, "LEARN: cannot stage");
				ret = -1;
				goto done;
			}
		}
		kopt_buf_reset(&err);
		rc = run_cmd(k->worktree, cm, NULL, &err, NULL);
	}
	if (rc) {
		kopt_buf_trim(&err);
		kopt_buf_addf(&why, "the LEARN gate refused the results: %s",
			      err.buf);
		ret = -1;
		goto done;
	}
	if (!run_cmd(k->worktree, lessons, &out, NULL, NULL)) {
		struct kopt_strvec l = KOPT_STRVEC_INIT;
		const char *p = out.buf;
		while (*p) {
			const char *e = strchr(p, '\n');
			size_t n = e ? (size_t)(e - p) : strlen(p);
			struct kopt_buf one = KOPT_BUF_INIT;
			kopt_buf_add(&one, p, n);
			if (n && learn_path_ok(c, one.buf) &&
			    kopt_ends_with(one.buf, ".md") &&
			    strncmp(one.buf, ".claude/", 8))
				kopt_strvec_push(&l, one.buf);
			kopt_buf_release(&one);
			p = e ? e + 1 : p + n;
		}
		kopt_buf_reset(&out);
		for (i = 0; i < l.nr; i++)
			kopt_buf_addf(&out, "%s%s", i ? " " : "", l.v[i]);
		if (out.len)
			rec_set(&k->st, "lesson", "%s", out.buf);
		kopt_strvec_clear(&l);
	}
done:
	if (why.len)
		rec_set(&k->st, "why", "%s", why.buf);
	kopt_buf_release(&rpath);
	kopt_buf_release(&dpath);
	kopt_buf_release(&msg);
	kopt_buf_release(&err);
	kopt_buf_release(&why);
	kopt_buf_release(&prompt);
	kopt_buf_release(&out);
	kopt_trailers_release(&tr);
	kopt_agent_answer_release(&ans);
	kopt_strvec_clear(&changed);
	return ret;
}

/* One candidate, from scaffold to committed results: a process of its own. */
static int candidate(struct kopt_cycle *c, struct cand *k, const char *from,
		     const char *base, const struct kopt_agent *agent,
		     const struct kopt_agent *learn, int timeout_s)
{
	struct kopt_designer d;
	struct kopt_buf dir = KOPT_BUF_INIT, devlog = KOPT_BUF_INIT;
	struct kopt_buf out = KOPT_BUF_INIT, err = KOPT_BUF_INIT;
	struct kopt_layout layout;
	struct kopt_strvec argv = KOPT_STRVEC_INIT;
	char *pid_file = kopt_xstrfmt("%s/%s.agent.pid", c->dir, k->version);
	double verify_s = 0;
	int rc;

	if (kopt_layout_init(&layout, c->kernel)) {
		free(pid_file);
		return -1;
	}
	kopt_layout_dir(&dir, &layout, k->version);
	kopt_layout_release(&layout);
	kopt_path_devlog(&devlog, c->kernel->name);
	rec_set(&k->st, "dir", "%s", dir.buf);
	rec_set(&k->st, "timeout", "%d", timeout_s);
	set_state(c, k, ST_DESIGNING, NULL);

	kopt_designer_init(&d);
	d.top = c->top;
	d.exe = c->exe;
	d.kernel = c->kernel->name;
	d.from = from;
	d.to = k->version;
	d.base = base;
	d.task_file = k->task;
	d.title = k->title;
	d.worktree = k->worktree;
	d.version_dir = dir.buf;
	d.devlog = devlog.buf;
	d.agent = agent;
	d.timeout_s = timeout_s;
	d.log_dir = c->dir;
	d.have_worktree = 1;
	d.pid_file = pid_file;
	rc = kopt_designer_run(&d);
	rec_set(&k->st, "agent_s", "%.3f", d.agent_s);
	rec_set(&k->st, "agent_at", "%.3f", wall_now() - d.agent_s);
	if (d.commit.len)
		rec_set(&k->st, "commit", "%s", d.commit.buf);
	if (rc) {
		set_state(c, k, ST_FAILED, d.why.len ? d.why.buf :
			  "the scaffold could not be made");
		rec_set(&k->st, "outcome", d.timed_out ? "timed out" :
			"refused");
		state_write(c->dir, k);
		goto done;
	}

	set_state(c, k, ST_VERIFYING, NULL);
	measure_argv(c, &argv, "verify", k->version);
	kopt_strvec_push(&argv, "--json");
	rc = run_cmd(k->worktree, argv.v, &out, &err, &verify_s);
	rec_set(&k->st, "verify_s", "%.3f", verify_s);
	rec_set(&k->st, "verify_at", "%.3f", wall_now() - verify_s);
	if (rc || read_verdict(c, k, &out)) {
		struct kopt_buf why = KOPT_BUF_INIT;
		kopt_buf_trim(&err);
		kopt_buf_addf(&why, "verify failed: %s", err.len ? err.buf :
			      "no verdict");
		set_state(c, k, ST_FAILED, why.buf);
		rec_set(&k->st, "outcome", "verify failed");
		state_write(c->dir, k);
		kopt_buf_release(&why);
		goto done;
	}
	if (!strcmp(rec_get(&k->st, "verdict"), "none")) {
		set_state(c, k, ST_FAILED, "no verdict: the parent has no "
			  "results for these trials");
		goto done;
	}
	if (commit_results(c, k, learn)) {
		rec_set(&k->st, "outcome", "learn refused");
		set_state(c, k, ST_FAILED, NULL);
		goto done;
	}
	set_state(c, k, ST_VERIFIED, NULL);
done:
	free(pid_file);
	kopt_designer_release(&d);
	kopt_buf_release(&dir);
	kopt_buf_release(&devlog);
	kopt_buf_release(&out);
	kopt_buf_release(&err);
	kopt_strvec_clear(&argv);
	return 0;
}

/* ---- a round ---- */

/* The newest version of the kernel at HEAD: the current best. */
static int current_version(struct kopt_cycle *c, char **out)
{
	struct kopt_layout layout;
	struct kopt_strvec v = KOPT_STRVEC_INIT;
	git_tree *head = NULL;
	int ret;

	if (kopt_layout_init(&layout, c->kernel))
		return -1;
	ret = kopt_repo_rev_tree(&head, c->repo, "HEAD");
	if (!ret)
		ret = kopt_layout_versions(&v, c->repo, head, &layout);
	if (!ret && !v.nr)
		ret = kopt_error("%s has no version at HEAD; commit its base "
				 "version v0 first", c->kernel->name);
	if (!ret)
		*out = kopt_strdup(v.v[v.nr - 1]);
	git_tree_free(head);
	kopt_strvec_clear(&v);
	kopt_layout_release(&layout);
	return ret;
}

static int has_results(struct kopt_cycle *c, const char *version)
{
	struct kopt_buf rel = KOPT_BUF_INIT;
	char *path;
	int ok;

	kopt_path_results(&rel, c->kernel->name, version);
	path = kopt_xstrfmt("%s%s", c->top, rel.buf);
	ok = !access(path, R_OK);
	free(path);
	kopt_buf_release(&rel);
	return ok;
}

/* The next free version number: after every branch and every folder. */
static long next_number(struct kopt_cycle *c, const char *current)
{
	struct kopt_strvec b = KOPT_STRVEC_INIT;
	long n = kopt_version_number(current);
	size_t i;

	if (!kopt_repo_branch_list(c->repo, c->kernel->name, &b))
		for (i = 0; i < b.nr; i++)
			if (kopt_version_number(b.v[i]) > n)
				n = kopt_version_number(b.v[i]);
	kopt_strvec_clear(&b);
	return n + 1;
}

/*
 * The proposals of a task: the items under "Optimizations to Apply", and
 * a task per proposal with only it, for version `to`.
 */
/* `needle` in the `n` bytes at `l`, or NULL. */
static const char *find_in(const char *l, size_t n, const char *needle)
{
	size_t k = strlen(needle), i;

	for (i = 0; i + k <= n; i++)
		if (!memcmp(l + i, needle, k))
			return l + i;
	return NULL;
}

static void proposals(struct kopt_strvec *items, const struct kopt_buf *task)
{
	size_t off = 0;
	int in = 0;

	while (off < task->len) {
		const char *l = task->buf + off;
		const char *e = memchr(l, '\n', task->len - off);
		size_t n = e ? (size_t)(e - l) : task->len - off;
		const char *dot = n > 3 ? memchr(l, '.', n) : NULL;

		if (n > 3 && l[0] == '#')
			in = find_in(l, n, "Optimizations to Apply") != NULL;
		else if (in && n > 3 && l[0] >= '1' && l[0] <= '9' && dot &&
			 (size_t)(dot - l) + 2 <= n && dot[1] == ' ')
			kopt_strvec_pushf(items, "%.*s",
					  (int)(n - (size_t)(dot + 2 - l)),
					  dot + 2);
		off += n + 1;
	}
}

static void one_proposal_task(struct kopt_buf *out,
			      const struct kopt_buf *task, const char *item,
			      const char *to)
{
	size_t off = 0;
	int in = 0, done = 0;

	while (off < task->len) {
		const char *l = task->buf + off;
		const char *e = memchr(l, '\n', task->len - off);
		size_t n = e ? (size_t)(e - l) : task->len - off;
		const char *arrow = n > 3 ? find_in(l, n, " -> ") : NULL;

		off += n + 1;
		if (n > 3 && l[0] == '#') {
			in = find_in(l, n, "Optimizations to Apply") != NULL;
			if (arrow && find_in(l, n, "Optimization Task:")) {
				kopt_buf_add(out, l, (size_t)(arrow + 4 - l));
				kopt_buf_addf(out, "%s\n", to);
				continue;
			}
		} else if (in && n > 3 && l[0] >= '1' && l[0] <= '9' &&
			   memchr(l, '.', n)) {
			if (!done)
				kopt_buf_addf(out, "1. %s\n", item);
			done = 1;
			continue;
		}
		kopt_buf_add(out, l, n);
		kopt_buf_addch(out, '\n');
	}
}

/* "Tensor-core MMA (O2, est. impact 1.5-3x): ..." -> "Tensor-core MMA" */
static char *proposal_title(const char *item)
{
	const char *e = strstr(item, " (");
	const char *colon = strchr(item, ':');

	if (!e || (colon && colon < e))
		e = colon;
	return kopt_strndup(item, e ? (size_t)(e - item) : strlen(item));
}

/*
 * The proposals already tried from `from`: a refuted proposal is not
 * tried again from the same version (its lesson is on its branch).
 */
static void tried_from(struct kopt_cycle *c, const char *from,
		       struct kopt_strvec *out)
{
	struct journal j = { 0 };
	size_t i;

	if (journal_read(&j, c->dir))
		return;
	for (i = 0; i < j.nr; i++) {
		const struct record *e = &j.ev[i];
		const char *f = rec_get(e, "from"), *t = rec_get(e, "title");
		if (!strcmp(rec_get(e, "event"), "candidate") && f && t &&
		    !strcmp(f, from) && !kopt_strvec_has(out, t))
			kopt_strvec_push(out, t);
	}
	journal_release(&j);
}

static void drop_tried(struct kopt_strvec *items,
		       const struct kopt_strvec *tried)
{
	struct kopt_strvec keep = KOPT_STRVEC_INIT;
	size_t i;

	for (i = 0; i < items->nr; i++) {
		char *t = proposal_title(items->v[i]);
		if (!kopt_strvec_has(tried, t))
			kopt_strvec_push(&keep, items->v[i]);
		free(t);
	}
	kopt_strvec_clear(items);
	*items = keep;
}

static double budget_left(const struct kopt_cycle *c)
{
	if (c->o.budget_s <= 0)
		return INFINITY;
	return c->o.budget_s - c->elapsed_before - (wall_now() - c->started);
}

/* Step of this program in the main work tree; its output to the log. */
static int step(struct kopt_cycle *c, const char *name, const char *const *argv,
		struct kopt_buf *out, double *wall)
{
	struct kopt_buf o = KOPT_BUF_INIT, e = KOPT_BUF_INIT;
	char *log = kopt_xstrfmt("%s/%s.log", c->dir, name);
	int rc = run_cmd(c->top, argv, &o, &e, wall);

	kopt_buf_addbuf(&o, &e);
	kopt_write_file_atomic(log, o.buf, o.len, 0644);
	if (out)
		kopt_buf_addbuf(out, &o);
	kopt_buf_release(&o);
	kopt_buf_release(&e);
	free(log);
	return rc;
}

static int profile_base(struct kopt_cycle *c, const char *version)
{
	struct kopt_strvec argv = KOPT_STRVEC_INIT;
	struct kopt_buf out = KOPT_BUF_INIT, rel = KOPT_BUF_INIT;
	struct kopt_buf dl = KOPT_BUF_INIT, msg = KOPT_BUF_INIT;
	struct kopt_trailers tr = KOPT_TRAILERS_INIT;
	double profile_s = 0;
	int rc;

	say(c, "profile %s %s (it has no results yet)", c->kernel->name,
	    version);
	measure_argv(c, &argv, "profile", version);
	rc = step(c, "profile", argv.v, &out, &profile_s);
	if (!rc) {
		const char *add[] = { "git", "add", "--", NULL, NULL, NULL };
		const char *cm[] = { "git", "commit", "-q", "-m", NULL, NULL };
		kopt_path_results(&rel, c->kernel->name, version);
		kopt_path_devlog(&dl, c->kernel->name);
		add[3] = rel.buf;
		add[4] = dl.buf;
		kopt_buf_addf(&msg, "Profile %s %s\n", c->kernel->name, version);
		kopt_trailers_add(&tr, KOPT_TRAILER_KERNEL, c->kernel->name);
		kopt_trailers_add(&tr, KOPT_TRAILER_VERSION, version);
		kopt_message_add_trailers(&msg, &tr);
		cm[4] = msg.buf;
		rc = step(c, "profile-commit", add, NULL, NULL);
		if (!rc)
			rc = step(c, "profile-commit", cm, NULL, NULL);
	}
	if (rc)
		kopt_error("cannot profile %s %s; see %s/profile.log",
			   c->kernel->name, version, c->dir);
	else
		journal_event(c, "profiled", "version=%s\tprofile_s=%.3f\t"
			      "profile_at=%.3f%s", version, profile_s,
			      wall_now() - profile_s,
			      c->o.replay ? "\treplayed=1" : "");
	kopt_strvec_clear(&argv);
	kopt_buf_release(&out);
	kopt_buf_release(&rel);
	kopt_buf_release(&dl);
	kopt_buf_release(&msg);
	kopt_trailers_release(&tr);
	return rc ? -1 : 0;
}

static const char *cand_state(const struct cand *k)
{
	const char *s = rec_get(&k->st, "state");
	return s ? s : "";
}

/* Merge the best improvement, record the rest. */
static int keep_best(struct kopt_cycle *c, int round, const char *from,
		     struct cand *ks, size_t nr, char **kept)
{
	struct cand *best = NULL;
	struct kopt_buf msg = KOPT_BUF_INIT, rest = KOPT_BUF_INIT;
	struct kopt_buf branch = KOPT_BUF_INIT, err = KOPT_BUF_INIT;
	struct kopt_trailers tr = KOPT_TRAILERS_INIT;
	const char *tt = target_trial(c);
	size_t i;
	int ret = 0;

	for (i = 0; i < nr; i++) {
		const char *v = rec_get(&ks[i].st, "verdict");
		if (strcmp(cand_state(&ks[i]), "verified") || !v ||
		    strcmp(v, "improvement"))
			continue;
		if (!best || rec_num(&ks[i].st, "score") <
		    rec_num(&best->st, "score"))
			best = &ks[i];
	}
	for (i = 0; i < nr; i++) {
		struct cand *k = &ks[i];
		struct kopt_buf why = KOPT_BUF_INIT;
		const char *v = rec_get(&k->st, "verdict");
		const char *lesson = rec_get(&k->st, "lesson");
		if (k == best)
			continue;
		if (!strcmp(cand_state(k), "verified")) {
			kopt_buf_addf(&why, "%s", v);
			if (best && !strcmp(v, "improvement"))
				kopt_buf_addf(&why, ", slower than %s%s%s",
					      best->version, tt ? " at " : "",
					      tt ? tt : "");
			if (lesson)
				kopt_buf_addf(&why, "; lesson: %s", lesson);
		} else {
			kopt_buf_addf(&why, "%s: %s",
				      rec_get(&k->st, "outcome") ?
				      rec_get(&k->st, "outcome") : "failed",
				      rec_get(&k->st, "why") ?
				      rec_get(&k->st, "why") : "unknown");
		}
		kopt_buf_addf(&rest, "- %s (kopt/%s/%s): %s\n", k->version,
			      c->kernel->name, k->version, why.buf);
		journal_event(c, "abandoned", "round=%d\tversion=%s\twhy=%s",
			      round, k->version, why.buf);
		say(c, "abandoned %s: %s", k->version, why.buf);
		kopt_buf_release(&why);
	}
	if (!best) {
		journal_event(c, "kept", "round=%d\tversion=", round);
		say(c, "round %d kept nothing: no candidate improved on %s",
		    round, from);
		goto done;
	}
	kopt_repo_branch_name(&branch, c->kernel->name, best->version);
	kopt_buf_addf(&msg, "Keep %s %s: %s\n\n", c->kernel->name,
		      best->version, best->title ? best->title : "");
	kopt_buf_addf(&msg, "The best improvement on %s of round %d%s%s "
		      "(parent us > this version us: %s).\n", from, round,
		      tt ? " at " : "", tt ? tt : "",
		      rec_get(&best->st, "trials"));
	if (rest.len)
		kopt_buf_addf(&msg, "\nNot kept:\n%s", rest.buf);
	kopt_trailers_add(&tr, KOPT_TRAILER_KERNEL, c->kernel->name);
	kopt_trailers_add(&tr, KOPT_TRAILER_VERSION, best->version);
	kopt_trailers_add(&tr, KOPT_TRAILER_VERDICT, "improvement");
	kopt_message_add_trailers(&msg, &tr);
	{
		const char *merge[] = { "git", "merge", "--no-ff", "-q", "-m",
					msg.buf, branch.buf, NULL };
		const char *abort_[] = { "git", "merge", "--abort", NULL };
		if (run_cmd(c->top, merge, NULL, &err, NULL)) {
			run_cmd(c->top, abort_, NULL, NULL, NULL);
			kopt_buf_trim(&err);
			journal_event(c, "kept", "round=%d\tversion=\twhy=merge "
				      "of %s failed: %s", round, best->version,
				      err.buf);
			ret = kopt_error("cannot merge '%s': %s", branch.buf,
					 err.buf);
			goto done;
		}
	}
	*kept = kopt_strdup(best->version);
	journal_event(c, "kept", "round=%d\tversion=%s\twhy=the best "
		      "improvement%s%s: %s", round, best->version,
		      tt ? " at " : "", tt ? tt : "",
		      rec_get(&best->st, "trials"));
	say(c, "kept %s: merged %s into %s", best->version, branch.buf,
	    c->branch);
done:
	kopt_buf_release(&msg);
	kopt_buf_release(&rest);
	kopt_buf_release(&branch);
	kopt_buf_release(&err);
	kopt_trailers_release(&tr);
	return ret;
}

static int has_path(const struct kopt_strvec *paths, const char *p)
{
	size_t i;

	for (i = 0; i < paths->nr; i++)
		if (!strcmp(paths->v[i], p))
			return 1;
	return 0;
}

/* The catalog that holds the rows of `language`'s knowledge (owned). */
static char *catalog_of(struct kopt_cycle *c, const char *language)
{
	const struct kopt_language *l;

	if (!language)
		return kopt_strdup(c->cfg->catalog ? c->cfg->catalog :
				   KOPT_DEFAULT_CATALOG);
	l = kopt_config_language(c->cfg, language);
	return l ? kopt_language_catalog_path(l) : NULL;
}

/*
 * Bring one detail file of an abandoned candidate's lesson from its
 * branch into the base branch's work tree, with its catalog row added by
 * `learn new` (the next ID of the base branch's catalog, the cells read
 * from the file); `paths` receives what is to be committed.  1 when the
 * base branch has the file already.
 */
static int bring_one(struct kopt_cycle *c, const char *branch,
		     const char *path, struct kopt_strvec *paths,
		     struct kopt_buf *why)
{
	const char *kb = c->cfg->knowledge ? c->cfg->knowledge :
			 KOPT_DEFAULT_KNOWLEDGE;
	struct kopt_buf text = KOPT_BUF_INIT, err = KOPT_BUF_INIT;
	enum kopt_kind kind;
	char *language = NULL, *name = NULL, *catalog = NULL, *spec;
	char *abs = kopt_xstrfmt("%s%s", c->top, path);
	const char *show[] = { "git", "show", NULL, NULL };
	const char *ln[] = { c->exe, "learn", "new", NULL, NULL, NULL, NULL,
			     NULL };
	int ret = 0;

	spec = kopt_xstrfmt("%s:%s", branch, path);
	show[2] = spec;
	if (!access(abs, F_OK)) {
		ret = 1;
		goto done;
	}
	if (kopt_knowledge_locate(kb, path, &kind, &language, &name) ||
	    !(catalog = catalog_of(c, language))) {
		kopt_buf_addf(why, "'%s' is no detail file of the knowledge "
			      "base", path);
		ret = -1;
		goto done;
	}
	if (run_cmd(c->top, show, &text, &err, NULL)) {
		kopt_buf_trim(&err);
		kopt_buf_addf(why, "cannot read '%s': %s", spec, err.buf);
		ret = -1;
		goto done;
	}
	{
		struct kopt_error_catch caught = KOPT_ERROR_CATCH_INIT;
		kopt_error_catch(&caught);
		ret = kopt_mkdir_parents(abs) ||
		      kopt_write_file_atomic(abs, text.buf, text.len, 0644);
		kopt_error_uncatch(&caught);
		if (ret)
			kopt_buf_addbuf(why, &caught.text);
		kopt_error_catch_release(&caught);
		if (ret) {
			ret = -1;
			goto done;
		}
	}
	kopt_strvec_push(paths, path);
	ln[3] = kopt_kind_name(kind);
	ln[4] = name;
	if (language) {
		ln[5] = "--language";
		ln[6] = language;
	}
	kopt_buf_reset(&err);
	if (run_cmd(c->top, ln, NULL, &err, NULL)) {
		kopt_buf_trim(&err);
		kopt_buf_addf(why, "cannot add its catalog row: %s", err.buf);
		ret = -1;
		goto done;
	}
	if (!has_path(paths, catalog))
		kopt_strvec_push(paths, catalog);
done:
	kopt_buf_release(&text);
	kopt_buf_release(&err);
	free(spec);
	free(abs);
	free(language);
	free(name);
	free(catalog);
	return ret;
}

/* Put back what bring_one() changed in the base branch's work tree. */
static void put_back(struct kopt_cycle *c, const struct kopt_strvec *paths)
{
	size_t i;

	for (i = 0; i < paths->nr; i++) {
		const char *reset[] = { "git", "reset", "-q", "--",
					paths->v[i], NULL };
		const char *co[] = { "git", "checkout", "-q", "HEAD", "--",
				     paths->v[i], NULL };
		run_cmd(c->top, reset, NULL, NULL, NULL);
		if (run_cmd(c->top, co, NULL, NULL, NULL)) {
			/* not in HEAD: a file this step created */
			char *abs = kopt_xstrfmt("%s%s", c->top, paths->v[i]);
			unlink(abs);
			free(abs);
		}
	}
}

/*
 * The lessons of the round's abandoned candidates onto the base branch:
 * per candidate whose results commit added knowledge (its "lesson"), the
 * detail files and their catalog rows in a commit of their own with its
 * trailers, judged by the gate like any other; the candidate's branch
 * keeps its results.  The knowledge base of the base branch then holds
 * every lesson, not only those of kept versions.  Idempotent: a file the
 * base branch has already is not brought twice (a resumed round).  A
 * lesson that cannot be brought is said and journaled, and the cycle
 * goes on.
 */
static void bring_lessons(struct kopt_cycle *c, int round, struct cand *ks,
			  size_t nr, const char *kept)
{
	size_t i;

	for (i = 0; i < nr; i++) {
		struct cand *k = &ks[i];
		const char *lesson = rec_get(&k->st, "lesson");
		struct kopt_strvec files = KOPT_STRVEC_INIT;
		struct kopt_strvec paths = KOPT_STRVEC_INIT;
		struct kopt_buf branch = KOPT_BUF_INIT, why = KOPT_BUF_INIT;
		struct kopt_buf msg = KOPT_BUF_INIT, err = KOPT_BUF_INIT;
		struct kopt_trailers tr = KOPT_TRAILERS_INIT;
		size_t j;
		int rc = 0;

		if (!lesson || (kept && !strcmp(kept, k->version)))
			continue;
		{
			const char *p = lesson, *sp;
			for (; *p; p = *sp ? sp + 1 : sp) {
				sp = strchrnul(p, ' ');
				char *one = kopt_strndup(p, (size_t)(sp - p));
				if (*one)
					kopt_strvec_push(&files, one);
				free(one);
			}
		}
		kopt_repo_branch_name(&branch, c->kernel->name, k->version);
		for (j = 0; !rc && j < files.nr; j++)
			rc = bring_one(c, branch.buf, files.v[j], &paths, &why)
			     < 0;
		if (!rc && paths.nr) {
			const char *add[] = { "git", "add", "--", NULL };
			struct kopt_strvec argv = KOPT_STRVEC_INIT;
			kopt_strvec_pushv(&argv, add);
			for (j = 0; j < paths.nr; j++)
				kopt_strvec_push(&argv, paths.v[j]);
			kopt_buf_addf(&msg, "Learn from %s: %s\n\nThe lesson "
				      "of %s %s, not kept in round %d, on %s "
				      "so that its knowledge base holds it; "
				      "the results stay on %s.\n",
				      branch.buf, k->title ? k->title :
				      k->version, c->kernel->name, k->version,
				      round, c->branch, branch.buf);
			kopt_trailers_add_step(&tr, c->kernel->name,
					       k->version, KOPT_STEP_LEARN);
			kopt_message_add_trailers(&msg, &tr);
			rc = run_cmd(c->top, argv.v, NULL, &err, NULL);
			if (!rc) {
				const char *cm[] = { "git", "commit", "-q",
						     "-m", msg.buf, NULL };
				rc = run_cmd(c->top, cm, NULL, &err, NULL);
			}
			if (rc) {
				kopt_buf_trim(&err);
				kopt_buf_addf(&why, "the commit was refused: "
					      "%s", err.buf);
			}
			kopt_strvec_clear(&argv);
		}
		if (rc) {
			put_back(c, &paths);
			journal_event(c, "lesson", "round=%d\tversion=%s\t"
				      "brought=\twhy=%s", round, k->version,
				      why.buf);
			say(c, "the lesson of %s stays on %s: %s", k->version,
			    branch.buf, why.buf);
		} else if (paths.nr) {
			journal_event(c, "lesson", "round=%d\tversion=%s\t"
				      "brought=%s", round, k->version, lesson);
			say(c, "brought the lesson of %s onto %s: %s",
			    k->version, c->branch, lesson);
		}
		kopt_strvec_clear(&files);
		kopt_strvec_clear(&paths);
		kopt_buf_release(&branch);
		kopt_buf_release(&why);
		kopt_buf_release(&msg);
		kopt_buf_release(&err);
		kopt_trailers_release(&tr);
	}
}

static void read_states(struct kopt_cycle *c, struct cand *ks, size_t nr)
{
	size_t i;

	for (i = 0; i < nr; i++) {
		rec_release(&ks[i].st);
		state_read(&ks[i].st, c->dir, ks[i].version);
	}
}

/*
 * Designers of the interrupted run may still be at work (the cycle was
 * killed, not they): their versions are waited for, not taken from them.
 */
static void wait_orphans(struct kopt_cycle *c, struct cand *ks, size_t nr)
{
	size_t i;

	for (i = 0; i < nr; i++) {
		int pid = (int)rec_num(&ks[i].st, "pid");
		const char *s = cand_state(&ks[i]);
		if (pid <= 0 || !strcmp(s, "verified") || !strcmp(s, "failed"))
			continue;
		if (kill(pid, 0))
			continue;
		say(c, "waiting for designer %s (pid %d) of the interrupted run",
		    ks[i].version, pid);
		while (!kill(pid, 0)) {
			struct timespec ts = { 0, 200 * 1000 * 1000 };
			nanosleep(&ts, NULL);
		}
	}
}

static void cand_paths(struct kopt_cycle *c, struct cand *k)
{
	k->worktree = kopt_xstrfmt("%skopt/worktrees/%s-%s",
				   git_repository_commondir(c->repo),
				   c->kernel->name, k->version);
	k->task = kopt_xstrfmt("%s/tasks/%s.md", c->dir, k->version);
}

/* Run the candidates of a round in parallel, each in a process of its own. */
static void run_candidates(struct kopt_cycle *c, struct cand *ks, size_t nr,
			   const char *from, const char *base,
			   const struct kopt_agent *agent,
			   const struct kopt_agent *learn)
{
	double left = budget_left(c);
	int timeout = c->o.timeout_s > 0 ? c->o.timeout_s : agent->timeout_s;
	size_t i, running = 0;

	if (left < timeout)
		timeout = left < 1 ? 1 : (int)left;
	for (i = 0; i < nr; i++) {
		pid_t pid;
		if (!strcmp(cand_state(&ks[i]), "verified") ||
		    !strcmp(cand_state(&ks[i]), "failed"))
			continue;
		/* one at a time: git's worktree bookkeeping is shared */
		kopt_worktree_remove(c->top, ks[i].worktree);
		if (kopt_worktree_add(c->top, ks[i].worktree, base)) {
			rec_set(&ks[i].st, "state", "failed");
			rec_set(&ks[i].st, "outcome", "refused");
			rec_set(&ks[i].st, "why", "cannot add its worktree");
			rec_set(&ks[i].st, "finished", "%.3f", wall_now());
			state_write(c->dir, &ks[i]);
			continue;
		}
		fflush(NULL);
		pid = fork();
		if (pid < 0) {
			rec_set(&ks[i].st, "state", "failed");
			rec_set(&ks[i].st, "why", "cannot fork: %s",
				strerror(errno));
			state_write(c->dir, &ks[i]);
			continue;
		}
		if (!pid) {
			/* the lock is the cycle's, not a designer's */
			if (c->lock_fd >= 0)
				close(c->lock_fd);
			rec_set(&ks[i].st, "pid", "%d", (int)getpid());
			/* no atexit handlers of the parent: _exit */
			candidate(c, &ks[i], from, base, agent, learn, timeout);
			_exit(0);
		}
		ks[i].pid = pid;
		running++;
		say(c, "designer %s started (pid %d): %s", ks[i].version,
		    (int)pid, ks[i].title);
	}
	while (running) {
		int status;
		pid_t pid = waitpid(-1, &status, 0);
		if (pid < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		for (i = 0; i < nr; i++) {
			if (ks[i].pid != pid)
				continue;
			ks[i].pid = 0;
			running--;
			rec_release(&ks[i].st);
			state_read(&ks[i].st, c->dir, ks[i].version);
			if (!strcmp(cand_state(&ks[i]), "verified"))
				say(c, "%s verified: %s (%s)", ks[i].version,
				    rec_get(&ks[i].st, "verdict"),
				    rec_get(&ks[i].st, "trials"));
			else
				say(c, "%s failed: %s", ks[i].version,
				    rec_get(&ks[i].st, "why") ?
				    rec_get(&ks[i].st, "why") : "it stopped");
		}
	}
}

static int lock_cycle(struct kopt_cycle *c)
{
	char *path = kopt_xstrfmt("%s/lock", c->dir);
	int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	int ret = fd;

	if (fd < 0) {
		ret = kopt_error("cannot open '%s': %s", path, strerror(errno));
	} else if (flock(fd, LOCK_EX | LOCK_NB)) {
		close(fd);
		ret = kopt_error("a cycle of %s is running already",
				 c->kernel->name);
		ret = KOPT_ELOCKED;
	} else {
		char pid[32];
		int n = snprintf(pid, sizeof(pid), "%d\n", (int)getpid());
		if (ftruncate(fd, 0) || write(fd, pid, (size_t)n) != n)
			kopt_warning("cannot write the pid to '%s'", path);
	}
	free(path);
	return ret;
}

static int base_branch(struct kopt_cycle *c)
{
	git_reference *head = NULL;
	const char *name;
	int ret = 0;

	if (git_repository_head(&head, c->repo) < 0 ||
	    !git_reference_is_branch(head)) {
		git_reference_free(head);
		return kopt_error("HEAD is not on a branch; the cycle merges "
				  "what it keeps into the current branch");
	}
	name = git_reference_shorthand(head);
	if (kopt_starts_with(name, KOPT_BRANCH_PREFIX))
		ret = kopt_error("HEAD is on '%s', a version's branch; run the "
				 "cycle from the branch versions are merged into",
				 name);
	else
		c->branch = kopt_strdup(name);
	git_reference_free(head);
	return ret;
}

/*
 * git runs its automatic housekeeping after every commit; the cycle makes
 * a dozen commits a round, so its children run with maintenance.auto off
 * (GIT_CONFIG_COUNT, appended to what the caller set) and the cycle runs
 * the housekeeping once when it ends.  Returns the count to put back.
 */
static int defer_maintenance(void)
{
	const char *n = getenv("GIT_CONFIG_COUNT");
	int count = n ? atoi(n) : 0;
	char name[64], num[16];

	if (count < 0 || count > 1000)
		return -1;
	snprintf(name, sizeof(name), "GIT_CONFIG_KEY_%d", count);
	setenv(name, "maintenance.auto", 1);
	snprintf(name, sizeof(name), "GIT_CONFIG_VALUE_%d", count);
	setenv(name, "false", 1);
	snprintf(num, sizeof(num), "%d", count + 1);
	setenv("GIT_CONFIG_COUNT", num, 1);
	return count;
}

static void run_maintenance(struct kopt_cycle *c, int count)
{
	const char *argv[] = { "git", "maintenance", "run", "--auto", "--quiet",
			       NULL };
	char name[64], num[16];

	if (count < 0)
		return;
	snprintf(name, sizeof(name), "GIT_CONFIG_KEY_%d", count);
	unsetenv(name);
	snprintf(name, sizeof(name), "GIT_CONFIG_VALUE_%d", count);
	unsetenv(name);
	if (count) {
		snprintf(num, sizeof(num), "%d", count);
		setenv("GIT_CONFIG_COUNT", num, 1);
	} else {
		unsetenv("GIT_CONFIG_COUNT");
	}
	run_cmd(c->top, argv, NULL, NULL, NULL);
}

/* Changed tracked files would be swept into the cycle's commits. */
static int check_clean(struct kopt_cycle *c)
{
	const char *args[] = { "git", "status", "--porcelain",
			       "--untracked-files=no", NULL };
	struct kopt_buf out = KOPT_BUF_INIT;
	int ret = 0;

	if (run_cmd(c->top, args, &out, NULL, NULL) || out.len) {
		kopt_buf_trim(&out);
		ret = kopt_error("uncommitted changes in the work tree; commit "
				 "or stash them first:\n%s", out.buf);
	}
	kopt_buf_release(&out);
	return ret;
}

static void opts_from_journal(struct kopt_cycle *c, const struct record *st)
{
	const char *v;

	c->o.versions = (int)rec_num(st, "versions");
	c->o.parallel = (int)rec_num(st, "parallel");
	if (c->o.parallel < 1)
		c->o.parallel = 1;
	c->o.budget_s = rec_num(st, "budget");
	c->o.until_target = (int)rec_num(st, "until_target");
	c->o.timeout_s = (int)rec_num(st, "timeout");
	v = rec_get(st, "agent");
	c->o.agent = v && *v ? v : NULL;
	v = rec_get(st, "learn_agent");
	c->o.learn_agent = v && *v ? v : NULL;
	v = rec_get(st, "replay");
	c->o.replay = v && *v ? v : NULL;
}

static int stop(struct kopt_cycle *c, const char *why)
{
	say(c, "the cycle stops: %s", why);
	return journal_event(c, "stop", "why=%s", why);
}

int kopt_cycle_run(struct kopt_cycle *c, int resume)
{
	struct journal j = { 0 };
	struct kopt_agent agent = KOPT_AGENT_INIT, learn = KOPT_AGENT_INIT;
	struct cand ks[MAX_PARALLEL];
	size_t nk = 0, i;
	int lock = -1, ret = 0, round = 0, rounds_done = 0, resumed_round = 0;
	int pending = 0, deferred = -1;
	char *from = NULL;

	memset(ks, 0, sizeof(ks));
	c->started = wall_now();
	c->dir = kopt_cycle_dir(c->repo, c->kernel->name);
	if (kopt_mkdir_p(c->dir) || kopt_mkdir_p(c->dir) < 0)
		return -1;
	lock = lock_cycle(c);
	if (lock < 0)
		return lock;
	c->lock_fd = lock;
	ret = journal_read(&j, c->dir);
	if (ret && ret != KOPT_ENOTFOUND)
		goto done;
	ret = 0;
	if (resume) {
		const struct record *st = journal_last(&j, "start");
		const struct record *last = j.nr ? &j.ev[j.nr - 1] : NULL;
		if (!st) {
			ret = kopt_error("no cycle of %s to resume",
					 c->kernel->name);
			goto done;
		}
		if (!strcmp(rec_get(last, "event"), "stop")) {
			ret = kopt_error("the cycle of %s has finished (%s); "
					 "start a new one without --resume",
					 c->kernel->name, rec_get(last, "why"));
			goto done;
		}
		opts_from_journal(c, st);
		c->elapsed_before = rec_num(last, "time") - rec_num(st, "time");
	} else if (j.nr && strcmp(rec_get(&j.ev[j.nr - 1], "event"), "stop")) {
		ret = kopt_error("the cycle of %s was interrupted; go on with "
				 "'git kopt cycle %s --resume'", c->kernel->name,
				 c->kernel->name);
		ret = KOPT_EEXISTS;
		goto done;
	}
	if (base_branch(c) || check_clean(c)) {
		ret = -1;
		goto done;
	}
	deferred = defer_maintenance();
	if (kopt_agent_lookup(&agent, c->repo, c->o.agent) ||
	    kopt_agent_lookup(&learn, c->repo, c->o.learn_agent ?
			      c->o.learn_agent : agent.name)) {
		ret = -1;
		goto done;
	}
	if (resume) {
		for (i = 0; i < j.nr; i++)
			if (!strcmp(rec_get(&j.ev[i], "event"), "round-done"))
				rounds_done++;
		say(c, "resuming the cycle of %s after %d finished round%s",
		    c->kernel->name, rounds_done, rounds_done == 1 ? "" : "s");
		journal_event(c, "resume", "rounds_done=%d", rounds_done);
		/* the round that was running: its candidates */
		{
			const struct record *r = journal_last(&j, "round");
			int n = r ? (int)rec_num(r, "round") : 0;
			if (n > rounds_done) {
				resumed_round = n;
				from = kopt_strdup(rec_get(r, "from"));
				for (i = 0; i < j.nr && nk < MAX_PARALLEL; i++) {
					const struct record *e = &j.ev[i];
					struct cand *k;
					if (strcmp(rec_get(e, "event"),
						   "candidate") ||
					    (int)rec_num(e, "round") != n)
						continue;
					k = &ks[nk++];
					snprintf(k->version, sizeof(k->version),
						 "%s", rec_get(e, "version"));
					k->title = kopt_strdup(rec_get(e, "title"));
					cand_paths(c, k);
				}
			}
		}
	} else {
		journal_event(c, "start", "kernel=%s\tversions=%d\tparallel=%d\t"
			      "budget=%.0f\tuntil_target=%d\tagent=%s\t"
			      "learn_agent=%s\ttimeout=%d\treplay=%s\tpid=%d",
			      c->kernel->name, c->o.versions, c->o.parallel,
			      c->o.budget_s, c->o.until_target,
			      c->o.agent ? c->o.agent : "",
			      c->o.learn_agent ? c->o.learn_agent : "",
			      c->o.timeout_s, c->o.replay ? c->o.replay : "",
			      (int)getpid());
		say(c, "cycle of %s on %s: %d designer%s at once, agent '%s'",
		    c->kernel->name, c->branch, c->o.parallel,
		    c->o.parallel == 1 ? "" : "s", agent.name);
	}
	round = rounds_done;

	for (;;) {
		struct kopt_buf task = KOPT_BUF_INIT, head = KOPT_BUF_INIT;
		struct kopt_strvec items = KOPT_STRVEC_INIT;
		struct kopt_strvec tried = KOPT_STRVEC_INIT;
		git_oid head_id;
		char hex[GIT_OID_HEXSZ + 1];
		char *kept = NULL;
		long next;
		int rc;

		if (!resumed_round) {
			if (c->o.versions > 0 && round >= c->o.versions) {
				stop(c, "versions done");
				break;
			}
			if (budget_left(c) <= 0) {
				stop(c, "budget spent");
				break;
			}
			free(from);
			from = NULL;
			if (current_version(c, &from)) {
				ret = -1;
				break;
			}
			round++;
			{
				const char *an[] = { c->exe, "analyze",
						     c->kernel->name, NULL };
				step(c, "analyze", an, NULL, NULL);
			}
			if (!has_results(c, from) && profile_base(c, from)) {
				ret = -1;
				break;
			}
			{
				const char *ev[] = { c->exe, "evaluate",
						     c->kernel->name, NULL };
				rc = step(c, "evaluate", ev, NULL, NULL);
				if (rc == 0 && c->kernel->targets_nr) {
					stop(c, "target met");
					break;
				}
			}
			{
				const char *se[] = { c->exe, "select",
						     c->kernel->name, NULL };
				step(c, "select", se, NULL, NULL);
			}
			{
				char max[16];
				const char *sg[] = { c->exe, "strategize",
						     c->kernel->name, from,
						     "--no-write", "--max", max,
						     NULL };
				/* ask for more: those tried are skipped */
				tried_from(c, from, &tried);
				snprintf(max, sizeof(max), "%zu",
					 (size_t)c->o.parallel + tried.nr);
				if (step(c, "strategize", sg, &task, NULL)) {
					ret = kopt_error("strategize failed; see "
							 "%s/strategize.log",
							 c->dir);
					break;
				}
			}
			proposals(&items, &task);
			drop_tried(&items, &tried);
			if (!items.nr) {
				stop(c, "nothing left to propose");
				kopt_buf_release(&task);
				kopt_strvec_clear(&items);
				break;
			}
			next = next_number(c, from);
			journal_event(c, "round", "round=%d\tfrom=%s", round,
				      from);
			say(c, "round %d from %s: %zu proposal%s", round, from,
			    items.nr, items.nr == 1 ? "" : "s");
			for (i = 0; i < nk; i++)
				cand_release(&ks[i]);
			memset(ks, 0, sizeof(ks));
			nk = 0;
			for (i = 0; i < items.nr && nk < (size_t)c->o.parallel &&
			     nk < MAX_PARALLEL; i++) {
				struct cand *k = &ks[nk++];
				struct kopt_buf one = KOPT_BUF_INIT;
				snprintf(k->version, sizeof(k->version), "v%ld",
					 next + (long)i);
				k->title = proposal_title(items.v[i]);
				cand_paths(c, k);
				one_proposal_task(&one, &task, items.v[i],
						  k->version);
				if (kopt_mkdir_parents(k->task) ||
				    kopt_write_file_atomic(k->task, one.buf,
							   one.len, 0644))
					ret = -1;
				kopt_buf_release(&one);
				rec_set(&k->st, "version", "%s", k->version);
				rec_set(&k->st, "from", "%s", from);
				rec_set(&k->st, "title", "%s", k->title);
				rec_set(&k->st, "started", "%.3f", wall_now());
				state_write(c->dir, k);
				journal_event(c, "candidate", "round=%d\t"
					      "version=%s\tfrom=%s\ttitle=%s",
					      round, k->version, from, k->title);
			}
		} else {
			round = resumed_round;
			read_states(c, ks, nk);
			wait_orphans(c, ks, nk);
			read_states(c, ks, nk);
			for (i = 0; i < nk; i++) {
				const char *s = cand_state(&ks[i]);
				if (!strcmp(s, "verified") || !strcmp(s, "failed"))
					continue;
				if (!rec_get(&ks[i].st, "pid")) {
					/* never started: it starts now */
					struct record fresh = RECORD_INIT;
					rec_set(&fresh, "version", "%s",
						ks[i].version);
					rec_set(&fresh, "from", "%s", from);
					rec_set(&fresh, "title", "%s",
						ks[i].title);
					rec_set(&fresh, "started", "%.3f",
						wall_now());
					rec_release(&ks[i].st);
					ks[i].st = fresh;
					state_write(c->dir, &ks[i]);
					pending++;
					continue;
				}
				/* interrupted: its branch stays, as it is */
				{
					char *pf = kopt_xstrfmt("%s/%s.agent.pid",
								c->dir,
								ks[i].version);
					if (kopt_agent_stop_stray(pf))
						say(c, "stopped the agent of %s, "
						    "left running by the "
						    "interrupted run",
						    ks[i].version);
					free(pf);
				}
				{
					char *was = kopt_strdup(*s ? s :
								"starting");
					rec_set(&ks[i].st, "why", "the cycle was "
						"interrupted while it was %s",
						was);
					rec_set(&ks[i].st, "state", "failed");
					rec_set(&ks[i].st, "outcome",
						"interrupted");
					free(was);
				}
				state_write(c->dir, &ks[i]);
			}
		}
		kopt_buf_release(&task);
		kopt_strvec_clear(&items);
		kopt_strvec_clear(&tried);
		if (ret)
			break;

		if (git_reference_name_to_id(&head_id, c->repo, "HEAD") < 0) {
			ret = kopt_error("cannot read HEAD: %s",
					 kopt_git_error("unknown error"));
			break;
		}
		git_oid_tostr(hex, sizeof(hex), &head_id);
		kopt_buf_addstr(&head, hex);
		if (!resumed_round || pending)
			run_candidates(c, ks, nk, from, head.buf, &agent,
				       &learn);
		kopt_buf_release(&head);
		read_states(c, ks, nk);
		{
			const struct record *kr = resumed_round ?
				journal_last(&j, "kept") : NULL;
			if (kr && (int)rec_num(kr, "round") == round)
				/* kept already: never twice */
				kept = rec_get(kr, "version") &&
				       *rec_get(kr, "version") ?
				       kopt_strdup(rec_get(kr, "version")) :
				       NULL;
			else if (keep_best(c, round, from, ks, nk, &kept))
				ret = -1;
		}
		if (!ret)
			bring_lessons(c, round, ks, nk, kept);
		for (i = 0; i < nk; i++)
			kopt_worktree_remove(c->top, ks[i].worktree);
		journal_event(c, "round-done", "round=%d\tkept=%s", round,
			      kept ? kept : "");
		free(kept);
		resumed_round = 0;
		pending = 0;
		if (ret)
			break;
	}
done:
	run_maintenance(c, deferred);
	for (i = 0; i < nk; i++)
		cand_release(&ks[i]);
	free(from);
	journal_release(&j);
	kopt_agent_release(&agent);
	kopt_agent_release(&learn);
	if (lock >= 0)
		close(lock);
	return ret;
}

/* ---- the plan ---- */

int kopt_cycle_plan(struct kopt_cycle *c, struct kopt_buf *out)
{
	struct kopt_agent agent = KOPT_AGENT_INIT, learn = KOPT_AGENT_INIT;
	struct kopt_strvec argv = KOPT_STRVEC_INIT, items = KOPT_STRVEC_INIT;
	struct kopt_buf task = KOPT_BUF_INIT;
	char *from = NULL, *dir = NULL;
	size_t i;
	long next;
	int ret = 0;

	c->dir = kopt_cycle_dir(c->repo, c->kernel->name);
	if (base_branch(c) || current_version(c, &from) ||
	    kopt_agent_lookup(&agent, c->repo, c->o.agent) ||
	    kopt_agent_lookup(&learn, c->repo, c->o.learn_agent ?
			      c->o.learn_agent : agent.name)) {
		ret = -1;
		goto done;
	}
	kopt_buf_addf(out, "cycle of %s on %s, from %s\n", c->kernel->name,
		      c->branch, from);
	kopt_buf_addstr(out, "stops when ");
	if (c->kernel->targets_nr)
		kopt_buf_addf(out, "the target '%s' is met, ",
			      c->kernel->targets[0].text);
	if (c->o.versions > 0)
		kopt_buf_addf(out, "after %d round%s, ", c->o.versions,
			      c->o.versions == 1 ? "" : "s");
	if (c->o.budget_s > 0)
		kopt_buf_addf(out, "when %.0f s are spent, ", c->o.budget_s);
	kopt_buf_addstr(out, "or when nothing is left to propose\n");
	kopt_buf_addf(out, "designer agent '%s': ", agent.name);
	if (agent.kind == KOPT_AGENT_COMMAND) {
		kopt_buf_addf(out, "%s", agent.command);
	} else {
		struct kopt_agent_task t;
		memset(&t, 0, sizeof(t));
		t.prompt = "<prompt>";
		kopt_agent_argv(&argv, &agent, &t);
		for (i = 0; i < argv.nr; i++)
			kopt_buf_addf(out, "%s%s", i ? " " : "", argv.v[i]);
		kopt_strvec_clear(&argv);
	}
	kopt_buf_addf(out, " (time limit %d s)\n", c->o.timeout_s > 0 ?
		      c->o.timeout_s : agent.timeout_s);
	kopt_buf_addf(out, "LEARN agent '%s'\n", learn.name);
	kopt_buf_addf(out, "round 1:\n  analyze %s\n", c->kernel->name);
	if (!has_results(c, from))
		kopt_buf_addf(out, "  profile %s %s (no results yet)%s\n",
			      c->kernel->name, from, c->o.replay ?
			      ", replaying captures" : "");
	kopt_buf_addf(out, "  evaluate %s\n  select %s\n  strategize %s %s "
		      "--max %d\n", c->kernel->name, c->kernel->name,
		      c->kernel->name, from, c->o.parallel);
	next = next_number(c, from);
	if (has_results(c, from)) {
		const char *sg[] = { c->exe, "strategize", c->kernel->name,
				     from, "--no-write", "--max", NULL, NULL };
		char max[16];
		snprintf(max, sizeof(max), "%d", c->o.parallel);
		sg[6] = max;
		if (!run_cmd(c->top, sg, &task, NULL, NULL))
			proposals(&items, &task);
		if (!items.nr)
			kopt_buf_addstr(out, "  no proposal: the cycle would "
					"stop here\n");
	}
	for (i = 0; i < (size_t)c->o.parallel; i++) {
		char *title = i < items.nr ? proposal_title(items.v[i]) : NULL;
		if (has_results(c, from) && i >= items.nr)
			break;
		kopt_buf_addf(out, "  designer on kopt/%s/v%ld in "
			      "%skopt/worktrees/%s-v%ld: %s\n",
			      c->kernel->name, next + (long)i,
			      git_repository_commondir(c->repo),
			      c->kernel->name, next + (long)i,
			      title ? title : "the proposal ranked "
			      "after profiling");
		free(title);
	}
	kopt_buf_addf(out, "  each: verify%s, commit its results through the "
		      "LEARN gate (the LEARN agent writes what it asks for)\n",
		      c->o.replay ? " (replaying captures)" :
		      " (under the GPU lock)");
	kopt_buf_addf(out, "  keep the fastest improvement%s%s: git merge "
		      "--no-ff into %s; the others stay on their branches\n",
		      target_trial(c) ? " at " : "",
		      target_trial(c) ? target_trial(c) : "", c->branch);
done:
	free(from);
	free(dir);
	kopt_buf_release(&task);
	kopt_strvec_clear(&items);
	kopt_agent_release(&agent);
	kopt_agent_release(&learn);
	return ret;
}

/* ---- status ---- */

static void duration(struct kopt_buf *out, double s)
{
	long n = s < 0 ? 0 : (long)(s + 0.5);

	if (s < 10 && s >= 0)
		kopt_buf_addf(out, "%.1fs", s);
	else if (n < 60)
		kopt_buf_addf(out, "%lds", n);
	else if (n < 3600)
		kopt_buf_addf(out, "%ldm%02lds", n / 60, n % 60);
	else
		kopt_buf_addf(out, "%ldh%02ldm", n / 3600, (n % 3600) / 60);
}

static int running_pid(const char *dir)
{
	char *path = kopt_xstrfmt("%s/lock", dir);
	struct kopt_buf text = KOPT_BUF_INIT;
	int fd = open(path, O_RDWR | O_CLOEXEC), pid = 0;

	if (fd >= 0 && flock(fd, LOCK_EX | LOCK_NB)) {
		if (!kopt_buf_read_file(&text, path))
			pid = atoi(text.buf);
		if (!pid)
			pid = -1;
	}
	if (fd >= 0)
		close(fd);
	kopt_buf_release(&text);
	free(path);
	return pid;
}

int kopt_cycle_status(struct kopt_buf *out, git_repository *repo,
		      const char *kernel, int brief)
{
	struct journal j = { 0 };
	char *dir = kopt_cycle_dir(repo, kernel);
	const struct record *st, *last, *stp;
	double t0, t1;
	int ret, pid, rounds = 0;
	size_t i;

	ret = journal_read_run(&j, dir, &st);
	if (ret)
		goto done;
	last = &j.ev[j.nr - 1];
	stp = !strcmp(rec_get(last, "event"), "stop") ? last : NULL;
	pid = running_pid(dir);
	t0 = rec_num(st, "time");
	t1 = pid ? wall_now() : rec_num(last, "time");
	for (i = 0; i < j.nr; i++)
		if (!strcmp(rec_get(&j.ev[i], "event"), "round"))
			rounds = (int)rec_num(&j.ev[i], "round");
	kopt_buf_addf(out, "cycle of %s: ", kernel);
	if (pid)
		kopt_buf_addf(out, "running (pid %d)", pid);
	else if (stp)
		kopt_buf_addf(out, "finished (%s)", rec_get(stp, "why"));
	else
		kopt_buf_addf(out, "interrupted; go on with 'git kopt cycle %s "
			      "--resume'", kernel);
	kopt_buf_addf(out, ", round %d", rounds);
	if (rec_num(st, "versions") > 0)
		kopt_buf_addf(out, " of %.0f", rec_num(st, "versions"));
	kopt_buf_addstr(out, ", ");
	duration(out, t1 - t0);
	if (rec_num(st, "budget") > 0) {
		kopt_buf_addstr(out, " of a budget of ");
		duration(out, rec_num(st, "budget"));
	}
	kopt_buf_addch(out, '\n');
	if (brief)
		goto done;
	{
		struct kopt_cycle_cost cost;
		if (!kopt_cycle_cost(&cost, repo, kernel) && cost.wall_s > 0) {
			double tool = cost.tool_s;
			kopt_buf_addstr(out, "time: ");
			duration(out, cost.wall_s);
			kopt_buf_addstr(out, " in all, agents ");
			duration(out, cost.agent_s);
			kopt_buf_addstr(out, ", benchmark runs ");
			duration(out, cost.bench_s);
			kopt_buf_addstr(out, ", the tool ");
			duration(out, tool);
			kopt_buf_addf(out, " (%.1f%%)\n",
				      100.0 * tool / cost.wall_s);
		}
	}
	for (i = 0; i < j.nr; i++) {
		const struct record *e = &j.ev[i];
		const char *ev = rec_get(e, "event");
		if (!strcmp(ev, "round")) {
			kopt_buf_addf(out, "round %s from %s:\n",
				      rec_get(e, "round"), rec_get(e, "from"));
		} else if (!strcmp(ev, "profiled")) {
			kopt_buf_addf(out, "profiled %s", rec_get(e, "version"));
			if (rec_get(e, "profile_s")) {
				kopt_buf_addstr(out, " (");
				duration(out, rec_num(e, "profile_s"));
				kopt_buf_addstr(out, ")");
			}
			kopt_buf_addstr(out, "\n");
		} else if (!strcmp(ev, "candidate")) {
			struct record s = RECORD_INIT;
			const char *v = rec_get(e, "version");
			const char *state;
			double start, end;
			state_read(&s, dir, v);
			state = rec_get(&s, "state") ? rec_get(&s, "state") :
				"waiting";
			start = rec_num(&s, "started");
			end = rec_num(&s, "finished");
			if (!end)
				end = pid ? wall_now() : start;
			kopt_buf_addf(out, "  %-4s %-9s", v, state);
			if (rec_get(&s, "verdict"))
				kopt_buf_addf(out, " %-11s",
					      rec_get(&s, "verdict"));
			kopt_buf_addstr(out, " designer ");
			duration(out, rec_num(&s, "agent_s"));
			if (rec_get(&s, "verify_s")) {
				kopt_buf_addstr(out, ", verify ");
				duration(out, rec_num(&s, "verify_s"));
			}
			if (rec_get(&s, "learn_s")) {
				kopt_buf_addstr(out, ", learn ");
				duration(out, rec_num(&s, "learn_s"));
			}
			kopt_buf_addstr(out, ", all ");
			duration(out, end - start);
			kopt_buf_addf(out, ": %s\n", rec_get(e, "title"));
			if (!strcmp(state, "failed"))
				kopt_buf_addf(out, "       %s\n",
					      rec_get(&s, "why") ?
					      rec_get(&s, "why") : "");
			rec_release(&s);
		} else if (!strcmp(ev, "kept")) {
			const char *v = rec_get(e, "version");
			if (v && *v)
				kopt_buf_addf(out, "  kept %s: %s\n", v,
					      rec_get(e, "why"));
			else
				kopt_buf_addf(out, "  kept nothing%s%s\n",
					      rec_get(e, "why") ? ": " : "",
					      rec_get(e, "why") ?
					      rec_get(e, "why") : "");
		} else if (!strcmp(ev, "abandoned")) {
			kopt_buf_addf(out, "  abandoned %s: %s\n",
				      rec_get(e, "version"), rec_get(e, "why"));
		} else if (!strcmp(ev, "lesson")) {
			const char *b = rec_get(e, "brought");
			if (b && *b)
				kopt_buf_addf(out, "  lesson of %s brought "
					      "onto the base branch: %s\n",
					      rec_get(e, "version"), b);
			else
				kopt_buf_addf(out, "  lesson of %s left on "
					      "its branch: %s\n",
					      rec_get(e, "version"),
					      rec_get(e, "why"));
		} else if (!strcmp(ev, "resume")) {
			kopt_buf_addstr(out, "resumed\n");
		}
	}
done:
	journal_release(&j);
	free(dir);
	return ret;
}

/* Spans of time, [from, to), of one kind of work. */
struct spans {
	double (*v)[2];
	size_t nr, alloc;
};

/*
 * `dur_key` seconds that ended at `at_key` + `dur_key`; a record of an
 * older cycle without `at_key` gets a span of its own, far from the
 * others, so that it adds its length.
 */
static void span_add(struct spans *sp, const struct record *r,
		     const char *at_key, const char *dur_key)
{
	double d = rec_num(r, dur_key), at;

	if (!(d > 0))
		return;
	at = rec_get(r, at_key) ? rec_num(r, at_key) :
	     -1e9 * (double)(sp->nr + 1);
	KOPT_ALLOC_GROW(sp->v, sp->nr + 1, sp->alloc);
	sp->v[sp->nr][0] = at;
	sp->v[sp->nr++][1] = at + d;
}

static int span_cmp(const void *a, const void *b)
{
	const double *x = a, *y = b;

	return x[0] < y[0] ? -1 : x[0] > y[0];
}

/* How long at least one of the spans ran. */
static double span_union(struct spans *sp)
{
	double total = 0, from = 0, to = 0;
	size_t i;

	if (!sp->nr)
		return 0;
	qsort(sp->v, sp->nr, sizeof(*sp->v), span_cmp);
	for (i = 0; i < sp->nr; i++) {
		if (i && sp->v[i][0] <= to) {
			if (sp->v[i][1] > to)
				to = sp->v[i][1];
			continue;
		}
		total += to - from;
		from = sp->v[i][0];
		to = sp->v[i][1];
	}
	return total + (to - from);
}

int kopt_cycle_cost(struct kopt_cycle_cost *out, git_repository *repo,
		    const char *kernel)
{
	struct journal j = { 0 };
	char *dir = kopt_cycle_dir(repo, kernel);
	const struct record *st;
	struct spans agent = { 0 }, bench = { 0 }, all = { 0 };
	size_t i, n;
	int ret;

	memset(out, 0, sizeof(*out));
	ret = journal_read_run(&j, dir, &st);
	if (ret)
		goto done;
	out->wall_s = rec_num(&j.ev[j.nr - 1], "time") - rec_num(st, "time");
	for (i = 0; i < j.nr; i++) {
		const struct record *e = &j.ev[i];
		const char *ev = rec_get(e, "event");
		if (!strcmp(ev, "round")) {
			out->rounds++;
		} else if (!strcmp(ev, "profiled")) {
			/* the base's measurement is benchmark time too */
			if (!rec_get(e, "replayed"))
				span_add(&bench, e, "profile_at", "profile_s");
		} else if (!strcmp(ev, "candidate")) {
			struct record s = RECORD_INIT;
			state_read(&s, dir, rec_get(e, "version"));
			span_add(&agent, &s, "agent_at", "agent_s");
			span_add(&agent, &s, "learn_at", "learn_s");
			if (!rec_get(&s, "replayed"))
				span_add(&bench, &s, "verify_at", "verify_s");
			out->candidates++;
			rec_release(&s);
		}
	}
	/* designers work at once: time counts once however many ran */
	for (n = 0; n < agent.nr; n++) {
		KOPT_ALLOC_GROW(all.v, all.nr + 1, all.alloc);
		memcpy(all.v[all.nr++], agent.v[n], sizeof(*all.v));
	}
	for (n = 0; n < bench.nr; n++) {
		KOPT_ALLOC_GROW(all.v, all.nr + 1, all.alloc);
		memcpy(all.v[all.nr++], bench.v[n], sizeof(*all.v));
	}
	out->agent_s = span_union(&agent);
	out->bench_s = span_union(&bench);
	out->tool_s = out->wall_s - span_union(&all);
	if (out->tool_s < 0)
		out->tool_s = 0;
done:
	free(agent.v);
	free(bench.v);
	free(all.v);
	journal_release(&j);
	free(dir);
	return ret;
}
