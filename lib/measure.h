#ifndef KOPT_MEASURE_H
#define KOPT_MEASURE_H

/*
 * Running a kernel's benchmark: the build once per version, then one run
 * per trial configuration under the injection library, which writes the
 * raw capture (lib/inject/README.md) to a file we name.
 *
 * kopt_measure_build() runs the kernel's configured `build` command line
 * (through the shell: it is the user's own command) in the work tree.
 * kopt_measure_run() runs `run` with CUDA_INJECTION64_PATH and
 * KOPT_INJECT_OUT set, with a timeout; when the benchmark reports CUDA
 * out-of-memory it halves b and runs again (down to b=1), recording what
 * was asked and what ran.  The GPU is held with an advisory lock for the
 * whole profile (kopt_measure_lock_gpu()), so two profiles never share it.
 *
 * Every failure is one kopt_error() line naming the cause (build failed,
 * crashed, hung, failed its own check, printed nothing, no kernel), with
 * the tail of the child's output printed before it, and returns -1; the
 * caller writes nothing.
 */

#include "buf.h"
#include "config.h"

struct kopt_measure {
	const struct kopt_kernel *kernel;
	const char *version;
	const char *top;        /* work tree, with a trailing '/' */
	const char *inject_lib; /* path of libkopt-inject.so */
	int timeout_s;
	int verbose;            /* the benchmark's output to stderr */
	int gpu;
	int lock_fd;
};

#define KOPT_MEASURE_INIT { NULL, NULL, NULL, NULL, 600, 0, 0, -1 }

struct kopt_measure_run {
	long b, s, t;           /* what ran */
	long b_requested;
	char *capture;          /* path of the capture file, owned */
	struct kopt_buf out;    /* the benchmark's stdout */
	double wall_s;
};

#define KOPT_MEASURE_RUN_INIT { 0, 0, 0, 0, NULL, KOPT_BUF_INIT, 0 }

/* Where libkopt-inject.so is: $KOPT_INJECT_LIB, installed, source tree. */
char *kopt_measure_find_inject(void);
int kopt_measure_lock_gpu(struct kopt_measure *m);
void kopt_measure_unlock_gpu(struct kopt_measure *m);
int kopt_measure_build(struct kopt_measure *m);
int kopt_measure_run(struct kopt_measure *m, long b, long s, long t,
		     struct kopt_measure_run *out);
void kopt_measure_run_release(struct kopt_measure_run *r);

#endif
