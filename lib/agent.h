#ifndef KOPT_AGENT_H
#define KOPT_AGENT_H

/*
 * Agents as commands: the designer (and the LEARN writer) of a version,
 * run in the version's own git worktree with a time limit.
 *
 * An agent is found by name with kopt_agent_lookup(), from the git
 * configuration (personal settings, never the committed .kopt):
 *
 *	kopt.agent                  the name used when none is given
 *	kopt.agent.<name>.command   a shell command line: the agent
 *	kopt.agent.<name>.timeout   seconds (default 3600)
 *
 * The name "claude" needs no setting: it is Claude Code headless,
 * `claude -p <prompt> --output-format json`, its tools limited to those
 * a designer needs (KOPT_AGENT_CLAUDE_TOOLS), edits accepted without
 * asking.  A command agent gets the prompt in $KOPT_AGENT_PROMPT (and in
 * the file $KOPT_AGENT_PROMPT_FILE) with $KOPT_AGENT_ROLE, $KOPT_KERNEL,
 * $KOPT_VERSION, $KOPT_FROM and $KOPT_VERSION_DIR; both kinds run in the
 * worktree with no stdin.  The answer is the agent's stdout; when that is
 * Claude Code's JSON object, its "result" text (and "is_error" makes the
 * run a failure).
 *
 * An HTTP agent is a model behind an API, for teams without Claude Code:
 *
 *	kopt.agent.<name>.api        openai (chat completions: vLLM,
 *	                             llama.cpp, most gateways) or anthropic
 *	                             (the Messages API)
 *	kopt.agent.<name>.url        base URL (https://api.openai.com/v1,
 *	                             https://api.anthropic.com); requests go
 *	                             to <url>/chat/completions, <url>/v1/messages
 *	kopt.agent.<name>.model      the model
 *	kopt.agent.<name>.keyenv     the environment variable with the key
 *	                             (OPENAI_API_KEY, ANTHROPIC_API_KEY); the
 *	                             key itself is never in a setting, never
 *	                             printed, logged or written
 *	kopt.agent.<name>.maxtokens  the answer's length limit (16000)
 *
 * It is sent the prompt, the files of the version's folder, and asked for
 * one unified diff of that folder plus its answer (the summary).  The
 * diff is applied with libgit2 to the worktree, and refused when it
 * touches anything outside the folder or does not apply; the answer is
 * the model's text without the diff.  Requests go through lib/http
 * (retries on 5xx and 429, timeouts).
 *
 * kopt_agent_run() returns 0 when the agent ran and answered (exit code
 * 0, not timed out), KOPT_EGENERIC with the reason in `out->why`
 * otherwise; nothing is printed.  The raw stdout and stderr are kept for
 * the run log.
 *
 * Worktrees: kopt_worktree_add() checks a commit out, detached, at a new
 * path (through git, so that git's own worktree bookkeeping is used);
 * kopt_worktree_remove() removes it again, whatever is in it.
 * kopt_worktree_changes() lists the paths a worktree changed against its
 * HEAD, untracked files included.
 */

#include <git2.h>

#include "buf.h"
#include "strvec.h"

#define KOPT_AGENT_DEFAULT "claude"
#define KOPT_AGENT_DEFAULT_TIMEOUT_S 3600
#define KOPT_AGENT_CLAUDE_TOOLS \
	"Read,Write,Edit,MultiEdit,Glob,Grep,Bash(make:*),Bash(git kopt:*)"

enum kopt_agent_kind {
	KOPT_AGENT_CLAUDE,
	KOPT_AGENT_COMMAND,
	KOPT_AGENT_HTTP,
};

struct kopt_agent {
	char *name;
	enum kopt_agent_kind kind;
	char *command;          /* KOPT_AGENT_COMMAND: the command line */
	char *program;          /* KOPT_AGENT_CLAUDE: "claude" */
	int timeout_s;
	/* KOPT_AGENT_HTTP */
	char *api;              /* "openai" or "anthropic" */
	char *url;              /* the API's base URL */
	char *model;
	char *key_env;          /* the variable holding the key */
	int max_tokens;
};

#define KOPT_AGENT_INIT { NULL, KOPT_AGENT_CLAUDE, NULL, NULL, 0, NULL, NULL, \
	NULL, NULL, 0 }

/*
 * The agent called `name` (NULL: kopt.agent, else "claude");
 * KOPT_ENOTFOUND (printed) when a name other than "claude" has no
 * command.
 */
int kopt_agent_lookup(struct kopt_agent *out, git_repository *repo,
		      const char *name);
void kopt_agent_release(struct kopt_agent *a);

struct kopt_agent_task {
	const char *role;       /* "designer", "learn" */
	const char *prompt;
	const char *dir;        /* the worktree, absolute */
	const char *kernel;
	const char *version;
	const char *from;       /* may be NULL */
	const char *version_dir;
	int timeout_s;          /* 0: the agent's own */
	const char *pid_file;   /* where the agent's process group is
				   written while it runs, or NULL */
};

struct kopt_agent_answer {
	struct kopt_buf text;   /* the answer */
	struct kopt_buf out;    /* stdout as written */
	struct kopt_buf err;    /* stderr as written */
	struct kopt_buf why;    /* why the run failed, "" when it did not */
	double wall_s;
	int timed_out;
};

#define KOPT_AGENT_ANSWER_INIT { KOPT_BUF_INIT, KOPT_BUF_INIT, KOPT_BUF_INIT, \
	KOPT_BUF_INIT, 0.0, 0 }

/* The command line the agent runs as (argv), for logs and tests. */
void kopt_agent_argv(struct kopt_strvec *out, const struct kopt_agent *a,
		     const struct kopt_agent_task *t);
int kopt_agent_run(struct kopt_agent_answer *out, const struct kopt_agent *a,
		   const struct kopt_agent_task *t);
void kopt_agent_answer_release(struct kopt_agent_answer *ans);
/*
 * Stop what is left of an agent whose process group a pid file names
 * (its waiting process was killed): 1 when one was stopped, 0 when none
 * was running.  The file is removed.
 */
int kopt_agent_stop_stray(const char *pid_file);

/*
 * Apply the unified diff `patch` to the work tree at `dir` (git_apply),
 * after checking that every file it touches is under `version_dir`;
 * nothing is changed when it is refused.  A refusal is an answer, not an
 * error of the program: nothing printed, KOPT_EGENERIC, and the reason
 * appended to `why` as data (it becomes the answer's `why`, which the
 * run records with the answer).
 */
int kopt_agent_apply_diff(const char *dir, const char *version_dir,
			  const char *patch, size_t len, struct kopt_buf *why);
/*
 * Cut the diff out of a model's answer: the first ```diff (or ```patch)
 * block, else the lines from the first "diff --git " or "--- " header to
 * the first "## " heading.  `rest` gets the answer without it.
 */
int kopt_agent_split_diff(const char *answer, struct kopt_buf *diff,
			  struct kopt_buf *rest);

/* ---- worktrees ---- */

/* `git worktree add --detach <path> <commit>` in the repository at `top`. */
int kopt_worktree_add(const char *top, const char *path, const char *commit);
int kopt_worktree_remove(const char *top, const char *path);
/* Paths changed in the worktree at `dir` against its HEAD. */
int kopt_worktree_changes(struct kopt_strvec *out, const char *dir);

#endif
