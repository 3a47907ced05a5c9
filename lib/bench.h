#ifndef KOPT_BENCH_H
#define KOPT_BENCH_H

/*
 * Running a kernel's benchmark: the build once per version, then one run
 * per trial configuration under the injection library, which writes the
 * raw capture (lib/inject/README.md) to a file we name.
 *
 * kopt_bench_build() runs the kernel's configured `build` command line
 * (through the shell: it is the user's own command) in the work tree.
 * kopt_bench_run() runs `run` with CUDA_INJECTION64_PATH and
 * KOPT_INJECT_OUT set, with a timeout; when the benchmark reports CUDA
 * out-of-memory it halves b and runs again (down to b=1), recording what
 * was asked and what ran.  When the capture leaves a stage unsampled
 * because the benchmark launched it too few times to get past the
 * library's warm-up (kopt_capture_needs_second_run()), it runs the
 * benchmark a second time with KOPT_INJECT_FIRST_RUN, which samples
 * those kernels on their last launches and merges the first run's
 * capture with its own: the run's capture is then the merged one.  A
 * second run that fails (a crash, a hang) is a warning: the capture is
 * the first run's, and its stages say they were not measured.  The
 * caller holds the GPU for the whole profile with the executor's lock
 * (kopt_executor_gpu_lock()), so two profiles never share it; runs are
 * set up as every local run is (kopt_executor_child()).
 *
 * With the Slurm executor (m->ex of kind slurm) each run is one task of
 * its own on the cluster, through kopt_executor_run(), with the same
 * injection environment; the capture is written under the executor's
 * state directory in the shared work tree instead of $TMPDIR, and the
 * build stays on this machine.  A task the scheduler cancelled is one
 * more failure line; an interrupt (the executor's flag) cancels the job
 * and returns KOPT_EINTR.
 *
 * Every failure is one kopt_error() line naming the cause (build failed,
 * crashed, hung, failed its own check, printed nothing, no kernel), with
 * the tail of the child's output printed before it, and returns -1; the
 * caller writes nothing.
 */

#include "buf.h"
#include "config.h"

struct kopt_executor;

struct kopt_bench {
	const struct kopt_kernel *kernel;
	const char *version;
	const char *top;        /* work tree, with a trailing '/' */
	const char *inject_lib; /* path of libkopt-inject.so */
	const char *inject_cache; /* what the library keeps between runs
				     (KOPT_INJECT_CACHE), or NULL */
	int timeout_s;
	int verbose;            /* the benchmark's output to stderr */
	int gpu;
	struct kopt_executor *ex; /* where runs go; NULL: this machine */
};

#define KOPT_BENCH_INIT { NULL, NULL, NULL, NULL, NULL, 600, 0, 0, NULL }

struct kopt_bench_run {
	long b, s, t;           /* what ran */
	long b_requested;
	char *capture;          /* path of the capture file, owned */
	char *command;          /* the run command after substitution */
	struct kopt_buf out;    /* the benchmark's stdout */
	double wall_s;          /* both runs when there were two */
	int runs;               /* 1, or 2 with a second run */
	char *second_failed;    /* how the second run failed, or NULL: the
				   capture is then the first run's */
};

#define KOPT_BENCH_RUN_INIT { 0, 0, 0, 0, NULL, NULL, KOPT_BUF_INIT, 0, 0, \
	NULL }

/* Where libkopt-inject.so is: $KOPT_INJECT_LIB, installed, source tree. */
char *kopt_bench_find_inject(void);
int kopt_bench_build(struct kopt_bench *m);
int kopt_bench_run(struct kopt_bench *m, long b, long s, long t,
		     struct kopt_bench_run *out);
void kopt_bench_run_release(struct kopt_bench_run *r);

#endif
