#ifndef KOPT_CYCLE_H
#define KOPT_CYCLE_H

/*
 * The unattended cycle: ANALYZE to LEARN, round after round, with
 * designer agents.
 *
 * One round, from the newest version of the kernel on the branch the
 * cycle runs on (its "base", say main):
 *
 *   analyze; profile the base when it has no results (committed on the
 *   base branch: a measurement of a version it has); evaluate (the
 *   target met ends the cycle); select; strategize (read only) for the
 *   K best proposals; then K candidates at once, one process each, one
 *   proposal each, versions vN, vN+1, ... on their own branches and
 *   worktrees (lib/designer); each is verified in its worktree (the GPU
 *   lock of lib/bench serialises real measurements) and its results
 *   committed through git, so the LEARN gate judges them; when the gate
 *   asks for knowledge, the LEARN agent is asked to write it and the
 *   commit is tried again.
 *
 *   The best improvement (fastest on the target's trial, else on all
 *   trials together) is merged into the base branch with --no-ff; the
 *   others are left on their branches, recorded as abandoned with their
 *   verdict and the lesson the gate took.  Their lessons (the detail
 *   files their results commit added to the knowledge base) come onto the
 *   base branch with their catalog rows, one commit of their own per
 *   version with its trailers, so that the base branch's knowledge base
 *   holds every lesson; their results stay on their branches.  A
 *   refused, failed, killed or hung designer leaves its branch and
 *   nothing else; the base branch moves only on a verified improvement
 *   and on lessons.
 *
 * It stops when the target is met, after `versions` rounds, when the
 * budget is spent, or when strategize proposes nothing.
 *
 * State: the repository (branches, commits and their trailers) plus a
 * journal under <git common dir>/kopt/cycle/<kernel>/: `journal` (one
 * event a line, appended and fsynced), `<version>.state` (each
 * candidate's state, replaced atomically by the process working on it)
 * and the agents' logs.  kopt_cycle_run() with `resume` goes on from the
 * last finished step: finished candidates are kept, unfinished ones are
 * recorded as interrupted (their branches stay), a merge is never made
 * twice.
 *
 * lib/ prints nothing but errors: progress goes through `say`.
 */

#include <git2.h>

#include "buf.h"
#include "config.h"
#include "strvec.h"

struct kopt_cycle_opts {
	int versions;           /* rounds; 0: no limit */
	int parallel;           /* designers at once (>= 1) */
	double budget_s;        /* 0: none */
	int until_target;
	const char *agent;      /* designer agent name, NULL: default */
	const char *learn_agent;        /* NULL: the designer's */
	int timeout_s;          /* per agent run; 0: the agent's own */
	const char *replay;     /* capture pattern with {version} and
				   {trial}, or NULL to measure */
};

struct kopt_cycle {
	git_repository *repo;
	const char *top;        /* main work tree, trailing '/' */
	const char *exe;        /* this program */
	const struct kopt_config *cfg;
	const struct kopt_kernel *kernel;
	struct kopt_cycle_opts o;
	void (*say)(void *data, const char *line);
	void *say_data;
	/* internal */
	char *dir;              /* the journal's folder */
	char *branch;           /* the base branch's short name */
	double started;         /* wall clock of this run's start */
	double elapsed_before;  /* of earlier runs, resumed */
	int lock_fd;            /* held while the cycle runs */
};

void kopt_cycle_init(struct kopt_cycle *c);
void kopt_cycle_release(struct kopt_cycle *c);

/* The folder of the kernel's journal (owned by the caller). */
char *kopt_cycle_dir(git_repository *repo, const char *kernel);

/*
 * Run the cycle (a fresh one, or `resume` the interrupted one).  0 when
 * it ran to a stop (target met, rounds done, budget spent, nothing left
 * to propose), KOPT_EEXISTS when a cycle is running or unfinished and
 * not resumed, -1 on an error (printed).
 */
int kopt_cycle_run(struct kopt_cycle *c, int resume);

/* What a run would do now, as lines for people; changes nothing. */
int kopt_cycle_plan(struct kopt_cycle *c, struct kopt_buf *out);

/*
 * Where the kernel's cycle is: its state, each round, each designer's
 * state and times, what was kept and why.  KOPT_ENOTFOUND when no cycle
 * ever ran (nothing added).  `brief` gives one line.
 */
int kopt_cycle_status(struct kopt_buf *out, git_repository *repo,
		      const char *kernel, int brief);

/*
 * The tool's own share of a finished or running cycle: wall time, the
 * agents' time on the critical path and the benchmark runs' time.
 */
/*
 * Where a cycle's time went: agent_s and bench_s are how long at least
 * one agent, or at least one benchmark (profile, verify), ran; tool_s
 * the rest of the wall time, when neither did.
 */
struct kopt_cycle_cost {
	double wall_s, agent_s, bench_s, tool_s;
	int rounds, candidates;
};
int kopt_cycle_cost(struct kopt_cycle_cost *out, git_repository *repo,
		    const char *kernel);

/* "4h", "90m", "30s", "2h30m", "45" (seconds): seconds, or -1. */
double kopt_cycle_parse_duration(const char *s);

#endif
