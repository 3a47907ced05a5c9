#ifndef KOPT_DESIGNER_H
#define KOPT_DESIGNER_H

/*
 * One designer at work: a new version made by an agent in its own git
 * worktree, from scaffold to the designer's commit.
 *
 *  1. `git worktree add --detach <worktree> <base>`;
 *  2. `git kopt design <kernel> --from <from> --to <to>` in it: the
 *     branch kopt/<kernel>/<to>, the copy and the devlog skeleton, and
 *     the designer's prompt (kernel, language, the optimizations to
 *     apply, the summary to return) on its stdout;
 *  3. the agent, with that prompt and the Implementation Summary contract
 *     it must answer with, in the worktree, with its time limit;
 *  4. the answer judged: the summary parses (lib/summary), says PASS, and
 *     the worktree changed nothing outside the version's folder and the
 *     kernel's devlog;
 *  5. the summary spliced into the version's devlog entry, and the
 *     designer's commit made through git (so the hooks judge it) with
 *     Kopt-Kernel, Kopt-Version and Kopt-Step: design.
 *
 * A refusal at 3-5 puts the worktree back to the scaffold commit: the
 * branch keeps the scaffold, nothing else changes; `why` says what went
 * wrong.  The worktree stays for the caller (verify runs in it);
 * kopt_worktree_remove() takes it away.
 *
 * Nothing is printed but through lib/error; the agent's stdout and
 * stderr go to `log_dir/<to>.agent.out` and `.err` when log_dir is set.
 */

#include "agent.h"
#include "buf.h"
#include "summary.h"

struct kopt_designer {
	/* what to do */
	const char *top;        /* the repository's main work tree */
	const char *exe;        /* this program */
	const char *kernel, *from, *to;
	const char *base;       /* commit the worktree starts at */
	const char *task_file;  /* absolute, or NULL */
	const char *title;      /* or NULL */
	const char *worktree;   /* absolute path to create */
	const char *version_dir;        /* relative to the top */
	const char *devlog;             /* relative to the top */
	const struct kopt_agent *agent;
	int timeout_s;          /* 0: the agent's own */
	const char *log_dir;    /* or NULL */
	int have_worktree;      /* the caller made it already */
	const char *pid_file;   /* the agent's process group, or NULL */
	/* what happened */
	struct kopt_summary summary;
	struct kopt_buf why;    /* the refusal, "" on success */
	struct kopt_buf commit; /* the designer's commit id */
	double agent_s;         /* the agent's wall time */
	int timed_out;
};

void kopt_designer_init(struct kopt_designer *d);
void kopt_designer_release(struct kopt_designer *d);
/*
 * 0 when the version was designed and committed; KOPT_EINVALID when the
 * agent's work was refused (why says so), -1 when the scaffold could not
 * be made (printed).
 */
int kopt_designer_run(struct kopt_designer *d);

/* The path of the running program, for running its steps as children. */
int kopt_self_exe(struct kopt_buf *out);

/*
 * Insert or replace the Implementation Summary block of `version` in a
 * devlog's text, after the entry's own lines (before its performance
 * blocks).  KOPT_ENOTFOUND when the entry is not there.
 */
int kopt_designer_record_summary(struct kopt_buf *devlog_text,
				 const char *label, const char *version,
				 const struct kopt_summary *s,
				 const char *agent);

#endif
