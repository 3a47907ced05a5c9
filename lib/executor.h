#ifndef KOPT_EXECUTOR_H
#define KOPT_EXECUTOR_H

/*
 * Executors: where a benchmark command runs.
 *
 * `local` (the default) runs on this machine: builds in parallel on the
 * CPUs (kopt_executor_build()), benchmark runs one at a time under the
 * per-GPU advisory lock, each with kopt.timeout.
 *
 * `slurm` (kopt.executor = slurm) runs the benchmark commands on a Slurm
 * cluster: one job array per call of kopt_executor_run(), one task per
 * command, one GPU per task (--gres=gpu:1 unless kopt.slurmGres says
 * otherwise; "none" asks for none), kopt.slurmPartition,
 * kopt.slurmAccount and kopt.slurmTime passed to sbatch, at most
 * kopt.slurmTasks tasks at once (N GPUs evaluate N configurations at
 * once).  The work tree must be on a file system the nodes share: each
 * task runs in it and leaves its status, output and device in a
 * directory under <gitdir>/kopt/slurm/, which is read back when the
 * array has left the queue.  A task that never started, or was killed
 * (scancel, its time limit, a node lost) is reported as such, per task.
 * When *interrupted becomes nonzero (Ctrl-C) the array is cancelled with
 * scancel and the call returns KOPT_EINTR.
 *
 *	struct kopt_executor ex = KOPT_EXECUTOR_INIT;
 *	kopt_executor_init(&ex, cfg, top, gitdir);
 *	tasks[i].run = "...";  (the user's command line, run by /bin/sh)
 *	kopt_executor_run(&ex, tasks, nr);   every task gets a status
 *	kopt_executor_release(&ex);
 *
 * Whatever happens to one task is reported in that task; the return value
 * is nonzero only when nothing could be run at all (sbatch refused the
 * job, the cluster does not answer), with one error line naming the
 * cause.  Nothing prints except through kopt_error().
 */

#include <signal.h>

#include "buf.h"
#include "config.h"
#include "strvec.h"

#define KOPT_EINTR (-7)

enum kopt_exec_kind {
	KOPT_EXEC_LOCAL,
	KOPT_EXEC_SLURM,
};

enum kopt_task_state {
	KOPT_TASK_PENDING = 0,
	KOPT_TASK_OK,           /* exit 0 */
	KOPT_TASK_FAILED,       /* non-zero exit: its own check, or no run */
	KOPT_TASK_CRASHED,      /* killed by a signal */
	KOPT_TASK_HUNG,         /* past kopt.timeout */
	KOPT_TASK_BUILD_FAILED,
	KOPT_TASK_CANCELLED,    /* never ran, or killed by the scheduler */
};

struct kopt_exec_task {
	char *build;            /* shell command line or NULL (owned) */
	char *run;              /* shell command line (owned) */
	struct kopt_strvec env; /* "NAME=value" for the run */
	/* filled by the executor */
	enum kopt_task_state state;
	int exit_code, signal;
	struct kopt_buf out;    /* the run's stdout */
	struct kopt_buf err;    /* its stderr, or the build's output */
	double run_s;
	char *why;              /* one line when not OK (owned) */
	char device[256];       /* where it ran */
	char uuid[96];
};

#define KOPT_EXEC_TASK_INIT { NULL, NULL, KOPT_STRVEC_INIT, 0, -1, 0, \
	KOPT_BUF_INIT, KOPT_BUF_INIT, 0, NULL, "", "" }

struct kopt_executor {
	enum kopt_exec_kind kind;
	const char *top;        /* work tree, trailing '/' */
	char *state_dir;        /* <gitdir>/kopt/slurm */
	int timeout_s;
	int gpu;
	int gpu_wait_s;         /* how long to wait for a busy GPU */
	int build_jobs;         /* parallel builds; 0: the number of CPUs */
	const char *partition, *account, *time_limit, *gres, *device_model;
	int tasks_at_once;      /* 0: no limit */
	double poll_s;          /* how often the queue is asked */
	volatile sig_atomic_t *interrupted;
	char local_device[256];
	char local_uuid[96];
	int lock_fd;
};

#define KOPT_EXECUTOR_INIT { KOPT_EXEC_LOCAL, NULL, NULL, 600, 0, 0, 0, NULL, \
	NULL, NULL, NULL, NULL, 0, 0.5, NULL, "", "", -1 }

int kopt_executor_init(struct kopt_executor *ex, const struct kopt_config *cfg,
		       const char *top, const char *gitdir);
void kopt_executor_release(struct kopt_executor *ex);
const char *kopt_executor_name(const struct kopt_executor *ex);

/*
 * The device a local run uses: the GPU's name and UUID through the
 * driver, or "cpu" and "host-<hostname>" on a machine without one.
 */
void kopt_executor_local_device(struct kopt_executor *ex);

/*
 * The per-GPU advisory lock that keeps two git-kopt processes (profile,
 * verify, tune) off one GPU: flock on
 * <$XDG_RUNTIME_DIR, else /tmp>/kopt-gpu-<gpu>.lock, held until
 * kopt_executor_gpu_unlock() or exit.  *fd receives the descriptor (-1
 * on failure); KOPT_ELOCKED (reported) when another process holds it
 * past `wait_s` seconds (0: refuse at once; kopt.gpuWait), or when
 * *interrupted becomes nonzero while waiting (`interrupted` may be NULL).
 * Unlocking -1 does nothing.
 */
int kopt_executor_gpu_lock(int *fd, int gpu, int wait_s,
			   volatile sig_atomic_t *interrupted);
void kopt_executor_gpu_unlock(int *fd);
/*
 * Hold the GPU for the whole call sequence (local executor; a no-op on
 * Slurm, whose scheduler owns the GPUs), with the lock above.
 */
int kopt_executor_lock(struct kopt_executor *ex);
void kopt_executor_unlock(struct kopt_executor *ex);

/*
 * Set `c` up to run the user's own command line on this machine, as
 * every local build and benchmark run is: through the shell in `top`,
 * no stdin, stdout and stderr captured, killed after `timeout_s` (0:
 * never), on GPU `gpu` through CUDA_VISIBLE_DEVICES when it is not 0
 * (0 is the driver's default device).
 */
struct kopt_child;
void kopt_executor_child(struct kopt_child *c, const char *cmdline,
			 const char *top, int timeout_s, int gpu);

/*
 * Run the `build` commands of the tasks in parallel on this machine, each
 * distinct command once (configurations whose build does not depend on
 * a parameter share it); a task whose build fails gets
 * KOPT_TASK_BUILD_FAILED and its output.
 */
int kopt_executor_build(struct kopt_executor *ex,
			struct kopt_exec_task *tasks, size_t nr);
/* Run every task whose build did not fail; see above. */
int kopt_executor_run(struct kopt_executor *ex, struct kopt_exec_task *tasks,
		      size_t nr);

void kopt_exec_task_release(struct kopt_exec_task *t);
const char *kopt_task_state_name(enum kopt_task_state s);
/*
 * How a task that ran ended, in the words kopt_child_describe() uses for
 * a local run ("exit code 1", "killed by signal 11 (...)", "timed out
 * after 600 s"); for a cancelled one, what the scheduler did.
 */
void kopt_exec_task_describe(const struct kopt_executor *ex,
			     const struct kopt_exec_task *t,
			     struct kopt_buf *out);

#endif
