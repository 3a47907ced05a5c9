/*
 * One designer at work: see designer.h.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "designer.h"
#include "devlog.h"
#include "error.h"
#include "lockfile.h"
#include "runner.h"
#include "trailers.h"
#include "banned.h"

void kopt_designer_init(struct kopt_designer *d)
{
	memset(d, 0, sizeof(*d));
	kopt_strvec_init(&d->summary.changes);
	kopt_strvec_init(&d->summary.files);
	kopt_buf_init(&d->why, 0);
	kopt_buf_init(&d->commit, 0);
}

void kopt_designer_release(struct kopt_designer *d)
{
	kopt_summary_release(&d->summary);
	kopt_buf_release(&d->why);
	kopt_buf_release(&d->commit);
}

int kopt_self_exe(struct kopt_buf *out)
{
	char path[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 1);

	if (n <= 0)
		return kopt_error("cannot find this program: %s",
				  strerror(errno));
	kopt_buf_add(out, path, (size_t)n);
	return 0;
}

/* Run `argv` in `dir`; its stdout in `out` (may be NULL). */
static int run_in(const char *dir, const char *const *argv,
		  struct kopt_buf *out, struct kopt_buf *why)
{
	struct kopt_child c = KOPT_CHILD_INIT;
	int ret = 0;

	kopt_strvec_pushv(&c.args, (const char **)argv);
	c.dir = dir;
	c.flags = KOPT_CHILD_CAPTURE_OUT | KOPT_CHILD_CAPTURE_ERR |
		  KOPT_CHILD_NO_STDIN;
	if (kopt_child_run(&c)) {
		kopt_buf_addf(why, "cannot run '%s'", argv[0]);
		ret = -1;
	} else if (c.exit_code || c.signal) {
		kopt_buf_trim(&c.err);
		kopt_buf_trim(&c.out);
		kopt_buf_addf(why, "'%s %s' failed: %s", argv[0],
			      argv[1] ? argv[1] : "",
			      c.err.len ? c.err.buf : c.out.len ? c.out.buf :
			      "no message");
		ret = -1;
	} else if (out) {
		kopt_buf_addbuf(out, &c.out);
	}
	kopt_child_release(&c);
	return ret;
}

static void save_log(const struct kopt_designer *d, const char *ext,
		     const struct kopt_buf *data)
{
	char *path;

	if (!d->log_dir)
		return;
	path = kopt_xstrfmt("%s/%s.agent.%s", d->log_dir, d->to, ext);
	if (!kopt_mkdir_parents(path))
		kopt_write_file_atomic(path, data->buf, data->len, 0644);
	free(path);
}

static void contract(struct kopt_buf *prompt, const struct kopt_designer *d)
{
	kopt_buf_addf(prompt,
		"\nWork in this directory, a git worktree of its own: change "
		"only the files of %s under %s/ and its entry in %s; do not "
		"commit.  Build and check the new version before answering.\n"
		"Answer with the implementation summary, in exactly this "
		"shape:\n\n"
		"## New Version: %s %s\n"
		"### Changes Applied: [list]\n"
		"### Files: Created/Modified [paths]\n"
		"### Correctness: [PASS/FAIL]\n\n"
		"### Trial Configurations Checked\n"
		"1. [b, s, t] -- [why this point matters]\n\n"
		"### Devlog Entry Written: %s\n",
		d->to, d->version_dir, d->devlog, d->kernel, d->to, d->devlog);
}

/* Every changed path is the version's or its devlog's. */
static int check_changes(struct kopt_designer *d)
{
	struct kopt_strvec changed = KOPT_STRVEC_INIT;
	size_t i, k = strlen(d->version_dir);
	int ret = 0;

	if (kopt_worktree_changes(&changed, d->worktree)) {
		kopt_buf_addstr(&d->why, "cannot list the designer's changes");
		kopt_strvec_clear(&changed);
		return -1;
	}
	for (i = 0; i < changed.nr && !ret; i++) {
		const char *p = changed.v[i];
		if ((!strncmp(p, d->version_dir, k) && p[k] == '/') ||
		    !strcmp(p, d->devlog))
			continue;
		kopt_buf_addf(&d->why, "the designer changed '%s', outside "
			      "the version's folder '%s'", p, d->version_dir);
		ret = -1;
	}
	if (!ret && !changed.nr) {
		kopt_buf_addstr(&d->why, "the designer changed nothing");
		ret = -1;
	}
	kopt_strvec_clear(&changed);
	return ret;
}

static int line_is_item(const char *s, size_t n)
{
	return (n >= 2 && (s[0] == '-' || s[0] == '*') && s[1] == ' ') ||
	       (n >= 1 && (s[0] == ' ' || s[0] == '\t'));
}

int kopt_designer_record_summary(struct kopt_buf *text, const char *label,
				 const char *version,
				 const struct kopt_summary *s,
				 const char *agent)
{
	struct kopt_devlog dl = KOPT_DEVLOG_INIT;
	const struct kopt_devlog_version *v;
	struct kopt_buf block = KOPT_BUF_INIT;
	size_t hl = strlen(KOPT_SUMMARY_DEVLOG_HEADING), start, end;
	int line, found = 0, ret;

	ret = kopt_devlog_parse(&dl, text->buf, text->len, label);
	if (ret)
		return ret;
	v = kopt_devlog_find_version(&dl, version);
	if (!v) {
		ret = KOPT_ENOTFOUND;
		goto done;
	}
	kopt_summary_render_devlog(&block, s, agent);
	for (line = v->line + 1; line <= v->last_line; line++) {
		size_t a = kopt_devlog_offset(&dl, line);
		if (!strncmp(dl.text.buf + a, KOPT_SUMMARY_DEVLOG_HEADING, hl)) {
			found = line;
			break;
		}
	}
	if (found) {
		int last = found, in_list = 0;
		for (line = found + 1; line <= v->last_line; line++) {
			size_t a = kopt_devlog_offset(&dl, line);
			size_t b = kopt_devlog_offset(&dl, line + 1);
			size_t n = b - a;
			while (n && (dl.text.buf[a + n - 1] == '\n' ||
				     dl.text.buf[a + n - 1] == '\r'))
				n--;
			if (!n) {
				if (in_list)
					break;
				continue;
			}
			if (!line_is_item(dl.text.buf + a, n))
				break;
			in_list = 1;
			last = line;
		}
		start = kopt_devlog_offset(&dl, found);
		end = kopt_devlog_offset(&dl, last + 1);
	} else {
		int at = v->perfs_nr ? v->perfs[0].line : v->content_last + 1;
		start = end = kopt_devlog_offset(&dl, at);
		if (v->perfs_nr) {
			kopt_buf_addch(&block, '\n');
		} else {
			kopt_buf_insert(&block, 0, "\n", 1);
			if (start > 0 && dl.text.buf[start - 1] != '\n')
				kopt_buf_insert(&block, 0, "\n", 1);
		}
	}
	kopt_buf_splice(text, start, end - start, block.buf, block.len);
done:
	kopt_devlog_release(&dl);
	kopt_buf_release(&block);
	return ret;
}

static int record(struct kopt_designer *d)
{
	struct kopt_buf text = KOPT_BUF_INIT;
	char *path = kopt_xstrfmt("%s/%s", d->worktree, d->devlog);
	int ret;

	if (kopt_buf_read_file(&text, path)) {
		kopt_buf_addf(&d->why, "cannot read '%s': %s", d->devlog,
			      strerror(errno));
		ret = -1;
		goto done;
	}
	ret = kopt_designer_record_summary(&text, d->devlog, d->to,
					   &d->summary, d->agent->name);
	if (ret == KOPT_ENOTFOUND)
		kopt_buf_addf(&d->why, "the designer removed the entry of %s "
			      "from '%s'", d->to, d->devlog);
	else if (ret)
		kopt_buf_addf(&d->why, "the designer left '%s' unreadable",
			      d->devlog);
	else if (kopt_write_file_atomic(path, text.buf, text.len, 0644))
		ret = -1;
done:
	kopt_buf_release(&text);
	free(path);
	return ret;
}

static int commit(struct kopt_designer *d)
{
	struct kopt_buf msg = KOPT_BUF_INIT;
	struct kopt_trailers tr = KOPT_TRAILERS_INIT;
	size_t i;
	int ret;
	const char *add[] = { "git", "add", "-A", "--", d->version_dir,
			      d->devlog, NULL };
	const char *cm[] = { "git", "commit", "-q", "-m", NULL, NULL };
	const char *head[] = { "git", "rev-parse", "HEAD", NULL };

	kopt_buf_addf(&msg, "%s %s: %s\n\n", d->kernel, d->to,
		      d->title && *d->title ? d->title :
		      d->summary.changes.nr ? d->summary.changes.v[0] :
		      "the designer's change");
	kopt_buf_addf(&msg, "Designed by agent '%s' in %.0f s.\n",
		      d->agent->name, d->agent_s);
	for (i = 0; i < d->summary.changes.nr; i++)
		kopt_buf_addf(&msg, "%s- %s\n", i ? "" : "\n",
			      d->summary.changes.v[i]);
	kopt_trailers_add_step(&tr, d->kernel, d->to, KOPT_STEP_DESIGN);
	kopt_message_add_trailers(&msg, &tr);
	kopt_trailers_release(&tr);
	cm[4] = msg.buf;
	ret = run_in(d->worktree, add, NULL, &d->why);
	if (!ret)
		ret = run_in(d->worktree, cm, NULL, &d->why);
	if (!ret)
		ret = run_in(d->worktree, head, &d->commit, &d->why);
	kopt_buf_trim(&d->commit);
	kopt_buf_release(&msg);
	return ret;
}

/* Back to the scaffold: the branch keeps it, nothing else. */
static void undo(struct kopt_designer *d)
{
	struct kopt_buf ignore = KOPT_BUF_INIT;
	const char *reset[] = { "git", "reset", "-q", "--hard", NULL };
	const char *clean[] = { "git", "clean", "-q", "-fdx", NULL };

	run_in(d->worktree, reset, NULL, &ignore);
	run_in(d->worktree, clean, NULL, &ignore);
	kopt_buf_release(&ignore);
}

/* The parser's message becomes the reason of the refusal. */
static struct kopt_buf *caught;

static void catch_reason(const char *prefix, const char *msg)
{
	if (caught && !strcmp(prefix, "error") && !caught->len)
		kopt_buf_addstr(caught, msg);
}

int kopt_designer_run(struct kopt_designer *d)
{
	struct kopt_buf prompt = KOPT_BUF_INIT;
	struct kopt_agent_answer ans = KOPT_AGENT_ANSWER_INIT;
	struct kopt_summary_expect ex;
	struct kopt_agent_task t;
	const char *design[16];
	kopt_report_fn old;
	int n = 0, ret = 0;

	if (!d->have_worktree &&
	    kopt_worktree_add(d->top, d->worktree, d->base)) {
		kopt_buf_addstr(&d->why, "cannot add its worktree");
		return -1;
	}
	design[n++] = d->exe;
	design[n++] = "design";
	design[n++] = d->kernel;
	design[n++] = "--from";
	design[n++] = d->from;
	design[n++] = "--to";
	design[n++] = d->to;
	if (d->task_file) {
		design[n++] = "--task";
		design[n++] = d->task_file;
	}
	if (d->title) {
		design[n++] = "--title";
		design[n++] = d->title;
	}
	design[n] = NULL;
	if (run_in(d->worktree, design, &prompt, &d->why)) {
		ret = kopt_error("cannot start %s %s: %s", d->kernel, d->to,
				 d->why.buf);
		goto done;
	}
	contract(&prompt, d);

	memset(&t, 0, sizeof(t));
	t.role = "designer";
	t.prompt = prompt.buf;
	t.dir = d->worktree;
	t.kernel = d->kernel;
	t.version = d->to;
	t.from = d->from;
	t.version_dir = d->version_dir;
	t.timeout_s = d->timeout_s;
	t.pid_file = d->pid_file;
	ret = kopt_agent_run(&ans, d->agent, &t);
	d->agent_s = ans.wall_s;
	d->timed_out = ans.timed_out;
	save_log(d, "out", &ans.out);
	save_log(d, "err", &ans.err);
	if (ret) {
		kopt_buf_addbuf(&d->why, &ans.why);
		ret = KOPT_EINVALID;
		goto refused;
	}

	memset(&ex, 0, sizeof(ex));
	ex.kernel = d->kernel;
	ex.version = d->to;
	ex.dir = d->version_dir;
	ex.devlog = d->devlog;
	caught = &d->why;
	old = kopt_error_set_routine(catch_reason);
	ret = kopt_summary_parse(&d->summary, ans.text.buf, ans.text.len, &ex);
	kopt_error_set_routine(old);
	caught = NULL;
	if (ret) {
		if (!d->why.len)
			kopt_buf_addstr(&d->why, "the answer is not a complete "
					"implementation summary");
		ret = KOPT_EINVALID;
		goto refused;
	}
	if (!d->summary.pass) {
		kopt_buf_addstr(&d->why, "the designer says its version is "
				"not correct (Correctness: FAIL)");
		ret = KOPT_EINVALID;
		goto refused;
	}
	if (check_changes(d) || record(d) || commit(d)) {
		ret = KOPT_EINVALID;
		goto refused;
	}
	goto done;
refused:
	undo(d);
done:
	kopt_agent_answer_release(&ans);
	kopt_buf_release(&prompt);
	return ret;
}
